//! Side-effect summaries of the program's functions: the memory each reads and writes, as
//! byte offsets relative to its pointer parameters and to globals, computed bottom-up over
//! the program-wide call graph (callees first, by Tarjan's strongly connected components).
//!
//! A summary keeps the loops of the function symbolic: an access `row[j]` inside
//! `for (j = 0; j < n; j++)` is `param row: writes 8*j` with the range `j in [0, n - 1]`,
//! so that a caller can compare two calls exactly (as it compares two accesses of an inner
//! loop) or take the section `[0, 8*n)`. Calls inside the function are instantiated with
//! their arguments (thesis §8.7's per-call-site expansion), so a summary covers everything
//! the function reaches. What cannot be expressed stays in the summary as such: an offset
//! that depends on a value read from memory is an "unknown offset within the object", a
//! write through a pointer the function reads from memory, mutual recursion, a recursive
//! write through a pointer the recursion moves, or a call through a function pointer make
//! the summary `unknown` with the reason. A function calling itself is summarized over every
//! depth through the parameters its recursive calls pass on unchanged ([`recursion`]).
//!
//! Accesses to the function's own locals (stack slots, and `malloc` results that do not
//! escape) are private to one call and left out.

// A self-recursive function's summary: a step of making summaries, on their types (so a
// submodule: the two are one layer).
pub mod recursion;
pub mod unknowns;
pub mod updates;

use crate::access::split_base;
use crate::program::{FuncRef, ProgramView};
use crate::space::{extreme, IvRange, Space};
use analyses::reconstruct::{reconstruct_sharing, CalleeMemo, ReconstructConfig, Reconstruction};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{BinOp, Block, Callee, Function, InstKind, Terminator, Value};
use frontend::loops::{analyze_loops, LoopForest, LoopId};
use frontend::types::{Type, TypeId};
use num_bigint::BigInt;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use symbolic::{Expr, SignEnv, SignSet, Var};
pub use unknowns::Unknowns;
pub use updates::GlobalUpdate;

/// Most effects kept per summary; past it, the accesses to each object are merged into one
/// access at an unknown offset.
const MAX_EFFECTS: usize = 256;

/// What an access of a summary is relative to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// The object a pointer parameter points into (by index).
    Param(u32),
    /// A global or static variable; `unit` is set for `static` ones (visible in one unit).
    Global { name: String, unit: Option<usize> },
    /// The object a pointer points into that the function reads at `param + at` (one level
    /// of indirection, `s->data` for a parameter `s`); `name` is how the function spells it.
    Deref { param: u32, at: Expr, name: String },
    /// An object reached some other way (a pointer read through two levels, a pointer
    /// computed by a call); only reads are kept relative to it.
    Opaque(String),
}

/// The C type an access reads or writes, in a form another unit can match.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EffectType {
    /// An arithmetic type (no ids inside, so it matches across units).
    Scalar(Type),
    /// Another type, by id in the table of the defining unit.
    InUnit(usize, TypeId),
    /// Raw bytes (`memcpy`): aliases everything.
    Bytes,
}

/// One access of a summary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Effect {
    pub base: Base,
    pub is_store: bool,
    pub elem_bytes: u64,
    pub ty: EffectType,
    /// Byte offset from the base over the function's scalar parameters and its range
    /// variables; `Err` says why it is an unknown offset within the object.
    pub offset: Result<Expr, String>,
    /// Some calls of the function may skip it (it is under a condition).
    pub conditional: bool,
    /// A store made on every call, at every value of the range variables its offset
    /// mentions: no path skips it, and every loop around it covers exactly its range (step
    /// 1 or -1, left only at its header's test, its variable in the offset), so that its
    /// bytes are written whenever the function returns (see [`swept`]). A loop that runs
    /// zero times writes an empty section. Never set when unsure.
    pub must: bool,
    /// A load of bytes the same call has certainly written before it (a must-write of the
    /// function on every path to it covers them): it never sees a value from before the
    /// call.
    pub covered: bool,
    /// The functions below this one the access is made in, outermost first (empty: in the
    /// function itself).
    pub through: Vec<String>,
}

/// A variable of a summary: an induction variable of one of its loops (or of a callee's,
/// instantiated), ranging over `[lo, hi]`; bounds mention parameters and earlier variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeVar {
    pub var: Var,
    pub lo: Expr,
    pub hi: Expr,
}

/// The side effects of one function.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub function: String,
    /// The symbol of each parameter (what offsets and ranges are written over).
    pub params: Vec<Option<Var>>,
    pub effects: Vec<Effect>,
    pub ranges: Vec<RangeVar>,
    /// Why some effects are not known (then they are not in `effects`): "is recursive".
    pub unknown: Unknowns,
    /// Host library functions it reaches (their effects are not modelled: the call is
    /// host-only anyway).
    pub host_calls: Vec<String>,
    /// The allocation functions (`malloc`, `free`) it calls, directly or through callees.
    pub allocators: Vec<String>,
    /// The recursive functions it is or calls, whose effects are summarized over every depth
    /// (see [`recursion`]): a GPU thread running it needs stack for the deepest one.
    pub recursive: Vec<String>,
    /// Expressions over the parameters assumed positive, with why: a divisor whose
    /// quotients are ranges (`n` in `ij % n`), the trip count of a loop whose accesses count
    /// as made on every call. A caller reports them with its arguments substituted.
    pub assumptions: Vec<(Expr, String)>,
    /// The globals it touches only to update them as one reduction, itself or through its
    /// callees ([`updates`]).
    pub updates: Vec<GlobalUpdate>,
}

impl Summary {
    /// Neither reads nor writes memory outside its frame, and everything is known.
    pub fn is_pure(&self) -> bool {
        self.effects.is_empty() && self.unknown.is_empty() && self.host_calls.is_empty()
    }

    /// Only reads memory outside its frame.
    pub fn is_read_only(&self) -> bool {
        self.unknown.is_empty() && self.effects.iter().all(|e| !e.is_store)
    }

    /// The summary in words, one line per base and direction:
    /// `param out: writes [0, 8*n)`, `global counter: reads and writes [0, 4)`.
    pub fn describe(&self, param_names: &[Option<String>]) -> Vec<String> {
        // The whole space's signs, for joining sections; each offset is bounded over the
        // ranges it reaches alone (see `reached_by`).
        let env = self.space_env();
        let mut positions: HashMap<Var, Vec<usize>> = HashMap::new();
        for (k, r) in self.ranges.iter().enumerate() {
            positions.entry(r.var.clone()).or_default().push(k);
        }
        let ivs: Vec<std::cell::OnceCell<IvRange>> =
            self.ranges.iter().map(|_| Default::default()).collect();
        // (base, is a write, section, why part of it is at an unknown offset)
        type Line = (String, bool, Option<(Expr, Expr)>, Option<String>);
        let mut grouped: Vec<Line> = Vec::new();
        for e in &self.effects {
            let base = match &e.base {
                Base::Param(i) => format!(
                    "param `{}`",
                    param_names
                        .get(*i as usize)
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| format!("#{i}"))
                ),
                Base::Global { name, .. } => format!("global `{name}`"),
                Base::Deref { name, .. } => format!("`*{name}`"),
                Base::Opaque(name) => format!("`{name}`"),
            };
            let (section, unknown) = match &e.offset {
                Ok(offset) => {
                    let mut assumptions = Vec::new();
                    let reached = self.reached_by(offset, &positions, &ivs, &env);
                    let lo = extreme(offset, &reached, false, &mut assumptions);
                    let hi = extreme(offset, &reached, true, &mut assumptions).and_then(|h| {
                        h.checked_add(&Expr::integer(BigInt::from(e.elem_bytes)))
                            .ok()
                    });
                    match (lo, hi) {
                        (Some(lo), Some(hi)) => (Some((lo, hi)), None),
                        _ => (None, Some("not monotonic".to_string())),
                    }
                }
                Err(why) => (None, Some(why.clone())),
            };
            match grouped
                .iter_mut()
                .find(|(b, s, _, _)| *b == base && *s == e.is_store)
            {
                Some(entry) => {
                    if entry.3.is_none() {
                        entry.3 = unknown;
                    }
                    entry.2 = match (entry.2.take(), section) {
                        (Some((a, b)), Some((c, d))) => {
                            let lo = symbolic::get_min(&a, &c, &env).ok();
                            let hi = symbolic::get_max(&b, &d, &env).ok();
                            lo.zip(hi)
                        }
                        (x, None) | (None, x) => x,
                    };
                }
                None => grouped.push((base, e.is_store, section, unknown)),
            }
        }
        let mut out: Vec<String> = grouped
            .into_iter()
            .map(|(base, is_store, section, unknown)| {
                let verb = if is_store { "writes" } else { "reads" };
                match (section, unknown) {
                    (Some((lo, hi)), None) => {
                        format!("{base}: {verb} [{}, {})", lo.to_c(), hi.to_c())
                    }
                    (Some((lo, hi)), Some(why)) => format!(
                        "{base}: {verb} [{}, {}) and at an unknown offset ({why})",
                        lo.to_c(),
                        hi.to_c()
                    ),
                    (None, Some(why)) => format!("{base}: {verb} at an unknown offset ({why})"),
                    (None, None) => format!("{base}: {verb}"),
                }
            })
            .collect();
        let (listed, unlisted) = self.unknown.listed();
        out.extend(listed.iter().map(|u| format!("unknown: {u}")));
        if unlisted > 0 {
            out.push(format!("unknown: {unlisted} more reasons"));
        }
        out.extend(
            self.host_calls
                .iter()
                .map(|h| format!("calls the host function `{h}`")),
        );
        if out.is_empty() {
            out.push("pure".into());
        }
        out
    }

    /// The signs of [`Self::space`].
    fn space_env(&self) -> SignEnv {
        let mut env = SignEnv::new();
        for r in &self.ranges {
            env.set(r.var.clone(), sign_from_lower(&r.lo));
        }
        env
    }

    /// The part of [`Self::space`] that [`extreme`] of `e` reads: the ranges `e` names and,
    /// in turn, those their bounds name, in the same order and with the same loop ids, with
    /// the signs of those variables alone. [`extreme`] substitutes only variables the
    /// expression holds and reads only their signs, so its results over this space are the
    /// same as over the whole. A summary holds every range of every callee (thousands in a
    /// library's top functions): bounding each effect over all of them, and making all of
    /// them into loops, made describing it quadratic. `positions` holds each variable's
    /// ranges, `ivs` the ranges made into loops so far, `env` the whole space's signs.
    fn reached_by(
        &self,
        e: &Expr,
        positions: &HashMap<Var, Vec<usize>>,
        ivs: &[std::cell::OnceCell<IvRange>],
        env: &SignEnv,
    ) -> Space {
        let mut names: HashSet<Var> = e.vars().into_iter().collect();
        let kept = reached_ranges(&self.ranges, positions, &mut names);
        Space {
            ivs: (0..self.ranges.len())
                .filter(|&k| kept[k])
                .map(|k| {
                    ivs[k]
                        .get_or_init(|| range_to_iv(&self.ranges[k], synthetic_loop(k)))
                        .clone()
                })
                .collect(),
            env: env.restricted_to(&names),
            assumptions: Vec::new(),
        }
    }

    /// The range variables as an iteration space (for extremes over them).
    pub fn space(&self) -> Space {
        let mut env = SignEnv::new();
        let ivs = self
            .ranges
            .iter()
            .enumerate()
            .map(|(k, r)| {
                env.set(r.var.clone(), sign_from_lower(&r.lo));
                range_to_iv(r, synthetic_loop(k))
            })
            .collect();
        Space {
            ivs,
            env,
            assumptions: Vec::new(),
        }
    }
}

/// A loop id no real loop has, for range variables placed in an iteration space.
pub fn synthetic_loop(k: usize) -> LoopId {
    LoopId(u32::MAX - (k as u32).min(u32::MAX / 2))
}

/// A range variable as an innermost "loop" of an iteration space.
pub fn range_to_iv(r: &RangeVar, loop_id: LoopId) -> IvRange {
    let one = Expr::constant(1);
    let trips =
        r.hi.checked_sub(&r.lo)
            .and_then(|d| d.checked_add(&one))
            .unwrap_or_else(|_| one.clone());
    let bound = r.hi.checked_add(&one).unwrap_or_else(|_| r.hi.clone());
    IvRange {
        loop_id,
        var: r.var.clone(),
        init: r.lo.clone(),
        lo: r.lo.clone(),
        hi: r.hi.clone(),
        trips,
        step: 1,
        bound,
    }
}

/// The sign a variable has when its lower bound is a known integer.
pub fn sign_from_lower(lo: &Expr) -> SignSet {
    match lo.as_integer() {
        Some(v) if v > BigInt::from(0) => SignSet::POS,
        Some(v) if v == BigInt::from(0) => SignSet::NON_NEG,
        _ => SignSet::TOP,
    }
}

/// The summaries of a program, computed on demand and kept.
pub struct Summaries<'v> {
    view: &'v ProgramView<'v>,
    /// The call graph's strongly connected components, callees before callers.
    components: Vec<Vec<FuncRef>>,
    component_of: HashMap<FuncRef, usize>,
    /// Components where a function calls itself, directly or through others.
    recursive: HashSet<usize>,
    edges: HashMap<FuncRef, Vec<FuncRef>>,
    cache: Mutex<HashMap<FuncRef, Arc<Summary>>>,
    /// Per component, set once its members' summaries are in `cache`.
    made: Vec<OnceLock<()>>,
    /// Each function's loops and reconstruction (default configuration), made once: a
    /// function is reconstructed for its own loops, as a callee to summarize and as a
    /// caller whose arguments tell its callee's parameters apart.
    reconstructed: Mutex<HashMap<FuncRef, Arc<Reconstructed>>>,
    /// The functions that call or are called (directly, or through pointers resolved):
    /// only their reconstructions are asked for again, so only theirs are kept. A file of
    /// many functions that call nothing kept every function's until the end (100 KB each).
    in_calls: HashSet<FuncRef>,
    /// Per unit, the callees' reconstructions those share: a helper is reconstructed
    /// once for all its callers, not once per caller.
    callee_memos: Vec<CalleeMemo>,
    /// Each summary in words ([`Summary::describe`] with the function's parameter names),
    /// made once: every loop that calls a function lists its effects, and bounding each
    /// section over the callee's ranges is the costly part of a report with many calls.
    described: Mutex<HashMap<FuncRef, Arc<Vec<String>>>>,
}

/// The value behind `m`, whether or not a worker panicked while holding it (the maps
/// only ever gain complete entries).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A function's loop forest and its reconstruction under the default configuration.
#[derive(Debug)]
pub struct Reconstructed {
    pub forest: LoopForest,
    pub rec: Arc<Reconstruction>,
}

impl std::fmt::Debug for Summaries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summaries")
            .field("functions", &self.component_of.len())
            .field("computed", &lock(&self.cache).len())
            .finish()
    }
}

impl<'v> Summaries<'v> {
    /// Builds the call graph of the program (direct calls, resolved program-wide).
    pub fn new(view: &'v ProgramView<'v>) -> Self {
        let mut graph = petgraph::graph::DiGraph::<FuncRef, ()>::new();
        let mut node = HashMap::new();
        for f in view.functions() {
            node.insert(f, graph.add_node(f));
        }
        let mut edges: HashMap<FuncRef, Vec<FuncRef>> = HashMap::new();
        let mut self_calls = HashSet::new();
        for f in view.functions() {
            let mut targets = Vec::new();
            for name in crate::indirect::resolved_callees(view, f) {
                if let Some(g) = view.resolve(f.unit, &name) {
                    if g == f {
                        self_calls.insert(f);
                    }
                    graph.add_edge(node[&f], node[&g], ());
                    targets.push(g);
                }
            }
            edges.insert(f, targets);
        }
        let mut in_calls: HashSet<FuncRef> = HashSet::new();
        for (f, targets) in &edges {
            if !targets.is_empty() {
                in_calls.insert(*f);
                in_calls.extend(targets.iter().copied());
            }
        }
        for (callee, calls) in &view.call_index().callers {
            in_calls.insert(*callee);
            in_calls.extend(calls.iter().map(|(caller, _)| *caller));
        }
        // Tarjan's algorithm yields components in reverse topological order: callees first.
        let components: Vec<Vec<FuncRef>> = petgraph::algo::tarjan_scc(&graph)
            .into_iter()
            .map(|c| c.into_iter().map(|n| graph[n]).collect())
            .collect();
        let mut component_of = HashMap::new();
        let mut recursive = HashSet::new();
        for (k, c) in components.iter().enumerate() {
            for f in c {
                component_of.insert(*f, k);
            }
            if c.len() > 1 || c.iter().any(|f| self_calls.contains(f)) {
                recursive.insert(k);
            }
        }
        Summaries {
            view,
            made: (0..components.len()).map(|_| OnceLock::new()).collect(),
            components,
            component_of,
            recursive,
            edges,
            cache: Mutex::default(),
            reconstructed: Mutex::default(),
            in_calls,
            callee_memos: view.units().iter().map(|_| CalleeMemo::new()).collect(),
            described: Mutex::default(),
        }
    }

    pub fn view(&self) -> &'v ProgramView<'v> {
        self.view
    }

    /// The loops and reconstruction of `f` (default configuration), made on first use.
    pub fn reconstructed(&self, f: FuncRef) -> Arc<Reconstructed> {
        self.reconstructed_from(f, None)
    }

    /// [`Self::reconstructed`], given `f`'s loop forest when the caller has it already.
    pub fn reconstructed_from(&self, f: FuncRef, forest: Option<LoopForest>) -> Arc<Reconstructed> {
        if let Some(r) = lock(&self.reconstructed).get(&f) {
            return r.clone();
        }
        let func = self.view.function(f);
        let forest = forest.unwrap_or_else(|| analyze_loops(func));
        let rec = reconstruct_sharing(
            self.view.program(f),
            func,
            &forest,
            &ReconstructConfig::default(),
            &self.callee_memos[f.unit],
        );
        let made = Arc::new(Reconstructed {
            forest,
            rec: Arc::new(rec),
        });
        if !self.in_calls.contains(&f) {
            return made;
        }
        // Another worker may have made it meanwhile: the same, so either copy will do.
        lock(&self.reconstructed).entry(f).or_insert(made).clone()
    }

    /// The summary of `f` in words ([`Summary::describe`] with `f`'s parameter names),
    /// made on first use.
    pub fn described(&self, f: FuncRef) -> Arc<Vec<String>> {
        if let Some(d) = lock(&self.described).get(&f) {
            return d.clone();
        }
        let made = Arc::new(self.of(f).describe(&param_names(self.view.function(f))));
        // Another worker may have made it meanwhile: the same, so either copy will do.
        lock(&self.described).entry(f).or_insert(made).clone()
    }

    /// Summarizes every function that `roots` reach, in parallel: the call graph's
    /// components level by level (a component's callees are in lower levels), each level's
    /// components at once. [`Self::of`] then finds them made.
    pub fn prepare(&self, roots: &[FuncRef]) {
        let reach = self.reachable(roots.iter().copied());
        let mut level = vec![0usize; self.components.len()];
        let mut levels: Vec<Vec<usize>> = Vec::new();
        // Components come callees first, so each one's callees have their levels already.
        for (k, component) in self.components.iter().enumerate() {
            if !component.iter().any(|g| reach.contains(g)) {
                continue;
            }
            let below = component
                .iter()
                .flat_map(|g| self.edges.get(g).into_iter().flatten())
                .filter_map(|h| self.component_of.get(h))
                .filter(|&&c| c != k)
                .map(|&c| level[c] + 1)
                .max()
                .unwrap_or(0);
            level[k] = below;
            if levels.len() <= below {
                levels.resize(below + 1, Vec::new());
            }
            levels[below].push(k);
        }
        for components in &levels {
            crate::parallel::map(components, |&k| self.make(k));
        }
    }

    /// The functions `roots` reach through direct calls, `roots` included.
    fn reachable(&self, roots: impl Iterator<Item = FuncRef>) -> HashSet<FuncRef> {
        let mut reach: HashSet<FuncRef> = roots.collect();
        let mut stack: Vec<FuncRef> = reach.iter().copied().collect();
        while let Some(g) = stack.pop() {
            for h in self.edges.get(&g).into_iter().flatten() {
                if reach.insert(*h) {
                    stack.push(*h);
                }
            }
        }
        reach
    }

    /// Summarizes component `k`, whose callees are summarized, unless done already. One
    /// worker makes a component; another that needs it meanwhile waits for it rather than
    /// making it again (no wait happens while a component is being made).
    fn make(&self, k: usize) {
        self.made[k].get_or_init(|| {
            let component = &self.components[k];
            if self.recursive.contains(&k) {
                self.summarize_recursive(component);
            } else {
                for g in component {
                    let s = self.build(*g, &HashSet::new());
                    lock(&self.cache).insert(*g, Arc::new(s));
                }
            }
        });
    }

    /// The summary of `f`, computing it (and those of everything it calls) when needed.
    pub fn of(&self, f: FuncRef) -> Arc<Summary> {
        if let Some(s) = lock(&self.cache).get(&f) {
            return s.clone();
        }
        // Everything `f` reaches, then each component in callees-first order.
        let reach = self.reachable(std::iter::once(f));
        for (k, component) in self.components.iter().enumerate() {
            if component.iter().any(|g| reach.contains(g)) {
                self.make(k);
            }
        }
        lock(&self.cache)
            .get(&f)
            .cloned()
            .unwrap_or_else(|| Arc::new(Summary::default()))
    }

    /// A recursive component: pure when no member touches memory outside its frame (the
    /// recursive calls then do not either); a function calling itself, the accesses of
    /// every depth ([`recursion`]); otherwise unknown.
    fn summarize_recursive(&self, component: &[FuncRef]) {
        let members: HashSet<FuncRef> = component.iter().copied().collect();
        // Members are built independently (calls among them are skipped): in parallel, as a
        // large program's one big cycle (sqlite3's parser and code generator: hundreds of
        // functions) would otherwise be made by one worker.
        let built: Vec<(FuncRef, Summary)> =
            crate::parallel::map(component, |g| (*g, self.build(*g, &members)));
        let pure = built.iter().all(|(_, s)| s.is_pure());
        if let ([f], [(_, direct)], false) = (component, built.as_slice(), pure) {
            let is_self = |name: &str| self.view.resolve(f.unit, name) == Some(*f);
            if let Some(mut s) = recursion::self_recursive(self.view.function(*f), is_self, direct)
            {
                dedup(&mut s.effects);
                if s.effects.len() > MAX_EFFECTS {
                    collapse(&mut s.effects);
                }
                prune_ranges(&mut s);
                s.recursive.sort();
                s.recursive.dedup();
                lock(&self.cache).insert(*f, Arc::new(s));
                return;
            }
        }
        let names: Vec<String> = component
            .iter()
            .map(|g| format!("`{}`", self.view.function(*g).name))
            .collect();
        for (g, mut s) in built {
            if !pure {
                s.effects.clear();
                s.ranges.clear();
                let why = if component.len() == 1 {
                    "is recursive: its memory effects are not summarized".to_string()
                } else {
                    format!(
                        "is recursive (through {}): its memory effects are not summarized",
                        names.join(", ")
                    )
                };
                s.unknown = Unknowns::one(why);
            }
            lock(&self.cache).insert(g, Arc::new(s));
        }
    }

    /// The summary of one function whose callees (outside `skip`) are summarized already.
    fn build(&self, f: FuncRef, skip: &HashSet<FuncRef>) -> Summary {
        let func = self.view.function(f);
        let made = self.reconstructed(f);
        let (forest, rec) = (&made.forest, &made.rec);
        let mut b = Builder {
            summaries: self,
            f,
            func,
            forest,
            rec,
            ranges_of_loop: HashMap::new(),
            exact: HashMap::new(),
            summary: Summary {
                function: func.name.clone(),
                params: func
                    .params
                    .iter()
                    .map(|p| rec.symbol(p.value).cloned())
                    .collect(),
                ..Summary::default()
            },
            fresh: Fresh::default(),
            private: private_allocations(func, &func.users()),
            quotients: HashSet::new(),
            exit_bounds: HashMap::new(),
            exit_vars: HashMap::new(),
            unknown: unknowns::Gathered::default(),
            param_copies: Default::default(),
        };
        b.loop_ranges();
        // Where each effect is made: its block and instruction index.
        let mut positions: Vec<(Block, usize)> = Vec::new();
        for block in func.blocks() {
            for (k, &v) in func.block(block).insts.iter().enumerate() {
                match &func.inst(v).kind {
                    InstKind::Load { addr } => b.own_access(block, v, *addr, false),
                    InstKind::Store { addr, .. } => b.own_access(block, v, *addr, true),
                    InstKind::Call { callee, args } => b.call(block, callee, args, skip),
                    _ => {}
                }
                positions.resize(b.summary.effects.len(), (block, k));
            }
        }
        b.mark_covered(&positions);
        let mut summary = b.summary;
        summary.unknown = b.unknown.finish();
        dedup(&mut summary.effects);
        summary.host_calls.sort();
        summary.host_calls.dedup();
        summary.assumptions.sort();
        summary.assumptions.dedup();
        summary.allocators.sort();
        summary.allocators.dedup();
        summary.recursive.sort();
        summary.recursive.dedup();
        if summary.effects.len() > MAX_EFFECTS {
            collapse(&mut summary.effects);
        }
        // Not inside a recursive component: its members' summaries are being made.
        let view = self.view;
        let program = view.program(f);
        if skip.is_empty() {
            summary.updates = updates::global_updates(
                program,
                f.unit,
                func,
                forest,
                &summary.effects,
                &|name: &str| view.resolve(f.unit, name).map(|g| self.of(g)),
            );
        }
        prune_ranges(&mut summary);
        summary
    }
}

/// Drops the ranges that nothing of the summary names: keeps those its offsets, the
/// locations of its pointers read and its assumptions mention and, in turn, those their
/// bounds mention, in their order. Every caller takes in each range of each callee at each
/// call (renamed), so a summary held every range of its whole call tree (spglib's
/// `get_spacegroup_and_primitive`: 231,175 ranges, none of them named by an effect), and
/// each instantiation, at each call site summarized and in each loop analysed, renamed
/// them all. Every use of the ranges (sections, sweeps, extremes, the spaces of the
/// dependence tests) reads only those an expression reaches through the bounds, so the
/// ranges dropped never changed a result.
fn prune_ranges(summary: &mut Summary) {
    let mut positions: HashMap<&Var, Vec<usize>> = HashMap::new();
    for (k, r) in summary.ranges.iter().enumerate() {
        positions.entry(&r.var).or_default().push(k);
    }
    let mut named: HashSet<Var> = HashSet::new();
    for e in &summary.effects {
        if let Ok(offset) = &e.offset {
            named.extend(offset.vars());
        }
        if let Base::Deref { at, .. } = &e.base {
            named.extend(at.vars());
        }
    }
    for (a, _) in &summary.assumptions {
        named.extend(a.vars());
    }
    let mut kept = reached_ranges(&summary.ranges, &positions, &mut named).into_iter();
    summary.ranges.retain(|_| kept.next().unwrap_or(true));
}

/// Which of `ranges` the variables `names` reach: the ranges of those variables and, in
/// turn, the ranges of the variables their bounds name (`names` grows by each variable
/// met). `positions` holds each variable's ranges.
fn reached_ranges<K>(
    ranges: &[RangeVar],
    positions: &HashMap<K, Vec<usize>>,
    names: &mut HashSet<Var>,
) -> Vec<bool>
where
    K: std::borrow::Borrow<Var> + Eq + std::hash::Hash,
{
    let mut stack: Vec<Var> = names.iter().cloned().collect();
    let mut kept = vec![false; ranges.len()];
    while let Some(v) = stack.pop() {
        for &k in positions.get(&v).into_iter().flatten() {
            if std::mem::replace(&mut kept[k], true) {
                continue;
            }
            let r = &ranges[k];
            for w in r.lo.vars().into_iter().chain(r.hi.vars()) {
                if names.insert(w.clone()) {
                    stack.push(w);
                }
            }
        }
    }
    kept
}

/// `m / b` when `b` is one variable that divides every term of the polynomial `m`.
fn exact_quotient(m: &Expr, b: &Expr) -> Option<Expr> {
    use symbolic::{Atom, Monomial, Poly};
    let var = b.as_poly()?.as_var()?.clone();
    let mut terms = Vec::new();
    for (monomial, c) in m.as_poly()?.terms() {
        let mut divided = Monomial::one();
        let mut found = false;
        for (atom, exponent) in monomial.factors() {
            let mut exponent = *exponent;
            if !found && matches!(atom, Atom::Var(w) if *w == var) {
                found = true;
                exponent -= 1;
            }
            for _ in 0..exponent {
                divided = divided.mul(&Monomial::atom(atom.clone()));
            }
        }
        if !found {
            return None;
        }
        terms.push((divided, c.clone()));
    }
    Some(Expr::Poly(Poly::from_terms(terms)))
}

/// Merges equal accesses: the bytes are written on every call when one of the stores is
/// made on every call; a load is covered only when each of the merged ones is.
fn dedup(effects: &mut Vec<Effect>) {
    let mut index: HashMap<Effect, usize> = HashMap::new();
    let mut out: Vec<Effect> = Vec::new();
    for e in effects.drain(..) {
        let key = Effect {
            must: false,
            covered: false,
            ..e.clone()
        };
        match index.get(&key) {
            Some(&k) => {
                out[k].must |= e.must;
                out[k].covered &= e.covered;
            }
            None => {
                index.insert(key, out.len());
                out.push(e);
            }
        }
    }
    *effects = out;
}

/// Too many accesses: one access per object and direction, at an unknown offset.
fn collapse(effects: &mut Vec<Effect>) {
    for e in effects.iter_mut() {
        e.offset = Err("too many accesses to summarize".into());
        e.through.clear();
        e.conditional = true;
        e.must = false;
        e.covered = false;
    }
    let mut seen = HashSet::new();
    effects.retain(|e| seen.insert((e.base.clone(), e.is_store, e.elem_bytes, e.ty.clone())));
}

/// Values that hold the result of an allocation (`malloc`) that never leaves the function:
/// not stored to memory, not returned. Memory reached through them is private to one call.
pub fn private_allocations(func: &Function, users: &[Vec<Value>]) -> HashSet<Value> {
    let mut out = HashSet::new();
    for v in func.values() {
        let InstKind::Call {
            callee: Callee::Direct(name),
            ..
        } = &func.inst(v).kind
        else {
            continue;
        };
        if !matches!(name.as_str(), "malloc" | "calloc" | "aligned_alloc") {
            continue;
        }
        // Follow the pointer through casts, offsets, phis and selects.
        let mut derived = vec![v];
        let mut seen = HashSet::from([v]);
        let mut escapes = false;
        while let Some(x) = derived.pop() {
            for &u in &users[x.index()] {
                match &func.inst(u).kind {
                    InstKind::Store { value, .. } if *value == x => escapes = true,
                    InstKind::Cast(_)
                    | InstKind::PtrAdd { .. }
                    | InstKind::FieldAddr { .. }
                    | InstKind::Phi(_)
                    | InstKind::Select { .. }
                        if seen.insert(u) =>
                    {
                        derived.push(u);
                    }
                    _ => {}
                }
            }
            if func
                .blocks()
                .any(|b| matches!(func.block(b).terminator, Terminator::Return(Some(r)) if r == x))
            {
                escapes = true;
            }
        }
        if !escapes {
            out.extend(seen);
        }
    }
    out
}

/// Whether some executions of the function skip `block`: it is under a condition inside its
/// loops, or does not lie on every path to a return. Loops are assumed to run at least once,
/// as everywhere in the reports.
pub fn conditional_in_function(forest: &LoopForest, block: Block) -> bool {
    let mut current = block;
    let mut level = forest.innermost(block);
    while let Some(id) = level {
        let l = forest.loop_(id);
        if !l
            .latches
            .iter()
            .all(|latch| forest.dominates(current, *latch))
        {
            return true;
        }
        current = l.header;
        level = l.parent;
    }
    !forest.on_every_path_to_return(current)
}

/// The effects of a C library function on memory, as a summary over its arguments, for
/// those modelled: `memcpy`/`memmove`/`memset` and the math functions that write through a
/// pointer (`frexp`, `modf`).
pub fn library_summary(name: &str) -> Option<Summary> {
    let param = |k: usize| Var::new(&format!("arg{k}@{name}"));
    let params: Vec<Option<Var>> = (0..3).map(|k| Some(param(k))).collect();
    let t = Var::new(&format!("byte@{name}"));
    let bytes = |p: u32, is_store: bool| Effect {
        base: Base::Param(p),
        is_store,
        elem_bytes: 1,
        ty: EffectType::Bytes,
        offset: Ok(Expr::var(t.name())),
        conditional: false,
        must: is_store,
        covered: false,
        through: Vec::new(),
    };
    // Bytes [0, n): `t` over [0, n - 1], with `n` the last argument.
    let range = |n: usize| RangeVar {
        var: t.clone(),
        lo: Expr::constant(0),
        hi: Expr::var(param(n).name())
            .checked_sub(&Expr::constant(1))
            .unwrap_or_else(|_| Expr::constant(0)),
    };
    use frontend::types::{FloatKind, IntRank};
    let one = |ty: Type, size: u64| Effect {
        base: Base::Param(1),
        is_store: true,
        elem_bytes: size,
        ty: EffectType::Scalar(ty),
        offset: Ok(Expr::constant(0)),
        conditional: false,
        must: true,
        covered: false,
        through: Vec::new(),
    };
    let int = Type::Int {
        rank: IntRank::Int,
        signed: true,
    };
    let (effects, ranges) = match name {
        "memcpy" | "memmove" => (vec![bytes(0, true), bytes(1, false)], vec![range(2)]),
        "memset" => (vec![bytes(0, true)], vec![range(2)]),
        "frexp" | "frexpf" => (vec![one(int, 4)], Vec::new()),
        "modf" => (vec![one(Type::Float(FloatKind::Double), 8)], Vec::new()),
        "modff" => (vec![one(Type::Float(FloatKind::Float), 4)], Vec::new()),
        _ => return None,
    };
    Some(Summary {
        function: name.to_string(),
        params,
        effects,
        ranges,
        ..Summary::default()
    })
}

/// The bytes `[lo, hi)` a store of `elem_bytes` at `offset` writes over every value of the
/// range variables of `ranges` (outermost first) its offset mentions, when consecutive
/// values write adjacent bytes (`8*k` for 8-byte elements; `24*j + 8*k` for `k` then `j`
/// when `k` covers `[0, 2]`). `None` when a range variable is left that does not sweep. An
/// empty range gives an empty (or reversed) interval, which covers nothing.
pub fn swept(
    offset: &Expr,
    elem_bytes: u64,
    ranges: &[RangeVar],
    env: &SignEnv,
) -> Option<(Expr, Expr)> {
    let mut lo = offset.clone();
    let mut hi = offset
        .checked_add(&Expr::integer(BigInt::from(elem_bytes)))
        .ok()?;
    let zero = |e: Result<Expr, _>| {
        e.ok()
            .and_then(|e: Expr| e.as_integer())
            .is_some_and(|d| d == BigInt::from(0))
    };
    for r in ranges.iter().rev() {
        let k = &r.var;
        if !lo.contains_var(k) && !hi.contains_var(k) {
            continue;
        }
        let next = HashMap::from([(
            k.clone(),
            Expr::var(k.name()).checked_add(&Expr::constant(1)).ok()?,
        )]);
        let stride = lo.substitute(&next).ok()?.checked_sub(&lo).ok()?;
        let width = hi.checked_sub(&lo).ok()?;
        if stride.contains_var(k) || width.contains_var(k) {
            return None;
        }
        let at = |e: &Expr, value: &Expr| {
            e.substitute(&HashMap::from([(k.clone(), value.clone())]))
                .ok()
        };
        let sign = symbolic::compare(&stride, &Expr::constant(0), env);
        if zero(stride.checked_sub(&width)) && sign == symbolic::Cmp::Greater {
            (lo, hi) = (at(&lo, &r.lo)?, at(&hi, &r.hi)?);
        } else if zero(stride.checked_add(&width)) && sign == symbolic::Cmp::Less {
            (lo, hi) = (at(&lo, &r.hi)?, at(&hi, &r.lo)?);
        } else {
            return None;
        }
    }
    let left = ranges
        .iter()
        .any(|r| lo.contains_var(&r.var) || hi.contains_var(&r.var));
    (!left).then_some((lo, hi))
}

/// Where an instantiated access lies, in the caller's terms.
#[derive(Clone, Debug)]
pub enum Place {
    /// `address + offset` for each alternative of the pointer argument's expression.
    Address(Vec<Expr>),
    Global {
        name: String,
        unit: Option<usize>,
    },
    /// The object a pointer read at `at` (alternatives, caller expressions) points into.
    Deref {
        at: Vec<Expr>,
        name: String,
    },
    Opaque(String),
}

/// A callee's access at one call site.
#[derive(Clone, Debug)]
pub struct Instantiated {
    pub place: Place,
    pub effect: Effect,
}

/// A summary instantiated at one call site: the accesses with parameters replaced by the
/// arguments' expressions and range variables renamed to fresh caller variables.
#[derive(Clone, Debug, Default)]
pub struct Instance {
    pub accesses: Vec<Instantiated>,
    pub ranges: Vec<RangeVar>,
    /// Reasons, in the caller's words ("calls `f`, which is recursive").
    pub unknown: Unknowns,
    /// The summary's assumptions (each `> 0`, with why) with the arguments substituted.
    pub assumptions: Vec<(Expr, String)>,
}

/// Fresh variable names for one scope (a function being summarized, a loop being analysed):
/// `k@get_dm#3`. `@` never occurs in a program's symbols, so they cannot collide.
/// Given the line of the call being instantiated, a callee's variable names it too,
/// `k@get_dm:118`, so a report tells two calls' copies apart by the source.
#[derive(Debug, Default)]
pub struct Fresh {
    count: usize,
    call_line: Option<u32>,
}

impl Fresh {
    pub fn var(&mut self, stem: &str, callee: &str) -> Var {
        self.count += 1;
        let stem = stem.split(['@', '#']).next().unwrap_or(stem);
        match self.call_line {
            Some(line) => Var::new(&format!("{stem}@{callee}:{line}#{}", self.count)),
            None => Var::new(&format!("{stem}@{callee}#{}", self.count)),
        }
    }

    /// The line of the call whose callee's variables come next (0: not known).
    pub fn at_call_line(&mut self, line: u32) {
        self.call_line = (line != 0).then_some(line);
    }

    /// A fresh variable that reads as `text` (with a number to keep it unique).
    pub fn named(&mut self, text: &str) -> Var {
        self.count += 1;
        Var::new(&format!("{text}#{}", self.count))
    }
}

/// The caller expressions of a call's `args` for [`instantiate`]. A struct or union passed
/// by value stands for the object it is loaded from, by that object's address: a pointer
/// the callee reads out of its copy (`d.p` of a parameter `D d`) is the pointer at the same
/// offset of that object (see `Builder::pointer_param`).
pub fn argument_exprs(
    func: &Function,
    types: &frontend::types::TypeTable,
    rec: &Reconstruction,
    args: &[Value],
) -> Vec<Vec<Expr>> {
    args.iter()
        .map(|&a| {
            let inst = func.inst(a);
            match inst.kind {
                InstKind::Load { addr } if matches!(types.get(inst.ty), Type::Record(_)) => {
                    rec.of(addr).to_vec()
                }
                _ => rec.of(a).to_vec(),
            }
        })
        .collect()
}

/// Instantiates `summary` (of `callee`) with the arguments' alternatives (caller
/// expressions; an empty list for an argument with no expression).
pub fn instantiate(
    summary: &Summary,
    callee: &str,
    args: &[Vec<Expr>],
    fresh: &mut Fresh,
) -> Instance {
    let mut map: HashMap<Var, Expr> = HashMap::new();
    // Parameters whose argument has no single expression: anything over them is unknown.
    let mut unusable: HashSet<Var> = HashSet::new();
    for (i, p) in summary.params.iter().enumerate() {
        let Some(p) = p else { continue };
        match args.get(i).map(Vec::as_slice) {
            Some([e]) => {
                map.insert(p.clone(), e.clone());
            }
            _ => {
                unusable.insert(p.clone());
            }
        }
    }
    let mut instance = Instance::default();
    for r in &summary.ranges {
        let uses_unusable =
            r.lo.vars()
                .iter()
                .chain(r.hi.vars().iter())
                .any(|v| unusable.contains(v));
        let renamed = fresh.var(r.var.name(), callee);
        let bounds = (!uses_unusable)
            .then(|| Some((r.lo.substitute(&map).ok()?, r.hi.substitute(&map).ok()?)))
            .flatten();
        match bounds {
            Some((lo, hi)) => {
                instance.ranges.push(RangeVar {
                    var: renamed.clone(),
                    lo,
                    hi,
                });
                map.insert(r.var.clone(), Expr::var(renamed.name()));
            }
            None => {
                unusable.insert(r.var.clone());
            }
        }
    }
    for e in &summary.effects {
        let place = match &e.base {
            Base::Param(i) => Place::Address(args.get(*i as usize).cloned().unwrap_or_default()),
            Base::Global { name, unit } => Place::Global {
                name: name.clone(),
                unit: *unit,
            },
            Base::Deref { param, at, name } => {
                let at = at.substitute(&map).ok();
                let locations = args
                    .get(*param as usize)
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.checked_add(at.as_ref()?).ok())
                    .collect();
                Place::Deref {
                    at: locations,
                    name: name.clone(),
                }
            }
            Base::Opaque(name) => Place::Opaque(name.clone()),
        };
        let offset = match &e.offset {
            Ok(o) => match o.vars().into_iter().find(|v| unusable.contains(v)) {
                Some(v) => Err(format!(
                    "`{}` depends on `{}`, which has no single value at the call",
                    callee,
                    v.name().split('@').next().unwrap_or(v.name())
                )),
                None => o
                    .substitute(&map)
                    .map_err(|err| format!("the offset is too large: {err}")),
            },
            Err(why) => Err(why.clone()),
        };
        let mut through = vec![callee.to_string()];
        through.extend(e.through.iter().cloned());
        instance.accesses.push(Instantiated {
            place,
            effect: Effect {
                must: e.must && offset.is_ok(),
                offset,
                through,
                ..e.clone()
            },
        });
    }
    instance.assumptions = summary
        .assumptions
        .iter()
        .filter(|(a, _)| a.vars().iter().all(|v| !unusable.contains(v)))
        .filter_map(|(a, why)| Some((a.substitute(&map).ok()?, why.clone())))
        .collect();
    instance.unknown = summary.unknown.through(callee);
    instance
}

/// The summary under construction of one function.
struct Builder<'s, 'v> {
    summaries: &'s Summaries<'v>,
    f: FuncRef,
    func: &'v Function,
    forest: &'s LoopForest,
    rec: &'s Reconstruction,
    /// The range variable of each normalizable loop whose bounds are expressible.
    ranges_of_loop: HashMap<LoopId, Var>,
    /// The loops among those that run over exactly their range: step 1 or -1, left only at
    /// the header's test.
    exact: HashMap<LoopId, Var>,
    summary: Summary,
    fresh: Fresh,
    private: HashSet<Value>,
    /// Quotients and remainders made range variables (see `bound_quotient`).
    quotients: HashSet<Var>,
    /// Per loop range variable: the bounds of its value once the loop is left (the visited
    /// values and the one that fails the test), and the range variable standing for that
    /// value once an access after the loop uses it (see `exit_values`).
    exit_bounds: HashMap<Var, (Expr, Expr)>,
    exit_vars: HashMap<Var, Var>,
    /// Why some effects are not known, gathered (see [`unknowns`]).
    unknown: unknowns::Gathered,
    /// The slots holding a by-value parameter's copy, found on first use.
    param_copies: std::cell::OnceCell<HashMap<frontend::ir::Slot, u32>>,
}

impl Builder<'_, '_> {
    /// Scalar parameters: what offsets may mention besides range variables.
    fn scalar_params(&self) -> HashSet<Var> {
        let types = &self.summaries.view.program(self.f).types;
        self.func
            .params
            .iter()
            .filter(|p| !types.is_pointer(p.ty))
            .filter_map(|p| self.rec.symbol(p.value).cloned())
            .collect()
    }

    /// The variables an expression at `block` may use: scalar parameters and the range
    /// variables of the loops around it (an induction variable used after its loop holds
    /// its exit value, which is outside the range).
    fn allowed_at(&self, block: Block) -> HashSet<Var> {
        let mut allowed = self.scalar_params();
        allowed.extend(self.quotients.iter().cloned());
        allowed.extend(self.exit_vars.values().cloned());
        let mut level = self.forest.innermost(block);
        while let Some(id) = level {
            if let Some(v) = self.ranges_of_loop.get(&id) {
                allowed.insert(v.clone());
            }
            level = self.forest.loop_(id).parent;
        }
        allowed
    }

    /// Every loop's induction variable as a range variable, outermost loops first.
    fn loop_ranges(&mut self) {
        let mut ids: Vec<LoopId> = self.forest.ids().collect();
        ids.sort_by_key(|id| (self.forest.loop_(*id).depth, *id));
        for id in ids {
            // Loops that may leave early still keep their variable within the header's
            // range; only loops with a single exit count as covering it (`exact`).
            let Ok(iv) =
                crate::space::visited_range(self.func, self.forest, id, self.rec, &SignEnv::new())
            else {
                continue;
            };
            let header = self.forest.loop_(id).header;
            // The bounds may use what is known just outside the loop.
            let mut allowed = self.allowed_at(header);
            allowed.remove(&iv.var);
            let fits = |e: &Expr| e.vars().iter().all(|v| allowed.contains(v));
            if fits(&iv.lo) && fits(&iv.hi) && !self.ranges_of_loop.values().any(|v| *v == iv.var) {
                // Accesses in the loop count as made on every call (as the nest's own inner
                // loops do): that needs the loop to run, assumed and said so.
                if !iv.trips.vars().is_empty() {
                    self.summary.assumptions.push((
                        iv.trips.clone(),
                        format!("a loop in `{}` runs", self.func.name),
                    ));
                }
                self.summary.ranges.push(RangeVar {
                    var: iv.var.clone(),
                    lo: iv.lo.clone(),
                    hi: iv.hi.clone(),
                });
                let l = self.forest.loop_(id);
                if iv.step.abs() == 1
                    && matches!(l.exits.as_slice(), [(from, _)] if *from == l.header)
                {
                    self.exact.insert(id, iv.var.clone());
                }
                let step = Expr::integer(BigInt::from(iv.step));
                let past = |e: &Expr| e.checked_add(&step).ok();
                let exit = if iv.step > 0 {
                    past(&iv.hi).map(|hi| (iv.lo.clone(), hi))
                } else {
                    past(&iv.lo).map(|lo| (lo, iv.hi.clone()))
                };
                if let Some(bounds) = exit {
                    self.exit_bounds.insert(iv.var.clone(), bounds);
                }
                self.ranges_of_loop.insert(id, iv.var);
            }
        }
    }

    fn effect_type(&self, ty: TypeId) -> EffectType {
        let types = &self.summaries.view.program(self.f).types;
        match types.get(ty) {
            t @ (Type::Int { .. } | Type::Float(_)) => EffectType::Scalar(t.clone()),
            _ => EffectType::InUnit(self.f.unit, ty),
        }
    }

    /// The pointer parameter whose object every value a merged pointer (a phi or select)
    /// may hold points into, through address arithmetic: `None` when some value comes from
    /// anywhere else.
    /// `split_base` of `address`, where a base that is the null pointer on some path and one
    /// address of one form on the others (`indexes = 0; if (p) indexes = img + y*n;`)
    /// stands for that address: on the null path nothing is dereferenced (that would be
    /// undefined), as for a loop's own accesses (`access::may_be_null`).
    fn split_non_null(&self, address: &Expr) -> (Option<Var>, Expr) {
        let (base, rest) = split_base(address, &self.rec.symbols);
        let Some(form) = base.as_ref().and_then(|b| self.non_null_form(b)) else {
            return (base, rest);
        };
        let map = HashMap::from([(base.clone().expect("a base has a form"), form)]);
        match address.substitute(&map) {
            Ok(resolved) => split_base(&resolved, &self.rec.symbols),
            Err(_) => (base, rest),
        }
    }

    /// The one form a phi `base` has on its paths but those where it is the null pointer
    /// constant; `None` unless it is null on some path and one value of one form on all
    /// others.
    fn non_null_form(&self, base: &Var) -> Option<Expr> {
        let Some(SymbolOrigin::Phi(v)) = self.rec.symbols.info(base).map(|s| &s.origin) else {
            return None;
        };
        let (mut values, mut null) = (Vec::new(), false);
        let mut seen = HashSet::new();
        let mut stack = vec![*v];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if seen.len() > 64 {
                return None;
            }
            match &self.func.inst(x).kind {
                InstKind::Cast(inner) => stack.push(*inner),
                InstKind::Phi(args) => stack.extend(args.iter().map(|(_, a)| *a)),
                _ if self.func.const_int(x) == Some(0) => null = true,
                _ => values.push(x),
            }
        }
        match (null, values.as_slice()) {
            (true, [value]) => match self.rec.of(*value) {
                [form] => Some(form.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    fn merged_into_param(&self, base: &Var) -> Option<u32> {
        let Some(SymbolOrigin::Phi(v)) = self.rec.symbols.info(base).map(|s| &s.origin) else {
            return None;
        };
        let mut param = None;
        let mut seen = HashSet::new();
        let mut stack = vec![*v];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) || seen.len() > 64 {
                if seen.len() > 64 {
                    return None;
                }
                continue;
            }
            match &self.func.inst(x).kind {
                InstKind::Cast(inner) => stack.push(*inner),
                InstKind::Phi(args) => stack.extend(args.iter().map(|(_, a)| *a)),
                InstKind::Select {
                    then_value,
                    else_value,
                    ..
                } => stack.extend([*then_value, *else_value]),
                InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => {
                    stack.push(*base)
                }
                InstKind::Param(i) if param.is_none_or(|p| p == *i) => param = Some(*i),
                _ => return None,
            }
        }
        param.filter(|i| {
            self.func
                .params
                .get(*i as usize)
                .is_some_and(|p| self.summaries.view.program(self.f).types.is_pointer(p.ty))
        })
    }

    /// The parameter whose object `base` is, for reading pointers out of it: a parameter
    /// itself (`s->data`), or the slot a struct or union parameter passed by value is
    /// copied into, when the function only reads that copy (`d.p`): callers pass the
    /// object the copy was made from ([`argument_exprs`]), which holds the same pointers.
    fn pointer_param(&self, base: &Var) -> Option<u32> {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => Some(*i),
            Some(SymbolOrigin::Object(v)) => match self.func.inst(*v).kind {
                InstKind::SlotAddr(slot) => self.param_copied_into(slot),
                _ => None,
            },
            _ => None,
        }
    }

    /// The by-value struct or union parameter that `slot` holds a copy of, when the
    /// function only reads that copy ([`crate::escape::param_copies`]).
    fn param_copied_into(&self, slot: frontend::ir::Slot) -> Option<u32> {
        self.param_copies
            .get_or_init(|| {
                crate::escape::param_copies(self.summaries.view, self.f.unit, self.func)
            })
            .get(&slot)
            .copied()
    }

    /// What a base symbol of this function is, or `None` for memory private to the call.
    fn base_of(&self, base: &Var) -> Option<Base> {
        let program = self.summaries.view.program(self.f);
        let origin = self.rec.symbols.info(base).map(|s| &s.origin);
        Some(match origin {
            Some(SymbolOrigin::Param(i)) => Base::Param(*i),
            Some(SymbolOrigin::Object(v)) => match self.func.inst(*v).kind {
                InstKind::SlotAddr(_) => return None,
                InstKind::GlobalAddr(g) => {
                    let global = program.global(g);
                    Base::Global {
                        name: global.name.clone(),
                        unit: (global.is_static || global.local_to.is_some())
                            .then_some(self.f.unit),
                    }
                }
                _ => Base::Opaque(base.name().to_string()),
            },
            Some(SymbolOrigin::Opaque(v)) if self.private.contains(v) => return None,
            Some(SymbolOrigin::Load { address, .. }) => match self.rec.of(*address) {
                [location] => {
                    let (pointer_base, at) = split_base(location, &self.rec.symbols);
                    let params = self.scalar_params();
                    let param = pointer_base.and_then(|p| self.pointer_param(&p));
                    match param {
                        Some(i) if at.vars().iter().all(|v| params.contains(v)) => Base::Deref {
                            param: i,
                            at,
                            name: base.name().to_string(),
                        },
                        _ => Base::Opaque(base.name().to_string()),
                    }
                }
                _ => Base::Opaque(base.name().to_string()),
            },
            _ => Base::Opaque(base.name().to_string()),
        })
    }

    /// `a / b` or `a % b` (C integer division) with `a >= 0` over the function's ranges and
    /// `b` an expression of its parameters: a range variable, `a % b` in `[0, b - 1]` and
    /// `a / b` in `[0, (max a + 1)/b - 1]` when `b` divides `max a + 1` (`ij / n` for
    /// `ij < n*n`), else `[0, max a]`; both assume `b > 0`, which the summary records. The
    /// pair `(ij / n, ij % n)` becomes two independent ranges: enough for sections, though
    /// the exact correspondence with `ij` is lost.
    fn bound_quotient(&mut self, v: &Var) -> bool {
        if self.quotients.contains(v) {
            return true;
        }
        let Some(SymbolOrigin::Opaque(x)) = self.rec.symbols.info(v).map(|s| s.origin.clone())
        else {
            return false;
        };
        let inst = self.func.inst(x);
        let InstKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b) = inst.kind else {
            return false;
        };
        if !self
            .summaries
            .view
            .program(self.f)
            .types
            .is_integer(inst.ty)
        {
            return false;
        }
        let ([ea], [eb]) = (self.rec.of(a), self.rec.of(b)) else {
            return false;
        };
        let (ea, eb) = (ea.clone(), eb.clone());
        let allowed = self.allowed_at(inst.block);
        let params = self.scalar_params();
        if eb.vars().is_empty()
            || !eb.vars().iter().all(|w| params.contains(w))
            || !ea.vars().iter().all(|w| allowed.contains(w))
        {
            return false;
        }
        let space = self.summary.space();
        let mut assumptions = Vec::new();
        let (Some(min_a), Some(max_a)) = (
            extreme(&ea, &space, false, &mut assumptions),
            extreme(&ea, &space, true, &mut assumptions),
        ) else {
            return false;
        };
        let zero = Expr::constant(0);
        if !assumptions.is_empty() || !symbolic::compare(&min_a, &zero, &space.env).is_ge() {
            return false;
        }
        let one = Expr::constant(1);
        let hi = match op {
            BinOp::Rem => eb.checked_sub(&one).ok(),
            _ => max_a
                .checked_add(&one)
                .ok()
                .and_then(|m| exact_quotient(&m, &eb))
                .and_then(|q| q.checked_sub(&one).ok())
                .or(Some(max_a)),
        };
        let Some(hi) = hi else { return false };
        self.summary.ranges.push(RangeVar {
            var: v.clone(),
            lo: zero,
            hi,
        });
        self.summary
            .assumptions
            .push((eb, format!("a divisor in `{}`", self.func.name)));
        self.quotients.insert(v.clone());
        true
    }

    /// `offset` with each loop variable used after its loop replaced by a range variable
    /// over its exit value: the loop left at its test (`i` one step past the last visited
    /// value) or early (`i` a visited value), so within `[lo, hi + step]` (`[lo + step, hi]`
    /// going down). A use outside the loop can only be after it: the header dominates it.
    /// `insert_point` writing `closest[i]` after `for (i = k - 1; i > 0; i--) ... break;`.
    fn exit_values(&mut self, offset: Expr, block: Block) -> Expr {
        let allowed = self.allowed_at(block);
        let mut map = HashMap::new();
        for v in offset.vars() {
            if allowed.contains(&v) {
                continue;
            }
            let Some((lo, hi)) = self.exit_bounds.get(&v).cloned() else {
                continue;
            };
            let exit = match self.exit_vars.get(&v) {
                Some(e) => e.clone(),
                None => {
                    let e = Var::new(&format!("{} after its loop", v.name()));
                    self.summary.ranges.push(RangeVar {
                        var: e.clone(),
                        lo,
                        hi,
                    });
                    self.exit_vars.insert(v.clone(), e.clone());
                    e
                }
            };
            map.insert(v, Expr::var(exit.name()));
        }
        if map.is_empty() {
            return offset;
        }
        offset.substitute(&map).unwrap_or(offset)
    }

    /// An offset if every variable in it is allowed at `block` (or among `extra`).
    fn checked_offset(
        &mut self,
        offset: Expr,
        block: Block,
        extra: &HashSet<Var>,
    ) -> Result<Expr, String> {
        let offset = self.exit_values(offset, block);
        let vars = offset.vars();
        for v in &vars {
            if !extra.contains(v) && !self.allowed_at(block).contains(v) {
                self.bound_quotient(v);
            }
        }
        let allowed = self.allowed_at(block);
        match vars
            .into_iter()
            .find(|v| !allowed.contains(v) && !extra.contains(v))
        {
            None => Ok(offset),
            Some(v) => Err(format!(
                "the offset depends on `{}`, a value `{}` computes or reads",
                v.name(),
                self.func.name
            )),
        }
    }

    /// Records an access at `address + offset` (an alternative of an access's address).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        block: Block,
        address: &Expr,
        offset: Result<Expr, String>,
        is_store: bool,
        elem_bytes: u64,
        ty: EffectType,
        conditional: bool,
        (must, covered): (bool, bool),
        through: Vec<String>,
        extra: &HashSet<Var>,
    ) {
        // A constant address is a null pointer: the call cannot access through it.
        if address.vars().is_empty() {
            return;
        }
        let full = offset
            .as_ref()
            .ok()
            .and_then(|o| address.checked_add(o).ok());
        let (base, rest) = match &full {
            Some(full) => self.split_non_null(full),
            None => split_base(address, &self.rec.symbols),
        };
        let Some(base_var) = base else {
            if is_store {
                self.unknown.push(format!(
                    "writes memory at `{}`, an address with no single base pointer",
                    address.to_c()
                ));
            }
            return;
        };
        let Some(mut base) = self.base_of(&base_var) else {
            return;
        };
        // A pointer merged from addresses into one parameter's object (`low` is
        // `&grid[k]` on one branch and `&grid[k - 1]` on another): an access of that object
        // at an offset the function computes.
        let mut merged_into = None;
        if matches!(base, Base::Opaque(_)) {
            if let Some(i) = self.merged_into_param(&base_var) {
                base = Base::Param(i);
                let param = self
                    .func
                    .params
                    .get(i as usize)
                    .and_then(|p| p.name.clone())
                    .unwrap_or_else(|| format!("parameter {}", i + 1));
                merged_into = Some(format!(
                    "`{}` points into `{param}` at an offset `{}` computes",
                    base_var.name(),
                    self.func.name
                ));
            }
        }
        if matches!(base, Base::Opaque(_)) && is_store {
            let via = match through.first() {
                Some(f) => format!(" (in `{f}`)"),
                None => String::new(),
            };
            self.unknown.push(format!(
                "writes through `{}`, a pointer it does not receive as a parameter{via}",
                base_var.name()
            ));
            return;
        }
        let offset = match (full, offset, merged_into) {
            (_, _, Some(why)) => Err(why),
            (Some(_), Ok(_), None) => self.checked_offset(rest, block, extra),
            (_, Err(why), None) => Err(why),
            (None, Ok(_), None) => Err("the offset is too large to represent".into()),
        };
        let must = must && is_store && self.must_offset(block, &offset, extra);
        self.summary.effects.push(Effect {
            base,
            is_store,
            elem_bytes,
            ty,
            offset,
            conditional,
            must,
            covered: covered && !is_store,
            through,
        });
    }

    /// The range variables of the loops around `block` when the block runs on every call
    /// at every value of them: it is not under a condition, and each loop around it covers
    /// exactly its range (see `exact`).
    fn must_context(&self, block: Block) -> Option<Vec<Var>> {
        if conditional_in_function(self.forest, block) {
            return None;
        }
        let mut vars = Vec::new();
        let mut level = self.forest.innermost(block);
        while let Some(id) = level {
            vars.push(self.exact.get(&id)?.clone());
            level = self.forest.loop_(id).parent;
        }
        Some(vars)
    }

    /// Whether a store at `block` with this offset writes all its bytes on every call: the
    /// block runs at every value of the loops around it, whose variables the offset
    /// mentions, and the offset mentions nothing else but scalar parameters and the range
    /// variables of an instantiated callee (`extra`, whose must-writes sweep them).
    fn must_offset(
        &self,
        block: Block,
        offset: &Result<Expr, String>,
        extra: &HashSet<Var>,
    ) -> bool {
        let (Some(context), Ok(offset)) = (self.must_context(block), offset) else {
            return false;
        };
        let vars = offset.vars();
        let params = self.scalar_params();
        context.iter().all(|v| vars.contains(v))
            && vars
                .iter()
                .all(|v| params.contains(v) || context.contains(v) || extra.contains(v))
    }

    /// Marks the loads whose bytes a must-write of the function has written before them on
    /// every path (`positions`: the block and instruction index of each effect).
    fn mark_covered(&mut self, positions: &[(Block, usize)]) {
        if !self.summary.effects.iter().any(|w| w.must) {
            return;
        }
        let space = self.summary.space();
        let ranges: HashMap<Var, &RangeVar> = self
            .summary
            .ranges
            .iter()
            .map(|r| (r.var.clone(), r))
            .collect();
        let loops_around = |block: Block| -> HashSet<LoopId> {
            let mut out = HashSet::new();
            let mut level = self.forest.innermost(block);
            while let Some(id) = level {
                out.insert(id);
                level = self.forest.loop_(id).parent;
            }
            out
        };
        let mut covered = Vec::new();
        for (i, r) in self.summary.effects.iter().enumerate() {
            if r.is_store || r.covered || !matches!(r.base, Base::Param(_)) {
                continue;
            }
            let (Ok(read), Some(&(rb, ri))) = (&r.offset, positions.get(i)) else {
                continue;
            };
            let around_read = loops_around(rb);
            let found = self.summary.effects.iter().enumerate().any(|(j, w)| {
                let Some(&(wb, wi)) = positions.get(j) else {
                    return false;
                };
                // The cheap tests first: a function has many accesses, few to one object.
                let Ok(written) = &w.offset else { return false };
                if !w.must || w.base != r.base {
                    return false;
                }
                // The write runs before the read: its block dominates the read's, or the
                // outermost loop around it but not around the read (which the write sweeps,
                // and leaves only at its header: complete) has a header that does.
                let outer = {
                    let mut level = self.forest.innermost(wb);
                    let mut last = None;
                    while let Some(id) = level {
                        if around_read.contains(&id) {
                            break;
                        }
                        last = Some(id);
                        level = self.forest.loop_(id).parent;
                    }
                    last
                };
                let before = match outer {
                    Some(id) => self.forest.dominates(self.forest.loop_(id).header, rb),
                    None if wb == rb => wi < ri,
                    None => self.forest.dominates(wb, rb),
                };
                if !before {
                    return false;
                }
                // The variables of loops around both are the same at both points.
                let common: HashSet<Var> = loops_around(wb)
                    .intersection(&around_read)
                    .filter_map(|id| self.ranges_of_loop.get(id).cloned())
                    .collect();
                let others: Vec<RangeVar> = self
                    .summary
                    .ranges
                    .iter()
                    .filter(|x| !common.contains(&x.var))
                    .cloned()
                    .collect();
                let Some((wlo, whi)) = swept(written, w.elem_bytes, &others, &space.env) else {
                    return false;
                };
                // The function's space without the common variables (its loops' ranges
                // made once, above, not per pair of accesses).
                let sub = Space {
                    ivs: space
                        .ivs
                        .iter()
                        .filter(|iv| !common.contains(&iv.var))
                        .cloned()
                        .collect(),
                    env: space.env.clone(),
                    assumptions: Vec::new(),
                };
                let mut used = Vec::new();
                let lo = extreme(read, &sub, false, &mut used);
                let hi = extreme(read, &sub, true, &mut used).and_then(|h| {
                    h.checked_add(&Expr::integer(BigInt::from(r.elem_bytes)))
                        .ok()
                });
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    return false;
                };
                used.is_empty()
                    && !lo
                        .vars()
                        .iter()
                        .chain(hi.vars().iter())
                        .any(|v| ranges.contains_key(v) && !common.contains(v))
                    && symbolic::compare(&wlo, &lo, &space.env).is_le()
                    && symbolic::compare(&hi, &whi, &space.env).is_le()
            });
            if found {
                covered.push(i);
            }
        }
        for i in covered {
            self.summary.effects[i].covered = true;
        }
    }

    fn own_access(&mut self, block: Block, v: Value, addr: Value, is_store: bool) {
        let types = &self.summaries.view.program(self.f).types;
        let inst = self.func.inst(v);
        let elem_bytes = types.size_of(inst.ty).unwrap_or(1);
        let ty = self.effect_type(inst.ty);
        let conditional = conditional_in_function(self.forest, block);
        let alternatives = self.rec.of(addr).to_vec();
        if alternatives.is_empty() && is_store {
            self.unknown
                .push("writes memory at an address it cannot express".into());
        }
        let single = alternatives.len() == 1;
        for address in alternatives {
            self.record(
                block,
                &address,
                Ok(Expr::constant(0)),
                is_store,
                elem_bytes,
                ty.clone(),
                conditional,
                (single, false),
                Vec::new(),
                &HashSet::new(),
            );
        }
    }

    fn call(&mut self, block: Block, callee: &Callee, args: &[Value], skip: &HashSet<FuncRef>) {
        let name = match callee {
            Callee::Indirect(pointer) => {
                // A pointer the program shows the targets of: a call of each.
                match crate::indirect::targets(self.summaries.view, self.f, *pointer) {
                    Some(targets) => {
                        for t in targets {
                            self.call(block, &Callee::Direct(t), args, skip);
                        }
                    }
                    None => self.unknown.push("calls through a function pointer".into()),
                }
                return;
            }
            Callee::Direct(name) => name.as_str(),
        };
        if name.starts_with("__builtin_") {
            return;
        }
        let view = self.summaries.view;
        let summary: Arc<Summary> = if let Some(lib) = library_summary(name) {
            Arc::new(lib)
        } else if let Some(g) = view.resolve(self.f.unit, name) {
            if skip.contains(&g) {
                // A call inside the recursive component being summarized.
                return;
            }
            self.summaries.of(g)
        } else {
            match crate::calls::classify_in(view, self.f.unit, name) {
                crate::calls::CallKind::Allocator => self.summary.allocators.push(name.to_string()),
                crate::calls::CallKind::Builtin => {}
                _ => self.summary.host_calls.push(name.to_string()),
            }
            return;
        };
        self.summary
            .allocators
            .extend(summary.allocators.iter().cloned());
        self.summary
            .recursive
            .extend(summary.recursive.iter().cloned());
        self.summary
            .host_calls
            .extend(summary.host_calls.iter().cloned());
        let types = &self.summaries.view.program(self.f).types;
        let arg_exprs = argument_exprs(self.func, types, self.rec, args);
        let instance = instantiate(&summary, name, &arg_exprs, &mut self.fresh);
        self.unknown.through(name, instance.unknown);
        self.summary.assumptions.extend(instance.assumptions);
        // The callee's ranges become this function's, where their bounds are expressible.
        let mut extra: HashSet<Var> = HashSet::new();
        let allowed = self.allowed_at(block);
        for r in instance.ranges {
            let fits = |e: &Expr| {
                e.vars()
                    .iter()
                    .all(|x| allowed.contains(x) || extra.contains(x))
            };
            if fits(&r.lo) && fits(&r.hi) {
                extra.insert(r.var.clone());
                self.summary.ranges.push(r);
            }
        }
        let call_conditional = conditional_in_function(self.forest, block);
        for access in instance.accesses {
            let e = access.effect;
            let conditional = e.conditional || call_conditional;
            let ty = e.ty.clone();
            match access.place {
                Place::Address(alternatives) => {
                    if alternatives.is_empty() {
                        self.unknown
                            .push(format!("passes `{name}` an argument it cannot express"));
                    }
                    let single = alternatives.len() == 1;
                    for address in alternatives {
                        self.record(
                            block,
                            &address,
                            e.offset.clone(),
                            e.is_store,
                            e.elem_bytes,
                            ty.clone(),
                            conditional,
                            (e.must && single, e.covered),
                            e.through.clone(),
                            &extra,
                        );
                    }
                }
                Place::Global { name, unit } => {
                    let offset = e
                        .offset
                        .clone()
                        .and_then(|o| self.checked_offset(o, block, &extra));
                    let must = e.must && self.must_offset(block, &offset, &extra);
                    self.summary.effects.push(Effect {
                        base: Base::Global { name, unit },
                        offset,
                        conditional,
                        must,
                        ..e
                    });
                }
                Place::Deref { at, name } => {
                    let base = match at.as_slice() {
                        [location] => {
                            let (pointer, at) = split_base(location, &self.rec.symbols);
                            let params = self.scalar_params();
                            // A pointer read from anywhere but a parameter's object (a
                            // local struct, a global) may point anywhere: opaque.
                            match pointer.and_then(|p| self.pointer_param(&p)) {
                                Some(i) if at.vars().iter().all(|x| params.contains(x)) => {
                                    Some(Base::Deref {
                                        param: i,
                                        at,
                                        name: name.clone(),
                                    })
                                }
                                _ => Some(Base::Opaque(name.clone())),
                            }
                        }
                        _ => Some(Base::Opaque(name.clone())),
                    };
                    self.push_indirect(base, e, conditional, block, &extra);
                }
                Place::Opaque(name) => {
                    self.push_indirect(Some(Base::Opaque(name)), e, conditional, block, &extra);
                }
            }
        }
    }

    /// An instantiated access through a pointer read from memory.
    fn push_indirect(
        &mut self,
        base: Option<Base>,
        e: Effect,
        conditional: bool,
        block: Block,
        extra: &HashSet<Var>,
    ) {
        let Some(base) = base else { return };
        if matches!(base, Base::Opaque(_)) && e.is_store {
            let name = match &base {
                Base::Opaque(n) => n.clone(),
                _ => String::new(),
            };
            self.unknown.push(format!(
                "writes through `{name}`, a pointer it does not receive as a parameter (in `{}`)",
                e.through.first().cloned().unwrap_or_default()
            ));
            return;
        }
        let offset = e
            .offset
            .clone()
            .and_then(|o| self.checked_offset(o, block, extra));
        let must = e.must && self.must_offset(block, &offset, extra);
        self.summary.effects.push(Effect {
            base,
            offset,
            conditional,
            must,
            ..e
        });
    }
}

/// The parameter names of a function (for [`Summary::describe`]).
pub fn param_names(func: &Function) -> Vec<Option<String>> {
    func.params.iter().map(|p| p.name.clone()).collect()
}

/// Names of the bases a summary writes (for messages).
pub fn written_bases(summary: &Summary, func: &Function) -> BTreeSet<String> {
    summary
        .effects
        .iter()
        .filter(|e| e.is_store)
        .map(|e| match &e.base {
            Base::Param(i) => func
                .params
                .get(*i as usize)
                .and_then(|p| p.name.clone())
                .unwrap_or_else(|| format!("#{i}")),
            Base::Global { name, .. } => name.clone(),
            Base::Deref { name, .. } | Base::Opaque(name) => name.clone(),
        })
        .collect()
}
