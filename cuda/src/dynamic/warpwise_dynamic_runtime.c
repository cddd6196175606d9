/* warpwise_dynamic_runtime.c: the CUDA runtime's set-up-only calls with C linkage, linked
 * into every program that `warpwise check --dynamic` builds. Part of warpwise; see
 * docs/check.md.
 *
 * A host C file (b+tree's main.c calls cudaSetDevice) is compiled with `cc`, without the
 * shim, and its calls link against libcudart in a real build. The CUDA files get these calls
 * from warpwise_dynamic.h as static C++ functions of their own (internal linkage, so no
 * clash with these); a C caller needs external C-linkage symbols, defined here. Only calls
 * that set up, wait or report the one device: the shim's memory (cudaMalloc, cudaMemcpy)
 * lives per CUDA unit and cannot be reached from C. Weak, so that a program's own
 * definitions win. cudaError_t is an enum, an int in the C ABI; 0 is cudaSuccess. */
#define WW_WEAK __attribute__((weak))

WW_WEAK int cudaSetDevice(int device) { (void)device; return 0; }
WW_WEAK int cudaGetDevice(int *device) { *device = 0; return 0; }
WW_WEAK int cudaGetDeviceCount(int *count) { *count = 1; return 0; }
WW_WEAK int cudaDeviceSynchronize(void) { return 0; }
WW_WEAK int cudaThreadSynchronize(void) { return 0; }
WW_WEAK int cudaDeviceReset(void) { return 0; }
WW_WEAK int cudaThreadExit(void) { return 0; }
