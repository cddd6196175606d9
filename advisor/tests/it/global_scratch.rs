//! File-scope scratch arrays rewritten at the top of every iteration (the pattern the
//! OpenMP versions of such programs mark `threadprivate`) are private to each iteration,
//! also when the loop calls a function of the program that leaves them alone; checked
//! against compiled runs (the output is the same with the marked loop reversed exactly when
//! its iterations are independent). A callee that reads or writes the scratch keeps it
//! shared.

use crate::common::*;
use advisor::model::{LoopReport, Verdict};

/// `helper` and the marked loop's body over `j`; `main` prints every element of `out` (not
/// `ue`: the last iteration's scratch, which a port copies out, is not the same reversed).
fn program(helper: &str, body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 12\n\
         static double ue[N][5], out[N][N];\n\
         int n = N;\n\
         {helper}\n\
         static void sweep(void) {{\n\
           double dtemp[5];\n\
           for (int j = 1; j < n - 1; j++) {{ /* LOOP */\n\
         {body}\n\
           }}\n\
         }}\n\
         int main(void) {{\n\
           sweep();\n\
           for (int j = 0; j < N; j++)\n\
             for (int i = 0; i < N; i++) printf(\"%.17g\\n\", out[j][i]);\n\
           return 0;\n\
         }}\n"
    )
}

const FILL: &str = "    for (int i = 0; i < n; i++) {\n\
       solution((double)i * j, dtemp);\n\
       for (int m = 0; m < 5; m++) ue[i][m] = dtemp[m];\n\
     }\n\
     for (int i = 1; i < n - 1; i++)\n\
       out[j][i] = ue[i - 1][0] + ue[i + 1][4] * j;";

fn check(helper: &str, verdict: Verdict, independent: bool) -> LoopReport {
    check_with_runs(&program(helper, FILL), verdict, independent)
}

#[test]
fn global_scratch_is_private_around_a_call_that_leaves_it_alone() {
    let report = check(
        "static void solution(double x, double d[5]) {\n\
           for (int m = 0; m < 5; m++) d[m] = x * (m + 1);\n\
         }",
        Verdict::Friendly,
        true,
    );
    let ue = report.private.iter().find(|p| p.name == "ue");
    let ue = ue.unwrap_or_else(|| panic!("{:#?}", report.private));
    assert!(ue.last_value, "{ue:#?}");
}

/// The loop is not called friendly, `ue` is not private, and reversing the loop changes
/// the output (a witness that the iterations do depend on one another through `ue`).
fn check_shared(helper: &str) {
    let source = program(helper, FILL);
    let report = marked_report(&source);
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    assert!(report.private.iter().all(|p| p.name != "ue"), "{report:#?}");
    differs_in_reverse(&source);
}

#[test]
fn global_scratch_a_callee_reads_stays_shared() {
    // The callee reads what the previous iteration left in `ue`.
    check_shared(
        "static void solution(double x, double d[5]) {\n\
           for (int m = 0; m < 5; m++) d[m] = x * (m + 1) + ue[m][m % 5];\n\
         }",
    );
}

#[test]
fn global_scratch_a_callee_writes_stays_shared() {
    // The callee reads and rewrites an element before the loop's own rewrite of it.
    check_shared(
        "static void solution(double x, double d[5]) {\n\
           for (int m = 0; m < 5; m++) d[m] = x * (m + 1) + ue[0][0];\n\
           ue[0][0] = x;\n\
         }",
    );
}

/// `body` is the marked loop's over `k`, around loops over `j` that rewrite `ue`; `main`
/// prints every element of `out`.
fn nested(body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 12\n\
         static double ue[N][5], out[N][N];\n\
         int n = N;\n\
         static void sweep(void) {{\n\
           for (int k = 0; k < n; k++) {{ /* LOOP */\n\
         {body}\n\
           }}\n\
         }}\n\
         int main(void) {{\n\
           sweep();\n\
           for (int k = 0; k < N; k++)\n\
             for (int i = 0; i < N; i++) printf(\"%.17g\\n\", out[k][i]);\n\
           return 0;\n\
         }}\n"
    )
}

#[test]
fn global_scratch_rewritten_in_every_iteration_of_an_inner_loop_is_private() {
    // Each iteration of `j` rewrites the same rows of `ue`: the iteration of `k` has
    // written them once `j` has run, as the loop assumes.
    let report = check_with_runs(
        &nested(
            "    for (int j = 1; j < n - 1; j++) {\n\
                   for (int i = 0; i < n; i++)\n\
                     for (int m = 0; m < 5; m++) ue[i][m] = i * m + j + k;\n\
                 }\n\
                 for (int i = 1; i < n - 1; i++) out[k][i] = ue[i - 1][1] + ue[i + 1][4];",
        ),
        Verdict::Friendly,
        true,
    );
    assert!(
        report.private.iter().any(|p| p.name == "ue"),
        "{:#?}",
        report.private
    );
    assumes(&report, "(the loop runs)");
}

#[test]
fn global_scratch_an_inner_loop_may_skip_stays_shared() {
    // Over `j < k` the first iteration writes nothing, and reads what another iteration
    // left in `ue`.
    check_with_runs(
        &nested(
            "    for (int j = 0; j < k; j++) ue[0][0] = j + k;\n\
                 out[k][0] = ue[0][0];",
        ),
        Verdict::NotFriendly,
        false,
    );
}
