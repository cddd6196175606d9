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
 * tracked loop runs, so memory the tracked loops never touch costs nothing. */
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
#include <time.h>
#include <unistd.h>

__ww_frame_t *__ww_top;
int __ww_tracking;
unsigned long long __ww_calls;

static __ww_tu_t *tus;
static __ww_frame_t *frames;
static size_t nframes, capframes;

typedef struct level {
    __ww_loop_t *loop;
    uint64_t inst_start, iter_start;
    uint64_t *starts;
    size_t nstarts, capstarts;
} level_t;
static level_t *levels;
static size_t caplevels;
static uint64_t tick;

typedef struct dep {
    int kind; /* 0 raw, 1 war, 2 waw */
    __ww_site_t *first, *second;
    unsigned long long count;
    long long dmin, dmax;
    struct dep *next;
} dep_t;
static const char *const kind_names[] = { "raw", "war", "waw" };

enum { PAGE_BITS = 12, PAGE = 1 << PAGE_BITS };
typedef struct cell {
    uint64_t wt, rt;
    __ww_site_t *ws, *rs;
} cell_t;
typedef struct page {
    uintptr_t key;
    cell_t *cells;
} page_t;
static page_t *pages;
static size_t npages, cappages;
static uintptr_t last_key = (uintptr_t)-1;
static cell_t *last_cells;

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

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) {
        fputs("warpwise: out of memory in the profiler runtime\n", stderr);
        abort();
    }
    *cap = n;
    return q;
}

/* ---- shadow memory: open addressing on page number, cells per byte ---- */

static cell_t *page_cells(uintptr_t key)
{
    if (key == last_key)
        return last_cells;
    if ((npages + 1) * 2 > cappages) {
        size_t old = cappages;
        page_t *oldp = pages;
        cappages = cappages ? cappages * 2 : 1024;
        pages = calloc(cappages, sizeof *pages);
        if (!pages) {
            fputs("warpwise: out of memory for shadow memory\n", stderr);
            abort();
        }
        for (size_t i = 0; i < old; i++) {
            if (!oldp[i].cells)
                continue;
            size_t h = (oldp[i].key * 0x9E3779B97F4A7C15ULL) & (cappages - 1);
            while (pages[h].cells)
                h = (h + 1) & (cappages - 1);
            pages[h] = oldp[i];
        }
        free(oldp);
    }
    size_t h = (key * 0x9E3779B97F4A7C15ULL) & (cappages - 1);
    while (pages[h].cells && pages[h].key != key)
        h = (h + 1) & (cappages - 1);
    if (!pages[h].cells) {
        pages[h].key = key;
        pages[h].cells = calloc(PAGE, sizeof(cell_t));
        if (!pages[h].cells) {
            fputs("warpwise: out of memory for shadow memory\n", stderr);
            abort();
        }
        npages++;
    }
    last_key = key;
    last_cells = pages[h].cells;
    return last_cells;
}

/* ---- dependences ---- */

static void add_dep(__ww_loop_t *l, int kind, __ww_site_t *first, __ww_site_t *second,
                    long long distance)
{
    dep_t **link = (dep_t **)&l->deps;
    int n = 0;
    for (dep_t *d = *link; d; d = d->next, n++) {
        if (d->kind == kind && d->first == first && d->second == second) {
            d->count++;
            if (distance < d->dmin)
                d->dmin = distance;
            if (distance > d->dmax)
                d->dmax = distance;
            return;
        }
    }
    if (n >= 256)
        return;
    dep_t *d = calloc(1, sizeof *d);
    if (!d)
        return;
    d->kind = kind;
    d->first = first;
    d->second = second;
    d->count = 1;
    d->dmin = d->dmax = distance;
    d->next = *link;
    *link = d;
}

/* The level whose earlier iteration (of its current instance) made stamp t, or -1. */
static int carried_by(uint64_t t)
{
    for (int i = __ww_tracking - 1; i >= 0; i--) {
        level_t *lv = &levels[i];
        if (t >= lv->inst_start && t < lv->iter_start)
            return i;
        if (t >= lv->iter_start)
            continue;
    }
    return -1;
}

static long long distance_of(level_t *lv, uint64_t t)
{
    size_t lo = 0, hi = lv->nstarts; /* first start > t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lv->starts[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long long)lv->nstarts - (long long)lo;
}

void __ww_access(const volatile void *p, unsigned long n, __ww_site_t *s, int mode)
{
    uintptr_t a = (uintptr_t)p;
    uint64_t now = ++tick;
    uint64_t outer = levels[0].inst_start;
    /* One dependence per kind and access, not one per byte. */
    int seen[3] = { 0, 0, 0 };
    /* The bytes of one access usually share their shadow state (an int written as a
       whole): a byte whose state equals the previous byte's gets the same checks and the
       same update, so it only copies the previous result. */
    cell_t before = { 0, 0, 0, 0 }, after = { 0, 0, 0, 0 };
    int have_previous = 0;
    uintptr_t key = (uintptr_t)-1;
    cell_t *cells = 0;
    for (unsigned long k = 0; k < n; k++, a++) {
        if ((a >> PAGE_BITS) != key) {
            key = a >> PAGE_BITS;
            cells = page_cells(key);
        }
        cell_t *c = &cells[a & (PAGE - 1)];
        if (have_previous && c->wt == before.wt && c->rt == before.rt && c->ws == before.ws
            && c->rs == before.rs) {
            *c = after;
            continue;
        }
        before = *c;
        have_previous = 1;
        if (mode & 1) {
            if (c->ws && !seen[0]) {
                int lv = carried_by(c->wt);
                if (lv >= 0) {
                    add_dep(levels[lv].loop, 0, c->ws, s, distance_of(&levels[lv], c->wt));
                    seen[0] = 1;
                }
            }
            if (!c->rs || c->rt <= c->wt || c->rt < outer) {
                c->rt = now;
                c->rs = s;
            }
        }
        if (mode & 2) {
            if (c->rs && c->rt > c->wt && !seen[1]) {
                int lv = carried_by(c->rt);
                if (lv >= 0) {
                    add_dep(levels[lv].loop, 1, c->rs, s, distance_of(&levels[lv], c->rt));
                    seen[1] = 1;
                }
            }
            if (c->ws && !seen[2]) {
                int lv = carried_by(c->wt);
                if (lv >= 0) {
                    add_dep(levels[lv].loop, 2, c->ws, s, distance_of(&levels[lv], c->wt));
                    seen[2] = 1;
                }
            }
            c->wt = now;
            c->ws = s;
        }
        after = *c;
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

static void close_top(long long now)
{
    __ww_frame_t *f = &frames[nframes - 1];
    __ww_loop_t *l = f->loop;
    l->entries++;
    l->iterations += f->iterations;
    if (l->entries == 1 || f->iterations < l->min_trip)
        l->min_trip = f->iterations;
    if (f->iterations > l->max_trip)
        l->max_trip = f->iterations;
    l->time_ns += (unsigned long long)(now - f->t0);
    if (f->level >= 0) {
        __ww_tracking = f->level;
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
        if (t->call > call || (t->call == call && t->loop != l && !is_ancestor(t->loop, l)))
            close_top(now);
        else
            break;
    }
}

void __ww_enter(__ww_loop_t *l, unsigned long long call)
{
    long long now = now_ns();
    unwind(l, call, now);
    if (nframes && frames[nframes - 1].loop == l && frames[nframes - 1].call == call)
        close_top(now); /* re-entered by a backward goto */
    frames = grow(frames, &capframes, nframes + 1, sizeof *frames);
    __ww_frame_t *f = &frames[nframes++];
    f->loop = l;
    f->call = call;
    f->iterations = 0;
    f->t0 = now;
    f->level = -1;
    if (l->track) {
        levels = grow(levels, &caplevels, (size_t)__ww_tracking + 1, sizeof *levels);
        level_t *lv = &levels[__ww_tracking];
        lv->loop = l;
        lv->inst_start = ++tick;
        lv->iter_start = lv->inst_start;
        lv->nstarts = 0;
        f->level = __ww_tracking++;
    }
    __ww_top = f;
    flush_periodically(now);
}

void __ww_exit(__ww_loop_t *l, unsigned long long call)
{
    long long now = now_ns();
    for (size_t i = nframes; i-- > 0;) {
        if (frames[i].loop == l && frames[i].call == call) {
            while (nframes > i)
                close_top(now);
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
        unwind(l, call, now_ns());
        t = __ww_top;
        if (!(t && t->loop == l && t->call == call)) {
            __ww_enter(l, call); /* jumped into the body */
            t = __ww_top;
        }
    }
    t->iterations++;
    if (t->level >= 0) {
        level_t *lv = &levels[t->level];
        lv->iter_start = ++tick;
        lv->starts = grow(lv->starts, &lv->capstarts, lv->nstarts + 1, sizeof *lv->starts);
        lv->starts[lv->nstarts++] = lv->iter_start;
    }
}

void __ww_leave(unsigned long long call)
{
    long long now = 0;
    while (nframes && frames[nframes - 1].call >= call) {
        if (!now)
            now = now_ns();
        close_top(now);
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

/* ---- output ---- */

static void yaml_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void site(FILE *f, const char *key, __ww_site_t *s)
{
    fprintf(f, "        %s: {line: %d, text: ", key, s->line);
    yaml_string(f, s->text);
    fputs(", array: ", f);
    yaml_string(f, s->array);
    fprintf(f, ", scalar: %s", s->scalar ? "true" : "false");
    if (s->op) {
        char op[2] = { (char)s->op, 0 };
        fputs(", op: ", f);
        yaml_string(f, op);
    }
    fputs("}\n", f);
}

static int same_id(__ww_loop_t *a, __ww_loop_t *b)
{
    return strcmp(a->id, b->id) == 0;
}

/* Loops that share an id (a function from a header in several files) are written once. */
static void write_loop(FILE *f, __ww_loop_t *first)
{
    unsigned long long entries = 0, iterations = 0, min_trip = 0, max_trip = 0, time_ns = 0;
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
            time_ns += l->time_ns;
            track |= l->track;
            any_deps |= l->deps != 0;
        }
    }
    fputs("  ", f);
    yaml_string(f, first->id);
    fputs(":\n    function: ", f);
    yaml_string(f, first->function);
    fprintf(f,
            "\n    entries: %llu\n    iterations: %llu\n    min_trip: %llu\n"
            "    max_trip: %llu\n    time_ns: %llu\n    tracked: %s\n",
            entries, iterations, min_trip, max_trip, time_ns, track ? "true" : "false");
    if (first->nvals > 0) {
        fputs("    inbounds:\n", f);
        for (int k = 0; k < first->nvals; k++) {
            __ww_vstat_t *s = &first->vals[k];
            fputs("      ", f);
            yaml_string(f, first->valnames[k]);
            fprintf(f, ": {count: %llu, min: %lld, max: %lld, frequent: [", s->count, s->min,
                    s->max);
            int comma = 0;
            for (int i = 0; i < 8; i++) {
                if (!s->hits[i])
                    continue;
                fprintf(f, "%s{value: %lld, count: %llu}", comma ? ", " : "", s->value[i],
                        s->hits[i]);
                comma = 1;
            }
            fputs("]}\n", f);
        }
    }
    if (any_deps) {
        fputs("    dependences:\n", f);
        for (__ww_tu_t *tu = tus; tu; tu = tu->next) {
            for (int i = 0; i < tu->nloops; i++) {
                __ww_loop_t *l = &tu->loops[i];
                if (!same_id(l, first))
                    continue;
                for (dep_t *d = l->deps; d; d = d->next) {
                    fprintf(f, "      - kind: %s\n        array: ", kind_names[d->kind]);
                    yaml_string(f, d->second->array);
                    fputc('\n', f);
                    site(f, "first", d->first);
                    site(f, "second", d->second);
                    fprintf(f,
                            "        distance_min: %lld\n        distance_max: %lld\n"
                            "        count: %llu\n",
                            d->dmin, d->dmax, d->count);
                }
            }
        }
    }
}

static void write_document(FILE *f, const char *end)
{
    fputs("---\nschema: warpwise/profile/v1\nruns: 1\n", f);
    fprintf(f, "incomplete_runs: %d\nends: [", strcmp(end, "exit") == 0 ? 0 : 1);
    yaml_string(f, end);
    fputs("]\nloops:\n", f);
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
                write_loop(f, l);
                any = 1;
            }
        }
    }
    if (!any)
        fputs("  {}\n", f);
}

static char *render(const char *end, size_t *len)
{
    char *buf = 0;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return 0;
    write_document(f, end);
    fclose(f);
    return buf;
}

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

static char *part_path(void)
{
    size_t n = strlen(out_path) + 64;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.%ld.part", out_path, (long)getpid());
    return p;
}

/* A snapshot that survives SIGKILL: `P.<pid>.part`, replaced atomically. */
static void write_part(const char *end)
{
    size_t len;
    char *buf = render(end, &len);
    char *part = part_path();
    if (buf && part) {
        size_t n = strlen(part) + 8;
        char *tmp = malloc(n);
        if (tmp) {
            snprintf(tmp, n, "%s.tmp", part);
            int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                write_all(fd, buf, len);
                close(fd);
                rename(tmp, part);
            }
            free(tmp);
        }
    }
    free(buf);
    free(part);
}

/* The run's final document, appended to the profile under a lock. */
static void write_final(const char *end)
{
    if (!alive || writing)
        return;
    writing = 1;
    long long now = now_ns();
    while (nframes)
        close_top(now);
    size_t len;
    char *buf = render(end, &len);
    if (buf) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            flock(fd, LOCK_EX);
            write_all(fd, buf, len);
            flock(fd, LOCK_UN);
            close(fd);
            char *part = part_path();
            if (part) {
                unlink(part);
                free(part);
            }
        } else {
            fprintf(stderr, "warpwise: cannot write the profile to %s\n", out_path);
        }
        free(buf);
    }
    alive = 0;
}

static void flush_periodically(long long now)
{
    if (now - last_flush < 1000000000LL || writing)
        return;
    last_flush = now;
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
    char end[32];
    if (sig == SIGALRM) {
        write_final("timeout");
        _exit(124);
    }
    snprintf(end, sizeof end, "signal %d", sig);
    write_final(end);
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
    }
    if (alive)
        return;
    alive = 1;
    const char *p = getenv("WARPWISE_PROFILE");
    out_path = strdup(p && *p ? p : "warpwise-profile.yaml");
    last_flush = now_ns();
    atexit(at_exit);
    int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGALRM };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, 0);
    }
    const char *t = getenv("WARPWISE_TIMEOUT");
    if (t && atoi(t) > 0)
        alarm((unsigned)atoi(t));
}
