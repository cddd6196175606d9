/* scatter -- a permutation applied through an index array (undecided statically: the
 * default mode tracks it), then a prefix sum (a real carried dependence). */
#include <stdio.h>
#include <stdlib.h>
#ifdef MINI
#define N 64
#define REPS 2
#else
#define N 4000000
#define REPS 20
#endif

static void permute(int n, const int *idx, const double *src, double *dst)
{
    for (int i = 0; i < n; i++)
        dst[idx[i]] = src[i] * 2.0;
}

int main(void)
{
    int *idx = malloc(sizeof(int) * N);
    double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
    double sum = 0;
    if (!idx || !a || !b)
        return 1;
    for (int i = 0; i < N; i++) {
        idx[i] = (int)(((long long)i * 7919) % N);
        a[i] = (double)(i % 97);
    }
    for (int r = 0; r < REPS; r++) {
        permute(N, idx, a, b);
        permute(N, idx, b, a);
    }
    for (int i = 1; i < N; i++)
        a[i] += a[i - 1] * 0.5;
    for (int i = 0; i < N; i++)
        sum += a[i];
    printf("%.6e\n", sum);
    free(idx);
    free(a);
    free(b);
    return 0;
}
