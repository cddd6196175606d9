/*
 * matrix_add_struct.c -- matrix addition whose output matrix is reached
 * through a structure: a nested outbound (c->data).
 *
 * Reproduces: Juravle MSc thesis, Section 4.2 "Detecting kernel
 * parameters" (the matrix_t example and its report: inbounds a, b, c, N;
 * nested outbound c->data).
 *
 * Usage: matrix_add_struct [N]        (default N = 100)
 *
 * Known answers (default input N = 100), function add():
 *   Loops:
 *     line 37  for i   outer   trip count N = 100
 *     line 38  for j   inner   trip count N = 100 per outer iteration
 *   GPU-friendly: yes (2D nest; no loop-carried dependence, normalizable,
 *     no calls).
 *   Kernel parameters: inbounds a, b, c, N; outbound (nested) c->data.
 *   Accessed byte sections, half-open, relative to each base pointer:
 *     a        read   [0, 4*N*N) = [0, 40000)
 *     b        read   [0, 4*N*N) = [0, 40000)
 *     c        read   [0, sizeof(int *)) = [0, 8) on LP64: only the field
 *                     data (offset 0) is loaded; c->size is never touched
 *     c->data  write  [0, 4*N*N) = [0, 40000)   (nested outbound)
 *   The thesis writes these as closed intervals [0, 4*N*N - 4].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int *data;
    int size;
} matrix_t;

void add(int *a, int *b, matrix_t *c, int N)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            c->data[i * N + j] =
                a[i * N + j] +
                b[i * N + j];
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 100;
    if (N < 1)
        return 1;
    size_t count = (size_t)N * (size_t)N;
    int *a = malloc(count * sizeof *a);
    int *b = malloc(count * sizeof *b);
    matrix_t c;
    c.data = malloc(count * sizeof *c.data);
    c.size = N;
    if (!a || !b || !c.data)
        return 1;
    for (size_t k = 0; k < count; k++) {
        a[k] = (int)(k * 7 % 101);
        b[k] = (int)(k % 13) * 3 - 17;
    }
    add(a, b, &c, N);
    int64_t sum = 0;
    for (size_t k = 0; k < count; k++)
        sum += (int64_t)c.data[k] * (int64_t)(k % 17 + 1);
    printf("checksum: %lld\n", (long long)sum);
    free(a);
    free(b);
    free(c.data);
    return 0;
}
