/*
 * private.c -- loops with private storage for `warpwise validate` (tests/cuda_validate.rs):
 *   line 14  storage declared in the body: an array, a struct, an array with `= {0}`
 *   line 30  an array declared before the loop, written before it is read in every iteration
 *   line 40  a scalar read after the loop (lastprivate): refused, not generated yet
 */
#include <stdio.h>
#include <stdlib.h>

struct pair { double lo, hi; };

void per_iteration(const double *restrict in, double *restrict out, int n)
{
    for (int i = 0; i < n; i++) {
        double q[3];
        struct pair p;
        double v[4] = {0};
        for (int k = 0; k < 3; k++)
            q[k] = in[i] * (k + 1);
        p.lo = q[0] - q[1];
        p.hi = q[2];
        v[i % 4] = p.hi;
        out[i] = p.lo + p.hi + v[0] + v[3];
    }
}

void outside(const double *restrict in, double *restrict out, int n)
{
    double tmp[3];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            tmp[k] = in[i] + k;
        out[i] = tmp[0] * tmp[2] - tmp[1];
    }
}

double last_of(const double *restrict in, double *restrict out, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++) {
        t = in[i] * 3.0;
        out[i] = t + 1.0;
    }
    return t;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    double *in = malloc(n * sizeof *in), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *c = malloc(n * sizeof *c);
    for (int i = 0; i < n; i++)
        in[i] = (i % 11) - 5.0;
    per_iteration(in, a, n);
    outside(in, b, n);
    double t = last_of(in, c, n);
    double sum = t;
    for (int i = 0; i < n; i++)
        sum += a[i] + b[i] + c[i];
    printf("checksum: %f\n", sum);
    return 0;
}
