//! Loop-invariant analysis: structure fields in the convolution loops, array loads killed
//! by stores, and loads killed by calls to unknown functions.

use analyses::invariant::{loop_invariants, AliasPolicy, Invariants};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use frontend::ir::{Function, InstKind, Value};
use frontend::loops::{analyze_loops, LoopId};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

/// `src` written to a file in a fresh, private temporary directory; the directory goes when
/// the returned guard is dropped, so callers keep it while they use the path.
fn fixture(src: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-inv-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("f.c");
    std::fs::write(&path, src).expect("write fixture");
    (dir, path)
}

/// Loads of `function` whose source text is `snippet`, with the invariance result of every
/// loop containing them (innermost last).
fn check(
    path: &Path,
    function: &str,
    snippet: &str,
    policy: AliasPolicy,
    want_invariant: bool,
) -> Vec<Invariants> {
    check_with(path, function, snippet, policy, &|_| want_invariant)
}

/// [`check`] with the expectation depending on whether the loop contains a store.
fn check_with(
    path: &Path,
    function: &str,
    snippet: &str,
    policy: AliasPolicy,
    want: &dyn Fn(bool) -> bool,
) -> Vec<Invariants> {
    let unit: Unit = load_unit(&TranslationUnitInput::new(path)).expect("loads");
    let program = &unit.lowered.program;
    let func: &Function = program.function(function).expect("function");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let loads: Vec<Value> = func
        .values()
        .filter(|v| matches!(func.inst(*v).kind, InstKind::Load { .. }))
        .filter(|v| unit.snippet(func.inst(*v).origin.span) == snippet)
        .collect();
    assert!(!loads.is_empty(), "no load `{snippet}`");
    let mut results = Vec::new();
    for id in forest.ids() {
        let inv = loop_invariants(program, func, &forest, id, &rec, policy);
        let stores = forest.loop_(id).blocks.iter().any(|b| {
            func.block(*b)
                .insts
                .iter()
                .any(|v| matches!(func.inst(*v).kind, InstKind::Store { .. }))
        });
        let want_invariant = want(stores);
        for &load in &loads {
            if forest.loop_(id).contains(func.inst(load).block) {
                assert_eq!(
                    inv.is_invariant(load),
                    want_invariant,
                    "`{snippet}` ({load}) in {id} under {policy:?}"
                );
                assert_eq!(
                    inv.invariant_loads().contains(&load),
                    want_invariant,
                    "invariant_loads of {id}"
                );
            }
        }
        results.push(inv);
    }
    results
}

#[test]
fn image_width_is_invariant_in_the_convolution_loops_assuming_distinct_parameters() {
    let path = sample("conv2d_rgb.c");
    let results = check(
        &path,
        "convolve",
        "in_image->width",
        AliasPolicy::DistinctParameters,
        true,
    );
    // The y and x loops store through out_row (out_image->pixmap): their results depend
    // on in_image and out_image not overlapping; the fy/fx loops store nothing.
    let texts: Vec<String> = results.iter().filter_map(|r| r.assumption()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    for text in &texts {
        assert!(
            text.contains("`out_image`") && text.contains("`in_image`"),
            "{text}"
        );
        // A statement a port's note prefixes with "assumes", not a second "assumes".
        assert!(text.starts_with("memory reached through "), "{text}");
    }
    check(
        &path,
        "convolve",
        "filter->width",
        AliasPolicy::DistinctParameters,
        true,
    );
    // C allows in_image and out_image->pixmap to overlap: then only the loops without
    // stores (fy, fx) keep the width invariant.
    check_with(
        &path,
        "convolve",
        "in_image->width",
        AliasPolicy::Conservative,
        &|stores| !stores,
    );
}

#[test]
fn aux_i_is_variant_in_range_example() {
    let path = sample("range_example.c");
    check(
        &path,
        "range_example",
        "aux[i]",
        AliasPolicy::DistinctParameters,
        false,
    );
    // out[0] is written by iteration 0 (out[i] = ...): same base, not invariant.
    check(
        &path,
        "range_example",
        "out[0]",
        AliasPolicy::DistinctParameters,
        false,
    );
}

#[test]
fn load_after_store_to_the_same_array_is_variant() {
    let (_dir, path) = fixture(
        "int f(int *a, int *b, int n) { int s = 0; for (int i = 0; i < n; i++) { \
         a[i] = i; s += a[3] + b[2]; } return s; }",
    );
    check(&path, "f", "a[3]", AliasPolicy::DistinctParameters, false);
    check(&path, "f", "b[2]", AliasPolicy::DistinctParameters, true);
    check(&path, "f", "b[2]", AliasPolicy::Conservative, false);
}

#[test]
fn loads_of_other_fields_and_local_arrays_survive_stores() {
    let (_dir, path) = fixture(
        "struct s { int n; int m; }; int f(struct s *p, int k) { int t[4] = {1, 2, 3, 4}; \
         int s = 0; for (int i = 0; i < p->n; i++) { p->m = i; s += t[2]; } return s + k; }",
    );
    check(&path, "f", "p->n", AliasPolicy::Conservative, true);
    check(&path, "f", "t[2]", AliasPolicy::Conservative, true);
}

#[test]
fn unknown_calls_kill_loads_and_math_functions_do_not() {
    let (_dir, path) = fixture(
        "struct s { int n; }; void g(void); double sqrt(double); \
         double f(struct s *p) { double x = 0; for (int i = 0; i < p->n; i++) g(); \
         for (int j = 0; j < p->n; j++) x += sqrt(j); return x; }",
    );
    let unit = load_unit(&TranslationUnitInput::new(&path)).expect("loads");
    let program = &unit.lowered.program;
    let func = program.function("f").expect("f");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let loads: Vec<Value> = func
        .values()
        .filter(|v| matches!(func.inst(*v).kind, InstKind::Load { .. }))
        .collect();
    let mut seen = 0;
    for id in forest.ids() {
        let inv = loop_invariants(program, func, &forest, id, &rec, AliasPolicy::Conservative);
        let calls_g = forest.loop_(id).blocks.iter().any(|b| {
            func.block(*b).insts.iter().any(|v| {
                matches!(&func.inst(*v).kind, InstKind::Call { callee: frontend::ir::Callee::Direct(n), .. } if n == "g")
            })
        });
        for &l in &loads {
            if forest.loop_(id).contains(func.inst(l).block) {
                seen += 1;
                assert_eq!(inv.is_invariant(l), !calls_g, "p->n in {id}");
            }
        }
        assert_eq!(inv.loop_id, id);
    }
    assert_eq!(seen, 2);
    let _ = LoopId(0);
}

#[test]
fn field_address_with_variant_base_is_variant() {
    let (_dir, path) = fixture(
        "struct s { int n; }; int f(struct s *p, int m) { int t = 0; \
         for (int i = 0; i < m; i++) t += p[i].n; return t; }",
    );
    check(&path, "f", "p[i].n", AliasPolicy::Conservative, false);
}

#[test]
fn calls_reach_only_what_their_arguments_and_globals_reach() {
    let (_dir, path) = fixture(
        "struct in { int n; double s; }; struct blk { long rb, re; }; \
         void g(double *x); void h(struct blk *b); \
         double by_value(struct in in, double *x) { double t = 0; \
           for (int i = 0; i < in.n; i++) { g(x); t += x[0]; } return t; } \
         double other(struct blk *b, double *x) { double t = 0; \
           for (long r = 0; r < b->re; r++) { g(x); t += x[0]; } return t; } \
         double same(struct blk *b, double *x) { double t = 0; \
           for (long r = 0; r < b->re; r++) { h(b); t += x[0]; } return t; } \
         double taken(struct in in, double *x) { double t = 0; \
           for (int i = 0; i < in.n; i++) { g((double *)&in); t += x[0]; } return t; }",
    );
    // No pointer to a by-value struct whose address is never taken exists: no call reaches it.
    check(&path, "by_value", "in.n", AliasPolicy::Conservative, true);
    // `g(x)` reaches `*x` and globals, not `*b`, when distinct parameters do not overlap.
    let results = check(
        &path,
        "other",
        "b->re",
        AliasPolicy::DistinctParameters,
        true,
    );
    assert!(results.iter().all(|r| r
        .assumption()
        .is_some_and(|a| a.contains("`b`") && a.contains("`x`"))));
    check(&path, "other", "b->re", AliasPolicy::Conservative, false);
    // A call given `b` itself, or the struct's address, may write it.
    check(
        &path,
        "same",
        "b->re",
        AliasPolicy::DistinctParameters,
        false,
    );
    check(
        &path,
        "taken",
        "in.n",
        AliasPolicy::DistinctParameters,
        false,
    );
}

/// A local whose address only goes to a call that does not keep it (`range(n, &lo, &hi)`,
/// `analyses::capture`) is out of reach of other calls: a loop calling `step(&k)` leaves
/// `lo` invariant, and one calling `range` or `memset` on it does not (those write it; a
/// `memset` was taken to leave a local it alone sees unwritten).
#[test]
fn a_local_only_non_capturing_calls_see_is_written_by_them_alone() {
    let (_dir, path) = fixture(
        r#"
#include <string.h>
static void range(int n, int *lo, int *hi) { *lo = n / 4; *hi = n - 1; }
static void step(int *k) { *k += 1; }
int other(int n, double *out) {
  int lo, hi, k = 0;
  range(n, &lo, &hi);
  for (int i = 0; i < n; i++) {
    step(&k);
    out[i] = lo;
  }
  return k + hi;
}
int again(int n, double *out) {
  int lo, hi;
  range(n, &lo, &hi);
  for (int i = 0; i < n; i++) {
    range(i, &lo, &hi);
    out[i] = lo;
  }
  return hi;
}
int only_cleared(int n, double *out) {
  int lo = n;
  for (int i = 0; i < n; i++) {
    memset(&lo, 0, sizeof lo);
    out[i] = lo + i;
  }
  return lo;
}
int cleared(int n, double *out) {
  int lo, hi;
  range(n, &lo, &hi);
  for (int i = 0; i < n; i++) {
    memset(&lo, 0, sizeof lo);
    out[i] = lo + i;
  }
  return hi;
}
"#,
    );
    check(&path, "other", "lo", AliasPolicy::Conservative, true);
    check(&path, "again", "lo", AliasPolicy::Conservative, false);
    check(&path, "cleared", "lo", AliasPolicy::Conservative, false);
    check(
        &path,
        "only_cleared",
        "lo",
        AliasPolicy::Conservative,
        false,
    );
}
