//! Differential lowering tests: each C program is compiled and run with `cc`, lowered and run
//! in the IR interpreter, and both runs must print the same text and exit with the same code.

use frontend::interp::Interpreter;
use frontend::ir::verify::verify_function;
use frontend::ir::LoopKind;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;
use tempfile::TempDir;

/// A fresh, private directory for one program's files, removed when the guard is dropped
/// (never a name shared by every run in the shared temp dir).
fn scratch() -> TempDir {
    tempfile::Builder::new()
        .prefix("warpwise-lowering-")
        .tempdir()
        .unwrap()
}

/// Compiles and runs `source` natively: (stdout, exit code).
fn native(name: &str, source: &str) -> (String, i32) {
    let dir = scratch();
    let c = dir.path().join(format!("{name}.c"));
    let exe = dir.path().join(name);
    std::fs::write(&c, source).unwrap();
    let out = Command::new("cc")
        .args(["-std=c99", "-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-lm")
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

/// The unit of `source`, with the directory holding its file: the unit reads the file's
/// lines again for diagnostics, so callers keep the guard while they use the unit.
fn load(name: &str, source: &str) -> (TempDir, frontend::unit::Unit) {
    let dir = scratch();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let unit =
        load_unit(&TranslationUnitInput::new(&c)).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    (dir, unit)
}

/// Runs `source` natively and in the interpreter; both must agree, and equal `expected`.
fn check(name: &str, source: &str, expected: &str) {
    let (native_out, native_code) = native(name, source);
    let (_dir, unit) = load(name, source);
    let errors: Vec<String> = unit
        .diagnostics()
        .iter()
        .map(|d| format!("{d:?}"))
        .collect();
    assert!(
        unit.lowered.errors.is_empty(),
        "{name}: lowering errors {errors:#?}"
    );
    let program = &unit.lowered.program;
    let inits = program.globals.iter().filter_map(|g| g.init.as_deref());
    for func in program.functions.iter().chain(inits) {
        let problems = verify_function(func);
        assert!(
            problems.is_empty(),
            "{name}: `{}` fails verification: {problems:#?}",
            func.name
        );
    }
    let result = Interpreter::new(program)
        .with_fuel(10_000_000)
        .run_main(&[])
        .unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
    assert_eq!(
        result.stdout, native_out,
        "{name}: interpreter and cc disagree on stdout"
    );
    assert_eq!(
        result.exit_code & 0xff,
        native_code,
        "{name}: interpreter and cc disagree on the exit code"
    );
    assert_eq!(native_out, expected, "{name}: unexpected output");
}

#[test]
fn integer_promotions_and_usual_conversions() {
    check(
        "promotions",
        r#"#include <stdio.h>
int main(void) {
    unsigned u = 1; int i = -2;
    printf("%d\n", u + i > 0);
    printf("%u\n", u + i);
    long l = -1; unsigned int ui = 1;
    printf("%d\n", l < ui);
    unsigned char a = 200, b = 100;
    printf("%d\n", a + b);
    unsigned char c = a + b;
    printf("%d\n", c);
    signed char sc = -128; sc = sc - 1;
    printf("%d\n", sc);
    short s = 32767; s++;
    printf("%d\n", s);
    unsigned x = 0; x--;
    printf("%u\n", x);
    unsigned long big = 0xffffffffffffffffUL; big += 2;
    printf("%lu\n", big);
    char ch = 'A'; ch += 2;
    printf("%c %d\n", ch, ch * 2);
    unsigned short us = 65535; int r = us * us;
    printf("%d\n", r);
    printf("%d\n", -1 < 0u);
    return 0;
}
"#,
        "1\n4294967295\n1\n300\n44\n127\n-32768\n4294967295\n1\nC 134\n-131071\n0\n",
    );
}

#[test]
fn division_and_remainder_of_negatives() {
    check(
        "divmod",
        r#"#include <stdio.h>
int main(void) {
    int a = -7, b = 2;
    printf("%d %d %d %d\n", a / b, a % b, 7 / -2, 7 % -2);
    long c = -9; unsigned d = 4;
    printf("%ld %ld\n", c / 4, c % 4);
    printf("%u\n", (unsigned)a / d);
    printf("%d\n", -2147483647 / 3);
    return a % 3 + 10;
}
"#,
        "-3 -1 -3 1\n-2 -1\n1073741822\n-715827882\n",
    );
}

#[test]
fn shifts() {
    check(
        "shifts",
        r#"#include <stdio.h>
int main(void) {
    int n = -16; unsigned u = 0x80000000u;
    printf("%d %u %d\n", n >> 2, u >> 31, 1 << 30);
    long l = 1L << 40;
    printf("%ld\n", l >> 3);
    unsigned char c = 0xff;
    printf("%d\n", c << 4);
    int k = 3;
    printf("%d %u\n", 5 << k, u >> k);
    return 0;
}
"#,
        "-4 1 1073741824\n137438953472\n4080\n40 268435456\n",
    );
}

#[test]
fn compound_assignments() {
    check(
        "compound",
        r#"#include <stdio.h>
int main(void) {
    int x = 10;
    x += 5; x -= 3; x *= 4; x /= 3; x %= 7; x <<= 3; x >>= 1; x &= 0xff; x |= 0x100; x ^= 0x11;
    printf("%d\n", x);
    double d = 1.5; d *= 3; d -= 0.25; d /= 2;
    printf("%f\n", d);
    int a[3] = {1, 2, 3}; int i = 1;
    a[i] += 10; a[i + 1] *= a[i];
    printf("%d %d %d\n", a[0], a[1], a[2]);
    unsigned char c = 250; c += 10;
    printf("%d\n", c);
    int y = 7; y *= 2.5;
    printf("%d\n", y);
    return 0;
}
"#,
        "281\n2.125000\n1 12 36\n4\n17\n",
    );
}

#[test]
fn increments_and_decrements() {
    check(
        "incdec",
        r#"#include <stdio.h>
int main(void) {
    int i = 5;
    int a = i++; int b = ++i; int c = i--; int d = --i;
    printf("%d %d %d %d %d\n", a, b, c, d, i);
    int arr[4] = {10, 20, 30, 40};
    int *p = arr;
    int e = *p++; int f = *++p; int g = (*p)++; p--;
    printf("%d %d %d %d %ld\n", e, f, g, *p, (long)(p - arr));
    int k = 0;
    arr[k]++; ++arr[k + 3]; arr[2]--;
    printf("%d %d %d\n", arr[0], arr[2], arr[3]);
    double x = 1.5; x++;
    printf("%g\n", x);
    char *s = "hey"; s++;
    printf("%s\n", s);
    return 0;
}
"#,
        "5 7 7 5 5\n10 30 30 20 1\n11 30 41\n2.5\ney\n",
    );
}

#[test]
fn short_circuit_with_side_effects() {
    check(
        "shortcircuit",
        r#"#include <stdio.h>
static int calls;
static int t(int v) { calls++; return v; }
int main(void) {
    int r1 = t(0) && t(1);
    int r2 = t(1) || t(0);
    int r3 = t(1) && t(2) && t(0);
    int r4 = t(0) || (t(0) || t(3));
    printf("%d %d %d %d %d\n", r1, r2, r3, r4, calls);
    int i = 0; int *p = 0;
    if (p && *p) i = 1;
    if (!p || *p == 3) i += 2;
    printf("%d\n", i);
    return 0;
}
"#,
        "0 1 0 1 8\n2\n",
    );
}

#[test]
fn conditional_operator() {
    check(
        "ternary",
        r#"#include <stdio.h>
static int n;
static int bump(int v) { n += v; return v; }
int main(void) {
    int a = 3, b = 4;
    int m = a > b ? a : b;
    int s = a < b ? bump(10) : bump(100);
    double d = a ? 1 : 2.5;
    int nested = a > 0 ? (b > 5 ? 1 : 2) : 3;
    int *p = a ? &a : &b;
    printf("%d %d %d %g %d %d\n", m, s, n, d, nested, *p);
    unsigned u = a < 0 ? -1 : 1;
    printf("%u\n", u);
    return 0;
}
"#,
        "4 10 10 1 2 3\n1\n",
    );
}

#[test]
fn comma_operator() {
    check(
        "comma",
        r#"#include <stdio.h>
int main(void) {
    int a = 1, b;
    b = (a++, a += 2, a * 10);
    int i, j;
    for (i = 0, j = 10; i < j; i++, j--) ;
    printf("%d %d %d %d\n", a, b, i, j);
    return 0;
}
"#,
        "4 40 5 5\n",
    );
}

#[test]
fn casts_between_ints_floats_and_pointers() {
    check(
        "casts",
        r#"#include <stdio.h>
int main(void) {
    double d = -3.99; float f = 2.5f;
    int i = (int)d; unsigned u = (unsigned)3.7; long l = (long)1e10;
    printf("%d %u %ld %d\n", i, u, l, (int)f);
    double back = (double)7 / 2; float ff = 1.0f / 3;
    printf("%f %.7f\n", back, ff);
    int arr[2] = {1, 2};
    long addr = (long)&arr[1]; int *q = (int *)addr;
    printf("%d\n", *q);
    char c = (char)300; unsigned char uc = (unsigned char)-1;
    printf("%d %d\n", c, uc);
    _Bool bb = 0.5; _Bool bz = (_Bool)4;
    printf("%d %d\n", bb, bz);
    void *v = arr; int *w = (int *)v;
    printf("%d\n", w[1]);
    printf("%d\n", (int)(float)16777217);
    return 0;
}
"#,
        "-3 3 10000000000 2\n3.500000 0.3333333\n2\n44 255\n1 1\n2\n16777216\n",
    );
}

#[test]
fn pointer_arithmetic_and_difference() {
    check(
        "pointers",
        r#"#include <stdio.h>
int main(void) {
    double a[10];
    for (int i = 0; i < 10; i++) a[i] = i * 0.5;
    double *p = a + 3, *q = &a[8];
    printf("%ld %g %g\n", (long)(q - p), *(p + 2), p[-1]);
    printf("%d %d\n", p < q, q <= p);
    int m[3][4]; int (*row)[4] = m + 1;
    m[1][2] = 42;
    printf("%d %ld\n", (*row)[2], (long)(&m[2][3] - &m[0][0]));
    char *s = "hello"; char *e = s;
    while (*e) e++;
    printf("%ld\n", (long)(e - s));
    int *np = 0;
    printf("%d\n", np == 0);
    return 0;
}
"#,
        "5 2.5 1\n1 0\n42 11\n5\n1\n",
    );
}

#[test]
fn multidimensional_arrays_fixed_and_vla() {
    check(
        "multidim",
        r#"#include <stdio.h>
static double trace(int n, int m, double A[n][m]) {
    double t = 0;
    for (int i = 0; i < n && i < m; i++) t += A[i][i];
    return t;
}
static void fill(int n, int m, double A[n][m]) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) A[i][j] = i * 10 + j;
}
int main(void) {
    int fixed[3][4][5];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) fixed[i][j][k] = i * 100 + j * 10 + k;
    printf("%d %d\n", fixed[2][3][4], fixed[1][0][2]);
    int n = 4, m = 3;
    double vla[n][m];
    fill(n, m, vla);
    printf("%g %g\n", vla[3][2], trace(n, m, vla));
    int k = 5;
    int v2[k];
    for (int i = 0; i < k; i++) v2[i] = i * i;
    printf("%d %d\n", v2[4], (int)(sizeof v2 / sizeof v2[0]));
    return 0;
}
"#,
        "234 102\n32 33\n16 5\n",
    );
}

#[test]
fn sizeof_of_vla() {
    check(
        "sizeof_vla",
        r#"#include <stdio.h>
int main(void) {
    int n = 7;
    double a[n][3];
    char b[n + 1];
    printf("%zu %zu %zu %zu\n", sizeof a, sizeof a[0], sizeof(b), sizeof(int[n]));
    return 0;
}
"#,
        "168 24 8 28\n",
    );
}

#[test]
fn structs_unions_nested_and_anonymous() {
    check(
        "structs",
        r#"#include <stdio.h>
struct Point { int x, y; };
struct Rect { struct Point lo, hi; const char *name; };
union Num { int i; float f; unsigned char bytes[4]; };
struct Tagged { int kind; union { int i; double d; }; struct { short a, b; }; };
int main(void) {
    struct Rect r;
    r.lo.x = 1; r.lo.y = 2; r.hi = r.lo; r.hi.y = 7; r.name = "box";
    struct Rect *pr = &r;
    printf("%d %d %d %d %s\n", pr->lo.x, pr->lo.y, pr->hi.x, pr->hi.y, pr->name);
    union Num u; u.f = 1.0f;
    printf("%x %d\n", u.i, u.bytes[3]);
    struct Tagged t; t.kind = 1; t.d = 2.5; t.a = 3; t.b = 4;
    printf("%d %g %d %d\n", t.kind, t.d, t.a, t.b);
    struct Point pts[3];
    for (int i = 0; i < 3; i++) { pts[i].x = i; pts[i].y = i * i; }
    struct Point *pp = pts + 2;
    printf("%d %d\n", pp->y, pts[1].x);
    return 0;
}
"#,
        "1 2 1 7 box\n3f800000 63\n1 2.5 3 4\n4 1\n",
    );
}

#[test]
fn struct_copy_pass_and_return_by_value() {
    check(
        "struct_values",
        r#"#include <stdio.h>
struct V { double x, y; int tag; };
static struct V add(struct V a, struct V b) {
    struct V r = { a.x + b.x, a.y + b.y, a.tag + b.tag };
    a.x = 100;
    return r;
}
static struct V scale(struct V v, double s) { v.x *= s; v.y *= s; return v; }
int main(void) {
    struct V a = {1, 2, 3}, b = {10, 20, 30};
    struct V c = add(a, b);
    struct V d = scale(c, 2);
    struct V e; e = d; e.tag = 9;
    printf("%g %g %d | %g %g %d | %g %d | %g\n", c.x, c.y, c.tag, d.x, d.y, d.tag, e.x, e.tag, a.x);
    struct V arr[2]; arr[1] = a; arr[0] = arr[1];
    printf("%g\n", arr[0].y);
    return 0;
}
"#,
        "11 22 33 | 22 44 33 | 22 9 | 1\n2\n",
    );
}

#[test]
fn compound_literals_and_designated_initializers() {
    check(
        "initializers",
        r#"#include <stdio.h>
struct In { int a, b; };
struct Out { int k; struct In in; int arr[4]; };
int main(void) {
    struct Out o = { .in.b = 1, .k = 2, .arr[2] = 7 };
    printf("%d %d %d %d %d %d\n", o.k, o.in.a, o.in.b, o.arr[0], o.arr[2], o.arr[3]);
    int a[6] = { 1, [3] = 5, 6 };
    printf("%d %d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4], a[5]);
    int partial[5] = { 9 };
    printf("%d %d\n", partial[0], partial[4]);
    char s[] = "abc";
    printf("%d %s %d\n", (int)sizeof s, s, s[3]);
    int *cl = (int[]){ 4, 5, 6 };
    struct In p = (struct In){ .b = 8 };
    printf("%d %d %d\n", cl[2], p.a, p.b);
    struct In q[2] = { {1, 2}, {3} };
    printf("%d %d\n", q[1].a, q[1].b);
    int mat[2][3] = { {1, 2, 3}, {4} };
    int flat[2][2] = { 1, 2, 3 };
    printf("%d %d %d\n", mat[1][0], mat[1][2], flat[1][0]);
    return 0;
}
"#,
        "2 0 1 0 7 0\n1 0 0 5 6 0\n9 0\n4 abc 0\n6 0 8\n3 0\n4 0 3\n",
    );
}

#[test]
fn bit_fields() {
    check(
        "bitfields",
        r#"#include <stdio.h>
struct Flags { unsigned a : 3; unsigned b : 5; int s : 4; unsigned long wide : 40; };
int main(void) {
    struct Flags f = {0};
    f.a = 5; f.b = 17; f.s = -3; f.wide = 0x123456789aUL;
    printf("%u %u %d %lx\n", f.a, f.b, f.s, (unsigned long)f.wide);
    f.a = 9;
    f.b += 20;
    printf("%u %u %d\n", f.a, f.b, f.s);
    f.s = 7; f.s++;
    printf("%d %zu\n", f.s, sizeof f);
    return 0;
}
"#,
        "5 17 -3 123456789a\n1 5 -3\n-8 8\n",
    );
}

#[test]
fn enums_and_typedefs() {
    check(
        "enums",
        r#"#include <stdio.h>
enum Color { RED, GREEN = 5, BLUE, LAST = BLUE + 10 };
typedef enum Color color_t;
typedef struct { int w, h; } Size;
typedef Size *SizePtr;
typedef int Vec3[3];
int main(void) {
    color_t c = BLUE;
    Size s = { 3, 4 }; SizePtr sp = &s;
    Vec3 v = { 1, 2, 3 };
    printf("%d %d %d %d %d %d\n", RED, c, LAST, sp->w * sp->h, v[2], (int)sizeof(Vec3));
    switch (c) { case BLUE: printf("blue\n"); break; default: printf("other\n"); }
    return 0;
}
"#,
        "0 6 16 12 3 12\nblue\n",
    );
}

#[test]
fn function_pointers() {
    check(
        "fnptr",
        r#"#include <stdio.h>
static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
typedef int (*binop)(int, int);
struct Op { const char *name; binop f; };
static int apply(binop f, int a, int b) { return f(a, b); }
int main(void) {
    binop ops[2] = { add, &mul };
    struct Op table[] = { { "add", add }, { "mul", mul } };
    int (*g)(int, int) = ops[1];
    printf("%d %d %d\n", ops[0](2, 3), (*g)(4, 5), apply(add, 6, 7));
    for (int i = 0; i < 2; i++) printf("%s=%d ", table[i].name, table[i].f(3, 3));
    printf("\n%d\n", ops[0] == add);
    return 0;
}
"#,
        "5 20 13\nadd=6 mul=9 \n1\n",
    );
}

#[test]
fn recursion() {
    check(
        "recursion",
        r#"#include <stdio.h>
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int is_even(int n);
static int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }
static int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
static void hanoi(int n, int *moves) { if (n == 0) return; hanoi(n - 1, moves); (*moves)++; hanoi(n - 1, moves); }
int main(void) {
    int moves = 0;
    hanoi(6, &moves);
    printf("%ld %d %d %d\n", fib(15), is_even(10), is_odd(7), moves);
    return 0;
}
"#,
        "610 1 1 63\n",
    );
}

#[test]
fn switch_statements() {
    check(
        "switch",
        r#"#include <stdio.h>
static int classify(int x) {
    int r = 0;
    switch (x) {
    case 1: r += 1;
    case 2: r += 10; break;
    default: r = -1;
    case 3: r += 100; break;
    case 4: { int inner = x * 2; r = inner; } break;
    }
    return r;
}
static int nested(int a, int b) {
    switch (a) {
    case 0:
        switch (b) { case 0: return 1; case 1: break; default: return 3; }
        return 2;
    case 1: return 4;
    }
    return 5;
}
static void duff(int *to, const int *from, int count) {
    int n = (count + 3) / 4;
    switch (count % 4) {
    case 0: do { *to++ = *from++;
    case 3:      *to++ = *from++;
    case 2:      *to++ = *from++;
    case 1:      *to++ = *from++;
            } while (--n > 0);
    }
}
int main(void) {
    printf("%d %d %d %d %d\n", classify(1), classify(2), classify(3), classify(4), classify(9));
    printf("%d %d %d %d %d\n", nested(0, 0), nested(0, 1), nested(0, 2), nested(1, 0), nested(2, 0));
    int src[7] = {1, 2, 3, 4, 5, 6, 7}, dst[7] = {0};
    duff(dst, src, 7);
    int sum = 0;
    for (int i = 0; i < 7; i++) sum += dst[i] * (i + 1);
    printf("%d\n", sum);
    int hits = 0;
    for (int i = 0; i < 10; i++) {
        switch (i % 3) { case 0: continue; case 1: hits++; break; default: hits += 10; }
        if (hits > 25) break;
    }
    printf("%d\n", hits);
    return 0;
}
"#,
        "11 10 100 8 99\n1 2 3 4 5\n140\n33\n",
    );
}

#[test]
fn loops_with_break_and_continue() {
    check(
        "loops",
        r#"#include <stdio.h>
int main(void) {
    int s = 0;
    for (int i = 0; i < 20; i++) { if (i % 2) continue; if (i > 12) break; s += i; }
    int w = 0, k = 0;
    while (1) { k++; if (k == 3) continue; if (k > 6) break; w += k; }
    int d = 0, j = 10;
    do { j -= 3; if (j == 4) continue; d += j; } while (j > 0);
    int e = 0;
    do e++; while (0);
    int n = 0;
    for (;;) { if (++n >= 4) break; }
    printf("%d %d %d %d %d %d\n", s, w, k, d, e, n);
    int total = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) { if (b > a) break; if (b == 1) continue; total += a * 10 + b; }
    printf("%d\n", total);
    return 0;
}
"#,
        "42 18 7 6 1 4\n147\n",
    );
}

/// `do ... while (0)`, the idiom that makes a macro of statements one statement, runs its
/// body once: lowered as that block, `break` and `continue` both leaving it, and no loop.
#[test]
fn a_do_while_zero_is_its_block_run_once() {
    let source = r#"#include <stdio.h>
#define STEP(x) do { if ((x) % 3 == 0) break; if ((x) % 3 == 1) continue; s += (x); } while (0)
int main(void) {
    int s = 0, t = 0;
    for (int i = 0; i < 10; i++) { STEP(i); t += i; }
    do { t += 100; if (t > 0) continue; t = -1; } while (0);
    do t++; while (0 > t);
    printf("%d %d\n", s, t);
    return 0;
}
"#;
    check("do_once", source, "15 146\n");
    let (_dir, unit) = load("do_once", source);
    let kinds: Vec<LoopKind> = unit.lowered.program.functions[0]
        .loops
        .iter()
        .map(|l| l.kind)
        .collect();
    // The `for`, and the `do` whose condition is not the literal 0.
    assert_eq!(kinds, [LoopKind::For, LoopKind::DoWhile]);
}

#[test]
fn goto_forward_and_backward() {
    check(
        "goto",
        r#"#include <stdio.h>
int main(void) {
    int i = 0, s = 0;
again:
    s += i;
    if (++i < 5) goto again;
    if (s > 5) goto skip;
    s = -1;
skip:
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (a * b == 2) goto out;
    s = -2;
out:
    printf("%d %d\n", s, i);
    return 0;
}
"#,
        "10 5\n",
    );
}

#[test]
fn early_return_from_nested_loops() {
    check(
        "early_return",
        r#"#include <stdio.h>
static int find(int n, int target) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            while (1) {
                if (i * n + j == target) return i * 100 + j;
                break;
            }
    return -1;
}
int main(void) {
    printf("%d %d\n", find(5, 13), find(3, 100));
    return find(4, 6);
}
"#,
        "203 -1\n",
    );
}

#[test]
fn static_locals_and_globals_with_initializers() {
    check(
        "statics",
        r#"#include <stdio.h>
int g = 42;
static double gd = 1.5;
int garr[5] = { 1, 2, [4] = 9 };
const char *gname = "global";
int *gp = &garr[1];
struct Cfg { int id; const char *label; double w[2]; } cfg = { 7, "cfg", { 0.5 } };
char gbuf[8] = "hi";
int zero;
static int counter(void) { static int n = 100; static int calls; calls++; return n++ + calls; }
int main(void) {
    int a = counter(), b = counter(), c = counter();
    printf("%d %d %d\n", a, b, c);
    g++; gd *= 2;
    printf("%d %g %d %d %s %d %d\n", g, gd, garr[4], garr[3], gname, *gp, zero);
    printf("%d %s %g %g %s\n", cfg.id, cfg.label, cfg.w[0], cfg.w[1], gbuf);
    return g - 43;
}
"#,
        "101 103 105\n43 3 9 0 global 2 0\n7 cfg 0.5 0 hi\n",
    );
}

#[test]
fn string_literals() {
    check(
        "strings",
        r#"#include <stdio.h>
int main(void) {
    const char *s = "tab\there\n" "joined";
    int n = 0;
    while (s[n]) n++;
    printf("%d [%s] %c %d\n", n, s, "xyz"[1], "\x41\101"[1]);
    char buf[] = "q\"uote";
    printf("%s %d\n", buf, (int)sizeof buf);
    puts("puts line");
    putchar('!'); putchar('\n');
    printf("%5d|%-5d|%05.1f|%e|%g|%g|%x|%%|%3s|%.2s\n", 42, 42, 3.14159, 12345.678, 0.0001, 1e20, 255, "ab", "abcdef");
    return 0;
}
"#,
        "15 [tab\there\njoined] y 65\nq\"uote 7\nputs line\n!\n   42|42   |003.1|1.234568e+04|0.0001|1e+20|ff|%| ab|ab\n",
    );
}

#[test]
fn heap_and_library_calls() {
    check(
        "heap",
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
int main(void) {
    int n = 6;
    double *a = malloc(n * sizeof *a);
    int *z = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) a[i] = sqrt((double)i) + fabs(-1.0);
    memset(z, 0, n * sizeof(int));
    memcpy(z, (int[]){ 3, 4 }, 2 * sizeof(int));
    printf("%.3f %d %d %d %.2f %.2f\n", a[4], z[0], z[1], abs(-5), fmax(2.0, 3.5), floor(-1.5));
    printf("%d %.4f %.4f\n", atoi("123"), exp(1.0), sin(0.0) + cos(0.0));
    free(a); free(z);
    exit(3);
}
"#,
        "3.000 3 4 5 3.50 -2.00\n123 2.7183 1.0000\n",
    );
}

#[test]
fn complex_parts_are_loads_of_the_components() {
    // `creal`/`cimag` read the parts in place (C99 6.2.5p13), `cabs`/`carg` through
    // `hypot`/`atan2`; elements, members and dereferences of complex objects alike.
    check(
        "complex_parts",
        r#"#include <complex.h>
#include <stdio.h>
struct wave { int n; double _Complex amp[3]; };
static double dot(const double _Complex a, const double _Complex b) {
    return creal(a) * creal(b) + cimag(a) * cimag(b);
}
static double part_sum(const double _Complex *z, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += creal(z[i]) - 2 * cimag(z[i]);
    return s;
}
int main(void) {
    double _Complex z[3];
    float _Complex w;
    struct wave v;
    double *p = (double *)z;
    for (int i = 0; i < 6; i++) p[i] = i + 1;
    ((float *)&w)[0] = 3; ((float *)&w)[1] = 4;
    v.amp[2] = z[1];
    printf("%g %g %g\n", creal(z[1]), cimag(*z), part_sum(z, 3));
    printf("%g %g %.6f\n", cabs(v.amp[2]), (double)cabsf(w), carg(z[0]));
    printf("%g %g\n", (double)crealf(w), (double)cimagf(w));
    printf("%g\n", dot(z[0], z[1]));
    return 0;
}
"#,
        "3 2 -15\n5 5 1.107149\n3 4\n11\n",
    );
}

/// Identifiers beyond ASCII: UTF-8 (which gcc's preprocessor writes as universal character
/// names) and universal character names written by hand lower and run like any other.
#[test]
fn non_ascii_identifiers() {
    check(
        "non_ascii",
        "#include <stdio.h>\n\
         int main(void) {\n\
         \x20   int größe = 2, \\u00e9t\\u00e9 = 5, \\u00e9t = 7;\n\
         \x20   for (int i = 0; i < 4; i++)\n\
         \x20       größe += i * \\u00e9t\\u00e9;\n\
         \x20   printf(\"%d %d\\n\", größe, ét);\n\
         \x20   return 0;\n\
         }\n",
        "32 7\n",
    );
}

/// How the IR prints every load of the first function of `source`.
fn rendered_loads(name: &str, source: &str) -> Vec<String> {
    let (_dir, unit) = load(name, source);
    let func = &unit.lowered.program.functions[0];
    func.values()
        .filter(|v| matches!(func.inst(*v).kind, frontend::ir::InstKind::Load { .. }))
        .map(|v| frontend::ir::print::render_value(func, v))
        .collect()
}

#[test]
fn elements_of_local_arrays_print_as_elements_not_addresses() {
    // `mesh[0]` read from a local array: the load's address is the slot's address plus an
    // offset, which printed as `&mesh[0]` (so reports multiplied addresses).
    let rendered = rendered_loads(
        "local_array_elements",
        "int f(void) { int mesh[3] = {1, 2, 3}; int s = 0;\n\
         for (int i = 0; i < mesh[0] * mesh[2]; i++) s += i; return s; }\n",
    );
    assert!(rendered.contains(&"mesh[0]".to_string()), "{rendered:?}");
    assert!(rendered.contains(&"mesh[2]".to_string()), "{rendered:?}");
    assert!(!rendered.iter().any(|r| r.contains('&')), "{rendered:?}");
    // A field of an element of an array of structs: `nodes[k].n`, not `&nodes[k]->n`.
    let rendered = rendered_loads(
        "array_of_struct_fields",
        "struct node { int n; double w; };\n\
         double g(struct node *nodes, int k) { return nodes[k].n * nodes[k + 1].w; }\n",
    );
    assert!(rendered.contains(&"nodes[k].n".to_string()), "{rendered:?}");
    assert!(
        rendered.contains(&"nodes[k + 1].w".to_string()),
        "{rendered:?}"
    );
}

/// The compiler declares its builtins (`__builtin_*`, `__atomic_*`, `__sync_*`): calls to
/// them are not implicit declarations, and their results have the manual's types. A name
/// nobody declares still is one.
#[test]
fn compiler_builtins_are_not_implicit_declarations() {
    use frontend::ir::{Callee, InstKind};
    use frontend::types::{FloatKind, IntRank, Type};
    let (_dir, unit) = load(
        "builtins",
        r#"
        #include <stdarg.h>
        static int flag;
        double first(int n, ...) {
            va_list ap;
            va_start(ap, n);
            double d = va_arg(ap, double);
            va_end(ap);
            return d;
        }
        unsigned long f(unsigned short h, unsigned int w, unsigned long long x, long *counter) {
            unsigned long r = __builtin_bswap16(h) + __builtin_bswap32(w) + __builtin_bswap64(x);
            r += __builtin_clzll(x) + __builtin_popcount(w);
            long old = __atomic_load_n(counter, __ATOMIC_RELAXED);
            __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
            __sync_synchronize();
            long sum;
            if (__builtin_add_overflow(old, 1L, &sum)) return 0;
            float inf = __builtin_inff();
            return r + (unsigned long)sum + (inf > 0) + frobnicate(r);
        }
        "#,
    );
    let implicit: Vec<&str> = unit
        .lowered
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .filter(|m| m.contains("implicit declaration"))
        .collect();
    assert_eq!(
        implicit,
        ["implicit declaration of function `frobnicate`"],
        "only the undeclared function is an implicit declaration"
    );
    let program = &unit.lowered.program;
    let f = program.functions.iter().find(|f| f.name == "f").unwrap();
    let result_of = |name: &str| {
        let inst = f
            .insts
            .iter()
            .find(|i| matches!(&i.kind, InstKind::Call { callee: Callee::Direct(n), .. } if n == name))
            .unwrap_or_else(|| panic!("a call of {name}"));
        program.types.get(inst.ty).clone()
    };
    let unsigned = |rank| Type::Int {
        rank,
        signed: false,
    };
    assert_eq!(result_of("__builtin_bswap16"), unsigned(IntRank::Short));
    assert_eq!(result_of("__builtin_bswap32"), unsigned(IntRank::Int));
    assert_eq!(result_of("__builtin_bswap64"), unsigned(IntRank::Long));
    assert_eq!(
        result_of("__builtin_clzll"),
        Type::Int {
            rank: IntRank::Int,
            signed: true
        }
    );
    assert_eq!(
        result_of("__atomic_load_n"),
        Type::Int {
            rank: IntRank::Long,
            signed: true
        },
        "the counter's type"
    );
    assert_eq!(result_of("__atomic_store_n"), Type::Void);
    assert_eq!(result_of("__sync_synchronize"), Type::Void);
    assert_eq!(result_of("__builtin_add_overflow"), unsigned(IntRank::Bool));
    assert_eq!(result_of("__builtin_inff"), Type::Float(FloatKind::Float));
}

/// C11 atomics through `<stdatomic.h>`: GCC's generic macros declare `__auto_type`
/// temporaries lang-c cannot parse; warpwise's wrapper header makes them the builtins they
/// stand for, so the file parses and the calls are what the program does.
#[test]
fn stdatomic_generic_functions_parse_as_their_builtins() {
    use frontend::ir::{Callee, InstKind};
    let (_dir, unit) = load(
        "stdatomic",
        r#"
        #include <stdatomic.h>
        static atomic_int flag;
        static _Atomic long counter;
        long f(int v) {
            atomic_init(&counter, 0);
            atomic_store_explicit(&flag, v, memory_order_release);
            long seen = atomic_load(&counter);
            int expected = 0;
            atomic_compare_exchange_strong(&flag, &expected, 1);
            return seen + atomic_fetch_add_explicit(&counter, 2, memory_order_relaxed);
        }
        "#,
    );
    assert!(unit.lowered.errors.is_empty(), "{:?}", unit.lowered.errors);
    let f = unit.lowered.program.function("f").expect("f lowered");
    let called: Vec<&str> = f
        .insts
        .iter()
        .filter_map(|i| match &i.kind {
            InstKind::Call {
                callee: Callee::Direct(n),
                ..
            } => Some(n.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        called,
        [
            "__atomic_store_n",
            "__atomic_store_n",
            "__atomic_load_n",
            "__atomic_compare_exchange_n",
            "__atomic_fetch_add"
        ]
    );
}

#[test]
fn loops_of_one_macro_expansion_get_ranked_ids() {
    // The loops of `TWO`'s expansion map to the macro's place, 6:3, or to a token of its
    // arguments (`a` at 6:8: the second `for`'s first token there): the `while` keeps the
    // plain id, the first `for` gets `#2`; the loop after keeps its own place. The
    // `do ... while (0)` around them runs once: it is no loop.
    let source = "#define TWO(a, n) do { int k = 0; while (k < (n)) (a)[k++] = 1; \\\n    \
                  for (int i = 0; i < (n); i++) (a)[i] = 0; \\\n    \
                  for (int j = 0; j < (n); j++) (a)[j] += 1; } while (0)\n\
                  void f(double *a, int n)\n{\n  TWO(a, n);\n  for (int k = 0; k < n; k++) a[k] *= 2;\n}\n";
    let (_dir, unit) = load("macro_loops", source);
    let func = &unit.lowered.program.functions[0];
    let ids: Vec<String> = func
        .loops
        .iter()
        .map(|l| {
            let id = unit.loop_id(l);
            id.rsplit('/').next().unwrap_or(&id).to_string()
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "macro_loops.c:6:3",
            "macro_loops.c:6:3#2",
            "macro_loops.c:6:8",
            "macro_loops.c:7:3"
        ],
        "{ids:?}"
    );
}

#[test]
fn a_large_numeric_table_keeps_its_length_and_says_its_values_are_gone() {
    // 20,000 numbers (over 64 KiB of text) in a flat table and 4,000 braced rows: lengths
    // (and with them `sizeof`) stay, the values are left out of the parse, and the
    // interpreter refuses to run on zeros.
    let flat: Vec<String> = (0..20_000).map(|k| format!("{}", k * 7 - 3)).collect();
    let rows: Vec<String> = (0..4_000)
        .map(|k| format!("{{{k}, -{k}, 0x{k:x}}}"))
        .collect();
    let source = format!(
        "static const int ops[] = {{\n{}\n}};\nstatic const long rows[][3] = {{\n{}\n}};\n\
         int main(void) {{ return (int)(sizeof ops / sizeof ops[0] + sizeof rows / sizeof rows[0]) - 24000; }}\n",
        flat.join(",\n"),
        rows.join(",\n")
    );
    let (_dir, unit) = load("numeric_tables", &source);
    let program = &unit.lowered.program;
    for (name, bytes) in [("ops", 4 * 20_000), ("rows", 8 * 3 * 4_000)] {
        let g = program
            .globals
            .iter()
            .find(|g| g.name == name)
            .expect("the table");
        assert!(g.values_elided, "{name}");
        assert_eq!(program.types.size_of(g.ty), Some(bytes), "{name}");
    }
    let refused = Interpreter::new(program)
        .run_main(&[])
        .expect_err("no run on zeros");
    assert!(
        refused.message.contains("the values of the table `ops`"),
        "{refused}"
    );
    // Compiled, the program agrees on the lengths.
    assert_eq!(native("numeric_tables", &source).1, 0);
}

#[test]
fn string_literals_print_as_c_literals_never_as_value_numbers() {
    // A literal passed to a call (`__FILE__`, a format): reports that name what a callee
    // reads through it print the literal, cut after 24 characters.
    let (_dir, unit) = load(
        "string_literals",
        "int tag(const char *s, int i);\n\
         int f(int i) { return tag(\"a \\\"q\\\"\\n\", i) + tag(\"abcdefghijklmnopqrstuvwxyz\", i); }\n",
    );
    let func = unit.lowered.program.function("f").expect("f");
    let rendered: Vec<String> = func
        .values()
        .filter(|v| matches!(func.inst(*v).kind, frontend::ir::InstKind::StringAddr(_)))
        .map(|v| frontend::ir::print::render_value(func, v))
        .collect();
    assert_eq!(
        rendered,
        ["\"a \\\"q\\\"\\n\"", "\"abcdefghijklmnopqrstuvw...\""],
        "{rendered:?}"
    );
}
