/*
 * jacobi2d.c -- one sweep of a 5-point Jacobi stencil: B's interior
 * points from A's, with a VLA parameter double A[n][n].
 *
 * Reproduces: a stencil with overlapping neighbour reads, the sharing
 * pattern of thesis Section 5.2 (adjacent threads read overlapping
 * parts of A).
 *
 * Usage: jacobi2d [n]        (default n = 100)
 *
 * Known answers (default n = 100), function jacobi2d():
 *   Loops:
 *     line 35  for i   trip count n - 2 = 98  (i = 1 .. n-2)
 *     line 36  for j   trip count n - 2 = 98 per i
 *   GPU-friendly: yes, 2D nest (A only read, B only written, each (i, j)
 *     writes its own B[i][j]; normalizable; no calls) -- provided A and B
 *     do not alias, which holds for the call in main.
 *   Accessed byte sections, half-open (double = 8 bytes):
 *     A  read   [8, 8*(n*n - 1)) = [8, 79992)   (all but the 4 corners;
 *               first A[0][1], last A[n-1][n-2])
 *     B  write  [8*(n + 1), 8*(n*n - n - 1)) = [808, 79192)
 *               (first B[1][1], last B[n-2][n-2])
 *   Shared memory: threads (i, j) and (i, j+1) both read A[i][j] and
 *     A[i][j+1]; a block needs its tile of A plus a one-point halo.
 *   Coalescing (warp 32, 128-byte line): natural mapping (Grid.x = i):
 *     stride 8*n bytes, 2*n -> clamped to 32 requests; reversed mapping
 *     (Grid.x = j): 32*8 = 256 bytes, 2 requests (3 for the j-1 / j+1
 *     reads when they straddle a line).
 */
#include <stdio.h>
#include <stdlib.h>

void jacobi2d(int n, double A[n][n], double B[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] +
                             A[i + 1][j] + A[i - 1][j]);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    if (n < 3)
        return 1;
    double (*A)[n] = malloc(sizeof(double[n][n]));
    double (*B)[n] = calloc(1, sizeof(double[n][n]));
    if (!A || !B)
        return 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            A[i][j] = (double)((i * 17 + j * 31) % 23);
    jacobi2d(n, A, B);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            sum += B[i][j] * (1 + (i + j) % 3);
    printf("checksum: %.6f\n", sum);
    free(A);
    free(B);
    return 0;
}
