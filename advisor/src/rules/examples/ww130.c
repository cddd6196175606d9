/* Whether two iterations write one element of `out` depends on `perm`: in this run
   it repeats (3, 2, 1, 0 come back), and a profile sees the second write. */
#include <stdio.h>

void scatter(int n, const int *restrict perm, const double *restrict in, double *restrict out)
{
    for (int i = 0; i < n; i++) /* LOOP */
        out[perm[i]] = in[i];
}

int main(void)
{
    int perm[8] = {0, 1, 2, 3, 3, 2, 1, 0};
    double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4];
    scatter(8, perm, in, out);
    printf("%g %g %g %g\n", out[0], out[1], out[2], out[3]);
    return 0;
}
