/*
 * edge.c -- loops for `warpwise validate` beyond the samples (tests/cuda_validate.rs):
 *   line 19  a descending loop with `continue` over `const float *restrict` (floats compared
 *            with a tolerance), a builtin call (sqrtf)
 *   line 28  `i <= n - 1` over an array of structs, reading a global `const` table whose
 *            section is not known statically (the whole table is copied); needs a profile
 *   line 37  a `while` loop over bytes
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

typedef struct { float x, y; int tag; } point_t;
static const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

void scale(const float *restrict in, float *restrict out, int n, float k)
{
    for (int i = n - 1; i >= 0; i--) {
        if (in[i] < 0)
            continue;
        out[i] = sqrtf(in[i]) * k;
    }
}

void move(point_t *p, size_t n, float dx)
{
    for (size_t i = 0; i <= n - 1; i++) {
        p[i].x += dx;
        p[i].tag = table[i % 8];
    }
}

void bytes(unsigned char *dst, const unsigned char *src, int n)
{
    int i = 0;
    while (i < n) {
        dst[i] = (unsigned char)(src[i] ^ 0x5a);
        i++;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    float *in = malloc(n * sizeof *in), *out = calloc(n, sizeof *out);
    point_t *p = malloc(n * sizeof *p);
    unsigned char *s = malloc(n), *d = malloc(n);
    for (int i = 0; i < n; i++) {
        in[i] = (float)(i % 7) - 2.0f;
        p[i].x = (float)i; p[i].y = 1.0f; p[i].tag = 0;
        s[i] = (unsigned char)(i * 13);
    }
    scale(in, out, n, 1.5f);
    move(p, (size_t)n, 0.25f);
    bytes(d, s, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += out[i] + p[i].x + p[i].tag + d[i];
    printf("checksum: %f\n", sum);
    return 0;
}
