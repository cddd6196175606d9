#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A negative weight ends the program: the message and `exit` stay on the host. */
void weigh(int n, const double *w, const double *x, double *y)
{
    for (int i = 0; i < n; i++) { /* LOOP */
        if (w[i] < 0) {
            fprintf(stderr, "negative weight at %d\n", i);
            exit(1);
        }
        y[i] = sqrt(w[i]) * x[i];
    }
}
