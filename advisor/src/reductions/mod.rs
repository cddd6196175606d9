//! Reductions of every shape: a loop that is parallel apart from values
//! it accumulates with an associative, commutative operator. Recognised soundly: the target
//! is updated only by `t = t op e` / `t op= e` (or a min/max choice, or `t = t && e`) with
//! `e` not reading `t`, and nothing else in the loop reads it (no store, call, index or
//! branch, no early exit depending on it). Shapes: a scalar, an arg-min/arg-max pair
//! updated under one condition, an element or struct field at a loop-invariant address, and
//! a histogram (a data-indexed read-modify-write of one array nothing else touches).
//!
//! `chain` checks one accumulator's updates, `region` the branches of min/max and
//! short-circuit updates, `equiv` that two loads read the same value, `memory` which
//! read-modify-writes survive the dependence tests; this file finds the candidates and
//! words them for the report.

mod body;
mod chain;
mod equiv;

pub(crate) use equiv::Order;
mod memory;
mod region;

pub use body::function_updates;
pub use memory::{settle, Located, Settled};

use crate::model::{Reduction, ReductionKind, TieBreak};
use crate::rules::{self, ww102_reduction::Accumulates, Finding};
use chain::{analyze, Env};
use frontend::ir::{Function, InstKind, Program, Span, Value};
use frontend::loops::{LoopForest, LoopId};
use frontend::types::TypeTable;
use std::collections::{HashMap, HashSet};

/// The operator a reduction combines with: the report's type, so that the analysis and
/// every consumer of a report name one operator the same way.
pub use crate::model::RedOp as Op;

impl Op {
    /// The CUDA atomic that applies it to one element.
    fn atomic(self, floating: bool) -> &'static str {
        match self {
            Op::Sum => "atomicAdd",
            Op::BitAnd | Op::And => "atomicAnd",
            Op::BitOr | Op::Or => "atomicOr",
            Op::BitXor => "atomicXor",
            Op::Min if !floating => "atomicMin",
            Op::Max if !floating => "atomicMax",
            Op::Min | Op::Max | Op::Product => "atomicCAS loop",
            Op::Assign => "plain store of the constant",
        }
    }
}

/// Which of equal minima an arg-min keeps: a strict comparison keeps the earliest
/// iteration's, `<=` the latest's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    First,
    Last,
}

/// A scalar carried by the loop that is a reduction.
#[derive(Clone, Debug)]
pub struct ScalarReduction {
    /// The phi at the loop header.
    pub phi: Value,
    pub op: Op,
    /// Arg-min/arg-max: the header phis of the variables updated with it (`idx`).
    pub partners: Vec<Value>,
    /// Arg-min/arg-max: which iteration wins a tie.
    pub ties: Option<Ties>,
    /// The instructions that apply the operator.
    pub updates: Vec<Value>,
}

/// The scalars a loop carries: reductions, and the others (dependences).
#[derive(Clone, Debug, Default)]
pub struct Scalars {
    pub reductions: Vec<ScalarReduction>,
    pub carried: Vec<Value>,
}

/// A read-modify-write of one address in the loop (`C[i][j] += ...`, `hist[k]++`): whether it
/// is an element or a histogram reduction depends on the dependence tests ([`settle`]).
#[derive(Clone, Debug)]
pub struct MemoryUpdate {
    pub load: Value,
    /// Other loads of the address reading the same value in the iteration (a `MAX(m, x)`
    /// macro reads `m` twice).
    pub twins: Vec<Value>,
    pub store: Value,
    pub op: Op,
    pub updates: Vec<Value>,
}

fn back_values(func: &Function, l: &frontend::loops::Loop, phi: Value) -> Vec<Value> {
    match &func.inst(phi).kind {
        InstKind::Phi(args) => args
            .iter()
            .filter(|(b, _)| l.contains(*b))
            .map(|(_, v)| *v)
            .collect(),
        _ => Vec::new(),
    }
}

/// Classifies the scalars loop `id` carries (its header phis other than induction variables).
pub(crate) fn scalar_reductions(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    users: &[Vec<Value>],
    order: &Order,
) -> Scalars {
    let l = forest.loop_(id);
    let env = Env {
        program,
        func,
        forest,
        l,
        users,
        order,
    };
    let ivs: HashSet<Value> = l.induction_variables.iter().map(|iv| iv.phi).collect();
    let phis: Vec<Value> = func
        .block(l.header)
        .insts
        .iter()
        .copied()
        .filter(|v| func.inst(*v).kind.is_phi() && !ivs.contains(v))
        .collect();
    let mut out = Scalars::default();
    let mut claimed: HashSet<Value> = HashSet::new();
    // What each carried variable's value decides, through data or branches.
    let influence: Vec<(Value, HashSet<Value>)> =
        phis.iter().map(|q| (*q, env.derived(*q))).collect();
    for &p in &phis {
        let backs = back_values(func, l, p);
        let Some(chain) = analyze(&env, p, &[], &backs, None) else {
            continue;
        };
        let mut partners = Vec::new();
        let mut ties = None;
        let mut ok = true;
        for d in &chain.decided {
            let mut allowed: HashSet<Value> = HashSet::from([d.phi]);
            // `if (d < best) { best = d; idx = j; }`: the whole update is one decision, which
            // a mask may guard (`if (ok[j]) { if (d < best) ... }`, a `continue` before it)
            // and an inner loop may repeat (the arg-min of a nest).
            let through = match backs.as_slice() {
                [b] if matches!(chain.op, Op::Min | Op::Max) && chain.decided.len() == 1 => {
                    PassThrough::of(func, l, p, d.phi, &[*b, d.kept])
                }
                _ => None,
            };
            if let Some(through) = &through {
                for &psi in &func.block(d.region.join).insts {
                    if psi == d.phi || !func.inst(psi).kind.is_phi() {
                        continue;
                    }
                    if let Some(q) = partner(&env, &phis, d, &chain.derived, psi, through, backs[0])
                    {
                        partners.push(q);
                        allowed.insert(psi);
                    }
                }
                if !partners.is_empty() {
                    ties = Some(d.ties);
                }
            }
            ok &= region::only_feeds(program, func, &d.region, &allowed, users);
        }
        // Another carried variable must not feed it (`t += s`, a count under a max's branch).
        ok &= influence.iter().all(|(q, reach)| {
            *q == p || partners.contains(q) || chain.versions.iter().all(|v| !reach.contains(v))
        });
        if ok {
            claimed.extend(partners.iter().copied());
            out.reductions.push(ScalarReduction {
                phi: p,
                op: chain.op,
                partners,
                ties,
                updates: chain.updates,
            });
        }
    }
    out.carried = phis
        .into_iter()
        .filter(|p| !claimed.contains(p) && !out.reductions.iter().any(|r| r.phi == *p))
        .collect();
    out
}

/// The versions of an arg-min/arg-max's extremum `root` between the decision's phi and the
/// loop's back edge: phis of the loop's body (not its header) whose every argument is
/// `root`, the decision's phi or another of them: the join of a mask around the decision,
/// the latch after a `continue`, an inner loop's header.
struct PassThrough {
    root: Value,
    decided: Value,
    phis: Vec<Value>,
}

impl PassThrough {
    /// The pass-through phis that `starts` reach, if every value they reach is one, the
    /// root or the decision's phi (at most 64 phis).
    fn of(
        func: &Function,
        l: &frontend::loops::Loop,
        root: Value,
        decided: Value,
        starts: &[Value],
    ) -> Option<PassThrough> {
        let mut phis: Vec<Value> = Vec::new();
        let mut stack: Vec<Value> = starts.to_vec();
        while let Some(v) = stack.pop() {
            if v == root || v == decided || phis.contains(&v) {
                continue;
            }
            let inst = func.inst(v);
            let InstKind::Phi(args) = &inst.kind else {
                return None;
            };
            if inst.block == l.header || !l.contains(inst.block) || phis.len() >= 64 {
                return None;
            }
            phis.push(v);
            stack.extend(args.iter().map(|(_, a)| *a));
        }
        Some(PassThrough {
            root,
            decided,
            phis,
        })
    }

    /// The partner's versions that match these: `q` for the root, `psi` for the decision's
    /// phi, and for each pass-through phi the phi of its block whose argument on every edge
    /// is the match of the extremum's there. `None` when some has no such phi.
    fn matched(&self, func: &Function, q: Value, psi: Value) -> Option<HashMap<Value, Value>> {
        let mut map: HashMap<Value, Value> = HashMap::from([(self.root, q), (self.decided, psi)]);
        let args = |v: Value| match &func.inst(v).kind {
            InstKind::Phi(a) => a.clone(),
            _ => Vec::new(),
        };
        // Each round matches the phis whose mapped arguments single out one phi of their
        // block; a round without progress ends the search.
        loop {
            let pending: Vec<Value> = self
                .phis
                .iter()
                .copied()
                .filter(|x| !map.contains_key(x))
                .collect();
            if pending.is_empty() {
                break;
            }
            let mut progress = false;
            for x in pending {
                let xa = args(x);
                let block = func.inst(x).block;
                let fits = |y: Value| {
                    let ya = args(y);
                    ya.len() == xa.len()
                        && xa.iter().any(|(_, a)| map.contains_key(a))
                        && xa.iter().all(|(b, a)| {
                            map.get(a)
                                .is_none_or(|want| ya.iter().any(|(yb, yv)| yb == b && yv == want))
                        })
                };
                let candidates: Vec<Value> = func
                    .block(block)
                    .insts
                    .iter()
                    .copied()
                    .filter(|y| *y != x && func.inst(*y).kind.is_phi() && !self.phis.contains(y))
                    .filter(|y| fits(*y))
                    .collect();
                if let [y] = candidates.as_slice() {
                    map.insert(x, *y);
                    progress = true;
                }
            }
            if !progress {
                return None;
            }
        }
        // Every edge of every pass-through phi matches.
        for &x in &self.phis {
            let y = map[&x];
            let (xa, ya) = (args(x), args(y));
            let all = xa
                .iter()
                .all(|(b, a)| ya.iter().any(|(yb, yv)| yb == b && map.get(a) == Some(yv)));
            if !all {
                return None;
            }
        }
        Some(map)
    }
}

/// The header phi `q` whose versions match the extremum's (`through`) with `psi`, a phi at
/// the join of the min/max decision `d`, for the decision's phi: `q` keeps its value when
/// the extremum does and takes a value that reads neither the extremum nor `q` when it
/// changes, and is read nowhere else in the loop.
fn partner(
    env: &Env,
    phis: &[Value],
    d: &chain::Decided,
    minimum: &HashSet<Value>,
    psi: Value,
    through: &PassThrough,
    back: Value,
) -> Option<Value> {
    let func = env.func;
    // Edge by edge at the decision's join, the partner keeps its value where the extremum
    // does and takes one candidate where the extremum takes its own (a mask after the
    // comparison keeps on some edges of the taking side).
    let (InstKind::Phi(extremum), InstKind::Phi(own)) =
        (&func.inst(d.phi).kind, &func.inst(psi).kind)
    else {
        return None;
    };
    let at = |b: frontend::ir::Block| own.iter().find(|(p, _)| *p == b).map(|(_, v)| *v);
    let kept_edges: Vec<Value> = extremum
        .iter()
        .filter(|(_, v)| *v == d.kept)
        .map(|(b, _)| at(*b))
        .collect::<Option<_>>()?;
    let taken: Vec<Value> = extremum
        .iter()
        .filter(|(_, v)| *v != d.kept)
        .map(|(b, _)| at(*b))
        .collect::<Option<_>>()?;
    let (&kept, &cand) = (kept_edges.first()?, taken.first()?);
    if kept_edges.iter().any(|v| *v != kept) || taken.iter().any(|v| *v != cand) {
        return None;
    }
    let (kept, cand) = (&kept, &cand);
    phis.iter().copied().find(|&q| {
        if q == through.root {
            return false;
        }
        let Some(map) = through.matched(func, q, psi) else {
            return false;
        };
        if back_values(func, env.l, q) != [map[&back]] || map.get(&d.kept) != Some(kept) {
            return false;
        }
        let versions: HashSet<Value> = map.values().copied().collect();
        let derived = env.derived(q);
        let only = derived.iter().all(|v| versions.contains(v));
        let branch_free = env.l.blocks.iter().all(|b| {
            func.terminator_uses(*b)
                .iter()
                .all(|v| !derived.contains(v))
        });
        *cand != q
            && !versions.contains(cand)
            && !minimum.contains(cand)
            && !derived.contains(cand)
            && only
            && branch_free
    })
}

/// The read-modify-writes of loop `id`: a load and a store of equivalent addresses in one
/// iteration, the stored value a version of the loaded one.
pub(crate) fn memory_updates(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    users: &[Vec<Value>],
    order: &Order,
) -> Vec<MemoryUpdate> {
    memory_updates_in(program, func, forest, forest.loop_(id), users, order)
}

/// [`memory_updates`] over the blocks of `l`, a loop of `forest` or a region standing for
/// one (`body::function_updates`: a whole function body).
pub(crate) fn memory_updates_in(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    l: &frontend::loops::Loop,
    users: &[Vec<Value>],
    order: &Order,
) -> Vec<MemoryUpdate> {
    let env = Env {
        program,
        func,
        forest,
        l,
        users,
        order,
    };
    let ivs: HashSet<Value> = l.induction_variables.iter().map(|iv| iv.phi).collect();
    // What the loop's carried scalars decide: an update computed from one is not a
    // reduction of memory alone.
    let mut influenced = HashSet::new();
    for &q in &func.block(l.header).insts {
        if func.inst(q).kind.is_phi() && !ivs.contains(&q) {
            influenced.extend(env.derived(q));
        }
    }
    let loads: Vec<Value> = l
        .blocks
        .iter()
        .flat_map(|b| func.block(*b).insts.iter().copied())
        .filter(|v| matches!(func.inst(*v).kind, InstKind::Load { .. }))
        .filter(|v| program.types.is_arithmetic(func.inst(*v).ty))
        .collect();
    // Loads grouped by shape, and the shapes of the addresses stored to: a load no store
    // may write back to is no update, and twins are looked for among loads of its shape.
    let mut by_shape: HashMap<u64, Vec<Value>> = HashMap::new();
    for &load in &loads {
        by_shape
            .entry(equiv::shape(program, func, load))
            .or_default()
            .push(load);
    }
    // Within a shape, twins also share their write epoch (see `equiv::write_epoch`):
    // each load is compared with those of its epoch and those whose epoch is unknown,
    // not with every load of its shape (10,000 statements `a[i] += ...` made 10^8
    // comparisons).
    let epochs: HashMap<u64, equiv::Epochs> = by_shape
        .iter()
        .map(|(shape, group)| (*shape, equiv::Epochs::new(func, order, group)))
        .collect();
    let stored_shapes: HashSet<u64> = l
        .blocks
        .iter()
        .flat_map(|b| func.block(*b).insts.iter().copied())
        .filter_map(|v| match func.inst(v).kind {
            InstKind::Store { addr, .. } => Some(equiv::shape(program, func, addr)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for &load in &loads {
        {
            let InstKind::Load { addr } = func.inst(load).kind else {
                continue;
            };
            if !stored_shapes.contains(&equiv::shape(program, func, addr)) {
                continue;
            }
            let shape = equiv::shape(program, func, load);
            let twins: Vec<Value> = match (by_shape.get(&shape), epochs.get(&shape)) {
                (Some(group), Some(epochs)) => epochs
                    .candidates(func, order, load)
                    .into_iter()
                    .map(|k| group[k])
                    .filter(|t| *t != load && equiv::equivalent(program, func, order, load, *t))
                    .collect(),
                _ => Vec::new(),
            };
            // One update per group of twins: the first load in program order stands for it.
            if twins.iter().any(|t| t.index() < load.index()) {
                continue;
            }
            let mut derived = env.derived(load);
            for &t in &twins {
                derived.extend(env.derived(t));
            }
            let store = derived.iter().copied().find(|s| {
                matches!(func.inst(*s).kind, InstKind::Store { addr: a, .. }
                    if !derived.contains(&a) && equiv::equivalent(program, func, order, addr, a))
            });
            let Some(store) = store else { continue };
            let InstKind::Store { value, .. } = func.inst(store).kind else {
                continue;
            };
            let Some(chain) = analyze(&env, load, &twins, &[value], Some(store)) else {
                continue;
            };
            let pure = chain.decided.iter().all(|d| {
                region::only_feeds(program, func, &d.region, &HashSet::from([d.phi]), users)
            }) && chain.versions.iter().all(|v| !influenced.contains(v))
                && !influenced.contains(&store);
            if pure {
                out.push(MemoryUpdate {
                    load,
                    twins,
                    store,
                    op: chain.op,
                    updates: chain.updates,
                });
            }
        }
    }
    out
}

/// A reduction as the report shows it: the entry, its informational reason (WW102, or
/// WW103 for a histogram) and the assumptions it adds.
#[derive(Clone, Debug)]
pub struct Noted {
    pub reduction: Reduction,
    pub finding: Finding,
    pub assumptions: Vec<String>,
}

/// What the report says about one reduction; `line` resolves spans.
#[derive(Debug)]
pub struct Describe<'a> {
    pub kind: ReductionKind,
    /// The variable, element or array.
    pub target: String,
    pub index: Vec<String>,
    pub op: Op,
    pub ty: frontend::types::TypeId,
    pub ties: Option<Ties>,
    pub updates: Vec<Span>,
    pub types: &'a TypeTable,
    /// An element other updates with the same operator may touch too.
    pub shared: bool,
}

impl Describe<'_> {
    pub fn note(&self, line: &dyn Fn(Span) -> u32) -> Noted {
        let floating = self.types.is_float(self.ty);
        let c_type = self.types.display(self.ty);
        let mut lines: Vec<u32> = self.updates.iter().map(|s| line(*s)).collect();
        lines.sort_unstable();
        lines.dedup();
        lines.retain(|l| *l != 0);
        let strategy = self.strategy(floating);
        let reduction = Reduction {
            target: self.target.clone(),
            operator: self.op,
            kind: self.kind,
            c_type,
            strategy: strategy.clone(),
            index: self.index.clone(),
            ties: (!self.index.is_empty()).then_some(match self.ties {
                Some(Ties::Last) => TieBreak::Last,
                _ => TieBreak::First,
            }),
            lines: lines.clone(),
        };
        let name = reduction.describe();
        let finding = match self.kind {
            ReductionKind::Histogram => {
                rules::ww103_indirect_update::histogram(&name, &self.target, lines, &strategy)
            }
            kind => {
                let what = match kind {
                    ReductionKind::Scalar if self.op == Op::Assign => {
                        Accumulates::ConstantAssignment
                    }
                    ReductionKind::Element if self.shared => {
                        Accumulates::SharedElement(self.op.name())
                    }
                    ReductionKind::Element => Accumulates::Element(self.op.name()),
                    ReductionKind::Argmin | ReductionKind::Argmax => Accumulates::Arg {
                        op: self.op.symbol(),
                        compared: &self.target,
                        carried: &self.index,
                    },
                    _ => Accumulates::Scalar(self.op.name()),
                };
                rules::ww102_reduction::note(&name, what, lines, &strategy)
            }
        };
        let mut assumptions = Vec::new();
        match self.op {
            Op::Sum | Op::Product if floating => assumptions.push(format!(
                "reduction {name}: reassociating the floating-point {} changes rounding",
                self.op.name()
            )),
            Op::Min | Op::Max if floating => assumptions.push(format!(
                "reduction {name}: no compared value is NaN (with a NaN the result depends on the order of the comparisons)"
            )),
            _ => {}
        }
        Noted {
            finding,
            reduction,
            assumptions,
        }
    }

    fn strategy(&self, floating: bool) -> String {
        let atomic = self.op.atomic(floating);
        match self.kind {
            ReductionKind::Scalar | ReductionKind::Element if self.op == Op::Assign => {
                "every assigning thread stores the same value: one plain store to a device variable (a benign race), no combine".to_string()
            }
            ReductionKind::Scalar | ReductionKind::Element => format!(
                "warp shuffle + shared-memory tree per block + one atomic per block ({atomic})"
            ),
            ReductionKind::Histogram => {
                format!("{atomic} (per-block privatized bins in shared memory when they fit)")
            }
            ReductionKind::Argmin | ReductionKind::Argmax => {
                let extrema = if self.op == Op::Min {
                    "minima"
                } else {
                    "maxima"
                };
                match self.ties {
                    Some(Ties::Last) => format!(
                        "per-block (value, iteration) {extrema} by warp shuffles and shared memory, then one combine under a lock; ties keep the latest iteration, which a port cannot tell from an iteration that did not take the value (write the comparison strictly to port it)"
                    ),
                    _ => format!(
                        "each iteration on copies from the entry values; per-block (value, iteration) {extrema} by warp shuffles and shared memory, then one combine under a lock; ties keep the earliest iteration"
                    ),
                }
            }
        }
    }
}

/// The report entry of a scalar reduction.
pub fn describe_scalar<'a>(
    func: &Function,
    types: &'a TypeTable,
    r: &ScalarReduction,
) -> Describe<'a> {
    let name = |v: Value| {
        func.inst(v)
            .origin
            .var_name
            .clone()
            .unwrap_or_else(|| format!("{v}"))
    };
    let kind = match (r.partners.is_empty(), r.op) {
        (false, Op::Min) => ReductionKind::Argmin,
        (false, _) => ReductionKind::Argmax,
        _ => ReductionKind::Scalar,
    };
    Describe {
        kind,
        target: name(r.phi),
        index: r.partners.iter().map(|p| name(*p)).collect(),
        op: r.op,
        ty: func.inst(r.phi).ty,
        ties: r.ties,
        updates: r
            .updates
            .iter()
            .map(|u| func.inst(*u).origin.span)
            .collect(),
        types,
        shared: false,
    }
}

/// The updated lvalue of an update's text: `acc->n` for `acc->n++`, `C[i][j]` for
/// `C[i][j] += x`.
pub fn lvalue(text: &str) -> String {
    let mut t = text.trim();
    for op in ["++", "--"] {
        t = t.strip_prefix(op).unwrap_or(t).trim();
        t = t.strip_suffix(op).unwrap_or(t).trim();
    }
    // The first `=` that is not part of `==`, `<=`, `>=`, `!=` ends the lvalue (with its
    // operator, `+=`, `<<=`).
    let bytes = t.as_bytes();
    for (i, c) in bytes.iter().enumerate() {
        if *c != b'=' {
            continue;
        }
        let prev = if i > 0 { bytes[i - 1] } else { b' ' };
        let before = if i > 1 { bytes[i - 2] } else { b' ' };
        let comparison = bytes.get(i + 1) == Some(&b'=')
            || matches!(prev, b'=' | b'!')
            || (matches!(prev, b'<' | b'>') && before != prev);
        if comparison {
            continue;
        }
        let lhs = t[..i].trim_end();
        let lhs = lhs
            .strip_suffix("<<")
            .or_else(|| lhs.strip_suffix(">>"))
            .or_else(|| lhs.strip_suffix(['+', '-', '*', '/', '%', '&', '|', '^']))
            .unwrap_or(lhs);
        return lhs.trim_end().to_string();
    }
    t.to_string()
}
