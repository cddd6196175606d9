//! The range analysis as a [`ForwardAnalysis`]: states, transfer functions for
//! instructions (Fig. 8.7 a-f), edges with branch constraints (Fig. 8.7 h), induction
//! variable ranges from trip counts (Fig. 8.8), loads and ternaries.

use super::bound::{self, Bound, Side};
use super::interval::Range;
use super::RangeConfig;
use crate::framework::{ForwardAnalysis, Lattice};
use crate::pvec::PVec;
use crate::reconstruct::Reconstruction;
use crate::symbols::SymbolOrigin;
use frontend::ir::{
    BinOp, Block, Callee, Constant, Function, InstKind, Program, Terminator, UnOp, Value,
};
use frontend::loops::{InductionVariable, LoopForest, Normalizable};
use frontend::types::{IntRank, Type, TypeId};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use symbolic::{Expr, SignEnv, SignSet, Var};

static TOP: Range = Range {
    lo: Bound::NegInf,
    hi: Bound::PosInf,
};

/// Calls that neither write program memory nor depend on it, so a load next to them keeps
/// its value.
const PURE_MATH: &[&str] = &[
    "abs", "labs", "fabs", "fabsf", "sqrt", "sqrtf", "exp", "expf", "exp2", "log", "logf", "log2",
    "log10", "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "atan", "atan2", "asin",
    "acos", "sinh", "cosh", "tanh", "floor", "floorf", "ceil", "ceilf", "round", "roundf", "fmin",
    "fminf", "fmax", "fmaxf", "fmod", "fmodf", "hypot", "cbrt", "trunc", "truncf",
];

/// The ranges at one program point. A value with no entry is bottom (not defined on the
/// paths seen so far), the neutral element of union and intersection.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeState {
    reached: bool,
    /// Set when the solver gave up: every value is top.
    top: bool,
    /// Persistent (and each range shared), so that the copies the solver makes per block
    /// and per edge, and its joins, cost what the states differ in rather than the number
    /// of values (a map per state made long functions quadratic in time and memory).
    ranges: ValueMap,
    /// Branch constraints on values that are one symbolic point (`n` under `i < n`): the
    /// value stays `[n, n]`, which is exact, and the constraint (`n >= 1`) only feeds the
    /// signs used at this point. Absent means unconstrained.
    facts: ValueMap,
    /// Signs known for the whole function; joins and widenings compare bounds under it.
    env: Arc<SignEnv>,
}

impl RangeState {
    fn new(reached: bool, top: bool, env: Arc<SignEnv>, empty: &ValueMap) -> RangeState {
        RangeState {
            reached,
            top,
            ranges: empty.clone(),
            facts: empty.clone(),
            env,
        }
    }

    /// The range of a value here (`None`: not available at this point).
    pub fn get(&self, v: Value) -> Option<&Range> {
        if self.top {
            return Some(&TOP);
        }
        self.ranges.get(&v).map(|r| &**r)
    }

    /// What the branches taken so far constrain a value that is one symbolic point to
    /// (`[3, 3]` for `dim` under `dim == 3`, whose range stays `[dim, dim]`); `None` when
    /// nothing does.
    pub fn fact(&self, v: Value) -> Option<&Range> {
        if self.top {
            return None;
        }
        self.facts.get(&v).map(|r| &**r)
    }

    pub fn reached(&self) -> bool {
        self.reached
    }

    /// Every value with a range here.
    pub fn values(&self) -> impl Iterator<Item = (Value, &Range)> {
        self.ranges.iter().map(|(v, r)| (v, &**r))
    }

    fn range(&self, v: Value) -> Range {
        self.get(v).cloned().unwrap_or_else(Range::top)
    }

    /// Applies `f` to the ranges of both states value by value; values only in `other`
    /// are copied (bottom is neutral).
    fn combine(&mut self, other: &RangeState, f: impl Fn(&Range, &Range) -> Range) -> bool {
        if !other.reached {
            return false;
        }
        if !self.reached {
            *self = other.clone();
            return true;
        }
        if self.top {
            return false;
        }
        if other.top {
            self.top = true;
            self.ranges.clear();
            self.facts.clear();
            return true;
        }
        // Equal ranges combine to themselves; most values are equal on both sides (SSA
        // values from dominating blocks), and the maps skip what both states share.
        let facts = self
            .facts
            .0
            .merge(&other.facts.0, |_, r, o| match (&r.0, &o.0) {
                (Some(_), None) => Some(Slot(None)),
                (Some(r), Some(o)) => {
                    let new = f(r, o);
                    (new != **r).then(|| Slot(Some(Arc::new(new))))
                }
                _ => None,
            });
        // A value absent from `other` keeps its range (absent is bottom), so the parts of
        // `other` never written are skipped.
        let ranges = self
            .ranges
            .0
            .join_with(&other.ranges.0, |_, old, r| match (&old.0, &r.0) {
                (Some(old), Some(r)) => {
                    let new = f(old, r);
                    (new != **old).then(|| Slot(Some(Arc::new(new))))
                }
                (None, Some(r)) => Some(Slot(Some(r.clone()))),
                _ => None,
            });
        facts | ranges
    }
}

impl Lattice for RangeState {
    fn join(&mut self, other: &Self) -> bool {
        let env = self.env.clone();
        self.combine(other, |a, b| a.union(b, &env))
    }

    fn widen(&mut self, other: &Self) -> bool {
        let env = self.env.clone();
        self.combine(other, |a, b| a.widen(b, &env))
    }

    fn narrow(&mut self, other: &Self) -> bool {
        if !self.reached || !other.reached || self.top || other.top {
            return false;
        }
        self.ranges
            .0
            .merge(&other.ranges.0, |_, old, new| match (&old.0, &new.0) {
                (Some(old), Some(new)) => {
                    let n = old.narrow(new);
                    (n != **old).then(|| Slot(Some(Arc::new(n))))
                }
                _ => None,
            })
    }
}

/// Ranges by value: a persistent vector over the function's values, absent as `None`.
#[derive(Clone, Debug, PartialEq)]
struct ValueMap(PVec<Slot>);

/// One value's range; equal when shared without comparing the bounds.
#[derive(Clone, Debug)]
struct Slot(Option<Arc<Range>>);

impl PartialEq for Slot {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            (None, None) => true,
            _ => false,
        }
    }
}

/// The `Arc` in `last[v]` when it holds `r`, else a new one, which `last[v]` then keeps.
fn shared_arc(last: &RefCell<Vec<Option<Arc<Range>>>>, v: Value, r: Range) -> Arc<Range> {
    let mut last = last.borrow_mut();
    match last.get_mut(v.index()) {
        Some(Some(kept)) if **kept == r => kept.clone(),
        Some(slot) => slot.insert(Arc::new(r)).clone(),
        None => Arc::new(r),
    }
}

impl ValueMap {
    fn get(&self, v: &Value) -> Option<&Arc<Range>> {
        self.0.get(v.index()).and_then(|s| s.0.as_ref())
    }

    fn insert(&mut self, v: Value, r: Arc<Range>) {
        self.0.set(v.index(), Slot(Some(r)));
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    /// The present entries in value order.
    fn iter(&self) -> impl Iterator<Item = (Value, &Arc<Range>)> {
        self.0
            .iter()
            .filter_map(|(i, r)| Some((Value(i as u32), r.0.as_ref()?)))
    }

    /// Forgets `v`'s entry (copies nothing when it has none).
    fn remove(&mut self, v: Value) {
        self.0.set(v.index(), Slot(None));
    }
}

/// The signs of symbol values (by their index in `symbol_values`) that differ from the
/// base environment at a point.
type EnvOverrides = Vec<(usize, SignSet)>;

/// A loop whose induction variables get their ranges from the trip count on the edge
/// into the body.
#[derive(Clone, Debug)]
struct CountedLoop {
    test_block: Block,
    body: Block,
    cmp: BinOp,
    bound: Value,
    primary: InductionVariable,
    others: Vec<InductionVariable>,
}

/// What one instruction may write: anything (a call), or memory reached from these bases.
enum Write {
    Anything,
    Through(BTreeSet<Var>),
}

/// The writing instructions of a function, and of each loop (by the loop's index in the
/// forest), indexed by the bases they write through: whether some write may reach a load's
/// bases is a lookup per base, not a pass over the writes (a loop body of 10,000 loads
/// and 10,000 stores made it quadratic).
struct Writes {
    /// The function's writes through anything (calls, unknown addresses), and through
    /// each base.
    anything: Vec<Value>,
    through: HashMap<Var, Vec<Value>>,
    /// Per loop: whether it writes through anything, and the bases it writes through.
    loop_anything: Vec<bool>,
    loop_through: Vec<HashSet<Var>>,
}

impl Writes {
    /// Whether a write of the function other than `except` may write through `bases`.
    fn other_may_write(&self, bases: &BTreeSet<Var>, except: Option<Value>) -> bool {
        let other = |writers: &[Value]| writers.iter().any(|w| Some(*w) != except);
        other(&self.anything)
            || bases
                .iter()
                .any(|b| self.through.get(b).is_some_and(|w| other(w)))
    }

    /// Whether a write of loop `index` may write through `bases`.
    fn loop_may_write(&self, index: usize, bases: &BTreeSet<Var>) -> bool {
        self.loop_anything[index] || bases.iter().any(|b| self.loop_through[index].contains(b))
    }
}

pub(super) struct RangeAnalysis<'a> {
    program: &'a Program,
    func: &'a Function,
    forest: &'a LoopForest,
    rec: &'a Reconstruction,
    config: &'a RangeConfig,
    env: Arc<SignEnv>,
    /// The range of every load: its symbol when invariant, else top.
    loads: HashMap<Value, Range>,
    /// Values known to be equal to each other (identical phis of one block,
    /// value-preserving casts), each class listed under every member.
    equivalent: HashMap<Value, Arc<[Value]>>,
    /// The counted loops by the edge into their body (test block, body).
    counted: HashMap<(Block, Block), Vec<CountedLoop>>,
    /// Values standing for a symbol whose refined range tells the symbol's sign.
    symbol_values: Vec<(Value, Var)>,
    /// The empty map every state starts from, so that all of them share their untouched
    /// parts.
    empty: ValueMap,
    /// The environments `env_for` built, by their signs that differ from `env`.
    envs: RefCell<HashMap<EnvOverrides, Arc<SignEnv>>>,
    /// The range and the fact last stored for each value, handed out again when a later
    /// visit computes an equal one (see `set`).
    last_range: RefCell<Vec<Option<Arc<Range>>>>,
    last_fact: RefCell<Vec<Option<Arc<Range>>>>,
}

impl<'a> RangeAnalysis<'a> {
    pub(super) fn new(
        program: &'a Program,
        func: &'a Function,
        forest: &'a LoopForest,
        rec: &'a Reconstruction,
        signs: &SignEnv,
        config: &'a RangeConfig,
    ) -> Self {
        let mut analysis = RangeAnalysis {
            program,
            func,
            forest,
            rec,
            config,
            env: Arc::new(signs.clone()),
            loads: HashMap::new(),
            equivalent: HashMap::new(),
            counted: HashMap::new(),
            symbol_values: Vec::new(),
            empty: ValueMap(PVec::new(func.insts.len(), Slot(None))),
            envs: RefCell::new(HashMap::new()),
            last_range: RefCell::new(vec![None; func.insts.len()]),
            last_fact: RefCell::new(vec![None; func.insts.len()]),
        };
        analysis.loads = analysis.load_ranges();
        analysis.equivalent = analysis.equivalence_classes();
        for cl in analysis.counted_loops() {
            analysis
                .counted
                .entry((cl.test_block, cl.body))
                .or_default()
                .push(cl);
        }
        for p in &func.params {
            if let Some(var) = rec.symbol(p.value) {
                analysis.symbol_values.push((p.value, var.clone()));
            }
        }
        for (v, r) in &analysis.loads {
            if let Some(e) = r.as_singleton() {
                if let Some(var) = e.as_poly().and_then(|p| p.as_var()) {
                    analysis.symbol_values.push((*v, var.clone()));
                }
            }
        }
        analysis.symbol_values.sort();
        analysis
    }

    fn ty(&self, v: Value) -> TypeId {
        self.func.inst(v).ty
    }

    /// The singleton range of a symbol, or the value injected for it.
    fn symbol_range(&self, var: &Var) -> Range {
        match self.config.injected.get(var.name()) {
            Some(e) => Range::singleton(e.clone()),
            None => Range::singleton(Expr::from(var.clone())),
        }
    }

    fn symbol_of(&self, v: Value) -> Range {
        match self.rec.symbol(v) {
            Some(var) => self.symbol_range(var),
            None => match self.rec.single(v) {
                Some(e) => Range::singleton(e.clone()),
                None => Range::top(),
            },
        }
    }

    /// The base environment plus the signs that refined symbol values imply here (in a
    /// loop `for (i = 0; i < n; i++)` the body knows `n >= 1`).
    ///
    /// Environments are shared by the signs that differ from the base: every block and
    /// edge asks, and copying the base (one entry per symbol of the function) each time
    /// made long functions quadratic.
    fn env_for(&self, state: &RangeState) -> Arc<SignEnv> {
        if state.top {
            return self.env.clone();
        }
        let mut overrides: EnvOverrides = Vec::new();
        for (k, (v, var)) in self.symbol_values.iter().enumerate() {
            let Some(r) = state
                .facts
                .get(v)
                .or_else(|| state.ranges.get(v))
                .map(|r| &**r)
            else {
                continue;
            };
            // A symbolic point (`[n, n]`) says nothing of its sign; an integer (`dim`
            // under `dim == 3`) does.
            if r.as_singleton().is_some() && r.as_integer().is_none() {
                continue;
            }
            let known = self.env.get(var);
            let s = r.sign(&self.env).intersect(known);
            if s != known && !s.is_empty() {
                overrides.push((k, s));
            }
        }
        if overrides.is_empty() {
            return self.env.clone();
        }
        if let Some(env) = self.envs.borrow().get(&overrides) {
            return env.clone();
        }
        let mut env = (*self.env).clone();
        for &(k, s) in &overrides {
            env.set(self.symbol_values[k].1.clone(), s);
        }
        let env = Arc::new(env);
        self.envs.borrow_mut().insert(overrides, env.clone());
        env
    }

    // ---- loads -------------------------------------------------------------------------

    /// Every instruction of the function that may write memory, with what it may write,
    /// and those of each loop: computed once, so that the invariance test of each load
    /// looks at the writers only (a loop body of thousands of loads and one store costs a
    /// pass over one store per load, not over the whole body).
    fn writes(&self) -> Writes {
        let func = self.func;
        let mut by_inst = Vec::new();
        let mut index_of = HashMap::new();
        let mut anything = Vec::new();
        let mut through: HashMap<Var, Vec<Value>> = HashMap::new();
        for v in func.values() {
            let write = match &func.inst(v).kind {
                InstKind::Store { addr, .. } => match self.bases(*addr) {
                    Some(b) => Write::Through(b),
                    None => Write::Anything,
                },
                InstKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } if PURE_MATH.contains(&name.as_str()) => continue,
                InstKind::Call { .. } => Write::Anything,
                _ => continue,
            };
            match &write {
                Write::Anything => anything.push(v),
                Write::Through(bases) => {
                    for b in bases {
                        through.entry(b.clone()).or_default().push(v);
                    }
                }
            }
            index_of.insert(v, by_inst.len());
            by_inst.push(write);
        }
        let mut loop_anything = Vec::with_capacity(self.forest.loops.len());
        let mut loop_through = Vec::with_capacity(self.forest.loops.len());
        for l in &self.forest.loops {
            let mut any = false;
            let mut bases = HashSet::new();
            for &b in &l.blocks {
                for i in &func.block(b).insts {
                    match index_of.get(i).map(|&k| &by_inst[k]) {
                        Some(Write::Anything) => any = true,
                        Some(Write::Through(through)) => bases.extend(through.iter().cloned()),
                        None => {}
                    }
                }
            }
            loop_anything.push(any);
            loop_through.push(bases);
        }
        Writes {
            anything,
            through,
            loop_anything,
            loop_through,
        }
    }

    fn load_ranges(&self) -> HashMap<Value, Range> {
        let mut memo: HashMap<Value, bool> = HashMap::new();
        let writes = self.writes();
        let mut out = HashMap::new();
        for v in self.func.values() {
            if matches!(self.func.inst(v).kind, InstKind::Load { .. }) {
                let r = if self.load_invariant(v, &writes, &mut memo, 0) {
                    self.rec
                        .symbol(v)
                        .map(|var| self.symbol_range(var))
                        .unwrap_or_else(Range::top)
                } else {
                    Range::top()
                };
                out.insert(v, r);
            }
        }
        out
    }

    /// Pointer symbols an address is based on (empty when unknown).
    fn bases(&self, addr: Value) -> Option<BTreeSet<Var>> {
        let exprs = self.rec.of(addr);
        if exprs.is_empty() {
            return None;
        }
        let mut out = BTreeSet::new();
        for e in exprs {
            for var in e.vars() {
                if self.rec.symbols.is_pointer(&var) {
                    out.insert(var);
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// A load keeps one value, its symbol, when its address is the same in every
    /// iteration of every enclosing loop and nothing in those loops may write there. A
    /// symbol shared with another load (same address elsewhere) also needs no write
    /// through the same base anywhere in the function.
    fn load_invariant(
        &self,
        load: Value,
        writes: &Writes,
        memo: &mut HashMap<Value, bool>,
        depth: u32,
    ) -> bool {
        if let Some(&known) = memo.get(&load) {
            return known;
        }
        if depth > 8 {
            return false;
        }
        memo.insert(load, false);
        let result = self.load_invariant_uncached(load, writes, memo, depth);
        memo.insert(load, result);
        result
    }

    fn load_invariant_uncached(
        &self,
        load: Value,
        writes: &Writes,
        memo: &mut HashMap<Value, bool>,
        depth: u32,
    ) -> bool {
        let func = self.func;
        let InstKind::Load { addr } = func.inst(load).kind else {
            return false;
        };
        let Some(var) = self.rec.symbol(load) else {
            return false;
        };
        let Some(bases) = self.bases(addr) else {
            return false;
        };
        let block = func.inst(load).block;
        // The loops holding the block, in the forest's order: the innermost one and its
        // ancestors (a filter over every loop per load was quadratic in a long function).
        let mut enclosing: Vec<(usize, &frontend::loops::Loop)> = Vec::new();
        let mut current = self.forest.innermost(block);
        while let Some(id) = current {
            let l = self.forest.loop_(id);
            enclosing.push((id.0 as usize, l));
            current = l.parent;
        }
        enclosing.sort_by_key(|(index, _)| *index);
        let shared = self.rec.symbols.value_of(var) != Some(load);
        if shared && writes.other_may_write(&bases, self.rec.symbols.value_of(var)) {
            return false;
        }
        let exprs = self.rec.of(addr).to_vec();
        for (index, l) in enclosing {
            for e in &exprs {
                for v in e.vars() {
                    let Some(info) = self.rec.symbols.info(&v) else {
                        return false;
                    };
                    let def = match info.origin {
                        SymbolOrigin::Param(_) => continue,
                        SymbolOrigin::Object(v)
                        | SymbolOrigin::Induction(v)
                        | SymbolOrigin::Phi(v)
                        | SymbolOrigin::Opaque(v) => v,
                        SymbolOrigin::Load { load: inner, .. } => {
                            if !l.contains(func.inst(inner).block)
                                || self.load_invariant(inner, writes, memo, depth + 1)
                            {
                                continue;
                            }
                            return false;
                        }
                    };
                    if l.contains(func.inst(def).block) {
                        return false;
                    }
                }
            }
            if writes.loop_may_write(index, &bases) {
                return false;
            }
        }
        true
    }

    // ---- equal values ------------------------------------------------------------------

    /// Whether a cast keeps every value unchanged (so constraints on one side hold on
    /// the other).
    fn preserving_cast(&self, from: TypeId, to: TypeId) -> bool {
        let t = &self.program.types;
        if t.is_pointer(from) && t.is_pointer(to) {
            return true;
        }
        if !(t.is_integer(from) && t.is_integer(to)) || self.is_bool(to) {
            return false;
        }
        let (Some(fs), Some(ts)) = (t.size_of(from), t.size_of(to)) else {
            return false;
        };
        let (fsg, tsg) = (t.is_signed(from), t.is_signed(to));
        (ts > fs && (tsg || !fsg)) || (ts == fs && tsg == fsg)
    }

    fn is_bool(&self, ty: TypeId) -> bool {
        matches!(
            self.program.types.get(ty),
            Type::Int {
                rank: IntRank::Bool,
                ..
            }
        )
    }

    /// Classes of equal values. The thesis shares constraints between phis with the same
    /// arguments anywhere; that is unsound for phis at different merges (`if (p) x = b;
    /// else x = c;` and `if (q) y = b; else y = c;` give `x != y`), so only phis of one
    /// block with the same incoming value per predecessor are merged.
    fn equivalence_classes(&self) -> HashMap<Value, Arc<[Value]>> {
        let func = self.func;
        let n = func.insts.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let union = |parent: &mut Vec<usize>, a: usize, b: usize| {
            let (ra, rb) = (find(parent, a), find(parent, b));
            if ra != rb {
                parent[ra] = rb;
            }
        };
        let mut phis: HashMap<(Block, Vec<(Block, Value)>), Value> = HashMap::new();
        for b in func.blocks() {
            for &v in &func.block(b).insts {
                match &func.inst(v).kind {
                    InstKind::Cast(x) if self.preserving_cast(self.ty(*x), self.ty(v)) => {
                        union(&mut parent, v.index(), x.index());
                    }
                    InstKind::Phi(args) => {
                        let mut key = args.clone();
                        key.sort();
                        match phis.get(&(b, key.clone())) {
                            Some(&other) => union(&mut parent, v.index(), other.index()),
                            None => {
                                phis.insert((b, key), v);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut classes: HashMap<usize, Vec<Value>> = HashMap::new();
        for i in 0..n {
            let root = find(&mut parent, i);
            classes.entry(root).or_default().push(Value(i as u32));
        }
        // One shared list per class: a copy per member made a class of 40,000 equal loads
        // (a long body reading `a[i]` in every statement) 6 GB.
        let mut out = HashMap::new();
        for members in classes.into_values() {
            if members.len() > 1 {
                let shared: Arc<[Value]> = members.into();
                for &m in shared.iter() {
                    out.insert(m, shared.clone());
                }
            }
        }
        out
    }

    // ---- counted loops -----------------------------------------------------------------

    fn counted_loops(&self) -> Vec<CountedLoop> {
        let mut out = Vec::new();
        for l in &self.forest.loops {
            let Some(test) = &l.exit_test else { continue };
            if test.block != l.header || test.tests_update {
                continue;
            }
            let ok = match &l.normalizable {
                Normalizable::Yes => true,
                Normalizable::IfInvariant { reads } => reads.iter().all(|v| {
                    self.loads
                        .get(v)
                        .is_some_and(|r| r.as_singleton().is_some())
                }),
                Normalizable::No { .. } => false,
            };
            if !ok {
                continue;
            }
            let Terminator::Branch {
                then_block,
                else_block,
                ..
            } = self.func.block(test.block).terminator
            else {
                continue;
            };
            let body = match (l.contains(then_block), l.contains(else_block)) {
                (true, false) => then_block,
                (false, true) => else_block,
                _ => continue,
            };
            if body == l.header {
                continue;
            }
            let primary = l.induction_variables[test.iv].clone();
            let consistent = match test.cmp {
                BinOp::Lt | BinOp::Le => primary.step > 0,
                BinOp::Gt | BinOp::Ge => primary.step < 0,
                BinOp::Ne => primary.step.abs() == 1,
                _ => false,
            };
            if !consistent {
                continue;
            }
            let others = l
                .induction_variables
                .iter()
                .filter(|iv| iv.phi != primary.phi)
                .cloned()
                .collect();
            out.push(CountedLoop {
                test_block: test.block,
                body,
                cmp: test.cmp,
                bound: test.bound,
                primary,
                others,
            });
        }
        out
    }

    /// The last iteration number `T - 1` (iterations count from 0) of a counted loop
    /// entered with `iv = init`, from the bound's extreme value. In the body the loop runs,
    /// so the dividend is non-negative and C's truncation is a floor.
    fn last_iteration(&self, cl: &CountedLoop, init: &Expr, bound: &Range) -> Option<Expr> {
        let s = cl.primary.step;
        let a = BigInt::from(s.abs());
        let one = Expr::constant(1);
        let env = &*self.env;
        let trips = |num: Expr| -> Option<Expr> {
            let t = if a.is_one() {
                num
            } else {
                num.c_div_in(&a, env).ok()?
            };
            t.checked_sub(&one).ok()
        };
        match (cl.cmp, s > 0) {
            (BinOp::Lt | BinOp::Le | BinOp::Ne, true) => {
                let b = bound.hi.finite()?;
                let extra = if cl.cmp == BinOp::Le { s } else { s - 1 };
                let num = b
                    .checked_sub(init)
                    .ok()?
                    .checked_add(&Expr::integer(BigInt::from(extra)))
                    .ok()?;
                trips(num)
            }
            (BinOp::Gt | BinOp::Ge | BinOp::Ne, false) => {
                let b = bound.lo.finite()?;
                let extra = if cl.cmp == BinOp::Ge {
                    a.clone()
                } else {
                    &a - 1
                };
                let num = init
                    .checked_sub(b)
                    .ok()?
                    .checked_add(&Expr::integer(extra))
                    .ok()?;
                trips(num)
            }
            _ => None,
        }
    }

    /// On the edge into the body of a counted loop: `iv in [init, init + step*(T-1)]`, and
    /// every other basic induction variable `k = k0 + c*t` for `t in [0, T-1]` (Fig. 8.8).
    fn enter_counted_loop(&self, cl: &CountedLoop, state: &mut RangeState) {
        let init_range = state.range(cl.primary.init);
        let Some(init) = init_range.as_singleton().cloned() else {
            return;
        };
        let bound = state.range(cl.bound);
        let Some(tmax) = self.last_iteration(cl, &init, &bound) else {
            return;
        };
        let tmax = Range::singleton(tmax);
        let shift = |start: &Range, step: i128| -> Range {
            let span = tmax.scale(&BigInt::from(step));
            if step > 0 {
                Range::new(start.lo.clone(), bound::add(&start.hi, &span.hi, Side::Hi))
            } else {
                Range::new(bound::add(&start.lo, &span.lo, Side::Lo), start.hi.clone())
            }
        };
        let primary = shift(&init_range, cl.primary.step);
        self.replace(state, cl.primary.phi, primary);
        for iv in &cl.others {
            let start = state.range(iv.init);
            let r = shift(&start, iv.step);
            self.replace(state, iv.phi, r);
        }
    }

    /// Stores the range of `v`. A revisited block recomputes the ranges it had, and a back
    /// edge forgets the body's values, so the same range would come back in a new `Arc`
    /// each visit; states that hold equal ranges in different `Arc`s make every join
    /// compare bounds. Handing out the `Arc` last stored for `v` when the range is equal
    /// keeps them equal by pointer: a loop around a 5,000-case switch, whose cases' joins
    /// compared the range of every test before them, was quadratic without it.
    fn set(&self, state: &mut RangeState, v: Value, r: Range) {
        if !state.top {
            let shared = shared_arc(&self.last_range, v, r);
            state.ranges.insert(v, shared);
        }
    }

    /// Stores what the branches taken constrain `v` to, sharing as `set` does.
    fn set_fact(&self, state: &mut RangeState, v: Value, r: Range) {
        let shared = shared_arc(&self.last_fact, v, r);
        state.facts.insert(v, shared);
    }

    /// Sets an exactly known range, keeping the current bound where the new one is infinite.
    fn replace(&self, state: &mut RangeState, v: Value, r: Range) {
        let old = state.range(v);
        let lo = if r.lo.is_finite() { r.lo } else { old.lo };
        let hi = if r.hi.is_finite() { r.hi } else { old.hi };
        let new = Range::new(lo, hi);
        for &m in self.class(v).iter() {
            if state.get(m).is_some() {
                self.set(state, m, new.clone());
            }
        }
    }

    fn class(&self, v: Value) -> Arc<[Value]> {
        self.equivalent
            .get(&v)
            .cloned()
            .unwrap_or_else(|| Arc::from([v]))
    }

    // ---- branch constraints ------------------------------------------------------------

    fn is_integral(&self, v: Value) -> bool {
        let t = &self.program.types;
        let ty = self.ty(v);
        t.is_integer(ty) || t.is_pointer(ty)
    }

    /// Refines `state` with `cond` being `taken`.
    fn refine_cond(
        &self,
        state: &mut RangeState,
        env: &SignEnv,
        cond: Value,
        taken: bool,
        depth: u32,
    ) {
        if depth > 4 || state.top {
            return;
        }
        match &self.func.inst(cond).kind {
            InstKind::Binary(op, a, b) if op.is_comparison() => {
                let op = if taken {
                    *op
                } else {
                    match op.negated() {
                        Some(n) => n,
                        None => return,
                    }
                };
                let (ra, rb) = (state.range(*a), state.range(*b));
                self.constrain(state, env, *a, op, &rb, 0);
                self.constrain(state, env, *b, op.swapped(), &ra, 0);
            }
            InstKind::Unary(UnOp::Not, x) => self.refine_cond(state, env, *x, !taken, depth + 1),
            InstKind::Cast(x)
                if matches!(
                    &self.func.inst(*x).kind,
                    InstKind::Binary(op, ..) if op.is_comparison()
                ) || matches!(self.func.inst(*x).kind, InstKind::Unary(UnOp::Not, _)) =>
            {
                self.refine_cond(state, env, *x, taken, depth + 1)
            }
            _ if self.is_integral(cond) => {
                let op = if taken { BinOp::Ne } else { BinOp::Eq };
                self.constrain(state, env, cond, op, &Range::constant(0), 0);
            }
            _ => {}
        }
    }

    /// Narrows `x` so that `x op y` can hold for some `y` in `other`, for `x` and the values
    /// equal to it; goes back through `x = z + c`. An empty result makes the state
    /// unreachable.
    fn constrain(
        &self,
        state: &mut RangeState,
        env: &SignEnv,
        x: Value,
        op: BinOp,
        other: &Range,
        depth: u32,
    ) {
        if depth > 3 || !state.reached || state.top {
            return;
        }
        let point = state
            .range(x)
            .as_singleton()
            .is_some_and(|e| e.as_constant().is_none());
        let current = if point {
            state
                .facts
                .get(&x)
                .map(|r| (**r).clone())
                .unwrap_or_else(|| state.range(x))
        } else {
            state.range(x)
        };
        let strict = i64::from(self.is_integral(x));
        let limit = match op {
            BinOp::Lt => Range::new(
                Bound::NegInf,
                bound::add_const(&other.hi, -strict, Side::Hi),
            ),
            BinOp::Le => Range::new(Bound::NegInf, other.hi.clone()),
            BinOp::Gt => Range::new(bound::add_const(&other.lo, strict, Side::Lo), Bound::PosInf),
            BinOp::Ge => Range::new(other.lo.clone(), Bound::PosInf),
            BinOp::Eq => other.clone(),
            BinOp::Ne => {
                let Some(e) = other.as_singleton() else {
                    return;
                };
                if strict == 0 {
                    return;
                }
                let point = Bound::Finite(e.clone());
                let mut r = Range::top();
                if current.lo == point {
                    r.lo = bound::add_const(&point, 1, Side::Lo);
                }
                if current.hi == point {
                    r.hi = bound::add_const(&point, -1, Side::Hi);
                }
                r
            }
            _ => return,
        };
        if limit.is_top() {
            return;
        }
        // A symbolic point equal to an integer (`dim == 3`): the fact is that integer. The
        // intersection with the point itself would keep `[max(dim, 3), min(dim, 3)]`,
        // which no later question can read as 3.
        let refined = match (point, op, limit.as_integer()) {
            (true, BinOp::Eq, Some(_)) if current == state.range(x) => limit.clone(),
            _ => current.intersect(&limit, env),
        };
        if refined.is_empty(env) {
            state.reached = false;
            state.ranges.clear();
            state.facts.clear();
            return;
        }
        if point {
            if refined != current {
                for &m in self.class(x).iter() {
                    if state.get(m).is_some() {
                        let r = match state.facts.get(&m) {
                            Some(f) if m != x => f.intersect(&limit, env),
                            _ => refined.clone(),
                        };
                        self.set_fact(state, m, r);
                    }
                }
            }
        } else if refined != current {
            for &m in self.class(x).iter() {
                if let Some(r) = state.get(m).cloned() {
                    let r = if m == x {
                        refined.clone()
                    } else {
                        r.intersect(&limit, env)
                    };
                    self.set(state, m, r);
                }
            }
        }
        // `x = z + c`: the constraint moves to `z` shifted by `-c`.
        if let InstKind::Binary(bop @ (BinOp::Add | BinOp::Sub), a, b) = self.func.inst(x).kind {
            let c = |v: Value| self.func.const_int(v).and_then(|c| i64::try_from(c).ok());
            let (z, shift) = match (bop, c(a), c(b)) {
                (BinOp::Add, _, Some(k)) => (a, -k),
                (BinOp::Add, Some(k), _) => (b, -k),
                (BinOp::Sub, _, Some(k)) => (a, k),
                _ => return,
            };
            if self.is_integral(z) {
                self.constrain(state, env, z, op, &other.add_const(shift), depth + 1);
            }
        }
    }

    // ---- instructions ------------------------------------------------------------------

    fn type_limits(&self, ty: TypeId) -> Option<(BigInt, BigInt)> {
        let t = &self.program.types;
        if self.is_bool(ty) {
            return Some((BigInt::zero(), BigInt::one()));
        }
        let bits = 8 * t.size_of(ty)? as usize;
        Some(if t.is_signed(ty) {
            (
                -(BigInt::one() << (bits - 1)),
                (BigInt::one() << (bits - 1)) - 1,
            )
        } else {
            (BigInt::zero(), (BigInt::one() << bits) - 1)
        })
    }

    /// `r` if it provably fits in `ty`, else the whole type (wrap-around).
    fn fit(&self, r: Range, ty: TypeId, env: &SignEnv) -> Range {
        let Some((min, max)) = self.type_limits(ty) else {
            return r;
        };
        let (min, max) = (Bound::integer(min), Bound::integer(max));
        if min.le(&r.lo, env) && r.hi.le(&max, env) {
            r
        } else {
            Range::new(min, max)
        }
    }

    fn cast(&self, r: Range, from: TypeId, to: TypeId, env: &SignEnv) -> Range {
        let t = &self.program.types;
        if self.is_bool(to) {
            return Range::constants(0, 1).intersect(&r, env);
        }
        if t.is_integer(to) {
            if t.is_integer(from) {
                if self.preserving_cast(from, to) {
                    r
                } else {
                    self.fit(r, to, env)
                }
            } else if t.is_pointer(from) {
                r
            } else {
                Range::top()
            }
        } else if t.is_pointer(to) {
            if t.is_pointer(from) || t.is_integer(from) {
                r
            } else {
                Range::top()
            }
        } else if t.is_float(to) && (t.is_integer(from) || t.is_float(from)) {
            r
        } else {
            Range::top()
        }
    }

    /// Unsigned arithmetic wraps: a result that may be negative can be anything.
    fn unsigned_wrap(&self, r: Range, ty: TypeId, env: &SignEnv) -> Range {
        let t = &self.program.types;
        if t.is_integer(ty) && !t.is_signed(ty) && !self.is_bool(ty) && !r.is_non_negative(env) {
            match self.type_limits(ty) {
                Some((min, max)) => Range::new(Bound::integer(min), Bound::integer(max)),
                None => Range::top(),
            }
        } else {
            r
        }
    }

    fn binary(&self, op: BinOp, ra: &Range, rb: &Range, ty: TypeId, env: &SignEnv) -> Range {
        let shift = |r: &Range| {
            r.as_integer()
                .and_then(|k| u32::try_from(k).ok())
                .filter(|k| *k < 128)
        };
        let r = match op {
            _ if op.is_comparison() => return Range::constants(0, 1),
            _ if self.program.types.is_float(ty) => return Range::top(),
            BinOp::Add => ra.add(rb),
            BinOp::Sub => ra.sub(rb),
            BinOp::Mul => ra.mul(rb, env),
            BinOp::Div => ra.div(rb, env),
            BinOp::Rem => ra.rem(rb, env),
            BinOp::Shl => match shift(rb) {
                Some(k) => ra.shl(k),
                None => Range::top(),
            },
            BinOp::Shr => match shift(rb) {
                Some(k) => ra.shr(k),
                None => Range::top(),
            },
            BinOp::BitAnd => ra.bit_and(rb, env),
            BinOp::BitXor if rb.as_integer() == Some(BigInt::from(-1)) => ra.neg().add_const(-1),
            BinOp::BitXor if ra.as_integer() == Some(BigInt::from(-1)) => rb.neg().add_const(-1),
            BinOp::BitOr | BinOp::BitXor => ra.bit_or_xor(rb, env),
            _ => Range::top(),
        };
        self.unsigned_wrap(r, ty, env)
    }

    /// The range of a non-phi instruction's result (`None` for results with no value).
    fn eval(&self, state: &RangeState, env: &SignEnv, v: Value, block: Block) -> Option<Range> {
        let inst = self.func.inst(v);
        let get = |x: Value| state.range(x);
        Some(match &inst.kind {
            InstKind::Param(_) => self.symbol_of(v),
            InstKind::Const(Constant::Int(c)) => Range::singleton(Expr::integer(BigInt::from(*c))),
            InstKind::Const(Constant::Float(f)) => match BigRational::from_float(*f) {
                Some(q) => Range::singleton(Expr::rational(q)),
                None => Range::top(),
            },
            InstKind::Undef | InstKind::Phi(_) => Range::top(),
            InstKind::Binary(BinOp::Mul, a, b)
                if a == b && self.program.types.is_integer(inst.ty) =>
            {
                self.unsigned_wrap(get(*a).square(env), inst.ty, env)
            }
            InstKind::Binary(op, a, b) => self.binary(*op, &get(*a), &get(*b), inst.ty, env),
            InstKind::Unary(UnOp::Neg, a) => {
                if self.program.types.is_float(inst.ty) {
                    get(*a).neg()
                } else {
                    self.unsigned_wrap(get(*a).neg(), inst.ty, env)
                }
            }
            InstKind::Unary(UnOp::Not, _) => Range::constants(0, 1),
            InstKind::Unary(UnOp::BitNot, a) => {
                self.unsigned_wrap(get(*a).neg().add_const(-1), inst.ty, env)
            }
            InstKind::Cast(a) => self.cast(get(*a), self.ty(*a), inst.ty, env),
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => self.select(state, env, v, block, *cond, *then_value, *else_value),
            InstKind::Load { .. } => self.loads.get(&v).cloned().unwrap_or_else(Range::top),
            InstKind::Store { .. } => return None,
            InstKind::PtrAdd { base, index, scale } => {
                get(*base).add(&get(*index).scale(&BigInt::from(*scale)))
            }
            InstKind::FieldAddr { base, offset, .. } => {
                get(*base).add(&Range::singleton(Expr::integer(BigInt::from(*offset))))
            }
            InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => self.symbol_of(v),
            InstKind::Call { .. } => {
                if matches!(self.program.types.get(inst.ty), Type::Void) {
                    return None;
                }
                Range::top()
            }
        })
    }

    /// Ternary expansion: each arm is evaluated in a copy of the state refined by the
    /// condition, recomputing the block's earlier values so that arms derived from the
    /// compared values (`x < 0 ? -x : x`) see the constraint too.
    #[allow(clippy::too_many_arguments)]
    fn select(
        &self,
        state: &RangeState,
        env: &SignEnv,
        v: Value,
        block: Block,
        cond: Value,
        then_value: Value,
        else_value: Value,
    ) -> Range {
        let mut arms = Vec::new();
        for (taken, arm) in [(true, then_value), (false, else_value)] {
            let mut s = state.clone();
            self.refine_cond(&mut s, env, cond, taken, 0);
            if !s.reached {
                continue;
            }
            let arm_env = self.env_for(&s);
            for &u in &self.func.block(block).insts {
                if u == v {
                    break;
                }
                let kind = &self.func.inst(u).kind;
                if kind.is_phi() || matches!(kind, InstKind::Select { .. }) {
                    continue;
                }
                let changed = kind.operands().iter().any(|o| s.get(*o) != state.get(*o));
                if changed {
                    if let Some(r) = self.eval(&s, &arm_env, u, block) {
                        let r = match s.get(u) {
                            Some(old) => old.intersect(&r, &arm_env),
                            None => r,
                        };
                        self.set(&mut s, u, r);
                    }
                }
            }
            arms.push(s.range(arm));
        }
        match arms.as_slice() {
            [] => state.range(then_value).union(&state.range(else_value), env),
            [one] => one.clone(),
            [a, b, ..] => a.union(b, env),
        }
    }
}

impl ForwardAnalysis for RangeAnalysis<'_> {
    type State = RangeState;

    fn entry_state(&self, _: &Function) -> RangeState {
        RangeState::new(true, false, self.env.clone(), &self.empty)
    }

    fn bottom(&self, _: &Function) -> RangeState {
        RangeState::new(false, false, self.env.clone(), &self.empty)
    }

    fn top(&self, _: &Function) -> RangeState {
        RangeState::new(true, true, self.env.clone(), &self.empty)
    }

    fn transfer_block(&self, func: &Function, block: Block, state: &mut RangeState) {
        if !state.reached || state.top {
            return;
        }
        let env = self.env_for(state);
        for &v in &func.block(block).insts {
            if func.inst(v).kind.is_phi() {
                continue;
            }
            if let Some(r) = self.eval(state, &env, v, block) {
                self.set(state, v, r);
            }
        }
    }

    fn transfer_edge(&self, func: &Function, from: Block, to: Block, state: &mut RangeState) {
        if !state.reached || state.top {
            return;
        }
        if let Terminator::Branch {
            cond,
            then_block,
            else_block,
        } = func.block(from).terminator
        {
            if then_block != else_block {
                let env = self.env_for(state);
                self.refine_cond(state, &env, cond, to == then_block, 0);
                if !state.reached {
                    return;
                }
            }
        }
        for cl in self.counted.get(&(from, to)).into_iter().flatten() {
            self.enter_counted_loop(cl, state);
        }
        // Phis read their arguments in the predecessor, all at once.
        let mut phis = Vec::new();
        for &v in &func.block(to).insts {
            if let InstKind::Phi(args) = &func.inst(v).kind {
                let r = args
                    .iter()
                    .find(|(b, _)| *b == from)
                    .map(|(_, a)| state.range(*a))
                    .unwrap_or_else(Range::top);
                phis.push((v, r));
            }
        }
        // Along a back edge, values of the loop body belong to the finished iteration; the
        // header must not join them with the next one.
        // The loops headed by `to` are `to`'s innermost loop and the ancestors sharing its
        // header (looked up, not searched: a function may have thousands of loops).
        let mut headed = self.forest.innermost(to);
        while let Some(id) = headed {
            let l = self.forest.loop_(id);
            if l.header != to {
                break;
            }
            if l.contains(from) {
                // Only the loop's own values are forgotten: a walk over its instructions,
                // not over every value the state holds.
                for &b in &l.blocks {
                    for &v in &func.block(b).insts {
                        state.ranges.remove(v);
                        state.facts.remove(v);
                    }
                }
                break;
            }
            headed = l.parent;
        }
        for (v, r) in phis {
            self.set(state, v, r);
        }
    }
}
