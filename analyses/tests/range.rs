//! Symbolic range analysis on the thesis' examples (Fig. 8.8, 8.9), the samples' loops,
//! interval arithmetic corner cases, and generated programs checked against concrete runs.

use analyses::range::{range_analysis, Range, RangeConfig, RangeFacts};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use frontend::ir::{Block, Function, Value};
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

/// A sample name, or C source written to a fresh temporary file.
fn input(source_or_sample: &str) -> PathBuf {
    if source_or_sample.ends_with(".c") && !source_or_sample.contains('\n') {
        return sample(source_or_sample);
    }
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("warpwise-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("f{}.c", COUNTER.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&path, source_or_sample).expect("write fixture");
    path
}

struct Analyzed {
    unit: Unit,
    function: String,
    facts: RangeFacts,
}

fn analyze(source_or_sample: &str, function: &str, config: &RangeConfig) -> Analyzed {
    let unit = load_unit(&TranslationUnitInput::new(input(source_or_sample))).expect("loads");
    let facts = {
        let program = &unit.lowered.program;
        let func = program.function(function).expect("function exists");
        let forest = analyze_loops(func);
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        range_analysis(program, func, &forest, &rec, &SignEnv::new(), config)
    };
    Analyzed {
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
                b == block || forest.dominates(b, block)
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
    check_with(source_or_sample, function, &RangeConfig::default(), expectations)
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

#[test]
fn dump_range_example() {
    let a = analyze("range_example.c", "range_example", &RangeConfig::default());
    println!("{}", a.dump());
}

/// Every loop of every sample: `function line iv: range at body entry`.
#[test]
fn dump_sample_loops() {
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
                    println!(
                        "{name} {} {line} {}: {}",
                        func.name,
                        iv.name.as_deref().unwrap_or("?"),
                        a.facts.at(sl.body_block, iv.phi)
                    );
                }
            }
        }
    }
}
