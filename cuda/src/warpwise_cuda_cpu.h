// warpwise_cuda_cpu.h: runs a warpwise-generated .cu on the CPU, compiled as C++
// (`c++ -x c++ -I DIR -c kernel.cu`). Part of warpwise; see docs/cuda-generation.md.
//
// - Device memory is host memory between poisoned guard zones (0xA5 bytes) and inaccessible
//   pages; cudaMalloc'd bytes start as poison, and cudaFree reports writes into the guards.
// - A launch runs the blocks in reverse order and the threads of each block in reverse order
//   (highest linear index first): every iteration runs before all those that precede it in
//   the loop, so a result that depends on the sequential order (a value carried from one
//   iteration to the next, in either direction) comes out different. Threads past the loop's
//   bound cannot hide this, as they would for an order interleaved from both ends.
// - A block whose threads call __syncthreads runs them as fibers (ucontext): each runs to the
//   barrier, then all continue, in the same reverse order.
// - WW_CPU_REPORT=FILE makes the shim write what it saw (launches, guard and staging misses,
//   errors) to FILE for `warpwise validate`.
// - Atomics (atomicAdd, atomicMin/Max/And/Or/Xor, atomicCAS, atomicExch) for the types CUDA
//   has them, and __threadfence (a no-op):
//   threads of a block switch only at __syncthreads, so plain read-modify-writes are atomic.
// - __shfl_down_sync through per-thread slots and two block barriers (see there).
#ifndef WARPWISE_CUDA_CPU_H
#define WARPWISE_CUDA_CPU_H

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

static uint3 threadIdx = {0, 0, 0};
static uint3 blockIdx = {0, 0, 0};
static dim3 blockDim;
static dim3 gridDim;

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorLaunchFailure = 719
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

#ifndef WW_CPU_SHARED_MAX
#define WW_CPU_SHARED_MAX (48 * 1024) // bytes of shared memory per block, as CUDA's default
#endif
#define WW_CPU_GUARD (64 * 1024)      // poisoned bytes before and after each buffer
#define WW_CPU_POISON 0xA5
#define WW_CPU_STACK (256 * 1024)     // stack of each fiber

// The dynamic shared memory of the running block: kernels declare it as warpwise's
// generated code does, `extern __shared__ __align__(16) unsigned char ww_smem[];`.
__attribute__((weak, aligned(16))) unsigned char ww_smem[WW_CPU_SHARED_MAX];

struct ww_cpu_buffer {
    unsigned char *map;  // the whole mapping, inaccessible first and last pages included
    size_t map_len;
    unsigned char *data; // what cudaMalloc returned
    size_t size;
    int id;
    int live;
};

struct ww_cpu_state {
    ww_cpu_buffer *buffers;
    int nbuffers, cap;
    cudaError_t last_error;
    FILE *report;
    int report_checked;
    // Staging misses: reads of a staged array that fell outside the staged area.
    long long misses;
    char miss_first[256];
    // Fibers of the running block.
    ucontext_t scheduler;
    ucontext_t *fibers;
    unsigned char *stacks;
    int *fiber_state; // 0 running or ready, 1 waiting at the barrier, 2 finished
    uint3 *fiber_tid;
    int nfibers, current;
    int mode; // 0: first thread probing, 1: direct (no barrier), 2: fibers
    void (*body)(void *);
    void *body_arg;
    unsigned long long launches; // launches run so far: tells one launch's blocks from the next's
};

static ww_cpu_state ww_cpu;

static void ww_cpu_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Writes one line to the report file (when WW_CPU_REPORT is set).
static void ww_cpu_line(const char *fmt, ...)
{
    if (!ww_cpu.report_checked) {
        ww_cpu.report_checked = 1;
        const char *path = getenv("WW_CPU_REPORT");
        if (path && *path)
            ww_cpu.report = fopen(path, "a");
    }
    if (!ww_cpu.report)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(ww_cpu.report, fmt, ap);
    va_end(ap);
    fputc('\n', ww_cpu.report);
    fflush(ww_cpu.report);
}

// A fatal problem of the kernel or its launch: reported, then the process exits with 3.
static void ww_cpu_fail(const char *what)
{
    fprintf(stderr, "warpwise-cpu: error: %s\n", what);
    ww_cpu_line("error %s", what);
    _exit(3);
}

static ww_cpu_buffer *ww_cpu_find(const void *p, size_t n)
{
    const unsigned char *q = (const unsigned char *)p;
    for (int i = 0; i < ww_cpu.nbuffers; i++) {
        ww_cpu_buffer *b = &ww_cpu.buffers[i];
        if (b->live && q >= b->data && q + n <= b->data + b->size)
            return b;
    }
    return 0;
}

// Reports bytes of the guard zones that are no longer poison: writes outside the buffer.
static void ww_cpu_check_guards(const ww_cpu_buffer *b)
{
    const long page = sysconf(_SC_PAGESIZE);
    const unsigned char *lo = b->map + page, *hi = b->map + b->map_len - page;
    long long first = 0, last = 0;
    int bad = 0;
    for (const unsigned char *q = lo; q < hi; q++) {
        if (q >= b->data && q < b->data + b->size)
            continue;
        if (*q != WW_CPU_POISON) {
            long long off = (long long)(q - b->data);
            if (!bad)
                first = off;
            last = off + 1;
            bad = 1;
        }
    }
    if (bad) {
        fprintf(stderr,
                "warpwise-cpu: device buffer #%d (%zu bytes) was written outside its bounds, bytes [%lld, %lld) relative to its start\n",
                b->id, b->size, first, last);
        ww_cpu_line("guard %d %zu %lld %lld", b->id, b->size, first, last);
    }
}

static void ww_cpu_segv(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    const unsigned char *a = (const unsigned char *)info->si_addr;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "the kernel crashed (signal %d) accessing address %p", sig, info->si_addr);
    for (int i = 0; i < ww_cpu.nbuffers; i++) {
        const ww_cpu_buffer *b = &ww_cpu.buffers[i];
        if (a >= b->map && a < b->map + b->map_len) {
            snprintf(msg + n, sizeof msg - (size_t)n, ", byte %lld relative to device buffer #%d (%zu bytes)",
                     (long long)(a - b->data), b->id, b->size);
            break;
        }
    }
    ww_cpu_fail(msg);
}

static void ww_cpu_at_exit(void)
{
    for (int i = 0; i < ww_cpu.nbuffers; i++)
        if (ww_cpu.buffers[i].live)
            ww_cpu_check_guards(&ww_cpu.buffers[i]);
    if (ww_cpu.misses > 0) {
        fprintf(stderr, "warpwise-cpu: %lld reads of staged arrays fell outside the staged area (first: %s)\n",
                ww_cpu.misses, ww_cpu.miss_first);
        ww_cpu_line("miss %lld %s", ww_cpu.misses, ww_cpu.miss_first);
    }
    if (ww_cpu.report)
        fclose(ww_cpu.report);
    ww_cpu.report = 0;
}

static void ww_cpu_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    atexit(ww_cpu_at_exit);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ww_cpu_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGBUS, &sa, 0);
    // The handler needs a stack of its own when a fiber's stack overflowed.
    static unsigned char alt[64 * 1024];
    stack_t ss;
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    ss.ss_flags = 0;
    sigaltstack(&ss, 0);
}

static cudaError_t ww_cpu_error(cudaError_t e)
{
    if (e != cudaSuccess)
        ww_cpu.last_error = e;
    return e;
}

static inline cudaError_t cudaMalloc(void **p, size_t size)
{
    *p = 0;
    ww_cpu_init();
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t body = (size + page - 1) / page * page;
    const size_t len = page + WW_CPU_GUARD + body + WW_CPU_GUARD + page;
    void *m = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return ww_cpu_error(cudaErrorMemoryAllocation);
    unsigned char *map = (unsigned char *)m;
    mprotect(map, page, PROT_NONE);
    mprotect(map + len - page, page, PROT_NONE);
    memset(map + page, WW_CPU_POISON, len - 2 * page);
    if (ww_cpu.nbuffers == ww_cpu.cap) {
        ww_cpu.cap = ww_cpu.cap ? 2 * ww_cpu.cap : 16;
        ww_cpu.buffers = (ww_cpu_buffer *)realloc(ww_cpu.buffers, (size_t)ww_cpu.cap * sizeof(ww_cpu_buffer));
        if (!ww_cpu.buffers)
            ww_cpu_fail("out of memory");
    }
    ww_cpu_buffer *b = &ww_cpu.buffers[ww_cpu.nbuffers];
    b->map = map;
    b->map_len = len;
    // The buffer ends where the trailing guard begins, so a read one past it is poison.
    b->data = map + page + WW_CPU_GUARD + (body - size) / 256 * 256;
    b->size = size;
    b->id = ww_cpu.nbuffers;
    b->live = 1;
    ww_cpu.nbuffers++;
    *p = b->data;
    return cudaSuccess;
}

static inline cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    for (int i = 0; i < ww_cpu.nbuffers; i++) {
        ww_cpu_buffer *b = &ww_cpu.buffers[i];
        if (b->live && b->data == p) {
            ww_cpu_check_guards(b);
            munmap(b->map, b->map_len);
            b->live = 0;
            return cudaSuccess;
        }
    }
    return ww_cpu_error(cudaErrorInvalidDevicePointer);
}

static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    if (n == 0)
        return cudaSuccess;
    const int to_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const int from_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if ((to_device && !ww_cpu_find(dst, n)) || (from_device && !ww_cpu_find(src, n))) {
        fprintf(stderr, "warpwise-cpu: cudaMemcpy of %zu bytes outside any device buffer\n", n);
        ww_cpu_line("error cudaMemcpy of %zu bytes outside any device buffer", n);
        return ww_cpu_error(cudaErrorInvalidValue);
    }
    memmove(dst, src, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemset(void *dst, int value, size_t n)
{
    if (n > 0 && !ww_cpu_find(dst, n))
        return ww_cpu_error(cudaErrorInvalidValue);
    memset(dst, value, n);
    return cudaSuccess;
}

static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

static inline cudaError_t cudaGetLastError(void)
{
    cudaError_t e = ww_cpu.last_error;
    ww_cpu.last_error = cudaSuccess;
    return e;
}

static inline cudaError_t cudaPeekAtLastError(void) { return ww_cpu.last_error; }

static inline const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    default: return "unspecified launch failure";
    }
}

// A read of a staged array outside its staged area (see ww_fetch in the generated code).
static inline void ww_cpu_stage_miss(const char *name, long long offset)
{
    if (ww_cpu.misses++ == 0)
        snprintf(ww_cpu.miss_first, sizeof ww_cpu.miss_first,
                 "`%s` byte %lld, block (%u, %u), thread (%u, %u)", name, offset, blockIdx.x,
                 blockIdx.y, threadIdx.x, threadIdx.y);
}
#define WW_STAGE_MISS(area, offset) ww_cpu_stage_miss((area).name, (offset))

// The k-th item of the order over n items: n-1, n-2, ..., 0.
static inline unsigned ww_cpu_order(unsigned k, unsigned n)
{
    return n - 1 - k;
}

static inline uint3 ww_cpu_index(unsigned linear, dim3 d)
{
    uint3 r;
    r.x = linear % d.x;
    r.y = linear / d.x % d.y;
    r.z = linear / (d.x * d.y);
    return r;
}

static void ww_cpu_fiber_main(void)
{
    ww_cpu.body(ww_cpu.body_arg);
    ww_cpu.fiber_state[ww_cpu.current] = 2;
    // uc_link returns to the scheduler.
}

static void ww_cpu_resume(int f)
{
    ww_cpu.current = f;
    threadIdx = ww_cpu.fiber_tid[f];
    ww_cpu.fiber_state[f] = 0;
    swapcontext(&ww_cpu.scheduler, &ww_cpu.fibers[f]);
}

static void ww_cpu_start_fiber(int f, uint3 tid)
{
    ucontext_t *c = &ww_cpu.fibers[f];
    getcontext(c);
    c->uc_stack.ss_sp = ww_cpu.stacks + (size_t)f * WW_CPU_STACK;
    c->uc_stack.ss_size = WW_CPU_STACK;
    c->uc_link = &ww_cpu.scheduler;
    makecontext(c, ww_cpu_fiber_main, 0);
    ww_cpu.fiber_tid[f] = tid;
    ww_cpu_resume(f);
}

static inline void __syncthreads(void)
{
    char msg[200];
    switch (ww_cpu.mode) {
    case 1:
        snprintf(msg, sizeof msg,
                 "__syncthreads reached by thread (%u, %u, %u) of block (%u, %u, %u) after other threads of the block finished without it",
                 threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z);
        ww_cpu_fail(msg);
        break;
    case 0:
        ww_cpu.mode = 2;
        // fall through
    default:
        ww_cpu.fiber_state[ww_cpu.current] = 1;
        swapcontext(&ww_cpu.fibers[ww_cpu.current], &ww_cpu.scheduler);
        break;
    }
}

// Warp shuffles: each thread of the block leaves its value in its slot, all meet at a
// barrier, each reads the slot `delta` lanes up in its warp (its own value past the warp's
// width or the block's end), and all meet again before the slots are reused. Right for the
// reductions warpwise generates, where every thread of the block runs the same shuffles;
// the mask is not checked.
static unsigned char ww_cpu_shfl_slots[1024][16];

template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    static_assert(sizeof(T) <= sizeof ww_cpu_shfl_slots[0], "a shuffled value fits a slot");
    (void)mask;
    const unsigned n = blockDim.x * blockDim.y * blockDim.z;
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (n > 1024) {
        ww_cpu_fail("__shfl_down_sync in a block of more than 1024 threads");
        return v;
    }
    memcpy(ww_cpu_shfl_slots[t], &v, sizeof v);
    __syncthreads();
    T out = v;
    if (t % (unsigned)width + delta < (unsigned)width && t + delta < n)
        memcpy(&out, ww_cpu_shfl_slots[t + delta], sizeof out);
    __syncthreads();
    return out;
}

// Runs one block: its first thread probes whether the kernel synchronizes.
static void ww_cpu_block(unsigned nthreads)
{
    ww_cpu.mode = 0;
    ww_cpu.nfibers = (int)nthreads;
    for (unsigned k = 0; k < nthreads; k++)
        ww_cpu.fiber_state[k] = 0;
    unsigned first = ww_cpu_order(0, nthreads);
    ww_cpu_start_fiber(0, ww_cpu_index(first, blockDim));
    if (ww_cpu.fiber_state[0] == 2) {
        // No barrier: the other threads run one after another on this stack.
        ww_cpu.mode = 1;
        for (unsigned k = 1; k < nthreads; k++) {
            threadIdx = ww_cpu_index(ww_cpu_order(k, nthreads), blockDim);
            ww_cpu.body(ww_cpu.body_arg);
        }
        return;
    }
    for (unsigned k = 1; k < nthreads; k++)
        ww_cpu_start_fiber((int)k, ww_cpu_index(ww_cpu_order(k, nthreads), blockDim));
    for (;;) {
        unsigned waiting = 0, finished = 0;
        for (unsigned k = 0; k < nthreads; k++) {
            waiting += ww_cpu.fiber_state[k] == 1;
            finished += ww_cpu.fiber_state[k] == 2;
        }
        if (finished == nthreads)
            return;
        if (finished > 0) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "in block (%u, %u, %u), %u threads wait at __syncthreads while %u finished without it",
                     blockIdx.x, blockIdx.y, blockIdx.z, waiting, finished);
            ww_cpu_fail(msg);
        }
        for (unsigned k = 0; k < nthreads; k++)
            ww_cpu_resume((int)k);
    }
}

static void ww_cpu_run(dim3 grid, dim3 block, size_t shared, void (*body)(void *), void *arg)
{
    ww_cpu_init();
    const unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    const unsigned long long nblocks = (unsigned long long)grid.x * grid.y * grid.z;
    ww_cpu_line("launch %u %u %u %u %u %u %zu", grid.x, grid.y, grid.z, block.x, block.y, block.z, shared);
    if (nthreads == 0 || nthreads > 1024 || nblocks == 0 || block.z > 64) {
        fprintf(stderr, "warpwise-cpu: invalid launch configuration (grid %u x %u x %u, block %u x %u x %u)\n",
                grid.x, grid.y, grid.z, block.x, block.y, block.z);
        ww_cpu_line("error invalid launch configuration");
        ww_cpu_error(cudaErrorInvalidConfiguration);
        return;
    }
    if (shared > WW_CPU_SHARED_MAX) {
        fprintf(stderr, "warpwise-cpu: the launch asks for %zu bytes of shared memory per block; at most %d\n",
                shared, WW_CPU_SHARED_MAX);
        ww_cpu_line("error the launch asks for %zu bytes of shared memory per block; at most %d", shared,
                    WW_CPU_SHARED_MAX);
        ww_cpu_error(cudaErrorInvalidConfiguration);
        return;
    }
    gridDim = grid;
    blockDim = block;
    ww_cpu.launches++;
    ww_cpu.body = body;
    ww_cpu.body_arg = arg;
    ww_cpu.fibers = (ucontext_t *)calloc(nthreads, sizeof(ucontext_t));
    ww_cpu.fiber_state = (int *)calloc(nthreads, sizeof(int));
    ww_cpu.fiber_tid = (uint3 *)calloc(nthreads, sizeof(uint3));
    void *stacks = mmap(0, (size_t)nthreads * WW_CPU_STACK, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!ww_cpu.fibers || !ww_cpu.fiber_state || !ww_cpu.fiber_tid || stacks == MAP_FAILED)
        ww_cpu_fail("out of memory for the block's threads");
    ww_cpu.stacks = (unsigned char *)stacks;
    for (unsigned long long k = 0; k < nblocks; k++) {
        blockIdx = ww_cpu_index((unsigned)(nblocks - 1 - k), grid);
        memset(ww_smem, WW_CPU_POISON, shared);
        ww_cpu_block((unsigned)nthreads);
    }
    munmap(stacks, (size_t)nthreads * WW_CPU_STACK);
    free(ww_cpu.fibers);
    free(ww_cpu.fiber_state);
    free(ww_cpu.fiber_tid);
    ww_cpu.fibers = 0;
}

// Atomics: a block's threads run one at a time (fibers switch only at __syncthreads), so a
// read-modify-write is atomic as it is. Each returns the old value, as CUDA's do.
#define WW_CPU_ATOMIC(name, T, expr) \
    static inline T name(T *p, T v) \
    { \
        T old = *p; \
        *p = (expr); \
        return old; \
    }
WW_CPU_ATOMIC(atomicAdd, int, old + v)
WW_CPU_ATOMIC(atomicAdd, unsigned int, old + v)
WW_CPU_ATOMIC(atomicAdd, unsigned long long, old + v)
WW_CPU_ATOMIC(atomicAdd, float, old + v)
WW_CPU_ATOMIC(atomicAdd, double, old + v)
WW_CPU_ATOMIC(atomicSub, int, old - v)
WW_CPU_ATOMIC(atomicSub, unsigned int, old - v)
WW_CPU_ATOMIC(atomicExch, int, v)
WW_CPU_ATOMIC(atomicExch, unsigned int, v)
WW_CPU_ATOMIC(atomicExch, unsigned long long, v)
WW_CPU_ATOMIC(atomicExch, float, v)
WW_CPU_ATOMIC(atomicMin, int, v < old ? v : old)
WW_CPU_ATOMIC(atomicMin, unsigned int, v < old ? v : old)
WW_CPU_ATOMIC(atomicMin, long long, v < old ? v : old)
WW_CPU_ATOMIC(atomicMin, unsigned long long, v < old ? v : old)
WW_CPU_ATOMIC(atomicMax, int, v > old ? v : old)
WW_CPU_ATOMIC(atomicMax, unsigned int, v > old ? v : old)
WW_CPU_ATOMIC(atomicMax, long long, v > old ? v : old)
WW_CPU_ATOMIC(atomicMax, unsigned long long, v > old ? v : old)
WW_CPU_ATOMIC(atomicAnd, int, old & v)
WW_CPU_ATOMIC(atomicAnd, unsigned int, old & v)
WW_CPU_ATOMIC(atomicAnd, unsigned long long, old & v)
WW_CPU_ATOMIC(atomicOr, int, old | v)
WW_CPU_ATOMIC(atomicOr, unsigned int, old | v)
WW_CPU_ATOMIC(atomicOr, unsigned long long, old | v)
WW_CPU_ATOMIC(atomicXor, int, old ^ v)
WW_CPU_ATOMIC(atomicXor, unsigned int, old ^ v)
WW_CPU_ATOMIC(atomicXor, unsigned long long, old ^ v)
#undef WW_CPU_ATOMIC

#define WW_CPU_CAS(T) \
    static inline T atomicCAS(T *p, T compare, T v) \
    { \
        T old = *p; \
        if (old == compare) \
            *p = v; \
        return old; \
    }
WW_CPU_CAS(int)
WW_CPU_CAS(unsigned int)
WW_CPU_CAS(unsigned long long)
#undef WW_CPU_CAS

// A block's writes are visible to the next block as they are: blocks run one after another.
static inline void __threadfence(void) {}

// Reinterpretations of a value's bits (CUDA's intrinsics).
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, sizeof i); return i; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, sizeof d); return d; }
static inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, sizeof i); return i; }

template <typename F> static void ww_cpu_thunk(void *f) { (*(F *)f)(); }

// kernel<<<grid, block, shared>>>(args...) on the CPU.
template <typename... P, typename... A>
static void ww_cpu_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args)
{
    auto call = [&]() { kernel(args...); };
    ww_cpu_run(grid, block, shared, &ww_cpu_thunk<decltype(call)>, &call);
}

#endif
