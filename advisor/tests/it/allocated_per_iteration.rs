//! Memory a loop allocates in its body, checked against compiled runs (the output is the
//! same with the marked loop reversed exactly when its iterations are independent):
//!
//! - a block allocated in the body whose address stays in the SSA values that hold it is
//!   new in every iteration (C99 7.20.3): the scratch buffers real code allocates per row
//!   carry nothing between iterations, the loop is friendly (with WW120's warning) and the
//!   block is no kernel parameter;
//! - not when the address gets out: stored to memory the next iteration reads, or carried
//!   to the next iteration in a variable declared outside the body.

use crate::common;

use advisor::model::{LoopReport, Verdict};
use common::*;

/// `body` is the body of `void kernel(int n, int m, const double *in, double *out,
/// double **keep)`, called on 8 rows of 5; the program prints `out`.
fn program(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #include <stdlib.h>\n\
         static void kernel(int n, int m, const double *in, double *out, double **keep) {{\n{body}\n}}\n\
         int main(void) {{\n\
           double in[40], out[8];\n\
           double *keep[8];\n\
           for (int k = 0; k < 40; k++) in[k] = k * 0.5 + 1;\n\
           for (int k = 0; k < 8; k++) {{ out[k] = 0; keep[k] = 0; }}\n\
           kernel(8, 5, in, out, keep);\n\
           for (int k = 0; k < 8; k++) printf(\"%g\\n\", out[k]);\n\
           for (int k = 0; k < 8; k++) free(keep[k]);\n\
           return 0;\n\
         }}\n"
    )
}

fn check(body: &str, verdict: Verdict, independent: bool) -> LoopReport {
    check_with_runs(&program(body), verdict, independent)
}

#[test]
fn a_scratch_row_allocated_and_freed_in_each_iteration_is_its_own() {
    let report = check(
        "  for (int i = 0; i < n; i++) { /* LOOP */\n\
           double *tmp = malloc(m * sizeof *tmp);\n\
           for (int j = 0; j < m; j++) tmp[j] = in[i * m + j] * 2;\n\
           double s = 0;\n\
           for (int j = 0; j < m; j++) s += tmp[m - 1 - j];\n\
           out[i] = s;\n\
           free(tmp);\n\
         }",
        Verdict::Friendly,
        true,
    );
    assert!(has_code(&report, "WW120"), "{report:#?}");
    assert!(
        report.parameters.iter().all(|p| p.name != "tmp"),
        "{:#?}",
        report.parameters
    );
}

#[test]
fn a_block_handed_to_a_helper_that_keeps_nothing_is_still_its_own() {
    let source = program(
        "  for (int i = 0; i < n; i++) { /* LOOP */\n\
           double *tmp = calloc(m, sizeof *tmp);\n\
           fill(tmp, m, in + i * m);\n\
           out[i] = tmp[0] + tmp[m - 1];\n\
           free(tmp);\n\
         }",
    )
    .replace(
        "static void kernel",
        "static void fill(double *t, int m, const double *src) {\n\
           for (int j = 0; j < m; j++) t[j] = src[j] + 1;\n\
         }\n\
         static void kernel",
    );
    check_with_runs(&source, Verdict::Friendly, true);
}

#[test]
fn a_block_stored_where_the_next_iteration_reads_it_is_shared() {
    // Iteration i keeps its block in `keep[i]` and reads the one iteration i - 1 kept.
    let report = check(
        "  for (int i = 0; i < n; i++) { /* LOOP */\n\
           double *tmp = malloc(m * sizeof *tmp);\n\
           for (int j = 0; j < m; j++) tmp[j] = in[i * m + j];\n\
           keep[i] = tmp;\n\
           out[i] = i > 0 && keep[i - 1] ? keep[i - 1][0] : -1;\n\
         }",
        Verdict::NeedsProfile,
        false,
    );
    assert!(!report.reasons.is_empty());
}

#[test]
fn a_block_carried_to_the_next_iteration_in_an_outer_variable_is_shared() {
    // The first iteration allocates; the others add into the same block.
    check(
        "  double *acc = 0;\n\
           for (int i = 0; i < n; i++) { /* LOOP */\n\
           if (!acc) { acc = malloc(sizeof *acc); acc[0] = 0; }\n\
           acc[0] = acc[0] * 0.5 + in[i * m];\n\
           out[i] = acc[0];\n\
         }\n\
           free(acc);",
        Verdict::NeedsProfile,
        false,
    );
}
