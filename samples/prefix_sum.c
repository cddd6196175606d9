/*
 * prefix_sum.c -- inclusive prefix sum, out[i] = out[i-1] + in[i].
 *
 * Reproduces: the simplest loop that fails the "no loop carried
 * dependencies" condition of thesis Section 4.1.
 *
 * Usage: prefix_sum [n]        (default n = 100000)
 *
 * Known answers (default n = 100000), function prefix_sum():
 *   Loops:
 *     line 28  for i = 1 .. n-1   trip count n - 1 = 99999
 *   GPU-friendly: no.  Iteration i reads out[i-1], written by iteration
 *     i-1: a loop-carried flow dependence of distance 1 through out.
 *     (Normalizable, no calls; a GPU needs a parallel scan instead.)
 *   Accessed byte sections, half-open, relative to each parameter
 *   (whole function; the loop alone reads in [4, 4*n), reads out
 *   [0, 4*(n-1)) and writes out [4, 4*n)):
 *     in   read          [0, 4*n) = [0, 400000)
 *     out  write         [0, 4*n) = [0, 400000)
 *     out  read          [0, 4*(n-1)) = [0, 399996)
 */
#include <stdio.h>
#include <stdlib.h>

void prefix_sum(int *in, int *out, int n)
{
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    if (n < 1)
        return 1;
    int *in = malloc((size_t)n * sizeof *in);
    int *out = malloc((size_t)n * sizeof *out);
    if (!in || !out)
        return 1;
    for (int i = 0; i < n; i++)
        in[i] = (i * 7919) % 201 - 100;
    prefix_sum(in, out, n);
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += out[i];
    printf("checksum: %lld\n", sum);
    free(in);
    free(out);
    return 0;
}
