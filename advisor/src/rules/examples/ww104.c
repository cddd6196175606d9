/* `gain` is volatile: another thread or a signal handler may change it while the loop runs. */
volatile double gain;
double samples[4096];

void amplify(int n)
{
    for (int i = 0; i < n; i++) /* LOOP */
        samples[i] *= gain;
}
