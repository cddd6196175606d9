//! Element reductions whose loop also reads other elements of the same array, kept apart
//! by a triangular bound: forward substitution's `x[i] -= L[i][j] * x[j]` over `j < i`,
//! Cholesky's `A[i][j] -= A[i][k] * A[j][k]` over `k < j`. The reads never touch the
//! accumulated element (the later iteration's `j + d` stays below `i`), so the loop is a
//! reduction; checked against compiled runs, forward and reversed (integer-valued doubles:
//! the sums are exact in any order). Where the bound lets a read reach the element, the
//! loop stays not friendly and reversing it changes the output.

use crate::common::*;
use advisor::model::{LoopReport, Verdict};

/// `body` runs in `void solve(int n)` over globals `L`, `A` (8x8) and `x` (8), filled
/// with small integers; `main` prints `x` and `A` in full.
fn program(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 8\n\
         double L[N][N], A[N][N], x[N];\n\
         static void solve(int n) {{\n{body}\n}}\n\
         int main(void) {{\n\
           for (int i = 0; i < N; i++) {{\n\
             x[i] = i + 1;\n\
             for (int j = 0; j < N; j++) {{ L[i][j] = (i * 3 + j) % 4 - 1; A[i][j] = (i + 2 * j) % 5; }}\n\
           }}\n\
           solve(N);\n\
           for (int i = 0; i < N; i++) printf(\"%.17g\\n\", x[i]);\n\
           for (int i = 0; i < N; i++)\n\
             for (int j = 0; j < N; j++) printf(\"%.17g\\n\", A[i][j]);\n\
           return 0;\n\
         }}\n"
    )
}

fn check(body: &str, verdict: Verdict, independent: bool) -> LoopReport {
    check_with_runs(&program(body), verdict, independent)
}

fn reduces(report: &LoopReport, target: &str) {
    assert!(
        report
            .reductions
            .iter()
            .any(|r| r.target == target && r.operator == advisor::model::RedOp::Sum),
        "{:#?}",
        report.reductions
    );
}

#[test]
fn forward_substitution_reduces_into_x_i() {
    let report = check(
        "  for (int i = 0; i < n; i++)\n\
             for (int j = 0; j < i; j++) /* LOOP */\n\
               x[i] -= L[i][j] * x[j];",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "x[i]");
}

#[test]
fn cholesky_update_reduces_into_a_i_j() {
    let report = check(
        "  for (int j = 0; j < n; j++)\n\
             for (int i = j + 1; i < n; i++)\n\
               for (int k = 0; k < j; k++) /* LOOP */\n\
                 A[i][j] -= A[i][k] * A[j][k];",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "A[i][j]");
}

#[test]
fn a_bound_that_reaches_the_element_keeps_the_dependence() {
    // Over `j <= i` the last read is `x[i]` itself, mid-accumulation.
    let source = program(
        "  for (int i = 0; i < n; i++)\n\
             for (int j = 0; j < i + 1; j++) /* LOOP */\n\
               x[i] -= L[i][j] * x[j];",
    );
    let report = marked_report(&source);
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    differs_in_reverse(&source);
}
