//! What the two sides of a branch do, for the fix its WW203 finding suggests: a branch
//! that only chooses between two values (`if (c) x = a; else x = b;`) can be written as a
//! select, and one that keeps an operand of its own comparison as a `min` or `max`.
//!
//! Only a diamond or triangle qualifies: each side a single block entered from the branch
//! alone, jumping to one join entered from the two sides alone, with no load, store or call
//! on either side. A load is excluded because computing both sides would run it where the
//! branch may have guarded it (`if (i < n) x = in[i];`), a call because it may have effects.

use crate::rules::ww203_divergent_branch::Choice;
use frontend::ir::{Block, Function, InstKind, Terminator, Value};

/// The choice a branch on `cond` to `sides` (then, else) makes; `preds`: the number of
/// edges into each block.
pub fn of(func: &Function, preds: &[usize], cond: Value, sides: [Block; 2]) -> Choice {
    let jump = |s: Block| match func.block(s).terminator {
        Terminator::Jump(to) => Some(to),
        _ => None,
    };
    // The join: where both sides meet, a side being the join itself when it is empty
    // (`if (c) x = a;`).
    let join = match sides.map(jump) {
        [Some(a), Some(b)] if a == b => a,
        [Some(a), _] if a == sides[1] => a,
        [_, Some(b)] if b == sides[0] => b,
        _ => return Choice::Work,
    };
    let arms: Vec<Block> = sides.into_iter().filter(|s| *s != join).collect();
    let pure = arms.iter().all(|&s| {
        preds[s.index()] == 1
            && func.block(s).insts.iter().all(|&v| {
                !matches!(
                    func.inst(v).kind,
                    InstKind::Load { .. } | InstKind::Store { .. } | InstKind::Call { .. }
                )
            })
    });
    if !pure || preds[join.index()] != 2 {
        return Choice::Work;
    }
    let phis: Vec<&Vec<(Block, Value)>> = func
        .block(join)
        .insts
        .iter()
        .filter_map(|&v| match &func.inst(v).kind {
            InstKind::Phi(args) => Some(args),
            _ => None,
        })
        .collect();
    if phis.is_empty() {
        return Choice::Work;
    }
    let InstKind::Binary(op, l, r) = func.inst(cond).kind else {
        return Choice::Value;
    };
    if !op.is_comparison() {
        return Choice::Value;
    }
    let strip = |mut v: Value| {
        while let InstKind::Cast(inner) = func.inst(v).kind {
            v = inner;
        }
        v
    };
    let operands = [strip(l), strip(r)];
    // One value chosen, and it is the smaller or the larger of the two compared.
    let keeps_operand = |args: &Vec<(Block, Value)>| {
        let mut chosen: Vec<Value> = args.iter().map(|(_, v)| strip(*v)).collect();
        chosen.sort_unstable_by_key(|v| v.index());
        let mut compared = operands.to_vec();
        compared.sort_unstable_by_key(|v| v.index());
        chosen == compared
    };
    match phis.as_slice() {
        [one] if keeps_operand(one) => Choice::MinMax,
        _ => Choice::Value,
    }
}
