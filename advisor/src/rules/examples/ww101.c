/* A running sum in place: iteration i reads what iteration i - 1 wrote. */
void prefix_sum(int n, double *a)
{
    for (int i = 1; i < n; i++) /* LOOP */
        a[i] = a[i - 1] + a[i];
}
