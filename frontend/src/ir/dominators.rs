//! Dominators of a function's blocks, from its CFG alone: the verifier checks that
//! definitions dominate their uses with them, and the loop forest finds back edges with them.

use super::{Block, Function};
use petgraph::algo::dominators::{simple_fast, Dominators as Tree};
use petgraph::graph::{DiGraph, NodeIndex};

/// The dominator tree of a function's CFG from its entry block.
#[derive(Debug)]
pub struct Dominators {
    tree: Tree<NodeIndex>,
    /// The graph node of each block, by block index.
    nodes: Vec<NodeIndex>,
    intervals: DomIntervals,
}

/// Each reachable block's entry and exit numbers in a depth-first walk of the dominator
/// tree, by block index: `a` dominates `b` when `b`'s interval lies in `a`'s. A query costs
/// O(1) instead of a walk up `b`'s dominators, which is as deep as the function has loops
/// and branches in a row.
#[derive(Clone, Debug, PartialEq)]
pub struct DomIntervals(Vec<Option<(u32, u32)>>);

impl DomIntervals {
    /// Whether `a` dominates `b` (every reachable block dominates itself); `false` when the
    /// entry does not reach `a` or `b`.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        match (
            self.0.get(a.index()).copied().flatten(),
            self.0.get(b.index()).copied().flatten(),
        ) {
            (Some((a_in, a_out)), Some((b_in, b_out))) => a_in <= b_in && b_out <= a_out,
            _ => false,
        }
    }
}

impl Dominators {
    /// Computes the dominator tree of `func`.
    pub fn of(func: &Function) -> Dominators {
        let mut graph: DiGraph<(), ()> =
            DiGraph::with_capacity(func.blocks.len(), func.blocks.len() * 2);
        let nodes: Vec<NodeIndex> = func.blocks().map(|_| graph.add_node(())).collect();
        for b in func.blocks() {
            for s in func.block(b).terminator.successors() {
                graph.add_edge(nodes[b.index()], nodes[s.index()], ());
            }
        }
        let tree = simple_fast(&graph, nodes[func.entry.index()]);
        let intervals = DomIntervals(tree_order(&tree, &nodes, func.entry.index()));
        Dominators {
            tree,
            nodes,
            intervals,
        }
    }

    /// The immediate dominator of every block, by block index; `None` for the entry and
    /// for blocks the entry does not reach.
    pub fn immediate(&self) -> Vec<Option<Block>> {
        self.nodes
            .iter()
            .map(|&n| {
                self.tree
                    .immediate_dominator(n)
                    .map(|d| Block(d.index() as u32))
            })
            .collect()
    }

    /// Whether `a` dominates `b` (every reachable block dominates itself); `false` when the
    /// entry does not reach `b`.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.intervals.dominates(a, b)
    }

    /// The O(1) dominance queries, to keep after the tree is dropped.
    pub fn intervals(&self) -> &DomIntervals {
        &self.intervals
    }
}

/// Entry and exit numbers of a depth-first walk of the dominator tree from `entry`, by
/// block index; `None` for blocks the entry does not reach.
fn tree_order(
    tree: &Tree<NodeIndex>,
    nodes: &[NodeIndex],
    entry: usize,
) -> Vec<Option<(u32, u32)>> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (b, &n) in nodes.iter().enumerate() {
        if let Some(d) = tree.immediate_dominator(n) {
            children[d.index()].push(b);
        }
    }
    let mut order = vec![None; nodes.len()];
    let mut clock = 0u32;
    let mut entered = vec![0u32; nodes.len()];
    // (block, whether its children were pushed)
    let mut stack = vec![(entry, false)];
    while let Some((b, expanded)) = stack.pop() {
        if expanded {
            order[b] = Some((entered[b], clock));
            clock += 1;
            continue;
        }
        entered[b] = clock;
        clock += 1;
        stack.push((b, true));
        for &c in children[b].iter().rev() {
            stack.push((c, false));
        }
    }
    order
}
