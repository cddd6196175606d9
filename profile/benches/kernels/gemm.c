/* gemm -- C = alpha*A*B + beta*C, PolyBench-style (sizes: -DMINI, default LARGE). */
#include <stdio.h>
#include <stdlib.h>
#ifdef MINI
#define NI 20
#define NJ 25
#define NK 30
#else
#define NI 1000
#define NJ 1100
#define NK 1200
#endif

static double C[NI][NJ], A[NI][NK], B[NK][NJ];

int main(void)
{
    double alpha = 1.5, beta = 1.2, sum = 0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            C[i][j] = (double)((i * j + 1) % NI) / NI;
    for (int i = 0; i < NI; i++)
        for (int k = 0; k < NK; k++)
            A[i][k] = (double)(i * (k + 1) % NK) / NK;
    for (int k = 0; k < NK; k++)
        for (int j = 0; j < NJ; j++)
            B[k][j] = (double)(k * (j + 2) % NJ) / NJ;
    for (int i = 0; i < NI; i++) {
        for (int j = 0; j < NJ; j++)
            C[i][j] *= beta;
        for (int k = 0; k < NK; k++)
            for (int j = 0; j < NJ; j++)
                C[i][j] += alpha * A[i][k] * B[k][j];
    }
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            sum += C[i][j];
    printf("%.6e\n", sum);
    return 0;
}
