// warpwise_replay.h: the replay harness of `warpwise validate` (CPU backend). It loads a
// snapshot, gives every array host memory that holds only its recorded section (the rest
// is poison, 0xA5), and after the generated host function ran writes the outbound sections
// and any write outside a section to a result file in the snapshot's record format. A
// pointer that was null in the program (an i record) is null here too.
#ifndef WARPWISE_REPLAY_H
#define WARPWISE_REPLAY_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WW_REPLAY_GUARD 4096
#define WW_REPLAY_POISON 0xA5

struct ww_replay_record {
    unsigned char tag;
    char *name;
    long long lo, hi;
    unsigned long long n;
    unsigned char *bytes;
};

struct ww_replay_area {
    const ww_replay_record *rec;
    unsigned char *mem; // WW_REPLAY_GUARD bytes, the section, WW_REPLAY_GUARD bytes; 0: null
    int out;
};

static ww_replay_record *ww_replay_records;
static int ww_replay_nrecords;
static ww_replay_area *ww_replay_regions;
static int ww_replay_nregions;

static void ww_replay_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void ww_replay_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("warpwise replay: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void ww_replay_read(FILE *f, void *dst, size_t n, const char *path)
{
    if (n > 0 && fread(dst, 1, n, f) != n)
        ww_replay_fail("`%s` is truncated", path);
}

static void ww_replay_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        ww_replay_fail("cannot read `%s`", path);
    char magic[8];
    ww_replay_read(f, magic, 8, path);
    if (memcmp(magic, "WWSNAP1\n", 8) != 0)
        ww_replay_fail("`%s` is not a snapshot", path);
    int cap = 0;
    for (;;) {
        ww_replay_record r;
        uint32_t len;
        int64_t lo, hi;
        uint64_t n;
        ww_replay_read(f, &r.tag, 1, path);
        ww_replay_read(f, &len, 4, path);
        r.name = (char *)calloc(len + 1, 1);
        if (!r.name)
            ww_replay_fail("out of memory");
        ww_replay_read(f, r.name, len, path);
        ww_replay_read(f, &lo, 8, path);
        ww_replay_read(f, &hi, 8, path);
        ww_replay_read(f, &n, 8, path);
        r.lo = lo;
        r.hi = hi;
        r.n = n;
        r.bytes = (unsigned char *)malloc(n > 0 ? n : 1);
        if (!r.bytes)
            ww_replay_fail("out of memory for %llu bytes", (unsigned long long)n);
        ww_replay_read(f, r.bytes, n, path);
        if (r.tag == 'E')
            break;
        if (ww_replay_nrecords == cap) {
            cap = cap ? 2 * cap : 16;
            ww_replay_records = (ww_replay_record *)realloc(ww_replay_records, (size_t)cap * sizeof *ww_replay_records);
            if (!ww_replay_records)
                ww_replay_fail("out of memory");
        }
        ww_replay_records[ww_replay_nrecords++] = r;
    }
    fclose(f);
}

static const ww_replay_record *ww_replay_find(unsigned char tag, const char *name)
{
    for (int i = 0; i < ww_replay_nrecords; i++)
        if (ww_replay_records[i].tag == tag && strcmp(ww_replay_records[i].name, name) == 0)
            return &ww_replay_records[i];
    return 0;
}

static void ww_replay_scalar(const char *name, void *dst, size_t size)
{
    const ww_replay_record *r = ww_replay_find('S', name);
    if (!r || r->n != size)
        ww_replay_fail("the snapshot has no %zu-byte value of `%s`", size, name);
    memcpy(dst, r->bytes, size);
}

// Keeps an array's host memory (0 for a null pointer) for the result file.
static void ww_replay_add(const ww_replay_record *r, unsigned char *mem, int out)
{
    ww_replay_regions = (ww_replay_area *)realloc(ww_replay_regions, (size_t)(ww_replay_nregions + 1) * sizeof *ww_replay_regions);
    if (!ww_replay_regions)
        ww_replay_fail("out of memory");
    ww_replay_area g;
    g.rec = r;
    g.mem = mem;
    g.out = out;
    ww_replay_regions[ww_replay_nregions++] = g;
}

// The pointer through which the program reached the array: its section lies at [lo, hi).
static void *ww_replay_region(const char *name)
{
    const ww_replay_record *r = ww_replay_find('I', name);
    // The program's pointer was null (a loop that tests it): so is the host function's, and
    // the result file says so (an r record) instead of returning a section.
    const ww_replay_record *null = r ? 0 : ww_replay_find('i', name);
    if (null) {
        ww_replay_add(null, 0, ww_replay_find('o', name) != 0);
        return 0;
    }
    if (!r)
        ww_replay_fail("the snapshot has no section of `%s`", name);
    unsigned char *mem = (unsigned char *)malloc(r->n + 2 * WW_REPLAY_GUARD);
    if (!mem)
        ww_replay_fail("out of memory for `%s`", name);
    memset(mem, WW_REPLAY_POISON, r->n + 2 * WW_REPLAY_GUARD);
    memcpy(mem + WW_REPLAY_GUARD, r->bytes, r->n);
    ww_replay_add(r, mem, ww_replay_find('O', name) != 0);
    // Section offsets stay the program's: the pointer is the section's start minus lo.
    return (void *)((uintptr_t)(mem + WW_REPLAY_GUARD) - (uintptr_t)r->lo);
}

// A struct object: poison, with its recorded section at [lo, hi) of the object.
static void ww_replay_object(const char *name, void *obj, size_t size)
{
    const ww_replay_record *r = ww_replay_find('I', name);
    if (!r || r->lo < 0 || r->hi < r->lo || (unsigned long long)r->hi > size)
        ww_replay_fail("the snapshot has no section of `%s` inside its %zu bytes", name, size);
    memset(obj, WW_REPLAY_POISON, size);
    memcpy((unsigned char *)obj + r->lo, r->bytes, r->n);
}

static void ww_replay_put(FILE *f, unsigned char tag, const char *name, long long lo, long long hi,
                          const unsigned char *bytes, unsigned long long n)
{
    uint32_t len = (uint32_t)strlen(name);
    int64_t l = lo, h = hi;
    uint64_t count = n;
    fwrite(&tag, 1, 1, f);
    fwrite(&len, 4, 1, f);
    fwrite(name, 1, len, f);
    fwrite(&l, 8, 1, f);
    fwrite(&h, 8, 1, f);
    fwrite(&count, 8, 1, f);
    if (n > 0)
        fwrite(bytes, 1, n, f);
}

// Results: R (an outbound section after the call), r (an outbound pointer that was null: its
// bounds, no bytes), G (bytes [lo, hi) outside a section that the host code wrote).
static void ww_replay_write(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        ww_replay_fail("cannot write `%s`", path);
    fwrite("WWSNAP1\n", 1, 8, f);
    for (int i = 0; i < ww_replay_nregions; i++) {
        const ww_replay_area *g = &ww_replay_regions[i];
        const ww_replay_record *r = g->rec;
        if (!g->mem) {
            if (g->out)
                ww_replay_put(f, 'r', r->name, r->lo, r->hi, 0, 0);
            continue;
        }
        if (g->out)
            ww_replay_put(f, 'R', r->name, r->lo, r->hi, g->mem + WW_REPLAY_GUARD, r->n);
        long long first = 0, last = 0;
        int bad = 0;
        for (unsigned long long k = 0; k < r->n + 2 * WW_REPLAY_GUARD; k++) {
            if (k >= WW_REPLAY_GUARD && k < WW_REPLAY_GUARD + r->n)
                continue;
            if (g->mem[k] != WW_REPLAY_POISON) {
                long long off = r->lo + (long long)k - WW_REPLAY_GUARD;
                if (!bad)
                    first = off;
                last = off + 1;
                bad = 1;
            }
        }
        if (bad)
            ww_replay_put(f, 'G', r->name, first, last, 0, 0);
    }
    ww_replay_put(f, 'E', "", 0, 0, 0, 0);
    if (fclose(f) != 0)
        ww_replay_fail("cannot write `%s`", path);
}

#endif
