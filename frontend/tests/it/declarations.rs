//! Lowering records every automatic variable's declaration (name, declared type with
//! typedefs resolved, where its block ends), also for variables SSA keeps no value of; a
//! declaration is visible at a place after it inside its block, as C's scopes say.

use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

/// Lowers `source`, then checks function `f`'s declarations, in source order, as
/// `(name, type)`, and the names visible at its first loop.
fn check(source: &str, declared: &[(&str, &str)], visible_at_loop: &[(&str, &str)]) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-declarations-")
        .tempdir()
        .unwrap();
    let c = dir.path().join("decl.c");
    std::fs::write(&c, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(&c)).expect("loads");
    assert!(unit.lowered.errors.is_empty(), "{:?}", unit.lowered.errors);
    let program = &unit.lowered.program;
    let f = program.function("f").expect("f");
    let got: Vec<(String, String)> = f
        .declarations
        .iter()
        .map(|d| (d.name.clone(), program.types.display(d.ty)))
        .collect();
    let want: Vec<(String, String)> = declared
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    assert_eq!(got, want);
    let at = f.loops[0].span;
    let visible: Vec<(&str, String)> = f
        .declarations
        .iter()
        .filter(|d| d.visible_at(at))
        .map(|d| (d.name.as_str(), program.types.display(d.ty)))
        .collect();
    let visible_at_loop: Vec<(&str, String)> = visible_at_loop
        .iter()
        .map(|(n, t)| (*n, t.to_string()))
        .collect();
    assert_eq!(visible, visible_at_loop);
}

#[test]
fn copies_typedefs_and_inner_blocks() {
    check(
        "typedef int lnum_t;
         void f(int m, double *x) {
             double a1, a2 = 0.5, c1;
             const lnum_t n = m;
             int *p, q = 2;
             { double inner = 1.0; x[0] = inner; }
             for (int i = 0; i < n; i++) x[i] = a1 + q;
         }",
        &[
            ("a1", "double"),
            ("a2", "double"),
            ("c1", "double"),
            ("n", "int"),
            ("p", "int *"),
            ("q", "int"),
            ("inner", "double"),
            ("i", "int"),
        ],
        &[
            ("a1", "double"),
            ("a2", "double"),
            ("c1", "double"),
            ("n", "int"),
            ("p", "int *"),
            ("q", "int"),
        ],
    );
}

#[test]
fn an_inner_declaration_shadows_only_inside_its_block() {
    check(
        "void f(double *x, int m) {
             int k = m;
             {
                 long k = 3;
                 x[0] = k;
             }
             for (int i = 0; i < k; i++) x[i] = 0;
         }",
        &[("k", "int"), ("k", "long"), ("i", "int")],
        &[("k", "int")],
    );
}
