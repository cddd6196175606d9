//! Loops whose start or bound is written `MAX(lo, 0)` / `MIN(hi, n)` (clamped windows:
//! dtaidistance's and code_saturne's block loops). The choice `a < b ? a : b` is one
//! expression, `min(a, b)`, so the loop is normalizable, its trip count and sections carry
//! the min/max, and the dependence tests use it (`c < min(cols, w)` keeps rows apart).
//! Before, "the bound of the loop has several possible values" and every such loop needed
//! a profile. Each verdict is checked against compiled runs with the loop reversed.

use crate::common;

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

/// code_saturne's blocks of `GROUP` coefficients: `b_size = GROUP; if (i + GROUP > n)
/// b_size = n - i;` is `min(GROUP, n - i)` (the arms differ by what the test compares), and
/// each block's values go to a scratch row. Before, the inner loop's bound had "several
/// possible values" and needed a profile.
const GROUPS: &str = r#"
#include <stdio.h>
#define GROUP 4
static void groups(double *out, const double *val, const int *row, int n) {
    double s[GROUP];
    for (int i = 0; i < n; i += GROUP) {
        int b_size = GROUP;
        if (i + GROUP > n)
            b_size = n - i;
        for (int j = 0; j < b_size; j++) /* LOOP */
            s[j] = val[i + j] * 2.0 + row[i + j];
        for (int j = 0; j < b_size; j++)
            out[i + j] = s[j];
    }
}
int main(void) {
    double val[10], out[10] = {0};
    int row[10];
    for (int k = 0; k < 10; k++) { val[k] = k % 3; row[k] = 10 - k; }
    groups(out, val, row, 10);
    for (int k = 0; k < 10; k++) printf("%g ", out[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_block_size_cut_at_the_end_is_a_min() {
    let report = check_with_runs(GROUPS, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.upper, "min(4, -i + n)", "{induction:#?}");
}

/// The start `imin = i > d ? i - d : 0` written as an `if` (dtaidistance's LB_Keogh
/// windows) is `max(i - d, 0)`; a maximum over the window is a reduction.
const WINDOW_IF: &str = r#"
#include <stdio.h>
static void keogh(const double *s, double *u, int l, int d) {
    for (int i = 0; i < l; i++) {
        int imin, imax;
        if (i > d)
            imin = i - d;
        else
            imin = 0;
        imax = i + d + 1;
        if (imax > l)
            imax = l;
        double m = 0;
        for (int j = imin; j < imax; j++) /* LOOP */
            if (s[j] > m)
                m = s[j];
        u[i] = m;
    }
}
int main(void) {
    double s[12], u[12];
    for (int k = 0; k < 12; k++) s[k] = (k * 5) % 7;
    keogh(s, u, 12, 2);
    for (int k = 0; k < 12; k++) printf("%g ", u[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_window_start_assigned_in_an_if_is_a_max() {
    let report = check_with_runs(WINDOW_IF, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(
        (induction.lower.as_str(), induction.upper.as_str()),
        ("max(0, -d + i)", "min(d + i + 1, l)"),
        "{induction:#?}"
    );
}
