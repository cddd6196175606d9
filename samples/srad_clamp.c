/*
 * srad_clamp.c -- SRAD-like diffusion coefficient clamped to [0, 1] with
 * an if / else-if / else chain (divergent) and with min/max (the fix).
 *
 * Reproduces: GPUCheck (Ahmad et al.), Fig. 1 (original srad code,
 * "if (c < 0) ... else if (c > 1) ... else ...") and Fig. 2 (the
 * min/max rewrite).  Sequential 2D loop over the image in place of the
 * CUDA thread grid.
 *
 * Usage: srad_clamp [rows [cols]]        (defaults rows = 64, cols = 128)
 *
 * Known answers (defaults 64 x 128, q0sqr = 0.5), diffusion_coeff():
 *   Loops:
 *     line 39  for i   trip count rows = 64
 *     line 40  for j   trip count cols = 128 per row
 *   GPU-friendly: yes, 2D nest (each (i, j) writes its own c_out
 *     element, qsqr only read; normalizable; no calls).
 *   Branch divergence at lines 43-49: with the default data
 *     qsqr = (k + 0.5)/32 - 0.75, k = (13*i + 37*j) % 64, the three paths
 *     run 2048 (c < 0), 3072 (c > 1) and 3072 (else) times, and every
 *     warp of 32 threads takes all three paths under either mapping
 *     (Grid.x = i or Grid.x = j): three serialized paths, each with a
 *     store.  Fix: c = fminf(fmaxf(c, 0), 1) as in diffusion_coeff_minmax
 *     (line 59), one path, one store; fminf/fmaxf are GPU intrinsics.
 *     Both versions produce the same output (checked by main).
 *   Accessed byte sections, half-open, relative to each parameter:
 *     qsqr   read   [0, 4*rows*cols) = [0, 32768)
 *     c_out  write  [0, 4*rows*cols) = [0, 32768)
 *   Coalescing (warp 32, 128-byte line), qsqr[i*cols + j] and c_out:
 *     natural mapping (Grid.x = i): stride 4*cols bytes, cols/4 = 32
 *     requests; reversed mapping (Grid.x = j): 1 request.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void diffusion_coeff(float *qsqr, float q0sqr, float *c_out, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            float den = (qsqr[i * cols + j] - q0sqr) / (q0sqr * (1 + q0sqr));
            float c = 1.0f / (1.0f + den);
            if (c < 0) {
                c_out[i * cols + j] = 0;
            } else if (c > 1) {
                c_out[i * cols + j] = 1;
            } else {
                c_out[i * cols + j] = c;
            }
        }
    }
}

void diffusion_coeff_minmax(float *qsqr, float q0sqr, float *c_out, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            float den = (qsqr[i * cols + j] - q0sqr) / (q0sqr * (1 + q0sqr));
            float c = fminf(fmaxf(1.0f / (1.0f + den), 0.0f), 1.0f);
            c_out[i * cols + j] = c;
        }
    }
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 64;
    int cols = argc > 2 ? atoi(argv[2]) : 128;
    if (rows < 1 || cols < 1)
        return 1;
    size_t len = (size_t)rows * (size_t)cols;
    float *q = malloc(len * sizeof *q);
    float *c1 = malloc(len * sizeof *c1);
    float *c2 = malloc(len * sizeof *c2);
    if (!q || !c1 || !c2)
        return 1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            q[(size_t)i * cols + j] = ((13 * i + 37 * j) % 64 + 0.5f) / 32.0f - 0.75f;
    diffusion_coeff(q, 0.5f, c1, rows, cols);
    diffusion_coeff_minmax(q, 0.5f, c2, rows, cols);
    long long sum = 0;
    for (size_t k = 0; k < len; k++) {
        if (c1[k] != c2[k])
            return 2;
        sum += (long long)(c1[k] * 1000000.0f);
    }
    printf("checksum: %lld\n", sum);
    free(q);
    free(c1);
    free(c2);
    return 0;
}
