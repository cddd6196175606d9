/* Whether two iterations write one element depends on the values in `perm`. */
void scatter(int n, const int *restrict perm, const double *restrict in, double *restrict out)
{
    for (int i = 0; i < n; i++) /* LOOP */
        out[perm[i]] = in[i];
}
