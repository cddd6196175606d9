/* device_launch_parameters.h: warpwise's stand-in; cuda_runtime.h declares what analysis needs. */
#include <cuda_runtime.h>
