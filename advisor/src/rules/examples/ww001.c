/* Each iteration writes its own element of `c` and reads only `a` and `b`. */
void add(int n, const double *restrict a, const double *restrict b, double *restrict c)
{
    for (int i = 0; i < n; i++) /* LOOP */
        c[i] = a[i] + b[i];
}
