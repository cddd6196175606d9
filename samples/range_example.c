/*
 * range_example.c -- the artificial loop used to showcase the symbolic
 * range analysis, made compilable: the "use i" and "..." parts write
 * into a result array res.
 *
 * Reproduces: Juravle MSc thesis, Section 8.3.3, Figure 8.9 "Symbolic
 * range analysis example".
 *
 * Usage: range_example [n [m]]        (defaults n = 40, m = 25)
 *
 * Known answers (defaults n = 40, m = 25), function range_example():
 *   Loops:
 *     line 40  for i   trip count n = 40 (then-branch i < m: 25
 *              iterations, else-branch: n - m = 15 iterations)
 *   Ranges (closed, as in Fig. 8.9): k = i*i in [0, (n-1)^2] = [0, 1521];
 *     i in [0, m-1] in the then-branch and [m, n-1] in the else-branch;
 *     mux in [min(m, n), max(m, n)] (here m > 10, so mux = n = 40);
 *     w = mux + i in [min(m, n), max(m, n) + n - 1] = [40, 79] here
 *     (Fig. 8.9 prints the upper bound as max(m + n, 2*n)).
 *   GPU-friendly: no.  out[0] is written by iteration i = 0 and read by
 *     every iteration i >= m of the else-branch (j = i * out[0]): a
 *     loop-carried flow dependence of distance i (25..39 here) whenever
 *     0 < m < n.  (Fig. 8.9 calls out[0] a loop invariant; it is one only
 *     after iteration 0.)  The loop is normalizable and calls nothing.
 *   Accessed byte sections, half-open, relative to each parameter:
 *     in   read   [0, (n-1)^2 + 1) = [0, 1522)  (char loads aux[k]; the
 *                 else-branch loads aux[i], i in [m, n), lie inside)
 *     out  write  [0, 4*n) = [0, 160); read [0, 4) (out[0])
 *     res  write  [0, 4*n) = [0, 160)
 *   (Fig. 8.9 prints aux in [in, in + n^2] and out in [out, out + 4*n^2];
 *    the exact bounds are the ones above.)
 *   The checksum does not depend on byte order or on the signedness of
 *   plain char: every int of in repeats one byte value below 128.
 */
#include <stdio.h>
#include <stdlib.h>

void range_example(int *in, int *out, int *res, int n, int m)
{
    for (int i = 0; i < n; i++) {
        char *aux = (char *)in;
        int k = i * i;
        out[i] = aux[k];
        int r;
        if (i < m) {
            r = i; /* use i */
        } else {
            int j = i * out[0];
            int l = j * aux[i];
            r = l;
        }
        int mux = m > 10 ? n : m;
        int w = mux + i;
        res[i] = r + w;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    int m = argc > 2 ? atoi(argv[2]) : 25;
    if (n < 1 || n > 10000)
        return 1;
    size_t in_len = ((size_t)(n - 1) * (size_t)(n - 1) + 1 + 3) / 4;
    int *in = malloc(in_len * sizeof *in);
    int *out = malloc((size_t)n * sizeof *out);
    int *res = malloc((size_t)n * sizeof *res);
    if (!in || !out || !res)
        return 1;
    for (size_t k = 0; k < in_len; k++)
        in[k] = 0x01010101 * (int)(k % 97 + 3);
    range_example(in, out, res, n, m);
    long long sum = 0;
    for (int k = 0; k < n; k++)
        sum = sum * 3 % 1000000007 + out[k] * 5 + res[k];
    printf("checksum: %lld\n", sum);
    free(in);
    free(out);
    free(res);
    return 0;
}
