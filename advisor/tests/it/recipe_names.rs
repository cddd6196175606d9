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

/// A variable's own storage (a scalar global, a local whose address is let out) is copied
/// from its address: `(char *)&m`, where an array or a pointer is copied from itself.
#[test]
fn a_variables_own_storage_is_copied_from_its_address() {
    let (report, text) = recipe(
        "int m;\n\
         double tab[100];\n\
         void keep(int *count);\n\
         void f(double *restrict y, int n) {\n\
           int s = n;\n\
           keep(&s);\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             y[i] = tab[i % 100] * m + s;\n\
         }\n",
    );
    let by_address: Vec<&str> = report
        .parameters
        .iter()
        .filter(|p| p.by_address)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(by_address, ["m", "s"], "{report:#?}");
    assert!(
        text.contains("cudaMemcpy(d_m, (char *)&m + 0, 4,"),
        "{text}"
    );
    assert!(
        text.contains("cudaMemcpy(d_s, (char *)&s + 0, 4,"),
        "{text}"
    );
    assert!(
        text.contains("cudaMemcpy((char *)y + 0, d_y, 8*n,"),
        "{text}"
    );
}

/// A pointer copied from a field holds that field's array: the report says so (`holds`),
/// and the recipe has the array's device pointer in its place, also where the loop only
/// hands the copy to a callee.
#[test]
fn a_copied_pointer_holds_its_array() {
    let (report, text) = recipe(
        "typedef struct { int n; double *vol; } mesh_t;\n\
         static double half(const double *v, int c) { return 0.5 * v[c]; }\n\
         void halves(const mesh_t *m, double *out) {\n\
           const double *vol = m->vol;\n\
           for (int f = 0; f < m->n; f++) /* LOOP */\n\
             out[f] = half(vol, f);\n\
         }\n",
    );
    let holds: Vec<(&str, &str)> = report
        .parameters
        .iter()
        .filter_map(|p| Some((p.name.as_str(), p.holds.as_deref()?)))
        .collect();
    assert_eq!(holds, [("vol", "m->vol")], "{report:#?}");
    assert!(text.contains("`d_m_vol` for `vol`"), "{text}");
    assert!(!text.contains("double *vol"), "{text}");
}
