//! Recognizes a conditional counter (`if (test) { n++; out[n - 1] = i; }`, `out[k++] = v`
//! under a test): a scalar the loop advances by one constant, only in the iterations that
//! pass a test. No two iterations show its dependence without data that pass the test
//! twice, but what it is and how such a loop is ported are known: it is stream compaction.

use frontend::ir::{BinOp, Function, InstKind, Value};

/// The step of `phi` (a loop header's phi) when `update`, its value from the latch, is
/// either `phi` or `phi + step` on every path through the body, and `phi + step` on some
/// (through nested tests: phis of phis, at most `MAX_DEPTH` deep).
pub fn conditional_step(func: &Function, phi: Value, update: Value) -> Option<i128> {
    let mut step = None;
    let mut advanced = false;
    if !walk(func, phi, update, &mut step, &mut advanced, 0) {
        return None;
    }
    step.filter(|_| advanced)
}

const MAX_DEPTH: usize = 16;

fn walk(
    func: &Function,
    phi: Value,
    v: Value,
    step: &mut Option<i128>,
    advanced: &mut bool,
    depth: usize,
) -> bool {
    if v == phi {
        return true;
    }
    if depth > MAX_DEPTH {
        return false;
    }
    match &func.inst(strip_casts(func, v)).kind {
        InstKind::Phi(args) => args
            .iter()
            .all(|(_, a)| walk(func, phi, *a, step, advanced, depth + 1)),
        InstKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let (a, b) = (strip_casts(func, *a), strip_casts(func, *b));
            let c = match op {
                BinOp::Add if a == phi => func.const_int(b),
                BinOp::Add if b == phi => func.const_int(a),
                BinOp::Sub if a == phi => func.const_int(b).map(|c| -c),
                _ => None,
            };
            match (c, *step) {
                (Some(c), None) if c != 0 => {
                    *step = Some(c);
                    *advanced = true;
                    true
                }
                (Some(c), Some(s)) if c == s => {
                    *advanced = true;
                    true
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether the counter's values (`phi` and what is computed from it by casts and
/// additions or products with constants) index memory: a slot of an output, so the loop is
/// stream compaction, not only counting.
pub fn indexes_memory(func: &Function, phi: Value) -> bool {
    let users = func.users();
    let mut seen = vec![phi];
    let mut work = vec![phi];
    while let Some(v) = work.pop() {
        for &u in &users[v.index()] {
            match &func.inst(u).kind {
                InstKind::PtrAdd { index, .. } if *index == v => return true,
                InstKind::Cast(_)
                | InstKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, _, _)
                    if !seen.contains(&u) && seen.len() < 64 =>
                {
                    seen.push(u);
                    work.push(u);
                }
                _ => {}
            }
        }
    }
    false
}

fn strip_casts(func: &Function, mut v: Value) -> Value {
    for _ in 0..MAX_DEPTH {
        match func.inst(v).kind {
            InstKind::Cast(inner) => v = inner,
            _ => break,
        }
    }
    v
}
