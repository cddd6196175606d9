/* helper_cuda.h: warpwise's stand-in for the CUDA samples' error-checking helpers, for
   analysis only: each check is its expression. */
#include <cuda_runtime.h>
#define checkCudaErrors(call) (call)
#define getLastCudaError(message) ((void)(message))
int findCudaDevice();
int gpuDeviceInit(int device);
