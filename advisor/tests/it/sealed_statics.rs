//! A `static` whose address its file never takes is reached through no pointer: a loop that
//! writes through a pointer parameter and reads the static (itself, or in a callee) has no
//! "may point into the same array" pair for it. Once the file takes the address anywhere
//! (returned, passed, stored, or an array decaying to a pointer), the pair stays, and a
//! caller that passes that address makes the dependence real. Checked against compiled runs
//! (the output is the same with the marked loop reversed and shuffled exactly when its
//! iterations are independent).

use crate::common::*;
use advisor::model::Verdict;

/// A file with the static table `w`, `extra` (more functions), and `axpy`, whose marked loop
/// writes `y[i]` from `x[i]` and `read` (an expression of `i` that reads `w`); `main` calls
/// `axpy(destination, x, N - 1)` and prints `destination`.
fn program(extra: &str, read: &str, destination: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 16\n\
         static double w[N];\n\
         double w_at(int i) {{ return w[i]; }}\n\
         {extra}\n\
         static void axpy(double *y, const double *x, int n) {{\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             y[i] = x[i] * {read};\n\
         }}\n\
         int main(void) {{\n\
           double x[N], out[N];\n\
           for (int i = 0; i < N; i++) {{ x[i] = i + 1; w[i] = 0.5 * i; out[i] = 0; }}\n\
           axpy({destination}, x, N - 1);\n\
           for (int i = 0; i < N; i++) printf(\"%.17g\\n\", {destination}[i]);\n\
           return 0;\n\
         }}\n"
    )
}

#[test]
fn a_static_only_a_callee_reads_overlaps_no_written_pointer() {
    let report = check_with_runs(&program("", "w_at(i + 1)", "out"), Verdict::Friendly, true);
    assert!(!has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_static_the_loop_reads_itself_overlaps_no_written_pointer() {
    let report = check_with_runs(&program("", "w[i + 1]", "out"), Verdict::Friendly, true);
    assert!(!has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_static_whose_address_is_returned_may_be_what_the_loop_writes() {
    // Nothing passes the address to `axpy` here, but the file gives it away: the pair stays.
    let report = check_with_runs(
        &program(
            "double *w_address(void) { return w; }",
            "w_at(i + 1)",
            "out",
        ),
        Verdict::NeedsProfile,
        true,
    );
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_static_passed_as_the_written_pointer_carries_a_dependence() {
    // `main` passes `w` itself: `y[i]` is `w[i]`, read as `w[i + 1]` by the iteration before.
    let report = marked_report(&program("", "w_at(i + 1)", "w"));
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    differs_in_reverse(&program("", "w_at(i + 1)", "w"));
}
