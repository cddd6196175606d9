/*
 * aliasing.c -- one loop, two calls: with disjoint arrays it is
 * parallel, with dst = src + 1 it carries a dependence.
 *
 * Reproduces: the reason thesis Section 4.1 checks loop-carried
 * dependencies with dynamic information ("the lack of a proper pointer
 * alias analysis"): statically undecidable, settled by a profile.
 *
 * Known answers (N = 100), function shift():
 *   Loops:
 *     line 39  for i   trip count n = 100 in each of the two calls
 *   GPU-friendly: statically undecidable -- dst and src are unrelated
 *     parameters without restrict, so they may overlap.  A profile of
 *     the two calls in main settles it per call:
 *     call 1, shift(y, x, N), disjoint arrays: no loop-carried
 *       dependence; GPU-friendly (normalizable, no calls).
 *     call 2, shift(buf + 1, buf, N), dst = src + 1: iteration i writes
 *       buf[i+1], which iteration i+1 reads as src[i+1]: a loop-carried
 *       flow dependence of distance 1; not GPU-friendly.  Sequentially
 *       buf[k] = buf[0] * 2^k (log2(buf[N] / buf[0]) = N = 100); a
 *       parallel run would give buf[k] = 2 * old buf[k-1] instead.
 *   Accessed byte sections, half-open, relative to each parameter (both
 *   calls): dst write [0, 4*n) = [0, 400); src read [0, 4*n) = [0, 400).
 *   Relative to buf in call 2: read [0, 400), write [4, 404); they
 *   overlap on [4, 400).
 *   Checksum: 1000 * (sum of y after call 1) + log2(buf[N] / buf[0]).
 */
#include <math.h>
#include <stdio.h>

#define N 100

static float x[N];
static float y[N];
static float buf[N + 1];

void shift(float *dst, const float *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i] * 2;
}

int main(int argc, char **argv)
{
    /* Optional argument for profiles: `disjoint` or `overlap` makes only that call. */
    int disjoint = argc < 2 || argv[1][0] != 'o';
    int overlap = argc < 2 || argv[1][0] != 'd';
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 10 + 1);
    for (int i = 0; i <= N; i++)
        buf[i] = (float)(i + 1);
    if (disjoint)
        shift(y, x, N); /* disjoint: no dependence */
    if (overlap)
        shift(buf + 1, buf, N); /* dst = src + 1: distance-1 dependence */
    long long sum_y = 0;
    for (int i = 0; i < N; i++)
        sum_y += (long long)y[i];
    long long cascade = (long long)log2((double)buf[N] / (double)buf[0]);
    printf("checksum: %lld\n", 1000 * sum_y + cascade);
    return 0;
}
