//! The memory model on whole programs: globals are memory objects, storage declared in a
//! loop body is private to each iteration, variables written before they are read in every
//! iteration are privatized (lastprivate when read after the loop), and loop bounds read
//! through memory nothing in the loop can write are invariant.
//!
//! Every fixture is a complete C program whose loop under test is marked `/* LOOP */`. Its
//! verdict is checked statically, and the claim behind it against concrete executions: the
//! program is compiled and run with the loop's iterations in source order and in reverse. A
//! loop called friendly must print the same both ways; a dependence the report states must
//! show up as a different output. Each privatized object is also checked in the IR
//! interpreter: every byte a load of it reads in an iteration was written earlier in that
//! same iteration.

use crate::common;

use advisor::model::{LoopReport, PrivateKind, Storage, Verdict};
use common::*;

/// The report's private entry for `name`.
fn private<'r>(report: &'r LoopReport, name: &str) -> &'r advisor::model::Private {
    report
        .private
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("`{name}` is not private: {report:#?}"))
}

// ---------------------------------------------------------------------------------------
// Globals.

const GLOBAL_1D: &str = r#"
#include <stdio.h>
double g[1000];
static void fill(int n) {
    for (int i = 0; i < n; i++) /* LOOP */
        g[i] = 2.0 * i + 1.0;
}
int main(void) {
    fill(700);
    double s = 0;
    for (int i = 0; i < 1000; i++) s = s * 1.0001 + g[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_global_array_is_a_parameter_with_an_exact_section() {
    let report = check(GLOBAL_1D, Verdict::Friendly);
    let g = report.parameters.iter().find(|p| p.name == "g").unwrap();
    assert_eq!(g.storage, Some(Storage::Global));
    assert_eq!(g.role, advisor::model::Role::Out);
    let bytes = g.bytes.as_ref().expect("a section");
    assert_eq!((bytes.lo.as_str(), bytes.hi.as_str()), ("0", "8*n"));
    assert!(!has_code(&report, "WW104"));
    same_in_any_order(GLOBAL_1D);
}

const GLOBAL_3D: &str = r#"
#include <stdio.h>
#define N 12
static double u[N][N][5];
static void relax(int nx, int ny) {
    for (int i = 0; i < nx; i++) /* LOOP */
        for (int j = 0; j < ny; j++)
            for (int k = 0; k < 5; k++)
                u[i][j][k] = u[i][j][k] * 0.5 + i + 2 * j + 3 * k;
}
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < 5; k++)
                u[i][j][k] = i * j - k;
    relax(10, 11);
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < 5; k++)
                s = s * 1.001 + u[i][j][k];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_fixed_size_3d_global_with_runtime_bounds_is_friendly() {
    let report = check(GLOBAL_3D, Verdict::Friendly);
    let u = report.parameters.iter().find(|p| p.name == "u").unwrap();
    assert_eq!(
        (u.storage, u.role),
        (Some(Storage::Global), advisor::model::Role::Inout)
    );
    assert!(u.bytes.is_some(), "{u:#?}");
    same_in_any_order(GLOBAL_3D);
}

const GLOBAL_4D: &str = r#"
#include <stdio.h>
#define N 9
static double lhs[3][N][N][5];
static void derive(int nx, int ny) {
    for (int i = 0; i < nx; i++) /* LOOP */
        for (int j = 0; j < ny; j++)
            for (int k = 0; k < 5; k++)
                lhs[1][i][j][k] = lhs[0][i][j][k] * 2.0 + lhs[2][i][j][k];
}
int main(void) {
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < 5; k++)
                    lhs[m][i][j][k] = m + i - j * k;
    derive(8, 7);
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < 5; k++)
                s = s * 1.001 + lhs[1][i][j][k];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn planes_of_a_4d_global_are_independent() {
    // `lhs[1][i][j][k]` and `lhs[0][i][j][k]`: the in-bounds rule keeps the planes apart.
    let report = check(GLOBAL_4D, Verdict::Friendly);
    assert!(!has_code(&report, "WW111") && !has_code(&report, "WW101"));
    same_in_any_order(GLOBAL_4D);
}

const GLOBAL_ACCUMULATED: &str = r#"
#include <stdio.h>
double acc;
double a[64];
static void smooth(int n) {
    for (int i = 0; i < n; i++) /* LOOP */
        acc = acc * 0.5 + a[i];
}
int main(void) {
    for (int i = 0; i < 64; i++) a[i] = i % 7;
    smooth(64);
    printf("%.17g\n", acc);
    return 0;
}
"#;

#[test]
fn a_global_scalar_carried_between_iterations_is_not_friendly() {
    let report = check(GLOBAL_ACCUMULATED, Verdict::NotFriendly);
    assert!(has_code(&report, "WW101"), "{report:#?}");
    assert!(report.private.is_empty());
    differs_in_reverse(GLOBAL_ACCUMULATED);
}

const GLOBAL_SUM: &str = r#"
#include <stdio.h>
double total;
double a[64];
static void sum(int n) {
    for (int i = 0; i < n; i++) /* LOOP */
        total += a[i] * (i + 1);
}
int main(void) {
    for (int i = 0; i < 64; i++) a[i] = i % 5;
    sum(64);
    printf("%.17g\n", total);
    return 0;
}
"#;

#[test]
fn a_global_sum_is_a_reduction_not_a_plain_parallel_loop() {
    // A sum into a global is an element reduction: friendly only as a reduction, with
    // the global named as its target (advisor/tests/it/reductions.rs runs such loops).
    let report = check(GLOBAL_SUM, Verdict::Friendly);
    assert!(
        report.reductions.iter().any(|r| r.target == "total"),
        "{report:#?}"
    );
}

const GLOBAL_TEMP: &str = r#"
#include <stdio.h>
static double gt[3];
static void blend(int n, const double *restrict a, double *restrict b) {
    for (int i = 0; i < n; i++) { /* LOOP */
        gt[0] = a[i];
        gt[1] = 2.0 * a[i];
        gt[2] = gt[0] + gt[1];
        b[i] = gt[2] * gt[0];
    }
}
int main(void) {
    double a[50], b[50];
    for (int i = 0; i < 50; i++) a[i] = i - 20;
    blend(50, a, b);
    double s = 0;
    for (int i = 0; i < 50; i++) s = s * 1.01 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_global_temporary_written_before_read_is_private() {
    let report = check(GLOBAL_TEMP, Verdict::Friendly);
    let gt = private(&report, "gt");
    assert_eq!(
        (gt.kind, gt.storage),
        (PrivateKind::Array, Some(Storage::Global))
    );
    // A global may be read after the loop by anyone: its last value is kept.
    assert!(gt.last_value);
    assert!(report.parameters.iter().all(|p| p.name != "gt"));
    same_in_any_order(GLOBAL_TEMP);
    written_before_read(GLOBAL_TEMP, "gt");
}

const GLOBAL_READ_BY_CALLEE: &str = r#"
#include <stdio.h>
static double gv;
static double twice(void) { return 2.0 * gv; }
static void apply(int n, const double *restrict a, double *restrict b) {
    for (int i = 0; i < n; i++) { /* LOOP */
        b[i] = twice();
        gv = a[i];
    }
}
int main(void) {
    double a[20], b[20];
    for (int i = 0; i < 20; i++) a[i] = i * 3 % 11;
    apply(20, a, b);
    double s = 0;
    for (int i = 0; i < 20; i++) s = s * 1.5 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_global_a_callee_reads_is_not_private() {
    let report = check(GLOBAL_READ_BY_CALLEE, Verdict::NotFriendly);
    assert!(report.private.iter().all(|p| p.name != "gv"));
    differs_in_reverse(GLOBAL_READ_BY_CALLEE);
}

const VOLATILE_GLOBAL: &str = r#"
#include <stdio.h>
volatile int flag;
static void poll(int n, int *restrict out) {
    for (int i = 0; i < n; i++) /* LOOP */
        out[i] = flag + i;
}
int main(void) {
    int out[10];
    poll(10, out);
    printf("%d\n", out[9]);
    return 0;
}
"#;

#[test]
fn a_volatile_global_stays_refused() {
    let report = check(VOLATILE_GLOBAL, Verdict::NotFriendly);
    assert!(has_code(&report, "WW104"), "{report:#?}");
}

// ---------------------------------------------------------------------------------------
// Storage declared in the loop body.

const IN_BODY: &str = r#"
#include <stdio.h>
#include <stdint.h>
struct vec { double x, y; };
static uint64_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}
static void body(int n, const double *restrict in, double *restrict out) {
    for (int i = 0; i < n; i++) { /* LOOP */
        double q[3];
        struct vec d;
        double v[4] = {0};
        char name[8] = "ab";
        uint64_t seed = 1000 + i;
        for (int k = 0; k < 3; k++)
            q[k] = in[i] * (k + 1);
        d.x = q[0] + q[1];
        d.y = q[2];
        v[i % 4] = d.x;
        out[i] = d.x + d.y + v[0] + v[1] + name[1] + (double)(next(&seed) % 1000);
    }
}
int main(void) {
    double in[40], out[40];
    for (int i = 0; i < 40; i++) in[i] = i % 9 - 4;
    body(40, in, out);
    double s = 0;
    for (int i = 0; i < 40; i++) s = s * 1.01 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn storage_declared_in_the_body_is_per_iteration() {
    let report = check(IN_BODY, Verdict::Friendly);
    for (name, kind) in [
        ("q", PrivateKind::Array),
        ("d", PrivateKind::Struct),
        ("v", PrivateKind::Array),
        ("name", PrivateKind::Array),
        ("seed", PrivateKind::Scalar),
    ] {
        let p = private(&report, name);
        assert_eq!((p.kind, p.last_value), (kind, false), "{p:#?}");
        assert!(p.why.contains("declared inside the loop body"));
        assert!(report.parameters.iter().all(|x| x.name != name));
    }
    // The initializers' zero fill and copy are not host calls.
    assert!(report
        .calls
        .iter()
        .all(|c| c.name != "memset" && c.name != "memcpy"));
    assert!(!has_code(&report, "WW105") && !has_code(&report, "WW112"));
    same_in_any_order(IN_BODY);
}

const INITIALIZERS: &str = r#"
#include <stdio.h>
struct vec { double x, y, z; };
static void inits(int n, const double *restrict in, double *restrict out) {
    for (int i = 0; i < n; i++) { /* LOOP */
        double zero[4] = {0};
        int listed[3] = {1, 2};
        int grid[2][2] = {{1, 2}, {3, 4}};
        struct vec v = {.y = 2.0};
        struct vec w = v;
        char padded[8] = "ab";
        char exact[3] = "cd";
        double one = in[i];
        double *p = &one;
        const double *lit = (const double[]){in[i], 1.0};
        zero[i % 4] = *p;
        out[i] = zero[0] + listed[1] + listed[2] + grid[1][0] + w.y + w.z
               + padded[1] + padded[7] + exact[1] + lit[0] + lit[1];
    }
}
int main(void) {
    double in[24], out[24];
    for (int i = 0; i < 24; i++) in[i] = i % 5;
    inits(24, in, out);
    double s = 0;
    for (int i = 0; i < 24; i++) s = s * 1.01 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn no_initializer_form_is_a_host_call() {
    let report = check(INITIALIZERS, Verdict::Friendly);
    assert!(report.calls.is_empty(), "{:#?}", report.calls);
    for name in ["zero", "listed", "grid", "v", "w", "padded", "exact", "one"] {
        assert!(!private(&report, name).last_value);
    }
    same_in_any_order(INITIALIZERS);
}

const IN_BODY_OF_INNER: &str = r#"
#include <stdio.h>
static void nest(int n, int m, const double *restrict in, double *restrict out) {
    for (int i = 0; i < n; i++) /* LOOP */
        for (int j = 0; j < m; j++) {
            double t[2] = {in[i * m + j], 1.0};
            out[i * m + j] = t[0] * 3.0 + t[1];
        }
}
int main(void) {
    double in[60], out[60];
    for (int i = 0; i < 60; i++) in[i] = i % 13;
    nest(6, 10, in, out);
    double s = 0;
    for (int i = 0; i < 60; i++) s = s * 1.01 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn storage_declared_in_an_inner_body_is_private_to_the_outer_loop_too() {
    let report = check(IN_BODY_OF_INNER, Verdict::Friendly);
    assert!(!private(&report, "t").last_value);
    // `t` is private to the inner loop's iterations too: both loops may get threads.
    assert_eq!(report.nest.len(), 2, "{report:#?}");
    same_in_any_order(IN_BODY_OF_INNER);
}

// ---------------------------------------------------------------------------------------
// Variables declared outside and written before they are read in every iteration.

const PRIVATE_OUTSIDE: &str = r#"
#include <stdio.h>
struct pair { double lo, hi; };
static void outside(int n, const double *restrict a, double *restrict b) {
    double tmp[3];
    struct pair p;
    double t;
    const double *row;
    for (int i = 0; i < n; i++) { /* LOOP */
        for (int k = 0; k < 3; k++)
            tmp[k] = a[i] + k;
        p.lo = tmp[0] - 1.0;
        p.hi = tmp[2] + 1.0;
        t = p.hi - p.lo;
        row = &a[i];
        b[i] = t * tmp[1] + row[0];
    }
}
int main(void) {
    double a[30], b[30];
    for (int i = 0; i < 30; i++) a[i] = (i * 7) % 10;
    outside(30, a, b);
    double s = 0;
    for (int i = 0; i < 30; i++) s = s * 1.1 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn scalars_structs_arrays_and_pointers_written_first_are_private() {
    let report = check(PRIVATE_OUTSIDE, Verdict::Friendly);
    let tmp = private(&report, "tmp");
    assert_eq!((tmp.kind, tmp.last_value), (PrivateKind::Array, false));
    let p = private(&report, "p");
    assert_eq!((p.kind, p.last_value), (PrivateKind::Struct, false));
    assert!(report
        .parameters
        .iter()
        .all(|x| x.name != "tmp" && x.name != "p"));
    // The inner loop fills `tmp` for the statements after it: it keeps to one thread.
    assert_eq!(report.nest.len(), 1, "{report:#?}");
    let mapping = report.recommended_mapping.as_ref().expect("a mapping");
    assert_eq!((mapping.x.as_str(), mapping.y.as_deref()), ("i", None));
    same_in_any_order(PRIVATE_OUTSIDE);
    written_before_read(PRIVATE_OUTSIDE, "tmp");
    written_before_read(PRIVATE_OUTSIDE, "p");
}

const LASTPRIVATE: &str = r#"
#include <stdio.h>
static double last;
static void scan(int n, const double *restrict a, double *restrict b) {
    double t = 0;
    double w[2];
    for (int i = 0; i < n; i++) { /* LOOP */
        t = a[i] * 2.0;
        w[0] = t + 1.0;
        w[1] = t - 1.0;
        b[i] = t + w[0] * w[1];
    }
    last = t + w[1];
}
int main(void) {
    double a[25], b[25];
    for (int i = 0; i < 25; i++) a[i] = i % 7;
    scan(25, a, b);
    double s = 0;
    for (int i = 0; i < 25; i++) s = s * 1.1 + b[i];
    printf("%.17g\n", s);
    printf("last %.17g\n", last);
    return 0;
}
"#;

#[test]
fn variables_read_after_the_loop_are_lastprivate() {
    let report = check(LASTPRIVATE, Verdict::Friendly);
    let t = private(&report, "t");
    assert_eq!((t.kind, t.last_value), (PrivateKind::Scalar, true));
    let w = private(&report, "w");
    assert_eq!((w.kind, w.last_value), (PrivateKind::Array, true));
    // Not a carried value: no WW101 for `t`.
    assert!(!has_code(&report, "WW101"));
    written_before_read(LASTPRIVATE, "w");
    // The recipe says which copies are per thread and which must come back.
    let text = advisor::recipe::render(
        &advisor::model::Report {
            schema: advisor::model::SCHEMA.into(),
            loops: vec![report.clone()],
            skipped: Vec::new(),
        },
        &[],
        false,
    );
    assert!(
        text.contains("Private variables: each thread declares its own copy"),
        "{text}"
    );
    assert!(
        text.contains("`w` is read after the loop: copy the last iteration's copy back"),
        "{text}"
    );
    // The arrays do not depend on the order; the value after the loop does (it must be
    // the last iteration's, which is what `last_value` asks the port to copy out).
    let (forward, backward) = (run(LASTPRIVATE), run(&reversed(LASTPRIVATE)));
    let first_line = |s: &str| s.lines().next().unwrap().to_string();
    assert_eq!(first_line(&forward), first_line(&backward));
    assert_ne!(forward, backward);
}

// ---------------------------------------------------------------------------------------
// Look-alikes that must stay shared.

const READ_BEFORE_WRITE: &str = r#"
#include <stdio.h>
static void shift(int n, const double *restrict a, double *restrict b) {
    double tmp[1] = {0};
    for (int i = 0; i < n; i++) { /* LOOP */
        b[i] = tmp[0];
        tmp[0] = a[i];
    }
}
int main(void) {
    double a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = i * i;
    shift(16, a, b);
    double s = 0;
    for (int i = 0; i < 16; i++) s = s * 1.1 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn an_array_read_before_it_is_written_is_shared() {
    let report = check(READ_BEFORE_WRITE, Verdict::NotFriendly);
    assert!(report.private.is_empty(), "{report:#?}");
    differs_in_reverse(READ_BEFORE_WRITE);
}

const CONDITIONAL_WRITE: &str = r#"
#include <stdio.h>
static void keep(int n, const double *restrict a, double *restrict b) {
    double t[1] = {0};
    for (int i = 0; i < n; i++) { /* LOOP */
        if (a[i] > 3.0)
            t[0] = a[i];
        b[i] = t[0];
    }
}
int main(void) {
    double a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = i % 7;
    keep(16, a, b);
    double s = 0;
    for (int i = 0; i < 16; i++) s = s * 1.1 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn an_array_written_on_some_paths_only_is_shared() {
    // Both accesses are conditional: the dependence is certain only for some inputs.
    let report = check(CONDITIONAL_WRITE, Verdict::NeedsProfile);
    assert!(report.private.iter().all(|p| p.name != "t"), "{report:#?}");
    differs_in_reverse(CONDITIONAL_WRITE);
}

const PARTIAL_COVER: &str = r#"
#include <stdio.h>
static void partial(int n, const double *restrict a, double *restrict b) {
    double t[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) { /* LOOP */
        for (int k = 0; k < 2; k++)
            t[k] = a[i] + k;
        b[i] = t[0] + t[2];
        t[2] = a[i];
    }
}
int main(void) {
    double a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = i % 5;
    partial(16, a, b);
    double s = 0;
    for (int i = 0; i < 16; i++) s = s * 1.1 + b[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn an_inner_loop_that_fills_part_of_an_array_does_not_cover_the_rest() {
    let report = check(PARTIAL_COVER, Verdict::NotFriendly);
    assert!(report.private.iter().all(|p| p.name != "t"), "{report:#?}");
    differs_in_reverse(PARTIAL_COVER);
}

const LAST_VALUE_OF_ONE_ELEMENT: &str = r#"
#include <stdio.h>
static double out0;
static void spread(int n, const double *restrict a) {
    double t[64];
    for (int i = 0; i < n; i++) /* LOOP */
        t[i] = a[i] * 2.0;
    out0 = t[0] + t[n - 1];
}
int main(void) {
    double a[64];
    for (int i = 0; i < 64; i++) a[i] = i;
    spread(64, a);
    printf("%.17g\n", out0);
    return 0;
}
"#;

#[test]
fn an_array_each_iteration_writes_elsewhere_is_an_output_not_private() {
    // Nothing reads `t` in the loop, but each iteration writes its own element and the
    // elements are read after it: `t` is shared (independent elements), not lastprivate.
    let report = check(LAST_VALUE_OF_ONE_ELEMENT, Verdict::Friendly);
    assert!(report.private.is_empty(), "{report:#?}");
    assert!(report.parameters.iter().any(|p| p.name == "t"));
    same_in_any_order(LAST_VALUE_OF_ONE_ELEMENT);
}

// ---------------------------------------------------------------------------------------
// Loop bounds read through memory nothing in the loop writes.

const BOUND_IN_BY_VALUE_STRUCT: &str = r#"
#include <stdio.h>
struct input { int lookups; double scale; };
static void fill(double *x, int i) { *x = i * 0.5; }
static void lookup(struct input in, double *restrict out) {
    for (int i = 0; i < in.lookups; i++) { /* LOOP */
        double x;
        fill(&x, i);
        out[i] = x * in.scale;
    }
}
int main(void) {
    struct input in = {30, 3.0};
    double out[30];
    lookup(in, out);
    double s = 0;
    for (int i = 0; i < 30; i++) s = s * 1.1 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_bound_in_a_by_value_struct_is_invariant_across_calls() {
    let report = check(BOUND_IN_BY_VALUE_STRUCT, Verdict::Friendly);
    assert!(!has_code(&report, "WW107"));
    assert_eq!(report.induction.as_ref().unwrap().upper, "in.lookups");
    same_in_any_order(BOUND_IN_BY_VALUE_STRUCT);
}

const BOUND_THROUGH_PASSED_STRUCT: &str = r#"
#include <stdio.h>
struct input { int lookups; double scale; };
static void shrink(struct input *in) { if (in->lookups > 10) in->lookups--; }
static void lookup(struct input in, double *restrict out) {
    for (int i = 0; i < in.lookups; i++) { /* LOOP */
        shrink(&in);
        out[i] = i * in.scale;
    }
}
int main(void) {
    struct input in = {30, 3.0};
    double out[30] = {0};
    lookup(in, out);
    double s = 0;
    for (int i = 0; i < 30; i++) s = s * 1.1 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_bound_a_callee_can_write_still_varies() {
    let report = check(BOUND_THROUGH_PASSED_STRUCT, Verdict::NotFriendly);
    assert!(has_code(&report, "WW107"), "{report:#?}");
}

const BOUND_THROUGH_POINTER: &str = r#"
#include <stdio.h>
struct block { long rb, re; };
static void weigh(double *w, double x) { *w = x * 2.0; }
static void rows(const struct block *block, const double *restrict x, double *restrict out) {
    for (long r = 0; r < block->re - block->rb; r++) { /* LOOP */
        double w;
        weigh(&w, x[r + block->rb]);
        out[r] = w;
    }
}
int main(void) {
    struct block b = {2, 22};
    double x[30], out[30];
    for (int i = 0; i < 30; i++) x[i] = i % 4;
    rows(&b, x, out);
    double s = 0;
    for (int i = 0; i < 20; i++) s = s * 1.1 + out[i];
    printf("%.17g\n", s);
    return 0;
}
"#;

#[test]
fn a_bound_behind_a_pointer_no_argument_reaches_is_invariant() {
    let report = check(BOUND_THROUGH_POINTER, Verdict::Friendly);
    assert!(!has_code(&report, "WW107"));
    same_in_any_order(BOUND_THROUGH_POINTER);
}
