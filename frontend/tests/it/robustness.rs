//! Robustness regressions from real C (sqlite, zlib, PolyBench, ...): each construct lowers or gives one clear diagnostic, and nothing panics.

use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("robustness-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Loads `text` as `main.c`; panics with the rendered diagnostic if the file cannot be read.
fn load(name: &str, text: &str) -> Unit {
    let dir = scratch(name);
    std::fs::write(dir.join("main.c"), text).unwrap();
    let input = TranslationUnitInput {
        file: "main.c".into(),
        working_dir: Some(dir),
        ..Default::default()
    };
    match load_unit(&input) {
        Ok(unit) => unit,
        Err(d) => panic!("{}", d.render(false)),
    }
}

/// Every function lowers without an error.
/// The names of the functions a unit lowered.
fn function_names(unit: &Unit) -> Vec<&str> {
    unit.lowered
        .program
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect()
}

fn assert_all_lower(unit: &Unit) {
    let messages: Vec<String> = unit.diagnostics().iter().map(|d| d.render(false)).collect();
    assert!(unit.lowered.errors.is_empty(), "{}", messages.join("\n"));
    assert_eq!(
        unit.lowered.program.functions.len(),
        unit.lowered.functions_attempted
    );
}

#[test]
fn fallthrough_statement_attribute() {
    let unit = load(
        "fallthrough",
        "int f(int x) {\n  int r = 0;\n  switch (x) {\n  case 1: r += 1; __attribute__((fallthrough));\n  case 2: r += 2; __attribute__ ((__fallthrough__)) ;\n  default: r += 3;\n  }\n  return r;\n}\n",
    );
    assert_all_lower(&unit);
}

#[test]
fn gcc_int128_type_names() {
    let unit = load(
        "int128",
        "unsigned long long mul_hi(unsigned long long a, unsigned long long b) {\n  __uint128_t r = (__uint128_t)a * b;\n  __int128 s = (__int128_t)r;\n  return (unsigned long long)(r >> 64) + (unsigned long long)s;\n}\n",
    );
    assert_all_lower(&unit);
}

#[test]
fn member_of_struct_parameter() {
    // sqlite's parser actions read `yyLookaheadToken.z` from a by-value struct parameter.
    let unit = load(
        "struct-param",
        "typedef struct Token { const char *z; unsigned n; } Token;\nconst char *first(Token t, Token *out) {\n  out->n = t.n + 1;\n  t.n = 0;\n  *out = t;\n  return t.z;\n}\n",
    );
    assert_all_lower(&unit);
}

/// Lowers a generated function and checks that it either lowers or fails with one error:
/// deep nesting must never overflow the stack (which aborts the process).
fn lowers_or_one_error(name: &str, text: &str) -> Unit {
    let unit = load(name, text);
    assert_eq!(unit.lowered.functions_attempted, 1);
    assert_eq!(
        unit.lowered.program.functions.len() + unit.lowered.errors.len(),
        1,
        "{:?}",
        unit.lowered.errors
    );
    unit
}

#[test]
fn long_else_if_chain() {
    let mut text = String::from("int g(int x) {\n  int r = 0;\n");
    for i in 0..20_000 {
        text.push_str(&format!("  if (x == {i}) r = {i}; else\n"));
    }
    text.push_str("  r = -1;\n  return r;\n}\n");
    let unit = lowers_or_one_error("else-if", &text);
    assert_all_lower(&unit);
    // The loop forest of a 40,000-block function with a 20,000-deep dominator tree is
    // computed in linear time (it used to test dominance on every edge).
    let forest = frontend::loops::analyze_loops(&unit.lowered.program.functions[0]);
    assert_eq!(forest.ids().count(), 0);
}

#[test]
fn long_unparenthesised_sum() {
    let terms = vec!["x"; 60_000].join(" + ");
    let unit = lowers_or_one_error("long-sum", &format!("int f(int x) {{ return {terms}; }}\n"));
    assert_all_lower(&unit);
}

#[test]
fn long_ternary_chain() {
    let mut text = String::from("int t(int x) { return ");
    for i in 0..20_000 {
        text.push_str(&format!("x == {i} ? {i} : "));
    }
    text.push_str("0; }\n");
    let unit = lowers_or_one_error("ternary", &text);
    assert_all_lower(&unit);
}

/// A nest of `depth` loops around one statement, in a function `deep`, then a function
/// `flat` with one loop.
fn nested_loops(depth: usize) -> String {
    let mut text = String::from("void deep(double *a) {\n");
    for k in 0..depth {
        text.push_str(&format!("  for (int i{k} = 0; i{k} < 2; i{k}++)\n"));
    }
    text.push_str(&format!("    a[i{}] += 1;\n}}\n", depth - 1));
    text.push_str("void flat(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n");
    text
}

/// Loops nested past the limit: the function is refused with one error at the loop that
/// goes one level too deep (1,000 nested loops took minutes in SSA construction), and the
/// rest of the file is lowered; at the limit the function lowers.
#[test]
fn loops_nested_past_the_limit_refuse_their_function_only() {
    let limit = frontend::lower::MAX_LOOP_NESTING;
    let at = load("nest-at-limit", &nested_loops(limit));
    assert_all_lower(&at);
    for depth in [limit + 1, 1000] {
        let unit = load(&format!("nest-{depth}"), &nested_loops(depth));
        assert_eq!(unit.lowered.errors.len(), 1, "{:?}", unit.lowered.errors);
        let error = &unit.lowered.errors[0];
        assert!(
            error
                .message
                .contains(&format!("loops nested more than {limit} deep")),
            "{}",
            error.message
        );
        assert_eq!(function_names(&unit), ["flat"]);
    }
}

/// Types past the declarator-depth limit, wherever the declarator is (a local, a cast, a
/// parameter): the function is refused with one error and the rest of the file is lowered;
/// at the limit, a local whose dereference chain reaches every level lowers.
#[test]
fn types_deeper_than_the_limit_refuse_their_function_only() {
    let limit = frontend::lower::MAX_TYPE_DEPTH as usize;
    let flat = "void flat(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n";
    let local = |depth: usize| {
        format!(
            "int f(int *a, int n) {{ int {}p = 0; for (int i = 0; i < n; i++) a[i] = p ? {}p : 0; return 0; }}\n{flat}",
            "*".repeat(depth),
            "*".repeat(depth)
        )
    };
    assert_all_lower(&load("type-at-limit", &local(limit)));
    let over = "*".repeat(limit + 1);
    for (name, text) in [
        ("type-local", local(limit + 1)),
        ("type-local-deep", local(20_000)),
        (
            "type-cast",
            format!("void *q; long f(void) {{ return (long)(int {over})q; }}\n{flat}"),
        ),
        (
            "type-param",
            format!("int f(int {over}p) {{ return 0; }}\n{flat}"),
        ),
        (
            "type-array",
            format!(
                "int f(void) {{ int a{}; return 0; }}\n{flat}",
                "[1]".repeat(limit + 1)
            ),
        ),
    ] {
        let unit = load(name, &text);
        assert_eq!(
            unit.lowered.errors.len(),
            1,
            "{name}: {:?}",
            unit.lowered.errors
        );
        let error = &unit.lowered.errors[0];
        assert!(
            error.message.contains(&format!(
                "more than {limit} pointer, array or function levels"
            )),
            "{name}: {}",
            error.message
        );
        assert_eq!(function_names(&unit), ["flat"], "{name}");
    }
}

/// Dead code after `break` or `goto` holding a loop: the loop's header is entered only by
/// its own back edge, a cycle of single-predecessor blocks that SSA construction followed
/// forever (a stack overflow, which aborts the process; found by tests/it/mutated_inputs.rs).
#[test]
fn a_loop_only_its_back_edge_enters_lowers() {
    let unit = load(
        "dead-loop",
        "int f(int n, int m) {\n  int sum = 0;\n  for (int i = 0; i < n; i++) {\n    break;\n    for (int j = 0; j < m; j++)\n      sum = sum + j;\n  }\n  return sum;\n}\n\
         int g(int n, int m) {\n  int sum = 0;\n  for (int i = 0; i < n; i++) {\n    goto L;\n    for (int j = 0; j < m; j++)\n      sum = sum + j;\n    L: ;\n  }\n  return sum;\n}\n",
    );
    assert_all_lower(&unit);
}

/// A `goto` to a label the function does not define is C's constraint violation: one
/// error at the `goto`, and the file's other functions are lowered.
#[test]
fn a_goto_to_no_label_is_an_error_at_the_goto() {
    let unit = load(
        "goto-nowhere",
        "int f(int n) {\n  for (int i = 0; i < n; i++) { goto L; }\n  return n;\n}\nint ok(int n) { return n; }\n",
    );
    assert_eq!(unit.lowered.errors.len(), 1, "{:?}", unit.lowered.errors);
    let message = unit.diagnostics()[0].render(false);
    assert!(
        message.contains("the function has no label `L`"),
        "{message}"
    );
    assert!(message.contains("main.c:2:33"), "{message}");
    assert_eq!(function_names(&unit), ["ok"]);
}

#[test]
fn a_function_body_over_the_size_budget_is_left_out_with_one_error() {
    // A one-line body of 400,000 statements would take tens of seconds and gigabytes to
    // parse and lower. A body over `MAX_BODY_BYTES` is not parsed; its function is dropped
    // (callers see unknown effects, not an empty function) and named in one error.
    let statements = frontend::parse::MAX_BODY_BYTES / 10;
    let body = "a[i] += b[i + 3]; ".repeat(statements);
    let text = format!(
        "void huge(double *a, const double *b, int n) {{ for (int i = 0; i < n; i++) {{ {body} }} }}\n\
         void caller(double *a, const double *b, int n) {{ for (int k = 0; k < n; k++) huge(a, b, k); }}\n"
    );
    let unit = load("oversized-body", &text);
    assert_eq!(function_names(&unit), ["caller"]);
    let errors: Vec<String> = unit.diagnostics().iter().map(|d| d.render(false)).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("cannot analyse function `huge`") && errors[0].contains("main.c:1:"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("analysis budget"), "{}", errors[0]);
}

#[test]
fn preprocessed_text_loads_without_a_preprocessor_and_keeps_its_line_markers() {
    // What the fuzz targets (fuzz/) feed: the preprocessor's output, line markers included.
    // The loop's location comes from the marker (the user's file `src/k.c`, line 40), the
    // pragma is taken out as `preprocess` takes it out, and a header's declarations count.
    let text = "# 1 \"/usr/include/h.h\" 1 3 4\nextern double scale;\n\
                # 40 \"src/k.c\"\n\
                void k(double *a, int n) {\n\
                #pragma omp parallel for\n\
                  for (int i = 0; i < n; i++) a[i] *= scale;\n}\n";
    let unit = frontend::unit::load_preprocessed(Path::new("src/k.c"), text.to_string())
        .unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert!(unit.diagnostics().is_empty(), "{:?}", unit.diagnostics());
    assert_eq!(function_names(&unit), ["k"]);
    assert_eq!(unit.preprocessed.pragmas.len(), 1);
    let function = unit.user_functions().next().unwrap();
    let (_, source_loop) = function.source_loops().next().expect("the loop");
    let at = unit.resolve(source_loop.span).expect("a location");
    assert_eq!((at.path.as_path(), at.line), (Path::new("src/k.c"), 42));
}

#[test]
fn a_long_run_of_plus_signs_is_one_syntax_error_not_a_hang() {
    // Found by the fuzz target `c_pipeline`: lang-c retried every split of the run into
    // `++` and `+` (hours for this input). It is refused before parsing, at its location.
    let text = format!("int main(void)\n{{\n    return 0;\n{}}}\n", "+".repeat(78));
    let dir = scratch("sign-run");
    std::fs::write(dir.join("main.c"), &text).unwrap();
    let input = TranslationUnitInput {
        file: "main.c".into(),
        working_dir: Some(dir),
        ..Default::default()
    };
    let error = load_unit(&input).expect_err("not C").render(false);
    assert!(error.contains("78 `+` signs in a row"), "{error}");
    assert!(error.contains("main.c:4:1"), "{error}");
}
