/* covariance_map -- the covariance matrix written through a permutation of the variables
 * (`cov[map[i] * m + map[j]]`): whether two iterations write one element depends on the
 * map's values, so the static analysis leaves those stores undecided and the default
 * mode watches them; the O(n) inner products around them are not watched. */
#include <stdio.h>
#include <stdlib.h>
#ifdef MINI
#define M 28
#define N 32
#else
#define M 1200
#define N 1400
#endif

static void kernel(int m, int n, const double *data, const int *map, double *cov)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += data[k * m + i] * data[k * m + j];
            cov[map[i] * m + map[j]] = s / (n - 1.0);
        }
}

int main(void)
{
    double *data = malloc(sizeof(double) * N * M);
    double *cov = malloc(sizeof(double) * M * M);
    int *map = malloc(sizeof(int) * M);
    double sum = 0;
    if (!data || !cov || !map)
        return 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            data[i * M + j] = (double)((i * j) % 17) / M;
    for (int j = 0; j < M; j++)
        map[j] = (j * 7) % M;
    kernel(M, N, data, map, cov);
    for (int i = 0; i < M; i++)
        sum += cov[i * M + (i * 3) % M] * (i % 5);
    printf("%.6e\n", sum);
    free(data);
    free(cov);
    free(map);
    return 0;
}
