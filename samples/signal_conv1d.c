/*
 * signal_conv1d.c -- 1D signal convolution (box filter) whose extremities
 * read an extra area stored in the same input array.
 *
 * Reproduces: Juravle MSc thesis, Section 6.2 "Trading soundness for
 * precision" (the loop with idx = slice + k / idx = size + k).
 *
 * Input layout used by the code (as written in the thesis): the signal
 * sample k (0 <= k < size) is stored at in[slice + k]; a sample k < 0
 * reads in[size + k] and a sample k >= size reads in[size + k], i.e. the
 * "extra area" [2*size, 2*size + slice - 1) at the end of the array (k
 * never exceeds size + slice - 2).  main allocates 2*size + slice ints.
 *
 * Usage: signal_conv1d [size [slice]]     (defaults size = 4096, slice = 16)
 *
 * Known answers (defaults size = 4096, slice = 16), function conv1d():
 *   Loops:
 *     line 44  for i   outer   trip count size = 4096
 *     line 46  for k   inner   trip count 2*slice = 32 per outer iteration
 *   GPU-friendly: the outer loop i, yes (x is private per iteration,
 *     out[i] written once, in only read; normalizable; no calls).  The
 *     inner loop k carries x += in[idx], a + reduction (friendly alone,
 *     not a grid dimension), so the nest maps to a 1D grid over i only.
 *   Accessed byte sections, half-open, relative to each parameter:
 *     in   read   [4*min(slice, size - slice), 4*(2*size + slice - 1))
 *                 for 2 <= slice <= size; = [64, 32828) for the defaults.
 *                 It is the union of [4*slice, 4*(slice + size)),
 *                 [4*(size - slice), 4*size) and [8*size, 4*(2*size +
 *                 slice - 1)): a hole [4*(slice + size), 8*size) is skipped.
 *     out  write  [0, 4*size) = [0, 16384)
 *   The lower bound of the in section needs min(slice, size - slice):
 *   size and slice are incomparable symbolically, so the static range
 *   analysis cannot bound idx (the thesis reports only "in is a pointer
 *   with a sharing opportunity").  Instantiating size and slice from a
 *   profile (trip counts 4096 and 32) gives the exact section above.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void conv1d(int *in, int *out, int size, int slice)
{
    int i, k, x;
    for (i = 0; i < size; i++) {
        x = 0;
        for (k = i - slice; k < i + slice; k++) {
            int idx = 0;
            if (k >= 0 && k < size)
                idx = slice + k;
            else
                idx = size + k;
            x += in[idx];
        }
        out[i] = x;
    }
}

int main(int argc, char **argv)
{
    int size = argc > 1 ? atoi(argv[1]) : 4096;
    int slice = argc > 2 ? atoi(argv[2]) : 16;
    if (size < 1 || slice < 0 || slice > size)
        return 1;
    size_t in_len = (size_t)(2 * size + slice);
    int *in = malloc(in_len * sizeof *in);
    int *out = malloc((size_t)size * sizeof *out);
    if (!in || !out)
        return 1;
    uint32_t s = 2024u;
    for (size_t k = 0; k < in_len; k++) {
        s = s * 1664525u + 1013904223u;
        in[k] = (int)(s >> 24) - 128;
    }
    conv1d(in, out, size, slice);
    long long sum = 0;
    for (int k = 0; k < size; k++)
        sum += (long long)out[k] * (k % 7 + 1);
    printf("checksum: %lld\n", sum);
    free(in);
    free(out);
    return 0;
}
