/* helper_timer.h: warpwise's stand-in for the CUDA samples' timers, for analysis only. */
typedef struct StopWatchInterface StopWatchInterface;
int sdkCreateTimer();
int sdkDeleteTimer();
int sdkStartTimer();
int sdkStopTimer();
int sdkResetTimer();
float sdkGetTimerValue();
float sdkGetAverageTimerValue();
