//! The two sides of a branch up to the block where they join: which predecessors of the
//! join each side arrives through (so which value each phi of the join takes on that side),
//! and the blocks in between, which must do nothing but compute those values. A min/max
//! update `if (a[i] > m) m = a[i];` and a short-circuit `ok = ok && a[i] > 0` are such
//! regions.

use frontend::ir::{Block, Function, InstKind, Program, Terminator, Value};
use frontend::loops::Loop;
use std::collections::{BTreeSet, HashSet};

/// Paths explored per region; a bigger region is not a reduction idiom.
const MAX_STEPS: usize = 256;

#[derive(Clone, Debug)]
pub(crate) struct Region {
    /// The block whose branch decides.
    pub decision: Block,
    pub cond: Value,
    pub join: Block,
    /// Blocks strictly between the decision and the join.
    pub blocks: BTreeSet<Block>,
    /// Predecessors of the join reached when the condition holds / does not hold.
    pub preds: [BTreeSet<Block>; 2],
}

impl Region {
    /// The values `phi` (a phi of the join) takes when the condition holds and when it does
    /// not.
    pub fn side_values(&self, func: &Function, phi: Value) -> Option<[Vec<Value>; 2]> {
        let InstKind::Phi(args) = &func.inst(phi).kind else {
            return None;
        };
        let mut out = [Vec::new(), Vec::new()];
        for (side, preds) in self.preds.iter().enumerate() {
            for pred in preds {
                let (_, value) = args.iter().find(|(b, _)| b == pred)?;
                if !out[side].contains(value) {
                    out[side].push(*value);
                }
            }
        }
        Some(out)
    }
}

/// The region of the branch ending `decision` up to `join`, inside loop `l`: every path from
/// either successor must reach `join` without leaving the loop, returning to the decision or
/// the loop header, or looping; and every predecessor of `join` must be on such a path.
pub(crate) fn region(func: &Function, l: &Loop, decision: Block, join: Block) -> Option<Region> {
    let Terminator::Branch {
        cond,
        then_block,
        else_block,
    } = func.block(decision).terminator
    else {
        return None;
    };
    if then_block == else_block || !l.contains(decision) || !l.contains(join) {
        return None;
    }
    let mut blocks = BTreeSet::new();
    let mut preds = [BTreeSet::new(), BTreeSet::new()];
    let mut steps = 0;
    for (side, start) in [then_block, else_block].into_iter().enumerate() {
        // Depth-first over paths; `path` holds the blocks of the current one.
        let mut stack: Vec<(Block, Block, usize)> = vec![(start, decision, 0)];
        let mut path: Vec<Block> = Vec::new();
        while let Some((block, from, depth)) = stack.pop() {
            steps += 1;
            if steps > MAX_STEPS {
                return None;
            }
            path.truncate(depth);
            if block == join {
                preds[side].insert(from);
                continue;
            }
            if block == decision || block == l.header || !l.contains(block) || path.contains(&block)
            {
                return None;
            }
            path.push(block);
            blocks.insert(block);
            let successors = func.block(block).terminator.successors();
            if successors.is_empty() {
                return None;
            }
            for s in successors {
                stack.push((s, block, depth + 1));
            }
        }
    }
    let all: BTreeSet<Block> = preds[0].union(&preds[1]).copied().collect();
    if func.block(join).preds.iter().any(|p| !all.contains(p)) {
        return None;
    }
    Some(Region {
        decision,
        cond,
        join,
        blocks,
        preds,
    })
}

/// Whether the region only computes values for the phis in `allowed`: no store, no call other
/// than pure math, every value it defines used only inside it or by those phis, and no other
/// phi at the join (a value chosen by the decision would depend on the accumulator).
pub(crate) fn only_feeds(
    program: &Program,
    func: &Function,
    region: &Region,
    allowed: &HashSet<Value>,
    users: &[Vec<Value>],
) -> bool {
    for &v in &func.block(region.join).insts {
        if func.inst(v).kind.is_phi() && !allowed.contains(&v) {
            return false;
        }
    }
    let inside = |v: Value| region.blocks.contains(&func.inst(v).block);
    let mut defined = HashSet::new();
    for &b in &region.blocks {
        for &v in &func.block(b).insts {
            match &func.inst(v).kind {
                InstKind::Store { .. } => return false,
                InstKind::Call {
                    callee: frontend::ir::Callee::Direct(name),
                    ..
                } if super::equiv::pure_math(program, name) => {}
                InstKind::Call { .. } => return false,
                _ => {}
            }
            if users[v.index()]
                .iter()
                .any(|u| !inside(*u) && !allowed.contains(u))
            {
                return false;
            }
            defined.insert(v);
        }
    }
    // Terminators outside the region must not branch on what it computes.
    func.blocks().all(|b| {
        region.blocks.contains(&b) || func.terminator_uses(b).iter().all(|v| !defined.contains(v))
    })
}
