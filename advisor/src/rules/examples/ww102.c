/* Every iteration adds into `sum`: a reduction, which ports as one. */
double total(int n, const double *a)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) /* LOOP */
        sum += a[i];
    return sum;
}
