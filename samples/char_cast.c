/*
 * char_cast.c -- an int array read through a char pointer: the accessed
 * section must be counted in bytes, not in elements.
 *
 * Reproduces: Juravle MSc thesis, Section 4.2 "Detecting kernel
 * parameters" (the int in[10] / int out[15] / (char*)in example).
 *
 * Known answers, function cast_copy():
 *   Loops:
 *     line 28  for i   trip count 15
 *   GPU-friendly: yes (no loop-carried dependence: in is only read and
 *     out[i] is written once per iteration; normalizable; no calls).
 *   Accessed byte sections, half-open, relative to each parameter:
 *     in   read   [0, 15)    (15 one-byte loads through aux, not 40 bytes)
 *     out  write  [0, 60)    (15 ints)
 *   The thesis writes them as closed intervals: in [0, 14], out [0, 56]
 *   (56 is the offset of the last int written).
 *   The checksum does not depend on byte order or on the signedness of
 *   plain char: every int of in repeats one byte value below 128.
 */
#include <stdio.h>

#define IN_LEN 10
#define OUT_LEN 15

void cast_copy(int *in, int *out)
{
    for (int i = 0; i < 15; i++) {
        char *aux = (char *)in;
        out[i] = aux[i];
    }
}

int main(void)
{
    int in[IN_LEN];
    int out[OUT_LEN];
    for (int k = 0; k < IN_LEN; k++)
        in[k] = 0x01010101 * (3 * k + 5);
    cast_copy(in, out);
    long long sum = 0;
    for (int k = 0; k < OUT_LEN; k++)
        sum = sum * 7 + out[k];
    printf("checksum: %lld\n", sum);
    return 0;
}
