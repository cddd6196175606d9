//! Inlining checked against execution: a function with its calls inlined computes what the
//! original computes, run by the IR interpreter on the same inputs, and is valid IR.

use frontend::interp::{Interpreter, Val};
use frontend::ir::inline::{inline_calls, Limits};
use frontend::ir::verify::verify_function;
use frontend::ir::{Callee, InstKind};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

/// Callees with a value, several returns, a loop, pointers into the caller's locals, a
/// call in a loop and in a condition, nesting, calls as arguments of calls (`id` returns
/// its argument: a chain of replaced calls), and recursion (left a call).
const PROGRAM: &str = r#"
static int twice(int x) { return 2 * x; }
static int id(int x) { return x; }
static int clamp(int x, int hi) { if (x < 0) return 0; if (x > hi) return hi; return x; }
static void bump(int *counter, int by) { for (int k = 0; k < by; k++) *counter += 1; }
static int sum_to(int n) { int s = 0; for (int i = 0; i < n; i++) s += twice(i); return s; }
static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
static void store(int *out, int i, int v) { out[clamp(i, 7)] = v; }

int outer(int *out, int n) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (clamp(i - 2, 5) > 1)
            bump(&count, twice(i));
        store(out, i, sum_to(i) + fact(4));
        count += twice(clamp(twice(i), 9)) + id(id(twice(i)));
    }
    return count + clamp(n, 3);
}
"#;

/// `outer` of `program` run on 16 zeroed ints and `n`: its result and the array after.
fn run(program: &frontend::ir::Program, function: &str, n: i128) -> (Val, Vec<i32>) {
    let mut interp = Interpreter::new(program);
    let out = interp.alloc_i32s(&[0; 16]);
    let result = interp
        .call(function, vec![out.clone(), Val::Int(n)])
        .unwrap_or_else(|e| panic!("{function}({n}): {e}"));
    (result, interp.read_i32s(&out, 16).unwrap())
}

fn check(n: i128, program: &frontend::ir::Program) {
    assert_eq!(
        run(program, "outer", n),
        run(program, "outer_inlined", n),
        "n = {n}"
    );
}

#[test]
fn an_inlined_function_computes_what_the_original_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calls.c");
    std::fs::write(&file, PROGRAM).unwrap();
    let mut unit = load_unit(&TranslationUnitInput::new(&file)).unwrap_or_else(|d| panic!("{d:?}"));
    let program = &mut unit.lowered.program;
    let outer = program.function("outer").unwrap();
    let limits = Limits {
        depth: 4,
        instructions: 10_000,
    };
    let inlined = inline_calls(program, outer, limits, |_| true);
    let (mut inlined, left, chains) = (inlined.func, inlined.left, inlined.values);
    assert_eq!(verify_function(&inlined), Vec::<String>::new());
    // Only the recursion is left, named with its reason.
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].0, "fact");
    let calls: Vec<String> = inlined
        .values()
        .filter(|&v| inlined.block(inlined.inst(v).block).insts.contains(&v))
        .filter_map(|v| match &inlined.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert!(calls.iter().all(|c| c == "fact"), "{calls:?}");
    assert!(!calls.is_empty());
    // `twice` inside `sum_to` inside `outer`: two calls deep, outermost first.
    let names = |c: &Vec<frontend::ir::inline::CallSite>| -> Vec<String> {
        c.iter().map(|s| s.callee.clone()).collect()
    };
    assert!(
        chains.values().any(|c| names(c) == ["sum_to", "twice"]),
        "{:?}",
        chains.values().map(names).collect::<Vec<_>>()
    );
    // The recursion goes as deep as the limit, then stays a call.
    let deepest = chains.values().map(Vec::len).max().unwrap();
    assert_eq!(deepest, 4);
    assert!(chains.values().any(|c| names(c) == ["fact"; 4]));
    inlined.name = "outer_inlined".into();
    program.functions.push(inlined);
    for n in [0, 1, 3, 6, 10] {
        check(n, program);
    }
}
