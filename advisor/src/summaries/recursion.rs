//! Summaries of self-recursive functions: the accesses of every depth of the recursion,
//! described through the parameters each recursive call passes on unchanged.
//!
//! A call of `f` at depth 0 makes `f`'s direct accesses (its own and its non-recursive
//! callees', built with the recursive calls left out) with the caller's arguments. A call at
//! depth `k >= 1` makes the same direct accesses with other parameter values, but a
//! parameter that every recursive call passes on as it received it (the same SSA value, the
//! parameter never reassigned nor spilled) keeps the caller's value at every depth, by
//! induction on the depth. So the union over all depths is covered by the direct accesses
//! (depth 0) plus one more copy of them in which everything over a parameter that changes is
//! unknown: reads through such a pointer are reads of an object the caller does not name,
//! offsets over such a value are unknown offsets, and every copy may be skipped. A write
//! through a pointer the recursion changes cannot be placed: the summary stays unknown,
//! as does mutual recursion (several functions in one component), which has no such
//! parameter correspondence.
//!
//! This is what a k-d tree search needs (`search(node->left, query, k, out)` writes `out[0,
//! k)` at every depth) and what the thesis' §8.7 expansion, which stops at recursion, lacks.

use super::{Base, Effect, Summary};
use frontend::ir::{Callee, Function, InstKind};
use std::collections::HashSet;
use symbolic::Var;

/// The summary of `func` (which calls itself and no other function of its component) from
/// `direct`, its summary with the recursive calls left out; `None` when the recursive calls'
/// accesses cannot be described (see the module comment).
pub fn self_recursive(
    func: &Function,
    is_self: impl Fn(&str) -> bool,
    direct: &Summary,
) -> Option<Summary> {
    if !direct.unknown.is_empty() {
        return None;
    }
    let invariant = passed_unchanged(func, is_self);
    // What the recursion may change: the other parameters, and the range variables whose
    // bounds mention them (ranges list earlier variables before later ones).
    let mut changing: HashSet<Var> = direct
        .params
        .iter()
        .zip(&invariant)
        .filter(|(_, same)| !**same)
        .filter_map(|(p, _)| p.clone())
        .collect();
    for r in &direct.ranges {
        if r.lo
            .vars()
            .iter()
            .chain(r.hi.vars().iter())
            .any(|v| changing.contains(v))
        {
            changing.insert(r.var.clone());
        }
    }
    // A pointer read through a parameter may be rewritten between depths when the function
    // writes the parameter's object.
    let written: HashSet<u32> = direct
        .effects
        .iter()
        .filter(|e| e.is_store)
        .filter_map(|e| match e.base {
            Base::Param(i) => Some(i),
            _ => None,
        })
        .collect();
    let same_param = |i: u32| invariant.get(i as usize).copied().unwrap_or(false);
    let name_of = |i: u32| {
        func.params
            .get(i as usize)
            .and_then(|p| p.name.clone())
            .unwrap_or_else(|| format!("parameter {}", i + 1))
    };
    let mut deeper = Vec::new();
    for e in &direct.effects {
        let moved = |why: String| -> Option<Base> { (!e.is_store).then_some(Base::Opaque(why)) };
        let base = match &e.base {
            Base::Param(i) if same_param(*i) => e.base.clone(),
            Base::Param(i) => moved(format!(
                "{} in a recursive call of {}",
                name_of(*i),
                func.name
            ))?,
            Base::Deref { param, at, .. }
                if same_param(*param)
                    && !written.contains(param)
                    && at.vars().iter().all(|v| !changing.contains(v)) =>
            {
                e.base.clone()
            }
            Base::Deref { name, .. } => {
                moved(format!("{name} in a recursive call of {}", func.name))?
            }
            Base::Global { .. } | Base::Opaque(_) => e.base.clone(),
        };
        let offset = match &e.offset {
            Ok(_) if base != e.base => {
                Err(format!("an object `{}`'s recursion reaches", func.name))
            }
            Ok(o) => match o.vars().into_iter().find(|v| changing.contains(v)) {
                // The variable first: callers name the unknown offset after the first
                // quoted name.
                Some(v) => Err(format!(
                    "`{}` changes in the recursive calls of `{}`",
                    v.name().split('@').next().unwrap_or(v.name()),
                    func.name
                )),
                None => Ok(o.clone()),
            },
            Err(why) => Err(why.clone()),
        };
        let mut through = vec![func.name.clone()];
        through.extend(e.through.iter().cloned());
        deeper.push(Effect {
            base,
            offset,
            // A recursive call is made on some paths only, and at an unknown depth.
            conditional: true,
            must: false,
            covered: false,
            through,
            ..e.clone()
        });
    }
    let mut summary = direct.clone();
    summary.effects.extend(deeper);
    summary.recursive.push(func.name.clone());
    Some(summary)
}

/// Per parameter: whether every call of the function to itself passes it on unchanged.
fn passed_unchanged(func: &Function, is_self: impl Fn(&str) -> bool) -> Vec<bool> {
    let mut same: Vec<bool> = func.params.iter().map(|p| p.slot.is_none()).collect();
    for v in func.values() {
        let InstKind::Call { callee, args } = &func.inst(v).kind else {
            continue;
        };
        // A call through a pointer may be a call of the function itself (`fp = walk;
        // fp(next)`): its arguments are not checked, so nothing counts as passed on.
        let to_self = match callee {
            Callee::Direct(name) => is_self(name),
            Callee::Indirect(_) => true,
        };
        if !to_self {
            continue;
        }
        for (k, p) in func.params.iter().enumerate() {
            if args.get(k) != Some(&p.value) {
                same[k] = false;
            }
        }
    }
    same
}
