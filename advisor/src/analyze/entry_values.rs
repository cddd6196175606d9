//! Which loads of a loop read the value their memory holds where the loop starts: two such
//! loads of one address are one value, which the report names once (`crate::present`).
//!
//! The analyses give every load its own symbol, so a global read at lines 84 and 397 of a
//! loop is two symbols, and a report that shows both must tell them apart
//! (`cs_glob_mesh_quantities@84`). When the loop cannot write what the two read (the
//! load is invariant, §8.6) and their addresses are computed alike from the same values,
//! both read what the memory holds at the loop's start: the same value, shown by its
//! plain name. The key below says "computed alike": equal keys mean equal addresses.

use super::FunctionContext;
use analyses::invariant::Invariants;
use frontend::ir::{InstKind, Value};
use frontend::loops::LoopId;

/// How deep an address expression is followed: deeper ones (rare: `a->b->c->d->...`)
/// keep their own symbols.
const MAX_DEPTH: u32 = 12;

impl FunctionContext<'_> {
    /// For the value `v`, a key equal for two loads of loop `id` exactly when both read,
    /// at the same address, memory the loop does not write; `None` for any other value.
    pub(super) fn entry_value_key(
        &self,
        id: LoopId,
        invariants: &Invariants,
        v: Value,
    ) -> Option<String> {
        let inside = self
            .forest
            .loop_(id)
            .blocks
            .contains(&self.func.inst(v).block);
        match self.func.inst(v).kind {
            InstKind::Load { addr } if inside && invariants.is_invariant(v) => self
                .address_key(id, invariants, addr, MAX_DEPTH)
                .map(|k| format!("*{:?}({k})", self.func.inst(v).ty)),
            _ => None,
        }
    }

    /// A key of the address computation `v`: values defined outside the loop by their SSA
    /// identity (as are merges, selects and calls inside it), loads the loop cannot change by their address's key, and arithmetic and
    /// address steps by their operands' keys.
    fn address_key(
        &self,
        id: LoopId,
        invariants: &Invariants,
        v: Value,
        depth: u32,
    ) -> Option<String> {
        let inst = self.func.inst(v);
        if !self.forest.loop_(id).blocks.contains(&inst.block) {
            return Some(format!("v{}", v.index()));
        }
        let depth = depth.checked_sub(1)?;
        let key = |x: Value| self.address_key(id, invariants, x, depth);
        Some(match &inst.kind {
            InstKind::Const(c) => format!("{c:?}:{:?}", inst.ty),
            InstKind::SlotAddr(s) => format!("slot{s:?}"),
            InstKind::GlobalAddr(g) => format!("global{g:?}"),
            InstKind::Load { addr } if invariants.is_invariant(v) => {
                format!("*{:?}({})", inst.ty, key(*addr)?)
            }
            InstKind::Binary(op, a, b) => {
                format!("({op:?} {} {}):{:?}", key(*a)?, key(*b)?, inst.ty)
            }
            InstKind::Unary(op, a) => format!("({op:?} {}):{:?}", key(*a)?, inst.ty),
            InstKind::Cast(a) => format!("(cast {}):{:?}", key(*a)?, inst.ty),
            InstKind::PtrAdd { base, index, scale } => {
                format!("(+ {} {}*{scale})", key(*base)?, key(*index)?)
            }
            InstKind::FieldAddr { base, offset, .. } => format!("(. {} {offset})", key(*base)?),
            // Merges, selects, calls and loads the loop may change: the value itself. Within
            // the address of a load the loop cannot change, such a value is the same in
            // every iteration (or the address would vary), so its identity is a key.
            _ => format!("v{}", v.index()),
        })
    }
}
