/* `dst` and `src` come from calls nothing relates: they may be one buffer, and then
   iteration i + 1 reads the element iteration i writes. */
double *buffer(int which);

void smooth(int n)
{
    double *dst = buffer(0);
    const double *src = buffer(1);
    for (int i = 0; i < n; i++) /* LOOP */
        dst[i] = 0.5 * (src[i] + src[i + 1]);
}
