/* cuda_profiler_api.h: warpwise's stand-in; cuda_runtime.h declares what analysis needs. */
#include <cuda_runtime.h>
