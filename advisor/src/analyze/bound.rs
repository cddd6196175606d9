//! Whether a loop's bound gives the same value on every iteration: the loads and calls in
//! it (`y < image->height`, `i < nodeCount(graph)`) that the frontend leaves to memory
//! analysis (thesis §4.1, normalizable loops).
//!
//! A load is unchanged when its address is invariant and no store of the loop, its own or
//! its callees', can write what it reads: by C's effective-type rule, or because every
//! store goes through a pointer into another object. A call is unchanged when its
//! arguments are invariant and the function only reads memory (its summary has no store,
//! no host call, no allocation and nothing unknown), each read being unchanged in the same
//! sense; a library function of arithmetic arguments with a device version (`sqrt`) is a
//! function of its arguments alone.

use super::{distinct_assumption, Aliasing, FunctionContext, LoopFacts};
use crate::access::MemAccess;
use crate::assumption::Assumption;
use crate::calls::{classify_in, CallKind};
use crate::callsites::LoopEffects;
use crate::model::{Access, DependencePair};
use crate::rules;
use analyses::invariant::Invariants;
use analyses::symbols::SymbolOrigin;
use frontend::ir::print::render_value;
use frontend::ir::{Callee, InstKind, Value};
use frontend::loops::LoopId;
use frontend::types::TypeId;
use std::collections::HashSet;
use symbolic::Var;

/// A store of the loop (its own, or its callees'): the type it stores, and whether it is
/// the loop's own store through a member access (`p->m = v`, `a[i].m = v`), which by C's
/// rules writes a member of an object of a struct type.
#[derive(Clone, Copy, Debug)]
struct StoredType {
    ty: TypeId,
    member: bool,
}

/// What the stores of a loop may do to the memory a bound reads.
pub(super) enum BoundWrites {
    /// Nothing writes it, under the `assumed` statements (pointer pairs the aliasing policy
    /// assumes apart, data stores that leave a struct's fields alone, C's effective-type
    /// rule).
    None { assumed: Vec<String> },
    /// Only these stores could, if their pointers pointed into the object.
    IfDistinct { stores: Vec<UndecidedStore> },
    /// Something may.
    May,
}

/// A store that writes what a bound reads only if its pointer points into the same object.
pub(super) struct UndecidedStore {
    store: MemAccess,
    pointer: String,
    /// The object was born in the function and its address taken before the loop: the
    /// pointer, read from memory or returned by a call, may hold that address. Otherwise
    /// the two pointers are ones the default aliasing policy would assume apart.
    escaped: bool,
}

impl FunctionContext<'_> {
    /// Decides whether the bound's `reads` (loads and calls inside the loop) are unchanged
    /// by the loop: adds the assumptions that takes, a WW110 finding per pointer pair that
    /// a profile must show apart, or WW107 naming what may change.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bound_reads_unchanged(
        &self,
        id: LoopId,
        reads: &[Value],
        invariants: &Invariants,
        accesses: &[MemAccess],
        effects: &LoopEffects,
        keyword_line: u32,
        facts: &mut LoopFacts,
    ) {
        let mut variant: Vec<Value> = Vec::new();
        // Bounds that stay put unless two pointers overlap, which the aliasing policy does
        // not assume away: a profile settles it (WW110), no claim.
        let mut undecided: Vec<(Value, Vec<UndecidedStore>)> = Vec::new();
        let stored = self.stored_types(id, effects);
        // Reads shown unchanged, innermost first, so that a load through a pointer loaded
        // (or returned by a call) in the loop (`p->a[p->n]`, `getNode(g)->len`) can follow
        // its pointer.
        let mut cleared: HashSet<Value> = HashSet::new();
        let mut pending: Vec<Value> = reads
            .iter()
            .copied()
            .filter(|v| !invariants.is_invariant(*v))
            .collect();
        loop {
            let before = cleared.len();
            pending.retain(|&v| {
                let ok = if self.is_call(v) {
                    match self
                        .call_unchanged(id, v, invariants, &cleared, accesses, effects, &stored)
                    {
                        BoundWrites::None { assumed } => {
                            add_assumptions(facts, assumed);
                            true
                        }
                        _ => false,
                    }
                } else {
                    self.untouched_by_type(v, invariants, &cleared, &stored, facts)
                };
                if ok {
                    cleared.insert(v);
                }
                !ok
            });
            if cleared.len() == before {
                break;
            }
        }
        for v in pending {
            let writes = if self.is_call(v) {
                self.call_unchanged(id, v, invariants, &cleared, accesses, effects, &stored)
            } else {
                self.unwritten_in_loop(id, v, invariants, accesses, effects)
            };
            match writes {
                BoundWrites::None { assumed } => add_assumptions(facts, assumed),
                BoundWrites::IfDistinct { stores } => undecided.push((v, stores)),
                BoundWrites::May => variant.push(v),
            }
        }
        if variant.is_empty() {
            for (read, stores) in &undecided {
                let bound = render_value(self.func, *read);
                let at = Access {
                    line: keyword_line,
                    text: bound.clone(),
                };
                // One reason per pointer: its first store stands for the others.
                let mut seen = HashSet::new();
                for undecided in stores {
                    let pointer = &undecided.pointer;
                    if !seen.insert(pointer) {
                        continue;
                    }
                    let written = self.access_text(&undecided.store);
                    facts.add(rules::ww110_may_alias::bound(
                        &bound,
                        keyword_line,
                        &written,
                        pointer,
                        undecided.escaped,
                    ));
                    facts.needs_evidence.push(DependencePair {
                        kind: crate::model::PairKind::MayAlias,
                        array: format!("{bound} / {pointer}"),
                        first: at.clone(),
                        second: written,
                        distance: None,
                    });
                }
            }
        } else {
            variant.extend(undecided.iter().map(|(v, _)| *v));
        }
        if !variant.is_empty() {
            let names: Vec<String> = variant
                .iter()
                .map(|v| format!("`{}`", render_value(self.func, *v)))
                .collect();
            facts.add(rules::ww107_not_normalizable::bound_changes(
                &names,
                keyword_line,
            ));
        }
    }

    fn is_call(&self, v: Value) -> bool {
        matches!(self.func.inst(v).kind, InstKind::Call { .. })
    }

    /// The types of every store the loop may make, its own (private storage included) and
    /// its callees' (all summarized); `None` when some store is not known: a host-only or
    /// indirect call, an effect no summary expresses, or `memset`/`memcpy`, whose bytes may
    /// be of any type.
    fn stored_types(&self, id: LoopId, effects: &LoopEffects) -> Option<Vec<StoredType>> {
        if !effects.unknown.is_empty() {
            return None;
        }
        let view = self.summaries.view();
        let mut stored = Vec::new();
        for &block in &self.forest.loop_(id).blocks {
            for &v in &self.func.block(block).insts {
                let inst = self.func.inst(v);
                match &inst.kind {
                    InstKind::Store { addr, .. } => stored.push(StoredType {
                        ty: inst.ty,
                        member: matches!(
                            self.func
                                .inst(frontend::loops::strip_casts(self.func, *addr))
                                .kind,
                            InstKind::FieldAddr { .. }
                        ),
                    }),
                    InstKind::Call {
                        callee: Callee::Direct(name),
                        ..
                    } => {
                        let byte_copy = name.starts_with("__builtin_")
                            || ["memset", "memcpy", "memmove", "bzero"].contains(&name.as_str());
                        if byte_copy
                            || matches!(
                                classify_in(view, self.unit_index, name),
                                CallKind::HostOnly
                            )
                        {
                            return None;
                        }
                    }
                    InstKind::Call { .. } => return None,
                    _ => {}
                }
            }
        }
        stored.extend(
            effects
                .accesses
                .iter()
                .filter(|a| a.is_store)
                .map(|a| StoredType {
                    ty: a.ty,
                    member: false,
                }),
        );
        Some(stored)
    }

    /// Whether no store of the loop can modify a value of type `read` by C's effective-type
    /// rule (C99 6.5p7): `sine_map[x] = ...` stores a `float`, which never changes
    /// `wave_image->columns`, an `unsigned long`, whatever `sine_map` points to.
    /// Whether one of two accesses writes a struct's member through a member access of
    /// the loop's own (`p->m = v`) and the other reads or writes a variable of no struct
    /// type: by C's rules ([`Self::plain_variable_type`]) they never meet.
    pub(super) fn member_apart_from_variable(&self, a: &MemAccess, b: &MemAccess) -> bool {
        let member_store = |x: &MemAccess| {
            x.is_store
                && x.callee.is_none()
                && matches!(
                    self.func
                        .inst(frontend::loops::strip_casts(self.func, x.addr))
                        .kind,
                    InstKind::FieldAddr { .. }
                )
        };
        let variable =
            |x: &MemAccess| x.callee.is_none() && self.plain_variable_type(x.addr).is_some();
        (member_store(a) && variable(b)) || (member_store(b) && variable(a))
    }

    fn no_store_of_type(&self, stored: &Option<Vec<StoredType>>, read: TypeId) -> bool {
        stored.as_ref().is_some_and(|stored| {
            stored
                .iter()
                .all(|t| !crate::access::types_may_alias(self.unit, t.ty, read))
        })
    }

    /// The type of the variable `addr` is the address of (through casts), when that type
    /// holds no struct or union: a named scalar or an array of scalars, which no store to
    /// a struct's member can modify (C99 6.5.2.3, 6.5p7: `p->m` designates a member of an
    /// object of `p`'s struct type, and the variable is no such object).
    pub(super) fn plain_variable_type(&self, addr: Value) -> Option<TypeId> {
        let ty = match self
            .func
            .inst(frontend::loops::strip_casts(self.func, addr))
            .kind
        {
            InstKind::GlobalAddr(g) => self.unit.lowered.program.global(g).ty,
            InstKind::SlotAddr(slot) => self.func.slots.get(slot.0 as usize)?.ty,
            _ => return None,
        };
        let types = &self.unit.lowered.program.types;
        let mut t = ty;
        for _ in 0..16 {
            match types.get(t) {
                frontend::types::Type::Array { elem, .. } => t = *elem,
                frontend::types::Type::Record(_) => return None,
                _ => return Some(ty),
            }
        }
        None
    }

    /// Whether no store of the loop can modify a load of its bound by the effective-type
    /// rule; the address must be invariant. Stated as an assumption: a program built with
    /// `-fno-strict-aliasing` may break the rule.
    fn untouched_by_type(
        &self,
        load: Value,
        invariants: &Invariants,
        cleared: &HashSet<Value>,
        stored: &Option<Vec<StoredType>>,
        facts: &mut LoopFacts,
    ) -> bool {
        let InstKind::Load { addr } = self.func.inst(load).kind else {
            return false;
        };
        let loaded = self.func.inst(load).ty;
        if !self.invariant_given(addr, invariants, cleared, 16) {
            return false;
        }
        let types = &self.unit.lowered.program.types;
        if self.no_store_of_type(stored, loaded) {
            facts.assumptions.push(format!(
                "the program follows C's effective-type rule (C99 6.5p7): no store of the loop has a type that can modify `{}` (`{}`), so the bound does not change",
                render_value(self.func, load),
                types.display(loaded)
            ).into());
            return true;
        }
        // Stores of the bound's type only into structs' members, the bound a variable of
        // no struct type (code_saturne's `post_mesh->locate_ref -= 1` under `i <
        // _cs_post_n_meshes`).
        let Some(variable) = self.plain_variable_type(addr) else {
            return false;
        };
        let members_only = stored.as_ref().is_some_and(|stored| {
            stored
                .iter()
                .all(|t| t.member || !crate::access::types_may_alias(self.unit, t.ty, loaded))
        });
        if !members_only {
            return false;
        }
        facts.assumptions.push(format!(
            "the program follows C's effective-type rule (C99 6.5p7, 6.5.2.3): the loop's stores of a type that could modify `{}` (`{}`) all write members of structs, and it is a variable of no struct type, so the bound does not change",
            render_value(self.func, load),
            types.display(variable)
        ).into());
        true
    }

    /// Whether a load of the loop bound that the invariance analysis could not clear (it
    /// passes its pointer to calls, say) reads memory nothing in the loop writes: its address
    /// is invariant, every call's effects are summarized, and no store of the loop or of its
    /// callees goes through a pointer that may point into the same object (spglib's
    /// `mesh[0]`, read by the helpers the loop calls).
    fn unwritten_in_loop(
        &self,
        id: LoopId,
        load: Value,
        invariants: &Invariants,
        accesses: &[MemAccess],
        effects: &LoopEffects,
    ) -> BoundWrites {
        let InstKind::Load { addr } = self.func.inst(load).kind else {
            return BoundWrites::May;
        };
        if !invariants.is_invariant(addr) || !effects.unknown.is_empty() {
            return BoundWrites::May;
        }
        let [expr] = self.rec.of(addr) else {
            return BoundWrites::May;
        };
        let Some(base) = crate::access::split_base(expr, &self.rec.symbols).0 else {
            return BoundWrites::May;
        };
        self.unwritten_base(id, &base, self.func.inst(load).ty, accesses, effects)
    }

    /// Whether the stores of the loop (`accesses`, its callees' included) leave the object
    /// `base` points into alone, for a read of type `read`. Where only the aliasing policy
    /// keeps a store away, says so: [`BoundWrites::None`] with the pairs assumed distinct
    /// under [`Aliasing::Distinct`], [`BoundWrites::IfDistinct`] with the stores otherwise.
    fn unwritten_base(
        &self,
        id: LoopId,
        base: &Var,
        read: TypeId,
        accesses: &[MemAccess],
        effects: &LoopEffects,
    ) -> BoundWrites {
        if self.born_here(base) {
            return self.born_here_writes(id, base, accesses, effects);
        }
        // Memory the function was given: never the loop's private storage (locals and
        // globals), whose stores are no longer among `accesses`.
        if !self.is_received(base) {
            return BoundWrites::May;
        }
        let mut assumed = Vec::new();
        let mut stores = Vec::new();
        for store in accesses.iter().filter(|a| a.is_store) {
            let Some(other) = store.base() else {
                return BoundWrites::May;
            };
            if other == base {
                return BoundWrites::May;
            }
            if self.may_alias(base, other) {
                if self.assumed_distinct(base, other) {
                    assumed.push(distinct_assumption(&format!(
                        "`{}` and `{}`",
                        base.name(),
                        other.name()
                    )));
                } else if self.distinct_by_policy(base, other, Aliasing::Distinct) {
                    stores.push(UndecidedStore {
                        store: store.clone(),
                        pointer: other.name().to_string(),
                        escaped: false,
                    });
                } else if !crate::access::types_may_alias(self.unit, store.ty, read) {
                    // C's effective-type rule, as in the dependence test (a `double` store
                    // never changes an `int` field).
                } else if let Some(assumption) = self.fields_apart_from_data(base, other) {
                    // The bound is a field of a struct (`primitive->size`) and the store goes
                    // into a data array: the dependence test's assumption for the same pair.
                    assumed.push(assumption);
                } else {
                    return BoundWrites::May;
                }
            }
        }
        if !stores.is_empty() {
            return BoundWrites::IfDistinct { stores };
        }
        assumed.sort();
        assumed.dedup();
        BoundWrites::None { assumed }
    }

    /// Whether a call in the bound returns the same value on every iteration: its arguments
    /// are invariant, the function only reads memory, and no store of the loop changes what
    /// it reads (by type, or by the object it is in).
    #[allow(clippy::too_many_arguments)]
    fn call_unchanged(
        &self,
        id: LoopId,
        call: Value,
        invariants: &Invariants,
        cleared: &HashSet<Value>,
        accesses: &[MemAccess],
        effects: &LoopEffects,
        stored: &Option<Vec<StoredType>>,
    ) -> BoundWrites {
        let InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } = &self.func.inst(call).kind
        else {
            return BoundWrites::May;
        };
        if !effects.unknown.is_empty()
            || !args
                .iter()
                .all(|a| self.invariant_given(*a, invariants, cleared, 16))
            || !self.only_reads(name, args)
        {
            return BoundWrites::May;
        }
        let types = &self.unit.lowered.program.types;
        let mut assumed = Vec::new();
        let mut stores = Vec::new();
        for read in effects
            .accesses
            .iter()
            .filter(|a| a.inst == call && !a.is_store)
        {
            if self.no_store_of_type(stored, read.ty) {
                assumed.push(format!(
                    "the program follows C's effective-type rule (C99 6.5p7): no store of the loop has a type that can modify what `{}` reads (`{}`), so the bound does not change",
                    render_value(self.func, call),
                    types.display(read.ty)
                ));
                continue;
            }
            let Some(base) = read.base() else {
                return BoundWrites::May;
            };
            match self.unwritten_base(id, base, read.ty, accesses, effects) {
                BoundWrites::None { assumed: more } => assumed.extend(more),
                BoundWrites::IfDistinct { stores: more } => stores.extend(more),
                BoundWrites::May => return BoundWrites::May,
            }
        }
        if !stores.is_empty() {
            return BoundWrites::IfDistinct { stores };
        }
        assumed.sort();
        assumed.dedup();
        BoundWrites::None { assumed }
    }

    /// Whether `base` points into an object that came to exist in this function: a local
    /// variable (`MPI_Comm_size(comm, &num_procs)` takes its address), or memory an
    /// allocator returned here. No pointer the function was given can point into it.
    fn born_here(&self, base: &Var) -> bool {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Object(v)) => {
                matches!(self.func.inst(*v).kind, InstKind::SlotAddr(_))
            }
            Some(SymbolOrigin::Opaque(v)) => self.allocated_here(*v),
            _ => false,
        }
    }

    /// Where the address of the object `base` points into (born in the function, see
    /// [`Self::born_here`]) goes, when it gets out of the function's own values (stored,
    /// returned, converted to an integer, passed to a call that may keep it) on no path
    /// that reaches `header` ([`crate::escape`]); `None` when it may.
    fn address_kept_until(
        &self,
        base: &Var,
        header: frontend::ir::Block,
    ) -> Option<std::rc::Rc<crate::escape::Reach>> {
        let root = match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Object(v)) => *v,
            Some(SymbolOrigin::Opaque(v)) if self.allocated_here(*v) => {
                frontend::loops::strip_casts(self.func, *v)
            }
            _ => return None,
        };
        // Every address of a local's slot, not only the one the symbol names.
        let roots: Vec<Value> = match self.func.inst(root).kind {
            InstKind::SlotAddr(slot) => self
                .func
                .values()
                .filter(|v| self.func.inst(*v).kind == InstKind::SlotAddr(slot))
                .collect(),
            _ => vec![root],
        };
        let reach = self.fresh.reach_of(roots);
        self.unreached(&reach, Some(header)).then_some(reach)
    }

    /// Whether `v` (through casts) is a call that returns new memory.
    fn allocated_here(&self, v: Value) -> bool {
        self.fresh
            .is_allocation(frontend::loops::strip_casts(self.func, v))
    }

    /// What the stores of the loop, its own and its callees', may do to an object born in
    /// the function (see [`Self::born_here`]), even one whose address was passed to a call
    /// before the loop. A store through a parameter (set before the object existed), into
    /// another named object or into another allocation cannot reach it. One through a
    /// pointer loaded from memory or returned by a call could, if that pointer were the
    /// object's escaped address: a profile settles it ([`BoundWrites::IfDistinct`]). A store
    /// into the object itself, through no single pointer, or by a call whose effects are
    /// not all known: [`BoundWrites::May`].
    fn born_here_writes(
        &self,
        id: LoopId,
        base: &Var,
        accesses: &[MemAccess],
        effects: &LoopEffects,
    ) -> BoundWrites {
        if self.stored_types(id, effects).is_none() {
            return BoundWrites::May;
        }
        // An object whose address the function keeps to itself until the loop (used only
        // to load and store it, or passed to calls that do not keep it): no pointer read
        // from memory or returned by a call can hold it.
        let kept_here = self.address_kept_until(base, self.forest.loop_(id).header);
        // A call's result may be the address only if the call got it (then it escaped) or
        // computes it from the object's own values.
        let call_apart = |v: Value| {
            let v = frontend::loops::strip_casts(self.func, v);
            matches!(self.func.inst(v).kind, InstKind::Call { .. })
                && kept_here.as_ref().is_some_and(|r| !r.derived.contains(&v))
        };
        // `Some(true)`: cannot point into the object; `Some(false)`: might, if it holds the
        // escaped address; `None`: it is the object, or no single pointer.
        let apart = |b: Option<&Var>| -> Option<bool> {
            let b = b?;
            if b == base {
                return None;
            }
            Some(match self.rec.symbols.info(b).map(|s| &s.origin) {
                Some(SymbolOrigin::Param(_) | SymbolOrigin::Object(_)) => true,
                Some(SymbolOrigin::Opaque(v)) => self.allocated_here(*v) || call_apart(*v),
                Some(SymbolOrigin::Load { .. }) => kept_here.is_some(),
                _ => false,
            })
        };
        let mut stores = Vec::new();
        let mut consider = |access: &MemAccess, bases: Vec<Option<Var>>| -> bool {
            if bases.is_empty() {
                return false;
            }
            for b in &bases {
                match apart(b.as_ref()) {
                    Some(true) => {}
                    Some(false) => {
                        let name = b.as_ref().map(|b| b.name().to_string()).unwrap_or_default();
                        stores.push(UndecidedStore {
                            store: access.clone(),
                            pointer: name,
                            escaped: true,
                        });
                    }
                    None => return false,
                }
            }
            true
        };
        for &block in &self.forest.loop_(id).blocks {
            for &v in &self.func.block(block).insts {
                let InstKind::Store { addr, .. } = self.func.inst(v).kind else {
                    continue;
                };
                let bases: Vec<Option<Var>> = self
                    .rec
                    .of(addr)
                    .iter()
                    .map(|e| crate::access::split_base(e, &self.rec.symbols).0)
                    .collect();
                // Apart stores need no access; the others are named by theirs, which a
                // store into private storage does not have.
                let access = accesses.iter().find(|a| a.inst == v);
                let all_apart =
                    !bases.is_empty() && bases.iter().all(|b| apart(b.as_ref()) == Some(true));
                if all_apart {
                    continue;
                }
                match access {
                    Some(access) if consider(access, bases) => {}
                    _ => return BoundWrites::May,
                }
            }
        }
        for access in effects.accesses.iter().filter(|a| a.is_store) {
            let bases: Vec<Option<Var>> =
                access.alternatives.iter().map(|(b, _)| b.clone()).collect();
            if !consider(access, bases) {
                return BoundWrites::May;
            }
        }
        if stores.is_empty() {
            BoundWrites::None {
                assumed: Vec::new(),
            }
        } else {
            BoundWrites::IfDistinct { stores }
        }
    }

    /// Whether a call of `name` can only read memory: a function of the program whose
    /// summary has no store, host call, allocation or unknown effect; or a library function
    /// with a device version whose arguments are all numbers (`sqrt(x)`, `abs(n)`).
    fn only_reads(&self, name: &str, args: &[Value]) -> bool {
        // The modelled library functions (`memcpy`, `frexp`) all write.
        if crate::summaries::library_summary(name).is_some() {
            return false;
        }
        let view = self.summaries.view();
        match view.resolve(self.unit_index, name) {
            Some(function) => {
                let summary = self.summaries.of(function);
                summary.unknown.is_empty()
                    && summary.host_calls.is_empty()
                    && summary.allocators.is_empty()
                    && summary.effects.iter().all(|e| !e.is_store)
            }
            None => {
                let types = &self.unit.lowered.program.types;
                matches!(classify_in(view, self.unit_index, name), CallKind::Builtin)
                    && !args.is_empty()
                    && args
                        .iter()
                        .all(|a| types.is_arithmetic(self.func.inst(*a).ty))
            }
        }
    }
}

/// Adds statements to the loop's assumptions, each once.
fn add_assumptions(facts: &mut LoopFacts, assumed: Vec<String>) {
    for assumption in assumed {
        let assumption = Assumption::plain(assumption);
        if !facts.assumptions.contains(&assumption) {
            facts.assumptions.push(assumption);
        }
    }
}
