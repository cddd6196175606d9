/* cuda.h: warpwise's stand-in (see cuda_runtime.h, which declares what analysis needs). */
#include <cuda_runtime.h>
