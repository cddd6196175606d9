//! The names a recipe gives the threads' indices never stand for something else in the
//! recipe: matmul's recipe mapped threads with `k = blockIdx.x*...` while its kernel's inner
//! loop runs over `k`.

use crate::common;

use advisor::model::{LoopReport, Report, Verdict, SCHEMA};
use common::check;

/// The recipe text of the loop marked `/* LOOP */` in `source`, which must be friendly.
fn recipe(source: &str) -> (LoopReport, String) {
    let report = check(source, Verdict::Friendly);
    let text = advisor::recipe::render(
        &Report {
            schema: SCHEMA.into(),
            loops: vec![report.clone()],
            skipped: Vec::new(),
        },
        &[],
        false,
    );
    (report, text)
}

#[test]
fn a_one_dimensional_index_avoids_a_private_variable_of_its_name() {
    let (report, text) = recipe(
        "double scale(double *b, const double *a, int n) {\n\
           double k = 0;\n\
           for (int i = 0; i < n; i++) { /* LOOP */\n\
             k = a[i] * 2.0;\n\
             b[i] = k + 1.0;\n\
           }\n\
           return k;\n\
         }\n",
    );
    assert!(report.private.iter().any(|p| p.name == "k"), "{report:#?}");
    assert!(
        text.contains("tid = blockIdx.x*blockDim.x + threadIdx.x; i = tid; return if tid >= n."),
        "{text}"
    );
}

#[test]
fn two_dimensional_indices_avoid_a_parameter_of_their_names() {
    let (report, text) = recipe(
        "void fill(double *a, int n, int m, double kx) {\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             for (int j = 0; j < m; j++)\n\
               a[i * m + j] = kx * j + i;\n\
         }\n",
    );
    assert!(
        report.parameters.iter().any(|p| p.name == "kx"),
        "{report:#?}"
    );
    assert!(
        text.contains("tx = blockIdx.x*blockDim.x + threadIdx.x;"),
        "{text}"
    );
    assert!(
        text.contains("ky = blockIdx.y*blockDim.y + threadIdx.y;"),
        "{text}"
    );
    assert!(!text.contains("kx = blockIdx"), "{text}");
}
