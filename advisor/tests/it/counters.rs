//! Second counters and packed triangular storage: a counter advanced next to the
//! loop index (`distpos += 1` beside `j++`) is a polynomial of it, an exact division
//! (`i*(2*n - i - 1)/2`) is a polynomial, and rows of different lengths that follow one
//! another (MDAnalysis' `_calc_self_distance_array`) are told apart by the
//! consecutive-blocks test. Before, `distpos` was a value that "changes from iteration to
//! iteration" and all three MDAnalysis self-distance loops needed a profile.
//!
//! Each verdict is checked against compiled runs: a friendly loop prints the same with its
//! iterations reversed; the overlapping variants do not.

use crate::common;

use advisor::model::Verdict;
use common::*;

/// MDAnalysis' packed upper triangle: row `i` starts at `i*(2n - i - 1)/2`. (The outer
/// index is signed so that the reversed run, `i >= 0`, ends.)
const PACKED_TRIANGLE: &str = r#"
#include <stdio.h>
#include <stdint.h>
static void self_distances(const double *x, uint64_t n, double *distances) {
    uint64_t distpos = 0;
    int64_t rows = (int64_t)n;
    for (int64_t i = 0; i < rows; i++) { /* LOOP */
        distpos = (uint64_t)i * (2 * n - (uint64_t)i - 1) / 2;
        for (uint64_t j = (uint64_t)i + 1; j < n; j++) {
            double d = x[j] - x[i];
            distances[distpos] = d * d + (double)i;
            distpos += 1;
        }
    }
}
int main(void) {
    double x[23], distances[23 * 22 / 2];
    for (int k = 0; k < 23; k++) x[k] = (k * 7) % 11;
    self_distances(x, 23, distances);
    for (int k = 0; k < 23 * 22 / 2; k++) printf("%g ", distances[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_packed_triangle_filled_row_by_row_is_friendly() {
    let report = check(PACKED_TRIANGLE, Verdict::Friendly);
    // The inner loop's counter runs on from its previous iteration: not a grid dimension.
    assert_eq!(report.nest.len(), 1, "{:?}", report.nest);
    // The section is the whole packed triangle, n*(n - 1)/2 elements.
    let distances = report
        .parameters
        .iter()
        .find(|p| p.name == "distances")
        .unwrap();
    let bytes = distances.bytes.as_ref().expect("a section for `distances`");
    let size = symbolic::parse_expr(&bytes.size).expect("a C expression");
    let n = symbolic::Var::new("n");
    for value in [2i64, 3, 23, 100] {
        let values = std::collections::HashMap::from([(
            n.clone(),
            num_rational::BigRational::from_integer(value.into()),
        )]);
        let at = |e: &symbolic::Expr| e.eval(&values).unwrap();
        let want = num_rational::BigRational::from_integer((8 * value * (value - 1) / 2).into());
        assert_eq!(at(&size), want, "size {} at n = {value}", bytes.size);
    }
    same_in_any_order(PACKED_TRIANGLE);
}

/// The same with rows one element too long: row `i`'s last element is row `i + 1`'s first.
const OVERLAPPING_ROWS: &str = r#"
#include <stdio.h>
static void self_distances(const double *x, int n, double *distances) {
    for (int i = 0; i < n; i++) { /* LOOP */
        int distpos = i * (2 * n - i - 1) / 2;
        for (int j = i; j < n; j++) {
            distances[distpos] = x[j] - x[i] + i;
            distpos++;
        }
    }
}
int main(void) {
    double x[23], distances[23 * 22 / 2 + 23];
    for (int k = 0; k < 23; k++) x[k] = (k * 7) % 11;
    self_distances(x, 23, distances);
    for (int k = 0; k < 23 * 22 / 2 + 22; k++) printf("%g ", distances[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn rows_that_overlap_by_one_element_are_not_friendly() {
    let report = marked_report(OVERLAPPING_ROWS);
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    differs_in_reverse(OVERLAPPING_ROWS);
}

/// A second counter advancing by 2 beside the index: `out[k]` and `out[k + 1]` per row.
const TWO_PER_ITERATION: &str = r#"
#include <stdio.h>
static void interleave(const float *re, const float *im, int n, float *out) {
    int k = 0;
    for (int i = 0; i < n; i++, k += 2) { /* LOOP */
        out[k] = re[i];
        out[k + 1] = im[i];
    }
}
int main(void) {
    float re[40], im[40], out[80];
    for (int i = 0; i < 40; i++) { re[i] = i; im[i] = -i; }
    interleave(re, im, 40, out);
    for (int i = 0; i < 80; i++) printf("%g ", out[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_counter_stepping_twice_as_fast_as_the_index_is_its_multiple() {
    let report = check(TWO_PER_ITERATION, Verdict::Friendly);
    // The report names the counter for the ports, which must compute it per iteration.
    assert_eq!(
        report.counters,
        vec![advisor::model::Counter {
            name: "k".into(),
            step: 2,
            last_value: false
        }]
    );
    let out = report.parameters.iter().find(|p| p.name == "out").unwrap();
    let bytes = out.bytes.as_ref().expect("a section for `out`");
    assert_eq!(
        (bytes.lo.as_str(), bytes.hi.as_str()),
        ("0", "8*n"),
        "{out:#?}"
    );
}

/// The sequential version of the packed triangle: one running position for the whole nest.
/// It carries a value from row to row, so the outer loop is not parallel as written.
const RUNNING_POSITION: &str = r#"
#include <stdio.h>
static void self_distances(const double *x, int n, double *distances) {
    int distpos = 0;
    for (int i = 0; i < n; i++) { /* LOOP */
        for (int j = i + 1; j < n; j++) {
            distances[distpos] = x[j] - x[i] + i;
            distpos++;
        }
    }
}
int main(void) {
    double x[23], distances[23 * 22 / 2];
    for (int k = 0; k < 23; k++) x[k] = (k * 7) % 11;
    self_distances(x, 23, distances);
    for (int k = 0; k < 23 * 22 / 2; k++) printf("%g ", distances[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_running_position_across_rows_is_not_friendly() {
    let report = marked_report(RUNNING_POSITION);
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    differs_in_reverse(RUNNING_POSITION);
}

/// The loops of the counters fixture (`tests/fixtures/openmp/walks.c`), by function: every
/// one is friendly, with these sections (`[lo, hi)` in bytes) and these counters (name, step
/// in elements).
fn check_walk(
    reports: &[advisor::model::LoopReport],
    function: &str,
    sections: &[(&str, &str, &str)],
    counters: &[(&str, i64)],
) {
    let report = reports
        .iter()
        .find(|r| r.function == function)
        .unwrap_or_else(|| panic!("no loop in {function}"));
    assert_eq!(report.verdict, Verdict::Friendly, "{report:#?}");
    let arrays: Vec<(&str, &str, &str)> = report
        .parameters
        .iter()
        .filter_map(|p| {
            let b = p.bytes.as_ref()?;
            Some((p.name.as_str(), b.lo.as_str(), b.hi.as_str()))
        })
        .collect();
    assert_eq!(arrays, sections, "{function}: {report:#?}");
    let named: Vec<(&str, i64)> = report
        .counters
        .iter()
        .map(|c| (c.name.as_str(), c.step))
        .collect();
    assert_eq!(named, counters, "{function}");
}

/// A pointer advanced beside the index (`s += *p; p++;`, `*q++ = v;`, `p += 3`, `p--`,
/// `*--q`) is a counter expressed through the index: its accesses address the array it
/// started in over the whole trip. Before, `p` was an array of its own with an 8-byte
/// section (`[0, 8)`), the array it walks was missing from the parameters, and a port copied
/// one element. `soundness.rs` checks every touched byte of these loops against interpreted
/// runs; `tests/it/openmp_port.rs` runs their ports under a separate device data environment.
#[test]
fn pointers_advanced_beside_the_index_are_counters_over_the_arrays_they_walk() {
    let run_program = run;
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openmp/walks.c"),
    )
    .unwrap();
    let unit = load(&source);
    let reports = advisor::analyze::analyze_unit(&unit, &advisor::analyze::Filter::default());
    let walk = |function, sections, counters| check_walk(&reports, function, sections, counters);
    walk(
        "interleave",
        &[("im", "0", "4*n"), ("out", "0", "8*n"), ("re", "0", "4*n")],
        &[("k", 2)],
    );
    walk("sum_walk", &[("kernel", "0", "8*n")], &[("p", 1)]);
    walk(
        "scale_walk",
        &[("dst", "0", "8*n"), ("src", "0", "8*n")],
        &[("q", 1), ("r", 1)],
    );
    walk(
        "convolve_row",
        &[
            ("kernel", "0", "8*columns"),
            ("source", "0", "32*columns - 24"),
        ],
        &[("p", 1), ("q", 1)],
    );
    walk(
        "reverse_copy",
        &[("dst", "0", "8*n"), ("src", "0", "8*n")],
        &[("p", -1)],
    );
    walk(
        "fill",
        &[("highlight", "0", "32"), ("pixels", "0", "32*n")],
        &[("q", 1)],
    );
    walk(
        "gray_bytes",
        &[("gray", "0", "n"), ("rgb", "0", "3*n")],
        &[("p", 3)],
    );
    walk(
        "pair_sums",
        &[("a", "0", "8*n + 8"), ("sums", "0", "8*n")],
        &[("p", 1)],
    );
    walk(
        "backwards",
        &[("a", "0", "8*n"), ("out", "0", "8*n")],
        &[("q", -1)],
    );
    walk(
        "every_other",
        &[
            ("a", "8*lo", "8*lo + 16*((-lo + n + 1) / 2) - 8"),
            ("out", "0", "8*((-lo + n + 1) / 2)"),
        ],
        &[("q", 1)],
    );
    walk("shifted", &[("q", "0", "8*n")], &[]);
    // Advanced twice per iteration (`*p++` twice): one counter of step 2.
    walk(
        "pair_products",
        &[("pairs", "0", "16*n"), ("products", "0", "8*n")],
        &[("p", 2)],
    );
    // Three runs of a row, each starting where the last stopped: each run's section is
    // relative to `q` as the run finds it (before, the second was `[32*x, 32*width + 32*x)`
    // from the function's `q`, with the first run's `x`, a variable out of scope there).
    let runs: Vec<(String, String, bool)> = reports
        .iter()
        .filter(|r| r.function == "frame_row")
        .map(|r| {
            let q = r.parameters.iter().find(|p| p.name == "q").unwrap();
            let b = q.bytes.as_ref().expect("a section for `q`");
            (b.lo.to_string(), b.hi.to_string(), r.counters[0].last_value)
        })
        .collect();
    let run = |lo: &str, hi: &str, last| (lo.to_string(), hi.to_string(), last);
    assert_eq!(
        runs,
        vec![
            run("0", "32*border", true),
            run("0", "32*width", true),
            run("0", "32*border", false)
        ]
    );
    // The same runs inside a loop over rows (GraphicsMagick's decorate.c): `q` there is
    // the row loop's value, and each run's section and access offsets are from where `q`
    // points when the run starts. Before, the second run's were from the row's start,
    // `[32*x@L, 32*width + 32*x@L)`, with the first run's exit value of `x`. Moving the
    // start keeps its unaligned count (it may leave `q` anywhere in a 128-byte line).
    let rows: Vec<_> = reports
        .iter()
        .filter(|r| r.function == "frame_rows" && r.verdict == Verdict::Friendly)
        .map(|r| {
            let q = r.parameters.iter().find(|p| p.name == "q").unwrap();
            let b = q.bytes.as_ref().expect("a section for `q`");
            let access = r.mappings[0]
                .accesses
                .iter()
                .find(|a| a.base.as_deref() == Some("q"))
                .expect("the store through `q`");
            (
                b.lo.to_string(),
                b.hi.to_string(),
                access.offset_bytes.to_string(),
                access.unaligned_requests_per_warp.is_some(),
            )
        })
        .collect();
    let row = |lo: &str, hi: &str, unaligned| {
        (
            lo.to_string(),
            hi.to_string(),
            "32*x".to_string(),
            unaligned,
        )
    };
    assert_eq!(
        rows,
        vec![
            row("0", "32*border", false),
            row("0", "32*width", true),
            row("0", "32*border", true)
        ]
    );
    // The program the fixture is: it runs and prints its checksum.
    assert!(!run_program(&source).trim().is_empty());
}
