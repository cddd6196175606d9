/*
 * upsample.c -- nearest-neighbour upsampling by a run-time factor: out[i] = in[i / factor].
 *
 * Reproduces: Juravle MSc thesis, Section 6.2 "Trading soundness for precision", with a
 * loop whose section the static analysis cannot compute: the symbolic engine divides by
 * constants only, so the offset `4 * (i / factor)` has no closed form while `factor` is
 * unknown.  Instantiated with a profile (factor recorded at loop entry, n solved from the
 * trip count), the loop is analysed again with the values injected and the section is exact
 * for that run.
 *
 * Usage: upsample [n [factor]]     (defaults n = 1000, factor = 4)
 *
 * Known answers (defaults), function upsample():
 *   Loop line 26 `for i`: trip count n = 1000; GPU-friendly (in only read, out[i] written
 *   once per iteration, no calls).
 *   Sections, half-open bytes:
 *     out  write  [0, 4*n) = [0, 4000)
 *     in   read   unknown statically; for the profiled run (factor = 4):
 *                 [0, 4*((n - 1) / factor) + 4) = [0, 1000)
 */
#include <stdio.h>
#include <stdlib.h>

void upsample(const float *in, float *out, int n, int factor)
{
    for (int i = 0; i < n; i++)
        out[i] = in[i / factor];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int factor = argc > 2 ? atoi(argv[2]) : 4;
    if (n < 1 || factor < 1)
        return 1;
    int in_len = (n - 1) / factor + 1;
    float *in = malloc(sizeof *in * (size_t)in_len);
    float *out = malloc(sizeof *out * (size_t)n);
    if (!in || !out)
        return 1;
    for (int k = 0; k < in_len; k++)
        in[k] = (float)k * 0.5f;
    upsample(in, out, n, factor);
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += out[k] * (k % 3 + 1);
    printf("checksum: %.1f\n", sum);
    free(in);
    free(out);
    return 0;
}
