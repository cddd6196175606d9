// warpwise_dynamic.h: force-included after warpwise_cuda_cpu.h into each CUDA file of a
// program that `warpwise check --dynamic` runs. Part of warpwise; see docs/check.md.
//
// The shim's state is per translation unit (its globals are static), so each unit tells
// the hooks (warpwise_dynamic_hooks.c) through two functions of its own whether it is running
// a launch, which block and thread, and whether an address lies in one of its cudaMalloc'd
// buffers. Neither is instrumented: they run inside the hooks. Each launch goes through
// `ww_dyn_launch_kernel`, which tells the hooks its grid, block and integer arguments
// (registered under this unit's number) before the shim runs it.
#ifndef WARPWISE_DYNAMIC_H
#define WARPWISE_DYNAMIC_H

#include <stdint.h>
#include <time.h> // nvcc's runtime header brings it
#include <type_traits>

extern "C" int ww_dyn_register(int (*where)(uint64_t *, uint64_t *, uint32_t *),
                               int (*owns)(const void *, unsigned));
extern "C" void ww_dyn_launch(int unit, uint64_t launch, const unsigned *grid,
                              const unsigned *block, int n, const long long *values,
                              const unsigned char *integral);

// This unit's number among the registered ones: the hooks tag its launches with it.
static int ww_dyn_unit = -1;

// Whether this unit runs a launch now: its number, the block's linear id, and the thread's
// linear id with the block's number of threads above it (bits 16 and up).
__attribute__((no_sanitize_thread)) static int ww_dyn_where(uint64_t *launch, uint64_t *block,
                                                            uint32_t *thread)
{
    if (!ww_cpu.fibers)
        return 0;
    *launch = ww_cpu.launches;
    *block = blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    *thread = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) |
              (blockDim.x * blockDim.y * blockDim.z) << 16;
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
    ww_dyn_unit = ww_dyn_register(ww_dyn_where, ww_dyn_owns);
}

// One argument of a launch: its value where it is an integer (a size, an index), which a
// static count written in the kernel's parameters is evaluated with.
template <typename T> static inline long long ww_dyn_int(const T &x, std::true_type) { return (long long)x; }
template <typename T> static inline long long ww_dyn_int(const T &, std::false_type) { return 0; }
template <typename T> static inline void ww_dyn_arg(long long *v, unsigned char *k, int i, const T &x)
{
    typedef std::integral_constant<bool, std::is_integral<T>::value || std::is_enum<T>::value> integer;
    k[i] = integer::value;
    v[i] = ww_dyn_int(x, integer());
}

// A launch as the shim runs it, its grid, block and integer arguments told to the hooks
// first, under the number the shim gives it (one past the launches run so far).
template <typename... P, typename... A>
static void ww_dyn_launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args)
{
    long long values[sizeof...(A) + 1];
    unsigned char integral[sizeof...(A) + 1];
    int i = 0;
    int expand[] = {0, (ww_dyn_arg(values, integral, i++, args), 0)...};
    (void)expand;
    unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    ww_dyn_launch(ww_dyn_unit, ww_cpu.launches + 1, g, b, (int)sizeof...(A), values, integral);
    ww_cpu_launch(kernel, grid, block, shared, args...);
}
#define ww_cpu_launch ww_dyn_launch_kernel

// A kernel's `__shared__` array is one per block: blocks run one after another and a
// block's threads (fibers) see the same static object. (`extern __shared__` is left to the
// shim's `ww_smem`.)
#undef __shared__
#define __shared__ static
// What an `extern __shared__` array becomes (rewrite.rs): the shim's dynamic shared memory,
// as a pointer of whichever type the declaration gives.
struct ww_dyn_smem {
    template <typename T> operator T *() const { return (T *)(void *)ww_smem; }
};

// Runtime calls the shim leaves out that set up, time or wait: on the CPU they succeed
// and do nothing (events read 0 ms), so that benchmarks that call them build and run.
static inline cudaError_t cudaThreadSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaDeviceReset(void) { return cudaSuccess; }
static inline cudaError_t cudaThreadExit(void) { return cudaSuccess; }
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
    size_t memPitch, totalConstMem, textureAlignment, texturePitchAlignment;
    int major, minor, multiProcessorCount, clockRate, deviceOverlap, kernelExecTimeoutEnabled;
    int integrated, canMapHostMemory, computeMode, concurrentKernels, ECCEnabled, pciBusID;
    int pciDeviceID, tccDriver, asyncEngineCount, unifiedAddressing, memoryClockRate;
    int memoryBusWidth, l2CacheSize, maxThreadsPerMultiProcessor, maxTexture1D;
};
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int)
{
    memset((void *)p, 0, sizeof *p);
    strcpy(p->name, "warpwise CPU shim");
    p->totalGlobalMem = (size_t)1 << 32;
    p->sharedMemPerBlock = WW_CPU_SHARED_MAX;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->major = 7;
    p->multiProcessorCount = 1;
    // Streams are accepted (below): a program that checks for copies overlapping launches
    // before it uses them (huffman's histogram) takes its stream path.
    p->deviceOverlap = 1;
    p->asyncEngineCount = 1;
    return cudaSuccess;
}
typedef int cudaEvent_t;
typedef int cudaStream_t;
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = 0; return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = 0) { return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return cudaSuccess; }
// Launches and copies run in order on the CPU, one after another: a stream is a dummy
// handle, waiting on it returns at once, and an asynchronous copy or memset is the
// synchronous one (its data has arrived when the call returns, as it would have by the
// next launch on the GPU).
static inline cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = 1; return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { *s = 1; return cudaSuccess; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t = 0)
{
    return cudaMemcpy(dst, src, n, kind);
}
static inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t = 0)
{
    return cudaMemset(dst, value, n);
}
// The device cudaGetDeviceProperties describes (4 GiB), less the live cudaMalloc'd
// buffers of this unit: programs size their work by what is free (nn refuses an input
// larger than 85% of it).
static inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    size_t total = (size_t)1 << 32, used = 0;
    for (int i = 0; i < ww_cpu.nbuffers; i++)
        if (ww_cpu.buffers[i].live)
            used += ww_cpu.buffers[i].size;
    *total_bytes = total;
    *free_bytes = used < total ? total - used : 0;
    return cudaSuccess;
}
static inline cudaError_t cudaMallocHost(void **p, size_t n) { *p = malloc(n); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
static inline cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
enum cudaFuncCache { cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1 };
static inline cudaError_t cudaThreadSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
template <typename F> static inline cudaError_t cudaFuncSetCacheConfig(F, cudaFuncCache) { return cudaSuccess; }
// `__constant__` and `__device__` variables are host globals: copying to one is a copy.
template <typename T> static inline cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t n, size_t offset = 0, cudaMemcpyKind = cudaMemcpyHostToDevice)
{
    memcpy((char *)&symbol + offset, src, n);
    return cudaSuccess;
}
template <typename T> static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t n, size_t offset = 0, cudaMemcpyKind = cudaMemcpyDeviceToHost)
{
    memcpy(dst, (const char *)&symbol + offset, n);
    return cudaSuccess;
}
// CUDA's headers give min and max of an int and an unsigned, compared as unsigned
// (huffman's `max(1, numEltsLastBlock / 2)`); std's templates take one type only.
static inline unsigned max(int a, unsigned b) { return (unsigned)a > b ? (unsigned)a : b; }
static inline unsigned max(unsigned a, int b) { return a > (unsigned)b ? a : (unsigned)b; }
static inline unsigned min(int a, unsigned b) { return (unsigned)a < b ? (unsigned)a : b; }
static inline unsigned min(unsigned a, int b) { return a < (unsigned)b ? a : (unsigned)b; }
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
// glibc declares some of these names itself (`__expf`): macros, not functions.
#define __fdividef(a, b) ((a) / (b))
#define __expf(a) expf(a)
#define __logf(a) logf(a)
#define __log2f(a) log2f(a)
#define __log10f(a) log10f(a)
#define __exp10f(a) powf(10.0f, (a))
#define __powf(a, b) powf((a), (b))
#define __sinf(a) sinf(a)
#define __cosf(a) cosf(a)
#define rsqrtf(a) (1.0f / sqrtf(a))
static inline float __saturatef(float a) { return a < 0 ? 0 : a > 1 ? 1 : a; }

// CUDA's vector types and their constructors (`float3`, `make_float3`), aligned as
// vector_types.h aligns them, so a structure of them has CUDA's layout.
#define WW_VECTOR2(T, N, A) \
    struct __attribute__((aligned(A))) N##2 { T x, y; }; \
    static inline N##2 make_##N##2(T x, T y) { N##2 v = {x, y}; return v; }
#define WW_VECTOR3(T, N) \
    struct N##3 { T x, y, z; }; \
    static inline N##3 make_##N##3(T x, T y, T z) { N##3 v = {x, y, z}; return v; }
#define WW_VECTOR4(T, N, A) \
    struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 v = {x, y, z, w}; return v; }
WW_VECTOR2(float, float, 8) WW_VECTOR3(float, float) WW_VECTOR4(float, float, 16)
WW_VECTOR2(int, int, 8) WW_VECTOR3(int, int) WW_VECTOR4(int, int, 16)
WW_VECTOR2(unsigned, uint, 8) WW_VECTOR4(unsigned, uint, 16)
WW_VECTOR2(double, double, 16) WW_VECTOR3(double, double) WW_VECTOR4(double, double, 16)
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { uint3 v = {x, y, z}; return v; }
#undef WW_VECTOR2
#undef WW_VECTOR3
#undef WW_VECTOR4

#endif
