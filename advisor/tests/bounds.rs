//! Loop bounds read through a pointer the loop's callees receive (issue 13, cause 8): the
//! bound is invariant when no store of the loop or of its callees' summaries may write it.
//! Each verdict is checked against concrete runs: the program prints the same with the
//! loop run forward and reversed exactly when the report calls it friendly.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::Verdict;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;

/// The verdict of `grid`'s loop, and whether forward and reversed runs print the same.
fn check(helper: &str, verdict: Verdict, order_independent: bool) {
    let dir = tempfile::tempdir().unwrap();
    let kernel = format!(
        "{helper}\n\
         void grid(long *out, const int mesh[3])\n\
         {{\n    for (long i = 0; i < mesh[0] * mesh[1]; i++)\n        out[i] = visit(i, mesh);\n}}\n"
    );
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, &kernel).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let r = reports.iter().find(|r| r.function == "grid").unwrap();
    assert_eq!(r.verdict, verdict, "{:#?}", r.reasons);
    let reversed = kernel.replace("void grid(", "void grid_rev(").replace(
        "for (long i = 0; i < mesh[0] * mesh[1]; i++)",
        "for (long i = mesh[0] * mesh[1] - 1; i >= 0; i--)",
    );
    let program = format!(
        "#include <stdio.h>\n#include <string.h>\n{kernel}\n{}\n\
         int main(void) {{\n\
           long a[64] = {{0}}, b[64] = {{0}};\n\
           int m1[3] = {{4, 3, 1}}, m2[3] = {{4, 3, 1}};\n\
           grid(a, m1); grid_rev(b, m2);\n\
           return memcmp(a, b, sizeof a) != 0;\n\
         }}\n",
        reversed
            .split_once('\n')
            .map(|(_, rest)| rest)
            .unwrap_or(&reversed)
    );
    let source = dir.path().join("p.c");
    std::fs::write(&source, program).unwrap();
    let exe = dir.path().join("p");
    let built = Command::new("cc")
        .args(["-O0", "-o"])
        .arg(&exe)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(built.success());
    let same = Command::new(&exe).status().unwrap().success();
    assert_eq!(same, order_independent);
}

#[test]
fn a_bound_the_callees_only_read_is_invariant() {
    check(
        "static long visit(long i, const int mesh[3]) { return i % mesh[0] + mesh[2]; }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_bound_a_callee_writes_is_not() {
    // `visit` shrinks the mesh as it goes: the trip count changes inside the loop.
    check(
        "static long visit(long i, const int mesh[3]) { if (i == 2) ((int *)mesh)[1] = 2; return i; }",
        Verdict::NotFriendly,
        false,
    );
}
