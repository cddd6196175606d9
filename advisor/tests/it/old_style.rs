//! A loop in an old-style (K&R) definition is analysed exactly like the same loop in the
//! prototyped definition: same verdict, reasons, parameters (types, roles, sections) and
//! assumptions. Implicit `int` (undeclared parameters, missing return type) included.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::LoopReport;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

fn report(name: &str, source: &str) -> LoopReport {
    // A fresh, private directory (tests run in parallel), removed when `dir` drops at the end.
    let dir = tempfile::Builder::new()
        .prefix("warpwise-old-style-")
        .tempdir()
        .unwrap();
    let file = dir.path().join(format!("{name}.c"));
    std::fs::write(&file, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    assert!(unit.lowered.errors.is_empty(), "{:?}", unit.lowered.errors);
    let mut reports = analyze_unit(&unit, &Filter::default());
    assert_eq!(reports.len(), 1, "{name}: one loop");
    reports.remove(0)
}

/// The K&R `old` and the prototyped `new` definitions give the same report.
fn check(old: &str, new: &str) {
    let (a, b) = (report("old", old), report("new", new));
    assert_eq!(a.verdict, b.verdict);
    assert_eq!(json(&a.reasons), json(&b.reasons));
    assert_eq!(json(&a.parameters), json(&b.parameters));
    assert_eq!(a.assumptions, b.assumptions);
    assert_eq!(a.line, b.line);
}

/// Parts of the report, compared as their serialized form.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn declared_parameter_types() {
    check(
        "void scale(a, n, f) float *a; int n; double f;\n{ int i; for (i = 0; i < n; i++) a[i] = a[i] * f; }\n",
        "void scale(float *a, int n, double f)\n{ int i; for (i = 0; i < n; i++) a[i] = a[i] * f; }\n",
    );
}

#[test]
fn promoted_float_parameter() {
    check(
        "void squash(a, n, f) float *a; float f;\n{ int i; for (i = 0; i < n; i++) a[i] = a[i] * f; }\n",
        "void squash(float *a, int n, float f)\n{ int i; for (i = 0; i < n; i++) a[i] = a[i] * f; }\n",
    );
}

#[test]
fn implicit_int_parameters_and_return() {
    check(
        "sum(v, n) double *v;\n{ register i; double s = 0; for (i = 0; i < n; i++) v[i] += 1; return s; }\n",
        "int sum(double *v, int n)\n{ register int i; double s = 0; for (i = 0; i < n; i++) v[i] += 1; return s; }\n",
    );
}
