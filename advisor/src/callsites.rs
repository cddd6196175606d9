//! The memory a loop touches through the functions it calls: each call's side-effect
//! summary (`crate::summaries`) instantiated with the call's arguments, as extra accesses
//! in the loop's own representation (`MemAccess`: base + byte offset), so that they go
//! through the same dependence tests, aliasing pairs and sections as the loop's own loads
//! and stores. A callee's loops become extra innermost "loops" of the nest (its range
//! variables), so a `set_row(out + i*n, n)` that writes `out[i*n + j]` for `j < n` is
//! compared exactly as the inline code would be.

use crate::access::{is_conditional, split_base, MemAccess};
use crate::assumption::{Assumption, Relation};
use crate::program::ProgramView;
use crate::space::{IvRange, Space};
use crate::summaries::{
    instantiate, library_summary, range_to_iv, sign_from_lower, synthetic_loop, Effect, EffectType,
    Fresh, Instantiated, Place, RangeVar, Summaries, Summary,
};
use analyses::reconstruct::Reconstruction;
use analyses::symbols::SymbolOrigin;
use frontend::ir::{Callee, Function, InstKind, Value};
use frontend::loops::{LoopForest, LoopId};
use frontend::types::{IntRank, Type, TypeId};
use std::collections::{HashMap, HashSet};
use symbolic::{Expr, SignSet, Var};

/// Most callee accesses added to one loop (see the merge in [`loop_effects`]).
const MAX_CALLEE_ACCESSES: usize = 400;

/// What the calls of one loop do to memory.
#[derive(Clone, Debug, Default)]
pub struct LoopEffects {
    /// The callees' accesses, one `MemAccess` per access of a summary (its `inst` and
    /// `span` are the call's, `callee` names the function).
    pub accesses: Vec<MemAccess>,
    /// The callees' range variables, innermost after the loop's own.
    pub ranges: Vec<IvRange>,
    pub signs: Vec<(Var, SignSet)>,
    /// Offsets a summary could not express: one fresh symbol each, that changes from
    /// iteration to iteration (so nothing is proven through it).
    pub variant: HashSet<Var>,
    /// Per call: why some of its effects are not known.
    pub unknown: Vec<(Value, String)>,
    /// Per call: how many more reasons there are than `unknown` lists (a callee's summary
    /// keeps its first few, see `summaries::unknowns`).
    pub unlisted: HashMap<Value, usize>,
    /// Accesses of callees to globals a GPU cannot hold (`volatile` ones, `_Thread_local`
    /// ones written): (call, why), worded as `globals::unsupported` words the loop's own.
    pub unsupported_globals: Vec<(Value, String)>,
    /// Globals a callee only updates as a reduction (`summaries::updates`), per call.
    pub updates: Vec<CallUpdate>,
    /// Variables standing for globals the caller does not name itself.
    pub globals: HashSet<Var>,
    /// Those of them defined `const` (see `globals::unmodifiable`): no store changes them.
    pub const_globals: HashSet<Var>,
    /// Those of them that are statics whose address the program never takes (see `sealed`):
    /// no pointer reaches them.
    pub sealed_globals: HashSet<Var>,
    /// The C type a kernel would receive each of them as (a pointer to the elements of an
    /// array, to the object otherwise), printed with the type table of the unit that
    /// defines it: the caller's table may not hold the type.
    pub global_types: HashMap<Var, String>,
    /// What the callees' summaries assume, in the caller's terms.
    pub assumptions: Vec<Assumption>,
    /// Calls of functions that allocate or free memory: (call, callee, allocators).
    pub allocating: Vec<(Value, String, Vec<String>)>,
    /// The recursive functions the calls reach (their summaries cover every depth).
    pub recursive: std::collections::BTreeSet<String>,
    /// Variables standing for memory a callee reaches through a pointer it reads, with the
    /// caller's base of the object the pointer is read from (`None`: read from memory the
    /// summary does not name, a tree's nodes): what the aliasing policy may assume apart.
    pub reached: HashMap<Var, Option<Var>>,
    /// Those of the objects reached through a pointer member of a struct the caller names
    /// (`data.concs`).
    pub members: HashMap<Var, MemberPointer>,
    /// The C type a kernel would receive each of the other reached objects as: a pointer to
    /// what the callee first accesses there, printed with the table of the callee's unit.
    pub object_types: HashMap<Var, String>,
}

/// A scalar global that the call `call` updates as a reduction with `op`, and touches in no
/// other way: its load and store among the loop's accesses are the call's, on `base`.
#[derive(Clone, Debug)]
pub struct CallUpdate {
    pub call: Value,
    pub base: Var,
    /// The global's name in C.
    pub name: String,
    pub op: crate::reductions::Op,
}

/// A pointer member of a caller's struct that a callee reads and reaches memory through.
#[derive(Clone, Debug)]
pub struct MemberPointer {
    /// The caller's struct object (its base symbol).
    pub holder: Var,
    /// The struct's type as C prints it, and the member's name.
    pub record: String,
    pub field: String,
    /// The member's type (a pointer).
    pub ty: TypeId,
}

impl LoopEffects {
    /// Whether `v` stands for memory a callee reaches through pointers read from memory
    /// `received` accepts (or from memory no summary names).
    pub fn reached_through(&self, v: &Var, received: impl Fn(&Var) -> bool) -> bool {
        self.reached
            .get(v)
            .is_some_and(|holder| holder.as_ref().is_none_or(&received))
    }
}

impl LoopEffects {
    /// The loop's iteration space with the callees' range variables as innermost loops.
    pub fn extend_space(&self, mut space: Space) -> Space {
        space.ivs.extend(self.ranges.iter().cloned());
        for (var, sign) in &self.signs {
            space.env.set(var.clone(), *sign);
        }
        space
    }

    /// Whether two bases are certainly different objects because one is a global only the
    /// callees name: a different global, or a local array or global of the caller (whose
    /// own symbol would have been used for the same global).
    pub fn distinct_objects(&self, a: &Var, b: &Var, symbols: &analyses::symbols::Symbols) -> bool {
        let global = |v: &Var| self.globals.contains(v);
        let object = |v: &Var| global(v) || symbols.is_object(v);
        a != b && (global(a) && object(b) || global(b) && object(a))
    }

    /// Why the effects of the call `call` are not all known, if they are not.
    pub fn unknown_reason(&self, call: Value) -> Option<String> {
        let reasons: Vec<&str> = self
            .unknown
            .iter()
            .filter(|(c, _)| *c == call)
            .map(|(_, why)| why.as_str())
            .collect();
        let total = reasons.len() + self.unlisted.get(&call).copied().unwrap_or(0);
        (!reasons.is_empty()).then(|| {
            let mut text = reasons[..reasons.len().min(3)].join("; ");
            if total > 3 {
                text.push_str(&format!(" (and {} more)", total - 3));
            }
            text
        })
    }
}

/// Where the loop's calls are and what they may use.
#[derive(Debug)]
pub struct LoopSite<'a> {
    pub summaries: &'a Summaries<'a>,
    pub unit: usize,
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub loop_id: LoopId,
    pub rec: &'a Reconstruction,
    /// Symbols that change between iterations of the loop (see `analyze`).
    pub variant: &'a HashSet<Var>,
    /// The function's `summaries::private_allocations`, made once per function.
    pub private_allocations: &'a HashSet<Value>,
}

/// The effects of every call in the loop (inner loops included).
pub fn loop_effects(site: &LoopSite) -> LoopEffects {
    let mut effects = EffectsOfCalls::new(site);
    for &block in &site.forest.loop_(site.loop_id).blocks {
        for &v in &site.func.block(block).insts {
            effects.call(block, v);
        }
    }
    effects.merge_past_limit();
    effects.vary_pointers_in_written_objects();
    effects.out
}

/// The bases and offsets one callee access may have (`MemAccess::alternatives`).
type Alternatives = Vec<(Option<Var>, Expr)>;

/// One call of the loop, as its accesses need it.
struct CallInLoop<'c> {
    call: Value,
    name: &'c String,
    /// Whether the call itself runs only in some iterations.
    conditional: bool,
    /// Range variables whose bounds move between iterations: they cannot be compared.
    unusable: HashSet<Var>,
}

/// What [`loop_effects`] builds up over the calls of one loop, one call at a time.
struct EffectsOfCalls<'s, 'a> {
    site: &'s LoopSite<'a>,
    view: &'a ProgramView<'a>,
    out: LoopEffects,
    fresh: Fresh,
    objects: HashMap<String, Var>,
    /// Accesses through a pointer a callee reads (by index in `out.accesses`), with the
    /// object that holds the pointer.
    deref_holders: Vec<(usize, Option<Var>)>,
    /// Allocations made inside the loop that never escape: a new object every iteration,
    /// so a callee's accesses through them are private to the iteration.
    allocated_here: HashSet<Value>,
    /// Variables whose value differs between iterations: the nest's induction variables
    /// (the loop's and inner ones), loads that vary, and the callees' range variables.
    moving: HashSet<Var>,
}

impl<'s, 'a> EffectsOfCalls<'s, 'a> {
    fn new(site: &'s LoopSite<'a>) -> Self {
        let l = site.forest.loop_(site.loop_id);
        let allocated_here: HashSet<Value> = site
            .private_allocations
            .iter()
            .copied()
            .filter(|v| l.contains(site.func.inst(*v).block))
            .collect();
        let mut moving: HashSet<Var> = site.variant.clone();
        // The loop and the loops inside it, through the forest's children (testing every loop
        // of the function for being inside made a thousand loops in a row quadratic).
        let mut nest = vec![site.loop_id];
        while let Some(id) = nest.pop() {
            let inner = site.forest.loop_(id);
            nest.extend(inner.children.iter().copied());
            for iv in &inner.induction_variables {
                if let Some(v) = site.rec.symbol(iv.phi) {
                    moving.insert(v.clone());
                }
            }
        }
        EffectsOfCalls {
            site,
            view: site.summaries.view(),
            out: LoopEffects::default(),
            fresh: Fresh::default(),
            objects: HashMap::new(),
            deref_holders: Vec::new(),
            allocated_here,
            moving,
        }
    }

    /// Whether `base` is an allocation made in the loop that never escapes.
    fn per_iteration(&self, base: Option<&Var>) -> bool {
        base.is_some_and(|b| {
            matches!(
                self.site.rec.symbols.info(b).map(|s| &s.origin),
                Some(analyses::symbols::SymbolOrigin::Opaque(v)) if self.allocated_here.contains(v)
            )
        })
    }

    /// The instruction `v` of `block`, when it is a call: its summary instantiated with
    /// the arguments, added to `out`.
    fn call(&mut self, block: frontend::ir::Block, v: Value) {
        let site = self.site;
        let view = self.view;
        let inst = site.func.inst(v);
        let InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } = &inst.kind
        else {
            return;
        };
        // Zero-fills synthesized for initializers target a local declared in the body.
        if name.starts_with("__builtin_") || name == "memset" && inst.origin.span.is_none() {
            return;
        }
        let summary: std::sync::Arc<Summary> = match library_summary(name) {
            Some(s) => std::sync::Arc::new(s),
            None => match view.resolve(site.unit, name) {
                Some(g) => site.summaries.of(g),
                None => return,
            },
        };
        self.out.recursive.extend(summary.recursive.iter().cloned());
        if !summary.allocators.is_empty() {
            self.out
                .allocating
                .push((v, name.clone(), summary.allocators.clone()));
        }
        let args = crate::summaries::argument_exprs(
            site.func,
            &view.unit(site.unit).lowered.program.types,
            site.rec,
            args,
        );
        let line = view
            .unit(site.unit)
            .resolve(site.func.inst(v).origin.span)
            .map(|r| r.line)
            .unwrap_or(0);
        self.fresh.at_call_line(line);
        let instance = instantiate(&summary, name, &args, &mut self.fresh);
        self.out
            .unknown
            .extend(instance.unknown.first().iter().map(|u| (v, u.clone())));
        let unlisted = instance.unknown.total() - instance.unknown.first().len();
        if unlisted > 0 {
            *self.out.unlisted.entry(v).or_default() += unlisted;
        }
        for (a, why) in &instance.assumptions {
            let assumed =
                Assumption::relation(format!("{} > 0 ({why})", a.to_c()), a.clone(), Relation::Gt);
            if !self.out.assumptions.contains(&assumed) {
                self.out.assumptions.push(assumed);
            }
            if let Some(var) = a.as_poly().and_then(|p| p.as_var()) {
                self.out.signs.push((var.clone(), SignSet::POS));
            }
        }
        for u in &summary.updates {
            // A scalar only: the report names the update's target by the global's name.
            if global_is_arithmetic(view, site.unit, &u.name, u.unit) {
                let var = global_var(
                    site,
                    &u.name,
                    u.unit,
                    &mut self.objects,
                    &mut self.out.globals,
                );
                self.out.updates.push(CallUpdate {
                    call: v,
                    base: var,
                    name: u.name.clone(),
                    op: u.op,
                });
            }
        }
        let call = CallInLoop {
            call: v,
            name,
            conditional: is_conditional(site.forest, site.loop_id, block),
            unusable: self.ranges(&instance.ranges),
        };
        for access in &instance.accesses {
            self.access(&call, access);
        }
    }

    /// The callee's range variables as innermost loops; returns those whose bounds move
    /// between iterations, which are left out.
    fn ranges(&mut self, ranges: &[RangeVar]) -> HashSet<Var> {
        let mut unusable: HashSet<Var> = HashSet::new();
        for r in ranges {
            let bad =
                r.lo.vars()
                    .iter()
                    .chain(r.hi.vars().iter())
                    .any(|x| self.site.variant.contains(x) || unusable.contains(x));
            if bad {
                unusable.insert(r.var.clone());
                continue;
            }
            self.out.signs.push((r.var.clone(), sign_from_lower(&r.lo)));
            self.out
                .ranges
                .push(range_to_iv(r, synthetic_loop(self.out.ranges.len())));
            self.moving.insert(r.var.clone());
        }
        unusable
    }

    /// An offset the summary could not express: a fresh symbol named after what it
    /// depends on, that changes from iteration to iteration.
    fn unknown_offset(&mut self, e: &Effect, callee_name: &str) -> Expr {
        let stem = e
            .offset
            .as_ref()
            .err()
            .and_then(|why| why.split('`').nth(1))
            .unwrap_or("an offset")
            .to_string();
        let u = self.fresh.named(&format!("{stem} in {callee_name}"));
        self.out.variant.insert(u.clone());
        Expr::var(u.name())
    }

    /// One access of the callee's instantiated summary, as a `MemAccess` of the call.
    fn access(&mut self, call: &CallInLoop, access: &Instantiated) {
        let site = self.site;
        let e = &access.effect;
        let callee_name = e
            .through
            .last()
            .cloned()
            .unwrap_or_else(|| call.name.clone());
        // For an access through a pointer the callee reads: the object holding it.
        let mut holder: Option<Option<Var>> = None;
        let offset = match &e.offset {
            Ok(o) if o.vars().iter().all(|x| !call.unusable.contains(x)) => o.clone(),
            _ => self.unknown_offset(e, &callee_name),
        };
        let alternatives: Alternatives = match &access.place {
            Place::Address(bases) => self.address_alternatives(call, bases, &offset),
            Place::Global { name: global, unit } => {
                self.global_alternatives(call.call, e, &callee_name, global, *unit, &offset)
            }
            Place::Deref { at, name: pointer } => {
                let (alternatives, at_holder) =
                    self.deref_alternatives(e, &callee_name, at, pointer, &offset);
                holder = at_holder;
                alternatives
            }
            Place::Opaque(_) => {
                // Everything a callee reaches through pointers it reads from memory
                // is one pool per call: only its aliasing with the loop matters.
                let name = call.name;
                let var = object_var(
                    site,
                    &format!("opaque {name}"),
                    &format!("the memory {name} reaches through pointers"),
                    &mut self.objects,
                );
                self.out.reached.insert(var.clone(), None);
                vec![(Some(var), self.unknown_offset(e, &callee_name))]
            }
        };
        if alternatives.is_empty()
            || alternatives
                .iter()
                .all(|(b, _)| self.per_iteration(b.as_ref()))
        {
            return;
        }
        let Some(ty) = caller_type(self.view, site.unit, &e.ty) else {
            self.out.unknown.push((
                call.call,
                format!(
                    "calls `{}`, whose accesses have types this file does not know",
                    call.name
                ),
            ));
            return;
        };
        self.out.accesses.push(MemAccess {
            inst: call.call,
            addr: call.call,
            is_store: e.is_store,
            elem_bytes: e.elem_bytes,
            ty,
            conditional: call.conditional || e.conditional,
            span: site.func.inst(call.call).origin.span,
            alternatives,
            callee: Some(callee_name),
            restrict: None,
            extents: Vec::new(),
        });
        if let Some(holder) = holder {
            self.deref_holders
                .push((self.out.accesses.len() - 1, holder));
        }
    }

    /// An access at an address computed from the arguments: each base it may have.
    fn address_alternatives(
        &mut self,
        call: &CallInLoop,
        bases: &[Expr],
        offset: &Expr,
    ) -> Alternatives {
        if bases.is_empty() {
            self.out.unknown.push((
                call.call,
                format!(
                    "passes `{}` an argument that cannot be expressed",
                    call.name
                ),
            ));
        }
        bases
            .iter()
            // A constant pointer is null: nothing is accessed through it.
            .filter(|b| !b.vars().is_empty())
            .map(|b| match b.checked_add(offset) {
                Ok(full) => split_base(&full, &self.site.rec.symbols),
                Err(_) => (None, b.clone()),
            })
            .collect()
    }

    /// An access to a global variable: the variable standing for it, with what a GPU
    /// cannot do with it.
    fn global_alternatives(
        &mut self,
        call: Value,
        e: &Effect,
        callee_name: &str,
        global: &str,
        unit: Option<usize>,
        offset: &Expr,
    ) -> Alternatives {
        let site = self.site;
        let view = self.view;
        let out = &mut self.out;
        let var = global_var(site, global, unit, &mut self.objects, &mut out.globals);
        if !out.global_types.contains_key(&var) {
            if let Some(ty) = global_pointer_type(site, global, unit) {
                out.global_types.insert(var.clone(), ty);
            }
        }
        if global_unmodifiable(view, site.unit, global, unit) {
            out.const_globals.insert(var.clone());
        }
        if unit.is_some_and(|u| view.sealed_static_named(u, global)) {
            out.sealed_globals.insert(var.clone());
        }
        let verb = if e.is_store { "writes" } else { "reads" };
        if global_declared(view, site.unit, global, unit, true, |_, g| g.is_volatile) {
            out.unsupported_globals.push((
                call,
                format!("`{callee_name}` {verb} the volatile global variable `{global}`: it may change outside the program, which a device copy cannot follow"),
            ));
        } else if e.is_store
            && global_declared(view, site.unit, global, unit, true, |_, g| {
                g.is_thread_local
            })
        {
            out.unsupported_globals.push((
                call,
                format!("`{callee_name}` writes the thread-local global variable `{global}`: each host thread has its own, a kernel has none to write"),
            ));
        }
        vec![(Some(var), offset.clone())]
    }

    /// An access through a pointer the callee reads from memory: the object it points to,
    /// and (when the caller can name where the pointer is read) the object holding it.
    fn deref_alternatives(
        &mut self,
        e: &Effect,
        callee_name: &str,
        at: &[Expr],
        pointer: &str,
        offset: &Expr,
    ) -> (Alternatives, Option<Option<Var>>) {
        let mut holder = None;
        let (var, fixed) = match at {
            [location] => {
                let pointed = self.pointed_object(e, callee_name, location, pointer);
                // Checked below against the objects the loop writes.
                holder = Some(split_base(location, &self.site.rec.symbols).0);
                pointed
            }
            _ => (
                object_var(
                    self.site,
                    &format!("deref {pointer} {callee_name}"),
                    pointer,
                    &mut self.objects,
                ),
                false,
            ),
        };
        // A pointer read at a place that moves may differ between iterations.
        let offset = if fixed {
            offset.clone()
        } else {
            self.unknown_offset(e, callee_name)
        };
        (vec![(Some(var), offset)], holder)
    }

    /// The object a pointer read at `location` points to, and whether the pointer is the
    /// same in every iteration.
    fn pointed_object(
        &mut self,
        e: &Effect,
        callee_name: &str,
        location: &Expr,
        pointer: &str,
    ) -> (Var, bool) {
        let site = self.site;
        // The caller's own load of the pointer; not a load of the
        // whole struct at the same address (`d` and `d.p` at +0).
        let known = site
            .rec
            .symbols
            .load_at(&location.to_string())
            .filter(|v| loads_pointer(site, v));
        let var = match known {
            Some(var) => var.clone(),
            None => {
                let member = member_pointer(site, location);
                let var = object_var(
                    site,
                    &format!("deref {location}"),
                    member.as_ref().map_or(pointer, |m| &m.0),
                    &mut self.objects,
                );
                match member {
                    Some((_, member)) => {
                        self.out.members.insert(var.clone(), member);
                    }
                    None => {
                        if let Some(ty) = effect_pointer_type(self.view, &e.ty) {
                            self.out.object_types.entry(var.clone()).or_insert(ty);
                        }
                    }
                }
                let holder = split_base(location, &site.rec.symbols).0;
                self.out.reached.insert(var.clone(), holder);
                var
            }
        };
        // The pointer must be the same in every iteration: read at
        // a place that does not move, and (when the caller reads it
        // too) not a value the loop changes.
        let fixed = location.vars().iter().all(|x| !self.moving.contains(x))
            && !site.variant.contains(&var);
        if known.is_none() && e.is_store {
            let text = format!(
                "the loop does not change the pointer `{pointer}` that `{callee_name}` reads"
            );
            let assumed = Assumption::plain(text);
            if !self.out.assumptions.contains(&assumed) {
                self.out.assumptions.push(assumed);
            }
        }
        (var, fixed)
    }

    /// Bounded work: every pair of accesses is tested, so past a limit a call's accesses are
    /// merged into one per object and direction, at an unknown offset.
    fn merge_past_limit(&mut self) {
        if self.out.accesses.len() <= MAX_CALLEE_ACCESSES {
            return;
        }
        let mut merged: Vec<MemAccess> = Vec::new();
        // By call, direction and bases: a set, not a scan of those kept per access.
        let mut kept = HashSet::new();
        for a in std::mem::take(&mut self.out.accesses) {
            let bases: Vec<Option<Var>> = a.alternatives.iter().map(|(b, _)| b.clone()).collect();
            if !kept.insert((a.inst, a.is_store, bases)) {
                continue;
            }
            let u = self.fresh.named("an offset of a call with many accesses");
            self.out.variant.insert(u.clone());
            let mut a = a;
            a.conditional = true;
            for (_, offset) in a.alternatives.iter_mut() {
                *offset = Expr::var(u.name());
            }
            merged.push(a);
        }
        self.out.accesses = merged;
        self.deref_holders.clear();
    }

    /// A pointer held in an object the loop writes (`local.data = out + i; f(&local)`) may
    /// differ between iterations: the accesses through it are at unknown offsets.
    fn vary_pointers_in_written_objects(&mut self) {
        let site = self.site;
        let mut written: HashSet<Var> = HashSet::new();
        for &block in &site.forest.loop_(site.loop_id).blocks {
            for &v in &site.func.block(block).insts {
                if let InstKind::Store { addr, .. } = site.func.inst(v).kind {
                    for e in site.rec.of(addr) {
                        if let (Some(b), _) = split_base(e, &site.rec.symbols) {
                            written.insert(b);
                        }
                    }
                }
            }
        }
        for a in self.out.accesses.iter().filter(|a| a.is_store) {
            written.extend(a.alternatives.iter().filter_map(|(b, _)| b.clone()));
        }
        for (index, holder) in std::mem::take(&mut self.deref_holders) {
            let moves = holder.as_ref().is_none_or(|h| written.contains(h));
            if let (true, Some(access)) = (moves, self.out.accesses.get_mut(index)) {
                let u = self.fresh.named(&format!(
                    "the pointer {} reads",
                    access.callee.clone().unwrap_or_default()
                ));
                self.out.variant.insert(u.clone());
                for (_, offset) in access.alternatives.iter_mut() {
                    *offset = Expr::var(u.name());
                }
            }
        }
    }
}

/// The side-effect summary of what a call to `name` from unit `unit` reaches, in words
/// (empty for functions that are neither in the program nor modelled library functions).
pub fn describe_callee(summaries: &Summaries, unit: usize, name: &str) -> Vec<String> {
    if let Some(s) = library_summary(name) {
        let names: &[&str] = match name {
            "memset" => &["dest", "c", "n"],
            "memcpy" | "memmove" => &["dest", "src", "n"],
            _ => &["x", "ptr"],
        };
        let names: Vec<Option<String>> = names.iter().map(|n| Some(n.to_string())).collect();
        return s.describe(&names);
    }
    let view = summaries.view();
    match view.resolve(unit, name) {
        Some(f) => summaries.described(f).to_vec(),
        None => Vec::new(),
    }
}

/// The caller's symbol of a global when it has one (then the callee's accesses share the
/// caller's base), else one variable per global named after it.
/// Whether the global `name` the callee reaches (a static of unit `unit`, or an external
/// one when `None`) is `const` and holds no pointer (`globals::unmodifiable`).
fn global_unmodifiable(view: &ProgramView, caller: usize, name: &str, unit: Option<usize>) -> bool {
    global_declared(view, caller, name, unit, false, |program, g| {
        crate::globals::unmodifiable(program, g)
    })
}

/// Whether the global `name` has an arithmetic type (a scalar, not an array or a struct).
fn global_is_arithmetic(
    view: &ProgramView,
    caller: usize,
    name: &str,
    unit: Option<usize>,
) -> bool {
    let arithmetic =
        |p: &frontend::ir::Program, g: &frontend::ir::Global| p.types.is_arithmetic(g.ty);
    global_declared(view, caller, name, unit, true, arithmetic)
        && !global_declared(view, caller, name, unit, true, |p, g| !arithmetic(p, g))
}

/// Whether some declaration of the global `name` the callee reaches (a static of unit
/// `unit`, or an external one when `None`) satisfies `test` (`statics`: a function's
/// `static` local of that name counts). An external global is looked
/// up in the caller's unit, then in every unit of the program: the caller's file need not
/// declare what only its callees name (C requires every declaration of one object to have
/// a compatible type, qualifiers included).
fn global_declared(
    view: &ProgramView,
    caller: usize,
    name: &str,
    unit: Option<usize>,
    statics: bool,
    test: impl Fn(&frontend::ir::Program, &frontend::ir::Global) -> bool,
) -> bool {
    let declared = |u: usize| {
        let program = &view.unit(u).lowered.program;
        let mut found = program
            .globals
            .iter()
            .filter(|g| g.name == name && (g.local_to.is_none() || statics && unit.is_some()))
            .filter(|g| unit.is_some() || u == caller || !g.is_static)
            .peekable();
        found
            .peek()
            .is_some()
            .then(|| found.any(|g| test(program, g)))
    };
    match unit {
        Some(u) => declared(u).unwrap_or(false),
        None => declared(caller)
            .or_else(|| {
                (0..view.units().len())
                    .filter(|&u| u != caller)
                    .find_map(declared)
            })
            .unwrap_or(false),
    }
}

/// The caller's symbol of a global when it has one (then the callee's accesses share the
/// caller's base), else one variable per global named after it.
fn global_var(
    site: &LoopSite,
    name: &str,
    unit: Option<usize>,
    objects: &mut HashMap<String, Var>,
    globals: &mut HashSet<Var>,
) -> Var {
    let program = &site.summaries.view().unit(site.unit).lowered.program;
    if unit.is_none() || unit == Some(site.unit) {
        for v in site.func.values() {
            if let InstKind::GlobalAddr(g) = site.func.inst(v).kind {
                if program.global(g).name == name {
                    if let Some(var) = site.rec.symbol(v) {
                        return var.clone();
                    }
                }
            }
        }
    }
    let key = format!("global {name} {unit:?}");
    if let Some(var) = objects.get(&key) {
        return var.clone();
    }
    // The global reads by its own name unless the loop's report could mean something else
    // by it: a symbol, parameter or local of the caller, another object already named so,
    // or (for a static of another file) a global of the caller's file. Only then is it
    // told apart, as `name@global` (numbered past the first: statics of three files).
    let used = |n: &str| {
        site.rec.symbols.value_of(&Var::new(n)).is_some() || objects.values().any(|v| v.name() == n)
    };
    let caller = site.func;
    let shadowed = used(name)
        || caller
            .params
            .iter()
            .any(|p| p.name.as_deref() == Some(name))
        || caller.slots.iter().any(|s| s.name == name)
        || unit.is_some_and(|u| u != site.unit) && program.globals.iter().any(|g| g.name == name);
    let var = if shadowed {
        let fresh = (1..)
            .map(|k| match k {
                1 => format!("{name}@global"),
                k => format!("{name}@global{k}"),
            })
            .find(|n| !used(n))
            .unwrap_or_default();
        Var::new(&fresh)
    } else {
        Var::new(name)
    };
    objects.insert(key, var.clone());
    globals.insert(var.clone());
    var
}

/// The type a kernel receives the global `name` as: a pointer to its elements when it is an
/// array, to itself otherwise. A static is `unit`'s; an external global (`unit` `None`) is
/// the one object of that name program-wide, typed where a unit defines it (the caller's
/// unit may only declare it `extern`, or not at all). `None` when no unit has it, or when
/// its type cannot be written (an anonymous struct).
fn global_pointer_type(site: &LoopSite, name: &str, unit: Option<usize>) -> Option<String> {
    let view = site.summaries.view();
    let candidates: Vec<usize> = match unit {
        Some(u) => vec![u],
        None => std::iter::once(site.unit)
            .chain((0..view.units().len()).filter(|u| *u != site.unit))
            .collect(),
    };
    candidates.into_iter().find_map(|u| {
        let program = &view.unit(u).lowered.program;
        let global = program
            .globals
            .iter()
            .filter(|g| g.name == name && (unit.is_some() || !g.is_static))
            .min_by_key(|g| g.is_extern)?;
        let types = &program.types;
        match types.array_elem(global.ty) {
            Some(elem) => types.display_pointer_to_writable(elem),
            None => types.display_pointer_to_writable(global.ty),
        }
    })
}

/// A pointer to the type of an effect's element, printed with the table of the unit that
/// defines it; `None` for raw bytes (`memcpy`), which have no element type.
fn effect_pointer_type(view: &crate::program::ProgramView, ty: &EffectType) -> Option<String> {
    match ty {
        EffectType::InUnit(unit, id) => {
            let types = &view.unit(*unit).lowered.program.types;
            types.display_pointer_to_writable(*id)
        }
        EffectType::Scalar(t) => (0..view.units().len()).find_map(|u| {
            let types = &view.unit(u).lowered.program.types;
            types
                .lookup(t)
                .and_then(|id| types.display_pointer_to_writable(id))
        }),
        EffectType::Bytes => None,
    }
}

/// One variable per object the callees reach that the caller has no symbol for, named as
/// the callee spells it unless the caller uses that name for something else.
/// Whether the symbol `v` is a load of a pointer.
fn loads_pointer(site: &LoopSite, v: &Var) -> bool {
    let types = &site.summaries.view().unit(site.unit).lowered.program.types;
    match site.rec.symbols.info(v).map(|s| &s.origin) {
        Some(SymbolOrigin::Load { load, .. }) => types.is_pointer(site.func.inst(*load).ty),
        _ => true,
    }
}

/// The caller's name for the pointer a callee reads at `location` (`holder + offset`), and
/// the member it is, when `holder` is a struct or union of the caller and the offset one of
/// its pointer members': `data.concs`, whatever the callee calls its parameter. `None`
/// elsewhere, and the callee's spelling stays.
fn member_pointer(site: &LoopSite, location: &Expr) -> Option<(String, MemberPointer)> {
    let types = &site.summaries.view().unit(site.unit).lowered.program.types;
    let (holder, at) = split_base(location, &site.rec.symbols);
    let holder = holder?;
    let at = u64::try_from(at.as_integer()?).ok()?;
    let (holder_type, through_pointer) = match site.rec.symbols.info(&holder).map(|s| &s.origin) {
        Some(SymbolOrigin::Param(i)) => (site.func.params[*i as usize].ty, true),
        Some(SymbolOrigin::Load { load, .. }) => (site.func.inst(*load).ty, true),
        Some(SymbolOrigin::Object(v)) => (site.func.inst(*v).ty, false),
        _ => return None,
    };
    let record_type = types.pointee(holder_type)?;
    let Type::Record(record) = types.get(record_type) else {
        return None;
    };
    let field = types
        .record(*record)
        .fields
        .iter()
        .find(|f| f.offset == at && f.bit_width.is_none() && types.is_pointer(f.ty))?;
    let field_name = field.name.clone()?;
    let separator = if through_pointer { "->" } else { "." };
    let name = format!("{}{separator}{field_name}", holder.name());
    let member = MemberPointer {
        holder,
        record: types.display(record_type),
        field: field_name,
        ty: field.ty,
    };
    Some((name, member))
}

fn object_var(site: &LoopSite, key: &str, name: &str, objects: &mut HashMap<String, Var>) -> Var {
    if let Some(var) = objects.get(key) {
        return var.clone();
    }
    let mut candidate = name.to_string();
    let mut k = 2;
    while objects.values().any(|v| v.name() == candidate)
        || site.rec.symbols.value_of(&Var::new(&candidate)).is_some()
    {
        candidate = format!("{name}#{k}");
        k += 1;
    }
    let var = Var::new(&candidate);
    objects.insert(key.to_string(), var.clone());
    var
}

/// The caller unit's id for an access's type: the same type when it is arithmetic or the
/// callee is in the same unit, else a character type (which may alias anything, C99 6.5p7).
fn caller_type(view: &ProgramView, unit: usize, ty: &EffectType) -> Option<TypeId> {
    let types = &view.unit(unit).lowered.program.types;
    let any_char = || {
        types.find(|t| {
            matches!(
                t,
                Type::Int {
                    rank: IntRank::Char,
                    ..
                }
            )
        })
    };
    let any_record = || types.find(|t| matches!(t, Type::Record(_) | Type::Array { .. }));
    match ty {
        EffectType::Scalar(t) => types.lookup(t).or_else(any_char).or_else(any_record),
        EffectType::InUnit(u, id) if *u == unit => Some(*id),
        _ => any_char().or_else(any_record),
    }
}
