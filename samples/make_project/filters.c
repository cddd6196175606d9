/*
 * filters.c -- kernels of the make_project sample (profiled with
 * CC="warpwise cc" make).  Known answers for main's default n = 1000:
 *   line 15  smooth: trip count n - 2 = 998, no loop-carried dependence
 *   line 21  scale: trip count n = 1000, called once with disjoint
 *            arrays: no dependence observed (statically: may alias)
 *   line 27  running_max: trip count n - 1 = 999, reads a[i - 1]
 *            written by the previous iteration: flow dependence,
 *            distance 1
 */
#include "filters.h"

void smooth(float *out, const float *in, int n)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = (in[i - 1] + in[i] + in[i + 1]) / TAPS;
}

void scale(float *dst, const float *src, float k, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = k * src[i];
}

void running_max(float *a, int n)
{
    for (int i = 1; i < n; i++)
        a[i] = a[i] > a[i - 1] ? a[i] : a[i - 1];
}
