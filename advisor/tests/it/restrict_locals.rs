//! Promises the program makes that the analyses take at their word, checked against
//! compiled runs (the output is the same with the marked loop reversed exactly when its
//! iterations are independent):
//!
//! - `restrict`-qualified local pointers declared in one block (C99 6.7.3.1): what the loop
//!   modifies through one is touched through no other, so a solver's work vectors carved
//!   out of one buffer (`dk = aux + n; gk = aux + 2*n;`) are apart, and the report says it
//!   relies on the qualifiers. Not when the pointers are new in every iteration (declared
//!   in the loop's body) or declared in different blocks, where one may be based on the
//!   other.
//! - a global defined `const` (`const double epzero = 1e-12;`) is modified by no store of a
//!   correct program (C99 6.7.3p5), so a loop storing through a pointer it received does
//!   not make it a may-alias pair, while a global that is not `const` stays one;
//! - a pointer the function obtained before an allocation cannot point into the new block
//!   (C99 6.2.4p2: a pointer into a block freed and reused is indeterminate), even when the
//!   block's address is then handed to a function that may keep it;
//! - a named integer chosen by a condition inside an outer loop (`stride = blocked ? b[1] :
//!   1`) is one symbol for the loops it encloses, so `x[ii*stride + kk]` with
//!   `kk < stride` is one block of elements per iteration.

use crate::common;

use advisor::model::{LoopReport, Verdict};
use common::*;

/// The report of the marked loop, checked against the runs, and whether it states the
/// `restrict` promise for each pair in `promised` (`"dk` and `gk"`).
fn check(source: &str, verdict: Verdict, independent: bool, promised: &[&str]) -> LoopReport {
    let report = check_with_runs(source, verdict, independent);
    for pair in promised {
        assert!(
            report
                .assumptions
                .iter()
                .any(|a| a.contains(pair) && a.contains("`restrict` qualifiers promise")),
            "no promise for {pair}: {:#?}",
            report.assumptions
        );
    }
    if promised.is_empty() {
        assert!(
            !report.assumptions.iter().any(|a| a.contains("restrict")),
            "{:#?}",
            report.assumptions
        );
    }
    report
}

/// `body` is the body of `void kernel(double *aux, int n, int m)`, called on a buffer of
/// 64 doubles with `n` = 16 elements per vector and vectors `m` = 20 apart: nothing the
/// analyses can see relates `n` and `m`; the program prints the buffer.
fn program(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         static void kernel(double *aux, int n, int m) {{\n{body}\n}}\n\
         int main(int argc, char **argv) {{\n\
           double aux[64];\n\
           (void)argv;\n\
           for (int k = 0; k < 64; k++) aux[k] = k * 0.5 + 1;\n\
           kernel(aux, 15 + argc, 19 + argc);\n\
           for (int k = 0; k < 64; k++) printf(\"%g\\n\", aux[k]);\n\
           return 0;\n\
         }}\n"
    )
}

/// Three vectors of one buffer, declared with `qualifier` (`restrict` or nothing), and a
/// loop updating two of them from the third.
fn work_vectors(qualifier: &str) -> String {
    program(&format!(
        "  double *{qualifier} rk, *{qualifier} dk, *{qualifier} gk;\n\
           rk = aux;\n\
           dk = aux + m;\n\
           gk = aux + 2*m;\n\
           for (int ii = 0; ii < n; ii++) {{ /* LOOP */\n\
             rk[ii] = gk[ii] - 0.5 * dk[ii];\n\
             dk[ii] = rk[ii] + dk[ii];\n\
           }}"
    ))
}

#[test]
fn work_vectors_of_one_buffer_are_apart_when_declared_restrict() {
    // code_saturne's conjugate gradient (cs_sles_it.c): three vectors of one allocation.
    let source = work_vectors("restrict");
    check(
        &source,
        Verdict::Friendly,
        true,
        &["`dk` and `gk`", "`dk` and `rk`", "`gk` and `rk`"],
    );
}

#[test]
fn without_the_qualifiers_the_same_loop_is_not_taken_on_trust() {
    let source = work_vectors("");
    let report = check_with_runs(&source, Verdict::NeedsProfile, true);
    assert!(
        !report.assumptions.iter().any(|a| a.contains("restrict")),
        "{:#?}",
        report.assumptions
    );
}

#[test]
fn pointers_declared_in_the_body_are_new_in_every_iteration() {
    // Within one iteration `p` and `q` are apart; across iterations `q` of one is `p` of
    // the next, which the qualifiers allow and the runs show.
    let source = program(
        "  for (int ii = 0; ii < n; ii++) { /* LOOP */\n\
             double *restrict p = aux + ii;\n\
             double *restrict q = aux + ii + 1;\n\
             p[0] = q[0] * 2 + 1;\n\
           }",
    );
    check(&source, Verdict::NotFriendly, false, &[]);
}

#[test]
fn a_pointer_of_an_inner_block_may_be_based_on_one_of_the_outer_block() {
    // C99 6.7.3.1p4 allows `q = p + 1` here: `p`'s block began before `q`'s.
    let source = program(
        "  double *restrict p = aux;\n\
           {\n\
             double *restrict q = p + 1;\n\
             for (int ii = 0; ii < n; ii++) { /* LOOP */\n\
               p[ii] = q[ii] * 2 + 1;\n\
             }\n\
           }",
    );
    check(&source, Verdict::NotFriendly, false, &[]);
}

#[test]
fn a_stride_chosen_in_an_outer_loop_is_one_symbol_for_the_loops_inside() {
    // code_saturne's benchmark (cs_benchmark.c): `sd` is 1 or 9 depending on the fill
    // type of the sweep, and each `ii` writes its own `sd` elements.
    let source = "#include <stdio.h>\n\
         static void kernel(double *da, const int *f_type, int n) {\n\
           int d_block_size[4] = {3, 3, 3, 9};\n\
           for (int f_id = 0; f_id < 2; f_id++) {\n\
             const int *blocks = (f_type[f_id] >= 2) ? d_block_size : 0;\n\
             const int stride = (blocks != 0) ? d_block_size[1] : 1;\n\
             const int sd = stride*stride;\n\
             for (int ii = 0; ii < n; ii++) { /* LOOP */\n\
               for (int kk = 0; kk < sd; kk++)\n\
                 da[ii*sd + kk] = da[ii*sd + kk] * 0.5 + ii + kk + f_id;\n\
             }\n\
           }\n\
         }\n\
         int main(void) {\n\
           double da[90];\n\
           int f_type[2] = {0, 2};\n\
           for (int k = 0; k < 90; k++) da[k] = k;\n\
           kernel(da, f_type, 10);\n\
           for (int k = 0; k < 90; k++) printf(\"%g\\n\", da[k]);\n\
           return 0;\n\
         }\n";
    let report = check(source, Verdict::Friendly, true, &[]);
    let da = report
        .parameters
        .iter()
        .find(|p| p.name == "da")
        .expect("`da` is a parameter");
    let bytes = da.bytes.as_ref().expect("a section for `da`");
    assert_eq!(bytes.hi, "8*n*stride*stride", "{da:#?}");
}

/// A loop clamping `v` against a global threshold, called on a local array.
fn clamp(declaration: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         {declaration}\n\
         static void kernel(double *v, int n) {{\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             v[i] = v[i] > epzero ? v[i] - epzero : 0.0;\n\
         }}\n\
         int main(void) {{\n\
           double v[16];\n\
           for (int k = 0; k < 16; k++) v[k] = k * 0.25 - 1;\n\
           kernel(v, 16);\n\
           for (int k = 0; k < 16; k++) printf(\"%g\\n\", v[k]);\n\
           return 0;\n\
         }}\n"
    )
}

#[test]
fn a_const_global_is_not_modified_by_the_loop_s_stores() {
    check(
        &clamp("const double epzero = 0.5;"),
        Verdict::Friendly,
        true,
        &[],
    );
}

#[test]
fn a_global_that_is_not_const_may_be_what_a_received_pointer_reaches() {
    let report = check_with_runs(&clamp("double epzero = 0.5;"), Verdict::NeedsProfile, true);
    assert!(has_code(&report, "WW110"), "{:#?}", report.reasons);
}

#[test]
fn a_const_global_read_in_a_helper_is_not_modified_either() {
    // code_saturne's limiters read `cs_math_epzero` inside inline helpers of a header.
    let source = clamp(
        "const double epzero = 0.5;\n\
                        static double above(double x) { return x > epzero ? x - epzero : 0.0; }",
    )
    .replace("v[i] > epzero ? v[i] - epzero : 0.0", "above(v[i])");
    check(&source, Verdict::Friendly, true, &[]);
    let report = check_with_runs(
        &source.replace("const double epzero", "double epzero"),
        Verdict::NeedsProfile,
        true,
    );
    assert!(has_code(&report, "WW110"), "{:#?}", report.reasons);
}

/// `kernel` adds a shifted copy of new memory `g` to `v`, a pointer from a table; where `v`
/// is looked up (`before` or after the allocation) is the question.
fn looked_up(before: bool) -> String {
    let lookup = "double *v = lookup(id);";
    let (first, second) = if before { (lookup, "") } else { ("", lookup) };
    format!(
        "#include <stdio.h>\n\
         #include <stdlib.h>\n\
         static double table[64];\n\
         static double *kept;\n\
         static double *lookup(int id) {{ return table + 16 * id; }}\n\
         static void keep(double *p) {{ kept = p; }}\n\
         static void kernel(int n, int id) {{\n\
           {first}\n\
           double *g = malloc((n + 1) * sizeof *g);\n\
           if (!g) return;\n\
           for (int k = 0; k <= n; k++) g[k] = k * 0.5;\n\
           keep(g);\n\
           {second}\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             v[i] += g[i + 1];\n\
           free(g);\n\
         }}\n\
         int main(void) {{\n\
           for (int k = 0; k < 64; k++) table[k] = k;\n\
           kernel(16, 1);\n\
           for (int k = 0; k < 64; k++) printf(\"%g\\n\", table[k]);\n\
           return kept == 0;\n\
         }}\n"
    )
}

#[test]
fn a_pointer_obtained_before_an_allocation_does_not_reach_it() {
    check(&looked_up(true), Verdict::Friendly, true, &[]);
}

#[test]
fn a_pointer_obtained_after_the_allocation_was_handed_out_may_reach_it() {
    let report = check_with_runs(&looked_up(false), Verdict::NeedsProfile, true);
    assert!(has_code(&report, "WW110"), "{:#?}", report.reasons);
}
