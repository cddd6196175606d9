#include <stdlib.h>

/* Each iteration allocates and frees its own scratch buffer. */
void smooth(int n, int m, const double *restrict in, double *restrict out)
{
    for (int i = 0; i < n; i++) { /* LOOP */
        double *tmp = malloc(m * sizeof *tmp);
        for (int j = 0; j < m; j++)
            tmp[j] = in[i * m + j];
        double s = 0;
        for (int j = 0; j < m; j++)
            s += tmp[j];
        out[i] = s;
        free(tmp);
    }
}
