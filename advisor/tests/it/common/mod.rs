//! Helpers shared by the tests that check verdicts against concrete executions
//! (`memory.rs`, `private_calls.rs`, `linearized.rs`, `subscripts.rs`): fixtures with a loop marked `/* LOOP */`, compiled
//! runs forward, reversed and shuffled, and an interpreter replay that checks every byte a load of
//! the marked loop reads (callees included) was written earlier in the same iteration.

// Each test binary uses its own subset of the helpers.
#![allow(dead_code)]

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, Verdict};
use frontend::interp::{Access, Interpreter, Observer};
use frontend::ir::Block;
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::rc::Rc;

/// A fresh directory per call: tests run in parallel.
pub fn scratch(tag: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(env!("CARGO_CRATE_NAME"))
        .join(format!("{}-{n}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn load(source: &str) -> Unit {
    let file = scratch("unit").join("fixture.c");
    std::fs::write(&file, source).unwrap();
    load_unit(&TranslationUnitInput::new(file)).expect("the fixture loads")
}

pub fn marked_line(source: &str) -> u32 {
    let index = source
        .lines()
        .position(|l| l.contains("/* LOOP */"))
        .expect("a loop marked /* LOOP */");
    index as u32 + 1
}

/// The report of the loop marked `/* LOOP */` in `source`.
pub fn marked_report(source: &str) -> LoopReport {
    let unit = load(source);
    let line = marked_line(source);
    analyze_unit(&unit, &Filter::default())
        .into_iter()
        .find(|r| r.line == line)
        .unwrap_or_else(|| panic!("no loop at line {line}"))
}

/// Analyses `source` and checks the verdict of its marked loop; returns the loop's report.
pub fn check(source: &str, expected: Verdict) -> LoopReport {
    let report = marked_report(source);
    assert_eq!(report.verdict, expected, "{report:#?}");
    report
}

pub fn has_code(report: &LoopReport, code: &str) -> bool {
    report.reasons.iter().any(|r| r.code.as_str() == code)
}

/// The report lists an assumption containing `needle`.
pub fn assumes(report: &LoopReport, needle: &str) {
    assert!(
        report.assumptions.iter().any(|a| a.contains(needle)),
        "no `{needle}` in {:#?}",
        report.assumptions
    );
}

/// A witness of a carried dependence: reversing the iterations changes the output.
pub fn differs_in_reverse(source: &str) {
    let (forward, backward) = (run(source), run(&reversed(source)));
    assert_ne!(forward, backward, "reversing the loop changed nothing");
}

/// The marked loop's verdict, and the compiled runs: the output is the same with the loop
/// reversed and shuffled exactly when its iterations are `independent` (a dependence shows in
/// reverse).
pub fn check_with_runs(source: &str, expected: Verdict, independent: bool) -> LoopReport {
    let report = check(source, expected);
    if independent {
        same_in_any_order(source);
    } else {
        differs_in_reverse(source);
    }
    report
}

/// The header of the `for` on the marked line: `for (DECL VAR = LOWER; VAR < UPPER; VAR++)`
/// (or `VAR <= LAST`, read as `VAR < (LAST) + 1`), with where it sits in the source.
struct Header {
    /// The marked line's index in the source's lines.
    line: usize,
    /// Byte range of the text between `for (` and its `)` on that line.
    start: usize,
    end: usize,
    /// `int ` (with its space) when the header declares the variable, else empty.
    decl: String,
    var: String,
    lower: String,
    /// One past the last value.
    upper: String,
}

fn marked_header(source: &str) -> Header {
    let line = marked_line(source) as usize - 1;
    let text = source.lines().nth(line).unwrap();
    let start = text.find("for (").expect("a for loop on the marked line") + 5;
    // The header's own `)`: the one that closes `for (` (a bound may be `MIN(hi, n)`).
    let mut depth = 0i32;
    let end = start
        + text[start..]
            .char_indices()
            .find(|&(_, ch)| {
                match ch {
                    '(' => depth += 1,
                    ')' if depth == 0 => return true,
                    ')' => depth -= 1,
                    _ => {}
                }
                false
            })
            .map(|(k, _)| k)
            .expect("the loop header's `)`");
    let header: Vec<&str> = text[start..end].split(';').map(str::trim).collect();
    let [init, cond, step] = header.as_slice() else {
        panic!("not a for header: {text}")
    };
    let (declared, lower) = init.split_once('=').expect("`i = A`");
    let declared = declared.trim();
    let var = declared.rsplit(' ').next().unwrap();
    let decl = &declared[..declared.len() - var.len()];
    let cond = cond.strip_prefix(var).expect("`i < B` or `i <= B`").trim();
    let upper = match cond.strip_prefix("<=") {
        Some(last) => format!("({}) + 1", last.trim()),
        None => cond.strip_prefix('<').expect("`i < B`").trim().to_string(),
    };
    assert_eq!(*step, format!("{var}++"), "the step must be `{var}++`");
    Header {
        line,
        start,
        end,
        decl: decl.to_string(),
        var: var.to_string(),
        lower: lower.trim().to_string(),
        upper,
    }
}

/// `source` with the marked loop's header replaced by `new`.
fn with_header(source: &str, h: &Header, new: &str) -> String {
    let mut lines: Vec<String> = source.lines().map(String::from).collect();
    let text = &lines[h.line];
    lines[h.line] = format!("{}{}{}", &text[..h.start], new, &text[h.end..]);
    lines.join("\n") + "\n"
}

/// `for (int i = A; i < B; i++)` on the marked line becomes `for (int i = (B) - 1; i >= (A); i--)`.
pub fn reversed(source: &str) -> String {
    let h = marked_header(source);
    let new = format!(
        "{}{var} = ({}) - 1; {var} >= ({}); {var}--",
        h.decl,
        h.upper,
        h.lower,
        var = h.var
    );
    with_header(source, &h, &new)
}

/// The marked loop run in a shuffled order: its `N = B - A` iterations in the order
/// `A + (k*p + N/3) mod N` for `k = 0 .. N-1`, with `p` the first number above `N/2`
/// coprime to `N` (a bijection of `0 .. N-1` that is neither the forward nor the reverse
/// order once `N > 3`). A loop whose iterations are independent prints the same.
pub fn shuffled(source: &str) -> String {
    let h = marked_header(source);
    let count = format!("((long)({}) - (long)({}))", h.upper, h.lower);
    let order = |k: &str| format!("({}) + ww_shuffle_at({k}, {count})", h.lower);
    let new = format!(
        "{}{var} = {first}; ww_shuffle_k < {count}; ww_shuffle_k++, {var} = {next}",
        h.decl,
        var = h.var,
        first = order("ww_shuffle_k = 0"),
        next = order("ww_shuffle_k"),
    );
    let shuffled = with_header(source, &h, &new);
    // One line of its own above everything (line numbers do not matter to a run).
    format!(
        "static long ww_shuffle_k;\n\
         static long ww_shuffle_at(long k, long n) {{ long p, a, b, t; if (n <= 1) return 0; \
         for (p = n / 2 + 1;; p++) {{ for (a = p, b = n; b; t = a % b, a = b, b = t) {{}} \
         if (a == 1) break; }} return (k % n * p + n / 3) % n; }}\n{shuffled}"
    )
}

/// The marked loop's iterations run forward, reversed and shuffled print the same.
pub fn same_in_any_order(source: &str) {
    let forward = run(source);
    assert!(!forward.is_empty());
    assert_eq!(
        forward,
        run(&reversed(source)),
        "reversing the loop changed the output"
    );
    assert_eq!(
        forward,
        run(&shuffled(source)),
        "shuffling the loop changed the output"
    );
}

/// Compiles and runs a program; returns what it printed.
pub fn run(source: &str) -> String {
    let dir = scratch("run");
    let file = dir.join("fixture.c");
    let exe = dir.join("fixture");
    std::fs::write(&file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args([
            "-std=c99",
            "-O1",
            "-Wall",
            "-Werror",
            "-Wno-shadow",
            "-Wno-unused-variable",
            "-Wno-unused-but-set-variable",
            "-o",
        ])
        .arg(&exe)
        .arg(&file)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "the fixture does not compile:\n{}\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("the fixture runs");
    assert!(run.status.success(), "the fixture fails");
    String::from_utf8(run.stdout).unwrap()
}

/// Per access to the watched object while the loop runs (in the loop's function or in a
/// callee): (iteration, allocation, offset, size, is a store).
#[derive(Default)]
pub struct Iterations {
    events: Vec<(u32, u32, i64, u64, bool)>,
    iteration: u32,
    in_loop: bool,
}

pub struct Watch {
    function: String,
    header: Block,
    blocks: HashSet<Block>,
    log: Rc<RefCell<Iterations>>,
}

impl Observer for Watch {
    fn on_block(&mut self, function: &str, block: Block) {
        if function == self.function {
            let mut log = self.log.borrow_mut();
            log.in_loop = self.blocks.contains(&block);
            if block == self.header {
                log.iteration += 1;
            }
        }
    }
    fn on_access(&mut self, a: &Access) {
        let mut log = self.log.borrow_mut();
        if log.in_loop {
            let it = log.iteration;
            log.events.push((it, a.alloc, a.offset, a.size, a.is_store));
        }
    }
}

/// Runs `main` in the interpreter and checks that every byte of `object` a load made while
/// the marked loop runs (callees included) reads was written earlier in the same iteration;
/// returns how many loads were checked.
pub fn written_before_read(source: &str, object: &str) -> usize {
    let unit = load(source);
    let line = marked_line(source);
    let program = &unit.lowered.program;
    let (func, header, blocks) = program
        .functions
        .iter()
        .find_map(|f| {
            let forest = analyze_loops(f);
            let id = forest.ids().find(|id| {
                forest.loop_(*id).source.is_some_and(|s| {
                    unit.resolve(f.source_loop(s).keyword_span)
                        .is_some_and(|r| r.line == line)
                })
            })?;
            let l = forest.loop_(id);
            Some((f.name.clone(), l.header, l.blocks.iter().copied().collect()))
        })
        .expect("the marked loop");
    let log = Rc::new(RefCell::new(Iterations::default()));
    let mut interp = Interpreter::new(program)
        .with_fuel(10_000_000)
        .with_observer(Box::new(Watch {
            function: func,
            header,
            blocks,
            log: log.clone(),
        }));
    interp
        .run_main(&[])
        .expect("the interpreter runs the fixture");
    let log = log.borrow();
    let mut written: HashSet<(u32, i64)> = HashSet::new();
    let mut current = 0;
    let mut checked = 0;
    for &(it, alloc, offset, size, is_store) in &log.events {
        if interp.alloc_info(alloc).map(|(_, n)| n) != Some(object) {
            continue;
        }
        if it != current {
            written.clear();
            current = it;
        }
        for byte in offset..offset + size as i64 {
            if is_store {
                written.insert((alloc, byte));
            } else {
                assert!(
                    written.contains(&(alloc, byte)),
                    "iteration {it} reads byte {byte} of `{object}` before writing it"
                );
            }
        }
        if !is_store {
            checked += 1;
        }
    }
    assert!(checked > 0, "no load of `{object}` was seen");
    checked
}
