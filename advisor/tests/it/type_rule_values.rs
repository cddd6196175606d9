//! A variable held in memory (its address passed to a call) read twice in a loop that
//! stores through pointers: under C's effective-type rule a store of a `double` cannot
//! change an `int *` variable, so the two reads are one value, one parameter with one
//! section, and the report says what it assumes; a unit built with `-fno-strict-aliasing`
//! keeps the two values apart.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::LoopReport;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

const SOURCE: &str = "void get_index(const int **index);\n\
                      void rows(int n, const double *x, double *sum)\n\
                      {\n\
                      \x20   const int *row_index;\n\
                      \x20   get_index(&row_index);\n\
                      \x20   for (int i = 0; i < n; i++) {\n\
                      \x20       sum[i] = 0;\n\
                      \x20       for (int j = row_index[i]; j < row_index[i + 1]; j++)\n\
                      \x20           sum[i] += x[j];\n\
                      \x20   }\n\
                      }\n";

fn report(flags: &[&str]) -> LoopReport {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.c");
    std::fs::write(&file, SOURCE).unwrap();
    let mut input = TranslationUnitInput::new(file);
    input.flags.extra = flags.iter().map(|f| f.to_string()).collect();
    let unit = load_unit(&input).expect("loads");
    analyze_unit(&unit, &Filter::default())
        .into_iter()
        .find(|r| r.line == 6)
        .expect("the outer loop")
}

/// The parameters named `row_index...`, and whether the type rule is among the assumptions.
fn check(flags: &[&str], names: &[&str], assumed: bool) {
    let r = report(flags);
    let got: Vec<&str> = r
        .parameters
        .iter()
        .map(|p| p.name.as_str())
        .filter(|n| n.starts_with("row_index"))
        .collect();
    assert_eq!(got, names, "{:#?}", r.parameters);
    let stated = r
        .assumptions
        .iter()
        .any(|a| a.contains("C99 6.5p7") && a.contains("`row_index`"));
    assert_eq!(stated, assumed, "{:#?}", r.assumptions);
}

#[test]
fn stores_of_another_type_leave_a_pointer_variable_one_value() {
    check(&[], &["row_index"], true);
    let r = report(&[]);
    let p = r.parameters.iter().find(|p| p.name == "row_index").unwrap();
    let bytes = p.bytes.as_ref().expect("a section");
    assert_eq!((bytes.lo.text(), bytes.hi.text()), ("0", "4*n + 4"));
}

#[test]
fn without_strict_aliasing_the_two_reads_are_two_values() {
    check(
        &["-fno-strict-aliasing"],
        &["row_index@8:22", "row_index@8:40"],
        false,
    );
}
