//! Loops whose start or bound is written `MAX(lo, 0)` / `MIN(hi, n)` (clamped windows:
//! dtaidistance's and code_saturne's block loops). The choice `a < b ? a : b` is one
//! expression, `min(a, b)`, so the loop is normalizable, its trip count and sections carry
//! the min/max, and the dependence tests use it (`c < min(cols, w)` keeps rows apart).
//! Before, "the bound of the loop has several possible values" and every such loop needed
//! a profile. Each verdict is checked against compiled runs with the loop reversed.

mod common;

use advisor::model::Verdict;
use common::*;

const WINDOW: &str = r#"
#include <stdio.h>
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
static void window(const double *x, double *y, int lo, int hi, int n) {
    for (int i = MAX(lo, 0); i < MIN(hi, n); i++) /* LOOP */
        y[i] = 2.0 * x[i] + 1.0;
}
int main(void) {
    double x[40], y[40] = {0};
    for (int k = 0; k < 40; k++) x[k] = k % 7;
    window(x, y, -3, 25, 40);
    window(x, y, 30, 50, 40);
    window(x, y, 12, 5, 40);
    for (int k = 0; k < 40; k++) printf("%g ", y[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_clamped_window_is_friendly_with_min_max_bounds_and_sections() {
    let report = check_with_runs(WINDOW, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.lower, "max(0, lo)");
    assert_eq!(induction.upper, "min(hi, n)");
    let y = report.parameters.iter().find(|p| p.name == "y").unwrap();
    let bytes = y.bytes.as_ref().expect("a section for `y`");
    assert_eq!(
        (bytes.lo.as_str(), bytes.hi.as_str()),
        ("max(0, 8*lo)", "min(8*hi, 8*n)")
    );
}

/// Rows of `cols` elements, of which the first `MIN(cols, w)` are written: the columns
/// never reach the next row, which only the min says.
const BLOCK: &str = r#"
#include <stdio.h>
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
static void block(double *a, int rows, int cols, int r0, int r1, int w) {
    for (int r = MAX(r0, 0); r < MIN(r1, rows); r++) /* LOOP */
        for (int c = 0; c < MIN(cols, w); c++)
            a[r * cols + c] += r + 0.5 * c;
}
int main(void) {
    double a[48] = {0};
    block(a, 8, 6, -1, 5, 9);
    block(a, 8, 6, 3, 12, 4);
    for (int k = 0; k < 48; k++) printf("%g ", a[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_block_whose_columns_stop_at_a_min_is_friendly() {
    check_with_runs(BLOCK, Verdict::Friendly, true);
}

/// A recurrence over the clamped window: the witness is two concrete iterations.
const PREFIX: &str = r#"
#include <stdio.h>
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
static void prefix(double *x, int lo, int hi, int n) {
    for (int i = MAX(lo, 1); i < MIN(hi, n); i++) /* LOOP */
        x[i] = x[i - 1] + x[i];
}
int main(void) {
    double x[30];
    for (int k = 0; k < 30; k++) x[k] = k % 5;
    prefix(x, -4, 20, 30);
    for (int k = 0; k < 30; k++) printf("%g ", x[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_recurrence_over_a_clamped_window_is_not_friendly() {
    let report = check_with_runs(PREFIX, Verdict::NotFriendly, false);
    assert!(has_code(&report, "WW101"), "{report:#?}");
}
