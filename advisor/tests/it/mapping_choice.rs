//! The recommended mapping runs the whole loop as one kernel: the loop itself, or the loop
//! and the one loop nested directly in it. A deeper loop of an imperfect nest (`j` of
//! gemm's `for i { for j C *= beta; for k for j C += ... }`) costs fewer requests but
//! covers one statement of the body; it stays among the what-if mappings.

use crate::common;

/// The loop marked `/* LOOP */` is recommended the mapping `{x: recommended}` and lists a
/// what-if mapping `{x: also}`.
fn check(source: &str, recommended: &str, also: &str) {
    let report = common::marked_report(source);
    let mapping = report.recommended_mapping.as_ref().expect("a mapping");
    assert_eq!(
        (mapping.x.as_str(), mapping.y.as_deref()),
        (recommended, None),
        "{report:#?}"
    );
    assert!(
        report
            .mappings
            .iter()
            .any(|m| m.mapping.x == also && m.mapping.y.is_none()),
        "{report:#?}"
    );
}

#[test]
fn an_imperfect_nest_maps_its_outer_loop() {
    check(
        "void gemm(int ni, int nj, int nk, double alpha, double beta,\n\
                   double C[1000][1100], double A[1000][1200], double B[1200][1100]) {\n\
           for (int i = 0; i < ni; i++) { /* LOOP */\n\
             for (int j = 0; j < nj; j++)\n\
               C[i][j] *= beta;\n\
             for (int k = 0; k < nk; k++)\n\
               for (int j = 0; j < nj; j++)\n\
                 C[i][j] += alpha * A[i][k] * B[k][j];\n\
           }\n\
         }\n",
        "i",
        "j",
    );
}

#[test]
fn sibling_loops_of_three_iterations_are_not_the_grid() {
    // code_saturne's gradient update: the cell loop holds two small nests over the tensor's
    // components; mapping a component loop would leave the cells to the host.
    check(
        "void update(int n, double (*rhs)[3][3], double (*grad)[3][3],\n\
                     const double (*cocg)[3][3], const double *vol) {\n\
           for (int c = 0; c < n; c++) { /* LOOP */\n\
             double d = 1. / vol[c];\n\
             for (int i = 0; i < 3; i++)\n\
               for (int j = 0; j < 3; j++)\n\
                 rhs[c][i][j] *= d;\n\
             for (int i = 0; i < 3; i++)\n\
               for (int j = 0; j < 3; j++)\n\
                 for (int k = 0; k < 3; k++)\n\
                   grad[c][i][j] += rhs[c][i][k] * cocg[c][k][j];\n\
           }\n\
         }\n",
        "c",
        "j",
    );
}
