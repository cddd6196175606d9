//! A pointer the function assigns in more than one place (`p = other` on one path,
//! `p = (double *) alloc(...)` on another) is one kernel parameter: the array, named as the
//! source names it, and no second scalar copy of the same pointer beside it.

use crate::common;
use advisor::model::Verdict;

/// The loop marked `/* LOOP */` has exactly the parameters `expected`, as `(name, kind)`.
fn check(source: &str, expected: &[(&str, &str)]) {
    let report = common::marked_report(source);
    let found: Vec<(String, String)> = report
        .parameters
        .iter()
        .map(|p| (p.name.clone(), format!("{:?}", p.kind).to_lowercase()))
        .collect();
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(n, k)| (n.to_string(), k.to_string()))
        .collect();
    assert_eq!(found, expected, "{report:#?}");
}

#[test]
fn a_pointer_joined_from_two_assignments_is_one_array() {
    check(
        "void *alloc(int n);\n\
         double f(int n, int flag, double *other) {\n\
           double *cp = 0;\n\
           if (flag) cp = other;\n\
           else cp = (double *) alloc(n);\n\
           double s = 0;\n\
           for (int c = 0; c < n; c++) /* LOOP */\n\
             s += cp[c] * 2.0;\n\
           return s;\n\
         }\n",
        &[("cp", "array"), ("n", "scalar"), ("s", "scalar")],
    );
}

#[test]
fn a_pointer_cast_from_an_allocation_beside_another_assignment_is_one_array() {
    // code_saturne's `BFT_MALLOC(cpro_cp, n_cells, cs_real_t)` on two paths beside
    // `cpro_cp = CS_F_(cp)->val`: the loop's pointer is the cast of the call's result.
    let source = |marked: &str, other: &str| {
        format!(
            "void *alloc(int n);\n\
             struct fld {{ double *val; }};\n\
             struct fld *get(int);\n\
             void f(int n, double v, int it, int icp, double *out) {{\n\
               double *cp = 0;\n\
               if (it) {{\n\
                 if (icp != -1)\n\
                   cp = get(3)->val;\n\
                 else {{\n\
                   cp = (double *) alloc(n);\n\
                   for (int c = 0; c < n; c++) {marked}\n\
                     cp[c] = v;\n\
                 }}\n\
               }} else {{\n\
                 cp = (double *) alloc(n);\n\
                 for (int c = 0; c < n; c++) {other}\n\
                   cp[c] = 1.;\n\
               }}\n\
               for (int c = 0; c < n; c++)\n\
                 out[c] += cp[c];\n\
             }}\n"
        )
    };
    check(
        &source("/* LOOP */", ""),
        &[("cp", "array"), ("n", "scalar"), ("v", "scalar")],
    );
    check(
        &source("", "/* LOOP */"),
        &[("cp", "array"), ("n", "scalar")],
    );
}

#[test]
fn a_local_copy_of_another_name_s_array_stays_beside_it() {
    // SUNDIALS' `xd = NV_DATA(x)`: the array is named by its path, and the kernel takes the
    // local the loop's text uses as that array.
    check(
        "struct content { long length; double *data; };\n\
         typedef struct vector { void *content; } *N_Vector;\n\
         #define NV_CONTENT(v) ((struct content *)((v)->content))\n\
         void scale(double c, N_Vector x) {\n\
           long i, n = NV_CONTENT(x)->length;\n\
           double *xd = NV_CONTENT(x)->data;\n\
           for (i = 0; i < n; i++) /* LOOP */\n\
             xd[i] = c * xd[i] + 1.0;\n\
         }\n",
        &[
            ("x->content->data", "array"),
            ("c", "scalar"),
            ("n", "scalar"),
            ("xd", "scalar"),
        ],
    );
}

/// A pointer that is NULL on one path and a call's result on another (GraphicsMagick's
/// `indexes`, written under `if (indexes)`): dereferencing it on the null path would be
/// undefined, so where the loop writes through it it has one base, and no dependence.
#[test]
fn a_pointer_null_on_one_path_has_its_other_value_where_it_is_written() {
    let report = common::marked_report(
        "unsigned short *get(void);\n\
         void f(int n, int pseudo, int rows) {\n\
           for (int y = 0; y < rows; y++) {\n\
             unsigned short *indexes = 0;\n\
             if (pseudo) {\n\
               indexes = get();\n\
               if (!indexes) continue;\n\
             }\n\
             if (indexes)\n\
               for (int x = 0; x < n; x++) /* LOOP */\n\
                 indexes[x] = (unsigned short) y;\n\
           }\n\
         }\n",
    );
    assert_eq!(report.verdict, Verdict::Friendly, "{report:#?}");
    assert!(
        report.parameters.iter().any(|p| p.name == "indexes"),
        "{report:#?}"
    );
}

/// The same pointer inside a callee: the call's summary has the write through it at its
/// one non-null value, `img + y*n`, rather than through a pointer the callee does not
/// receive (which left the callee's effects unknown and the loop not friendly).
#[test]
fn a_callee_writing_through_a_pointer_null_on_one_path_has_a_known_effect() {
    let report = common::marked_report(
        "static void fill(unsigned short *img, int n, int pseudo, int y) {\n\
           unsigned short *indexes = 0;\n\
           if (pseudo)\n\
             indexes = img + y * n;\n\
           if (indexes)\n\
             for (int x = 0; x < n; x++)\n\
               indexes[x] = (unsigned short) y;\n\
         }\n\
         void f(unsigned short *img, int n, int pseudo, int rows) {\n\
           for (int y = 0; y < rows; y++) /* LOOP */\n\
             fill(img, n, pseudo, y);\n\
         }\n",
    );
    assert_eq!(report.verdict, Verdict::Friendly, "{report:#?}");
    assert!(
        report.parameters.iter().any(|p| p.name == "img"),
        "{report:#?}"
    );
}
