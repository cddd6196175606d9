//! Whether two pointers a loop accesses memory through may point into one array (thesis
//! §4.1): the pairs of a store and another access through different pointers, each left to
//! a stated assumption, shown harmless if the pointers coincide, or reported as a may-alias
//! pair (WW110); and the questions about where a pointer comes from that decide it.

use super::{distinct_assumption, Aliasing, FunctionContext, LoopFacts};
use crate::access::MemAccess;
use crate::assumption::Assumption;
use crate::callsites::LoopEffects;
use crate::model::{DependencePair, PairKind};
use crate::rules;
use crate::space::Space;
use analyses::symbols::SymbolOrigin;
use frontend::ir::{InstKind, Span, Value};
use frontend::loops::LoopId;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use symbolic::Var;

/// What a base pointer is, for the aliasing questions: one of the function's symbols, or a
/// base only the loop's callees name.
#[derive(Clone, Debug, PartialEq)]
enum Base {
    Symbol(SymbolOrigin),
    /// A global variable only callees name.
    Global,
    /// Memory a callee reaches through a pointer it loads.
    Loaded,
}

/// A base pointer's name in a message: code in backquotes (`zd`, `x->data`), a description
/// as words (the memory a callee reaches through pointers it reads).
fn quoted(name: &str) -> String {
    if name.contains(' ') {
        name.to_string()
    } else {
        format!("`{name}`")
    }
}

/// The first of each group of accesses that agree on their addresses, size, direction,
/// type and `restrict` pointer, in the order of the accesses.
fn distinct_accesses(accesses: &[MemAccess]) -> Vec<&MemAccess> {
    let mut seen = HashSet::new();
    accesses
        .iter()
        .filter(|a| {
            seen.insert((
                a.alternatives.as_slice(),
                a.elem_bytes,
                a.is_store,
                a.ty,
                a.restrict,
            ))
        })
        .collect()
}

/// The uses of one pair of pointers that may alias: a store, another access, and their
/// bases.
type Uses<'x> = Vec<(&'x MemAccess, &'x MemAccess, &'x Var, &'x Var)>;

/// Whether a pair is harmless if its pointers coincide: no pair conflicts across
/// iterations when both address one array from the same start.
struct SameArray<'x> {
    id: LoopId,
    accesses: &'x [MemAccess],
    dependence_context: Option<&'x (Space, HashSet<Var>)>,
    /// One tester for the loop, made on first use: a loop with many pointers has many
    /// pairs.
    tester: Option<Option<crate::dependence::CarriedTester>>,
}

impl SameArray<'_> {
    /// The assumptions under which every one of `uses` is independent even in one array,
    /// or `None` when that is not shown. Not when a call site is known to pass the
    /// pointers into one array at different offsets.
    fn independent(&mut self, cx: &FunctionContext<'_>, uses: &Uses) -> Option<Vec<Assumption>> {
        let (_, _, sb, ob) = uses[0];
        let overlap_known = match (cx.param_index(sb), cx.param_index(ob)) {
            (Some(i), Some(j)) => cx.aliasing.partially_overlapping(i, j),
            _ => false,
        };
        let (Some((space, variant)), false) = (self.dependence_context, overlap_known) else {
            return None;
        };
        let (id, accesses) = (self.id, self.accesses);
        let tester = self.tester.get_or_insert_with(|| {
            crate::dependence::CarriedTester::new(
                accesses,
                space,
                id,
                variant,
                &crate::dependence::Quotients::new(),
            )
        });
        let mut needed = Vec::new();
        let safe = tester.as_ref().is_some_and(|tester| {
            uses.iter().all(|(store, other, sb, ob)| {
                crate::overlap::independent_if_same_array(
                    store,
                    other,
                    sb,
                    ob,
                    tester,
                    &mut needed,
                    &cx.budget,
                )
            })
        });
        safe.then_some(needed)
    }
}

/// The pairs left to an assumption, gathered over the loop's pairs so that each assumption
/// is stated once for the loop.
#[derive(Default)]
struct AssumedApart {
    /// Pairs left to the aliasing policy's assumption.
    assumed: Vec<String>,
    /// Pairs assumed apart because a lookup handed out one of them, and the lookups.
    looked_up: Vec<String>,
    handed_out: BTreeSet<String>,
}

impl AssumedApart {
    /// Pointers `sb` and `ob` of `pair`, assumed apart.
    fn add(&mut self, cx: &FunctionContext<'_>, pair: &(String, String), sb: &Var, ob: &Var) {
        let mut lookups = cx.lookups_behind(sb);
        lookups.extend(cx.lookups_behind(ob));
        let which = format!("{} and {}", quoted(&pair.0), quoted(&pair.1));
        if lookups.is_empty() {
            self.assumed.push(which);
        } else {
            // The argument is not the call sites but the program's own tables.
            self.looked_up.push(which);
            self.handed_out.extend(lookups);
        }
    }

    /// The assumptions the pairs take, into `facts`.
    fn state(self, facts: &mut LoopFacts) {
        if !self.assumed.is_empty() {
            let which = match self.assumed.as_slice() {
                [one] => one.clone(),
                many => format!("the pairs {}", many.join("; ")),
            };
            facts.assumptions.push(distinct_assumption(&which).into());
        }
        if !self.looked_up.is_empty() {
            let which = match self.looked_up.as_slice() {
                [one] => one.clone(),
                many => format!("the pairs {}", many.join("; ")),
            };
            let names: Vec<String> = self.handed_out.iter().map(|n| format!("`{n}`")).collect();
            facts.assumptions.push(format!(
                "{which} do not overlap: pointers the program keeps and hands out ({}) are assumed to be different arrays (`--aliasing call-sites` drops this assumption)",
                names.join(", ")
            ).into());
        }
    }
}

impl FunctionContext<'_> {
    /// Stores and accesses through different pointers that may point into one array.
    ///
    /// A pair that would not conflict across iterations even if both pointers addressed
    /// the same array (`z[i] = x[i] + 1` called in place) is accepted under the stated
    /// assumption that the pointers either coincide or do not overlap (`overlap`).
    pub(super) fn aliasing_pairs(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        dependence_context: Option<&(Space, HashSet<Var>)>,
        effects: &LoopEffects,
        facts: &mut LoopFacts,
    ) {
        let candidates = self.alias_candidates(id, accesses, effects, facts);
        let mut same_array = SameArray {
            id,
            accesses,
            dependence_context,
            tester: None,
        };
        let mut apart = AssumedApart::default();
        for (pair, uses) in candidates {
            let (_, _, sb, ob) = uses[0];
            if let Some(needed) = same_array.independent(self, &uses) {
                facts.assumptions.extend(needed);
                facts.assumptions.push(format!(
                    "`{}` and `{}` are the same array or do not overlap (an in-place call is fine; a partial overlap, such as passing `p` and `p + 1`, is not checked)",
                    pair.0, pair.1
                ).into());
                continue;
            }
            if self.assumed_distinct(sb, ob) || self.callee_memory_distinct(sb, ob, effects) {
                apart.add(self, &pair, sb, ob);
                continue;
            }
            self.may_alias_finding(&pair, &uses, facts);
        }
        apart.state(facts);
    }

    /// Every pair of a store and another access through pointers that may alias, grouped
    /// by the two pointers (sorted by name). Pairs found apart on the way state in `facts`
    /// what that assumes.
    fn alias_candidates<'x>(
        &self,
        id: LoopId,
        accesses: &'x [MemAccess],
        effects: &LoopEffects,
        facts: &mut LoopFacts,
    ) -> BTreeMap<(String, String), Uses<'x>> {
        let mut candidates: BTreeMap<(String, String), Uses> = BTreeMap::new();
        // Accesses that agree on all a pair's checks read (addresses, size, direction,
        // type, `restrict`) give the same answers: one of each, the first, stands for the
        // others, so the pairs are those of distinct accesses (a body of 10,000
        // `a[i] += b[i + k]` made 10^8 pairs of 2 distinct ones).
        let distinct = distinct_accesses(accesses);
        for store in distinct.iter().copied().filter(|a| a.is_store) {
            let Some(sb) = store.base() else { continue };
            for other in distinct.iter().copied() {
                let Some(ob) = other.base() else { continue };
                if sb == ob || self.is_const_object(ob, effects) {
                    continue;
                }
                if self.apart_as_assumed(id, store, other, effects, facts) {
                    continue;
                }
                let pair = (
                    sb.name().min(ob.name()).to_string(),
                    sb.name().max(ob.name()).to_string(),
                );
                candidates
                    .entry(pair)
                    .or_default()
                    .push((store, other, sb, ob));
            }
        }
        candidates
    }

    /// Whether `store` and `other` (through different bases) cannot touch one array, by
    /// the aliasing policy, the objects' types or a promise of the program's; what that
    /// assumes joins `facts`.
    fn apart_as_assumed(
        &self,
        id: LoopId,
        store: &MemAccess,
        other: &MemAccess,
        effects: &LoopEffects,
        facts: &mut LoopFacts,
    ) -> bool {
        // Both have a base: the caller pairs only such accesses.
        let (Some(sb), Some(ob)) = (store.base(), other.base()) else {
            return false;
        };
        let header = self.forest.loop_(id).header;
        if !self.may_alias_in(sb, ob, Some(effects), Some(header)) {
            // Apart by an assumption of the aliasing policy: `restrict`, where the
            // program declares it, makes it a promise of the program's instead.
            let mut caveats = self.no_alias_caveats(sb, ob);
            if !caveats.is_empty() {
                if let Some(promise) = self.restrict_apart(id, store, other) {
                    caveats = vec![promise];
                }
            }
            for caveat in caveats {
                let caveat = Assumption::plain(caveat);
                if !facts.assumptions.contains(&caveat) {
                    facts.assumptions.push(caveat);
                }
            }
            return true;
        }
        if effects.distinct_objects(sb, ob, &self.rec.symbols)
            || !crate::access::types_may_alias(self.unit, store.ty, other.ty)
        {
            return true;
        }
        if self.member_apart_from_variable(store, other) {
            let caveat: Assumption = "the program follows C's effective-type rule (C99 6.5p7, 6.5.2.3): a store to a struct's member never writes a variable of no struct type".into();
            if !facts.assumptions.contains(&caveat) {
                facts.assumptions.push(caveat);
            }
            return true;
        }
        if let Some(promise) = self.restrict_apart(id, store, other) {
            let promise = Assumption::plain(promise);
            if !facts.assumptions.contains(&promise) {
                facts.assumptions.push(promise);
            }
            return true;
        }
        if let Some(assumption) = (!other.is_store)
            .then(|| self.fields_apart_from_data(ob, sb))
            .flatten()
        {
            let assumption = Assumption::plain(assumption);
            if !facts.assumptions.contains(&assumption) {
                facts.assumptions.push(assumption);
            }
            return true;
        }
        false
    }

    /// A pair nothing shows apart: WW110, and the pair under `needs_evidence` for a
    /// profile to settle.
    fn may_alias_finding(&self, pair: &(String, String), uses: &Uses, facts: &mut LoopFacts) {
        let (store, other, sb, ob) = uses[0];
        let (a, b) = (self.access_text(store), self.access_text(other));
        let copied = self.visibly_copied(sb, ob);
        facts.add(rules::ww110_may_alias::pointers(
            &quoted(&pair.0),
            &quoted(&pair.1),
            &a,
            &b,
            copied,
        ));
        facts.needs_evidence.push(DependencePair {
            kind: PairKind::MayAlias,
            array: format!("{} / {}", pair.0, pair.1),
            first: a,
            second: b,
            distance: None,
        });
    }

    /// Whether a base pointer is one the function received: a parameter, the copy of a
    /// struct passed by value, or a pointer loaded from memory reached from a parameter, a
    /// global or such a copy (`z->content->data`, `d.p`).
    pub(super) fn is_received(&self, base: &Var) -> bool {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(_)) => true,
            // The copy of a struct passed by value (`d` of `D d`): what the caller passed.
            Some(SymbolOrigin::Object(v)) => {
                matches!(self.func.inst(*v).kind, InstKind::SlotAddr(_))
                    && self.reaches_received(*v)
            }
            Some(SymbolOrigin::Load { address, .. }) => self.reaches_received(*address),
            Some(SymbolOrigin::Opaque(v) | SymbolOrigin::Phi(v)) => {
                self.received_params(*v).is_some()
            }
            _ => false,
        }
    }

    /// The lookup functions a base pointer comes from (`cs_field_by_id` for
    /// `cs_field_by_id(id)->val`), through casts, phis, fields, offsets and loads.
    fn lookups_behind(&self, base: &Var) -> Vec<String> {
        let Some(start) = self
            .rec
            .symbols
            .info(base)
            .and_then(|s| self.origin_value(&s.origin))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            if !seen.insert(v) || seen.len() > 64 {
                continue;
            }
            match &self.func.inst(v).kind {
                InstKind::Call {
                    callee: frontend::ir::Callee::Direct(name),
                    ..
                } if self.lookups.is_lookup(name) => out.push(name.clone()),
                InstKind::Cast(x) | InstKind::Load { addr: x } => stack.push(*x),
                InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => {
                    stack.push(*base)
                }
                InstKind::Phi(args) => stack.extend(args.iter().map(|(_, a)| *a)),
                InstKind::Select {
                    then_value,
                    else_value,
                    ..
                } => stack.extend([*then_value, *else_value]),
                _ => {}
            }
        }
        out
    }

    /// Whether an address lies in memory the function was given: reached from a parameter,
    /// a global or a lookup's result through offsets, fields and loaded pointers
    /// (`z->content->data`, `X[i]->data`, `cs_field_by_id(id)->val`), not in a local object
    /// such as a table of row pointers the function fills itself.
    fn reaches_received(&self, addr: Value) -> bool {
        let copies = self.param_copies.get_or_init(|| {
            crate::escape::param_copies(self.summaries.view(), self.unit_index, self.func)
        });
        crate::lookups::reaches_received(
            self.func,
            addr,
            &|name| self.lookups.is_lookup(name),
            &|slot| copies.contains_key(&slot),
        )
    }

    /// The parameters among a pointer's values (through casts and phis), whatever the
    /// others are.
    fn params_among(&self, v: Value) -> Vec<u32> {
        crate::merged::leaves(self.func, v)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|x| match self.func.inst(x).kind {
                InstKind::Param(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// The parameters a pointer may be, when each of its values (through casts and phis) is
    /// a parameter, null, a pointer loaded from received memory or a lookup's result
    /// (`_pvar = pvar != NULL ? pvar : pvara`, `v = cs_field_by_id(id)->val`).
    fn received_params(&self, v: Value) -> Option<Vec<u32>> {
        let mut params = Vec::new();
        for x in crate::merged::leaves(self.func, v)? {
            match &self.func.inst(x).kind {
                InstKind::Param(i) => params.push(*i),
                InstKind::Load { addr } if self.reaches_received(*addr) => {}
                InstKind::Call {
                    callee: frontend::ir::Callee::Direct(name),
                    ..
                } if self.lookups.is_lookup(name) => {}
                _ if crate::merged::is_null(self.func, x) => {}
                _ => return None,
            }
        }
        Some(params)
    }

    /// A pointer that is new memory or a received one (`_aux_vectors = aux_vectors`, or a
    /// fresh `BFT_MALLOC` when the caller's buffer is too small) against a pointer that
    /// existed before any allocation (parameters, and phis of them): when it is the new
    /// memory the two cannot meet, and when it is the received one the policy's assumption
    /// applies as for any two received pointers.
    fn received_or_new(&self, a: &Var, b: &Var) -> bool {
        let sources = |v: &Var| -> Option<(bool, bool)> {
            // (has new memory, has loaded pointers) over the pointer's values.
            let start = match self.rec.symbols.info(v).map(|s| &s.origin)? {
                SymbolOrigin::Param(_) => return Some((false, false)),
                SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => *x,
                _ => return None,
            };
            let (mut new, mut loaded) = (false, false);
            for x in crate::merged::leaves(self.func, start)? {
                match &self.func.inst(x).kind {
                    InstKind::Param(_) => {}
                    InstKind::Load { addr } if self.reaches_received(*addr) => loaded = true,
                    _ if self.fresh.is_allocation(x) => new = true,
                    _ if crate::merged::is_null(self.func, x) => {}
                    _ => return None,
                }
            }
            Some((new, loaded))
        };
        match (sources(a), sources(b)) {
            (Some((new_a, loaded_a)), Some((new_b, loaded_b))) => {
                // New memory may be what a loaded pointer holds once its address is stored:
                // only parameters (fixed at entry) on the other side.
                (new_a || new_b) && !(new_a && (new_b || loaded_b)) && !(new_b && loaded_a)
            }
            _ => false,
        }
    }

    /// Whether two base pointers that may alias are assumed not to overlap under the
    /// [`Aliasing::Distinct`] policy: both are pointers the function received (parameters,
    /// or pointers loaded from memory, such as `z->content->data`), and no call site passes
    /// the two parameters into one object. Locals, globals, call results and pointers the
    /// function computes itself are never assumed.
    pub(super) fn assumed_distinct(&self, a: &Var, b: &Var) -> bool {
        self.distinct_by_policy(a, b, self.aliasing_policy)
    }

    /// The [`Aliasing::Distinct`] policy for memory a callee reaches through a pointer it
    /// reads (`t->all_shortest` inside `f(t)`, the nodes of a tree `search(root, ...)`
    /// descends): memory the function was given, reached through loaded pointers, as
    /// `z->content->data` loaded by the function itself is. Pointers read from memory the
    /// summary does not name are read from the callee's own reads of received memory,
    /// globals, or memory it allocated (which nothing of the caller points into).
    fn callee_memory_distinct(
        &self,
        a: &Var,
        b: &Var,
        effects: &crate::callsites::LoopEffects,
    ) -> bool {
        if self.aliasing_policy != Aliasing::Distinct || a == b || self.visibly_copied(a, b) {
            return false;
        }
        let reached = |v: &Var| effects.reached_through(v, |h| self.is_received(h));
        let received = |v: &Var| self.is_received(v) || reached(v);
        (reached(a) || reached(b)) && received(a) && received(b)
    }

    /// [`Self::assumed_distinct`] under the given policy (to tell what the default would
    /// assume when the strict one is in force).
    pub(super) fn distinct_by_policy(&self, a: &Var, b: &Var, policy: Aliasing) -> bool {
        if policy != Aliasing::Distinct {
            return false;
        }
        let received = self.is_received(a) && self.is_received(b);
        if !received && !self.received_or_new(a, b) {
            return false;
        }
        // The program itself may make the two equal (`u1 = u2;` around the loop).
        if self.visibly_copied(a, b) {
            return false;
        }
        // A pointer the function itself stores to memory may be what it loads back
        // (`f->val = out; v = f->val;`): the function makes the overlap, no caller does.
        if self.stored_before_obtained(a, b) || self.stored_before_obtained(b, a) {
            return false;
        }
        // The parameters each side may be: no call site may pass any two into one object.
        let params = |v: &Var| match self.rec.symbols.info(v).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => vec![*i],
            Some(SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x)) => self
                .received_params(*x)
                .unwrap_or_else(|| self.params_among(*x)),
            _ => Vec::new(),
        };
        let (pa, pb) = (params(a), params(b));
        !pa.iter().any(|i| {
            pb.iter()
                .any(|j| i == j || self.aliasing.shares_object(*i as usize, *j as usize))
        })
    }

    /// Whether the program copies the pointer one base symbol holds into the other's (see
    /// `copies`): then no policy may assume them apart.
    fn visibly_copied(&self, a: &Var, b: &Var) -> bool {
        let value = |v: &Var| match self.rec.symbols.info(v).map(|s| &s.origin)? {
            SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => Some(*x),
            SymbolOrigin::Load { load, .. } => Some(*load),
            SymbolOrigin::Param(i) => self
                .func
                .values()
                .find(|x| matches!(self.func.inst(*x).kind, InstKind::Param(p) if p == *i)),
            _ => None,
        };
        let (Some(x), Some(y)) = (value(a), value(b)) else {
            return false;
        };
        let functions = &self.unit.lowered.program.functions;
        let Some(index) = functions.iter().position(|f| std::ptr::eq(f, self.func)) else {
            return false;
        };
        let me = crate::program::FuncRef {
            unit: self.unit_index,
            index,
        };
        crate::copies::may_meet(self.summaries.view(), me, x, y)
    }

    /// The parameter index a base pointer symbol stands for.
    fn param_index(&self, base: &Var) -> Option<usize> {
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => Some(*i as usize),
            _ => None,
        }
    }

    /// Whether `base` is an object no store of a correct program modifies: a global (C99
    /// 6.7.3p5, see `globals::unmodifiable`), one of this function's or one only its
    /// callees name, or a string literal.
    fn is_const_object(&self, base: &Var, effects: &crate::callsites::LoopEffects) -> bool {
        if effects.const_globals.contains(base) {
            return true;
        }
        // A string literal: a program that modifies one is undefined (C99 6.4.5p6), so no
        // store of the loop writes it (`note(__FILE__, i)` beside `out[i] = ...`).
        if let Some(SymbolOrigin::Object(v)) = self.rec.symbols.info(base).map(|s| &s.origin) {
            if matches!(self.func.inst(*v).kind, InstKind::StringAddr(_)) {
                return true;
            }
        }
        let program = &self.unit.lowered.program;
        crate::globals::global_of(self.func, self.rec, base)
            .is_some_and(|g| crate::globals::unmodifiable(program, program.global(g)))
    }

    /// Whether accesses `a` and `b` go through two different `restrict`-qualified pointers
    /// declared in one block outside the body of loop `id`: the whole loop then runs in
    /// one execution of that block, where (C99 6.7.3.1) an object modified through one of
    /// them is accessed through no other pointer, and neither may be based on the other
    /// (p4). Returns the promise to state, as the loop's verdict depends on it.
    pub(super) fn restrict_apart(
        &self,
        id: LoopId,
        a: &MemAccess,
        b: &MemAccess,
    ) -> Option<String> {
        let (ra, rb) = (a.restrict?, b.restrict?);
        if ra == rb {
            return None;
        }
        let table = &self.func.restrict_pointers;
        let (pa, pb) = (table.get(ra as usize)?, table.get(rb as usize)?);
        if pa.scope != pb.scope {
            return None;
        }
        let body = self
            .func
            .source_loop(self.forest.loop_(id).source?)
            .body_span;
        let inside = |s: Span| s.start >= body.start && s.end <= body.end;
        if inside(pa.decl) || inside(pb.decl) {
            return None;
        }
        let (x, y) = (
            pa.name.as_str().min(&pb.name),
            pa.name.as_str().max(&pb.name),
        );
        Some(format!(
            "`{x}` and `{y}` do not overlap where the loop writes through either, as their `restrict` qualifiers promise"
        ))
    }

    /// Whether a base pointer points to a struct (its accesses read fields).
    /// The assumption that stores through `data`, a pointer to data (not to a struct), leave
    /// the fields of the struct `*object` alone: a field (`in_image->width`) is not expected
    /// to live inside a data array. Assumed, and said so; `None` when the pointers are not
    /// of those kinds. The dependence test and the bound check make it alike, so a report
    /// never assumes a field unchanged in one place and calls it variant in the other.
    pub(super) fn fields_apart_from_data(&self, object: &Var, data: &Var) -> Option<String> {
        (self.is_struct_pointer(object) && !self.is_struct_pointer(data))
            .then(|| format!("stores through `{data}` do not modify the struct `*{object}`"))
    }

    fn is_struct_pointer(&self, base: &Var) -> bool {
        let types = &self.unit.lowered.program.types;
        let ty = match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(SymbolOrigin::Param(i)) => self.func.params[*i as usize].ty,
            Some(SymbolOrigin::Load { load, .. }) => self.func.inst(*load).ty,
            _ => return false,
        };
        types
            .pointee(ty)
            .is_some_and(|p| matches!(types.get(p), frontend::types::Type::Record(_)))
    }

    pub(super) fn may_alias(&self, a: &Var, b: &Var) -> bool {
        self.may_alias_in(a, b, None, None)
    }

    /// Whether base `v` is a static whose address the program never takes: one this
    /// function names itself, or one only the loop's callees name (`effects`).
    fn is_sealed_static(&self, v: &Var, effects: Option<&crate::callsites::LoopEffects>) -> bool {
        if effects.is_some_and(|e| e.sealed_globals.contains(v)) {
            return true;
        }
        crate::globals::global_of(self.func, self.rec, v)
            .is_some_and(|g| self.summaries.view().sealed_static(self.unit_index, g))
    }

    /// [`Self::may_alias`] for the loop whose header is `header`, knowing the bases the
    /// loop's callees name (`effects`): a global only a callee names, memory a callee
    /// reaches through a pointer it loads. Only what happens to an address before the loop
    /// can run matters (a buffer freed after the loop still counts as unreached).
    fn may_alias_in(
        &self,
        a: &Var,
        b: &Var,
        effects: Option<&crate::callsites::LoopEffects>,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        // A static whose address the program never takes is reached through no pointer:
        // it overlaps nothing but itself (see `sealed`).
        if a != b && (self.is_sealed_static(a, effects) || self.is_sealed_static(b, effects)) {
            return false;
        }
        let origin = |v: &Var| match self.rec.symbols.info(v) {
            Some(s) => Some(Base::Symbol(s.origin.clone())),
            None if effects.is_some_and(|e| e.globals.contains(v)) => Some(Base::Global),
            None if effects.is_some_and(|e| e.reached.contains_key(v)) => Some(Base::Loaded),
            None => None,
        };
        let (Some(oa), Some(ob)) = (origin(a), origin(b)) else {
            return true;
        };
        let (oa, ob) = match (oa, ob) {
            (Base::Symbol(x), Base::Symbol(y)) => (x, y),
            (Base::Symbol(x), other) | (other, Base::Symbol(x)) => {
                // A local array cannot be reached through anything but itself.
                if let SymbolOrigin::Object(v) = x {
                    if matches!(self.func.inst(v).kind, InstKind::SlotAddr(_)) {
                        return false;
                    }
                }
                return !self.apart_from_callee_base(&x, other, header);
            }
            _ => return true,
        };

        match (&oa, &ob) {
            (SymbolOrigin::Param(i), SymbolOrigin::Param(j)) => {
                return !self.aliasing.disjoint(*i as usize, *j as usize);
            }
            // A local array cannot be reached through anything but itself at loop entry.
            (SymbolOrigin::Object(x), _) | (_, SymbolOrigin::Object(x))
                if matches!(self.func.inst(*x).kind, InstKind::SlotAddr(_)) =>
            {
                return false;
            }
            // Different memory objects (each object has one symbol) never overlap.
            (SymbolOrigin::Object(_), SymbolOrigin::Object(_)) => return false,
            _ => {}
        }
        // Memory an allocation call of this function returned (`malloc`, or a program
        // function returning only what an allocator gave) is a new object: no parameter or
        // named object can point into it, nor any other pointer while its address goes
        // nowhere (not stored, not passed to a call that keeps it, not returned). The same
        // for a pointer that is such an allocation or null on every path.
        for (mine, other) in [(&oa, &ob), (&ob, &oa)] {
            if let Some(sources) = self.fresh_sources(mine) {
                return !self.outside_new_memory(&sources, other, header);
            }
        }
        // A `restrict` parameter: what it points to and is modified is reached only
        // through it (C99 6.7.3.1), unless the function itself derives another pointer from
        // it (a copy through memory, a call that returns it, a phi).
        for (mine, other) in [(&oa, &ob), (&ob, &oa)] {
            if let Some(reach) = self.unshared_restrict(mine, header) {
                if self
                    .origin_value(other)
                    .is_some_and(|v| !reach.derived.contains(&v))
                {
                    return false;
                }
            }
        }
        true
    }

    /// Whether a base of the function and one only a callee names (a global, memory reached
    /// through a loaded pointer) never overlap: new memory whose address goes nowhere, and a
    /// `restrict` parameter the function keeps to itself, are reached by nothing else.
    fn apart_from_callee_base(
        &self,
        mine: &SymbolOrigin,
        other: Base,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        if let Some(sources) = self.fresh_sources(mine) {
            return other == Base::Global || self.unreached(&self.fresh.reach(&sources), header);
        }
        self.unshared_restrict(mine, header).is_some()
    }

    /// Whether no way out of `reach` happens before the loop of `header` can run (before
    /// any point of the function, without a loop).
    pub(super) fn unreached(
        &self,
        reach: &crate::escape::Reach,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        match header {
            Some(h) => reach.escape_before(self.func, h).is_none(),
            None => reach.escape().is_none(),
        }
    }

    /// The values derived from a `restrict` parameter, when `origin` is one whose address the
    /// function keeps to itself (never stored, returned or passed to a call that keeps it).
    fn unshared_restrict(
        &self,
        origin: &SymbolOrigin,
        header: Option<frontend::ir::Block>,
    ) -> Option<std::rc::Rc<crate::escape::Reach>> {
        let SymbolOrigin::Param(i) = origin else {
            return None;
        };
        let param = self.func.params.get(*i as usize)?;
        let types = &self.unit.lowered.program.types;
        let restrict = matches!(
            types.get(param.ty),
            frontend::types::Type::Pointer { restrict: true, .. }
        );
        if !restrict || param.slot.is_some() {
            return None;
        }
        let reach = self.fresh.reach_of(vec![param.value]);
        self.unreached(&reach, header).then_some(reach)
    }

    /// Whether the function stores the pointer `stored` (or one derived from it) to memory
    /// before it obtains `obtained` (a load, a call, a phi): the function itself may then
    /// have made `obtained` point where `stored` does (`f->val = out; v = f->val;`). A
    /// parameter's value is fixed at entry: no store changes it.
    fn stored_before_obtained(&self, stored: &Var, obtained: &Var) -> bool {
        let value = |v: &Var| {
            self.rec
                .symbols
                .info(v)
                .and_then(|s| self.origin_value(&s.origin))
        };
        let (Some(stored), Some(obtained)) = (value(stored), value(obtained)) else {
            return false;
        };
        if matches!(self.func.inst(obtained).kind, InstKind::Param(_)) {
            return false;
        }
        let at = self.func.inst(obtained).block;
        self.fresh
            .reach_of(vec![stored])
            .escapes
            .iter()
            .any(|(from, why)| {
                why == crate::escape::STORED && crate::escape::reaches_block(self.func, *from, at)
            })
    }

    /// The allocation calls a base pointer may hold, when it holds nothing else (or null).
    fn fresh_sources(&self, origin: &SymbolOrigin) -> Option<std::collections::BTreeSet<u32>> {
        match origin {
            SymbolOrigin::Opaque(x) | SymbolOrigin::Phi(x) => self.fresh.sources(*x),
            _ => None,
        }
    }

    /// Whether a base pointer of origin `other` cannot point into the new memory of the
    /// allocation calls `sources`.
    fn outside_new_memory(
        &self,
        sources: &std::collections::BTreeSet<u32>,
        other: &SymbolOrigin,
        header: Option<frontend::ir::Block>,
    ) -> bool {
        if matches!(other, SymbolOrigin::Param(_) | SymbolOrigin::Object(_)) {
            return true;
        }
        if let Some(theirs) = self.fresh_sources(other) {
            return theirs.is_disjoint(sources);
        }
        if self
            .origin_value(other)
            .is_some_and(|v| self.obtained_before(v, sources))
        {
            return true;
        }
        let reach = self.fresh.reach(sources);
        self.unreached(&reach, header)
            && self
                .origin_value(other)
                .is_some_and(|v| !reach.derived.contains(&v))
    }

    /// Whether value `v` is computed before every allocation call in `sources`, all of them
    /// outside every loop of the function (so no later execution of `v` can come between an
    /// allocation and the loop): a pointer the function held before a block existed cannot
    /// point into it, whatever happens to the block's address afterwards (a pointer into a
    /// freed block the allocator reuses is indeterminate, C99 6.2.4p2). code_saturne's
    /// `v_slope_test = _get_v_slope_test(..)` before `BFT_MALLOC(grad, ..)`.
    fn obtained_before(&self, v: Value, sources: &std::collections::BTreeSet<u32>) -> bool {
        let at = self.func.inst(v).block;
        if self.forest.innermost(at).is_some() {
            return false;
        }
        sources.iter().all(|&s| {
            let s = Value(s);
            let block = self.func.inst(s).block;
            self.forest.innermost(block).is_none()
                && if block == at {
                    // Values are numbered in block order.
                    v.index() < s.index()
                } else {
                    self.forest.dominates(at, block)
                }
        })
    }

    /// The IR value a symbol stands for.
    fn origin_value(&self, origin: &SymbolOrigin) -> Option<Value> {
        match origin {
            SymbolOrigin::Param(i) => self.func.params.get(*i as usize).map(|p| p.value),
            SymbolOrigin::Induction(v)
            | SymbolOrigin::Object(v)
            | SymbolOrigin::Phi(v)
            | SymbolOrigin::Opaque(v) => Some(*v),
            SymbolOrigin::Load { load, .. } => Some(*load),
        }
    }

    /// What "`a` and `b` never overlap" rests on beyond C's rules: the program allocators
    /// whose new memory it relies on that also keep a copy of the address.
    fn no_alias_caveats(&self, a: &Var, b: &Var) -> Vec<String> {
        let mut out = Vec::new();
        for v in [a, b] {
            let origin = self.rec.symbols.info(v).map(|s| s.origin.clone());
            if let Some(sources) = origin.as_ref().and_then(|o| self.fresh_sources(o)) {
                out.extend(self.fresh.caveats(&sources));
            }
        }
        out
    }
}
