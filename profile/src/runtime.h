/* warpwise profiler runtime interface.  Pasted at the top of every instrumented
 * (already preprocessed) translation unit, so it must not use any preprocessor
 * directive; runtime.c includes it as a header.
 *
 * Accesses take an inline fast path (`__ww_fast`) when their shadow page is in the
 * page cache, they cover exactly one shadow cell and they cannot reveal a
 * dependence; everything else goes to `__ww_access` in runtime.c, which applies
 * the same rules.  The rules are described there. */
typedef struct __ww_site {
    const char *text;
    const char *array;
    int line;
    int scalar;
    int op;
    /* Index in the runtime's site table, assigned at the first tracked access (the
       instrumented tables leave it 0).  Shadow cells name sites by it. */
    unsigned id;
} __ww_site_t;
typedef struct __ww_vstat {
    unsigned long long count;
    long long min, max;
    long long value[8];
    unsigned long long hits[8];
} __ww_vstat_t;
/* The objects an array parameter pointed to at a loop's entry: entries where it was the
   start of a live block the program allocated (and their sizes), and entries where it was
   not (a global, the stack, an interior pointer, a block allocated where the profiler does
   not see it). */
typedef struct __ww_bstat {
    unsigned long long found, unknown, min, max, total;
} __ww_bstat_t;
typedef struct __ww_loop {
    const char *id;
    const char *function;
    struct __ww_loop *parent;
    int track;
    int nvals;
    const char *const *valnames;
    int nbases;
    const char *const *basenames;
    __ww_vstat_t *vals;
    __ww_bstat_t *bases;
    /* time: clock ticks spent in the loop (see now_ticks in runtime.c) */
    unsigned long long entries, iterations, min_trip, max_trip, time;
    /* times the shadow was cleared at its limit while this loop was tracked */
    unsigned long long shadow_resets;
    /* times tracking was paused while this loop was tracked: past the tracking budget an
       instance of a tracked loop runs untracked unless it is the loop's first, second,
       fourth, eighth... (see __ww_enter in runtime.c) */
    unsigned long long sampled_out;
    void *deps;
} __ww_loop_t;
typedef struct __ww_tu {
    const char *file;
    int nloops;
    __ww_loop_t *loops;
    struct __ww_tu *next;
} __ww_tu_t;
typedef struct __ww_frame {
    __ww_loop_t *loop;
    unsigned long long call;
    unsigned long long iterations;
    /* An untracked loop counts its iterations in a local of the instrumented function
       (a register, so the body still vectorizes); the frame reads it when it closes. */
    unsigned long long *counter;
    long long t0;
    int level;
    /* this frame paused tracking (an instance left out past the tracking budget) */
    int paused;
} __ww_frame_t;
/* Shadow memory comes in blocks of 1 << __WW_BLOCK_BITS bytes of the program's memory,
   made when first touched, so it follows the memory the tracked accesses touch (an
   access every 4 KiB costs one block, not a page); __WW_CACHE blocks are cached. */
enum { __WW_BLOCK_BITS = 10, __WW_CACHE = 1024 };
/* One entry of the direct-mapped cache of shadow blocks: block number, cells (two
   stamps each, write then read) and log2 of the bytes one cell stands for. */
typedef struct __ww_pref {
    unsigned long key;
    unsigned long long *cells;
    unsigned long shift;
} __ww_pref_t;
extern __ww_frame_t *__ww_top;
extern int __ww_tracking;
/* Nonzero while an instance left out by sampling runs: accesses are not watched. */
extern int __ww_paused;
extern unsigned long long __ww_calls;
extern __ww_pref_t __ww_pcache[__WW_CACHE];
/* Last tick handed out; stamps older than __ww_lo (start of the outermost tracked
   instance) or not older than __ww_hi (start of the innermost tracked iteration)
   cannot be carried by any active loop; __ww_cap bounds the ticks a stamp holds. */
extern unsigned long long __ww_tick, __ww_lo, __ww_hi, __ww_cap;
void __ww_register(__ww_tu_t *tu);
void __ww_enter(__ww_loop_t *l, unsigned long long call, unsigned long long *counter);
void __ww_exit(__ww_loop_t *l, unsigned long long call);
void __ww_iter_slow(__ww_loop_t *l, unsigned long long call);
void __ww_leave(unsigned long long call);
void __ww_val(__ww_loop_t *l, int slot, long long v);
void __ww_base(__ww_loop_t *l, int slot, const void *p, unsigned long long array_bytes);
void __ww_object(const void *p, unsigned long long bytes);
/* The allocation functions as the program's own code calls them (the instrumentation
   renames its calls): each keeps the runtime's table of live blocks. */
void *__ww_malloc(__typeof__(sizeof 0) n);
void *__ww_calloc(__typeof__(sizeof 0) count, __typeof__(sizeof 0) n);
void *__ww_realloc(void *p, __typeof__(sizeof 0) n);
void *__ww_aligned_alloc(__typeof__(sizeof 0) alignment, __typeof__(sizeof 0) n);
void __ww_free(void *p);
void __ww_access(const volatile void *p, unsigned long n, __ww_site_t *s, int mode);
static inline unsigned long long __ww_fn(void) { return ++__ww_calls; }
static inline void __ww_iter(__ww_loop_t *l, unsigned long long call)
{
    __ww_frame_t *t = __ww_top;
    if (__builtin_expect(t != 0 && t->loop == l && t->call == call && !l->track, 1))
        t->iterations++;
    else
        __ww_iter_slow(l, call);
}
/* The common access, done in place: returns 0 (nothing changed) when the slow path
   must run.  A stamp is tick << 24 | site id; 0 means never.  `n` is a constant
   `sizeof`, so most of the tests fold away. */
static inline int __ww_fast(const volatile void *p, unsigned long n, __ww_site_t *s, int mode)
{
    unsigned long a = (unsigned long)p, key = a >> __WW_BLOCK_BITS;
    __ww_pref_t *e = &__ww_pcache[(key ^ (key >> 10)) & (__WW_CACHE - 1)];
    unsigned long long *c, w, r, wt, rt, now = __ww_tick + 1, id = s->id;
    if (e->key != key || n != 1ul << e->shift || (a & (n - 1)) != 0 || id == 0
        || now >= __ww_cap)
        return 0;
    c = e->cells + 2 * ((a & ((1ul << __WW_BLOCK_BITS) - 1)) >> e->shift);
    w = c[0];
    r = c[1];
    wt = w >> 24;
    rt = r >> 24;
    /* A write stamp inside [lo, hi) may make a flow (read) or output (write)
       dependence. */
    if (w != 0 && wt >= __ww_lo && wt < __ww_hi)
        return 0;
    if ((mode & 1) && (r == 0 || rt <= wt || rt < __ww_lo)) {
        /* first read since the last write (or since the outermost instance began):
           recorded; a write in the same access then cannot be anti-dependent */
        c[1] = now << 24 | id;
    } else if (mode & 2) {
        if (r != 0 && rt > wt && rt >= __ww_lo && rt < __ww_hi)
            return 0; /* maybe an anti dependence */
    }
    if (mode & 2)
        c[0] = now << 24 | id;
    __ww_tick = now;
    return 1;
}
static inline void __ww_rd(const volatile void *p, unsigned long n, __ww_site_t *s)
{
    if (__ww_tracking != 0 && !__ww_paused && !__ww_fast(p, n, s, 1))
        __ww_access(p, n, s, 1);
}
static inline void __ww_wr(const volatile void *p, unsigned long n, __ww_site_t *s)
{
    if (__ww_tracking != 0 && !__ww_paused && !__ww_fast(p, n, s, 2))
        __ww_access(p, n, s, 2);
}
static inline void __ww_rw(const volatile void *p, unsigned long n, __ww_site_t *s)
{
    if (__ww_tracking != 0 && !__ww_paused && !__ww_fast(p, n, s, 3))
        __ww_access(p, n, s, 3);
}
