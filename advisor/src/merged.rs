//! The values a merged pointer may hold: through casts, phis and selects, down to the values
//! that are none of those (a parameter, a load, a call, a null constant). The aliasing rules
//! classify these leaves (new memory, received memory, a parameter).

use frontend::ir::{Function, InstKind, Value};
use std::collections::HashSet;

/// At most this many values are followed; a longer chain counts as unknown.
const LIMIT: usize = 64;

/// The leaves `v` may be, each once, in the order found; `None` past [`LIMIT`] values.
pub fn leaves(func: &Function, v: Value) -> Option<Vec<Value>> {
    walk(func, v, false, LIMIT)
}

/// [`leaves`] also through pointer arithmetic and field addresses, which keep the object a
/// pointer points into: the objects `v` may point into; `None` past `limit` values.
pub fn object_leaves(func: &Function, v: Value, limit: usize) -> Option<Vec<Value>> {
    walk(func, v, true, limit)
}

fn walk(func: &Function, v: Value, through_addresses: bool, limit: usize) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if seen.len() > limit {
            return None;
        }
        match &func.inst(x).kind {
            InstKind::Cast(inner) => stack.push(*inner),
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. }
                if through_addresses =>
            {
                stack.push(*base)
            }
            InstKind::Phi(args) => stack.extend(args.iter().map(|(_, a)| *a)),
            InstKind::Select {
                then_value,
                else_value,
                ..
            } => stack.extend([*then_value, *else_value]),
            _ => out.push(x),
        }
    }
    Some(out)
}

/// Whether `v` is the null pointer constant (`0`, `(void *)0` after casts).
pub fn is_null(func: &Function, v: Value) -> bool {
    matches!(
        func.inst(v).kind,
        InstKind::Const(frontend::ir::Constant::Int(0))
    )
}
