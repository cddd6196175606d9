/* filters.h -- the kernels of the make_project sample. */
#ifndef FILTERS_H
#define FILTERS_H

#define TAPS 3

void smooth(float *out, const float *in, int n);
void scale(float *dst, const float *src, float k, int n);
void running_max(float *a, int n);

#endif
