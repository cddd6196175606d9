//! Symbols the program pins to an integer around a loop (`if (coupled && dim == 3)` in
//! code_saturne's `cs_field.c`): the dependence tests compare the addresses with the
//! integer in place of the symbol. Each verdict is checked against concrete runs: the loop
//! run forward and reversed leaves the same array exactly when the report calls it
//! friendly.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::Verdict;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;

const FORWARD: &str = "for (long i = 0; i < n; i++)";
const REVERSED: &str = "for (long i = n - 1; i >= 0; i--)";

/// `body` is the body of `void kernel(double *b, long n, int dim, int coupled)`, holding
/// one loop written as [`FORWARD`]. Checks the verdict of that loop, and whether runs with
/// `dim` and `coupled` as given leave the same array forward and reversed.
fn check(body: &str, verdict: Verdict, dim: i32, order_independent: bool) {
    assert!(body.contains(FORWARD));
    let dir = tempfile::tempdir().unwrap();
    let kernel = format!("void kernel(double *b, long n, int dim, int coupled)\n{{\n{body}\n}}\n");
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, &kernel).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let r = reports
        .iter()
        .find(|r| r.function == "kernel")
        .expect("the loop is reported");
    assert_eq!(r.verdict, verdict, "{:#?}", r.reasons);
    let reversed = kernel
        .replace("void kernel(", "void kernel_rev(")
        .replace(FORWARD, REVERSED);
    let program = format!(
        "#include <string.h>\n{kernel}\n{reversed}\n\
         int main(void) {{\n\
           double a[256], c[256];\n\
           for (int k = 0; k < 256; k++) a[k] = c[k] = k * k % 7;\n\
           kernel(a, 20, {dim}, 1); kernel_rev(c, 20, {dim}, 1);\n\
           return memcmp(a, c, sizeof a) != 0;\n\
         }}\n"
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
fn a_block_per_iteration_under_an_equality_is_friendly() {
    // 3x3 blocks of nine doubles: iteration i touches b[9i .. 9i + 8] only.
    check(
        "  if (coupled && dim == 3) {\n\
           for (long i = 0; i < n; i++) {\n\
             b[i*dim*dim] = b[i*dim*dim + 4] + b[i*dim*dim + 8];\n\
             b[i*dim*dim + 1] = 0.; b[i*dim*dim + 4] = 1.; b[i*dim*dim + 8] = b[i*dim*dim + 1];\n\
           }\n\
         }",
        Verdict::Friendly,
        3,
        true,
    );
}

#[test]
fn the_integer_can_show_a_dependence_too() {
    // Under dim == 1, b[i*dim + 1] is the next iteration's b[i*dim]: a recurrence.
    check(
        "  if (dim == 1) {\n\
           for (long i = 0; i < n; i++)\n\
             b[i*dim + 1] = b[i*dim] + 1.;\n\
         }",
        Verdict::NotFriendly,
        1,
        false,
    );
}

#[test]
fn an_equality_on_one_path_only_pins_nothing() {
    // The loop is also reached with dim != 3, where blocks of dim*dim overlap the reads at
    // +8 (dim = 2: iteration i writes b[4i + 8], iteration i + 2 reads b[4i + 8]).
    check(
        "  if (coupled && dim == 3) b[0] = 0.;\n\
           for (long i = 0; i < n; i++)\n\
             b[i*dim*dim + 8] = b[i*dim*dim] + 1.;",
        Verdict::NeedsProfile,
        2,
        false,
    );
}
