//! `warpwise emit --target openmp` and `validate --target openmp`: every sample and every
//! fixture under `tests/fixtures/openmp` is ported, and the port prints what the original
//! prints under clang's OpenMP offloading to the host (a separate device data environment,
//! so a short `map` gives wrong numbers; `defaultmap(none)` makes a missing one a compile
//! error). Broken ports (a shrunk or dropped map) fail; loops that cannot be ported are
//! refused with their reasons; the originals are never touched.
//!
//! The validation tests need an offloading clang (`.ci/run` installs clang-16); without
//! one they print why and return, unless `WARPWISE_REQUIRE_OFFLOAD` is set.

use crate::common::{root, text, warpwise};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    crate::common::scratch("openmp", name)
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
    // Every outermost friendly loop of the 20 samples but one whose section is unknown
    // statically (upsample.c:26 `in[i / factor]`); histogram.c:34's `hist[data[i]]` maps
    // the whole 256-int array its only caller passes.
    assert_eq!(total, 52, "ported loops across the samples");
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
        patch.contains("map(to: coeff[1:WW_MAX(0, ny - 2)], u[0:(960*nx + 40*ny - 41) / 960])"),
        "{patch}"
    );
    assert!(
        patch.contains("map(tofrom: rhs[1:WW_MAX(0, ((960*nx + 40*ny - 1001) / 960) - 1)])"),
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
fn a_pointer_copy_the_ir_drops_is_mapped_by_its_declared_type() {
    if !offload_available() {
        return;
    }
    // `const float *restrict xs = x;` before the loop: its declaration gives the type the
    // map clause needs (the loop was not ported: "the declared type of `xs` is not known").
    check(
        &["tests/fixtures/openmp/typedef_copies.c"],
        &[],
        0,
        3,
        &["PASS"],
    );
    let patch = emit_patch(
        &["tests/fixtures/openmp/typedef_copies.c"],
        "typedef_copies.c",
    );
    assert!(patch.contains("map(to: xs[0:n])"), "{patch}");
}

#[test]
fn every_reduction_kind_of_the_cuda_fixture_is_ported() {
    if !offload_available() {
        return;
    }
    // The CUDA reductions fixture under OpenMP: the `long double` sum's atomic needs
    // libatomic at the offloading link (it failed to link); float sums reassociate; the
    // flag takes `atomic write`; the arg-min a `declare reduction`; `x = x + 1 + c` becomes
    // `x = x + (1 + c)`, the form `atomic update` takes; `odd[..] = 1 + odd[..]` is the
    // `x = expr + x` form, which it takes as well.
    check(
        &["tests/fixtures/cuda/reductions.c"],
        &["--rtol", "1e-5"],
        0,
        30,
        &["PASS", "within relative tolerance"],
    );
}

#[test]
fn a_pointer_the_loop_tests_for_null_maps_an_empty_section_when_null() {
    if !offload_available() {
        return;
    }
    // Mapped unconditionally, the null `dir` crashed the offloaded run (exit 139).
    check(
        &["tests/fixtures/openmp/null_pointer.c"],
        &[],
        0,
        3,
        &["PASS", "`dir` is tested for null in the loop"],
    );
    let patch = emit_patch(&["tests/fixtures/openmp/null_pointer.c"], "null_pointer.c");
    assert!(patch.contains("dir[0:(dir ? n : 0)]"), "{patch}");
    assert!(patch.contains("q[0:n]"), "{patch}");
}

#[test]
fn a_scalar_assigned_under_an_invariant_test_starts_from_its_entry_value() {
    if !offload_available() {
        return;
    }
    // `mode` is assigned only when `coupled == 1`; the call with `coupled == 0` reads its
    // value from before the loop in every iteration, which `private(mode)` left undefined.
    check(
        &["tests/fixtures/openmp/invariant_test.c"],
        &[],
        0,
        3,
        &[
            "PASS",
            "not ported tests/fixtures/openmp/invariant_test.c:25:5: `w` starts from its value before the loop",
        ],
    );
    let patch = emit_patch(
        &["tests/fixtures/openmp/invariant_test.c"],
        "invariant_test.c",
    );
    assert!(patch.contains("firstprivate(mode)"), "{patch}");
    assert!(!patch.contains(" private(mode)"), "{patch}");
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
fn arg_min_and_arg_max_carry_their_partners_and_keep_the_earliest_tie() {
    let patch = emit_patch(&["tests/fixtures/openmp/argext.c"], "argext.c");
    for needle in [
        "#pragma omp declare reduction(ww_argmin_best : ww_arg_best_t",
        "reduction(ww_argmin_best : ww_arg_best)",
        "firstprivate(ww_arg_best_0)",
        "ww_arg_top_t ww_arg_top = { top, -1, top_at, top_key };",
        // Counting down numbers the iterations from the start as written.
        "(long long)((n - 1) - i)",
        "} while (0); if (best < ww_arg_best.v || (best == ww_arg_best.v && (long long)(i - (0)) < ww_arg_best.r))",
        "best = ww_arg_best.v; at = ww_arg_best.p0; }",
        // Beside a counter: its copy is declared inside the `do { } while (0)`.
        "do { { __typeof__(w) ww_w = w + -1 * (i - (0));",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    if !offload_available() {
        return;
    }
    // The values repeat, the entry value ties with the minimum of `k` and one loop counts
    // down: the printed indices are those of the sequential loop only with its tie rule.
    for n in ["1000", "37"] {
        check(
            &["tests/fixtures/openmp/argext.c", "--", n],
            &[],
            0,
            9,
            &[
                "PASS",
                "not ported tests/fixtures/openmp/argext.c:80:5: `last` (min) with `last_at`: ties keep the latest iteration (`<=`)",
            ],
        );
    }
}

#[test]
fn clamped_windows_map_their_min_max_sections_and_empty_ones_map_nothing() {
    let patch = emit_patch(
        &["tests/fixtures/openmp/minmax_bounds.c"],
        "minmax_bounds.c",
    );
    // The length of a window that may be empty is clamped at 0: OpenMP rejects a negative
    // one even when the loop runs no iteration.
    assert!(
        patch
            .contains("map(tofrom: y[WW_MAX(0, lo):WW_MAX(0, (WW_MIN(hi, n)) - (WW_MAX(0, lo)))])"),
        "{patch}"
    );
    if !offload_available() {
        return;
    }
    // Windows inside, across and past the arrays; at n = 5 most are empty.
    for n in ["200", "5"] {
        check(
            &["tests/fixtures/openmp/minmax_bounds.c", "--", n],
            &[],
            0,
            // `block`'s outer loop has no static section; the row loop inside is ported.
            5,
            &["PASS"],
        );
    }
}

#[test]
fn bounds_that_call_functions_or_nest_conditionals_are_ported() {
    let file = "tests/fixtures/openmp/call_bounds.c";
    let patch = emit_patch(&[file], "call_bounds.c");
    // The host calls the bound's function again for the clause (its value one variable of
    // the section, `8*v` bytes of 8-byte elements are `v` of them); the nested `?:` of MIN3
    // is one min, clamped at 0 where the window may be empty.
    for needle in [
        "node->data[0:(getNodeLength(node))]",
        "map(tofrom: full[0:WW_MAX(0, WW_MIN(-cbs + width - 1, WW_MIN(-cbs + ces, -cbs + l2)))])",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    // The loop whose body shortens the node is not ported.
    assert!(
        !patch.contains("+    #pragma omp target teams distribute parallel for\n     for (int i = 0; i < getNodeLength(node); i++) {"),
        "{patch}"
    );
    if !offload_available() {
        return;
    }
    for n in ["200", "9"] {
        check(&[file, "--", n], &[], 0, 7, &["PASS"]);
    }
}

/// `emit --target openmp FILE`: the patch holds every needle and each directive as many
/// times as given; then, where offloading is installed, `validate` at each size ports
/// `ported` loops, passes and says every one of `said`.
fn check_port_and_runs(
    file: &str,
    needles: &[&str],
    directives: &[(&str, usize)],
    sizes: &[&str],
    ported: usize,
    said: &[&str],
) {
    let name = Path::new(file).file_name().unwrap().to_string_lossy();
    let patch = emit_patch(&[file], &name);
    for needle in needles {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    for (directive, count) in directives {
        assert_eq!(
            patch.matches(directive).count(),
            *count,
            "{directive}:\n{patch}"
        );
    }
    if !offload_available() {
        return;
    }
    let mut expected = vec!["PASS"];
    expected.extend_from_slice(said);
    for n in sizes {
        check(&[file, "--", n], &[], 0, ported, &expected);
    }
}

#[test]
fn floating_point_atomics_give_way_to_the_loops_inside() {
    // lu's `t` loop stays on the host with a data region mapping what its own port would
    // have (all of `A`, not the column the inner port maps), and the `r`, `s` nest inside
    // is ported without atomics; the same for atax's `i`. Integer sums and a histogram
    // with no loop inside keep their atomics; the arg-max the port cannot express gives
    // way to the row loop inside it. Every element prints with all 17 digits: the sums
    // must run in the program's order.
    check_port_and_runs(
        "tests/fixtures/openmp/float_updates.c",
        &[
            "+    #pragma omp target data map(to: A[0:(808*n - 1) / 800]) map(tofrom: B[0:(808*n - 1) / 800])\n     for (t = 0; t < n; ++t)\n+        #pragma omp target teams distribute parallel for \\\n+            collapse(2)",
            "+    #pragma omp target data map(to: A[0:(808*n - 1) / 800], x[0:n]) map(tofrom: y[0:n])\n     for (int i = 0; i < n; i++)\n+        #pragma omp target teams distribute parallel for",
            "+            #pragma omp atomic update\n             totals[j] += counts[i][j];",
            "+        #pragma omp atomic update\n         hist[key[i]] += w[i];",
            "+        #pragma omp target teams distribute parallel for \\\n+            map(to: A[i:",
        ],
        // Three regions (the arg-max's rows over every `i`), none around the kernel-width
        // search, whose port maps no array.
        &[("#pragma omp atomic update", 2), ("#pragma omp target data", 3)],
        &["60", "7"],
        11,
        &[
            "the loop at tests/fixtures/openmp/float_updates.c:25:5 around it is not ported: in parallel it would update `B` with floating-point atomics",
            "data region around the loop at tests/fixtures/openmp/float_updates.c:25:5: A, B stay on the device",
            "not ported tests/fixtures/openmp/float_updates.c:66:5: `best` (max) with `last`: ties keep the latest iteration",
        ],
    );
}

#[test]
fn data_regions_take_sections_over_the_counters_around_the_kernels() {
    // A map the region made too short fails at run time ("partially mapped").
    check_port_and_runs(
        "tests/fixtures/openmp/counter_sections.c",
        &[
            // fdtd-2d's `fict[t]`: every value of `t`.
            "+        map(to: fict[0:tmax]) \\\n",
            // The `i` kernel writes column `j` and reads column `k`: over `j` from `k + 1`,
            // then over `k`, the whole of the first `n` rows.
            "+    #pragma omp target data map(tofrom: A[0:(488*n - 1) / 480])\n     for (int k = 0; k < n; k++) {",
            // The host's writes in `if` statements without braces: each update after its `;`.
            "             lmin[3] = norm2;\n+            #pragma omp target update to(lmin[0:3])\n         if (norm2 > lmin[3] + 1e6)",
        ],
        &[("#pragma omp target data", 3)],
        &["40", "5"],
        10,
        &[
            "data region around the loop at tests/fixtures/openmp/counter_sections.c:34:5: A stays on the device",
            // After the search `i` is past the range its loop gives: no region.
            "no data region around the loop at tests/fixtures/openmp/counter_sections.c:48:5 (1 ported loops inside): the section of `a[i:n]` depends on `i`",
        ],
    );
}

#[test]
fn sections_name_variables_as_the_loop_finds_them() {
    let file = "tests/fixtures/openmp/stale_names.c";
    let patch = emit_patch(&[file], "stale_names.c");
    // After `n = n - 1;` the loop writes a[0..n): the old `n - 1` mapped one short; after
    // `k++;` it starts at b[k]. The walk's bound is a value written with the moved counter:
    // refused, not mapped.
    for needle in [
        "map(tofrom: a[0:n])",
        "map(tofrom: b[k:WW_MAX(0, -k + n)])",
        // `i1 = 1 - i1;`: the row the loop resets, not the other one.
        "map(tofrom: dtw[i1*length:length])",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    if !offload_available() {
        return;
    }
    for n in ["200", "9"] {
        check(
            &[file, "--", n],
            &[],
            0,
            6,
            &[
                "PASS",
                "written with a variable the function changes before the loop",
            ],
        );
    }
}

#[test]
fn min_max_updates_become_atomic_compare_and_flags_atomic_writes() {
    if !offload_available() {
        return;
    }
    // Histograms of maxima (a macro, two per face, on a global) and minima (`fmin`), an
    // element through a pointer written as a conditional, and a flag.
    check(&["tests/fixtures/openmp/minmax.c"], &[], 0, 8, &["PASS"]);
    let patch = emit_patch(&["tests/fixtures/openmp/minmax.c"], "minmax.c");
    assert_eq!(
        patch.matches("#pragma omp atomic compare").count(),
        5,
        "vmax twice, vmin, *rowmin, *rowmax:\n{patch}"
    );
    for needle in [
        "+        if (ww_atomic_value > vmax[c1[f]]) { vmax[c1[f]] = ww_atomic_value; } }",
        "+        { double ww_atomic_value = (-v[f]);",
        "+        if (ww_atomic_value < *rowmin) { *rowmin = ww_atomic_value; } }",
        "+            if (ww_atomic_value < vmin[key[i]]) { vmin[key[i]] = ww_atomic_value; } }",
        "map(tofrom: rowmax[0:1], rowmin[0:1])",
        "map(tofrom: vmin, found)",
        "+            #pragma omp atomic write\n             found = 1;",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
}

#[test]
fn shapes_of_real_applications_compile_or_are_refused() {
    if !offload_available() {
        return;
    }
    // Every port compiles under `defaultmap(none)` and prints what the original prints.
    check(
        &["tests/fixtures/openmp/real_shapes.c"],
        &[],
        0,
        13,
        &[
            "PASS",
            "the loop's initialization `i = 0, found = 0` also sets `found = 0`",
            // `int x = 1; for (; x < n; x++)`: given its start, as the loop finds it.
            "the loop starts `for (x = 1;`, the value it finds there",
        ],
    );
    let patch = emit_patch(
        &["tests/fixtures/openmp/real_shapes.c", "--strict"],
        "real_shapes.c",
    );
    for needle in [
        // A row of an array of pointers while its subscript holds still: entered before the
        // kernel, copied back and deleted after it.
        "#pragma omp target enter data map(to: in[ww_in_r0][ww_in_s1:ww_in_n1])",
        "map(alloc: in[ww_in_s0:ww_in_n0], out[ww_out_s0:ww_out_n0])",
        "#pragma omp target update from(ww_out_p1[ww_out_s1:ww_out_n1])",
        // The start's reads: an element widens the array's section, a struct through a
        // pointer is mapped, one by value is copied.
        "map(to: row_start[i:2])",
        "map(to: settings[0:1])",
        "map(to: r) map(tofrom: v[r.first:r.count])",
        // The value of a variable whose address a call takes, named as the variable.
        "map(to: d[0:m*m]) reduction(+: dsum)",
        // A complex value is one variable.
        "firstprivate(zero, n)",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
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
fn a_packed_triangle_is_ported() {
    if !offload_available() {
        return;
    }
    check(&["tests/fixtures/openmp/counters.c"], &[], 0, 3, &["PASS"]);
    let patch = emit_patch(&["tests/fixtures/openmp/counters.c"], "counters.c");
    // The exact division maps the whole triangle, as C that computes it.
    assert!(
        patch.contains("map(tofrom: distances[0:WW_MAX(0, (-n + n*n) / 2)])"),
        "{patch}"
    );
}

/// Counters beside the index (`p++`, `*q++ = v`, `p += 3`, `p--`, `i++, k += 2`, an index
/// from `lo` by 2 or running down) are computed from the index in the body, and one read
/// after the loop gets its final value there; the ports print what the original prints
/// under a separate device data environment.
#[test]
fn counters_are_computed_from_the_index_and_pointer_walks_reach_their_arrays() {
    if !offload_available() {
        return;
    }
    let file = "tests/fixtures/openmp/walks.c";
    check(
        &[file],
        &[],
        0,
        28,
        &[
            "PASS",
            "not ported tests/fixtures/openmp/walks.c:110:5: pointer `q` is not dereferenced at its entry value",
            "after the loop, `q += 1 * ((width) > (0) ? (width) - (0) : 0);` gives the value the sequential loop leaves",
        ],
    );
    let (port, _) = emit_port(file);
    for expected in [
        // The increment loses the counter's update; the body reads the copy.
        "for (int i = 0; i < n; i++) { __typeof__(k) ww_k = k + 2 * (i - (0));\n        out[ww_k] = re[i];",
        // A pointer reaches the array it walks on the device; `s += *p; p++;` reads the copy.
        "map(to: kernel[0:n], p[0:0]) reduction(+: s)",
        "{ __typeof__(q) ww_q = q + 1 * (i - (0)); *ww_q = highlight; }",
        // Read after its update in the same iteration: the advanced value.
        "sums[i] = first + *(ww_p + 1);",
        // Two updates per iteration: the second reads one element further.
        "__typeof__(p) ww_p = p + 2 * (i - (0));\n        double first = *ww_p;\n        double second = *(ww_p + 1);",
        "__typeof__(q) ww_q = q + 1 * ((i - (lo)) / 2);",
        "__typeof__(k) ww_k = k + 1 * ((n - 1) - i);",
        // Each run of a row maps from where `q` is when it starts.
        "map(tofrom: q[0:border])",
        "map(tofrom: q[0:width])",
        "*ww_q = inside; } q += 1 * ((width) > (0) ? (width) - (0) : 0);",
        // The runs of every row (a loop around them): each run maps from where `q` is
        // when it starts, and the second and third are ported too (they were refused: their
        // sections named the first run's `x`).
        "map(to: inside) map(tofrom: q[0:width])\n        for (x = 0; x < width; x++)",
        // Moved before the loop: mapped from where it points then.
        "map(tofrom: q[0:n])\n    for (int i = 0; i < n; i++)\n        q[i] = i * 0.25;",
    ] {
        assert!(port.contains(expected), "no `{expected}` in:\n{port}");
    }
    assert!(!port.contains("p++;"), "{port}");
    // The refusal of `backwards` is needed: its pointer starts one past the array, where
    // no mapped section finds it, so the port written the same way keeps the host's address
    // and its stores are lost under the copy back.
    let refused = "    for (int i = 0; i < n; i++)\n        *--q = a[i];\n";
    let forced = port.replace(
        refused,
        "    #pragma omp target teams distribute parallel for map(to: a[0:n], q[0:0]) map(tofrom: out[0:n])\n    for (int i = 0; i < n; i++)\n        { __typeof__(q) ww_q = q + -1 * (i - (0)); *(ww_q + -1) = a[i]; }\n",
    );
    assert_ne!(forced, port, "the refused loop was not found:\n{port}");
    let original = run_original("walks-original", file, &[]);
    let (ported, _) = run_counting_transfers("walks-port", &port, &[]);
    assert_eq!(ported, original);
    let (forced, _) = run_counting_transfers("walks-forced", &forced, &[]);
    assert_ne!(
        forced, original,
        "a pointer one past its array went unnoticed"
    );
    // Without its final value, the next run of the row starts where the last one did.
    let unfinished = port.replacen(" q += 1 * ((border) > (0) ? (border) - (0) : 0);", "", 1);
    assert_ne!(unfinished, port);
    let (unfinished, _) = run_counting_transfers("walks-unfinished", &unfinished, &[]);
    assert_ne!(
        unfinished, original,
        "a counter's final value went unnoticed"
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

/// The programs are linked with gold where it is installed (the offload link reads
/// libomptarget's device runtime archive, slow under GNU ld); a link gold refuses (an
/// option only GNU ld knows) is made again with the default linker.
#[test]
fn a_link_gold_refuses_is_made_with_the_default_linker() {
    if !offload_available() {
        return;
    }
    check(
        &["samples/vector_add.c"],
        &["--cflags", "-O2 -Wl,--no-warn-rwx-segments"],
        0,
        3,
        &["PASS: 3 loops ported"],
    );
}

/// The compiler is probed only after a build failed: a compiler that cannot offload (`cc`,
/// which has no `-fopenmp-targets`, or one that is not there) is named, and validation is
/// not done (exit 2), rather than the port being blamed (exit 1).
#[test]
fn a_compiler_that_cannot_offload_is_named_and_the_port_is_not_blamed() {
    for cc in ["cc", "warpwise-no-such-compiler"] {
        let out = Command::new(crate::common::bin())
            .current_dir(root())
            .env("WARPWISE_OFFLOAD_CC", cc)
            .args(["validate", "--target", "openmp", "samples/vector_add.c"])
            .output()
            .unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{cc}:\n{all}");
        assert!(
            all.contains(&format!(
                "no compiler among `{cc}` builds an OpenMP offload program"
            )),
            "{cc}:\n{all}"
        );
        assert!(!all.contains("the port does not compile"), "{cc}:\n{all}");
    }
}

/// Arrays of rows two, three and four deep (`g[l]` of a `double ****`), kernels that map
/// different sections of the same rows one after another, an in-place call: ported whole,
/// the program prints what the sequential one does. A read over a triangle is refused; rows
/// not copied back, or copied one element short, fail.
#[test]
fn arrays_of_rows_are_mapped_row_by_row() {
    if !offload_available() {
        return;
    }
    let rows = "tests/fixtures/openmp/rows.c";
    check(
        &[rows],
        &[],
        0,
        10,
        &[
            "PASS",
            "the loop at line 64 runs over bounds that read `i`, which picks a row of `t`",
        ],
    );
    let port = emit_patch(&[rows], "rows.c");
    for needle in [
        // Four deep from a fixed first subscript, each map at most two subscripts deep.
        "+            long ww_g_s0 = l;",
        "+            #pragma omp target enter data map(to: ww_g_p2[ww_g_r2][ww_g_s3:ww_g_n3])",
        "+            #pragma omp target update from(ww_g_p3[ww_g_s3:ww_g_n3])",
        "+            #pragma omp target exit data map(delete: ww_g_p1[ww_g_s1:ww_g_n1])",
        // Rows the kernel walks: every row of the section.
        "+    #pragma omp target enter data map(to: b[ww_b_s0:ww_b_n0])",
    ] {
        assert!(port.contains(needle), "no `{needle}` in:\n{port}");
    }
    // `resid` writes `r`: without copying its rows back the sums are those of the input.
    check(
        &[rows],
        &["--debug-drop", "r"],
        1,
        10,
        &["FAIL: line 3: the original printed"],
    );
    // `g`'s rows one element short: the kernel writes past the device copy.
    check(&[rows], &["--debug-shrink", "g"], 1, 10, &["FAIL"]);
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

/// `emit --target openmp FILE -o DIR`: the ported text of FILE and what emit printed.
fn emit_port(file: &str) -> (String, String) {
    let dir = scratch("emit-port");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&["emit", "--target", "openmp", file, "-o", &d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let name = Path::new(file).file_name().unwrap();
    (std::fs::read_to_string(dir.join(name)).unwrap(), text(&out))
}

/// What a program prints (stdout) and the host<->device copies libomptarget made, by array
/// and direction: (array, "to device" | "to host") -> count. `source` is built with `-g`
/// (libomptarget names each copy after its map clause's item only then) and run with
/// `OMP_TARGET_OFFLOAD=MANDATORY LIBOMPTARGET_INFO=32` (the data-transfer bit).
/// The transfers of each array in each direction, as `run_counting_transfers` counts them.
type Copies = std::collections::BTreeMap<(String, &'static str), usize>;

/// Asserts each `(array, direction, count)` of `expected` against `copies`.
fn assert_copies(copies: &Copies, expected: &[(&str, &str, usize)]) {
    for &(array, direction, count) in expected {
        assert_eq!(
            copies
                .iter()
                .find(|((a, d), _)| a == array && *d == direction)
                .map(|(_, n)| *n),
            Some(count),
            "{array} copied {direction}: {copies:?}"
        );
    }
}

fn run_counting_transfers(name: &str, source: &str, args: &[&str]) -> (String, Copies) {
    let cc = std::env::var("WARPWISE_OFFLOAD_CC").unwrap_or_else(|_| "clang-16".into());
    let dir = scratch(name);
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let built = Command::new(&cc)
        .args([
            "-g",
            "-O1",
            "-fopenmp",
            "-fopenmp-targets=x86_64-pc-linux-gnu",
        ])
        .args(cuda::openmp::validate::fast_linker())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(built.status.success(), "{name}:\n{}", text(&built));
    let run = Command::new(&exe)
        .args(args)
        .env("OMP_TARGET_OFFLOAD", "MANDATORY")
        .env("LIBOMPTARGET_INFO", "32")
        .output()
        .unwrap();
    assert!(run.status.success(), "{name}:\n{}", text(&run));
    let mut copies = std::collections::BTreeMap::new();
    // `Libomptarget device 0 info: Copying data from host to device, HstPtr=..., TgtPtr=...,
    // Size=8000, Name=A[0:n]`
    for line in String::from_utf8_lossy(&run.stderr).lines() {
        let direction = if line.contains("Copying data from host to device") {
            "to device"
        } else if line.contains("Copying data from device to host") {
            "to host"
        } else {
            continue;
        };
        let item = line.rsplit_once("Name=").map_or("", |(_, n)| n);
        let array: String = item
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        *copies.entry((array, direction)).or_insert(0) += 1;
    }
    (String::from_utf8_lossy(&run.stdout).to_string(), copies)
}

/// The same program built without OpenMP: what the original prints.
fn run_original(name: &str, file: &str, args: &[&str]) -> String {
    let cc = std::env::var("WARPWISE_OFFLOAD_CC").unwrap_or_else(|_| "clang-16".into());
    let dir = scratch(name);
    let exe = dir.join(name);
    let built = Command::new(&cc)
        .args(["-O1"])
        .arg(root().join(file))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(built.status.success(), "{name}:\n{}", text(&built));
    let run = Command::new(&exe).args(args).output().unwrap();
    assert!(run.status.success(), "{name}:\n{}", text(&run));
    String::from_utf8_lossy(&run.stdout).to_string()
}

/// The port's text without the lines that start with `directive` (a `#pragma` that fits on
/// one line).
fn without(port: &str, directive: &str) -> String {
    port.lines()
        .filter(|l| !l.trim_start().starts_with(directive))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_time_loop_around_two_stencils_keeps_the_arrays_on_the_device() {
    let file = "tests/fixtures/openmp/time_steps.c";
    let (port, said) = emit_port(file);
    assert_eq!(port.matches("#pragma omp target data").count(), 1, "{port}");
    // Around the time loop, mapping the union of the two sweeps' sections: all of A and B,
    // both written by a sweep.
    assert!(
        port.contains(
            "    #pragma omp target data map(tofrom: A[0:n], B[0:n])\n    for (t = 0; t < tsteps; t++) {"
        ),
        "{port}"
    );
    assert!(!port.contains("target update"), "{port}");
    // The sweeps keep their own maps (present data is not copied again).
    assert_eq!(
        port.matches("#pragma omp target teams distribute parallel for")
            .count(),
        2,
        "{port}"
    );
    assert!(
        said.contains("data region around the loop at tests/fixtures/openmp/time_steps.c:11:5: A, B stay on the device"),
        "{said}"
    );
    let patch = emit_patch(&[file], "time_steps.c");
    assert!(
        patch.contains("+    /* warpwise: A, B stay on the device across this loop's iterations */\n+    #pragma omp target data map(tofrom: A[0:n], B[0:n])\n"),
        "{patch}"
    );
    if !offload_available() {
        return;
    }
    check(&[file], &[], 0, 2, &["PASS"]);
    // 10 time steps, two sweeps each.
    let steps = 10;
    let args = ["1000", "10"];
    let original = run_original("time_steps_original", file, &args);
    let (printed, copies) = run_counting_transfers("time_steps_port", &port, &args);
    assert_eq!(printed, original);
    // Once each way over all the steps.
    assert_copies(
        &copies,
        &[
            ("A", "to device", 1),
            ("A", "to host", 1),
            ("B", "to device", 1),
            ("B", "to host", 1),
        ],
    );
    assert_eq!(copies.len(), 4, "{copies:?}");
    // Without the region each sweep maps its arrays in and out at every step: a sweep reads
    // A in and writes B back, the other reads B in and writes A back.
    let per_kernel = without(&port, "#pragma omp target data");
    let (printed, copies) = run_counting_transfers("time_steps_per_kernel", &per_kernel, &args);
    assert_eq!(printed, original);
    assert_copies(
        &copies,
        &[
            ("A", "to device", 2 * steps),
            ("A", "to host", steps),
            ("B", "to device", 2 * steps),
            ("B", "to host", steps),
        ],
    );
}

#[test]
fn host_code_between_the_kernels_gets_target_updates() {
    let file = "tests/fixtures/openmp/time_steps_host_reads.c";
    let (port, said) = emit_port(file);
    assert_eq!(port.matches("#pragma omp target data").count(), 1, "{port}");
    // A[0] and B[n / 2] are read after the first sweep wrote B: both come back once before
    // the first host statement (the next two statements need no second copy), and A goes
    // back to the device after the host wrote A[0], before the second sweep reads it.
    assert!(
        port.contains(
            "        #pragma omp target update from(A[0:n], B[0:n])\n        probe += A[0] + B[n / 2];\n        printf("
        ),
        "{port}"
    );
    assert!(
        port.contains(
            "        A[0] = A[0] * 0.5 + 1.0;\n        #pragma omp target update to(A[0:n])\n        #pragma omp target teams"
        ),
        "{port}"
    );
    assert_eq!(
        port.matches("#pragma omp target update").count(),
        2,
        "{port}"
    );
    assert!(
        said.contains("2 `target update` for the host code between them"),
        "{said}"
    );
    if !offload_available() {
        return;
    }
    check(&[file], &[], 0, 2, &["PASS"]);
    let args = ["1000", "10"];
    let original = run_original("host_reads_original", file, &args);
    let (printed, copies) = run_counting_transfers("host_reads_port", &port, &args);
    assert_eq!(printed, original);
    // Once in at the region's start, once per step by the update; back once per step and
    // at the region's end.
    assert_copies(
        &copies,
        &[
            ("A", "to device", 11),
            ("B", "to device", 1),
            ("A", "to host", 11),
            ("B", "to host", 11),
        ],
    );
    // The updates are what keeps it right: without them the device computes with stale
    // values.
    let (printed, _) = run_counting_transfers(
        "host_reads_no_updates",
        &without(&port, "#pragma omp target update"),
        &args,
    );
    assert_ne!(printed, original, "the updates made no difference");
}

#[test]
fn no_data_region_when_sections_move_or_host_calls_may_touch_the_arrays() {
    let file = "tests/fixtures/openmp/time_steps_no_region.c";
    let (port, said) = emit_port(file);
    assert!(!port.contains("target data"), "{port}");
    assert!(!port.contains("target update"), "{port}");
    assert_eq!(
        port.matches("#pragma omp target teams distribute parallel for")
            .count(),
        4,
        "{port}"
    );
    assert!(
        said.contains("no data region around the loop at tests/fixtures/openmp/time_steps_no_region.c:15:5 (2 ported loops inside): the section of `A[0:WW_MAX(0, n - t*t)]` depends on `t`, which is assigned inside it"),
        "{said}"
    );
    assert!(
        said.contains("no data region around the loop at tests/fixtures/openmp/time_steps_no_region.c:29:5 (2 ported loops inside): the host code calls `perturb` at line 32, which may touch the mapped arrays"),
        "{said}"
    );
    if !offload_available() {
        return;
    }
    check(&[file], &[], 0, 4, &["PASS"]);
    let args = ["1000", "10"];
    let original = run_original("no_region_original", file, &args);
    let (printed, _) = run_counting_transfers("no_region_port", &port, &args);
    assert_eq!(printed, original);
}

#[test]
fn host_writes_fetch_first_and_send_before_a_jump() {
    let file = "tests/fixtures/openmp/time_steps_host_writes.c";
    let (port, _) = emit_port(file);
    assert_eq!(port.matches("#pragma omp target data").count(), 1, "{port}");
    // The write of A[0] comes after the first sweep wrote A's inside on the device: the
    // section comes back first, and goes out again before the `continue`.
    assert!(
        port.contains(
            "        #pragma omp target update from(A[0:n])\n        if (t == 2) { A[0] = 9.0;\n        #pragma omp target update to(A[0:n])\n        continue; }"
        ),
        "{port}"
    );
    assert!(
        port.contains(
            "        #pragma omp target update from(A[0:n], B[0:n])\n        if (t == 5) { B[0] = A[3];\n        #pragma omp target update to(B[0:n])\n        break; }"
        ),
        "{port}"
    );
    if !offload_available() {
        return;
    }
    check(&[file], &[], 0, 2, &["PASS"]);
    let args = ["1000", "10"];
    let original = run_original("host_writes_original", file, &args);
    let (printed, _) = run_counting_transfers("host_writes_port", &port, &args);
    assert_eq!(printed, original);
    // Sending B's section without fetching it first overwrites the sweep's values.
    let (printed, _) = run_counting_transfers(
        "host_writes_no_fetch",
        &port.replace("from(A[0:n], B[0:n])", "from(A[0:n])"),
        &args,
    );
    assert_ne!(printed, original, "fetching B made no difference");
}

/// Whole programs ported by `warpwise emit --target openmp` and checked by
/// `validate --target openmp` (clang's host offloading: a separate device data
/// environment, so a global missing on the device does not link and a stale or short map
/// prints other numbers): globals that helpers compiled for the device read, in their own
/// file or another, changed by the host between kernels; and a data region around kernels
/// whose sections move with a counter that runs up to an inclusive bound; structs declared
/// in a loop's body, which no clause may name.
///
/// The validation needs an offloading clang (`.ci/run` installs clang-16); without one the
/// tests check the emitted text only, unless `WARPWISE_REQUIRE_OFFLOAD` is set.
mod programs {
    use super::{offload_available, scratch, text, warpwise};

    /// Writes `files` (name, text) into a fresh directory; their paths.
    fn program(name: &str, files: &[(&str, &str)]) -> Vec<String> {
        let dir = scratch(name);
        files
            .iter()
            .map(|(f, t)| {
                std::fs::write(dir.join(f), t).unwrap();
                dir.join(f).to_string_lossy().to_string()
            })
            .collect()
    }

    /// `emit --target openmp` of `files`: the ported text of each file written, by name, and
    /// what emit said.
    fn emit(files: &[String]) -> (Vec<(String, String)>, String) {
        let dir = scratch("emit");
        let d = dir.to_string_lossy().to_string();
        let mut args = vec!["emit", "--target", "openmp"];
        args.extend(files.iter().map(String::as_str));
        args.extend(["-o", &d]);
        let out = warpwise(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let mut ported: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "c"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        ported.sort();
        (ported, text(&out))
    }

    /// `validate --target openmp FILES`: passes, with `ported` loops.
    fn validates(files: &[String], ported: usize) {
        let mut args = vec!["validate", "--target", "openmp"];
        args.extend(files.iter().map(String::as_str));
        let out = warpwise(&args);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(0), "{files:?}:\n{all}");
        assert!(all.contains("PASS"), "{all}");
        let count = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("ported "))
            .count();
        assert_eq!(count, ported, "{all}");
    }

    /// A Monte Carlo lookup's shape (XSBench's `SD.concs[...]`): the loop gathers through a
    /// struct field with indices it reads from another array, so no subscript bounds the
    /// section; the program allocates the field once, in an allocator of its own, with a
    /// length it keeps in a sibling field. The port maps the whole allocation, and the
    /// ported program prints what the sequential one does.
    #[test]
    fn a_gather_through_a_struct_field_is_sized_by_its_allocation() {
        let files = program(
            "whole-object",
            &[(
                "lookup.c",
                "#include <stdio.h>\n\
                 #include <stdlib.h>\n\
                 typedef struct { double *concs; int *mats; int length_concs; int length_mats; } Data;\n\
                 static double *load_concs(int n) {\n\
                 \x20 double *c = malloc(n * sizeof(double));\n\
                 \x20 for (int i = 0; i < n; i++) c[i] = 0.5 + i % 7;\n\
                 \x20 return c;\n\
                 }\n\
                 double lookup(const Data *d, int n) {\n\
                 \x20 double s = 0;\n\
                 \x20 for (int i = 0; i < n; i++) s += d->concs[d->mats[i % d->length_mats]] * i;\n\
                 \x20 return s;\n\
                 }\n\
                 int main(void) {\n\
                 \x20 Data D;\n\
                 \x20 D.length_concs = 1000;\n\
                 \x20 D.concs = load_concs(D.length_concs);\n\
                 \x20 D.length_mats = 300;\n\
                 \x20 D.mats = malloc(D.length_mats * sizeof(int));\n\
                 \x20 for (int i = 0; i < D.length_mats; i++) D.mats[i] = (i * 37) % D.length_concs;\n\
                 \x20 printf(\"%.1f\\n\", lookup(&D, 500));\n\
                 \x20 free(D.concs);\n\
                 \x20 free(D.mats);\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let main = &ported[0].1;
        assert!(
            main.contains("d->concs[0:d->length_concs]"),
            "{main}\n{said}"
        );
        assert!(said.contains("lookup.c:11:3 (lookup)"), "{said}");
        if offload_available() {
            validates(&files, 3);
        }
    }

    /// A helper in another file reads a global table that the host rewrites between two runs
    /// of the kernel (as NPB's `set_constants` fills `ce`): the table must exist on the
    /// device (the image does not link otherwise) and be sent before each kernel (a device
    /// copy made once would print the first pass's numbers twice).
    #[test]
    fn a_global_read_by_a_helper_in_another_file_is_on_the_device_and_current() {
        let files = program(
            "global-other-file",
            &[
                (
                    "main.c",
                    "#include <stdio.h>\n\
                     extern double coef[4];\n\
                     double scale(double x, int i);\n\
                     int main(void) {\n\
                     \x20 double a[64];\n\
                     \x20 for (int pass = 0; pass < 2; pass++) {\n\
                     \x20   for (int k = 0; k < 4; k++) coef[k] = k + 10 * pass;\n\
                     \x20   for (int i = 0; i < 64; i++) a[i] = scale(i, i);\n\
                     \x20   printf(\"%g %g %g\\n\", a[1], a[38], a[63]);\n\
                     \x20 }\n\
                     \x20 return 0;\n\
                     }\n",
                ),
                (
                    "helper.c",
                    "double coef[4];\n\
                     double scale(double x, int i) { return coef[i % 4] * x + coef[3]; }\n",
                ),
            ],
        );
        let (ported, said) = emit(&files);
        let helper = &ported.iter().find(|(n, _)| n == "helper.c").unwrap().1;
        assert!(
            helper.contains("double coef[4];\n#pragma omp declare target link(coef)\n"),
            "{helper}"
        );
        let main = &ported.iter().find(|(n, _)| n == "main.c").unwrap().1;
        assert!(
            main.contains("extern double coef[4];\n#pragma omp declare target link(coef)\n"),
            "{main}"
        );
        // The kernel that calls the helper maps the table (the loop filling it is ported too,
        // and a data region keeps both on the device with an update for the host's `printf`).
        assert!(main.contains("map(to: coef)"), "{main}\n{said}");
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// A `static` table of the loop's own file, read only by the helper the kernel calls and
    /// rewritten between kernels; and a `const` table, which the device gets once from its
    /// definition (`declare target`, not `link`: always present, so a `map` of it copies
    /// nothing).
    #[test]
    fn a_static_global_and_a_constant_table_read_by_a_helper() {
        let files = program(
            "static-global",
            &[(
                "main.c",
                "#include <stdio.h>\n\
                 static double ce[3][5];\n\
                 static const double w[3] = {0.5, 0.25, 0.125};\n\
                 static double f(int i) { return ce[i % 3][i % 5] * w[i % 3]; }\n\
                 int main(void) {\n\
                 \x20 double a[100];\n\
                 \x20 for (int pass = 1; pass <= 3; pass++) {\n\
                 \x20   for (int m = 0; m < 3; m++)\n\
                 \x20     for (int n = 0; n < 5; n++) ce[m][n] = pass * (m + 1) + n;\n\
                 \x20   for (int i = 0; i < 100; i++) a[i] = f(i) + i;\n\
                 \x20   printf(\"%g %g %g\\n\", a[0], a[7], a[99]);\n\
                 \x20 }\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let main = &ported[0].1;
        assert!(
            main.contains("static double ce[3][5];\n#pragma omp declare target link(ce)\n"),
            "{main}"
        );
        assert!(main.contains("#pragma omp declare target (w)\n"), "{main}");
        assert!(said.contains("ported "), "{said}");
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// Helpers that write globals: one only adds to `sum0` (a reduction of its loop, which
    /// a `reduction` clause cannot express: it privatizes the loop's own references, not the
    /// helper's, whose updates would race on the device's `sum0`), one writes its own
    /// element of `g` per call (ported, `g` declared on the device and mapped back).
    #[test]
    fn a_reduction_made_in_a_helper_stays_on_the_host_and_a_helper_writing_its_element_is_ported() {
        let files = program(
            "helper-globals",
            &[(
                "mix.c",
                "#include <stdio.h>\n\
                 int sum0;\n\
                 int g[1000];\n\
                 void foo(int i) { sum0 = sum0 + i; }\n\
                 void set(int i) { g[i] = 3 * i; }\n\
                 int main(void) {\n\
                 \x20 for (int i = 0; i < 1000; i++) foo(i);\n\
                 \x20 for (int i = 0; i < 1000; i++) set(i);\n\
                 \x20 long s = 0;\n\
                 \x20 for (int i = 0; i < 1000; i++) s += g[i];\n\
                 \x20 printf(\"%d %ld\\n\", sum0, s);\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let mix = &ported[0].1;
        assert!(
            said.contains("mix.c:7:3: the reduction on `sum0` is made in a function it calls"),
            "{said}"
        );
        assert!(!mix.contains("reduction(+: sum0)"), "{mix}");
        assert!(
            mix.contains("int g[1000];\n#pragma omp declare target link(g)\n"),
            "{mix}"
        );
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// A sequential sweep `for (i = 1; i <= n; i++)` (each row reads the one before) around a
    /// kernel over the row's columns: the data region maps the rows of every iteration, the
    /// last one included (`i == n`); one row short, the last kernel's map would extend the
    /// region's and the runtime refuses it.
    #[test]
    fn a_data_region_covers_the_kernels_of_an_inclusive_bound() {
        let files = program(
            "inclusive-region",
            &[(
                "sweep.c",
                "#include <stdio.h>\n\
                 #define M 40\n\
                 static void sweep(int n, double v[][M]) {\n\
                 \x20 int i, j;\n\
                 \x20 for (i = 1; i <= n; i++) {\n\
                 \x20   for (j = 0; j < M; j++)\n\
                 \x20     v[i][j] = 0.5 * v[i - 1][j] + j;\n\
                 \x20 }\n\
                 }\n\
                 int main(void) {\n\
                 \x20 static double v[21][M];\n\
                 \x20 for (int i = 0; i < 21; i++)\n\
                 \x20   for (int j = 0; j < M; j++) v[i][j] = i - j;\n\
                 \x20 sweep(20, v);\n\
                 \x20 printf(\"%g %g %g\\n\", v[1][3], v[19][39], v[20][0]);\n\
                 \x20 sweep(20, v);\n\
                 \x20 printf(\"%g %g %g\\n\", v[1][3], v[19][39], v[20][0]);\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let sweep = &ported[0].1;
        assert!(sweep.contains("#pragma omp target data"), "{sweep}\n{said}");
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// Structs declared in the loop's body and reached only through their members (RSBench's
    /// `Pole pole = data.poles[...]`, a complex product returned by a helper): private by
    /// their declaration, so no clause names them (not in scope at the pragma, the port
    /// would not compile).
    #[test]
    fn structs_declared_in_the_body_are_named_by_no_clause() {
        let files = program(
            "body-structs",
            &[(
                "poles.c",
                "#include <stdio.h>\n\
                 typedef struct { double r, i; } Cx;\n\
                 typedef struct { Cx ea, rt; int l; } Pole;\n\
                 static Cx c_mul(Cx a, Cx b) { Cx c = {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r}; return c; }\n\
                 static Cx c_sub(Cx a, Cx b) { Cx c = {a.r - b.r, a.i - b.i}; return c; }\n\
                 double sum_poles(const Pole *poles, int start, int end, Cx t1) {\n\
                 \x20 double sig = 0;\n\
                 \x20 for (int i = start; i < end; i++) {\n\
                 \x20   Pole pole = poles[i];\n\
                 \x20   Cx d = c_mul(pole.rt, c_sub(pole.ea, t1));\n\
                 \x20   sig += d.r + pole.l;\n\
                 \x20 }\n\
                 \x20 return sig;\n\
                 }\n\
                 int main(void) {\n\
                 \x20 static Pole poles[200];\n\
                 \x20 for (int i = 0; i < 200; i++) {\n\
                 \x20   poles[i].ea.r = i * 0.5; poles[i].ea.i = 1.0 / (i + 1);\n\
                 \x20   poles[i].rt.r = 2.0 - i * 0.01; poles[i].rt.i = i % 7; poles[i].l = i % 4;\n\
                 \x20 }\n\
                 \x20 Cx t1 = {0.25, -0.5};\n\
                 \x20 printf(\"%.6f\\n\", sum_poles(poles, 3, 180, t1));\n\
                 \x20 printf(\"%.6f\\n\", sum_poles(poles, 0, 200, t1));\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let text = &ported[0].1;
        assert!(
            !text.contains("pole)") && !text.contains("private(d"),
            "{text}\n{said}"
        );
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// RSBench's `sigT += (c_mul(pole.MP_RT, CDUM)).r;`: a member of the struct a call
    /// returns, which clang 16 refuses in a target region, is read through a local the port
    /// declares; one on the same line as another, and a nested one, are handled or refused
    /// by name.
    #[test]
    fn a_member_of_a_returned_struct_is_read_through_a_local() {
        let files = program(
            "returned-members",
            &[(
                "sums.c",
                "#include <stdio.h>\n\
                 typedef struct { double r, i; } Cx;\n\
                 static Cx c_mul(Cx a, Cx b) { Cx c = {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r}; return c; }\n\
                 static Cx pts[300];\n\
                 int main(void) {\n\
                 \x20 double s = 0, t = 0;\n\
                 \x20 for (int i = 0; i < 300; i++) { pts[i].r = 0.5 * i; pts[i].i = 1.0 / (i + 1); }\n\
                 \x20 for (int i = 0; i < 300; i++) {\n\
                 \x20   s += (c_mul(pts[i], pts[299 - i])).r; t += c_mul(pts[i], pts[i]).i;\n\
                 \x20 }\n\
                 \x20 printf(\"%.6f %.6f\\n\", s, t);\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        let text = &ported[0].1;
        assert!(
            text.contains("({ __typeof__(c_mul(pts[i], pts[299 - i])) __ww_rv0 = c_mul(pts[i], pts[299 - i]); __ww_rv0.r; })")
                && text.contains("__ww_rv1.i; })"),
            "{text}\n{said}"
        );
        if offload_available() {
            validates(&files, 2);
        }
    }

    /// `double ***` grids allocated row by row (NPB MG), used by kernel after kernel with
    /// different sections of the same rows: each kernel maps the rows it reaches and deletes
    /// every entry after it, so the next one starts from an empty device environment.
    #[test]
    fn rows_of_rows_of_pointers_are_ported_and_the_program_still_runs() {
        let files = program(
            "rows-of-rows",
            &[(
                "grid.c",
                "#include <stdio.h>\n\
                 #include <stdlib.h>\n\
                 static void zero3(double ***z, int n1, int n2, int n3) {\n\
                 \x20 for (int i3 = 0; i3 < n3; i3++)\n\
                 \x20   for (int i2 = 0; i2 < n2; i2++)\n\
                 \x20     for (int i1 = 0; i1 < n1; i1++) z[i3][i2][i1] = 0.0;\n\
                 }\n\
                 static void smooth(double ***u, double ***v, int n1, int n2, int n3) {\n\
                 \x20 for (int i3 = 1; i3 < n3 - 1; i3++)\n\
                 \x20   for (int i2 = 1; i2 < n2 - 1; i2++)\n\
                 \x20     for (int i1 = 0; i1 < n1; i1++)\n\
                 \x20       v[i3][i2][i1] += u[i3][i2 - 1][i1] + u[i3][i2 + 1][i1] + u[i3 - 1][i2][i1];\n\
                 }\n\
                 int main(void) {\n\
                 \x20 int n1 = 16, n2 = 12, n3 = 6;\n\
                 \x20 double ***u = malloc(n3 * sizeof(double **)), ***v = malloc(n3 * sizeof(double **));\n\
                 \x20 for (int k = 0; k < n3; k++) {\n\
                 \x20   u[k] = malloc(n2 * sizeof(double *)); v[k] = malloc(n2 * sizeof(double *));\n\
                 \x20   for (int j = 0; j < n2; j++) { u[k][j] = malloc(n1 * sizeof(double)); v[k][j] = malloc(n1 * sizeof(double)); }\n\
                 \x20 }\n\
                 \x20 zero3(v, n1, n2, n3);\n\
                 \x20 for (int k = 0; k < n3; k++) for (int j = 0; j < n2; j++) for (int i = 0; i < n1; i++) u[k][j][i] = k + 0.5 * j - 0.25 * i;\n\
                 \x20 smooth(u, v, n1, n2, n3);\n\
                 \x20 zero3(u, n1, n2, n3);\n\
                 \x20 smooth(v, u, n1, n2, n3);\n\
                 \x20 double w[64];\n\
                 \x20 for (int i = 0; i < 64; i++) w[i] = 0.5 * i + n1;\n\
                 \x20 printf(\"%g %g %g %g\\n\", v[2][3][4], u[3][5][7], u[4][10][15], w[63]);\n\
                 \x20 return 0;\n\
                 }\n",
            )],
        );
        let (ported, said) = emit(&files);
        // Only the allocation loop is left on the host.
        let refused = said.lines().filter(|l| l.starts_with("not ported"));
        assert_eq!(refused.count(), 1, "{said}");
        assert!(said.contains("calls `malloc`"), "{said}");
        assert!(
            ported[0]
                .1
                .contains("#pragma omp target update from(ww_z_p2[ww_z_s2:ww_z_n2])"),
            "{}",
            ported[0].1
        );
        if offload_available() {
            validates(&files, 4);
        }
    }
}

/// A program that checks its own result and prints its own path (the two builds' paths
/// differ, as timings would): `--expect` judges the port by the program's own check.
const SELF_CHECKING: &str = "#include <stdio.h>\n\
     #define N 1000\n\
     double a[N], b[N];\n\
     int main(int argc, char **argv) {\n\
       (void)argc;\n\
       for (int i = 0; i < N; i++) b[i] = i;\n\
       for (int i = 0; i < N; i++) a[i] = 2 * b[i] + 1;\n\
       double s = 0;\n\
       for (int i = 0; i < N; i++) s += a[i];\n\
       printf(\"run by %s\\n\", argv[0]);\n\
       printf(\"%s\\n\", s == (double)N * N ? \"CHECK OK\" : \"CHECK FAILED\");\n\
       return 0;\n\
     }\n";

#[test]
fn expect_judges_a_program_by_its_own_check() {
    if !offload_available() {
        return;
    }
    let dir = scratch("expect");
    let file = dir.join("selfcheck.c");
    std::fs::write(&file, SELF_CHECKING).unwrap();
    let f = file.to_string_lossy().to_string();
    // Line by line the outputs differ (each names its own executable) ...
    check(&[&f], &[], 1, 3, &["FAIL"]);
    // ... while both pass their own check.
    check(
        &[&f],
        &["--expect", "(?m)^CHECK OK$"],
        0,
        3,
        &["PASS: 3 loops ported", "`--expect (?m)^CHECK OK$`"],
    );
    // A pattern the original does not print judges nothing: exit 2, before any verdict.
    let out = warpwise(&[
        "validate",
        "--target",
        "openmp",
        &f,
        "--expect",
        "CHECK FAILED",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("the original program's output does not match `--expect CHECK FAILED`"),
        "{all}"
    );
    assert!(!all.contains("PASS") && !all.contains("FAIL:"), "{all}");
    // `--expect` is a whole program's check, not a kernel's.
    let out = warpwise(&[
        "validate",
        &f,
        "--loop",
        &format!("{f}:7"),
        "--expect",
        "OK",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn static_and_global_scalars_reduce_through_clauses() {
    if !offload_available() {
        return;
    }
    let file = "tests/fixtures/openmp/static_reductions.c";
    check(&[file], &[], 0, 3, &["PASS"]);
    let patch = emit_patch(&[file], "static_reductions.c");
    for needle in ["reduction(*: r, t)", "reduction(+: gsum)"] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    assert!(!patch.contains("omp atomic"), "{patch}");
}

#[test]
fn rows_of_one_contiguous_block_are_ported() {
    if !offload_available() {
        return;
    }
    // `a[i] = block + i * m`: each row is a part of one allocation, mapped as a row of
    // the tree like any other; the loop that sets the row pointers stays on the host.
    let file = "tests/fixtures/openmp/contiguous_rows.c";
    check(
        &[file],
        &[],
        0,
        3,
        &[
            "PASS",
            "`out` is an array of rows 1 deep",
            "not ported tests/fixtures/openmp/contiguous_rows.c:19:5",
        ],
    );
    // Without copying the written rows back, the second sweep reads stale input.
    check(
        &[file],
        &["--debug-drop", "out"],
        1,
        3,
        &["FAIL: line 1: the original printed"],
    );
}

/// Error paths (`tests/fixtures/openmp/error_paths.c`): each branch that only leads to
/// `exit` or a `noreturn` function records its iteration on the device and skips the rest
/// of it; after the kernel the host runs the first failing iteration again. Without bad
/// values the port prints what the original prints; with them both print the message of
/// the first failing iteration in the loop's order (the least index counting up, the
/// greatest counting down) and exit with its status.
#[test]
fn error_paths_are_flagged_on_the_device_and_run_again_on_the_host() {
    let file = "tests/fixtures/openmp/error_paths.c";
    let patch = emit_patch(&[file], "error_paths.c");
    for needle in [
        "long long ww_err_23 = 0x7fffffffffffffffLL;",
        "map(tofrom: ww_err_23)",
        "#pragma omp atomic compare\n+if (ww_at < ww_err_23) { ww_err_23 = ww_at; } }\n+goto ww_next_23;\n+#if 0",
        "ww_next_23: ; }",
        "if (ww_err_23 != 0x7fffffffffffffffLL) {",
        "i = (__typeof__(i))(ww_err_23);",
        "+#line 23\n+{\n         if (w[i] < 0) {",
        // Counting down, the first failing iteration is the greatest index.
        "long long ww_at = -(long long)(i);",
        "int i = (int)(-(ww_err_34));",
    ] {
        assert!(patch.contains(needle), "no `{needle}` in:\n{patch}");
    }
    // The calls on the error paths stay on the host: `die` is not compiled for the device.
    assert!(!patch.contains("declare target"), "{patch}");
    if !offload_available() {
        return;
    }
    check(
        &[file, "--", "none"],
        &[],
        0,
        4,
        &["PASS", "print the same\n"],
    );
    check(
        &[file, "--", "w"],
        &[],
        0,
        4,
        &["PASS", "print the same and exit with status 3"],
    );
    check(
        &[file, "--", "x"],
        &[],
        0,
        4,
        &["PASS", "print the same and exit with status 4"],
    );
}

/// CUDA emission does not write the flag: a loop with an error path is refused, saying so.
#[test]
fn cuda_refuses_a_loop_with_an_error_path() {
    let dir = scratch("cuda-error-path");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&[
        "emit",
        "tests/fixtures/openmp/error_paths.c",
        "--loop",
        "tests/fixtures/openmp/error_paths.c:23",
        "-o",
        &d,
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("the loop has an error path (`exit` at line 26")
            && all.contains("port it with `--target openmp`"),
        "{all}"
    );
}

/// A gather through a whole allocated object, inside a host loop no data region covers:
/// the port would copy the whole object on every step and is refused; the refusal says its
/// size as the source writes it and where it is allocated. The rest of the program is
/// ported and still prints what it printed.
#[test]
fn a_whole_object_copied_every_step_is_refused_with_its_size_and_place() {
    let file = "tests/fixtures/openmp/whole_copies.c";
    let dir = scratch("whole-copies");
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        file,
        "-o",
        &dir.to_string_lossy(),
    ]);
    let all = text(&out);
    assert!(
        all.contains(
            "not ported tests/fixtures/openmp/whole_copies.c:27:9: it maps the whole of `d.grid` (`8*d.length` bytes as allocated at whole_copies.c:15) on every launch, inside the loop at tests/fixtures/openmp/whole_copies.c:24:5"
        ),
        "{all}"
    );
    if !offload_available() {
        return;
    }
    check(&[file, "--", "1000"], &[], 0, 2, &["PASS"]);
}

/// Loops that reach arrays through pointers held in memory (`double *table;`, a local a
/// call allocates through its address): the pointee is the parameter, and the port maps
/// it alone (`table[0:n + 1]`), which attaches the device's copy of the pointer. Mapping
/// the pointer too, as a section of what it points to (`table[0:1]`), overlaps the
/// pointee's section in one construct: the offloading runtime aborts the port.
#[test]
fn a_global_pointer_maps_what_it_points_to_once() {
    let file = "tests/fixtures/openmp/global_pointers.c";
    let patch = emit_patch(&[file], "global_pointers.c");
    assert!(patch.contains("map(to: table[0:n + 1])"), "{patch}");
    assert!(patch.contains("map(tofrom: scaled[0:n])"), "{patch}");
    assert!(patch.contains("map(tofrom: buf[0:n])"), "{patch}");
    assert!(
        !patch.contains("table[0:1]") && !patch.contains("buf[0:1]"),
        "{patch}"
    );
    if !offload_available() {
        return;
    }
    check(&[file, "--", "1000"], &[], 0, 5, &["PASS"]);
}

/// A loop variable declared before the loop and read after it (returned, or continued by
/// `for (; ci < width; ...)`) is private to the construct, so the host's would keep its old
/// value: the port gives it the sequential loop's last value after the loop, with a trip
/// count that is 0 when the loop runs none (`fill(a, 0)` returns 0), and the program's port
/// prints what the original prints. Ported before without it, dtaidistance's first rows
/// wrote every row from column 0 and the count came back unset.
#[test]
fn a_loop_variable_read_after_the_loop_gets_its_last_value() {
    if !offload_available() {
        return;
    }
    let file = "tests/fixtures/openmp/read_after.c";
    check(
        &[file],
        &[],
        0,
        7,
        &[
            "PASS",
            "after the loop, `i = (0) + 1 * ((n) > (0) ? (n) - (0) : 0);` gives the value the sequential loop leaves",
            "`wpsi += 1 * ((inf_cols + psi) > (0) ? (inf_cols + psi) - (0) : 0); ci = (0) + 1 * ((inf_cols + psi) > (0) ? (inf_cols + psi) - (0) : 0);`",
        ],
    );
    let (port, said) = emit_port(file);
    assert!(
        port.contains("a[i] = i * 0.5; i = (0) + 1 * ((n) > (0) ? (n) - (0) : 0);\n    return i;"),
        "{port}"
    );
    // `for (; ci < width; ci++)` continues from the `ci` the loop before leaves: no start
    // can be written in the header, and the refusal says so.
    assert!(
        said.contains("it starts from the value `ci` holds, which `for (ci = ci;` cannot say"),
        "{said}"
    );
    // `scale`'s first loop: its `i` is set again by the second loop's start, not read.
    assert!(!port.contains("a[i] *= 2.0; i ="), "{port}");
}

/// A loop without an initialization is given the start it finds (`for (i = start;`,
/// `for (k = n - 1;`), its last value after it, its counters computed from it; the port
/// prints what the original prints. One that continues from the value another loop leaves
/// in its variable is refused, saying so.
#[test]
fn a_loop_without_an_initialization_is_given_its_start() {
    if !offload_available() {
        return;
    }
    let file = "tests/fixtures/openmp/no_init.c";
    check(
        &[file],
        &[],
        0,
        5,
        &[
            "PASS",
            "the loop starts `for (i = start;`, the value it finds there",
            "the loop starts `for (k = n - 1;`, the value it finds there",
            "after the loop, `i = (start) + 1 * ((n) > (start) ? (n) - (start) : 0);`",
            "not ported tests/fixtures/openmp/no_init.c:38:5: the loop has no initialization",
        ],
    );
    let (port, _) = emit_port(file);
    assert!(port.contains("for (i = start; i < n; i++) {"), "{port}");
}

#[test]
fn a_static_only_a_callee_names_is_refused_by_name() {
    // `emit` decides without building anything: no offloading compiler is needed.
    let dir = scratch("emit");
    let d = dir.to_string_lossy().to_string();
    let out = warpwise(&[
        "emit",
        "--target",
        "openmp",
        "tests/fixtures/openmp/callee_static.c",
        "-o",
        &d,
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "not ported tests/fixtures/openmp/callee_static.c:14:3: `elapsed` is not declared where the loop is"
        ),
        "{said}"
    );
    assert_eq!(ported_count(&out), 2, "{said}");
}
