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
        _ => None,
    }
}

/// The names `f` calls: directly, and through pointers whose targets are known.
pub fn resolved_callees(view: &ProgramView, f: FuncRef) -> BTreeSet<String> {
    let func = view.function(f);
    let mut out = crate::calls::direct_callees(func);
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
