//! Loops collapsed by hand (`for (ij = 0; ij < n * n; ij++) { i = ij / n; j = ij % n; }`),
//! as OpenMP code does to get more parallel iterations: `i * n + j` is `ij` (C99 6.5.5p6,
//! `a % b == a - (a / b) * b`), so `out[i * n + j]` is one element per iteration. Each
//! verdict is checked against compiled runs: the output is the same with the loop reversed
//! exactly when the loop's iterations are independent.

use crate::common;

use advisor::model::{LoopReport, Verdict};
use common::*;

/// `kernel` is a function holding the loop marked `/* LOOP */`, called as `kernel(a, b, n)`
/// on two arrays of 36 doubles (`n` = 6, or -6 where it says so); the program prints both.
fn check_linearized(kernel: &str, expected: Verdict, independent: bool) -> LoopReport {
    let source = format!(
        "#include <stdio.h>\n{kernel}\n\
         int main(void) {{\n\
           double a[36], b[36];\n\
           for (int k = 0; k < 36; k++) {{ a[k] = k * 0.5 + 1; b[k] = 36 - k; }}\n\
           kernel(a, b, 6);\n\
           for (int k = 0; k < 36; k++) printf(\"%g %g\\n\", a[k], b[k]);\n\
           return 0;\n\
         }}\n"
    );
    check_with_runs(&source, expected, independent)
}

#[test]
fn a_transposing_copy_writes_one_element_per_iteration() {
    check_linearized(
        "static void kernel(double *out, const double *in, long n) {\n\
             for (long ij = 0; ij < n * n; ij++) { /* LOOP */\n\
                 long i = ij / n, j = ij % n;\n\
                 out[i * n + j] = in[j * n + i] * 2;\n\
             }\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn the_divisor_may_be_read_from_memory_twice() {
    check_linearized(
        "struct grid { long n; };\n\
         static void kernel(double *out, const double *in, long n) {\n\
             struct grid g = { n };\n\
             const struct grid *p = &g;\n\
             for (long ij = 0; ij < n * n; ij++) { /* LOOP */\n\
                 long r = ij / p->n, c = ij % p->n;\n\
                 out[r * p->n + c] = in[c] + r;\n\
             }\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_helper_given_the_row_and_column_writes_one_element() {
    check_linearized(
        "static void set(double *m, long i, long j, long n) { m[i * n + j] = i - j; }\n\
         static void kernel(double *out, const double *in, long n) {\n\
             (void)in;\n\
             for (long ij = 0; ij < n * n; ij++) /* LOOP */\n\
                 set(out, ij / n, ij % n, n);\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn an_in_place_transpose_is_not_called_friendly() {
    check_linearized(
        "static void kernel(double *a, const double *in, long n) {\n\
             (void)in;\n\
             for (long ij = 0; ij < n * n; ij++) { /* LOOP */\n\
                 long i = ij / n, j = ij % n;\n\
                 a[j * n + i] = a[i * n + j] + 1;\n\
             }\n\
         }",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn a_shifted_store_has_a_witness() {
    let report = check_linearized(
        "static void kernel(double *a, const double *in, long n) {\n\
             (void)in;\n\
             for (long ij = 0; ij < n * n - 1; ij++) { /* LOOP */\n\
                 long i = ij / n, j = ij % n;\n\
                 a[i * n + j + 1] = a[i * n + j] * 2;\n\
             }\n\
         }",
        Verdict::NotFriendly,
        false,
    );
    let witness = report
        .reasons
        .iter()
        .find(|r| r.code == advisor::rules::Code::WW101)
        .expect("a read-after-write dependence with a witness");
    assert!(
        witness
            .message
            .contains("ij = 0 writes a[1]; ij = 1 reads a[1]"),
        "{}",
        witness.message
    );
}

#[test]
fn a_column_accumulation_stays_a_histogram_reduction() {
    let source = "static void kernel(double *sum, const double *in, long n) {\n\
             for (long ij = 0; ij < n * n; ij++) { /* LOOP */\n\
                 long i = ij / n, j = ij % n;\n\
                 sum[j] += in[i * n + j];\n\
             }\n\
         }";
    check_linearized(source, Verdict::Friendly, true);
}

/// phonopy's `get_dynmat_ij` layout: the helper writes a 3x3 block at row `i`, column `j`
/// of a `[i][k][j][l]` matrix; `i * n + j` never appears, so the test sees the loop as the
/// nest `for i { for j }` it stands for (with `n > 0`, said in the report).
#[test]
fn a_helper_writing_a_block_per_row_and_column_is_the_nest_it_stands_for() {
    let report = check_linearized(
        "static void block(double *dm, long i, long j, long n) {\n\
             for (long k = 0; k < 3; k++)\n\
                 for (long l = 0; l < 3; l++)\n\
                     dm[(i * 3 + k) * n * 3 + j * 3 + l] = i * 100 + j * 10 + k * 3 + l;\n\
         }\n\
         static void blocks(double *out, long m) {\n\
             for (long ij = 0; ij < m * m; ij++) /* LOOP */\n\
                 block(out, ij / m, ij % m, m);\n\
         }\n\
         static void kernel(double *out, const double *in, long n) {\n\
             (void)in;\n\
             blocks(out, n - 4);\n\
         }",
        Verdict::Friendly,
        true,
    );
    assert!(
        report.assumptions.iter().any(|a| a == "m > 0"),
        "{:?}",
        report.assumptions
    );
}

#[test]
fn rows_and_columns_that_collide_are_not_called_friendly() {
    // m[i * 3 + j] with j up to n - 1 > 2: (0, 3) and (1, 0) write one element.
    check_linearized(
        "static void put(double *m, long i, long j) { m[i * 3 + j] = i - j; }\n\
         static void kernel(double *out, const double *in, long n) {\n\
             (void)in;\n\
             for (long ij = 0; ij < n * n - 20; ij++) /* LOOP */\n\
                 put(out, ij / n, ij % n);\n\
         }",
        Verdict::NeedsProfile,
        false,
    );
    check_linearized(
        "static void kernel(double *out, const double *in, long n) {\n\
             (void)in;\n\
             for (long ij = 0; ij < n * n; ij++) { /* LOOP */\n\
                 long i = ij / n, j = ij % n;\n\
                 out[i + j] = i * 10 + j;\n\
             }\n\
         }",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn a_collapsed_pair_of_bands_writes_one_column_per_iteration() {
    // phono3py's triplet_iw.c: `b12` runs over `num_band1*num_band2`, and every `j` of the
    // inner loop writes `iw[j*num_band1*num_band2 + b12]`: rows `j` are `b12`'s trip count
    // apart, a product of two symbols of unknown signs that is positive because the loop
    // runs.
    check_linearized(
        "static void kernel(double *iw, const double *g, long n) {\n\
             long num_band1 = n / 2, num_band2 = n / 3;\n\
             for (long b12 = 0; b12 < num_band1 * num_band2; b12++) { /* LOOP */\n\
                 long b1 = b12 / num_band2, b2 = b12 % num_band2;\n\
                 for (long j = 0; j < n; j++)\n\
                     iw[j * num_band1 * num_band2 + b1 * num_band2 + b2] = g[j] * 2 + b12;\n\
             }\n\
         }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn columns_one_short_of_the_trip_count_overlap() {
    // The same loop with rows one element shorter than the trip count: row `j + 1` of
    // iteration `b12` is row `j` of iteration `b12 + ...`, which the reversed run shows.
    check_linearized(
        "static void kernel(double *iw, const double *g, long n) {\n\
             long num_band1 = n / 2, num_band2 = n / 3;\n\
             for (long b12 = 0; b12 < num_band1 * num_band2; b12++) { /* LOOP */\n\
                 for (long j = 0; j < 5; j++)\n\
                     iw[j * (num_band1 * num_band2 - 1) + b12] = g[j] * 2 + b12;\n\
             }\n\
         }",
        Verdict::NotFriendly,
        false,
    );
}
