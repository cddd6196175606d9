/* `f` is whatever the caller passes: device code needs the callee known. */
void apply(int n, double *a, double (*f)(double))
{
    for (int i = 0; i < n; i++) /* LOOP */
        a[i] = f(a[i]);
}
