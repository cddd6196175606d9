//! Globals and statics in a loop: memory objects like any array (a device copy of the
//! section the loop touches), except the few a GPU cannot hold: a `volatile` variable may
//! change outside the program (a device copy cannot follow it), and a `_Thread_local` one
//! exists once per host thread (a kernel writing it has no thread to write it for).

use crate::access::MemAccess;
use crate::model::Storage;
use analyses::reconstruct::Reconstruction;
use analyses::symbols::SymbolOrigin;
use frontend::ir::{Function, GlobalId, InstKind, Program, Span};
use symbolic::Var;

/// The global a base symbol stands for.
pub fn global_of(func: &Function, rec: &Reconstruction, base: &Var) -> Option<GlobalId> {
    match rec.symbols.info(base).map(|s| &s.origin) {
        Some(SymbolOrigin::Object(v)) => match func.inst(*v).kind {
            InstKind::GlobalAddr(g) => Some(g),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `global` is defined with a `const`-qualified type that holds no pointer
/// (`const double cs_math_epzero = 1e-12;`, `static const int w[3]`): no store of a correct
/// program modifies it (C99 6.7.3p5), whatever pointer it goes through. The specifiers'
/// `const` of `const double *p` is the pointee's, not `p`'s, so pointers do not count.
pub fn unmodifiable(program: &Program, global: &frontend::ir::Global) -> bool {
    let types = &program.types;
    let mut ty = global.ty;
    while let Some(elem) = types.array_elem(ty) {
        ty = elem;
    }
    global.is_const && !global.is_volatile && !types.is_pointer(ty)
}

/// `Some(Storage::Global)` when `base` is a global or static variable.
pub fn storage(func: &Function, rec: &Reconstruction, base: &Var) -> Option<Storage> {
    global_of(func, rec, base).map(|_| Storage::Global)
}

/// Why a GPU cannot perform `access` (a WW104 finding), with where it is.
pub fn unsupported(
    program: &Program,
    func: &Function,
    rec: &Reconstruction,
    access: &MemAccess,
) -> Option<(String, Span)> {
    let g = global_of(func, rec, access.base()?)?;
    let global = program.global(g);
    let what = if global.local_to.is_some() {
        "static variable"
    } else {
        "global variable"
    };
    if global.is_volatile {
        let verb = if access.is_store { "writes" } else { "reads" };
        return Some((
            format!(
                "{verb} the volatile {what} `{}`: it may change outside the program, which a device copy cannot follow",
                global.name
            ),
            access.span,
        ));
    }
    if global.is_thread_local && access.is_store {
        return Some((
            format!(
                "writes the thread-local {what} `{}`: each host thread has its own, a kernel has none to write",
                global.name
            ),
            access.span,
        ));
    }
    None
}
