//! The advisor's driver: for every loop of every function, the GPU-friendliness test
//! (thesis §4.1), the kernel parameters with byte sections (§4.2), and the 2D nests.

// Whether a loop's bound is invariant: a step of the friendliness test, on its context.
mod bound;
// A loop's kernel parameters and their sections, phase by phase.
mod parameters;
// The pairs of accesses through pointers that may alias, and where pointers come from.
mod alias_pairs;
// The dependences a loop carries, through memory and through scalars, phase by phase.
mod dependences;
// Which loads read what their memory holds where the loop starts: one value for the report.
mod entry_values;

use crate::access::{collect_accesses, MemAccess};
use crate::aliasing::ParamAliasing;
use crate::assumption::Assumption;
use crate::calls::{classify_in, CallKind};
use crate::model::{
    Access, Call, DependencePair, Device, Induction, LoopReport, Parameter, Quantity, Reason,
    Reduction, Role, Verdict,
};
use crate::rebase::EntryOffset;
use crate::rules::{self, Finding};
use crate::space::{iv_range, Space};
use analyses::invariant::{loop_invariants_in, AliasPolicy, FunctionInvariance, Invariants};
use analyses::range::{range_analysis, RangeConfig, RangeFacts};
use analyses::reconstruct::{reconstruct, ReconstructConfig, Reconstruction};
use analyses::sign::{sign_analysis, SignFacts};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{Callee, Function, InstKind, Span, Value};
use frontend::loop_ref::LoopRef;
use frontend::loops::{analyze_loops, LoopForest, LoopId, Normalizable};
use frontend::unit::Unit;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use symbolic::Var;

/// Which loops to report, and what the analysis may assume about the pointers it is given.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub function: Option<String>,
    /// `--loop`: only the loops it selects.
    pub loop_id: Option<frontend::loop_ref::LoopSelector>,
    pub aliasing: Aliasing,
    /// Dependence pair tests each function may make ([`crate::budget`]); `None` for the
    /// default.
    pub work_budget: Option<u64>,
}

/// What two pointers a function receives (parameters, and pointers read through them such
/// as `z->content->data`) may be assumed about when no call site shows how they relate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Aliasing {
    /// Assumed not to overlap unless a call site in the analysed files passes them into one
    /// object, as C's `restrict` would promise; every loop relying on it states it in its
    /// `assumptions`, and the recipe says to add `restrict`.
    #[default]
    Distinct,
    /// Only what the call sites prove: anything else is a may-alias pair (WW110,
    /// `needs-profile`).
    CallSites,
}

/// Analyses every loop of a unit.
pub fn analyze_unit(unit: &Unit, filter: &Filter) -> Vec<LoopReport> {
    analyze_unit_for(unit, filter, &crate::mapping::Target::default())
}

/// Analyses every loop of a unit, with performance advice for `target`.
pub fn analyze_unit_for(
    unit: &Unit,
    filter: &Filter,
    target: &crate::mapping::Target,
) -> Vec<LoopReport> {
    analyze_unit_injected(unit, filter, target, &HashMap::new())
}

/// Analyses with values injected (thesis §6.2): every symbol named in `injected` (an
/// inbound variable of the analysed functions, `n` or `c->n`) takes that value in the
/// reconstruction and the range analysis. The results hold only where the variables have
/// these values, e.g. for one profiled run; callers must say so.
pub fn analyze_unit_injected(
    unit: &Unit,
    filter: &Filter,
    target: &crate::mapping::Target,
    injected: &HashMap<String, i64>,
) -> Vec<LoopReport> {
    let view = crate::program::ProgramView::single(unit);
    let summaries = crate::summaries::Summaries::new(&view);
    analyze_in_program(&summaries, 0, filter, target, injected)
}

/// Analyses every loop of every unit as one program: calls resolve to functions of any
/// unit (non-static ones across units), and callees' side effects are summarized
/// program-wide. Reports come unit by unit, in the order given.
pub fn analyze_units(
    units: &[Unit],
    filter: &Filter,
    target: &crate::mapping::Target,
) -> Vec<LoopReport> {
    analyze_units_reporting(units, filter, target, &|_| {})
}

/// [`analyze_units`], calling `done` with each unit once its loops are analysed (in the
/// order units finish, from the worker threads): progress for long runs.
pub fn analyze_units_reporting(
    units: &[Unit],
    filter: &Filter,
    target: &crate::mapping::Target,
    done: &(dyn Fn(&Unit) + Sync),
) -> Vec<LoopReport> {
    let mut reports = Vec::new();
    analyze_units_streaming(units, filter, target, done, &mut |r| reports.extend(r));
    without_repeats(reports.into_iter())
}

/// [`analyze_units_reporting`], handing each function's reports to `emit` in the units'
/// and functions' order as soon as they and those of the functions before them are made,
/// instead of keeping them all: a caller that writes them then needs memory for the
/// functions in progress. A loop may come more than once (see [`without_repeats`]) where
/// several units are given.
pub fn analyze_units_streaming(
    units: &[Unit],
    filter: &Filter,
    target: &crate::mapping::Target,
    done: &(dyn Fn(&Unit) + Sync),
    emit: &mut (dyn FnMut(Vec<LoopReport>) + Send),
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let view = crate::program::ProgramView::new(units);
    // The functions of every unit are the work: one large file (sqlite3.c) is as parallel
    // as many small ones. Largest first, so no worker is left with a long function at the
    // end; results are put back in the units' and functions' order.
    let mut items: Vec<(usize, usize)> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        for (index, func) in unit.lowered.program.functions.iter().enumerate() {
            if filter.function.as_deref().is_none_or(|f| f == func.name) {
                items.push((u, index));
            }
        }
    }
    let size = |&(u, index): &(usize, usize)| units[u].lowered.program.functions[index].insts.len();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(size(&items[k])));
    let results: Vec<Mutex<Option<Vec<LoopReport>>>> =
        items.iter().map(|_| Mutex::default()).collect();
    // The next function whose reports go to `emit`, and `emit`: whoever finishes a function
    // hands on what is ready in order (the work goes largest first, not in order).
    let emitter = Mutex::new((0usize, emit));
    let hand_on = || {
        let mut guard = emitter.lock().unwrap_or_else(|e| e.into_inner());
        let (next, emit) = &mut *guard;
        while let Some(slot) = results.get(*next) {
            let Some(reports) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() else {
                break;
            };
            *next += 1;
            emit(reports);
        }
    };
    // Functions left per unit (one pass: a count per unit by filtering was units x items).
    let remaining: Vec<AtomicUsize> = units.iter().map(|_| AtomicUsize::new(0)).collect();
    for &(u, _) in &items {
        remaining[u].fetch_add(1, Ordering::Relaxed);
    }
    for (u, left) in remaining.iter().enumerate() {
        if left.load(Ordering::Relaxed) == 0 {
            done(&units[u]);
        }
    }
    let next = AtomicUsize::new(0);
    // One cache of callee summaries and reconstructions for all workers: each is a
    // function of the program alone, so which worker makes it first does not matter (two
    // may make the same one at once; either copy will do).
    let summaries = crate::summaries::Summaries::new(&view);
    // Per function, the callees its loops call (and whether it has loops at all).
    let loop_callees: Vec<Option<Vec<crate::program::FuncRef>>> =
        crate::parallel::map(&items, |&(u, index)| {
            let func = &units[u].lowered.program.functions[index];
            let forest = analyze_loops(func);
            if forest.loops.is_empty() {
                return None;
            }
            let in_loops: BTreeSet<frontend::ir::Block> = forest
                .loops
                .iter()
                .flat_map(|l| l.blocks.iter().copied())
                .collect();
            let mut callees = Vec::new();
            for b in in_loops {
                for &v in &func.block(b).insts {
                    if let InstKind::Call {
                        callee: Callee::Direct(name),
                        ..
                    } = &func.inst(v).kind
                    {
                        callees.extend(view.resolve(u, name));
                    }
                }
            }
            Some(callees)
        });
    // The functions called in loops first, in parallel along the call graph: summarized
    // on demand, the workers would wait for each other's callees in turn.
    let mut called_in_loops: Vec<crate::program::FuncRef> =
        loop_callees.iter().flatten().flatten().copied().collect();
    called_in_loops.sort();
    called_in_loops.dedup();
    summaries.prepare(&called_in_loops);
    // A worker per function with loops, up to the threads there are; one works here (a
    // function without loops is over as soon as it is looked at).
    let with_loops = loop_callees.iter().filter(|c| c.is_some()).count();
    let workers = crate::parallel::threads().clamp(1, with_loops.max(1));
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&item) = order.get(k) else { break };
        let (u, index) = items[item];
        let reports =
            analyze_function_in_program(&summaries, u, index, filter, target, &HashMap::new());
        *results[item].lock().unwrap_or_else(|e| e.into_inner()) = Some(reports);
        if remaining[u].fetch_sub(1, Ordering::AcqRel) == 1 {
            done(&units[u]);
        }
        hand_on();
    };
    if workers == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(work);
            }
        });
    }
    hand_on();
}

/// The reports with each loop once: a function defined in a header that several files
/// include and call is analysed in each, and gives the same report each time. Reports of
/// one loop that differ (the files give it different callers or macros) all stay.
pub fn without_repeats(reports: impl Iterator<Item = LoopReport>) -> Vec<LoopReport> {
    let mut out: Vec<LoopReport> = Vec::new();
    let mut by_id: HashMap<LoopRef, Vec<usize>> = HashMap::new();
    for report in reports {
        let same = by_id.entry(report.id.clone()).or_default();
        if same.iter().any(|&k| out[k] == report) {
            continue;
        }
        same.push(out.len());
        out.push(report);
    }
    out
}

/// Analyses the loops of unit `unit_index` of a program (see [`analyze_unit_injected`]).
pub fn analyze_in_program(
    summaries: &crate::summaries::Summaries,
    unit_index: usize,
    filter: &Filter,
    target: &crate::mapping::Target,
    injected: &HashMap<String, i64>,
) -> Vec<LoopReport> {
    let program = &summaries.view().unit(unit_index).lowered.program;
    let mut reports = Vec::new();
    for (index, func) in program.functions.iter().enumerate() {
        if filter.function.as_deref().is_none_or(|f| f == func.name) {
            reports.extend(analyze_function_in_program(
                summaries, unit_index, index, filter, target, injected,
            ));
        }
    }
    reports
}

/// Analyses the loops of function `index` of unit `unit_index` of a program.
fn analyze_function_in_program(
    summaries: &crate::summaries::Summaries,
    unit_index: usize,
    index: usize,
    filter: &Filter,
    target: &crate::mapping::Target,
    injected: &HashMap<String, i64>,
) -> Vec<LoopReport> {
    let unit = summaries.view().unit(unit_index);
    let mut reconstruct_config = ReconstructConfig::default();
    let mut range_config = RangeConfig::default();
    for (name, value) in injected {
        reconstruct_config
            .injected
            .insert(name.clone(), symbolic::Expr::constant(*value));
        range_config = range_config.inject(name, *value);
    }
    let program = &unit.lowered.program;
    let func = &program.functions[index];
    let mut reports = Vec::new();
    let reconstructed = |index: usize| {
        summaries.reconstructed(crate::program::FuncRef {
            unit: unit_index,
            index,
        })
    };
    let forest = analyze_loops(func);
    if forest.loops.is_empty() {
        return reports;
    }
    // Without injected values, the reconstruction the summaries and callers share.
    let own = if injected.is_empty() {
        let f = crate::program::FuncRef {
            unit: unit_index,
            index,
        };
        summaries.reconstructed_from(f, Some(forest))
    } else {
        let rec = std::sync::Arc::new(reconstruct(program, func, &forest, &reconstruct_config));
        std::sync::Arc::new(crate::summaries::Reconstructed { forest, rec })
    };
    let (forest, rec) = (&own.forest, &*own.rec);
    // This unit's calls of the function, as a scan of the unit's instructions by name
    // would find them (a name resolves to this unit's definition first).
    let me = crate::program::FuncRef {
        unit: unit_index,
        index,
    };
    let call_sites: Vec<(usize, &[frontend::ir::Value])> = summaries
        .view()
        .call_index()
        .callers
        .get(&me)
        .into_iter()
        .flatten()
        .filter(|(caller, _)| caller.unit == unit_index)
        .map(|(caller, args)| (caller.index, args.as_slice()))
        .collect();
    let view = summaries.view();
    let aliasing = crate::aliasing::param_aliasing_with(
        program,
        func,
        &call_sites,
        &|i| reconstructed(i).rec.clone(),
        &|caller, a, b| {
            let caller = crate::program::FuncRef {
                unit: unit_index,
                index: caller,
            };
            crate::copies::may_meet(view, caller, a, b)
        },
    );
    let signs = sign_analysis(program, func, forest, rec, &HashMap::new());
    let entry_signs = signs.env_for(func.entry, rec);
    let ranges = range_analysis(program, func, forest, rec, &entry_signs, &range_config);
    let users = func.users();
    let fresh = crate::fresh::FreshInFunction::new(
        summaries.view(),
        unit_index,
        func,
        summaries.view().allocators(),
    );
    let invariance = FunctionInvariance::with_fresh(program, func, fresh.allocation_blocks());
    let context = FunctionContext {
        unit,
        unit_index,
        summaries,
        func,
        forest,
        rec,
        aliasing: &aliasing,
        signs: &signs,
        ranges: &ranges,
        target,
        aliasing_policy: filter.aliasing,
        budget: crate::budget::Budget::new(
            filter
                .work_budget
                .unwrap_or(crate::budget::DEFAULT_PAIR_TESTS),
        ),
        invariance,
        invariants: Default::default(),
        defined_symbols: Default::default(),
        primary_ivs: Default::default(),
        quotients: Default::default(),
        object_addresses: Default::default(),
        variable_definitions: Default::default(),
        user_blocks: Default::default(),
        stale_symbols: Default::default(),
        reads_by_line: Default::default(),
        order: Default::default(),
        nest_symbols: Default::default(),
        variant: Default::default(),
        call_effects: Default::default(),
        fresh,
        lookups: crate::lookups::LookupNames::new(summaries.view(), unit_index),
        param_copies: Default::default(),
        private_allocations: crate::summaries::private_allocations(func, &users),
        users,
    };
    let mut facts: BTreeMap<LoopId, LoopFacts> = BTreeMap::new();
    for id in forest.ids() {
        if forest.loop_(id).source.is_none() {
            continue;
        }
        facts.insert(id, context.loop_facts(id));
    }
    let mut ordered: Vec<LoopId> = facts.keys().copied().collect();
    ordered.sort_by_key(|id| source_position(func, forest, *id));
    for id in ordered {
        let Some(report) = context.report(id, &facts) else {
            continue;
        };
        if let Some(wanted) = &filter.loop_id {
            if !wanted.matches(&report.id) {
                continue;
            }
        }
        reports.push(report);
    }
    reports
}

/// The assumption the [`Aliasing::Distinct`] policy states for `which` (one pair, or "the
/// pairs ...").
fn distinct_assumption(which: &str) -> String {
    format!(
        "{which} do not overlap: no call site in the analysed files passes them into one array (declare them `restrict` to make it a guarantee; `--aliasing call-sites` drops this assumption)"
    )
}

fn source_position(func: &Function, forest: &LoopForest, id: LoopId) -> u32 {
    forest
        .loop_(id)
        .source
        .map(|s| func.source_loop(s).keyword_span.start)
        .unwrap_or(u32::MAX)
}

struct FunctionContext<'a> {
    unit: &'a Unit,
    /// This unit's index in the program, and the callees' side-effect summaries.
    unit_index: usize,
    summaries: &'a crate::summaries::Summaries<'a>,
    func: &'a Function,
    forest: &'a LoopForest,
    rec: &'a Reconstruction,
    aliasing: &'a ParamAliasing,
    /// Sign analysis (thesis §8.5) of the function, for the signs at each loop header.
    signs: &'a SignFacts,
    /// Symbolic range analysis (thesis §8.3), which tightens sections with branch conditions.
    ranges: &'a RangeFacts,
    target: &'a crate::mapping::Target,
    aliasing_policy: Aliasing,
    /// The function's work budget, shared by its loops in the loop forest's order.
    budget: crate::budget::Budget,
    /// What every loop's invariance needs from the whole function, computed once.
    invariance: FunctionInvariance,
    /// New memory in the function: which pointers hold only it, and where it goes.
    fresh: crate::fresh::FreshInFunction<'a>,
    /// Which of the functions it calls are lookups (return a pointer the program keeps).
    lookups: crate::lookups::LookupNames<'a>,
    /// The slots holding a by-value struct parameter's copy (`escape::param_copies`).
    param_copies: std::cell::OnceCell<HashMap<frontend::ir::Slot, u32>>,
    /// Each value's users (`Function::users`), made once for all the loops.
    users: Vec<Vec<Value>>,
    /// `summaries::private_allocations` of the function, made once for all the loops.
    private_allocations: HashSet<Value>,
    /// Each loop's invariants, computed on first use: the test, the report and the
    /// variant symbols all ask, and recomputing cost the whole function each time.
    invariants: std::cell::RefCell<HashMap<LoopId, std::rc::Rc<Invariants>>>,
    /// The symbols a value defines (a load, a phi, an opaque result, an induction variable
    /// other than a loop's index), by the block defining it: a loop's variant symbols are
    /// found among those of its own blocks, not among the whole function's.
    defined_symbols: std::cell::OnceCell<HashMap<frontend::ir::Block, Vec<(Var, Value)>>>,
    /// See [`FunctionContext::nest_symbols`], by outermost loop.
    nest_symbols: std::cell::RefCell<HashMap<LoopId, std::rc::Rc<HashSet<Var>>>>,
    /// The order of the function's instructions and memory writes (for reductions).
    order: std::cell::OnceCell<crate::reductions::Order>,
    /// See [`FunctionContext::primary_ivs`].
    primary_ivs: std::cell::OnceCell<HashSet<Value>>,
    /// See [`FunctionContext::quotients`].
    quotients: std::cell::OnceCell<crate::dependence::Quotients>,
    /// The addresses of named objects (`&x`, `&global`) that have a symbol, for the
    /// private-object symbols of each loop (a scan of the function per loop before).
    object_addresses: std::cell::OnceCell<Vec<Value>>,
    /// Each named variable's definitions and the dominator tree, for `rebase`, made once.
    variable_definitions: std::cell::OnceCell<crate::rebase::Definitions>,
    /// Each value's users' blocks (instructions and terminators), for what is read after a
    /// loop, made once: per loop, a scan of the function made a function of ten thousand
    /// loops quadratic.
    user_blocks: std::cell::OnceCell<HashMap<Value, Vec<frontend::ir::Block>>>,
    /// The symbols that may be stale at some loop (`stale`), found once per function.
    stale_symbols: std::cell::OnceCell<crate::stale::FunctionSymbols>,
    /// See [`FunctionContext::reads_by_line`].
    reads_by_line: std::cell::OnceCell<HashMap<(std::path::PathBuf, u32, String), Vec<Value>>>,
    /// Each loop's variant symbols, computed on first use (asked several times per loop).
    variant: std::cell::RefCell<HashMap<LoopId, std::rc::Rc<HashSet<Var>>>>,
    /// Each loop's call effects, computed on first use (see [`FunctionContext::call_effects`]).
    call_effects: std::cell::RefCell<HashMap<LoopId, std::rc::Rc<crate::callsites::LoopEffects>>>,
}

/// A per-loop value computed on first use and shared after: the memo fields of
/// [`FunctionContext`]. The cell is not borrowed while `compute` runs, which may fill
/// other memos (call effects ask for the variant symbols).
fn memoized<T>(
    memo: &std::cell::RefCell<HashMap<LoopId, std::rc::Rc<T>>>,
    id: LoopId,
    compute: impl FnOnce() -> T,
) -> std::rc::Rc<T> {
    if let Some(known) = memo.borrow().get(&id) {
        return known.clone();
    }
    let computed = std::rc::Rc::new(compute());
    memo.borrow_mut().insert(id, computed.clone());
    computed
}

/// What the friendliness test found for one loop as the parallel one.
#[derive(Clone, Debug)]
struct LoopFacts {
    verdict: Verdict,
    reasons: Vec<Reason>,
    reductions: Vec<Reduction>,
    /// Of `reductions`, the memory updates under a condition or in an inner loop: they may
    /// touch their element in one iteration only (what a profile used to settle).
    conditional_reductions: usize,
    needs_evidence: Vec<DependencePair>,
    assumptions: Vec<Assumption>,
    /// Storage each iteration has its own copy of (`crate::privatize`).
    privacy: crate::privatize::Privacy,
    /// The error branches a port handles (`crate::error_paths`), and their blocks: what
    /// happens there runs on the host only, so it needs no kernel parameter.
    error_paths: Vec<crate::model::ErrorPath>,
    error_blocks: BTreeSet<frontend::ir::Block>,
}

impl LoopFacts {
    /// A reduction is a note, not a finding against the loop: the verdict stays.
    fn note_reduction(&mut self, noted: crate::reductions::Noted) {
        self.reductions.push(noted.reduction);
        self.add(noted.finding);
        self.assumptions
            .extend(noted.assumptions.into_iter().map(Assumption::plain));
    }

    /// A finding joins the loop's reasons; the verdict becomes the worse of the two.
    fn add(&mut self, finding: Finding) {
        self.verdict = self.verdict.max(finding.verdict);
        self.reasons.push(finding.reason);
    }
}

impl<'a> FunctionContext<'a> {
    fn line(&self, span: Span) -> u32 {
        self.unit.resolve(span).map(|r| r.line).unwrap_or(0)
    }

    /// Where the program computes `v` (line, column); for a phi (which has no span of its
    /// own), the loop whose header it is in, else the first statement after the merge.
    fn defining_place(&self, v: Value) -> Option<(u32, u32)> {
        let place = |span: Span| {
            self.unit
                .resolve(span)
                .map(|r| (r.line, r.col))
                .filter(|(line, _)| *line != 0)
        };
        let inst = self.func.inst(v);
        if let Some(own) = place(inst.origin.span) {
            return Some(own);
        }
        if !inst.kind.is_phi() {
            return None;
        }
        // A loop's variable: the place of the loop (`k@6`: `k` as the loop at line 6 sees it).
        if let Some(l) = self.forest.loops.iter().find(|l| l.header == inst.block) {
            if let Some(source) = l.source.map(|s| self.func.source_loop(s)) {
                return place(source.keyword_span);
            }
        }
        // A merge after a branch (`if (flag) m = 3;`): where the merged value is first
        // used, the first statement of its block; else the last of the values it merges.
        let block = self.func.block(inst.block);
        block
            .insts
            .iter()
            .find_map(|v| place(self.func.inst(*v).origin.span))
            .or_else(|| match &inst.kind {
                InstKind::Phi(args) => args
                    .iter()
                    .filter_map(|(_, a)| place(self.func.inst(*a).origin.span))
                    .max(),
                _ => None,
            })
    }

    /// Report text names values as the source does (`crate::present`): this places the
    /// function's symbols for it.
    /// The source variable a value is named after, or the IR's name for it.
    fn value_name(&self, v: Value) -> String {
        self.func
            .inst(v)
            .origin
            .var_name
            .clone()
            .unwrap_or_else(|| format!("{v}"))
    }

    fn present(&self, id: LoopId, report: &mut LoopReport) {
        let invariants = self.invariants(id);
        let entry_value = |name: &str| {
            self.rec
                .symbols
                .value_of(&Var::new(name))
                .and_then(|v| self.entry_value_key(id, &invariants, v))
        };
        let locate = |name: &str| {
            self.rec
                .symbols
                .value_of(&Var::new(name))
                .and_then(|v| self.defining_place(v))
        };
        let is_object = |name: &str| self.rec.symbols.is_object(&Var::new(name));
        let loop_path = self
            .forest
            .loop_(id)
            .source
            .and_then(|s| self.unit.resolve(self.func.source_loop(s).span))
            .map(|r| r.path);
        let in_scope = |name: &str, line: u32| {
            self.names_only_its_loop_variable(name, line)
                || loop_path
                    .as_ref()
                    .is_some_and(|path| self.is_the_value_read_at(name, path, line))
        };
        let definitions = self
            .variable_definitions
            .get_or_init(|| crate::rebase::Definitions::of(self.func));
        let l = self.forest.loop_(id);
        let at_start = |name: &str| {
            let var = Var::new(name);
            // A variable's storage (a by-value struct's copy) is the object, no value it
            // holds.
            if self.rec.symbols.is_object(&var) {
                return false;
            }
            let Some(v) = self.rec.symbols.value_of(&var) else {
                return false;
            };
            let Some(variable) = self.func.inst(v).origin.var_name.as_deref() else {
                return false;
            };
            match crate::rebase::value_at_entry(self.func, self.rec, definitions, l, variable, &var)
            {
                Some(entry) => {
                    entry == v || self.rec.single(entry) == Some(&symbolic::Expr::from(var))
                }
                // Defined once: the value, unless the loop computes it.
                None => !l.contains(self.func.inst(v).block),
            }
        };
        let type_of = |name: &str| {
            let types = &self.unit.lowered.program.types;
            let ty = self
                .func
                .inst(self.rec.symbols.value_of(&Var::new(name))?)
                .ty;
            types.is_scalar(ty).then(|| types.display(ty))
        };
        let places = crate::present::Places {
            locate: &locate,
            is_object: &is_object,
            in_scope: &in_scope,
            entry_value: &entry_value,
            at_start: &at_start,
            type_of: &type_of,
        };
        crate::present::present(report, &places);
        crate::prose_names::say_places(report);
    }

    /// Whether at `line` the source name of the symbol `name` means just that value: the
    /// symbol is a `for` loop's variable (its header's value, stepped only by the `for`'s
    /// step), `line` is inside that loop, and nothing else in the loop takes the name (an
    /// inner loop or block declaring its own, another assignment).
    fn names_only_its_loop_variable(&self, name: &str, line: u32) -> bool {
        let Some(v) = self.rec.symbols.value_of(&Var::new(name)) else {
            return false;
        };
        let inst = self.func.inst(v);
        let Some(var) = inst.origin.var_name.as_deref() else {
            return false;
        };
        let Some(l) = self.forest.loops.iter().find(|l| l.header == inst.block) else {
            return false;
        };
        let (Some(iv), Some(source)) = (
            l.induction_variables.iter().find(|iv| iv.phi == v),
            l.source.map(|s| self.func.source_loop(s)),
        ) else {
            return false;
        };
        // Stepped anywhere but the `for`'s step, the name holds another value after it.
        if self.func.inst(iv.update).block != source.continue_block {
            return false;
        }
        let last = Span {
            start: source.span.end.saturating_sub(1),
            end: source.span.end,
        };
        let (first, last) = (self.line(source.span), self.line(last));
        if first == 0 || !(first..=last).contains(&line) {
            return false;
        }
        l.blocks.iter().all(|b| {
            *b == source.continue_block
                || self
                    .func
                    .block(*b)
                    .insts
                    .iter()
                    .all(|x| *x == v || self.func.inst(*x).origin.var_name.as_deref() != Some(var))
        })
    }

    /// Whether at `line` of `path` the source reads the variable of the symbol `name` as
    /// that value and as no other: `kk` in `mc->val[kk]` (line 2928) after the search loop
    /// `for (kk = start; col[kk] != jj; kk++);` (line 2927) is that loop's last `kk`.
    fn is_the_value_read_at(&self, name: &str, path: &std::path::Path, line: u32) -> bool {
        let Some(v) = self.rec.symbols.value_of(&Var::new(name)) else {
            return false;
        };
        let Some(var) = self.func.inst(v).origin.var_name.as_ref() else {
            return false;
        };
        self.reads_by_line()
            .get(&(path.to_path_buf(), line, var.clone()))
            .is_some_and(|read| read.as_slice() == [v])
    }

    /// The values of each named variable the function reads at each line, by the lines of
    /// their users. A phi is no read: it joins values where control flow meets, at no
    /// place of the source.
    fn reads_by_line(&self) -> &HashMap<(std::path::PathBuf, u32, String), Vec<Value>> {
        self.reads_by_line.get_or_init(|| {
            let mut reads: HashMap<(std::path::PathBuf, u32, String), Vec<Value>> = HashMap::new();
            for (index, users) in self.users.iter().enumerate() {
                let v = Value(index as u32);
                let Some(var) = self.func.inst(v).origin.var_name.as_ref() else {
                    continue;
                };
                if var.starts_with('&') {
                    continue;
                }
                for u in users {
                    let user = self.func.inst(*u);
                    if user.kind.is_phi() {
                        continue;
                    }
                    let Some(at) = self.unit.resolve(user.origin.span) else {
                        continue;
                    };
                    let read = reads.entry((at.path, at.line, var.clone())).or_default();
                    if !read.contains(&v) {
                        read.push(v);
                    }
                }
            }
            reads
        })
    }

    /// Whether `v` is the same in every iteration: invariant, a load already shown
    /// unchanged (`cleared`: `comm_pkg->send_map_starts` before
    /// `comm_pkg->send_map_starts[num_sends]`), or arithmetic, casts and address
    /// computations on such values.
    fn invariant_given(
        &self,
        v: Value,
        invariants: &Invariants,
        cleared: &HashSet<Value>,
        depth: u32,
    ) -> bool {
        if invariants.is_invariant(v) || cleared.contains(&v) {
            return true;
        }
        if depth == 0 {
            return false;
        }
        match &self.func.inst(v).kind {
            InstKind::Binary(_, a, b) => {
                self.invariant_given(*a, invariants, cleared, depth - 1)
                    && self.invariant_given(*b, invariants, cleared, depth - 1)
            }
            InstKind::Unary(_, a) | InstKind::Cast(a) => {
                self.invariant_given(*a, invariants, cleared, depth - 1)
            }
            InstKind::PtrAdd { base, index, .. } => {
                self.invariant_given(*base, invariants, cleared, depth - 1)
                    && self.invariant_given(*index, invariants, cleared, depth - 1)
            }
            InstKind::FieldAddr { base, .. } => {
                self.invariant_given(*base, invariants, cleared, depth - 1)
            }
            InstKind::Const(_) => true,
            _ => false,
        }
    }

    fn access_text(&self, access: &MemAccess) -> Access {
        let snippet = self.unit.snippet(access.span);
        // Inside a macro expansion the span may cover a token fragment (`(maxsum,` of
        // `MAX(maxsum, x)`): the access is then printed from the IR.
        let text = if access.callee.is_none() && !reads_as_an_expression(&snippet) {
            match self.func.inst(access.inst).kind {
                InstKind::Store { addr, .. } => frontend::ir::print::render_value(self.func, addr)
                    .trim_start_matches('&')
                    .to_string(),
                _ => frontend::ir::print::render_value(self.func, access.inst),
            }
        } else {
            snippet
        };
        Access {
            line: self.line(access.span),
            text,
        }
    }

    /// Symbols whose value may change between iterations of loop `id`, other than the
    /// induction variables of the loops of the nest (which the dependence test renames).
    fn variant_symbols(&self, id: LoopId) -> std::rc::Rc<HashSet<Var>> {
        memoized(&self.variant, id, || self.compute_variant_symbols(id))
    }

    fn compute_variant_symbols(&self, id: LoopId) -> HashSet<Var> {
        let invariants = self.invariants(id);
        // An inner loop without a range (an early exit) is not in the iteration space: its
        // counter is not renamed by the test, so it is a value that varies like any other.
        let unranged: HashSet<Value> =
            crate::space::unranged_inner_loops(self.forest, id, self.rec)
                .into_iter()
                .flat_map(|(inner, _)| {
                    self.forest
                        .loop_(inner)
                        .induction_variables
                        .iter()
                        .map(|iv| iv.phi)
                })
                .collect();
        let defined = self.defined_symbols.get_or_init(|| self.symbols_by_block());
        let mut variant = HashSet::new();
        for block in &self.forest.loop_(id).blocks {
            for (var, v) in defined.get(block).into_iter().flatten() {
                let is_index = self.primary_ivs().contains(v) && !unranged.contains(v);
                if !is_index && !invariants.is_invariant(*v) {
                    variant.insert(var.clone());
                }
            }
        }
        variant
    }

    /// The symbols the expressions of loop `id`'s nest can name: those of the values its
    /// outermost loop computes with, found by walking operands back from every
    /// instruction and branch of that loop to the values that are symbols (a load also
    /// names what the reconstruction forwarded into it). Computed once per nest.
    fn nest_symbols(&self, id: LoopId) -> std::rc::Rc<HashSet<Var>> {
        let mut outermost = id;
        while let Some(parent) = self.forest.loop_(outermost).parent {
            outermost = parent;
        }
        memoized(&self.nest_symbols, outermost, || {
            self.symbols_of_nest(outermost)
        })
    }

    /// [`FunctionContext::nest_symbols`] of the nest whose outermost loop is `outermost`.
    fn symbols_of_nest(&self, outermost: LoopId) -> HashSet<Var> {
        let mut symbols = HashSet::new();
        let mut seen = HashSet::new();
        let mut work: Vec<Value> = Vec::new();
        for &b in &self.forest.loop_(outermost).blocks {
            work.extend(self.func.block(b).insts.iter().copied());
            work.extend(self.func.terminator_uses(b));
        }
        while let Some(v) = work.pop() {
            if !seen.insert(v) {
                continue;
            }
            if let Some(var) = self.rec.symbol(v) {
                symbols.insert(var.clone());
            }
            let kind = &self.func.inst(v).kind;
            if matches!(kind, InstKind::Load { .. } | InstKind::Phi(_)) {
                for e in self.rec.of(v) {
                    symbols.extend(e.vars());
                }
            }
            work.extend(kind.operands());
        }
        symbols
    }

    /// The order of the function's instructions and writes, made once per function.
    fn order(&self) -> &crate::reductions::Order {
        self.order
            .get_or_init(|| crate::reductions::Order::new(&self.unit.lowered.program, self.func))
    }

    /// The index variables (primary induction variables) of every loop of the function,
    /// made once per function: a function with a thousand loops has a thousand of them.
    fn primary_ivs(&self) -> &HashSet<Value> {
        self.primary_ivs.get_or_init(|| {
            self.forest
                .loops
                .iter()
                .filter_map(|l| l.primary_iv().map(|iv| iv.phi))
                .collect()
        })
    }

    /// The symbols that can vary, by the block of the value defining each. The index of a
    /// loop of the nest is renamed by the dependence test, but a second counter (`tmp++`
    /// next to `i += 4`) just varies: induction variables are kept, and the caller leaves
    /// out the loops' indices.
    fn symbols_by_block(&self) -> HashMap<frontend::ir::Block, Vec<(Var, Value)>> {
        let mut out: HashMap<frontend::ir::Block, Vec<(Var, Value)>> = HashMap::new();
        for symbol in self.rec.symbols.iter() {
            let defining = match &symbol.origin {
                SymbolOrigin::Load { load, .. } => *load,
                SymbolOrigin::Phi(v) | SymbolOrigin::Opaque(v) | SymbolOrigin::Induction(v) => *v,
                _ => continue,
            };
            out.entry(self.func.inst(defining).block)
                .or_default()
                .push((symbol.var.clone(), defining));
        }
        out
    }

    /// The function's integer divisions by a value that is not a constant (`ij / n`), by
    /// the symbol the reconstruction gave each: what the dependence test needs to see a
    /// loop linearized by hand as the nest it stands for. Made once per function.
    fn quotients(&self) -> &crate::dependence::Quotients {
        self.quotients.get_or_init(|| self.find_quotients())
    }

    fn find_quotients(&self) -> crate::dependence::Quotients {
        let types = &self.unit.lowered.program.types;
        let mut out = crate::dependence::Quotients::new();
        for symbol in self.rec.symbols.iter() {
            let SymbolOrigin::Opaque(v) = symbol.origin else {
                continue;
            };
            let inst = self.func.inst(v);
            let InstKind::Binary(frontend::ir::BinOp::Div, a, b) = inst.kind else {
                continue;
            };
            if !types.is_integer(inst.ty) {
                continue;
            }
            if let (Some(dividend), Some(divisor)) = (self.rec.single(a), self.rec.single(b)) {
                out.insert(
                    symbol.var.clone(),
                    crate::dependence::Quotient {
                        dividend: dividend.clone(),
                        divisor: divisor.clone(),
                    },
                );
            }
        }
        out
    }

    /// Loop-invariant analysis (thesis §8.6) for loop `id`. Distinct pointer parameters are
    /// assumed not to overlap for this purpose (the thesis' assumption), and the report
    /// says so when it mattered.
    fn invariants(&self, id: LoopId) -> std::rc::Rc<Invariants> {
        memoized(&self.invariants, id, || {
            loop_invariants_in(
                &self.invariance,
                &self.unit.lowered.program,
                self.func,
                self.forest,
                id,
                self.rec,
                AliasPolicy::DistinctParameters,
            )
        })
    }

    /// The iteration space of loop `id`, with the signs known at its header.
    fn space(&self, id: LoopId, with_context: bool) -> Result<Space, crate::space::NotAffine> {
        let header = self.forest.loop_(id).header;
        let known = self
            .signs
            .env_for_symbols(header, self.nest_symbols(id).iter());
        crate::space::iteration_space_with_signs(
            self.func,
            self.forest,
            id,
            self.rec,
            &known,
            with_context,
        )
    }

    /// The friendliness test (§4.1) of loop `id` as the parallel one, phase by phase: the
    /// memory its iterations share, whether it is normalizable, the scalars and memory it
    /// carries, the pointers that may alias, and what its globals and calls allow.
    fn loop_facts(&self, id: LoopId) -> LoopFacts {
        let l = self.forest.loop_(id);
        let mut facts = LoopFacts {
            verdict: Verdict::Friendly,
            reasons: Vec::new(),
            reductions: Vec::new(),
            conditional_reductions: 0,
            needs_evidence: Vec::new(),
            assumptions: Vec::new(),
            privacy: Default::default(),
            error_paths: Vec::new(),
            error_blocks: BTreeSet::new(),
        };
        let keyword_line = l
            .source
            .map(|s| self.line(self.func.source_loop(s).keyword_span))
            .unwrap_or(0);
        let (mut privacy, accesses, effects) = self.shared_accesses(id, &mut facts);
        let invariants = self.invariants(id);
        self.invariance_assumptions(&invariants, &mut facts);
        self.type_rule_assumption(id, &mut facts);
        self.normalizable(
            id,
            &invariants,
            &accesses,
            &effects,
            keyword_line,
            &mut facts,
        );
        self.carried_scalars(id, &invariants, &mut privacy, &mut facts);
        let dependence_context =
            self.carried_memory(id, keyword_line, &accesses, &effects, &mut facts);
        self.aliasing_pairs(
            id,
            &accesses,
            dependence_context.as_ref(),
            &effects,
            &mut facts,
        );
        self.globals_and_callees(&accesses, &effects, &mut facts);
        self.call_findings(id, &accesses, &privacy, &effects, &mut facts);
        facts.assumptions.sort();
        facts.assumptions.dedup();
        facts.privacy = privacy;
        facts
    }

    /// The memory accesses of loop `id` that its iterations share, its own and its
    /// callees', with the privacy of its storage and its calls' effects. What they assume
    /// joins `facts`.
    fn shared_accesses(
        &self,
        id: LoopId,
        facts: &mut LoopFacts,
    ) -> (
        crate::privatize::Privacy,
        Vec<MemAccess>,
        std::rc::Rc<crate::callsites::LoopEffects>,
    ) {
        let program = &self.unit.lowered.program;
        let accesses = collect_accesses(self.func, self.forest, id, self.rec, &program.types);
        // Private storage takes no part in the tests below.
        let privacy = self.privacy(id, &accesses);
        let mut accesses = privacy.shared(accesses);
        facts
            .assumptions
            .extend(privacy.assumptions.iter().cloned());
        // What the loop's calls do to memory, in the same representation.
        let effects = self.call_effects(id);
        accesses.extend(privacy.shared(effects.accesses.clone()));
        facts
            .assumptions
            .extend(effects.assumptions.iter().cloned());
        (privacy, accesses, effects)
    }

    /// The variables held in memory that the loop reads as one value only because C's
    /// effective-type rule keeps a store through a pointer from changing them (analyses'
    /// `Reconstruction::loads_by_type_rule`): the report says so.
    fn type_rule_assumption(&self, id: LoopId, facts: &mut LoopFacts) {
        let mut names = BTreeSet::new();
        for block in &self.forest.loop_(id).blocks {
            for v in &self.func.block(*block).insts {
                if !self.rec.loads_by_type_rule.contains(v) {
                    continue;
                }
                let InstKind::Load { addr } = self.func.inst(*v).kind else {
                    continue;
                };
                let name = match self.func.inst(addr).kind {
                    InstKind::SlotAddr(s) => &self.func.slot(s).name,
                    InstKind::GlobalAddr(g) => &self.unit.lowered.program.global(g).name,
                    _ => continue,
                };
                names.insert(format!("`{name}`"));
            }
        }
        if !names.is_empty() {
            let names: Vec<String> = names.into_iter().collect();
            facts.assumptions.push(
                format!(
                    "the program follows C's effective-type rule (C99 6.5p7): no store through a pointer, of another type, changes {}, so the loop reads one value of each",
                    names.join(", ")
                )
                .into(),
            );
        }
    }

    /// What the loop's invariance assumes: pointers that do not overlap, and new memory
    /// that nothing else reaches.
    fn invariance_assumptions(&self, invariants: &Invariants, facts: &mut LoopFacts) {
        if let Some(assumption) = invariants.assumption() {
            // The call sites may already prove the parameters disjoint; then nothing is assumed.
            let index = |name: &String| {
                self.func
                    .params
                    .iter()
                    .position(|p| p.name.as_ref() == Some(name))
            };
            let named: Vec<Option<usize>> = invariants.assumed_distinct.iter().map(index).collect();
            let proven = named.iter().all(Option::is_some)
                && named.iter().enumerate().all(|(k, a)| {
                    named[k + 1..]
                        .iter()
                        .all(|b| self.aliasing.disjoint(a.unwrap_or(0), b.unwrap_or(0)))
                });
            if !proven {
                facts.assumptions.push(assumption.into());
            }
        }
        facts.assumptions.extend(
            invariants
                .fresh_caveats
                .iter()
                .map(|c| Assumption::plain(c.clone())),
        );
    }

    /// Normalizable (§4.1): a bound that reads memory must read the same in every
    /// iteration.
    fn normalizable(
        &self,
        id: LoopId,
        invariants: &Invariants,
        accesses: &[MemAccess],
        effects: &crate::callsites::LoopEffects,
        keyword_line: u32,
        facts: &mut LoopFacts,
    ) {
        match &self.forest.loop_(id).normalizable {
            Normalizable::Yes => {}
            Normalizable::IfInvariant { reads } => {
                self.bound_reads_unchanged(
                    id,
                    reads,
                    invariants,
                    accesses,
                    effects,
                    keyword_line,
                    facts,
                );
            }
            Normalizable::No { reason } => {
                facts.add(rules::ww107_not_normalizable::shape(
                    reason.clone(),
                    keyword_line,
                ));
            }
        }
    }

    /// Scalars carried from one iteration to the next: reductions or dependences. A header
    /// phi found private here joins `privacy`.
    fn carried_scalars(
        &self,
        id: LoopId,
        invariants: &Invariants,
        privacy: &mut crate::privatize::Privacy,
        facts: &mut LoopFacts,
    ) {
        let l = self.forest.loop_(id);
        let program = &self.unit.lowered.program;
        let scalars = crate::reductions::scalar_reductions(
            program,
            self.func,
            self.forest,
            id,
            &self.users,
            self.order(),
        );
        for r in &scalars.reductions {
            let described = crate::reductions::describe_scalar(self.func, &program.types, r);
            facts.note_reduction(described.note(&|s| self.line(s)));
        }
        for &v in &scalars.carried {
            let InstKind::Phi(args) = &self.func.inst(v).kind else {
                continue;
            };
            if privacy.phis.contains(&v) {
                continue;
            }
            if let Some(entry) = self.unswitched_private(id, v, invariants) {
                privacy.phis.insert(v);
                privacy.entries.push(entry);
                continue;
            }
            let name = self.value_name(v);
            let update_lines: Vec<u32> = args
                .iter()
                .filter(|(b, _)| l.contains(*b))
                .map(|(_, u)| self.line(self.func.inst(*u).origin.span))
                .collect();
            let back: Vec<Value> = args
                .iter()
                .filter(|(b, _)| l.contains(*b))
                .map(|(_, a)| *a)
                .collect();
            self.scalar_dependence(id, v, &back, &name, update_lines, facts);
        }
    }

    /// Memory dependences carried by loop `id`, tested in its iteration space. Returns the
    /// space and the variant symbols, for the aliasing pairs; none when the loop has no
    /// affine space (WW111 unless it is not normalizable, which says so already).
    fn carried_memory(
        &self,
        id: LoopId,
        keyword_line: u32,
        accesses: &[MemAccess],
        effects: &crate::callsites::LoopEffects,
        facts: &mut LoopFacts,
    ) -> Option<(Space, HashSet<Var>)> {
        match self.space(id, true) {
            Ok(space) => {
                facts.assumptions.extend(space.assumptions.iter().cloned());
                let space = effects.extend_space(self.bounded_by_array_extents(space, accesses));
                let mut variant = (*self.variant_symbols(id)).clone();
                variant.extend(effects.variant.iter().cloned());
                let pinned = self.pin_symbols(id, accesses, &variant);
                self.memory_dependences(id, &pinned, &effects.updates, &space, &variant, facts);
                Some((space, variant))
            }
            Err(why) => {
                if !matches!(self.forest.loop_(id).normalizable, Normalizable::No { .. }) {
                    facts.add(rules::ww111_undecided_dependence::incomparable(
                        &why.0,
                        keyword_line,
                    ));
                }
                None
            }
        }
    }

    /// Globals a GPU cannot hold, its own or its callees', allocations in callees, and
    /// recursion; other globals are memory objects like any array, which the tests above
    /// decide.
    fn globals_and_callees(
        &self,
        accesses: &[MemAccess],
        effects: &crate::callsites::LoopEffects,
        facts: &mut LoopFacts,
    ) {
        let program = &self.unit.lowered.program;
        for access in accesses.iter().filter(|a| a.callee.is_none()) {
            if let Some((why, span)) =
                crate::globals::unsupported(program, self.func, self.rec, access)
            {
                facts.add(rules::ww104_global::unsupported(why, self.line(span)));
            }
        }

        for (call, callee, allocators) in &effects.allocating {
            let names: Vec<String> = allocators.iter().map(|a| format!("`{a}`")).collect();
            facts.add(rules::ww120_allocation::in_callee(
                callee,
                &names,
                self.line(self.func.inst(*call).origin.span),
            ));
        }
        // Device code may recurse (CUDA since sm_20, OpenMP target regions), but each
        // thread's stack is small by default: the port must size it.
        for f in &effects.recursive {
            facts.assumptions.push(format!(
                "`{f}` is recursive: each GPU thread needs stack for its deepest recursion (CUDA: raise `cudaLimitStackSize` with `cudaDeviceSetLimit`; OpenMP: `OMP_STACKSIZE` / `LIBOMPTARGET_STACK_SIZE`)"
            ).into());
        }
        // A callee's other globals are memory like the loop's own: the tests above decide.
        let mut seen_globals = BTreeSet::new();
        for (call, why) in &effects.unsupported_globals {
            if seen_globals.insert(why) {
                facts.add(rules::ww104_global::in_callee(
                    why.clone(),
                    self.line(self.func.inst(*call).origin.span),
                ));
            }
        }
    }

    /// Calls. Host-only ones on an error branch a port handles are no obstacle.
    fn call_findings(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        privacy: &crate::privatize::Privacy,
        effects: &crate::callsites::LoopEffects,
        facts: &mut LoopFacts,
    ) {
        let (excused, inexact) = self.error_paths(id, accesses, facts);
        for &block in &self.forest.loop_(id).blocks {
            for &v in &self.func.block(block).insts {
                let InstKind::Call { callee, .. } = &self.func.inst(v).kind else {
                    continue;
                };
                let line = self.line(self.func.inst(v).origin.span);
                match callee {
                    Callee::Indirect(_) => {
                        facts.add(rules::ww106_function_pointer::call(line));
                    }
                    Callee::Direct(name) => {
                        if name.starts_with("__builtin_")
                            || name == "memset" && self.func.inst(v).origin.span.is_none()
                            || privacy.calls.contains(&v)
                        {
                            continue;
                        }
                        let view = self.summaries.view();
                        let host_only =
                            crate::calls::host_only_reason_in(view, self.unit_index, name)
                                .filter(|_| !excused.contains(&v));
                        if let Some(why) = host_only {
                            match inexact.get(&v) {
                                Some(detail) => facts
                                    .add(rules::ww105_host_call::on_error_path(why, detail, line)),
                                None => facts.add(rules::ww105_host_call::call(why, line)),
                            }
                        } else if let Some(why) = effects
                            .unknown_reason(v)
                            .filter(|_| !privacy.contained_calls.contains(&v))
                        {
                            facts.add(rules::ww112_callee_effects::call(why, line));
                        } else if matches!(
                            classify_in(view, self.unit_index, name),
                            CallKind::Allocator
                        ) {
                            facts.add(rules::ww120_allocation::call(name, line));
                        }
                    }
                }
            }
        }
    }

    /// The error branches of loop `id` (`crate::error_paths`) whose host-only calls a port
    /// leaves to the host: their report entries, notes and assumptions join `facts`.
    /// Returns those calls, and for each host-only call on an error branch that a port
    /// could not run again exactly, why.
    fn error_paths(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        facts: &mut LoopFacts,
    ) -> (HashSet<Value>, HashMap<Value, String>) {
        let l = self.forest.loop_(id);
        let view = self.summaries.view();
        let mut excused = HashSet::new();
        let mut inexact = HashMap::new();
        let callee = |v: Value| crate::noreturn::direct_callee(self.func, v);
        let induction: HashSet<Value> = l.induction_variables.iter().map(|iv| iv.phi).collect();
        for branch in crate::error_paths::find(view, self.unit_index, self.func, l) {
            let host: Vec<Value> = branch
                .calls
                .iter()
                .copied()
                .filter(|v| {
                    callee(*v).is_some_and(|n| {
                        !n.starts_with("__builtin_")
                            && crate::calls::host_only_reason_in(view, self.unit_index, n).is_some()
                    })
                })
                .collect();
            let Some((end_call, ending, _)) = branch.endings.first() else {
                continue;
            };
            if host.is_empty() {
                continue;
            }
            let why = if let Some(v) =
                crate::error_paths::carried_read(self.func, l, &branch, &induction)
            {
                let name = self.value_name(v);
                Some(format!(
                    "the error path reads `{name}`, which each iteration carries to the next: after the kernel it holds another value than in the failing iteration"
                ))
            } else {
                let apart = |a: &MemAccess, b: &MemAccess| match (a.base(), b.base()) {
                    (Some(x), Some(y)) => x != y && !self.may_alias(x, y),
                    _ => false,
                };
                crate::error_paths::rerun_conflict(self.func, l, &branch, accesses, &apart).map(
                    |(load, store)| {
                        let (r, w) = (self.access_text(load), self.access_text(store));
                        format!(
                            "the iteration reads `{}` (line {}) before it writes `{}` (line {}), which a kernel has done by the time the error branch is taken",
                            r.text, r.line, w.text, w.line
                        )
                    },
                )
            };
            if let Some(why) = why {
                for v in host {
                    inexact.insert(v, why.clone());
                }
                continue;
            }
            let r = &self.func.ifs[branch.if_index];
            let at = self.unit.resolve(r.span);
            let condition_line = at.as_ref().map_or(0, |a| a.line);
            let line = self.line(self.func.inst(*end_call).origin.span);
            let mut names: Vec<String> = Vec::new();
            for v in &host {
                if let Some(n) = callee(*v) {
                    if !names.iter().any(|m| m == n) {
                        names.push(n.to_string());
                    }
                }
            }
            let also: Vec<String> = names
                .iter()
                .filter(|n| *n != ending)
                .map(|n| format!("`{n}`"))
                .collect();
            let end = branch.ends();
            facts.add(rules::ww108_error_path::note(
                ending,
                end,
                line,
                condition_line,
                &also,
            ));
            facts
                .assumptions
                .push(rules::ww108_error_path::assumption(ending, end, line).into());
            facts.error_paths.push(crate::model::ErrorPath {
                line,
                ends_with: ending.to_string(),
                ends: end,
                condition_line,
                condition_col: at.as_ref().map_or(0, |a| a.col),
                branch: branch.branch,
                calls: names,
            });
            facts.error_blocks.extend(branch.blocks.iter().copied());
            excused.extend(host);
        }
        (excused, inexact)
    }

    /// Which storage of loop `id` each iteration may have its own copy of.
    fn privacy(&self, id: LoopId, accesses: &[MemAccess]) -> crate::privatize::Privacy {
        let scope = crate::privatize::Scope {
            program: &self.unit.lowered.program,
            summaries: self.summaries,
            unit: self.unit_index,
            func: self.func,
            forest: self.forest,
            rec: self.rec,
            users: &self.users,
            order: self.order(),
            object_addresses: self.object_addresses.get_or_init(|| {
                self.func
                    .values()
                    .filter(|v| {
                        matches!(
                            self.func.inst(*v).kind,
                            InstKind::SlotAddr(_) | InstKind::GlobalAddr(_)
                        ) && self.rec.symbol(*v).is_some()
                    })
                    .collect()
            }),
        };
        let space = self.space(id, true).ok();
        let variant = self.variant_symbols(id);
        crate::privatize::classify(&scope, id, accesses, space.as_ref(), &variant)
    }

    /// The side effects of the loop's calls, instantiated from the callees' summaries once
    /// per loop (the friendliness test and the parameters both ask).
    fn call_effects(&self, id: LoopId) -> std::rc::Rc<crate::callsites::LoopEffects> {
        memoized(&self.call_effects, id, || {
            crate::callsites::loop_effects(&crate::callsites::LoopSite {
                summaries: self.summaries,
                unit: self.unit_index,
                func: self.func,
                forest: self.forest,
                loop_id: id,
                rec: self.rec,
                variant: &self.variant_symbols(id),
                private_allocations: &self.private_allocations,
            })
        })
    }

    /// C99 6.5.6: indexing a row of a fixed-size array (`A[i][j]` with `double A[N][1100]`)
    /// is only defined for `0 <= j < 1100`, so an induction variable used directly as such an
    /// index is bounded by the extent too. Dependence tests may rely on it (compilers do);
    /// sections do not need it.
    fn bounded_by_array_extents(&self, mut space: Space, accesses: &[MemAccess]) -> Space {
        let types = &self.unit.lowered.program.types;
        for access in accesses {
            let mut addr = access.addr;
            for _ in 0..8 {
                let InstKind::PtrAdd { base, index, .. } = self.func.inst(addr).kind else {
                    break;
                };
                let row_type = self.func.inst(base).ty;
                let extent = types.pointee(row_type).and_then(|p| match types.get(p) {
                    frontend::types::Type::Array {
                        len: frontend::types::ArrayLen::Fixed(n),
                        ..
                    } => Some(*n),
                    _ => None,
                });
                if let (Some(n), true) = (
                    extent,
                    matches!(self.func.inst(base).kind, InstKind::PtrAdd { .. }),
                ) {
                    if let [e] = self.rec.of(index) {
                        if let Some(var) = e.as_poly().and_then(|p| p.as_var()) {
                            if let Some(r) = space.ivs.iter_mut().find(|r| &r.var == var) {
                                // Only an access every iteration runs keeps every
                                // iteration in bounds (`if (i < 5) a[0][i]` does not).
                                let extent_hi = symbolic::Expr::integer((n as i64 - 1).into());
                                if access.conditional {
                                    // Nothing is known of the iterations that skip it.
                                } else if let Ok(hi) =
                                    symbolic::get_min(&r.hi, &extent_hi, &space.env)
                                {
                                    r.hi = hi;
                                }
                                // At most `extent - init` iterations, which bounds the
                                // distance between two iterations too.
                                if r.step == 1 && !access.conditional {
                                    let extent = symbolic::Expr::integer((n as i64).into());
                                    if let Ok(most) = extent.checked_sub(&r.init) {
                                        if let Ok(t) =
                                            symbolic::get_min(&r.trips, &most, &space.env)
                                        {
                                            r.trips = t;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                addr = base;
            }
        }
        space
    }

    /// Header phi `v` of loop `id` as a private variable when the tests it is assigned under
    /// are loop-invariant and, with their outcomes fixed, it carries nothing (see
    /// [`crate::unswitch`]).
    fn unswitched_private(
        &self,
        id: LoopId,
        v: Value,
        invariants: &Invariants,
    ) -> Option<crate::model::Private> {
        let name = self.func.inst(v).origin.var_name.clone()?;
        let order = self.order();
        let branch_users = |x: Value| order.branch_users(x);
        let invariant = |x: Value| invariants.is_invariant(x);
        let scope = crate::unswitch::Scope {
            func: self.func,
            loop_: self.forest.loop_(id),
            users: &self.users,
            branch_users: &branch_users,
            invariant: &invariant,
        };
        let found = crate::unswitch::fixed_tests(&scope, v)?;
        let lines: Vec<String> = found
            .tests
            .iter()
            .map(|b| self.line(self.func.block(*b).terminator_span).to_string())
            .collect();
        let last_value = crate::unswitch::read_after_loop(&scope, v);
        let outcome = if found.reads_entry {
            "either every iteration assigns it before using it, or none assigns it and each reads its value from before the loop"
        } else {
            "every iteration assigns it before using it"
        };
        let tests_text = match lines.as_slice() {
            [] if found.reads_entry => "no iteration changes it".to_string(),
            [] => "nothing in the loop reads the value an iteration leaves".to_string(),
            [one] => format!(
                "it is assigned only under the test at line {one}, whose outcome is the same in every iteration: {outcome}"
            ),
            more => format!(
                "it is assigned only under the tests at lines {}, whose outcomes are the same in every iteration: for each outcome, {outcome}",
                more.join(", ")
            ),
        };
        Some(crate::model::Private {
            name,
            kind: crate::privatize::kind_of(&self.unit.lowered.program.types, self.func.inst(v).ty),
            why: if last_value {
                format!("{tests_text}; its value after the loop is the last iteration's")
            } else {
                tests_text
            },
            last_value,
            initial_value: found.reads_entry,
            storage: None,
        })
    }

    /// `None` for a loop whose keyword the source map cannot place: no id names it, so no
    /// `--loop`, profile or port could refer to its report.
    fn report(&self, id: LoopId, all: &BTreeMap<LoopId, LoopFacts>) -> Option<LoopReport> {
        let l = self.forest.loop_(id);
        let source = l.source.map(|s| self.func.source_loop(s));
        let loop_id = self.unit.loop_ref(source?)?;
        let line = source.map(|s| self.line(s.keyword_span)).unwrap_or(0);
        let facts = &all[&id];
        let induction = iv_range(
            self.func,
            self.forest,
            id,
            self.rec,
            &symbolic::SignEnv::new(),
        )
        .ok()
        .map(|r| Induction {
            var: r.var.name().to_string(),
            lower: Quantity::of(&r.init),
            upper: Quantity::of(&r.bound),
            step: Quantity::of(&symbolic::Expr::integer(r.step.into())),
            trip_count: Quantity::of(&r.trips),
            last_value: self.rec.symbols.value_of(&r.var).is_some_and(|phi| {
                l.induction_variables
                    .iter()
                    .find(|iv| iv.phi == phi)
                    .is_some_and(|iv| self.read_after_loop(l, iv))
            }),
        });
        // A 2D nest: the only child loop, immediately inside, friendly too.
        let mut nest = vec![loop_id.clone()];
        if facts.verdict == Verdict::Friendly {
            if let [child] = l.children.as_slice() {
                // An inner loop filling this loop's private storage cannot get threads
                // of its own: the statements after it read what all its iterations wrote.
                // A loop with reductions is not a plain parallel dimension of the grid.
                let child_friendly = all
                    .get(child)
                    .is_some_and(|f| f.verdict == Verdict::Friendly && f.reductions.is_empty())
                    && !facts.privacy.shared_by(
                        self.func,
                        self.forest.loop_(*child),
                        all.get(child).map(|f| &f.privacy),
                    );
                // An inner loop's second counter runs on from the inner loop's previous
                // iteration (`distpos++`): its iterations are not threads of their own.
                if child_friendly
                    && is_immediate_child(self.func, self.forest, id, *child)
                    && self.counters(*child).is_empty()
                {
                    let child = self.forest.loop_(*child).source;
                    if let Some(child) =
                        child.and_then(|s| self.unit.loop_ref(self.func.source_loop(s)))
                    {
                        nest.push(child);
                    }
                }
            }
        }
        let mut assumptions = facts.assumptions.clone();
        let parameters = self.parameters(id, facts, &mut assumptions);
        assumptions.sort();
        assumptions.dedup();
        let mut report = LoopReport {
            id: loop_id,
            function: self.func.name.clone(),
            line,
            induction,
            verdict: facts.verdict,
            reasons: crate::findings::group(facts.reasons.clone()),
            nest,
            names: Vec::new(),
            value_types: Default::default(),
            parameters,
            calls: self.calls(id, &facts.privacy),
            error_paths: facts.error_paths.clone(),
            reductions: facts.reductions.clone(),
            private: facts.privacy.entries.clone(),
            counters: self.counters(id),
            needs_evidence: facts.needs_evidence.clone(),
            assumptions: Assumption::texts(&assumptions),
            pragmas: source.map(|s| s.pragmas.clone()).unwrap_or_default(),
            mappings: Vec::new(),
            recommended_mapping: None,
            mapping_gain: None,
            shared_memory: Vec::new(),
            occupancy: None,
            divergence: Vec::new(),
            observed: None,
        };
        if facts.verdict != Verdict::NotFriendly {
            // A loop with reductions is not a plain grid dimension: it needs a reduction
            // kernel. Memory updates under a condition may happen in one iteration only
            // (`if (y == t) B[x] -= ...`): such a loop stays a candidate, as when a profile
            // was to settle it.
            let parallel = |d: LoopId| {
                (d == id || self.counters(d).is_empty())
                    && all.get(&d).is_some_and(|f| {
                        f.verdict != Verdict::NotFriendly
                            && f.reductions.len() == f.conditional_reductions
                    })
                    && !facts.privacy.shared_by(
                        self.func,
                        self.forest.loop_(d),
                        all.get(&d).map(|f| &f.privacy),
                    )
            };
            let definitions = self
                .variable_definitions
                .get_or_init(|| crate::rebase::Definitions::of(self.func));
            let l = self.forest.loop_(id);
            let entry_offset = |base: &symbolic::Var| match crate::rebase::entry_offset(
                self.func,
                self.rec,
                definitions,
                l,
                base.name(),
                base,
            ) {
                EntryOffset::Moved(offset) => Some(offset),
                EntryOffset::Same | EntryOffset::Unknown(_) => None,
            };
            crate::performance::attach(
                self.unit,
                self.func,
                self.forest,
                self.rec,
                id,
                &parallel,
                &facts.privacy.accesses,
                self.target,
                &entry_offset,
                &mut report,
            );
        }
        self.names_at_loop(id, &mut report);
        self.present(id, &mut report);
        Some(report)
    }

    /// Rewrites the report's bounds and sections where they name a variable whose value at
    /// the loop's start is not the one meant (see [`crate::stale`]).
    fn names_at_loop(&self, id: LoopId, report: &mut LoopReport) {
        let definitions = self
            .variable_definitions
            .get_or_init(|| crate::rebase::Definitions::of(self.func));
        let symbols = self
            .stale_symbols
            .get_or_init(|| crate::stale::FunctionSymbols::of(self.func, self.rec, definitions));
        // Placed as the report's other qualified names are (a merge: the statement after it).
        let line = |v: Value| self.defining_place(v).map_or(0, |(line, _)| line);
        let mut texts: Vec<&str> = Vec::new();
        if let Some(induction) = &report.induction {
            texts.extend([
                induction.lower.text(),
                induction.upper.text(),
                induction.trip_count.text(),
            ]);
        }
        for bytes in report.parameters.iter().filter_map(|p| p.bytes.as_ref()) {
            texts.extend([bytes.lo.text(), bytes.hi.text(), bytes.size.text()]);
        }
        let at_loop = crate::stale::AtLoop::of(
            self.func,
            self.rec,
            definitions,
            symbols,
            self.forest.loop_(id),
            &line,
            &texts,
        );
        if at_loop.is_empty() {
            return;
        }
        if let Some(induction) = &mut report.induction {
            for q in [
                &mut induction.lower,
                &mut induction.upper,
                &mut induction.trip_count,
            ] {
                *q = at_loop.quantity(q);
            }
        }
        for p in &mut report.parameters {
            if let Some(bytes) = &mut p.bytes {
                for q in [&mut bytes.lo, &mut bytes.hi, &mut bytes.size] {
                    *q = at_loop.quantity(q);
                }
            }
        }
    }

    /// The loop's second counters that the reconstruction expressed through its index
    /// (integer, with a step that is a multiple of the index's): what a port must compute
    /// per iteration. Named from the source; a counter with no name is left out.
    fn counters(&self, id: LoopId) -> Vec<crate::model::Counter> {
        let l = self.forest.loop_(id);
        analyses::reconstruct::expressed_counters(&self.unit.lowered.program, self.func, l)
            .into_iter()
            .filter_map(|iv| {
                let name = iv.name.clone()?;
                let step = i64::try_from(self.counter_step(iv)?).ok()?;
                Some(crate::model::Counter {
                    name,
                    step,
                    last_value: self.read_after_loop(l, iv),
                })
            })
            .collect()
    }

    /// Whether some instruction or terminator outside loop `l` (a `return i;`) uses the
    /// induction variable `iv` (its value in an iteration or after its update): the program
    /// reads it after the loop.
    fn read_after_loop(
        &self,
        l: &frontend::loops::Loop,
        iv: &frontend::loops::InductionVariable,
    ) -> bool {
        let users = self.user_blocks.get_or_init(|| {
            let mut users: HashMap<Value, Vec<frontend::ir::Block>> = HashMap::new();
            for v in self.func.values() {
                let inst = self.func.inst(v);
                for o in inst.kind.operands() {
                    users.entry(o).or_default().push(inst.block);
                }
            }
            for b in self.func.blocks() {
                match &self.func.block(b).terminator {
                    frontend::ir::Terminator::Return(Some(v))
                    | frontend::ir::Terminator::Branch { cond: v, .. } => {
                        users.entry(*v).or_default().push(b)
                    }
                    _ => {}
                }
            }
            users
        });
        [iv.phi, iv.update].iter().any(|v| {
            users
                .get(v)
                .is_some_and(|blocks| blocks.iter().any(|b| !l.contains(*b)))
        })
    }

    /// A counter's step as the source writes it: in elements for a pointer (`p++` advances
    /// the IR's value by the pointee's size), none when the pointee has no size or the byte
    /// step is not a whole number of elements.
    fn counter_step(&self, iv: &frontend::loops::InductionVariable) -> Option<i128> {
        let types = &self.unit.lowered.program.types;
        let ty = self.func.inst(iv.phi).ty;
        if !types.is_pointer(ty) {
            return Some(iv.step);
        }
        let size = i128::from(types.size_of(types.pointee(ty)?)?);
        (size > 0 && iv.step % size == 0).then(|| iv.step / size)
    }

    fn calls(&self, id: LoopId, privacy: &crate::privatize::Privacy) -> Vec<Call> {
        let mut names = BTreeMap::new();
        for &block in &self.forest.loop_(id).blocks {
            for &v in &self.func.block(block).insts {
                let inst = self.func.inst(v);
                match &inst.kind {
                    InstKind::Call {
                        callee: Callee::Direct(name),
                        ..
                    } => {
                        // Zero-fill and copies synthesized for initializers are not calls the user wrote.
                        if name.starts_with("__builtin_") || privacy.calls.contains(&v) {
                            continue;
                        }
                        let kind = classify_in(self.summaries.view(), self.unit_index, name);
                        let (device, callees) = match kind {
                            CallKind::Builtin => (Device::Builtin, Vec::new()),
                            CallKind::Allocator => (Device::Allocator, Vec::new()),
                            CallKind::Port { callees } => (Device::Port, callees),
                            CallKind::HostOnly => (Device::HostOnly, Vec::new()),
                            CallKind::Indirect => (Device::Unknown, Vec::new()),
                        };
                        names.insert(
                            name.clone(),
                            Call {
                                name: name.clone(),
                                device,
                                callees,
                                effects: crate::callsites::describe_callee(
                                    self.summaries,
                                    self.unit_index,
                                    name,
                                ),
                            },
                        );
                    }
                    InstKind::Call { .. } => {
                        names.insert(
                            "(function pointer)".into(),
                            Call {
                                name: "(function pointer)".into(),
                                device: Device::Unknown,
                                callees: Vec::new(),
                                effects: Vec::new(),
                            },
                        );
                    }
                    _ => {}
                }
            }
        }
        names.into_values().collect()
    }

    /// The whole object behind the base `var` (named `name`) of loop `l`, for a gather no
    /// subscript bounds: the one the variable points to the start of where the loop
    /// begins, or the one a callee reaches through a pointer member of a struct the loop
    /// does not write (`data.concs`). `None` when neither may be asked.
    fn whole_object(
        &self,
        l: &frontend::loops::Loop,
        effects: &crate::callsites::LoopEffects,
        bases: &BTreeMap<String, (Var, bool, bool, u64)>,
        definitions: &crate::rebase::Definitions,
        name: &str,
        var: &Var,
    ) -> Option<Result<crate::model::WholeObject, String>> {
        let view = self.summaries.view();
        if let Some(member) = effects.members.get(var) {
            let written = bases.get(member.holder.name()).is_some_and(|b| b.2);
            return (!written).then(|| {
                crate::whole::of_member(
                    view,
                    self.unit_index,
                    member.record.clone(),
                    &member.field,
                    name,
                )
            });
        }
        matches!(
            crate::rebase::entry_offset(self.func, self.rec, definitions, l, name, var),
            EntryOffset::Same
        )
        .then(|| {
            let origin = self.rec.symbols.info(var).map(|s| &s.origin);
            crate::whole::at_loop(view, self.unit_index, self.func, origin, name)
        })
    }

    /// Inbound and outbound parameters with their sections (§4.2).
    fn parameters(
        &self,
        id: LoopId,
        facts: &LoopFacts,
        assumptions: &mut Vec<Assumption>,
    ) -> Vec<Parameter> {
        let memory = self.loop_memory(id, facts, assumptions);
        let (bases, unbased) = parameters::by_base(&memory.accesses);
        let out = self.based_parameters(id, &memory, &bases, assumptions);
        let mut out = self.without_attached_pointers(&bases, out);
        parameters::merge_unbased(&mut out, self.unbased_uses(&unbased));
        // Every memory parameter's name, before `ordered` marks the advanced pointers.
        let array_names: HashSet<String> = out.iter().map(|p| p.name.clone()).collect();
        let scalars = self.scalar_parameters(id, facts, &array_names);
        parameters::ordered(out, scalars)
    }

    /// The named pointer an address subscripts or dereferences (`index` in `index[2*i]`,
    /// `p` in `p->x`), when the source names one.
    fn subscripted_pointer(&self, addr: Value) -> Option<String> {
        crate::access::address_chain(self.func, addr).find_map(|v| {
            let name = self.func.inst(v).origin.var_name.as_ref()?;
            (!name.starts_with('&')).then(|| name.clone())
        })
    }

    fn scalar_inbound(
        &self,
        id: LoopId,
        op: Value,
        arrays: &HashSet<String>,
        scalars: &mut parameters::Scalars,
    ) {
        let l = self.forest.loop_(id);
        let inst = self.func.inst(op);
        if l.contains(inst.block) {
            return;
        }
        let types = &self.unit.lowered.program.types;
        let name = match &inst.kind {
            InstKind::Param(i) => self.func.params[*i as usize].name.clone(),
            InstKind::Const(_)
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => None,
            _ => inst.origin.var_name.clone().filter(|n| !n.starts_with('&')),
        };
        let Some(name) = name else { return };
        if arrays.contains(&name) || !types.is_scalar(inst.ty) {
            return;
        }
        // The value may be an array's base under its symbol's name (`p#2`, one of two
        // values of `p` in the function): that array is the pointer, a second parameter
        // would be a copy of it. A local another name's array is copied into (`xd =
        // NV_DATA(x)`, the array `x->content->data`) stays: the loop's text names it, and
        // a kernel takes it as that array.
        // Symbols look through casts (`(double *) malloc(...)`): so does the match.
        // Else the local holds that array's pointer: a port has the array in its place.
        let mut value = op;
        let mut holds = None;
        loop {
            if let Some(var) = self.rec.symbols.var_of(value) {
                if arrays.contains(var.name()) {
                    if var.name().split('#').next() == Some(name.as_str()) {
                        return;
                    }
                    holds.get_or_insert_with(|| var.name().to_string());
                }
            }
            match self.func.inst(value).kind {
                InstKind::Cast(inner) => value = inner,
                _ => break,
            }
        }
        // Pointers used only as bases are listed as arrays; a pointer whose fields are read
        // (a struct parameter) is listed there too.
        if types.is_pointer(inst.ty)
            && arrays
                .iter()
                .any(|a| a.starts_with(&format!("{name}->")) || a == &name)
        {
            return;
        }
        // A pointer assigned an array's address (`tw = st->twiddles`, the member
        // `kiss_fft_cpx twiddles[1]`) has as its value's type the pointer to the whole
        // array, `kiss_fft_cpx (*)[1]`; the variable is declared a pointer to its element,
        // `kiss_fft_cpx *`, and that is its type. Other values keep their own type, also
        // where the declaration differs only in qualifiers (the declarations' types leave
        // out a pointee's `const`, which values keep).
        let element = types.pointee(inst.ty).and_then(|p| match types.get(p) {
            frontend::types::Type::Array { elem, .. } => Some(*elem),
            _ => None,
        });
        let declared = l
            .source
            .filter(|_| element.is_some())
            .map(|s| self.func.source_loop(s).span)
            .and_then(|at| self.func.declaration_at(&name, at))
            .map(|d| d.ty)
            // The decayed value only: a pointer to the array's element.
            .filter(|&t| element.is_some() && types.pointee(t) == element);
        let ty = declared.unwrap_or(inst.ty);
        scalars.entry(name).or_insert(parameters::Scalar {
            role: Role::In,
            c_type: types.display(ty),
            holds: holds.filter(|_| types.is_pointer(ty)),
        });
    }
}

fn is_immediate_child(func: &Function, forest: &LoopForest, outer: LoopId, inner: LoopId) -> bool {
    let _ = func;
    forest.loop_(inner).parent == Some(outer)
}

/// Whether a source snippet is a whole expression: it names something and its parentheses
/// and brackets balance (a span inside a macro expansion can cover `(m,` or `)`).
fn reads_as_an_expression(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    let t = text.trim();
    depth == 0
        && t.chars().any(|c| c.is_ascii_alphanumeric() || c == '_')
        && !t.starts_with(',')
        && !t.ends_with(',')
}
