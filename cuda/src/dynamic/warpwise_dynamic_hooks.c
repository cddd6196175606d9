/* warpwise_dynamic_hooks.c: ThreadSanitizer's hooks for a program that `warpwise check
 * --dynamic` runs. Part of warpwise; see docs/check.md.
 *
 * The program's CUDA files are compiled with -fsanitize=thread but linked without its
 * runtime: every load and store calls a hook here instead. A hook keeps the accesses a
 * kernel thread makes to global memory (a cudaMalloc'd buffer; warpwise_dynamic.h answers
 * for each unit) and writes one 40-byte record per access to the log: the PC of the access
 * (the hook's return address), the address, the launch, block, thread, size and whether it
 * writes. The log is the program's original stdout (a pipe warpwise reads as the program
 * runs); the program's own stdout goes to the file WW_DYNAMIC_STDOUT names. The first
 * record holds the load base of the executable (PCs minus it are what the symbolizer
 * reads); after WW_DYNAMIC_MAX_EVENTS accesses a last record says the log stops there.
 * Before each launch, records give its grid, block and integer arguments. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*ww_where_fn)(uint64_t *, uint64_t *, uint32_t *);
typedef int (*ww_owns_fn)(const void *, unsigned);

struct ww_record {
    uint64_t pc, addr, launch, block;
    uint32_t thread;
    uint16_t size;
    uint8_t write;
    uint8_t kind; /* 0 an access, 1 the header, 2 the log stops, 3 a launch, 4 its argument */
};

#define WW_UNITS 64
static ww_where_fn ww_wheres[WW_UNITS];
static ww_owns_fn ww_owners[WW_UNITS];
static int ww_units;
static FILE *ww_log;
static unsigned long long ww_events, ww_max_events = 50000000ULL;
static int ww_busy, ww_stopped;

int ww_dyn_register(ww_where_fn where, ww_owns_fn owns)
{
    if (ww_units < WW_UNITS) {
        ww_wheres[ww_units] = where;
        ww_owners[ww_units] = owns;
        return ww_units++;
    }
    return -1;
}

static int ww_base(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_addr;
    return 1; /* the first object is the executable */
}

static void ww_flush(void)
{
    if (ww_log)
        fflush(ww_log);
}

__attribute__((constructor(101))) static void ww_start(void)
{
    const char *out = getenv("WW_DYNAMIC_STDOUT");
    const char *max = getenv("WW_DYNAMIC_MAX_EVENTS");
    if (!out)
        return; /* not run by warpwise: record nothing */
    int fd = dup(1);
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || o < 0)
        return;
    dup2(o, 1);
    close(o);
    ww_log = fdopen(fd, "wb");
    if (!ww_log)
        return;
    setvbuf(ww_log, 0, _IOFBF, 1 << 20);
    if (max && *max)
        ww_max_events = strtoull(max, 0, 10);
    struct ww_record h;
    memset(&h, 0, sizeof h);
    h.kind = 1;
    h.pc = 0x31594e4457575757ULL; /* "WWWWDYN1" */
    dl_iterate_phdr(ww_base, &h.addr);
    fwrite(&h, sizeof h, 1, ww_log);
    atexit(ww_flush);
}

static void ww_note(void *pc, const void *addr, unsigned long size, int write)
{
    if (!ww_log || ww_busy || ww_stopped)
        return;
    ww_busy = 1;
    struct ww_record r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < ww_units; i++) {
        uint32_t thread;
        if (!ww_wheres[i](&r.launch, &r.block, &thread))
            continue;
        r.thread = thread;
        r.launch |= (uint64_t)i << 48;
        for (int j = 0; j < ww_units; j++) {
            if (!ww_owners[j](addr, (unsigned)size))
                continue;
            if (ww_events >= ww_max_events) {
                r.kind = 2;
                ww_stopped = 1;
            } else {
                ww_events++;
                r.pc = (uint64_t)(uintptr_t)pc;
                r.addr = (uint64_t)(uintptr_t)addr;
                r.size = size > 0xffff ? 0xffff : (uint16_t)size;
                r.write = (uint8_t)write;
            }
            fwrite(&r, sizeof r, 1, ww_log);
            break;
        }
        break;
    }
    ww_busy = 0;
}

/* A launch that unit `unit` is about to run as its launch number `launch`: its grid and
 * block (x, y, z packed 21 bits each), then each argument, its value where it is an integer
 * (`write` 1) and not otherwise. What the static counts written in the kernel's sizes and
 * parameters are evaluated with, launch by launch. */
void ww_dyn_launch(int unit, uint64_t launch, const unsigned *grid, const unsigned *block, int n,
                   const long long *values, const unsigned char *integral)
{
    if (!ww_log || ww_stopped || unit < 0)
        return;
    struct ww_record r;
    memset(&r, 0, sizeof r);
    r.kind = 3;
    r.launch = launch | (uint64_t)unit << 48;
    r.pc = grid[0] | (uint64_t)grid[1] << 21 | (uint64_t)grid[2] << 42;
    r.addr = block[0] | (uint64_t)block[1] << 21 | (uint64_t)block[2] << 42;
    r.block = (uint64_t)n;
    fwrite(&r, sizeof r, 1, ww_log);
    for (int i = 0; i < n; i++) {
        r.kind = 4;
        r.pc = (uint64_t)i;
        r.addr = (uint64_t)values[i];
        r.write = integral[i];
        fwrite(&r, sizeof r, 1, ww_log);
    }
}

#define WW_HOOKS(n)                                                                          \
    void __tsan_read##n(void *a) { ww_note(__builtin_return_address(0), a, n, 0); }          \
    void __tsan_unaligned_read##n(void *a) { ww_note(__builtin_return_address(0), a, n, 0); } \
    void __tsan_write##n(void *a) { ww_note(__builtin_return_address(0), a, n, 1); }         \
    void __tsan_unaligned_write##n(void *a) { ww_note(__builtin_return_address(0), a, n, 1); }
WW_HOOKS(1)
WW_HOOKS(2)
WW_HOOKS(4)
WW_HOOKS(8)
WW_HOOKS(16)
void __tsan_read_range(void *a, unsigned long n) { ww_note(__builtin_return_address(0), a, n, 0); }
void __tsan_write_range(void *a, unsigned long n) { ww_note(__builtin_return_address(0), a, n, 1); }
void __tsan_init(void) {}
void __tsan_func_entry(void *p) { (void)p; }
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void *a, void *b) { (void)a; (void)b; }
void __tsan_vptr_read(void *a) { (void)a; }
void *__tsan_memcpy(void *d, const void *s, size_t n) { return memcpy(d, s, n); }
void *__tsan_memmove(void *d, const void *s, size_t n) { return memmove(d, s, n); }
void *__tsan_memset(void *d, int c, size_t n) { return memset(d, c, n); }
