//! Old-style C (K&R definitions, implicit `int`): each program is compiled with
//! `cc -std=gnu89` and run, lowered and run in the IR interpreter; both runs must print the
//! same text and exit with the same code. Where C89 leaves a call undefined (an `int`
//! passed to a K&R `double` parameter), only the interpreter runs, and it must compute what
//! the programmer meant.

use frontend::interp::Interpreter;
use frontend::ir::verify::verify_function;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::process::Command;
use tempfile::TempDir;

/// A fresh, private directory for one program's files, removed when the guard is dropped
/// (never a name shared by every run in the shared temp dir).
fn scratch() -> TempDir {
    tempfile::Builder::new()
        .prefix("warpwise-old-style-")
        .tempdir()
        .unwrap()
}

/// Compiles (`-std=gnu89`, where K&R and implicit int are the language) and runs `source`.
fn native(name: &str, source: &str) -> (String, i32) {
    let dir = scratch();
    let c = dir.path().join(format!("{name}.c"));
    let exe = dir.path().join(name);
    std::fs::write(&c, source).unwrap();
    let out = Command::new("cc")
        .args(["-std=gnu89", "-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "cc failed on {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("test program runs");
    (
        String::from_utf8_lossy(&run.stdout).into_owned(),
        run.status.code().unwrap_or(-1),
    )
}

/// Loads the file; every function must lower and verify. The directory holding the file
/// comes with the unit: the unit reads the file's lines again for diagnostics, so callers
/// keep the guard while they use the unit.
fn load(name: &str, source: &str) -> (TempDir, Unit) {
    let dir = scratch();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let unit =
        load_unit(&TranslationUnitInput::new(&c)).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    let errors: Vec<String> = unit
        .diagnostics()
        .iter()
        .map(|d| format!("{d:?}"))
        .collect();
    assert!(
        unit.lowered.errors.is_empty(),
        "{name}: lowering errors {errors:#?}"
    );
    for func in &unit.lowered.program.functions {
        let problems = verify_function(func);
        assert!(
            problems.is_empty(),
            "{name}: `{}`: {problems:#?}",
            func.name
        );
    }
    (dir, unit)
}

/// The interpreter's run of `main`: (stdout, exit code).
fn interpret(unit: &Unit, name: &str) -> (String, i32) {
    let result = Interpreter::new(&unit.lowered.program)
        .with_fuel(10_000_000)
        .run_main(&[])
        .unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
    (result.stdout, result.exit_code & 0xff)
}

/// Runs `source` natively and in the interpreter; both must agree, and print `expected`.
fn check(name: &str, source: &str, expected: &str) {
    let native = native(name, source);
    let (_dir, unit) = load(name, source);
    let interpreted = interpret(&unit, name);
    assert_eq!(interpreted, native, "{name}: interpreter and cc disagree");
    assert_eq!(native.0, expected, "{name}: unexpected output");
}

#[test]
fn kr_parameters_take_the_declared_types() {
    check(
        "kr_types",
        r#"#include <stdio.h>
float squash(x) float x; { return x * 0.5f; }
int next(c) char c; { return c + 1; }
long sum(n, v) int n; long *v; { long s = 0; int i; for (i = 0; i < n; i++) s += v[i]; return s; }
double mixed(a, n, f, s) double *a; short s; float f; int n; { return a[n] + f + s; }
int main(void) {
    float f = 1.5f;
    double d[3];
    long v[3];
    d[0] = 0.25; d[1] = 0.5; d[2] = 4.0;
    v[0] = 10; v[1] = 20; v[2] = 12;
    printf("%g %g\n", squash(3.0), squash(f));
    printf("%d\n", next(300));
    printf("%ld\n", sum(3, v));
    printf("%g\n", mixed(d, 2, f, 70000));
    return (int)sum(2, v);
}
"#,
        // `next(300)`: the int arrives whole and becomes the char 44; `mixed`'s `s` gets
        // 70000 as a short: 4464.
        "1.5 0.75\n45\n42\n4469.5\n",
    );
}

#[test]
fn undeclared_parameters_and_return_types_are_int() {
    check(
        "implicit_int",
        r#"#include <stdio.h>
static foo(a, b) double *a; { return b + (int)a[1]; }
bar() { return 7; }
static *first(p) int **p; { return *p; }
main(argc, argv) int argc; char **argv; {
    double d[2];
    int x = 5, *px = &x;
    register i;
    const n = 3;
    static calls;
    d[0] = 1.0; d[1] = 41.0;
    for (i = 0; i < n; i++)
        calls += bar();
    printf("%d %d %d %d\n", foo(d, 1), calls, *first(&px), argc);
    return foo(d, 0) - 40;
}
"#,
        "42 21 5 1\n",
    );
}

#[test]
fn calls_before_the_definition_use_the_default_promotions() {
    check(
        "kr_late",
        r#"#include <stdio.h>
double late();
int main(void) {
    float f = 2.5f;
    char c = 'A';
    printf("%g %g\n", late(f, c), late(1.0, 'B'));
    return 0;
}
double late(x, c) float x; char c; { return x + c; }
"#,
        "67.5 67\n",
    );
}

/// An `int` passed to a K&R `double` parameter is undefined in C (gcc passes it in an
/// integer register and the callee reads a floating-point one). After the definition the
/// analyses treat the parameter list as a prototype, so the argument is converted.
#[test]
fn an_int_argument_to_a_kr_double_is_converted_after_the_definition() {
    let source = r#"#include <stdio.h>
double twice(x) double x; { return 2 * x; }
int main(void) { printf("%g\n", twice(21)); return 0; }
"#;
    let (_dir, unit) = load("kr_int_double", source);
    assert_eq!(interpret(&unit, "kr_int_double"), ("42\n".to_string(), 0));
}

/// The inserted `int` moves text to the right; locations still point at what the user wrote.
#[test]
fn locations_in_old_style_code_are_the_users() {
    let source = "static foo(a)\n  double *a;\n{\n  register i;\n  for (i = 0; i < 4; i++) a[i] = i;\n  return 0;\n}\n";
    let (_dir, unit) = load("kr_spans", source);
    let func = &unit.lowered.program.functions[0];
    let name = unit.resolve(func.name_span).expect("name resolves");
    assert_eq!((name.line, name.col), (1, 8));
    let lp = unit
        .resolve(func.loops[0].keyword_span)
        .expect("loop resolves");
    assert_eq!((lp.line, lp.col), (5, 3));
    assert_eq!(unit.snippet(func.loops[0].keyword_span), "for");
}

#[test]
fn unusual_kr_declarators() {
    check(
        "kr_declarators",
        r#"#include <stdio.h>
struct S { int v; };
static int add1(n) int n; { return n + 1; }
char *skip(s, n) char *s; unsigned n; { return s + n; }
static int (*pick(n))(int) int n; { return n ? add1 : 0; }
unsigned both(a, b) unsigned a, b; { return a * 10 + b; }
field(x) struct S *x; { return x->v; }
first(arr, n) int arr[]; register int n; { return arr[n - 1]; }
call(fp) int (*fp)(); { return fp(4); }
short narrow(c) char c; { return c * 2; }
main()
{
    extern strange();
    struct S s;
    int a[3];
    s.v = 9; a[0] = 1; a[1] = 2; a[2] = 3;
    printf("%s %d %u %d %d\n", skip("hello", 2), pick(1)(5), both(4, 2), field(&s), first(a, 3));
    printf("%d %d %d\n", call(add1), narrow(100), strange(3));
    return 0;
}
strange(x) { return x * x; }
"#,
        "llo 6 42 9 3\n5 200 9\n",
    );
}
