/*
 * gaussian_fan2.c -- one elimination step of Gaussian elimination split
 * like Rodinia's kernels Fan1 (multipliers) and Fan2 (row updates).
 *
 * Reproduces: GPUDrano (Alur et al.), Section 2 and Fig. 2: Fan2 maps
 * one thread per row x and accesses A[N*x + y] and M[N*x + t] with a
 * stride of N elements between adjacent threads (uncoalesced); the fix
 * maps threads to columns y.
 *
 * Usage: gaussian_fan2 [N]        (default N = 128)
 * main eliminates an N x N diagonally dominant system with b = A * ones
 * and back-substitutes; the checksum is the sum of the solution (N).
 *
 * Known answers for fan2() at step t (N = 128; numbers for t = 0):
 *   Loops:
 *     line 46  for x (rows)     trip count N - t - 1 = 127
 *     line 47  for y (columns)  trip count N - t = 128 per row
 *   GPU-friendly: yes, as a 2D nest (row t is read, rows t+1..N-1 are
 *     written, each (x, y) writes its own A[N*x + y]; B[x] is written
 *     once per row; normalizable; no calls).  (fan1's loop, line 40, is
 *     GPU-friendly too, trip count N - t - 1.)
 *   Accessed byte sections, half-open (float = 4 bytes):
 *     A  read   [4*(N*t + t), 4*N*N)           = [0, 65536)
 *     A  write  [4*(N*(t+1) + t), 4*N*N)       = [512, 65536)
 *     M  read   [4*(N*(t+1) + t), 4*(N*(N-1) + t) + 4) = [512, 65028)
 *     B  read   [4*t, 4*N) = [0, 512);  write [4*(t+1), 4*N) = [4, 512)
 *   Coalescing (warp 32, 128-byte line):
 *     natural mapping, threads over rows x (Rodinia, GPUDrano Fig. 2a):
 *       A[N*x + y] and M[N*x + t]: stride 4*N bytes, N/4 = 32 requests
 *       per warp (uncoalesced); A[N*t + y], B[t]: 1; B[x]: 1.
 *     reversed mapping, threads over columns y (GPUDrano Fig. 2b, the
 *       fix): A[N*x + y], A[N*t + y]: 1 request; M[N*x + t], B[x], B[t]:
 *       same address in the warp, 1 request.
 */
#include <stdio.h>
#include <stdlib.h>

void fan1(float *M, float *A, int N, int t)
{
    for (int x = t + 1; x < N; x++)
        M[N * x + t] = A[N * x + t] / A[N * t + t];
}

void fan2(float *M, float *A, float *B, int N, int t)
{
    for (int x = t + 1; x < N; x++) {
        for (int y = t; y < N; y++) {
            int xt = N * x + t;
            int xy = N * x + y;
            int ty = N * t + y;
            A[xy] -= M[xt] * A[ty];
            if (y == t)
                B[x] -= M[xt] * B[t];
        }
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 128;
    if (N < 2)
        return 1;
    size_t nn = (size_t)N * (size_t)N;
    float *A = malloc(nn * sizeof *A);
    float *M = calloc(nn, sizeof *M);
    float *B = malloc((size_t)N * sizeof *B);
    float *X = malloc((size_t)N * sizeof *X);
    if (!A || !M || !B || !X)
        return 1;
    for (int i = 0; i < N; i++) {
        B[i] = 0.0f;
        for (int j = 0; j < N; j++) {
            A[N * i + j] = i == j ? (float)(2 * N) : (float)((i * 7 + j * 3) % 11) / 11.0f;
            B[i] += A[N * i + j];
        }
    }
    for (int t = 0; t < N - 1; t++) {
        fan1(M, A, N, t);
        fan2(M, A, B, N, t);
    }
    double sum = 0.0;
    for (int i = N - 1; i >= 0; i--) {
        float acc = B[i];
        for (int j = i + 1; j < N; j++)
            acc -= A[N * i + j] * X[j];
        X[i] = acc / A[N * i + i];
        sum += X[i];
    }
    printf("checksum: %.2f\n", sum);
    free(A);
    free(M);
    free(B);
    free(X);
    return 0;
}
