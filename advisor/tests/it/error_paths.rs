//! Error paths: a branch of a loop's body that only leads to a call that does not return
//! (`exit`, `abort`, a failed `assert`, `longjmp`, a function of the program declared
//! `noreturn` or ending in one on every path) leaves its host-only calls to the host: the
//! loop is friendly (WW108), with the path in `error_paths` and what a port assumes in
//! `assumptions`. A host-only call not on such a path is still WW105; an error branch
//! that writes what the rest of the loop reads still carries the dependence; an error
//! branch a port could not run again exactly on the host keeps WW105 and says why.
//!
//! The friendly fixtures run with no failing iteration: compiled, they print the same with
//! the loop's iterations reversed.

use crate::common;

use advisor::model::{ErrorEnd, LoopReport, Verdict};
use common::*;

/// What the marked loop's report must say.
enum Expected<'a> {
    /// Friendly with one error path that `ends_with` ends, making the host-only `calls`;
    /// its note and assumption are there and the loop's iterations are independent.
    Handled {
        ends_with: &'a str,
        ends: ErrorEnd,
        calls: &'a [&'a str],
    },
    /// Not friendly, with a reason `code` that says `says`.
    Kept { code: &'a str, says: &'a str },
}

fn check(source: &str, expected: Expected) -> LoopReport {
    match expected {
        Expected::Handled {
            ends_with,
            ends,
            calls,
        } => {
            let report = common::check(source, Verdict::Friendly);
            let [path] = report.error_paths.as_slice() else {
                panic!("one error path expected: {report:#?}")
            };
            assert_eq!(path.ends_with, ends_with, "{path:#?}");
            assert_eq!(path.ends, ends, "{path:#?}");
            assert_eq!(path.calls, calls, "{path:#?}");
            let note = report
                .reasons
                .iter()
                .find(|r| r.code == advisor::rules::Code::WW108)
                .unwrap_or_else(|| panic!("no WW108: {report:#?}"));
            assert!(
                note.message
                    .starts_with(&format!("`{ends_with}` at line {}", path.line)),
                "{note:#?}"
            );
            assert!(note.lines.contains(&path.condition_line), "{note:#?}");
            let said = match ends {
                ErrorEnd::Exit => {
                    "reports the first failing iteration and exits as the program would"
                }
                ErrorEnd::Jump => "runs the first failing iteration again on the host",
            };
            assert!(note.message.contains(said), "{note:#?}");
            assumes(&report, &format!("the error path ending in `{ends_with}`"));
            assert!(!has_code(&report, "WW105"), "{report:#?}");
            same_in_any_order(source);
            report
        }
        Expected::Kept { code, says } => {
            let report = common::check(source, Verdict::NotFriendly);
            assert!(
                report
                    .reasons
                    .iter()
                    .any(|r| r.code.as_str() == code && r.message.contains(says)),
                "no {code} saying `{says}`: {report:#?}"
            );
            report
        }
    }
}

/// `body` as the body of the marked loop of a program that fills its inputs with valid
/// values, calls `weigh` and prints the results; `head` comes before `weigh`.
fn program(head: &str, body: &str) -> String {
    format!(
        r#"#include <assert.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
{head}
static void weigh(int n, const double *w, const double *x, double *y) {{
    for (int i = 0; i < n; i++) {{ /* LOOP */
{body}
    }}
}}
int main(void) {{
    double w[64], x[64], y[64];
    for (int i = 0; i < 64; i++) {{ w[i] = i % 7 + 1; x[i] = i * 0.5; y[i] = 0; }}
    weigh(64, w, x, y);
    for (int i = 0; i < 64; i++) printf("%g\n", y[i]);
    return 0;
}}
"#
    )
}

const CHECKED: &str = "        y[i] = sqrt(w[i]) * x[i];";

#[test]
fn exit_after_a_message_is_an_error_path() {
    let body = format!(
        "        if (w[i] < 0) {{ fprintf(stderr, \"negative weight at %d\\n\", i); exit(1); }}\n{CHECKED}"
    );
    let report = check(
        &program("", &body),
        Expected::Handled {
            ends_with: "exit",
            ends: ErrorEnd::Exit,
            calls: &["fprintf", "exit"],
        },
    );
    // `stderr` is read on the error path only, which runs on the host.
    assert!(
        !report.parameters.iter().any(|p| p.name == "stderr"),
        "{:#?}",
        report.parameters
    );
    // The recipe tells a person the same steps.
    let text = advisor::recipe::render(
        &advisor::model::Report {
            schema: advisor::model::SCHEMA.into(),
            loops: vec![report.clone()],
            skipped: Vec::new(),
        },
        &[],
        false,
    );
    for needle in [
        "fprintf: host-only, on the error path at line 9: it stays on the host",
        "Error path: the then branch of the `if` at line 9 ends in `exit` (line 9)",
        "run the loop's body on the host for that `i` only",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
}

#[test]
fn a_loop_printing_lines_before_exit_is_part_of_the_path() {
    let body = format!(
        "        if (w[i] < 0) {{ for (int k = 0; k < 3; k++) fprintf(stderr, \"bad weight at %d (%d)\\n\", i, k); exit(1); }}\n{CHECKED}"
    );
    check(
        &program("", &body),
        Expected::Handled {
            ends_with: "exit",
            ends: ErrorEnd::Exit,
            calls: &["fprintf", "exit"],
        },
    );
}

#[test]
fn abort_in_the_else_branch() {
    let body = format!(
        "        if (w[i] >= 0) y[i] = 1; else {{ puts(\"negative weight\"); abort(); }}\n{CHECKED}"
    );
    let report = check(
        &program("", &body),
        Expected::Handled {
            ends_with: "abort",
            ends: ErrorEnd::Exit,
            calls: &["puts", "abort"],
        },
    );
    assert_eq!(
        report.error_paths[0].branch,
        advisor::model::Branch::Else,
        "{report:#?}"
    );
}

#[test]
fn a_failed_assert_after_a_message() {
    let body = format!(
        "        if (w[i] < 0) {{ fprintf(stderr, \"negative weight at %d\\n\", i); assert(0); }}\n{CHECKED}"
    );
    check(
        &program("", &body),
        Expected::Handled {
            ends_with: "__assert_fail",
            ends: ErrorEnd::Exit,
            calls: &["fprintf"],
        },
    );
}

/// `die` ends in a signal and an endless loop: only its declaration says it does not
/// return, so how it leaves is not known (a jump, in the report's words).
fn declared_noreturn(declaration: &str) {
    let head = format!(
        "#include <signal.h>\n{declaration};\nstatic void die(const char *what, int at) {{ fprintf(stderr, \"%s at %d\\n\", what, at); raise(SIGTERM); for (;;) {{}} }}"
    );
    let body = format!("        if (w[i] < 0) die(\"negative weight\", i);\n{CHECKED}");
    check(
        &program(&head, &body),
        Expected::Handled {
            ends_with: "die",
            ends: ErrorEnd::Jump,
            calls: &["die"],
        },
    );
}

#[test]
fn a_function_declared_noreturn_by_attribute() {
    declared_noreturn("static void die(const char *what, int at) __attribute__((noreturn))");
}

#[test]
fn a_function_declared_noreturn_by_c11_keyword() {
    declared_noreturn("_Noreturn static void die(const char *what, int at)");
}

#[test]
fn without_the_declaration_the_same_function_is_host_only() {
    let head = "#include <signal.h>\nstatic void die(const char *what, int at) { fprintf(stderr, \"%s at %d\\n\", what, at); raise(SIGTERM); for (;;) {} }";
    let body = format!("        if (w[i] < 0) die(\"negative weight\", i);\n{CHECKED}");
    check(
        &program(head, &body),
        Expected::Kept {
            code: "WW105",
            says: "`die` calls `fprintf`",
        },
    );
}

#[test]
fn a_function_of_the_program_that_always_exits() {
    // No attribute: every path of `fail` ends in `exit`, through `stop`.
    let head = "static void stop(int code) { fflush(stdout); exit(code); }\nstatic void fail(int at) { if (at > 100) fprintf(stderr, \"late \"); fprintf(stderr, \"bad weight at %d\\n\", at); stop(3); }";
    let body = format!("        if (w[i] < 0) {{ fail(i); }}\n{CHECKED}");
    check(
        &program(head, &body),
        Expected::Handled {
            ends_with: "fail",
            ends: ErrorEnd::Exit,
            calls: &["fail"],
        },
    );
}

#[test]
fn longjmp_resumes_the_program() {
    let head = "static jmp_buf on_error;";
    let body = format!(
        "        if (w[i] < 0) {{ fprintf(stderr, \"negative weight at %d\\n\", i); longjmp(on_error, 1); }}\n{CHECKED}"
    );
    let report = check(
        &program(head, &body),
        Expected::Handled {
            ends_with: "longjmp",
            ends: ErrorEnd::Jump,
            calls: &["fprintf", "longjmp"],
        },
    );
    assumes(&report, "assumed not read after the jump");
}

#[test]
fn a_message_without_exit_is_still_host_only() {
    let body = format!(
        "        if (w[i] < 0) fprintf(stderr, \"negative weight at %d\\n\", i);\n{CHECKED}"
    );
    check(
        &program("", &body),
        Expected::Kept {
            code: "WW105",
            says: "`fprintf` is a host library function",
        },
    );
}

#[test]
fn a_message_on_a_path_that_may_go_on_is_still_host_only() {
    // Only the `else` of the inner test exits: the message may be followed by more work.
    let body = format!(
        "        if (w[i] < 0) {{ fprintf(stderr, \"negative weight at %d\\n\", i); if (w[i] < -1) exit(1); }}\n{CHECKED}"
    );
    let report = check(
        &program("", &body),
        Expected::Kept {
            code: "WW105",
            says: "`fprintf` is a host library function",
        },
    );
    // The inner branch is an error path of its own: only `fprintf` stops the loop.
    let calls: Vec<&[String]> = report
        .error_paths
        .iter()
        .map(|p| p.calls.as_slice())
        .collect();
    assert_eq!(calls, [["exit".to_string()]], "{report:#?}");
}

#[test]
fn an_error_branch_that_writes_a_shared_scalar_keeps_the_dependence() {
    // `bias` is written on the error path and read by every iteration: the dependence
    // tests see the write as they would without the error path.
    let head = "static double bias;";
    let body = "        if (w[i] < 0) { bias = w[i]; fprintf(stderr, \"negative weight\\n\"); exit(1); }\n        y[i] = sqrt(w[i]) * x[i] + bias;";
    let report = common::check(&program(head, body), Verdict::NeedsProfile);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW111 && r.message.contains("`bias`")),
        "{report:#?}"
    );
    assert!(!has_code(&report, "WW105"), "{report:#?}");
}

#[test]
fn an_update_before_the_error_branch_cannot_be_run_again() {
    // A kernel has doubled `y[i]` when the branch is taken: run again, the iteration
    // would read the doubled value.
    let body = "        y[i] = 2 * y[i] + w[i];\n        if (y[i] < 0) { fprintf(stderr, \"negative at %d\\n\", i); exit(1); }";
    check(
        &program("", body),
        Expected::Kept {
            code: "WW105",
            says: "could not run the failing iteration again on the host",
        },
    );
}

#[test]
fn shared_error_code_reached_by_goto_is_no_branch() {
    let body = format!(
        "        if (w[i] < 0) goto fail;\n{CHECKED}\n        continue;\n    fail:\n        fprintf(stderr, \"negative weight at %d\\n\", i);\n        exit(1);"
    );
    check(
        &program("", &body),
        Expected::Kept {
            code: "WW105",
            says: "`fprintf` is a host library function",
        },
    );
}

#[test]
fn an_error_path_that_reads_a_running_value_cannot_be_run_again() {
    // After the kernel `sum` is the whole reduction, not its value in the failing iteration.
    let source = r#"#include <stdio.h>
#include <stdlib.h>
static double total(int n, const double *w) {
    double sum = 0;
    for (int i = 0; i < n; i++) { /* LOOP */
        if (w[i] < 0) { fprintf(stderr, "negative after %g\n", sum); exit(1); }
        sum += w[i];
    }
    return sum;
}
int main(void) { double w[8] = {1, 2, 3, 4, 5, 6, 7, 8}; printf("%g\n", total(8, w)); return 0; }
"#;
    check(
        source,
        Expected::Kept {
            code: "WW105",
            says: "the error path reads `sum`",
        },
    );
}
