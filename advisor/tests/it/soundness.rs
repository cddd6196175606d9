//! Every reported section is sound: each sample runs in the IR interpreter with every
//! memory access recorded, and every byte a loop touches through a parameter must lie in
//! that parameter's reported `[lo, hi)`, evaluated with the values the run had. Loops of
//! every function are checked on every call (each call is one "epoch"), for outermost loops
//! (whose sections mention only inbound values, not enclosing induction variables).

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::LoopReport;
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use analyses::symbols::SymbolOrigin;
use frontend::interp::{Access, Interpreter, Observer, Val};
use frontend::ir::{Block, Value};
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use num_rational::BigRational;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use symbolic::{parse_expr, Var};

/// Bytes touched by one instruction: (allocation, offset, size).
type Touched = Vec<(u32, i64, u64)>;

#[derive(Default)]
struct Trace {
    /// Per function: the current call number.
    epochs: HashMap<String, u32>,
    /// (function, epoch, value) -> first value seen in that call.
    values: HashMap<(String, u32, Value), Val>,
    /// (function, epoch, instruction) -> touched (alloc, offset, size).
    accesses: HashMap<(String, u32, Value), Touched>,
}

struct Recorder(Rc<RefCell<Trace>>);

impl Observer for Recorder {
    fn on_access(&mut self, a: &Access) {
        let mut t = self.0.borrow_mut();
        let epoch = t.epochs.get(a.function).copied().unwrap_or(0);
        t.accesses
            .entry((a.function.to_string(), epoch, a.inst))
            .or_default()
            .push((a.alloc, a.offset, a.size));
    }
    fn on_block(&mut self, function: &str, block: Block) {
        if block == Block(0) {
            *self
                .0
                .borrow_mut()
                .epochs
                .entry(function.to_string())
                .or_insert(0) += 1;
        }
    }
    fn on_value(&mut self, function: &str, value: Value, val: &Val) {
        let mut t = self.0.borrow_mut();
        let epoch = t.epochs.get(function).copied().unwrap_or(0);
        t.values
            .entry((function.to_string(), epoch, value))
            .or_insert_with(|| val.clone());
    }
}

/// Replaces symbol names (which may contain `->`, `.`, `[`) by plain identifiers so the
/// expression parser reads them, longest names first.
fn rename(text: &str, names: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (name, placeholder) in names {
        out = out.replace(name.as_str(), placeholder);
    }
    out
}

fn check_sample(file: &str) -> usize {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(file);
    let unit = load_unit(&TranslationUnitInput::new(path)).expect("sample loads");
    let program = &unit.lowered.program;
    let reports = analyze_unit(&unit, &Filter::default());
    let trace = Rc::new(RefCell::new(Trace::default()));
    let mut interp = Interpreter::new(program)
        .with_fuel(50_000_000)
        .with_observer(Box::new(Recorder(trace.clone())));
    let result = interp
        .run_main(&[])
        .unwrap_or_else(|e| panic!("{file}: the interpreter failed: {e:?}"));
    assert_eq!(result.exit_code, 0, "{file} exits with 0");
    let trace = trace.borrow();
    let mut checked = 0;
    for report in &reports {
        checked += check_loop(file, &unit, report, &trace);
    }
    checked
}

fn check_loop(
    file: &str,
    unit: &frontend::unit::Unit,
    report: &LoopReport,
    trace: &Trace,
) -> usize {
    let program = &unit.lowered.program;
    let func = program.function(&report.function).expect("function");
    let forest = analyze_loops(func);
    let Some(loop_id) = forest.ids().find(|id| {
        forest
            .loop_(*id)
            .source
            .is_some_and(|s| unit.loop_ref(func.source_loop(s)).as_ref() == Some(&report.id))
    }) else {
        return 0;
    };
    if forest.loop_(loop_id).parent.is_some() {
        return 0;
    }
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let accesses = advisor::access::collect_accesses(func, &forest, loop_id, &rec, &program.types);
    let mut names: Vec<(String, String)> = rec
        .symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.var.name().to_string(), format!("sym_{i}_")))
        .collect();
    names.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    let mut checked = 0;
    let epochs = trace.epochs.get(&func.name).copied().unwrap_or(0);
    for epoch in 1..=epochs {
        // Values of every symbol in this call.
        let mut ctx: HashMap<Var, BigRational> = HashMap::new();
        let mut pointers: HashMap<String, (u32, i64)> = HashMap::new();
        for symbol in rec.symbols.iter() {
            let value = match &symbol.origin {
                SymbolOrigin::Param(_)
                | SymbolOrigin::Load { .. }
                | SymbolOrigin::Object(_)
                | SymbolOrigin::Opaque(_)
                | SymbolOrigin::Phi(_) => rec.symbols.value_of(&symbol.var),
                SymbolOrigin::Induction(_) => None,
            };
            let Some(v) = value else { continue };
            let placeholder = &names
                .iter()
                .find(|(n, _)| n == symbol.var.name())
                .expect("named")
                .1;
            match trace.values.get(&(func.name.clone(), epoch, v)) {
                Some(Val::Int(i)) => {
                    ctx.insert(
                        Var::new(placeholder),
                        BigRational::from_integer((*i).into()),
                    );
                }
                Some(Val::Ptr { alloc, offset }) => {
                    pointers.insert(symbol.var.name().to_string(), (*alloc, *offset));
                }
                _ => {}
            }
        }
        // A section named after a variable is relative to that variable as the loop finds
        // it (a counter's entry value, a pointer moved before the loop): its address in
        // this call, from the run. A counter's is its header phi's first value; the
        // definition `value_at_entry` picks runs once before the (outermost) loop.
        let definitions = advisor::rebase::Definitions::of(func);
        let l = forest.loop_(loop_id);
        for (name, var) in rec.symbols.iter().map(|s| (s.var.name(), &s.var)) {
            let counter = l
                .induction_variables
                .iter()
                .find(|iv| iv.name.as_deref() == Some(name))
                .map(|iv| iv.phi);
            let at_entry = counter.or_else(|| {
                advisor::rebase::value_at_entry(func, &rec, &definitions, l, name, var)
            });
            if let Some(Val::Ptr { alloc, offset }) =
                at_entry.and_then(|v| trace.values.get(&(func.name.clone(), epoch, v)))
            {
                pointers.insert(name.to_string(), (*alloc, *offset));
            }
        }
        for p in &report.parameters {
            let Some(bytes) = &p.bytes else { continue };
            let Some(&(alloc, base)) = pointers.get(&p.name) else {
                continue;
            };
            let eval = |text: &str| -> Option<i64> {
                let e = parse_expr(&rename(text, &names)).ok()?;
                let v = e.eval(&ctx).ok()?;
                i64::try_from(v.to_integer()).ok()
            };
            let (Some(lo), Some(hi)) = (eval(&bytes.lo), eval(&bytes.hi)) else {
                continue;
            };
            for access in accesses
                .iter()
                .filter(|a| a.base().is_some_and(|b| b.name() == p.name))
            {
                let touched = trace
                    .accesses
                    .get(&(func.name.clone(), epoch, access.inst))
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                for &(a, offset, size) in touched {
                    if a != alloc {
                        continue;
                    }
                    let start = offset - base;
                    let end = start + size as i64;
                    assert!(
                        lo <= start && end <= hi,
                        "{file} {}: `{}` touched bytes [{start}, {end}) of `{}` outside the reported [{lo}, {hi}) = [{}, {})",
                        report.id,
                        unit.snippet(func.inst(access.inst).origin.span),
                        p.name,
                        bytes.lo,
                        bytes.hi
                    );
                    checked += 1;
                }
            }
        }
    }
    checked
}

#[test]
fn every_touched_byte_lies_in_its_reported_section() {
    let mut total = 0;
    for file in [
        "vector_add.c",
        "matrix_add.c",
        "matrix_add_struct.c",
        "char_cast.c",
        "every_fourth_add.c",
        "matmul.c",
        "transpose.c",
        "jacobi2d.c",
        "prefix_sum.c",
        "dot_product.c",
        "histogram.c",
        "get_index.c",
        "conv2d_rgb.c",
        "gaussian_fan2.c",
        "srad_clamp.c",
        "aliasing.c",
        "range_example.c",
        "reconstruction_example.c",
        "signal_conv1d.c",
        // Pointers advanced beside the index (tests/it/counters.rs).
        "../tests/fixtures/openmp/walks.c",
        // Starts and bounds written MAX(lo, 0) / MIN(hi, n), windows inside, across and
        // outside the arrays.
        "../tests/fixtures/openmp/minmax_bounds.c",
        // Bounds that call functions reading memory, and a MIN3 bound.
        "../tests/fixtures/openmp/call_bounds.c",
        // Bounds and sections after `n = n - 1;`, `k++;` and a counter moved by a read.
        "../tests/fixtures/openmp/stale_names.c",
        // Element sums over an outer loop (lu's B = A A^T, atax), histograms, an arg-max.
        "../tests/fixtures/openmp/float_updates.c",
        // Kernels inside time loops and sweeps whose sections follow the counters.
        "../tests/fixtures/openmp/counter_sections.c",
    ] {
        let checked = check_sample(file);
        eprintln!("{file}: {checked} accesses checked");
        total += checked;
    }
    assert!(total > 10_000, "only {total} accesses were checked");
}

#[test]
fn aliasing_sample_runs_in_the_interpreter() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/aliasing.c");
    let unit = load_unit(&TranslationUnitInput::new(path)).expect("sample loads");
    let mut interp = Interpreter::new(&unit.lowered.program);
    let result = interp.run_main(&[]);
    assert!(result.is_ok(), "{result:?}");
}
