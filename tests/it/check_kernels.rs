//! `warpwise check` on fixture kernels, each count checked twice: against the number the
//! fixture expects, and against the addresses the kernel really touches. The kernel is
//! compiled with the CPU shim (`cuda::CPU_SHIM`) and GCC's ThreadSanitizer instrumentation,
//! whose per-access hooks (`__tsan_read4(addr)`, ...) are ours: they log each access of a
//! launch with its thread. The log is cut into warps (32 consecutive linear thread ids of a
//! block) and each warp's distinct 128-byte segments and 32-byte sectors, from the start of
//! the buffer, are counted; an exact static count must equal every full warp's, a bound
//! must hold for each.

use advisor::check::dynamic::{Access, Stats, Tally};
use advisor::check::model::{AccessKind, AccessReport, CheckReport, Coalescing, Divergence};
use advisor::check::{check_units, Options};
use advisor::rules::Code;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// A kernel file and one concrete launch of it.
pub(crate) struct Fixture {
    pub(crate) name: &'static str,
    /// CUDA source; host code that launches the kernel sits under `#ifdef __CUDACC__`
    /// (warpwise defines it as nvcc does; the CPU build does not).
    pub(crate) source: &'static str,
    /// `--set` values.
    pub(crate) set: &'static [(&'static str, i64)],
    pub(crate) kernel: &'static str,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    /// Buffers: (parameter name, element type, elements).
    pub(crate) buffers: &'static [(&'static str, &'static str, usize)],
    /// C++ statements run before the launch (buffers start as poison).
    pub(crate) init: &'static str,
    /// The launch's arguments (buffers by their parameter's name).
    pub(crate) args: &'static str,
}

/// What the report must say of one access.
struct Expect {
    access: &'static str,
    kind: AccessKind,
    requests: u64,
    sectors: u64,
    coalescing: Coalescing,
}

/// Checks `fixture` statically against `expected`, then every count against the run's.
fn check(fixture: &Fixture, expected: &[Expect]) -> CheckReport {
    let report = analysed(fixture);
    let kernel = report
        .kernels
        .iter()
        .find(|k| k.kernel == fixture.kernel)
        .unwrap_or_else(|| panic!("{}: no kernel {}", fixture.name, fixture.kernel));
    let run = Run::of(fixture);
    for e in expected {
        let a = kernel
            .accesses
            .iter()
            .find(|a| a.access == e.access && a.kind == e.kind)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no {:?} `{}` in {kernel:#?}",
                    fixture.name, e.kind, e.access
                )
            });
        let what = format!("{}: `{}`: {a:#?}", fixture.name, e.access);
        assert_eq!(a.requests.value, Some(e.requests), "requests of {what}");
        assert_eq!(a.sectors.value, Some(e.sectors), "sectors of {what}");
        assert_eq!(a.coalescing, e.coalescing, "{what}");
        run.agrees(a, &what);
    }
    report
}

/// `source`'s report, checked statically only (no run): the fixture of a kernel whose
/// counts the test reads without a launch.
fn analysed_source(name: &'static str, source: &'static str) -> CheckReport {
    analysed(&Fixture {
        name,
        source,
        set: &[],
        kernel: name,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        buffers: &[],
        init: "",
        args: "",
    })
}

pub(crate) fn analysed(fixture: &Fixture) -> CheckReport {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{}.cu", fixture.name));
    std::fs::write(&file, fixture.source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
    assert!(
        unit.lowered.errors.is_empty(),
        "{}: {:?}",
        fixture.name,
        unit.lowered.errors
    );
    let options = Options {
        set: fixture
            .set
            .iter()
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
    };
    check_units(&[unit], &options)
}

/// One access of the log: the thread's block and linear id in the block, read or write,
/// bytes, and the offset in its buffer.
struct Event {
    block: (u32, u32, u32),
    thread: u32,
    write: bool,
    bytes: u64,
    offset: u64,
}

/// A warp of a launch: its block, and its index in the block.
pub(crate) type Warp = ((u32, u32, u32), u32);

/// The accesses a launch of the fixture made, by buffer.
pub(crate) struct Run {
    events: BTreeMap<String, Vec<Event>>,
}

const HOOKS: &str = r#"/* ThreadSanitizer's hooks: every access of the instrumented file calls one. */
void ww_note(const void *addr, int size, int write);
#define HOOKS(n) \
    void __tsan_read##n(void *a) { ww_note(a, n, 0); } \
    void __tsan_unaligned_read##n(void *a) { ww_note(a, n, 0); } \
    void __tsan_write##n(void *a) { ww_note(a, n, 1); } \
    void __tsan_unaligned_write##n(void *a) { ww_note(a, n, 1); }
HOOKS(1) HOOKS(2) HOOKS(4) HOOKS(8) HOOKS(16)
void __tsan_init(void) {}
void __tsan_func_entry(void *p) { (void)p; }
void __tsan_func_exit(void *p) { (void)p; }
void __tsan_read_range(void *a, long n) { (void)a; (void)n; }
void __tsan_write_range(void *a, long n) { (void)a; (void)n; }
void __tsan_vptr_update(void *a, void *b) { (void)a; (void)b; }
void __tsan_vptr_read(void *a) { (void)a; }
"#;

impl Run {
    pub(crate) fn of(fixture: &Fixture) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("warpwise_cuda_cpu.h"), cuda::CPU_SHIM).unwrap();
        std::fs::write(d.join("kernel.cu"), fixture.source).unwrap();
        std::fs::write(d.join("hooks.c"), HOOKS).unwrap();
        std::fs::write(d.join("main.cpp"), harness(fixture)).unwrap();
        let run = |program: &str, args: &[&str]| {
            let out = Command::new(program)
                .current_dir(d)
                .args(args)
                .output()
                .unwrap_or_else(|e| panic!("{program}: {e}"));
            assert!(
                out.status.success(),
                "{}: {program} {args:?}: {}",
                fixture.name,
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run("cc", &["-c", "hooks.c", "-o", "hooks.o"]);
        run(
            "c++",
            &[
                "-x",
                "c++",
                "-std=c++14",
                "-O1",
                "-fsanitize=thread",
                "-I",
                ".",
                "-c",
                "main.cpp",
                "-o",
                "main.o",
            ],
        );
        run("c++", &["main.o", "hooks.o", "-o", "kernel"]);
        run("./kernel", &["log.txt"]);
        Run::read(
            &std::fs::read_to_string(d.join("log.txt")).unwrap(),
            fixture,
        )
    }

    fn read(log: &str, fixture: &Fixture) -> Run {
        let mut buffers: Vec<(String, u64, u64)> = Vec::new();
        let mut events: BTreeMap<String, Vec<Event>> = BTreeMap::new();
        let [bx, by, _] = fixture.block;
        for line in log.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            if w[0] == "buffer" {
                buffers.push((
                    w[1].to_string(),
                    w[2].parse().unwrap(),
                    w[3].parse().unwrap(),
                ));
                continue;
            }
            let n = |k: usize| w[k].parse::<u64>().unwrap();
            let addr = n(8);
            let Some((name, base, _)) = buffers
                .iter()
                .find(|(_, base, bytes)| (*base..base + bytes).contains(&addr))
            else {
                continue;
            };
            let (tx, ty, tz) = (n(3) as u32, n(4) as u32, n(5) as u32);
            events.entry(name.clone()).or_default().push(Event {
                block: (n(0) as u32, n(1) as u32, n(2) as u32),
                thread: tx + ty * bx + tz * bx * by,
                write: w[6] == "w",
                bytes: n(7),
                offset: addr - base,
            });
        }
        Run { events }
    }

    /// Distinct granules of `line` bytes per warp (block, warp index), for the accesses of
    /// `buffer` that read (`write` false) or write.
    fn per_warp(
        &self,
        buffer: &str,
        write: bool,
        line: u64,
    ) -> BTreeMap<((u32, u32, u32), u32), usize> {
        let mut granules: BTreeMap<Warp, BTreeSet<u64>> = BTreeMap::new();
        for e in self.events.get(buffer).into_iter().flatten() {
            if e.write != write {
                continue;
            }
            let set = granules.entry((e.block, e.thread / 32)).or_default();
            set.extend(e.offset / line..=(e.offset + e.bytes - 1) / line);
        }
        granules.into_iter().map(|(k, s)| (k, s.len())).collect()
    }

    /// Per execution of a warp's accesses of `buffer` (reads or writes; a lane's `n`-th
    /// access pairs with the other lanes' `n`-th, so an access in a loop of the thread
    /// counts each iteration apart), the fewest and most 128-byte segments and 32-byte
    /// sectors, full warps and partial ones together: counted by `check --dynamic`'s tally.
    pub(crate) fn per_execution(&self, buffer: &str, write: bool) -> Stats {
        let mut tally = Tally::new();
        for e in self.events.get(buffer).into_iter().flatten() {
            if e.write != write {
                continue;
            }
            let (x, y, z) = e.block;
            tally.note(Access {
                site: 0,
                launch: 0,
                block: u64::from(x) | (u64::from(y) << 21) | (u64::from(z) << 42),
                thread: e.thread,
                block_threads: 1024,
                addr: e.offset,
                bytes: e.bytes as u32,
            });
        }
        let mut all = Stats::default();
        for site in tally.finish() {
            all.merge(&site.full);
            all.merge(&site.partial);
        }
        all
    }

    /// The static counts of `a` hold for every warp of the run.
    fn agrees(&self, a: &AccessReport, what: &str) {
        let buffer = a
            .array
            .as_deref()
            .unwrap_or_else(|| panic!("no array: {what}"));
        let write = a.kind != AccessKind::Load;
        for (count, line) in [(&a.requests, 128), (&a.sectors, 32)] {
            let warps = self.per_warp(buffer, write, line);
            assert!(!warps.is_empty(), "the run made no such access: {what}");
            let most = count.value.unwrap() as usize;
            let fewest = count
                .min
                .as_deref()
                .map_or(most, |m| m.parse::<usize>().unwrap());
            for (warp, seen) in &warps {
                if count.exact {
                    assert_eq!(*seen, most, "warp {warp:?}, {line}-byte granules: {what}");
                } else {
                    assert!(
                        (fewest..=most).contains(seen),
                        "warp {warp:?}: {seen} {line}-byte granules outside [{fewest}, {most}]: {what}"
                    );
                }
            }
        }
    }

    /// How many warps the threads that wrote `buffer` split: (warps where some but not all
    /// of the 32 threads wrote, warps where any wrote).
    pub(crate) fn split_warps(&self, buffer: &str) -> (usize, usize) {
        let mut writers: BTreeMap<Warp, BTreeSet<u32>> = BTreeMap::new();
        for e in self
            .events
            .get(buffer)
            .into_iter()
            .flatten()
            .filter(|e| e.write)
        {
            writers
                .entry((e.block, e.thread / 32))
                .or_default()
                .insert(e.thread);
        }
        let split = writers.values().filter(|t| t.len() < 32).count();
        (split, writers.len())
    }
}

/// The C++ program that launches the fixture's kernel once on the CPU and logs its
/// accesses to the file named by its argument.
fn harness(f: &Fixture) -> String {
    let mut s = String::from(
        "#include \"warpwise_cuda_cpu.h\"\n#include <stdint.h>\n\
         static int ww_log_on;\nstatic FILE *ww_log_file;\n\
         extern \"C\" __attribute__((no_sanitize(\"thread\"))) void ww_note(const void *a, int size, int write) {\n\
         \x20   if (!ww_log_on) return;\n\
         \x20   fprintf(ww_log_file, \"%u %u %u %u %u %u %c %d %lu\\n\", blockIdx.x, blockIdx.y, blockIdx.z,\n\
         \x20           threadIdx.x, threadIdx.y, threadIdx.z, write ? 'w' : 'r', size, (unsigned long)(uintptr_t)a);\n\
         }\n#include \"kernel.cu\"\n\
         int main(int argc, char **argv) {\n\
         \x20   (void)argc;\n    ww_log_file = fopen(argv[1], \"w\");\n",
    );
    for (name, ty, count) in f.buffers {
        s.push_str(&format!(
            "    {ty} *{name};\n    cudaMalloc((void **)&{name}, {count} * sizeof({ty}));\n\
             \x20   fprintf(ww_log_file, \"buffer {name} %lu %lu\\n\", (unsigned long)(uintptr_t){name}, (unsigned long)({count} * sizeof({ty})));\n"
        ));
    }
    let [gx, gy, gz] = f.grid;
    let [bx, by, bz] = f.block;
    s.push_str(&format!(
        "    {}\n    ww_log_on = 1;\n    ww_cpu_launch({}, dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), 0, {});\n\
         \x20   ww_log_on = 0;\n    fclose(ww_log_file);\n    return 0;\n}}\n",
        f.init, f.kernel, f.args
    ));
    s
}

const ONE_D: &str = r#"struct P12 { float x, y, z; };
struct P16 { float x, y, z, w; };

__global__ void coalesced(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void column(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * n];
}

__global__ void structs12(const struct P12 *p, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = p[i].x;
}

__global__ void structs16(const struct P16 *q, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = q[i].y;
}

__global__ void shifted(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
}

__global__ void gather(const float *in, const int *idx, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}

template <int step>
__device__ void load_every(const float *in, int base, float &x)
{
    x = in[base * step];
}

__global__ void helper(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v;
    load_every<2>(in, i, v);
    out[i] = v;
}

__global__ void uniform_pick(const float *in, float *out, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int start = base == 0 ? 2 * blockIdx.x * blockDim.x + threadIdx.x : 32 * base + threadIdx.x;
    out[i] = in[start];
}

__global__ void lane_pick(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int start = (threadIdx.x & 1) ? 2 * blockIdx.x * blockDim.x + threadIdx.x : 64 + threadIdx.x;
    out[i] = in[start];
}
"#;

/// A 1-D launch of a kernel of [`ONE_D`]: 2 blocks of 64 threads.
fn one_d(
    kernel: &'static str,
    set: &'static [(&'static str, i64)],
    buffers: &'static [(&'static str, &'static str, usize)],
    init: &'static str,
    args: &'static str,
) -> Fixture {
    Fixture {
        name: kernel,
        source: ONE_D,
        set,
        kernel,
        grid: [2, 1, 1],
        block: [64, 1, 1],
        buffers,
        init,
        args,
    }
}

fn load(access: &'static str, requests: u64, sectors: u64, coalescing: Coalescing) -> Expect {
    Expect {
        access,
        kind: AccessKind::Load,
        requests,
        sectors,
        coalescing,
    }
}

fn store(access: &'static str, requests: u64, sectors: u64, coalescing: Coalescing) -> Expect {
    Expect {
        access,
        kind: AccessKind::Store,
        requests,
        sectors,
        coalescing,
    }
}

/// Two forms of an address chosen by a branch every lane of a warp takes alike (`base ==
/// 0`, a parameter): a warp reads one form, so the count is one form's, not both together.
#[test]
fn forms_chosen_alike_by_every_lane_count_as_one() {
    let report = check(
        &one_d(
            "uniform_pick",
            &[],
            &[("in", "float", 256), ("out", "float", 128)],
            "",
            "in, out, 0",
        ),
        &[load("in[start]", 1, 4, Coalescing::Coalesced)],
    );
    let kernel = report
        .kernels
        .iter()
        .find(|k| k.kernel == "uniform_pick")
        .unwrap();
    let a = &kernel.accesses[0];
    assert!(
        a.assumptions
            .iter()
            .any(|n| n.contains("every lane of a warp takes alike")),
        "{a:#?}"
    );
    // Chosen by the lane: both forms together, a bound (1 to 2 requests), not one form's.
    let kernel = report
        .kernels
        .iter()
        .find(|k| k.kernel == "lane_pick")
        .unwrap();
    let a = &kernel.accesses[0];
    assert_eq!(
        (a.requests.max.as_str(), a.requests.exact),
        ("2", false),
        "{a:#?}"
    );
    assert_eq!(a.coalescing, Coalescing::Misaligned, "{a:#?}");
}

/// A device function's accesses are the calling kernel's, counted with the arguments it
/// passes: a value template's argument and an out-parameter by reference (C++ the CPU build
/// compiles as written).
#[test]
fn a_device_function_is_read_where_the_kernel_calls_it() {
    let report = check(
        &one_d(
            "helper",
            &[],
            &[("in", "float", 256), ("out", "float", 128)],
            "",
            "in, out",
        ),
        &[
            load("in[base * step]", 2, 8, Coalescing::Uncoalesced),
            store("out[i]", 1, 4, Coalescing::Coalesced),
        ],
    );
    let kernel = report
        .kernels
        .iter()
        .find(|k| k.kernel == "helper")
        .unwrap();
    let inside = kernel
        .accesses
        .iter()
        .find(|a| a.access == "in[base * step]")
        .unwrap();
    assert_eq!(inside.via.len(), 1, "{inside:#?}");
    assert_eq!(inside.via[0].callee, "load_every");
    assert!(inside.via[0].at.ends_with("helper.cu:50:5"), "{inside:#?}");
    // What is left is `v`, the local the reference points to.
    assert_eq!(kernel.not_analysed, ["2 local-memory accesses"]);
}

#[test]
fn a_thread_per_element_is_coalesced() {
    check(
        &one_d(
            "coalesced",
            &[],
            &[("in", "float", 128), ("out", "float", 128)],
            "",
            "in, out",
        ),
        &[
            load("in[i]", 1, 4, Coalescing::Coalesced),
            store("out[i]", 1, 4, Coalescing::Coalesced),
        ],
    );
}

#[test]
fn a_walk_down_a_column_is_uncoalesced() {
    let report = check(
        &one_d(
            "column",
            &[("n", 64)],
            &[("in", "float", 128 * 64), ("out", "float", 128)],
            "",
            "in, out, 64",
        ),
        &[load("in[i * n]", 32, 32, Coalescing::Uncoalesced)],
    );
    let a = &report.kernels[1].accesses[0];
    let finding = a.finding.as_ref().expect("a finding");
    assert_eq!(finding.code, advisor::rules::Code::WW201);
    assert!(
        finding.help.as_deref().unwrap().contains("column"),
        "{finding:?}"
    );
    // Without the value the count is the expression, uncoalesced when rows have two
    // elements or more.
    let symbolic = analysed(&one_d("column", &[], &[], "", ""));
    let a = &symbolic.kernels[1].accesses[0];
    assert_eq!(a.access, "in[i * n]");
    assert_eq!(a.requests.max, "min(32, n)");
    assert_eq!(a.sectors.max, "min(32, 4*n)");
    assert_eq!(a.when.as_deref(), Some("n > 1"));
    assert_eq!(a.coalescing, Coalescing::Uncoalesced);
}

#[test]
fn arrays_of_structures_are_uncoalesced_with_the_structure_of_arrays_fix() {
    for (kernel, access, requests, sectors, buffer) in [
        ("structs12", "p[i].x", 3, 12, ("p", "P12", 128)),
        ("structs16", "q[i].y", 4, 16, ("q", "P16", 128)),
    ] {
        let buffers: &'static [(&str, &str, usize)] =
            Box::leak(vec![buffer, ("out", "float", 128)].into_boxed_slice());
        let args: &'static str = Box::leak(format!("{}, out", buffer.0).into_boxed_str());
        let report = check(
            &one_d(kernel, &[], buffers, "", args),
            &[load(access, requests, sectors, Coalescing::Uncoalesced)],
        );
        let a = report
            .kernels
            .iter()
            .flat_map(|k| &k.accesses)
            .find(|a| a.access == access)
            .unwrap();
        let help = a.finding.as_ref().and_then(|f| f.help.clone()).unwrap();
        assert!(help.contains("structure of arrays"), "{help}");
    }
}

#[test]
fn one_element_off_is_misaligned() {
    check(
        &one_d(
            "shifted",
            &[],
            &[("in", "float", 129), ("out", "float", 128)],
            "",
            "in, out",
        ),
        &[load("in[i + 1]", 2, 5, Coalescing::Misaligned)],
    );
}

#[test]
fn a_gather_is_bounded_with_its_reason() {
    let report = check(
        &one_d(
            "gather",
            &[],
            &[
                ("in", "float", 128),
                ("idx", "int", 128),
                ("out", "float", 128),
            ],
            "for (int k = 0; k < 128; k++) idx[k] = (k * 37) % 128;",
            "in, idx, out",
        ),
        &[
            load("idx[i]", 1, 4, Coalescing::Coalesced),
            load("in[idx[i]]", 32, 32, Coalescing::DataDependent),
        ],
    );
    let a = report.kernels[5]
        .accesses
        .iter()
        .find(|a| a.access == "in[idx[i]]")
        .unwrap();
    assert_eq!(a.requests.min.as_deref(), Some("1"));
    assert!(
        a.reason
            .as_deref()
            .unwrap()
            .contains("`idx[blockIdx.x * blockDim.x + threadIdx.x]`"),
        "{a:?}"
    );
    // A gather by data each lane reads: WW201 with the range, "may".
    let finding = a.finding.as_ref().unwrap();
    assert_eq!(finding.code.to_string(), "WW201");
    assert!(
        finding.message.contains("may take 1 to 32 sectors"),
        "{finding:?}"
    );
}

const TWO_D: &str = r#"__global__ void tile(float *a, int width)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    a[y * width + x] = 0;
}

__global__ void first_column(float *a, int width)
{
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    a[y * width] = 0;
}

#ifdef __CUDACC__
void run(float *a, int width)
{
    dim3 block(16, 16);
    tile<<<dim3(width / 16, width / 16), block>>>(a, width);
    first_column<<<dim3(1, width / 16), block>>>(a, width);
}
#endif
"#;

#[test]
fn a_column_needs_a_sector_per_row() {
    // A warp of 16x16 spans two rows: two addresses, one sector each, each row's lanes on
    // one address: a broadcast per row, not an uncoalesced access (no order of the threads
    // puts two rows' addresses in one sector).
    let report = check(
        &Fixture {
            name: "first_column",
            source: TWO_D,
            set: &[],
            kernel: "first_column",
            grid: [1, 4, 1],
            block: [16, 16, 1],
            buffers: &[("a", "float", 64 * 64)],
            init: "",
            args: "a, 64",
        },
        &[store("a[y * width]", 2, 2, Coalescing::Broadcast)],
    );
    let a = &report.kernels[1].accesses[0];
    assert_eq!((a.warp_bytes, a.ideal_sectors), (8, 1));
}

#[test]
fn a_block_sixteen_wide_takes_two_rows_per_warp_from_its_launch() {
    let fixture = Fixture {
        name: "tile",
        source: TWO_D,
        set: &[],
        kernel: "tile",
        grid: [4, 4, 1],
        block: [16, 16, 1],
        buffers: &[("a", "float", 64 * 64)],
        init: "",
        args: "a, 64",
    };
    let report = check(
        &fixture,
        &[store("a[y * width + x]", 2, 4, Coalescing::Coalesced)],
    );
    let k = &report.kernels[0];
    assert_eq!(k.block.x.value(), Some(16));
    assert_eq!(k.block.y.value(), Some(16));
    assert!(
        k.block.from[0].starts_with("the launch at "),
        "{:?}",
        k.block
    );
    // `--set` wins over the launch: 32 wide, a warp is one row of 128 bytes.
    let wide = analysed(&Fixture {
        set: &[("blockDim.x", 32)],
        ..fixture
    });
    let a = &wide.kernels[0].accesses[0];
    assert_eq!((a.requests.value, a.sectors.value), (Some(1), Some(4)));
}

const BRANCHES: &str = r#"__global__ void branches(const float *in, float *uniform, float *edge, float *parity, float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0)
        uniform[i] = 1;
    if (i < n)
        edge[i] = 1;
    if (threadIdx.x % 2 == 0)
        parity[i] = 1;
    if (in[i] > 0)
        data[i] = 1;
}
"#;

#[test]
fn branches_split_no_warp_some_warps_or_every_warp() {
    let fixture = Fixture {
        name: "branches",
        source: BRANCHES,
        set: &[],
        kernel: "branches",
        grid: [2, 1, 1],
        block: [64, 1, 1],
        buffers: &[
            ("in", "float", 128),
            ("uniform", "float", 128),
            ("edge", "float", 128),
            ("parity", "float", 128),
            ("data", "float", 128),
        ],
        init: "for (int k = 0; k < 128; k++) in[k] = (k % 3) - 1.0f;",
        args: "in, uniform, edge, parity, data, 100",
    };
    let report = analysed(&fixture);
    let divergence: Vec<(&str, Divergence, Option<Code>)> = report.kernels[0]
        .branches
        .iter()
        .map(|b| {
            (
                b.condition.as_str(),
                b.divergence,
                b.finding.as_ref().map(|f| f.code),
            )
        })
        .collect();
    // A branch that splits warps carries WW203; one whose threads agree, nothing.
    assert_eq!(
        divergence,
        [
            ("blockIdx.x > 0", Divergence::Never, None),
            ("i < n", Divergence::SomeWarps, Some(Code::WW203)),
            (
                "threadIdx.x % 2 == 0",
                Divergence::EveryWarp,
                Some(Code::WW203)
            ),
            ("in[i] > 0", Divergence::DataDependent, Some(Code::WW203)),
        ]
    );
    // The finding names the condition, the class and why, at the branch's line, with the
    // fix its class calls for.
    for (b, (class, help)) in report.kernels[0].branches[1..].iter().zip([
        ("some warps", "usually fine"),
        ("every warp", "renumber the work"),
        ("data-dependent", "sort or bin the work"),
    ]) {
        let f = b.finding.as_ref().unwrap();
        assert!(
            f.message.contains(&format!("`{}`", b.condition))
                && f.message.contains(class)
                && f.message.contains(&b.why),
            "{f:?}"
        );
        let line: u32 = b.at.rsplit(':').nth(1).unwrap().parse().unwrap();
        assert_eq!(f.lines, [line]);
        assert!(f.help.as_deref().unwrap().contains(help), "{f:?}");
    }
    // The run: which warps' threads split over each branch.
    let run = Run::of(&fixture);
    assert_eq!(run.split_warps("uniform"), (0, 2), "whole warps or none");
    assert_eq!(
        run.split_warps("edge"),
        (1, 4),
        "only the warp holding thread 100"
    );
    assert_eq!(run.split_warps("parity"), (4, 4), "every warp");
    let (split, _) = run.split_warps("data");
    assert!(split > 0, "the data splits warps");
}

/// A 16-wide block's warp spans two rows; an address the same along each row (`a[ty * n]`)
/// is two broadcasts, a sector per row, not an uncoalesced access (no reordering of the
/// threads reads it in fewer).
#[test]
fn a_broadcast_per_row_is_a_broadcast() {
    const SOURCE: &str = r#"__global__ void rows(const float *a, float *out, int n)
{
    out[threadIdx.y * 16 + threadIdx.x] = a[threadIdx.y * n];
}
"#;
    let fixture = Fixture {
        name: "rows",
        source: SOURCE,
        set: &[("blockDim.x", 16), ("blockDim.y", 16), ("n", 64)],
        kernel: "rows",
        grid: [1, 1, 1],
        block: [16, 16, 1],
        buffers: &[("a", "float", 1024), ("out", "float", 256)],
        init: "",
        args: "a, out, 64",
    };
    let report = check(
        &fixture,
        &[load("a[threadIdx.y * n]", 2, 2, Coalescing::Broadcast)],
    );
    let a = report.kernels[0]
        .accesses
        .iter()
        .find(|a| a.access == "a[threadIdx.y * n]")
        .unwrap();
    assert!(a.finding.is_none(), "{a:#?}");
    assert!(
        a.reason.as_deref().unwrap().contains("a sector per row"),
        "{a:#?}"
    );
}

/// Under a guard on data read per thread, which lanes run an access is the data's: a
/// misaligned full warp costs a segment more, which the lanes the data picks may not (one
/// lane never does), so that verdict is unknown and its counts bounds from 1; a stride that
/// gives each lane its own sector wastes it for any lanes together, so uncoalesced stands.
#[test]
fn a_guard_on_data_leaves_misalignment_unknown_and_strides_uncoalesced() {
    const SOURCE: &str = r#"__global__ void found(const int *keys, const int *rows, int *out, int key)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (keys[t] == key)
        out[blockIdx.x] = rows[t + 1];
    if (keys[t] > key)
        out[t] = rows[32 * t];
}
"#;
    let report = analysed_source("found", SOURCE);
    let access = |text: &str| {
        report.kernels[0]
            .accesses
            .iter()
            .find(|a| a.access == text)
            .unwrap_or_else(|| panic!("no {text}: {:#?}", report.kernels[0].accesses))
    };
    let shifted = access("rows[t + 1]");
    assert_eq!(shifted.coalescing, Coalescing::Unknown, "{shifted:#?}");
    assert_eq!(
        (
            shifted.sectors.min.as_deref(),
            shifted.sectors.max.as_str(),
            shifted.sectors.exact
        ),
        (Some("1"), "5", false)
    );
    assert!(shifted
        .reason
        .as_deref()
        .unwrap()
        .contains("depends on data"));
    let strided = access("rows[32 * t]");
    assert_eq!(strided.coalescing, Coalescing::Uncoalesced, "{strided:#?}");
    assert_eq!(strided.sectors.value, Some(32));
    // The guard on the thread index alone (none here) is not data: `keys[t]` is.
    assert!(shifted
        .active
        .as_deref()
        .unwrap()
        .contains("keys[t] == key"));
}

/// `__constant__` memory is the same for every thread whenever it is read: a value read
/// from it inside a loop threads leave at different iterations is still uniform after the
/// loop, and a condition that divides the thread index by it is not "data read per
/// thread" but a remainder whose period along the threads is that value (`periodic`).
#[test]
fn constant_memory_is_uniform_and_no_data_read_per_thread() {
    const SOURCE: &str = r#"__constant__ int rows;
__constant__ int limit;

__global__ void walk(float *out)
{
    int i = threadIdx.x;
    int lim;
    for (;;) {
        lim = limit;
        if (i >= lim)
            break;
        if ((i + 1) % rows == 0)
            out[i] = 1;
        i += blockDim.x;
    }
    if (lim > 4)
        out[threadIdx.x] = 2;
}
"#;
    let report = analysed_source("walk", SOURCE);
    let classes: Vec<(&str, Divergence)> = report.kernels[0]
        .branches
        .iter()
        .map(|b| (b.condition.as_str(), b.divergence))
        .collect();
    assert_eq!(
        classes,
        [
            ("i >= lim", Divergence::SomeWarps),
            ("lim > 4", Divergence::Never),
            ("(i + 1) % rows == 0", Divergence::Periodic),
        ],
        "{:#?}",
        report.kernels[0].branches
    );
}

/// Branches whose sides only choose a value: a `min` written as a branch, a `max` as an
/// `if` alone, a choice between two values, and a guarded load (which a select would run
/// out of bounds, so it keeps the fix of its class).
const CHOICES: &str = r#"__global__ void choices(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
    float y = b[i];
    float lo;
    if (x < y)
        lo = x;
    else
        lo = y;
    float hi = 0;
    if (x > hi)
        hi = x;
    float v;
    if (threadIdx.x % 2 == 0)
        v = x * 2;
    else
        v = y + 1;
    float g = 0;
    if (i < n)
        g = b[i + 1];
    out[i] = lo + hi + v + g;
}
"#;

#[test]
fn a_branch_that_only_chooses_a_value_is_told_to_select() {
    let report = analysed_source("choices", CHOICES);
    let helps: Vec<(&str, &str)> = report.kernels[0]
        .branches
        .iter()
        .map(|b| {
            let f = b.finding.as_ref().expect("a WW203 finding");
            (b.condition.as_str(), f.help.as_deref().unwrap())
        })
        .collect();
    let says = |condition: &str, part: &str| {
        let help = helps.iter().find(|(c, _)| *c == condition).unwrap().1;
        assert!(help.contains(part), "`{condition}`: {help}");
    };
    says("x < y", "`min`/`max`");
    says("x > hi", "`min`/`max`");
    says("threadIdx.x % 2 == 0", "compute both and select");
    says("i < n", "usually fine");
    assert_eq!(helps.len(), 4, "{helps:?}");
}

#[test]
fn the_text_report_reads_as_documented() {
    let report = analysed(&one_d("structs12", &[], &[], "", ""));
    let text = advisor::check::text::render(&report);
    let text = text.replace(&*std::env::temp_dir().to_string_lossy(), "TMP");
    let text = regex::Regex::new(r"TMP/[^/]+/")
        .unwrap()
        .replace_all(&text, "");
    insta::assert_snapshot!(text);
}

#[test]
fn the_command_line_checks_and_formats() {
    let dir = crate::common::scratch("check", "cli");
    let file = dir.join("tile.cu");
    std::fs::write(&file, TWO_D).unwrap();
    let file = file.to_string_lossy().to_string();
    let json = crate::common::warpwise(&["check", "--format", "json", &file]);
    assert!(json.status.success(), "{}", crate::common::text(&json));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["schema"], "warpwise/check-report/v1");
    assert_eq!(value["kernels"][0]["block"]["x"], 16);
    assert_eq!(value["kernels"][0]["accesses"][0]["sectors"]["value"], 4);
    let wide =
        crate::common::warpwise(&["check", "--format", "yaml", "--set", "blockDim.x=32", &file]);
    let yaml = String::from_utf8_lossy(&wide.stdout);
    assert!(yaml.contains("--set blockDim.x=32"), "{yaml}");
    let bad = crate::common::warpwise(&["check", "--set", "blockDim.x", &file]);
    assert_eq!(bad.status.code(), Some(2));
    let none = crate::common::warpwise(&["check", "/nonexistent.cu"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(Path::new(&file).exists());
}

/// A CUDA source included into another (`#include "kernels.cu"`, as Rodinia's benchmarks
/// build one translation unit) is checked whole: its `static` kernels too, launched or not,
/// and its static device helpers where a kernel calls them.
#[test]
fn the_static_kernels_of_an_included_cuda_source_are_checked() {
    let dir = crate::common::scratch("check", "included");
    std::fs::write(
        dir.join("kernels.cu"),
        "#ifndef KERNELS_CU\n#define KERNELS_CU\n\
         static __device__ int twice(int i) { return 2 * i; }\n\
         __global__ static void strided(float *a) { a[twice(threadIdx.x)] = 0; }\n\
         #endif\n",
    )
    .unwrap();
    let main = dir.join("main.cu");
    std::fs::write(
        &main,
        "#include \"kernels.cu\"\nint main(void) { return 0; }\n",
    )
    .unwrap();
    let out = crate::common::warpwise(&["check", "--format", "json", &main.to_string_lossy()]);
    assert!(out.status.success(), "{}", crate::common::text(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernels = value["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 1, "{value}");
    assert_eq!(kernels[0]["kernel"], "strided");
    let access = &kernels[0]["accesses"][0];
    assert_eq!(access["access"], "a[twice(threadIdx.x)]", "{value}");
    assert_eq!(access["sectors"]["value"], 8, "{value}");
}

/// A value template's arguments and a launch's constant arguments settle the kernel's
/// parameters when every launch agrees; where launches disagree the parameter stays a
/// symbol (the count is its expression).
#[test]
fn constant_launch_arguments_settle_parameters_and_template_values() {
    let dir = crate::common::scratch("check", "settled");
    let file = dir.join("stride.cu");
    std::fs::write(
        &file,
        "template <int step> __global__ void every(float *a, int n) { a[threadIdx.x * step + n] = 0; }\n\
         __global__ void both(float *a, int s) { a[threadIdx.x * s] = 0; }\n\
         int main(void) {\n\
           float *d = 0;\n\
           every<2><<<4, 32>>>(d, 0);\n\
           both<<<4, 32>>>(d, 1);\n\
           both<<<4, 32>>>(d, 8);\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    let out = crate::common::warpwise(&["check", "--format", "json", &file.to_string_lossy()]);
    assert!(out.status.success(), "{}", crate::common::text(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernel = |name: &str| {
        value["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kernel"] == name)
            .unwrap_or_else(|| panic!("no kernel {name}: {value}"))
            .clone()
    };
    let every = kernel("every");
    // 32 floats 8 bytes apart: 256 bytes, 2 requests, 8 sectors.
    assert_eq!(every["accesses"][0]["sectors"]["value"], 8, "{every}");
    assert_eq!(every["accesses"][0]["requests"]["value"], 2, "{every}");
    let notes = every["assumptions"].to_string();
    assert!(notes.contains("every launch passes `step` = 2"), "{notes}");
    assert!(notes.contains("every launch passes `n` = 0"), "{notes}");
    let both = kernel("both");
    assert!(both["accesses"][0]["sectors"]["value"].is_null(), "{both}");
    assert!(!both["assumptions"].to_string().contains("`s` ="), "{both}");
}

/// Shared arrays at file scope, so that the CPU build (where `__shared__` is nothing) has
/// one copy the harness can find and log; blocks run one after the other there, so a block
/// has it to itself as on the GPU.
const SHARED: &str = r#"__shared__ float tile[32][32];
__shared__ float padded[32][33];
__shared__ float flat[64];
__shared__ float square[16][16];
__shared__ double wide[64];

__global__ void column(const float *in, float *out)
{
    int tx = threadIdx.x;
    for (int k = 0; k < 32; k++)
        tile[k][tx] = in[k * 32 + tx];
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < 32; k++)
        sum += tile[tx][k];
    out[blockIdx.x * 32 + tx] = sum;
}

__global__ void padded_column(const float *in, float *out)
{
    int tx = threadIdx.x;
    for (int k = 0; k < 32; k++)
        padded[k][tx] = in[k * 32 + tx];
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < 32; k++)
        sum += padded[tx][k];
    out[blockIdx.x * 32 + tx] = sum;
}

__global__ void rows(const float *in, float *out)
{
    int tx = threadIdx.x;
    for (int k = 0; k < 32; k++)
        tile[tx][k] = in[k * 32 + tx];
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < 32; k++)
        sum += tile[k][tx];
    out[blockIdx.x * 32 + tx] = sum;
}

__global__ void strided(const float *in, float *out)
{
    int tx = threadIdx.x;
    flat[tx] = in[tx];
    __syncthreads();
    out[blockIdx.x * 32 + tx] = flat[2 * tx];
}

__global__ void broadcast(const float *in, float *out)
{
    int tx = threadIdx.x;
    flat[tx] = in[tx];
    __syncthreads();
    out[blockIdx.x * 32 + tx] = flat[5];
}

__global__ void transpose16(const float *in, float *out)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    square[ty][tx] = in[ty * 16 + tx];
    __syncthreads();
    out[ty * 16 + tx] = square[tx][ty];
}

__global__ void doubles(const float *in, float *out)
{
    int tx = threadIdx.x;
    wide[tx] = in[tx];
    __syncthreads();
    out[blockIdx.x * 32 + tx] = wide[2 * tx];
}

#ifdef __CUDACC__
void run(const float *in, float *out)
{
    transpose16<<<1, dim3(16, 16)>>>(in, out);
}
#endif
"#;

/// What the report must say of one shared access: its bank-conflict degree.
struct ExpectBanks {
    access: &'static str,
    kind: AccessKind,
    degree: u64,
}

fn banks(access: &'static str, kind: AccessKind, degree: u64) -> ExpectBanks {
    ExpectBanks {
        access,
        kind,
        degree,
    }
}

/// Logs the shared array `name` (at file scope) as a buffer of the run.
macro_rules! log_shared {
    ($name:literal) => {
        concat!(
            "fprintf(ww_log_file, \"buffer ",
            $name,
            " %lu %lu\\n\", (unsigned long)(uintptr_t)",
            $name,
            ", (unsigned long)sizeof(",
            $name,
            "));"
        )
    };
}

/// A launch of a kernel of [`SHARED`]: 2 blocks of 32 threads.
fn shared_fixture(kernel: &'static str, init: &'static str) -> Fixture {
    Fixture {
        name: kernel,
        source: SHARED,
        set: &[],
        kernel,
        grid: [2, 1, 1],
        block: [32, 1, 1],
        buffers: &[("in", "float", 32 * 32), ("out", "float", 64)],
        init,
        args: "in, out",
    }
}

/// Checks the shared accesses of `fixture` statically against `expected`, then each degree
/// against the degree every warp of the run met.
fn check_banks(fixture: &Fixture, expected: &[ExpectBanks]) -> CheckReport {
    let report = analysed(fixture);
    let kernel = report
        .kernels
        .iter()
        .find(|k| k.kernel == fixture.kernel)
        .unwrap_or_else(|| panic!("{}: no kernel {}", fixture.name, fixture.kernel));
    let run = Run::of(fixture);
    for e in expected {
        let a = kernel
            .shared_accesses
            .iter()
            .find(|a| a.access == e.access && a.kind == e.kind)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no shared {:?} `{}` in {kernel:#?}",
                    fixture.name, e.kind, e.access
                )
            });
        let what = format!("{}: `{}`: {a:#?}", fixture.name, e.access);
        assert_eq!(a.bank_conflicts.value, Some(e.degree), "degree of {what}");
        assert_eq!(a.finding.is_some(), e.degree > 1, "finding of {what}");
        let buffer = a.array.as_deref().unwrap();
        let seen = run.bank_degrees(buffer, e.kind != AccessKind::Load);
        assert!(!seen.is_empty(), "the run made no such access: {what}");
        for (warp, degree) in &seen {
            if a.bank_conflicts.exact {
                assert_eq!(*degree, e.degree, "warp {warp:?}: {what}");
            } else {
                assert!(*degree <= e.degree, "warp {warp:?}: {degree}: {what}");
            }
        }
    }
    report
}

impl Run {
    /// The bank-conflict degree each warp met in each execution of its accesses of `buffer`
    /// (reads or writes): a lane's `n`-th access pairs with the other lanes' `n`-th, and
    /// the degree is the most distinct 4-byte words in one of the 32 banks among the lanes
    /// of one pass (the warp; 128 bytes' worth of lanes for wider accesses, as the
    /// hardware serves them).
    fn bank_degrees(&self, buffer: &str, write: bool) -> BTreeMap<(Warp, usize), u64> {
        let mut nth: BTreeMap<((u32, u32, u32), u32), usize> = BTreeMap::new();
        let mut words: BTreeMap<(Warp, usize), BTreeMap<u64, BTreeSet<u64>>> = BTreeMap::new();
        for e in self.events.get(buffer).into_iter().flatten() {
            if e.write != write {
                continue;
            }
            let n = nth.entry((e.block, e.thread)).or_default();
            let banks = words.entry(((e.block, e.thread / 32), *n)).or_default();
            *n += 1;
            let per_pass = if e.bytes > 4 && e.bytes % 4 == 0 {
                128 / e.bytes
            } else {
                32
            };
            let pass = u64::from(e.thread % 32) / per_pass;
            for word in e.offset / 4..=(e.offset + e.bytes - 1) / 4 {
                banks.entry(pass * 32 + word % 32).or_default().insert(word);
            }
        }
        words
            .into_iter()
            .map(|(k, banks)| {
                let most = banks.values().map(|w| w.len() as u64).max().unwrap_or(0);
                (k, most)
            })
            .collect()
    }
}

#[test]
fn a_tile_read_down_a_column_conflicts_thirty_two_ways() {
    use AccessKind::{Load, Store};
    let report = check_banks(
        &shared_fixture("column", log_shared!("tile")),
        &[
            banks("tile[k][tx]", Store, 1),
            banks("tile[tx][k]", Load, 32),
        ],
    );
    let a = report.kernels[0]
        .shared_accesses
        .iter()
        .find(|a| a.access == "tile[tx][k]")
        .unwrap();
    let finding = a.finding.as_ref().unwrap();
    assert_eq!(finding.code, advisor::rules::Code::WW202);
    assert!(
        finding.help.as_deref().unwrap().contains("[32][33]"),
        "{finding:?}"
    );
    assert!(
        !report.kernels[0]
            .not_analysed
            .iter()
            .any(|n| n.contains("shared")),
        "{:?}",
        report.kernels[0].not_analysed
    );
}

#[test]
fn a_padded_tile_has_no_conflict() {
    use AccessKind::{Load, Store};
    check_banks(
        &shared_fixture("padded_column", log_shared!("padded")),
        &[
            banks("padded[k][tx]", Store, 1),
            banks("padded[tx][k]", Load, 1),
        ],
    );
}

#[test]
fn a_row_has_no_conflict_and_a_row_written_by_column_has_thirty_two() {
    use AccessKind::{Load, Store};
    check_banks(
        &shared_fixture("rows", log_shared!("tile")),
        &[
            banks("tile[tx][k]", Store, 32),
            banks("tile[k][tx]", Load, 1),
        ],
    );
}

#[test]
fn a_stride_of_two_words_conflicts_two_ways() {
    use AccessKind::{Load, Store};
    check_banks(
        &shared_fixture("strided", log_shared!("flat")),
        &[banks("flat[tx]", Store, 1), banks("flat[2 * tx]", Load, 2)],
    );
}

#[test]
fn a_broadcast_has_no_conflict() {
    check_banks(
        &shared_fixture("broadcast", log_shared!("flat")),
        &[banks("flat[5]", AccessKind::Load, 1)],
    );
}

#[test]
fn a_sixteen_wide_block_reading_a_column_conflicts_eight_ways() {
    // Two rows of 16 per warp: a column of a 16x16 tile puts 8 lanes of each row in one
    // bank.
    use AccessKind::{Load, Store};
    check_banks(
        &Fixture {
            block: [16, 16, 1],
            grid: [1, 1, 1],
            buffers: &[("in", "float", 256), ("out", "float", 256)],
            ..shared_fixture("transpose16", log_shared!("square"))
        },
        &[
            banks("square[ty][tx]", Store, 1),
            banks("square[tx][ty]", Load, 8),
        ],
    );
}

#[test]
fn a_shared_array_declared_in_the_kernel_counts_as_one_at_file_scope() {
    let inside = SHARED.replace(
        "__global__ void column(const float *in, float *out)\n{\n",
        "__global__ void column(const float *in, float *out)\n{\n    __shared__ float tile[32][32];\n",
    );
    let inside: &'static str = Box::leak(inside.into_boxed_str());
    let report = analysed(&Fixture {
        source: inside,
        ..shared_fixture("column", "")
    });
    let degrees: Vec<(&str, Option<u64>)> = report.kernels[0]
        .shared_accesses
        .iter()
        .map(|a| (a.access.as_str(), a.bank_conflicts.value))
        .collect();
    assert_eq!(
        degrees,
        [("tile[k][tx]", Some(1)), ("tile[tx][k]", Some(32))]
    );
}

const GUARDED: &str = r#"__shared__ float halves[64];

__global__ void guarded(const float *in, float *first, float *half, float *edge, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        first[blockIdx.x] = in[i];
    if (threadIdx.x < 16) {
        half[i] = 1;
        halves[2 * threadIdx.x] = 1;
    }
    if (i < n)
        edge[i] = 1;
}
"#;

#[test]
fn a_guard_on_the_thread_index_counts_only_the_lanes_it_lets_through() {
    let fixture = Fixture {
        name: "guarded",
        source: GUARDED,
        set: &[],
        kernel: "guarded",
        grid: [2, 1, 1],
        block: [64, 1, 1],
        buffers: &[
            ("in", "float", 128),
            ("first", "float", 2),
            ("half", "float", 128),
            ("edge", "float", 128),
        ],
        init: log_shared!("halves"),
        args: "in, first, half, edge, 100",
    };
    // One lane: one request, one sector; sixteen lanes side by side: 64 bytes, 2 sectors.
    let report = check(
        &fixture,
        &[
            load("in[i]", 1, 1, Coalescing::Coalesced),
            store("first[blockIdx.x]", 1, 1, Coalescing::Broadcast),
            store("half[i]", 1, 2, Coalescing::Coalesced),
        ],
    );
    let k = &report.kernels[0];
    let of = |access: &str| {
        k.accesses
            .iter()
            .find(|a| a.access == access)
            .and_then(|a| a.active.clone())
            .unwrap_or_default()
    };
    assert!(of("in[i]").starts_with("1 of a warp's 32 lanes"), "{k:#?}");
    assert!(
        of("half[i]").starts_with("16 of a warp's 32 lanes"),
        "{k:#?}"
    );
    // `i < n` is not decided lane by lane: the count is a full warp's, and says so.
    assert!(of("edge[i]").starts_with("a full warp"), "{k:#?}");
    // Sixteen lanes two words apart touch sixteen banks once each: no conflict, where the
    // full warp would conflict two ways.
    check_banks(
        &fixture,
        &[banks("halves[2 * threadIdx.x]", AccessKind::Store, 1)],
    );
}

#[test]
fn doubles_side_by_side_take_their_two_passes_without_conflict() {
    // A half warp's 128 bytes a pass: consecutive doubles do not conflict, doubles two
    // apart conflict two ways within each half warp.
    use AccessKind::{Load, Store};
    check_banks(
        &shared_fixture("doubles", log_shared!("wide")),
        &[banks("wide[tx]", Store, 1), banks("wide[2 * tx]", Load, 2)],
    );
}

const CLAMPED: &str = r#"__global__ void clamped(const float *inw, const float *inn, float *out, int nx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int c = i + j * nx;
    int W = (i == 0) ? c : c - 1;
    int N = (j == 0) ? c : c - nx;
    out[c] = inw[W] + inn[N];
}
"#;

#[test]
fn a_clamped_neighbour_is_bounded_by_its_forms_together() {
    let report = check(
        &Fixture {
            name: "clamped",
            source: CLAMPED,
            set: &[],
            kernel: "clamped",
            grid: [2, 4, 1],
            block: [64, 1, 1],
            buffers: &[
                ("inw", "float", 128 * 4),
                ("inn", "float", 128 * 4),
                ("out", "float", 128 * 4),
            ],
            init: "",
            args: "inw, inn, out, 128",
        },
        &[
            // Lanes choose `c` or `c - 1`: the two forms of a warp together span 33
            // elements, 2 requests and 5 sectors at most (interior warps, all at `c - 1`).
            load("inw[W]", 2, 5, Coalescing::Misaligned),
            // `j == 0` is the same for a warp's lanes: each form is a whole row, 4 sectors.
            load("inn[N]", 1, 4, Coalescing::Coalesced),
        ],
    );
    let a = &report.kernels[0].accesses;
    let west = a.iter().find(|a| a.access == "inw[W]").unwrap();
    assert_eq!(
        (west.sectors.min.as_deref(), west.sectors.exact),
        (Some("1"), false)
    );
    let north = a.iter().find(|a| a.access == "inn[N]").unwrap();
    assert!(north.sectors.exact, "{north:#?}");
}

const OFF_BY_A_PARAMETER: &str = r#"__global__ void shifted_by(const float *in, float *out, int t)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + t];
}

__global__ void row_heads(const float *in, float *out)
{
    int i = 16 * blockIdx.y + threadIdx.y + 1;
    if (threadIdx.x == 0)
        out[i] = in[i];
}
"#;

/// A kernel parameter added to the thread index (Rodinia's gaussian, `b_cuda[xidx+1+t]`)
/// moves the warp off a 128-byte boundary by as much as its value: unknown, it is taken to
/// keep the warp on a segment, as programs pass multiples of the block (huffman's
/// `baseIndex`, cfd's `nelr`), and the `unaligned` figure says what any other value costs:
/// a warp across two segments, 2 requests and 5 sectors. Run with `t = 32`; `t = 3` is
/// counted exactly once given.
#[test]
fn a_parameter_added_to_the_index_may_misalign_the_warp() {
    let report = check(
        &Fixture {
            name: "shifted_by",
            source: OFF_BY_A_PARAMETER,
            set: &[("blockDim.x", 64)],
            kernel: "shifted_by",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            buffers: &[("in", "float", 256), ("out", "float", 128)],
            init: "",
            args: "in, out, 32",
        },
        &[load("in[i + t]", 1, 4, Coalescing::Coalesced)],
    );
    let a = &report.kernels[0].accesses[0];
    assert_eq!(
        (
            a.requests.unaligned.as_deref(),
            a.sectors.unaligned.as_deref()
        ),
        (Some("2"), Some("5")),
        "{a:#?}"
    );
    // Known, it is counted as it is: `t = 3` puts the warp 12 bytes off a segment.
    let known = analysed(&Fixture {
        name: "shifted_by",
        source: OFF_BY_A_PARAMETER,
        set: &[("blockDim.x", 64), ("t", 3)],
        kernel: "shifted_by",
        grid: [2, 1, 1],
        block: [64, 1, 1],
        buffers: &[],
        init: "",
        args: "",
    });
    let a = &known.kernels[0].accesses[0];
    assert_eq!((a.requests.value, a.sectors.value), (Some(2), Some(5)));
    assert!(a.requests.exact, "{a:#?}");
}

/// A 16x16 block's warp spans rows `2w` and `2w + 1`; under `threadIdx.x == 0` two lanes
/// read `in[16*blockIdx.y + threadIdx.y + 1]` (Rodinia's backprop, `input_cuda[index_in]`),
/// 4 bytes apart, at `8w + 4` bytes into the block's row: across a sector for `w = 3`, across
/// a segment for `w = 7` of an odd `blockIdx.y`. The warp's first row is not a row of
/// aligned pitch: it ranges over the block's rows.
#[test]
fn the_rows_a_warp_spans_start_where_its_index_puts_them() {
    check(
        &Fixture {
            name: "row_heads",
            source: OFF_BY_A_PARAMETER,
            set: &[("blockDim.x", 16), ("blockDim.y", 16)],
            kernel: "row_heads",
            grid: [1, 2, 1],
            block: [16, 16, 1],
            buffers: &[("in", "float", 64), ("out", "float", 64)],
            init: "",
            args: "in, out",
        },
        &[
            load("in[i]", 2, 2, Coalescing::Broadcast),
            store("out[i]", 2, 2, Coalescing::Broadcast),
        ],
    );
}

const SMALL_BLOCKS: &str = r#"__global__ void first_row(float *b, int n)
{
    int x = blockIdx.x * 4 + threadIdx.x;
    if (threadIdx.y == 0)
        b[x + 1] = 0.0f;
}
"#;

/// Blocks of 4x4 threads whose first row stores 4 floats (Rodinia's gaussian,
/// `b_cuda[xidx+1+t]` under `yidx == 0`): a warp's 16 bytes start 16 bytes on per block,
/// which the aligned-rows assumption takes as whole segments (1 sector); the `unaligned`
/// figure keeps what an odd block really takes, 2 sectors, as the run shows.
#[test]
fn a_guarded_access_of_small_blocks_keeps_its_unaligned_count() {
    let report = analysed(&Fixture {
        name: "first_row",
        source: SMALL_BLOCKS,
        set: &[("blockDim.x", 4), ("blockDim.y", 4)],
        kernel: "first_row",
        grid: [2, 1, 1],
        block: [4, 4, 1],
        buffers: &[],
        init: "",
        args: "",
    });
    let a = &report.kernels[0].accesses[0];
    assert_eq!(a.sectors.value, Some(1), "{a:#?}");
    assert_eq!(a.sectors.unaligned.as_deref(), Some("2"), "{a:#?}");
}

/// pathfinder's shape: a block of 256 threads reads its tile shifted back by `border`
/// halo cells, and steps on by `256 - 2*iteration` cells per block.
const SHIFTED_TILE: &str = r#"__global__ void shifted(const int *in, int *out, int border, int iteration)
{
    int x = (256 - 2 * iteration) * blockIdx.x - border + threadIdx.x;
    out[x] = in[x];
}
"#;

/// The aligned-rows assumption names the terms it takes to be whole segments, so a reader
/// sees what must hold; a value that breaks it (`border` 20: 80 bytes) turns the count
/// into the unaligned one, 2 requests and 5 sectors.
#[test]
fn the_aligned_rows_assumption_names_its_terms() {
    let fixture = |set: &'static [(&'static str, i64)]| Fixture {
        name: "shifted",
        source: SHIFTED_TILE,
        set,
        kernel: "shifted",
        grid: [1, 1, 1],
        block: [256, 1, 1],
        buffers: &[],
        init: "",
        args: "",
    };
    let report = analysed(&fixture(&[("blockDim.x", 256)]));
    let a = &report.kernels[0].accesses[0];
    assert_eq!(a.access, "in[x]");
    assert_eq!(
        a.assumptions,
        vec![
            "`-4*border - 8*blockIdx.x*iteration` is a multiple of 128 bytes, and of 32 for \
             the sectors (aligned rows)"
                .to_string()
        ],
        "{a:#?}"
    );
    assert_eq!(
        (a.requests.value, a.sectors.value),
        (Some(1), Some(4)),
        "{a:#?}"
    );
    assert_eq!(a.coalescing, Coalescing::Coalesced);
    let report = analysed(&fixture(&[
        ("blockDim.x", 256),
        ("border", 20),
        ("iteration", 20),
    ]));
    let a = &report.kernels[0].accesses[0];
    assert_eq!(
        (a.requests.value, a.sectors.value),
        (Some(2), Some(5)),
        "{a:#?}"
    );
    assert_eq!(a.coalescing, Coalescing::Misaligned);
}

/// Accesses whose index is data but no gather of a warp's lanes: a lookup's hit (one lane
/// holds the key) and data read at an index the analysis does not follow (`i / 32`, one
/// element per warp).
const NOT_GATHERS: &str = r#"__global__ void lookup(const float *in, const int *idx, const int *keys,
                       const int *key, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (keys[i] == key[blockIdx.x])
        out[blockIdx.x] = in[idx[i]];
}

__global__ void by_warp(const float *in, const int *jw, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int col = i / 32;
    out[i] = in[jw[col]];
}
"#;

fn not_gather(
    kernel: &'static str,
    buffers: &'static [(&'static str, &'static str, usize)],
    init: &'static str,
    args: &'static str,
) -> Fixture {
    Fixture {
        name: kernel,
        source: NOT_GATHERS,
        set: &[],
        kernel,
        grid: [2, 1, 1],
        block: [64, 1, 1],
        buffers,
        init,
        args,
    }
}

#[test]
fn a_gather_under_a_lookups_guard_stays_unknown() {
    let report = check(
        &not_gather(
            "lookup",
            &[
                ("in", "float", 128),
                ("idx", "int", 128),
                ("keys", "int", 128),
                ("key", "int", 2),
                ("out", "float", 2),
            ],
            "for (int k = 0; k < 128; k++) { idx[k] = (k * 37) % 128; keys[k] = k; }\n\
             key[0] = 5; key[1] = 70;",
            "in, idx, keys, key, out",
        ),
        &[load("in[idx[i]]", 32, 32, Coalescing::Unknown)],
    );
    let a = report.kernels[0]
        .accesses
        .iter()
        .find(|a| a.access == "in[idx[i]]")
        .unwrap();
    assert!(a.reason.as_deref().unwrap().contains("(a lookup)"), "{a:?}");
    assert!(a.finding.is_none(), "{a:?}");
}

#[test]
fn data_read_at_an_index_not_followed_is_no_gather() {
    let report = check(
        &not_gather(
            "by_warp",
            &[
                ("in", "float", 128),
                ("jw", "int", 4),
                ("out", "float", 128),
            ],
            "for (int k = 0; k < 4; k++) jw[k] = 5 * k;",
            "in, jw, out",
        ),
        &[load("in[jw[col]]", 32, 32, Coalescing::Unknown)],
    );
    let a = report.kernels[1]
        .accesses
        .iter()
        .find(|a| a.access == "in[jw[col]]")
        .unwrap();
    assert!(a.finding.is_none(), "{a:?}");
}
