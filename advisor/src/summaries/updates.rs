//! The globals a function touches only to update them as one reduction (`sum0 = sum0 + i`,
//! `best = MIN(best, x)`), itself or through the functions it calls, all with one
//! operator: a loop calling it reduces the global through the call exactly as if the
//! update were written in the loop (`callsites` hands the call's load and store of the
//! global to the loop's reduction tests).

use super::{Base, Effect, Summary};
use crate::reductions::{function_updates, Op};
use frontend::ir::{Function, GlobalId, InstKind, Program, Value};
use frontend::loops::LoopForest;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A global variable the function only updates as a reduction with `op`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalUpdate {
    pub name: String,
    /// The unit of a `static` one (as in [`Base::Global`]).
    pub unit: Option<usize>,
    pub op: Op,
}

/// The globals of `effects` (the function's finished summary) that `func` only updates as
/// a reduction. `unit` is the function's; `callee` gives the summary of a function it
/// calls (by name), `None` for one that is not in the program.
pub fn global_updates(
    program: &Program,
    unit: usize,
    func: &Function,
    forest: &LoopForest,
    effects: &[Effect],
    callee: &dyn Fn(&str) -> Option<std::sync::Arc<Summary>>,
) -> Vec<GlobalUpdate> {
    // Per global: every effect on it, which must all be at its start (a scalar).
    let mut touched: BTreeMap<(String, Option<usize>), Vec<&Effect>> = BTreeMap::new();
    for e in effects {
        if let Base::Global { name, unit } = &e.base {
            touched.entry((name.clone(), *unit)).or_default().push(e);
        }
    }
    if touched.is_empty() {
        return Vec::new();
    }
    let own = own_updates(program, unit, func, forest);
    let mut out = Vec::new();
    for ((name, global_unit), list) in touched {
        let at_start = list
            .iter()
            .all(|e| matches!(&e.offset, Ok(o) if o.as_integer().is_some_and(|k| k == 0.into())));
        if !at_start || !list.iter().any(|e| e.is_store) {
            continue;
        }
        let key = (name.clone(), global_unit);
        // Each access is the function's own update or a callee's whole update.
        let mut ops: HashSet<Op> = HashSet::new();
        let mut ok = true;
        for e in &list {
            let op = match e.through.first() {
                None => own.get(&key).copied().flatten(),
                Some(f) => callee(f).and_then(|s| {
                    s.updates
                        .iter()
                        .find(|u| u.name == name && u.unit == global_unit)
                        .map(|u| u.op)
                }),
            };
            match op {
                Some(op) => {
                    ops.insert(op);
                }
                None => ok = false,
            }
        }
        if let (true, [op]) = (ok, ops.into_iter().collect::<Vec<_>>().as_slice()) {
            out.push(GlobalUpdate {
                name,
                unit: global_unit,
                op: *op,
            });
        }
    }
    out
}

/// Per global the function itself loads or stores: `Some(op)` when every load and store of
/// it is part of a reduction update with `op`, and its address is used for nothing else;
/// `None` otherwise.
fn own_updates(
    program: &Program,
    unit: usize,
    func: &Function,
    forest: &LoopForest,
) -> HashMap<(String, Option<usize>), Option<Op>> {
    let key = |g: GlobalId| {
        let global = program.global(g);
        (
            global.name.clone(),
            (global.is_static || global.local_to.is_some()).then_some(unit),
        )
    };
    let users = func.users();
    let mut out: HashMap<(String, Option<usize>), Option<Op>> = HashMap::new();
    // The loads and stores of each global, straight at its address: any other use of the
    // address (an offset, a cast, an argument, a stored pointer) is not an update's.
    let mut accesses: HashMap<(String, Option<usize>), Vec<Value>> = HashMap::new();
    for v in func.values() {
        let InstKind::GlobalAddr(g) = func.inst(v).kind else {
            continue;
        };
        let k = key(g);
        let mut plain = true;
        for &u in &users[v.index()] {
            match func.inst(u).kind {
                InstKind::Load { addr } if addr == v => {
                    accesses.entry(k.clone()).or_default().push(u)
                }
                InstKind::Store { addr, value } if addr == v && value != v => {
                    accesses.entry(k.clone()).or_default().push(u)
                }
                _ => plain = false,
            }
        }
        if !plain {
            out.insert(k, None);
        }
    }
    if accesses.is_empty() {
        return out;
    }
    let updates = function_updates(program, func, forest);
    for (k, list) in accesses {
        if out.contains_key(&k) {
            continue;
        }
        let mut ops: HashSet<Op> = HashSet::new();
        let covered = list.iter().all(|a| {
            updates
                .iter()
                .find(|u| u.load == *a || u.store == *a || u.twins.contains(a))
                .map(|u| ops.insert(u.op))
                .is_some()
        });
        let op = match ops.into_iter().collect::<Vec<_>>().as_slice() {
            [op] if covered && *op != Op::Assign => Some(*op),
            _ => None,
        };
        out.insert(k, op);
    }
    out
}
