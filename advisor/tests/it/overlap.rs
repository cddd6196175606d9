//! Pointers that may alias but are harmless when they coincide: `z[i] = c * x[i]` is safe
//! in place (`z == x`) and on separate arrays, so with no call site proving a partial
//! overlap the loop is friendly under the stated assumption; a loop that reads a
//! neighbour (`x[i + 1]`) is not safe in place and still needs a profile. Each verdict is
//! checked against concrete runs: the loop executed forward and in reverse order (as a GPU
//! may) on in-place, separate and partially overlapping arguments.
//!
//! Under the default aliasing policy (`Aliasing::Distinct`), pointers a function receives
//! that no call site passes into one object are assumed not to overlap, and the report says
//! so; `Aliasing::CallSites` keeps only what call sites prove.

use advisor::analyze::{analyze_unit, Aliasing, Filter};
use advisor::model::{LoopReport, Verdict};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;
use tempfile::TempDir;

/// A fresh, private directory per call (tests run in parallel), removed when the guard is
/// dropped: callers keep it while they use its files.
fn scratch(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("warpwise-overlap-{name}-"))
        .tempdir()
        .unwrap()
}

fn report(kernel: &str) -> LoopReport {
    report_with(kernel, Aliasing::CallSites)
}

/// The report of the only loop of function `k` in `program`, under `aliasing`.
fn report_with(program: &str, aliasing: Aliasing) -> LoopReport {
    let dir = scratch("analyze");
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, program).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let filter = Filter {
        aliasing,
        ..Filter::default()
    };
    let mut reports: Vec<LoopReport> = analyze_unit(&unit, &filter)
        .into_iter()
        .filter(|r| r.function == "k")
        .collect();
    assert_eq!(reports.len(), 1, "{reports:#?}");
    reports.remove(0)
}

const DISTINCT: &str = "do not overlap: no call site in the analysed files passes them";

/// Runs `kernel` (a function `k(double *z, const double *x, int n)` whose loop is
/// `for (int i = 0; i < n; i++)`) forward and reversed on the arguments `call` builds
/// from a buffer `buf` of 64 doubles; true when both orders give the same buffer.
fn order_independent(kernel: &str, call: &str) -> bool {
    let reversed = kernel.replace("void k(", "void k_rev(").replace(
        "for (int i = 0; i < n; i++)",
        "for (int i = n - 1; i >= 0; i--)",
    );
    assert_ne!(reversed, kernel.replace("void k(", "void k_rev("));
    let program = format!(
        "#include <stdio.h>\n#include <string.h>\n{kernel}\n{reversed}\n\
         int main(void) {{\n\
           double a[64], b[64], buf[64], other[64];\n\
           for (int i = 0; i < 64; i++) {{ a[i] = i * 1.5 + 1; other[i] = 64 - i; }}\n\
           memcpy(b, a, sizeof a);\n\
           memcpy(buf, a, sizeof a); {{ double *x = buf; double *z = buf; (void)x; (void)z; {call}; k(Z, X, 60); }}\n\
           memcpy(a, buf, sizeof a); memcpy(buf, b, sizeof b);\n\
           {{ double *x = buf; double *z = buf; (void)x; (void)z; {call}; k_rev(Z, X, 60); }}\n\
           return memcmp(a, buf, sizeof a) != 0;\n\
         }}\n"
    );
    let dir = scratch("run");
    std::fs::write(dir.path().join("p.c"), program).unwrap();
    let built = Command::new("cc")
        .current_dir(dir.path())
        .args(["-O0", "-o", "p", "p.c"])
        .status()
        .expect("cc runs");
    assert!(built.success());
    let same = Command::new(dir.path().join("p"))
        .status()
        .unwrap()
        .success();
    same
}

fn check(kernel: &str, verdict: Verdict, assumed: bool) {
    let r = report(kernel);
    assert_eq!(r.verdict, verdict, "{:#?}", r.reasons);
    let states = r
        .assumptions
        .iter()
        .any(|a| a.contains("are the same array or do not overlap"));
    assert_eq!(states, assumed, "{:#?}", r.assumptions);
}

const SCALE: &str = "void k(double *z, const double *x, int n)\n\
{\n    for (int i = 0; i < n; i++)\n        z[i] = 3 * x[i] + 1;\n}\n";

const NEIGHBOUR: &str = "void k(double *z, const double *x, int n)\n\
{\n    for (int i = 0; i < n; i++)\n        z[i] = x[i] + x[i + 1];\n}\n";

#[test]
fn an_elementwise_update_is_friendly_assuming_no_partial_overlap() {
    check(SCALE, Verdict::Friendly, true);
    // What the assumption covers: in place and separate arrays give one result in any order.
    assert!(order_independent(SCALE, "double *Z = z, *X = x"));
    assert!(order_independent(SCALE, "double *Z = other, *X = x"));
    // What it excludes, and the report says so: a partial overlap does not.
    assert!(!order_independent(SCALE, "double *Z = z + 1, *X = x"));
}

#[test]
fn reading_a_neighbour_in_place_still_needs_a_profile() {
    check(NEIGHBOUR, Verdict::NeedsProfile, false);
    assert!(!order_independent(NEIGHBOUR, "double *Z = z, *X = x"));
}

#[test]
fn a_call_site_with_a_partial_overlap_keeps_the_pair_undecided() {
    let program =
        format!("{SCALE}\ndouble buf[65];\nvoid caller(void) {{ k(buf + 1, buf, 64); }}\n");
    undecided_under_the_default_policy(&program);
}

/// The default policy's report of `k` in `program` needs a profile, with WW110.
fn undecided_under_the_default_policy(program: &str) {
    let dir = scratch("callsite");
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, program).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let r = reports.iter().find(|r| r.function == "k").unwrap();
    assert_eq!(r.verdict, Verdict::NeedsProfile, "{:#?}", r.reasons);
    assert!(r
        .reasons
        .iter()
        .any(|x| x.code == advisor::rules::Code::WW110));
}

/// The same partial overlap made from a pointer the caller itself received: whatever that
/// pointer points to, `p + 1` and `p` overlap.
#[test]
fn a_call_site_passing_a_received_pointer_at_two_offsets_keeps_the_pair_undecided() {
    let program = format!("{SCALE}\nvoid caller(double *p, int n) {{ k(p + 1, p, n - 1); }}\n");
    undecided_under_the_default_policy(&program);
    assert!(!order_independent(SCALE, "double *Z = z + 1, *X = x"));
}

#[test]
fn an_in_place_call_site_keeps_the_assumption() {
    let program = format!("{SCALE}\ndouble buf[64];\nvoid caller(void) {{ k(buf, buf, 64); }}\n");
    let dir = scratch("inplace");
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, program).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let r = reports.iter().find(|r| r.function == "k").unwrap();
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
}

#[test]
fn received_pointers_are_assumed_distinct_by_default_and_the_report_says_so() {
    let r = report_with(NEIGHBOUR, Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("`x` and `z`") && a.contains(DISTINCT)),
        "{:#?}",
        r.assumptions
    );
    // What the assumption covers: separate arrays give one result in any order; what it
    // excludes, in place, does not.
    assert!(order_independent(NEIGHBOUR, "double *Z = other, *X = x"));
    assert!(!order_independent(NEIGHBOUR, "double *Z = z, *X = x"));
}

#[test]
fn a_call_site_passing_one_array_twice_keeps_the_pair_undecided() {
    for call in ["k(buf, buf, 63)", "k(buf + 1, buf, 63)", "k(p, p, n)"] {
        let program =
            format!("{NEIGHBOUR}\ndouble buf[64];\nvoid caller(double *p, int n) {{ {call}; }}\n");
        let r = report_with(&program, Aliasing::Distinct);
        assert_eq!(r.verdict, Verdict::NeedsProfile, "{call}: {:#?}", r.reasons);
        assert!(
            r.reasons
                .iter()
                .any(|x| x.code == advisor::rules::Code::WW110),
            "{call}"
        );
    }
    // Distinct arrays at every call site prove the pair disjoint: no assumption is needed.
    let program =
        format!("{NEIGHBOUR}\ndouble a[64], b[64];\nvoid caller(void) {{ k(a, b, 63); }}\n");
    let r = report_with(&program, Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(!r.assumptions.iter().any(|a| a.contains(DISTINCT)));
}

#[test]
fn pointers_read_through_a_struct_are_assumed_distinct_too() {
    let program = "struct vec { int n; double *data; };\n\
        void k(struct vec *z, const double *c, int n)\n\
        {\n    double *zd = z->data;\n    for (int i = 0; i < n; i++)\n        zd[i] = c[0] * zd[i];\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(r.assumptions.iter().any(|a| a.contains(DISTINCT)));
    let strict = report_with(program, Aliasing::CallSites);
    assert_eq!(
        strict.verdict,
        Verdict::NeedsProfile,
        "{:#?}",
        strict.reasons
    );
}

#[test]
fn memory_a_callee_reads_through_a_struct_is_assumed_distinct_too() {
    // `weight` reads `t->w[j]`: a pointer loaded from received memory, as `z->data` above
    // is, only loaded by the callee (phono3py's `atom_triplets->svecs`).
    let program = "struct table { int n; const double *w; };\n\
        static double weight(const struct table *t, int j) { return t->w[j]; }\n\
        void k(double *z, const struct table *t, int n)\n\
        {\n    for (int i = 0; i < n; i++)\n        z[i] = 2.0 * weight(t, i % 4);\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("`z`") && a.contains(DISTINCT)),
        "{:#?}",
        r.assumptions
    );
    let strict = report_with(program, Aliasing::CallSites);
    assert_eq!(
        strict.verdict,
        Verdict::NeedsProfile,
        "{:#?}",
        strict.reasons
    );
    assert!(strict
        .reasons
        .iter()
        .any(|r| r.code == advisor::rules::Code::WW110));
}

#[test]
fn the_nodes_a_recursive_callee_descends_are_assumed_distinct_too() {
    // A tree walked from a root the function receives (pykdtree's search): the nodes are
    // memory the callee reaches through pointers it reads, never written by the loop.
    let program = "struct node { double v; struct node *left, *right; };\n\
        static double sum(const struct node *n, int d)\n\
        {\n    if (!n || d == 0)\n        return 0;\n    return n->v + sum(n->left, d - 1) + sum(n->right, d - 1);\n}\n\
        void k(double *z, const struct node *root, int n)\n\
        {\n    for (int i = 0; i < n; i++)\n        z[i] = sum(root, i % 5);\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(r.assumptions.iter().any(|a| a.contains(DISTINCT)));
    assert!(r
        .assumptions
        .iter()
        .any(|a| a.contains("`sum` is recursive")));
    let strict = report_with(program, Aliasing::CallSites);
    assert_eq!(
        strict.verdict,
        Verdict::NeedsProfile,
        "{:#?}",
        strict.reasons
    );
}

#[test]
fn locals_and_call_results_are_never_assumed_distinct() {
    // `p` comes from a call in the loop's function: nothing says where it points.
    let program = "double *lookup(int);\n\
        void k(double *z, int n)\n\
        {\n    double *p = lookup(n);\n    for (int i = 0; i < n; i++)\n        z[i] = p[i + 1];\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_ne!(r.verdict, Verdict::Friendly, "{:#?}", r.assumptions);
}

#[test]
fn a_fresh_allocation_overlaps_nothing_that_existed_before_it() {
    // `t` is a new object: `x` (a parameter) cannot point into it, under either policy and
    // without an assumption; phonopy's `tp = malloc(...)` filled from `freqs` has this shape.
    let program = "#include <stdlib.h>\n\
        double *k(const double *x, int n)\n\
        {\n    double *t = (double *)malloc(sizeof(double) * n);\n    for (int i = 0; i < n; i++)\n        t[i] = x[i] + x[i + 1];\n    return t;\n}\n";
    for aliasing in [Aliasing::CallSites, Aliasing::Distinct] {
        let r = report_with(program, aliasing);
        assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
        assert!(
            !r.assumptions.iter().any(|a| a.contains("overlap")),
            "{:#?}",
            r.assumptions
        );
    }
    // `realloc` may return its argument: no such conclusion.
    let grown = "#include <stdlib.h>\n\
        double *k(double *x, int n)\n\
        {\n    double *t = (double *)realloc(x, sizeof(double) * (n + 1));\n    for (int i = 0; i < n; i++)\n        t[i] = x[i] + x[i + 1];\n    return t;\n}\n";
    let r = report_with(grown, Aliasing::CallSites);
    assert_ne!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
}

#[test]
fn pointers_the_function_stores_itself_are_not_assumed_distinct() {
    // `lines[0]` and `lines[1]` come from a local table the function fills: nothing a
    // caller promised, and here they even overlap. The pair stays undecided.
    let program = "void k(double *buf, int n)\n\
        {\n    double *lines[2];\n    lines[0] = buf;\n    lines[1] = buf + 1;\n    for (int j = 0; j < n; j++)\n        lines[1][j] = lines[0][j + 1] + 1;\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_ne!(r.verdict, Verdict::Friendly, "{:#?}", r.assumptions);
    assert!(
        !r.assumptions.iter().any(|a| a.contains(DISTINCT)),
        "{:#?}",
        r.assumptions
    );
}

#[test]
fn members_of_a_struct_passed_by_value_are_received_pointers() {
    // `v` is the caller's struct, copied: `v.x` is a pointer the function received, as
    // `v->x` of a `V *v` would be, whether the loop reads it itself or a callee does.
    for program in [
        "typedef struct { double *x; int n; } V;\n\
         void k(double *z, V v, int n)\n\
         {\n    for (int i = 0; i < n; i++)\n        z[i] = 2.0 * v.x[i + 1];\n}\n",
        "typedef struct { double *x; int n; } V;\n\
         static double at(V w, int i) { return w.x[i + 1]; }\n\
         void k(double *z, V v, int n)\n\
         {\n    for (int i = 0; i < n; i++)\n        z[i] = 2.0 * at(v, i);\n}\n",
    ] {
        let r = report_with(program, Aliasing::Distinct);
        assert_eq!(r.verdict, Verdict::Friendly, "{program}\n{:#?}", r.reasons);
        assert!(
            r.assumptions.iter().any(|a| a.contains(DISTINCT)),
            "{:#?}",
            r.assumptions
        );
        let strict = report_with(program, Aliasing::CallSites);
        assert_eq!(
            strict.verdict,
            Verdict::NeedsProfile,
            "{program}\n{:#?}",
            strict.reasons
        );
    }
}

#[test]
fn a_struct_copy_the_function_rewrites_is_not_received() {
    // The copy's pointer is replaced by a call's result before the loop: nothing says
    // where it points.
    let program = "typedef struct { double *x; int n; } V;\n\
        double *lookup(int);\n\
        void k(double *z, V v, int n)\n\
        {\n    v.x = lookup(n);\n    for (int i = 0; i < n; i++)\n        z[i] = v.x[i + 1];\n}\n";
    let r = report_with(program, Aliasing::Distinct);
    assert_ne!(r.verdict, Verdict::Friendly, "{:#?}", r.assumptions);
}
