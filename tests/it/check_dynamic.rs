//! `warpwise check --dynamic` end to end: fixture programs with `main` built for the CPU
//! shim and run, each access's per-warp counts from the run set against the static ones;
//! and the programs it cannot count (no build under the shim, a loop without end, a
//! crash), each with its diagnostic and exit code 1.

use crate::common::{scratch, text, warpwise};
use serde_json::Value;
use std::time::{Duration, Instant};

/// What the run must say of one access: the run's requests and sectors (`[min, max]` over
/// full warps) and the verdict.
struct Seen {
    access: &'static str,
    requests: [u64; 2],
    sectors: [u64; 2],
    verdict: &'static str,
}

fn seen(access: &'static str, requests: [u64; 2], sectors: [u64; 2]) -> Seen {
    Seen {
        access,
        requests,
        sectors,
        verdict: "agrees",
    }
}

/// Runs `check --dynamic --format json` on `source` (as `NAME.cu`) with `extra` options;
/// the exit status and the report (`Null` when none was written), and all it printed.
fn run(name: &str, source: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let dir = scratch("dynamic", name);
    let file = dir.join(format!("{name}.cu"));
    std::fs::write(&file, source).unwrap();
    let file = file.to_string_lossy().to_string();
    let mut args = vec!["check", "--dynamic", "--format", "json", &file];
    args.extend_from_slice(extra);
    let out = warpwise(&args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, text(&out))
}

/// Whether llvm-symbolizer is there to place the run's accesses; without it a test that
/// needs it skips, saying why, unless `WARPWISE_REQUIRE_SYMBOLIZER` is set.
fn symbolizer() -> bool {
    let found = ["llvm-symbolizer-16", "llvm-symbolizer"]
        .iter()
        .any(|tool| {
            std::process::Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if !found {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_SYMBOLIZER").is_none(),
            "no llvm-symbolizer-16 (WARPWISE_REQUIRE_SYMBOLIZER is set)"
        );
        eprintln!("skipped: no llvm-symbolizer-16 to place the run's accesses");
    }
    found
}

/// Checks that every access of `expected` was run with those counts and verdict, and that
/// where the static count is an exact number, the run's full warps all equal it.
fn check(name: &str, source: &str, expected: &[Seen]) -> Option<Value> {
    if !symbolizer() {
        return None;
    }
    let (code, report, said) = run(name, source, &[]);
    assert_eq!(code, Some(0), "{said}");
    let accesses: Vec<&Value> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["accesses"].as_array().unwrap())
        .collect();
    for e in expected {
        let a = accesses
            .iter()
            .find(|a| a["access"] == e.access)
            .unwrap_or_else(|| panic!("no access `{}` in {report:#}", e.access));
        let d = &a["dynamic"];
        let range = |v: &Value| [v["min"].as_u64().unwrap(), v["max"].as_u64().unwrap()];
        assert_eq!(range(&d["requests"]), e.requests, "{}: {a:#}", e.access);
        assert_eq!(range(&d["sectors"]), e.sectors, "{}: {a:#}", e.access);
        assert_eq!(d["agreement"]["verdict"], e.verdict, "{}: {a:#}", e.access);
        for count in ["requests", "sectors"] {
            // A symbolic count is held to each launch's warps with that launch's values.
            if let (true, Some(value)) = (a[count]["exact"] == true, a[count]["value"].as_u64()) {
                assert_eq!(range(&d[count]), [value, value], "{}: {a:#}", e.access);
            }
        }
        assert!(d["warps"].as_u64().unwrap() > 0, "{a:#}");
    }
    Some(report)
}

/// The host side that allocates `in` (n*count floats), `idx` (count ints: `IDX(i)`) and
/// `out`, and launches `LAUNCHES` with 128 threads a block.
macro_rules! program {
    ($kernels:literal, $idx:literal, $launches:literal) => {
        concat!(
            "#include <stdio.h>\n#include <stdlib.h>\n",
            $kernels,
            "\nint main(void)\n{\n    int n = 64, count = 256;\n",
            "    float *h = (float *)malloc(count * n * sizeof(float));\n",
            "    int *hi = (int *)malloc(count * sizeof(int));\n",
            "    for (int i = 0; i < count * n; i++) h[i] = i;\n",
            "    for (int i = 0; i < count; i++) hi[i] = ",
            $idx,
            ";\n    float *in, *out;\n    int *idx;\n",
            "    cudaMalloc((void **)&in, count * n * sizeof(float));\n",
            "    cudaMalloc((void **)&out, count * sizeof(float));\n",
            "    cudaMalloc((void **)&idx, count * sizeof(int));\n",
            "    cudaMemcpy(in, h, count * n * sizeof(float), cudaMemcpyHostToDevice);\n",
            "    cudaMemcpy(idx, hi, count * sizeof(int), cudaMemcpyHostToDevice);\n",
            $launches,
            "\n    cudaMemcpy(h, out, count * sizeof(float), cudaMemcpyDeviceToHost);\n",
            "    printf(\"%f\\n\", h[1]);\n    return 0;\n}\n"
        )
    };
}

const THREE: &str = program!(
    r#"__global__ void coalesced(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * 2.0f;
}

__global__ void column(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0;
    for (int j = 0; j < 4; j++)
        s += in[i * n + j];
    out[i] = s;
}

__global__ void gather(const float *in, const int *idx, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}"#,
    "(i * 37) % count",
    r#"    coalesced<<<count / 128, 128>>>(in, out);
    column<<<dim3(count / 128), dim3(128, 1)>>>(in, out,
                                               n);
    gather<<<count / 128, 128, 0>>>(in, idx, out);"#
);

#[test]
fn coalesced_column_and_gather_counts_agree_with_the_run() {
    let Some(report) = check(
        "three",
        THREE,
        &[
            seen("in[i]", [1, 1], [4, 4]),
            seen("in[i * n + j]", [32, 32], [32, 32]),
            seen("idx[i]", [1, 1], [4, 4]),
            // 37 elements apart modulo 256: 8 segments, 16 sectors, inside 1 to 32.
            seen("in[idx[i]]", [8, 8], [16, 16]),
        ],
    ) else {
        return;
    };
    // The column walk runs 4 times per warp (its loop), 8 warps.
    let column = &report["kernels"][1]["accesses"][0];
    assert_eq!(column["dynamic"]["warps"], 32, "{column:#}");
    assert_eq!(report["run"]["events"], 256 * 2 + 256 * 5 + 256 * 3);
}

#[test]
fn a_static_bound_is_confirmed_by_the_run() {
    // A gather through sorted indices: statically anything from 1 to 32 requests; the run
    // finds each warp's 32 lanes on one segment.
    let Some(report) = check(
        "bound",
        program!(
            r#"__global__ void gather(const float *in, const int *idx, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}"#,
            "i",
            "    gather<<<count / 128, 128>>>(in, idx, out);"
        ),
        &[seen("in[idx[i]]", [1, 1], [4, 4])],
    ) else {
        return;
    };
    let a = &report["kernels"][0]["accesses"][1];
    assert_eq!(a["access"], "in[idx[i]]");
    assert_eq!(a["coalescing"], "data-dependent");
    assert_eq!(a["requests"]["min"], "1", "{a:#}");
}

/// The static report's access `access` of `report`, the first so written.
fn access<'r>(report: &'r Value, access: &str) -> &'r Value {
    report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["accesses"].as_array().unwrap())
        .find(|a| a["access"] == access)
        .unwrap_or_else(|| panic!("no access `{access}` in {report:#}"))
}

/// A gather by per-lane data, a base read from data at an address the same for the warp
/// (the lanes still step by the thread index), and a whole structure copied per lane.
const DATA: &str = program!(
    r#"struct Four { double v, x, y, z; };

__global__ void gather(const float *in, const int *idx, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}

__global__ void uniform(const float *in, const int *idx, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = idx[blockIdx.x];
    out[i] = in[b * 128 + threadIdx.x];
}

__global__ void copy(const struct Four *p, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    struct Four f = p[i];
    out[i] = f.v + f.x + f.y + f.z;
}"#,
    "(i * 37) % count",
    r#"    gather<<<count / 128, 128>>>(in, idx, out);
    uniform<<<count / 128, 128>>>(in, idx, out);
    copy<<<count / 128, 128>>>((const struct Four *)in, out);"#
);

#[test]
fn a_gather_by_per_lane_data_is_data_dependent_and_bounds_the_run() {
    let Some(report) = check("gather", DATA, &[seen("in[idx[i]]", [8, 8], [16, 16])]) else {
        return;
    };
    let a = access(&report, "in[idx[i]]");
    assert_eq!(a["coalescing"], "data-dependent", "{a:#}");
    assert_eq!(a["requests"]["min"], "1", "{a:#}");
    assert_eq!(a["sectors"]["max"], "32", "{a:#}");
    let finding = &a["finding"];
    assert_eq!(finding["code"], "WW201", "{a:#}");
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("may take 1 to 32 sectors"), "{message}");
    assert!(message.contains("`idx["), "{message}");
}

#[test]
fn a_base_read_from_data_alike_for_the_warp_stays_coalesced() {
    let Some(report) = check(
        "uniform",
        DATA,
        &[seen("in[b * 128 + threadIdx.x]", [1, 1], [4, 4])],
    ) else {
        return;
    };
    let a = access(&report, "in[b * 128 + threadIdx.x]");
    assert_eq!(a["coalescing"], "coalesced", "{a:#}");
    assert_eq!(a["requests"]["value"], 1, "{a:#}");
    assert_eq!(a["sectors"]["value"], 4, "{a:#}");
    assert!(a.get("finding").is_none(), "{a:#}");
}

#[test]
fn a_structure_copy_is_counted_as_its_field_loads() {
    // Each field load of a 32-byte `Four` has the lanes 32 bytes apart: 8 segments and a
    // sector per lane for 256 bytes (8 sectors), whatever accesses the compiler splits
    // the copy into.
    let Some(report) = check("copy", DATA, &[seen("p[i]", [8, 8], [32, 32])]) else {
        return;
    };
    let a = access(&report, "p[i]");
    assert_eq!(a["coalescing"], "uncoalesced", "{a:#}");
    assert_eq!(a["bytes"], 8, "{a:#}");
    assert_eq!(a["stride"], "32", "{a:#}");
    assert_eq!(a["requests"]["value"], 8, "{a:#}");
    assert_eq!(a["sectors"]["value"], 32, "{a:#}");
    assert_eq!(a["ideal_sectors"], 8, "{a:#}");
    assert_eq!(a["finding"]["code"], "WW201", "{a:#}");
}

#[test]
fn a_warp_with_fewer_lanes_is_counted_apart() {
    if !symbolizer() {
        return;
    }
    // 40 threads a block: the second warp of each has 8 lanes.
    let (code, report, said) = run(
        "partial",
        program!(
            r#"__global__ void copy(const float *in, float *out)
{
    int i = blockIdx.x * 40 + threadIdx.x;
    out[i] = in[i];
}"#,
            "i",
            "    copy<<<2, 40>>>(in, out);"
        ),
        &[],
    );
    assert_eq!(code, Some(0), "{said}");
    let d = &report["kernels"][0]["accesses"][0]["dynamic"];
    assert_eq!(d["warps"], 2, "{d:#}");
    assert_eq!(d["partial"]["warps"], 2, "{d:#}");
    // Elements 32..39 and 72..79: one sector each.
    assert_eq!(d["partial"]["sectors"]["max"], 1, "{d:#}");
    assert_eq!(
        d["requests"]["max"], 2,
        "block 1 starts off a segment: {d:#}"
    );
}

#[test]
fn a_program_the_shim_cannot_build_is_named_with_the_first_error() {
    let (code, report, said) = run(
        "texture",
        "texture<float, 1, cudaReadModeElementType> tex;\n\
         __global__ void k(float *out) { out[threadIdx.x] = tex1Dfetch(tex, threadIdx.x); }\n\
         int main(void) { float *o; cudaMalloc((void **)&o, 128); k<<<1, 32>>>(o); return 0; }\n",
        &[],
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("error: --dynamic: `")
            && said.contains("texture.cu` does not compile for the CPU shim: "),
        "{said}"
    );
    assert!(
        said.contains("texture.cu:1:"),
        "the compiler's first error, at its line: {said}"
    );
    // The static report is still written.
    assert_eq!(report["schema"], "warpwise/check-report/v1");
}

#[test]
fn a_program_that_never_ends_is_killed_at_the_timeout() {
    let started = Instant::now();
    let (code, _, said) = run(
        "forever",
        "__global__ void k(float *out) { out[threadIdx.x] = 1; }\n\
         int main(void) {\n    volatile int on = 1;\n    while (on) {}\n    return 0;\n}\n",
        &["--timeout", "2"],
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("error: --dynamic: the program ran past 2 s and was killed"),
        "{said}"
    );
    assert!(started.elapsed() < Duration::from_secs(60), "{said}");
}

#[test]
fn a_program_that_crashes_gets_one_diagnostic() {
    let (code, _, said) = run(
        "crash",
        "__global__ void k(float *out, int *bad) { out[threadIdx.x] = bad[threadIdx.x]; }\n\
         int main(void) {\n    float *o;\n    cudaMalloc((void **)&o, 128);\n\
         \x20   k<<<1, 32>>>(o, (int *)0);\n    return 0;\n}\n",
        &[],
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("error: --dynamic: the program crashed: the kernel crashed (signal 11)"),
        "{said}"
    );
    assert_eq!(said.matches("error: --dynamic").count(), 1, "{said}");
}

#[test]
fn arguments_reach_the_program_split_and_unexpanded() {
    if !symbolizer() {
        return;
    }
    // The program launches only when it gets `-s` and `a b` as its arguments.
    let (code, report, said) = run(
        "args",
        "#include <string.h>\n\
         __global__ void k(float *out) { out[threadIdx.x] = 1; }\n\
         int main(int argc, char **argv) {\n    float *o;\n    cudaMalloc((void **)&o, 128);\n\
         \x20   if (argc == 3 && !strcmp(argv[1], \"-s\") && !strcmp(argv[2], \"a b\"))\n\
         \x20       k<<<1, 32>>>(o);\n    return 0;\n}\n",
        &["--args", "-s 'a b'"],
    );
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(report["run"]["events"], 32, "{report:#}");
    assert_eq!(report["run"]["args"][1], "a b");
}

#[test]
fn each_call_of_a_device_function_gets_its_own_count() {
    if !symbolizer() {
        return;
    }
    // `load` is read where each call passes its index: one instance walks a row, the
    // other a column, and the run tells them apart by the call it was inlined at.
    let (code, report, said) = run(
        "calls",
        program!(
            r#"__device__ float load(const float *a, int i) { return a[i]; }

__global__ void twice(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = load(in, i) + load(in, i * 32);
}"#,
            "i",
            "    twice<<<count / 128, 128>>>(in, out);"
        ),
        &[],
    );
    assert_eq!(code, Some(0), "{said}");
    let loads: Vec<&Value> = report["kernels"][0]["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["access"] == "a[i]")
        .collect();
    assert_eq!(loads.len(), 2, "{report:#}");
    let seen: Vec<(u64, u64, &Value)> = loads
        .iter()
        .map(|a| {
            let d = &a["dynamic"];
            (
                d["requests"]["max"].as_u64().unwrap(),
                d["sectors"]["max"].as_u64().unwrap(),
                &d["agreement"]["verdict"],
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, 4, &Value::from("agrees")),
            (32, 32, &Value::from("agrees"))
        ],
        "{report:#}"
    );
}

#[test]
fn the_program_is_built_in_a_private_directory_removed_after_the_run() {
    // The program exits with 7 unless its own directory (the build directory) is 0700 and
    // its working directory is the input's.
    let dir = scratch("dynamic", "private");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = dir.join("private.cu");
    std::fs::write(
        &file,
        "#include <libgen.h>\n#include <string.h>\n#include <sys/stat.h>\n#include <unistd.h>\n\
         int main(int argc, char **argv) {\n    struct stat s;\n    char here[4096];\n\
         \x20   if (stat(dirname(argv[0]), &s) != 0 || (s.st_mode & 0777) != 0700) return 7;\n\
         \x20   if (!getcwd(here, sizeof here) || !strstr(here, \"private\")) return 7;\n\
         \x20   return 0;\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(crate::common::bin())
        .env("TMPDIR", &tmp)
        .args(["check", "--dynamic", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["run"]["exit_status"].is_null(), "{report:#}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "left behind in {tmp:?}"
    );
}

#[test]
fn a_dereference_is_placed_on_its_own_access() {
    // GCC places `*(p + k)` at its `*`, a column before the report's text of the access:
    // the broadcast must not be counted with the column walk before it on the line.
    let Some(_) = check(
        "deref",
        program!(
            r#"__global__ void deref(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = *(in + 32 * i) / *(in + 1);
}"#,
            "i",
            "    deref<<<count / 128, 128>>>(in, out);"
        ),
        &[
            seen("(in + 32 * i)", [32, 32], [32, 32]),
            seen("(in + 1)", [1, 1], [1, 1]),
        ],
    ) else {
        return;
    };
}

/// A count written in a parameter (`in[i * s]`: `s` requests a warp, up to 32) that the
/// launches pass as a variable is evaluated with each launch's arguments: 1 request and 4
/// sectors for `s = 1`, 4 and 16 for `s = 4`, each launch's warps held to their own.
#[test]
fn a_symbolic_count_is_evaluated_with_each_launchs_values() {
    let Some(report) = check(
        "strided",
        program!(
            r#"__global__ void strided(const float *in, float *out, int s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * s];
}"#,
            "i",
            "    for (int s = 1; s <= 4; s *= 4)\n        strided<<<count / 128, 128>>>(in, out, s);"
        ),
        &[seen("in[i * s]", [1, 4], [4, 16])],
    ) else {
        return;
    };
    let a = &report["kernels"][0]["accesses"][0];
    assert!(a["requests"]["value"].is_null(), "symbolic: {a:#}");
    let per = &a["dynamic"]["per_launch"];
    assert_eq!(per["launches"], 2, "{a:#}");
    assert_eq!(
        per["requests"],
        serde_json::json!({"min": 1, "max": 4}),
        "{a:#}"
    );
    assert_eq!(
        per["sectors"],
        serde_json::json!({"min": 4, "max": 16}),
        "{a:#}"
    );
}

#[test]
fn a_store_through_a_pointer_parameter_is_placed_at_the_statement() {
    // bfs's `*g_over = true`: the address is the parameter itself, whose place is its
    // declaration; the access is the statement's, where the run's store is made.
    let source = "__global__ void k(bool *over, const int *x)\n\
                  {\n\
                  \x20   int i = threadIdx.x;\n\
                  \x20   if (x[i])\n\
                  \x20       *over = true;\n\
                  }\n\
                  int main(void)\n\
                  {\n\
                  \x20   bool *o;\n\
                  \x20   int *x;\n\
                  \x20   cudaMalloc((void **)&o, 1);\n\
                  \x20   cudaMalloc((void **)&x, 64 * sizeof(int));\n\
                  \x20   cudaMemset(x, 1, 64 * sizeof(int));\n\
                  \x20   k<<<1, 64>>>(o, x);\n\
                  \x20   return 0;\n\
                  }\n";
    let Some(report) = check("over", source, &[seen("*over", [1, 1], [1, 1])]) else {
        return;
    };
    let a = access(&report, "*over");
    assert!(a["at"].as_str().unwrap().ends_with("over.cu:5:9"), "{a:#}");
}

/// Lanes 0-15 pass the guard in the loop's first iteration and lanes 16-31 in its second:
/// a warp reads 64 contiguous bytes of one row in each (1 request), which a run that pairs
/// each lane's n-th execution with the others' would see as one execution over two rows.
/// The staging loop gives each lane its own number of iterations (none from lane 20 on),
/// the same in every iteration of the outer loop: its lanes stay in step.
const SKIPPED: &str = "__global__ void k(const int *pass, const int *rows, const int *base,\n\
                       \x20                 int *out, int n)\n\
                       {\n\
                       \x20   __shared__ int staged[64];\n\
                       \x20   int t = threadIdx.x;\n\
                       \x20   int sum = 0;\n\
                       \x20   for (int it = 0; it < n; it++) {\n\
                       \x20       int r = rows[it];\n\
                       \x20       int w = t;\n\
                       \x20       while (w < 20) {\n\
                       \x20           staged[w] = base[r * 1024 + w];\n\
                       \x20           w += 32;\n\
                       \x20       }\n\
                       \x20       if (pass[it * 32 + t])\n\
                       \x20           sum += base[r * 1024 + t] + staged[t % 20];\n\
                       \x20   }\n\
                       \x20   out[t] = sum;\n\
                       }\n\
                       int main(void)\n\
                       {\n\
                       \x20   int hp[64], hr[2] = {0, 7};\n\
                       \x20   for (int i = 0; i < 32; i++) {\n\
                       \x20       hp[i] = i < 16;\n\
                       \x20       hp[32 + i] = i >= 16;\n\
                       \x20   }\n\
                       \x20   int *p, *r, *b, *o;\n\
                       \x20   cudaMalloc((void **)&p, sizeof hp);\n\
                       \x20   cudaMalloc((void **)&r, sizeof hr);\n\
                       \x20   cudaMalloc((void **)&b, 8 * 1024 * sizeof(int));\n\
                       \x20   cudaMalloc((void **)&o, 32 * sizeof(int));\n\
                       \x20   cudaMemcpy(p, hp, sizeof hp, cudaMemcpyHostToDevice);\n\
                       \x20   cudaMemcpy(r, hr, sizeof hr, cudaMemcpyHostToDevice);\n\
                       \x20   k<<<1, 32>>>(p, r, b, o, 2);\n\
                       \x20   return 0;\n\
                       }\n";

#[test]
fn lanes_that_skip_iterations_under_data_are_not_compared() {
    if !symbolizer() {
        return;
    }
    let (code, report, said) = run("skipped", SKIPPED, &[]);
    assert_eq!(code, Some(0), "{said}");
    let guarded = access(&report, "base[r * 1024 + t]");
    assert_eq!(
        guarded["dynamic"]["agreement"]["verdict"], "not-comparable",
        "{guarded:#}"
    );
    assert!(
        guarded["unpaired"]
            .as_str()
            .is_some_and(|u| u.contains("pass[it * 32 + t]") && u.contains("line 7")),
        "{guarded:#}"
    );
    // Each lane's staging iterations are its own but the same in both outer iterations.
    let staged = access(&report, "base[r * 1024 + w]");
    assert!(staged.get("unpaired").is_none(), "{staged:#}");
    assert_eq!(
        staged["dynamic"]["agreement"]["verdict"], "agrees",
        "{staged:#}"
    );
    let row = access(&report, "rows[it]");
    assert!(row.get("unpaired").is_none(), "{row:#}");
}

/// heartwall's shape: a store in the else of `if (a && b)`, which each failed test reaches
/// (no single edge leads there), inside a loop whose iterations change which lanes fail.
/// Lanes 16 to 31 take it in the first iteration (row 0), lanes 0 to 15 in the second
/// (row 7): pairing each lane's n-th execution mixed the two rows into 2 requests where the
/// count is 1, a false "disagrees".
const ELSE_OF_AND: &str = "__global__ void k(const int *pass, const int *rows, int *out, int n)\n\
                           {\n\
                           \x20   int t = threadIdx.x;\n\
                           \x20   for (int it = 0; it < n; it++) {\n\
                           \x20       int r = rows[it];\n\
                           \x20       if (pass[it * 32 + t] && t < 40)\n\
                           \x20           out[r * 1024 + t] = 1;\n\
                           \x20       else\n\
                           \x20           out[r * 1024 + t + 64] = 2;\n\
                           \x20   }\n\
                           }\n\
                           int main(void)\n\
                           {\n\
                           \x20   int hp[64], hr[2] = {0, 7};\n\
                           \x20   for (int i = 0; i < 32; i++) {\n\
                           \x20       hp[i] = i < 16;\n\
                           \x20       hp[32 + i] = i >= 16;\n\
                           \x20   }\n\
                           \x20   int *p, *r, *o;\n\
                           \x20   cudaMalloc((void **)&p, sizeof hp);\n\
                           \x20   cudaMalloc((void **)&r, sizeof hr);\n\
                           \x20   cudaMalloc((void **)&o, 8 * 1024 * sizeof(int));\n\
                           \x20   cudaMemcpy(p, hp, sizeof hp, cudaMemcpyHostToDevice);\n\
                           \x20   cudaMemcpy(r, hr, sizeof hr, cudaMemcpyHostToDevice);\n\
                           \x20   k<<<1, 32>>>(p, r, o, 2);\n\
                           \x20   return 0;\n\
                           }\n";

#[test]
fn the_else_of_a_conjunction_is_not_compared_when_its_lanes_change() {
    if !symbolizer() {
        return;
    }
    let (code, report, said) = run("elseand", ELSE_OF_AND, &[]);
    assert_eq!(code, Some(0), "{said}");
    for text in ["out[r * 1024 + t]", "out[r * 1024 + t + 64]"] {
        let site = access(&report, text);
        assert_eq!(
            site["dynamic"]["agreement"]["verdict"], "not-comparable",
            "{site:#}"
        );
        assert!(
            site["unpaired"]
                .as_str()
                .is_some_and(|u| u.contains("pass[it * 32 + t]") && u.contains("line 4")),
            "{site:#}"
        );
    }
}

/// Writes `files` (name, text) into a scratch directory and runs `check --dynamic --format
/// json` on the first of them and the others named in `inputs`; the exit status, the report
/// and all it printed.
fn run_files(name: &str, files: &[(&str, &str)], inputs: &[&str]) -> (Option<i32>, Value, String) {
    let dir = scratch("dynamic", name);
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let inputs: Vec<String> = inputs
        .iter()
        .map(|f| dir.join(f).to_string_lossy().to_string())
        .collect();
    let mut args = vec!["check", "--dynamic", "--format", "json"];
    args.extend(inputs.iter().map(String::as_str));
    let out = warpwise(&args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, text(&out))
}

#[test]
fn a_launch_in_a_file_included_through_another_is_rewritten() {
    if !symbolizer() {
        return;
    }
    // main.cu includes sub/work.cu (no launch), which includes its neighbours launch.cu
    // (the launch) and size.h: both must be found beside work.cu, launch.cu rewritten.
    let (code, report, said) = run_files(
        "chain",
        &[
            (
                "main.cu",
                "#include \"sub/work.cu\"\nint main(void) { return work(); }\n",
            ),
            (
                "sub/work.cu",
                "#include \"size.h\"\n#include \"launch.cu\"\nint work(void) { return launch(); }\n",
            ),
            ("sub/size.h", "#define THREADS 64\n"),
            (
                "sub/launch.cu",
                "__global__ void k(float *d) { d[threadIdx.x] = 1; }\n\
                 int launch(void) {\n    float *d;\n    cudaMalloc((void **)&d, THREADS * sizeof(float));\n\
                 \x20   k<<<1, THREADS>>>(d);\n    return 0;\n}\n",
            ),
        ],
        &["main.cu"],
    );
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(report["run"]["events"], 64, "{report:#}");
}

#[test]
fn streams_async_copies_and_memory_info_run_on_the_cpu() {
    if !symbolizer() {
        return;
    }
    // The program exits with 3 unless the data copied in asynchronously reached the kernel
    // and its results came back, and the memory reported is plausible.
    let (code, report, said) = run(
        "streams",
        "__global__ void twice(const float *in, float *out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }\n\
         int main(void) {\n    float h[64], *in, *out;\n    size_t free_bytes = 0, total = 0;\n\
         \x20   for (int i = 0; i < 64; i++) h[i] = i;\n\
         \x20   cudaMemGetInfo(&free_bytes, &total);\n\
         \x20   if (free_bytes == 0 || free_bytes > total) return 3;\n\
         \x20   cudaStream_t s;\n    if (cudaStreamCreate(&s) != cudaSuccess) return 3;\n\
         \x20   cudaMalloc((void **)&in, sizeof h);\n    cudaMalloc((void **)&out, sizeof h);\n\
         \x20   cudaMemsetAsync(out, 0, sizeof h, s);\n\
         \x20   cudaMemcpyAsync(in, h, sizeof h, cudaMemcpyHostToDevice, s);\n\
         \x20   twice<<<1, 64, 0, s>>>(in, out);\n\
         \x20   cudaMemcpyAsync(h, out, sizeof h, cudaMemcpyDeviceToHost, s);\n\
         \x20   cudaStreamSynchronize(s);\n    cudaStreamDestroy(s);\n\
         \x20   for (int i = 0; i < 64; i++)\n        if (h[i] != 2 * i) return 3;\n\
         \x20   return 0;\n}\n",
        &[],
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(report["run"]["exit_status"].is_null(), "{report:#}");
    assert_eq!(report["run"]["events"], 128, "{report:#}");
}

#[test]
fn the_samples_helpers_and_vector_types_run_on_the_cpu() {
    if !symbolizer() {
        return;
    }
    // cfd's shape: the CUDA samples' `helper_cuda.h` and `helper_timer.h` (not on the
    // include path: the stand-ins are found after it) and `float3` in constant memory. The
    // program exits with 3 unless the kernel read the float3 and its results came back,
    // and the timer measured one run.
    let (code, report, said) = run(
        "helpers",
        "#include <helper_cuda.h>\n#include <helper_timer.h>\n\
         __constant__ float3 scale[1];\n\
         __global__ void apply(const float *in, float *out) {\n\
         \x20   float3 s = scale[0];\n    out[threadIdx.x] = s.x * in[threadIdx.x] + s.y + s.z;\n}\n\
         int main(void) {\n    float h[64], *in, *out;\n\
         \x20   for (int i = 0; i < 64; i++) h[i] = i;\n\
         \x20   float3 s = make_float3(2.0f, 1.0f, 0.5f);\n\
         \x20   checkCudaErrors(cudaMemcpyToSymbol(scale, &s, sizeof s));\n\
         \x20   checkCudaErrors(cudaMalloc((void **)&in, sizeof h));\n\
         \x20   checkCudaErrors(cudaMalloc((void **)&out, sizeof h));\n\
         \x20   checkCudaErrors(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));\n\
         \x20   StopWatchInterface *timer = 0;\n    sdkCreateTimer(&timer);\n    sdkStartTimer(&timer);\n\
         \x20   apply<<<1, 64>>>(in, out);\n    getLastCudaError(\"apply failed\");\n\
         \x20   sdkStopTimer(&timer);\n\
         \x20   if (sdkGetAverageTimerValue(&timer) < 0) return 3;\n    sdkDeleteTimer(&timer);\n\
         \x20   checkCudaErrors(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));\n\
         \x20   for (int i = 0; i < 64; i++)\n        if (h[i] != 2.0f * i + 1.5f) return 3;\n\
         \x20   return 0;\n}\n",
        &[],
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(report["run"]["exit_status"].is_null(), "{report:#}");
    assert_eq!(report["run"]["events"], 128, "{report:#}");
}

#[test]
fn a_host_c_file_links_the_runtimes_set_up_calls() {
    if !symbolizer() {
        return;
    }
    // main.c, compiled with `cc` and without the shim, calls the set-up calls libcudart
    // gives it in a real build, and the CUDA file's launch.
    let (code, report, said) = run_files(
        "cmain",
        &[
            (
                "main.c",
                "int cudaSetDevice(int);\nint cudaGetDeviceCount(int *);\n\
                 int cudaDeviceSynchronize(void);\nint launch(void);\n\
                 int main(void) {\n    int n = 0;\n\
                 \x20   if (cudaSetDevice(0) || cudaGetDeviceCount(&n) || n < 1) return 3;\n\
                 \x20   launch();\n    return cudaDeviceSynchronize();\n}\n",
            ),
            (
                "kernel.cu",
                "__global__ void k(float *d) { d[threadIdx.x] = 1; }\n\
                 extern \"C\" int launch(void) {\n    float *d;\n\
                 \x20   cudaMalloc((void **)&d, 32 * sizeof(float));\n    k<<<1, 32>>>(d);\n\
                 \x20   return 0;\n}\n",
            ),
        ],
        &["main.c", "kernel.cu"],
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(report["run"]["exit_status"].is_null(), "{report:#}");
    assert_eq!(report["run"]["events"], 32, "{report:#}");
}

#[test]
fn an_extern_shared_array_is_the_launchs_dynamic_shared_memory() {
    if !symbolizer() {
        return;
    }
    // Each block reverses its 32 values through `extern __shared__` memory sized by the
    // launch; the program exits with 3 unless they came back reversed.
    let (code, report, said) = run(
        "dynshared",
        "__global__ void rev(const float *in, float *out) {\n\
         \x20   extern __shared__ float s[];\n    s[threadIdx.x] = in[threadIdx.x];\n\
         \x20   __syncthreads();\n    out[threadIdx.x] = s[31 - threadIdx.x];\n}\n\
         int main(void) {\n    float h[32], *in, *out;\n\
         \x20   for (int i = 0; i < 32; i++) h[i] = i;\n\
         \x20   cudaMalloc((void **)&in, sizeof h);\n    cudaMalloc((void **)&out, sizeof h);\n\
         \x20   cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);\n\
         \x20   rev<<<1, 32, sizeof h>>>(in, out);\n\
         \x20   cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);\n\
         \x20   for (int i = 0; i < 32; i++)\n        if (h[i] != 31 - i) return 3;\n\
         \x20   return 0;\n}\n",
        &[],
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(report["run"]["exit_status"].is_null(), "{report:#}");
    assert_eq!(report["run"]["events"], 64, "{report:#}");
}
