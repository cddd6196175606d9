//! The read-modify-writes of a whole function body (`sum0 = sum0 + i` in a helper): the
//! in-loop recognizer run over a region standing for one call of the function, so that a
//! callee's update is held to exactly the rules an update written in the loop is.

use super::{memory_updates_in, MemoryUpdate, Order};
use frontend::ir::{Function, Program};
use frontend::loops::{Loop, LoopForest, Normalizable};

/// The updates of `func`'s body: a load and a store of equivalent addresses, the stored
/// value a version of the loaded one under one operator, nothing else computed from it
/// (not returned, passed on or tested but by a min/max choice). `forest` is `func`'s.
pub fn function_updates(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
) -> Vec<MemoryUpdate> {
    // One "iteration" is one call: every block, entered at the function's entry, which has
    // no phis (so nothing is carried into it).
    let body = Loop {
        header: func.entry,
        latches: Vec::new(),
        blocks: func.blocks().collect(),
        exits: Vec::new(),
        parent: None,
        children: Vec::new(),
        depth: 0,
        source: None,
        induction_variables: Vec::new(),
        exit_test: None,
        header_test: None,
        normalizable: Normalizable::Yes,
    };
    let users = func.users();
    let order = Order::new(program, func);
    memory_updates_in(program, func, forest, &body, &users, &order)
}
