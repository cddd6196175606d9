//! The exact subscript test (`advisor::subscripts`): accesses to a row-major layout
//! delinearized into (row, column) and the subscript equations with the loop bounds solved
//! by Fourier-Motzkin elimination. Symmetrizations and triangular copies (`a[k][l]` with
//! `a[l][k]` over `l > k`) are independent; a full in-place transpose and a copy that reads
//! one row too far are not, and stay not-friendly with their witness. Every verdict is
//! checked against compiled runs: the output is the same with the marked loop reversed
//! exactly when its iterations are independent.

use crate::common;

use advisor::model::{LoopReport, Verdict};
use common::*;

/// `kernel(a, n)` holds the loop marked `/* LOOP */`; it runs on a 6x6 matrix (`n` = 6)
/// whose entries all differ, and the program prints the matrix.
fn check_matrix(kernel: &str, expected: Verdict, independent: bool) -> LoopReport {
    let source = format!(
        "#include <stdio.h>\n{kernel}\n\
         int main(void) {{\n\
           double a[36];\n\
           for (int k = 0; k < 36; k++) a[k] = k * 0.75 + 1;\n\
           kernel(a, 6);\n\
           for (int k = 0; k < 36; k++) printf(\"%g\\n\", a[k]);\n\
           return 0;\n\
         }}\n"
    );
    check_with_runs(&source, expected, independent)
}

/// A carried dependence stated with its two iterations.
fn assert_witnessed(report: &LoopReport) {
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW101 && r.witness.is_some()),
        "{:#?}",
        report.reasons
    );
}

#[test]
fn a_symmetrization_over_the_upper_triangle_is_friendly() {
    // phono3py's `ph3py_symmetrize_collision_matrix`, one block.
    check_matrix(
        "static void kernel(double *a, long n) {\n\
             for (long k = 0; k < n; k++) { /* LOOP */\n\
                 for (long l = k + 1; l < n; l++) {\n\
                     double v = (a[k * n + l] + a[l * n + k]) / 2;\n\
                     a[k * n + l] = v;\n\
                     a[l * n + k] = v;\n\
                 }\n\
             }\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_symmetrization_of_one_block_among_several_is_friendly() {
    // The block's offset `s` is the same for both accesses and cancels out (phono3py
    // symmetrizes the blocks of a collision matrix at `adrs_shift`).
    check_matrix(
        "static void blocks(double *a, long m) {\n\
             for (long b = 0; b < 4; b++) {\n\
                 long s = b * m * m;\n\
                 for (long k = 0; k < m; k++) { /* LOOP */\n\
                     for (long l = k + 1; l < m; l++) {\n\
                         double v = (a[s + k * m + l] + a[s + l * m + k]) / 2;\n\
                         a[s + k * m + l] = v;\n\
                         a[s + l * m + k] = v;\n\
                     }\n\
                 }\n\
             }\n\
         }\n\
         static void kernel(double *a, long n) { blocks(a, n / 2); }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_triangular_copy_through_a_two_dimensional_array_is_friendly() {
    // Lower triangle from the upper one, diagonal included, with `double (*)[n]` rows.
    check_matrix(
        "static void kernel(double *flat, long n) {\n\
             double (*a)[n] = (double (*)[n])flat;\n\
             for (long i = 0; i < n; i++) { /* LOOP */\n\
                 for (long j = i; j < n; j++)\n\
                     a[j][i] = 2 * a[i][j];\n\
             }\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn an_in_place_transpose_carries_a_dependence() {
    let report = check_matrix(
        "static void kernel(double *a, long n) {\n\
             for (long i = 0; i < n; i++) { /* LOOP */\n\
                 for (long j = 0; j < n; j++)\n\
                     a[j * n + i] = a[i * n + j] + 1;\n\
             }\n\
         }",
        Verdict::NotFriendly,
        false,
    );
    assert_witnessed(&report);
}

#[test]
fn a_column_one_past_the_row_meets_the_next_row() {
    // `a[l][k + 1]` with `k + 1 == n` is the next row's first element: the column is not
    // within its row, so the subscripts cannot be separated, and the flat layout's
    // dependence is real (a witness shows it).
    let report = check_matrix(
        "static void kernel(double *a, long n) {\n\
             for (long k = 0; k < n; k++) {\n\
                 for (long l = 0; l < k; l++) { /* LOOP */\n\
                     a[k * n + l] = a[l * n + k + 1];\n\
                 }\n\
             }\n\
         }",
        Verdict::NotFriendly,
        false,
    );
    assert_witnessed(&report);
}

/// A program running `kernel(fc3, perms, 2)` over 2x2 blocks of 3x3x3 doubles, `perms` a
/// permutation of the block indices, and printing `fc3`. The kernel's loops are phono3py's
/// `transpose_compact_fc3_type01` with `write` and `read` the two offsets of its copy.
fn check_blocks(write: &str, read: &str, expected: Verdict, independent: bool) -> LoopReport {
    let source = format!(
        "#include <stdio.h>\n\
         static void kernel(double *fc3, const long *perms, long nb) {{\n\
             for (long j = 0; j < nb; j++) {{\n\
                 for (long k = 0; k < nb; k++) {{\n\
                     long adrs = (j * nb + k) * 27, adrs_t = (perms[j] * nb + perms[k]) * 27;\n\
                     if (adrs == adrs_t) continue;\n\
                     for (long l = 0; l < 3; l++) {{\n\
                         for (long m = 0; m < 3; m++) {{ /* LOOP */\n\
                             for (long n = 0; n < 3; n++) {{\n\
                                 fc3[{write}] = fc3[{read}];\n\
                             }}\n\
                         }}\n\
                     }}\n\
                 }}\n\
             }}\n\
         }}\n\
         int main(void) {{\n\
           double fc3[4 * 27 + 27];\n\
           long perms[2] = {{1, 0}};\n\
           for (int k = 0; k < 4 * 27 + 27; k++) fc3[k] = k * 0.5 + 1;\n\
           kernel(fc3, perms, 2);\n\
           for (int k = 0; k < 4 * 27 + 27; k++) printf(\"%g\\n\", fc3[k]);\n\
           return 0;\n\
         }}\n"
    );
    check_with_runs(&source, expected, independent)
}

#[test]
fn a_transposed_copy_between_blocks_of_27_is_friendly() {
    // The block offsets are multiples of 27 built from loads, so only the in-block parts
    // `9l + 3m + n` and `9m' + 3l + n'` can make two indices equal, and with `m' > m` over
    // 0..3 they never are (over the rationals they are: l = 1.5).
    check_blocks(
        "adrs + l * 9 + m * 3 + n",
        "adrs_t + m * 9 + l * 3 + n",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn an_in_block_part_reaching_the_next_block_is_not_split() {
    // The read's in-block part `9m + 3l + n + 9` reaches 35: a read may land in the block
    // after `adrs_t`, which is `adrs` itself for some blocks (the runs differ).
    check_blocks(
        "adrs + l * 9 + m * 3 + n",
        "adrs_t + m * 9 + l * 3 + n + 9",
        Verdict::NeedsProfile,
        false,
    );
}
