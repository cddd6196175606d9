/*
 * matmul.c -- dense matrix multiply-accumulate C += A * B with C99
 * variable-length array parameters (double A[ni][nk]).
 *
 * Reproduces: the classic 2D-mapped kernel (thesis Section 4.1: a 2D
 * nest whose inner loop j is the only immediate child of i; the k loop
 * stays inside the thread) and Section 5.1's mapping reasoning.
 *
 * Usage: matmul [ni [nj [nk]]]        (defaults ni = 64, nj = 48, nk = 32)
 *
 * Known answers (defaults ni = 64, nj = 48, nk = 32), function matmul():
 *   Loops:
 *     line 38  for i   trip count ni = 64
 *     line 39  for j   trip count nj = 48 per i
 *     line 40  for k   trip count nk = 32 per (i, j)
 *   GPU-friendly: the 2D nest (i, j), yes: each (i, j) owns C[i][j], A and
 *     B are only read, normalizable, no calls.  The k loop alone is a sum
 *     reduction into the one element C[i][j] (friendly with it, WW102 a
 *     note); in the 2D nest it stays sequential inside each thread.
 *   Accessed byte sections, half-open (double = 8 bytes):
 *     A  read          [0, 8*ni*nk) = [0, 16384)
 *     B  read          [0, 8*nk*nj) = [0, 12288)
 *     C  read + write  [0, 8*ni*nj) = [0, 24576)
 *   Coalescing (warp 32, 128-byte line):
 *     natural mapping (Grid.x = i): C[i][j] stride 8*nj bytes, 2*nj = 96
 *       -> clamped to 32 requests; A[i][k] stride 8*nk, 2*nk = 64 -> 32;
 *       B[k][j] same address in the warp: 1.
 *     reversed mapping (Grid.x = j): C[i][j] and B[k][j]: 32*8 = 256
 *       bytes, 2 requests; A[i][k] same address: 1.
 *   Integer-valued inputs keep every product and sum exact.
 */
#include <stdio.h>
#include <stdlib.h>

void matmul(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk],
            double B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            for (int k = 0; k < nk; k++)
                C[i][j] += A[i][k] * B[k][j];
}

int main(int argc, char **argv)
{
    int ni = argc > 1 ? atoi(argv[1]) : 64;
    int nj = argc > 2 ? atoi(argv[2]) : 48;
    int nk = argc > 3 ? atoi(argv[3]) : 32;
    if (ni < 1 || nj < 1 || nk < 1)
        return 1;
    double (*A)[nk] = malloc(sizeof(double[ni][nk]));
    double (*B)[nj] = malloc(sizeof(double[nk][nj]));
    double (*C)[nj] = malloc(sizeof(double[ni][nj]));
    if (!A || !B || !C)
        return 1;
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            A[i][k] = (i * 3 + k * 5) % 7 - 3;
    for (int k = 0; k < nk; k++)
        for (int j = 0; j < nj; j++)
            B[k][j] = (k * 2 + j) % 5 - 2;
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            C[i][j] = i - j;
    matmul(ni, nj, nk, C, A, B);
    long long sum = 0;
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            sum += (long long)C[i][j] * (i + 2 * j + 1);
    printf("checksum: %lld\n", sum);
    free(A);
    free(B);
    free(C);
    return 0;
}
