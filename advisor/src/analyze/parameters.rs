//! A loop's kernel parameters with their byte sections (thesis §4.2), phase by phase: the
//! memory the loop touches, one parameter per base pointer (its C type, role and section),
//! those of accesses with no single base, then the scalars it reads or leaves behind.

use super::{FunctionContext, LoopFacts};
use crate::access::{collect_accesses, section, MemAccess};
use crate::assumption::Assumption;
use crate::callsites::LoopEffects;
use crate::model::{Bytes, ParamKind, Parameter, Quantity, Role, WholeObject};
use crate::rebase::{Definitions, EntryOffset};
use crate::space::{NotAffine, Space};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{GlobalId, InstKind, Slot, Value};
use frontend::loops::{Loop, LoopId};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::rc::Rc;
use symbolic::{Expr, Var};

/// The memory a loop touches, its own accesses and its callees', and what their sections
/// are computed over.
pub(super) struct LoopMemory {
    pub(super) accesses: Vec<MemAccess>,
    effects: Rc<LoopEffects>,
    space: Result<Space, NotAffine>,
    variant: HashSet<Var>,
}

/// Per base pointer name: the variable, whether the loop reads and writes through it, and
/// the smallest element size it accesses.
pub(super) type BaseUses = BTreeMap<String, (Var, bool, bool, u64)>;

/// How a kernel receives a base pointer: whether it is loaded from a struct, its C type
/// and its kind.
struct BaseType {
    nested: bool,
    /// `None` where no C type can be written (see [`Parameter::c_type`]).
    c_type: Option<String>,
    kind: ParamKind,
}

/// A parameter's section: its bytes when known, the whole object when that is what is
/// mapped, and notes on either.
#[derive(Default)]
struct Section {
    bytes: Option<Bytes>,
    notes: Vec<String>,
    whole_object: Option<WholeObject>,
}

/// How the accesses with no single base use one pointer (or one access text): reads,
/// writes, the smallest element size, and the bases it may point into.
pub(super) struct UnbasedUse {
    reads: bool,
    writes: bool,
    elem: u64,
    bases: BTreeSet<String>,
}

/// A memory object a pointer may be held in: a global, or a local whose address is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MemoryObject {
    Global(GlobalId),
    Slot(Slot),
}

/// A scalar parameter: its role, C type, and the array parameter whose memory it points to
/// when it holds a copy of that array's pointer.
#[derive(Debug)]
pub(super) struct Scalar {
    pub role: Role,
    pub c_type: String,
    pub holds: Option<String>,
}

/// The scalar parameters by name.
pub(super) type Scalars = BTreeMap<String, Scalar>;

impl FunctionContext<'_> {
    /// Decides which accesses need kernel parameters: the loop's shared ones and its
    /// callees', less those of error branches, with the space and variant symbols their
    /// sections are computed over.
    pub(super) fn loop_memory(
        &self,
        id: LoopId,
        facts: &LoopFacts,
        assumptions: &mut Vec<Assumption>,
    ) -> LoopMemory {
        let privacy = &facts.privacy;
        let types = &self.unit.lowered.program.types;
        let mut accesses = privacy.shared(collect_accesses(
            self.func,
            self.forest,
            id,
            self.rec,
            types,
        ));
        // A callee's accesses count toward the loop's sections.
        let effects = self.call_effects(id);
        accesses.extend(privacy.shared(effects.accesses.clone()));
        // An error branch runs on the host only (a port re-runs the failing iteration
        // there): what it reads or writes is no kernel parameter.
        accesses.retain(|a| !facts.error_blocks.contains(&self.func.inst(a.inst).block));
        assumptions.extend(effects.assumptions.iter().cloned());
        let space = self.space(id, false).map(|s| effects.extend_space(s));
        let mut variant = (*self.variant_symbols(id)).clone();
        variant.extend(effects.variant.iter().cloned());
        LoopMemory {
            accesses,
            effects,
            space,
            variant,
        }
    }

    /// Decides one parameter per base pointer of the accesses, in name order: its C type
    /// and kind, its role, and its section or whole object.
    pub(super) fn based_parameters(
        &self,
        id: LoopId,
        memory: &LoopMemory,
        bases: &BaseUses,
        assumptions: &mut Vec<Assumption>,
    ) -> Vec<Parameter> {
        let l = self.forest.loop_(id);
        let definitions = self
            .variable_definitions
            .get_or_init(|| crate::rebase::Definitions::of(self.func));
        let mut out = Vec::new();
        for (name, (var, reads, writes, elem)) in bases {
            let BaseType {
                nested,
                c_type,
                kind,
            } = self.base_type(var, memory);
            // A value loaded from a struct through a parameter is reported as nested only if
            // its own loads are loop-invariant; a loop-variant pointer is an unknown array.
            let role = role(*reads, *writes);
            let Section {
                bytes,
                notes,
                whole_object,
            } = self.based_section(l, memory, bases, definitions, name, var, assumptions);
            let mut notes = notes;
            if kind == ParamKind::Reached {
                notes.push(
                    "not one array but every object the callee reaches by following pointers it loads (a list, a tree, an array of pointers): a port copies them deep, each with its pointers rewritten, or allocates them in memory the device shares (CUDA `cudaMallocManaged`, OpenMP `requires unified_shared_memory`)".to_string(),
                );
            } else if c_type.is_none() {
                notes.push(format!(
                    "no C type can be written for `{name}`: the program gives what it points to no name a declaration could use"
                ));
            }
            out.push(Parameter {
                name: name.clone(),
                nested,
                role,
                kind,
                c_type,
                elem_bytes: Some(*elem),
                bytes,
                notes,
                whole_object,
                storage: crate::globals::storage(self.func, self.rec, var),
                by_address: self.is_variable_itself(var),
                holds: None,
            });
        }
        out
    }

    /// `out` less the storage of each pointer held in memory (a file-scope pointer, a local
    /// whose address is taken) that the loop only reads and whose pointee is a parameter
    /// too (`double *table;` read as `table[i]`): the kernel receives the pointer as that
    /// parameter (a port maps the pointee, and OpenMP attaches the device's copy of the
    /// pointer to it), so the pointer's own 8 bytes are no parameter, and the pointee is
    /// named as the source names the pointer. Mapped as a section of the pointee
    /// (`table[0:1]` beside `table[0:n]`) they overlapped in one construct, which the
    /// offloading runtime refuses.
    pub(super) fn without_attached_pointers(
        &self,
        bases: &BaseUses,
        mut out: Vec<Parameter>,
    ) -> Vec<Parameter> {
        let types = &self.unit.lowered.program.types;
        let object_at = |address: Value| match self.func.inst(address).kind {
            InstKind::GlobalAddr(g) => Some(MemoryObject::Global(g)),
            InstKind::SlotAddr(s) => Some(MemoryObject::Slot(s)),
            _ => None,
        };
        let origin = |name: &str| {
            bases
                .get(name)
                .and_then(|(var, ..)| self.rec.symbols.info(var))
                .map(|s| &s.origin)
        };
        // The object a base pointer was loaded from, whole.
        let loaded_from = |name: &str| match origin(name) {
            Some(SymbolOrigin::Load { address, .. }) => object_at(*address),
            _ => None,
        };
        // The object a parameter is, when it holds a pointer.
        let pointer_object = |name: &str| match origin(name) {
            Some(SymbolOrigin::Object(v)) => types
                .pointee(self.func.inst(*v).ty)
                .is_some_and(|t| types.is_pointer(t))
                .then(|| object_at(*v))
                .flatten(),
            _ => None,
        };
        let attached: HashSet<MemoryObject> = out
            .iter()
            .filter(|q| q.kind != ParamKind::Scalar)
            .filter_map(|q| loaded_from(&q.name))
            .collect();
        let dropped: HashSet<MemoryObject> = out
            .iter()
            .filter(|p| p.role == Role::In && p.kind != ParamKind::Scalar)
            .filter_map(|p| pointer_object(&p.name))
            .filter(|o| attached.contains(o))
            .collect();
        out.retain(|p| {
            !(p.role == Role::In
                && p.kind != ParamKind::Scalar
                && pointer_object(&p.name).is_some_and(|o| dropped.contains(&o)))
        });
        // Such a pointee is reached through no other parameter: the pointer is one.
        for q in out.iter_mut() {
            if loaded_from(&q.name).is_some_and(|o| dropped.contains(&o)) {
                q.nested = false;
            }
        }
        out
    }

    /// Decides how a kernel receives the base pointer `var`: from where the pointer comes
    /// (a parameter, a load, an object, a call's result, a callee's member or global).
    /// Whether `var` is the address of a variable that is no array (a global or a local
    /// whose address is taken, of a scalar or structure type): a host reaches its memory as
    /// `&name`, not as `name`.
    fn is_variable_itself(&self, var: &Var) -> bool {
        let types = &self.unit.lowered.program.types;
        match self.rec.symbols.info(var).map(|s| &s.origin) {
            Some(SymbolOrigin::Object(v)) => {
                let ty = self.func.inst(*v).ty;
                types.array_elem(types.pointee(ty).unwrap_or(ty)).is_none()
            }
            _ => false,
        }
    }

    fn base_type(&self, var: &Var, memory: &LoopMemory) -> BaseType {
        let types = &self.unit.lowered.program.types;
        let effects = &memory.effects;
        let symbol = self.rec.symbols.info(var);
        let (nested, c_type, kind) = match symbol.map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => {
                let ty = self.func.params[*i as usize].ty;
                let pointee_is_record = types
                    .pointee(ty)
                    .is_some_and(|p| matches!(types.get(p), frontend::types::Type::Record(_)));
                (
                    false,
                    types.display_writable(ty),
                    if pointee_is_record {
                        ParamKind::Struct
                    } else {
                        ParamKind::Array
                    },
                )
            }
            Some(SymbolOrigin::Load { load, .. }) => (
                true,
                types.display_writable(self.func.inst(*load).ty),
                ParamKind::Array,
            ),
            Some(SymbolOrigin::Object(v)) => {
                // A local array or global is passed to the kernel as a pointer to its elements.
                let ty = self.func.inst(*v).ty;
                let object = types.pointee(ty).unwrap_or(ty);
                let shown = match types.array_elem(object) {
                    Some(elem) => types.display_pointer_to_writable(elem),
                    None => types.display_pointer_to_writable(object),
                };
                (false, shown, ParamKind::Array)
            }
            // A pointer a call returned (`malloc`, a constructor) or a phi of pointers:
            // its own type, or, for `void *`, a pointer to what the loop accesses.
            Some(SymbolOrigin::Opaque(v)) | Some(SymbolOrigin::Phi(v)) => {
                let ty = self.func.inst(*v).ty;
                let pointee = types.pointee(ty).map(|p| types.get(p));
                match pointee {
                    Some(frontend::types::Type::Record(_)) => {
                        (false, types.display_writable(ty), ParamKind::Struct)
                    }
                    Some(frontend::types::Type::Void) | None => {
                        // `double (*A)[n] = malloc(..)`: the local's type, from the cast.
                        let local = self.func.insts.iter().find_map(|i| match i.kind {
                            InstKind::Cast(inner) if inner == *v => Some(i.ty),
                            _ => None,
                        });
                        let shown = match local {
                            Some(t) if types.pointee(t).is_some() => types.display_writable(t),
                            _ => memory
                                .accesses
                                .iter()
                                .find(|a| a.base() == Some(var))
                                .and_then(|a| types.display_pointer_to_writable(a.ty)),
                        };
                        (false, shown, ParamKind::Array)
                    }
                    Some(_) => (false, types.display_writable(ty), ParamKind::Array),
                }
            }
            // A pointer the loop steps (`*Fout = *f; ++Fout`): the pointer's own type.
            Some(SymbolOrigin::Induction(v)) => (
                false,
                types.display_writable(self.func.inst(*v).ty),
                ParamKind::Array,
            ),
            // An object a callee reaches through a member of the caller's struct.
            _ => match effects.members.get(var) {
                Some(member) => (true, types.display_writable(member.ty), ParamKind::Array),
                // A global only a callee names (`M_ac@global`, defined in another file).
                None => match effects
                    .global_types
                    .get(var)
                    .or_else(|| effects.object_types.get(var))
                {
                    Some(ty) => (false, Some(ty.clone()), ParamKind::Array),
                    // The pool of everything a callee reaches through loaded pointers.
                    None if effects.reached.get(var).is_some_and(Option::is_none) => {
                        (false, None, ParamKind::Reached)
                    }
                    None => (false, None, ParamKind::Array),
                },
            },
        };
        BaseType {
            nested,
            c_type,
            kind,
        }
    }

    /// Decides the section of base `var` (named `name`): the bytes its subscripts bound,
    /// else the whole object, else a note on why neither is known.
    #[allow(clippy::too_many_arguments)]
    fn based_section(
        &self,
        l: &Loop,
        memory: &LoopMemory,
        bases: &BaseUses,
        definitions: &Definitions,
        name: &str,
        var: &Var,
        assumptions: &mut Vec<Assumption>,
    ) -> Section {
        match &memory.space {
            Ok(space) => {
                match section(var, &memory.accesses, space, &memory.variant, assumptions) {
                    Ok((lo, hi)) => {
                        self.bounded_section(l, memory, space, definitions, name, var, lo, hi)
                    }
                    // No subscript bounds the accesses (a gather): the whole object, when
                    // the program allocates it with a size the loop can name, and the
                    // variable still points to its start where the loop begins.
                    Err(why) => {
                        self.whole_object_section(l, memory, bases, definitions, name, var, why)
                    }
                }
            }
            Err(why) => Section {
                notes: vec![format!("section unknown statically: {}", why.0)],
                ..Section::default()
            },
        }
    }

    /// Decides the bytes `[lo, hi)` the subscripts bound, tightened by the value ranges and
    /// made relative to where `name` points when the loop starts.
    #[allow(clippy::too_many_arguments)]
    fn bounded_section(
        &self,
        l: &Loop,
        memory: &LoopMemory,
        space: &Space,
        definitions: &Definitions,
        name: &str,
        var: &Var,
        lo: Expr,
        hi: Expr,
    ) -> Section {
        let mut notes = Vec::new();
        let from_ranges =
            crate::access::range_section(var, &memory.accesses, self.ranges, &space.env);
        let (rlo, rhi) = from_ranges
            .map(|(a, b)| (Some(a), Some(b)))
            .unwrap_or((None, None));
        let lo = crate::access::tighter(lo, rlo, false, &space.env);
        let hi = crate::access::tighter(hi, rhi, true, &space.env);
        // Named after a variable: relative to it as the loop finds it.
        let rebased =
            match crate::rebase::entry_offset(self.func, self.rec, definitions, l, name, var) {
                EntryOffset::Same => Ok((lo, hi)),
                EntryOffset::Moved(offset) => {
                    match (lo.checked_sub(&offset), hi.checked_sub(&offset)) {
                        (Ok(lo), Ok(hi)) => Ok((lo, hi)),
                        _ => Err(format!(
                        "`{name}` moved {} bytes before the loop, which the engine cannot subtract",
                        offset.to_c()
                    )),
                    }
                }
                EntryOffset::Unknown(why) => Err(why),
            };
        let bytes = match rebased {
            Ok((lo, hi)) => {
                let size = hi.checked_sub(&lo).map_or_else(
                    |_| Quantity::c_text(format!("({}) - ({})", hi.to_c(), lo.to_c())),
                    |e| Quantity::of(&e),
                );
                let reads = lo
                    .vars()
                    .into_iter()
                    .chain(hi.vars())
                    .map(|v| v.name().to_string())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                Some(Bytes {
                    lo: Quantity::of(&lo),
                    hi: Quantity::of(&hi),
                    size,
                    reads,
                })
            }
            Err(why) => {
                notes.push(format!("section unknown statically: {why}"));
                None
            }
        };
        Section {
            bytes,
            notes,
            whole_object: None,
        }
    }

    /// Decides, for accesses no subscript bounds (`why`), whether the whole allocated
    /// object is the section, with the notes a porter needs either way.
    #[allow(clippy::too_many_arguments)]
    fn whole_object_section(
        &self,
        l: &Loop,
        memory: &LoopMemory,
        bases: &BaseUses,
        definitions: &Definitions,
        name: &str,
        var: &Var,
        why: String,
    ) -> Section {
        let mut notes = Vec::new();
        match self.whole_object(l, &memory.effects, bases, definitions, name, var) {
            Some(Ok(whole)) => {
                notes.push(format!(
                    "whole object: allocated at {} with `{}` bytes (no subscript bounds the accesses: {why})",
                    whole.allocated_at.join(", "),
                    whole.size
                ));
                if !whole.reads.is_empty() {
                    let listed: Vec<String> =
                        whole.reads.iter().map(|r| format!("`{r}`")).collect();
                    let (verb, what) = if listed.len() == 1 {
                        ("holds", "the value")
                    } else {
                        ("hold", "the values")
                    };
                    notes.push(format!(
                        "assumes {} still {verb} at the loop {what} the allocation used",
                        listed.join(", ")
                    ));
                }
                let bytes = Bytes {
                    lo: Quantity::constant(0),
                    hi: whole.size.clone(),
                    size: whole.size.clone(),
                    reads: whole.reads.clone(),
                };
                Section {
                    bytes: Some(bytes),
                    notes,
                    whole_object: Some(whole),
                }
            }
            other => {
                // Why the allocation gives no size either: what a porter
                // would have to keep for the whole object to be mapped.
                let whole = match other {
                    Some(Err(whole)) => {
                        format!("; nor is the whole object known: {whole}")
                    }
                    _ => String::new(),
                };
                notes.push(format!("section unknown statically: {why}{whole}; `warpwise instantiate` computes it for a profiled run"));
                Section {
                    bytes: None,
                    notes,
                    whole_object: None,
                }
            }
        }
    }

    /// Decides how the accesses with no single base use each pointer the source subscripts
    /// (or each access text, when no named pointer is behind one).
    pub(super) fn unbased_uses(&self, unbased: &[&MemAccess]) -> BTreeMap<String, UnbasedUse> {
        // Accesses with no single base pointer, one parameter per pointer the source
        // subscripts (`index` of `index[2*i]` and `index[2*i + 1]`, chosen by a branch
        // between two arrays), or per access text when no named pointer is behind it.
        let mut unbased_params: BTreeMap<String, UnbasedUse> = BTreeMap::new();
        for access in unbased {
            let name = self
                .subscripted_pointer(access.addr)
                .unwrap_or_else(|| self.unit.snippet(access.span));
            let entry = unbased_params.entry(name).or_insert(UnbasedUse {
                reads: false,
                writes: false,
                elem: access.elem_bytes,
                bases: BTreeSet::new(),
            });
            if access.is_store {
                entry.writes = true;
            } else {
                entry.reads = true;
            }
            entry.elem = entry.elem.min(access.elem_bytes);
            for (base, _) in &access.alternatives {
                if let Some(base) = base {
                    entry.bases.insert(base.name().to_string());
                }
            }
        }
        unbased_params
    }

    /// Decides the scalar parameters: those defined outside the loop and used inside
    /// (inbound), and values computed inside and used after it (outbound); names in
    /// `array_names` are memory parameters, not scalars.
    pub(super) fn scalar_parameters(
        &self,
        id: LoopId,
        facts: &LoopFacts,
        array_names: &HashSet<String>,
    ) -> Scalars {
        let types = &self.unit.lowered.program.types;
        let l = self.forest.loop_(id);
        // Scalars defined outside the loop and used inside (inbound), and values computed
        // inside and used after it (outbound).
        let mut scalars: Scalars = BTreeMap::new();
        let starts_from_entry: HashSet<&String> = facts
            .privacy
            .entries
            .iter()
            .filter(|p| p.initial_value)
            .map(|p| &p.name)
            .collect();
        for &block in &l.blocks {
            for &v in &self.func.block(block).insts {
                let mut operands = self.func.inst(v).kind.operands();
                if let InstKind::Phi(args) = &self.func.inst(v).kind {
                    operands = args
                        .iter()
                        .filter(|(b, _)| !l.contains(*b))
                        .map(|(_, a)| *a)
                        .collect();
                    if block == l.header {
                        // A private copy that starts from the value before the loop needs
                        // that value.
                        let name = self.func.inst(v).origin.var_name.as_ref();
                        if let Some(name) = name.filter(|n| starts_from_entry.contains(n)) {
                            scalars.insert(
                                name.clone(),
                                Scalar {
                                    role: Role::In,
                                    c_type: types.display(self.func.inst(v).ty),
                                    holds: None,
                                },
                            );
                        }
                        continue;
                    }
                }
                for op in operands {
                    self.scalar_inbound(id, op, array_names, &mut scalars);
                }
            }
            for op in self.func.terminator_uses(block) {
                self.scalar_inbound(id, op, array_names, &mut scalars);
            }
        }
        let users = &self.users;
        for &block in &l.blocks {
            for &v in &self.func.block(block).insts {
                let inst = self.func.inst(v);
                let Some(name) = &inst.origin.var_name else {
                    continue;
                };
                if name.starts_with('&') || !types.is_scalar(inst.ty) {
                    continue;
                }
                let used_outside = users[v.index()]
                    .iter()
                    .any(|u| !l.contains(self.func.inst(*u).block))
                    || self.order().branch_users(v).iter().any(|b| !l.contains(*b));
                if used_outside
                    && !self
                        .forest
                        .loop_(id)
                        .induction_variables
                        .iter()
                        .any(|iv| iv.phi == v)
                {
                    let entry = scalars.entry(name.clone()).or_insert(Scalar {
                        role: Role::Out,
                        c_type: types.display(inst.ty),
                        holds: None,
                    });
                    if entry.role == Role::In {
                        entry.role = Role::Inout;
                    }
                }
            }
        }
        scalars
    }
}

/// Decides which accesses have a single base pointer (grouped by its name) and which
/// have none.
pub(super) fn by_base(accesses: &[MemAccess]) -> (BaseUses, Vec<&MemAccess>) {
    let mut bases: BaseUses = BTreeMap::new();
    let mut unbased = Vec::new();
    for access in accesses {
        match access.base() {
            Some(base) => {
                let entry = bases.entry(base.name().to_string()).or_insert((
                    base.clone(),
                    false,
                    false,
                    access.elem_bytes,
                ));
                if access.is_store {
                    entry.2 = true;
                } else {
                    entry.1 = true;
                }
                entry.3 = entry.3.min(access.elem_bytes);
            }
            None => unbased.push(access),
        }
    }
    (bases, unbased)
}

/// Decides a parameter's role from whether the loop reads and writes it.
fn role(reads: bool, writes: bool) -> Role {
    match (reads, writes) {
        (true, true) => Role::Inout,
        (false, true) => Role::Out,
        _ => Role::In,
    }
}

/// Decides the parameters of the accesses with no single base: a new one per pointer, or
/// a note on the based parameter of the same name, whose section is then not known.
pub(super) fn merge_unbased(out: &mut Vec<Parameter>, uses: BTreeMap<String, UnbasedUse>) {
    for (
        name,
        UnbasedUse {
            reads,
            writes,
            elem,
            bases,
        },
    ) in uses
    {
        let mut note = "the address has no single base pointer".to_string();
        if bases.len() > 1 {
            let listed: Vec<String> = bases.iter().map(|b| format!("`{b}`")).collect();
            note.push_str(&format!(": it points into {}", listed.join(" or ")));
        }
        let role = role(reads, writes);
        // The same pointer is also a single base elsewhere in the loop (`_nodes` before
        // a branch reassigns it): one parameter, whose section is then not known.
        if let Some(known) = out.iter_mut().find(|p| p.name == name) {
            if known.role != role {
                known.role = Role::Inout;
            }
            known.bytes = None;
            known.whole_object = None;
            known.notes.push(note);
            continue;
        }
        out.push(Parameter {
            name,
            nested: false,
            role,
            kind: ParamKind::Array,
            c_type: None,
            elem_bytes: Some(elem),
            bytes: None,
            notes: vec![note],
            whole_object: None,
            storage: None,
            by_address: false,
            holds: None,
        });
    }
}

/// Decides the final list: the memory parameters, each named `*p` when the loop also
/// writes its pointer `p` as a scalar, then the scalars in name order.
pub(super) fn ordered(mut out: Vec<Parameter>, scalars: Scalars) -> Vec<Parameter> {
    // A pointer the loop advances (`node = node->next`, `p++`) is a scalar it writes and
    // the base of the memory it reads: the memory is `*node`, the pointer `node`.
    for memory in out.iter_mut() {
        if scalars.contains_key(&memory.name) {
            memory.name = format!("*{}", memory.name);
        }
    }
    let arrays: Vec<String> = out.iter().map(|p| p.name.clone()).collect();
    for (name, s) in scalars {
        out.push(Parameter {
            name,
            nested: false,
            role: s.role,
            kind: ParamKind::Scalar,
            c_type: Some(s.c_type),
            elem_bytes: None,
            bytes: None,
            notes: Vec::new(),
            whole_object: None,
            storage: None,
            by_address: false,
            // Only an array still among the parameters.
            holds: s.holds.filter(|h| arrays.contains(h)),
        });
    }
    out
}
