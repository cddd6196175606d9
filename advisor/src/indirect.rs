//! Calls through function pointers whose targets the program shows: the callee's own
//! `FuncAddr` (`(*f)(x)` with `f = g`), or a function-pointer parameter that every call of
//! the function in the analysed files passes a named function (phono3py's
//! `get_integration_weight(omega, v, _g, _I)`). Then the call is a call of each target, for
//! summaries, host-only checks and the functions a port compiles for the device.
//!
//! A function's summary is shared by all its calls, so the targets are the union over its
//! direct calls. Sound because a summary is only ever instantiated at a direct call or at
//! a resolved one: a function whose address some code takes (`hook = each`) may be called
//! through a pointer with any argument, so its parameters resolve to nothing; a call through
//! a pointer read from memory (a table of functions) resolves to nothing either.

use crate::program::{FuncRef, ProgramView};
use frontend::ir::{Callee, Function, InstKind, Value};
use std::collections::BTreeSet;

/// The value with its casts removed.
fn uncast(func: &Function, mut v: Value) -> Value {
    for _ in 0..16 {
        match func.inst(v).kind {
            InstKind::Cast(inner) => v = inner,
            _ => break,
        }
    }
    v
}

/// The functions the call through `pointer` in `f` may reach, by name as `f`'s unit spells
/// them; `None` when they are not all known.
pub fn targets(view: &ProgramView, f: FuncRef, pointer: Value) -> Option<Vec<String>> {
    let func = view.function(f);
    let v = uncast(func, pointer);
    match &func.inst(v).kind {
        InstKind::FuncAddr(name) => Some(vec![name.clone()]),
        InstKind::Param(k) => {
            let k = *k as usize;
            let p = func.params.get(k)?;
            let index = view.call_index();
            if p.slot.is_some() || p.value != v || index.address_taken.contains(&f) {
                return None;
            }
            let mut out = BTreeSet::new();
            for (g, args) in index.callers.get(&f)? {
                let caller = view.function(*g);
                let arg = uncast(caller, *args.get(k)?);
                let InstKind::FuncAddr(target) = &caller.inst(arg).kind else {
                    return None;
                };
                // The name must mean the same function where `f` calls it.
                let here = view.resolve(g.unit, target)?;
                if view.resolve(f.unit, target) != Some(here) {
                    return None;
                }
                out.insert(target.clone());
            }
            (!out.is_empty()).then(|| out.into_iter().collect())
        }
        // `_cs_glob_dot(n, x, y)`: a file-scope function pointer the unit sets itself.
        InstKind::Load { addr } => match func.inst(uncast(func, *addr)).kind {
            InstKind::GlobalAddr(g) => global_targets(view, f.unit, g),
            _ => None,
        },
        _ => None,
    }
}

/// The functions a `static` function-pointer global may hold: every value its unit stores
/// into it (and its initializer) is a named function, and its address goes nowhere else.
/// `None` otherwise (an extern global, whose other units may store anything; an address
/// passed to a call).
fn global_targets(
    view: &ProgramView,
    unit: usize,
    g: frontend::ir::GlobalId,
) -> Option<Vec<String>> {
    let program = &view.unit(unit).lowered.program;
    let global = program.global(g);
    if !global.is_static || global.local_to.is_some() {
        return None;
    }
    let mut out = BTreeSet::new();
    let functions = program
        .functions
        .iter()
        .chain(global.init.as_deref())
        .chain(program.globals.iter().filter_map(|o| o.init.as_deref()));
    for func in functions {
        let users = func.users();
        for v in func.values() {
            if func.inst(v).kind != InstKind::GlobalAddr(g) {
                continue;
            }
            // Each use: a load of the pointer, or a store of a named function into it.
            let mut uses = users[v.index()].clone();
            while let Some(u) = uses.pop() {
                match &func.inst(u).kind {
                    InstKind::Cast(_) => uses.extend(users[u.index()].iter().copied()),
                    InstKind::Load { .. } => {}
                    InstKind::Store { addr, value } if uncast(func, *addr) == v => {
                        match &func.inst(uncast(func, *value)).kind {
                            InstKind::FuncAddr(name) => {
                                out.insert(name.clone());
                            }
                            InstKind::Const(frontend::ir::Constant::Int(0)) => {}
                            _ => return None,
                        }
                    }
                    _ => return None,
                }
            }
        }
    }
    (!out.is_empty()).then(|| out.into_iter().collect())
}

/// Names called directly by a function.
pub fn direct_callees(func: &Function) -> BTreeSet<String> {
    func.insts
        .iter()
        .filter_map(|i| match &i.kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The names `f` calls: directly, and through pointers whose targets are known.
pub fn resolved_callees(view: &ProgramView, f: FuncRef) -> BTreeSet<String> {
    let func = view.function(f);
    let mut out = direct_callees(func);
    for inst in &func.insts {
        if let InstKind::Call {
            callee: Callee::Indirect(pointer),
            ..
        } = &inst.kind
        {
            out.extend(targets(view, f, *pointer).into_iter().flatten());
        }
    }
    out
}
