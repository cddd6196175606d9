//! Loops that call x86 SIMD intrinsics (`_mm_*` from `<xmmintrin.h>`) are host-only with a
//! reason that names them as intrinsics (and inline assembly as such); the rest of the file is analysed as usual.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, Verdict};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

const SOURCE: &str = r#"#include <xmmintrin.h>
void vmul(const float *a, const float *b, float *out, int n) {
    for (int i = 0; i < n; i += 4)
        _mm_storeu_ps(out + i, _mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
}
static void store_sum(float *out, __m128 v) { _mm_storeu_ps(out, _mm_add_ps(v, v)); }
void via_helper(float *out, int n) {
    for (int i = 0; i < n; i++)
        store_sum(out + 4 * i, _mm_set1_ps((float)i));
}
void fenced(float *out, int n) {
    for (int i = 0; i < n; i++) { __asm__ volatile("" ::: "memory"); out[i] = 0.0f; }
}
void scalar(const float *a, float *out, int n) {
    for (int i = 0; i < n; i++)
        out[i] = 2.0f * a[i];
}
"#;

fn reports() -> Vec<LoopReport> {
    // Tests run in parallel: each call gets its own fresh, private directory, removed when
    // `dir` drops at the end.
    let dir = tempfile::Builder::new()
        .prefix("warpwise-intrinsics-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("sse.c");
    std::fs::write(&file, SOURCE).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    assert!(unit.lowered.errors.is_empty(), "{:?}", unit.lowered.errors);
    analyze_unit(&unit, &Filter::default())
}

/// The loop of `function` is not friendly, and one of its reasons says `expected`.
fn check(function: &str, expected: &str) {
    let all = reports();
    let report = all
        .iter()
        .find(|r| r.function == function)
        .unwrap_or_else(|| panic!("no loop in `{function}`"));
    assert_eq!(report.verdict, Verdict::NotFriendly, "{report:#?}");
    assert!(
        report.reasons.iter().any(|r| r.message.contains(expected)),
        "no reason with `{expected}` in {:#?}",
        report.reasons
    );
}

#[test]
fn a_direct_intrinsic_call_is_named() {
    check(
        "vmul",
        "`_mm_mul_ps` is an x86 SIMD intrinsic with no device version",
    );
}

#[test]
fn an_intrinsic_behind_a_helper_is_named() {
    check(
        "via_helper",
        "`store_sum` calls `_mm_add_ps`, an x86 SIMD intrinsic with no device version",
    );
}

#[test]
fn inline_assembly_is_named() {
    check(
        "fenced",
        "`__asm__` is inline assembly for the host processor with no device version",
    );
}

#[test]
fn the_rest_of_the_file_is_analysed() {
    let all = reports();
    let scalar = all
        .iter()
        .find(|r| r.function == "scalar")
        .expect("scalar loop");
    assert_ne!(scalar.verdict, Verdict::NotFriendly, "{scalar:#?}");
}
