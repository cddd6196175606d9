//! Globals that functions of the program update: a callee that only updates a global as a
//! reduction (`sum0 = sum0 + i`) makes it a reduction of the loop, named as if the update
//! were written in the loop; any other write of a global in a callee is a memory access
//! the dependence tests judge (distinct elements per iteration are no obstacle, one element
//! every iteration is a witnessed write-after-write), and only a volatile or thread-local
//! global is refused as such (WW104). Checked against compiled runs: the output is the same
//! with the marked loop reversed exactly when its iterations are independent.

use crate::common::*;
use advisor::model::{LoopReport, RedOp, Verdict};

/// `helpers`, then a loop over `i < 100` calling `call`; `main` runs it and prints `print`
/// (a `printf` argument list).
fn program(globals: &str, helpers: &str, call: &str, print: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         {globals}\n\
         {helpers}\n\
         static void run(int n) {{\n\
           for (int i = 0; i < n; i++) /* LOOP */\n\
             {call};\n\
         }}\n\
         int main(void) {{\n\
           run(100);\n\
           printf({print});\n\
           return 0;\n\
         }}\n"
    )
}

fn check(
    globals: &str,
    helpers: &str,
    call: &str,
    print: &str,
    verdict: Verdict,
    independent: bool,
) -> LoopReport {
    check_with_runs(
        &program(globals, helpers, call, print),
        verdict,
        independent,
    )
}

/// The loop's one reduction is `target` with `op`, and no finding is a warning.
fn reduces(report: &LoopReport, target: &str, op: RedOp) {
    let found: Vec<(&str, RedOp)> = report
        .reductions
        .iter()
        .map(|r| (r.target.as_str(), r.operator))
        .collect();
    assert_eq!(found, [(target, op)], "{report:#?}");
    assert!(!has_code(report, "WW104"), "{report:#?}");
    assert!(!has_code(report, "WW111"), "{report:#?}");
}

/// A finding `code` whose message names `what`, with a two-iteration witness.
fn witnessed(report: &LoopReport, code: &str, what: &str) {
    let found = report
        .reasons
        .iter()
        .any(|r| r.code.as_str() == code && r.message.contains(what) && r.witness.is_some());
    assert!(found, "no witnessed {code} on {what}: {report:#?}");
}

#[test]
fn a_sum_made_in_a_called_function_is_a_reduction_of_the_loop() {
    let report = check(
        "int sum0;",
        "void foo(int i) { sum0 = sum0 + i; }",
        "foo(i)",
        "\"%d\\n\", sum0",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "sum0", RedOp::Sum);
}

#[test]
fn a_reduction_through_two_levels_of_calls_is_the_loops() {
    let report = check(
        "static double total;",
        "static void add(double x) { total += x; }\n\
         static void twice(int i) { add(0.5 * i); }",
        "twice(i)",
        "\"%.17g\\n\", total",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "total", RedOp::Sum);
}

#[test]
fn a_product_and_a_minimum_in_callees_are_reductions_with_their_operators() {
    let report = check(
        "long prod = 1;",
        "void scale(int i) { prod *= (i % 3) + 1; }",
        "scale(i)",
        "\"%ld\\n\", prod",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "prod", RedOp::Product);
    let report = check(
        "int lowest = 1000;",
        "void low(int v) { lowest = v < lowest ? v : lowest; }",
        "low((i * 37) % 101)",
        "\"%d\\n\", lowest",
        Verdict::Friendly,
        true,
    );
    reduces(&report, "lowest", RedOp::Min);
}

#[test]
fn a_callee_that_also_reads_the_global_makes_no_reduction() {
    // `last` reads the running sum: each iteration sees the previous ones' additions.
    let report = check(
        "int sum0, last;",
        "void foo(int i) { sum0 = sum0 + i; last = sum0 * i; }",
        "foo(i)",
        "\"%d %d\\n\", sum0, last",
        Verdict::NotFriendly,
        false,
    );
    assert!(report.reductions.is_empty(), "{report:#?}");
    witnessed(&report, "WW101", "`sum0`");
}

#[test]
fn a_callee_whose_update_the_loop_reads_makes_no_reduction() {
    // The loop itself reads the global the callee accumulates into.
    let report = check(
        "int sum0, seen[100];",
        "void foo(int i) { sum0 += i; }",
        "{ seen[i] = sum0; foo(i); }",
        "\"%d %d\\n\", sum0, seen[99]",
        Verdict::NotFriendly,
        false,
    );
    assert!(report.reductions.is_empty(), "{report:#?}");
}

#[test]
fn a_callee_writing_its_own_element_each_iteration_is_independent() {
    let report = check(
        "int g[100];",
        "void set(int i) { g[i] = 3 * i; }",
        "set(i)",
        "\"%d %d\\n\", g[1], g[99]",
        Verdict::Friendly,
        true,
    );
    assert!(
        report.reasons.iter().all(|r| r.code.as_str() != "WW104"),
        "{report:#?}"
    );
}

#[test]
fn a_callee_writing_one_element_every_iteration_is_a_witnessed_dependence() {
    let report = check(
        "int g[4];",
        "void bump(int i) { g[0] = i; }",
        "bump(i)",
        "\"%d\\n\", g[0]",
        Verdict::NotFriendly,
        false,
    );
    witnessed(&report, "WW101", "write-after-write dependence on `g`");
    assert!(!has_code(&report, "WW104"), "{report:#?}");
}

#[test]
fn a_volatile_global_written_in_a_callee_stays_refused() {
    let report = check(
        "volatile int gain;",
        "void keep(int i) { gain = i; }",
        "keep(i)",
        "\"%d\\n\", gain",
        Verdict::NotFriendly,
        false,
    );
    let found = report.reasons.iter().any(|r| {
        r.code.as_str() == "WW104"
            && r.message
                .contains("`keep` writes the volatile global variable `gain`")
    });
    assert!(found, "{report:#?}");
}
