//! Sign analysis: the thesis' §8.5 examples, loops, branch refinement, and soundness
//! against concrete executions of a traced C fixture.

use analyses::reconstruct::{reconstruct, ReconstructConfig};
use analyses::sign::{sign_analysis, SignFacts};
use frontend::ir::{Callee, Function, InstKind, Program, Value};
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use symbolic::SignSet;
use tempfile::TempDir;

/// `src` written to a file in a fresh, private temporary directory; the directory goes when
/// the returned guard is dropped, so callers keep it while they use the path.
fn write_fixture(src: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-sign-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("f.c");
    std::fs::write(&path, src).expect("write fixture");
    (dir, path)
}

fn load(path: &Path) -> Unit {
    load_unit(&TranslationUnitInput::new(path)).expect("fixture loads")
}

fn param(func: &Function, name: &str) -> Value {
    func.params
        .iter()
        .find(|p| p.name.as_deref() == Some(name))
        .expect("parameter")
        .value
}

fn analyse(program: &Program, func: &Function, injected: &HashMap<Value, SignSet>) -> SignFacts {
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    sign_analysis(program, func, &forest, &rec, injected)
}

/// The sign of the first argument of each call to `name` where the call is made (union
/// over calls; empty when every such call is unreachable).
fn arg_sign(func: &Function, facts: &SignFacts, name: &str) -> SignSet {
    let mut s = SignSet::EMPTY;
    let mut found = false;
    for v in func.values() {
        if let InstKind::Call {
            callee: Callee::Direct(n),
            args,
        } = &func.inst(v).kind
        {
            if n == name {
                found = true;
                s = s.union(facts.at_exit(func.inst(v).block, args[0]));
            }
        }
    }
    assert!(found, "no call to {name}");
    s
}

/// Analyses `f` in `src` (with `injected` signs for named parameters) and checks the sign
/// of the argument of each `useN(...)` call.
fn check(src: &str, injected: &[(&str, SignSet)], expected: &[(&str, SignSet)]) {
    let (_dir, path) = write_fixture(src);
    let unit = load(&path);
    let program = &unit.lowered.program;
    let func = program.function("f").expect("function f");
    let injected: HashMap<Value, SignSet> =
        injected.iter().map(|(n, s)| (param(func, n), *s)).collect();
    let facts = analyse(program, func, &injected);
    assert_eq!(facts.gave_up, None);
    for (call, want) in expected {
        assert_eq!(
            arg_sign(func, &facts, call),
            *want,
            "sign at {call}(...) in\n{src}"
        );
    }
}

const DECLS: &str = "void use1(int); void use2(int); void use3(int); void use4(int);\n";

#[test]
fn pattern_1_comparison_variable_defined_from_one_variable() {
    check(
        &format!(
            "{DECLS}void f(int b) {{ int a = 3*b; if (a > 0) use1(b); else use2(b); \
             int c = b - 5; if (c >= 0) use3(b); }}"
        ),
        &[],
        &[
            ("use1", SignSet::POS),
            ("use2", SignSet::NON_POS),
            ("use3", SignSet::POS),
        ],
    );
}

#[test]
fn pattern_2_relations_between_comparison_operands() {
    check(
        &format!(
            "{DECLS}void f(int a, int b, int c) {{ if (b <= 0) {{ if (c >= 0) {{ \
             if (a + b > c) use1(a); else use2(a); }} }} }}"
        ),
        &[],
        &[("use1", SignSet::POS), ("use2", SignSet::TOP)],
    );
}

#[test]
fn pattern_3_ternary_arms_under_their_condition() {
    check(
        &format!(
            "{DECLS}void f(int b) {{ int a = b > 0 ? b : 2*b; use1(a); \
             int u = b > 0 ? b : -b; use2(u); int z = b < 0 ? 0 : b; use3(z); }}"
        ),
        &[],
        // The thesis: {+} ∪ {-,0}.
        &[
            ("use1", SignSet::TOP),
            ("use2", SignSet::NON_NEG),
            ("use3", SignSet::NON_NEG),
        ],
    );
}

#[test]
fn induction_variables_and_loop_bounds() {
    check(
        &format!(
            "{DECLS}void f(int n) {{ for (int i = 0; i < n; i++) {{ use1(i); use2(n); }} \
             for (int i = -n; i < n; i++) use3(i); }}"
        ),
        &[],
        &[
            ("use1", SignSet::NON_NEG),
            ("use2", SignSet::POS),
            ("use3", SignSet::TOP),
        ],
    );
    // With n injected positive, i = -n starts negative; after the loop i >= n > 0.
    check(
        &format!(
            "{DECLS}void f(int n) {{ int i; for (i = -n; i < n; i++) use1(i); use2(i); \
             use3(-n); }}"
        ),
        &[("n", SignSet::POS)],
        &[
            ("use1", SignSet::TOP),
            ("use2", SignSet::POS),
            ("use3", SignSet::NEG),
        ],
    );
}

#[test]
fn branch_refinement() {
    check(
        &format!(
            "{DECLS}void f(int x, int y) {{ if (x > 0) use1(x); if (y) use2(y); else use3(y); \
             if (x > 0) {{ if (x < 0) use4(x); }} }}"
        ),
        &[],
        &[
            ("use1", SignSet::POS),
            ("use2", SignSet::NON_ZERO),
            ("use3", SignSet::ZERO),
            // Infeasible: no state reaches the call.
            ("use4", SignSet::EMPTY),
        ],
    );
    // Values computed before the branch are re-evaluated with the refined operand.
    check(
        &format!("{DECLS}void f(int b) {{ int t = b + 1; if (b >= 0) use1(t); }}"),
        &[],
        &[("use1", SignSet::POS)],
    );
}

#[test]
fn c_semantics_division_unsigned_and_casts() {
    check(
        &format!(
            "{DECLS}void f(int p, unsigned u, int s) {{ if (p > 0) use1(p / 2); \
             use2((int)(u - 1u > 0)); use3((signed char)(s * 40)); use4(-u > 0); }}"
        ),
        &[],
        &[
            // Truncating division: 1 / 2 == 0.
            ("use1", SignSet::NON_NEG),
            ("use2", SignSet::NON_NEG),
            // Narrowing may change the sign.
            ("use3", SignSet::TOP),
            ("use4", SignSet::NON_NEG),
        ],
    );
}

#[test]
fn square_of_an_induction_variable_is_non_negative() {
    let unit = load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/range_example.c"));
    let program = &unit.lowered.program;
    let func = program.function("range_example").expect("function");
    let facts = analyse(program, func, &HashMap::new());
    let k = func
        .values()
        .find(|v| func.inst(*v).origin.var_name.as_deref() == Some("k"))
        .expect("k");
    assert_eq!(facts.of(k), SignSet::NON_NEG);
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    // The environment the range analysis gets: i >= 0 in the loop body.
    let body = func.inst(k).block;
    let env = facts.env_for(body, &rec);
    assert_eq!(env.get(&symbolic::Var::new("i")), SignSet::NON_NEG);
}

/// Runs the traced fixture and checks every printed value's sign is in the union of the
/// computed signs of the SSA values of that variable.
#[test]
fn soundness_against_concrete_executions() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sign_trace.c");
    // The traced executable goes in a fresh, private directory, removed when the test ends.
    let dir = tempfile::Builder::new()
        .prefix("warpwise-sign-trace-")
        .tempdir()
        .expect("temp dir");
    let exe = dir.path().join("sign_trace");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .args(["-std=c99", "-O0", "-DTRACE", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed");
    let output = std::process::Command::new(&exe)
        .output()
        .expect("run fixture");
    let mut concrete: BTreeMap<String, SignSet> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let (name, value) = line.rsplit_once(' ').expect("name value");
        let value: i64 = value.parse().expect("integer");
        let s = SignSet::of_int(&value.into());
        let e = concrete.entry(name.to_string()).or_insert(SignSet::EMPTY);
        *e = e.union(s);
    }
    assert!(concrete.len() >= 15, "traced {} variables", concrete.len());

    let unit = load(&src);
    let program = &unit.lowered.program;
    let func = program.function("kernel").expect("kernel");
    let facts = analyse(program, func, &HashMap::new());
    let mut checked = 0;
    for (name, seen) in &concrete {
        let mut computed = SignSet::EMPTY;
        for v in func.values() {
            if func.inst(v).origin.var_name.as_deref() == Some(name.as_str()) {
                computed = computed.union(facts.of(v));
            }
        }
        assert!(
            seen.is_subset(computed),
            "{name}: executions gave {seen}, analysis says {computed}"
        );
        checked += 1;
    }
    assert_eq!(checked, concrete.len());
    // And the analysis is not trivially top everywhere.
    let named = |n: &str| {
        func.values()
            .filter(|v| func.inst(*v).origin.var_name.as_deref() == Some(n))
            .fold(SignSet::EMPTY, |s, v| s.union(facts.of(v)))
    };
    assert_eq!(named("k"), SignSet::NON_NEG);
    assert_eq!(named("e"), SignSet::POS);
    assert_eq!(named("r"), SignSet::NON_NEG);
    assert_eq!(named("x"), SignSet::NON_NEG);
}

/// The sign analysis' join work on `x = c[i] == 0 ? 0 : c[i] == 1 ? 1 : ... : 0` of
/// `levels` levels in a loop.
fn conditional_chain_join_work(levels: usize) -> usize {
    let chain: String = (0..levels)
        .map(|k| format!("c[i] == {k} ? {k} : "))
        .collect();
    let src = format!(
        "void f(int *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) {{\n    \
         int x;\n    x = {chain}0;\n    a[i] = x;\n  }}\n}}\n"
    );
    let (_dir, path) = write_fixture(&src);
    let unit = load(&path);
    let program = &unit.lowered.program;
    let func = program.function("f").expect("function f");
    let facts = analyse(program, func, &HashMap::new());
    assert_eq!(facts.gave_up, None);
    facts.join_work
}

/// Each level's join sees, on the loop's second pass, the parts of the state that the
/// levels inside it built from the same two nodes; compared again at every level, the
/// work grew with the square of the levels. Twice the levels: about twice the work.
#[test]
fn nested_conditional_chain_joins_in_linear_work() {
    let small = conditional_chain_join_work(300);
    let large = conditional_chain_join_work(600);
    assert!(
        large <= small * 5 / 2,
        "300 levels: {small} node pairs compared; 600 levels: {large}"
    );
}
