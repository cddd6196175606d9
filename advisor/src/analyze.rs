//! The advisor's driver: for every loop of every function, the GPU-friendliness test
//! (thesis §4.1), the kernel parameters with byte sections (§4.2), and the 2D nests.

// Whether a loop's bound is invariant: a step of the friendliness test, on its context.
mod bound;
// A loop's kernel parameters and their sections, phase by phase.
mod parameters;

use crate::access::{collect_accesses, MemAccess};
use crate::aliasing::ParamAliasing;
use crate::calls::{classify_in, CallKind};
use crate::dependence::{carried_dependences, Outcome};
use crate::model::{
    Access, Call, DependencePair, Device, Induction, LoopReport, PairKind, Parameter, Reason,
    Reduction, ReductionKind, Role, Verdict,
};
use crate::rebase::EntryOffset;
use crate::rules::{self, ww111_undecided_dependence as undecided, Finding};
use crate::space::{iv_range, Space};
use analyses::invariant::{loop_invariants_in, AliasPolicy, FunctionInvariance, Invariants};
use analyses::range::{range_analysis, RangeConfig, RangeFacts};
use analyses::reconstruct::{reconstruct, ReconstructConfig, Reconstruction};
use analyses::sign::{sign_analysis, SignFacts};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{Callee, Function, InstKind, Span, Value};
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
    let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
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
        stale_symbols: Default::default(),
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
        let report = context.report(id, &facts);
        if let Some(wanted) = &filter.loop_id {
            if !wanted.matches_id(&report.id) {
                continue;
            }
        }
        reports.push(report);
    }
    reports
}

/// What a base pointer is, for the aliasing questions: one of the function's symbols, or a
/// base only the loop's callees name.
#[derive(Clone, Debug, PartialEq)]
enum Base {
    Symbol(SymbolOrigin),
    /// A global variable only callees name.
    Global,
    /// Memory a callee reaches through a pointer it loads.
    Loaded,
}

/// A base pointer's name in a message: code in backquotes (`zd`, `x->data`), a description
/// as words (the memory a callee reaches through pointers it reads).
fn quoted(name: &str) -> String {
    if name.contains(' ') {
        name.to_string()
    } else {
        format!("`{name}`")
    }
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
    /// The symbols that may be stale at some loop (`stale`), found once per function.
    stale_symbols: std::cell::OnceCell<crate::stale::FunctionSymbols>,
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
    assumptions: Vec<String>,
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
        self.assumptions.extend(noted.assumptions);
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

    fn present(&self, report: &mut LoopReport) {
        let locate = |name: &str| {
            self.rec
                .symbols
                .value_of(&Var::new(name))
                .and_then(|v| self.defining_place(v))
        };
        let is_object = |name: &str| self.rec.symbols.is_object(&Var::new(name));
        crate::present::present(report, &locate, &is_object);
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
        let program = &self.unit.lowered.program;
        let keyword_line = l
            .source
            .map(|s| self.line(self.func.source_loop(s).keyword_span))
            .unwrap_or(0);
        let accesses = collect_accesses(self.func, self.forest, id, self.rec, &program.types);
        // Private storage takes no part in the tests below.
        let mut privacy = self.privacy(id, &accesses);
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

        let invariants = self.invariants(id);
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
                facts.assumptions.push(assumption);
            }
        }
        facts
            .assumptions
            .extend(invariants.fresh_caveats.iter().cloned());

        // Normalizable (§4.1).
        match &l.normalizable {
            Normalizable::Yes => {}
            Normalizable::IfInvariant { reads } => {
                self.bound_reads_unchanged(
                    id,
                    reads,
                    &invariants,
                    &accesses,
                    &effects,
                    keyword_line,
                    &mut facts,
                );
            }
            Normalizable::No { reason } => {
                facts.add(rules::ww107_not_normalizable::shape(
                    reason.clone(),
                    keyword_line,
                ));
            }
        }

        // Scalars carried from one iteration to the next: reductions or dependences.
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
            if let Some(entry) = self.unswitched_private(id, v, &invariants) {
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
            self.scalar_dependence(id, v, &back, &name, update_lines, &mut facts);
        }

        // Memory dependences carried by this loop.
        let mut dependence_context = None;
        match self.space(id, true) {
            Ok(space) => {
                facts.assumptions.extend(space.assumptions.iter().cloned());
                let space = effects.extend_space(self.bounded_by_array_extents(space, &accesses));
                let mut variant = (*self.variant_symbols(id)).clone();
                variant.extend(effects.variant.iter().cloned());
                let pinned = self.pin_symbols(id, &accesses, &variant);
                self.memory_dependences(
                    id,
                    &pinned,
                    &effects.updates,
                    &space,
                    &variant,
                    &mut facts,
                );
                dependence_context = Some((space, variant));
            }
            Err(why) => {
                if !matches!(l.normalizable, Normalizable::No { .. }) {
                    facts.add(rules::ww111_undecided_dependence::incomparable(
                        &why.0,
                        keyword_line,
                    ));
                }
            }
        }
        self.aliasing_pairs(
            id,
            &accesses,
            dependence_context.as_ref(),
            &effects,
            &mut facts,
        );

        // Globals a GPU cannot hold; other globals are memory objects like any array.
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
            ));
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

        // Calls. Host-only ones on an error branch a port handles are no obstacle.
        let (excused, inexact) = self.error_paths(id, &accesses, &mut facts);
        for &block in &l.blocks {
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
        facts.assumptions.sort();
        facts.assumptions.dedup();
        facts.privacy = privacy;
        facts
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
                .push(rules::ww108_error_path::assumption(ending, end, line));
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

    /// `accesses` with the symbols the program holds at one integer wherever loop `id`
    /// starts replaced by it: `dim` under `if (coupled && dim == 3)` (code_saturne's
    /// `b[ifac*dim*dim + 4]`), a local set to a constant before the loop. The range
    /// analysis gives the value at the loop's header; only symbols defined outside the
    /// loop and the same in all its iterations are pinned, so every iteration sees that
    /// value. The tests then compare `72*ifac + 32` with `72*ifac` rather than offsets
    /// whose difference `dim*dim*d` has no bound.
    fn pin_symbols<'x>(
        &self,
        id: LoopId,
        accesses: &'x [MemAccess],
        variant: &HashSet<Var>,
    ) -> std::borrow::Cow<'x, [MemAccess]> {
        let l = self.forest.loop_(id);
        let mut mentioned: HashSet<&Var> = HashSet::new();
        let mut vars = Vec::new();
        for a in accesses {
            for (_, e) in &a.alternatives {
                vars.clear();
                vars.extend(e.vars());
                for v in &vars {
                    if !mentioned.contains(v) {
                        if let Some(symbol) = self.rec.symbols.info(v) {
                            mentioned.insert(&symbol.var);
                        }
                    }
                }
            }
        }
        let mut pins: HashMap<Var, symbolic::Expr> = HashMap::new();
        for var in mentioned {
            if variant.contains(var) || self.rec.symbols.is_pointer(var) {
                continue;
            }
            let Some(value) = self.rec.symbols.value_of(var) else {
                continue;
            };
            if l.contains(self.func.inst(value).block) {
                continue;
            }
            if let Some(c) = self.ranges.integer_at(l.header, value) {
                pins.insert(var.clone(), symbolic::Expr::integer(c));
            }
        }
        if pins.is_empty() {
            return std::borrow::Cow::Borrowed(accesses);
        }
        let pinned = accesses
            .iter()
            .map(|a| {
                let mut a = a.clone();
                let extents = a.extents.iter_mut().map(|(e, _)| e);
                for e in a.alternatives.iter_mut().map(|(_, e)| e).chain(extents) {
                    if let Ok(p) = e.substitute(&pins) {
                        *e = p;
                    }
                }
                a
            })
            .collect();
        std::borrow::Cow::Owned(pinned)
    }

    /// The updates callees make of globals (`callsites::CallUpdate`), located among the
    /// loop's accesses: the call's one load and one store of the global, at one offset that
    /// is the same in every iteration. A call whose accesses of it are otherwise (merged
    /// past the callee-access limit, privatized) has none.
    fn call_updates(
        &self,
        calls: &[crate::callsites::CallUpdate],
        accesses: &[MemAccess],
    ) -> Vec<crate::reductions::Located> {
        let mut out = Vec::new();
        for c in calls {
            let mine: Vec<usize> = accesses
                .iter()
                .enumerate()
                .filter(|(_, a)| {
                    a.inst == c.call
                        && a.callee.is_some()
                        && a.alternatives
                            .iter()
                            .any(|(b, _)| b.as_ref() == Some(&c.base))
                })
                .map(|(k, _)| k)
                .collect();
            let fixed = |k: &usize| match accesses[*k].alternatives.as_slice() {
                [(Some(b), offset)] => b == &c.base && offset.as_integer().is_some(),
                _ => false,
            };
            let loads = mine.iter().filter(|k| !accesses[**k].is_store).count();
            let stores = mine.len() - loads;
            let same_offset = mine
                .windows(2)
                .all(|w| accesses[w[0]].alternatives == accesses[w[1]].alternatives);
            if loads != 1 || stores != 1 || !mine.iter().all(fixed) || !same_offset {
                continue;
            }
            let (load, store) = if accesses[mine[0]].is_store {
                (mine[1], mine[0])
            } else {
                (mine[0], mine[1])
            };
            out.push(crate::reductions::Located {
                update: crate::reductions::MemoryUpdate {
                    load: c.call,
                    twins: Vec::new(),
                    store: c.call,
                    op: c.op,
                    updates: vec![c.call],
                },
                accesses: vec![load, store],
                invariant: true,
            });
        }
        out
    }

    fn memory_dependences(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        calls: &[crate::callsites::CallUpdate],
        space: &Space,
        variant: &HashSet<Var>,
        facts: &mut LoopFacts,
    ) {
        let mut results = carried_dependences(
            accesses,
            space,
            id,
            variant,
            self.quotients(),
            &mut facts.assumptions,
            &self.budget,
        );
        results.retain(|r| {
            let promise = self.restrict_apart(id, &accesses[r.first], &accesses[r.second]);
            if let Some(promise) = &promise {
                if !facts.assumptions.contains(promise) {
                    facts.assumptions.push(promise.clone());
                }
            }
            promise.is_none()
        });
        // Read-modify-writes whose only carried dependence is on themselves are reductions.
        let program = &self.unit.lowered.program;
        let updates = crate::reductions::memory_updates(
            program,
            self.func,
            self.forest,
            id,
            &self.users,
            self.order(),
        );
        let located = self.call_updates(calls, accesses);
        let invariants = self.invariants(id);
        let settled = crate::reductions::settle(&updates, &located, accesses, &results, &|addr| {
            invariants.is_invariant(addr)
        });
        for m in &settled {
            let (load, store) = (&accesses[m.accesses[0]], &accesses[m.accesses[1]]);
            let through_call = calls.iter().find(|c| {
                c.call == store.inst && store.callee.is_some() && store.base() == Some(&c.base)
            });
            let target = match (m.kind, store.base(), through_call) {
                (_, _, Some(c)) => c.name.clone(),
                (ReductionKind::Histogram, Some(base), _) => base.name().to_string(),
                _ => crate::reductions::lvalue(&self.unit.snippet(store.span)),
            };
            let mut spans: Vec<Span> = m
                .update
                .updates
                .iter()
                .map(|u| self.func.inst(*u).origin.span)
                .collect();
            spans.extend([load.span, store.span]);
            let described = crate::reductions::Describe {
                kind: m.kind,
                target,
                index: Vec::new(),
                op: m.update.op,
                ty: load.ty,
                ties: None,
                updates: spans,
                types: &program.types,
                shared: m.shared,
            };
            facts.note_reduction(described.note(&|s| self.line(s)));
            if load.conditional || store.conditional {
                facts.conditional_reductions += 1;
            }
        }
        let reduced = |k: usize| settled.iter().any(|m| m.accesses.contains(&k));
        // No claim without two concrete iterations that meet (crate::witness): decided for
        // every ordered pair first, so that a pair stated with a witness in one order is
        // not also reported as undecided in the other.
        let witness_cx = self.witness_context();
        let unranged = crate::space::unranged_inner_loops(self.forest, id, self.rec);
        let mut decided: Vec<_> = results
            .into_iter()
            .filter(|r| !(reduced(r.first) && reduced(r.second)))
            .map(|r| {
                let (first, second) = (&accesses[r.first], &accesses[r.second]);
                let conditional = first.conditional || second.conditional;
                let distance = match &r.outcome {
                    Outcome::Dependent { distance } => Some(*distance),
                    // A pair the static tests could not decide may still have a witness.
                    Outcome::Unknown {
                        data_dependent: false,
                        ..
                    } => Some(None),
                    _ => None,
                };
                let undecided = matches!(r.outcome, Outcome::Unknown { .. });
                let witness = distance.filter(|_| !conditional).map(|d| {
                    crate::witness::memory(
                        &witness_cx,
                        id,
                        space,
                        first,
                        second,
                        d,
                        undecided,
                        variant,
                        &facts.assumptions,
                    )
                });
                let mut r = r;
                match &witness {
                    Some(Ok(_)) if matches!(r.outcome, Outcome::Unknown { .. }) => {
                        r.outcome = Outcome::Dependent { distance: None };
                    }
                    // Undecided and no witness: stays undecided, with the tests' reason.
                    Some(Err(crate::witness::Missing::NotShown(_)))
                        if matches!(r.outcome, Outcome::Unknown { .. }) =>
                    {
                        return (r, None);
                    }
                    _ => {}
                }
                (r, witness)
            })
            .filter(|(_, w)| !matches!(w, Some(Err(crate::witness::Missing::Independent))))
            .collect();
        decided.sort_by_key(|(_, w)| !matches!(w, Some(Ok(_))));
        // A pair the budget left untested and nothing else decided: the loop says so.
        if decided.iter().any(|(r, _)| {
            matches!(&r.outcome, Outcome::Unknown { why, .. } if why == crate::budget::UNTESTED)
        }) {
            facts.assumptions.push(self.budget.caveat());
        }
        let mut seen = HashSet::new();
        for (r, witness) in decided {
            let (first, second) = (&accesses[r.first], &accesses[r.second]);
            let array = first
                .base()
                .or(second.base())
                .map(|v| v.name().to_string())
                .unwrap_or_else(|| "memory".into());
            // One finding per pair of instructions and array: accesses made inside a called
            // function are the call's instruction, and two calls may conflict on several
            // arrays (`fan2(M, A, B, ..)` on `A` and on `B`), each a pair to settle.
            let key = (
                first.inst.min(second.inst),
                first.inst.max(second.inst),
                array.clone(),
            );
            if !seen.insert(key) {
                continue;
            }
            let (a, b) = (self.access_text(first), self.access_text(second));
            let outcome = match &r.outcome {
                Outcome::Dependent { .. } if first.conditional || second.conditional => Outcome::Unknown {
                    why: "both may touch the same element, but under conditions: whether two different iterations do is not known statically".into(),
                    data_dependent: false,
                },
                other => other.clone(),
            };
            // A local array in a nest with an inner loop that leaves early may be private
            // to each iteration: the classifier cannot follow what such a loop writes and
            // reads, so a conflict on it is no claim.
            let local = first
                .base()
                .or(second.base())
                .and_then(|v| self.rec.symbols.info(v))
                .is_some_and(|s| matches!(s.origin, SymbolOrigin::Object(o) if matches!(self.func.inst(o).kind, InstKind::SlotAddr(_))));
            let maybe_private = unranged.first().filter(|_| local).map(|(early, _)| {
                let line = self
                    .forest
                    .loop_(*early)
                    .source
                    .map(|s| self.line(self.func.source_loop(s).keyword_span))
                    .unwrap_or(0);
                format!("`{array}` may be private to each iteration, but the loop at line {line} leaves early, so whether each iteration writes every element it reads first is not known")
            });
            match &outcome {
                Outcome::Independent => {}
                Outcome::Dependent { distance } => {
                    if let (Some(Ok(_)), Some(note)) = (&witness, &maybe_private) {
                        let finding = undecided::likely(r.kind.as_str(), &array, &a, &b, note);
                        self.needs_evidence(finding, r.kind.pair_kind(), &array, a, b, facts);
                        continue;
                    }
                    let built = match witness {
                        Some(Ok(built)) => built,
                        Some(Err(crate::witness::Missing::NotShown(why))) => {
                            let finding = undecided::likely(r.kind.as_str(), &array, &a, &b, &why);
                            self.needs_evidence(finding, r.kind.pair_kind(), &array, a, b, facts);
                            continue;
                        }
                        _ => continue,
                    };
                    // A witness that picks the values of memory the loop reads anew in each
                    // iteration (a face range `group_index[2*t]`, a row start `ptr[i]`)
                    // shows a conflict only for data chosen to make one: whether the
                    // program's data ever does is for a profile to tell.
                    // The loop's own bounds are not such data: a normalizable loop's
                    // bounds hold for all its iterations (the report states what that
                    // assumes), and choosing how often the loop runs is what every witness
                    // does. Names compare symbols, not report text (`start[i + 1]#2`).
                    let own_bounds: HashSet<Var> = space
                        .of_loop(id)
                        .map(|r| r.init.vars().into_iter().chain(r.bound.vars()).collect())
                        .unwrap_or_default();
                    let chosen_data: Vec<&str> = built
                        .witness
                        .values
                        .keys()
                        .filter(|k| {
                            variant
                                .iter()
                                .any(|v| v.name() == k.as_str() && !own_bounds.contains(v))
                        })
                        .map(|k| k.as_str())
                        .collect();
                    if !chosen_data.is_empty() {
                        let finding = undecided::if_data(
                            r.kind.as_str(),
                            &array,
                            &a,
                            &b,
                            &built.text,
                            &chosen_data,
                        );
                        self.needs_evidence(finding, r.kind.pair_kind(), &array, a, b, facts);
                        continue;
                    }
                    facts.add(rules::ww101_carried_dependence::memory(
                        r.kind.pair_kind(),
                        &array,
                        *distance,
                        &a,
                        &b,
                        &built.text,
                        built.witness,
                    ));
                }
                Outcome::Unknown {
                    why,
                    data_dependent,
                } => {
                    let same_address = first
                        .alternatives
                        .iter()
                        .map(|(_, o)| o)
                        .eq(second.alternatives.iter().map(|(_, o)| o));
                    // Only for the loop's own accesses: a callee's offset may be unknown
                    // for reasons other than data.
                    if *data_dependent
                        && maybe_private.is_none()
                        && first.callee.is_none()
                        && second.callee.is_none()
                        && same_address
                        && first.is_store != second.is_store
                        && first.base() == second.base()
                    {
                        // The witness is conditional on data (`key[0] == key[1]`).
                        let built = crate::witness::indirect(
                            &witness_cx,
                            id,
                            space,
                            first,
                            second,
                            variant,
                            &facts.assumptions,
                        );
                        facts.add(rules::ww103_indirect_update::conditional(
                            &b.text,
                            &array,
                            vec![a.line, b.line],
                            built.map(|w| (w.text, w.witness)),
                        ));
                        // Whether indices repeat is a property of the data (a mesh's face
                        // numbering may guarantee they never do across iterations): the
                        // witness is conditional, so the loop needs run-time evidence, not a
                        // verdict.
                        facts.needs_evidence.push(DependencePair {
                            kind: r.kind.pair_kind(),
                            array: array.to_string(),
                            first: a,
                            second: b,
                            distance: None,
                        });
                    } else {
                        let finding = undecided::may_touch(&array, &a, &b, why);
                        self.needs_evidence(finding, r.kind.pair_kind(), &array, a, b, facts);
                    }
                }
            }
        }
    }

    /// A pair whose dependence a profile must settle: its finding (WW111) and the pair
    /// under `needs_evidence`.
    fn needs_evidence(
        &self,
        finding: Finding,
        kind: PairKind,
        array: &str,
        a: Access,
        b: Access,
        facts: &mut LoopFacts,
    ) {
        facts.add(finding);
        facts.needs_evidence.push(DependencePair {
            kind,
            array: array.to_string(),
            first: a,
            second: b,
            distance: None,
        });
    }

    fn witness_context(&self) -> crate::witness::Context<'_> {
        crate::witness::Context {
            unit: self.unit,
            func: self.func,
            forest: self.forest,
            rec: self.rec,
            ranges: self.ranges,
            cache: Default::default(),
            searches: Default::default(),
        }
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

    /// A scalar carried between iterations that is not a reduction: WW101 with a witness
    /// (iteration `k` writes it, `k + 1` reads it), else WW111.
    fn scalar_dependence(
        &self,
        id: LoopId,
        phi: Value,
        back: &[Value],
        name: &str,
        update_lines: Vec<u32>,
        facts: &mut LoopFacts,
    ) {
        let space = self.space(id, true);
        let accesses = collect_accesses(
            self.func,
            self.forest,
            id,
            self.rec,
            &self.unit.lowered.program.types,
        );
        let built = match space {
            Ok(space) => {
                let mut assumptions = facts.assumptions.clone();
                assumptions.extend(space.assumptions.iter().cloned());
                let space = self.bounded_by_array_extents(space, &accesses);
                crate::witness::scalar(&self.witness_context(), id, &space, phi, back, &assumptions)
            }
            Err(why) => Err(why.0),
        };
        match built {
            Ok(built) => {
                facts.add(rules::ww101_carried_dependence::scalar(
                    name,
                    update_lines,
                    &built.text,
                    built.witness,
                ));
            }
            Err(why) => {
                let line = update_lines.first().copied().unwrap_or(0);
                let at = Access {
                    line,
                    text: name.to_string(),
                };
                let finding = undecided::likely_scalar(name, line, &why);
                self.needs_evidence(
                    finding,
                    PairKind::ReadAfterWrite,
                    name,
                    at.clone(),
                    at,
                    facts,
                );
            }
        }
    }

    /// Stores and accesses through different pointers that may point into one array.
    ///
    /// A pair that would not conflict across iterations even if both pointers addressed
    /// the same array (`z[i] = x[i] + 1` called in place) is accepted under the stated
    /// assumption that the pointers either coincide or do not overlap (`overlap`).
    fn aliasing_pairs(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        dependence_context: Option<&(Space, HashSet<Var>)>,
        effects: &crate::callsites::LoopEffects,
        facts: &mut LoopFacts,
    ) {
        // Every pair of a store and another access through pointers that may alias,
        // grouped by the two pointers (sorted by name).
        type Uses<'x> = Vec<(&'x MemAccess, &'x MemAccess, &'x Var, &'x Var)>;
        let mut candidates: BTreeMap<(String, String), Uses> = BTreeMap::new();
        // Accesses that agree on all a pair's checks read (addresses, size, direction,
        // type, `restrict`) give the same answers: one of each, the first, stands for the
        // others, so the pairs are those of distinct accesses (a body of 10,000
        // `a[i] += b[i + k]` made 10^8 pairs of 2 distinct ones).
        let distinct = distinct_accesses(accesses);
        for store in distinct.iter().copied().filter(|a| a.is_store) {
            let Some(sb) = store.base() else { continue };
            for other in distinct.iter().copied() {
                let Some(ob) = other.base() else { continue };
                if sb == ob || self.is_const_object(ob, effects) {
                    continue;
                }
                let header = self.forest.loop_(id).header;
                if !self.may_alias_in(sb, ob, Some(effects), Some(header)) {
                    // Apart by an assumption of the aliasing policy: `restrict`, where the
                    // program declares it, makes it a promise of the program's instead.
                    let mut caveats = self.no_alias_caveats(sb, ob);
                    if !caveats.is_empty() {
                        if let Some(promise) = self.restrict_apart(id, store, other) {
                            caveats = vec![promise];
                        }
                    }
                    for caveat in caveats {
                        if !facts.assumptions.contains(&caveat) {
                            facts.assumptions.push(caveat);
                        }
                    }
                    continue;
                }
                if effects.distinct_objects(sb, ob, &self.rec.symbols)
                    || !crate::access::types_may_alias(self.unit, store.ty, other.ty)
                {
                    continue;
                }
                if self.member_apart_from_variable(store, other) {
                    let caveat = "the program follows C's effective-type rule (C99 6.5p7, 6.5.2.3): a store to a struct's member never writes a variable of no struct type".to_string();
                    if !facts.assumptions.contains(&caveat) {
                        facts.assumptions.push(caveat);
                    }
                    continue;
                }
                if let Some(promise) = self.restrict_apart(id, store, other) {
                    if !facts.assumptions.contains(&promise) {
                        facts.assumptions.push(promise);
                    }
                    continue;
                }
                if let Some(assumption) = (!other.is_store)
                    .then(|| self.fields_apart_from_data(ob, sb))
                    .flatten()
                {
                    if !facts.assumptions.contains(&assumption) {
                        facts.assumptions.push(assumption);
                    }
                    continue;
                }
                let pair = (
                    sb.name().min(ob.name()).to_string(),
                    sb.name().max(ob.name()).to_string(),
                );
                candidates
                    .entry(pair)
                    .or_default()
                    .push((store, other, sb, ob));
            }
        }
        // Pairs left to the aliasing policy's assumption, stated once for the loop.
        let mut assumed = Vec::new();
        // Pairs assumed apart because a lookup handed out one of them, and the lookups.
        let mut looked_up: Vec<String> = Vec::new();
        let mut handed_out: BTreeSet<String> = BTreeSet::new();
        let mut tester: Option<Option<crate::dependence::CarriedTester>> = None;
        for (pair, uses) in candidates {
            // Harmless if the pointers coincide: no pair conflicts across iterations when
            // both address one array from the same start. Not when a call site is known
            // to pass them into one array at different offsets.
            let (_, _, sb, ob) = uses[0];
            let overlap_known = match (self.param_index(sb), self.param_index(ob)) {
                (Some(i), Some(j)) => self.aliasing.partially_overlapping(i, j),
                _ => false,
            };
            if let (Some((space, variant)), false) = (dependence_context, overlap_known) {
                // One tester for the loop, made on first use: a loop with many pointers
                // has many pairs.
                let tester = tester.get_or_insert_with(|| {
                    crate::dependence::CarriedTester::new(
                        accesses,
                        space,
                        id,
                        variant,
                        &crate::dependence::Quotients::new(),
                    )
                });
                let mut needed = Vec::new();
                let safe = tester.as_ref().is_some_and(|tester| {
                    uses.iter().all(|(store, other, sb, ob)| {
                        crate::overlap::independent_if_same_array(
                            store,
                            other,
                            sb,
                            ob,
                            tester,
                            &mut needed,
                            &self.budget,
                        )
                    })
                });
                if safe {
                    facts.assumptions.extend(needed);
                    facts.assumptions.push(format!(
                        "`{}` and `{}` are the same array or do not overlap (an in-place call is fine; a partial overlap, such as passing `p` and `p + 1`, is not checked)",
                        pair.0, pair.1
                    ));
                    continue;
                }
            }
            if self.assumed_distinct(sb, ob) || self.callee_memory_distinct(sb, ob, effects) {
                let mut lookups = self.lookups_behind(sb);
                lookups.extend(self.lookups_behind(ob));
                let which = format!("{} and {}", quoted(&pair.0), quoted(&pair.1));
                if lookups.is_empty() {
                    assumed.push(which);
                } else {
                    // The argument is not the call sites but the program's own tables.
                    looked_up.push(which);
                    handed_out.extend(lookups);
                }
                continue;
            }
            let (store, other, _, _) = uses[0];
            let (a, b) = (self.access_text(store), self.access_text(other));
            let copied = self.visibly_copied(sb, ob);
            facts.add(rules::ww110_may_alias::pointers(
                &quoted(&pair.0),
                &quoted(&pair.1),
                &a,
                &b,
                copied,
            ));
            facts.needs_evidence.push(DependencePair {
                kind: PairKind::MayAlias,
                array: format!("{} / {}", pair.0, pair.1),
                first: a,
                second: b,
                distance: None,
            });
        }
        if !assumed.is_empty() {
            let which = match assumed.as_slice() {
                [one] => one.clone(),
                many => format!("the pairs {}", many.join("; ")),
            };
            facts.assumptions.push(distinct_assumption(&which));
        }
        if !looked_up.is_empty() {
            let which = match looked_up.as_slice() {
                [one] => one.clone(),
                many => format!("the pairs {}", many.join("; ")),
            };
            let names: Vec<String> = handed_out.iter().map(|n| format!("`{n}`")).collect();
            facts.assumptions.push(format!(
                "{which} do not overlap: pointers the program keeps and hands out ({}) are assumed to be different arrays (`--aliasing call-sites` drops this assumption)",
                names.join(", ")
            ));
        }
    }

    /// Whether a base pointer is one the function received: a parameter, the copy of a
    /// struct passed by value, or a pointer loaded from memory reached from a parameter, a
    /// global or such a copy (`z->content->data`, `d.p`).
    fn is_received(&self, base: &Var) -> bool {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(_)) => true,
            // The copy of a struct passed by value (`d` of `D d`): what the caller passed.
            Some(SymbolOrigin::Object(v)) => {
                matches!(self.func.inst(*v).kind, InstKind::SlotAddr(_))
                    && self.reaches_received(*v)
            }
            Some(SymbolOrigin::Load { address, .. }) => self.reaches_received(*address),
            Some(SymbolOrigin::Opaque(v) | SymbolOrigin::Phi(v)) => {
                self.received_params(*v).is_some()
            }
            _ => false,
        }
    }

    /// The lookup functions a base pointer comes from (`cs_field_by_id` for
    /// `cs_field_by_id(id)->val`), through casts, phis, fields, offsets and loads.
    fn lookups_behind(&self, base: &Var) -> Vec<String> {
        let Some(start) = self
            .rec
            .symbols
            .info(base)
            .and_then(|s| self.origin_value(&s.origin))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            if !seen.insert(v) || seen.len() > 64 {
                continue;
            }
            match &self.func.inst(v).kind {
                InstKind::Call {
                    callee: frontend::ir::Callee::Direct(name),
                    ..
                } if self.lookups.is_lookup(name) => out.push(name.clone()),
                InstKind::Cast(x) | InstKind::Load { addr: x } => stack.push(*x),
                InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => {
                    stack.push(*base)
                }
                InstKind::Phi(args) => stack.extend(args.iter().map(|(_, a)| *a)),
                InstKind::Select {
                    then_value,
                    else_value,
                    ..
                } => stack.extend([*then_value, *else_value]),
                _ => {}
            }
        }
        out
    }

    /// Whether an address lies in memory the function was given: reached from a parameter,
    /// a global or a lookup's result through offsets, fields and loaded pointers
    /// (`z->content->data`, `X[i]->data`, `cs_field_by_id(id)->val`), not in a local object
    /// such as a table of row pointers the function fills itself.
    fn reaches_received(&self, addr: Value) -> bool {
        let copies = self.param_copies.get_or_init(|| {
            crate::escape::param_copies(self.summaries.view(), self.unit_index, self.func)
        });
        crate::lookups::reaches_received(
            self.func,
            addr,
            &|name| self.lookups.is_lookup(name),
            &|slot| copies.contains_key(&slot),
        )
    }

    /// The parameters among a pointer's values (through casts and phis), whatever the
    /// others are.
    fn params_among(&self, v: Value) -> Vec<u32> {
        crate::merged::leaves(self.func, v)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|x| match self.func.inst(x).kind {
                InstKind::Param(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// The parameters a pointer may be, when each of its values (through casts and phis) is
    /// a parameter, null, a pointer loaded from received memory or a lookup's result
    /// (`_pvar = pvar != NULL ? pvar : pvara`, `v = cs_field_by_id(id)->val`).
    fn received_params(&self, v: Value) -> Option<Vec<u32>> {
        let mut params = Vec::new();
        for x in crate::merged::leaves(self.func, v)? {
            match &self.func.inst(x).kind {
                InstKind::Param(i) => params.push(*i),
                InstKind::Load { addr } if self.reaches_received(*addr) => {}
                InstKind::Call {
                    callee: frontend::ir::Callee::Direct(name),
                    ..
                } if self.lookups.is_lookup(name) => {}
                _ if crate::merged::is_null(self.func, x) => {}
                _ => return None,
            }
        }
        Some(params)
    }

    /// A pointer that is new memory or a received one (`_aux_vectors = aux_vectors`, or a
    /// fresh `BFT_MALLOC` when the caller's buffer is too small) against a pointer that
    /// existed before any allocation (parameters, and phis of them): when it is the new
    /// memory the two cannot meet, and when it is the received one the policy's assumption
    /// applies as for any two received pointers.
    fn received_or_new(&self, a: &Var, b: &Var) -> bool {
        let sources = |v: &Var| -> Option<(bool, bool)> {
            // (has new memory, has loaded pointers) over the pointer's values.
            let start = match self.rec.symbols.info(v).map(|s| &s.origin)? {
                SymbolOrigin::Param(_) => return Some((false, false)),
                SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => *x,
                _ => return None,
            };
            let (mut new, mut loaded) = (false, false);
            for x in crate::merged::leaves(self.func, start)? {
                match &self.func.inst(x).kind {
                    InstKind::Param(_) => {}
                    InstKind::Load { addr } if self.reaches_received(*addr) => loaded = true,
                    _ if self.fresh.is_allocation(x) => new = true,
                    _ if crate::merged::is_null(self.func, x) => {}
                    _ => return None,
                }
            }
            Some((new, loaded))
        };
        match (sources(a), sources(b)) {
            (Some((new_a, loaded_a)), Some((new_b, loaded_b))) => {
                // New memory may be what a loaded pointer holds once its address is stored:
                // only parameters (fixed at entry) on the other side.
                (new_a || new_b) && !(new_a && (new_b || loaded_b)) && !(new_b && loaded_a)
            }
            _ => false,
        }
    }

    /// Whether two base pointers that may alias are assumed not to overlap under the
    /// [`Aliasing::Distinct`] policy: both are pointers the function received (parameters,
    /// or pointers loaded from memory, such as `z->content->data`), and no call site passes
    /// the two parameters into one object. Locals, globals, call results and pointers the
    /// function computes itself are never assumed.
    fn assumed_distinct(&self, a: &Var, b: &Var) -> bool {
        self.distinct_by_policy(a, b, self.aliasing_policy)
    }

    /// The [`Aliasing::Distinct`] policy for memory a callee reaches through a pointer it
    /// reads (`t->all_shortest` inside `f(t)`, the nodes of a tree `search(root, ...)`
    /// descends): memory the function was given, reached through loaded pointers, as
    /// `z->content->data` loaded by the function itself is. Pointers read from memory the
    /// summary does not name are read from the callee's own reads of received memory,
    /// globals, or memory it allocated (which nothing of the caller points into).
    fn callee_memory_distinct(
        &self,
        a: &Var,
        b: &Var,
        effects: &crate::callsites::LoopEffects,
    ) -> bool {
        if self.aliasing_policy != Aliasing::Distinct || a == b || self.visibly_copied(a, b) {
            return false;
        }
        let reached = |v: &Var| effects.reached_through(v, |h| self.is_received(h));
        let received = |v: &Var| self.is_received(v) || reached(v);
        (reached(a) || reached(b)) && received(a) && received(b)
    }

    /// [`Self::assumed_distinct`] under the given policy (to tell what the default would
    /// assume when the strict one is in force).
    fn distinct_by_policy(&self, a: &Var, b: &Var, policy: Aliasing) -> bool {
        if policy != Aliasing::Distinct {
            return false;
        }
        let received = self.is_received(a) && self.is_received(b);
        if !received && !self.received_or_new(a, b) {
            return false;
        }
        // The program itself may make the two equal (`u1 = u2;` around the loop).
        if self.visibly_copied(a, b) {
            return false;
        }
        // A pointer the function itself stores to memory may be what it loads back
        // (`f->val = out; v = f->val;`): the function makes the overlap, no caller does.
        if self.stored_before_obtained(a, b) || self.stored_before_obtained(b, a) {
            return false;
        }
        // The parameters each side may be: no call site may pass any two into one object.
        let params = |v: &Var| match self.rec.symbols.info(v).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => vec![*i],
            Some(SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x)) => self
                .received_params(*x)
                .unwrap_or_else(|| self.params_among(*x)),
            _ => Vec::new(),
        };
        let (pa, pb) = (params(a), params(b));
        !pa.iter().any(|i| {
            pb.iter()
                .any(|j| i == j || self.aliasing.shares_object(*i as usize, *j as usize))
        })
    }

    /// Whether the program copies the pointer one base symbol holds into the other's (see
    /// `copies`): then no policy may assume them apart.
    fn visibly_copied(&self, a: &Var, b: &Var) -> bool {
        let value = |v: &Var| match self.rec.symbols.info(v).map(|s| &s.origin)? {
            SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => Some(*x),
            SymbolOrigin::Load { load, .. } => Some(*load),
            SymbolOrigin::Param(i) => self
                .func
                .values()
                .find(|x| matches!(self.func.inst(*x).kind, InstKind::Param(p) if p == *i)),
            _ => None,
        };
        let (Some(x), Some(y)) = (value(a), value(b)) else {
            return false;
        };
        let functions = &self.unit.lowered.program.functions;
        let Some(index) = functions.iter().position(|f| std::ptr::eq(f, self.func)) else {
            return false;
        };
        let me = crate::program::FuncRef {
            unit: self.unit_index,
            index,
        };
        crate::copies::may_meet(self.summaries.view(), me, x, y)
    }

    /// The parameter index a base pointer symbol stands for.
    fn param_index(&self, base: &Var) -> Option<usize> {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => Some(*i as usize),
            _ => None,
        }
    }

    /// Whether `base` is a global no store of a correct program modifies (C99 6.7.3p5, see
    /// `globals::unmodifiable`): one of this function's, or one only its callees name.
    fn is_const_object(&self, base: &Var, effects: &crate::callsites::LoopEffects) -> bool {
        if effects.const_globals.contains(base) {
            return true;
        }
        let program = &self.unit.lowered.program;
        crate::globals::global_of(self.func, self.rec, base)
            .is_some_and(|g| crate::globals::unmodifiable(program, program.global(g)))
    }

    /// Whether accesses `a` and `b` go through two different `restrict`-qualified pointers
    /// declared in one block outside the body of loop `id`: the whole loop then runs in
    /// one execution of that block, where (C99 6.7.3.1) an object modified through one of
    /// them is accessed through no other pointer, and neither may be based on the other
    /// (p4). Returns the promise to state, as the loop's verdict depends on it.
    fn restrict_apart(&self, id: LoopId, a: &MemAccess, b: &MemAccess) -> Option<String> {
        let (ra, rb) = (a.restrict?, b.restrict?);
        if ra == rb {
            return None;
        }
        let table = &self.func.restrict_pointers;
        let (pa, pb) = (table.get(ra as usize)?, table.get(rb as usize)?);
        if pa.scope != pb.scope {
            return None;
        }
        let body = self
            .func
            .source_loop(self.forest.loop_(id).source?)
            .body_span;
        let inside = |s: Span| s.start >= body.start && s.end <= body.end;
        if inside(pa.decl) || inside(pb.decl) {
            return None;
        }
        let (x, y) = (
            pa.name.as_str().min(&pb.name),
            pa.name.as_str().max(&pb.name),
        );
        Some(format!(
            "`{x}` and `{y}` do not overlap where the loop writes through either, as their `restrict` qualifiers promise"
        ))
    }

    /// Whether a base pointer points to a struct (its accesses read fields).
    /// The assumption that stores through `data`, a pointer to data (not to a struct), leave
    /// the fields of the struct `*object` alone: a field (`in_image->width`) is not expected
    /// to live inside a data array. Assumed, and said so; `None` when the pointers are not
    /// of those kinds. The dependence test and the bound check make it alike, so a report
    /// never assumes a field unchanged in one place and calls it variant in the other.
    fn fields_apart_from_data(&self, object: &Var, data: &Var) -> Option<String> {
        (self.is_struct_pointer(object) && !self.is_struct_pointer(data))
            .then(|| format!("stores through `{data}` do not modify the struct `*{object}`"))
    }

    fn is_struct_pointer(&self, base: &Var) -> bool {
        let types = &self.unit.lowered.program.types;
        let ty = match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => self.func.params[*i as usize].ty,
            Some(SymbolOrigin::Load { load, .. }) => self.func.inst(*load).ty,
            _ => return false,
        };
        types
            .pointee(ty)
            .is_some_and(|p| matches!(types.get(p), frontend::types::Type::Record(_)))
    }

    /// Whether base `v` is a static whose address the program never takes: one this
    /// function names itself, or one only the loop's callees name (`effects`).
    fn is_sealed_static(&self, v: &Var, effects: Option<&crate::callsites::LoopEffects>) -> bool {
        if effects.is_some_and(|e| e.sealed_globals.contains(v)) {
            return true;
        }
        crate::globals::global_of(self.func, self.rec, v)
            .is_some_and(|g| self.summaries.view().sealed_static(self.unit_index, g))
    }

    fn may_alias(&self, a: &Var, b: &Var) -> bool {
        self.may_alias_in(a, b, None, None)
    }

    /// [`Self::may_alias`] for the loop whose header is `header`, knowing the bases the
    /// loop's callees name (`effects`): a global only a callee names, memory a callee
    /// reaches through a pointer it loads. Only what happens to an address before the loop
    /// can run matters (a buffer freed after the loop still counts as unreached).
    fn may_alias_in(
        &self,
        a: &Var,
        b: &Var,
        effects: Option<&crate::callsites::LoopEffects>,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        // A static whose address the program never takes is reached through no pointer:
        // it overlaps nothing but itself (see `sealed`).
        if a != b && (self.is_sealed_static(a, effects) || self.is_sealed_static(b, effects)) {
            return false;
        }
        let origin = |v: &Var| match self.rec.symbols.info(v) {
            Some(s) => Some(Base::Symbol(s.origin.clone())),
            None if effects.is_some_and(|e| e.globals.contains(v)) => Some(Base::Global),
            None if effects.is_some_and(|e| e.reached.contains_key(v)) => Some(Base::Loaded),
            None => None,
        };
        let (Some(oa), Some(ob)) = (origin(a), origin(b)) else {
            return true;
        };
        let (oa, ob) = match (oa, ob) {
            (Base::Symbol(x), Base::Symbol(y)) => (x, y),
            (Base::Symbol(x), other) | (other, Base::Symbol(x)) => {
                // A local array cannot be reached through anything but itself.
                if let SymbolOrigin::Object(v) = x {
                    if matches!(self.func.inst(v).kind, InstKind::SlotAddr(_)) {
                        return false;
                    }
                }
                return !self.apart_from_callee_base(&x, other, header);
            }
            _ => return true,
        };

        match (&oa, &ob) {
            (SymbolOrigin::Param(i), SymbolOrigin::Param(j)) => {
                return !self.aliasing.disjoint(*i as usize, *j as usize);
            }
            // A local array cannot be reached through anything but itself at loop entry.
            (SymbolOrigin::Object(x), _) | (_, SymbolOrigin::Object(x))
                if matches!(self.func.inst(*x).kind, InstKind::SlotAddr(_)) =>
            {
                return false;
            }
            // Different memory objects (each object has one symbol) never overlap.
            (SymbolOrigin::Object(_), SymbolOrigin::Object(_)) => return false,
            _ => {}
        }
        // Memory an allocation call of this function returned (`malloc`, or a program
        // function returning only what an allocator gave) is a new object: no parameter or
        // named object can point into it, nor any other pointer while its address goes
        // nowhere (not stored, not passed to a call that keeps it, not returned). The same
        // for a pointer that is such an allocation or null on every path.
        for (mine, other) in [(&oa, &ob), (&ob, &oa)] {
            if let Some(sources) = self.fresh_sources(mine) {
                return !self.outside_new_memory(&sources, other, header);
            }
        }
        // A `restrict` parameter: what it points to and is modified is reached only
        // through it (C99 6.7.3.1), unless the function itself derives another pointer from
        // it (a copy through memory, a call that returns it, a phi).
        for (mine, other) in [(&oa, &ob), (&ob, &oa)] {
            if let Some(reach) = self.unshared_restrict(mine, header) {
                if self
                    .origin_value(other)
                    .is_some_and(|v| !reach.derived.contains(&v))
                {
                    return false;
                }
            }
        }
        true
    }

    /// Whether a base of the function and one only a callee names (a global, memory reached
    /// through a loaded pointer) never overlap: new memory whose address goes nowhere, and a
    /// `restrict` parameter the function keeps to itself, are reached by nothing else.
    fn apart_from_callee_base(
        &self,
        mine: &SymbolOrigin,
        other: Base,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        if let Some(sources) = self.fresh_sources(mine) {
            return other == Base::Global || self.unreached(&self.fresh.reach(&sources), header);
        }
        self.unshared_restrict(mine, header).is_some()
    }

    /// Whether no way out of `reach` happens before the loop of `header` can run (before
    /// any point of the function, without a loop).
    fn unreached(&self, reach: &crate::escape::Reach, header: Option<frontend::ir::Block>) -> bool {
        match header {
            Some(h) => reach.escape_before(self.func, h).is_none(),
            None => reach.escape().is_none(),
        }
    }

    /// The values derived from a `restrict` parameter, when `origin` is one whose address the
    /// function keeps to itself (never stored, returned or passed to a call that keeps it).
    fn unshared_restrict(
        &self,
        origin: &SymbolOrigin,
        header: Option<frontend::ir::Block>,
    ) -> Option<std::rc::Rc<crate::escape::Reach>> {
        let SymbolOrigin::Param(i) = origin else {
            return None;
        };
        let param = self.func.params.get(*i as usize)?;
        let types = &self.unit.lowered.program.types;
        let restrict = matches!(
            types.get(param.ty),
            frontend::types::Type::Pointer { restrict: true, .. }
        );
        if !restrict || param.slot.is_some() {
            return None;
        }
        let reach = self.fresh.reach_of(vec![param.value]);
        self.unreached(&reach, header).then_some(reach)
    }

    /// Whether the function stores the pointer `stored` (or one derived from it) to memory
    /// before it obtains `obtained` (a load, a call, a phi): the function itself may then
    /// have made `obtained` point where `stored` does (`f->val = out; v = f->val;`). A
    /// parameter's value is fixed at entry: no store changes it.
    fn stored_before_obtained(&self, stored: &Var, obtained: &Var) -> bool {
        let value = |v: &Var| {
            self.rec
                .symbols
                .info(v)
                .and_then(|s| self.origin_value(&s.origin))
        };
        let (Some(stored), Some(obtained)) = (value(stored), value(obtained)) else {
            return false;
        };
        if matches!(self.func.inst(obtained).kind, InstKind::Param(_)) {
            return false;
        }
        let at = self.func.inst(obtained).block;
        self.fresh
            .reach_of(vec![stored])
            .escapes
            .iter()
            .any(|(from, why)| {
                why == crate::escape::STORED && crate::escape::reaches_block(self.func, *from, at)
            })
    }

    /// The allocation calls a base pointer may hold, when it holds nothing else (or null).
    fn fresh_sources(&self, origin: &SymbolOrigin) -> Option<std::collections::BTreeSet<u32>> {
        match origin {
            SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => self.fresh.sources(*x),
            _ => None,
        }
    }

    /// Whether a base pointer of origin `other` cannot point into the new memory of the
    /// allocation calls `sources`.
    fn outside_new_memory(
        &self,
        sources: &std::collections::BTreeSet<u32>,
        other: &SymbolOrigin,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        if matches!(other, SymbolOrigin::Param(_) | SymbolOrigin::Object(_)) {
            return true;
        }
        if let Some(theirs) = self.fresh_sources(other) {
            return theirs.is_disjoint(sources);
        }
        if self
            .origin_value(other)
            .is_some_and(|v| self.obtained_before(v, sources))
        {
            return true;
        }
        let reach = self.fresh.reach(sources);
        self.unreached(&reach, header)
            && self
                .origin_value(other)
                .is_some_and(|v| !reach.derived.contains(&v))
    }

    /// Whether value `v` is computed before every allocation call in `sources`, all of them
    /// outside every loop of the function (so no later execution of `v` can come between an
    /// allocation and the loop): a pointer the function held before a block existed cannot
    /// point into it, whatever happens to the block's address afterwards (a pointer into a
    /// freed block the allocator reuses is indeterminate, C99 6.2.4p2). code_saturne's
    /// `v_slope_test = _get_v_slope_test(..)` before `BFT_MALLOC(grad, ..)`.
    fn obtained_before(&self, v: Value, sources: &std::collections::BTreeSet<u32>) -> bool {
        let at = self.func.inst(v).block;
        if self.forest.innermost(at).is_some() {
            return false;
        }
        sources.iter().all(|&s| {
            let s = Value(s);
            let block = self.func.inst(s).block;
            self.forest.innermost(block).is_none()
                && if block == at {
                    // Values are numbered in block order.
                    v.index() < s.index()
                } else {
                    self.forest.dominates(at, block)
                }
        })
    }

    /// The IR value a symbol stands for.
    fn origin_value(&self, origin: &SymbolOrigin) -> Option<Value> {
        match origin {
            SymbolOrigin::Param(i) => self.func.params.get(*i as usize).map(|p| p.value),
            SymbolOrigin::Induction(v)
            | SymbolOrigin::Object(v)
            | SymbolOrigin::Phi(v)
            | SymbolOrigin::Opaque(v) => Some(*v),
            SymbolOrigin::Load { load, .. } => Some(*load),
        }
    }

    /// What "`a` and `b` never overlap" rests on beyond C's rules: the program allocators
    /// whose new memory it relies on that also keep a copy of the address.
    fn no_alias_caveats(&self, a: &Var, b: &Var) -> Vec<String> {
        let mut out = Vec::new();
        for v in [a, b] {
            let origin = self.rec.symbols.info(v).map(|s| s.origin.clone());
            if let Some(sources) = origin.as_ref().and_then(|o| self.fresh_sources(o)) {
                out.extend(self.fresh.caveats(&sources));
            }
        }
        out
    }

    fn report(&self, id: LoopId, all: &BTreeMap<LoopId, LoopFacts>) -> LoopReport {
        let l = self.forest.loop_(id);
        let source = l.source.map(|s| self.func.source_loop(s));
        let loop_id = source.map(|s| self.unit.loop_id(s)).unwrap_or_default();
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
            lower: r.init.to_c(),
            upper: r.bound.to_c(),
            step: r.step.to_string(),
            trip_count: r.trips.to_c(),
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
                    if let Some(s) = self.forest.loop_(*child).source {
                        nest.push(self.unit.loop_id(self.func.source_loop(s)));
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
            parameters,
            calls: self.calls(id, &facts.privacy),
            error_paths: facts.error_paths.clone(),
            reductions: facts.reductions.clone(),
            private: facts.privacy.entries.clone(),
            counters: self.counters(id),
            needs_evidence: facts.needs_evidence.clone(),
            assumptions,
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
            crate::performance::attach(
                self.unit,
                self.func,
                self.forest,
                self.rec,
                id,
                &parallel,
                &facts.privacy.accesses,
                self.target,
                &mut report,
            );
        }
        self.names_at_loop(id, &mut report);
        self.present(&mut report);
        report
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
                induction.lower.as_str(),
                induction.upper.as_str(),
                induction.trip_count.as_str(),
            ]);
        }
        for bytes in report.parameters.iter().filter_map(|p| p.bytes.as_ref()) {
            texts.extend([bytes.lo.as_str(), bytes.hi.as_str(), bytes.size.as_str()]);
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
            for text in [
                &mut induction.lower,
                &mut induction.upper,
                &mut induction.trip_count,
            ] {
                *text = at_loop.text(text);
            }
        }
        for p in &mut report.parameters {
            if let Some(bytes) = &mut p.bytes {
                for text in [&mut bytes.lo, &mut bytes.hi, &mut bytes.size] {
                    *text = at_loop.text(text);
                }
            }
        }
    }

    /// The loop's second counters that the reconstruction expressed through its index
    /// (integer, with a step that is a multiple of the index's): what a port must compute
    /// per iteration. Named from the source; a counter with no name is left out.
    fn counters(&self, id: LoopId) -> Vec<crate::model::Counter> {
        let l = self.forest.loop_(id);
        let inside: HashSet<frontend::ir::Block> = l.blocks.iter().copied().collect();
        analyses::reconstruct::expressed_counters(&self.unit.lowered.program, self.func, l)
            .into_iter()
            .filter_map(|iv| {
                let name = iv.name.clone()?;
                let step = i64::try_from(self.counter_step(iv)?).ok()?;
                // Read after the loop: some instruction outside it uses the counter.
                let last_value = self.func.values().any(|v| {
                    let inst = self.func.inst(v);
                    !inside.contains(&inst.block)
                        && inst
                            .kind
                            .operands()
                            .iter()
                            .any(|&o| o == iv.phi || o == iv.update)
                });
                Some(crate::model::Counter {
                    name,
                    step,
                    last_value,
                })
            })
            .collect()
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
        assumptions: &mut Vec<String>,
    ) -> Vec<Parameter> {
        let memory = self.loop_memory(id, facts, assumptions);
        let (bases, unbased) = parameters::by_base(&memory.accesses);
        let mut out = self.based_parameters(id, &memory, &bases, assumptions);
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
        scalars: &mut BTreeMap<String, (Role, String)>,
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
        // Pointers used only as bases are listed as arrays; a pointer whose fields are read
        // (a struct parameter) is listed there too.
        if types.is_pointer(inst.ty)
            && arrays
                .iter()
                .any(|a| a.starts_with(&format!("{name}->")) || a == &name)
        {
            return;
        }
        scalars
            .entry(name)
            .or_insert((Role::In, types.display(inst.ty)));
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

/// The first of each group of accesses that agree on their addresses, size, direction,
/// type and `restrict` pointer, in the order of the accesses.
fn distinct_accesses(accesses: &[MemAccess]) -> Vec<&MemAccess> {
    let mut seen = HashSet::new();
    accesses
        .iter()
        .filter(|a| {
            seen.insert((
                a.alternatives.as_slice(),
                a.elem_bytes,
                a.is_store,
                a.ty,
                a.restrict,
            ))
        })
        .collect()
}
