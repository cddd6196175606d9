//! Sign analysis (thesis §8.5): the possible signs {-, 0, +} of every SSA value at every block.
//!
//! A forward monotone framework over [`crate::framework`]: the state of a block maps every
//! value to a [`SignSet`] (empty = not computed on any path reaching here). Transfer
//! functions follow Table 8.6 and C semantics (truncating division, unsigned wrap, sign
//! changes of narrowing casts); phis are evaluated on edges from the predecessor's state,
//! and conditional edges refine the compared values:
//!
//! * the sign rule g) of Table 8.6 on both operands of `a < b`, `a == b`, ...;
//! * pattern 1 and 2: the comparison `x REL y` becomes the sign equation `#d = x - y` over
//!   the reconstructed expressions of `x` and `y`, solved with [`symbolic::solve_signs`], so
//!   `a = 3*b; if (a > 0)` makes `b` positive and `if (a + b > c)` uses the signs of `b`, `c`;
//! * pattern 3: the arms of `c ? x : y` are re-evaluated under `c` and `!c`.
//!
//! After a refinement, pure values computed from refined values are re-evaluated, so
//! `t = b + 1; if (b >= 0) use(t)` sees `t` positive. SSA makes this sound: every value
//! usable at a point was computed from the latest instances of its operands.
//!
//! Expression-level reasoning (patterns 1, 2, and the sign of `i*i`) uses only values whose
//! reconstruction is *exact*: integer values whose expressions do not ignore unsigned
//! wrap-around, sign-changing casts, or the difference between two loads that share one
//! symbol. Float values get sign rules only; NaN is not modelled.

use crate::framework::{loop_reverse_postorder, solve, ForwardAnalysis, Lattice, SolverConfig};
use crate::pvec::{JoinMemo, PVec};
use crate::reconstruct::Reconstruction;
use frontend::ir::{BinOp, Block, Callee, Constant, Function, InstKind, Program, UnOp, Value};
use frontend::loops::LoopForest;
use frontend::types::{IntRank, Type, TypeId, TypeTable};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use symbolic::{sign_of, solve_signs, Equation, Expr, SignEnv, SignSet, Var};

pub use crate::library::pure_library_function;

/// Signs of every value at one program point; `reachable == false` is the lattice bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignState {
    reachable: bool,
    /// Persistent, so that the solver's copy per block and per edge shares everything the
    /// states do not change (a vector per state made long functions quadratic).
    signs: PVec<SignSet>,
    /// The joins of one analysis, shared by all its states (see [`PVec::join_with_memo`]).
    memo: SharedMemo,
}

/// A [`JoinMemo`] shared by the states of one analysis; not part of a state's value.
#[derive(Clone, Default)]
struct SharedMemo(Arc<Mutex<JoinMemo<SignSet>>>);

impl SharedMemo {
    fn lock(&self) -> std::sync::MutexGuard<'_, JoinMemo<SignSet>> {
        // A panic while joining leaves the memo's entries valid: each is inserted whole.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl PartialEq for SharedMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SharedMemo {}

impl std::fmt::Debug for SharedMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedMemo")
    }
}

impl SignState {
    /// The sign of `v` here (empty when not computed on any path to this point).
    pub fn get(&self, v: Value) -> SignSet {
        self.signs.get(v.index()).copied().unwrap_or(SignSet::EMPTY)
    }

    pub fn is_reachable(&self) -> bool {
        self.reachable
    }
}

impl Lattice for SignState {
    fn join(&mut self, other: &Self) -> bool {
        if !other.reachable {
            return false;
        }
        if !self.reachable {
            *self = other.clone();
            return true;
        }
        // Empty (not computed on this path) is the union's identity.
        let mut memo = self.memo.lock();
        self.signs.join_with_memo(
            &other.signs,
            |_, a, b| {
                let u = a.union(*b);
                (u != *a).then_some(u)
            },
            &mut memo,
        )
    }
}

/// How C represents a value, for the sign effects of wrap-around and conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repr {
    Signed(u64),
    Unsigned(u64),
    Bool,
    Float(u64),
    Pointer,
    Other,
}

fn repr(types: &TypeTable, ty: TypeId) -> Repr {
    match types.get(ty) {
        Type::Int {
            rank: IntRank::Bool,
            ..
        } => Repr::Bool,
        Type::Int { signed: true, .. } => Repr::Signed(types.size_of(ty).unwrap_or(8)),
        Type::Int { signed: false, .. } => Repr::Unsigned(types.size_of(ty).unwrap_or(8)),
        Type::Float(_) => Repr::Float(types.size_of(ty).unwrap_or(8)),
        Type::Pointer { .. } => Repr::Pointer,
        _ => Repr::Other,
    }
}

impl Repr {
    fn never_negative(self) -> bool {
        matches!(self, Repr::Unsigned(_) | Repr::Bool | Repr::Pointer)
    }
    fn is_integer(self) -> bool {
        matches!(self, Repr::Signed(_) | Repr::Unsigned(_) | Repr::Bool)
    }
}

/// Whether converting `from` to `to` keeps every value (so signs carry over both ways).
fn value_preserving(from: Repr, to: Repr) -> bool {
    match (from, to) {
        (Repr::Signed(a), Repr::Signed(b)) => b >= a,
        (Repr::Unsigned(a), Repr::Unsigned(b)) => b >= a,
        (Repr::Unsigned(a), Repr::Signed(b)) => b > a,
        (Repr::Bool, Repr::Signed(_) | Repr::Unsigned(_) | Repr::Bool) => true,
        (Repr::Pointer, Repr::Pointer) => true,
        _ => false,
    }
}

/// The signs a value `x` may have given `x rel y` with `y` in `other` (Table 8.6 g), lifted
/// to all comparisons). Reasoning only about sup/inf of the sign sets, so it holds for
/// reals as well as integers.
fn bound_by(rel: BinOp, other: SignSet) -> SignSet {
    if other.is_empty() {
        return SignSet::TOP;
    }
    match rel {
        BinOp::Lt if other.is_subset(SignSet::NON_POS) => SignSet::NEG,
        BinOp::Le if other.is_subset(SignSet::NEG) => SignSet::NEG,
        BinOp::Le if other.is_subset(SignSet::NON_POS) => SignSet::NON_POS,
        BinOp::Gt if other.is_subset(SignSet::NON_NEG) => SignSet::POS,
        BinOp::Ge if other.is_subset(SignSet::POS) => SignSet::POS,
        BinOp::Ge if other.is_subset(SignSet::NON_NEG) => SignSet::NON_NEG,
        BinOp::Eq => other,
        BinOp::Ne if other == SignSet::ZERO => SignSet::NON_ZERO,
        _ => SignSet::TOP,
    }
}

/// The sign of `x - y` when `x rel y` holds.
fn difference_sign(rel: BinOp) -> SignSet {
    match rel {
        BinOp::Lt => SignSet::NEG,
        BinOp::Le => SignSet::NON_POS,
        BinOp::Gt => SignSet::POS,
        BinOp::Ge => SignSet::NON_NEG,
        BinOp::Eq => SignSet::ZERO,
        _ => SignSet::NON_ZERO,
    }
}

/// The possible values (0 or 1) of `x rel y` for `x` in `a`, `y` in `b`, as a sign set.
fn compare_signs(rel: BinOp, a: SignSet, b: SignSet) -> SignSet {
    let rank = |s: SignSet| match s {
        SignSet::NEG => 0,
        SignSet::ZERO => 1,
        _ => 2,
    };
    let mut out = SignSet::EMPTY;
    for x in [SignSet::NEG, SignSet::ZERO, SignSet::POS] {
        for y in [SignSet::NEG, SignSet::ZERO, SignSet::POS] {
            if !x.is_subset(a) || !y.is_subset(b) {
                continue;
            }
            let ord = rank(x).cmp(&rank(y));
            let known = if x == y && x != SignSet::ZERO {
                None
            } else {
                Some(ord)
            };
            let truth = known.map(|o| match rel {
                BinOp::Lt => o.is_lt(),
                BinOp::Le => o.is_le(),
                BinOp::Gt => o.is_gt(),
                BinOp::Ge => o.is_ge(),
                BinOp::Eq => o.is_eq(),
                _ => o.is_ne(),
            });
            out = out.union(match truth {
                Some(true) => SignSet::POS,
                Some(false) => SignSet::ZERO,
                None => SignSet::NON_NEG,
            });
        }
    }
    out
}

/// Signs of the values of one function.
#[derive(Clone, Debug)]
pub struct SignFacts {
    entry: Vec<SignState>,
    exit: Vec<SignState>,
    at_def: Vec<SignSet>,
    /// Values sharing each symbol of the reconstruction (loads of one address share one).
    var_values: HashMap<Var, Vec<Value>>,
    /// Why the solver gave up (every sign is then top), if it did.
    pub gave_up: Option<String>,
    /// Pairs of different state nodes the solver's joins compared: their work, which
    /// tests bound.
    pub join_work: usize,
}

impl SignFacts {
    /// The sign of `value` at the entry of `block` (after its phis); empty when the block is
    /// unreachable or the value is not computed on any path reaching it.
    pub fn at_entry(&self, block: Block, value: Value) -> SignSet {
        self.entry
            .get(block.index())
            .map_or(SignSet::EMPTY, |s| s.get(value))
    }

    /// The sign of `value` at the exit of `block` (before the edge refinements).
    pub fn at_exit(&self, block: Block, value: Value) -> SignSet {
        self.exit
            .get(block.index())
            .map_or(SignSet::EMPTY, |s| s.get(value))
    }

    /// The sign of `value` where it is defined (empty for values never reached and for
    /// stores and void calls).
    pub fn of(&self, value: Value) -> SignSet {
        self.at_def
            .get(value.index())
            .copied()
            .unwrap_or(SignSet::EMPTY)
    }

    /// Whether `block` is reachable according to the analysis (infeasible branches are not).
    pub fn is_reachable(&self, block: Block) -> bool {
        self.entry.get(block.index()).is_some_and(|s| s.reachable)
    }

    /// The sign environment of the symbols of `rec` at the entry of `block`: each symbol's
    /// values' signs there, or at their definition when not yet computed at that point
    /// (loads later in the block). Symbols shared by several values get the union.
    pub fn env_for(&self, block: Block, rec: &Reconstruction) -> SignEnv {
        self.env_for_symbols(block, rec.symbols.iter().map(|s| &s.var))
    }

    /// [`Self::env_for`] of the given symbols only: the expressions of one loop of a long
    /// function name few of its symbols, and an environment of all of them per loop made
    /// a thousand loops in a row quadratic. A symbol left out has no known sign.
    pub fn env_for_symbols<'v>(
        &self,
        block: Block,
        symbols: impl IntoIterator<Item = &'v Var>,
    ) -> SignEnv {
        let mut env = SignEnv::new();
        for var in symbols {
            let Some(values) = self.var_values.get(var) else {
                continue;
            };
            let mut s = SignSet::EMPTY;
            for &v in values {
                let here = self.at_entry(block, v);
                s = s.union(if here.is_empty() { self.of(v) } else { here });
            }
            if !s.is_empty() && !s.is_top() {
                env.set(var.clone(), s);
            }
        }
        env
    }
}

/// Runs sign analysis on `func`. `injected` signs (thesis §6.2 value injection) replace the
/// computed sign of those values at their definition.
pub fn sign_analysis(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    injected: &HashMap<Value, SignSet>,
) -> SignFacts {
    let analysis = SignAnalysis::new(program, func, forest, rec, injected);
    let solution = solve(&analysis, func, forest, SolverConfig::default());
    let mut at_def = vec![SignSet::EMPTY; func.insts.len()];
    for b in func.blocks() {
        let mut state = solution.entry[b.index()].clone();
        if !state.reachable {
            continue;
        }
        for &v in &func.block(b).insts {
            if func.inst(v).kind.is_phi() {
                at_def[v.index()] = state.get(v);
            }
        }
        for &v in &func.block(b).insts {
            if !func.inst(v).kind.is_phi() {
                analysis.transfer_inst(v, &mut state);
                at_def[v.index()] = state.get(v);
            }
        }
    }
    // The memo holds every node it joined: dropped with the solver's work.
    let join_work = std::mem::take(&mut *analysis.memo.lock()).compared();
    SignFacts {
        entry: solution.entry,
        exit: solution.exit,
        at_def,
        var_values: analysis.var_values,
        gave_up: solution.gave_up,
        join_work,
    }
}

struct SignAnalysis<'a> {
    func: &'a Function,
    rec: &'a Reconstruction,
    injected: &'a HashMap<Value, SignSet>,
    /// Whether the reconstruction of each value is exact for sign reasoning.
    exact: Vec<bool>,
    var_values: HashMap<Var, Vec<Value>>,
    /// Pure non-phi instructions in reverse postorder (loops contiguous), for
    /// re-evaluation after refinement.
    pure_order: Vec<Value>,
    /// Each value's pure users, as positions in `pure_order`: re-evaluation after a
    /// refinement visits only what the refined values reach, not every instruction (a
    /// walk over all of them per CFG edge made long functions quadratic).
    pure_users: Vec<Vec<u32>>,
    /// `pure_users` without the users read only inside their own block (and not by a value
    /// read outside it), which are dead on every edge: re-evaluation at an edge visits these. Each case edge of a `switch`
    /// chain refines the scrutinee, whose users are the chain's compares: visiting them
    /// all made a 5,000-case switch quadratic.
    edge_users: Vec<Vec<u32>>,
    /// Each value's representation, computed once: re-evaluation asks for it on every
    /// visit, and a type's size is not free.
    reprs: Vec<Repr>,
    /// The all-empty state vector every state starts from, so that all of them share
    /// their untouched parts.
    empty: PVec<SignSet>,
    /// The joins' memo, which every state of this analysis shares.
    memo: SharedMemo,
    /// Per block, the end of the positions in `pure_order` whose values may be defined in
    /// a state leaving the block (the end of its region, see [`regions`]): re-evaluation
    /// after a refinement skips the users past it, which are not defined there (in a
    /// function of a thousand loops, the users of `n` in the loops that follow).
    reach_end: Vec<u32>,
    /// Per block, the first index in the loop-contiguous order of its region, and per
    /// position in `pure_order`, the last index of the regions of its value's uses: a
    /// value whose uses all end before a block's region is dead there and after, and
    /// re-evaluation skips it (the users of `n` in the loops before).
    live_from: Vec<u32>,
    live_until: Vec<u32>,
}

/// Where values can be live, from a reverse postorder `order` in which every loop's blocks
/// are contiguous. Then a path that goes from a block back to an earlier one takes a back
/// edge, and the loop of its header holds both blocks; so what a block can reach again, or
/// be reached from later, lies in its *region*: its outermost loop's range of `order`, or
/// the block alone outside loops. `None` when some loop is not contiguous in `order` or
/// the CFG is irreducible: no bounds then.
fn regions(forest: &LoopForest, order: &[Block], n_blocks: usize) -> Option<Vec<(u32, u32)>> {
    if forest.irreducible.is_some() {
        return None;
    }
    let mut index = vec![u32::MAX; n_blocks];
    for (k, b) in order.iter().enumerate() {
        index[b.index()] = k as u32;
    }
    let mut region: Vec<(u32, u32)> = index.iter().map(|&k| (k, k)).collect();
    for l in &forest.loops {
        let (mut lo, mut hi) = (u32::MAX, 0);
        for b in &l.blocks {
            let k = index[b.index()];
            if k == u32::MAX {
                return None;
            }
            lo = lo.min(k);
            hi = hi.max(k);
        }
        if (hi + 1 - lo) as usize != l.blocks.len() {
            return None;
        }
        if l.parent.is_none() {
            for b in &l.blocks {
                region[b.index()] = (lo, hi);
            }
        }
    }
    Some(region)
}

impl<'a> SignAnalysis<'a> {
    fn new(
        program: &'a Program,
        func: &'a Function,
        forest: &LoopForest,
        rec: &'a Reconstruction,
        injected: &'a HashMap<Value, SignSet>,
    ) -> Self {
        let mut var_values: HashMap<Var, Vec<Value>> = HashMap::new();
        for v in func.values() {
            if let Some(var) = rec.symbol(v) {
                var_values.entry(var.clone()).or_default().push(v);
            }
        }
        let mut analysis = SignAnalysis {
            func,
            rec,
            injected,
            exact: vec![false; func.insts.len()],
            var_values,
            pure_order: Vec::new(),
            pure_users: vec![Vec::new(); func.insts.len()],
            edge_users: Vec::new(),
            reprs: func
                .insts
                .iter()
                .map(|i| repr(&program.types, i.ty))
                .collect(),
            empty: PVec::new(func.insts.len(), SignSet::EMPTY),
            memo: SharedMemo::default(),
            reach_end: Vec::new(),
            live_from: Vec::new(),
            live_until: Vec::new(),
        };
        let rpo = loop_reverse_postorder(func, forest);
        let mut block_end = vec![0; func.blocks.len()];
        for &b in &rpo {
            for &v in &func.block(b).insts {
                let e = analysis.compute_exact(v);
                analysis.exact[v.index()] = e;
                let kind = &func.inst(v).kind;
                let pure = matches!(
                    kind,
                    InstKind::Binary(..)
                        | InstKind::Unary(..)
                        | InstKind::Cast(_)
                        | InstKind::Select { .. }
                );
                if pure {
                    let position = analysis.pure_order.len() as u32;
                    for o in kind.operands() {
                        if let Some(users) = analysis.pure_users.get_mut(o.index()) {
                            if users.last() != Some(&position) {
                                users.push(position);
                            }
                        }
                    }
                    analysis.pure_order.push(v);
                }
            }
            block_end[b.index()] = analysis.pure_order.len() as u32;
        }
        analysis.bound_liveness(forest, &rpo, &block_end);
        let mut escapes = read_outside_their_block(func);
        // A value that an escaping value of its own block reads is needed after the block
        // too (`w = c[i] + 1; u = w * 2` with `u` read later): users come after their
        // operands in `pure_order`, so one pass backwards carries it through such chains.
        for &v in analysis.pure_order.iter().rev() {
            if escapes[v.index()] {
                for o in func.inst(v).kind.operands() {
                    if func.inst(o).block == func.inst(v).block {
                        escapes[o.index()] = true;
                    }
                }
            }
        }
        analysis.edge_users = analysis
            .pure_users
            .iter()
            .map(|users| {
                users
                    .iter()
                    .copied()
                    .filter(|&u| escapes[analysis.pure_order[u as usize].index()])
                    .collect()
            })
            .collect();
        analysis
    }

    /// Fills `reach_end`, `live_from` and `live_until` (unbounded without regions).
    fn bound_liveness(&mut self, forest: &LoopForest, order: &[Block], block_end: &[u32]) {
        let func = self.func;
        let n = func.blocks.len();
        let Some(region) = regions(forest, order, n) else {
            self.reach_end = vec![u32::MAX; n];
            self.live_from = vec![0; n];
            self.live_until = vec![u32::MAX; self.pure_order.len()];
            return;
        };
        self.reach_end = region
            .iter()
            .map(|&(_, hi)| {
                order
                    .get(hi as usize)
                    .map_or(u32::MAX, |b| block_end[b.index()])
            })
            .collect();
        self.live_from = region.iter().map(|&(lo, _)| lo).collect();
        // The last region index of each value's uses; a phi argument is used at the end of
        // its predecessor.
        let mut until = vec![0u32; func.insts.len()];
        for_each_use(func, |v, at, _| {
            if let Some(u) = until.get_mut(v.index()) {
                *u = (*u).max(region[at.index()].1);
            }
        });
        self.live_until = self.pure_order.iter().map(|v| until[v.index()]).collect();
    }

    fn repr(&self, v: Value) -> Repr {
        self.reprs[v.index()]
    }

    fn compute_exact(&self, v: Value) -> bool {
        let r = self.repr(v);
        if !r.is_integer() {
            return false;
        }
        let ex = |w: Value| self.exact.get(w.index()).copied().unwrap_or(false);
        if let Some(var) = self.rec.symbol(v) {
            // A symbol shared by several loads may stand for different values.
            return self.var_values.get(var).is_some_and(|vs| vs.len() == 1);
        }
        let signed = matches!(r, Repr::Signed(_));
        match &self.func.inst(v).kind {
            InstKind::Const(_) => true,
            InstKind::Phi(args) => args.iter().all(|(_, a)| ex(*a)),
            InstKind::Binary(op, a, b) => {
                let wraps = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl);
                (signed || !wraps) && ex(*a) && ex(*b)
            }
            InstKind::Unary(UnOp::Neg | UnOp::BitNot, a) => signed && ex(*a),
            InstKind::Cast(a) => value_preserving(self.repr(*a), r) && ex(*a),
            InstKind::Select {
                then_value,
                else_value,
                ..
            } => ex(*then_value) && ex(*else_value),
            _ => false,
        }
    }

    /// The sign of `v`'s result from its operands' signs in `state` (Table 8.6).
    fn eval(&self, v: Value, state: &SignState) -> SignSet {
        let inst = self.func.inst(v);
        let r = self.repr(v);
        let get = |w: Value| state.get(w);
        let raw = match &inst.kind {
            InstKind::Param(_) | InstKind::Undef => SignSet::TOP,
            InstKind::Const(Constant::Int(c)) => SignSet::of_int(&(*c).into()),
            InstKind::Const(Constant::Float(f)) => {
                if *f > 0.0 {
                    SignSet::POS
                } else if *f < 0.0 {
                    SignSet::NEG
                } else if *f == 0.0 {
                    SignSet::ZERO
                } else {
                    SignSet::TOP
                }
            }
            InstKind::Phi(_) => state.get(v),
            InstKind::Binary(op, a, b) => {
                self.eval_binary(*op, get(*a), get(*b), r, self.repr(*a), v, state)
            }
            InstKind::Unary(op, a) => {
                let s = get(*a);
                match op {
                    UnOp::Neg => s.negated(),
                    UnOp::Not => {
                        if s == SignSet::ZERO {
                            SignSet::POS
                        } else if s.is_subset(SignSet::NON_ZERO) {
                            SignSet::ZERO
                        } else {
                            SignSet::NON_NEG
                        }
                    }
                    // ~x = -x - 1
                    UnOp::BitNot => s.negated().plus(SignSet::NEG),
                }
            }
            InstKind::Cast(a) => cast_sign(get(*a), self.repr(*a), r),
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => self.eval_select(*cond, *then_value, *else_value, state),
            InstKind::Load { .. } => SignSet::TOP,
            InstKind::Store { .. } => SignSet::EMPTY,
            InstKind::PtrAdd { .. }
            | InstKind::FieldAddr { .. }
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => SignSet::POS,
            InstKind::Call { callee, .. } => {
                let lib = match callee {
                    Callee::Direct(name) => pure_library_function(name),
                    Callee::Indirect(_) => None,
                };
                let mut s = lib.unwrap_or(SignSet::TOP);
                if s.is_top() && self.rec.symbol(v).is_none() {
                    // A call reconstructed from the callee's return expressions.
                    s = self.symbolic_sign(v, state).unwrap_or(SignSet::TOP);
                }
                s
            }
        };
        if matches!(inst.kind, InstKind::Store { .. }) {
            return raw;
        }
        let raw = if r.never_negative() {
            raw.intersect(SignSet::NON_NEG).union(if raw.has_neg() {
                SignSet::POS
            } else {
                SignSet::EMPTY
            })
        } else {
            raw
        };
        if r == Repr::Bool {
            return if raw == SignSet::ZERO {
                raw
            } else if raw.is_subset(SignSet::POS) {
                SignSet::POS
            } else {
                SignSet::NON_NEG
            };
        }
        raw
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_binary(
        &self,
        op: BinOp,
        a: SignSet,
        b: SignSet,
        r: Repr,
        operand: Repr,
        v: Value,
        state: &SignState,
    ) -> SignSet {
        if a.is_empty() || b.is_empty() {
            return SignSet::EMPTY;
        }
        let unsigned = matches!(r, Repr::Unsigned(_));
        let float = matches!(r, Repr::Float(_));
        let s = match op {
            BinOp::Add => a.plus(b),
            BinOp::Sub => {
                if unsigned && b != SignSet::ZERO {
                    SignSet::NON_NEG
                } else {
                    a.plus(b.negated())
                }
            }
            BinOp::Mul => {
                let m = a.times(b);
                // Floats underflow to zero.
                if float && m.intersect(SignSet::NON_ZERO) != SignSet::EMPTY {
                    m.union(SignSet::ZERO)
                } else {
                    m
                }
            }
            BinOp::Div => {
                let nonzero_b = b.intersect(SignSet::NON_ZERO);
                if nonzero_b.is_empty() {
                    // Division by zero: no value, but do not make the program unreachable.
                    return SignSet::TOP;
                }
                let q = a.times(nonzero_b);
                // C truncation (and float underflow) can give 0 from nonzero operands.
                if q.intersect(SignSet::NON_ZERO).is_empty() {
                    q
                } else {
                    q.union(SignSet::ZERO)
                }
            }
            BinOp::Rem => {
                if a == SignSet::ZERO {
                    SignSet::ZERO
                } else {
                    a.union(SignSet::ZERO)
                }
            }
            // Signed overflow is undefined, so shifting keeps the sign; unsigned wrap below.
            BinOp::Shl => a,
            BinOp::Shr => {
                if b == SignSet::ZERO {
                    a
                } else {
                    let mut s = a.intersect(SignSet::NEG);
                    if a.has_pos() || a.has_zero() {
                        s = s.union(SignSet::ZERO);
                    }
                    if a.has_pos() {
                        s = s.union(SignSet::POS);
                    }
                    s
                }
            }
            BinOp::BitAnd => {
                if a == SignSet::ZERO || b == SignSet::ZERO {
                    SignSet::ZERO
                } else if a == SignSet::NEG && b == SignSet::NEG {
                    SignSet::NEG
                } else if a.is_subset(SignSet::NON_NEG) || b.is_subset(SignSet::NON_NEG) {
                    SignSet::NON_NEG
                } else {
                    SignSet::TOP
                }
            }
            BinOp::BitOr => {
                if a.is_subset(SignSet::NEG) || b.is_subset(SignSet::NEG) {
                    SignSet::NEG
                } else if a.is_subset(SignSet::NON_NEG) && b.is_subset(SignSet::NON_NEG) {
                    if a == SignSet::POS || b == SignSet::POS {
                        SignSet::POS
                    } else if a == SignSet::ZERO && b == SignSet::ZERO {
                        SignSet::ZERO
                    } else {
                        SignSet::NON_NEG
                    }
                } else {
                    SignSet::TOP
                }
            }
            BinOp::BitXor => {
                if b == SignSet::ZERO {
                    a
                } else if a == SignSet::ZERO {
                    b
                } else if a.is_subset(SignSet::NON_NEG) && b.is_subset(SignSet::NON_NEG)
                    || a.is_subset(SignSet::NEG) && b.is_subset(SignSet::NEG)
                {
                    SignSet::NON_NEG
                } else if a.is_subset(SignSet::NEG) && b.is_subset(SignSet::NON_NEG)
                    || a.is_subset(SignSet::NON_NEG) && b.is_subset(SignSet::NEG)
                {
                    SignSet::NEG
                } else {
                    SignSet::TOP
                }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                // Unsigned comparisons of converted negatives do not follow the signs.
                if matches!(operand, Repr::Unsigned(_) | Repr::Pointer)
                    && (a.has_neg() || b.has_neg())
                {
                    SignSet::NON_NEG
                } else {
                    compare_signs(op, a, b)
                }
            }
        };
        let s = if unsigned && matches!(op, BinOp::Add | BinOp::Mul | BinOp::Shl) && s.has_pos() {
            // Unsigned arithmetic wraps; a positive result may wrap to 0.
            s.union(SignSet::ZERO)
        } else {
            s
        };
        if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul)
            && self.exact[v.index()]
            && !(s.is_empty() || s == SignSet::ZERO || s == SignSet::POS || s == SignSet::NEG)
        {
            if let Some(sym) = self.symbolic_sign(v, state) {
                return s.intersect(sym);
            }
        }
        s
    }

    /// The sign of `v` from its reconstructed expressions and the signs of their symbols:
    /// catches correlations the rules miss (`i*i >= 0`, `(i + 1) - i > 0`).
    fn symbolic_sign(&self, v: Value, state: &SignState) -> Option<SignSet> {
        let exprs = self.rec.of(v);
        if exprs.is_empty() || exprs.len() > 4 {
            return None;
        }
        let env = self.env_of(exprs.iter(), state)?;
        let mut s = SignSet::EMPTY;
        for e in exprs {
            s = s.union(sign_of(e, &env));
        }
        (!s.is_empty()).then_some(s)
    }

    /// The environment of the symbols of `exprs` in `state`; `None` if a symbol does not
    /// stand for exactly one integer value.
    fn env_of<'e>(
        &self,
        exprs: impl Iterator<Item = &'e Expr>,
        state: &SignState,
    ) -> Option<SignEnv> {
        let mut env = SignEnv::new();
        for e in exprs {
            for var in e.vars() {
                let [value] = self.var_values.get(&var)?.as_slice() else {
                    return None;
                };
                let s = state.get(*value);
                if !s.is_empty() && !s.is_top() {
                    env.set(var, s);
                }
            }
        }
        Some(env)
    }

    /// Pattern 3: each arm of `cond ? x : y` evaluated where `cond` is known true/false.
    fn eval_select(&self, cond: Value, x: Value, y: Value, state: &SignState) -> SignSet {
        let mut s = SignSet::EMPTY;
        for (arm, taken) in [(x, true), (y, false)] {
            let mut refined = state.clone();
            if !self.refine_condition(&mut refined, cond, taken, None) {
                continue;
            }
            s = s.union(refined.get(arm));
        }
        s
    }

    /// Applies one instruction to `state`.
    fn transfer_inst(&self, v: Value, state: &mut SignState) {
        let s = match self.injected.get(&v) {
            Some(s) => *s,
            None => self.eval(v, state),
        };
        state.signs.set(v.index(), s);
    }

    /// Refines `state` with `cond` being true (`taken`) or false; returns `false` when that
    /// is impossible given the signs (the edge is infeasible).
    /// Refines the signs under `cond` being `taken`, in the state leaving block `at` when
    /// it is known: re-evaluation then visits only the users defined and live there.
    fn refine_condition(
        &self,
        state: &mut SignState,
        cond: Value,
        taken: bool,
        at: Option<Block>,
    ) -> bool {
        let before = state.signs.clone();
        let mut changed = false;
        let mut c = cond;
        let mut taken = taken;
        loop {
            let want = if taken {
                SignSet::NON_ZERO
            } else {
                SignSet::ZERO
            };
            if !self.refine(state, c, want, &mut changed) {
                return false;
            }
            match &self.func.inst(c).kind {
                InstKind::Unary(UnOp::Not, a) => {
                    c = *a;
                    taken = !taken;
                }
                InstKind::Cast(a)
                    if self.repr(*a).is_integer() && {
                        let (from, to) = (self.repr(*a), self.repr(c));
                        value_preserving(from, to) || to == Repr::Bool
                    } =>
                {
                    c = *a;
                }
                _ => break,
            }
        }
        if let InstKind::Binary(op, a, b) = self.func.inst(c).kind {
            if op.is_comparison() {
                let float = matches!(self.repr(a), Repr::Float(_));
                let rel = if taken { Some(op) } else { op.negated() };
                // NaN makes a false float comparison say nothing.
                if let Some(rel) = rel.filter(|_| taken || !float) {
                    if !self.refine(state, a, bound_by(rel, state.get(b)), &mut changed) {
                        return false;
                    }
                    if !self.refine(
                        state,
                        b,
                        bound_by(rel.swapped(), state.get(a)),
                        &mut changed,
                    ) {
                        return false;
                    }
                    self.refine_by_reconstruction(state, a, b, rel, &mut changed);
                }
            }
        }
        if changed {
            self.reevaluate(state, &before, at);
        }
        true
    }

    /// Intersects the sign of `v` with `set`, and of the operand of a value-preserving cast;
    /// `false` when nothing is left.
    fn refine(&self, state: &mut SignState, v: Value, set: SignSet, changed: &mut bool) -> bool {
        let old = state.get(v);
        if old.is_empty() {
            return true;
        }
        let new = old.intersect(set);
        if new.is_empty() {
            return false;
        }
        if new != old {
            state.signs.set(v.index(), new);
            *changed = true;
        }
        if let InstKind::Cast(a) = self.func.inst(v).kind {
            if value_preserving(self.repr(a), self.repr(v)) {
                return self.refine(state, a, set, changed);
            }
        }
        true
    }

    /// Patterns 1 and 2: solve `#d = x - y` with `#d` of the sign `rel` gives, over every
    /// pair of reconstructed alternatives, and refine the symbols' values.
    fn refine_by_reconstruction(
        &self,
        state: &mut SignState,
        a: Value,
        b: Value,
        rel: BinOp,
        changed: &mut bool,
    ) {
        if !self.exact[a.index()] || !self.exact[b.index()] {
            return;
        }
        let (xs, ys) = (self.rec.of(a), self.rec.of(b));
        if xs.is_empty() || ys.is_empty() || xs.len() * ys.len() > 8 {
            return;
        }
        let Some(env) = self.env_of(xs.iter().chain(ys), state) else {
            return;
        };
        let d = Var::new("#d");
        let env = env.with(d.clone(), difference_sign(rel));
        let mut vars = std::collections::BTreeSet::new();
        for e in xs.iter().chain(ys) {
            vars.extend(e.vars());
        }
        let mut acc: HashMap<Var, SignSet> = HashMap::new();
        for x in xs {
            for y in ys {
                let Ok(diff) = x.checked_sub(y) else { return };
                if diff.vars().is_empty()
                    && sign_of(&diff, &env)
                        .intersect(difference_sign(rel))
                        .is_empty()
                {
                    continue;
                }
                let solved = solve_signs(&[Equation::new(Expr::var("#d"), diff)], &env);
                if vars.iter().any(|var| solved.get(var).is_empty()) {
                    continue; // this alternative cannot satisfy the comparison
                }
                for var in &vars {
                    let e = acc.entry(var.clone()).or_insert(SignSet::EMPTY);
                    *e = e.union(solved.get(var));
                }
            }
        }
        for (var, set) in acc {
            if set.is_empty() || set.is_top() {
                continue;
            }
            if let Some([value]) = self.var_values.get(&var).map(Vec::as_slice) {
                let mut c = false;
                let mut scratch = state.clone();
                if self.refine(&mut scratch, *value, set, &mut c) && c {
                    *state = scratch;
                    *changed = true;
                }
            }
        }
    }

    /// Recomputes pure values whose operands were refined (intersecting, never widening).
    /// Selects keep their sign: re-evaluating one would refine its condition again.
    fn reevaluate(&self, state: &mut SignState, before: &PVec<SignSet>, at: Option<Block>) {
        let (limit, live_from) = match at {
            Some(b) => (self.reach_end[b.index()], self.live_from[b.index()]),
            None => (u32::MAX, 0),
        };
        // Dead values keep their sign: nothing after this point reads it.
        let live = |u: u32| self.live_until[u as usize] >= live_from;
        // The same visits as one pass over `pure_order` that re-evaluates each instruction
        // with an operand changed so far: a refined value reaches its users at any
        // position, a re-evaluated one only the users after it. The refined values' users
        // are one sorted list; later ones go to a heap; both are taken in position order.
        let mut initial: Vec<u32> = Vec::new();
        // At an edge, a user read only inside its own block is dead: skipped.
        let users_of = if at.is_some() {
            &self.edge_users
        } else {
            &self.pure_users
        };
        for changed in state.signs.diff(before) {
            if let Some(users) = users_of.get(changed) {
                // Sorted: the users past `limit` are a suffix.
                let users = &users[..users.partition_point(|&u| u < limit)];
                initial.extend(users.iter().copied().filter(|&u| live(u)));
            }
        }
        initial.sort_unstable();
        initial.dedup();
        let mut next_initial = 0;
        let mut later: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        let mut last: Option<u32> = None;
        loop {
            let from_initial = initial.get(next_initial).copied();
            let from_later = later.peek().map(|r| r.0);
            let position = match (from_initial, from_later) {
                (Some(a), Some(b)) if b < a => later.pop().map(|r| r.0),
                (Some(a), _) => {
                    next_initial += 1;
                    Some(a)
                }
                (None, Some(_)) => later.pop().map(|r| r.0),
                (None, None) => None,
            };
            let Some(position) = position else { break };
            if last == Some(position) {
                continue;
            }
            last = Some(position);
            let v = self.pure_order[position as usize];
            let old = state.get(v);
            // Intersecting a single sign leaves it or empties it, and neither is recorded:
            // such a value needs no evaluation (every compare of a `switch` chain is one,
            // and the scrutinee's refinement on each case edge reaches all of them).
            let single = old == SignSet::NEG || old == SignSet::ZERO || old == SignSet::POS;
            if single
                || old.is_empty()
                || self.injected.contains_key(&v)
                || matches!(self.func.inst(v).kind, InstKind::Select { .. })
            {
                continue;
            }
            let new = old.intersect(self.eval(v, state));
            if !new.is_empty() && new != old {
                state.signs.set(v.index(), new);
                for &u in &users_of[v.index()] {
                    if u > position && u < limit && live(u) {
                        later.push(Reverse(u));
                    }
                }
            }
        }
    }
}

/// Per value, whether something outside its own block reads it: an instruction or
/// terminator of another block, or a phi (which reads it on an edge).
fn read_outside_their_block(func: &Function) -> Vec<bool> {
    let mut escapes = vec![false; func.insts.len()];
    for_each_use(func, |v, at, by_phi| {
        if let Some(e) = escapes.get_mut(v.index()) {
            *e |= by_phi || func.inst(v).block != at;
        }
    });
    escapes
}

/// Calls `used(value, block, by_phi)` for every read of a value: by an instruction or a
/// terminator of `block`, or by a phi, which reads it at the end of its predecessor `block`.
fn for_each_use(func: &Function, mut used: impl FnMut(Value, Block, bool)) {
    for b in func.blocks() {
        for &w in &func.block(b).insts {
            match &func.inst(w).kind {
                InstKind::Phi(args) => {
                    for &(pred, a) in args {
                        used(a, pred, true);
                    }
                }
                kind => {
                    for o in kind.operands() {
                        used(o, b, false);
                    }
                }
            }
        }
        for v in func.terminator_uses(b) {
            used(v, b, false);
        }
    }
}

/// The sign of a conversion of a value with sign `s` from `from` to `to`.
fn cast_sign(s: SignSet, from: Repr, to: Repr) -> SignSet {
    if s.is_empty() || s == SignSet::ZERO {
        return s;
    }
    if value_preserving(from, to) {
        return s;
    }
    let nonzero = s.intersect(SignSet::NON_ZERO);
    let zero = s.intersect(SignSet::ZERO);
    match (from, to) {
        (_, Repr::Bool) => zero.union(if nonzero.is_empty() {
            SignSet::EMPTY
        } else {
            SignSet::POS
        }),
        (Repr::Signed(a) | Repr::Unsigned(a), Repr::Unsigned(b)) if b >= a => {
            // Negatives wrap to large positives.
            zero.union(if nonzero.is_empty() {
                SignSet::EMPTY
            } else {
                SignSet::POS
            })
        }
        (Repr::Unsigned(a), Repr::Signed(b)) if a == b => zero.union(nonzero.union(SignSet::NEG)),
        (Repr::Pointer, Repr::Signed(8)) => zero.union(SignSet::NON_ZERO),
        (Repr::Pointer, Repr::Unsigned(8)) => s.intersect(SignSet::NON_NEG).union(nonzero),
        (Repr::Signed(_) | Repr::Unsigned(_) | Repr::Bool, Repr::Float(_)) => s,
        // Truncation toward zero.
        (Repr::Float(_), Repr::Signed(_) | Repr::Unsigned(_)) => s.union(SignSet::ZERO),
        // Narrowing double -> float may underflow to zero.
        (Repr::Float(_), Repr::Float(_)) => s.union(SignSet::ZERO),
        (_, Repr::Pointer) => s.intersect(SignSet::NON_NEG).union(if s.has_neg() {
            SignSet::POS
        } else {
            SignSet::EMPTY
        }),
        // Narrowing integer conversions keep only zero.
        (_, Repr::Unsigned(_)) => SignSet::NON_NEG,
        _ => SignSet::TOP,
    }
}

impl ForwardAnalysis for SignAnalysis<'_> {
    type State = SignState;

    fn entry_state(&self, _: &Function) -> SignState {
        SignState {
            reachable: true,
            signs: self.empty.clone(),
            memo: self.memo.clone(),
        }
    }

    fn bottom(&self, _: &Function) -> SignState {
        SignState {
            reachable: false,
            signs: self.empty.clone(),
            memo: self.memo.clone(),
        }
    }

    fn top(&self, func: &Function) -> SignState {
        SignState {
            reachable: true,
            signs: PVec::new(func.insts.len(), SignSet::TOP),
            memo: self.memo.clone(),
        }
    }

    fn transfer_block(&self, func: &Function, block: Block, state: &mut SignState) {
        if !state.reachable {
            return;
        }
        for &v in &func.block(block).insts {
            if !func.inst(v).kind.is_phi() {
                self.transfer_inst(v, state);
            }
        }
    }

    fn transfer_edge(&self, func: &Function, from: Block, to: Block, state: &mut SignState) {
        if !state.reachable {
            return;
        }
        if let frontend::ir::Terminator::Branch {
            cond,
            then_block,
            else_block,
        } = func.block(from).terminator
        {
            // Both edges to the same block say nothing about the condition.
            if then_block != else_block
                && !self.refine_condition(state, cond, to == then_block, Some(from))
            {
                *state = self.bottom(func);
                return;
            }
        }
        let phis: Vec<(Value, SignSet)> = func
            .block(to)
            .insts
            .iter()
            .filter_map(|&v| match &func.inst(v).kind {
                InstKind::Phi(args) => {
                    let s = args
                        .iter()
                        .filter(|(b, _)| *b == from)
                        .fold(SignSet::EMPTY, |s, (_, a)| s.union(state.get(*a)));
                    let s = self.injected.get(&v).copied().unwrap_or(s);
                    Some((v, s))
                }
                _ => None,
            })
            .collect();
        for (v, s) in phis {
            state.signs.set(v.index(), s);
        }
    }
}
