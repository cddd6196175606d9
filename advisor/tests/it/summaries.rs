//! Callee side-effect summaries instantiated at call sites, and the program-wide call graph:
//! a loop's calls take part in its dependence tests, aliasing pairs and sections, and a
//! function defined in another analysed file is a function of the program.
//!
//! Every verdict is checked against a concrete execution in the IR interpreter: the loop's
//! iterations are told apart (visits of its header), every byte any function touches during
//! an iteration is recorded, and then a `friendly` loop must have no byte written in one
//! iteration and touched in another, a loop said to carry a dependence must have one, and
//! every byte touched in a parameter's object must lie in the parameter's reported section.

use advisor::analyze::{analyze_unit, analyze_units, Filter};
use advisor::model::{LoopReport, Verdict};
use frontend::interp::{Access, Interpreter, Observer, Val};
use frontend::ir::{Block, Value};
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use num_rational::BigRational;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use symbolic::{parse_expr, Var};
use tempfile::TempDir;

/// Writes `files` to a fresh, private directory (tests run in parallel) and loads each as a
/// unit. The units read their files' lines again for diagnostics, so callers keep the
/// returned guard while they use them; the directory is removed when it drops.
fn load(files: &[(&str, &str)]) -> (TempDir, Vec<Unit>) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-summaries-")
        .tempdir()
        .expect("temp dir");
    let units = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write fixture");
            load_unit(&TranslationUnitInput::new(path)).expect("fixture loads")
        })
        .collect();
    (dir, units)
}

fn find<'a>(reports: &'a [LoopReport], function: &str, line: u32) -> &'a LoopReport {
    reports
        .iter()
        .find(|r| r.function == function && r.line == line)
        .unwrap_or_else(|| {
            panic!(
                "no loop of `{function}` at line {line}: {:?}",
                reports.iter().map(|r| &r.id).collect::<Vec<_>>()
            )
        })
}

fn eval(expr: &str, values: &HashMap<String, i64>) -> i64 {
    let e = parse_expr(expr).unwrap_or_else(|err| panic!("cannot parse `{expr}`: {err}"));
    let ctx: HashMap<Var, BigRational> = values
        .iter()
        .map(|(n, v)| (Var::new(n), BigRational::from_integer((*v).into())))
        .collect();
    let value = e
        .eval(&ctx)
        .unwrap_or_else(|err| panic!("cannot evaluate `{expr}`: {err:?}"));
    i64::try_from(value.to_integer()).expect("fits")
}

/// What one run of the kernel touched, per iteration of its loop.
#[derive(Default)]
struct Trace {
    iteration: u64,
    in_loop: bool,
    /// (alloc, byte) -> (iteration, is_store) of every access during the loop.
    bytes: HashMap<(u32, i64), Vec<(u64, bool)>>,
    /// The kernel's arguments, by parameter instruction.
    params: HashMap<Value, Val>,
}

struct Recorder {
    trace: Rc<RefCell<Trace>>,
    kernel: String,
    header: Block,
    blocks: BTreeSet<Block>,
    param_values: HashSet<Value>,
}

impl Observer for Recorder {
    fn on_access(&mut self, a: &Access) {
        let mut t = self.trace.borrow_mut();
        if !t.in_loop {
            return;
        }
        let iteration = t.iteration;
        for byte in a.offset..a.offset + a.size as i64 {
            t.bytes
                .entry((a.alloc, byte))
                .or_default()
                .push((iteration, a.is_store));
        }
    }
    fn on_block(&mut self, function: &str, block: Block) {
        if function != self.kernel {
            return;
        }
        let mut t = self.trace.borrow_mut();
        if block == self.header {
            t.iteration += 1;
            t.in_loop = true;
        } else if !self.blocks.contains(&block) {
            t.in_loop = false;
        }
    }
    fn on_value(&mut self, function: &str, value: Value, val: &Val) {
        if function == self.kernel && self.param_values.contains(&value) {
            self.trace.borrow_mut().params.insert(value, val.clone());
        }
    }
}

/// A byte written in one iteration and touched in another, if any, outside the allocations
/// `skip` names (the report's private objects: each thread has its own copy).
fn conflict(trace: &Trace, skip: &dyn Fn(u32) -> bool) -> Option<((u32, i64), u64, u64)> {
    for (byte, uses) in &trace.bytes {
        if skip(byte.0) {
            continue;
        }
        for (i, a) in uses {
            for (j, b) in uses {
                if i != j && (*a || *b) {
                    return Some((*byte, *i, *j));
                }
            }
        }
    }
    None
}

/// An argument of the kernel for the interpreter.
enum Arg {
    Int(i64),
    /// A fresh array of this many doubles, `k`-th element `k`.
    Doubles(usize),
}

struct Case<'a> {
    /// The files of the program (analysed together).
    files: &'a [(&'a str, &'a str)],
    kernel: &'a str,
    /// The loop's line in the kernel's file.
    line: u32,
    verdict: Verdict,
    /// Parameters whose section must be reported, with the expected `[lo, hi)` at the run's
    /// values (`None`: no section).
    sections: &'a [(&'a str, Option<(i64, i64)>)],
    args: &'a [Arg],
    /// Whether the run must show a byte written in one iteration and touched in another
    /// (a dependence the report states, or one it leaves to a profile).
    conflict: bool,
}

/// Analyses the program, checks the loop's verdict and sections, then runs the kernel in the
/// interpreter (on all files concatenated, one program) and checks both against the run.
fn check(case: &Case) -> LoopReport {
    let (_dir, units) = load(case.files);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let report = find(&reports, case.kernel, case.line).clone();
    assert_eq!(
        report.verdict, case.verdict,
        "verdict of {}: {:#?}",
        report.id, report.reasons
    );

    // The same program as one unit, for the interpreter.
    let joined: String = case
        .files
        .iter()
        .map(|(_, text)| *text)
        .collect::<Vec<_>>()
        .join("\n");
    let (_joined_dir, joined_units) = load(&[("joined.c", &joined)]);
    let program = &joined_units[0].lowered.program;
    let func = program.function(case.kernel).expect("kernel");
    let forest = analyze_loops(func);
    let l = forest
        .loops
        .iter()
        .filter(|l| l.parent.is_none())
        .min_by_key(|l| l.header)
        .expect("the kernel has a loop");
    let trace = Rc::new(RefCell::new(Trace::default()));
    let recorder = Recorder {
        trace: trace.clone(),
        kernel: case.kernel.to_string(),
        header: l.header,
        blocks: l.blocks.clone(),
        param_values: func.params.iter().map(|p| p.value).collect(),
    };
    let mut interp = Interpreter::new(program)
        .with_fuel(10_000_000)
        .with_observer(Box::new(recorder));
    let args: Vec<Val> = case
        .args
        .iter()
        .map(|a| match a {
            Arg::Int(v) => Val::Int(i128::from(*v)),
            Arg::Doubles(n) => {
                let values: Vec<f64> = (0..*n).map(|k| k as f64).collect();
                interp.alloc_f64s(&values)
            }
        })
        .collect();
    interp
        .call(case.kernel, args)
        .unwrap_or_else(|e| panic!("the interpreter failed: {e:?}"));
    let trace = trace.borrow();
    let private: HashSet<&str> = report.private.iter().map(|p| p.name.as_str()).collect();
    let found = conflict(&trace, &|alloc| {
        interp
            .alloc_info(alloc)
            .is_some_and(|(_, n)| private.contains(n))
    });
    if case.verdict == Verdict::Friendly {
        assert!(
            found.is_none(),
            "{} is reported friendly, but the run has a conflict {found:?}",
            report.id
        );
    }
    if report
        .reasons
        .iter()
        .any(|r| r.code == advisor::rules::Code::WW101)
    {
        assert!(
            found.is_some(),
            "{} is reported to carry a dependence, but the run has none",
            report.id
        );
    }
    assert_eq!(
        found.is_some(),
        case.conflict,
        "conflicts of the run: {found:?}"
    );

    // Sections, evaluated with the run's integer arguments.
    let mut values = HashMap::new();
    let mut pointers = HashMap::new();
    for p in &func.params {
        let Some(name) = &p.name else { continue };
        match trace.params.get(&p.value) {
            Some(Val::Int(v)) => {
                values.insert(name.clone(), *v as i64);
            }
            Some(Val::Ptr { alloc, offset }) => {
                pointers.insert(name.clone(), (*alloc, *offset));
            }
            _ => {}
        }
    }
    for (name, expected) in case.sections {
        let p = report
            .parameters
            .iter()
            .find(|p| p.name == *name)
            .unwrap_or_else(|| panic!("no parameter `{name}` in {:#?}", report.parameters));
        let Some(expected) = expected else {
            assert!(p.bytes.is_none(), "`{name}` has a section: {:?}", p.bytes);
            continue;
        };
        let bytes = p
            .bytes
            .as_ref()
            .unwrap_or_else(|| panic!("no section for `{name}`: {:?}", p.notes));
        let (lo, hi) = (eval(&bytes.lo, &values), eval(&bytes.hi, &values));
        assert_eq!(
            (lo, hi),
            *expected,
            "section of `{name}`: [{}, {})",
            bytes.lo,
            bytes.hi
        );
        let (alloc, base) = pointers[*name];
        let mut touched = 0;
        for (a, byte) in trace.bytes.keys() {
            if *a == alloc {
                assert!(
                    lo <= byte - base && byte - base < hi,
                    "byte {} of `{name}` touched outside [{lo}, {hi})",
                    byte - base
                );
                touched += 1;
            }
        }
        assert!(touched > 0, "the run touched nothing of `{name}`");
    }
    report
}

fn has_reason(report: &LoopReport, code: &str, text: &str) {
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code.as_str() == code && r.message.contains(text)),
        "no {code} mentioning `{text}` in {:#?}",
        report.reasons
    );
}

const SET_ROW_CALLER: &str = r#"void set_row(double *row, int n, double v);

void fill(double *out, int N, int n)
{
    for (int i = 0; i < N; i++)
        set_row(out + i * n, n, (double)i);
}
"#;

const SET_ROW: &str = r#"void set_row(double *row, int n, double v)
{
    for (int j = 0; j < n; j++)
        row[j] = v + j;
}
"#;

#[test]
fn a_callee_in_a_second_file_is_a_program_function_and_its_writes_count() {
    let report = check(&Case {
        files: &[("fill.c", SET_ROW_CALLER), ("row.c", SET_ROW)],
        kernel: "fill",
        line: 5,
        verdict: Verdict::Friendly,
        // `out` is written by set_row only: [0, 8*N*n), N = 5, n = 3.
        sections: &[("out", Some((0, 120)))],
        args: &[Arg::Doubles(15), Arg::Int(5), Arg::Int(3)],
        conflict: false,
    });
    let out = report.parameters.iter().find(|p| p.name == "out").unwrap();
    assert_eq!(out.role, advisor::model::Role::Out);
    assert_eq!(report.calls[0].device, advisor::model::Device::Port);
    assert_eq!(report.calls[0].effects, ["param `row`: writes [0, 8*n)"]);
}

#[test]
fn the_same_file_alone_says_set_row_was_not_analysed() {
    // Without the second file, `set_row` is unknown. It is declared in the program's own
    // file, not a system header: the reason says where, not "a host library function".
    let (_dir, units) = load(&[("fill.c", SET_ROW_CALLER)]);
    let reports = analyze_unit(&units[0], &Filter::default());
    let r = find(&reports, "fill", 5);
    assert_eq!(r.verdict, Verdict::NotFriendly);
    has_reason(r, "WW105", "`set_row` is declared at ");
    has_reason(
        r,
        "WW105",
        "fill.c:1 but defined in none of the analysed files",
    );
    assert!(
        !r.reasons.iter().any(|x| x.message.contains("host library")),
        "{:#?}",
        r.reasons
    );
}

#[test]
fn a_function_of_a_system_header_is_a_host_library_function() {
    let caller = "#include <stdlib.h>\n\
                  void fill(double *out, int N)\n\
                  {\n    for (int i = 0; i < N; i++)\n        out[i] = (double) rand();\n}\n";
    let (_dir, units) = load(&[("fill.c", caller)]);
    let reports = analyze_unit(&units[0], &Filter::default());
    let r = find(&reports, "fill", 4);
    assert_eq!(r.verdict, Verdict::NotFriendly);
    has_reason(
        r,
        "WW105",
        "`rand` is a host library function with no device version",
    );
}

#[test]
fn a_callee_writing_its_own_element_makes_an_out_parameter() {
    check(&Case {
        files: &[(
            "put.c",
            r#"static void put(double *out, int i, double v)
{
    out[i] = v;
}

void scale(double *restrict out, const double *restrict in, int n)
{
    for (int i = 0; i < n; i++)
        put(out, i, 2.0 * in[i]);
}
"#,
        )],
        kernel: "scale",
        line: 8,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 80))), ("in", Some((0, 80)))],
        args: &[Arg::Doubles(10), Arg::Doubles(10), Arg::Int(10)],
        conflict: false,
    });
}

#[test]
fn a_callee_updating_a_fixed_element_carries_a_dependence() {
    let report = check(&Case {
        files: &[(
            "acc.c",
            r#"static void add(double *acc, double x)
{
    acc[0] += x;
}

void total(double *acc, const double *in, int n)
{
    for (int i = 0; i < n; i++)
        add(acc, in[i]);
}
"#,
        )],
        kernel: "total",
        line: 8,
        // The callee's `acc[0]` is at an offset over no variable of the callee's own: a
        // witness of two iterations, as for the statement written in the loop.
        verdict: Verdict::NotFriendly,
        sections: &[("acc", Some((0, 8)))],
        args: &[Arg::Doubles(1), Arg::Doubles(6), Arg::Int(6)],
        conflict: true,
    });
    has_reason(
        &report,
        "WW101",
        "i = 0 reads bytes [0, 8) of `acc`; i = 1 writes bytes [0, 8) of `acc`",
    );
}

#[test]
fn a_callee_writing_a_global_carries_a_witnessed_dependence() {
    // (A callee that only counts, `calls++`, makes a reduction: see `call_reductions`.)
    let report = check(&Case {
        files: &[(
            "count.c",
            r#"int calls;

static void tick(double *out, int i)
{
    out[i] = 1.0;
    calls = i;
}

void run(double *out, int n)
{
    for (int i = 0; i < n; i++)
        tick(out, i);
}
"#,
        )],
        kernel: "run",
        line: 11,
        verdict: Verdict::NotFriendly,
        sections: &[("out", Some((0, 32)))],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: true,
    });
    // The global is written in every iteration: a dependence, seen in the run too; the
    // global itself is no obstacle (no WW104).
    has_reason(
        &report,
        "WW101",
        "write-after-write dependence on `calls`: `tick(out, i)` (line 12) and `tick(out, i)` (line 12) in different iterations",
    );
    assert!(
        !report.reasons.iter().any(|r| r.code.as_str() == "WW104"),
        "{:#?}",
        report.reasons
    );
}

#[test]
fn a_recursive_callee_is_summarized_over_every_depth() {
    // `out` and `i` are passed on unchanged: every depth writes `out[i]`.
    let report = check(&Case {
        files: &[(
            "rec.c",
            r#"static void visit(double *out, int i, int depth)
{
    if (depth > 0)
        visit(out, i, depth - 1);
    else
        out[i] += 1.0;
}

void walk(double *out, int n)
{
    for (int i = 0; i < n; i++)
        visit(out, i, 3);
}
"#,
        )],
        kernel: "walk",
        line: 11,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 32)))],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: false,
    });
    assert!(
        report
            .assumptions
            .iter()
            .any(|a| a.contains("`visit` is recursive: each GPU thread needs stack")),
        "{:#?}",
        report.assumptions
    );
}

#[test]
fn a_recursion_that_moves_its_index_leaves_the_offset_unknown() {
    // Each depth writes one element further: within `out`, but where is not known
    // statically (the run has no conflict: iteration `i` writes `out[4i, 4i + 4)`).
    let report = check(&Case {
        files: &[(
            "rec.c",
            r#"static void fill(double *out, int at, int depth)
{
    out[at] = depth;
    if (depth > 0)
        fill(out, at + 1, depth - 1);
}

void fill_all(double *out, int n)
{
    for (int i = 0; i < n; i++)
        fill(out, 4 * i, 3);
}
"#,
        )],
        kernel: "fill_all",
        line: 10,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(16), Arg::Int(4)],
        conflict: false,
    });
    has_reason(&report, "WW111", "the index depends on `at in fill");
}

#[test]
fn a_recursion_that_writes_through_a_moving_pointer_is_not_summarized() {
    let report = check(&Case {
        files: &[(
            "rec.c",
            r#"static void bump(double *p, int depth)
{
    *p += 1.0;
    if (depth > 0)
        bump(p + 1, depth - 1);
}

void bump_all(double *out, int n)
{
    for (int i = 0; i < n; i++)
        bump(out + 2 * i, 2);
}
"#,
        )],
        kernel: "bump_all",
        line: 10,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(12), Arg::Int(4)],
        // Iteration `i` writes `out[2i, 2i + 3)`: neighbours share an element.
        conflict: true,
    });
    has_reason(&report, "WW112", "calls `bump`, which is recursive");
}

#[test]
fn function_pointers_every_caller_names_are_called_like_their_targets() {
    // phono3py's tetrahedron method: `get_integration_weight(omega, v, _g, _I)`.
    check(&Case {
        files: &[(
            "fp.c",
            r#"static double square(double x) { return x * x; }
static double twice(double x) { return 2 * x; }
static double apply(const double *v, int n, double (*f)(double))
{
    double s = 0;
    for (int k = 0; k < n; k++)
        s += f(v[k]);
    return s;
}
static double dispatch(const double *v, int n, char which)
{
    return which == 's' ? apply(v, n, square) : apply(v, n, twice);
}

void rows(double *out, const double *in, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = dispatch(in + 4 * i, 4, 's');
}
"#,
        )],
        kernel: "rows",
        line: 17,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 24))), ("in", Some((0, 96)))],
        args: &[Arg::Doubles(3), Arg::Doubles(12), Arg::Int(3)],
        conflict: false,
    });
}

#[test]
fn a_targets_writes_count_and_an_address_taken_anywhere_keeps_it_unknown() {
    // `bump` writes `p[0]`: every iteration writes `out[0]` through the pointer.
    let report = check(&Case {
        files: &[(
            "fp.c",
            r#"static void bump(double *p) { p[0] += 1.0; }
static void each(double *p, void (*f)(double *)) { f(p); }

void count(double *out, int n)
{
    for (int i = 0; i < n; i++)
        each(out, bump);
}
"#,
        )],
        kernel: "count",
        line: 6,
        // The pair is inside the called functions, at `out[0]` in every iteration: a
        // witness of two iterations; the run shows it.
        verdict: Verdict::NotFriendly,
        sections: &[],
        args: &[Arg::Doubles(2), Arg::Int(4)],
        conflict: true,
    });
    has_reason(
        &report,
        "WW101",
        "i = 0 reads bytes [0, 8) of `out`; i = 1 writes bytes [0, 8) of `out`",
    );
    assert!(
        !report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW112),
        "{:#?}",
        report.reasons
    );
    // `install` takes `each`'s address: calls through `hook` may pass `each` any function,
    // and `each`'s summary is shared by all its calls.
    let report = check(&Case {
        files: &[(
            "fp.c",
            r#"static void bump(double *p) { p[0] += 1.0; }
static void each(double *p, void (*f)(double *)) { f(p); }
void (*hook)(double *, void (*)(double *));
void install(void) { hook = each; }

void count(double *out, int n)
{
    for (int i = 0; i < n; i++)
        each(out + i, bump);
}
"#,
        )],
        kernel: "count",
        line: 8,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: false,
    });
    has_reason(&report, "WW112", "calls through a function pointer");
}

#[test]
fn a_recursion_through_a_pointer_to_itself_is_not_taken_for_an_unchanged_one() {
    // `self(p + 1, ...)` moves `p`, but only through a pointer: nothing is passed on as is.
    let report = check(&Case {
        files: &[(
            "rec.c",
            r#"static void walk(double *p, int d)
{
    void (*self)(double *, int) = walk;
    p[0] += 1.0;
    if (d > 0)
        self(p + 1, d - 1);
}

void all(double *out, int n)
{
    for (int i = 0; i < n; i++)
        walk(out + 2 * i, 2);
}
"#,
        )],
        kernel: "all",
        line: 11,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(10), Arg::Int(4)],
        // Iteration `i` writes `out[2i, 2i + 3)`: neighbours share an element.
        conflict: true,
    });
    has_reason(&report, "WW112", "recursive");
}

#[test]
fn mutual_recursion_stays_unknown() {
    let report = check(&Case {
        files: &[(
            "rec.c",
            r#"static void odd(double *out, int i, int depth);
static void even(double *out, int i, int depth)
{
    if (depth > 0)
        odd(out, i, depth - 1);
    else
        out[i] = 1.0;
}
static void odd(double *out, int i, int depth)
{
    if (depth > 0)
        even(out, i, depth - 1);
    else
        out[i] = 2.0;
}

void parity(double *out, int n)
{
    for (int i = 0; i < n; i++)
        even(out, i, 3);
}
"#,
        )],
        kernel: "parity",
        line: 19,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: false,
    });
    has_reason(&report, "WW112", "is recursive (through");
}

#[test]
fn a_tree_search_writes_each_query_its_own_neighbours() {
    // The shape of a k-d tree search: the recursion descends the tree (`node` changes) and
    // inserts into the query's own `k` slots with an insertion loop that may stop early and
    // writes at the index it stopped at.
    let report = check(&Case {
        files: &[(
            "knn.c",
            r#"static void insert(double *best, double value, int k)
{
    int i;
    for (i = k - 1; i > 0; i--) {
        if (best[i - 1] > value)
            best[i] = best[i - 1];
        else
            break;
    }
    best[i] = value;
}

static void search(const double *tree, int node, int size, double query, double *best, int k)
{
    if (node >= size)
        return;
    double d = tree[node] - query;
    if (d < 0)
        d = -d;
    if (d < best[k - 1])
        insert(best, d, k);
    search(tree, 2 * node + 1, size, query, best, k);
    search(tree, 2 * node + 2, size, query, best, k);
}

void knn(const double *tree, int size, const double *queries, int n, double *best, int k)
{
    for (int q = 0; q < n; q++) {
        for (int j = 0; j < k; j++)
            best[q * k + j] = 1e30;
        search(tree, 0, size, queries[q], best + q * k, k);
    }
}
"#,
        )],
        kernel: "knn",
        line: 28,
        verdict: Verdict::Friendly,
        sections: &[("best", Some((0, 8 * 4 * 3))), ("queries", Some((0, 32)))],
        args: &[
            Arg::Doubles(7),
            Arg::Int(7),
            Arg::Doubles(4),
            Arg::Int(4),
            Arg::Doubles(12),
            Arg::Int(3),
        ],
        conflict: false,
    });
    // `insert`'s writes after its loop are within the `k` slots, not anywhere.
    let calls = format!("{:?}", report.calls);
    assert!(calls.contains("writes [0, 8*k)"), "{calls}");
}

#[test]
fn memcpy_and_memset_are_sections() {
    check(&Case {
        files: &[(
            "copy.c",
            r#"#include <string.h>

void copy_rows(double *restrict dst, const double *restrict src, double *restrict zero,
               int N, int n)
{
    for (int i = 0; i < N; i++) {
        memcpy(dst + i * n, src + i * n, n * sizeof(double));
        memset(zero + i * n, 0, n * sizeof(double));
    }
}
"#,
        )],
        kernel: "copy_rows",
        line: 6,
        verdict: Verdict::Friendly,
        sections: &[
            ("dst", Some((0, 96))),
            ("src", Some((0, 96))),
            ("zero", Some((0, 96))),
        ],
        args: &[
            Arg::Doubles(12),
            Arg::Doubles(12),
            Arg::Doubles(12),
            Arg::Int(4),
            Arg::Int(3),
        ],
        conflict: false,
    });
}

#[test]
fn overlapping_memcpy_calls_are_not_friendly() {
    // Each iteration copies n + 1 doubles: the last one overlaps the next iteration's row.
    let report = check(&Case {
        files: &[(
            "overlap.c",
            r#"#include <string.h>

void smear(double *restrict dst, const double *restrict src, int N, int n)
{
    for (int i = 0; i < N; i++)
        memcpy(dst + i * n, src, (n + 1) * sizeof(double));
}
"#,
        )],
        kernel: "smear",
        line: 5,
        verdict: Verdict::NeedsProfile,
        sections: &[("dst", Some((0, 104)))],
        args: &[Arg::Doubles(13), Arg::Doubles(4), Arg::Int(4), Arg::Int(3)],
        conflict: true,
    });
    // The overlap is not decided statically (no proof either way): left to a profile,
    // never friendly; the run shows it.
    has_reason(&report, "WW111", "may touch the same element of `dst`");
}

const STATIC_A: &str = r#"static void step(double *p, int i)
{
    p[i] = 1.0;
}

void first(double *p, int n)
{
    for (int i = 0; i < n; i++)
        step(p, i);
}
"#;

const STATIC_B: &str = r#"static void step(double *p, int i)
{
    p[0] += i;
}

void second(double *p, int n)
{
    for (int i = 0; i < n; i++)
        step(p, i);
}
"#;

#[test]
fn a_static_function_in_two_files_resolves_to_its_own() {
    // Analysed together, each file's loop calls its own `step`: `first`'s writes p[i]
    // (friendly), `second`'s accumulates into p[0] (a witnessed dependence). Each file alone is a
    // whole program (its `step` is static), so each runs on its own in the interpreter.
    let (_dir, units) = load(&[("a.c", STATIC_A), ("b.c", STATIC_B)]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    assert_eq!(find(&reports, "first", 8).verdict, Verdict::Friendly);
    let second = find(&reports, "second", 8);
    assert_eq!(second.verdict, Verdict::NotFriendly);
    has_reason(second, "WW101", "bytes [0, 8) of `p`");
    check(&Case {
        files: &[("a.c", STATIC_A)],
        kernel: "first",
        line: 8,
        verdict: Verdict::Friendly,
        sections: &[("p", Some((0, 40)))],
        args: &[Arg::Doubles(5), Arg::Int(5)],
        conflict: false,
    });
    check(&Case {
        files: &[("b.c", STATIC_B)],
        kernel: "second",
        line: 8,
        verdict: Verdict::NotFriendly,
        sections: &[("p", Some((0, 8)))],
        args: &[Arg::Doubles(5), Arg::Int(5)],
        conflict: true,
    });
}

#[test]
fn a_chain_of_callees_is_instantiated_at_every_level() {
    // kernel -> row_op -> put: the innermost write lands in row i of `out`.
    check(&Case {
        files: &[(
            "chain.c",
            r#"static void put(double *x, int j, double v)
{
    x[j] = v;
}

static void row_op(double *row, const double *in, int n)
{
    for (int j = 0; j < n; j++)
        put(row, j, in[j] * 0.5);
}

void rows(double *restrict out, const double *restrict in, int N, int n)
{
    for (int i = 0; i < N; i++)
        row_op(out + i * n, in + i * n, n);
}
"#,
        )],
        kernel: "rows",
        line: 14,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 96))), ("in", Some((0, 96)))],
        args: &[Arg::Doubles(12), Arg::Doubles(12), Arg::Int(3), Arg::Int(4)],
        conflict: false,
    });
}

#[test]
fn a_callee_writing_a_local_array_of_the_caller_stays_local() {
    // `tmp` is the caller's own array, passed by pointer: the callee's writes land there,
    // in the same representation as the caller's own accesses to it.
    let report = check(&Case {
        files: &[(
            "local.c",
            r#"static void zero3(double *v)
{
    for (int k = 0; k < 3; k++)
        v[k] = 0.0;
}

void use_tmp(double *out, int n)
{
    double tmp[3];
    for (int i = 0; i < n; i++) {
        zero3(tmp);
        out[i] = tmp[0] + tmp[1] + tmp[2];
    }
}
"#,
        )],
        kernel: "use_tmp",
        line: 10,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 32)))],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: false,
    });
    // The callee writes all of `tmp` on every call before the loop reads it: private (the
    // run's conflicts leave private objects out; each thread has its own copy).
    assert!(
        report.private.iter().any(|p| p.name == "tmp"),
        "{report:#?}"
    );
    assert!(report.parameters.iter().all(|p| p.name != "tmp"));
}

/// The summary of `function` in words (`Summary::describe`).
fn describe(source: &str, function: &str) -> (Vec<String>, advisor::summaries::Summary) {
    let (_dir, units) = load(&[("lib.c", source)]);
    let view = advisor::program::ProgramView::new(&units);
    let summaries = advisor::summaries::Summaries::new(&view);
    let f = view.resolve(0, function).expect("defined");
    let summary = (*summaries.of(f)).clone();
    let names = advisor::summaries::param_names(view.function(f));
    (summary.describe(&names), summary)
}

fn check_summary(source: &str, function: &str, expected: &[&str]) -> advisor::summaries::Summary {
    let (lines, summary) = describe(source, function);
    assert_eq!(lines, expected, "{summary:#?}");
    summary
}

#[test]
fn a_summary_is_a_section_per_parameter() {
    let s = check_summary(SET_ROW, "set_row", &["param `row`: writes [0, 8*n)"]);
    assert!(!s.is_read_only() && !s.is_pure());
}

#[test]
fn a_summary_is_relative_to_scalar_parameters() {
    check_summary(
        r#"void put3(double *out, int k)
{
    for (int j = 0; j < 3; j++)
        out[3 * k + j] = j;
}
"#,
        "put3",
        &["param `out`: writes [24*k, 24*k + 24)"],
    );
}

#[test]
fn pure_and_read_only_functions() {
    let s = check_summary("double sq(double x) { return x * x; }\n", "sq", &["pure"]);
    assert!(s.is_pure());
    let s = check_summary(
        r#"double sum(const double *a, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
"#,
        "sum",
        &["param `a`: reads [0, 8*n)"],
    );
    assert!(s.is_read_only());
}

#[test]
fn an_offset_read_from_memory_is_unknown_within_the_object() {
    let (lines, _) = describe(
        r#"void scatter(double *out, const int *idx, int i)
{
    out[idx[i]] = 1.0;
}
"#,
        "scatter",
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("param `out`: writes at an unknown offset") && l.contains("idx[i]")
        ),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"param `idx`: reads [4*i, 4*i + 4)".to_string()),
        "{lines:#?}"
    );
}

#[test]
fn a_pointer_read_from_a_parameter_is_one_level_of_indirection() {
    check_summary(
        r#"struct vec { int n; double *data; };

void clear(struct vec *v, int i)
{
    v->data[i] = 0.0;
}
"#,
        "clear",
        &[
            "param `v`: reads [8, 16)",
            "`*v->data`: writes [8*i, 8*i + 8)",
        ],
    );
}

#[test]
fn what_a_summary_cannot_follow_is_named() {
    let (lines, s) = describe(
        r#"struct node { struct node *next; double value; };

void through_pointer(void (*f)(double *), double *x) { f(x); }

void second_level(struct node *n) { n->next->next->value = 1.0; }
"#,
        "through_pointer",
    );
    assert!(
        lines.contains(&"unknown: calls through a function pointer".to_string()),
        "{lines:#?}"
    );
    assert!(!s.is_read_only());
    let (lines, _) = describe(
        r#"struct node { struct node *next; double value; };

void second_level(struct node *n) { n->next->next->value = 1.0; }
"#,
        "second_level",
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("unknown: writes through `n->next->next`")),
        "{lines:#?}"
    );
}

#[test]
fn a_loop_calling_a_function_that_writes_through_an_unknown_pointer_needs_a_profile() {
    let (_dir, units) = load(&[(
        "list.c",
        r#"struct node { struct node *next; double value; };

static void bump(struct node *n) { n->next->next->value += 1.0; }

void all(struct node **nodes, int n)
{
    for (int i = 0; i < n; i++)
        bump(nodes[i]);
}
"#,
    )]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let r = find(&reports, "all", 7);
    assert_eq!(r.verdict, Verdict::NeedsProfile, "{:#?}", r.reasons);
    has_reason(
        r,
        "WW112",
        "calls `bump`, which writes through `n->next->next`",
    );
}

#[test]
fn the_gaussian_elimination_step_loop_really_carries_its_dependence() {
    // samples/gaussian_fan2.c, main's `for t` (line 77) is reported not-friendly through
    // fan1/fan2's summaries (advisor/tests/it/samples.rs); the run must show the dependence.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/gaussian_fan2.c");
    let unit = load_unit(&TranslationUnitInput::new(path)).expect("sample loads");
    let program = &unit.lowered.program;
    let main = program.function("main").expect("main");
    let forest = analyze_loops(main);
    let l = forest
        .loops
        .iter()
        .find(|l| {
            l.source.is_some_and(|s| {
                unit.resolve(main.source_loop(s).keyword_span)
                    .is_some_and(|r| r.line == 77)
            })
        })
        .expect("the loop at line 77");
    let trace = Rc::new(RefCell::new(Trace::default()));
    let recorder = Recorder {
        trace: trace.clone(),
        kernel: "main".into(),
        header: l.header,
        blocks: l.blocks.clone(),
        param_values: HashSet::new(),
    };
    let mut interp = Interpreter::new(program)
        .with_fuel(50_000_000)
        .with_observer(Box::new(recorder));
    let result = interp.run_main(&["6"]).expect("runs");
    assert_eq!(result.exit_code, 0);
    assert!(conflict(&trace.borrow(), &|_| false).is_some());
}

#[test]
fn a_callee_writing_memory_allocated_in_the_iteration_is_private_to_it() {
    // `t` is a new object every iteration (allocated in the body, never stored anywhere):
    // fill's writes through it cannot meet another iteration's.
    let report = check(&Case {
        files: &[(
            "scratch.c",
            r#"#include <stdlib.h>

static double fill_sum(double *t, int n, double v)
{
    double s = 0;
    for (int k = 0; k < n; k++) {
        t[k] = v * k;
        s += t[k];
    }
    return s;
}

void firsts(double *restrict out, int N, int n)
{
    for (int i = 0; i < N; i++) {
        double *t = malloc(n * sizeof(double));
        out[i] = fill_sum(t, n, (double)i);
        free(t);
    }
}
"#,
        )],
        kernel: "firsts",
        line: 15,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 32)))],
        args: &[Arg::Doubles(4), Arg::Int(4), Arg::Int(3)],
        conflict: false,
    });
    has_reason(&report, "WW120", "malloc");
}

#[test]
fn a_pointer_the_loop_rewrites_is_not_a_fixed_base() {
    // `put` writes through `s->data`; the loop points `v.data` elsewhere every iteration,
    // so that every call writes out[n - 1]. Offsets relative to `s->data` say nothing
    // about the element: the pair must stay undecided (and the run shows the conflict).
    let report = check(&Case {
        files: &[(
            "view.c",
            r#"struct view { double *data; };

static void put(struct view *s, int i)
{
    s->data[i] = 1.0;
}

void shift(double *out, int n)
{
    for (int i = 0; i < n; i++) {
        struct view v;
        v.data = out + (n - 1 - i);
        put(&v, i);
    }
}
"#,
        )],
        kernel: "shift",
        line: 10,
        verdict: Verdict::NeedsProfile,
        sections: &[],
        args: &[Arg::Doubles(4), Arg::Int(4)],
        conflict: true,
    });
    has_reason(&report, "WW111", "may touch the same element of `v.data`");
}

#[test]
fn a_callee_allocating_private_memory_is_friendly_with_a_remark() {
    // `work` allocates, uses and frees its own buffer: private to the call (it never leaves
    // `work`); the allocation is a remark, as in the loop itself.
    let report = check(&Case {
        files: &[(
            "work.c",
            r#"#include <stdlib.h>

static void work(double *out, int i)
{
    double *t = malloc(2 * sizeof(double));
    t[0] = i;
    t[1] = 2.0 * i;
    out[i] = t[0] + t[1];
    free(t);
}

void all(double *out, int n)
{
    for (int i = 0; i < n; i++)
        work(out, i);
}
"#,
        )],
        kernel: "all",
        line: 14,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 40)))],
        args: &[Arg::Doubles(5), Arg::Int(5)],
        conflict: false,
    });
    has_reason(
        &report,
        "WW120",
        "`work` calls `free`, `malloc` in the loop",
    );
}

#[test]
fn accesses_of_different_sizes_overlap_by_bytes() {
    // Iteration i writes 8 bytes at 16*i + 12, which covers byte 16*(i + 1) that iteration
    // i + 1 reads: a flow dependence at distance 1 (the exact test once compared the
    // difference with the sizes swapped and called this loop friendly).
    let report = check(&Case {
        files: &[(
            "mix.c",
            r#"void mix(char *restrict p, char *restrict out, int n)
{
    for (int i = 0; i < n; i++) {
        *(long *)(p + 16 * i + 12) = 7;
        out[i] = p[16 * i];
    }
}
"#,
        )],
        kernel: "mix",
        line: 3,
        verdict: Verdict::NotFriendly,
        sections: &[("p", Some((0, 68)))],
        args: &[Arg::Doubles(10), Arg::Doubles(1), Arg::Int(4)],
        conflict: true,
    });
    has_reason(
        &report,
        "WW101",
        "read-after-write dependence on `p` at distance 1",
    );
}

#[test]
fn a_callee_initializing_one_struct_per_iteration_is_friendly() {
    // velvet's newRecycleBinArray: fields of 8 and 4 bytes, one 32-byte struct per call.
    check(&Case {
        files: &[(
            "bins.c",
            r#"struct bin { double *list; double *free; long size; int pos; int per_chunk; };

static void init_bin(struct bin *b, long size, int per_chunk)
{
    b->list = 0;
    b->pos = per_chunk;
    b->per_chunk = per_chunk;
    b->size = size;
    b->free = 0;
}

void init_bins(struct bin *bins, int n, long size, int per_chunk)
{
    for (int i = 0; i < n; i++)
        init_bin(bins + i, size, per_chunk);
}
"#,
        )],
        kernel: "init_bins",
        line: 14,
        verdict: Verdict::Friendly,
        sections: &[("bins", Some((0, 128)))],
        args: &[Arg::Doubles(16), Arg::Int(4), Arg::Int(8), Arg::Int(3)],
        conflict: false,
    });
}

#[test]
fn assert_and_ffs_have_device_versions() {
    // glibc's `assert` expands to `__assert_fail`; CUDA has a device `assert` and `__ffs`.
    let source = "#include <assert.h>\n#include <strings.h>\n\
                  void bits(const int *a, int *out, int n)\n\
                  {\n    for (int i = 0; i < n; i++) {\n        assert(a[i] != 0);\n        out[i] = ffs(a[i]);\n    }\n}\n";
    let (_dir, units) = load(&[("bits.c", source)]);
    let reports = analyze_unit(&units[0], &Filter::default());
    let r = find(&reports, "bits", 5);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    let devices: Vec<(&str, &str)> = r
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.device.as_str()))
        .collect();
    assert!(
        devices.contains(&("__assert_fail", "builtin")),
        "{devices:?}"
    );
    assert!(devices.contains(&("ffs", "builtin")), "{devices:?}");
}

const MAYBE_ALLOCATED: &str = r#"#include <stdlib.h>
static void q_cart(double *q, const double *d) { for (int k = 0; k < 3; k++) q[k] = 2.0 * d[k]; }
static void wang(double *dm, const double *q_dir, int n) { for (int k = 0; k < n; k++) dm[k] = q_dir ? q_dir[k % 3] : 0.0; }
void all(double *dm, const double *q_direction, int nq, int n)
{
    double *q_dir_cart = NULL;
    if (q_direction) { q_dir_cart = (double *) malloc(3 * sizeof(double)); q_cart(q_dir_cart, q_direction); }
    for (int i = 0; i < nq; i++)
        wang(dm + n * i, q_dir_cart, n);
    free(q_dir_cart);
}
"#;

#[test]
fn a_pointer_that_is_a_new_allocation_or_null_aliases_no_parameter() {
    // phonopy's dynmat.c: `q_dir_cart` is malloc'ed or NULL, so it cannot point into `dm`.
    let report = check(&Case {
        files: &[("dynmat.c", MAYBE_ALLOCATED)],
        kernel: "all",
        line: 8,
        verdict: Verdict::Friendly,
        sections: &[("dm", Some((0, 96)))],
        args: &[Arg::Doubles(12), Arg::Doubles(3), Arg::Int(4), Arg::Int(3)],
        conflict: false,
    });
    assert!(
        !report.assumptions.iter().any(|a| a.contains("q_dir_cart")),
        "nothing is assumed about the allocation: {:#?}",
        report.assumptions
    );
}

#[test]
fn messages_name_the_one_version_of_a_variable_a_loop_sees_plainly() {
    // Two loops each with their own `k`: the analyses call the second one `k#2`; the
    // second loop's report names only that one (the variable its dependence is about is
    // `k` too), so its message says `k`, and no internal numbering.
    let source = "void f(int *a, const int *b, int n)\n{\n    int k = 0;\n\
                  \x20   for (int i = 0; i < n; i++) { a[k] = b[i]; if (b[i] > 0) k++; }\n\
                  \x20   k = n;\n    for (int i = 0; i < n; i++) {\n        a[k] = b[i];\n\
                  \x20       if (b[i] > 0) k--;\n    }\n}\n";
    let (_dir, units) = load(&[("versions.c", source)]);
    let reports = analyze_unit(&units[0], &Filter::default());
    let second = find(&reports, "f", 6);
    let messages: Vec<&str> = second.reasons.iter().map(|r| r.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("depends on `k`,")),
        "{messages:#?}"
    );
    assert!(
        reports
            .iter()
            .flat_map(|r| &r.reasons)
            .all(|r| !r.message.contains('#')),
        "{:#?}",
        reports.iter().flat_map(|r| &r.reasons).collect::<Vec<_>>()
    );
}

#[test]
fn a_const_global_only_the_callee_names_is_not_modified_by_the_loop() {
    // The caller's file does not declare `epzero`: only the callee's file does (C requires
    // every declaration of one object to agree on `const`), so the callee's read of it is
    // no may-alias pair with the stores through `v`.
    check(&Case {
        files: &[
            (
                "limits.c",
                "const double epzero = 0.5;\nvoid clip(double *v, int i) { v[i] = v[i] > epzero ? v[i] - epzero : 0.0; }\n",
            ),
            (
                "sweep.c",
                "void clip(double *v, int i);\nvoid sweep(double *v, int n)\n{\n    for (int i = 0; i < n; i++)\n        clip(v, i);\n}\n",
            ),
        ],
        kernel: "sweep",
        line: 4,
        verdict: Verdict::Friendly,
        sections: &[("v", Some((0, 64)))],
        args: &[Arg::Doubles(8), Arg::Int(8)],
        conflict: false,
    });
}

/// Twelve functions each writing through a global pointer of their own, and `top` calling
/// them all, and `loop` calling `top` in a loop.
fn many_reasons() -> String {
    let mut source = String::new();
    for k in 0..12 {
        source.push_str(&format!(
            "double *g{k:02};\nvoid w{k:02}(void) {{ g{k:02}[0] = 1.0; }}\n"
        ));
    }
    source.push_str("void top(void) {\n");
    for k in 0..12 {
        source.push_str(&format!("    w{k:02}();\n"));
    }
    source.push_str("}\n\nvoid all(double *a, int n)\n{\n    for (int i = 0; i < n; i++) {\n        a[i] = 0.0;\n        top();\n    }\n}\n");
    source
}

#[test]
fn a_summary_lists_its_first_reasons_and_counts_the_rest() {
    let (lines, summary) = describe(&many_reasons(), "top");
    let unknown: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("unknown: "))
        .collect();
    assert_eq!(summary.unknown.total(), 12, "{lines:#?}");
    // The first eight in sorted order, then the count of the four others.
    let expected: Vec<String> = (0..8)
        .map(|k| {
            format!(
                "unknown: calls `w{k:02}`, which writes through `g{k:02}`, a pointer it does not receive as a parameter"
            )
        })
        .chain(["unknown: 4 more reasons".to_string()])
        .collect();
    assert_eq!(unknown, expected.iter().collect::<Vec<_>>());

    let (_dir, units) = load(&[("many.c", many_reasons().as_str())]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let r = find(&reports, "all", 42);
    assert_eq!(r.verdict, Verdict::NeedsProfile, "{:#?}", r.reasons);
    // A finding names three, and counts the others through `top`'s count, not its list.
    has_reason(
        r,
        "WW112",
        "calls `top`, which calls `w00`, which writes through `g00`, a pointer it does not receive as a parameter; calls `top`, which calls `w01`",
    );
    has_reason(r, "WW112", "(and 9 more)");
    let call = r
        .calls
        .iter()
        .find(|c| c.name == "top")
        .expect("the call of top");
    assert_eq!(
        call.effects
            .iter()
            .filter(|e| e.starts_with("unknown: "))
            .count(),
        9
    );
}

#[test]
fn members_of_a_struct_passed_by_value_are_parameters_in_the_callers_words() {
    // `mid` passes its copy of the caller's struct on to `one`, which reads through `d.p`:
    // the pointer at the same offset of the caller's `data`. The loop's parameter is that
    // member as the caller names it, with its C type and section; a callee's memory is
    // not one pool with no name a port could map.
    let report = check(&Case {
        files: &[(
            "byvalue.c",
            r#"typedef struct { int n; double *p; } D;

static double one(int k, D d) { return 2.0 * d.p[k]; }

static double mid(int k, D d) { return one(k, d) + 1.0; }

void scale(double *out, double *p, int n)
{
    D data;
    data.n = n;
    data.p = p;
    for (int i = 0; i < n; i++)
        out[i] = mid(i, data);
}
"#,
        )],
        kernel: "scale",
        line: 12,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 32)))],
        args: &[Arg::Doubles(4), Arg::Doubles(4), Arg::Int(4)],
        conflict: false,
    });
    let member = report
        .parameters
        .iter()
        .find(|p| p.name == "data.p")
        .unwrap_or_else(|| panic!("no `data.p` in {:#?}", report.parameters));
    assert_eq!(member.c_type.as_deref(), Some("double *"));
    assert!(member.nested);
    assert_eq!(
        member.bytes.as_ref().map(|b| b.size.as_str()),
        Some("8*n"),
        "{:?}",
        member.notes
    );
    assert!(
        report.parameters.iter().all(|p| p.c_type.is_some()),
        "{:#?}",
        report.parameters
    );
}

#[test]
fn a_struct_copy_the_callee_writes_is_not_the_callers() {
    // `bump` points its own copy elsewhere before reading through it: what it reads is not
    // the caller's `data.p`, so nothing is named after it.
    let report = check(&Case {
        files: &[(
            "byvalue.c",
            r#"typedef struct { int n; double *p; } D;

static double bump(int k, D d, double *other) { d.p = other; return d.p[k]; }

void scale(double *out, double *p, double *q, int n)
{
    D data;
    data.n = n;
    data.p = p;
    for (int i = 0; i < n; i++)
        out[i] = bump(i, data, q);
}
"#,
        )],
        kernel: "scale",
        line: 10,
        verdict: Verdict::Friendly,
        sections: &[("out", Some((0, 32)))],
        args: &[
            Arg::Doubles(4),
            Arg::Doubles(4),
            Arg::Doubles(4),
            Arg::Int(4),
        ],
        conflict: false,
    });
    assert!(
        report.parameters.iter().all(|p| p.name != "data.p"),
        "{:#?}",
        report.parameters
    );
}

/// A global of another file that only the callee names: `table` of b.c, reached by
/// `scale`'s call to `get`.
const GLOBAL_USER: &str = r#"
double get(int i);

void scale(double *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = 2.0 * get(i);
}
"#;

const GLOBAL_OWNER: &str = r#"
double table[64][3];

double get(int i)
{
    return table[i][1];
}
"#;

#[test]
fn a_global_of_another_file_a_callee_reads_has_its_type() {
    let (_dir, units) = load(&[("a.c", GLOBAL_USER), ("b.c", GLOBAL_OWNER)]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let scale = find(&reports, "scale", 6);
    let table = scale
        .parameters
        .iter()
        .find(|p| p.name.starts_with("table"))
        .unwrap_or_else(|| panic!("no parameter for `table`: {scale:#?}"));
    // A pointer to its rows, printed with b.c's types (a.c declares no `table`).
    assert_eq!(table.c_type.as_deref(), Some("double (*)[3]"), "{scale:#?}");
}

/// A static of another file that only a callee names: its own name in the report, with
/// `@global` only where the caller's file has a global of that name too.
const STATIC_OWNER: &str = r#"
static double table[64][3];

double get(int i)
{
    return table[i][1];
}
"#;

#[test]
fn a_static_of_another_file_reads_by_its_own_name_unless_the_caller_s_file_has_one() {
    let (_dir, units) = load(&[("a.c", GLOBAL_USER), ("b.c", STATIC_OWNER)]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let scale = find(&reports, "scale", 6);
    let names: Vec<&str> = scale.parameters.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"table"), "{names:?}");
    assert!(names.iter().all(|n| !n.contains('@')), "{names:?}");

    let user = GLOBAL_USER
        .replace("double get(int i);", "double get(int i);\ndouble table[4];")
        .replace("2.0 * get(i);", "2.0 * get(i) + table[i % 4];");
    let (_dir, units) = load(&[("a.c", user.as_str()), ("b.c", STATIC_OWNER)]);
    let reports = analyze_units(&units, &Filter::default(), &Default::default());
    let scale = find(&reports, "scale", 7);
    let mut names: Vec<&str> = scale.parameters.iter().map(|p| p.name.as_str()).collect();
    names.retain(|n| n.starts_with("table"));
    names.sort();
    assert_eq!(names, ["table", "table@global"], "{scale:#?}");
}
