/* A histogram: the bin each iteration increments is chosen by the data. */
void histogram(int n, const unsigned char *restrict pixels, int *restrict bins)
{
    for (int i = 0; i < n; i++) /* LOOP */
        bins[pixels[i]] += 1;
}
