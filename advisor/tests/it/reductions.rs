//! Reductions of every shape: scalar (`+ * & | ^ && ||`, min/max in
//! every spelling), arg-min/arg-max, an invariant element or struct field, a histogram,
//! several in one loop. Each positive fixture is checked twice: statically (`check`: the
//! loop's verdict and its reductions) and by a concrete execution (`run_check`): the
//! fixture is compiled with `cc` together with a harness that runs the loop sequentially,
//! then one iteration at a time in a permuted order with every partial result combined by
//! the *recognised* operator, and both results must agree (exactly for integers, within
//! rounding for floating point). Negative fixtures must not be reductions and must not be
//! friendly; one shows the execution check fails when the operator is wrong.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, RedOp, Reduction, ReductionKind, TieBreak, Verdict};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;
use tempfile::TempDir;

/// A fresh, private directory per call (tests run in parallel), removed when the guard is
/// dropped: callers keep it while they use its files.
fn scratch(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("warpwise-reductions-{name}-"))
        .tempdir()
        .unwrap()
}

/// The report of the loop over `var` in `function` of `source`.
fn analyse(source: &str, function: &str, var: &str) -> LoopReport {
    let dir = scratch(function);
    let file = dir.path().join("fixture.c");
    std::fs::write(&file, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("fixture loads");
    let reports = analyze_unit(&unit, &Filter::default());
    reports
        .into_iter()
        .find(|r| {
            r.function == function
                // A loop with a `break` has no normalized induction; it is the only loop.
                && r.induction.as_ref().is_none_or(|i| i.var == var)
        })
        .unwrap_or_else(|| panic!("no loop over `{var}` in `{function}`"))
}

/// One expected reduction: target, operator, kind, index variables.
type Expected<'a> = (&'a str, &'a str, ReductionKind, &'a [&'a str]);

/// The loop over `var` in `function` has exactly the `expected` reductions and `verdict`.
/// Returns the reductions for the execution check.
fn check(
    source: &str,
    function: &str,
    var: &str,
    verdict: Verdict,
    expected: &[Expected],
) -> Vec<Reduction> {
    let report = analyse(source, function, var);
    let got: Vec<(String, String, ReductionKind, Vec<String>)> = report
        .reductions
        .iter()
        .map(|r| {
            (
                r.target.clone(),
                r.operator.to_string(),
                r.kind,
                r.index.clone(),
            )
        })
        .collect();
    let want: Vec<(String, String, ReductionKind, Vec<String>)> = expected
        .iter()
        .map(|(t, o, k, i)| {
            (
                t.to_string(),
                o.to_string(),
                *k,
                i.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(got, want, "{report:#?}");
    assert_eq!(report.verdict, verdict, "{report:#?}");
    // Every reduction is a note (WW102/WW103), never a reason against the loop.
    for r in &report.reductions {
        assert!(!r.strategy.is_empty() && !r.c_type.is_empty(), "{r:?}");
        let floating = r.c_type == "double" || r.c_type == "float";
        let caveat = report
            .assumptions
            .iter()
            .any(|a| a.contains("reassociating the floating-point"));
        if floating && matches!(r.operator, RedOp::Sum | RedOp::Product) {
            assert!(caveat, "{:?}", report.assumptions);
        }
    }
    report.reductions
}

/// A loop that must not be a reduction: none reported, and not friendly.
fn check_not(source: &str, function: &str, var: &str) {
    let report = analyse(source, function, var);
    assert!(report.reductions.is_empty(), "{report:#?}");
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
}

// ---------------------------------------------------------------------------------------
// The execution check.

/// `name` as a C identifier part: `acc->sum` -> `acc_sum`.
fn ident(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    s.split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

fn floating(ty: &str) -> bool {
    matches!(ty, "float" | "double")
}

/// The C expression combining partial results `a` and `b` with the operator.
fn combine(op: &str) -> &'static str {
    match op {
        "+" => "a + b",
        "*" => "a * b",
        "&" => "a & b",
        "|" => "a | b",
        "^" => "a ^ b",
        "&&" => "a && b",
        "||" => "a || b",
        "min" => "(b < a ? b : a)",
        "max" => "(b > a ? b : a)",
        // A partial result that assigned nothing is the sentinel `identity`.
        "=" => "(b != (-12345) ? b : a)",
        other => panic!("operator {other}"),
    }
}

/// The identity of the operator for type `ty`.
fn identity(op: &str, ty: &str) -> String {
    let limit = |max: bool| -> String {
        match (ty, max) {
            ("float" | "double", true) => "INFINITY".into(),
            ("float" | "double", false) => "-INFINITY".into(),
            ("int", true) => "INT_MAX".into(),
            ("int", false) => "INT_MIN".into(),
            ("long" | "long long", true) => "LLONG_MAX".into(),
            ("long" | "long long", false) => "LLONG_MIN".into(),
            (_, true) => format!("(({ty})~({ty})0)"),
            (_, false) => "0".into(),
        }
    };
    match op {
        "+" | "|" | "^" | "||" => "0".into(),
        "*" | "&&" => "1".into(),
        "&" => format!("(({ty})~({ty})0)"),
        "min" => limit(true),
        "max" => limit(false),
        "=" => "(-12345)".into(),
        other => panic!("operator {other}"),
    }
}

/// A starting value that is not the identity, so combining with it matters.
fn start(op: &str) -> &'static str {
    match op {
        "+" => "3",
        "*" => "2",
        "&" => "0x7ffffff5",
        "|" => "8",
        "^" => "5",
        "&&" => "1",
        "||" => "0",
        "min" => "50",
        "max" => "-50",
        "=" => "7",
        other => panic!("operator {other}"),
    }
}

const PERMUTE: &str = r#"
static void permutation(int *perm, int n)
{
    unsigned s = 12345u;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        int j = (int)((s >> 8) % (unsigned)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
"#;

/// The harness for one reduction `r` of a fixture following the protocol: `setup()` fills
/// the inputs, `N` is the trip count; scalar: `T run_<t>(T init, int lo, int hi)`; element:
/// `T *target_<t>(void)`, `void run_<t>(int lo, int hi)`; histogram: `T *bins_<t>(void)`,
/// `NBINS_<t>`, `void run_<t>(int lo, int hi)`; arg-min/max: `void run_<t>(T v0, int i0,
/// int lo, int hi, T *v, int *i)` with `INIT_IDX`. Prints the sequential and the combined
/// results on two lines.
fn harness(r: &Reduction, operator: &str) -> String {
    let t = ident(&r.target);
    let ty = &r.c_type;
    let fmt = if floating(ty) { "%.17g" } else { "%lld" };
    let cast = if floating(ty) {
        "(double)"
    } else {
        "(long long)"
    };
    let mut h = format!(
        "#include <stdio.h>\n#include <math.h>\n#include <limits.h>\n{PERMUTE}\n\
         static {ty} combine({ty} a, {ty} b) {{ return {}; }}\n\
         static {ty} identity(void) {{ return {}; }}\n",
        combine(operator),
        identity(operator, ty)
    );
    let init = start(operator);
    let body = match r.kind {
        ReductionKind::Scalar => format!(
            "    {ty} seq = run_{t}(({ty}){init}, 0, N);\n\
             {ty} acc = identity();\n\
             for (int k = 0; k < N; k++)\n\
                 acc = combine(acc, run_{t}(identity(), perm[k], perm[k] + 1));\n\
             {ty} par = combine(({ty}){init}, acc);\n\
             printf(\"{fmt}\\n{fmt}\\n\", {cast}seq, {cast}par);\n"
        ),
        ReductionKind::Element => format!(
            "    *target_{t}() = ({ty}){init};\n\
             run_{t}(0, N);\n\
             {ty} seq = *target_{t}();\n\
             {ty} acc = identity();\n\
             for (int k = 0; k < N; k++) {{\n\
                 *target_{t}() = identity();\n\
                 run_{t}(perm[k], perm[k] + 1);\n\
                 acc = combine(acc, *target_{t}());\n\
             }}\n\
             {ty} par = combine(({ty}){init}, acc);\n\
             printf(\"{fmt}\\n{fmt}\\n\", {cast}seq, {cast}par);\n"
        ),
        ReductionKind::Histogram => format!(
            "    {ty} *h = bins_{t}();\n\
             static {ty} seq[NBINS_{t}], acc[NBINS_{t}];\n\
             for (int b = 0; b < NBINS_{t}; b++) h[b] = ({ty})(b % 7);\n\
             run_{t}(0, N);\n\
             for (int b = 0; b < NBINS_{t}; b++) {{ seq[b] = h[b]; acc[b] = identity(); }}\n\
             for (int k = 0; k < N; k++) {{\n\
                 for (int b = 0; b < NBINS_{t}; b++) h[b] = identity();\n\
                 run_{t}(perm[k], perm[k] + 1);\n\
                 for (int b = 0; b < NBINS_{t}; b++) acc[b] = combine(acc[b], h[b]);\n\
             }}\n\
             for (int b = 0; b < NBINS_{t}; b++) printf(\"{fmt} \", {cast}seq[b]);\n\
             printf(\"\\n\");\n\
             for (int b = 0; b < NBINS_{t}; b++) printf(\"{fmt} \", {cast}combine(({ty})(b % 7), acc[b]));\n\
             printf(\"\\n\");\n"
        ),
        ReductionKind::Argmin | ReductionKind::Argmax => {
            // Partial results carry the iteration they come from; ties go by iteration order.
            let better = if operator == "min" { "<" } else { ">" };
            let later_wins = r.strategy.contains("latest");
            let tie = if later_wins { "q.k > p.k" } else { "q.k < p.k" };
            h.push_str(&format!(
                "typedef struct {{ {ty} v; int idx; int k; int set; }} pair;\n\
                 static pair pick(pair p, pair q) {{\n\
                     if (!q.set) return p;\n\
                     if (!p.set) return q;\n\
                     return (q.v {better} p.v || (q.v == p.v && {tie})) ? q : p;\n\
                 }}\n"
            ));
            format!(
                "    {ty} sv; int si;\n\
                 run_{t}(({ty}){init}, INIT_IDX, 0, N, &sv, &si);\n\
                 pair acc = {{ identity(), INIT_IDX, 0, 0 }};\n\
                 for (int k = 0; k < N; k++) {{\n\
                     {ty} v; int i;\n\
                     run_{t}(identity(), INIT_IDX, perm[k], perm[k] + 1, &v, &i);\n\
                     pair q = {{ v, i, perm[k], i != INIT_IDX }};\n\
                     acc = pick(acc, q);\n\
                 }}\n\
                 pair first = {{ ({ty}){init}, INIT_IDX, -1, 1 }};\n\
                 pair par = pick(first, acc);\n\
                 printf(\"{fmt} %d\\n{fmt} %d\\n\", {cast}sv, si, {cast}par.v, par.idx);\n"
            )
        }
    };
    h.push_str(&format!(
        "int main(void)\n{{\n    static int perm[N];\n    setup();\n    permutation(perm, N);\n{body}    return 0;\n}}\n"
    ));
    h
}

/// Compiles `source` with the harness for `r` (combining with `operator`) and runs it;
/// returns the sequential and the permuted results, one line each.
fn execute(source: &str, r: &Reduction, operator: &str) -> (String, String) {
    let dir = scratch(&ident(&r.target));
    let file = dir.path().join("run.c");
    std::fs::write(&file, format!("{source}\n{}", harness(r, operator))).unwrap();
    let exe = dir.path().join("run");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args(["-std=c99", "-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&file)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "does not compile:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&file).unwrap()
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let mut lines = stdout.lines();
    (
        lines.next().unwrap_or_default().to_string(),
        lines.next().unwrap_or_default().to_string(),
    )
}

/// Whether two printed results agree: exactly, or within rounding for floating point.
fn agree(seq: &str, par: &str, floating: bool) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (
        seq.split_whitespace().collect(),
        par.split_whitespace().collect(),
    );
    a.len() == b.len()
        && !a.is_empty()
        && a.iter().zip(&b).all(|(x, y)| {
            if !floating || x == y {
                return x == y;
            }
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(x), Ok(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                _ => false,
            }
        })
}

/// Every reduction of `reductions` gives the same result sequentially and combined in a
/// permuted order with its operator.
fn run_check(source: &str, reductions: &[Reduction]) {
    assert!(!reductions.is_empty());
    for r in reductions {
        let (seq, par) = execute(source, r, r.operator.symbol());
        assert!(
            agree(&seq, &par, floating(&r.c_type)),
            "{}: sequential {seq} vs permuted {par}",
            r.describe()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Scalars.

const SUM: &str = r#"
#define N 97
static double a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = (i * 37 % 101) / 7.0 - 5.0; }
double dot(double s, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        s += a[i] * 0.5;
    return s;
}
static double run_s(double init, int lo, int hi) { return dot(init, a, lo, hi); }
"#;

#[test]
fn a_scalar_sum_is_friendly() {
    let r = check(
        SUM,
        "dot",
        "i",
        Verdict::Friendly,
        &[("s", "+", ReductionKind::Scalar, &[])],
    );
    run_check(SUM, &r);
}

const MASKED: &str = r#"
#define N 90
static double a[N], w[N];
static void setup(void) {
    for (int i = 0; i < N; i++) { a[i] = i % 13 - 6; w[i] = i % 3 - 1; }
}
double masked(double s, const double *a, const double *w, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (w[i] > 0)
            s += a[i] * a[i];
        else
            s -= a[i];
    }
    return s;
}
static double run_s(double init, int lo, int hi) { return masked(init, a, w, lo, hi); }
"#;

#[test]
fn a_conditional_sum_is_a_reduction() {
    let r = check(
        MASKED,
        "masked",
        "i",
        Verdict::Friendly,
        &[("s", "+", ReductionKind::Scalar, &[])],
    );
    run_check(MASKED, &r);
}

const PRODUCT: &str = r#"
#define N 80
static int a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = i * 7 % 5; }
unsigned long long product(unsigned long long p, const int *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        p *= 1 + a[i];
    return p;
}
static unsigned long long run_p(unsigned long long init, int lo, int hi) { return product(init, a, lo, hi); }
"#;

#[test]
fn a_wrapping_integer_product_is_a_reduction() {
    let r = check(
        PRODUCT,
        "product",
        "i",
        Verdict::Friendly,
        &[("p", "*", ReductionKind::Scalar, &[])],
    );
    run_check(PRODUCT, &r);
}

const BITS: &str = r#"
#define N 64
static unsigned a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = (unsigned)(i * 2654435761u) | 1u; }
void bits(unsigned *ox, unsigned *oy, unsigned *oz, unsigned x, unsigned y, unsigned z,
          const unsigned *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        x |= a[i] & 0xf0f0u;
        y &= a[i];
        z ^= a[i] >> 3;
    }
    *ox = x; *oy = y; *oz = z;
}
static unsigned run_x(unsigned v, int lo, int hi) { unsigned x, y, z; bits(&x, &y, &z, v, ~0u, 0u, a, lo, hi); return x; }
static unsigned run_y(unsigned v, int lo, int hi) { unsigned x, y, z; bits(&x, &y, &z, 0u, v, 0u, a, lo, hi); return y; }
static unsigned run_z(unsigned v, int lo, int hi) { unsigned x, y, z; bits(&x, &y, &z, 0u, ~0u, v, a, lo, hi); return z; }
"#;

#[test]
fn several_bitwise_reductions_in_one_loop() {
    let r = check(
        BITS,
        "bits",
        "i",
        Verdict::Friendly,
        &[
            ("x", "|", ReductionKind::Scalar, &[]),
            ("y", "&", ReductionKind::Scalar, &[]),
            ("z", "^", ReductionKind::Scalar, &[]),
        ],
    );
    run_check(BITS, &r);
}

const LOGICAL: &str = r#"
#define N 70
static int a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = i * 11 % 50; }
int all_small(int ok, const int *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        ok = ok && a[i] < 49;
    return ok;
}
int any_equal(int any, const int *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        any = any || a[i] == 33;
    return any;
}
static int run_ok(int init, int lo, int hi) { return all_small(init, a, lo, hi); }
static int run_any(int init, int lo, int hi) { return any_equal(init, a, lo, hi); }
"#;

#[test]
fn logical_and_and_or_are_reductions() {
    let r = check(
        LOGICAL,
        "all_small",
        "i",
        Verdict::Friendly,
        &[("ok", "&&", ReductionKind::Scalar, &[])],
    );
    run_check(LOGICAL, &r);
    let r = check(
        LOGICAL,
        "any_equal",
        "i",
        Verdict::Friendly,
        &[("any", "||", ReductionKind::Scalar, &[])],
    );
    run_check(LOGICAL, &r);
}

const MINMAX: &str = r#"
#include <math.h>
#define N 99
static double a[N], num[N], den[N];
static void setup(void) {
    for (int i = 0; i < N; i++) {
        a[i] = (i * 53 % 97) - 48.5;
        num[i] = i % 17 - 8;
        den[i] = i % 5 - 2;
    }
}
double ternary(double m, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        m = a[i] > m ? a[i] : m;
    return m;
}
double statement(double m, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        if (a[i] < m)
            m = a[i];
    return m;
}
double library(double m, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        m = fmax(a[i] * 2.0, m);
    return m;
}
double quotient(double tmin, const double *n, const double *d, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (d[i] != 0) {
            double v = n[i] / d[i];
            if (v < tmin)
                tmin = v;
        }
    }
    return tmin;
}
double absolute(double tmax, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        if (fabs(a[i]) > tmax)
            tmax = fabs(a[i]);
    return tmax;
}
static double run_m(double init, int lo, int hi) { return ternary(init, a, lo, hi); }
static double run_m2(double init, int lo, int hi) { return statement(init, a, lo, hi); }
static double run_m3(double init, int lo, int hi) { return library(init, a, lo, hi); }
static double run_tmin(double init, int lo, int hi) { return quotient(init, num, den, lo, hi); }
static double run_tmax(double init, int lo, int hi) { return absolute(init, a, lo, hi); }
"#;

/// The harness calls `run_<target>`; the fixture's functions share a target name.
fn renamed(reductions: Vec<Reduction>, target: &str) -> Vec<Reduction> {
    reductions
        .into_iter()
        .map(|mut r| {
            r.target = target.into();
            r
        })
        .collect()
}

#[test]
fn min_and_max_in_every_spelling() {
    let nan = |function: &str| {
        let report = analyse(MINMAX, function, "i");
        assert!(
            report.assumptions.iter().any(|a| a.contains("NaN")),
            "{:?}",
            report.assumptions
        );
    };
    let r = check(
        MINMAX,
        "ternary",
        "i",
        Verdict::Friendly,
        &[("m", "max", ReductionKind::Scalar, &[])],
    );
    run_check(MINMAX, &r);
    nan("ternary");
    let r = check(
        MINMAX,
        "statement",
        "i",
        Verdict::Friendly,
        &[("m", "min", ReductionKind::Scalar, &[])],
    );
    run_check(MINMAX, &renamed(r, "m2"));
    let r = check(
        MINMAX,
        "library",
        "i",
        Verdict::Friendly,
        &[("m", "max", ReductionKind::Scalar, &[])],
    );
    run_check(MINMAX, &renamed(r, "m3"));
    let r = check(
        MINMAX,
        "quotient",
        "i",
        Verdict::Friendly,
        &[("tmin", "min", ReductionKind::Scalar, &[])],
    );
    run_check(MINMAX, &r);
    let r = check(
        MINMAX,
        "absolute",
        "i",
        Verdict::Friendly,
        &[("tmax", "max", ReductionKind::Scalar, &[])],
    );
    run_check(MINMAX, &r);
}

const FLAG: &str = r#"
#define N 50
static double x[N];
static void setup(void) { for (int i = 0; i < N; i++) x[i] = i % 9 - 4; }
double inv_test(double val, const double *x, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (x[i] == 0)
            val = 1.0;
        else if (x[i] > 3)
            val = 1.0;
    }
    return val;
}
double last_zero(double val, const double *x, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        if (x[i] == 0)
            val = i;
    return val;
}
double either(double val, const double *x, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (x[i] == 0)
            val = 1.0;
        else if (x[i] > 3)
            val = 2.0;
    }
    return val;
}
static double run_val(double init, int lo, int hi) { return inv_test(init, x, lo, hi); }
"#;

#[test]
fn a_flag_every_iteration_sets_to_one_constant_is_a_reduction() {
    // `if (c) val = ONE;` (sundials' N_VInvTest): whichever iterations assign, `val` ends as
    // ONE; the order does not matter.
    let r = check(
        FLAG,
        "inv_test",
        "i",
        Verdict::Friendly,
        &[("val", "=", ReductionKind::Scalar, &[])],
    );
    run_check(FLAG, &r);
    // The last index where something holds, or two different constants: order matters.
    check_not(FLAG, "last_zero", "i");
    check_not(FLAG, "either", "i");
}

const ARGMIN: &str = r#"
#define N 91
#define INIT_IDX -1
#define M 5
static double d[N];
static int v[N];
static int ok[N];
static double g[N][M];
static void setup(void) {
    for (int j = 0; j < N; j++) {
        d[j] = (j * 7 % 10) + 5; v[j] = (j * 13 % 9); ok[j] = j % 3 != 1;
        for (int k = 0; k < M; k++) g[j][k] = (j * M + k) * 11 % 17;
    }
}
void nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++) {
        if (d[j] < best) {
            best = d[j];
            idx = j;
        }
    }
    *ob = best; *oi = idx;
}
void last_nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++)
        if (d[j] <= best) {
            best = d[j];
            idx = j;
        }
    *ob = best; *oi = idx;
}
void largest(int best, int idx, const int *v, int lo, int hi, int *ob, int *oi)
{
    for (int j = lo; j < hi; j++) {
        if (v[j] > best) {
            best = v[j];
            idx = 2 * j + 1;
        }
    }
    *ob = best; *oi = idx;
}
/* The decision under a mask, after a `continue`, and repeated by an inner loop: still one
   comparison per iteration (of the outer loop), taken or not. */
void masked_nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++) {
        if (ok[j]) {
            if (d[j] < best) {
                best = d[j];
                idx = j;
            }
        }
    }
    *ob = best; *oi = idx;
}
void skip_nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++) {
        if (d[j] > 11)
            continue;
        if (d[j] < best) {
            best = d[j];
            idx = j;
        }
    }
    *ob = best; *oi = idx;
}
void nest_nearest(double best, int idx, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++)
        for (int k = 0; k < M; k++)
            if (g[j][k] < best) {
                best = g[j][k];
                idx = j * M + k;
            }
    *ob = best; *oi = idx;
}
/* A mask after the comparison, in the same condition. */
void and_nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++)
        if (d[j] < best && ok[j]) {
            best = d[j];
            idx = j;
        }
    *ob = best; *oi = idx;
}
double and_min(double am, int lo, int hi)
{
    for (int j = lo; j < hi; j++)
        if (d[j] < am && ok[j])
            am = d[j];
    return am;
}
/* `||`: the candidate is also taken where it is not smaller: no minimum. */
void or_nearest(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++)
        if (d[j] < best || ok[j]) {
            best = d[j];
            idx = j;
        }
    *ob = best; *oi = idx;
}
/* The index is also set outside the decision: the last such iteration's value wins. */
void overwritten(double best, int idx, const double *d, int lo, int hi, double *ob, int *oi)
{
    for (int j = lo; j < hi; j++) {
        if (ok[j]) {
            if (d[j] < best) {
                best = d[j];
                idx = j;
            }
        } else
            idx = 0;
    }
    *ob = best; *oi = idx;
}
static void run_best(double b, int i, int lo, int hi, double *ob, int *oi) { nearest(b, i, d, lo, hi, ob, oi); }
static void run_mbest(double b, int i, int lo, int hi, double *ob, int *oi) { masked_nearest(b, i, d, lo, hi, ob, oi); }
static void run_sbest(double b, int i, int lo, int hi, double *ob, int *oi) { skip_nearest(b, i, d, lo, hi, ob, oi); }
static void run_gbest(double b, int i, int lo, int hi, double *ob, int *oi) { nest_nearest(b, i, lo, hi, ob, oi); }
static void run_abest(double b, int i, int lo, int hi, double *ob, int *oi) { and_nearest(b, i, d, lo, hi, ob, oi); }
static double run_am(double init, int lo, int hi) { return and_min(init, lo, hi); }
static void run_last(double b, int i, int lo, int hi, double *ob, int *oi) { last_nearest(b, i, d, lo, hi, ob, oi); }
static void run_vbest(int b, int i, int lo, int hi, int *ob, int *oi) { largest(b, i, v, lo, hi, ob, oi); }
"#;

#[test]
fn arg_min_and_arg_max_pairs_with_ties() {
    // Values repeat: which index a tie keeps is part of the result.
    let r = check(
        ARGMIN,
        "nearest",
        "j",
        Verdict::Friendly,
        &[("best", "min", ReductionKind::Argmin, &["idx"])],
    );
    assert!(r[0].strategy.contains("earliest"), "{:?}", r[0].strategy);
    assert_eq!(r[0].ties, Some(TieBreak::First));
    run_check(ARGMIN, &r);
    let r = check(
        ARGMIN,
        "last_nearest",
        "j",
        Verdict::Friendly,
        &[("best", "min", ReductionKind::Argmin, &["idx"])],
    );
    assert!(r[0].strategy.contains("latest"), "{:?}", r[0].strategy);
    assert_eq!(r[0].ties, Some(TieBreak::Last));
    run_check(ARGMIN, &renamed(r, "last"));
    let r = check(
        ARGMIN,
        "largest",
        "j",
        Verdict::Friendly,
        &[("best", "max", ReductionKind::Argmax, &["idx"])],
    );
    assert!(
        r[0].strategy.contains("(value, iteration) maxima"),
        "{:?}",
        r[0].strategy
    );
    run_check(ARGMIN, &renamed(r, "vbest"));
    for (function, run) in [
        ("masked_nearest", "mbest"),
        ("skip_nearest", "sbest"),
        ("nest_nearest", "gbest"),
        ("and_nearest", "abest"),
    ] {
        let r = check(
            ARGMIN,
            function,
            "j",
            Verdict::Friendly,
            &[("best", "min", ReductionKind::Argmin, &["idx"])],
        );
        assert_eq!(r[0].ties, Some(TieBreak::First), "{function}");
        run_check(ARGMIN, &renamed(r, run));
    }
    check_not(ARGMIN, "overwritten", "j");
    check_not(ARGMIN, "or_nearest", "j");
    let r = check(
        ARGMIN,
        "and_min",
        "j",
        Verdict::Friendly,
        &[("am", "min", ReductionKind::Scalar, &[])],
    );
    run_check(ARGMIN, &r);
}

const OUTER: &str = r#"
#define N 23
#define M 17
static double a[N][M];
static void setup(void) {
    for (int i = 0; i < N; i++) for (int k = 0; k < M; k++) a[i][k] = (i * M + k) % 11 - 5;
}
double total(double s, double a[][M], int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        for (int k = 0; k < M; k++)
            s += a[i][k];
    return s;
}
static double run_s(double init, int lo, int hi) { return total(init, a, lo, hi); }
"#;

#[test]
fn an_accumulator_of_the_outer_loop_updated_in_the_inner_one() {
    // `s` accumulates over both loops: a reduction of each.
    let r = check(
        OUTER,
        "total",
        "i",
        Verdict::Friendly,
        &[("s", "+", ReductionKind::Scalar, &[])],
    );
    run_check(OUTER, &r);
    check(
        OUTER,
        "total",
        "k",
        Verdict::Friendly,
        &[("s", "+", ReductionKind::Scalar, &[])],
    );
}

const PRIVATE: &str = r#"
#define N 29
#define M 13
static double a[N * M], out[N];
void rows(double *out, const double *a, int n, int m)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < m; k++)
            s += a[i * m + k];
        out[i] = s;
    }
}
int main(void)
{
    for (int i = 0; i < N * M; i++) a[i] = i % 7;
    rows(out, a, N, M);
    return (int)out[0];
}
"#;

#[test]
fn an_accumulator_reset_in_every_iteration_is_private() {
    // `s = 0` before the inner loop: each `i` has its own; the `i` loop carries nothing and
    // is a plain 1D kernel (the `k` loop, with its reduction, is not a grid dimension).
    let outer = check(PRIVATE, "rows", "i", Verdict::Friendly, &[]);
    assert!(outer.is_empty());
    let report = analyse(PRIVATE, "rows", "i");
    assert_eq!(report.nest.len(), 1, "{report:#?}");
    check(
        PRIVATE,
        "rows",
        "k",
        Verdict::Friendly,
        &[("s", "+", ReductionKind::Scalar, &[])],
    );
}

// ---------------------------------------------------------------------------------------
// Memory: elements, struct fields, histograms.

const MATMUL: &str = r#"
#define N 12
static double A[N][N], B[N][N], C[N][N];
static int I = 5, J = 7;
static void setup(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { A[i][j] = (i * 3 + j) % 7 - 3; B[i][j] = (i + 5 * j) % 4 - 1.5; }
}
void mm(int n, double C[n][n], double A[n][n], double B[n][n], int i, int j, int lo, int hi)
{
    for (int k = lo; k < hi; k++)
        C[i][j] += A[i][k] * B[k][j];
}
static double *target_C_i_j(void) { return &C[I][J]; }
static void run_C_i_j(int lo, int hi) { mm(N, C, A, B, I, J, lo, hi); }
"#;

#[test]
fn an_invariant_element_is_one_sum_reduction() {
    let r = check(
        MATMUL,
        "mm",
        "k",
        Verdict::Friendly,
        &[("C[i][j]", "+", ReductionKind::Element, &[])],
    );
    run_check(MATMUL, &r);
}

const FIELDS: &str = r#"
#define N 75
struct acc { double sum; int n; long long bits; };
static struct acc total;
static double x[N];
static void setup(void) { for (int i = 0; i < N; i++) x[i] = (i * 29 % 31) * 0.25; }
void accumulate(struct acc *acc, const double *x, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        acc->sum += x[i];
        acc->n++;
        acc->bits |= 1LL << (i % 40);
    }
}
static double *target_acc_sum(void) { return &total.sum; }
static int *target_acc_n(void) { return &total.n; }
static long long *target_acc_bits(void) { return &total.bits; }
static void run_acc_sum(int lo, int hi) { accumulate(&total, x, lo, hi); }
static void run_acc_n(int lo, int hi) { accumulate(&total, x, lo, hi); }
static void run_acc_bits(int lo, int hi) { accumulate(&total, x, lo, hi); }
"#;

#[test]
fn struct_fields_are_element_reductions() {
    let r = check(
        FIELDS,
        "accumulate",
        "i",
        Verdict::Friendly,
        &[
            ("acc->sum", "+", ReductionKind::Element, &[]),
            ("acc->n", "+", ReductionKind::Element, &[]),
            ("acc->bits", "|", ReductionKind::Element, &[]),
        ],
    );
    run_check(FIELDS, &r);
}

const FIRST: &str = r#"
#define N 60
static int s[4], a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = i * 5 % 9 - 4; }
void first(int *s, const int *a, int lo, int hi)
{
    for (int k = lo; k < hi; k++) {
        s[0] += a[k];
        s[1] = s[1] + 2 * a[k];
    }
}
static int *target_s_0(void) { return &s[0]; }
static int *target_s_1(void) { return &s[1]; }
static void run_s_0(int lo, int hi) { first(s, a, lo, hi); }
static void run_s_1(int lo, int hi) { first(s, a, lo, hi); }
"#;

#[test]
fn two_elements_of_one_array_are_two_reductions() {
    let r = check(
        FIRST,
        "first",
        "k",
        Verdict::Friendly,
        &[
            ("s[0]", "+", ReductionKind::Element, &[]),
            ("s[1]", "+", ReductionKind::Element, &[]),
        ],
    );
    run_check(FIRST, &r);
}

const HISTOGRAM: &str = r#"
#define N 200
#define NBINS_hist 16
#define NBINS_h 16
static int hist[NBINS_hist], key[N], w[N], a[N], b[N];
static void setup(void) {
    for (int i = 0; i < N; i++) { key[i] = i * 7 % 13; w[i] = i % 5 + 1; a[i] = i % 16; b[i] = i * 3 % 16; }
}
void weighted(int *hist, const int *key, const int *w, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        hist[key[i]] += w[i];
}
void twice(int *h, const int *a, const int *b, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        h[a[i]]++;
        h[b[i]]++;
    }
}
static int *bins_hist(void) { return hist; }
static int *bins_h(void) { return hist; }
static void run_hist(int lo, int hi) { weighted(hist, key, w, lo, hi); }
static void run_h(int lo, int hi) { twice(hist, a, b, lo, hi); }
"#;

#[test]
fn data_indexed_updates_are_histograms() {
    let r = check(
        HISTOGRAM,
        "weighted",
        "i",
        Verdict::Friendly,
        &[("hist", "+", ReductionKind::Histogram, &[])],
    );
    assert!(
        r[0].strategy.starts_with("atomicAdd"),
        "{:?}",
        r[0].strategy
    );
    run_check(HISTOGRAM, &r);
    // Two updates of one array with the same operator commute with each other.
    let r = check(
        HISTOGRAM,
        "twice",
        "i",
        Verdict::Friendly,
        &[
            ("h", "+", ReductionKind::Histogram, &[]),
            ("h", "+", ReductionKind::Histogram, &[]),
        ],
    );
    run_check(HISTOGRAM, &r[..1]);
}

// ---------------------------------------------------------------------------------------
// Not reductions.

const NOT: &str = r#"
#include <math.h>
void prefix(double *restrict a, double *restrict b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) { s += a[i]; b[i] = s; }
}
double early(double *a, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) { m = fmax(m, a[i]); if (m > 5) break; }
    return m;
}
double affine(double *a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s = s * 2 + a[i];
    return s;
}
void hist_read(int *restrict h, int *restrict key, int *restrict w, int *restrict x, int n) {
    for (int i = 0; i < n; i++) { h[key[i]] += w[i]; x[i] = h[3]; }
}
void neighbour(int n, double C[restrict n][n], double A[restrict n][n], double B[restrict n][n], int i) {
    for (int j = 0; j + 1 < n; j++)
        for (int k = 0; k < n; k++)
            C[i][j] += A[i][k] * B[k][j] + C[i][j + 1];
}
void diagonal(int n, double C[restrict n][n], double A[restrict n][n], int i, int j) {
    for (int k = 0; k < n; k++) C[i][j] += A[i][k] * C[i][k];
}
int counted(double *a, int n) {
    double m = 0; int c = 0;
    for (int i = 0; i < n; i++) if (a[i] > m) { m = a[i]; c++; }
    return c;
}
double other(double *a, double *b, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) if (a[i] > m) m = b[i];
    return m;
}
double reset(double *a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) { s += a[i]; if (s > 10) s = 0; }
    return s;
}
double alternating(double *a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s = a[i] - s;
    return s;
}
int truncated(double *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += 0.5 * a[i];
    return s;
}
double running(double *a, int n) {
    double s = 0, t = 0;
    for (int i = 0; i < n; i++) { s += a[i]; t += s; }
    return t;
}
int published(double *restrict d, double *restrict o, int n) {
    double best = 1e300; int idx = -1;
    for (int j = 0; j < n; j++) { if (d[j] < best) { best = d[j]; idx = j; } o[j] = best; }
    return idx;
}
void mixed(double *restrict s, double *restrict a, int n) {
    for (int k = 0; k < n; k++) { s[0] += a[k]; s[0] *= 2; }
}
unsigned long long hashed(unsigned *a, int n) {
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ a[i]) * 1099511628211ull;
    return h;
}
int indexed(int *restrict a, int *restrict out, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) { if (a[i] > 0) { out[k] = a[i]; k++; } }
    return k;
}
"#;

#[test]
fn a_prefix_sum_is_not_a_reduction() {
    check_not(NOT, "prefix", "i");
}

#[test]
fn a_max_tested_for_an_early_exit_is_not_a_reduction() {
    check_not(NOT, "early", "i");
}

#[test]
fn an_affine_recurrence_is_not_a_reduction() {
    check_not(NOT, "affine", "i");
    check_not(NOT, "alternating", "i");
    check_not(NOT, "hashed", "i");
}

#[test]
fn a_histogram_read_elsewhere_is_not_a_reduction() {
    check_not(NOT, "hist_read", "i");
}

#[test]
fn an_element_next_to_another_access_is_not_a_reduction() {
    // Over `j`, iteration `j` reads `C[i][j + 1]` before iteration `j + 1` updates it.
    check_not(NOT, "neighbour", "j");
    // Over `k`, `C[i][k]` is `C[i][j]` when `k == j`.
    check_not(NOT, "diagonal", "k");
    // Two updates of one element with different operators.
    check_not(NOT, "mixed", "k");
}

const NEIGHBOUR: &str = r#"
#define N 10
static double A[N][N], B[N][N], C[N][N];
static int I = 3, J = 4;
static void setup(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { A[i][j] = (i + 2 * j) % 5; B[i][j] = (3 * i + j) % 4; C[i][j] = i - j; }
}
void neighbour(int n, double C[n][n], double A[n][n], double B[n][n], int i, int j, int lo, int hi)
{
    for (int k = lo; k < hi; k++)
        C[i][j] += A[i][k] * B[k][j] + C[i][j + 1];
}
static double *target_C_i_j(void) { return &C[I][J]; }
static void run_C_i_j(int lo, int hi) { neighbour(N, C, A, B, I, J, lo, hi); }
"#;

#[test]
fn reading_the_next_element_leaves_the_reduction_over_k() {
    // Over `k` the element `C[i][j]` is updated and `C[i][j + 1]`, another element nobody
    // writes in the loop, is only read: still one sum into `C[i][j]`, and running it
    // permuted agrees.
    let r = check(
        NEIGHBOUR,
        "neighbour",
        "k",
        Verdict::Friendly,
        &[("C[i][j]", "+", ReductionKind::Element, &[])],
    );
    run_check(NEIGHBOUR, &r);
}

#[test]
fn accumulators_read_elsewhere_are_not_reductions() {
    // A count under a max's branch, a max that takes another value, a reset tested on the
    // sum, a float sum truncated to int every step, a sum of running sums, a minimum
    // stored every iteration, a counter used as an index.
    for f in [
        "counted",
        "other",
        "reset",
        "truncated",
        "running",
        "published",
        "indexed",
    ] {
        check_not(NOT, f, if f == "published" { "j" } else { "i" });
    }
}

const AFFINE_RUN: &str = r#"
#define N 40
static double a[N];
static void setup(void) { for (int i = 0; i < N; i++) a[i] = i % 7; }
double affine(double s, const double *a, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        s = s * 2 + a[i];
    return s;
}
static double run_s(double init, int lo, int hi) { return affine(init, a, lo, hi); }
"#;

#[test]
fn the_execution_check_rejects_a_wrong_operator() {
    // Had `s = s * 2 + a[i]` been taken for a sum, the permuted run would disagree.
    let wrong = Reduction {
        target: "s".into(),
        operator: RedOp::Sum,
        kind: ReductionKind::Scalar,
        c_type: "double".into(),
        strategy: String::new(),
        index: Vec::new(),
        ties: None,
        lines: Vec::new(),
    };
    let (seq, par) = execute(AFFINE_RUN, &wrong, "+");
    assert!(!agree(&seq, &par, true), "{seq} vs {par}");
    // And the right operator on a real reduction agrees (the check is not vacuous).
    let right = Reduction {
        operator: RedOp::Sum,
        ..wrong
    };
    let (seq, par) = execute(SUM, &right, "+");
    assert!(agree(&seq, &par, true), "{seq} vs {par}");
}

// ---------------------------------------------------------------------------------------
// Min/max of memory spelled with a macro: `m = MAX(m, x)` reads `m` twice.

const MACRO_EXTREMES: &str = r#"
#define N 83
#define MAX(a, b) (((a) < (b)) ? (b) : (a))
#define MIN(a, b) (((a) > (b)) ? (b) : (a))
static double peak;
static int low;
static double x[N];
static int k[N];
static void setup(void) {
    for (int i = 0; i < N; i++) { x[i] = ((i * 37) % 101) / 7.0 - 5.0; k[i] = i * 13 % 29 - 9; }
}
void extremes(int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        peak = MAX(peak, x[i] * 2.0);
        low = MIN(low, k[i]);
    }
}
static double *target_peak(void) { return &peak; }
static int *target_low(void) { return &low; }
static void run_peak(int lo, int hi) { extremes(lo, hi); }
static void run_low(int lo, int hi) { extremes(lo, hi); }
"#;

#[test]
fn a_max_macro_on_memory_is_an_element_reduction() {
    let r = check(
        MACRO_EXTREMES,
        "extremes",
        "i",
        Verdict::Friendly,
        &[
            ("peak", "max", ReductionKind::Element, &[]),
            ("low", "min", ReductionKind::Element, &[]),
        ],
    );
    run_check(MACRO_EXTREMES, &r);
}

const MACRO_NOT: &str = r#"
#define MAX(a, b) (((a) < (b)) ? (b) : (a))
static double peak;
void running(const double *x, double *out, int n)
{
    for (int i = 0; i < n; i++) {
        peak = MAX(peak, x[i]);
        out[i] = peak;
    }
}
void touched(double *x, int n)
{
    /* The second read of `peak` follows a store to it: not the same value. */
    for (int i = 0; i < n; i++)
        peak = (peak < x[i]) ? (peak = x[i] * 0.5, x[i]) : peak;
}
"#;

#[test]
fn a_running_max_macro_is_not_a_reduction() {
    check_not(MACRO_NOT, "running", "i");
    check_not(MACRO_NOT, "touched", "i");
}

const BALANCE: &str = r#"
#define N 90
static double bal[2], x[N];
static int s[N];
static void setup(void) {
    for (int i = 0; i < N; i++) { x[i] = (i * 13 % 17) * 0.5 - 3.0; s[i] = i * 7 % 5 - 2; }
}
void balance(double *bal, const double *x, const int *s, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (s[i] > 0) {
            if (x[i] > 0) bal[0] -= x[i]; else bal[1] -= x[i];
        } else if (s[i] < 0) {
            if (x[i] > 0) bal[0] += 2.0 * x[i]; else bal[1] = bal[1] + x[i];
        }
    }
}
static double *target_bal_0(void) { return &bal[0]; }
static double *target_bal_1(void) { return &bal[1]; }
static void run_bal_0(int lo, int hi) { balance(bal, x, s, lo, hi); }
static void run_bal_1(int lo, int hi) { balance(bal, x, s, lo, hi); }
"#;

#[test]
fn an_element_updated_at_several_sites_with_one_operator_is_a_reduction() {
    // code_saturne's balances: `_balance[IN] -= t[0]` in one branch, `+= t[1]` in another.
    let r = check(
        BALANCE,
        "balance",
        "i",
        Verdict::Friendly,
        &[
            ("bal[0]", "+", ReductionKind::Element, &[]),
            ("bal[1]", "+", ReductionKind::Element, &[]),
            ("bal[0]", "+", ReductionKind::Element, &[]),
            ("bal[1]", "+", ReductionKind::Element, &[]),
        ],
    );
    run_check(BALANCE, &r);
    // The note says the other sites may touch the element, not "nothing else touches it".
    let report = analyse(BALANCE, "balance", "i");
    let notes: Vec<&str> = report
        .reasons
        .iter()
        .flat_map(|r| std::iter::once(r).chain(&r.instances))
        .map(|r| r.message.as_str())
        .filter(|m| m.contains("reduction into one element"))
        .collect();
    assert!(!notes.is_empty(), "{report:#?}");
    assert!(
        notes.iter().all(|m| m.contains(
            "the only other accesses that may touch it are sum updates, which commute with it"
        )),
        "{notes:#?}"
    );
    // A lone element keeps the plain wording.
    let single = analyse(MATMUL, "mm", "k");
    assert!(
        single
            .reasons
            .iter()
            .any(|r| r.message.contains("nothing else touches it")),
        "{single:#?}"
    );
}

#[test]
fn sites_with_different_operators_or_constants_are_not_one_reduction() {
    // A sum at one site and a product at the other: the order matters.
    check_not(
        "void mixed(double *b, const double *x, const int *s, int n)\n\
         {\n    for (int i = 0; i < n; i++) {\n        if (s[i] > 0) b[0] += x[i];\n        else b[0] *= x[i];\n    }\n}\n",
        "mixed",
        "i",
    );
    // Two flags with different constants: the last assigning iteration decides.
    check_not(
        "void flags(int *f, const int *s, int n)\n\
         {\n    for (int i = 0; i < n; i++) {\n        if (s[i] > 0) f[0] = 1;\n        if (s[i] < 0) f[0] = 2;\n    }\n}\n",
        "flags",
        "i",
    );
}
