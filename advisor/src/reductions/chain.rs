//! The update chain of one reduction candidate. From its root (a phi of the loop header, or a
//! load), every value computed from it inside the loop must be a new *version* of the
//! accumulator — `acc op e` with `e` not computed from it, a merge of versions, a cast, a
//! min/max choice, a short-circuit `acc && e` — or the comparison deciding such a choice.
//! The values flowing back to the header (or stored) must be versions, the whole chain must
//! use one operator, and nothing else may read the accumulator: no store, call, address or
//! branch, no other carried variable, no use after the loop but the final value.

use super::equiv::{equivalent, pure_math};
use super::region::{region, Region};
use super::{Op, Ties};
use frontend::ir::{BinOp, Callee, Constant, Function, InstKind, Program, Value};
use frontend::loops::{Loop, LoopForest};
use frontend::types::{IntRank, Type, TypeId, TypeTable};
use std::collections::{HashMap, HashSet};

/// What the analysis of one loop needs.
pub(crate) struct Env<'a> {
    pub program: &'a Program,
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub l: &'a Loop,
    pub users: &'a [Vec<Value>],
    pub order: &'a super::equiv::Order,
}

impl Env<'_> {
    fn types(&self) -> &TypeTable {
        &self.program.types
    }

    fn in_loop(&self, v: Value) -> bool {
        self.l.contains(self.func.inst(v).block)
    }

    /// Every value computed from `root` inside the loop: through instruction operands, and
    /// through the phis at the join of a branch on such a value (`ok = ok && e` chooses
    /// between constants).
    pub fn derived(&self, root: Value) -> HashSet<Value> {
        let mut fwd = HashSet::new();
        self.close(root, &mut fwd);
        loop {
            let mut added = false;
            for &b in &self.l.blocks {
                let Some(d) = self.forest.idom.get(b.index()).copied().flatten() else {
                    continue;
                };
                if b == self.l.header || !self.l.contains(d) {
                    continue;
                }
                let frontend::ir::Terminator::Branch { cond, .. } = self.func.block(d).terminator
                else {
                    continue;
                };
                if !fwd.contains(&cond) {
                    continue;
                }
                for &phi in &self.func.block(b).insts {
                    if self.func.inst(phi).kind.is_phi() && !fwd.contains(&phi) {
                        self.close(phi, &mut fwd);
                        added = true;
                    }
                }
            }
            if !added {
                return fwd;
            }
        }
    }

    /// Adds `root` and everything computed from it through operands inside the loop.
    pub fn close(&self, root: Value, fwd: &mut HashSet<Value>) {
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            if !fwd.insert(v) {
                continue;
            }
            for &u in &self.users[v.index()] {
                if self.in_loop(u) {
                    stack.push(u);
                }
            }
        }
    }
}

/// A version chosen by a branch on the accumulator: the phi at the join of the region.
#[derive(Clone, Debug)]
pub(crate) struct Decided {
    pub region: Region,
    pub phi: Value,
    /// The accumulator version the decision tests and the other side passes on.
    pub kept: Value,
    pub ties: Ties,
}

#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub op: Op,
    /// Everything computed from the root inside the loop.
    pub derived: HashSet<Value>,
    /// The root and its versions.
    pub versions: HashSet<Value>,
    /// The instructions that apply the operator (for the report's lines).
    pub updates: Vec<Value>,
    pub decided: Vec<Decided>,
}

/// Analyses the chain from `root` to `sinks` (the values flowing back to the header, or the
/// value stored by `store`). `None` when it is not one reduction.
pub(crate) fn analyze(
    env: &Env,
    root: Value,
    twins: &[Value],
    sinks: &[Value],
    store: Option<Value>,
) -> Option<Chain> {
    let mut derived = env.derived(root);
    for &t in twins {
        derived.extend(env.derived(t));
    }
    let mut w = Walker {
        env,
        root,
        twins,
        derived: &derived,
        memo: HashMap::new(),
        ops: Vec::new(),
        updates: Vec::new(),
        casts: Vec::new(),
        decisions: HashSet::new(),
        operands: HashSet::new(),
        decided: Vec::new(),
        assigned: Vec::new(),
    };
    if sinks.is_empty() || !sinks.iter().all(|s| w.version(*s)) {
        return None;
    }
    let op = *w.ops.first()?;
    if w.ops.iter().any(|o| *o != op) {
        return None;
    }
    if let Some(&k) = w.assigned.first() {
        if !w
            .assigned
            .iter()
            .all(|a| equivalent(env.program, env.func, env.order, k, *a))
        {
            return None;
        }
    }
    let types = env.types();
    if !operand_type_fits(types, op, env.func.inst(root).ty)
        || !w.casts.iter().all(|c| {
            let InstKind::Cast(from) = env.func.inst(*c).kind else {
                return false;
            };
            cast_fits(types, op, env.func.inst(from).ty, env.func.inst(*c).ty)
        })
    {
        return None;
    }
    // Other phis at the join of a decision (an arg-min's index) and what is computed from
    // them are the caller's to check: it accepts them only as partners, validated one by one.
    let mut partners = HashSet::new();
    for d in &w.decided {
        for &phi in &env.func.block(d.region.join).insts {
            if env.func.inst(phi).kind.is_phi() && w.memo.get(&phi) != Some(&true) {
                env.close(phi, &mut partners);
            }
        }
    }
    // Nothing else may be computed from the accumulator.
    for &v in &derived {
        let classified = partners.contains(&v)
            || v == root
            || twins.contains(&v)
            || w.memo.get(&v) == Some(&true)
            || w.decisions.contains(&v)
            || w.operands.contains(&v)
            || Some(v) == store;
        if !classified {
            return None;
        }
    }
    if let Some(st) = store {
        let InstKind::Store { addr, value } = env.func.inst(st).kind else {
            return None;
        };
        if derived.contains(&addr) || !sinks.contains(&value) {
            return None;
        }
    }
    // Branches may test it only to decide a min/max or a short-circuit.
    for &b in &env.l.blocks {
        for v in env.func.terminator_uses(b) {
            if derived.contains(&v)
                && !w
                    .decided
                    .iter()
                    .any(|d| d.region.decision == b && d.region.cond == v)
            {
                return None;
            }
        }
    }
    // After the loop only the final value may be used (for a load: nothing).
    let final_value =
        |v: Value| partners.contains(&v) || store.is_none() && (v == root || sinks.contains(&v));
    for &v in &derived {
        let outside = env.users[v.index()].iter().any(|u| !env.in_loop(*u));
        if outside && !final_value(v) {
            return None;
        }
    }
    // (Through the function's branch users of each value: a scan of every block outside
    // the loop per candidate made a thousand loops in a row quadratic.)
    if derived.iter().any(|v| {
        !final_value(*v)
            && env
                .order
                .branch_users(*v)
                .iter()
                .any(|b| !env.l.contains(*b))
    }) {
        return None;
    }
    let mut versions: HashSet<Value> = w
        .memo
        .iter()
        .filter(|(_, ok)| **ok)
        .map(|(v, _)| *v)
        .collect();
    versions.insert(root);
    versions.extend(twins.iter().copied());
    Some(Chain {
        op,
        versions,
        updates: w.updates,
        decided: w.decided,
        derived,
    })
}

struct Walker<'a, 'e> {
    env: &'a Env<'e>,
    root: Value,
    /// Loads of the root's address that read the same value in the same iteration
    /// (`m = MAX(m, x)` expands to two reads of `m`): the root itself.
    twins: &'a [Value],
    derived: &'a HashSet<Value>,
    /// Versions found (true) or being checked (true as well: a cycle through an inner loop's
    /// header closes on itself, and every value on it is a version if the rest is).
    memo: HashMap<Value, bool>,
    ops: Vec<Op>,
    updates: Vec<Value>,
    casts: Vec<Value>,
    /// Comparisons that decide a min/max or test the accumulator for a short-circuit.
    decisions: HashSet<Value>,
    /// Casts of a version feeding only a decision (`(double)m < x`).
    operands: HashSet<Value>,
    decided: Vec<Decided>,
    /// The values a constant-assignment chain assigns (all must be equal).
    assigned: Vec<Value>,
}

impl Walker<'_, '_> {
    /// Whether `a` and `b` are the same accumulator value: equal, or both the root or one
    /// of its twins (two loads of `m` in `MAX(m, x)`).
    fn same_accumulator(&self, a: Value, b: Value) -> bool {
        let root = |v: Value| v == self.root || self.twins.contains(&v);
        a == b || root(a) && root(b)
    }

    fn reads_root(&self, v: Value) -> bool {
        self.derived.contains(&v)
    }

    fn kind(&self, v: Value) -> &InstKind {
        &self.env.func.inst(v).kind
    }

    /// Whether `v` is a version of the accumulator; a `false` anywhere rejects the chain.
    fn version(&mut self, v: Value) -> bool {
        if v == self.root || self.twins.contains(&v) {
            return true;
        }
        if let Some(known) = self.memo.get(&v) {
            return *known;
        }
        let inst = self.env.func.inst(v);
        // Another variable carried by the loop reads the accumulator.
        if !self.reads_root(v) || (inst.kind.is_phi() && inst.block == self.env.l.header) {
            return false;
        }
        self.memo.insert(v, true);
        let ok = self.classify(v);
        if !ok {
            self.memo.insert(v, false);
        }
        ok
    }

    fn classify(&mut self, v: Value) -> bool {
        match self.kind(v).clone() {
            InstKind::Cast(x) => {
                self.casts.push(v);
                self.version(x)
            }
            InstKind::Binary(op, a, b) => {
                let class = match op {
                    BinOp::Add | BinOp::Sub => Op::Sum,
                    BinOp::Mul => Op::Product,
                    BinOp::BitAnd => Op::BitAnd,
                    BinOp::BitOr => Op::BitOr,
                    BinOp::BitXor => Op::BitXor,
                    _ => return false,
                };
                // `acc - e` is a sum; `e - acc` alternates signs.
                let acc = match (self.reads_root(a), self.reads_root(b)) {
                    (true, false) => a,
                    (false, true) if op != BinOp::Sub => b,
                    _ => return false,
                };
                self.ops.push(class);
                self.updates.push(v);
                self.version(acc)
            }
            InstKind::Phi(args) => {
                if args.iter().all(|(_, a)| self.reads_root(*a)) {
                    args.iter().all(|(_, a)| self.version(*a))
                } else if let Some(k) = self.flag_value(v, &args) {
                    // `if (c) flag = K;`: the other arguments are versions.
                    self.ops.push(Op::Assign);
                    // The constant written in the loop (`flag = 1`) carries the
                    // assignment's line; the join has none.
                    let func = self.env.func;
                    let literal =
                        matches!(func.inst(k).kind, InstKind::Const(_)) && self.env.in_loop(k);
                    self.updates.push(if literal { k } else { v });
                    self.assigned.push(k);
                    args.iter()
                        .filter(|(_, a)| *a != k)
                        .all(|(_, a)| self.version(*a))
                } else {
                    self.decided_phi(v)
                }
            }
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let (t, e) = (self.reads_root(then_value), self.reads_root(else_value));
                if !self.reads_root(cond) {
                    return t && e && self.version(then_value) && self.version(else_value);
                }
                let (kept, cand, take_when_true) = match (t, e) {
                    (true, false) => (then_value, else_value, false),
                    (false, true) => (else_value, then_value, true),
                    _ => return false,
                };
                let Some((op, _)) = self.min_max(cond, kept, cand, take_when_true) else {
                    return false;
                };
                self.ops.push(op);
                self.updates.push(v);
                self.version(kept)
            }
            InstKind::Call {
                callee: Callee::Direct(name),
                args,
            } => {
                let op = match name.as_str() {
                    "fmax" | "fmaxf" | "fmaxl" => Op::Max,
                    "fmin" | "fminf" | "fminl" => Op::Min,
                    _ => return false,
                };
                if !pure_math(self.env.program, &name) {
                    return false;
                }
                let [x, y] = args.as_slice() else {
                    return false;
                };
                let acc = match (self.reads_root(*x), self.reads_root(*y)) {
                    (true, false) => *x,
                    (false, true) => *y,
                    _ => return false,
                };
                self.ops.push(op);
                self.updates.push(v);
                self.version(acc)
            }
            _ => false,
        }
    }

    /// The constant `K` of `if (c) flag = K;`: a phi whose arguments are versions and one
    /// value `K` that is a constant or computed before the loop, where the branch choosing
    /// between them does not test the accumulator (that would be a min/max or a dependence).
    fn flag_value(&self, phi: Value, args: &[(frontend::ir::Block, Value)]) -> Option<Value> {
        let func = self.env.func;
        let join = func.inst(phi).block;
        let decision = self.env.forest.idom.get(join.index()).copied().flatten()?;
        if let frontend::ir::Terminator::Branch { cond, .. } = func.block(decision).terminator {
            if self.reads_root(cond) {
                return None;
            }
        }
        let others: Vec<Value> = args
            .iter()
            .map(|(_, a)| *a)
            .filter(|a| !self.reads_root(*a))
            .collect();
        let k = *others.first()?;
        let invariant =
            |v: Value| matches!(func.inst(v).kind, InstKind::Const(_)) || !self.env.in_loop(v);
        (others.iter().all(|o| *o == k) && invariant(k)).then_some(k)
    }

    /// A phi at the join of a branch that tests the accumulator: a min/max
    /// (`if (a[i] > m) m = a[i];`, `m = a[i] > m ? a[i] : m`) or a short-circuit
    /// (`ok = ok && e`, `any = any || e`).
    fn decided_phi(&mut self, phi: Value) -> bool {
        let func = self.env.func;
        let join = func.inst(phi).block;
        let Some(decision) = self.env.forest.idom.get(join.index()).copied().flatten() else {
            return false;
        };
        let Some(region) = region(func, self.env.l, decision, join) else {
            return false;
        };
        if !self.reads_root(region.cond) {
            return false;
        }
        let Some(sides) = region.side_values(func, phi) else {
            return false;
        };
        if let Some((tested, truthy)) = self.truth_test(region.cond) {
            let (yes, no) = (&sides[truthy], &sides[1 - truthy]);
            let boolean = |w: &Self, v: &Value| !w.reads_root(*v) && w.is_boolean(*v);
            let op = if no.iter().all(|v| self.is_int(*v, 0))
                && yes.iter().all(|v| boolean(self, v))
            {
                Op::And
            } else if yes.iter().all(|v| self.is_int(*v, 1)) && no.iter().all(|v| boolean(self, v))
            {
                Op::Or
            } else {
                return false;
            };
            self.ops.push(op);
            self.updates.push(phi);
            self.decided.push(Decided {
                region,
                phi,
                kept: tested,
                ties: Ties::First,
            });
            return self.version(tested);
        }
        let (kept, cand, take) = match (sides[0].as_slice(), sides[1].as_slice()) {
            ([t], [e]) => match (self.reads_root(*t), self.reads_root(*e)) {
                (true, false) => (*t, *e, 1),
                (false, true) => (*e, *t, 0),
                _ => return false,
            },
            // A mask after the comparison (`x < m && ok[i]`): the side on which the
            // comparison holds also keeps the accumulator where the mask fails. The other
            // side never takes the candidate (`x < m || f` would not be a minimum).
            (two, [k]) | ([k], two) if two.len() == 2 && two.contains(k) => {
                let take = usize::from(sides[0].len() == 1);
                let c = if two[0] == *k { two[1] } else { two[0] };
                if !self.reads_root(*k) || self.reads_root(c) {
                    return false;
                }
                (*k, c, take)
            }
            _ => return false,
        };
        let Some((op, ties)) = self.min_max(region.cond, kept, cand, take == 0) else {
            return false;
        };
        self.ops.push(op);
        self.updates.push(phi);
        self.decided.push(Decided {
            region,
            phi,
            kept,
            ties,
        });
        self.version(kept)
    }

    /// `cond` compares `kept` with a value equal to `cand`, and the choice takes `cand` when
    /// it is the smaller (min) or the larger (max). Ties keep `kept` for a strict comparison.
    fn min_max(
        &mut self,
        cond: Value,
        kept: Value,
        cand: Value,
        take_when_true: bool,
    ) -> Option<(Op, Ties)> {
        let InstKind::Binary(cmp, x, y) = *self.kind(cond) else {
            return None;
        };
        if !cmp.is_comparison() {
            return None;
        }
        let (sx, sy) = (self.strip_widening(x), self.strip_widening(y));
        // Normalized to `other CMP kept`.
        let (cmp, other, operand) = if self.same_accumulator(sx, kept) && !self.reads_root(y) {
            (cmp.swapped(), y, x)
        } else if self.same_accumulator(sy, kept) && !self.reads_root(x) {
            (cmp, x, y)
        } else {
            return None;
        };
        let (so, sc) = (self.strip_widening(other), self.strip_widening(cand));
        if !equivalent(self.env.program, self.env.func, self.env.order, so, sc) {
            return None;
        }
        let rel = if take_when_true { cmp } else { cmp.negated()? };
        let (op, ties) = match rel {
            BinOp::Gt => (Op::Max, Ties::First),
            BinOp::Ge => (Op::Max, Ties::Last),
            BinOp::Lt => (Op::Min, Ties::First),
            BinOp::Le => (Op::Min, Ties::Last),
            _ => return None,
        };
        self.decisions.insert(cond);
        let tested = if self.same_accumulator(sx, kept) {
            sx
        } else {
            sy
        };
        self.mark_operand(operand, tested);
        Some((op, ties))
    }

    /// `(kept != 0)`, `(0 != kept)` (the condition holds when it is true: side 0) or
    /// `(kept == 0)` (side 1), with `kept` possibly widened.
    fn truth_test(&mut self, cond: Value) -> Option<(Value, usize)> {
        let InstKind::Binary(cmp, x, y) = *self.kind(cond) else {
            return None;
        };
        let truthy = match cmp {
            BinOp::Ne => 0,
            BinOp::Eq => 1,
            _ => return None,
        };
        let operand = if self.is_int(y, 0) && self.reads_root(x) {
            x
        } else if self.is_int(x, 0) && self.reads_root(y) {
            y
        } else {
            return None;
        };
        if !self.env.types().is_integer(self.env.func.inst(operand).ty) {
            return None;
        }
        let tested = self.strip_widening(operand);
        self.decisions.insert(cond);
        self.mark_operand(operand, tested);
        Some((tested, truthy))
    }

    /// The casts between a decision's operand and the version it converts.
    fn mark_operand(&mut self, mut operand: Value, kept: Value) {
        while operand != kept {
            let InstKind::Cast(inner) = *self.kind(operand) else {
                return;
            };
            self.operands.insert(operand);
            operand = inner;
        }
    }

    /// Removes conversions that keep every value exactly (`float` to `double`, `int` to
    /// `long`), so a comparison done in the wider type compares the same numbers.
    fn strip_widening(&self, mut v: Value) -> Value {
        let types = self.env.types();
        for _ in 0..8 {
            let InstKind::Cast(inner) = *self.kind(v) else {
                break;
            };
            if !widening(
                types,
                self.env.func.inst(inner).ty,
                self.env.func.inst(v).ty,
            ) {
                break;
            }
            v = inner;
        }
        v
    }

    fn is_int(&self, v: Value, value: i128) -> bool {
        matches!(self.kind(v), InstKind::Const(Constant::Int(c)) if *c == value)
    }

    /// A value that is 0 or 1: a comparison, a logical not, a constant 0 or 1.
    fn is_boolean(&self, v: Value) -> bool {
        match self.kind(v) {
            InstKind::Const(Constant::Int(c)) => *c == 0 || *c == 1,
            InstKind::Binary(op, ..) => op.is_comparison(),
            InstKind::Unary(frontend::ir::UnOp::Not, _) => true,
            _ => false,
        }
    }
}

/// Conversions that keep every value: integer to a wider integer that holds all its values,
/// floating to a wider floating type.
pub(crate) fn widening(types: &TypeTable, from: TypeId, to: TypeId) -> bool {
    match (types.get(from), types.get(to)) {
        (
            Type::Int {
                rank: r1,
                signed: s1,
            },
            Type::Int { signed: s2, .. },
        ) => {
            let (a, b) = (types.size_of(from), types.size_of(to));
            let (Some(a), Some(b)) = (a, b) else {
                return false;
            };
            *r1 == IntRank::Bool || (s1 == s2 && a <= b) || (!s1 && *s2 && a < b)
        }
        (Type::Float(k1), Type::Float(k2)) => k1 <= k2,
        _ => false,
    }
}

fn is_bool(types: &TypeTable, ty: TypeId) -> bool {
    matches!(
        types.get(ty),
        Type::Int {
            rank: IntRank::Bool,
            ..
        }
    )
}

/// The accumulator's type suits the operator.
fn operand_type_fits(types: &TypeTable, op: Op, ty: TypeId) -> bool {
    match op {
        Op::Sum | Op::Product => types.is_arithmetic(ty) && !is_bool(types, ty),
        Op::BitAnd | Op::BitOr | Op::BitXor => types.is_integer(ty) && !is_bool(types, ty),
        Op::And | Op::Or => types.is_integer(ty),
        Op::Min | Op::Max | Op::Assign => types.is_arithmetic(ty),
    }
}

/// A conversion inside the chain commutes with the operator: integer wrap-around with sums,
/// products and bit operations (arithmetic modulo 2^n), any floating conversion with
/// floating sums (rounding is already the stated caveat) and with min/max (rounding is
/// monotonic), widening integers with min/max.
fn cast_fits(types: &TypeTable, op: Op, from: TypeId, to: TypeId) -> bool {
    let ints = types.is_integer(from)
        && types.is_integer(to)
        && !is_bool(types, from)
        && !is_bool(types, to);
    let floats = types.is_float(from) && types.is_float(to);
    match op {
        Op::Sum | Op::Product => ints || floats,
        Op::BitAnd | Op::BitOr | Op::BitXor => ints,
        // Truthiness survives widening and conversion to `_Bool`.
        Op::And | Op::Or => {
            types.is_integer(from) && (widening(types, from, to) || is_bool(types, to))
        }
        Op::Min | Op::Max => floats || widening(types, from, to),
        // A flag passes through unchanged; a conversion would be a different value.
        Op::Assign => false,
    }
}
