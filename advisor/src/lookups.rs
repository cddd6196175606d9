//! Lookup functions: program functions whose returned pointer is one the program already
//! keeps in memory (`return _fields[id];`, `return f->val;`), never an offset computed from
//! another pointer or a pointer the caller passed in. Their results are memory the caller
//! received, as a pointer it loads itself would be.

use crate::program::{FuncRef, ProgramView};
use frontend::ir::{Callee, Function, InstKind, Slot, Terminator, Value};
use std::collections::HashMap;

impl ProgramView<'_> {
    /// The program's lookup functions (see [`program_lookups`]), found once. Defined here
    /// rather than in `program` because the view, which keeps the answer, is written below
    /// the analysis that finds it.
    pub fn lookups(&self) -> &HashMap<FuncRef, ()> {
        self.lookups_found_by(|| program_lookups(self))
    }
}

/// The program's lookup functions, found by iterating to a fixpoint (a lookup that returns
/// what another lookup returned counts).
pub fn program_lookups(view: &ProgramView) -> HashMap<FuncRef, ()> {
    view.pointer_function_fixpoint(|f, found| {
        let func = view.function(f);
        let lookup = |name: &str| {
            view.resolve(f.unit, name)
                .is_some_and(|g| g != f && found.contains_key(&g))
        };
        let mut returns_any = false;
        let all = func.blocks().all(|b| match func.block(b).terminator {
            Terminator::Return(Some(r)) => {
                returns_any = true;
                returns_stored_pointer(func, r, &lookup)
            }
            _ => true,
        });
        (returns_any && all).then_some(())
    })
}

/// Whether every value `v` may have is null or a pointer loaded from memory the function
/// received (through casts and phis), or what a lookup returned.
fn returns_stored_pointer(func: &Function, v: Value, lookup: &dyn Fn(&str) -> bool) -> bool {
    crate::merged::leaves(func, v).is_some_and(|leaves| {
        leaves.into_iter().all(|x| match &func.inst(x).kind {
            InstKind::Load { addr } => reaches_received(func, *addr, lookup, &|_| false),
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => lookup(name),
            _ => crate::merged::is_null(func, x),
        })
    })
}

/// Whether an address lies in memory the function was given: reached from a parameter, a
/// global, a lookup's result or the copy of a struct passed by value (`param_copy`)
/// through offsets, fields and loaded pointers.
pub fn reaches_received(
    func: &Function,
    mut addr: Value,
    lookup: &dyn Fn(&str) -> bool,
    param_copy: &dyn Fn(Slot) -> bool,
) -> bool {
    for _ in 0..64 {
        match &func.inst(addr).kind {
            InstKind::Param(_) | InstKind::GlobalAddr(_) => return true,
            InstKind::SlotAddr(slot) => return param_copy(*slot),
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => return lookup(name),
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => addr = *base,
            InstKind::Cast(v) | InstKind::Load { addr: v } => addr = *v,
            _ => return false,
        }
    }
    false
}

/// Lookups by the names a unit's calls use.
#[derive(Debug)]
pub struct LookupNames<'a> {
    view: &'a ProgramView<'a>,
    unit: usize,
    cache: std::cell::RefCell<HashMap<String, bool>>,
}

impl<'a> LookupNames<'a> {
    pub fn new(view: &'a ProgramView<'a>, unit: usize) -> Self {
        LookupNames {
            view,
            unit,
            cache: Default::default(),
        }
    }

    /// Whether a call to `name` from the unit returns a stored pointer.
    pub fn is_lookup(&self, name: &str) -> bool {
        if let Some(known) = self.cache.borrow().get(name) {
            return *known;
        }
        let found = self
            .view
            .resolve(self.unit, name)
            .is_some_and(|f| self.view.lookups().contains_key(&f));
        self.cache.borrow_mut().insert(name.to_string(), found);
        found
    }
}
