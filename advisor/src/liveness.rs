//! Whether a loop's last value of an object can be read after the loop: a forward must-write
//! analysis of the object's bytes over the code the loop's exits lead to. A read is exposed
//! unless every path from the exit to it wrote its bytes first (`fctb[0] = ..; .. fctb[0]`,
//! or `for (ll = 0; ll < 3; ll++) dc[ll] = ..;` before `dc[0]*dc[0]`): a temporary reused by
//! the function's next loops is not live after this one.

use analyses::reconstruct::Reconstruction;
use frontend::ir::{Block, Function, InstKind, Value};
use frontend::loops::{LoopForest, LoopId};
use std::collections::{HashMap, HashSet, VecDeque};
use symbolic::{Expr, SignEnv};

/// Written bytes as disjoint, sorted `[lo, hi)` intervals; `None` is "everything" (a path
/// not yet seen, the neutral element of the intersection).
type Written = Option<Vec<(i128, i128)>>;

/// The object: which addresses point into it, and at which byte offset.
pub struct Object<'a> {
    pub addresses: &'a HashSet<Value>,
    /// The byte offset of an address into the object (in the reconstruction's terms).
    pub offset: &'a dyn Fn(Value) -> Option<Expr>,
    /// The size of what a load or store instruction touches.
    pub size: &'a dyn Fn(Value) -> Option<u64>,
}

/// Whether some read after loop `id` (in the code its exits reach, outside the loop) may see
/// a value the loop wrote into `object`. Loops after it contribute the bytes they sweep
/// (a constant number of iterations, one element per iteration, on every iteration).
pub fn read_after_loop(
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    id: LoopId,
    object: &Object,
) -> bool {
    let l = forest.loop_(id);
    // The region: blocks the exits reach without going back into the loop.
    let mut region: HashSet<Block> = HashSet::new();
    let mut work: VecDeque<Block> = l.exits.iter().map(|(_, to)| *to).collect();
    while let Some(b) = work.pop_front() {
        if l.contains(b) || !region.insert(b) {
            continue;
        }
        work.extend(func.block(b).terminator.successors());
    }
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for b in func.blocks() {
        for s in func.block(b).terminator.successors() {
            preds.entry(s).or_default().push(b);
        }
    }
    let swept = swept_at_exits(func, forest, rec, id, &region, object);
    let mut out: HashMap<Block, Written> = region.iter().map(|b| (*b, None)).collect();
    let mut order: Vec<Block> = region.iter().copied().collect();
    order.sort();
    // Iterate to a fixpoint (intersections only shrink the sets; bounded rounds, and a
    // region that does not settle within them counts as read).
    let mut settled = false;
    for _round in 0..(4 * order.len() + 8) {
        let mut changed = false;
        for &b in &order {
            let mut state: Written = None;
            for p in preds.get(&b).into_iter().flatten() {
                let from: Written = if l.contains(*p) {
                    Some(Vec::new())
                } else if region.contains(p) {
                    let mut s = out[p].clone();
                    if let (Some(s), Some(extra)) = (s.as_mut(), swept.get(&(*p, b))) {
                        for &(lo, hi) in extra {
                            add(s, lo, hi);
                        }
                    }
                    s
                } else {
                    continue;
                };
                state = meet(state, from);
            }
            let Some(mut written) = state.clone() else {
                continue;
            };
            // Addresses written in this block, as the reconstruction spells their offsets:
            // a load of the same offset reads what the block wrote (`t[k] = ..; .. t[k]`).
            let mut same_block: Vec<(Expr, Option<u64>)> = Vec::new();
            for &v in &func.block(b).insts {
                if let InstKind::Load { addr } = &func.inst(v).kind {
                    if object.addresses.contains(addr) {
                        let key = ((object.offset)(*addr), (object.size)(v));
                        if let (Some(o), n) = key {
                            if same_block.contains(&(o, n)) {
                                continue;
                            }
                        }
                    }
                }
                if let InstKind::Store { addr, .. } = &func.inst(v).kind {
                    if object.addresses.contains(addr) {
                        if let Some(o) = (object.offset)(*addr) {
                            same_block.push((o, (object.size)(v)));
                        }
                    }
                }
                match transfer(func, rec, forest, v, object, &written) {
                    Step::Exposed => return true,
                    Step::Wrote(lo, hi) => add(&mut written, lo, hi),
                    Step::Nothing => {}
                }
            }
            if out[&b] != Some(written.clone()) {
                out.insert(b, Some(written));
                changed = true;
            }
        }
        if !changed {
            settled = true;
            break;
        }
    }
    if !settled {
        return true;
    }
    // A block never reached with a known state stays `None`: its reads were not checked.
    order.iter().any(|b| {
        out[b].is_none()
            && func.block(*b).insts.iter().any(|&v| {
                matches!(
                    transfer(func, rec, forest, v, object, &Vec::new()),
                    Step::Exposed
                )
            })
    })
}

enum Step {
    Exposed,
    Wrote(i128, i128),
    Nothing,
}

fn transfer(
    func: &Function,
    rec: &Reconstruction,
    forest: &LoopForest,
    v: Value,
    object: &Object,
    written: &[(i128, i128)],
) -> Step {
    match &func.inst(v).kind {
        InstKind::Load { addr } if object.addresses.contains(addr) => {
            match read_bytes(func, rec, forest, v, *addr, object) {
                Some((lo, hi)) if covered(written, lo, hi) => Step::Nothing,
                _ => Step::Exposed,
            }
        }
        InstKind::Store { addr, .. } if object.addresses.contains(addr) => {
            match (
                (object.offset)(*addr).and_then(|o| o.as_integer()),
                (object.size)(v),
            ) {
                (Some(o), Some(n)) => match i128::try_from(o) {
                    Ok(o) => Step::Wrote(o, o + n as i128),
                    Err(_) => Step::Nothing,
                },
                _ => Step::Nothing,
            }
        }
        InstKind::Call { args, .. } if args.iter().any(|a| object.addresses.contains(a)) => {
            Step::Exposed
        }
        _ => Step::Nothing,
    }
}

/// The bytes a load reads, over every iteration of the constant loops around it when its
/// offset moves with them (`dc[ll]` in `for (ll = 0; ll < 3; ll++)`).
fn read_bytes(
    func: &Function,
    rec: &Reconstruction,
    forest: &LoopForest,
    load: Value,
    addr: Value,
    object: &Object,
) -> Option<(i128, i128)> {
    let offset = (object.offset)(addr)?;
    let size = (object.size)(load)? as i128;
    if let Some(o) = offset.as_integer() {
        let o = i128::try_from(o).ok()?;
        return Some((o, o + size));
    }
    // One constant loop around the load whose induction variable the offset is linear in.
    let inner = forest.innermost(func.inst(load).block)?;
    let (var, first, count) = constant_range(func, forest, rec, inner)?;
    let (coefficient, base) = linear_in(&offset, &var)?;
    if coefficient <= 0 {
        return None;
    }
    let lo = base + coefficient * first;
    Some((lo, lo + coefficient * (count - 1) + size))
}

/// A loop's induction variable with a constant first value and trip count, step 1.
fn constant_range(
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    id: LoopId,
) -> Option<(symbolic::Var, i128, i128)> {
    let range = crate::space::iv_range(func, forest, id, rec, &SignEnv::new()).ok()?;
    if range.step != 1 {
        return None;
    }
    let first = i128::try_from(range.init.as_integer()?).ok()?;
    let count = i128::try_from(range.trips.as_integer()?).ok()?;
    (count >= 1).then_some((range.var, first, count))
}

/// `offset = coefficient * var + base` with constant coefficient and base.
fn linear_in(offset: &Expr, var: &symbolic::Var) -> Option<(i128, i128)> {
    let zero: HashMap<symbolic::Var, Expr> = [(var.clone(), Expr::constant(0))].into();
    let one: HashMap<symbolic::Var, Expr> = [(var.clone(), Expr::constant(1))].into();
    let at0 = i128::try_from(offset.substitute(&zero).ok()?.as_integer()?).ok()?;
    let at1 = i128::try_from(offset.substitute(&one).ok()?.as_integer()?).ok()?;
    let two: HashMap<symbolic::Var, Expr> = [(var.clone(), Expr::constant(2))].into();
    let at2 = i128::try_from(offset.substitute(&two).ok()?.as_integer()?).ok()?;
    // Linear: equal steps (the offset has no other symbol, so it is a polynomial in `var`
    // with constant coefficients; equal first differences at 0, 1, 2 rule out a square).
    (at2 - at1 == at1 - at0).then_some((at1 - at0, at0))
}

/// For each exit edge of a loop after `id` (inside `region`): the bytes its iterations
/// sweep, one element per iteration on every iteration, over a constant range.
fn swept_at_exits(
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    id: LoopId,
    region: &HashSet<Block>,
    object: &Object,
) -> HashMap<(Block, Block), Vec<(i128, i128)>> {
    let mut out: HashMap<(Block, Block), Vec<(i128, i128)>> = HashMap::new();
    for other in forest.ids() {
        let m = forest.loop_(other);
        if other == id || !region.contains(&m.header) {
            continue;
        }
        let Some((var, first, count)) = constant_range(func, forest, rec, other) else {
            continue;
        };
        let [(from, to)] = m.exits.as_slice() else {
            continue;
        };
        let mut swept = Vec::new();
        for &b in &m.blocks {
            // Only stores made on every iteration, directly in this loop's body.
            if forest.innermost(b) != Some(other)
                || !m.latches.iter().all(|latch| forest.dominates(b, *latch))
            {
                continue;
            }
            for &v in &func.block(b).insts {
                let InstKind::Store { addr, .. } = &func.inst(v).kind else {
                    continue;
                };
                if !object.addresses.contains(addr) {
                    continue;
                }
                let (Some(offset), Some(size)) = ((object.offset)(*addr), (object.size)(v)) else {
                    continue;
                };
                let Some((coefficient, base)) = linear_in(&offset, &var) else {
                    continue;
                };
                if coefficient != size as i128 {
                    continue;
                }
                let lo = base + coefficient * first;
                swept.push((lo, lo + coefficient * count));
            }
        }
        if !swept.is_empty() {
            out.entry((*from, *to)).or_default().extend(swept);
        }
    }
    out
}

impl std::fmt::Debug for Object<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("addresses", &self.addresses.len())
            .finish()
    }
}

fn meet(a: Written, b: Written) -> Written {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) => {
            let mut out = Vec::new();
            for &(a0, a1) in &x {
                for &(b0, b1) in &y {
                    let (lo, hi) = (a0.max(b0), a1.min(b1));
                    if lo < hi {
                        out.push((lo, hi));
                    }
                }
            }
            out.sort();
            Some(out)
        }
    }
}

fn add(written: &mut Vec<(i128, i128)>, lo: i128, hi: i128) {
    if lo >= hi {
        return;
    }
    written.push((lo, hi));
    written.sort();
    let mut merged: Vec<(i128, i128)> = Vec::new();
    for &(a, b) in written.iter() {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    *written = merged;
}

fn covered(written: &[(i128, i128)], lo: i128, hi: i128) -> bool {
    lo >= hi || written.iter().any(|&(a, b)| a <= lo && hi <= b)
}
