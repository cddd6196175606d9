/* sm_13_double_functions.h: warpwise's stand-in; cuda_runtime.h declares what analysis needs. */
#include <cuda_runtime.h>
