#include <stdio.h>

/* `printf` writes to the host's standard output. */
void show(int n, const double *a)
{
    for (int i = 0; i < n; i++) /* LOOP */
        printf("%d %g\n", i, a[i]);
}
