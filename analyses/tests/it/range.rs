//! Symbolic range analysis on the thesis' examples (Fig. 8.8, 8.9), the samples' loops,
//! interval arithmetic corner cases, and generated programs checked against concrete runs.

use analyses::range::{range_analysis, Range, RangeConfig, RangeFacts};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use frontend::ir::{Block, Function, InstKind, Value};
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::path::PathBuf;
use symbolic::SignEnv;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

/// A C file to analyse: a sample, or source written to a fresh, private temporary
/// directory that is removed when this is dropped.
struct Input {
    path: PathBuf,
    /// The directory holding written source (`None` for a sample): kept as long as the
    /// file is used.
    _dir: Option<tempfile::TempDir>,
}

/// A sample name, or C source written to a fresh temporary file.
fn input(source_or_sample: &str) -> Input {
    if source_or_sample.ends_with(".c") && !source_or_sample.contains('\n') {
        return Input {
            path: sample(source_or_sample),
            _dir: None,
        };
    }
    let dir = tempfile::Builder::new()
        .prefix("warpwise-range-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("f.c");
    std::fs::write(&path, source_or_sample).expect("write fixture");
    Input {
        path,
        _dir: Some(dir),
    }
}

struct Analyzed {
    /// The analysed file; the unit reads its lines again for diagnostics.
    _input: Input,
    unit: Unit,
    function: String,
    facts: RangeFacts,
}

fn analyze(source_or_sample: &str, function: &str, config: &RangeConfig) -> Analyzed {
    let input = input(source_or_sample);
    let unit = load_unit(&TranslationUnitInput::new(&input.path)).expect("loads");
    let facts = {
        let program = &unit.lowered.program;
        let func = program.function(function).expect("function exists");
        let forest = analyze_loops(func);
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        range_analysis(program, func, &forest, &rec, &SignEnv::new(), config)
    };
    if std::env::var_os("RANGE_DEBUG").is_some() {
        let program = &unit.lowered.program;
        let func = program.function(function).expect("function exists");
        for b in func.blocks() {
            for &v in &func.block(b).insts {
                println!(
                    "{b} {v} {}: {}",
                    frontend::ir::print::render_value(func, v),
                    facts.of(v)
                );
            }
        }
    }
    Analyzed {
        _input: input,
        unit,
        function: function.to_string(),
        facts,
    }
}

impl Analyzed {
    fn func(&self) -> &Function {
        self.unit
            .lowered
            .program
            .function(&self.function)
            .expect("function exists")
    }

    fn line(&self, v: Value) -> Option<u32> {
        self.unit
            .resolve(self.func().inst(v).origin.span)
            .map(|r| r.line)
    }

    /// Resolves a location: `name@L` is the last value named `name` defined on line `L`;
    /// `name@then:L`, `name@else:L` the value of `name` entering the branch of the `if` on
    /// line `L`; `name@body:L` entering the body of the loop on line `L`.
    fn range_at(&self, location: &str) -> Range {
        let func = self.func();
        let (name, place) = location.split_once('@').expect("name@place");
        let (kind, line) = place.split_once(':').unwrap_or(("def", place));
        let line: u32 = line.parse().expect("line number");
        let named = |v: &Value| func.inst(*v).origin.var_name.as_deref() == Some(name);
        if kind == "def" {
            let v = func
                .values()
                .filter(named)
                .filter(|v| self.line(*v) == Some(line))
                .last()
                .unwrap_or_else(|| panic!("no value `{name}` defined on line {line}"));
            return self.facts.of(v);
        }
        let resolve_line = |span| self.unit.resolve(span).map(|r| r.line);
        let block: Block = match kind {
            "then" | "else" => {
                let region = func
                    .ifs
                    .iter()
                    .find(|r| resolve_line(r.span) == Some(line))
                    .unwrap_or_else(|| panic!("no if on line {line}"));
                if kind == "then" {
                    region.then_block
                } else {
                    region.else_block.expect("an else branch")
                }
            }
            "store" | "load" => {
                let v = func
                    .values()
                    .filter(|v| self.line(*v) == Some(line))
                    .filter_map(|v| match func.inst(v).kind {
                        InstKind::Store { addr, .. } if kind == "store" => Some(addr),
                        InstKind::Load { addr } if kind == "load" => Some(addr),
                        _ => None,
                    })
                    .last()
                    .unwrap_or_else(|| panic!("no {kind} on line {line}"));
                return self.facts.of(v);
            }
            "body" => {
                func.loops
                    .iter()
                    .find(|l| resolve_line(l.keyword_span) == Some(line))
                    .unwrap_or_else(|| panic!("no loop on line {line}"))
                    .body_block
            }
            other => panic!("unknown place `{other}`"),
        };
        let forest = analyze_loops(func);
        let depth = |v: Value| {
            forest
                .innermost(func.inst(v).block)
                .map_or(0, |l| forest.loop_(l).depth)
        };
        let v = func
            .values()
            .filter(named)
            .filter(|v| {
                let b = func.inst(*v).block;
                if b == block {
                    func.inst(*v).kind.is_phi()
                } else {
                    forest.dominates(b, block)
                }
            })
            .max_by_key(|v| (depth(*v), v.0))
            .unwrap_or_else(|| panic!("no value `{name}` available at {location}"));
        self.facts.at(block, v)
    }

    /// All named values with their ranges, for failure messages.
    fn dump(&self) -> String {
        let func = self.func();
        func.values()
            .filter_map(|v| {
                let name = func.inst(v).origin.var_name.as_deref()?;
                Some(format!(
                    "{name}@{} ({v}): {}",
                    self.line(v).unwrap_or(0),
                    self.facts.of(v)
                ))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs the analysis and compares `location => range` expectations.
fn check(source_or_sample: &str, function: &str, expectations: &[(&str, &str)]) {
    check_with(
        source_or_sample,
        function,
        &RangeConfig::default(),
        expectations,
    )
}

fn check_with(
    source_or_sample: &str,
    function: &str,
    config: &RangeConfig,
    expectations: &[(&str, &str)],
) {
    let a = analyze(source_or_sample, function, config);
    assert_eq!(a.facts.gave_up(), None);
    let mut failures = Vec::new();
    for (location, expected) in expectations {
        let actual = a.range_at(location).to_string();
        if actual != *expected {
            failures.push(format!("{location}: expected {expected}, got {actual}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n--- all ranges ---\n{}",
        failures.join("\n"),
        a.dump()
    );
}

/// Every loop of every sample: `function line iv: range at body entry`.
#[test]
fn every_sample_loop_index_has_its_exact_range() {
    let mut lines = Vec::new();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".c"))
        .collect();
    names.sort();
    for name in names {
        let unit = load_unit(&TranslationUnitInput::new(dir.join(&name))).expect("loads");
        for func in &unit.lowered.program.functions {
            if func.name == "main" {
                continue;
            }
            let a = analyze(&name, &func.name, &RangeConfig::default());
            let forest = analyze_loops(func);
            for l in &forest.loops {
                let Some(src) = l.source else { continue };
                let sl = func.source_loop(src);
                let line = unit.resolve(sl.keyword_span).map_or(0, |r| r.line);
                for iv in &l.induction_variables {
                    lines.push(format!(
                        "{name} {} {line} {}: {}",
                        func.name,
                        iv.name.as_deref().unwrap_or("?"),
                        a.facts.at(sl.body_block, iv.phi)
                    ));
                }
            }
        }
    }
    let expected = "\
aliasing.c shift 39 i: [0, n - 1]
char_cast.c cast_copy 28 i: [0, 14]
conv2d_rgb.c convolve 63 y: [0, in_image->height - 1]
conv2d_rgb.c convolve 64 x: [0, 3*trunc((3*in_image->width + 2)/3) - 3]
conv2d_rgb.c convolve 68 fy: [0, filter->height - 1]
conv2d_rgb.c convolve 71 fx: [0, filter->width - 1]
dot_product.c dot 27 i: [0, n - 1]
every_fourth_add.c every_fourth 43 i: [-n, -n + 4*trunc((2*n + 3)/4) - 4]
gaussian_fan2.c fan1 40 x: [t + 1, N - 1]
gaussian_fan2.c fan2 46 x: [t + 1, N - 1]
gaussian_fan2.c fan2 47 y: [t, N - 1]
get_index.c f 45 i: [0, n - 1]
get_index.c f 48 k: [0, 9]
histogram.c histogram 34 i: [0, n - 1]
jacobi2d.c jacobi2d 35 i: [1, n - 2]
jacobi2d.c jacobi2d 36 j: [1, n - 2]
matmul.c matmul 38 i: [0, ni - 1]
matmul.c matmul 39 j: [0, nj - 1]
matmul.c matmul 40 k: [0, nk - 1]
matrix_add.c add 38 i: [0, N - 1]
matrix_add.c add 39 j: [0, N - 1]
matrix_add_struct.c add 37 i: [0, N - 1]
matrix_add_struct.c add 38 j: [0, N - 1]
prefix_sum.c prefix_sum 28 i: [1, n - 1]
range_example.c range_example 40 i: [0, n - 1]
reconstruction_example.c sum_rows 32 i: [0, n - 1]
reconstruction_example.c sum_rows 35 j: [0, m - 1]
signal_conv1d.c conv1d 44 i: [0, size - 1]
signal_conv1d.c conv1d 46 k: [-slice, size + slice - 2]
srad_clamp.c diffusion_coeff 39 i: [0, rows - 1]
srad_clamp.c diffusion_coeff 40 j: [0, cols - 1]
srad_clamp.c diffusion_coeff_minmax 56 i: [0, rows - 1]
srad_clamp.c diffusion_coeff_minmax 57 j: [0, cols - 1]
transpose.c transpose 37 i: [0, 159]
transpose.c transpose 38 j: [0, 127]
upsample.c upsample 26 i: [0, n - 1]
vector_add.c vadd 27 i: [0, n - 1]";
    assert_eq!(lines.join("\n"), expected);
}

#[test]
fn figure_8_9_range_example() {
    check(
        "range_example.c",
        "range_example",
        &[
            // The thesis prints n^2; (n-1)^2 is the tight bound.
            ("k@42", "[0, -2*n + n^2 + 1]"),
            ("_@load:43", "[in, in - 2*n + n^2 + 1]"),
            ("_@store:43", "[out, 4*n + out - 4]"),
            ("i@body:40", "[0, n - 1]"),
            ("i@then:45", "[0, min(m - 1, n - 1)]"),
            ("i@else:45", "[max(0, m), n - 1]"),
            // out[0] is written in the loop (out[i] at i = 0): not invariant, so j is top.
            ("j@48", "[-inf, +inf]"),
            ("l@49", "[-inf, +inf]"),
            ("mux@52", "[min(m, n), max(m, n)]"),
            ("w@53", "[min(m, n), max(m + n - 1, 2*n - 1)]"),
        ],
    );
}

#[test]
fn figure_8_9_with_injected_profile_values() {
    let config = RangeConfig::default().inject("n", 40).inject("m", 25);
    check_with(
        "range_example.c",
        "range_example",
        &config,
        &[
            ("k@42", "[0, 1521]"),
            ("i@then:45", "[0, 24]"),
            ("i@else:45", "[25, 39]"),
            // m = 25 > 10: the ternary's `m` arm is infeasible.
            ("mux@52", "[40, 40]"),
            ("w@53", "[40, 79]"),
        ],
    );
}

const FIG_8_8: &str = "\
void f(int *a, int *b, int *c, int n)
{
    int k = 10;
    for (int i = 0; i < n; i++) {
        c[i] = a[k] + b[i];
        k++;
    }
}
";

#[test]
fn figure_8_8_induction_variable_substitution() {
    check(
        FIG_8_8,
        "f",
        &[
            ("k@body:4", "[10, n + 9]"),
            ("i@body:4", "[0, n - 1]"),
            ("_@load:5", "[b, b + 4*n - 4]"),
            ("_@store:5", "[c, c + 4*n - 4]"),
        ],
    );
}

#[test]
fn every_fourth_add_is_tight_and_instantiates() {
    check(
        "every_fourth_add.c",
        "every_fourth",
        &[
            ("i@body:43", "[-n, -n + 4*trunc((2*n + 3)/4) - 4]"),
            (
                "_@store:44",
                "[a + 4*n, a + 4*n + 16*trunc((2*n + 3)/4) - 16]",
            ),
        ],
    );
    let config = RangeConfig::default().inject("n", 200);
    check_with(
        "every_fourth_add.c",
        "every_fourth",
        &config,
        &[
            ("i@body:43", "[-200, 196]"),
            ("_@store:44", "[a + 800, a + 2384]"),
        ],
    );
}

const ARITH: &str = "\
void arith(int *out)
{
    for (int i = 0; i < 10; i++) {
        for (int j = -5; j < 3; j++) {
            int a = i - 20;
            int b = j - 3;
            int nn = a * b;
            int mixed = a * j;
            int both = j * (j + 1);
            int q = a / -3;
            int q2 = j / 2;
            int r = a % 7;
            int r2 = i % 4;
            int r3 = j % -4;
            int sh = i << 2;
            int sr = a >> 1;
            int sq = j * j;
            int pn = i * b;
            out[0] = nn + mixed + both + q + q2 + r + r2 + r3 + sh + sr + sq + pn;
        }
    }
}
";

#[test]
fn interval_arithmetic_sign_cases() {
    check(
        ARITH,
        "arith",
        &[
            ("j@body:4", "[-5, 2]"),
            ("a@5", "[-20, -11]"),
            ("b@6", "[-8, -1]"),
            ("nn@7", "[11, 160]"),
            ("mixed@8", "[-40, 100]"),
            ("both@9", "[-15, 20]"),
            ("q@10", "[3, 6]"),
            ("q2@11", "[-2, 1]"),
            ("r@12", "[-6, 0]"),
            ("r2@13", "[0, 3]"),
            ("r3@14", "[-3, 2]"),
            ("sh@15", "[0, 36]"),
            ("sr@16", "[-10, -6]"),
            ("sq@17", "[0, 25]"),
            ("pn@18", "[-72, 0]"),
        ],
    );
}

const BRANCHES: &str = "\
int branches(int n, int *out)
{
    int t = 0;
    for (int i = 0; i < 10; i++) {
        int x = i > 4 ? i - 10 : i;
        long li = i;
        if (li < 5) {
            t += i;
        }
        if (i + 2 < 6) {
            t += i;
        }
        if (i > 20) {
            t = 100;
        }
        out[i] = x;
    }
    for (int d = n; d > 0; d -= 2) {
        out[d] = d;
    }
    for (int e = 0; e != n; e++) {
        out[e] = e;
    }
    int w = 0;
    while (w < n) {
        w += 3;
    }
    return t + w;
}
";

#[test]
fn branch_constraints_ternaries_and_loops() {
    check(
        BRANCHES,
        "branches",
        &[
            ("x@5", "[-5, 4]"),
            ("i@then:7", "[0, 4]"),
            ("i@then:10", "[0, 3]"),
            ("d@body:18", "[n - 2*trunc((n + 1)/2) + 2, n]"),
            ("e@body:21", "[0, n - 1]"),
        ],
    );
    let a = analyze(BRANCHES, "branches", &RangeConfig::default());
    let func = a.func();
    let dead = func
        .ifs
        .iter()
        .find(|r| a.unit.resolve(r.span).map(|l| l.line) == Some(13))
        .expect("if on line 13");
    assert!(!a.facts.is_reachable(dead.then_block), "{}", a.dump());
}

#[test]
fn the_iteration_cap_gives_top_with_a_reason() {
    let mut config = RangeConfig::default();
    config.solver.max_block_visits = 3;
    let a = analyze("range_example.c", "range_example", &config);
    assert!(a
        .facts
        .gave_up()
        .is_some_and(|r| r.contains("3 block visits")));
    assert!(a.range_at("k@42").is_top());
}

/// Random small C functions over parameters `n` and `m`, driven by a list of choices (so
/// that proptest shrinks towards shorter, simpler programs). Every assignment and every
/// loop iteration prints `P<id> <value>` through a `printf` whose format names the probe.
struct Generator {
    choices: Vec<u32>,
    next: usize,
    probes: usize,
    loops: usize,
    out: String,
}

impl Generator {
    fn pick(&mut self, n: u32) -> u32 {
        let c = self.choices.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        c % n
    }

    fn coefficient(&mut self) -> i32 {
        self.pick(5) as i32 - 2
    }

    /// `c0 + c1*t1 + c2*t2` over `terms`.
    fn affine(&mut self, terms: &[String]) -> String {
        let mut e = format!("{}", self.pick(11) as i32 - 5);
        for _ in 0..2 {
            if terms.is_empty() {
                break;
            }
            let t = &terms[self.pick(terms.len() as u32) as usize];
            let c = self.coefficient();
            if c != 0 {
                e = format!("{e} + ({c}) * {t}");
            }
        }
        e
    }

    fn probe(&mut self, indent: &str, var: &str) {
        let id = self.probes;
        self.probes += 1;
        self.out
            .push_str(&format!("{indent}printf(\"P{id} %d\\n\", {var});\n"));
    }

    /// `bounds` are the terms loop bounds may use (parameters and enclosing indices), `vars`
    /// the assignable locals.
    fn block(&mut self, depth: usize, bounds: &[String], vars: &[String]) {
        let indent = "    ".repeat(depth + 1);
        let count = 1 + self.pick(3);
        for _ in 0..count {
            let mut scope: Vec<String> = bounds.to_vec();
            scope.extend(vars.iter().cloned());
            match self.pick(if depth < 2 { 6 } else { 3 }) {
                0 | 1 => {
                    let v = vars[self.pick(vars.len() as u32) as usize].clone();
                    let rhs = match self.pick(6) {
                        0 => self.affine(bounds),
                        1 => format!("{v} + {}", self.affine(bounds)),
                        2 => format!(
                            "({}) / {}",
                            self.affine(&scope),
                            [3, -2, 4][self.pick(3) as usize]
                        ),
                        3 => format!(
                            "({}) % {}",
                            self.affine(&scope),
                            [3, -4, 5][self.pick(3) as usize]
                        ),
                        4 => {
                            let a = bounds[self.pick(bounds.len() as u32) as usize].clone();
                            let b = bounds[self.pick(bounds.len() as u32) as usize].clone();
                            format!("({a} - {}) * ({b} + {})", self.pick(5), self.pick(5))
                        }
                        _ => {
                            let a = scope[self.pick(scope.len() as u32) as usize].clone();
                            let cmp = ["<", "<=", ">", ">=", "==", "!="][self.pick(6) as usize];
                            let b = self.affine(bounds);
                            let x = self.affine(&scope);
                            let y = self.affine(bounds);
                            format!("({a} {cmp} {b}) ? ({x}) : ({y})")
                        }
                    };
                    self.out.push_str(&format!("{indent}{v} = {rhs};\n"));
                    self.probe(&indent, &v);
                }
                2 => {
                    let a = scope[self.pick(scope.len() as u32) as usize].clone();
                    let cmp = ["<", "<=", ">", ">=", "==", "!="][self.pick(6) as usize];
                    let b = self.affine(&scope);
                    self.out
                        .push_str(&format!("{indent}if ({a} {cmp} {b}) {{\n"));
                    self.block(depth + 1, bounds, vars);
                    self.out.push_str(&format!("{indent}}} else {{\n"));
                    self.block(depth + 1, bounds, vars);
                    self.out.push_str(&format!("{indent}}}\n"));
                }
                3 | 4 => {
                    let i = format!("i{}", self.loops);
                    self.loops += 1;
                    let lo = self.affine(bounds);
                    let hi = self.affine(bounds);
                    let step = 1 + self.pick(3) as i32;
                    let (cmp, step) = match self.pick(4) {
                        0 => ("<", step),
                        1 => ("<=", step),
                        2 => (">", -step),
                        _ => (">=", -step),
                    };
                    self.out.push_str(&format!(
                        "{indent}for (int {i} = {lo}; {i} {cmp} {hi}; {i} += {step}) {{\n"
                    ));
                    self.probe(&format!("{indent}    "), &i);
                    let mut inner = bounds.to_vec();
                    inner.push(i);
                    self.block(depth + 1, &inner, vars);
                    self.out.push_str(&format!("{indent}}}\n"));
                }
                _ => {
                    let w = format!("w{}", self.loops);
                    self.loops += 1;
                    let start = self.affine(bounds);
                    let limit = self.affine(bounds);
                    let step = 1 + self.pick(3);
                    self.out.push_str(&format!(
                        "{indent}int {w} = {start};\n{indent}while ({w} < {limit}) {{\n"
                    ));
                    self.probe(&format!("{indent}    "), &w);
                    self.block(depth + 1, bounds, vars);
                    self.out
                        .push_str(&format!("{indent}    {w} += {step};\n{indent}}}\n"));
                }
            }
        }
    }

    fn program(choices: Vec<u32>) -> (String, usize) {
        let mut g = Generator {
            choices,
            next: 0,
            probes: 0,
            loops: 0,
            out: String::new(),
        };
        let params = vec!["n".to_string(), "m".to_string()];
        let vars: Vec<String> = (0..3).map(|k| format!("v{k}")).collect();
        g.out
            .push_str("#include <stdio.h>\n#include <stdlib.h>\n\nvoid f(int n, int m)\n{\n");
        for v in &vars {
            let init = g.affine(&params);
            g.out.push_str(&format!("    int {v} = {init};\n"));
            g.probe("    ", v);
        }
        g.block(0, &params, &vars);
        g.out.push_str(
            "}\n\nint main(int argc, char **argv)\n{\n    setvbuf(stdout, NULL, _IOLBF, 0);\n    f(atoi(argv[1]), atoi(argv[2]));\n    return 0;\n}\n",
        );
        (g.out, g.probes)
    }
}

/// Probe id -> (block of the printf, printed value).
fn probes(func: &Function) -> std::collections::HashMap<String, (Block, Value)> {
    let mut out = std::collections::HashMap::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            if let InstKind::Call { args, .. } = &func.inst(v).kind {
                let [fmt, value] = args.as_slice() else {
                    continue;
                };
                let mut fmt = *fmt;
                while let InstKind::Cast(x) | InstKind::PtrAdd { base: x, .. } = func.inst(fmt).kind
                {
                    fmt = x;
                }
                if let InstKind::StringAddr(text) = &func.inst(fmt).kind {
                    if let Some(id) = text.trim_start_matches('"').split(' ').next() {
                        out.insert(id.to_string(), (b, *value));
                    }
                }
            }
        }
    }
    out
}

fn run_generated(choices: Vec<u32>) -> Result<(), String> {
    use num_rational::BigRational;
    use symbolic::Var;
    let (source, _) = Generator::program(choices);
    let input = input(&source);
    let path = &input.path;
    let a = analyze(&source, "f", &RangeConfig::default());
    if let Some(reason) = a.facts.gave_up() {
        assert!(!reason.is_empty());
        return Ok(());
    }
    let func = a.func();
    let probes = probes(func);
    let exe = path.with_extension("bin");
    let status = std::process::Command::new("cc")
        // A signed overflow is undefined, and the ranges assume none: `-ftrapv` stops the
        // run at the first one, and the line-buffered output keeps every value printed
        // before it (those were computed without overflow, so they must lie in range).
        .args(["-std=c99", "-O0", "-w", "-ftrapv", "-o"])
        .arg(&exe)
        .arg(path)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !status.success() {
        return Err(format!("cc failed on\n{source}"));
    }
    for (n, m) in [(-3i64, 5i64), (0, 0), (7, 2), (4, 8), (1, -2)] {
        let output = std::process::Command::new(&exe)
            .arg(n.to_string())
            .arg(m.to_string())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&output.stdout);
        let ctx: std::collections::HashMap<Var, BigRational> = [
            (Var::new("n"), BigRational::from_integer(n.into())),
            (Var::new("m"), BigRational::from_integer(m.into())),
        ]
        .into_iter()
        .collect();
        for line in text.lines() {
            let (id, value) = line.split_once(' ').ok_or("bad output line")?;
            let value: i64 = value.parse().map_err(|_| "bad value")?;
            let &(block, v) = probes.get(id).ok_or(format!("unknown probe {id}"))?;
            let range = a.facts.at(block, v);
            let value = BigRational::from_integer(value.into());
            let eval = |b: &analyses::range::Bound| b.finite().map(|e| e.eval(&ctx));
            let ok_lo = match eval(&range.lo) {
                None => true,
                Some(Ok(lo)) => lo <= value,
                Some(Err(e)) => return Err(format!("{id}: cannot evaluate {range}: {e:?}")),
            };
            let ok_hi = match eval(&range.hi) {
                None => true,
                Some(Ok(hi)) => value <= hi,
                Some(Err(e)) => return Err(format!("{id}: cannot evaluate {range}: {e:?}")),
            };
            if !(ok_lo && ok_hi) {
                return Err(format!(
                    "{id} = {value} outside {range} for n = {n}, m = {m} in\n{source}"
                ));
            }
        }
    }
    let _ = std::fs::remove_file(&exe);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..Default::default()
    })]

    /// Termination (no panic, within the cap or top with a reason) and soundness: every
    /// value a generated program prints lies in the range computed at the printf.
    #[test]
    fn generated_programs_terminate_and_ranges_contain_concrete_values(
        choices in proptest::collection::vec(0u32..1000, 20..120)
    ) {
        if let Err(e) = run_generated(choices) {
            proptest::prop_assert!(false, "{}", e);
        }
    }
}

/// A generated program whose doubling assignment `v2 = 2*v2 + 2*v0 - 1` overflows `int` for
/// n = 7, m = 2: the values printed before the overflow are checked, the wrapped ones are
/// not (the overflow is undefined, and the ranges assume none).
#[test]
fn generated_program_is_checked_up_to_its_first_signed_overflow() {
    let choices = vec![
        746, 799, 138, 663, 358, 226, 702, 637, 29, 211, 270, 216, 207, 939, 116, 313, 495, 206,
        489, 997, 948, 158, 53, 112, 614, 571, 198, 216, 985, 655, 603, 16, 781, 645, 665, 830,
        815, 569, 569, 360, 826, 757, 656, 947, 300, 383, 389, 118, 847, 407, 277, 923, 163, 203,
        664, 496, 44, 984, 899, 444, 378, 527, 668,
    ];
    let (source, _) = Generator::program(choices.clone());
    assert!(
        source.contains("(2) * v2"),
        "the overflowing program:\n{source}"
    );
    if let Err(e) = run_generated(choices) {
        panic!("{e}");
    }
}

/// The integer `name` (its first definition: a parameter) is known to hold entering the body
/// of the loop on `line`.
fn integer_in_body(a: &Analyzed, name: &str, line: u32) -> Option<i64> {
    let func = a.func();
    let body = func
        .loops
        .iter()
        .find(|l| a.unit.resolve(l.keyword_span).map(|r| r.line) == Some(line))
        .unwrap_or_else(|| panic!("no loop on line {line}"))
        .body_block;
    let value = func
        .values()
        .find(|v| func.inst(*v).origin.var_name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no value `{name}`"));
    a.facts
        .integer_at(body, value)
        .map(|c| i64::try_from(c).expect("small"))
}

/// A symbol compared equal to an integer is that integer on the branch, through `&&` and
/// into a loop (code_saturne's `if (coupled && dim == 3)` around `b[ifac*dim*dim + 4]`),
/// while its range stays the symbolic point `[dim, dim]`; where the paths join, and under
/// `!=`, it is not pinned.
#[test]
fn an_equality_with_an_integer_pins_a_symbol_on_its_branch() {
    let source = "\
void pins(double *b, int n, int dim, int coupled)
{
    if (coupled && dim == 3) {
        for (int i = 0; i < n; i++)
            b[i * dim] = 1.0;
    }
    for (int j = 0; j < n; j++)
        b[j * dim] = 2.0;
    if (dim != 4) {
        for (int k = 0; k < n; k++)
            b[k * dim] = 3.0;
    }
    if (3 == dim) {
        for (int m = 0; m < n; m++)
            b[m * dim] = 4.0;
    }
}
";
    let a = analyze(source, "pins", &RangeConfig::default());
    assert_eq!(a.facts.gave_up(), None);
    assert_eq!(integer_in_body(&a, "dim", 4), Some(3), "{}", a.dump());
    assert_eq!(a.range_at("dim@body:4").to_string(), "[dim, dim]");
    assert_eq!(integer_in_body(&a, "dim", 7), None, "{}", a.dump());
    assert_eq!(integer_in_body(&a, "dim", 10), None, "{}", a.dump());
    assert_eq!(integer_in_body(&a, "dim", 14), Some(3), "{}", a.dump());
}
