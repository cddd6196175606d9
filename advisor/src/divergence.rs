//! Branch divergence (GPUCheck's question, asked before the port): for every branch of the
//! loop body whose condition depends on a grid-mapped induction variable, the fraction of
//! warps whose 32 threads disagree on it, under the recommended mapping.
//!
//! A warp is 32 consecutive x threads of one grid row (block x-dimension a multiple of 32).
//! A condition `g(#tx) op 0` with `g` affine in the thread index changes value at most once
//! along a row, at the boundary `#tx*`: exactly the warp containing it diverges, unless the
//! boundary falls on a warp's first thread or outside the row. With a constant boundary the
//! count is exact; otherwise it is `[0, 1]` warps per row. A condition that depends only on
//! the y index is uniform in every warp. A condition computed from data read at per-thread
//! addresses may diverge in any warp: `[0, W]`, with GPUCheck's advice for clamps.

use crate::mapping::{Candidate, Nest, Target};
use crate::model::{DivergentBranch, Quantity};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{BinOp, Constant, InstKind, Terminator, Value};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use std::collections::{HashMap, HashSet};
use symbolic::{Expr, Var};

/// How a condition depends on the thread's grid position.
enum Dependence {
    None,
    OnlyY,
    Affine { g: Expr, op: BinOp },
    Data,
}

pub fn analyze(nest: &Nest, c: &Candidate, target: &Target) -> Vec<DivergentBranch> {
    let func = nest.func;
    let l = nest.forest.loop_(nest.outer);
    // The loop tests inside this nest (a function may have thousands of loops: the
    // cheap range check on block numbers comes before the set lookup).
    let (first, last) = match (l.blocks.first(), l.blocks.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ => return Vec::new(),
    };
    let cond_blocks: HashSet<_> = func
        .loops
        .iter()
        .map(|s| s.cond_block)
        .filter(|b| (first..=last).contains(b) && l.contains(*b))
        .collect();
    let is_header = |b| {
        nest.forest
            .innermost(b)
            .is_some_and(|id| nest.forest.loop_(id).header == b)
    };
    let Some(x) = nest.iv(c.x) else {
        return Vec::new();
    };
    let trips = x.trips.clone();
    let warps = trips
        .checked_add(&Expr::constant(31))
        .ok()
        .and_then(|t| t.c_div_in(&BigInt::from(32), &nest.space.env).ok())
        .map(|w| Quantity::of_c(&w, &nest.space.env))
        // No count the engine can write: C text no consumer evaluates.
        .unwrap_or_else(|| Quantity::c_text("?"));
    let mut out = Vec::new();
    let mut bounds = None;
    for &b in &l.blocks {
        if cond_blocks.contains(&b) || is_header(b) {
            continue;
        }
        let Terminator::Branch { cond, .. } = func.block(b).terminator else {
            continue;
        };
        let dep = classify(nest, c, cond);
        let line = nest
            .unit
            .resolve(func.inst(cond).origin.span)
            .or_else(|| nest.unit.resolve(func.block(b).terminator_span))
            .map(|r| r.line)
            .unwrap_or(0);
        let mut condition = nest.unit.snippet(func.inst(cond).origin.span);
        if condition.is_empty() {
            condition = nest.unit.snippet(func.block(b).terminator_span);
        }
        let row =
            |lo: Quantity, hi: Quantity, exact: bool, message: String, help: Option<String>| {
                DivergentBranch {
                    line,
                    condition: condition.clone(),
                    ratio: [ratio(&lo, &warps), ratio(&hi, &warps)],
                    diverging_warps_per_row: [lo, hi],
                    warps_per_row: warps.clone(),
                    exact,
                    message,
                    help,
                }
            };
        match dep {
            Dependence::None => {}
            Dependence::OnlyY => out.push(row(
                Quantity::constant(0),
                Quantity::constant(0),
                true,
                "depends only on the y index: uniform within every warp".into(),
                None,
            )),
            Dependence::Affine { g, op } => {
                let (lo, hi, exact, why) = affine_boundary(&g, op, &trips);
                out.push(row(lo, hi, exact, why, None));
            }
            Dependence::Data => {
                let bounds = bounds.get_or_insert_with(|| clamp_bounds(nest));
                let help = clamp_help(nest, bounds, cond);
                out.push(row(
                    Quantity::constant(0),
                    warps.clone(),
                    false,
                    "depends on values read at per-thread addresses: any warp may diverge (a profile tells how often)".into(),
                    help,
                ));
            }
        }
    }
    if !target.block.0.is_multiple_of(32) {
        for d in &mut out {
            d.exact = false;
            d.message.push_str(&format!(
                "; the block's x-dimension {} is not a multiple of 32, so warps span rows and the ratio is approximate",
                target.block.0
            ));
        }
    }
    out
}

fn ratio(d: &str, w: &str) -> String {
    match d {
        "0" => "0".into(),
        _ if d == w => "1".into(),
        _ => format!("{d}/({w})"),
    }
}

fn strip_casts(nest: &Nest, mut v: Value) -> Value {
    while let InstKind::Cast(inner) = nest.func.inst(v).kind {
        v = inner;
    }
    v
}

/// Whether `v` reads memory or opaque values that depend on the mapped induction variables.
fn reaches(
    nest: &Nest,
    v: Value,
    targets: &HashSet<Value>,
    seen: &mut HashMap<Value, bool>,
) -> bool {
    if let Some(&r) = seen.get(&v) {
        return r;
    }
    seen.insert(v, false);
    let inst = nest.func.inst(v);
    if !nest.forest.loop_(nest.outer).contains(inst.block) {
        return false;
    }
    let r = targets.contains(&v)
        || inst
            .kind
            .operands()
            .into_iter()
            .any(|o| reaches(nest, o, targets, seen));
    seen.insert(v, r);
    r
}

fn classify(nest: &Nest, c: &Candidate, cond: Value) -> Dependence {
    let func = nest.func;
    let mapped: Vec<LoopIdVar> = [Some(c.x), c.y]
        .into_iter()
        .flatten()
        .filter_map(|id| nest.iv(id).map(|r| (id, r.var.clone())))
        .collect();
    let phis: HashSet<Value> = mapped
        .iter()
        .filter_map(|(_, var)| nest.rec.symbols.value_of(var))
        .collect();
    if !reaches(nest, cond, &phis, &mut HashMap::new()) {
        return Dependence::None;
    }
    let cond = strip_casts(nest, cond);
    let (op, a, b) = match &func.inst(cond).kind {
        InstKind::Binary(op, a, b) if op.is_comparison() => (*op, *a, *b),
        _ => (BinOp::Ne, cond, cond),
    };
    let g = match (nest.rec.of(a), nest.rec.of(b)) {
        ([ea], [eb]) if a != b => ea.checked_sub(eb).ok(),
        ([ea], _) if a == b => Some(ea.clone()),
        _ => None,
    };
    let Some(g) = g else { return Dependence::Data };
    // Values read or computed inside the nest make the condition data-dependent.
    let ivs: HashSet<Var> = nest.space.ivs.iter().map(|r| r.var.clone()).collect();
    let variant = g.vars().into_iter().any(|v| {
        nest.rec.symbols.info(&v).is_some_and(|s| match &s.origin {
            // A load inside the nest is data unless its address is loop-invariant.
            SymbolOrigin::Load { load, .. } => {
                nest.forest
                    .loop_(nest.outer)
                    .contains(func.inst(*load).block)
                    && match func.inst(*load).kind {
                        InstKind::Load { addr } => nest
                            .rec
                            .of(addr)
                            .iter()
                            .any(|e| e.vars().iter().any(|w| ivs.contains(w))),
                        _ => true,
                    }
            }
            SymbolOrigin::Opaque(d) | SymbolOrigin::Phi(d) => {
                nest.forest.loop_(nest.outer).contains(func.inst(*d).block)
            }
            _ => false,
        })
    });
    if variant {
        return Dependence::Data;
    }
    let Some(map) = nest.thread_substitution(c) else {
        return Dependence::Data;
    };
    let Ok(g) = g.substitute(&map) else {
        return Dependence::Data;
    };
    if g.contains_var(&crate::coalescing::thread_var()) {
        Dependence::Affine { g, op }
    } else if c.y.is_some() {
        Dependence::OnlyY
    } else {
        Dependence::None
    }
}

type LoopIdVar = (frontend::loops::LoopId, Var);

/// Diverging warps per row for `g(#tx) op 0`: `(min, max, exact, explanation)`.
fn affine_boundary(g: &Expr, op: BinOp, trips: &Expr) -> (Quantity, Quantity, bool, String) {
    let tx = crate::coalescing::thread_var();
    let zero = HashMap::from([(tx.clone(), Expr::constant(0))]);
    let one = HashMap::from([(tx.clone(), Expr::constant(1))]);
    let (Ok(g0), Ok(g1)) = (g.substitute(&zero), g.substitute(&one)) else {
        return unknown("the condition is not affine in the thread index");
    };
    let Ok(a) = g1.checked_sub(&g0) else {
        return unknown("the condition is not affine in the thread index");
    };
    let affine = Expr::from(tx.clone())
        .checked_mul(&a)
        .and_then(|e| e.checked_add(&g0))
        .is_ok_and(|e| &e == g);
    if !affine {
        return unknown("the condition is not affine in the thread index");
    }
    let (Some(a), Some(b)) = (a.as_integer(), g0.as_integer()) else {
        return (
            Quantity::constant(0),
            Quantity::constant(1),
            false,
            "affine in the thread index with a symbolic boundary: at most the one warp containing it diverges per row".into(),
        );
    };
    if a.is_zero() {
        return (
            Quantity::constant(0),
            Quantity::constant(0),
            true,
            "uniform along x".into(),
        );
    }
    // First thread index whose outcome differs from thread 0's, if any.
    let boundary = match op {
        BinOp::Eq | BinOp::Ne => {
            let (q, r) = (-b.clone()).div_rem(&a);
            if !r.is_zero() || q < BigInt::zero() {
                return (
                    Quantity::constant(0),
                    Quantity::constant(0),
                    true,
                    "no thread satisfies the equality: uniform".into(),
                );
            }
            let q = q.to_i64().unwrap_or(i64::MAX);
            let text = format!(
                "only thread index {q} of each row differs: the warp containing it diverges"
            );
            return within(q, true, trips, text);
        }
        _ => {
            // g(t) = a*t + b against 0 flips where t crosses q = -b/a: at ceil(q) or at
            // floor(q) + 1 depending on strictness and the sign of a.
            let q = num_rational::BigRational::new(-b, a.clone());
            let ceil = q.ceil().to_integer();
            let floor_next = q.floor().to_integer() + 1;
            let strict_lt = matches!(op, BinOp::Lt | BinOp::Ge);
            let t = if (a > BigInt::zero()) == strict_lt {
                ceil
            } else {
                floor_next
            };
            t.to_i64().unwrap_or(i64::MAX)
        }
    };
    if boundary <= 0 {
        return (
            Quantity::constant(0),
            Quantity::constant(0),
            true,
            "every thread takes the same side: uniform".into(),
        );
    }
    let text = format!("the outcome changes at thread index {boundary} of each row");
    within(boundary, false, trips, text)
}

/// One warp per row diverges when the boundary `t` lies inside the row and, for a change
/// of outcome (not a single thread), inside a warp rather than on its first thread.
fn within(t: i64, single: bool, trips: &Expr, text: String) -> (Quantity, Quantity, bool, String) {
    if !single && t % 32 == 0 {
        return (
            Quantity::constant(0),
            Quantity::constant(0),
            true,
            format!("{text}, a warp boundary: uniform"),
        );
    }
    match trips.as_integer().and_then(|n| n.to_i64()) {
        Some(n) if t >= n => (
            Quantity::constant(0),
            Quantity::constant(0),
            true,
            format!("{text}, outside the row"),
        ),
        Some(_) => (Quantity::constant(1), Quantity::constant(1), true, text),
        None => (
            Quantity::constant(1),
            Quantity::constant(1),
            true,
            format!("{text} (for rows longer than {t} threads)"),
        ),
    }
}

fn unknown(why: &str) -> (Quantity, Quantity, bool, String) {
    (
        Quantity::constant(0),
        Quantity::constant(1),
        false,
        why.into(),
    )
}

/// A branch condition `v op k` with `k` a constant: `op` (with `v` on the left), `v`
/// without its casts, and `k` as the report writes it.
fn compared(nest: &Nest, v: Value) -> Option<(BinOp, Value, String)> {
    let func = nest.func;
    let v = strip_casts(nest, v);
    let InstKind::Binary(op, a, b) = &func.inst(v).kind else {
        return None;
    };
    if !op.is_comparison() {
        return None;
    }
    let constant = |x: Value| match &func.inst(strip_casts(nest, x)).kind {
        InstKind::Const(Constant::Int(i)) => Some(i.to_string()),
        InstKind::Const(Constant::Float(f)) => Some(format!("{f}")),
        _ => None,
    };
    match (constant(*a), constant(*b)) {
        (None, Some(k)) => Some((*op, strip_casts(nest, *a), k)),
        (Some(k), None) => Some((op.swapped(), strip_casts(nest, *b), k)),
        _ => None,
    }
}

/// The bounds a clamp's halves could be: for each value that a branch of the function
/// compares with a constant, the branches' conditions, whether each bounds from below, and
/// the constants, in block order. Made once per nest, where each divergent branch used to
/// walk every block (thousands of nested `?:` made that quadratic).
type Bounds = HashMap<Value, Vec<(Value, bool, String)>>;

fn clamp_bounds(nest: &Nest) -> Bounds {
    let func = nest.func;
    let mut bounds = Bounds::new();
    for b in func.blocks() {
        if let Terminator::Branch { cond, .. } = func.block(b).terminator {
            if let Some((op, v, k)) = compared(nest, cond) {
                bounds.entry(v).or_default().push((cond, is_lower(op), k));
            }
        }
    }
    bounds
}

/// GPUCheck's rewrite: `if (c < lo) ... else if (c > hi) ...` is a clamp.
fn clamp_help(nest: &Nest, bounds: &Bounds, cond: Value) -> Option<String> {
    let func = nest.func;
    let (op, value, k) = compared(nest, cond)?;
    let name = func
        .inst(value)
        .origin
        .var_name
        .clone()
        .filter(|n| !n.starts_with('&'))
        .unwrap_or_else(|| nest.unit.snippet(func.inst(value).origin.span));
    // The other half of the clamp on the same value (the last one, in block order).
    let other = bounds
        .get(&value)
        .into_iter()
        .flatten()
        .rev()
        .find(|(c2, lower, _)| *c2 != cond && *lower != is_lower(op))
        .map(|(_, _, k2)| k2.clone());
    let (lo, hi) = match (&other, is_lower(op)) {
        (Some(o), true) => (Some(k.clone()), Some(o.clone())),
        (Some(o), false) => (Some(o.clone()), Some(k.clone())),
        (None, _) => return None,
    };
    let float = nest
        .unit
        .lowered
        .program
        .types
        .is_float(func.inst(value).ty);
    let (fmin, fmax) = if float {
        ("fminf", "fmaxf")
    } else {
        ("min", "max")
    };
    let rewrite = match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{name} = {fmin}({fmax}({name}, {lo}), {hi})"),
        (Some(lo), None) => format!("{name} = {fmax}({name}, {lo})"),
        (None, Some(hi)) => format!("{name} = {fmin}({name}, {hi})"),
        (None, None) => return None,
    };
    Some(format!(
        "a clamp: write `{rewrite}` and keep one path (GPUCheck): the branches serialize when a warp's threads take different ones"
    ))
}

fn is_lower(op: BinOp) -> bool {
    matches!(op, BinOp::Lt | BinOp::Le)
}
