/* main.c -- driver of the make_project sample: smooth, scale and a running
 * maximum over a deterministic signal; prints one checksum line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "filters.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n < 3)
        return 1;
    float *in = malloc((size_t)n * sizeof *in);
    float *out = calloc((size_t)n, sizeof *out);
    float *big = malloc((size_t)n * sizeof *big);
    if (!in || !out || !big)
        return 1;
    for (int i = 0; i < n; i++)
        in[i] = (float)sin(i * 0.01) * 100.0f;
    smooth(out, in, n);
    scale(big, out, 2.0f, n);
    running_max(big, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += big[i];
    printf("checksum: %.0f\n", sum);
    free(in);
    free(out);
    free(big);
    return 0;
}
