//! `warpwise emit` and `warpwise validate --backend cpu` on the samples: every friendly loop
//! passes under its recommended mapping, its natural one (2D nests) and with shared memory
//! where the report advises it; loops a profile settles pass with the profile; and broken
//! kernels (a shrunk section, swapped bounds, a loop with a dependence forced through) fail
//! with messages that name the array and the bytes, or the lines.

use crate::common::{root, text, warpwise};
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    crate::common::scratch("cuda", name)
}

/// The backend the kernels run on: `cpu` (the shim), or what `WARPWISE_VALIDATE_BACKEND`
/// names, so that on a GPU machine the same cases run on the GPU
/// (`WARPWISE_VALIDATE_BACKEND=cuda cargo test --test it cuda_validate::`).
fn backend() -> &'static str {
    static BACKEND: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BACKEND.get_or_init(|| {
        std::env::var("WARPWISE_VALIDATE_BACKEND")
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| "cpu".to_string())
    })
}

/// `validate --backend BACKEND` of `samples/FILE:LINE` with `extra` options and program
/// `args`.
fn validate(file: &str, line: u32, extra: &[&str], args: &[&str]) -> Output {
    let path = format!("samples/{file}");
    let id = format!("{path}:{line}");
    let mut all: Vec<&str> = vec!["validate", &path, "--loop", &id, "--backend", backend()];
    all.extend_from_slice(extra);
    all.push("--");
    all.extend_from_slice(args);
    warpwise(&all)
}

/// Validates every `(line, extra options)` of a sample and reports all failures at once.
fn all_pass(file: &str, args: &[&str], cases: &[(u32, &[&str])]) {
    let mut failed = Vec::new();
    for (line, extra) in cases {
        let out = validate(file, *line, extra, args);
        let t = text(&out);
        let ran_on = format!("backend: {}", backend());
        if out.status.code() != Some(0) || !t.contains(&ran_on) || !t.contains("PASS") {
            failed.push(format!("{file}:{line} {extra:?}:\n{t}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn vector_and_cast_loops_pass() {
    all_pass("vector_add.c", &["1000"], &[(27, &[])]);
    all_pass("char_cast.c", &[], &[(28, &[]), (38, &[])]);
    all_pass("prefix_sum.c", &["100"], &[(41, &[])]);
    all_pass("range_example.c", &["10"], &[(70, &[])]);
}

#[test]
fn strided_and_offset_loops_pass() {
    // every_fourth_add: `for (i = -n; i < n; i += 4)`, out section with gaps.
    all_pass("every_fourth_add.c", &["50"], &[(43, &[])]);
    all_pass("signal_conv1d.c", &["100", "5"], &[(44, &[])]);
    all_pass("gaussian_fan2.c", &["16"], &[(40, &[]), (46, &[])]);
    all_pass(
        "get_index.c",
        &["16"],
        &[
            (45, &[]),
            (45, &["--shared"]),
            (68, &[]),
            (70, &[]),
            (72, &[]),
        ],
    );
    all_pass("conv2d_rgb.c", &[], &[(100, &[]), (102, &[])]);
}

#[test]
fn matrix_loops_pass_under_both_mappings() {
    all_pass(
        "matrix_add.c",
        &["40"],
        &[(38, &[]), (38, &["--mapping", "x=i,y=j"]), (39, &[])],
    );
    all_pass(
        "transpose.c",
        &[],
        &[
            (37, &[]),
            (37, &["--mapping", "x=j,y=i"]),
            (37, &["--shared"]),
            (38, &[]),
        ],
    );
    all_pass(
        "srad_clamp.c",
        &["13", "37"],
        &[
            (39, &[]),
            (39, &["--mapping", "x=i,y=j"]),
            (40, &[]),
            (56, &[]),
            (56, &["--mapping", "x=i,y=j"]),
            (57, &[]),
            (77, &[]),
            (77, &["--mapping", "x=i,y=j"]),
            (78, &[]),
        ],
    );
}

#[test]
fn vla_loops_pass_under_both_mappings_and_shared() {
    all_pass(
        "jacobi2d.c",
        &["20"],
        &[
            (35, &[]),
            (35, &["--mapping", "x=i,y=j"]),
            (35, &["--shared"]),
            (36, &[]),
            (50, &[]),
            (50, &["--mapping", "x=i,y=j"]),
            (51, &[]),
        ],
    );
    all_pass(
        "matmul.c",
        &["13", "11", "7"],
        &[
            (38, &[]),
            (38, &["--mapping", "x=i,y=j"]),
            (38, &["--shared"]),
            (38, &["--mapping", "x=i"]),
            (39, &[]),
            (39, &["--shared"]),
            (56, &[]),
            (56, &["--mapping", "x=i,y=k"]),
            (57, &[]),
            (59, &[]),
            (59, &["--mapping", "x=k,y=j"]),
            (60, &[]),
            (62, &[]),
            (62, &["--mapping", "x=i,y=j"]),
            (63, &[]),
        ],
    );
}

#[test]
fn loops_settled_by_a_profile_pass() {
    let dir = scratch("profiles");
    // `friendly_statically`: matrix_add_struct's `a`, `b` and `c->data` are friendly under
    // the stated assumption that they coincide or do not overlap; conv2d_rgb's pixmaps under
    // the default aliasing policy's assumption that they do not overlap (no call site passes
    // one image twice).
    for (file, args, friendly_statically, cases) in [
        (
            "matrix_add_struct.c",
            &["30"][..],
            true,
            &[
                (37, &[][..]),
                (37, &["--mapping", "x=i,y=j"][..]),
                (38, &[][..]),
            ][..],
        ),
        (
            "conv2d_rgb.c",
            &[][..],
            true,
            &[(63, &[][..]), (63, &["--shared"][..]), (64, &[][..])][..],
        ),
    ] {
        let profile = dir.join(format!("{file}.yaml"));
        let p = profile.to_str().unwrap();
        let mut cmd = vec!["profile", "--loops", "all", "--fresh", "-o", p];
        let path = format!("samples/{file}");
        cmd.push(&path);
        cmd.push("--");
        cmd.extend_from_slice(args);
        let out = warpwise(&cmd);
        assert!(out.status.success(), "{}", text(&out));
        // Without the profile the loop is refused (or passes, when the static analysis
        // already calls it friendly); with it, it passes.
        let without = validate(file, cases[0].0, &[], args);
        if friendly_statically {
            assert_eq!(without.status.code(), Some(0), "{}", text(&without));
        } else {
            assert_eq!(without.status.code(), Some(2), "{}", text(&without));
            assert!(
                text(&without).contains("needs-profile"),
                "{}",
                text(&without)
            );
        }
        let with: Vec<(u32, Vec<&str>)> = cases
            .iter()
            .map(|(l, e)| {
                let mut v = vec!["--profile", p];
                v.extend_from_slice(e);
                (*l, v)
            })
            .collect();
        let cases: Vec<(u32, &[&str])> = with.iter().map(|(l, v)| (*l, &v[..])).collect();
        all_pass(file, args, &cases);
    }
}

#[test]
fn descending_const_struct_and_while_loops_pass() {
    let edge = "tests/cuda/edge.c";
    let run = |line: u32, extra: &[&str]| {
        let id = format!("{edge}:{line}");
        let mut all = vec!["validate", edge, "--loop", &id, "--backend", backend()];
        all.extend_from_slice(extra);
        all.extend_from_slice(&["--", "100"]);
        warpwise(&all)
    };
    for line in [19, 37] {
        let out = run(line, &[]);
        assert!(out.status.success(), "{}", text(&out));
    }
    // `const float *restrict out` compares as floats.
    assert!(text(&run(19, &[])).contains("`out` [0, 400): pass (100 floats"));
    let dir = scratch("edge");
    let profile = dir.join("p.yaml");
    let p = profile.to_str().unwrap();
    let out = warpwise(&["profile", "--loops", "all", "-o", p, edge, "--", "100"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = run(28, &["--profile", p]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("the whole array, 32 bytes, is copied"), "{t}");
    assert!(t.contains("`p` [0, 1200): pass"), "{t}");
}

fn fails(out: &Output, needles: &[&str]) {
    let t = text(out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("FAIL"), "{t}");
    for n in needles {
        assert!(t.contains(n), "missing `{n}` in:\n{t}");
    }
}

#[test]
fn a_shrunk_inbound_section_reads_poison() {
    let out = validate("vector_add.c", 27, &["--debug-shrink", "a"], &["1000"]);
    // `c[999] = a[999] + b[999]` read one float of poison.
    fails(
        &out,
        &[
            "copies `a` [0, 3996) instead of the reported [0, 4000)",
            "`c` [0, 4000): FAIL: 1 of 1000 floats differ, in bytes [3996, 4000)",
        ],
    );
}

#[test]
fn a_shrunk_outbound_section_leaves_bytes_unchanged() {
    let out = validate("matrix_add.c", 38, &["--debug-shrink", "c"], &["40"]);
    fails(
        &out,
        &[
            "`c` [0, 6400): FAIL: 1 of 1600 elements differ, in bytes [6396, 6400)",
            "the kernel wrote outside the device buffer of `c` (6396 bytes): bytes [6396, 6400)",
        ],
    );
}

#[test]
fn swapped_bounds_of_a_rectangular_nest_fail() {
    let out = validate("srad_clamp.c", 39, &["--debug-swap-bounds"], &["13", "37"]);
    if backend() == "cpu" {
        fails(
            &out,
            &[
                "`c_out` [0, 1924): FAIL",
                "the host function launched a grid of 1x5 blocks of 32x8 threads",
                "the loop's trip counts need 2x2",
            ],
        );
    } else {
        // The GPU backend launches the grid itself; the kernel's swapped guards still
        // leave elements unwritten.
        fails(&out, &["`c_out` [0, 1924): FAIL"]);
    }
}

#[test]
fn a_carried_dependence_forced_through_fails() {
    let refused = validate("prefix_sum.c", 28, &[], &["100"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("verdict: not-friendly"));
    let out = validate("prefix_sum.c", 28, &["--debug-force"], &["100"]);
    // The reverse order reads `out[i - 1]` before iteration i - 1 wrote it.
    fails(
        &out,
        &[
            "forced although not-friendly: WW101",
            "(line 29)",
            "`out` [0, 400): FAIL: 98 of 100 elements differ, in bytes [8, 400)",
        ],
    );
}

#[test]
fn refusals_and_backends_are_explained() {
    // An arg-min whose ties keep the latest iteration is not generated: refused with the
    // reduction named and why.
    let out = validate_file(ARGEXT, 80, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains(
            "`last` (min) with `last_at`: ties keep the latest iteration (`<=`), which a port cannot tell"
        ),
        "{}",
        text(&out)
    );
    // The `t` loop calls fan1 and fan2, which write A, M and B: their summaries show that
    // iterations may touch the same elements (WW111, no witness inside callees yet), and
    // no kernel is made for it.
    let out = validate("gaussian_fan2.c", 77, &[], &["16"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("verdict: needs-profile") && text(&out).contains("WW111"),
        "{}",
        text(&out)
    );
    let out = warpwise(&[
        "validate",
        "samples/vector_add.c",
        "--loop",
        "samples/vector_add.c:27",
        "--",
        "100",
    ]);
    let t = text(&out);
    // Auto says which backend ran; when it fell back to the CPU, `--backend cuda` refuses
    // with the same reason (tests/it/cuda_gpu.rs covers the GPU side).
    if let Some(at) = t.find("auto chose cpu: ") {
        let reason = t[at + "auto chose cpu: ".len()..].lines().next().unwrap();
        let reason = reason.strip_suffix(')').unwrap_or(reason);
        assert!(reason.contains("no GPU") || reason.contains("NVRTC"), "{t}");
        let out = warpwise(&[
            "validate",
            "samples/vector_add.c",
            "--loop",
            "samples/vector_add.c:27",
            "--backend",
            "cuda",
        ]);
        assert_eq!(out.status.code(), Some(2));
        let c = text(&out);
        assert!(c.contains(&format!("--backend cuda: {reason}")), "{c}");
    } else {
        assert!(
            t.contains("auto chose cuda: ") && t.contains("backend: cuda"),
            "{t}"
        );
    }
    let out = validate("vector_add.c", 27, &["--entry", "2"], &["100"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("entered the loop 1 time and finished"),
        "{}",
        text(&out)
    );
    // A library file given alone: the linker's complaint, and what to do.
    let out = validate_file("tests/fixtures/cuda/callee_math.c", 10, &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("none of the files given defines `main`"),
        "{}",
        text(&out)
    );
}

#[test]
fn emit_writes_the_kernel_the_note_and_the_shim() {
    let dir = scratch("emit");
    let d = dir.to_str().unwrap();
    let out = warpwise(&[
        "emit",
        "samples/matrix_add.c",
        "--loop",
        "samples/matrix_add.c:38",
        "-o",
        d,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let cu = std::fs::read_to_string(dir.join("add_L38.cu")).unwrap();
    let root = root().display().to_string();
    insta::assert_snapshot!("matrix_add_L38_cu", cu.replace(&root, "[ROOT]"));
    let note = std::fs::read_to_string(dir.join("add_L38.md")).unwrap();
    assert!(note.contains("@@ -38,6 +38,1 @@"), "{note}");
    assert!(note.contains("+    add_L38_gpu(a, b, c, N);"), "{note}");
    assert!(dir.join("warpwise_cuda_cpu.h").exists());
    // The same .cu compiles with the system C++ compiler through the shim.
    let cc = Command::new("c++")
        .args([
            "-x",
            "c++",
            "-std=c++14",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
            "-I",
        ])
        .arg(&dir)
        .arg(dir.join("add_L38.cu"))
        .arg("-o")
        .arg(dir.join("add_L38.o"))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // Refusals exit 1 with the verdict; unknown loops exit 2.
    let out = warpwise(&[
        "emit",
        "samples/prefix_sum.c",
        "--loop",
        "samples/prefix_sum.c:28",
        "-o",
        d,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("verdict: not-friendly"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("WW101"), "{}", text(&out));
    // A scalar reduction: the host function takes the variable's address, the kernel a
    // device copy it combines into, and the .cu compiles warning-free through the shim.
    let out = warpwise(&[
        "emit",
        "samples/histogram.c",
        "--loop",
        "samples/histogram.c:54",
        "-o",
        d,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cu = std::fs::read_to_string(dir.join("main_L54.cu")).unwrap();
    for want in [
        "long long sum = (long long)0;",
        "__syncthreads();",
        "__shfl_down_sync(ww_mask, ww_part_0, ww_d)",
        "ww_atomic_add(ww_red_sum, ww_part_0);",
        "extern \"C\" int main_L54_gpu(int *hist, long long *ww_red_sum)",
    ] {
        assert!(cu.contains(want), "missing `{want}` in\n{cu}");
    }
    let note = std::fs::read_to_string(dir.join("main_L54.md")).unwrap();
    assert!(note.contains("+    main_L54_gpu(hist, &sum);"), "{note}");
    let cc = Command::new("c++")
        .args([
            "-x",
            "c++",
            "-std=c++14",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
            "-I",
        ])
        .arg(&dir)
        .arg(dir.join("main_L54.cu"))
        .arg("-o")
        .arg(dir.join("main_L54.o"))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = warpwise(&[
        "emit",
        "samples/histogram.c",
        "--loop",
        "samples/histogram.c:3",
        "-o",
        d,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no loop at `samples/histogram.c:3`"));
}

#[test]
fn loops_over_globals_validate_or_are_refused() {
    // `x` and `buf` are file-scope arrays the loops write: copied like array arguments,
    // the host function naming the global.
    all_pass("aliasing.c", &[], &[(48, &[]), (50, &[])]);
    // `A_data` is an array of arrays: the kernel takes a pointer to its rows.
    all_pass(
        "transpose.c",
        &[],
        &[(44, &[]), (44, &["--mapping", "x=i,y=j"]), (45, &[])],
    );
    // Arrays reached through pointers held in memory (`double *table;`, a local allocated
    // through its address): the kernel takes the pointer's value as the array, the host
    // function naming the pointer.
    all_pass_file(
        "tests/fixtures/openmp/global_pointers.c",
        &[&["1000"], &["37"]],
        &[(12, &[]), (20, &[]), (35, &[])],
    );
    // A global struct is still refused, with the reason.
    let out = validate("../tests/fixtures/cuda/global_struct.c", 14, &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("the loop uses the global `g` (struct grid): globals other than arrays of fixed extents and scalars it only reads are not generated yet"),
        "{}",
        text(&out)
    );
}

/// `validate --backend BACKEND FILE:LINE` for a file outside `samples/`.
fn validate_file(file: &str, line: u32, extra: &[&str], args: &[&str]) -> Output {
    let id = format!("{file}:{line}");
    let mut all: Vec<&str> = vec!["validate", file, "--loop", &id, "--backend", backend()];
    all.extend_from_slice(extra);
    all.push("--");
    all.extend_from_slice(args);
    warpwise(&all)
}

/// Validates every `(line, extra options)` of a file outside `samples/` with each set of
/// program arguments, and reports all failures at once.
fn all_pass_file(file: &str, arg_sets: &[&[&str]], cases: &[(u32, &[&str])]) {
    let mut failed = Vec::new();
    for args in arg_sets {
        for (line, extra) in cases {
            let out = validate_file(file, *line, extra, args);
            let t = text(&out);
            if out.status.code() != Some(0) || !t.contains("PASS") {
                failed.push(format!("{file}:{line} {extra:?} {args:?}:\n{t}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn a_scalar_assigned_under_an_invariant_test_starts_from_its_entry_value() {
    // `mode` is assigned only when `coupled == 1` (entry 1); at entry 2 every iteration reads
    // its value from before the loop, which the kernel receives by value.
    let file = "tests/fixtures/openmp/invariant_test.c";
    for entry in ["1", "2"] {
        let out = validate_file(file, 15, &["--entry", entry], &[]);
        let t = text(&out);
        assert!(
            out.status.code() == Some(0) && t.contains("PASS"),
            "entry {entry}:\n{t}"
        );
        assert!(t.contains(&format!("entry {entry} of the loop")), "{t}");
    }
}

#[test]
fn global_arrays_of_fixed_extents_and_folded_constants_pass() {
    // 2-D and 3-D globals, a global scalar the loop reads (`dt`) and constants the report
    // folds (`scale`, `shift`) while the body names them; the whole grid and part of it.
    let file = "tests/fixtures/cuda/globals.c";
    all_pass_file(
        file,
        &[&["12"], &["7"]],
        &[
            (22, &[]),
            (28, &[]),
            (28, &["--mapping", "x=i,y=j"]),
            (29, &[]),
            (32, &[]),
            (32, &["--mapping", "x=i"]),
        ],
    );
    // The kernel takes the globals as pointers to their rows and the constants by value.
    let dir = scratch("globals");
    let out = warpwise(&[
        "emit",
        file,
        "--loop",
        &format!("{file}:28"),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cu = std::fs::read_to_string(dir.join("main_L28.cu")).unwrap();
    for want in [
        "double (*rhs)[10][5]",
        "double (*u)[10][5]",
        "double (*grid)[10]",
        "double dt",
        "double scale",
        "double shift",
    ] {
        assert!(cu.contains(want), "missing `{want}` in\n{cu}");
    }
}

#[test]
fn cfd_shapes_pass_flexible_members_restrict_rows_and_integer_math() {
    // code_saturne's shapes: a program type with a flexible array member (one element for
    // C++), a `cs_real_6_t *restrict` parameter, `cos` and `sqrt` of integers (converted to
    // double, as C does, where NVRTC found the call ambiguous).
    all_pass_file(
        "tests/fixtures/cuda/cfd_shapes.c",
        &[&["50"], &["17"]],
        &[(20, &[]), (27, &[])],
    );
}

#[test]
fn arrays_held_in_locals_behind_struct_pointers_pass() {
    // SUNDIALS' shape: `xd = NV_DATA(x)` through a cast of `x->content`, the loop indexing
    // `xd`; the report names the array `x->content->data`. The kernel takes `xd`, and the
    // program's `typedef struct vector {...} *N_Vector;` is copied whole.
    all_pass_file(
        "tests/fixtures/cuda/nvector.c",
        &[&["100"], &["37"]],
        &[(24, &[]), (32, &[])],
    );
}

#[test]
fn program_types_holding_library_types_pass_and_spell_them_for_nvrtc() {
    // `struct image { FILE *log; size_t columns, rows; off_t offset; uint8_t *pixels; }`
    // and `uint8_t` in the body: the replay holds the whole struct (the host function
    // reads `image->columns` for the bounds), and the device code declares the C
    // library's types for NVRTC, which has no headers.
    let file = "tests/fixtures/cuda/system_types.c";
    all_pass_file(file, &[&["30"], &["13"]], &[(19, &[])]);
    let dir = scratch("system-types");
    let out = warpwise(&[
        "emit",
        file,
        "--loop",
        &format!("{file}:19"),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cu = std::fs::read_to_string(dir.join("invert_L19.cu")).unwrap();
    let rtc = &cu[cu.find("#ifdef __CUDACC_RTC__").expect("an NVRTC block")..];
    let rtc = &rtc[..rtc.find("#endif").unwrap()];
    for want in ["FILE;", "uint8_t;", "size_t;", "__off_t;"] {
        assert!(rtc.contains(want), "missing `{want}` in\n{rtc}");
    }
    // The program's own types follow, after the C spellings they may use.
    assert!(cu.find("#define restrict").unwrap() < cu.find("typedef struct image").unwrap());
}

#[test]
fn bounds_over_array_elements_pass() {
    // spglib's `i < mesh[0] * mesh[1] * (size_t)(mesh[2])` with `mesh` a parameter (a
    // reduction counts), and the same product through a local `int mesh[3]` in `main`
    // (whose elements the report once printed as addresses, `&mesh[0]`): the kernel gets
    // the elements as values.
    all_pass_file(
        "tests/fixtures/cuda/mesh.c",
        &[&[], &["37"]],
        &[(9, &[]), (21, &[])],
    );
}

#[test]
fn nan_and_infinity_macros_pass() {
    // `NAN` and `INFINITY` are GCC built-ins after glibc's macros; the kernel spells them
    // as device code does (NVRTC compiles it in `tests/it/cuda_nvrtc.rs`).
    let file = "tests/fixtures/cuda/nan_inf.c";
    for args in [&[][..], &["37"][..]] {
        let out = validate_file(file, 9, &[], args);
        let t = text(&out);
        assert!(
            out.status.code() == Some(0) && t.contains("`out` [0, ") && t.contains("PASS"),
            "{args:?}: {t}"
        );
    }
}

#[test]
fn the_first_entry_that_runs_an_iteration_is_taken_by_default() {
    // `for (j = 0; j < i; j++)` runs nothing when i = 0: by default validate snapshots the
    // first entry that runs an iteration and says which; `--entry 1` asks for the empty one.
    let file = "tests/fixtures/cuda/empty_first.c";
    let out = validate_file(file, 14, &[], &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("snapshot: entry 2 of the loop") && t.contains("PASS"),
        "{t}"
    );
    let out = validate_file(file, 14, &["--entry", "1"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("entry 1 of the loop runs no iteration"),
        "{}",
        text(&out)
    );
    let out = validate_file(file, 14, &["--entry", "5"], &[]);
    assert!(
        text(&out).contains("snapshot: entry 5 of the loop"),
        "{}",
        text(&out)
    );
}

#[test]
fn copies_the_ir_drops_are_passed_by_value() {
    // `a1 = a5 = k;` before the loop: the kernel takes `a1` and `a5` from their
    // declarations (PolyBench's deriche and adi did not compile).
    let file = "tests/fixtures/openmp/chained_copies.c";
    let out = validate_file(file, 16, &[], &[]);
    let t = text(&out);
    assert!(out.status.code() == Some(0) && t.contains("PASS"), "{t}");
}

#[test]
fn copies_take_the_declaration_visible_at_the_loop() {
    // `const real_t c = k;` and `const float *restrict xs = x;` before the loop, an `int c`
    // in a block closed before it: the kernel takes `float c` and the buffer `xs` (it took
    // `int c`, and `xs` was undeclared in the kernel).
    let file = "tests/fixtures/openmp/typedef_copies.c";
    let out = validate_file(file, 23, &[], &[]);
    let t = text(&out);
    assert!(out.status.code() == Some(0) && t.contains("PASS"), "{t}");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_string_lossy().to_string();
    let emitted = warpwise(&[
        "emit",
        file,
        "--loop",
        &format!("{file}:23"),
        "-o",
        &out_dir,
    ]);
    assert!(emitted.status.success(), "{}", text(&emitted));
    let cu = std::fs::read_to_string(dir.path().join("main_L23.cu")).unwrap();
    assert!(
        cu.contains("main_L23_kernel(float *xs, float *y, int n, float c)"),
        "{cu}"
    );
}

#[test]
fn emit_analyses_the_files_given_as_one_program() {
    // The loop calls a helper defined in the other file: `analyze` calls it friendly, and
    // so does `emit` (it analysed the loop's file alone and called it not-friendly, the
    // helper's effects unknown); the kernel still needs the helper in the loop's file.
    let main = "tests/fixtures/cuda/twofile/main.c";
    let grid = "tests/fixtures/cuda/twofile/grid.c";
    let dir = scratch("twofile");
    let out = warpwise(&[
        "emit",
        main,
        grid,
        "--loop",
        &format!("{main}:11"),
        "-o",
        dir.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(!t.contains("not friendly"), "{t}");
    assert!(
        t.contains(
            "`double_grid_address` needs a device version but its definition is not in this file"
        ),
        "{t}"
    );
}

#[test]
fn a_helper_that_reaches_a_global_is_refused_with_the_reason() {
    // The kernel file declares no global on the device: the copied `set` would name an
    // undeclared `g`, and `foo`'s reduction would bypass the kernel's accumulator.
    let dir = scratch("helper-global");
    let file = dir.join("helpers.c");
    std::fs::write(
        &file,
        "int sum0;\n\
         int g[100];\n\
         void foo(int i) { sum0 = sum0 + i; }\n\
         void set(int i) { g[i] = 3 * i; }\n\
         void reduce(int n) { for (int i = 0; i < n; i++) foo(i); }\n\
         void fill(int n) { for (int i = 0; i < n; i++) set(i); }\n",
    )
    .unwrap();
    let f = file.to_string_lossy().to_string();
    let reasons = [
        (5, "the reduction `sum0` (+) is not spelled `sum0` in the body (an update a function the loop calls makes"),
        (6, "`set` uses the global `g`: globals that a called function reaches are not generated for CUDA yet"),
    ];
    for (line, reason) in reasons {
        let out_dir = dir.join(format!("out{line}"));
        let out = warpwise(&[
            "emit",
            &f,
            "--loop",
            &format!("{f}:{line}"),
            "-o",
            out_dir.to_str().unwrap(),
        ]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(t.contains(reason), "{t}");
    }
}

#[test]
fn private_storage_is_declared_in_the_kernel() {
    // Arrays and structs declared in the body, and an array written before it is read in
    // every iteration, become the kernel's own locals; a lastprivate scalar is refused.
    all_pass("../tests/cuda/private.c", &["100"], &[(14, &[]), (30, &[])]);
    let out = validate("../tests/cuda/private.c", 40, &[], &["100"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("`t` is computed in the loop and used after it"),
        "{}",
        text(&out)
    );
}

#[test]
fn friendly_sample_loops_with_reductions_validate() {
    // Scalar sums (int, long long, double), `C[i][j]` over `k` and sums over 2D
    // nests under both mappings and another block shape.
    all_pass(
        "dot_product.c",
        &["100"],
        &[(27, &[]), (27, &["--block", "96x1"])],
    );
    all_pass("histogram.c", &["100"], &[(54, &[])]);
    all_pass(
        "matmul.c",
        &["13", "11", "7"],
        &[
            (40, &[]),
            (40, &["--mapping", "x=k"]),
            (40, &["--block", "7x3"]),
            (67, &[]),
            (67, &["--mapping", "x=j,y=i", "--block", "32x8"]),
            (67, &["--mapping", "x=i,y=j"]),
            (68, &[]),
        ],
    );
    all_pass("jacobi2d.c", &["20"], &[(55, &[]), (56, &[])]);
    all_pass("prefix_sum.c", &["100"], &[(45, &[])]);
    all_pass("reconstruction_example.c", &[], &[(32, &[])]);
    all_pass("aliasing.c", &[], &[(57, &[])]);
    all_pass("matrix_add_struct.c", &["30"], &[(63, &[])]);
    all_pass("upsample.c", &[], &[(45, &[])]);
    all_pass("../tests/cuda/private.c", &["100"], &[(58, &[])]);
}

#[test]
fn sample_loops_with_reductions_are_generated_or_refused_for_another_reason() {
    // Every friendly sample loop with reductions gets a reduction kernel, unless something
    // else stops it (a section that depends on the data, a pointer without a section); no
    // sample has a reduction kind that is not generated.
    let dir = scratch("reductions");
    let d = dir.to_str().unwrap();
    let mut samples: Vec<String> = std::fs::read_dir(root().join("samples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    samples.sort();
    let mut emitted = 0;
    let mut refused = Vec::new();
    for name in samples {
        let path = format!("samples/{name}");
        let out = warpwise(&["analyze", &path, "--format", "json"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
        for l in report["loops"].as_array().unwrap() {
            let reductions = l["reductions"].as_array().cloned().unwrap_or_default();
            if l["verdict"] != "friendly" || reductions.is_empty() {
                continue;
            }
            let id = l["id"].as_str().unwrap();
            let out = warpwise(&["emit", &path, "--loop", id, "-o", d]);
            let t = text(&out);
            assert!(!t.contains("reductions are not generated yet"), "{id}: {t}");
            match out.status.code() {
                Some(0) => emitted += 1,
                Some(1) => refused.push((id.to_string(), t)),
                _ => panic!("{id}: {t}"),
            }
        }
    }
    let why = |id: &str| {
        refused
            .iter()
            .find(|(r, _)| r.starts_with(id))
            .map(|(_, t)| t.as_str())
            .unwrap_or("")
    };
    // `hist` is a parameter every call passes a 256-int array: its section is that whole
    // object, so the histogram is emitted (and validated in
    // `a_gathered_histogram_maps_the_whole_array_it_is_passed`).
    assert_eq!(why("samples/histogram.c:34:"), "", "{refused:?}");
    assert!(
        why("samples/reconstruction_example.c:35:")
            .contains("pointer `row` (int *) is used without a known section"),
        "{refused:?}"
    );
    assert!(
        why("samples/conv2d_rgb.c:71:")
            .contains("pointer `in_row` (unsigned char *) is used without a known section"),
        "{refused:?}"
    );
    assert_eq!(refused.len(), 2, "{refused:?}");
    eprintln!("{emitted} friendly sample loops with reductions emitted");
    assert!(emitted >= 13, "only {emitted}");
}

#[test]
fn a_gathered_histogram_maps_the_whole_array_it_is_passed() {
    all_pass("histogram.c", &[], &[(34, &[])]);
}

const REDUCTIONS: &str = "tests/fixtures/cuda/reductions.c";

/// The iterations of the reduction loops' runs: three full blocks of 256 threads and a
/// fourth with 37 at work, so one launch has partial results combined across blocks, a warp
/// partly at work and whole warps idle (each thread's partial result starts at the
/// operator's identity).
const REDUCED_N: &str = "805";

/// The friendly loops of `file` that have reductions: `(line, targets)`.
fn reduction_loops(file: &str) -> Vec<(u32, Vec<String>)> {
    let out = warpwise(&["analyze", file, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
    report["loops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["verdict"] == "friendly")
        .filter_map(|l| {
            let r = l["reductions"].as_array()?;
            let targets: Vec<String> = r
                .iter()
                .map(|r| r["target"].as_str().unwrap().to_string())
                .collect();
            (!targets.is_empty()).then(|| (l["line"].as_u64().unwrap() as u32, targets))
        })
        .collect()
}

#[test]
fn every_supported_reduction_of_the_fixture_validates() {
    // Each operator over int, unsigned, long long, float and double, min and max as `if`
    // and as fmin/fmax, && and ||, an element, two histograms, two reductions in one loop,
    // over REDUCED_N iterations.
    let refused_lines = [229, 283];
    let loops = reduction_loops(REDUCTIONS);
    let mut failed = Vec::new();
    let mut passed = 0;
    for (line, targets) in &loops {
        if refused_lines.contains(line) {
            continue;
        }
        let out = validate_file(REDUCTIONS, *line, &[], &[REDUCED_N]);
        let t = text(&out);
        let compared = targets
            .iter()
            .all(|v| t.contains(&format!("`{}` [", v.split('[').next().unwrap())));
        if out.status.code() != Some(0) || !t.contains("PASS") || !compared {
            failed.push(format!("{REDUCTIONS}:{line}:\n{t}"));
        } else {
            passed += 1;
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(passed >= 26, "only {passed} validations of {loops:?}");
}

#[test]
fn clamped_windows_validate() {
    // `i = MAX(lo, 0); i < MIN(hi, n)` up and down: the host computes the trip count and
    // sections with ww_min/ww_max.
    let file = "tests/fixtures/openmp/minmax_bounds.c";
    for line in [18, 24] {
        for args in [&["200"][..], &["37"][..]] {
            let out = validate_file(file, line, &[], args);
            let t = text(&out);
            assert_eq!(out.status.code(), Some(0), "{line} {args:?}: {t}");
            assert!(t.contains("PASS"), "{line} {args:?}: {t}");
        }
    }
}

#[test]
fn a_min3_bound_validates_and_a_called_bound_is_refused_with_its_reason() {
    let file = "tests/fixtures/openmp/call_bounds.c";
    for args in [&["200"][..], &["9"][..]] {
        let out = validate_file(file, 59, &[], args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {t}");
        assert!(t.contains("PASS"), "{args:?}: {t}");
    }
    // The generated host function computes the trip count from its parameters alone.
    let out = validate_file(file, 41, &[], &["200"]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("calls `getNodeLength`, which the generated host function cannot: copy the value into a local before the loop"),
        "{t}"
    );
}

const ARGEXT: &str = "tests/fixtures/openmp/argext.c";

#[test]
fn arg_min_and_arg_max_validate_with_their_partners() {
    // Values repeat, the entry value of `low` ties with the minimum, one loop counts down,
    // one takes two partners; the CPU backend runs the later iterations first, so a combine
    // that kept any but the earliest of equal values would give another index.
    for (line, vars) in [
        (29, &["best", "at"][..]),
        (39, &["top", "top_at", "top_key"][..]),
        (49, &["low", "low_at"][..]),
        (59, &["down", "down_at"][..]),
        // The outer loop of a nest; a `continue` and a mask before the comparison; a mask
        // after it in the same condition.
        (69, &["gmax", "gi", "gj"][..]),
        (90, &["masked", "masked_at"][..]),
        (104, &["anded", "anded_at"][..]),
        // Beside a counter computed from the index.
        (114, &["walked", "walked_at"][..]),
    ] {
        let out = validate_file(ARGEXT, line, &[], &[REDUCED_N]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{line}: {t}");
        assert!(t.contains("PASS"), "{line}: {t}");
        for v in vars {
            assert!(
                t.contains(&format!("`{v}` [")),
                "{line}: `{v}` not compared: {t}"
            );
        }
    }
}

#[test]
fn reductions_that_are_not_generated_are_refused_with_their_reason() {
    for (line, why) in [
        (
            229,
            "the reduction `s` (+) accumulates a `long double`: a kernel combines only int",
        ),
        (
            283,
            "the reduction `odd` (+): `odd[vi[i] & 3] = 1 + odd[vi[i] & 3];` is not an update",
        ),
    ] {
        let out = validate_file(REDUCTIONS, line, &[], &[]);
        assert_eq!(out.status.code(), Some(2), "{line}: {}", text(&out));
        assert!(text(&out).contains(why), "{line}: {}", text(&out));
    }
}

#[test]
fn a_packed_triangle_passes_and_its_shrunk_section_fails() {
    // MDAnalysis' shape: row `i` of the packed upper triangle starts at `i*(2n - i - 1)/2`
    // and an inner counter runs along it; the section is the whole triangle.
    let file = "tests/fixtures/openmp/counters.c";
    let id = format!("{file}:8");
    let run = |extra: &[&str]| {
        let mut all = vec!["validate", file, "--loop", &id, "--backend", backend()];
        all.extend_from_slice(extra);
        warpwise(&all)
    };
    let out = run(&[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("`distances` [0, 5328): pass (666 doubles"),
        "37*36/2 doubles:\n{t}"
    );
    fails(
        &run(&["--debug-shrink", "distances"]),
        &["copies `distances` [0, 5320) instead of the reported [0, 5328)"],
    );
}

#[test]
fn min_max_histograms_and_elements_validate() {
    // `vmax[c[f]] = MAX(vmax[c[f]], v)` twice per face on a global (atomics on the
    // elements), `*rowmin = c < *rowmin ? c : *rowmin` (one element, combined per block).
    let file = "tests/fixtures/openmp/minmax.c";
    all_pass_file(file, &[&[]], &[(17, &[]), (26, &[])]);
    let out = validate_file(file, 17, &[], &[]);
    assert!(
        text(&out).contains("`vmax` [0, 296): pass (37 doubles"),
        "{}",
        text(&out)
    );
}

/// Integer counters beside the index (`i++, k += 2`; `k++` in a loop that runs down) are
/// computed from the index at the top of the kernel's body; a pointer counter is refused
/// with what to do (the OpenMP target ports it).
#[test]
fn integer_counters_are_computed_from_the_index_and_pointer_walks_are_refused() {
    let file = "tests/fixtures/openmp/walks.c";
    all_pass_file(file, &[&[]], &[(17, &[]), (123, &[])]);
    let dir = scratch("counters");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&["emit", file, "--loop", &format!("{file}:17"), "-o", &d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let kernel = std::fs::read_to_string(dir.join("interleave_L17.cu")).unwrap();
    assert!(
        kernel.contains("{ auto ww_k = k + 2 * (i - (0));\n            out[ww_k] = re[i];"),
        "{kernel}"
    );
    let out = warpwise(&["emit", file, "--loop", &format!("{file}:27"), "-o", &d]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("pointer `p` is advanced beside the index: the kernel does not compute its device address yet"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_null_pointer_the_loop_tests_reaches_the_kernel_as_null() {
    // phonopy's `if (q_direction)`: the host function copied a section from the null
    // pointer (a crash) and handed the kernel a non-null copy, so `if (dir)` went the other
    // way. Run through the CPU shim with `dir` null and not, against the C program.
    let file = "tests/fixtures/openmp/null_pointer.c";
    let dir = scratch("null-pointer");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&[
        "emit",
        file,
        "--loop",
        &format!("{file}:8"),
        "--target",
        "cuda",
        "-o",
        &d,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(
        dir.join("main.cu"),
        "#include \"project_L8.cu\"\n#include <stdio.h>\n\
         int main(void) {\n\
           double q[8], d[8], a[8], b[8];\n\
           for (int i = 0; i < 8; i++) { q[i] = i * 0.5; d[i] = 8 - i; }\n\
           if (project_L8_gpu(NULL, a, q, 8) || project_L8_gpu(d, b, q, 8)) return 1;\n\
           double s = 0;\n\
           for (int i = 0; i < 8; i++) s += a[i] * (i + 1) + b[i] * (i + 3);\n\
           printf(\"%.3f\\n\", s);\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    let run = |compiler: &str, args: &[&str], exe: &str| -> String {
        let built = Command::new(compiler)
            .args(args)
            .arg("-o")
            .arg(dir.join(exe))
            .output()
            .unwrap();
        assert!(built.status.success(), "{}", text(&built));
        let ran = Command::new(dir.join(exe)).output().unwrap();
        assert!(ran.status.success(), "{exe}: {}", text(&ran));
        String::from_utf8_lossy(&ran.stdout).into_owned()
    };
    let main = dir.join("main.cu").to_string_lossy().to_string();
    let ported = run(
        "c++",
        &["-x", "c++", "-std=c++14", "-O1", "-I", &d, &main],
        "ported",
    );
    let source = root().join(file).to_string_lossy().to_string();
    let original = run("cc", &["-O1", &source], "original");
    assert_eq!(ported, original);
    assert_eq!(original.trim(), "504.000");
}

#[test]
fn validate_replays_a_null_pointer_as_null_and_a_wrong_kernel_still_fails() {
    // The snapshot read `dir`'s section through the null pointer and the program died
    // (status 139). Entry 1 of the loop is `project(a, NULL, q, 8)`, entry 2
    // `project(b, d, q, 8)`: both pass only if the kernel gets null for `dir` on the first
    // (a non-null empty copy would send it into `2.0 * dir[j]`, poison) and the copy on the
    // second.
    let file = "tests/fixtures/openmp/null_pointer.c";
    for (entry, dir) in [
        ("1", "`dir` [0, 64) of a null pointer"),
        ("2", "`dir` [0, 64), `out`"),
    ] {
        let out = validate_file(file, 8, &["--entry", entry], &[]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "entry {entry}: {t}");
        for want in [
            &format!("snapshot: entry {entry} of the loop"),
            dir,
            "`out` [0, 64): pass (8 doubles",
            "PASS",
        ] {
            assert!(t.contains(want), "entry {entry}: missing `{want}` in:\n{t}");
        }
    }
    // A wrong kernel still fails on each call: `q` one element short on the null call
    // (the branch that reads it), `dir` on the other.
    fails(
        &validate_file(file, 8, &["--entry", "1", "--debug-shrink", "q"], &[]),
        &["`out` [0, 64): FAIL: 1 of 8 doubles differ, in bytes [56, 64)"],
    );
    fails(
        &validate_file(file, 8, &["--entry", "2", "--debug-shrink", "dir"], &[]),
        &["`out` [0, 64): FAIL: 1 of 8 doubles differ, in bytes [56, 64)"],
    );
}

#[test]
fn an_outbound_null_pointer_is_null_in_the_program_and_the_replay() {
    // `if (aux) aux[j] = ...`: at entry 1 `aux` is null at the loop's exit too, the kernel
    // leaves it alone and the comparison finds null on both sides; at entry 2 its results
    // are compared.
    let file = "tests/fixtures/cuda/null_outbound.c";
    for (entry, aux) in [
        (
            "1",
            "`aux` [0, 64): pass (a null pointer in the program and in the replay: nothing to compare)",
        ),
        ("2", "`aux` [0, 64): pass (8 doubles"),
    ] {
        let out = validate_file(file, 8, &["--entry", entry], &[]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "entry {entry}: {t}");
        for want in [aux, "`out` [0, 64): pass (8 doubles", "PASS"] {
            assert!(t.contains(want), "entry {entry}: missing `{want}` in:\n{t}");
        }
    }
}

/// A loop variable the program reads after the loop (`return i;`): the host function
/// leaves it as it was, and the note gives the statement that sets the sequential loop's
/// last value after the call (the OpenMP port writes it there itself).
#[test]
fn a_loop_variable_read_after_the_loop_gets_its_final_value_in_the_note() {
    let file = "tests/fixtures/openmp/read_after.c";
    let dir = scratch("read-after");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&["emit", file, "--loop", &format!("{file}:11"), "-o", &d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let note = std::fs::read_to_string(dir.join("fill_L11.md")).unwrap();
    assert!(
        note.contains("the program reads `i` after the loop, and the host function leaves it as it was: after the call, `i = (0) + 1 * ((n) > (0) ? (n) - (0) : 0);` gives the value the sequential loop leaves"),
        "{note}"
    );
    assert!(!note.contains("does not set `i`"), "{note}");
    let out = validate_file(file, 11, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
