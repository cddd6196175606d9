//! Whether two SSA values of one iteration hold the same value: the same instruction, or the
//! same side-effect-free operation on equivalent operands, where two loads count only when
//! no store or call can run between them. `if (a[i] > m) m = a[i];` loads `a[i]` twice.

use frontend::ir::{Block, Callee, Function, InstKind, Program, Value};
use std::collections::HashMap;

/// Structural equality is bounded: deeper expressions are simply not proven equal.
const DEPTH: u32 = 10;

/// A math library function without side effects that the program does not define itself
/// (a program's own `max` may do anything).
pub(crate) fn pure_math(program: &Program, name: &str) -> bool {
    name != "strlen"
        && analyses::sign::pure_library_function(name).is_some()
        && program.function(name).is_none()
}

/// Where each instruction sits in its block and how many instructions that may write
/// memory come before it there: with them, "nothing writes between two loads" costs a
/// lookup per block instead of a scan of the block.
#[derive(Debug)]
pub(crate) struct Order {
    pos: Vec<usize>,
    writes_before: Vec<usize>,
    block_writes: Vec<usize>,
    /// The blocks whose terminator uses each value (a branch condition, a returned value).
    branch_users: std::collections::HashMap<Value, Vec<frontend::ir::Block>>,
}

impl Order {
    pub(crate) fn new(program: &Program, func: &Function) -> Order {
        let mut pos = vec![0; func.insts.len()];
        let mut writes_before = vec![0; func.insts.len()];
        let mut block_writes = vec![0; func.blocks.len()];
        for (b, data) in func.blocks.iter().enumerate() {
            let mut writes = 0;
            for (i, &v) in data.insts.iter().enumerate() {
                pos[v.index()] = i;
                writes_before[v.index()] = writes;
                if writes_memory(program, &func.inst(v).kind) {
                    writes += 1;
                }
            }
            block_writes[b] = writes;
        }
        let mut branch_users: std::collections::HashMap<Value, Vec<frontend::ir::Block>> =
            std::collections::HashMap::new();
        for b in func.blocks() {
            for v in func.terminator_uses(b) {
                branch_users.entry(v).or_default().push(b);
            }
        }
        Order {
            pos,
            writes_before,
            block_writes,
            branch_users,
        }
    }

    /// The blocks whose terminator uses `v`.
    pub(crate) fn branch_users(&self, v: Value) -> &[frontend::ir::Block] {
        self.branch_users.get(&v).map_or(&[], Vec::as_slice)
    }
}

/// A store, or a call that is not a pure math function.
fn writes_memory(program: &Program, kind: &InstKind) -> bool {
    match kind {
        InstKind::Store { .. } => true,
        InstKind::Call {
            callee: Callee::Direct(name),
            ..
        } => !pure_math(program, name),
        InstKind::Call { .. } => true,
        _ => false,
    }
}

/// A hash of `v`'s structure as [`equivalent`] compares it: equivalent values have equal
/// shapes (the converse need not hold), so grouping by shape first leaves `equivalent` only
/// the pairs that may pass, and a loop body of thousands of loads is not compared load by
/// load.
pub(crate) fn shape(program: &Program, func: &Function, v: Value) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    shape_into(program, func, v, DEPTH, &mut h);
    h.finish()
}

fn shape_into<H: std::hash::Hasher>(
    program: &Program,
    func: &Function,
    v: Value,
    depth: u32,
    h: &mut H,
) {
    use std::hash::Hash;
    let inst = func.inst(v);
    // At the depth limit, and for anything `equiv` only accepts when it is the same value
    // (parameters, phis, impure calls), the value itself is the shape.
    let by_identity = |h: &mut H| {
        0u8.hash(h);
        v.index().hash(h);
    };
    if depth == 0 {
        return by_identity(h);
    }
    inst.ty.hash(h);
    let sub = |x: Value, h: &mut H| shape_into(program, func, x, depth - 1, h);
    match &inst.kind {
        InstKind::Const(c) => {
            // Integers by value; other constants only by kind (`0.0 == -0.0` while their
            // bits differ).
            1u8.hash(h);
            match c {
                frontend::ir::Constant::Int(i) => i.hash(h),
                other => std::mem::discriminant(other).hash(h),
            }
        }
        InstKind::SlotAddr(p) => {
            2u8.hash(h);
            p.0.hash(h);
        }
        InstKind::GlobalAddr(p) => {
            3u8.hash(h);
            p.0.hash(h);
        }
        InstKind::Cast(p) => {
            4u8.hash(h);
            sub(*p, h);
        }
        InstKind::Unary(o, p) => {
            5u8.hash(h);
            format!("{o:?}").hash(h);
            sub(*p, h);
        }
        InstKind::Binary(o, p, q) => {
            6u8.hash(h);
            format!("{o:?}").hash(h);
            sub(*p, h);
            sub(*q, h);
        }
        InstKind::PtrAdd { base, index, scale } => {
            7u8.hash(h);
            scale.hash(h);
            sub(*base, h);
            sub(*index, h);
        }
        InstKind::FieldAddr {
            base,
            field,
            offset,
        } => {
            8u8.hash(h);
            offset.hash(h);
            field.hash(h);
            sub(*base, h);
        }
        InstKind::Load { addr } => {
            9u8.hash(h);
            sub(*addr, h);
        }
        InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } if pure_math(program, name) => {
            10u8.hash(h);
            name.hash(h);
            args.len().hash(h);
            for a in args {
                sub(*a, h);
            }
        }
        _ => by_identity(h),
    }
}

/// Whether `a` and `b` are equal whenever both are computed in one iteration.
pub(crate) fn equivalent(
    program: &Program,
    func: &Function,
    order: &Order,
    a: Value,
    b: Value,
) -> bool {
    equiv(program, func, order, a, b, DEPTH)
}

fn equiv(
    program: &Program,
    func: &Function,
    order: &Order,
    a: Value,
    b: Value,
    depth: u32,
) -> bool {
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
    let same = |p: Value, q: Value| equiv(program, func, order, p, q, depth - 1);
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
                && (nothing_writes_between(func, order, a, b)
                    || nothing_writes_between(func, order, b, a))
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

/// Where the walk of [`nothing_writes_between`] back from `v` meets its first write: the
/// block and the number of writes before that point in it, or the top of the chain of
/// single-predecessor blocks with no write (count 0). Two loads with nothing written
/// between them have the same epoch, unless the walk from one of them runs out of steps
/// first (`None`).
fn write_epoch(func: &Function, order: &Order, v: Value) -> Option<(Block, usize)> {
    let mut block = func.inst(v).block;
    let mut writes = order.writes_before[v.index()];
    for _ in 0..16 {
        if writes > 0 {
            return Some((block, writes));
        }
        let [pred] = func.block(block).preds.as_slice() else {
            return Some((block, 0));
        };
        block = *pred;
        writes = order.block_writes[block.index()];
    }
    None
}

/// The loads of one shape by write epoch: the candidates to be a load's twin.
pub(crate) struct Epochs {
    by_epoch: HashMap<(Block, usize), Vec<usize>>,
    unknown: Vec<usize>,
    len: usize,
}

impl Epochs {
    pub(crate) fn new(func: &Function, order: &Order, group: &[Value]) -> Epochs {
        let mut by_epoch: HashMap<(Block, usize), Vec<usize>> = HashMap::new();
        let mut unknown = Vec::new();
        for (k, &v) in group.iter().enumerate() {
            match write_epoch(func, order, v) {
                Some(e) => by_epoch.entry(e).or_default().push(k),
                None => unknown.push(k),
            }
        }
        Epochs {
            by_epoch,
            unknown,
            len: group.len(),
        }
    }

    /// The positions in the group of the loads that may be equivalent to `v` (`v` among
    /// them), in the group's order: those of its epoch and those of unknown epoch, or
    /// all of them when its own epoch is unknown.
    pub(crate) fn candidates(&self, func: &Function, order: &Order, v: Value) -> Vec<usize> {
        let Some(epoch) = write_epoch(func, order, v) else {
            return (0..self.len).collect();
        };
        let mut out: Vec<usize> = self
            .by_epoch
            .get(&epoch)
            .into_iter()
            .flatten()
            .chain(&self.unknown)
            .copied()
            .collect();
        out.sort_unstable();
        out
    }
}

/// Whether walking back from `later` (through single-predecessor blocks only, so every path
/// to `later` passes the same instructions) reaches `earlier` without passing a store or a
/// call that may write memory.
fn nothing_writes_between(func: &Function, order: &Order, earlier: Value, later: Value) -> bool {
    let mut block = func.inst(later).block;
    // The end of the stretch walked back over, and the writes before it in its block.
    let mut end = order.pos[later.index()];
    let mut writes = order.writes_before[later.index()];
    for _ in 0..16 {
        if func.inst(earlier).block == block && order.pos[earlier.index()] < end {
            return order.writes_before[earlier.index()] == writes;
        }
        if writes > 0 {
            return false;
        }
        let [pred] = func.block(block).preds.as_slice() else {
            return false;
        };
        block = *pred;
        end = func.block(block).insts.len();
        writes = order.block_writes[block.index()];
    }
    false
}
