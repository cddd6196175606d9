//! Whether two SSA values of one iteration hold the same value: the same instruction, or the
//! same side-effect-free operation on equivalent operands, where two loads count only when
//! no store or call can run between them. `if (a[i] > m) m = a[i];` loads `a[i]` twice.

use frontend::ir::{Callee, Function, InstKind, Program, Value};

/// Structural equality is bounded: deeper expressions are simply not proven equal.
const DEPTH: u32 = 10;

/// A math library function without side effects that the program does not define itself
/// (a program's own `max` may do anything).
pub(crate) fn pure_math(program: &Program, name: &str) -> bool {
    name != "strlen"
        && analyses::sign::pure_library_function(name).is_some()
        && program.function(name).is_none()
}

/// Whether `a` and `b` are equal whenever both are computed in one iteration.
pub(crate) fn equivalent(program: &Program, func: &Function, a: Value, b: Value) -> bool {
    equiv(program, func, a, b, DEPTH)
}

fn equiv(program: &Program, func: &Function, a: Value, b: Value, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let (x, y) = (func.inst(a), func.inst(b));
    if x.ty != y.ty {
        return false;
    }
    let same = |p: Value, q: Value| equiv(program, func, p, q, depth - 1);
    match (&x.kind, &y.kind) {
        (InstKind::Const(p), InstKind::Const(q)) => p == q,
        // The same local or global object, addressed by two instructions.
        (InstKind::SlotAddr(p), InstKind::SlotAddr(q)) => p == q,
        (InstKind::GlobalAddr(p), InstKind::GlobalAddr(q)) => p == q,
        (InstKind::Cast(p), InstKind::Cast(q)) => same(*p, *q),
        (InstKind::Unary(o1, p), InstKind::Unary(o2, q)) => o1 == o2 && same(*p, *q),
        (InstKind::Binary(o1, p1, q1), InstKind::Binary(o2, p2, q2)) => {
            o1 == o2 && same(*p1, *p2) && same(*q1, *q2)
        }
        (
            InstKind::PtrAdd {
                base: b1,
                index: i1,
                scale: s1,
            },
            InstKind::PtrAdd {
                base: b2,
                index: i2,
                scale: s2,
            },
        ) => s1 == s2 && same(*b1, *b2) && same(*i1, *i2),
        (
            InstKind::FieldAddr {
                base: b1,
                field: f1,
                offset: o1,
            },
            InstKind::FieldAddr {
                base: b2,
                field: f2,
                offset: o2,
            },
        ) => o1 == o2 && f1 == f2 && same(*b1, *b2),
        (InstKind::Load { addr: p }, InstKind::Load { addr: q }) => {
            same(*p, *q)
                && (nothing_writes_between(program, func, a, b)
                    || nothing_writes_between(program, func, b, a))
        }
        (
            InstKind::Call {
                callee: Callee::Direct(n1),
                args: a1,
            },
            InstKind::Call {
                callee: Callee::Direct(n2),
                args: a2,
            },
        ) => {
            n1 == n2
                && pure_math(program, n1)
                && a1.len() == a2.len()
                && a1.iter().zip(a2).all(|(p, q)| same(*p, *q))
        }
        _ => false,
    }
}

/// Whether walking back from `later` (through single-predecessor blocks only, so every path
/// to `later` passes the same instructions) reaches `earlier` without passing a store or a
/// call that may write memory.
fn nothing_writes_between(
    program: &Program,
    func: &Function,
    earlier: Value,
    later: Value,
) -> bool {
    let mut block = func.inst(later).block;
    let insts = &func.block(block).insts;
    let Some(mut end) = insts.iter().position(|v| *v == later) else {
        return false;
    };
    for _ in 0..16 {
        for &v in func.block(block).insts[..end].iter().rev() {
            if v == earlier {
                return true;
            }
            match &func.inst(v).kind {
                InstKind::Store { .. } => return false,
                InstKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } if pure_math(program, name) => {}
                InstKind::Call { .. } => return false,
                _ => {}
            }
        }
        let [pred] = func.block(block).preds.as_slice() else {
            return false;
        };
        block = *pred;
        end = func.block(block).insts.len();
    }
    false
}
