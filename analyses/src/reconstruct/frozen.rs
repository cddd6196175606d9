//! Elements of a local array written once before they are read: code_saturne's
//! `cs_lnum_t db_size[2] = {b_size[0], b_size[0]*b_size[0]};` read as `db_size[1]` in the
//! loops below it. A load of such an element reads the stored value, so the reconstruction
//! gives it that value's expressions instead of a symbol of its own, and the loops' addresses
//! `ii*db_size[1] + jj*db_size[0] + kk` become `ii*B*B + jj*B + kk` (`B = b_size[0]`), whose
//! rows the dependence tests can tell apart.
//!
//! Sound only where nothing else can write the element between the store and the load:
//! - the slot's address never leaves the function's own constant-offset loads and stores
//!   (no call but the initializer's `memset`, no store of the address, no phi, no variable
//!   index), so no other code reaches it;
//! - of the writes that overlap the loaded bytes, exactly one writes those very bytes with
//!   the load's type, and it comes before the load on every path, in the same iteration of
//!   every loop around it;
//! - every other overlapping write (the initializer's `memset`) runs once, outside all
//!   loops, before that store.
//!
//! An element that only an initializer's `memset(.., 0, ..)` wrote reads as zero.

use frontend::ir::{Block, Callee, Constant, Function, InstKind, Program, Slot, Value};
use frontend::loops::LoopForest;
use std::collections::HashMap;

/// What a load of a frozen element reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Frozen {
    /// The value the one store stored.
    Stored(Value),
    /// Zero bytes, from an initializer's `memset`.
    Zero,
}

/// A byte range of a slot written or read, by the instruction doing it.
#[derive(Clone, Copy, Debug)]
struct Access {
    inst: Value,
    offset: i128,
    size: i128,
}

impl Access {
    /// The first byte past the access (offsets come from constants, so no overflow is
    /// assumed away: the end saturates).
    fn end(&self) -> i128 {
        self.offset.saturating_add(self.size)
    }
}

/// The writes and reads of one slot, or `None` once its address escapes.
#[derive(Debug, Default)]
struct SlotUse {
    stores: Vec<Access>,
    zeroings: Vec<Access>,
    loads: Vec<Access>,
}

/// The loads of `func` that read a frozen element, with what they read; `order` is the
/// function's blocks in reverse postorder (the reconstruction's own).
pub(super) fn frozen_loads(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    order: &[Block],
) -> HashMap<Value, Frozen> {
    if func.slots.is_empty() {
        return HashMap::new();
    }
    let Some(uses) = slot_uses(program, func, order) else {
        return HashMap::new();
    };
    let position = positions(func);
    // Whether `a` runs before `b` on every path to `b`.
    let before = |a: Value, b: Value| {
        let (ba, bb) = (func.inst(a).block, func.inst(b).block);
        if ba == bb {
            position[a.index()] < position[b.index()]
        } else {
            forest.dominates(ba, bb)
        }
    };
    // Whether every loop around `block` holds `other`: each iteration that runs `block`
    // reaches `other` in the same iteration.
    let loops_hold = |block: Block, other: Block| {
        forest
            .innermost(block)
            .is_none_or(|l| forest.loop_(l).contains(other))
    };
    let outside_loops = |v: Value| forest.innermost(func.inst(v).block).is_none();
    let overlaps = |a: &Access, b: &Access| a.offset < b.end() && b.offset < a.end();
    let mut out = HashMap::new();
    for mut slot in uses.into_values().flatten() {
        // Stores by offset, so that each load looks only at those that may overlap it
        // (an initializer of thousands of elements, read thousands of times, stays
        // linear): those starting within the widest store's size before its end.
        slot.stores.sort_by_key(|s| s.offset);
        let widest = slot.stores.iter().map(|s| s.size).max().unwrap_or(0);
        for load in &slot.loads {
            // Integers only: they are what indices and bounds are made of. A pointer read
            // back keeps its own name (`cmpString.sequence`), which a report reads better
            // than the call that stored it.
            let ty = func.inst(load.inst).ty;
            if !program.types.is_integer(ty) {
                continue;
            }
            let from = slot
                .stores
                .partition_point(|s| s.offset <= load.offset.saturating_sub(widest));
            let to = slot.stores.partition_point(|s| s.offset < load.end());
            let writes: Vec<&Access> = slot.stores[from..to.max(from)]
                .iter()
                .filter(|s| overlaps(s, load))
                .collect();
            let zeroings: Vec<&Access> =
                slot.zeroings.iter().filter(|z| overlaps(z, load)).collect();
            let frozen = match writes.as_slice() {
                [store]
                    if store.offset == load.offset
                        && store.size == load.size
                        && func.inst(store.inst).ty == ty
                        && before(store.inst, load.inst)
                        && loops_hold(func.inst(store.inst).block, func.inst(load.inst).block)
                        && zeroings
                            .iter()
                            .all(|z| outside_loops(z.inst) && before(z.inst, store.inst)) =>
                {
                    let InstKind::Store { value, .. } = func.inst(store.inst).kind else {
                        continue;
                    };
                    Frozen::Stored(value)
                }
                [] if zeroings
                    .iter()
                    .any(|z| z.offset <= load.offset && load.end() <= z.end())
                    && zeroings
                        .iter()
                        .all(|z| outside_loops(z.inst) && before(z.inst, load.inst)) =>
                {
                    Frozen::Zero
                }
                _ => continue,
            };
            out.insert(load.inst, frozen);
        }
    }
    out
}

/// Each instruction's position in its block.
fn positions(func: &Function) -> Vec<usize> {
    let mut position = vec![0; func.insts.len()];
    for b in func.blocks() {
        for (k, v) in func.block(b).insts.iter().enumerate() {
            position[v.index()] = k;
        }
    }
    position
}

/// The accesses of every slot whose address stays within constant-offset loads and stores
/// (`None` for a slot whose address escapes), or `None` when no address into a slot is
/// made. Only blocks the entry reaches count: the others never run.
fn slot_uses(
    program: &Program,
    func: &Function,
    order: &[Block],
) -> Option<HashMap<Slot, Option<SlotUse>>> {
    // Addresses into a slot at a constant byte offset, made in dominance order: an
    // address's base is defined before it in reverse postorder.
    let mut address: HashMap<Value, (Slot, i128)> = HashMap::new();
    let mut uses: HashMap<Slot, Option<SlotUse>> = HashMap::new();
    for &b in order {
        for &v in &func.block(b).insts {
            let derived = match &func.inst(v).kind {
                InstKind::SlotAddr(slot) => Some((*slot, 0)),
                InstKind::PtrAdd { base, index, scale } => {
                    address.get(base).and_then(|&(slot, offset)| {
                        let index = constant(func, *index)?;
                        let step = index.checked_mul(i128::from(*scale))?;
                        Some((slot, offset.checked_add(step)?))
                    })
                }
                InstKind::FieldAddr { base, offset, .. } => address
                    .get(base)
                    .and_then(|&(slot, at)| Some((slot, at.checked_add(i128::from(*offset))?))),
                InstKind::Cast(base) => address.get(base).copied(),
                _ => None,
            };
            if let Some((slot, offset)) = derived {
                address.insert(v, (slot, offset));
                uses.entry(slot).or_insert_with(|| Some(SlotUse::default()));
            }
        }
    }
    if address.is_empty() {
        return None;
    }
    let size = |v: Value| program.types.size_of(func.inst(v).ty).map(i128::from);
    let escape = |uses: &mut HashMap<Slot, Option<SlotUse>>, slot: Slot| {
        uses.insert(slot, None);
    };
    // A load or store of `slot` at `offset` by `v`: an access of the bytes its type takes,
    // or, for a type of no known size, an escape.
    let record = |uses: &mut HashMap<Slot, Option<SlotUse>>,
                  slot: Slot,
                  v: Value,
                  offset: i128,
                  is_store: bool| {
        let Some(size) = size(v) else {
            uses.insert(slot, None);
            return;
        };
        if let Some(Some(u)) = uses.get_mut(&slot) {
            let access = Access {
                inst: v,
                offset,
                size,
            };
            if is_store {
                u.stores.push(access);
            } else {
                u.loads.push(access);
            }
        }
    };
    for &b in order {
        for &v in &func.block(b).insts {
            let kind = &func.inst(v).kind;
            match kind {
                InstKind::Load { addr } => {
                    if let Some(&(slot, offset)) = address.get(addr) {
                        record(&mut uses, slot, v, offset, false);
                    }
                    continue;
                }
                InstKind::Store { addr, value } => {
                    if let Some(&(slot, _)) = address.get(value) {
                        escape(&mut uses, slot);
                    }
                    if let Some(&(slot, offset)) = address.get(addr) {
                        record(&mut uses, slot, v, offset, true);
                    }
                    continue;
                }
                InstKind::Call {
                    callee: Callee::Direct(name),
                    args,
                } if name == "memset" && args.len() == 3 => {
                    let zeroing = match (address.get(&args[0]), constant(func, args[1])) {
                        (Some(&(slot, offset)), Some(0)) => {
                            constant(func, args[2]).map(|size| (slot, offset, size))
                        }
                        _ => None,
                    };
                    if let Some((slot, offset, size)) = zeroing {
                        if let Some(Some(u)) = uses.get_mut(&slot) {
                            u.zeroings.push(Access {
                                inst: v,
                                offset,
                                size,
                            });
                        }
                        for a in &args[1..] {
                            if let Some(&(slot, _)) = address.get(a) {
                                escape(&mut uses, slot);
                            }
                        }
                        continue;
                    }
                }
                // Address arithmetic already followed above; one with a variable index
                // reaches bytes no constant offset names.
                InstKind::PtrAdd { base, .. }
                | InstKind::FieldAddr { base, .. }
                | InstKind::Cast(base)
                    if address.contains_key(&v) && address.contains_key(base) =>
                {
                    continue;
                }
                _ => {}
            }
            for op in kind.operands() {
                if let Some(&(slot, _)) = address.get(&op) {
                    escape(&mut uses, slot);
                }
            }
        }
        for op in func.terminator_uses(b) {
            if let Some(&(slot, _)) = address.get(&op) {
                escape(&mut uses, slot);
            }
        }
    }
    Some(uses)
}

/// The integer a constant (or a cast of one) holds.
fn constant(func: &Function, v: Value) -> Option<i128> {
    match func.inst(v).kind {
        InstKind::Const(Constant::Int(c)) => Some(c),
        InstKind::Cast(inner) => match func.inst(inner).kind {
            InstKind::Const(Constant::Int(c)) => Some(c),
            _ => None,
        },
        _ => None,
    }
}
