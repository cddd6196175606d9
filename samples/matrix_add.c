/*
 * matrix_add.c -- flat square matrix addition, c = a + b, on int matrices
 * stored row-major in one-dimensional arrays.
 *
 * Reproduces: Juravle MSc thesis, Section 5.1 "Coalescing analysis"
 * (the matrix addition example and "Improving coalescing", Fig. 5.4).
 *
 * Usage: matrix_add [N]        (default N = 256)
 *
 * Known answers (default input N = 256), function add():
 *   Loops:
 *     line 38  for i   outer   trip count N = 256
 *     line 39  for j   inner   trip count N = 256 per outer iteration
 *                              (N*N = 65536 executions of the body)
 *   GPU-friendly: yes, as a 2D nest (i, j). No loop-carried dependence
 *     (each (i, j) writes its own c[i*N+j]; a, b only read), both loops
 *     normalizable (start 0, step 1, bound N invariant), no calls.
 *   Accessed byte sections, half-open, relative to each parameter:
 *     a  read   [0, 4*N*N) = [0, 262144)
 *     b  read   [0, 4*N*N) = [0, 262144)
 *     c  write  [0, 4*N*N) = [0, 262144)
 *   Coalescing (warp 32 threads, 128-byte request line, 4-byte int):
 *     natural mapping  (Grid.x = i, Grid.y = j): warp area 32*4*N bytes,
 *       N/4 requests per warp, clamped to the warp size 32: min(N/4, 32)
 *       = 32 for N = 256 (same for a, b and c).
 *     reversed mapping (Grid.x = j, Grid.y = i): warp area 32*4 = 128
 *       bytes, 1 request per warp.
 *     (For 32 <= N < 128 the thesis formula N/4 is below 32 although each
 *      thread of the warp then hits its own 128-byte line; the default
 *      N = 256 keeps the formula and the hardware count equal.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void add(int *a, int *b, int *c, int N)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            int idx = i * N + j;
            c[idx] = a[idx] + b[idx];
        }
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 256;
    if (N < 1)
        return 1;
    size_t count = (size_t)N * (size_t)N;
    int *a = malloc(count * sizeof *a);
    int *b = malloc(count * sizeof *b);
    int *c = malloc(count * sizeof *c);
    if (!a || !b || !c)
        return 1;
    uint32_t s = 12345u;
    for (size_t k = 0; k < count; k++) {
        s = s * 1103515245u + 12345u;
        a[k] = (int)((s >> 16) & 0x7fff);
        b[k] = (int)(k % 1000) - 500;
    }
    add(a, b, c, N);
    uint64_t h = 0;
    for (size_t k = 0; k < count; k++)
        h = h * 31u + (uint32_t)c[k];
    printf("checksum: %llu\n", (unsigned long long)h);
    free(a);
    free(b);
    free(c);
    return 0;
}
