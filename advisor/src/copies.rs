//! Pointers the program visibly copies into one another. The default aliasing policy
//! assumes that two pointers a function receives do not overlap; that assumption is never
//! taken for two pointers whose values the program itself makes equal: a global assigned
//! from another (`u1 = u2;` after a time step), a local carried around a loop
//! (`stencil(u1, u2); u1 = u2;`), a parameter given a global that another global was
//! copied from, a struct member assigned from another (`g->cur = g->next;`, for every
//! object of that struct type). A swap (`t = u1; u1 = u2; u2 = t;`) permutes distinct
//! objects and keeps them distinct, so it does not count, also after the swapped places
//! were first given distinct values (`g.cur = u1; g.next = u2;`).

use crate::program::{FuncRef, ProgramView};
use crate::program_facts::{GlobalCopies, Home};
use frontend::ir::{Constant, Function, InstKind, Value};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Values followed per question; a longer chain counts as no visible copy (the policy's
/// assumption then stands, as it did before this check).
const LIMIT: usize = 256;

impl ProgramView<'_> {
    /// The program's copies between globals (see [`GlobalCopies`]), found once.
    pub fn global_copies(&self) -> &GlobalCopies {
        self.global_copies_found_by(|| global_copies(self))
    }
}

/// The home `addr` names: a global's address plus constant field and index offsets, or a
/// member of a struct reached through a pointer (`s->y`), which stands for that member of
/// every object of the struct's type: a copy `s->y = s->x` anywhere makes the two members
/// of any object possibly one pointer.
pub fn home_of_address(view: &ProgramView, f: FuncRef, addr: Value) -> Option<Home> {
    let func = view.function(f);
    let program = view.program(f);
    let mut offset: u64 = 0;
    let mut at = addr;
    let mut through_member = false;
    for _ in 0..LIMIT {
        match &func.inst(at).kind {
            _ if through_member && !is_address_step(&func.inst(at).kind) => {
                return member_home(view, f, at, offset);
            }
            InstKind::GlobalAddr(g) => {
                let global = program.global(*g);
                let unit = (global.is_static || global.local_to.is_some()).then_some(f.unit);
                return Some(Home {
                    unit,
                    name: global.name.clone(),
                    offset,
                    member: false,
                });
            }
            InstKind::FieldAddr {
                base, offset: o, ..
            } => {
                offset = offset.checked_add(*o)?;
                at = *base;
                through_member = true;
            }
            InstKind::PtrAdd { base, index, scale } => {
                let InstKind::Const(Constant::Int(k)) = func.inst(*index).kind else {
                    return None;
                };
                let step = u64::try_from(k).ok()?.checked_mul(*scale)?;
                offset = offset.checked_add(step)?;
                at = *base;
            }
            InstKind::Cast(inner) => at = *inner,
            _ => return None,
        }
    }
    None
}

/// Whether `kind` moves within one object (what [`home_of_address`] walks through).
fn is_address_step(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::GlobalAddr(_)
            | InstKind::FieldAddr { .. }
            | InstKind::PtrAdd { .. }
            | InstKind::Cast(_)
    )
}

/// The home of the member at `offset` of the struct `pointer` points to, named by the
/// struct's tag (or its typedef name) so that every unit names it alike; `None` for a
/// struct with neither (its members are then not followed).
fn member_home(view: &ProgramView, f: FuncRef, pointer: Value, offset: u64) -> Option<Home> {
    let types = &view.program(f).types;
    let pointee = types.pointee(view.function(f).inst(pointer).ty)?;
    let frontend::types::Type::Record(id) = types.get(pointee) else {
        return None;
    };
    let record = types.record(*id);
    let name = record.tag.as_ref().or(record.typedef_name.as_ref())?;
    let kind = if record.is_union { "union" } else { "struct" };
    Some(Home {
        unit: None,
        name: format!("{kind} {name}"),
        offset,
        member: true,
    })
}

/// The homes whose loaded value `v` may be in function `f`, following a parameter to the
/// arguments its callers pass (one level).
fn homes_of_value(view: &ProgramView, f: FuncRef, v: Value, through_calls: bool) -> Vec<Home> {
    let func = view.function(f);
    let mut homes = Vec::new();
    for x in crate::merged::object_leaves(func, v, LIMIT).unwrap_or_default() {
        match &func.inst(x).kind {
            InstKind::Load { addr } => homes.extend(home_of_address(view, f, *addr)),
            InstKind::Param(i) if through_calls => {
                let Some(callers) = view.call_index().callers.get(&f) else {
                    continue;
                };
                for (caller, args) in callers.iter().take(LIMIT) {
                    if let Some(arg) = args.get(*i as usize) {
                        homes.extend(homes_of_value(view, *caller, *arg, false));
                    }
                }
            }
            _ => {}
        }
    }
    homes
}

/// Every store into a home of a value loaded from another home, as edges of a graph, and
/// its components.
fn global_copies(view: &ProgramView) -> GlobalCopies {
    let mut edges: BTreeSet<(Home, Home)> = BTreeSet::new();
    for f in view.functions() {
        let func = view.function(f);
        for inst in &func.insts {
            let InstKind::Store { addr, value } = &inst.kind else {
                continue;
            };
            if !view.program(f).types.is_pointer(inst.ty) {
                continue;
            }
            let Some(to) = home_of_address(view, f, *addr) else {
                continue;
            };
            for from in homes_of_value(view, f, *value, true) {
                if from != to {
                    edges.insert((from, to.clone()));
                }
            }
        }
    }
    let mut index: HashMap<Home, usize> = HashMap::new();
    for (a, b) in &edges {
        for h in [a, b] {
            let next = index.len();
            index.entry(h.clone()).or_insert(next);
        }
    }
    let mut parent: Vec<usize> = (0..index.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let (mut ins, mut outs) = (vec![0usize; index.len()], vec![0usize; index.len()]);
    for (a, b) in &edges {
        let (x, y) = (index[a], index[b]);
        outs[x] += 1;
        ins[y] += 1;
        let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
        parent[rx] = ry;
    }
    // Per ring home (one that receives): how many values it receives from other ring
    // homes and from sources (homes that receive none).
    let (mut from_ring, mut from_sources) = (vec![0usize; index.len()], vec![0usize; index.len()]);
    for (a, b) in &edges {
        let (x, y) = (index[a], index[b]);
        if ins[x] == 0 {
            from_sources[y] += 1;
        } else {
            from_ring[y] += 1;
        }
    }
    let mut component_of_root: HashMap<usize, usize> = HashMap::new();
    let mut permutation: Vec<bool> = Vec::new();
    let mut component = HashMap::new();
    let mut sources = HashSet::new();
    for (home, &i) in &index {
        let root = find(&mut parent, i);
        let c = *component_of_root.entry(root).or_insert_with(|| {
            permutation.push(true);
            permutation.len() - 1
        });
        let fits = if ins[i] == 0 {
            sources.insert(home.clone());
            outs[i] == 1
        } else {
            // (`a = b;` alone gives `a` no value from the ring: not a permutation)
            from_ring[i] == 1 && outs[i] == 1 && from_sources[i] <= 1
        };
        if !fits {
            permutation[c] = false;
        }
        component.insert(home.clone(), c);
    }
    sources.retain(|h| permutation[component[h]]);
    let mut givers: HashMap<Home, Vec<Home>> = HashMap::new();
    for (from, to) in edges {
        givers.entry(to).or_default().push(from);
    }
    GlobalCopies {
        component,
        permutation,
        sources,
        givers,
    }
}

/// Whether values `a` and `b` of function `f` may be one pointer because the program copies
/// one into the other (see the module's comment). Loop-carried values are compared edge by
/// edge: two merges of one block meet only if some incoming edge brings meeting values, so
/// a swap across the back edge keeps them apart while a copy does not.
pub fn may_meet(view: &ProgramView, f: FuncRef, a: Value, b: Value) -> bool {
    let mut search = Meet {
        view,
        f,
        func: view.function(f),
        assumed: HashSet::new(),
    };
    search.meet(a, b)
}

struct Meet<'v, 'a> {
    view: &'v ProgramView<'a>,
    f: FuncRef,
    func: &'a Function,
    /// Pairs under comparison: assumed apart while their merges are followed (the proof
    /// is by induction over the loop's iterations).
    assumed: HashSet<(Value, Value)>,
}

impl Meet<'_, '_> {
    /// The pointer `v` is an offset of (casts and pointer arithmetic keep the object).
    fn object(&self, mut v: Value) -> Value {
        for _ in 0..LIMIT {
            match &self.func.inst(v).kind {
                InstKind::Cast(inner) => v = *inner,
                InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => v = *base,
                _ => break,
            }
        }
        v
    }

    fn meet(&mut self, a: Value, b: Value) -> bool {
        let (a, b) = (self.object(a), self.object(b));
        if a == b {
            return true;
        }
        if self.assumed.len() > LIMIT || !self.assumed.insert((a.min(b), a.max(b))) {
            return false;
        }
        let (ka, kb) = (&self.func.inst(a).kind, &self.func.inst(b).kind);
        match (ka, kb) {
            (InstKind::Phi(pa), InstKind::Phi(pb))
                if self.func.inst(a).block == self.func.inst(b).block =>
            {
                let (pa, pb) = (pa.clone(), pb.clone());
                pa.iter().any(|(edge, va)| {
                    pb.iter()
                        .filter(|(e, _)| e == edge)
                        .any(|(_, vb)| self.meet(*va, *vb))
                })
            }
            (InstKind::Phi(pa), _) => {
                let pa = pa.clone();
                pa.iter().any(|(_, va)| self.meet(*va, b))
            }
            (_, InstKind::Phi(pb)) => {
                let pb = pb.clone();
                pb.iter().any(|(_, vb)| self.meet(a, *vb))
            }
            (
                InstKind::Select {
                    then_value,
                    else_value,
                    ..
                },
                _,
            ) => {
                let (t, e) = (*then_value, *else_value);
                self.meet(t, b) || self.meet(e, b)
            }
            (
                _,
                InstKind::Select {
                    then_value,
                    else_value,
                    ..
                },
            ) => {
                let (t, e) = (*then_value, *else_value);
                self.meet(a, t) || self.meet(a, e)
            }
            (InstKind::Load { .. } | InstKind::Param(_), InstKind::Load { .. })
            | (InstKind::Load { .. }, InstKind::Param(_)) => self.homes_related(a, b),
            _ => false,
        }
    }

    /// Whether loaded (or received) pointers `a` and `b` come from homes the program
    /// copies into one another. Two parameters are left to the call sites' own check.
    fn homes_related(&self, a: Value, b: Value) -> bool {
        let copies = self.view.global_copies();
        let ha = homes_of_value(self.view, self.f, a, true);
        if ha.is_empty() {
            return false;
        }
        let hb = homes_of_value(self.view, self.f, b, true);
        ha.iter().any(|x| hb.iter().any(|y| copies.related(x, y)))
    }
}
