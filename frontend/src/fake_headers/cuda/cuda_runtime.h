/* cuda_runtime.h: warpwise's stand-in for CUDA's runtime header, for analysis only (lang-c
   parses C, not CUDA C++). Force-included before every .cu file, as nvcc does. The CUDA
   qualifiers become GNU attributes the lowering recognises; the built-in coordinates are
   declared so that `threadIdx.x` is a load the analyses know; overloaded functions are
   declared without a prototype, which C lets take any arguments. No code here runs. */
#ifndef WARPWISE_CUDA_RUNTIME_H
#define WARPWISE_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#define __global__ __attribute__((__warpwise_global__))
#define __device__ __attribute__((__warpwise_device__))
#define __host__ __attribute__((__warpwise_host__))
#define __shared__ __attribute__((__warpwise_shared__))
#define __constant__ __attribute__((__warpwise_constant__))
#define __managed__ __attribute__((__warpwise_device__))
#define __restrict__ __restrict
#define __forceinline__ __inline__
#define __noinline__
#define __inline_hint__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define CUDART_CB
#define CUDARTAPI
#define __CUDA_RUNTIME_H__
#define __CUDA_H__

typedef struct uint3 { unsigned int x, y, z; } uint3;
typedef struct dim3 { unsigned int x, y, z; } dim3;

__attribute__((__warpwise_builtin__)) extern const uint3 threadIdx;
__attribute__((__warpwise_builtin__)) extern const uint3 blockIdx;
__attribute__((__warpwise_builtin__)) extern const dim3 blockDim;
__attribute__((__warpwise_builtin__)) extern const dim3 gridDim;
__attribute__((__warpwise_builtin__)) extern const int warpSize;

/* `dim3(a, b)` in an expression; `dim3 g(a, b);` declarations are rewritten to call the same
   function (frontend::cuda_source). Missing sizes are 1. */
dim3 __warpwise_dim3(unsigned int x, unsigned int y, unsigned int z, ...);
#define dim3(...) __warpwise_dim3(__VA_ARGS__, 1, 1)
/* `k<<<grid, block, shared, stream>>>(args)` becomes
   `(__warpwise_launch(k, grid, block, shared, stream), k(args))`. */
void __warpwise_launch(const void *kernel, ...);

#define VECTOR2(T, N) typedef struct N##2 { T x, y; } N##2; N##2 make_##N##2(T x, T y);
#define VECTOR3(T, N) typedef struct N##3 { T x, y, z; } N##3; N##3 make_##N##3(T x, T y, T z);
#define VECTOR4(T, N) typedef struct N##4 { T x, y, z, w; } N##4; N##4 make_##N##4(T x, T y, T z, T w);
#define VECTORS(T, N) VECTOR2(T, N) VECTOR3(T, N) VECTOR4(T, N)
VECTORS(char, char)
VECTORS(unsigned char, uchar)
VECTORS(short, short)
VECTORS(unsigned short, ushort)
VECTORS(int, int)
VECTOR2(unsigned int, uint)
VECTOR4(unsigned int, uint)
VECTORS(long, long)
VECTORS(unsigned long, ulong)
VECTORS(long long, longlong)
VECTORS(float, float)
VECTORS(double, double)
uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z);
#undef VECTORS
#undef VECTOR4
#undef VECTOR3
#undef VECTOR2

/* Synchronisation and warp functions. */
void __syncthreads(void);
int __syncthreads_count(int predicate);
int __syncthreads_and(int predicate);
int __syncthreads_or(int predicate);
void __syncwarp();
void __threadfence(void);
void __threadfence_block(void);
void __threadfence_system(void);
int __all();
int __any();
unsigned int __ballot();
int __all_sync();
int __any_sync();
unsigned int __ballot_sync();
unsigned int __activemask(void);
int __shfl();
int __shfl_up();
int __shfl_down();
int __shfl_xor();
int __shfl_sync();
int __shfl_up_sync();
int __shfl_down_sync();
int __shfl_xor_sync();
long long clock64(void);

/* Atomics (overloaded in CUDA: int, unsigned, float, double ...). */
int atomicAdd();
int atomicSub();
int atomicExch();
int atomicMin();
int atomicMax();
unsigned int atomicInc();
unsigned int atomicDec();
int atomicCAS();
int atomicAnd();
int atomicOr();
int atomicXor();

/* Integer and float intrinsics. */
int min();
int max();
int __mul24(int x, int y);
unsigned int __umul24(unsigned int x, unsigned int y);
int __mulhi(int x, int y);
unsigned int __umulhi(unsigned int x, unsigned int y);
int __popc(unsigned int x);
int __popcll(unsigned long long x);
int __clz(int x);
int __ffs(int x);
unsigned int __brev(unsigned int x);
float __fdividef(float x, float y);
float __expf(float x);
float __exp10f(float x);
float __logf(float x);
float __log2f(float x);
float __log10f(float x);
float __powf(float x, float y);
float __sinf(float x);
float __cosf(float x);
float __tanf(float x);
float __saturatef(float x);
float __fsqrt_rn(float x);
float __frcp_rn(float x);
float __fmul_rn(float x, float y);
float __fadd_rn(float x, float y);
float __fmaf_rn(float x, float y, float z);
double __dmul_rn(double x, double y);
double __dadd_rn(double x, double y);
float rsqrtf(float x);
double rsqrt(double x);
float __int_as_float(int x);
int __float_as_int(float x);
float __uint_as_float(unsigned int x);
unsigned int __float_as_uint(float x);
double __longlong_as_double(long long x);
long long __double_as_longlong(double x);
int __float2int_rn(float x);
int __float2int_rz(float x);
unsigned int __float2uint_rn(float x);
float __int2float_rn(int x);
float __uint2float_rn(unsigned int x);
int __double2int_rn(double x);
float __double2float_rn(double x);
int __ldg();
float tex1Dfetch();
float tex1D();
float tex2D();
float tex3D();

/* The runtime API (host side). */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorLaunchFailure = 4,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 10,
    cudaErrorNoDevice = 100,
    cudaErrorUnknown = 999
} cudaError_t;
typedef cudaError_t CUresult;
#define CUDA_SUCCESS cudaSuccess
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaFuncCache {
    cudaFuncCachePreferNone = 0,
    cudaFuncCachePreferShared = 1,
    cudaFuncCachePreferL1 = 2,
    cudaFuncCachePreferEqual = 3
};
enum cudaSharedMemConfig {
    cudaSharedMemBankSizeDefault = 0,
    cudaSharedMemBankSizeFourByte = 1,
    cudaSharedMemBankSizeEightByte = 2
};
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
enum cudaChannelFormatKind {
    cudaChannelFormatKindSigned = 0,
    cudaChannelFormatKindUnsigned = 1,
    cudaChannelFormatKindFloat = 2,
    cudaChannelFormatKindNone = 3
};
struct cudaChannelFormatDesc { int x, y, z, w; enum cudaChannelFormatKind f; };
/* C++ names a tag without its keyword (`cudaError err = call;` in cutil.h's macros). */
typedef enum cudaError cudaError;
typedef enum cudaMemcpyKind cudaMemcpyKind;
typedef enum cudaFuncCache cudaFuncCache;
typedef enum cudaSharedMemConfig cudaSharedMemConfig;
typedef enum cudaTextureReadMode cudaTextureReadMode;
typedef enum cudaChannelFormatKind cudaChannelFormatKind;
typedef struct cudaChannelFormatDesc cudaChannelFormatDesc;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct cudaArray *cudaArray_t;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
} cudaDeviceProp;
#define cudaHostAllocDefault 0
#define cudaHostAllocPortable 1
#define cudaHostAllocMapped 2
#define cudaStreamNonBlocking 1
#define cudaEventDefault 0
#define cudaEventBlockingSync 1
#define cudaDeviceScheduleBlockingSync 4

/* Typed by value where C can say it; without a prototype where CUDA takes a reference or
   any pointer type. */
cudaError_t cudaMalloc();
cudaError_t cudaMallocHost();
cudaError_t cudaHostAlloc();
cudaError_t cudaMallocManaged();
cudaError_t cudaMallocPitch();
cudaError_t cudaMallocArray();
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaFreeArray();
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync();
cudaError_t cudaMemcpy2D();
cudaError_t cudaMemcpy3D();
cudaError_t cudaMemcpyToArray();
cudaError_t cudaMemcpyToSymbol();
cudaError_t cudaMemcpyFromSymbol();
cudaError_t cudaMemcpyToSymbolAsync();
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync();
cudaError_t cudaMemGetInfo();
cudaError_t cudaGetSymbolAddress();
cudaError_t cudaBindTexture();
cudaError_t cudaBindTexture2D();
cudaError_t cudaBindTextureToArray();
cudaError_t cudaUnbindTexture();
struct cudaChannelFormatDesc cudaCreateChannelDesc();
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadExit(void);
cudaError_t cudaDeviceSetCacheConfig();
cudaError_t cudaDeviceSetSharedMemConfig();
cudaError_t cudaFuncSetCacheConfig();
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute();
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags();
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate();
cudaError_t cudaEventCreateWithFlags();
cudaError_t cudaEventRecord();
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaHostGetDevicePointer();
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
CUresult cuInit(unsigned int flags);
CUresult cuDeviceGet();
CUresult cuCtxCreate();
CUresult cuCtxDetach();
CUresult cuCtxDestroy();

#endif
