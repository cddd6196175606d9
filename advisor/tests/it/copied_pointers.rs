//! Pointers the program copies into one another are never assumed apart, checked against
//! compiled runs (the output is the same with the marked loop reversed exactly when its
//! iterations are independent): a time loop that runs a stencil from `u1` into `u2` and
//! then does `u1 = u2;` makes both name one array from the second step on, so the stencil
//! reads what its previous iteration wrote. Globals, locals passed to a callee and locals
//! copied inside the enclosing loop alike. A swap (`t = u1; u1 = u2; u2 = t;`) or calls
//! that alternate the two arrays keep them distinct: those loops stay friendly.

use crate::common;

use advisor::model::Verdict;
use common::*;

/// A program whose `main` fills `u1`, runs `steps` (with globals `u1`, `u2`, `n` in
/// scope) and prints the final `u1` in full.
fn program(declarations: &str, steps: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #include <stdlib.h>\n\
         double *u1, *u2;\n\
         int n = 24;\n\
         {declarations}\n\
         int main(void) {{\n\
           u1 = calloc(n, sizeof(double));\n\
           u2 = calloc(n, sizeof(double));\n\
           for (int k = 0; k < n; k++) {{ u1[k] = (k * 7) % 11; u2[k] = 0; }}\n\
         {steps}\n\
           for (int k = 0; k < n; k++) printf(\"%.17g\\n\", u1[k]);\n\
           return 0;\n\
         }}\n"
    )
}

const GLOBAL_STENCIL: &str = "static void stencil(void) {\n\
   for (int i = 1; i < n - 1; i++) /* LOOP */\n\
     u2[i] = (u1[i - 1] + u1[i] + u1[i + 1]) / 3.0;\n\
 }";

const PARAM_STENCIL: &str = "static void stencil(int m, double *a, double *b) {\n\
   for (int i = 1; i < m - 1; i++) /* LOOP */\n\
     b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;\n\
 }";

fn check(declarations: &str, steps: &str, verdict: Verdict, independent: bool) {
    let report = check_with_runs(&program(declarations, steps), verdict, independent);
    if verdict == Verdict::NeedsProfile {
        assert!(has_code(&report, "WW110"), "{report:#?}");
        assert!(
            report
                .assumptions
                .iter()
                .all(|a| !a.contains("do not overlap")),
            "{:#?}",
            report.assumptions
        );
    }
}

#[test]
fn globals_copied_after_each_step_may_be_one_array() {
    check(
        GLOBAL_STENCIL,
        "  for (int t = 0; t < 4; t++) { stencil(); u1 = u2; }",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn globals_copied_through_a_local_may_be_one_array() {
    check(
        GLOBAL_STENCIL,
        "  for (int t = 0; t < 4; t++) { stencil(); double *next = u2; u1 = next + 0; }",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn locals_copied_inside_the_enclosing_loop_may_be_one_array() {
    let declarations = "static void step(int steps) {\n\
       for (int t = 0; t < steps; t++) {\n\
         double *a = u1, *b = u2;\n\
         for (int i = 1; i < n - 1; i++) /* LOOP */\n\
           b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;\n\
         u1 = u2;\n\
       }\n\
     }";
    check(declarations, "  step(4);", Verdict::NeedsProfile, false);
}

#[test]
fn arguments_copied_across_the_callers_back_edge_may_be_one_array() {
    check(
        PARAM_STENCIL,
        "  double *p = u1, *q = u2;\n\
           for (int t = 0; t < 4; t++) { stencil(n, p, q); p = q; }\n\
           for (int k = 0; k < n; k++) u1[k] = p[k];",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn a_parameter_given_a_global_copied_from_another_may_be_one_array() {
    let declarations = "static void stencil(double *a) {\n\
       for (int i = 1; i < n - 1; i++) /* LOOP */\n\
         u2[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;\n\
     }";
    check(
        declarations,
        "  for (int t = 0; t < 4; t++) { stencil(u1); u1 = u2; }",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn globals_swapped_after_each_step_stay_apart() {
    check(
        GLOBAL_STENCIL,
        "  for (int t = 0; t < 4; t++) { stencil(); double *s = u1; u1 = u2; u2 = s; }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn locals_swapped_across_the_callers_back_edge_stay_apart() {
    check(
        PARAM_STENCIL,
        "  double *p = u1, *q = u2;\n\
           for (int t = 0; t < 4; t++) { stencil(n, p, q); double *s = p; p = q; q = s; }\n\
           for (int k = 0; k < n; k++) u1[k] = p[k];",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn calls_that_alternate_the_arrays_stay_apart() {
    check(
        PARAM_STENCIL,
        "  for (int t = 0; t < 4; t++) { stencil(n, u1, u2); stencil(n, u2, u1); }",
        Verdict::Friendly,
        true,
    );
}

/// The two arrays as members of a struct the stencil receives.
const MEMBER_STENCIL: &str = "struct grid { double *cur, *next; };\n\
 static void stencil(int m, struct grid *g) {\n\
   for (int i = 1; i < m - 1; i++) /* LOOP */\n\
     g->next[i] = (g->cur[i - 1] + g->cur[i] + g->cur[i + 1]) / 3.0;\n\
 }";

#[test]
fn members_copied_after_each_step_may_be_one_array() {
    check(
        MEMBER_STENCIL,
        "  struct grid g = { u1, u2 };\n\
           for (int t = 0; t < 4; t++) { stencil(n, &g); g.cur = g.next; }\n\
           for (int k = 0; k < n; k++) u1[k] = g.cur[k];",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn members_copied_through_another_pointer_to_the_struct_may_be_one_array() {
    check(
        &format!(
            "{MEMBER_STENCIL}\n\
             static void advance(struct grid *h) {{ h->cur = h->next; }}"
        ),
        "  struct grid g = { u1, u2 };\n\
           for (int t = 0; t < 4; t++) { stencil(n, &g); advance(&g); }\n\
           for (int k = 0; k < n; k++) u1[k] = g.cur[k];",
        Verdict::NeedsProfile,
        false,
    );
}

#[test]
fn members_swapped_after_each_step_stay_apart() {
    check(
        &format!(
            "{MEMBER_STENCIL}\n\
             static void advance(struct grid *h) {{ double *s = h->cur; h->cur = h->next; h->next = s; }}"
        ),
        "  struct grid g = { u1, u2 };\n\
           for (int t = 0; t < 4; t++) { stencil(n, &g); advance(&g); }\n\
           for (int k = 0; k < n; k++) u1[k] = g.cur[k];",
        Verdict::Friendly,
        true,
    );
}

/// Views `w1`, `w2` of the two arrays, where `w2` may be made `w1`: the views may be one
/// array, the arrays they view are never made equal.
const VIEWS: &str = "double *w1, *w2;\n\
 static void view_stencil(void) {\n\
   for (int i = 1; i < n - 1; i++) /* LOOP */\n\
     w2[i] = (w1[i - 1] + w1[i] + w1[i + 1]) / 3.0;\n\
 }";

#[test]
fn arrays_copied_only_into_views_stay_apart() {
    let views = VIEWS.replace(" /* LOOP */", "");
    check(
        &format!("{views}\n{GLOBAL_STENCIL}"),
        "  w1 = u1; w2 = u2; if (n > 100) w2 = w1;\n\
           for (int t = 0; t < 4; t++) { view_stencil(); stencil(); }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn views_one_may_be_made_from_the_other_may_be_one_array() {
    check(
        VIEWS,
        "  w1 = u1; w2 = u2;\n\
           for (int t = 0; t < 4; t++) { view_stencil(); w2 = w1; }",
        Verdict::NeedsProfile,
        false,
    );
}
