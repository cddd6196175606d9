//! Loop-invariant analysis (thesis §8.6): which values of a loop are the same in every
//! iteration, so that loads such as `image->width` can be used as one symbolic constant.
//!
//! One global map {Uninitialized, Invariant, Variant} per value suffices in SSA form. Values
//! defined outside the loop and constants are invariant; an operation is invariant iff all
//! its operands are (the thesis' `&inv`); a phi inside the loop is variant unless all its
//! arguments other than itself are one invariant value. A load is invariant iff its
//! address is invariant and nothing in the loop may write that memory: no store that may
//! alias (decided on the base object of the two addresses, see [`AliasPolicy`], and on
//! constant offsets between addresses of one base), and no call that may write it. A call
//! can only write memory reachable from its pointer arguments and from globals: a local
//! whose address never escapes (a by-value struct parameter such as `in.lookups`) is out
//! of its reach, and so is the memory of a pointer parameter none of the arguments
//! derives from, under [`AliasPolicy::DistinctParameters`]. New memory the function
//! allocates and whose address never leaves it ([`FreshAllocations`], found by the caller
//! that sees the whole program) is distinct from every other object: a store into a
//! `malloc`ed scratch array does not make `grid->size[2]` variant.

use crate::reconstruct::Reconstruction;
use crate::regions::{call_may_write, call_may_write_global, Base, Region, Regions};
pub use crate::regions::{FreshAllocations, FreshBlock};
use crate::sign::pure_library_function;
use frontend::ir::{Callee, Function, InstKind, Program, Slot, Value};
use frontend::loops::{LoopForest, LoopId};
use std::collections::{BTreeSet, HashMap, HashSet};

/// How pointers that C allows to alias are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AliasPolicy {
    /// Any memory reached from a pointer parameter, a global or an unknown pointer may be
    /// any other such memory.
    Conservative,
    /// The thesis' assumption: memory reached from distinct pointer parameters (and through
    /// pointers loaded from them, such as `in->pixmap` and `out->pixmap`) and from globals
    /// is disjoint. Results that need it carry the assumption as text for the user.
    DistinctParameters,
}

/// The loop-invariance lattice of §8.6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inv {
    Uninitialized,
    Invariant,
    Variant,
}

impl Inv {
    /// The thesis' `&inv`.
    fn and(self, other: Inv) -> Inv {
        match (self, other) {
            (Inv::Uninitialized, _) | (_, Inv::Uninitialized) => Inv::Uninitialized,
            (Inv::Variant, _) | (_, Inv::Variant) => Inv::Variant,
            _ => Inv::Invariant,
        }
    }
}

/// The result for one loop.
#[derive(Clone, Debug)]
pub struct Invariants {
    pub loop_id: LoopId,
    /// The state of the values the loop computes; every other value of the function is
    /// invariant. Only the loop's own: a table of the whole function per loop made a
    /// thousand loops in a row quadratic in time and memory.
    state: HashMap<Value, Inv>,
    /// The function's number of values (a value past it is not the function's).
    values: usize,
    loads: Vec<Value>,
    /// Pointer parameters whose memory was assumed disjoint to prove some load invariant
    /// (only with [`AliasPolicy::DistinctParameters`]).
    pub assumed_distinct: BTreeSet<String>,
    /// What treating allocations as new memory assumed, where a proof relied on it (see
    /// [`FreshAllocations`]).
    pub fresh_caveats: BTreeSet<String>,
}

/// What keeping one load invariant assumed.
#[derive(Debug, Default)]
struct Needs {
    /// Pointer parameters taken to be disjoint.
    distinct: BTreeSet<String>,
    /// Caveats of the new memory relied on.
    fresh: BTreeSet<String>,
}

impl Invariants {
    /// Whether `value` has the same value in every iteration of the loop (values defined
    /// outside the loop are).
    pub fn is_invariant(&self, value: Value) -> bool {
        self.get(value) == Inv::Invariant
    }

    pub fn get(&self, value: Value) -> Inv {
        if value.index() >= self.values {
            return Inv::Uninitialized;
        }
        self.state.get(&value).copied().unwrap_or(Inv::Invariant)
    }

    /// Loads inside the loop that read the same value in every iteration.
    pub fn invariant_loads(&self) -> Vec<Value> {
        self.loads.clone()
    }

    /// The aliasing assumption the result depends on, for the report; `None` if none.
    pub fn assumption(&self) -> Option<String> {
        if self.assumed_distinct.is_empty() {
            return None;
        }
        let names: Vec<String> = self
            .assumed_distinct
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        Some(format!(
            "memory reached through {} does not overlap (distinct pointer parameters do not \
             alias)",
            names.join(", ")
        ))
    }
}

/// A [`FreshBlock`] with the blocks its escapes reach (a loop whose header is one of them
/// may meet the address through another pointer).
#[derive(Debug)]
struct FreshFacts {
    caveats: Vec<String>,
    after_escape: Vec<bool>,
}

fn escaped_slots(program: &Program, func: &Function, regions: &Regions) -> HashSet<Slot> {
    let mut out = HashSet::new();
    let mut captures = crate::capture::Captures::new(program);
    let local = |v: Value| match regions.of(v) {
        Region {
            base: Base::Local(s),
            depth: 0,
        } => Some(s),
        _ => None,
    };
    for v in func.values() {
        let escaping: Vec<Value> = match &func.inst(v).kind {
            InstKind::Store { value, .. } => vec![*value],
            // An argument the callee does not keep (a library function that uses it during
            // the call, such as the `memset` an initializer `int t[4] = {...}` is lowered
            // to, or a function of the program: `crate::capture`) reaches only that call,
            // which the loops it runs in count as writing the slot (`passed_to_a_call`).
            InstKind::Call { callee, args } => args
                .iter()
                .enumerate()
                .filter(|(k, _)| captures.call_may_keep(callee, *k))
                .map(|(_, a)| *a)
                .collect(),
            InstKind::Phi(args) => args.iter().map(|(_, a)| *a).collect(),
            InstKind::Cast(a) if !program.types.is_pointer(func.inst(v).ty) => vec![*a],
            _ => Vec::new(),
        };
        for e in escaping {
            if let Some(s) = local(e) {
                out.insert(s);
            }
        }
    }
    for b in func.blocks() {
        if let frontend::ir::Terminator::Return(Some(r)) = func.block(b).terminator {
            if let Some(s) = local(r) {
                out.insert(s);
            }
        }
    }
    out
}

/// Whether a call may write the memory of region `target`.
enum Reach {
    /// Only if memory reached from these distinct pointer parameters (or from globals)
    /// overlaps.
    Assuming(Vec<u32>),
    Yes,
}

/// Whether a call with arguments `args` (a one-element list holding the call itself for a
/// call through a pointer) may write `target`: it reaches what its pointer arguments
/// reach, and globals with whatever pointers they hold.
fn call_reaches(
    program: &Program,
    func: &Function,
    regions: &Regions,
    args: &[Value],
    target: &Region,
) -> Reach {
    let Base::Param(p) = target.base else {
        // Globals, escaped locals and unknown memory: any call may write them.
        return Reach::Yes;
    };
    let types = &program.types;
    let mut distinct = vec![p];
    for &a in args {
        let inst = func.inst(a);
        match inst.kind {
            InstKind::Call { .. } => return Reach::Yes,
            // A string literal is not writable; a function's address reaches code only.
            InstKind::StringAddr(_) | InstKind::FuncAddr(_) => continue,
            _ => {}
        }
        let ty = inst.ty;
        if !types.is_pointer(ty) {
            // A struct passed by value may carry pointers; scalars reach nothing.
            if holds_pointers(types, ty) {
                return Reach::Yes;
            }
            continue;
        }
        let r = regions.of(a);
        match r.base {
            Base::Param(q) if q == p => return Reach::Yes,
            Base::Param(q) => distinct.push(q),
            // A local holding no pointer leads nowhere else (wherever its address went).
            Base::Local(s) if r.depth == 0 => {
                if holds_pointers(types, func.slot(s).ty) {
                    return Reach::Yes;
                }
            }
            Base::Global(_) if r.depth == 0 => {}
            _ => return Reach::Yes,
        }
    }
    // The callee may also write globals and what they point to: distinct from parameters
    // under the same assumption.
    distinct.sort();
    distinct.dedup();
    Reach::Assuming(distinct)
}

/// Whether an object of type `ty` can hold a pointer.
fn holds_pointers(types: &frontend::types::TypeTable, ty: frontend::types::TypeId) -> bool {
    use frontend::types::Type;
    match types.get(ty) {
        Type::Pointer { .. } | Type::Function { .. } => true,
        Type::Array { elem, .. } => holds_pointers(types, *elem),
        Type::Record(r) => types
            .record(*r)
            .fields
            .iter()
            .any(|f| holds_pointers(types, f.ty)),
        _ => false,
    }
}

/// What the invariance of every loop of one function needs from the whole function: where
/// each address points, which slots escape, the reverse postorder. Computed once per
/// function, not per loop (per loop, a function of a thousand loops in a row spent its
/// time recomputing them).
#[derive(Debug)]
pub struct FunctionInvariance {
    regions: Regions,
    fresh: HashMap<Value, FreshFacts>,
    escaped: HashSet<Slot>,
    /// Each block's position in reverse postorder (`usize::MAX` when unreachable).
    rpo_position: Vec<usize>,
}

impl FunctionInvariance {
    /// The facts of `func` with no allocation taken for new memory.
    pub fn new(program: &Program, func: &Function) -> FunctionInvariance {
        FunctionInvariance::with_fresh(program, func, FreshAllocations::new())
    }

    /// The facts of `func`, whose allocation calls `fresh` return new memory that never
    /// leaves the function (the caller vouches for that: it needs the program's callees).
    pub fn with_fresh(
        program: &Program,
        func: &Function,
        fresh: FreshAllocations,
    ) -> FunctionInvariance {
        let regions = Regions::new(func, &fresh);
        let fresh = fresh
            .into_iter()
            .map(|(v, block)| {
                let facts = FreshFacts {
                    after_escape: reached_from(func, &block.escapes),
                    caveats: block.caveats,
                };
                (v, facts)
            })
            .collect();
        let escaped = escaped_slots(program, func, &regions);
        let mut rpo_position = vec![usize::MAX; func.blocks.len()];
        for (k, b) in crate::framework::reverse_postorder(func).iter().enumerate() {
            rpo_position[b.index()] = k;
        }
        FunctionInvariance {
            regions,
            fresh,
            escaped,
            rpo_position,
        }
    }
}

/// Computes the invariant values of loop `loop_id`.
pub fn loop_invariants(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    loop_id: LoopId,
    rec: &Reconstruction,
    policy: AliasPolicy,
) -> Invariants {
    let whole = FunctionInvariance::new(program, func);
    loop_invariants_in(&whole, program, func, forest, loop_id, rec, policy)
}

/// [`loop_invariants`] with the function-wide facts computed beforehand.
pub fn loop_invariants_in(
    whole: &FunctionInvariance,
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    loop_id: LoopId,
    rec: &Reconstruction,
    policy: AliasPolicy,
) -> Invariants {
    let l = forest.loop_(loop_id);
    let mut state: HashMap<Value, Inv> = l
        .blocks
        .iter()
        .flat_map(|b| func.block(*b).insts.iter())
        .map(|v| (*v, Inv::Uninitialized))
        .collect();

    // Memory effects of the loop.
    let mut stores = Vec::new();
    let mut writing_calls: Vec<(Option<&str>, Vec<Value>)> = Vec::new();
    // Every call's arguments, writing or not by its name (a library function told only to
    // read may still be handed a slot's address).
    let mut loop_calls: Vec<&[Value]> = Vec::new();
    for &b in &l.blocks {
        for &v in &func.block(b).insts {
            if let InstKind::Call { args, .. } = &func.inst(v).kind {
                loop_calls.push(args);
            }
            match &func.inst(v).kind {
                InstKind::Store { addr, .. } => stores.push((v, *addr)),
                InstKind::Call { callee, args }
                    if call_may_write(program, callee, 0, &mut Vec::new()) =>
                {
                    // A call through a pointer is kept as one that may write anything.
                    let reach = match callee {
                        Callee::Direct(name) => (Some(name.as_str()), args.clone()),
                        Callee::Indirect(_) => (None, vec![v]),
                    };
                    writing_calls.push(reach);
                }
                _ => {}
            }
        }
    }
    let regions = &whole.regions;
    let escaped = &whole.escaped;
    let mut assumed = BTreeSet::new();
    let mut fresh_caveats = BTreeSet::new();
    let param_name = |i: u32| {
        func.params
            .get(i as usize)
            .and_then(|p| p.name.clone())
            .unwrap_or_else(|| format!("arg{i}"))
    };

    // Whether a store in the loop may write what `load` reads; records the assumptions
    // that rule it out (DistinctParameters, new memory of a program allocator).
    let killed = |load: Value, addr: Value, assumed: &mut Needs| -> bool {
        let lr = regions.of(addr);
        if let Base::Local(s) = lr.base {
            if lr.depth == 0 && !escaped.contains(&s) {
                // No pointer to it exists outside the calls it is passed to (which do not
                // keep it), so only those calls and its own stores can write it.
                let passed_to_a_call = loop_calls.iter().any(|args| {
                    args.iter().any(|a| {
                        let r = regions.of(*a);
                        r.depth == 0 && r.base == Base::Local(s)
                    })
                });
                return passed_to_a_call
                    || stores.iter().any(|&(st, sa)| {
                        regions.of(sa) == lr
                            && !disjoint_offsets(program, func, rec, load, addr, st, sa)
                    });
            }
        }
        let mut needs = Vec::new();
        let mut caveats: Vec<&String> = Vec::new();
        for (name, args) in &writing_calls {
            if let (Base::Global(g), 0, Some(name)) = (&lr.base, lr.depth, name) {
                let target = &program.global(*g).name;
                if !call_may_write_global(program, regions, name, args, target, 0, &mut Vec::new())
                {
                    continue;
                }
            }
            match call_reaches(program, func, regions, args, &lr) {
                Reach::Assuming(names) if policy == AliasPolicy::DistinctParameters => {
                    needs.extend(names.into_iter().map(param_name));
                }
                _ => return true,
            }
        }
        for &(st, sa) in &stores {
            let sr = regions.of(sa);
            if sr == lr {
                if !disjoint_offsets(program, func, rec, load, addr, st, sa) {
                    return true;
                }
                continue;
            }
            // New memory no other pointer reaches here is distinct from everything else;
            // once its address got out, it is memory any pointer may reach.
            let fresh: Vec<Option<&FreshFacts>> = [&lr, &sr]
                .iter()
                .filter_map(|r| match r.base {
                    Base::Fresh(a) => Some(
                        whole
                            .fresh
                            .get(&a)
                            .filter(|f| !f.after_escape[l.header.index()]),
                    ),
                    _ => None,
                })
                .collect();
            if fresh.iter().any(Option::is_none) {
                return true;
            }
            if !fresh.is_empty() {
                caveats.extend(fresh.into_iter().flatten().flat_map(|f| &f.caveats));
                continue;
            }
            let distinct_objects = match (&lr.base, &sr.base) {
                (Base::Local(a), Base::Local(b)) if lr.depth == 0 && sr.depth == 0 => a != b,
                (Base::Global(a), Base::Global(b)) if lr.depth == 0 && sr.depth == 0 => a != b,
                (Base::Local(s), _) if lr.depth == 0 => !escaped.contains(s),
                (_, Base::Local(s)) if sr.depth == 0 => !escaped.contains(s),
                (Base::Local(_), Base::Global(_)) | (Base::Global(_), Base::Local(_)) => true,
                _ => false,
            };
            if distinct_objects {
                continue;
            }
            let assumable = !matches!(lr.base, Base::Unknown) && !matches!(sr.base, Base::Unknown);
            if policy == AliasPolicy::DistinctParameters && assumable {
                for r in [&lr, &sr] {
                    if let Base::Param(i) = r.base {
                        needs.push(param_name(i));
                    }
                }
                continue;
            }
            return true;
        }
        assumed.distinct.extend(needs);
        assumed.fresh.extend(caveats.into_iter().cloned());
        false
    };

    let mut blocks: Vec<frontend::ir::Block> = l
        .blocks
        .iter()
        .copied()
        .filter(|b| whole.rpo_position[b.index()] != usize::MAX)
        .collect();
    blocks.sort_by_key(|b| whole.rpo_position[b.index()]);
    let order: Vec<Value> = blocks
        .iter()
        .flat_map(|b| func.block(*b).insts.iter().copied())
        .collect();
    let mut load_assumptions: Vec<(Value, Needs)> = Vec::new();
    for _ in 0..order.len() + 2 {
        let mut changed = false;
        for &v in &order {
            let get = |w: Value| state.get(&w).copied().unwrap_or(Inv::Invariant);
            let new = match &func.inst(v).kind {
                InstKind::Const(_)
                | InstKind::SlotAddr(_)
                | InstKind::GlobalAddr(_)
                | InstKind::FuncAddr(_)
                | InstKind::StringAddr(_)
                | InstKind::Param(_) => Inv::Invariant,
                InstKind::Undef | InstKind::Store { .. } => Inv::Variant,
                InstKind::Phi(args) => {
                    let others: BTreeSet<Value> =
                        args.iter().map(|(_, a)| *a).filter(|a| *a != v).collect();
                    match others.iter().next() {
                        Some(&a) if others.len() == 1 => match get(a) {
                            Inv::Invariant => Inv::Invariant,
                            Inv::Uninitialized => Inv::Uninitialized,
                            Inv::Variant => Inv::Variant,
                        },
                        _ => Inv::Variant,
                    }
                }
                InstKind::Load { addr } => match get(*addr) {
                    Inv::Invariant => {
                        let mut needs = Needs::default();
                        if killed(v, *addr, &mut needs) {
                            Inv::Variant
                        } else {
                            let needed = !needs.distinct.is_empty() || !needs.fresh.is_empty();
                            if needed && !load_assumptions.iter().any(|(w, _)| *w == v) {
                                load_assumptions.push((v, needs));
                            }
                            Inv::Invariant
                        }
                    }
                    other => other,
                },
                InstKind::Call { callee, args } => {
                    let pure =
                        matches!(callee, Callee::Direct(n) if pure_library_function(n).is_some());
                    if pure {
                        args.iter().fold(Inv::Invariant, |acc, a| acc.and(get(*a)))
                    } else {
                        Inv::Variant
                    }
                }
                kind => kind
                    .operands()
                    .iter()
                    .fold(Inv::Invariant, |acc, a| acc.and(get(*a))),
            };
            if state.insert(v, new) != Some(new) {
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // What stays uninitialized sits on a cycle of phis with no invariant entry.
    for v in &order {
        if state[v] == Inv::Uninitialized {
            state.insert(*v, Inv::Variant);
        }
    }
    let loads: Vec<Value> = order
        .iter()
        .copied()
        .filter(|v| {
            matches!(func.inst(*v).kind, InstKind::Load { .. }) && state[v] == Inv::Invariant
        })
        .collect();
    for (v, needs) in load_assumptions {
        if state[&v] == Inv::Invariant {
            assumed.extend(needs.distinct);
            fresh_caveats.extend(needs.fresh);
        }
    }
    Invariants {
        loop_id,
        state,
        values: func.insts.len(),
        loads,
        assumed_distinct: assumed,
        fresh_caveats,
    }
}

/// The blocks some path from one of `from` reaches (`from` included), by block index.
fn reached_from(func: &Function, from: &[frontend::ir::Block]) -> Vec<bool> {
    let mut seen = vec![false; func.blocks.len()];
    let mut work: Vec<frontend::ir::Block> = from.to_vec();
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut seen[b.index()], true) {
            continue;
        }
        work.extend(func.block(b).terminator.successors());
    }
    seen
}

/// Whether the bytes `load` reads at `la` and `store` writes at `sa` cannot overlap because
/// the two addresses differ by a constant at least the size of the lower access.
fn disjoint_offsets(
    program: &Program,
    func: &Function,
    rec: &Reconstruction,
    load: Value,
    la: Value,
    store: Value,
    sa: Value,
) -> bool {
    let (Some(a), Some(b)) = (rec.single(la), rec.single(sa)) else {
        return false;
    };
    let Some(diff) = a.checked_sub(b).ok().and_then(|d| d.as_integer()) else {
        return false;
    };
    let size = |v: Value| program.types.size_of(func.inst(v).ty).unwrap_or(u64::MAX);
    let (load_size, store_size) = (size(load), size(store));
    // load at b + diff: disjoint if it starts after the store ends or ends before it starts.
    diff >= num_bigint::BigInt::from(store_size)
        || -diff.clone() >= num_bigint::BigInt::from(load_size)
}
