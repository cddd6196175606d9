/* helper_timer.h: warpwise's stand-in for the CUDA samples' timers in a `warpwise check
 * --dynamic` build (part of warpwise; see docs/check.md), found only where the program's
 * own include path has none: wall-clock time in milliseconds, as the samples measure. */
#ifndef WARPWISE_HELPER_TIMER_H
#define WARPWISE_HELPER_TIMER_H
#include <time.h>

struct StopWatchInterface {
    double started, total;
    int runs;
    bool running;
};
static inline double ww_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static inline bool sdkCreateTimer(StopWatchInterface **t)
{
    *t = new StopWatchInterface{0, 0, 0, false};
    return true;
}
static inline bool sdkDeleteTimer(StopWatchInterface **t)
{
    delete *t;
    *t = 0;
    return true;
}
static inline bool sdkStartTimer(StopWatchInterface **t)
{
    (*t)->started = ww_now_ms();
    (*t)->running = true;
    return true;
}
static inline bool sdkStopTimer(StopWatchInterface **t)
{
    if ((*t)->running) {
        (*t)->total += ww_now_ms() - (*t)->started;
        (*t)->runs++;
        (*t)->running = false;
    }
    return true;
}
static inline bool sdkResetTimer(StopWatchInterface **t)
{
    **t = StopWatchInterface{0, 0, 0, false};
    return true;
}
static inline float sdkGetTimerValue(StopWatchInterface **t)
{
    double now = (*t)->running ? ww_now_ms() - (*t)->started : 0;
    return (float)((*t)->total + now);
}
static inline float sdkGetAverageTimerValue(StopWatchInterface **t)
{
    return (*t)->runs ? (float)((*t)->total / (*t)->runs) : 0.0f;
}
#endif
