//! C's in-bounds rule in the dependence tests: every subscript of an access into a
//! fixed-size row stays below the row's extent (C99 6.5.6p8), so two accesses whose outer
//! subscripts differ never meet, whatever the inner subscripts hold — a global
//! (`forcing[i][j][k][m]` with `j = grid_points[1] - 3`), a value read in the loop
//! (`a[i][sel[i]][m]`), a struct member's rows. Checked against compiled runs forward and
//! reversed; where an outer subscript reaches another iteration's row, the dependence stays.

use crate::common::*;
use advisor::model::{LoopReport, Verdict};

/// `body` runs in `void step(int n)` over the globals below, filled with small integers;
/// `main` prints every element of `forcing`, `a` and `s`.
fn program(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 9\n\
         double forcing[N][N][N][6], ue[N][5], a[N][8][4];\n\
         int grid_points[3] = {{8, 7, 6}}, sel[N];\n\
         struct grid {{ double v[N][4]; double w[N][4]; }} s;\n\
         static void step(int n) {{\n{body}\n}}\n\
         int main(void) {{\n\
           for (int i = 0; i < N; i++) {{\n\
             sel[i] = (i * 5) % 7;\n\
             for (int m = 0; m < 5; m++) ue[i][m] = i + 2 * m;\n\
             for (int t = 0; t < 4; t++) {{ s.v[i][t] = i + t; s.w[i][t] = i * t % 3; }}\n\
             for (int j = 0; j < 8; j++) for (int t = 0; t < 4; t++) a[i][j][t] = (i + j * t) % 5;\n\
             for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n\
               for (int m = 0; m < 6; m++) forcing[i][j][k][m] = (i + j + k + m) % 7;\n\
           }}\n\
           step(N);\n\
           for (int i = 0; i < N; i++) {{\n\
             for (int t = 0; t < 4; t++) printf(\"%.17g %.17g\\n\", s.v[i][t], s.w[i][t]);\n\
             for (int j = 0; j < 8; j++) for (int t = 0; t < 4; t++) printf(\"%.17g\\n\", a[i][j][t]);\n\
             for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)\n\
               for (int m = 0; m < 6; m++) printf(\"%.17g\\n\", forcing[i][j][k][m]);\n\
           }}\n\
           return 0;\n\
         }}\n"
    )
}

fn check(body: &str, verdict: Verdict, independent: bool) -> LoopReport {
    check_with_runs(&program(body), verdict, independent)
}

fn assumes_extents(report: &LoopReport) {
    assumes(report, "within their declared extents");
}

#[test]
fn a_row_chosen_by_a_global_stays_in_its_iteration() {
    // The dissipation step of a block-tridiagonal solver's right-hand side: `j` is a
    // global's value minus 3, so the address difference has a term no loop bounds.
    let report = check(
        "  int i, j, k, m;\n\
           for (i = 1; i < grid_points[0] - 1; i++) /* LOOP */\n\
             for (k = 1; k < grid_points[2] - 1; k++) {\n\
               for (j = 1; j < grid_points[1] - 1; j++)\n\
                 forcing[i][j][k][0] = forcing[i][j][k][0] + ue[j][0];\n\
               for (m = 0; m < 5; m++) {\n\
                 j = grid_points[1] - 3;\n\
                 forcing[i][j][k][m] = forcing[i][j][k][m] - 2 * ue[j][m];\n\
               }\n\
             }",
        Verdict::Friendly,
        true,
    );
    assumes_extents(&report);
}

#[test]
fn a_row_chosen_by_a_value_read_in_the_loop_stays_in_its_iteration() {
    let report = check(
        "  for (int i = 0; i < n; i++) /* LOOP */\n\
             for (int t = 0; t < 3; t++)\n\
               a[i][sel[i]][t + 1] = a[i][sel[i]][t] + a[i][7 - sel[i]][t];",
        Verdict::Friendly,
        true,
    );
    assumes_extents(&report);
}

#[test]
fn a_struct_members_rows_stay_in_their_iteration() {
    let report = check(
        "  for (int i = 0; i < n; i++) /* LOOP */\n\
             s.v[i][sel[i] % 4] = s.v[i][(sel[i] + 1) % 4] + s.w[i][sel[i] % 4];",
        Verdict::Friendly,
        true,
    );
    assumes_extents(&report);
}

#[test]
fn an_outer_subscript_that_reaches_the_previous_row_keeps_the_dependence() {
    // The inner subscripts are in bounds, but `a[i - 1][2]` is the row the previous
    // iteration wrote.
    check(
        "  for (int i = 1; i < n; i++) /* LOOP */\n\
             a[i][2][0] = a[i - 1][2][0] + a[i][sel[i]][1];",
        Verdict::NotFriendly,
        false,
    );
}

#[test]
fn a_column_sweep_meets_another_column_only_past_the_rows_end() {
    // The column sweep of an alternating-direction solver: each `m` runs a recurrence down
    // its own column. On flat memory `ue[j + 1][m]` meets `ue[j][m + 5]` a row later; with
    // `m + 5` past the row's 5 columns that is no element, and over the integers no pair of
    // iterations of `m` meets (over the rationals `j - j' = -0.4`, `d = 3` would).
    let report = check(
        "  for (int m = 1; m < 4; m++) { /* LOOP */\n\
             ue[0][m] = 1.0;\n\
             for (int j = n - 2; j >= 1; j--)\n\
               ue[j][m] = ue[j + 1][m] * 0.5 + ue[j][m];\n\
             ue[n - 1][m] = 1.0;\n\
           }",
        Verdict::Friendly,
        true,
    );
    assumes_extents(&report);
}
