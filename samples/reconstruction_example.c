/*
 * reconstruction_example.c -- summing a rectangular part of an image
 * through a row pointer; the example of expression reconstruction.
 *
 * Reproduces: Juravle MSc thesis, Section 8.4, Figure 8.10 "Expression
 * reconstruction example".  As in the figure, rows are n ints apart
 * (row_idx = i*n) while the inner loop reads m of them.
 *
 * Usage: reconstruction_example [n [m]]     (defaults n = 100, m = 80)
 *
 * Known answers (defaults n = 100, m = 80), function sum_rows():
 *   Loops:
 *     line 32  for i   outer   trip count n = 100
 *     line 35  for j   inner   trip count m = 80 per outer iteration
 *   Reconstructed expressions (bytes, since pointer arithmetic scales by
 *   sizeof(int)): row_idx = {i*n}; row = {img + 4*i*n};
 *   val = {alpha} with &alpha = {img + 4*(i*n + j)}; sum = {0, sum + alpha}.
 *   GPU-friendly: yes, with a reduction.  sum = sum + val carries sum in
 *     both loops, but only as a + reduction (exact on int): each loop
 *     ports as a parallel reduction.  Normalizable, no calls.
 *   Accessed byte sections, half-open, relative to each parameter:
 *     img  read  [0, 4*((n-1)*n + m)) = [0, 39920)   (for m <= n; rows
 *               are read in their first m ints only)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int sum_rows(int *img, int n, int m)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int row_idx = i * n;
        int *row = img + row_idx;
        for (int j = 0; j < m; j++) {
            int val = row[j];
            sum = sum + val;
        }
    }
    return sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    int m = argc > 2 ? atoi(argv[2]) : 80;
    if (n < 1 || m < 1 || m > n)
        return 1;
    size_t len = (size_t)n * (size_t)n;
    int *img = malloc(len * sizeof *img);
    if (!img)
        return 1;
    uint32_t s = 7u;
    for (size_t k = 0; k < len; k++) {
        s = s * 1103515245u + 12345u;
        img[k] = (int)((s >> 16) % 511) - 255;
    }
    printf("checksum: %d\n", sum_rows(img, n, m));
    free(img);
    return 0;
}
