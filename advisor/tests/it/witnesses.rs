//! Every dependence claim's witness is checked against a concrete execution: the program
//! runs in the IR interpreter with the witness's values (a direct call of the function with
//! those arguments, or `main` with them on its command line), every memory access and value
//! is recorded with the values of the induction variables at that moment, and both stated
//! iterations must perform the stated access (read or write) on the stated bytes. A property
//! test over generated affine loops checks that every claim has such a witness and that no
//! claim is made where brute force finds no two iterations that meet.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, Reason, Verdict, Witness, WitnessAccess};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use analyses::symbols::SymbolOrigin;
use frontend::interp::{Access, Interpreter, Observer, Val};
use frontend::ir::{Function, InstKind, Value};
use frontend::loop_ref::LoopRef;
use frontend::loops::{analyze_loops, LoopForest, LoopId};
use frontend::preprocess::TranslationUnitInput;
use frontend::types::Type;
use frontend::unit::{load_unit, Unit};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Bytes given to every pointer argument, the pointer in the middle so that negative
/// indices stay inside.
const BUFFER: usize = 1 << 16;

/// One recorded event: an instruction executed with the induction variables' values.
#[derive(Clone, Debug)]
struct Event {
    inst: Value,
    /// The tracked values (induction variables, then the base pointer) at that moment.
    ivs: Vec<Option<Val>>,
    /// (allocation, offset, size, is_store) for a memory access.
    access: Option<(u32, i64, u64, bool)>,
    /// The value computed, for other instructions.
    value: Option<Val>,
    /// The carried scalar's header phi value at that moment.
    carried: Option<Val>,
}

#[derive(Default)]
struct Trace {
    /// Latest value of each tracked value of the function (by position in `tracked`).
    current: Vec<Option<Val>>,
    carried: Option<Val>,
    events: Vec<Event>,
    /// First value of every value of the function.
    first: HashMap<Value, Val>,
}

struct Recorder {
    function: String,
    tracked: Vec<Value>,
    watched: HashSet<Value>,
    carried_phi: Option<Value>,
    trace: Rc<RefCell<Trace>>,
}

impl Observer for Recorder {
    fn on_access(&mut self, a: &Access) {
        if a.function != self.function || !self.watched.contains(&a.inst) {
            return;
        }
        let mut t = self.trace.borrow_mut();
        let event = Event {
            inst: a.inst,
            ivs: t.current.clone(),
            access: Some((a.alloc, a.offset, a.size, a.is_store)),
            value: None,
            carried: None,
        };
        t.events.push(event);
    }
    fn on_value(&mut self, function: &str, value: Value, val: &Val) {
        if function != self.function {
            return;
        }
        let mut t = self.trace.borrow_mut();
        t.first.entry(value).or_insert_with(|| val.clone());
        for (k, v) in self.tracked.iter().enumerate() {
            if *v == value {
                t.current[k] = Some(val.clone());
            }
        }
        if Some(value) == self.carried_phi {
            t.carried = Some(val.clone());
        }
        if self.watched.contains(&value) {
            let event = Event {
                inst: value,
                ivs: t.current.clone(),
                access: None,
                value: Some(val.clone()),
                carried: t.carried.clone(),
            };
            t.events.push(event);
        }
    }
}

fn load(path: &Path) -> Unit {
    load_unit(&TranslationUnitInput::new(path.to_path_buf())).expect("the file loads")
}

fn loop_of(unit: &Unit, func: &Function, forest: &LoopForest, id: &LoopRef) -> LoopId {
    forest
        .ids()
        .find(|l| {
            forest
                .loop_(*l)
                .source
                .is_some_and(|s| unit.loop_ref(func.source_loop(s)).as_ref() == Some(id))
        })
        .expect("the reported loop exists")
}

fn line_of(unit: &Unit, func: &Function, v: Value) -> u32 {
    unit.resolve(func.inst(v).origin.span)
        .map(|r| r.line)
        .unwrap_or(0)
}

/// Whether a witness name (`i`, or `i@164` for one of several values of `i`: the value
/// computed on line 164, docs/report-format.md) names a symbol (`i`, `i#2`) whose value is
/// computed on `line` (a loop's variable: the loop's line; 0 when not known).
fn names(witness_name: &str, symbol: &str, line: u32) -> bool {
    let base = symbol.split('#').next().unwrap_or(symbol);
    match witness_name.split_once('@') {
        None => witness_name == symbol || witness_name == base,
        Some((name, place)) => {
            let stated = place.split(':').next().and_then(|l| l.parse::<u32>().ok());
            name == base && (line == 0 || stated == Some(line))
        }
    }
}

/// How to run a function with the witness's values.
enum Run {
    Main(Vec<String>),
    Call(Vec<Val>),
}

/// `int n = argc > 1 ? atoi(argv[1]) : 100;` in `main`: `n` is set by argument 1.
fn main_arguments(source: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for line in source.lines() {
        let Some(at) = line.find("? atoi(argv[") else {
            continue;
        };
        let index: String = line[at + 12..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let before = &line[..at];
        let Some(eq) = before.find('=') else { continue };
        let name = before[..eq].split_whitespace().last().unwrap_or("");
        if let Ok(k) = index.parse() {
            out.insert(name.trim_start_matches('*').to_string(), k);
        }
    }
    out
}

/// A struct argument: its fields set from the witness (`p->n`), pointer fields given buffers.
fn struct_argument(
    interp: &mut Interpreter,
    unit: &Unit,
    param: &str,
    record: frontend::types::RecordId,
    values: &BTreeMap<String, i64>,
) -> Val {
    let types = &unit.lowered.program.types;
    let rec = types.record(record);
    let mut bytes = vec![0u8; (rec.size as usize).div_ceil(4) * 4];
    for field in &rec.fields {
        let Some(name) = &field.name else { continue };
        let at = field.offset as usize;
        let size = types.size_of(field.ty).unwrap_or(0) as usize;
        if types.is_pointer(field.ty) {
            let Val::Ptr { alloc, .. } = interp.alloc_bytes(BUFFER) else {
                continue;
            };
            // The interpreter's documented encoding of a stored pointer.
            let encoded = (u64::from(alloc) << 40) | (BUFFER as u64 / 2);
            bytes[at..at + 8].copy_from_slice(&encoded.to_le_bytes());
        } else if let Some(v) = values.get(&format!("{param}->{name}")) {
            let le = v.to_le_bytes();
            bytes[at..at + size.min(8)].copy_from_slice(&le[..size.min(8)]);
        }
    }
    let words: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    interp.alloc_i32s(&words)
}

/// A table of row pointers (`double **`): 128 slots, the pointer in the middle, each slot
/// pointing into its own row buffer.
fn row_table(interp: &mut Interpreter) -> Val {
    const ROWS: usize = 128;
    const ROW: usize = 4096;
    let mut bytes = Vec::with_capacity(ROWS * 8);
    for _ in 0..ROWS {
        let Val::Ptr { alloc, .. } = interp.alloc_bytes(ROW) else {
            continue;
        };
        // The interpreter's documented encoding of a stored pointer.
        let encoded = (u64::from(alloc) << 40) | (ROW as u64 / 2);
        bytes.extend(encoded.to_le_bytes());
    }
    let words: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match interp.alloc_i32s(&words) {
        Val::Ptr { alloc, .. } => Val::Ptr {
            alloc,
            offset: (ROWS * 4) as i64,
        },
        other => other,
    }
}

/// A data buffer for pointer parameter `name`, the pointer in the middle, holding the
/// witness's values of its elements (`D[0] = 2`).
fn data_buffer(
    interp: &mut Interpreter,
    name: &str,
    elem: u64,
    values: &BTreeMap<String, i64>,
) -> Val {
    let mut bytes = vec![0u8; BUFFER];
    for (k, v) in values {
        let Some(index) = k
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix('['))
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|i| i.trim().parse::<i64>().ok())
        else {
            continue;
        };
        let at = BUFFER as i64 / 2 + index * elem as i64;
        let size = elem.min(8) as usize;
        if at >= 0 && (at as usize) + size <= BUFFER {
            bytes[at as usize..at as usize + size].copy_from_slice(&v.to_le_bytes()[..size]);
        }
    }
    let words: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match interp.alloc_i32s(&words) {
        Val::Ptr { alloc, .. } => Val::Ptr {
            alloc,
            offset: BUFFER as i64 / 2,
        },
        other => other,
    }
}

fn arguments(
    interp: &mut Interpreter,
    unit: &Unit,
    func: &Function,
    values: &BTreeMap<String, i64>,
    default: i64,
) -> Result<Vec<Val>, String> {
    let types = &unit.lowered.program.types;
    let mut args = Vec::new();
    for p in &func.params {
        let name = p.name.clone().unwrap_or_default();
        if types.is_pointer(p.ty) {
            let record = types.pointee(p.ty).and_then(|t| match types.get(t) {
                Type::Record(r) => Some(*r),
                _ => None,
            });
            match record {
                Some(r) => args.push(struct_argument(interp, unit, &name, r, values)),
                None if types.pointee(p.ty).is_some_and(|t| types.is_pointer(t)) => {
                    args.push(row_table(interp));
                }
                None => {
                    let elem = types
                        .pointee(p.ty)
                        .and_then(|t| types.size_of(t))
                        .unwrap_or(1);
                    args.push(data_buffer(interp, &name, elem, values));
                }
            }
        } else if types.is_integer(p.ty) {
            args.push(Val::Int(i128::from(
                values.get(&name).copied().unwrap_or(default),
            )));
        } else {
            args.push(Val::Float(1.0));
        }
    }
    Ok(args)
}

/// The instructions of a loop that a witness side can mean: accesses with the stated
/// line, lvalue and kind (memory), or any instruction on the stated line whose source text
/// is the stated one (scalars).
fn candidates(
    unit: &Unit,
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    side: &WitnessAccess,
    memory: bool,
) -> Vec<Value> {
    let l = forest.loop_(id);
    let mut out = Vec::new();
    for &b in &l.blocks {
        for &v in &func.block(b).insts {
            if line_of(unit, func, v) != side.line {
                continue;
            }
            let text = unit.snippet(func.inst(v).origin.span);
            let kind = &func.inst(v).kind;
            let matches = if memory {
                let is_store = matches!(kind, InstKind::Store { .. });
                let is_load = matches!(kind, InstKind::Load { .. });
                (is_store || is_load)
                    && (side.kind == "write") == is_store
                    && advisor::witness::text::lvalue(&text) == side.access
            } else {
                text == side.access && !matches!(kind, InstKind::Phi(_))
            };
            if matches {
                out.push(v);
            }
        }
    }
    out
}

/// Checks one witness by running the program; `Err` says what did not hold. Integer
/// parameters the witness leaves free are 1, then 0 (a flag that selects the loop's branch).
fn check_witness(
    path: &Path,
    unit: &Unit,
    report: &LoopReport,
    reason: &Reason,
    witness: &Witness,
) -> Result<(), String> {
    check_witness_with(path, unit, report, reason, witness, 1).or_else(|first| {
        check_witness_with(path, unit, report, reason, witness, 0).map_err(|_| first)
    })
}

fn check_witness_with(
    path: &Path,
    unit: &Unit,
    report: &LoopReport,
    reason: &Reason,
    witness: &Witness,
    default: i64,
) -> Result<(), String> {
    let program = &unit.lowered.program;
    let func = program
        .function(&report.function)
        .ok_or("no such function")?;
    let forest = analyze_loops(func);
    let id = loop_of(unit, func, &forest, &report.id);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let memory = witness.first.byte_offset.is_some() || witness.condition.is_some();
    let firsts = candidates(unit, func, &forest, id, &witness.first, memory);
    let seconds = candidates(unit, func, &forest, id, &witness.second, memory);
    if firsts.is_empty() || seconds.is_empty() {
        return Err(format!(
            "the stated accesses are not in the loop: {firsts:?} {seconds:?}"
        ));
    }
    // Induction variables of the loops around the loop and inside it, by witness name.
    let mut ivs: Vec<Value> = Vec::new();
    let mut iv_names: Vec<(String, u32)> = Vec::new();
    for l in forest.ids() {
        if let Some(iv) = forest.loop_(l).primary_iv() {
            if let Some(var) = rec.symbols.var_of(iv.phi) {
                let line = forest
                    .loop_(l)
                    .source
                    .and_then(|s| unit.resolve(func.source_loop(s).keyword_span))
                    .map(|r| r.line)
                    .unwrap_or(0);
                ivs.push(iv.phi);
                iv_names.push((var.name().to_string(), line));
            }
        }
    }
    let carried_phi = (!memory).then(|| {
        func.block(forest.loop_(id).header)
            .insts
            .iter()
            .copied()
            .find(|v| {
                matches!(func.inst(*v).kind, InstKind::Phi(_))
                    && func.inst(*v).origin.var_name.as_deref() == Some(&witness.first.element)
            })
    });
    let carried_phi = carried_phi.flatten();
    // The base pointer is tracked too: a row loaded through a row pointer changes.
    let accesses = advisor::access::collect_accesses(func, &forest, id, &rec, &program.types);
    let base = accesses
        .iter()
        .find(|m| m.inst == firsts[0])
        .and_then(|m| m.base().cloned());
    let base_value = base.as_ref().and_then(|b| rec.symbols.value_of(b));
    let mut tracked = ivs.clone();
    tracked.extend(base_value);
    let trace = Rc::new(RefCell::new(Trace {
        current: vec![None; tracked.len()],
        ..Trace::default()
    }));
    let watched: HashSet<Value> = firsts.iter().chain(&seconds).copied().collect();
    let recorder = Recorder {
        function: func.name.clone(),
        tracked,
        watched,
        carried_phi,
        trace: trace.clone(),
    };
    let mut interp = Interpreter::new(program)
        .with_fuel(20_000_000)
        .with_observer(Box::new(recorder));
    let run = if func.name == "main" {
        let source = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let positions = main_arguments(&source);
        // Variables the witness leaves free get 1 (the samples accept it).
        let mut argv: Vec<String> =
            vec!["1".into(); positions.values().copied().max().unwrap_or(0)];
        for (name, v) in &witness.values {
            let k = *positions
                .get(name)
                .ok_or(format!("`{name}` is not set from the command line"))?;
            if argv.len() < k {
                argv.resize(k, "1".into());
            }
            argv[k - 1] = v.to_string();
        }
        Run::Main(argv)
    } else {
        Run::Call(arguments(
            &mut interp,
            unit,
            func,
            &witness.values,
            default,
        )?)
    };
    let result = match run {
        Run::Main(argv) => {
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            interp.run_main(&args).map(|_| ())
        }
        Run::Call(args) => interp.call(&func.name, args).map(|_| ()),
    };
    // A run may stop later (fuel); what was recorded until then still counts.
    let trace = trace.borrow();
    // The run had the witness's values.
    for (name, v) in &witness.values {
        let symbol = rec.symbols.iter().find(|s| {
            names(name, s.var.name(), 0) && !matches!(s.origin, SymbolOrigin::Induction(_))
        });
        if let Some(value) = symbol.and_then(|s| rec.symbols.value_of(&s.var)) {
            if let Some(seen) = trace.first.get(&value) {
                if seen.as_int() != Some(i128::from(*v)) {
                    return Err(format!("`{name}` was {seen:?} in the run, not {v}"));
                }
            }
        }
    }
    let at_iteration = |e: &Event, side: &WitnessAccess| {
        side.iteration.iter().all(|(name, v)| {
            iv_names.iter().zip(&e.ivs).any(|((n, line), x)| {
                names(name, n, *line) && x.as_ref().and_then(Val::as_int) == Some(i128::from(*v))
            })
        })
    };
    let events = |insts: &[Value], side: &WitnessAccess| -> Vec<Event> {
        trace
            .events
            .iter()
            .filter(|e| insts.contains(&e.inst) && at_iteration(e, side))
            .cloned()
            .collect()
    };
    let (a, b) = (
        events(&firsts, &witness.first),
        events(&seconds, &witness.second),
    );
    if a.is_empty() || b.is_empty() {
        return Err(format!(
            "the stated iterations did not execute the accesses ({} and {} events; run: {result:?})",
            a.len(),
            b.len()
        ));
    }
    if memory {
        // The base pointer's value in the run, when each access happened.
        // A local array or global is its whole allocation.
        let object = base.as_ref().is_some_and(|b| {
            matches!(
                rec.symbols.info(b).map(|s| &s.origin),
                Some(SymbolOrigin::Object(_))
            )
        });
        let base_at = |e: &Event| -> Option<(u32, i64)> {
            match e.ivs.get(ivs.len()).cloned().flatten() {
                Some(Val::Ptr { alloc, offset }) => Some((alloc, offset)),
                _ => match base_value.and_then(|v| trace.first.get(&v)) {
                    Some(Val::Ptr { alloc, offset }) => Some((*alloc, *offset)),
                    _ if object => e.access.map(|(alloc, ..)| (alloc, 0)),
                    _ => None,
                },
            }
        };
        let touched = |e: &Event| {
            e.access
                .map(|(alloc, off, size, st)| (alloc, off, size, st, base_at(e)))
        };
        let ok = a
            .iter()
            .filter_map(touched)
            .any(|(a1, o1, s1, st1, base1)| {
                b.iter()
                    .filter_map(touched)
                    .any(|(a2, o2, s2, st2, base2)| {
                        let kinds = st1 == (witness.first.kind == "write")
                            && st2 == (witness.second.kind == "write");
                        let overlap = a1 == a2 && o1 < o2 + s2 as i64 && o2 < o1 + s1 as i64;
                        let stated = match (
                            base1,
                            base2,
                            witness.first.byte_offset,
                            witness.second.byte_offset,
                        ) {
                            (Some((b1, p1)), Some((b2, p2)), Some(x), Some(y)) => {
                                b1 == a1
                                    && b2 == a2
                                    && o1 - p1 == x
                                    && o2 - p2 == y
                                    && Some(s1) == witness.first.bytes
                                    && Some(s2) == witness.second.bytes
                            }
                            // An indirect update: the same element, wherever it is.
                            (_, _, None, None) => witness.condition.is_some(),
                            _ => false,
                        };
                        kinds && overlap && stated
                    })
            });
        if !ok {
            return Err(format!(
                "the two iterations did not touch the stated bytes: {:?} / {:?}",
                a.iter().filter_map(touched).collect::<Vec<_>>(),
                b.iter().filter_map(touched).collect::<Vec<_>>()
            ));
        }
    } else {
        // A scalar: the value written in the first iteration is the one the second sees.
        let written: Vec<&Val> = a.iter().filter_map(|e| e.value.as_ref()).collect();
        let ok = b.iter().any(|e| {
            let seen = if witness.second.kind == "read" {
                e.carried.as_ref()
            } else {
                None
            };
            match seen {
                Some(v) => written.last().is_some_and(|w| *w == v),
                None => witness.second.kind == "write",
            }
        });
        if !ok {
            return Err(format!(
                "the value written at {:?} did not reach the read at {:?}",
                witness.first.iteration, witness.second.iteration
            ));
        }
    }
    let _ = reason;
    Ok(())
}

/// Every finding of a report: a finding that stands for several gives each of them (its
/// own witness is its first member's).
fn each_finding(report: &LoopReport) -> impl Iterator<Item = &Reason> {
    report.reasons.iter().flat_map(|r| {
        if r.instances.is_empty() {
            std::slice::from_ref(r)
        } else {
            r.instances.as_slice()
        }
    })
}

/// Checks every witness in a file's reports; returns how many there were and the claims
/// (WW101/WW103) that had none.
fn check_file(path: &Path) -> (usize, Vec<String>) {
    let unit = load(path);
    let reports = analyze_unit(&unit, &Filter::default());
    let mut checked = 0;
    let mut without = Vec::new();
    for report in &reports {
        for reason in each_finding(report) {
            match (&reason.witness, reason.code.as_str()) {
                (Some(w), _) => {
                    if let Err(why) = check_witness(path, &unit, report, reason, w) {
                        panic!(
                            "{} ({}): witness of `{}` does not hold: {why}\n{w:#?}",
                            report.id, report.function, reason.message
                        );
                    }
                    checked += 1;
                }
                (None, "WW101") => without.push(format!("{}: {}", report.id, reason.message)),
                _ => {}
            }
        }
    }
    (checked, without)
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/witness.c")
}

#[test]
fn every_witness_on_the_samples_holds_in_the_interpreter() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut total = 0;
    for file in &files {
        let (checked, without) = check_file(file);
        assert!(without.is_empty(), "claims without a witness: {without:#?}");
        eprintln!("{}: {checked} witnesses checked", file.display());
        total += checked;
    }
    // Reductions (matmul's `k`, the convolutions' accumulators) are not dependences.
    assert!(total >= 10, "only {total} witnesses on the samples");
}

/// The first loop of a fixture function: its verdict and the witness texts of its reasons.
fn check(function: &str, verdict: Verdict, texts: &[&str]) {
    check_loop(function, 0, verdict, texts);
}

/// The `nth` loop (in source order) of a fixture function.
fn check_loop(function: &str, nth: usize, verdict: Verdict, texts: &[&str]) {
    let unit = load(&fixture());
    let reports = analyze_unit(&unit, &Filter::default());
    let report = reports
        .iter()
        .filter(|r| r.function == function)
        .nth(nth)
        .unwrap_or_else(|| panic!("no loop {nth} in `{function}`"));
    assert_eq!(report.verdict, verdict, "{function}: {:#?}", report.reasons);
    for text in texts {
        assert!(
            report
                .reasons
                .iter()
                .flat_map(|r| std::iter::once(r).chain(&r.instances))
                .any(|r| r.message.contains(text)),
            "{function}: no reason says `{text}`: {:#?}",
            report.reasons
        );
    }
}

#[test]
fn every_witness_on_the_fixtures_holds_in_the_interpreter() {
    let (checked, without) = check_file(&fixture());
    assert!(without.is_empty(), "claims without a witness: {without:#?}");
    assert!(checked >= 9, "only {checked} witnesses on the fixtures");
}

#[test]
fn recurrences_state_their_iterations() {
    check(
        "recurrence1",
        Verdict::NotFriendly,
        &["i = 1 writes a[1]; i = 2 reads a[1] (n = 3)"],
    );
    check(
        "recurrence3",
        Verdict::NotFriendly,
        &[
            "at distance 3",
            "i = 3 writes a[3]; i = 6 reads a[3] (n = 7)",
        ],
    );
    check(
        "needs_five",
        Verdict::NotFriendly,
        &["i = 0 writes a[4]; i = 4 reads a[4] (n = 5)"],
    );
}

#[test]
fn outer_loop_and_same_element_witnesses() {
    check(
        "outer_carried",
        Verdict::NotFriendly,
        &["i = 1, j = 0 writes a[1][0]; i = 2, j = 0 reads a[1][0] (m = 1, n = 3)"],
    );
    check_loop(
        "row_recurrence",
        1,
        Verdict::NotFriendly,
        &["i = 0, j = 1 writes F[0][1]; i = 0, j = 2 reads F[0][1] (m = 3, n = 1)"],
    );
    check(
        "same_element",
        Verdict::NotFriendly,
        &[
            "write-after-write",
            "i = 0 writes a[5]; i = 1 writes a[5] (n = 2)",
        ],
    );
}

#[test]
fn no_claim_without_two_iterations_that_meet() {
    // Distance 8 by the subscripts, but no valid n lets two iterations meet.
    check(
        "never_valid",
        Verdict::NeedsProfile,
        &["could not be shown with two iterations"],
    );
    // The whole space enumerated: independent.
    check("too_short", Verdict::Friendly, &[]);
    // Fixed-size planes never meet, whatever the bounds.
    check("planes", Verdict::Friendly, &[]);
    // A different row pointer in each iteration: not the same element.
    check(
        "row_pointers",
        Verdict::NeedsProfile,
        &["the base pointer `rows[i]` is loaded in every iteration"],
    );
    // Reached only when k != j, where no two iterations meet (k == j would).
    check_loop("guarded_transpose", 2, Verdict::NeedsProfile, &[]);
    // Written only in some iterations.
    check(
        "scalar_conditional",
        Verdict::NeedsProfile,
        &["`last` is assigned only in some iterations"],
    );
}

#[test]
fn conditions_the_loop_is_reached_under_bind_witnesses_and_proofs() {
    // `p != q` around the transpose rules out the one case where its iterations meet.
    check("block_transpose", Verdict::Friendly, &[]);
    // Without it the iterations meet when p == q: a layout the program's data decide.
    check(
        "block_transpose_unguarded",
        Verdict::NeedsProfile,
        &["cannot bound the address difference"],
    );
    // No witness that the guard `j == x` excludes.
    check("shifted_copy", Verdict::NeedsProfile, &[]);
}

#[test]
fn conditional_counters_are_named_stream_compaction() {
    for (function, advance) in [
        ("selected_faces", "`k++`"),
        ("positive_values", "`k++`"),
        ("paired_slots", "`k += 2`"),
    ] {
        check(
            function,
            Verdict::NeedsProfile,
            &[
                &format!("`k` is a conditional counter ({advance} only in the iterations that pass a test)"),
                "this is stream compaction, which a port computes with a prefix sum (scan) over the test",
            ],
        );
    }
    // Counted, not indexing an output: a scan, without the word compaction.
    check(
        "running_count",
        Verdict::NeedsProfile,
        &["`k` is a conditional counter (`k++` only in the iterations that pass a test): each iteration's value counts the earlier iterations that passed, so two that pass depend on each other; a port computes each iteration's value with a prefix sum (scan) over the test"],
    );
    // A value copied in some iterations is no counter.
    check(
        "scalar_conditional",
        Verdict::NeedsProfile,
        &["`last` is assigned only in some iterations"],
    );
}

#[test]
fn scalar_and_indirect_witnesses() {
    check(
        "scalar_carried",
        Verdict::NotFriendly,
        &["i = 0 writes `x` (line 65); i = 1 reads `x` (line 64) (n = 2)"],
    );
    check(
        "nested_accumulation",
        Verdict::NotFriendly,
        &["i = 0, j = 0 writes `s` (line 86); i = 1, j = 0 reads `s` (line 86) (m = 1, n = 2)"],
    );
    // Nothing else touches `h`: a histogram reduction (advisor/tests/it/reductions.rs); `key`
    // and `h` are assumed not to overlap (no call site passes one array twice).
    check(
        "histogram",
        Verdict::Friendly,
        &["is a histogram reduction"],
    );
}

/// Whether some n in 1..=64 and iterations i1 < i2 < n make the two affine accesses
/// (`a[c1*i + c2]` written, `a[c3*i + c4]` read, 4-byte elements) meet, for the kinds the
/// report states (`w`/`r` of the earlier and later iteration).
fn brute_force(c: [i64; 4], n_max: i64) -> Option<(i64, i64, i64)> {
    let store = |i: i64| c[0] * i + c[1];
    let load = |i: i64| c[2] * i + c[3];
    for n in 1..=n_max {
        for i1 in 0..n {
            for i2 in i1 + 1..n {
                if store(i1) == load(i2) || load(i1) == store(i2) || store(i1) == store(i2) {
                    return Some((n, i1, i2));
                }
            }
        }
    }
    None
}

#[test]
fn generated_affine_loops_claim_only_what_brute_force_confirms() {
    // A deterministic sample of coefficient tuples.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: i64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % (2 * m as u64 + 1)) as i64 - m
    };
    let mut cases: Vec<[i64; 4]> = Vec::new();
    while cases.len() < 120 {
        let c = [next(3), next(4), next(3), next(4)];
        if !cases.contains(&c) {
            cases.push(c);
        }
    }
    let mut source = String::new();
    for (k, c) in cases.iter().enumerate() {
        source.push_str(&format!(
            "void f{k}(int *a, int n)\n{{\n    for (int i = 0; i < n; i++)\n        a[{} * i + {}] = a[{} * i + {}] + 1;\n}}\n",
            c[0], c[1], c[2], c[3]
        ));
    }
    // A fresh, private directory, removed when `dir` drops at the end of the test (the unit
    // and the witness checks read `path` until then).
    let dir = tempfile::Builder::new()
        .prefix("warpwise-witness-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("affine.c");
    std::fs::write(&path, &source).expect("write");
    let unit = load(&path);
    let reports = analyze_unit(&unit, &Filter::default());
    let (mut claimed, mut dependent) = (0, 0);
    for report in &reports {
        let k: usize = report.function[1..].parse().expect("f<k>");
        let truth = brute_force(cases[k], 64);
        dependent += usize::from(truth.is_some());
        for reason in report
            .reasons
            .iter()
            .filter(|r| r.code == advisor::rules::Code::WW101)
        {
            let w = reason
                .witness
                .as_ref()
                .unwrap_or_else(|| panic!("f{k} {:?}: a claim without a witness", cases[k]));
            assert!(
                truth.is_some(),
                "f{k} {:?}: claimed `{}` but brute force finds no two iterations that meet",
                cases[k],
                reason.message
            );
            check_witness(&path, &unit, report, reason, w)
                .unwrap_or_else(|why| panic!("f{k} {:?}: {why}\n{w:#?}", cases[k]));
            claimed += 1;
        }
        if truth.is_none() {
            assert_ne!(
                report.verdict,
                Verdict::NotFriendly,
                "f{k} {:?}: {:#?}",
                cases[k],
                report.reasons
            );
        }
    }
    eprintln!(
        "{claimed} claims checked; {dependent} of {} loops dependent by brute force",
        cases.len()
    );
    assert!(claimed >= 20, "only {claimed} claims");
}

/// The checker itself rejects a witness that is off by one element or one iteration.
#[test]
fn a_wrong_witness_is_rejected() {
    let path = fixture();
    let unit = load(&path);
    let reports = analyze_unit(&unit, &Filter::default());
    for function in ["recurrence1", "scalar_carried", "outer_carried"] {
        let report = reports
            .iter()
            .find(|r| r.function == function)
            .expect("loop");
        let reason = report
            .reasons
            .iter()
            .find(|r| r.witness.is_some())
            .expect("a witness");
        let good = reason.witness.clone().expect("witness");
        check_witness(&path, &unit, report, reason, &good).expect("the stated witness holds");
        let mut later = good.clone();
        for v in later.second.iteration.values_mut() {
            *v += 1;
        }
        assert!(check_witness(&path, &unit, report, reason, &later).is_err());
        if let Some(offset) = good.first.byte_offset {
            let mut shifted = good.clone();
            shifted.first.byte_offset = Some(offset + 4);
            assert!(check_witness(&path, &unit, report, reason, &shifted).is_err());
            let mut kinds = good.clone();
            kinds.second.kind = "write".into();
            assert!(check_witness(&path, &unit, report, reason, &kinds).is_err());
        }
    }
}

#[test]
fn a_dependence_that_hinges_on_layout_values_is_not_claimed() {
    // `y[i*s]` and `y[i*s + v]` meet for s = v = 2 but not for other strides: no claim.
    check(
        "strided_pair",
        Verdict::NeedsProfile,
        &["may touch the same element of `y`"],
    );
    // The next row is read whatever the stride: the claim stands, with its witness.
    check(
        "next_row",
        Verdict::NotFriendly,
        &["write-after-read dependence on `y`"],
    );
}

/// Every witness of a fixture function's loops replays in the interpreter; returns how many.
fn replayed(function: &str) -> usize {
    let path = fixture();
    let unit = load(&path);
    let reports = analyze_unit(&unit, &Filter::default());
    let mut checked = 0;
    for report in reports.iter().filter(|r| r.function == function) {
        for reason in each_finding(report) {
            if let Some(w) = &reason.witness {
                if let Err(why) = check_witness(&path, &unit, report, reason, w) {
                    panic!("{function}: `{}` does not hold: {why}", reason.message);
                }
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn time_loops_carry_dependences_between_their_inner_nests() {
    // Each nest has its own `i` and `j`: the values the report tells apart are qualified
    // by their loop's line (`j@162` in the first nest, `i@164` in the second); the nests are too large to enumerate, so the
    // pair is solved for: one step reads what the next step's other nest writes.
    check(
        "jacobi_steps",
        Verdict::NotFriendly,
        &[
            "write-after-read dependence on `JA`: `JA[i][j]` (line 163) and `JA[i][j]` (line 166) in different iterations: t = 0, i = 1, j@162 = 1 reads JA[1][1]; t = 1, i@164 = 1, j = 1 writes JA[1][1] (tsteps = 2)",
            // The column solved from the row's: j - 1 = 1.
            "t = 0, i = 1, j@162 = 2 reads JA[1][1]; t = 1, i@164 = 1, j = 1 writes JA[1][1] (tsteps = 2)",
            // The row solved: i - 1 = 1.
            "t = 0, i = 2, j@162 = 1 reads JA[1][1]; t = 1, i@164 = 1, j = 1 writes JA[1][1] (tsteps = 2)",
            "read-after-write dependence on `JB`: `JB[i][j]` (line 163) and `JB[i + 1][j]` (line 166) in different iterations: t = 0, i = 2, j@162 = 1 writes JB[2][1]; t = 1, i@164 = 1, j = 1 reads JB[2][1] (tsteps = 2)",
        ],
    );
    assert_eq!(replayed("jacobi_steps"), 12);
    // One dimension: `sa` is written before it is read in every step (private to the
    // step); `sb` is read by one step after the previous step's second loop wrote it.
    check(
        "swap_steps",
        Verdict::NotFriendly,
        &["write-after-read dependence on `sb`: `sb[i]` (line 179) and `sb[i]` (line 181) in different iterations: t = 0, i = 0 reads sb[0]; t = 1, i@180 = 0 writes sb[0] (tsteps = 2)"],
    );
    assert_eq!(replayed("swap_steps"), 2);
}

#[test]
fn no_witness_indexes_past_a_struct_member() {
    // `m->first[4][0]` is `m->second[0][0]` by address, but i = 4 is past `first`'s 4
    // rows (C99 6.5.6p8): the only executions where the two writes meet are invalid.
    let unit = load(&fixture());
    let reports = analyze_unit(&unit, &Filter::default());
    for report in reports.iter().filter(|r| r.function == "member_rows") {
        assert_ne!(
            report.verdict,
            Verdict::NotFriendly,
            "{:#?}",
            report.reasons
        );
        assert!(report.reasons.iter().all(|r| r.witness.is_none()));
    }
}

#[test]
fn pointer_arithmetic_on_one_element_type_is_one_subscript() {
    check(
        "shifted_pointer",
        Verdict::NotFriendly,
        &["ii = 0 reads aux[1]; ii = 1 writes aux[1] (n = 2)"],
    );
}

/// The search's budget counts every value of the loops it walks, not only the points it
/// reaches, and tries the cheapest assignments first: the `k` loop's accumulator `c[j]`
/// is shown carried with small bounds although most assignments walk empty blocks.
#[test]
fn witnesses_behind_empty_blocks_are_found_within_the_budget() {
    check_loop(
        "superblock_sums",
        2,
        Verdict::NotFriendly,
        &[
            "write-after-read dependence on `c`",
            "(blocks_in_sblocks = 1, e_id = 3, n_sblocks = 1, s_id = 0)",
        ],
    );
}

/// A deterministic generator: each call gives a number in `0..m`.
fn xorshift(mut state: u64) -> impl FnMut(u64) -> i64 {
    move |m| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m) as i64
    }
}

/// How the reports of generated three-deep nests (one per function `<prefix><k>`, the
/// loops on the function's third, fourth and fifth lines) compare with brute force.
#[derive(Debug, Default)]
struct AgainstBruteForce {
    loops: usize,
    /// Loops called friendly, and those of them that are outermost.
    friendly: usize,
    outermost_friendly: usize,
    independent_by_brute_force: usize,
}

/// Analyses `source` and checks every loop against `truth(k, level)` (a meeting of two
/// iterations that differ at `level`, or `None`): a friendly loop must have none, and
/// every WW101 claim's witness must replay in the interpreter.
fn against_brute_force<T: std::fmt::Debug>(
    source: &str,
    prefix: &str,
    truth: impl Fn(usize, usize) -> Option<T>,
) -> AgainstBruteForce {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("generated.c");
    std::fs::write(&path, source).expect("write");
    let unit = load(&path);
    let reports = analyze_unit(&unit, &Filter::default());
    let mut seen = AgainstBruteForce {
        loops: reports.len(),
        ..AgainstBruteForce::default()
    };
    for report in &reports {
        let k: usize = report.function[prefix.len()..]
            .parse()
            .expect("a generated name");
        let first_line = source
            .lines()
            .position(|l| l.starts_with(&format!("void {prefix}{k}(")))
            .expect("function line") as u32
            + 1;
        let level = (report.line - first_line - 2) as usize;
        let meeting = truth(k, level);
        seen.independent_by_brute_force += usize::from(meeting.is_none());
        if report.verdict == Verdict::Friendly {
            seen.friendly += 1;
            seen.outermost_friendly += usize::from(level == 0);
            assert!(
                meeting.is_none(),
                "{prefix}{k} loop {level}: friendly, but {meeting:?} meet"
            );
        }
        for reason in report
            .reasons
            .iter()
            .filter(|r| r.code == advisor::rules::Code::WW101)
        {
            let w = reason.witness.as_ref().expect("a claim with a witness");
            check_witness(&path, &unit, report, reason, w)
                .unwrap_or_else(|why| panic!("{prefix}{k}: {why}\n{w:#?}"));
        }
    }
    eprintln!("{prefix}: {seen:?}");
    seen
}

/// Values of `b`, `c`, `n` and two iterations `(i, j, k)` whose stores meet.
type Meeting = ((i64, i64, i64), [i64; 3], [i64; 3]);

/// A generated mixed-radix nest: two stores `a[b*n*w + c*w + i*x + j*y + k*z]` and
/// `a[c*n*w + b*w + i*x2 + j*y2 + k*z2]` over `i, j, k < 3` (phono3py's permuted force
/// constants, the symbolic parts swapped between the stores).
#[derive(Clone, Copy, Debug)]
struct Radix {
    w: i64,
    first: [i64; 3],
    second: [i64; 3],
}

impl Radix {
    fn index(&self, second: bool, (b, c, n): (i64, i64, i64), iv: [i64; 3]) -> i64 {
        let (outer, inner, coefficients) = if second {
            (c, b, self.second)
        } else {
            (b, c, self.first)
        };
        outer * n * self.w
            + inner * self.w
            + iv.iter().zip(coefficients).map(|(v, k)| v * k).sum::<i64>()
    }

    /// Symbol values and two iterations, different at loop `level` and equal above it,
    /// whose stores write the same element; `None` for every value in -3..=3 tried.
    fn brute_force(&self, level: usize) -> Option<Meeting> {
        let points: Vec<[i64; 3]> = (0..27).map(|p| [p / 9, p / 3 % 3, p % 3]).collect();
        for b in -3..=3 {
            for c in -3..=3 {
                for n in -3..=3 {
                    let symbols = (b, c, n);
                    for p in &points {
                        for q in &points {
                            if p[..level] != q[..level] || p[level] >= q[level] {
                                continue;
                            }
                            let meet = [(false, false), (false, true), (true, false), (true, true)]
                                .iter()
                                .any(|&(s, t)| {
                                    self.index(s, symbols, *p) == self.index(t, symbols, *q)
                                });
                            if meet {
                                return Some((symbols, *p, *q));
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

#[test]
fn generated_mixed_radix_nests_are_friendly_only_where_brute_force_finds_no_meeting() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let radices = [27, 16, 9];
    let digits = [0, 1, 2, 3, 4, 9];
    let mut cases = Vec::new();
    for k in 0..60 {
        let w = radices[k % radices.len()];
        // Half the cases permute the digits 9, 3, 1 (the real code), half draw them freely.
        let pick = |next: &mut dyn FnMut(u64) -> i64| -> [i64; 3] {
            if k % 2 == 0 {
                let orders = [
                    [9, 3, 1],
                    [9, 1, 3],
                    [3, 9, 1],
                    [1, 3, 9],
                    [3, 1, 9],
                    [1, 9, 3],
                ];
                orders[next(6) as usize]
            } else {
                [0, 1, 2].map(|_| digits[next(6) as usize])
            }
        };
        let first = pick(&mut next);
        let second = pick(&mut next);
        cases.push(Radix { w, first, second });
    }
    let mut source = String::new();
    for (k, r) in cases.iter().enumerate() {
        let [x, y, z] = r.first;
        let [x2, y2, z2] = r.second;
        source.push_str(&format!(
            "void f{k}(double *a, long b, long c, long n)\n{{\n\
             \x20   for (long i = 0; i < 3; i++)\n\
             \x20       for (long j = 0; j < 3; j++)\n\
             \x20           for (long k = 0; k < 3; k++) {{\n\
             \x20               a[b * n * {w} + c * {w} + i * {x} + j * {y} + k * {z}] = 1.0;\n\
             \x20               a[c * n * {w} + b * {w} + i * {x2} + j * {y2} + k * {z2}] = 2.0;\n\
             \x20           }}\n}}\n",
            w = r.w
        ));
    }
    let seen = against_brute_force(&source, "f", |k, level| cases[k].brute_force(level));
    assert_eq!(seen.loops, 3 * cases.len());
    // The modular box test proves most of the loops brute force finds independent.
    assert!(
        2 * seen.friendly >= seen.independent_by_brute_force && seen.friendly > 0,
        "{seen:?}"
    );
}

/// A generated face loop: `for f < n`, two stores `a[f*w + a1 + i*x1 + j*y1]` and
/// `a[f*w + a2 + i*x2 + j*y2]` over `i, j < 3` (code_saturne's per-face blocks
/// `xa[face_id][0][i][j]`, `xa[face_id][1][j][i]`): the carrier `f` has no constant bound.
#[derive(Clone, Copy, Debug)]
struct Faces {
    w: i64,
    first: [i64; 3],
    second: [i64; 3],
}

impl Faces {
    fn index(&self, second: bool, [f, i, j]: [i64; 3]) -> i64 {
        let [a, x, y] = if second { self.second } else { self.first };
        f * self.w + a + i * x + j * y
    }

    /// Two iterations `(f, i, j)`, different at loop `level` and equal above it, whose
    /// stores write the same element; `f` below 24.
    fn brute_force(&self, level: usize) -> Option<([i64; 3], [i64; 3])> {
        let points: Vec<[i64; 3]> = (0..24 * 9).map(|p| [p / 9, p / 3 % 3, p % 3]).collect();
        for p in &points {
            for q in &points {
                if p[..level] != q[..level] || p[level] >= q[level] {
                    continue;
                }
                let meet = [(false, false), (false, true), (true, false), (true, true)]
                    .iter()
                    .any(|&(s, t)| self.index(s, *p) == self.index(t, *q));
                if meet {
                    return Some((*p, *q));
                }
            }
        }
        None
    }
}

#[test]
fn generated_face_loops_are_friendly_only_where_brute_force_finds_no_meeting() {
    let mut next = xorshift(0xd1b5_4a32_d192_ed03);
    let strides = [18, 12, 9, 6, 4];
    let digits = [0, 1, 2, 3, 4, 6];
    let cases: Vec<Faces> = (0..60)
        .map(|k| {
            let w = strides[k % strides.len()];
            let offsets = [0, 9, 3, w / 2];
            let first = [0, digits[next(6) as usize], digits[next(6) as usize]];
            let second = [
                offsets[next(4) as usize],
                digits[next(6) as usize],
                digits[next(6) as usize],
            ];
            Faces { w, first, second }
        })
        .collect();
    let mut source = String::new();
    for (k, c) in cases.iter().enumerate() {
        let [a1, x1, y1] = c.first;
        let [a2, x2, y2] = c.second;
        source.push_str(&format!(
            "void g{k}(double *a, long n)\n{{\n\
             \x20   for (long f = 0; f < n; f++)\n\
             \x20       for (long i = 0; i < 3; i++)\n\
             \x20           for (long j = 0; j < 3; j++) {{\n\
             \x20               a[f * {w} + {a1} + i * {x1} + j * {y1}] = 1.0;\n\
             \x20               a[f * {w} + {a2} + i * {x2} + j * {y2}] = 2.0;\n\
             \x20           }}\n}}\n",
            w = c.w
        ));
    }
    let seen = against_brute_force(&source, "g", |k, level| cases[k].brute_force(level));
    assert_eq!(seen.loops, 3 * cases.len());
    assert!(
        seen.outermost_friendly >= 10 && 4 * seen.friendly >= 3 * seen.independent_by_brute_force,
        "{seen:?}"
    );
}
