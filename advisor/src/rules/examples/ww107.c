/* The loop leaves at the first negative element: its trip count depends on the data. */
int first_negative(int n, const double *a)
{
    int i;
    for (i = 0; i < n; i++) /* LOOP */
        if (a[i] < 0)
            break;
    return i;
}
