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
        Dominators { tree, nodes }
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
        self.tree
            .dominators(self.nodes[b.index()])
            .is_some_and(|mut it| it.any(|d| d.index() == a.index()))
    }
}
