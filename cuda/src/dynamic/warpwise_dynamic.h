// warpwise_dynamic.h: force-included after warpwise_cuda_cpu.h into each CUDA file of a
// program that `warpwise check --dynamic` runs. Part of warpwise; see docs/check.md.
//
// The shim's state is per translation unit (its globals are static), so each unit tells
// the hooks (warpwise_dynamic_hooks.c) through two functions of its own whether it is running
// a launch, which block and thread, and whether an address lies in one of its cudaMalloc'd
// buffers. Neither is instrumented: they run inside the hooks.
#ifndef WARPWISE_DYNAMIC_H
#define WARPWISE_DYNAMIC_H

#include <stdint.h>

extern "C" void ww_dyn_register(int (*where)(uint64_t *, uint64_t *, uint32_t *),
                                int (*owns)(const void *, unsigned));

// Whether this unit runs a launch now: its number, the block's and the thread's linear ids.
__attribute__((no_sanitize_thread)) static int ww_dyn_where(uint64_t *launch, uint64_t *block,
                                                            uint32_t *thread)
{
    if (!ww_cpu.fibers)
        return 0;
    *launch = ww_cpu.launches;
    *block = blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    *thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return 1;
}

// Whether the bytes at `addr` are global memory: inside a live buffer of this unit.
__attribute__((no_sanitize_thread)) static int ww_dyn_owns(const void *addr, unsigned size)
{
    const unsigned char *q = (const unsigned char *)addr;
    for (int i = 0; i < ww_cpu.nbuffers; i++) {
        const ww_cpu_buffer *b = &ww_cpu.buffers[i];
        if (b->live && q >= b->data && q + size <= b->data + b->size)
            return 1;
    }
    return 0;
}

__attribute__((constructor, no_sanitize_thread)) static void ww_dyn_register_unit(void)
{
    ww_dyn_register(ww_dyn_where, ww_dyn_owns);
}

// Runtime calls the shim leaves out that only set up or wait: nothing to do on the CPU.
static inline cudaError_t cudaThreadSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }

#endif
