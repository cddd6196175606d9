/*
 * get_index.c -- array accesses whose index comes from a small helper
 * function called in three different contexts.
 *
 * Reproduces: Juravle MSc thesis, Section 8.7.1 "Motivation" (context
 * sensitiveness: a[getIndex(i)], b[getIndex(i*n)], inner c[getIndex(k)]).
 *
 * Usage: get_index [n]        (default n = 64)
 *
 * Known answers (default n = 64), function f():
 *   Loops:
 *     line 45  for i   outer (mapped to the GPU)  trip count n = 64
 *     line 48  for k   inner                      trip count 10
 *   GPU-friendly: yes (the loop i: only out[i] is written, s is private;
 *     normalizable; the only call is to the user function getIndex, which
 *     needs a device version but is no host-only library call).  The
 *     inner loop k accumulates into s (a + reduction: friendly alone); in
 *     the kernel over i it stays sequential inside the thread.
 *   Index ranges: getIndex(i) = 2*i + 4 in [4, 2*n + 2];
 *     getIndex(i*n) = 2*i*n + 4 in [4, 2*n*(n-1) + 4];
 *     getIndex(k) = 2*k + 4 in [4, 22].
 *   Accessed byte sections, half-open, relative to each parameter:
 *     a    read   [16, 8*n + 12)       = [16, 524)    (every other int)
 *     b    read   [16, 8*n*(n-1) + 20) = [16, 32276)
 *     c    read   [16, 92)                            (independent of i)
 *     out  write  [0, 4*n)             = [0, 256)
 *   Coalescing with context sensitivity (warp 32 over i, 128-byte line):
 *     a[getIndex(i)]    stride 8 bytes: 256 bytes, 2 requests per warp
 *                       (area / line, as in the thesis; 3 if unaligned)
 *     b[getIndex(i*n)]  stride 8*n bytes: 2*n requests, clamped to 32
 *     c[getIndex(k)]    same address in all threads: 1 request
 *   Context-insensitively the calls merge and the accesses look poorly
 *   coalesced.  Shared memory: c's [16, 92) is the same for every thread.
 */
#include <stdio.h>
#include <stdlib.h>

int getIndex(int x)
{
    return 2 * x + 4;
}

void f(int *a, int *b, int *c, int *out, int n)
{
    for (int i = 0; i < n; i++) { /* to be mapped to GPU */
        int s = a[getIndex(i)];
        s += b[getIndex(i * n)];
        for (int k = 0; k < 10; k++) {
            s += c[getIndex(k)];
        }
        out[i] = s;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    if (n < 1 || n > 4096)
        return 1;
    size_t a_len = 2 * (size_t)n + 3;
    size_t b_len = 2 * (size_t)n * (size_t)(n - 1) + 5;
    int *a = malloc(a_len * sizeof *a);
    int *b = malloc(b_len * sizeof *b);
    int c[23];
    int *out = malloc((size_t)n * sizeof *out);
    if (!a || !b || !out)
        return 1;
    for (size_t k = 0; k < a_len; k++)
        a[k] = (int)(k % 50);
    for (size_t k = 0; k < b_len; k++)
        b[k] = (int)(k % 89) - 44;
    for (int k = 0; k < 23; k++)
        c[k] = k * k;
    f(a, b, c, out, n);
    long long sum = 0;
    for (int k = 0; k < n; k++)
        sum += (long long)out[k] * (k + 1);
    printf("checksum: %lld\n", sum);
    free(a);
    free(b);
    free(out);
    return 0;
}
