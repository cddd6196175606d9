//! Scalars a loop assigns only under tests whose outcome is the same in every iteration
//! (code_saturne's `if (icvflb == 1) icvflf = 0;`): private, each copy starting from the
//! value before the loop. Each verdict is checked against concrete runs: for every value of
//! `flag`, the loop run forward and reversed leaves the same array exactly when the report
//! calls it friendly.

use crate::common;

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, Verdict};
use common::{load, run};

const FORWARD: &str = "for (long i = 0; i < n; i++)";
const REVERSED: &str = "for (long i = n - 1; i >= 0; i--)";

/// The report of the loop in `body`, the body of
/// `double kernel(double *b, const double *a, long n, int flag)` holding one loop written as
/// [`FORWARD`], and whether forward and reversed runs leave the same array for each of
/// `flags`.
fn run_both_ways(body: &str, flags: &[i32]) -> (LoopReport, Vec<bool>) {
    assert!(body.contains(FORWARD));
    let kernel =
        format!("double kernel(double *b, const double *a, long n, int flag)\n{{\n{body}\n}}\n");
    let unit = load(&kernel);
    let report = analyze_unit(&unit, &Filter::default())
        .into_iter()
        .filter(|r| r.function == "kernel")
        .min_by_key(|r| r.line)
        .expect("the loop is reported");
    let reversed = kernel
        .replace("double kernel(", "double kernel_rev(")
        .replace(FORWARD, REVERSED);
    let same = flags
        .iter()
        .map(|flag| {
            let program = format!(
                "#include <stdio.h>\n#include <string.h>\n{kernel}\n{reversed}\n\
                 int main(void) {{\n\
                   double a[64], b[64], c[64];\n\
                   for (int k = 0; k < 64; k++) {{ a[k] = k * k % 7 - 3; b[k] = c[k] = k; }}\n\
                   kernel(b, a, 16, {flag}); kernel_rev(c, a, 16, {flag});\n\
                   printf(\"%s\\n\", memcmp(b, c, sizeof b) ? \"differs\" : \"same\");\n\
                   return 0;\n\
                 }}\n"
            );
            run(&program).trim() == "same"
        })
        .collect();
    (report, same)
}

/// Checks the verdict, that runs agree for every flag exactly when the verdict is friendly,
/// and, when friendly, that `private` names the variables whose copies start from the value
/// before the loop.
fn check(body: &str, verdict: Verdict, flags: &[i32], private: &[&str]) {
    let (report, same) = run_both_ways(body, flags);
    assert_eq!(report.verdict, verdict, "{:#?}", report.reasons);
    if verdict == Verdict::Friendly {
        assert!(
            same.iter().all(|s| *s),
            "a friendly loop depends on its order: {same:?}"
        );
        let starting: Vec<&str> = report
            .private
            .iter()
            .filter(|p| p.initial_value)
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(starting, private, "{:#?}", report.private);
        for name in private {
            let p = report.parameters.iter().find(|p| p.name == *name);
            assert!(
                p.is_some(),
                "`{name}` is not passed in: {:#?}",
                report.parameters
            );
        }
    } else {
        assert!(
            same.iter().any(|s| !s),
            "no run shows the order matters: the verdict could be friendly"
        );
    }
}

#[test]
fn assigned_under_an_invariant_test_before_every_use() {
    // code_saturne's `icvflf`: with flag == 1 every iteration assigns 0 first; otherwise none
    // assigns it and each reads 5.
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           if (flag == 1) k = 0;\n\
           b[i] = a[i] * 2 + k;\n\
         }\n\
         return 0;",
        Verdict::Friendly,
        &[0, 1],
        &["k"],
    );
}

#[test]
fn its_value_after_the_loop_is_the_last_iterations() {
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           if (flag != 0) k = a[i];\n\
           b[i] = k * k;\n\
         }\n\
         return k;",
        Verdict::Friendly,
        &[0, 1],
        &["k"],
    );
}

#[test]
fn one_assignment_per_outcome_of_two_tests() {
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           if (flag == 1) k = a[i];\n\
           else if (flag == 2) k = -a[i];\n\
           b[i] = k + 1;\n\
         }\n\
         return 0;",
        Verdict::Friendly,
        &[0, 1, 2],
        &["k"],
    );
}

#[test]
fn assigned_in_an_inner_loop_before_its_use_there() {
    check(
        "  double t = 1;\n\
         for (long i = 0; i < n; i++) {\n\
           for (int j = 0; j < 3; j++) {\n\
             if (flag) t = a[i] + j;\n\
             b[i] += t;\n\
           }\n\
         }\n\
         return 0;",
        Verdict::Friendly,
        &[0, 1],
        &["t"],
    );
}

#[test]
fn a_use_before_the_assignment_reads_the_previous_iteration() {
    // With flag == 1, iteration i reads what iteration i - 1 assigned.
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           b[i] = a[i] + k;\n\
           if (flag == 1) k = a[i];\n\
         }\n\
         return 0;",
        Verdict::NeedsProfile,
        &[0, 1],
        &[],
    );
}

#[test]
fn a_test_of_data_is_not_fixed() {
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           if (a[i] > 0) k = a[i];\n\
           b[i] = k;\n\
         }\n\
         return 0;",
        Verdict::NeedsProfile,
        &[0],
        &[],
    );
}

#[test]
fn a_test_the_loop_changes_is_not_fixed() {
    // `flag` is assigned in the loop: the test's outcome changes from iteration to iteration
    // (the witness search shows two iterations that depend on each other).
    check(
        "  double k = 5;\n\
         for (long i = 0; i < n; i++) {\n\
           if (flag == 1) k = a[i];\n\
           b[i] = k;\n\
           flag = a[i] > 0;\n\
         }\n\
         return 0;",
        Verdict::NotFriendly,
        &[1],
        &[],
    );
}

#[test]
fn a_value_kept_by_some_iterations_and_read_after_the_loop_is_not_private() {
    // code_saturne's cs_tree.c: a `continue` straight back to the `while` test keeps the
    // previous iteration's value, so after the loop `k` is that of the last iteration that
    // assigned it, not the last iteration's (not `lastprivate`).
    let unit = load(
        "double kernel(double *b, const double *a, long n) {\n\
           double k = 5;\n\
           long i = 0;\n\
           while (i < n) {\n\
             if (a[i] < 0) { i++; continue; }\n\
             k = a[i];\n\
             b[i] = k;\n\
             i++;\n\
           }\n\
           return k;\n\
         }\n",
    );
    let report = analyze_unit(&unit, &Filter::default())
        .into_iter()
        .find(|r| r.function == "kernel")
        .expect("the loop is reported");
    assert!(
        report.private.iter().all(|p| p.name != "k"),
        "{:#?}",
        report.private
    );
    assert_ne!(report.verdict, Verdict::Friendly, "{:#?}", report.reasons);
}
