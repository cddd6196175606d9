//! `warpwise emit --target openmp` and `validate --target openmp`: every sample and every
//! fixture under `tests/fixtures/openmp` is ported, and the port prints what the original
//! prints under clang's OpenMP offloading to the host (a separate device data environment,
//! so a short `map` gives wrong numbers; `defaultmap(none)` makes a missing one a compile
//! error). Broken ports (a shrunk or dropped map) fail; loops that cannot be ported are
//! refused with their reasons; the originals are never touched.
//!
//! The validation tests need an offloading clang (`.ci/run` installs clang-16); without
//! one they print why and return, unless `WARPWISE_REQUIRE_OFFLOAD` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "openmp-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn warpwise(args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether an offloading clang is here; prints why not (and fails under
/// `WARPWISE_REQUIRE_OFFLOAD`).
fn offload_available() -> bool {
    let cc = std::env::var("WARPWISE_OFFLOAD_CC").unwrap_or_else(|_| "clang-16".into());
    let ok = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = format!(
            "skipped: `{cc}` is not installed (apt-get install clang-16 libomp-16-dev clang-tools-16)"
        );
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_OFFLOAD").is_none(),
            "{why}, and WARPWISE_REQUIRE_OFFLOAD is set"
        );
        eprintln!("{why}");
    }
    ok
}

fn ported_count(o: &Output) -> usize {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("ported "))
        .count()
}

/// `validate --target openmp FILES`: exit `code`, `ported` loops, and the output contains
/// every needle.
fn check(files: &[&str], extra: &[&str], code: i32, ported: usize, needles: &[&str]) {
    let mut args = vec!["validate", "--target", "openmp"];
    args.extend_from_slice(files);
    args.extend_from_slice(extra);
    let out = warpwise(&args);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(code), "{files:?} {extra:?}:\n{all}");
    assert_eq!(ported_count(&out), ported, "{files:?}:\n{all}");
    for n in needles {
        assert!(all.contains(n), "{files:?}: no `{n}` in:\n{all}");
    }
}

/// `emit --target openmp FILES -o DIR`: the patch of `name` in DIR.
fn emit_patch(files: &[&str], name: &str) -> String {
    let dir = scratch("emit");
    let mut args = vec!["emit", "--target", "openmp"];
    args.extend_from_slice(files);
    let d = dir.to_string_lossy().to_string();
    args.extend_from_slice(&["-o", &d]);
    let out = warpwise(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::read_to_string(dir.join(format!("{name}.patch"))).unwrap()
}

#[test]
fn every_sample_port_prints_what_the_original_prints() {
    if !offload_available() {
        return;
    }
    let mut samples: Vec<PathBuf> = std::fs::read_dir(root().join("samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    samples.sort();
    let mut failures = Vec::new();
    let mut total = 0;
    for s in &samples {
        let rel = format!("samples/{}", s.file_name().unwrap().to_string_lossy());
        let out = warpwise(&["validate", "--target", "openmp", &rel]);
        total += ported_count(&out);
        if out.status.code() != Some(0) || !text(&out).contains("PASS") {
            failures.push(format!("{rel}:\n{}", text(&out)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every outermost friendly loop of the 20 samples but two whose sections are unknown
    // statically (histogram.c:34 `hist[data[i]]`, upsample.c:26 `in[i / factor]`).
    assert_eq!(total, 51, "ported loops across the samples");
}

#[test]
fn globals_of_three_dimensions_with_runtime_bounds() {
    if !offload_available() {
        return;
    }
    check(&["tests/fixtures/openmp/globals3d.c"], &[], 0, 5, &["PASS"]);
    let patch = emit_patch(&["tests/fixtures/openmp/globals3d.c"], "globals3d.c");
    // Whole rows of `u[N][N][5]` (N*5 doubles, 960 bytes each) that cover the bytes the
    // loop touches.
    assert!(
        patch.contains("map(to: coeff[1:ny - 2], u[0:(960*nx + 40*ny - 41) / 960])"),
        "{patch}"
    );
    assert!(
        patch.contains("map(tofrom: rhs[1:((960*nx + 40*ny - 1001) / 960) - 1])"),
        "{patch}"
    );
    assert!(patch.contains("collapse(2)"), "{patch}");
    assert!(patch.contains("private(m)"), "{patch}");
}

#[test]
fn copies_the_ir_drops_are_firstprivate() {
    if !offload_available() {
        return;
    }
    // `a1 = a5 = k;`: strict clauses name both (clang refused `a1` without a clause).
    check(
        &["tests/fixtures/openmp/chained_copies.c"],
        &[],
        0,
        3,
        &["PASS"],
    );
    let patch = emit_patch(
        &["tests/fixtures/openmp/chained_copies.c", "--strict"],
        "chained_copies.c",
    );
    assert!(
        patch.contains("firstprivate(") && patch.contains("a1") && patch.contains("a5"),
        "{patch}"
    );
}

#[test]
fn every_reduction_kind_of_the_cuda_fixture_is_ported() {
    if !offload_available() {
        return;
    }
    // The CUDA reductions fixture under OpenMP: the `long double` sum's atomic needs
    // libatomic at the offloading link (it failed to link); float sums reassociate.
    check(
        &["tests/fixtures/cuda/reductions.c"],
        &["--rtol", "1e-5"],
        0,
        25,
        &["PASS", "within relative tolerance"],
    );
}

#[test]
fn structs_by_value_through_pointers_and_in_arrays() {
    if !offload_available() {
        return;
    }
    check(&["tests/fixtures/openmp/structs.c"], &[], 0, 11, &["PASS"]);
    let patch = emit_patch(&["tests/fixtures/openmp/structs.c"], "structs.c");
    // clang attaches a by-value struct's member section only when both are in one clause.
    assert!(patch.contains("map(tofrom: in, in.px[0:"), "{patch}");
    assert!(patch.contains("x[0:1]"), "{patch}");
    assert!(patch.contains("y->data[0:"), "{patch}");
    assert!(patch.contains("pts[0:n]"), "{patch}");
    // Member pointers copied into locals before the loop are mapped by the locals' names,
    // and so is the length (`int n = x->n`).
    assert!(
        patch.contains("map(to: xd[0:n]) map(tofrom: zd[0:n])"),
        "{patch}"
    );
}

#[test]
fn a_length_read_through_a_cast_of_void_content_is_mapped_by_its_local() {
    // sundials' N_Vector: `N = NV_LENGTH_OMP(x)` reads `((Content)x->content)->length`.
    let patch = emit_patch(
        &["tests/fixtures/openmp/opaque_content.c"],
        "opaque_content.c",
    );
    assert!(
        patch.contains("map(to: xd[0:N], yd[0:N]) map(tofrom: zd[0:N])"),
        "{patch}"
    );
    assert!(!patch.contains("x->content->length"), "{patch}");
    if !offload_available() {
        return;
    }
    check(
        &["tests/fixtures/openmp/opaque_content.c"],
        &[],
        0,
        2,
        &["PASS"],
    );
}

#[test]
fn reductions_become_clauses_and_atomics() {
    if !offload_available() {
        return;
    }
    check(
        &["tests/fixtures/openmp/reductions.c"],
        &[],
        0,
        6,
        &["PASS"],
    );
    let patch = emit_patch(&["tests/fixtures/openmp/reductions.c"], "reductions.c");
    for needle in [
        "reduction(+: isum, dsum)",
        "reduction(max: m)",
        "reduction(|: mask)",
        "map(tofrom: hist)",
        "map(tofrom: acc)",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    assert_eq!(
        patch.matches("#pragma omp atomic update").count(),
        3,
        "hist, whist, acc.sum:\n{patch}"
    );
}

#[test]
fn privates_the_authors_pragma_and_old_style_definitions() {
    if !offload_available() {
        return;
    }
    check(&["tests/fixtures/openmp/privates.c"], &[], 0, 5, &["PASS"]);
    let patch = emit_patch(&["tests/fixtures/openmp/privates.c"], "privates.c");
    // The authors' `parallel for` is replaced inside its `#ifdef _OPENMP`.
    assert!(
        patch.contains("-#pragma omp parallel for private(c, k, t, tmp, p)"),
        "{patch}"
    );
    assert!(patch.contains("private(tmp, c, k, p, t)"), "{patch}");
    assert!(
        patch.contains("map(tofrom: v[0:n])"),
        "K&R `scale`:\n{patch}"
    );
}

#[test]
fn a_packed_triangle_is_ported_and_a_second_counter_is_refused() {
    if !offload_available() {
        return;
    }
    check(
        &["tests/fixtures/openmp/counters.c"],
        &[],
        0,
        4,
        &[
            "PASS",
            "not ported tests/fixtures/openmp/counters.c:22:5: the loop advances `k` by 2 per iteration beside `i`",
        ],
    );
    let patch = emit_patch(&["tests/fixtures/openmp/counters.c"], "counters.c");
    // The exact division maps the whole triangle, as C that computes it.
    assert!(
        patch.contains("map(tofrom: distances[0:(-n + n*n) / 2])"),
        "{patch}"
    );
}

#[test]
fn a_helper_in_another_file_is_declared_for_the_device_there() {
    if !offload_available() {
        return;
    }
    let dir = scratch("two-files");
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\ndouble scale(double x);\nint main(void) {\n  double a[100];\n  for (int i = 0; i < 100; i++) a[i] = i;\n  for (int i = 0; i < 100; i++) a[i] = scale(a[i]);\n  printf(\"%g\\n\", a[99]);\n  return 0;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("helper.c"),
        "double scale(double x) { return 2 * x + 1; }\n",
    )
    .unwrap();
    let main = dir.join("main.c").to_string_lossy().to_string();
    let helper = dir.join("helper.c").to_string_lossy().to_string();
    check(&[&main, &helper], &[], 0, 2, &["PASS"]);
    let patch = emit_patch(&[&main, &helper], "helper.c");
    assert!(
        patch.contains("+#pragma omp declare target\n double scale")
            && patch.contains("+#pragma omp end declare target\n"),
        "{patch}"
    );
}

#[test]
fn a_short_or_missing_map_fails_validation() {
    if !offload_available() {
        return;
    }
    // `c` loses its last element: the port never copies c[n-1] back.
    check(
        &["samples/vector_add.c"],
        &["--debug-shrink", "c"],
        1,
        3,
        &["FAIL: line 1: the original printed `checksum:"],
    );
    // `b` left out: `defaultmap(none)` makes it a compile error in the validation build.
    check(
        &["samples/vector_add.c"],
        &["--debug-drop", "b"],
        1,
        3,
        &[
            "FAIL: the port does not compile",
            "variable 'b' must have explicitly specified",
        ],
    );
}

#[test]
fn loops_that_cannot_be_ported_are_refused_with_their_reasons() {
    let dir = scratch("refused");
    let d = dir.to_string_lossy().to_string();
    // A carried dependence.
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "samples/prefix_sum.c",
        "--loop",
        "samples/prefix_sum.c:28",
        "-o",
        &d,
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("is not friendly") && all.contains("WW101"),
        "{all}"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "nothing written"
    );
    // An address envelope that starts below the array is clamped, and said so.
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "samples/conv2d_rgb.c",
        "-o",
        &d,
    ]);
    assert!(
        text(&out).contains("the port maps from `in_image->pixmap[0]`"),
        "{}",
        text(&out)
    );
    // No such loop: a usage error.
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "samples/matmul.c",
        "--loop",
        "samples/matmul.c:7",
        "-o",
        &d,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // CUDA makes one kernel: `--loop` is required there.
    let out = warpwise(&["emit", "samples/matmul.c", "-o", &d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("required for `--target cuda`"));
}

#[test]
fn originals_are_never_written() {
    let before = std::fs::read(root().join("samples/matmul.c")).unwrap();
    // Into the samples' own directory: the copy would replace the original.
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "samples/matmul.c",
        "-o",
        "samples",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        std::fs::read(root().join("samples/matmul.c")).unwrap(),
        before
    );
    // An output that cannot be created is a clear error.
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "samples/matmul.c",
        "-o",
        "/proc/warpwise-cannot-create",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("cannot create"), "{}", text(&out));
    assert_eq!(
        std::fs::read(root().join("samples/matmul.c")).unwrap(),
        before
    );
}

#[test]
fn matmul_patch() {
    let patch = emit_patch(&["samples/matmul.c"], "matmul.c");
    insta::assert_snapshot!("matmul_openmp_patch", patch);
}
