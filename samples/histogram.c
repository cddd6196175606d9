/*
 * histogram.c -- 256-bin byte histogram, hist[data[i]]++.
 *
 * Reproduces: the loop-carried dependence test of thesis Section 4.1
 * ("No loop carried dependencies", checked with dynamic information):
 * the written address depends on loaded data.
 *
 * Usage: histogram [n]        (default n = 65536)
 *
 * Known answers (default n = 65536), function histogram():
 *   Loops:
 *     line 34  for i   trip count n = 65536
 *   GPU-friendly: yes, with a histogram reduction.  hist[data[i]]++ is a
 *     read-modify-write at an index loaded from data: iterations with
 *     equal data values update the same bin (with the default data all
 *     256 bins are hit, so the dependence really occurs), but it is the
 *     only access to hist in the loop and + commutes: ported with
 *     atomicAdd, per-block private bins merged afterwards (WW103 is a
 *     note).  (Normalizable; no calls.)
 *   Accessed byte sections, half-open, relative to each parameter:
 *     data  read          [0, n) = [0, 65536)
 *     hist  read + write  [0, 4*256) = [0, 1024) for the default data
 *                         (statically only [0, 4*256) as an upper bound,
 *                         from the unsigned char index)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NBINS 256

void histogram(unsigned char *data, int n, int *hist)
{
    for (int i = 0; i < n; i++)
        hist[data[i]]++;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 65536;
    if (n < 1)
        return 1;
    unsigned char *data = malloc((size_t)n);
    int hist[NBINS] = { 0 };
    if (!data)
        return 1;
    uint32_t s = 99u;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        data[i] = (unsigned char)(s >> 24);
    }
    histogram(data, n, hist);
    long long sum = 0;
    for (int b = 0; b < NBINS; b++)
        sum += (long long)hist[b] * (b + 1);
    printf("checksum: %lld\n", sum);
    free(data);
    return 0;
}
