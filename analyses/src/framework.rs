//! A small monotone-framework solver for forward analyses on the CDFG.
//!
//! An analysis supplies a lattice of block states and two transfer functions: one for the
//! instructions of a block (phis excluded) and one for a CFG edge, which evaluates the
//! target's phis with the values of the source block and refines the state with the branch
//! condition (the true/false edges of `if (i < n)`). The solver:
//!
//! 1. seeds a worklist with the entry and always processes the block earliest in reverse
//!    postorder, so a block is normally visited after all its forward predecessors;
//! 2. joins incoming edge states at each block; at a loop header that has been visited more
//!    than [`SolverConfig::widen_after`] times it widens instead, which guarantees
//!    termination for lattices with infinite ascending chains (symbolic ranges);
//! 3. then runs [`SolverConfig::narrowing_passes`] descending passes that recompute every
//!    state from its predecessors and narrow at loop headers, recovering precision lost to
//!    widening;
//! 4. stops after [`SolverConfig::max_block_visits`] with every state set to the analysis'
//!    top and the reason recorded, instead of looping or panicking.
//!
//! Convergence contract: `join` and `widen` must be monotone and report whether they
//! changed the state; `widen` must stabilise every ascending chain in finitely many steps;
//! `narrow` must not go below the greatest fixpoint (returning its argument's meet with
//! the old state is safe).

use frontend::ir::{Block, Function};
use frontend::loops::LoopForest;
use std::collections::BTreeSet;

/// A join-semilattice of analysis states.
pub trait Lattice: Clone {
    /// `self := self ⊔ other`; returns whether `self` changed.
    fn join(&mut self, other: &Self) -> bool;

    /// `self := self ∇ other`; the default (join) is right for finite-height lattices.
    fn widen(&mut self, other: &Self) -> bool {
        self.join(other)
    }

    /// `self := self △ other`, where `other` is a recomputed (smaller or equal) state; the
    /// default keeps `self`, which is always sound.
    fn narrow(&mut self, other: &Self) -> bool {
        let _ = other;
        false
    }
}

/// A forward dataflow analysis over one function.
pub trait ForwardAnalysis {
    type State: Lattice;

    /// The state at function entry.
    fn entry_state(&self, func: &Function) -> Self::State;
    /// The state of a block not reached yet (the lattice's bottom).
    fn bottom(&self, func: &Function) -> Self::State;
    /// The state that claims nothing, used when the solver gives up.
    fn top(&self, func: &Function) -> Self::State;
    /// Applies the non-phi instructions of `block`.
    fn transfer_block(&self, func: &Function, block: Block, state: &mut Self::State);
    /// Moves a state across the edge `from -> to`: evaluates `to`'s phis with `from`'s
    /// values and refines with the branch condition that selects this edge.
    fn transfer_edge(&self, func: &Function, from: Block, to: Block, state: &mut Self::State);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolverConfig {
    /// Visits of a loop header before joins there become widenings.
    pub widen_after: u32,
    /// Descending passes after the ascending phase.
    pub narrowing_passes: u32,
    /// Total block visits before giving up with top.
    pub max_block_visits: usize,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            widen_after: 2,
            narrowing_passes: 2,
            max_block_visits: 100_000,
        }
    }
}

/// States at the entry (after phis) and exit of every block.
#[derive(Clone, Debug)]
pub struct Solution<S> {
    pub entry: Vec<S>,
    pub exit: Vec<S>,
    /// Why the solver gave up and returned top, if it did.
    pub gave_up: Option<String>,
    /// Block visits in the ascending phase (for tests and benchmarks).
    pub visits: usize,
}

/// Reverse postorder of the reachable blocks.
pub fn reverse_postorder(func: &Function) -> Vec<Block> {
    postorder_by(func, |_, succs| succs)
        .into_iter()
        .rev()
        .collect()
}

/// Reverse postorder in which every loop's body comes before the blocks after the loop:
/// the depth-first search takes the edges that leave a block's innermost loop first, so
/// that they finish first. The solver's worklist pops blocks in this order, so a loop
/// settles before what follows it is evaluated; with the plain order a `for` loop's body
/// (the branch's first successor) came after everything that follows the loop, and every
/// change at its header re-evaluated the rest of the function: a thousand loops in a row
/// were quadratic.
pub fn loop_reverse_postorder(func: &Function, forest: &LoopForest) -> Vec<Block> {
    let n = func.blocks.len();
    let mut innermost: Vec<Option<usize>> = vec![None; n];
    for (k, l) in forest.loops.iter().enumerate() {
        for b in &l.blocks {
            if let Some(slot) = innermost.get_mut(b.index()) {
                if slot.is_none_or(|m| forest.loops[m].depth < l.depth) {
                    *slot = Some(k);
                }
            }
        }
    }
    postorder_by(func, |block, mut succs| {
        if let Some(l) = innermost[block.index()] {
            let l = &forest.loops[l];
            // Stable: the order among leaving (or staying) edges is the branch's own.
            succs.sort_by_key(|s| l.contains(*s));
        }
        succs
    })
    .into_iter()
    .rev()
    .collect()
}

/// Postorder of the reachable blocks, the depth-first search visiting each block's
/// successors in the order `order(block, successors)` gives.
fn postorder_by(func: &Function, order: impl Fn(Block, Vec<Block>) -> Vec<Block>) -> Vec<Block> {
    let n = func.blocks.len();
    let mut visited = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(Block, usize)> = vec![(func.entry, 0)];
    if n == 0 {
        return post;
    }
    visited[func.entry.index()] = true;
    while let Some((block, next)) = stack.pop() {
        let succs = order(block, func.block(block).terminator.successors());
        if next < succs.len() {
            stack.push((block, next + 1));
            let s = succs[next];
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(block);
        }
    }
    post
}

/// Runs `analysis` to a fixpoint on `func`.
pub fn solve<A: ForwardAnalysis>(
    analysis: &A,
    func: &Function,
    forest: &LoopForest,
    config: SolverConfig,
) -> Solution<A::State> {
    let n = func.blocks.len();
    let rpo = loop_reverse_postorder(func, forest);
    let mut order = vec![usize::MAX; n];
    for (i, b) in rpo.iter().enumerate() {
        order[b.index()] = i;
    }
    // One pass over the loops, not one per block (a thousand loops in a row made it
    // quadratic).
    let mut is_header = vec![false; n];
    for l in &forest.loops {
        if let Some(h) = is_header.get_mut(l.header.index()) {
            *h = true;
        }
    }
    let mut entry: Vec<A::State> = (0..n).map(|_| analysis.bottom(func)).collect();
    let mut exit: Vec<A::State> = (0..n).map(|_| analysis.bottom(func)).collect();
    let mut reached = vec![false; n];
    let mut header_visits = vec![0u32; n];
    if n == 0 {
        return Solution {
            entry,
            exit,
            gave_up: None,
            visits: 0,
        };
    }
    entry[func.entry.index()] = analysis.entry_state(func);
    reached[func.entry.index()] = true;

    let mut worklist: BTreeSet<usize> = BTreeSet::from([order[func.entry.index()]]);
    let mut visits = 0usize;
    while let Some(position) = worklist.pop_first() {
        let block = rpo[position];
        visits += 1;
        if visits > config.max_block_visits {
            let reason = format!(
                "no fixpoint after {} block visits; results are top",
                config.max_block_visits
            );
            return give_up(analysis, func, reason, visits);
        }
        let mut state = entry[block.index()].clone();
        analysis.transfer_block(func, block, &mut state);
        exit[block.index()] = state;
        for succ in func.block(block).terminator.successors() {
            let mut edge = exit[block.index()].clone();
            analysis.transfer_edge(func, block, succ, &mut edge);
            let s = succ.index();
            let changed = if !reached[s] {
                reached[s] = true;
                entry[s] = edge;
                true
            } else if is_header[s] {
                header_visits[s] += 1;
                if header_visits[s] > config.widen_after {
                    entry[s].widen(&edge)
                } else {
                    entry[s].join(&edge)
                }
            } else {
                entry[s].join(&edge)
            };
            if changed && order[s] != usize::MAX {
                worklist.insert(order[s]);
            }
        }
    }

    // Descending phase: recompute each block's entry from its predecessors' exits.
    for _ in 0..config.narrowing_passes {
        let mut changed_any = false;
        for &block in &rpo {
            let b = block.index();
            if block != func.entry {
                let mut recomputed: Option<A::State> = None;
                for &pred in &func.block(block).preds {
                    if !reached[pred.index()] {
                        continue;
                    }
                    let mut edge = exit[pred.index()].clone();
                    analysis.transfer_edge(func, pred, block, &mut edge);
                    match &mut recomputed {
                        None => recomputed = Some(edge),
                        Some(acc) => {
                            acc.join(&edge);
                        }
                    }
                }
                if let Some(new) = recomputed {
                    if is_header[b] {
                        changed_any |= entry[b].narrow(&new);
                    } else {
                        entry[b] = new;
                    }
                }
            }
            let mut state = entry[b].clone();
            analysis.transfer_block(func, block, &mut state);
            exit[b] = state;
        }
        if !changed_any {
            break;
        }
    }
    Solution {
        entry,
        exit,
        gave_up: None,
        visits,
    }
}

fn give_up<A: ForwardAnalysis>(
    analysis: &A,
    func: &Function,
    reason: String,
    visits: usize,
) -> Solution<A::State> {
    let n = func.blocks.len();
    Solution {
        entry: (0..n).map(|_| analysis.top(func)).collect(),
        exit: (0..n).map(|_| analysis.top(func)).collect(),
        gave_up: Some(reason),
        visits,
    }
}

#[cfg(test)]
mod tests {
    //! The engine tested with a mock analysis: reachability counting and an interval-free
    //! "max constant seen" lattice that needs widening to terminate.
    use super::*;
    use frontend::ir::{BlockData, Constant, InstData, InstKind, Origin, Span, Terminator, Value};
    use frontend::loops::analyze_loops;

    /// A counter lattice: the number of times the loop body may have run, capped by widening.
    #[derive(Clone, Debug, PartialEq)]
    enum Count {
        Bottom,
        Finite(u64),
        Infinite,
    }

    impl Lattice for Count {
        fn join(&mut self, other: &Self) -> bool {
            let new = match (&*self, other) {
                (Count::Bottom, x) | (x, Count::Bottom) => x.clone(),
                (Count::Infinite, _) | (_, Count::Infinite) => Count::Infinite,
                (Count::Finite(a), Count::Finite(b)) => Count::Finite(*a.max(b)),
            };
            let changed = new != *self;
            *self = new;
            changed
        }
        fn widen(&mut self, other: &Self) -> bool {
            let mut joined = self.clone();
            joined.join(other);
            let new = if joined != *self && !matches!(self, Count::Bottom) {
                Count::Infinite
            } else {
                joined
            };
            let changed = new != *self;
            *self = new;
            changed
        }
    }

    struct Counting;
    impl ForwardAnalysis for Counting {
        type State = Count;
        fn entry_state(&self, _: &Function) -> Count {
            Count::Finite(0)
        }
        fn bottom(&self, _: &Function) -> Count {
            Count::Bottom
        }
        fn top(&self, _: &Function) -> Count {
            Count::Infinite
        }
        fn transfer_block(&self, _: &Function, block: Block, state: &mut Count) {
            // Block 2 is the loop body: each pass through it counts one iteration.
            if block == Block(2) {
                if let Count::Finite(n) = state {
                    *n += 1;
                }
            }
        }
        fn transfer_edge(&self, _: &Function, _: Block, _: Block, _: &mut Count) {}
    }

    /// bb0 -> bb1; bb1 -> bb2 | bb3; bb2 -> bb1; bb3: return.
    fn loop_function() -> Function {
        let block = |terminator: Terminator, preds: Vec<Block>| BlockData {
            insts: Vec::new(),
            terminator,
            terminator_span: Span::NONE,
            preds,
        };
        let mut types = frontend::types::TypeTable::new();
        let int = types.int();
        let cond = InstData {
            kind: InstKind::Const(Constant::Int(1)),
            ty: int,
            block: Block(1),
            origin: Origin::default(),
        };
        let mut blocks = vec![
            block(Terminator::Jump(Block(1)), vec![]),
            block(
                Terminator::Branch {
                    cond: Value(0),
                    then_block: Block(2),
                    else_block: Block(3),
                },
                vec![Block(0), Block(2)],
            ),
            block(Terminator::Jump(Block(1)), vec![Block(1)]),
            block(Terminator::Return(None), vec![Block(1)]),
        ];
        blocks[1].insts.push(Value(0));
        Function {
            name: "f".into(),
            ty: int,
            ret: int,
            params: Vec::new(),
            is_static: false,
            span: Span::NONE,
            name_span: Span::NONE,
            insts: vec![cond],
            blocks,
            slots: Vec::new(),
            entry: Block(0),
            loops: Vec::new(),
            ifs: Vec::new(),
            local_statics: Vec::new(),
            restrict_pointers: Vec::new(),
            declarations: Vec::new(),
            truncations: Default::default(),
            float_promotions: Default::default(),
            execution: Default::default(),
        }
    }

    #[test]
    fn widening_terminates_an_infinite_chain() {
        let func = loop_function();
        let forest = analyze_loops(&func);
        let solution = solve(&Counting, &func, &forest, SolverConfig::default());
        assert_eq!(solution.gave_up, None);
        assert_eq!(solution.entry[1], Count::Infinite);
        assert_eq!(solution.exit[3], Count::Infinite);
        assert!(solution.visits < 20, "took {} visits", solution.visits);
    }

    #[test]
    fn the_cap_returns_top_with_a_reason() {
        let func = loop_function();
        let forest = analyze_loops(&func);
        let config = SolverConfig {
            widen_after: 1_000,
            narrowing_passes: 0,
            max_block_visits: 10,
        };
        let solution = solve(&Counting, &func, &forest, config);
        assert!(solution
            .gave_up
            .as_deref()
            .is_some_and(|r| r.contains("10 block visits")));
        assert!(solution.entry.iter().all(|s| *s == Count::Infinite));
    }

    #[test]
    fn reverse_postorder_puts_the_header_before_the_body() {
        let func = loop_function();
        assert_eq!(
            reverse_postorder(&func),
            vec![Block(0), Block(1), Block(3), Block(2)]
        );
    }
}
