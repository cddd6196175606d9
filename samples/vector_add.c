/*
 * vector_add.c -- element-wise vector addition c[i] = a[i] + b[i], the
 * simplest GPU-friendly loop.
 *
 * Reproduces: the 1D case of the GPU friendliness test (thesis
 * Section 4.1) and perfect coalescing (Section 5.1).
 *
 * Usage: vector_add [n]        (default n = 100000)
 *
 * Known answers (default n = 100000), function vadd():
 *   Loops:
 *     line 27  for i   trip count n = 100000
 *   GPU-friendly: yes (no loop-carried dependence, normalizable, no calls).
 *   Accessed byte sections, half-open, relative to each parameter:
 *     a  read   [0, 4*n) = [0, 400000)
 *     b  read   [0, 4*n) = [0, 400000)
 *     c  write  [0, 4*n) = [0, 400000)
 *   Coalescing (warp 32, 128-byte line, Grid.x = i): 32*4 = 128 bytes,
 *     1 request per warp for a, b and c.
 *   Inputs are small integers, so every float sum is exact.
 */
#include <stdio.h>
#include <stdlib.h>

void vadd(float *a, float *b, float *c, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    if (n < 1)
        return 1;
    float *a = malloc((size_t)n * sizeof *a);
    float *b = malloc((size_t)n * sizeof *b);
    float *c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c)
        return 1;
    for (int i = 0; i < n; i++) {
        a[i] = (float)(i % 1024);
        b[i] = (float)((i * 3) % 517) - 258.0f;
    }
    vadd(a, b, c, n);
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += (long long)c[i] * (i % 5 + 1);
    printf("checksum: %lld\n", sum);
    free(a);
    free(b);
    free(c);
    return 0;
}
