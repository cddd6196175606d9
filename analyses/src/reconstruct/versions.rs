//! Which loads of a variable held in memory (a global, a local whose address is taken) read
//! one value. Loads from one address share a symbol ([`crate::symbols`]); a write that may
//! come between two loads of such a variable (`m = n; g(); ... n`, where `g` may store to
//! `n`) makes them two values, and giving them one symbol would name two values alike. The
//! versions are those of SSA over the variable's memory: a load reads the write or the merge
//! of paths nearest above it in the dominator tree, merges being the iterated dominance
//! frontier of the blocks that may write it.
//!
//! What may write a variable: a store into it; a call that may reach it (for a variable
//! whose address the function lets out, any call that may store outside its own locals;
//! for a global, any call but to the C library's functions that only write through their
//! arguments, and those too for an `extern` global the library may own, such as
//! `optind`); a store through a pointer for a variable whose address the function lets
//! out, unless C's effective-type rule says it cannot (a `double` stored through a pointer
//! never writes an `int *` variable; not in a unit built with `-fno-strict-aliasing`). A
//! store through a pointer is taken not to write a global whose address the function does
//! not take: the aliasing policy's assumption, the one the loop-invariance analysis makes
//! of distinct objects.

use crate::library::{pure_library_function, writes_only_through_arguments};
use frontend::ir::dominators::Dominators;
use frontend::ir::{Block, Callee, Function, GlobalId, InstKind, Program, Slot, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A variable held in memory, as loads name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Object {
    Global(GlobalId),
    Slot(Slot),
}

/// Where the value a load reads was last possibly written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Version {
    /// As the function found it.
    Entry,
    /// By this instruction (a store or a call).
    Write(Value),
    /// By whichever write reaches this block's start (a merge of paths).
    Merge(Block),
}

/// For each load of a variable that reads another value than the variable had at the
/// function's entry, a text naming that value's version: loads with the same text read the
/// same value. Loads that read the entry value are left out. Then the loads of each variable
/// that a store through a pointer skips only by C's effective-type rule.
pub(super) fn load_versions(
    program: &Program,
    func: &Function,
) -> (HashMap<Value, String>, HashSet<Value>) {
    let root = |mut v: Value| {
        for _ in 0..64 {
            match &func.inst(v).kind {
                InstKind::GlobalAddr(g) => return Some(Object::Global(*g)),
                InstKind::SlotAddr(s) => return Some(Object::Slot(*s)),
                InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => v = *base,
                InstKind::Cast(a) => v = *a,
                _ => return None,
            }
        }
        None
    };
    let direct = |v: Value| match func.inst(v).kind {
        InstKind::GlobalAddr(g) => Some(Object::Global(g)),
        InstKind::SlotAddr(s) => Some(Object::Slot(s)),
        _ => None,
    };
    let mut loads: BTreeMap<Object, Vec<Value>> = BTreeMap::new();
    for v in func.values() {
        if let InstKind::Load { addr } = func.inst(v).kind {
            if let Some(o) = direct(addr) {
                loads.entry(o).or_default().push(v);
            }
        }
    }
    if loads.is_empty() {
        return (HashMap::new(), HashSet::new());
    }
    // Objects whose address the function lets out: used otherwise than as the address of
    // a load or store, the base of an address computation, or an argument of a call that
    // does not keep it (`crate::capture`). Those calls may write the object; nothing else
    // but its own stores can.
    let mut escaped: HashSet<Object> = HashSet::new();
    let mut passed: HashMap<Object, HashSet<Value>> = HashMap::new();
    let mut captures = crate::capture::Captures::new(program);
    let mut let_out = |o: Value| {
        if let Some(x) = root(o) {
            escaped.insert(x);
        }
    };
    for v in func.values() {
        match &func.inst(v).kind {
            InstKind::Load { .. }
            | InstKind::PtrAdd { .. }
            | InstKind::FieldAddr { .. }
            | InstKind::Cast(_) => {}
            InstKind::Store { value, .. } => let_out(*value),
            InstKind::Call { callee, args } => {
                if let Callee::Indirect(c) = callee {
                    let_out(*c);
                }
                for (k, &a) in args.iter().enumerate() {
                    match root(a) {
                        Some(x) if !captures.call_may_keep(callee, k) => {
                            passed.entry(x).or_default().insert(v);
                        }
                        _ => let_out(a),
                    }
                }
            }
            kind => kind.operands().into_iter().for_each(&mut let_out),
        }
    }
    for b in func.blocks() {
        func.terminator_uses(b).into_iter().for_each(&mut let_out);
    }
    // Calls to functions that store nothing outside their own locals, nor call anything
    // that may: they write no variable of the caller, let out or not (a search the loop
    // calls between two loads of a pointer an unknown function filled).
    let mut silent_by_name: HashMap<&str, bool> = HashMap::new();
    let mut silent: HashSet<Value> = HashSet::new();
    for v in func.values() {
        if let InstKind::Call {
            callee: callee @ Callee::Direct(name),
            ..
        } = &func.inst(v).kind
        {
            let quiet = *silent_by_name.entry(name.as_str()).or_insert_with(|| {
                !crate::regions::call_may_write(program, callee, 0, &mut Vec::new())
            });
            if quiet {
                silent.insert(v);
            }
        }
    }
    let by_call = crate::regions::CallGlobalWrites::new(program, func);
    let global_writes: std::cell::RefCell<HashMap<(Value, GlobalId), bool>> = Default::default();
    let object_type = |x: Object| match x {
        Object::Global(g) => program.global(g).ty,
        Object::Slot(s) => func.slot(s).ty,
    };
    // Whether a store of `value` through a pointer may write `x` by its type.
    let may_write = |x: Object, value: Value| {
        !program.strict_aliasing || program.types.may_alias(func.inst(value).ty, object_type(x))
    };
    // The writes of each loaded object, in instruction order per block.
    let writes = |x: Object, v: Value| -> bool {
        let exposed = escaped.contains(&x);
        match &func.inst(v).kind {
            InstKind::Store { addr, value } => match root(*addr) {
                Some(y) => y == x,
                None => exposed && may_write(x, *value),
            },
            InstKind::Call { callee, .. } => match callee {
                // A call that does not return leaves no load after it to read what it wrote
                // (`assert`'s failure path).
                Callee::Direct(name)
                    if pure_library_function(name).is_some() || program.noreturn.contains(name) =>
                {
                    false
                }
                _ if silent.contains(&v) => false,
                _ if exposed => true,
                _ if passed.get(&x).is_some_and(|calls| calls.contains(&v)) => true,
                Callee::Indirect(_) => matches!(x, Object::Global(_)),
                Callee::Direct(name) => match x {
                    // A function of the program writes a global when one of its stores
                    // (or its callees') may reach it: not when it writes only through
                    // arguments given the caller's locals (`cs_rotation_velocity(.., vr1)`
                    // between two loads of `cs_glob_rotation`).
                    Object::Global(g) if program.function(name).is_some() => *global_writes
                        .borrow_mut()
                        .entry((v, g))
                        .or_insert_with(|| by_call.may_write(v, g)),
                    Object::Global(g) => {
                        program.global(g).is_extern || !writes_only_through_arguments(name)
                    }
                    Object::Slot(_) => false,
                },
            },
            _ => false,
        }
    };
    let dominators = Dominators::of(func);
    let idom = dominators.immediate();
    let reachable = |b: Block| b == func.entry || idom[b.index()].is_some();
    let frontiers = dominance_frontiers(func, &idom);
    let mut out = HashMap::new();
    // A store through a pointer that only its type keeps from writing `x`.
    let skipped_by_type = |x: Object| {
        escaped.contains(&x)
            && func.values().any(|v| match &func.inst(v).kind {
                InstKind::Store { addr, value } => root(*addr).is_none() && !may_write(x, *value),
                _ => false,
            })
    };
    let mut by_type = HashSet::new();
    for (x, xs) in loads {
        if skipped_by_type(x) {
            by_type.extend(xs.iter().copied());
        }
        let written: Vec<Block> = func
            .blocks()
            .filter(|b| reachable(*b) && func.block(*b).insts.iter().any(|v| writes(x, *v)))
            .collect();
        if written.is_empty() {
            continue;
        }
        let merges = iterated_frontier(&frontiers, &written);
        let last_write = |b: Block| {
            func.block(b)
                .insts
                .iter()
                .rev()
                .find(|v| writes(x, **v))
                .copied()
        };
        // The version at a block's start, memoized along the dominator tree.
        let mut at_start: HashMap<Block, Version> = HashMap::new();
        for load in xs {
            let block = func.inst(load).block;
            if !reachable(block) {
                continue;
            }
            let before = func
                .block(block)
                .insts
                .iter()
                .take_while(|v| **v != load)
                .filter(|v| writes(x, **v))
                .last()
                .copied();
            let version = match before {
                Some(w) => Version::Write(w),
                None => {
                    // Up the dominator tree to the nearest merge or write.
                    let mut path = Vec::new();
                    let mut b = block;
                    let found = loop {
                        if let Some(v) = at_start.get(&b) {
                            break *v;
                        }
                        path.push(b);
                        if merges.contains(&b) {
                            break Version::Merge(b);
                        }
                        match idom[b.index()] {
                            Some(up) => match last_write(up) {
                                Some(w) => break Version::Write(w),
                                None => b = up,
                            },
                            None => break Version::Entry,
                        }
                    };
                    for p in path {
                        at_start.insert(p, found);
                    }
                    found
                }
            };
            match version {
                Version::Entry => {}
                Version::Write(w) => {
                    out.insert(load, format!("after {w}"));
                }
                Version::Merge(b) => {
                    out.insert(load, format!("at {b}"));
                }
            }
        }
    }
    (out, by_type)
}

/// Each reachable block's dominance frontier (Cooper, Harvey and Kennedy).
fn dominance_frontiers(func: &Function, idom: &[Option<Block>]) -> Vec<Vec<Block>> {
    let mut frontiers: Vec<Vec<Block>> = vec![Vec::new(); func.blocks.len()];
    for b in func.blocks() {
        let preds = &func.block(b).preds;
        if preds.len() < 2 {
            continue;
        }
        let Some(up) = idom[b.index()] else {
            continue;
        };
        for &p in preds {
            let mut runner = p;
            while runner != up {
                if frontiers[runner.index()].contains(&b) {
                    break;
                }
                frontiers[runner.index()].push(b);
                match idom[runner.index()] {
                    Some(next) => runner = next,
                    None => break,
                }
            }
        }
    }
    frontiers
}

/// The blocks where paths from `written` merge, transitively: where SSA would put a phi.
fn iterated_frontier(frontiers: &[Vec<Block>], written: &[Block]) -> HashSet<Block> {
    let mut merges = HashSet::new();
    let mut work: Vec<Block> = written.to_vec();
    while let Some(b) = work.pop() {
        for &f in &frontiers[b.index()] {
            if merges.insert(f) {
                work.push(f);
            }
        }
    }
    merges
}
