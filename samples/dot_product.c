/*
 * dot_product.c -- dot product of two int vectors, sum += a[i] * b[i],
 * accumulated in a long long.
 *
 * Reproduces: a reduction, the scalar form of the loop-carried
 * dependence of thesis Section 4.1.
 *
 * Usage: dot_product [n]        (default n = 100000)
 *
 * Known answers (default n = 100000), function dot():
 *   Loops:
 *     line 27  for i   trip count n = 100000
 *   GPU-friendly: yes, with a reduction: sum is only updated as
 *     sum += e with e not reading sum, and read nowhere else in the loop:
 *     a scalar + reduction (exact on integers), ported as a parallel tree
 *     reduction (WW102 is a note).  (Normalizable, no calls.)
 *   Accessed byte sections, half-open, relative to each parameter:
 *     a  read  [0, 4*n) = [0, 400000)
 *     b  read  [0, 4*n) = [0, 400000)
 */
#include <stdio.h>
#include <stdlib.h>

long long dot(int *a, int *b, int n)
{
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += (long long)a[i] * b[i];
    return sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    if (n < 1)
        return 1;
    int *a = malloc((size_t)n * sizeof *a);
    int *b = malloc((size_t)n * sizeof *b);
    if (!a || !b)
        return 1;
    for (int i = 0; i < n; i++) {
        a[i] = i % 1000 - 500;
        b[i] = (i * 37) % 1001 - 300;
    }
    printf("checksum: %lld\n", dot(a, b, n));
    free(a);
    free(b);
    return 0;
}
