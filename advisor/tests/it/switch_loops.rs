//! Loops around a `switch`. The statements before a `switch`'s first label are unreachable;
//! their block fell through into the first case, and SSA construction kept, in that case,
//! a phi per variable merging it with the dead block's undefined value. Those phis outlived
//! the dead block as one-argument copies, and the copy of `i` hid the induction variable:
//! every loop around a `switch` was "not normalizable". Each verdict here is checked against
//! compiled runs, forward and reversed.

use crate::common;

use advisor::model::Verdict;
use common::{check_with_runs, has_code};

/// A program printing `b` after `kernel` runs the loop marked `/* LOOP */` in `body` (over
/// `i`, from 0 to `n`), with `a` holding small positive and negative values.
fn program(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         void kernel(double *b, const double *a, long n, int flag)\n{{\n{body}\n}}\n\
         int main(void) {{\n\
           double a[32], b[32];\n\
           for (int k = 0; k < 32; k++) {{ a[k] = k * k % 7 - 3; b[k] = k; }}\n\
           kernel(b, a, 32, 1);\n\
           for (int k = 0; k < 32; k++) printf(\"%g \", b[k]);\n\
           printf(\"\\n\");\n\
           return 0;\n\
         }}\n"
    )
}

/// Checks the marked loop's verdict against the runs, and that it has its induction variable.
fn check(body: &str, expected: Verdict, independent: bool) {
    let report = check_with_runs(&program(body), expected, independent);
    assert!(
        report.induction.is_some(),
        "no induction variable: {:#?}",
        report.reasons
    );
    assert!(!has_code(&report, "WW107"), "{:#?}", report.reasons);
}

#[test]
fn each_case_writes_its_own_element() {
    check(
        "  for (long i = 0; i < n; i++) { /* LOOP */\n\
             switch ((int) a[i] & 3) {\n\
             case 0: b[i] = 1.0; break;\n\
             case 1: b[i] = a[i] * 2; /* falls through */\n\
             case 2: b[i] += 3.0; break;\n\
             default: b[i] = -a[i];\n\
             }\n\
           }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_case_that_continues() {
    check(
        "  for (long i = 0; i < n; i++) { /* LOOP */\n\
             switch (flag) {\n\
             case 0: continue;\n\
             case 1: b[i] = a[i] + 1; break;\n\
             default: b[i] = 2 * a[i];\n\
             }\n\
           }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_switch_on_the_induction_variable() {
    check(
        "  for (long i = 0; i < n; i++) { /* LOOP */\n\
             switch (i % 3) {\n\
             case 0: b[i] = a[i]; break;\n\
             case 1: b[i] = b[i] + 1; break;\n\
             }\n\
           }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_value_one_case_keeps_for_another_is_carried() {
    // Case 0 records `a[i]`; the other cases store the last recorded value: iteration i
    // reads what an earlier one assigned.
    let body = "  double t = 0;\n\
                for (long i = 0; i < n; i++) { /* LOOP */\n\
                  switch ((int) a[i] & 1) {\n\
                  case 0: t = a[i]; break;\n\
                  default: b[i] = t;\n\
                  }\n\
                }";
    let report = common::marked_report(&program(body));
    assert_ne!(report.verdict, Verdict::Friendly, "{:#?}", report.reasons);
    assert!(report.induction.is_some(), "{:#?}", report.reasons);
    common::differs_in_reverse(&program(body));
}
