/* warpwise snapshot runtime: linked into a program instrumented by `warpwise validate`.
 *
 * At the chosen entry of the loop (WARPWISE_SNAPSHOT_ENTRY, default 1; 0: the first entry
 * that runs an iteration, from the trip count the instrumented code passes) the instrumented
 * code records the inbound scalars and the bytes of every array's section, at the loop's
 * exit the outbound sections, into WARPWISE_SNAPSHOT; then the program stops. When the
 * program ends before that, WARPWISE_SNAPSHOT.entries says how often the loop was entered.
 *
 * Records: tag (1 byte: S scalar, I entry section, O exit section, D value, E end), name
 * length (u32), name, lo (i64), hi (i64), byte count (u64), bytes; little-endian as the
 * host. A value (D) keeps its number in lo. A null pointer's section is recorded as i (at
 * the entry) or o (at the exit): its bounds, no bytes, so that the replay hands the kernel
 * null rather than an empty copy (which `if (p)` would take for a real array). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long long ww_entries;
static long long ww_wanted = 1;
static int ww_taken;
static FILE *ww_out;

static void ww_write_entries(void)
{
    const char *path = getenv("WARPWISE_SNAPSHOT");
    if (!path)
        return;
    size_t n = strlen(path);
    char *name = (char *)malloc(n + 16);
    if (!name)
        return;
    memcpy(name, path, n);
    memcpy(name + n, ".entries", 9);
    FILE *f = fopen(name, "w");
    if (f) {
        fprintf(f, "%lld\n", ww_entries);
        fclose(f);
    }
    free(name);
}

static void ww_fail(const char *what)
{
    fprintf(stderr, "warpwise snapshot: %s\n", what);
    _exit(112);
}

void __ww_snap_value(const char *name, long long value);

int __ww_snap_enter(long long trip)
{
    static int init;
    if (!init) {
        init = 1;
        const char *e = getenv("WARPWISE_SNAPSHOT_ENTRY");
        if (e && *e)
            ww_wanted = atoll(e);
        atexit(ww_write_entries);
    }
    ww_entries++;
    if (ww_taken)
        return 0;
    if (ww_wanted == 0 ? trip <= 0 : ww_entries != ww_wanted)
        return 0;
    ww_taken = 1;
    const char *path = getenv("WARPWISE_SNAPSHOT");
    if (!path)
        ww_fail("WARPWISE_SNAPSHOT is not set");
    ww_out = fopen(path, "wb");
    if (!ww_out)
        ww_fail("cannot write the snapshot file");
    fwrite("WWSNAP1\n", 1, 8, ww_out);
    __ww_snap_value("entry", ww_entries);
    return 1;
}

static void ww_record(int tag, const char *name, long long lo, long long hi, const void *data, unsigned long long n)
{
    unsigned char t = (unsigned char)tag;
    uint32_t len = (uint32_t)strlen(name);
    int64_t l = lo, h = hi;
    uint64_t count = n;
    if (!ww_out)
        return;
    if (fwrite(&t, 1, 1, ww_out) != 1 || fwrite(&len, 4, 1, ww_out) != 1 || fwrite(name, 1, len, ww_out) != len ||
        fwrite(&l, 8, 1, ww_out) != 1 || fwrite(&h, 8, 1, ww_out) != 1 || fwrite(&count, 8, 1, ww_out) != 1 ||
        (n > 0 && fwrite(data, 1, n, ww_out) != n))
        ww_fail("cannot write the snapshot file");
}

/* The bytes [lo, hi) from base. An empty or inverted section is recorded without bytes. */
void __ww_snap_bytes(int tag, const char *name, const void *base, long long lo, long long hi)
{
    /* A pointer the loop tests for null (phonopy's `if (q_direction)`): reading its section
     * would kill the program. Only sections come from pointers; scalars are addresses. */
    if (!base) {
        if (tag != 'I' && tag != 'O')
            ww_fail("a null address for a value");
        ww_record(tag == 'I' ? 'i' : 'o', name, lo, hi, 0, 0);
        return;
    }
    unsigned long long n = hi > lo ? (unsigned long long)(hi - lo) : 0;
    if (n > (1ull << 36))
        ww_fail("a section of more than 64 GiB");
    ww_record(tag, name, lo, hi, n ? (const char *)base + lo : 0, n);
}

void __ww_snap_value(const char *name, long long value)
{
    ww_record('D', name, value, 0, 0, 0);
}

void __ww_snap_done(void)
{
    ww_record('E', "", 0, 0, 0, 0);
    if (ww_out && fclose(ww_out) != 0)
        ww_fail("cannot write the snapshot file");
    ww_out = 0;
    ww_write_entries();
    _exit(0);
}
