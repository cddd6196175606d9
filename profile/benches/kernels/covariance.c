/* covariance -- column means, centring, then the symmetric covariance matrix, written
 * through pointers the analysis cannot separate (the default mode tracks those loops). */
#include <stdio.h>
#include <stdlib.h>
#ifdef MINI
#define M 28
#define N 32
#else
#define M 1200
#define N 1400
#endif

static void kernel(int m, int n, double *data, double *cov, double *mean)
{
    for (int j = 0; j < m; j++) {
        mean[j] = 0.0;
        for (int i = 0; i < n; i++)
            mean[j] += data[i * m + j];
        mean[j] /= n;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            data[i * m + j] -= mean[j];
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += data[k * m + i] * data[k * m + j];
            cov[i * m + j] = s / (n - 1.0);
            cov[j * m + i] = cov[i * m + j];
        }
}

int main(void)
{
    double *data = malloc(sizeof(double) * N * M);
    double *cov = malloc(sizeof(double) * M * M);
    double *mean = malloc(sizeof(double) * M);
    double sum = 0;
    if (!data || !cov || !mean)
        return 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            data[i * M + j] = (double)(i * j) / M;
    kernel(M, N, data, cov, mean);
    for (int i = 0; i < M * M; i++)
        sum += cov[i];
    printf("%.6e\n", sum);
    free(data);
    free(cov);
    free(mean);
    return 0;
}
