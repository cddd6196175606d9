//! May two pointer parameters of a function point into the same object? Answered from the
//! function's call sites in the program: at every call, the arguments must be provably
//! different objects (different `malloc` results, locals or globals) for the parameters to
//! be treated as disjoint. A function nobody calls in the unit gets no such proof.

use analyses::symbols::SymbolOrigin;
use frontend::ir::{Callee, Function, InstKind, Program};
use std::collections::{BTreeSet, HashMap};

/// Pairs of parameter indices that never alias, with the evidence.
#[derive(Clone, Debug, Default)]
pub struct ParamAliasing {
    disjoint: BTreeSet<(usize, usize)>,
    /// Number of call sites examined.
    pub call_sites: usize,
    /// `restrict`-qualified parameters: disjoint from everything by the programmer's promise.
    restrict: BTreeSet<usize>,
    /// Pairs that some call site passes as two pointers into one object whose offsets may
    /// differ (`shift(buf + 1, buf, n)`): a partial overlap is known to happen.
    partially_overlapping: BTreeSet<(usize, usize)>,
    /// Pairs that some call site passes into one object, at the same or different offsets
    /// (`axpy(x, x, n)` as well as `shift(buf + 1, buf, n)`).
    shared: BTreeSet<(usize, usize)>,
}

impl ParamAliasing {
    pub fn disjoint(&self, a: usize, b: usize) -> bool {
        a != b
            && (self.restrict.contains(&a)
                || self.restrict.contains(&b)
                || self.disjoint.contains(&(a.min(b), a.max(b))))
    }

    /// Whether a call site passes parameters `a` and `b` into the same object at offsets
    /// that may differ.
    pub fn partially_overlapping(&self, a: usize, b: usize) -> bool {
        self.partially_overlapping.contains(&(a.min(b), a.max(b)))
    }

    /// Whether a call site passes parameters `a` and `b` into the same object.
    pub fn shares_object(&self, a: usize, b: usize) -> bool {
        self.shared.contains(&(a.min(b), a.max(b)))
    }
}

/// What object an argument expression points into, when that can be told.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Object {
    /// The result of one allocation call (by caller value).
    Allocation(String, u32),
    /// A local array or a global (by caller value).
    Named(String, u32),
}

/// How the parameters of `func` relate over its calls in `program`, given as `call_sites`
/// (the caller's index in `program` and the call's arguments, in program order), with each
/// caller's reconstruction from `caller_rec`: a caller of many analysed functions is
/// reconstructed once, not once per callee, and the call sites come from an index built
/// once per program instead of a scan of every instruction per analysed function.
/// `copied(caller, a, b)` tells whether the caller visibly copies one argument's pointer
/// into the other's (`f(u1, u2); u1 = u2;` in a loop, see `copies`): such a pair shares
/// an object for the aliasing policy, whatever the objects they started from.
pub fn param_aliasing_with(
    program: &Program,
    func: &Function,
    call_sites: &[(usize, &[frontend::ir::Value])],
    caller_rec: &dyn Fn(usize) -> std::sync::Arc<analyses::reconstruct::Reconstruction>,
    copied: &dyn Fn(usize, frontend::ir::Value, frontend::ir::Value) -> bool,
) -> ParamAliasing {
    let mut result = ParamAliasing::default();
    for (i, p) in func.params.iter().enumerate() {
        if let frontend::types::Type::Pointer { restrict: true, .. } = program.types.get(p.ty) {
            result.restrict.insert(i);
        }
    }
    let pointer_params: Vec<usize> = func
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| program.types.is_pointer(p.ty))
        .map(|(i, _)| i)
        .collect();
    let mut all_disjoint: Option<BTreeSet<(usize, usize)>> = None;
    for &(caller_index, args) in call_sites {
        let caller = &program.functions[caller_index];
        {
            result.call_sites += 1;
            let rec = &*caller_rec(caller_index);
            let objects: HashMap<usize, Option<Object>> = pointer_params
                .iter()
                .map(|&i| (i, args.get(i).and_then(|a| object_of(caller, rec, *a))))
                .collect();
            let mut here = BTreeSet::new();
            for (x, &a) in pointer_params.iter().enumerate() {
                for &b in &pointer_params[x + 1..] {
                    if let (Some(Some(oa)), Some(Some(ob))) = (objects.get(&a), objects.get(&b)) {
                        if oa != ob {
                            here.insert((a, b));
                        } else {
                            result.shared.insert((a, b));
                            if !same_pointer(rec, args.get(a), args.get(b)) {
                                result.partially_overlapping.insert((a, b));
                            }
                        }
                    } else if same_base(rec, args.get(a), args.get(b)) {
                        // One pointer the caller received, passed twice (`f(x, x + 1)`):
                        // at two offsets, a partial overlap is known to happen.
                        result.shared.insert((a, b));
                        if !same_pointer(rec, args.get(a), args.get(b)) {
                            result.partially_overlapping.insert((a, b));
                        }
                    } else if let (Some(x), Some(y)) = (args.get(a), args.get(b)) {
                        if copied(caller_index, *x, *y) {
                            result.shared.insert((a, b));
                        }
                    }
                }
            }
            all_disjoint = Some(match all_disjoint {
                None => here,
                Some(previous) => previous.intersection(&here).copied().collect(),
            });
        }
    }
    result.disjoint = all_disjoint.unwrap_or_default();
    result
}

/// Whether two arguments are provably the same pointer (one value, or one expression).
fn same_pointer(
    rec: &analyses::reconstruct::Reconstruction,
    a: Option<&frontend::ir::Value>,
    b: Option<&frontend::ir::Value>,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a == b => true,
        (Some(a), Some(b)) => matches!((rec.of(*a), rec.of(*b)), ([x], [y]) if x == y),
        _ => false,
    }
}

/// Whether two arguments are offsets from one base pointer, whatever that pointer is.
fn same_base(
    rec: &analyses::reconstruct::Reconstruction,
    a: Option<&frontend::ir::Value>,
    b: Option<&frontend::ir::Value>,
) -> bool {
    let base = |v: Option<&frontend::ir::Value>| match v.map(|v| rec.of(*v)) {
        Some([expr]) => crate::access::split_base(expr, &rec.symbols).0,
        _ => None,
    };
    match (base(a), base(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn object_of(
    caller: &Function,
    rec: &analyses::reconstruct::Reconstruction,
    arg: frontend::ir::Value,
) -> Option<Object> {
    let [expr] = rec.of(arg) else { return None };
    let (base, _) = crate::access::split_base(expr, &rec.symbols);
    let base = base?;
    let symbol = rec.symbols.info(&base)?;
    match &symbol.origin {
        SymbolOrigin::Object(v) => match caller.inst(*v).kind {
            InstKind::SlotAddr(slot) => Some(Object::Named(caller.name.clone(), slot.0)),
            InstKind::GlobalAddr(global) => Some(Object::Named(String::new(), global.0)),
            _ => None,
        },
        SymbolOrigin::Opaque(v) => match &caller.inst(*v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } if is_allocator(name) => Some(Object::Allocation(caller.name.clone(), v.0)),
            // `(T *)malloc(...)`: the cast keeps the allocation.
            InstKind::Cast(inner) => match &caller.inst(*inner).kind {
                InstKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } if is_allocator(name) => Some(Object::Allocation(caller.name.clone(), inner.0)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

fn is_allocator(name: &str) -> bool {
    matches!(
        name,
        "malloc"
            | "calloc"
            | "aligned_alloc"
            | "realloc"
            | "valloc"
            | "memalign"
            | "polybench_alloc_data"
    )
}
