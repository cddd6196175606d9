/* warpwise profiler runtime: loop counts, inbound values and loop-carried
 * dependences of an instrumented program, written as one YAML document per run.
 *
 * C99 plus POSIX; no other dependencies.  Single-threaded: calls from several
 * threads race on the counters (documented in docs/profile-format.md).
 *
 * Dependences: a loop selected for tracking gets a clock tick at every entry
 * and iteration start, kept per active tracked loop ("level").  Every access
 * while some tracked loop is active stamps its bytes in a shadow table with a
 * fresh tick: the last write (tick, site) and the first read since that write.
 * A stamp older than the current iteration's start but not older than the
 * current instance's start was made by an earlier iteration of this instance:
 * that is a loop-carried dependence of the level.  Nothing is recorded while no
 * tracked loop runs, so memory the tracked loops never touch costs nothing.
 *
 * Shadow layout: a block of memory (a "page" below: 1 KiB, made when first touched) has
 * cells of 1, 2, 4 or 8 bytes, 16
 * bytes of shadow each (a write and a read stamp, tick << 24 | site id).  A cell
 * stands for bytes that every access so far covered together, so they share one
 * state and checking the cell is checking each of them; an access that covers
 * part of a cell first splits the page's cells, copying their state.  An int
 * array thus costs 4 bytes of shadow per byte, a char array 16.  runtime.h does
 * the common single-cell access inline and calls __ww_access for the rest. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "warpwise_rt.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Ticks must fit the 40 bits above a stamp's 24-bit site id; the limit can be
   lowered (-DWW_TICK_LIMIT=1000) to exercise the renumbering in `rebase`. */
#ifndef WW_TICK_LIMIT
#define WW_TICK_LIMIT (1ULL << 40)
#endif
enum { SITE_BITS = 24 };
#define SITE_MASK ((1ULL << SITE_BITS) - 1)

__ww_frame_t *__ww_top;
int __ww_tracking;
int __ww_paused;
unsigned long long __ww_calls;
__ww_pref_t __ww_pcache[__WW_CACHE];
unsigned long long __ww_tick, __ww_lo, __ww_hi, __ww_cap = WW_TICK_LIMIT;

static __ww_tu_t *tus;
static __ww_frame_t *frames;
static size_t nframes, capframes;

/* Starts first, first + step, ..., count of them; `before`: the starts of earlier runs. */
struct run {
    uint64_t first, step;
    size_t count, before;
};

typedef struct level {
    __ww_loop_t *loop;
    uint64_t inst_start, iter_start;
    /* The ticks at which this instance's iterations started, as runs of evenly spaced
       ticks (an iteration that makes the same accesses as the one before continues the
       run): memory follows the irregularity of the loop, not its trip count. */
    struct run *runs;
    size_t nruns, capruns;
    size_t nstarts; /* iterations started in this instance */
} level_t;
static level_t *levels;
static size_t caplevels;

typedef struct dep {
    int kind; /* 0 raw, 1 war, 2 waw */
    __ww_site_t *first, *second;
    unsigned long long count;
    long long dmin, dmax;
    struct dep *next;
    __ww_loop_t *loop;
} dep_t;
/* Recently counted dependences by (kind, first site, second site): the list of a loop
   keeps discovery order for the output, but a loop with many dependences would make
   every count walk it. */
static dep_t *dep_cache[256];
static const char *const kind_names[] = { "raw", "war", "waw" };

/* Sites by id (index 0 unused: stamp 0 means "never"). */
static __ww_site_t **sites;
static size_t nsites, capsites;

enum { PAGE_BITS = __WW_BLOCK_BITS, PAGE = 1 << PAGE_BITS, CACHE = __WW_CACHE };
typedef struct page {
    uintptr_t key;
    unsigned long long *cells; /* 2 stamps per cell: write, read */
    unsigned shift;  /* a cell covers 1 << shift bytes */
} page_t;
static page_t *pages;
static size_t npages, cappages;

static char *out_path;
static volatile sig_atomic_t writing;
static long long last_flush;
static int alive;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Loop entries and exits read the clock: on x86-64 the time-stamp counter (a few cycles;
   constant-rate on every CPU of the last fifteen years), converted to nanoseconds with the
   rate observed between registration and the output; elsewhere CLOCK_MONOTONIC. */
#if defined(__x86_64__) || defined(__i386__)
static long long now_ticks(void)
{
    return (long long)__builtin_ia32_rdtsc();
}
#else
static long long now_ticks(void)
{
    return now_ns();
}
#endif
static long long ticks0, ns0;
/* Ticks between two periodic flushes (a second); re-estimated at every flush. */
static long long flush_every = 3000000000LL;

static double ns_per_tick(void)
{
    long long dt = now_ticks() - ticks0, dn = now_ns() - ns0;
    return dt > 1000000 && dn > 0 ? (double)dn / (double)dt : 1.0;
}

static void out_of_memory(void)
{
    fputs("warpwise: out of memory in the profiler runtime\n", stderr);
    abort();
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q)
        out_of_memory();
    *cap = n;
    return q;
}

/* Stamps older than this are forgotten, as if the shadow had been cleared: set where an
 * instance that ran untracked ends (sampling, see __ww_enter). */
static uint64_t floor_tick;

/* The bounds the inline path tests stamps against (see runtime.h). */
static void set_bounds(void)
{
    if (__ww_tracking > 0) {
        __ww_lo = levels[0].inst_start > floor_tick ? levels[0].inst_start : floor_tick;
        __ww_hi = levels[__ww_tracking - 1].iter_start;
    }
}

/* The id of `s`, 0 once 2^24 - 1 sites have ids (their accesses go untracked). */
static uint64_t site_id(__ww_site_t *s)
{
    if (s->id)
        return s->id;
    if (nsites == 0)
        nsites = 1;
    if (nsites > SITE_MASK)
        return 0;
    sites = grow(sites, &capsites, nsites + 1, sizeof *sites);
    sites[nsites] = s;
    s->id = (unsigned)nsites++;
    return s->id;
}

/* ---- shadow memory: open addressing on page number, a direct-mapped cache in front ---- */

static size_t cache_slot(uintptr_t key)
{
    return (key ^ (key >> 10)) & (CACHE - 1); /* as __ww_fast computes it */
}

static void cache(page_t *pg)
{
    __ww_pref_t *e = &__ww_pcache[cache_slot(pg->key)];
    e->key = pg->key;
    e->cells = pg->cells;
    e->shift = pg->shift;
}

static page_t *find_page(uintptr_t key)
{
    if (cappages == 0)
        return 0;
    size_t h = (key * 0x9E3779B97F4A7C15ULL) & (cappages - 1);
    while (pages[h].cells && pages[h].key != key)
        h = (h + 1) & (cappages - 1);
    return &pages[h];
}

/* Shadow bytes allocated, and the limit (WARPWISE_SHADOW_MB; 0: none). */
static size_t shadow_bytes, shadow_limit;

/* The tracking budget (WARPWISE_TRACK_BUDGET, in watched accesses; 0: none) and the
 * ticks taken away by rebase(): `rebased + __ww_tick` is every watched access so far. */
static unsigned long long track_budget = 1ULL << 26, rebased;

/* The shadow reached its limit: every block is freed and tracking goes on with an empty
 * shadow.  A dependence whose earlier access came before this point is not observed, so
 * every loop tracked now says how many times this happened (`shadow_resets`). */
static void reset_shadow(void)
{
    for (size_t i = 0; i < cappages; i++)
        free(pages[i].cells);
    memset(pages, 0, cappages * sizeof *pages);
    npages = 0;
    shadow_bytes = 0;
    for (size_t i = 0; i < CACHE; i++)
        __ww_pcache[i].key = (unsigned long)-1;
    for (int i = 0; i < __ww_tracking; i++)
        levels[i].loop->shadow_resets++;
}

/* The page of `key`, created with `shift` if it is new. */
static page_t *page_for(uintptr_t key, unsigned shift)
{
    page_t *pg = find_page(key);
    if (pg && pg->cells)
        return pg;
    size_t bytes = ((size_t)2 << (PAGE_BITS - shift)) * sizeof *pg->cells;
    if (shadow_limit && shadow_bytes + bytes > shadow_limit && npages > 0) {
        reset_shadow();
        pg = find_page(key);
    }
    shadow_bytes += bytes;
    if ((npages + 1) * 2 > cappages) {
        size_t old = cappages;
        page_t *oldp = pages;
        cappages = cappages ? cappages * 2 : 1024;
        pages = calloc(cappages, sizeof *pages);
        if (!pages)
            out_of_memory();
        for (size_t i = 0; i < old; i++) {
            if (!oldp[i].cells)
                continue;
            size_t h = (oldp[i].key * 0x9E3779B97F4A7C15ULL) & (cappages - 1);
            while (pages[h].cells)
                h = (h + 1) & (cappages - 1);
            pages[h] = oldp[i];
        }
        free(oldp);
        pg = find_page(key);
    }
    pg->key = key;
    pg->shift = shift;
    pg->cells = calloc((size_t)2 << (PAGE_BITS - shift), sizeof *pg->cells);
    if (!pg->cells)
        out_of_memory();
    npages++;
    return pg;
}

/* Splits the cells of `pg` into cells of 1 << shift bytes, each a copy of its parent. */
static void split(page_t *pg, unsigned shift)
{
    size_t ncells = (size_t)1 << (PAGE_BITS - shift), k = (size_t)1 << (pg->shift - shift);
    shadow_bytes += 2 * (ncells - ((size_t)1 << (PAGE_BITS - pg->shift))) * sizeof *pg->cells;
    unsigned long long *cells = malloc(2 * ncells * sizeof *cells);
    if (!cells)
        out_of_memory();
    for (size_t i = 0; i < ncells; i++) {
        cells[2 * i] = pg->cells[2 * (i / k)];
        cells[2 * i + 1] = pg->cells[2 * (i / k) + 1];
    }
    free(pg->cells);
    pg->cells = cells;
    pg->shift = shift;
}

/* ---- dependences ---- */

static void add_dep(__ww_loop_t *l, int kind, __ww_site_t *first, __ww_site_t *second,
                    long long distance)
{
    size_t slot = (first->id * 31u + second->id * 7u + (unsigned)kind) & 255;
    dep_t *d = dep_cache[slot];
    if (!(d && d->loop == l && d->kind == kind && d->first == first && d->second == second)) {
        int n = 0;
        for (d = l->deps; d; d = d->next, n++)
            if (d->kind == kind && d->first == first && d->second == second)
                break;
        if (!d) {
            if (n >= 256)
                return;
            d = calloc(1, sizeof *d);
            if (!d)
                return;
            d->kind = kind;
            d->first = first;
            d->second = second;
            d->loop = l;
            d->dmin = d->dmax = distance;
            d->next = l->deps;
            l->deps = d;
        }
        dep_cache[slot] = d;
    }
    d->count++;
    if (distance < d->dmin)
        d->dmin = distance;
    if (distance > d->dmax)
        d->dmax = distance;
}

/* The level whose earlier iteration (of its current instance) made stamp tick t, or -1. */
static int carried_by(uint64_t t)
{
    if (t < __ww_lo || t >= __ww_hi)
        return -1;
    for (int i = __ww_tracking - 1; i >= 0; i--) {
        level_t *lv = &levels[i];
        if (t >= lv->inst_start && t < lv->iter_start)
            return i;
    }
    return -1;
}

/* Iterations started after tick t (which is older than the newest start): the number of
   starts minus those <= t.  Mostly 1 (a value carried to the next iteration), found in
   the last run; otherwise a binary search over the runs. */
static long long distance_of(level_t *lv, uint64_t t)
{
    size_t n = lv->nstarts, lo = 0, hi = lv->nruns;
    if (n == 0 || hi == 0)
        return 0;
    const struct run *last = &lv->runs[hi - 1];
    if (last->first > t) {
        /* the run holding t: the last one whose first start is <= t */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (lv->runs[mid].first <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            return (long long)n; /* before every start: the instance's own first ticks */
        last = &lv->runs[lo - 1];
    }
    size_t k = last->step ? (size_t)((t - last->first) / last->step) : 0;
    if (k >= last->count)
        k = last->count - 1;
    return (long long)(n - (last->before + k + 1));
}

/* Records a start at tick t (greater than every earlier one). */
static void add_start(level_t *lv, uint64_t t)
{
    struct run *r = lv->nruns ? &lv->runs[lv->nruns - 1] : 0;
    if (r && r->count == 1) {
        r->step = t - r->first;
        r->count = 2;
    } else if (r && t - (r->first + r->step * (r->count - 1)) == r->step) {
        r->count++;
    } else {
        lv->runs = grow(lv->runs, &lv->capruns, lv->nruns + 1, sizeof *lv->runs);
        r = &lv->runs[lv->nruns++];
        r->first = t;
        r->step = 0;
        r->count = 1;
        r->before = lv->nstarts;
    }
    lv->nstarts++;
}

/* The level and distance of the last stamp checked, valid during one access
   (memo_tick == __ww_tick): a read-modify-write checks its write stamp twice. */
static uint64_t memo_tick, memo_t;
static int memo_lv;
static long long memo_d;

/* Records the dependence of the access at site s on stamp `stamp`, if some level
   carries it. */
static int check(int kind, uint64_t stamp, __ww_site_t *s)
{
    uint64_t t = stamp >> SITE_BITS;
    if (memo_tick != __ww_tick || memo_t != t) {
        memo_tick = __ww_tick;
        memo_t = t;
        memo_lv = carried_by(t);
        memo_d = memo_lv >= 0 ? distance_of(&levels[memo_lv], t) : 0;
    }
    if (memo_lv < 0)
        return 0;
    add_dep(levels[memo_lv].loop, kind, sites[stamp & SITE_MASK], s, memo_d);
    return 1;
}

/* Renumbers the ticks when they reach WW_TICK_LIMIT.  Stamps older than the
   outermost tracked instance only ever compare as "older than that instance", so
   they all become tick 1; newer ticks keep their order.  If the outermost instance
   alone spans more than half the ticks, the shadow is cleared instead (dependences
   across that point are missed). */
static void rebase(void)
{
    uint64_t base = __ww_tracking > 0 ? levels[0].inst_start : __ww_tick + 1;
    int wipe = __ww_tick - base + 2 > WW_TICK_LIMIT / 2;
    if (wipe)
        base = __ww_tick + 1;
#define REMAP(t) ((t) < base ? 1 : (t) - base + 2)
    for (size_t i = 0; i < cappages; i++) {
        page_t *pg = &pages[i];
        if (!pg->cells)
            continue;
        size_t nstamps = (size_t)2 << (PAGE_BITS - pg->shift);
        for (size_t k = 0; k < nstamps; k++) {
            uint64_t v = pg->cells[k];
            if (wipe)
                pg->cells[k] = 0;
            else if (v)
                pg->cells[k] = REMAP(v >> SITE_BITS) << SITE_BITS | (v & SITE_MASK);
        }
    }
    for (int i = 0; i < __ww_tracking; i++) {
        level_t *lv = &levels[i];
        lv->inst_start = REMAP(lv->inst_start);
        lv->iter_start = REMAP(lv->iter_start);
        /* every start is inside the outermost instance, so at or after `base`: a shift,
           which keeps each run's step */
        for (size_t k = 0; k < lv->nruns; k++)
            lv->runs[k].first = REMAP(lv->runs[k].first);
        if (wipe) { /* they all became 1; stamps from now on are newer anyway */
            lv->nstarts = 0;
            lv->nruns = 0;
        }
    }
    floor_tick = REMAP(floor_tick);
    rebased += __ww_tick - REMAP(__ww_tick);
    __ww_tick = REMAP(__ww_tick);
#undef REMAP
    memo_tick = 0; /* ticks are reused from now on */
    set_bounds();
}

/* A fresh tick. */
static uint64_t next_tick(void)
{
    if (__ww_tick + 1 >= WW_TICK_LIMIT)
        rebase();
    return ++__ww_tick;
}

/* The rules for one cell c (standing for bytes that share their state), accessed at
   `stamp` by site s: a read checks the last write (flow dependence) and becomes the
   cell's first read since that write unless there is one; a write checks that read
   (anti) and the last write (output) and replaces the write.  `seen` keeps it to one
   dependence of each kind per access. */
static inline void update(unsigned long long *c, uint64_t stamp, __ww_site_t *s, int mode,
                          int seen[3])
{
    uint64_t w = c[0], r = c[1];
    uint64_t wt = w >> SITE_BITS, rt = r >> SITE_BITS;
    /* carried_by's first test, here to save the call for most stamps */
    int w_may = w && wt >= __ww_lo && wt < __ww_hi;
    if (mode & 1) {
        if (w_may && !seen[0])
            seen[0] = check(0, w, s);
        if (!r || rt <= wt || rt < __ww_lo) {
            r = stamp;
            rt = stamp >> SITE_BITS;
        }
    }
    if (mode & 2) {
        if (r && rt > wt && rt >= __ww_lo && rt < __ww_hi && !seen[1])
            seen[1] = check(1, r, s);
        if (w_may && !seen[2])
            seen[2] = check(2, w, s);
        w = stamp;
    }
    c[0] = w;
    c[1] = r;
}

/* The slow path of an access of n bytes at p: any size, alignment and page
   layout, dependences found.  Same rules as __ww_fast. */
void __ww_access(const volatile void *p, unsigned long n, __ww_site_t *s, int mode)
{
    uint64_t id = site_id(s);
    uintptr_t a = (uintptr_t)p, end = a + n;
    if (!id || n == 0 || end < a)
        return;
    uint64_t stamp = next_tick() << SITE_BITS | id;
    /* One dependence per kind and access, not one per cell. */
    int seen[3] = { 0, 0, 0 };
    __ww_pref_t *e = &__ww_pcache[cache_slot(a >> PAGE_BITS)];
    if (e->key == a >> PAGE_BITS && n == 1ul << e->shift && (a & (n - 1)) == 0) {
        /* one cell of a cached page: the usual reason to be here is a dependence */
        update(&e->cells[2 * ((a & (PAGE - 1)) >> e->shift)], stamp, s, mode, seen);
        return;
    }
    /* Neighbouring cells usually share their state (an array element wider than the
       page's cells): a cell whose state equals the previous one's gets the same checks
       and the same update, so it only copies the previous result. */
    unsigned long long before[2] = { 0, 0 }, after[2] = { 0, 0 };
    int have_previous = 0;
    while (a < end) {
        uintptr_t key = a >> PAGE_BITS;
        uintptr_t stop = (key + 1) << PAGE_BITS;
        if (stop == 0 || stop > end) /* stop == 0: the last page of the address space */
            stop = end;
        /* The widest cells that both ends of this part fall on. */
        unsigned shift = 3;
        while (shift > 0 && ((a | stop) & (((uintptr_t)1 << shift) - 1)) != 0)
            shift--;
        e = &__ww_pcache[cache_slot(key)];
        if (e->key != key || e->shift > shift) {
            page_t *pg = page_for(key, shift);
            if (pg->shift > shift)
                split(pg, shift);
            cache(pg);
        }
        unsigned g = (unsigned)e->shift;
        size_t first = (a & (PAGE - 1)) >> g;
        size_t last = ((stop - 1) & (PAGE - 1)) >> g;
        for (size_t i = first; i <= last; i++) {
            unsigned long long *c = &e->cells[2 * i];
            if (have_previous && c[0] == before[0] && c[1] == before[1]) {
                c[0] = after[0];
                c[1] = after[1];
                continue;
            }
            before[0] = c[0];
            before[1] = c[1];
            have_previous = 1;
            update(c, stamp, s, mode, seen);
            after[0] = c[0];
            after[1] = c[1];
        }
        a = stop;
    }
}

/* ---- loop stack ---- */

static void flush_periodically(long long now);

static int is_ancestor(__ww_loop_t *a, __ww_loop_t *l)
{
    for (__ww_loop_t *p = l->parent; p; p = p->parent)
        if (p == a)
            return 1;
    return 0;
}

/* Closes the innermost frame.  `live`: the call that owns it has not returned, so its
 * counter (a local of that call) can be read; a frame of a call that returned without
 * closing it (longjmp) keeps only the iterations it had already been told. */
static void close_top(long long now, int live)
{
    __ww_frame_t *f = &frames[nframes - 1];
    __ww_loop_t *l = f->loop;
    if (f->counter && live) {
        f->iterations += *f->counter;
        *f->counter = 0;
    }
    l->entries++;
    l->iterations += f->iterations;
    if (l->entries == 1 || f->iterations < l->min_trip)
        l->min_trip = f->iterations;
    if (f->iterations > l->max_trip)
        l->max_trip = f->iterations;
    l->time += (unsigned long long)(now - f->t0);
    if (f->paused) {
        /* What ran untracked wrote nothing to the shadow: stamps from before it would
           pair with accesses after it as if nothing had happened in between, so they are
           all forgotten (in constant time: older than the floor). */
        __ww_paused = 0;
        floor_tick = __ww_tick + 1;
    }
    if (f->level >= 0) {
        __ww_tracking = f->level;
        set_bounds();
    }
    nframes--;
    __ww_top = nframes ? &frames[nframes - 1] : 0;
}

/* Pops frames that cannot be live any more when `l` runs in call `call`: loops of calls
 * made after this one (they returned, maybe by longjmp), and loops of this call that do
 * not enclose `l` (left by goto or return).  With `inclusive`, `l` itself goes too. */
static void unwind(__ww_loop_t *l, unsigned long long call, long long now)
{
    while (nframes) {
        __ww_frame_t *t = &frames[nframes - 1];
        if (t->call > call)
            close_top(now, 0);
        else if (t->call == call && t->loop != l && !is_ancestor(t->loop, l))
            close_top(now, 1);
        else
            break;
    }
}

void __ww_enter(__ww_loop_t *l, unsigned long long call, unsigned long long *counter)
{
    long long now = now_ticks();
    unwind(l, call, now);
    if (nframes && frames[nframes - 1].loop == l && frames[nframes - 1].call == call)
        close_top(now, 1); /* re-entered by a backward goto */
    frames = grow(frames, &capframes, nframes + 1, sizeof *frames);
    __ww_frame_t *f = &frames[nframes++];
    f->loop = l;
    f->call = call;
    f->iterations = 0;
    f->counter = counter;
    if (counter)
        *counter = 0;
    f->t0 = now;
    f->level = -1;
    f->paused = 0;
    if (l->track && !__ww_paused && track_budget && rebased + __ww_tick >= track_budget) {
        /* Past the budget, sampling: the loop's first, second, fourth, eighth... instance
           is watched, the others run untracked, and every loop tracked around them (this
           one included) says so in `sampled_out`. */
        unsigned long long k = l->entries + 1;
        if ((k & (k - 1)) != 0) {
            __ww_paused = 1;
            f->paused = 1;
            l->sampled_out++;
            for (int i = 0; i < __ww_tracking; i++)
                if (levels[i].loop != l)
                    levels[i].loop->sampled_out++;
        }
    }
    if (l->track) {
        size_t old = caplevels;
        levels = grow(levels, &caplevels, (size_t)__ww_tracking + 1, sizeof *levels);
        if (caplevels > old) /* a new level has no runs array yet */
            memset(levels + old, 0, (caplevels - old) * sizeof *levels);
        level_t *lv = &levels[__ww_tracking];
        lv->loop = l;
        lv->inst_start = next_tick();
        lv->iter_start = lv->inst_start;
        lv->nstarts = 0;
        lv->nruns = 0;
        f->level = __ww_tracking++;
        set_bounds();
    }
    __ww_top = f;
    flush_periodically(now);
}

void __ww_exit(__ww_loop_t *l, unsigned long long call)
{
    long long now = now_ticks();
    for (size_t i = nframes; i-- > 0;) {
        if (frames[i].loop == l && frames[i].call == call) {
            while (nframes > i)
                close_top(now, frames[nframes - 1].call == call);
            break;
        }
        if (frames[i].call < call)
            break;
    }
    flush_periodically(now);
}

void __ww_iter_slow(__ww_loop_t *l, unsigned long long call)
{
    __ww_frame_t *t = __ww_top;
    if (!(t && t->loop == l && t->call == call)) {
        unwind(l, call, now_ticks());
        t = __ww_top;
        if (!(t && t->loop == l && t->call == call)) {
            __ww_enter(l, call, 0); /* jumped into the body */
            t = __ww_top;
        }
    }
    t->iterations++;
    if (t->level >= 0) {
        level_t *lv = &levels[t->level];
        lv->iter_start = next_tick();
        add_start(lv, lv->iter_start);
        set_bounds();
    }
}

void __ww_leave(unsigned long long call)
{
    long long now = 0;
    while (nframes && frames[nframes - 1].call >= call) {
        if (!now)
            now = now_ticks();
        close_top(now, frames[nframes - 1].call == call);
    }
}

void __ww_val(__ww_loop_t *l, int slot, long long v)
{
    __ww_vstat_t *s = &l->vals[slot];
    if (s->count == 0 || v < s->min)
        s->min = v;
    if (s->count == 0 || v > s->max)
        s->max = v;
    s->count++;
    /* Misra-Gries with 8 counters: exact while at most 8 distinct values occur. */
    int free_slot = -1;
    for (int i = 0; i < 8; i++) {
        if (s->hits[i] && s->value[i] == v) {
            s->hits[i]++;
            return;
        }
        if (!s->hits[i] && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0) {
        s->value[free_slot] = v;
        s->hits[free_slot] = 1;
        return;
    }
    for (int i = 0; i < 8; i++)
        s->hits[i]--;
}

/* ---- allocations ----
 *
 * The live blocks the program's own code allocated (the instrumentation renames its calls
 * of malloc, calloc, realloc, aligned_alloc and free to the wrappers below): an
 * open-addressing table from a block's start to its size, so that a loop's entry can tell
 * which object an array parameter points to (__ww_base).  A freed block's entry becomes a
 * tombstone; the table is rebuilt at twice the live entries when it is half full.  The
 * wrappers take a spin lock: the rest of the runtime assumes one thread, but worker
 * threads that allocate at once must not break the table.  When the table cannot grow,
 * recording stops and every later lookup says "unknown". */
typedef struct {
    uintptr_t key;
    size_t size;
} block_t;
#define TOMBSTONE ((uintptr_t)1)
static block_t *blocks;
static size_t cap_blocks, used_blocks, live_blocks;
static int blocks_broken;
static char blocks_lock;

static void lock_blocks(void)
{
    while (__atomic_test_and_set(&blocks_lock, __ATOMIC_ACQUIRE))
        ;
}

static void unlock_blocks(void)
{
    __atomic_clear(&blocks_lock, __ATOMIC_RELEASE);
}

static size_t block_slot(uintptr_t key, size_t cap)
{
    return (size_t)(((uint64_t)(key >> 4) * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

/* Rebuilds the table with room for twice the live blocks (at least 1024 slots). */
static int rebuild_blocks(void)
{
    size_t cap = 1024;
    while (cap < 4 * (live_blocks + 1))
        cap *= 2;
    block_t *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return 0;
    for (size_t i = 0; i < cap_blocks; i++) {
        uintptr_t key = blocks[i].key;
        if (key == 0 || key == TOMBSTONE)
            continue;
        size_t j = block_slot(key, cap);
        while (fresh[j].key != 0)
            j = (j + 1) & (cap - 1);
        fresh[j] = blocks[i];
    }
    free(blocks);
    blocks = fresh;
    cap_blocks = cap;
    used_blocks = live_blocks;
    return 1;
}

/* The slot holding `key`, or SIZE_MAX. */
static size_t find_block(uintptr_t key)
{
    if (!cap_blocks)
        return (size_t)-1;
    for (size_t j = block_slot(key, cap_blocks);; j = (j + 1) & (cap_blocks - 1)) {
        if (blocks[j].key == key)
            return j;
        if (blocks[j].key == 0)
            return (size_t)-1;
    }
}

static void forget_block(const void *p)
{
    size_t j = find_block((uintptr_t)p);
    if (j != (size_t)-1) {
        blocks[j].key = TOMBSTONE;
        live_blocks--;
    }
}

static void remember_block(const void *p, size_t size)
{
    uintptr_t key = (uintptr_t)p;
    size_t j = find_block(key);
    if (j != (size_t)-1) { /* a start the program freed where the profiler did not see */
        blocks[j].size = size;
        return;
    }
    if (2 * (used_blocks + 1) > cap_blocks && !rebuild_blocks()) {
        blocks_broken = 1;
        return;
    }
    j = block_slot(key, cap_blocks);
    while (blocks[j].key != 0 && blocks[j].key != TOMBSTONE)
        j = (j + 1) & (cap_blocks - 1);
    if (blocks[j].key == 0)
        used_blocks++;
    blocks[j].key = key;
    blocks[j].size = size;
    live_blocks++;
}

void *__ww_malloc(size_t n)
{
    void *p = malloc(n);
    lock_blocks();
    if (p && !blocks_broken)
        remember_block(p, n);
    unlock_blocks();
    return p;
}

void *__ww_calloc(size_t count, size_t n)
{
    void *p = calloc(count, n); /* when it succeeds, count * n did not overflow */
    lock_blocks();
    if (p && !blocks_broken)
        remember_block(p, count * n);
    unlock_blocks();
    return p;
}

void *__ww_realloc(void *q, size_t n)
{
    void *p = realloc(q, n);
    lock_blocks();
    /* On failure the old block stays; a size of 0 frees it (glibc) or keeps a new one. */
    if (q && (p || n == 0))
        forget_block(q);
    if (p && !blocks_broken)
        remember_block(p, n);
    unlock_blocks();
    return p;
}

void *__ww_aligned_alloc(size_t alignment, size_t n)
{
    void *p = aligned_alloc(alignment, n);
    lock_blocks();
    if (p && !blocks_broken)
        remember_block(p, n);
    unlock_blocks();
    return p;
}

/* A file-scope array of an instrumented unit, entered as if allocated at start-up. */
void __ww_object(const void *p, unsigned long long bytes)
{
    lock_blocks();
    if (!blocks_broken)
        remember_block(p, (size_t)bytes);
    unlock_blocks();
}

void __ww_free(void *p)
{
    if (p) {
        lock_blocks();
        forget_block(p);
        unlock_blocks();
    }
    free(p);
}

/* An array parameter at a loop's entry: an array object of `array_bytes` bytes (a global
   or a local), or else a pointer, whose block is looked up. */
void __ww_base(__ww_loop_t *l, int slot, const void *p, unsigned long long array_bytes)
{
    /* A null pointer at an entry: the loop cannot have run over it. */
    if (!l->bases || !p)
        return;
    __ww_bstat_t *s = &l->bases[slot];
    unsigned long long size = array_bytes;
    if (!size) {
        lock_blocks();
        size_t j = blocks_broken ? (size_t)-1 : find_block((uintptr_t)p);
        size = j == (size_t)-1 ? 0 : blocks[j].size;
        unlock_blocks();
        if (j == (size_t)-1) {
            s->unknown++;
            return;
        }
    }
    if (s->found == 0 || size < s->min)
        s->min = size;
    if (size > s->max)
        s->max = size;
    s->total += size;
    s->found++;
}

/* ---- output ----
 *
 * Everything below runs at exit and in signal handlers, possibly while another thread
 * (or the interrupted code itself) holds malloc's or stdio's locks: a program that aborts
 * inside malloc (a double free) must still end, with its profile. So the profile is
 * formatted by hand into a fixed buffer on the stack and written with write(2); no malloc,
 * no stdio, no locale. */

typedef struct {
    int fd;
    size_t len;
    char buf[4096];
} out_t;

static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w <= 0)
            return;
        buf += w;
        len -= (size_t)w;
    }
}

static void out_flush(out_t *o)
{
    write_all(o->fd, o->buf, o->len);
    o->len = 0;
}

static void out_char(out_t *o, char c)
{
    if (o->len == sizeof o->buf)
        out_flush(o);
    o->buf[o->len++] = c;
}

static void out_str(out_t *o, const char *s)
{
    for (; s && *s; s++)
        out_char(o, *s);
}

static void out_u64(out_t *o, unsigned long long v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out_char(o, digits[--n]);
}

static void out_i64(out_t *o, long long v)
{
    if (v < 0) {
        out_char(o, '-');
        out_u64(o, 0ULL - (unsigned long long)v);
    } else {
        out_u64(o, (unsigned long long)v);
    }
}

static void yaml_string(out_t *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    out_char(o, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out_char(o, '\\');
            out_char(o, (char)c);
        } else if (c < 0x20) {
            out_str(o, "\\x");
            out_char(o, hex[c >> 4]);
            out_char(o, hex[c & 15]);
        } else {
            out_char(o, (char)c);
        }
    }
    out_char(o, '"');
}

static void site(out_t *o, const char *key, __ww_site_t *s)
{
    out_str(o, "        ");
    out_str(o, key);
    out_str(o, ": {line: ");
    out_i64(o, s->line);
    out_str(o, ", text: ");
    yaml_string(o, s->text);
    out_str(o, ", array: ");
    yaml_string(o, s->array);
    out_str(o, ", scalar: ");
    out_str(o, s->scalar ? "true" : "false");
    if (s->op) {
        char op[2] = { (char)s->op, 0 };
        out_str(o, ", op: ");
        yaml_string(o, op);
    }
    out_str(o, "}\n");
}

static int same_id(__ww_loop_t *a, __ww_loop_t *b)
{
    return strcmp(a->id, b->id) == 0;
}

static void field_u64(out_t *o, const char *key, unsigned long long v)
{
    out_str(o, "    ");
    out_str(o, key);
    out_str(o, ": ");
    out_u64(o, v);
    out_char(o, '\n');
}

/* Loops that share an id (a function from a header in several files) are written once. */
static void write_loop(out_t *o, __ww_loop_t *first)
{
    unsigned long long entries = 0, iterations = 0, min_trip = 0, max_trip = 0, ticks = 0;
    unsigned long long resets = 0, sampled_out = 0;
    int track = 0, any_deps = 0;
    for (__ww_tu_t *tu = tus; tu; tu = tu->next) {
        for (int i = 0; i < tu->nloops; i++) {
            __ww_loop_t *l = &tu->loops[i];
            if (!same_id(l, first))
                continue;
            if (l->entries && (!entries || l->min_trip < min_trip))
                min_trip = l->min_trip;
            if (l->max_trip > max_trip)
                max_trip = l->max_trip;
            entries += l->entries;
            iterations += l->iterations;
            ticks += l->time;
            resets += l->shadow_resets;
            sampled_out += l->sampled_out;
            track |= l->track;
            any_deps |= l->deps != 0;
        }
    }
    out_str(o, "  ");
    yaml_string(o, first->id);
    out_str(o, ":\n    function: ");
    yaml_string(o, first->function);
    out_char(o, '\n');
    field_u64(o, "entries", entries);
    field_u64(o, "iterations", iterations);
    field_u64(o, "min_trip", min_trip);
    field_u64(o, "max_trip", max_trip);
    field_u64(o, "time_ns", (unsigned long long)((double)ticks * ns_per_tick()));
    out_str(o, track ? "    tracked: true\n" : "    tracked: false\n");
    if (resets)
        field_u64(o, "shadow_resets", resets);
    if (sampled_out)
        field_u64(o, "sampled_out", sampled_out);
    if (first->nvals > 0) {
        out_str(o, "    inbounds:\n");
        for (int k = 0; k < first->nvals; k++) {
            __ww_vstat_t *s = &first->vals[k];
            out_str(o, "      ");
            yaml_string(o, first->valnames[k]);
            out_str(o, ": {count: ");
            out_u64(o, s->count);
            out_str(o, ", min: ");
            out_i64(o, s->min);
            out_str(o, ", max: ");
            out_i64(o, s->max);
            out_str(o, ", frequent: [");
            int comma = 0;
            for (int i = 0; i < 8; i++) {
                if (!s->hits[i])
                    continue;
                out_str(o, comma ? ", {value: " : "{value: ");
                out_i64(o, s->value[i]);
                out_str(o, ", count: ");
                out_u64(o, s->hits[i]);
                out_char(o, '}');
                comma = 1;
            }
            out_str(o, "]}\n");
        }
    }
    if (first->nbases > 0) {
        out_str(o, "    allocations:\n");
        for (int k = 0; k < first->nbases; k++) {
            __ww_bstat_t *s = &first->bases[k];
            out_str(o, "      ");
            yaml_string(o, first->basenames[k]);
            out_str(o, ": {found: ");
            out_u64(o, s->found);
            out_str(o, ", unknown: ");
            out_u64(o, s->unknown);
            out_str(o, ", min_bytes: ");
            out_u64(o, s->min);
            out_str(o, ", max_bytes: ");
            out_u64(o, s->max);
            out_str(o, ", total_bytes: ");
            out_u64(o, s->total);
            out_str(o, "}\n");
        }
    }
    if (any_deps) {
        out_str(o, "    dependences:\n");
        for (__ww_tu_t *tu = tus; tu; tu = tu->next) {
            for (int i = 0; i < tu->nloops; i++) {
                __ww_loop_t *l = &tu->loops[i];
                if (!same_id(l, first))
                    continue;
                for (dep_t *d = l->deps; d; d = d->next) {
                    out_str(o, "      - kind: ");
                    out_str(o, kind_names[d->kind]);
                    out_str(o, "\n        array: ");
                    yaml_string(o, d->second->array);
                    out_char(o, '\n');
                    site(o, "first", d->first);
                    site(o, "second", d->second);
                    out_str(o, "        distance_min: ");
                    out_i64(o, d->dmin);
                    out_str(o, "\n        distance_max: ");
                    out_i64(o, d->dmax);
                    out_str(o, "\n        count: ");
                    out_u64(o, d->count);
                    out_char(o, '\n');
                }
            }
        }
    }
}

static void write_document(int fd, const char *end)
{
    out_t o;
    o.fd = fd;
    o.len = 0;
    out_str(&o, "---\nschema: warpwise/profile/v1\nruns: 1\n");
    out_str(&o, strcmp(end, "exit") == 0 ? "incomplete_runs: 0\nends: ["
                                          : "incomplete_runs: 1\nends: [");
    yaml_string(&o, end);
    out_str(&o, "]\nloops:\n");
    int any = 0;
    for (__ww_tu_t *tu = tus; tu; tu = tu->next) {
        for (int i = 0; i < tu->nloops; i++) {
            __ww_loop_t *l = &tu->loops[i];
            int earlier = 0;
            for (__ww_tu_t *u = tus; u && !earlier; u = u->next)
                for (int j = 0; j < u->nloops; j++) {
                    if (u == tu && j == i)
                        goto done;
                    if (same_id(&u->loops[j], l)) {
                        earlier = 1;
                        break;
                    }
                }
        done:
            if (!earlier) {
                write_loop(&o, l);
                any = 1;
            }
        }
    }
    if (!any)
        out_str(&o, "  {}\n");
    out_flush(&o);
}

/* `P.<pid>.part` (and `P.<pid>.part.tmp`) into `dst`, without malloc or stdio; 0 when it
   does not fit. */
static int part_path(char *dst, size_t cap, const char *suffix)
{
    out_t o; /* used only as a formatter: never flushed */
    o.fd = -1;
    o.len = 0;
    out_str(&o, out_path);
    out_char(&o, '.');
    out_i64(&o, (long long)getpid());
    out_str(&o, ".part");
    out_str(&o, suffix);
    if (o.len + 1 > cap || o.len + 1 > sizeof o.buf)
        return 0;
    memcpy(dst, o.buf, o.len);
    dst[o.len] = 0;
    return 1;
}

/* A snapshot that survives SIGKILL: `P.<pid>.part`, replaced atomically. */
static void write_part(const char *end)
{
    char part[4096], tmp[4096];
    if (!part_path(part, sizeof part, "") || !part_path(tmp, sizeof tmp, ".tmp"))
        return;
    /* Never through a symlink planted at the name: a fresh file or nothing. */
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return;
    write_document(fd, end);
    close(fd);
    rename(tmp, part);
}

/* Opens the profile for appending and locks it, making sure the locked file is still the
   one at the path: `warpwise profile` rewrites the profile under the same lock by renaming
   a new file over it, and a run that waited on the old file's lock would append to a file
   nobody reads any more. */
static int open_locked(void)
{
    for (int tries = 0; tries < 1000; tries++) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
        if (fd < 0)
            return -1;
        flock(fd, LOCK_EX);
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(out_path, &named) == 0 && held.st_dev == named.st_dev
            && held.st_ino == named.st_ino)
            return fd;
        close(fd);
    }
    return -1;
}

/* The run's final document, appended to the profile under a lock. */
static void write_final(const char *end)
{
    if (!alive || writing)
        return;
    writing = 1;
    /* At exit or on a signal the stack of every open call is still there: the
       counters are read (a loop without calls may hold its count in a register, so
       its current instance can be short by the iterations since its last call). */
    long long now = now_ticks();
    while (nframes)
        close_top(now, 1);
    int fd = open_locked();
    if (fd >= 0) {
        write_document(fd, end);
        flock(fd, LOCK_UN);
        close(fd);
        char part[4096];
        if (part_path(part, sizeof part, ""))
            unlink(part);
    } else {
        static const char msg[] = "warpwise: cannot write the profile to ";
        write_all(2, msg, sizeof msg - 1);
        write_all(2, out_path, strlen(out_path));
        write_all(2, "\n", 1);
    }
    alive = 0;
}

static void flush_periodically(long long now)
{
    if (now - last_flush < flush_every || writing)
        return;
    last_flush = now;
    flush_every = (long long)(1e9 / ns_per_tick());
    writing = 1;
    write_part("running");
    writing = 0;
}

static void at_exit(void)
{
    write_final("exit");
}

static void on_signal(int sig)
{
    if (sig == SIGALRM) {
        write_final("timeout");
        _exit(124);
    }
    out_t o; /* used only as a formatter: never flushed */
    o.fd = -1;
    o.len = 0;
    out_str(&o, "signal ");
    out_i64(&o, sig);
    o.buf[o.len] = 0;
    write_final(o.buf);
    signal(sig, SIG_DFL);
    raise(sig);
}

void __ww_register(__ww_tu_t *tu)
{
    tu->next = tus;
    tus = tu;
    for (int i = 0; i < tu->nloops; i++) {
        __ww_loop_t *l = &tu->loops[i];
        if (l->nvals > 0)
            l->vals = calloc((size_t)l->nvals, sizeof *l->vals);
        if (!l->vals)
            l->nvals = 0;
        if (l->nbases > 0)
            l->bases = calloc((size_t)l->nbases, sizeof *l->bases);
        if (!l->bases)
            l->nbases = 0;
    }
    if (alive)
        return;
    alive = 1;
    for (size_t i = 0; i < CACHE; i++) /* no page has this number */
        __ww_pcache[i].key = (unsigned long)-1;
    const char *p = getenv("WARPWISE_PROFILE");
    out_path = strdup(p && *p ? p : "warpwise-profile.yaml");
    ticks0 = now_ticks();
    ns0 = now_ns();
    last_flush = ticks0;
    atexit(at_exit);
    /* Every signal whose default action ends the program writes the profile first; a
       program killed by SIGPIPE (`| head`) or by its own stack overflow keeps its profile.
       The handler runs on a stack of its own, since the program's may be exhausted. */
    static char *alt_stack;
    if (!alt_stack && (alt_stack = malloc(1 << 16))) {
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = alt_stack;
        ss.ss_size = 1 << 16;
        sigaltstack(&ss, 0);
    }
    int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP,
                   SIGALRM, SIGPIPE, SIGXCPU, SIGXFSZ, SIGQUIT };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, 0);
    }
    const char *mb = getenv("WARPWISE_SHADOW_MB");
    if (mb && atol(mb) > 0)
        shadow_limit = (size_t)atol(mb) << 20;
    const char *budget = getenv("WARPWISE_TRACK_BUDGET");
    if (budget && *budget)
        track_budget = strtoull(budget, 0, 10);
    const char *t = getenv("WARPWISE_TIMEOUT");
    if (t && atoi(t) > 0)
        alarm((unsigned)atoi(t));
}
