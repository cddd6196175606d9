/* stride4k -- touches one double in every 4 KiB of a large array (the shadow memory must
 * follow the memory touched, not the address range spanned). */
#include <stdio.h>
#include <stdlib.h>
#ifdef MINI
#define PAGES 64
#define REPS 2
#else
#define PAGES 65536
#define REPS 400
#endif
#define STRIDE 512

static void bump(long n, double *a, const int *step)
{
    for (long p = 0; p < n; p++)
        a[p * STRIDE + step[p & 7]] += 1.0;
}

int main(void)
{
    double *a = calloc((size_t)PAGES * STRIDE, sizeof(double));
    int step[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    double sum = 0;
    if (!a)
        return 1;
    for (int r = 0; r < REPS; r++)
        bump(PAGES, a, step);
    for (long p = 0; p < PAGES; p++)
        sum += a[p * STRIDE];
    printf("%.6e\n", sum);
    free(a);
    return 0;
}
