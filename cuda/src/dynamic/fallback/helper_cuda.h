/* helper_cuda.h: warpwise's stand-in for the CUDA samples' error-checking helpers in a
 * `warpwise check --dynamic` build (part of warpwise; see docs/check.md). It is found only
 * where the program's own include path has no helper_cuda.h: a failed call prints its
 * error and where, and ends the program, as the samples' helpers do. */
#ifndef WARPWISE_HELPER_CUDA_H
#define WARPWISE_HELPER_CUDA_H
#include <stdio.h>
#include <stdlib.h>

static inline void ww_check_cuda(cudaError_t e, const char *what, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error %d (%s) at %s:%d: %s\n", (int)e, cudaGetErrorString(e), file,
                line, what);
        exit(EXIT_FAILURE);
    }
}
#define checkCudaErrors(call) ww_check_cuda((call), #call, __FILE__, __LINE__)
#define getLastCudaError(message) ww_check_cuda(cudaGetLastError(), (message), __FILE__, __LINE__)
static inline int findCudaDevice(int, const char **) { return 0; }
static inline int gpuDeviceInit(int device) { return device; }
#endif
