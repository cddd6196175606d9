/*
 * every_fourth_add.c -- add every fourth position of two vectors into a
 * third one; the loop runs from -n to n with step 4 and must be
 * normalized, which introduces the compiler variable tmp (the trip count).
 *
 * Reproduces: Juravle MSc thesis, Section 6.1 "Instantiation procedure"
 * (the a[i + 2*n] = b[i + n] + c[i + n] example, instantiated with a
 * loop count of 100, which gives n = 200).
 *
 * Usage: every_fourth_add [n]        (default n = 200)
 *
 * Known answers (default input n = 200), function every_fourth():
 *   Loops:
 *     line 43  for i = -n; i < n; i += 4
 *              trip count tmp = (2*n + 3) / 4 for n > 0, else 0;
 *              100 for n = 200.  Normalized form: k = 0 .. tmp-1,
 *              i = 4*k - n.
 *   GPU-friendly: yes (no loop-carried dependence: a is only written, b
 *     and c only read, each iteration writes its own a element;
 *     normalizable: constant step 4, bound n invariant; no calls).
 *   Accessed byte sections, half-open, relative to each parameter, in
 *   terms of tmp (T) and for n = 200:
 *     a  write  [4*n, 4*n + 16*(T-1) + 4) = [800, 2388)
 *     b  read   [0, 16*(T-1) + 4)         = [0, 1588)
 *     c  read   [0, 16*(T-1) + 4)         = [0, 1588)
 *   Instantiation: a profiled loop count of 100 gives tmp = 100 and
 *   n = 200 (n = 199 gives 100 as well: the count fixes n only up to
 *   the rounding of (2*n + 3) / 4).
 *   Notes on the thesis text: its normalized bound "tmp = n > 0 ? 0 :
 *   2*n/4" has the branches swapped and rounds down (n = 201 runs 101
 *   times, not 100); its copy expressions [4*n, 4*tmp + 4*n - 4] and
 *   [0, 4*tmp - 4] drop the factor 4 of the stride (the last element
 *   is at byte 16*(tmp-1) past the first), and its instantiated values
 *   [200, 596] and [0, 396] are element indices, not bytes.  The byte
 *   sections above are the ones the program really touches.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void every_fourth(int *a, int *b, int *c, int n)
{
    for (int i = -n; i < n; i += 4) {
        a[i + 2 * n] = b[i + n] + c[i + n];
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1)
        return 1;
    int *a = calloc((size_t)(3 * n), sizeof *a);
    int *b = malloc((size_t)(2 * n) * sizeof *b);
    int *c = malloc((size_t)(2 * n) * sizeof *c);
    if (!a || !b || !c)
        return 1;
    for (int k = 0; k < 2 * n; k++) {
        b[k] = k * 3 + 1;
        c[k] = 1000 - k;
    }
    every_fourth(a, b, c, n);
    long long sum = 0;
    for (int k = 0; k < 3 * n; k++)
        sum += (long long)a[k] * (k % 11 + 1);
    printf("checksum: %lld\n", sum);
    free(a);
    free(b);
    free(c);
    return 0;
}
