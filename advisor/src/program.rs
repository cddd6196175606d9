//! One view over every translation unit analysed together: which function a call names,
//! program-wide. A `static` function is visible only in its own unit; any other definition is
//! visible from every unit (C's external linkage), so a call resolves to the caller's own
//! unit first and then to a non-static definition elsewhere.

use crate::program_facts::{
    Allocations, GlobalCopies, Keeper, ParamFlow, ProgramAllocator, SealedStatics,
};
use frontend::ir::{Callee, Function, InstKind, Value};
use frontend::unit::Unit;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// A function of the program: the unit it is defined in and its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncRef {
    pub unit: usize,
    pub index: usize,
}

/// Every unit of the program, with an index of the functions each defines.
#[derive(Debug)]
pub struct ProgramView<'a> {
    units: Vec<&'a Unit>,
    /// Non-static definitions by name, in unit order.
    external: HashMap<String, Vec<FuncRef>>,
    /// Every definition by (unit, name).
    local: HashMap<(usize, String), FuncRef>,
    /// Functions declared but defined in no unit: the first declaration's unit and span.
    declarations: HashMap<String, (usize, frontend::ir::Span)>,
    /// Who calls whom with which arguments, made on first use (see [`CallIndex`]).
    calls: OnceLock<CallIndex>,
    /// The functions that return new memory, found on first use (by `fresh`, which defines
    /// `ProgramView::allocators`).
    allocators: OnceLock<HashMap<FuncRef, ProgramAllocator>>,
    /// The functions that return a pointer the program keeps in memory, found on first use
    /// (by `lookups`, which defines `ProgramView::lookups`).
    lookups: OnceLock<HashMap<FuncRef, ()>>,
    /// Which globals the program copies into one another, found on first use (by `copies`,
    /// which defines `ProgramView::global_copies`).
    global_copies: OnceLock<GlobalCopies>,
    /// The functions that never return and how they leave, found on first use (by
    /// `noreturn`, which defines `ProgramView::endings`).
    endings: OnceLock<HashMap<FuncRef, crate::model::ErrorEnd>>,
    /// Whether a function keeps the pointer it receives at a position (answers of
    /// `escape::callee_captures`), and what each parameter does itself, found on first use.
    captures: Mutex<HashMap<(FuncRef, usize), bool>>,
    param_flows: Mutex<HashMap<(FuncRef, usize), Arc<ParamFlow>>>,
    /// Every name each function reaches through calls (`calls::reachable`), found on first
    /// use: each call in each loop asks, and a walk of the call graph per question made a
    /// large program's calls quadratic.
    reached: Mutex<HashMap<FuncRef, Arc<Reached>>>,
    /// The allocations each kept pointer can hold (`whole::allocations`), found on first
    /// use: every gathered array of every loop asks, and each answer scans the program.
    allocations: Mutex<HashMap<Keeper, Arc<Result<Allocations, String>>>>,
    /// The statics whose address the program never takes, found on first use (by
    /// `sealed`, which defines `ProgramView::sealed_static`).
    sealed_statics: OnceLock<SealedStatics>,
}

/// The names a function calls directly or transitively, each with its definition when the
/// program has one (see `calls::reachable`).
pub type Reached = Vec<(String, Option<FuncRef>)>;

/// The value `compute` makes for `key`, made once: computed outside the lock, so two workers
/// may both compute it, with the same result, and the first one kept.
fn remembered<K: std::hash::Hash + Eq, V>(
    map: &Mutex<HashMap<K, Arc<V>>>,
    key: K,
    compute: impl FnOnce() -> V,
) -> Arc<V> {
    let lock = || map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = lock().get(&key) {
        return known.clone();
    }
    let made = Arc::new(compute());
    lock().entry(key).or_insert(made).clone()
}

/// Every direct call of the program by callee, and the functions whose address is taken.
#[derive(Debug, Default)]
pub struct CallIndex {
    /// Per callee: each call's function and argument values.
    pub callers: HashMap<FuncRef, Vec<(FuncRef, Vec<Value>)>>,
    /// Functions some code takes the address of (they may be called through pointers).
    pub address_taken: HashSet<FuncRef>,
}

impl<'a> ProgramView<'a> {
    /// The program made of `units` (in the order given; the first non-static definition of a
    /// name wins when several units define it, which a linker would reject anyway).
    pub fn new(units: impl IntoIterator<Item = &'a Unit>) -> Self {
        let units: Vec<&'a Unit> = units.into_iter().collect();
        let mut external: HashMap<String, Vec<FuncRef>> = HashMap::new();
        let mut local = HashMap::new();
        for (u, unit) in units.iter().enumerate() {
            for (index, func) in unit.lowered.program.functions.iter().enumerate() {
                let r = FuncRef { unit: u, index };
                local.entry((u, func.name.clone())).or_insert(r);
                if !func.is_static {
                    external.entry(func.name.clone()).or_default().push(r);
                }
            }
        }
        let mut declarations = HashMap::new();
        for (u, unit) in units.iter().enumerate() {
            for e in &unit.lowered.program.externals {
                if let Some(span) = e.declared_at {
                    declarations.entry(e.name.clone()).or_insert((u, span));
                }
            }
        }
        ProgramView {
            units,
            external,
            local,
            declarations,
            calls: OnceLock::new(),
            allocators: OnceLock::new(),
            lookups: OnceLock::new(),
            global_copies: OnceLock::new(),
            endings: OnceLock::new(),
            captures: Mutex::default(),
            param_flows: Mutex::default(),
            reached: Mutex::default(),
            allocations: Mutex::default(),
            sealed_statics: OnceLock::new(),
        }
    }

    /// A remembered answer of `escape::callee_captures` for argument `position` of `f`.
    pub(crate) fn remembered_capture(&self, f: FuncRef, position: usize) -> Option<bool> {
        let known = self.captures.lock().unwrap_or_else(|e| e.into_inner());
        known.get(&(f, position)).copied()
    }

    /// Remembers an answer of `escape::callee_captures`.
    pub(crate) fn remember_capture(&self, f: FuncRef, position: usize, kept: bool) {
        let mut known = self.captures.lock().unwrap_or_else(|e| e.into_inner());
        known.insert((f, position), kept);
    }

    /// What parameter `position` of `f` does with its address, computed by `compute` once.
    pub(crate) fn param_flow(
        &self,
        f: FuncRef,
        position: usize,
        compute: impl FnOnce() -> ParamFlow,
    ) -> Arc<ParamFlow> {
        remembered(&self.param_flows, (f, position), compute)
    }

    /// What `f` reaches through calls, computed by `compute` once.
    pub(crate) fn reached(&self, f: FuncRef, compute: impl FnOnce() -> Reached) -> Arc<Reached> {
        remembered(&self.reached, f, compute)
    }

    /// The allocations a pointer kept at `keeper` can hold, found by `find` once.
    pub(crate) fn allocations_of(
        &self,
        keeper: &Keeper,
        find: impl FnOnce() -> Result<Allocations, String>,
    ) -> Arc<Result<Allocations, String>> {
        remembered(&self.allocations, keeper.clone(), find)
    }

    /// The program's calls by callee (built once, on first use).
    pub fn call_index(&self) -> &CallIndex {
        self.calls.get_or_init(|| {
            let mut index = CallIndex::default();
            for g in self.functions() {
                for inst in &self.function(g).insts {
                    match &inst.kind {
                        InstKind::Call {
                            callee: Callee::Direct(name),
                            args,
                        } => {
                            if let Some(f) = self.resolve(g.unit, name) {
                                index.callers.entry(f).or_default().push((g, args.clone()));
                            }
                        }
                        InstKind::FuncAddr(name) => {
                            if let Some(f) = self.resolve(g.unit, name) {
                                index.address_taken.insert(f);
                            }
                        }
                        _ => {}
                    }
                }
            }
            index
        })
    }

    /// The functions returning a pointer that `decide` accepts, given those accepted so far
    /// (by `FuncRef`), repeated until nothing changes, at most six rounds: a wrapper of a
    /// wrapper counts. What the allocators and the lookups are found by.
    pub fn pointer_function_fixpoint<T>(
        &self,
        mut decide: impl FnMut(FuncRef, &HashMap<FuncRef, T>) -> Option<T>,
    ) -> HashMap<FuncRef, T> {
        let mut found: HashMap<FuncRef, T> = HashMap::new();
        let candidates: Vec<FuncRef> = self
            .functions()
            .filter(|f| {
                let func = self.function(*f);
                self.unit(f.unit).lowered.program.types.is_pointer(func.ret)
            })
            .collect();
        for _round in 0..6 {
            let mut changed = false;
            for &f in &candidates {
                if found.contains_key(&f) {
                    continue;
                }
                if let Some(t) = decide(f, &found) {
                    found.insert(f, t);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        found
    }

    /// The program's functions that return new memory or null on every path, found by
    /// `find` on first use. `fresh`, written on this view, passes its search in
    /// (`ProgramView::allocators`), as `escape` passes each flow's to `param_flow`.
    pub(crate) fn allocators_found_by(
        &self,
        find: impl FnOnce() -> HashMap<FuncRef, ProgramAllocator>,
    ) -> &HashMap<FuncRef, ProgramAllocator> {
        self.allocators.get_or_init(find)
    }

    /// The program's lookup functions, found by `find` on first use: `lookups` finds them
    /// (`ProgramView::lookups`).
    pub(crate) fn lookups_found_by(
        &self,
        find: impl FnOnce() -> HashMap<FuncRef, ()>,
    ) -> &HashMap<FuncRef, ()> {
        self.lookups.get_or_init(find)
    }

    /// The program's copies between globals, found by `find` on first use: `copies` finds
    /// them (`ProgramView::global_copies`).
    pub(crate) fn global_copies_found_by(
        &self,
        find: impl FnOnce() -> GlobalCopies,
    ) -> &GlobalCopies {
        self.global_copies.get_or_init(find)
    }

    /// The statics whose address the program never takes, found by `find` on first use:
    /// `sealed` finds them (`ProgramView::sealed_static`).
    pub(crate) fn sealed_statics_found_by(
        &self,
        find: impl FnOnce() -> SealedStatics,
    ) -> &SealedStatics {
        self.sealed_statics.get_or_init(find)
    }

    /// The program's functions that never return, found by `find` on first use: `noreturn`
    /// finds them (`ProgramView::endings`).
    pub(crate) fn endings_found_by(
        &self,
        find: impl FnOnce() -> HashMap<FuncRef, crate::model::ErrorEnd>,
    ) -> &HashMap<FuncRef, crate::model::ErrorEnd> {
        self.endings.get_or_init(find)
    }

    /// A program of one unit (what `analyze_unit` sees).
    pub fn single(unit: &'a Unit) -> Self {
        Self::new([unit])
    }

    /// Where a function no unit defines is declared: a system header's (a library
    /// function) or the program's own header.
    pub fn declaration(&self, name: &str) -> Option<frontend::unit::Resolved> {
        let (u, span) = self.declarations.get(name)?;
        self.units[*u].resolve(*span)
    }

    pub fn units(&self) -> &[&'a Unit] {
        &self.units
    }

    pub fn unit(&self, index: usize) -> &'a Unit {
        self.units[index]
    }

    /// The index of a unit of this view (compared by address).
    pub fn index_of(&self, unit: &Unit) -> Option<usize> {
        self.units.iter().position(|u| std::ptr::eq(*u, unit))
    }

    pub fn function(&self, f: FuncRef) -> &'a Function {
        &self.units[f.unit].lowered.program.functions[f.index]
    }

    pub fn program(&self, f: FuncRef) -> &'a frontend::ir::Program {
        &self.units[f.unit].lowered.program
    }

    /// The definition a call to `name` from unit `from` reaches: the unit's own (static or
    /// not), else a non-static one of another unit.
    pub fn resolve(&self, from: usize, name: &str) -> Option<FuncRef> {
        if let Some(r) = self.local.get(&(from, name.to_string())) {
            return Some(*r);
        }
        self.external
            .get(name)
            .and_then(|defs| defs.first())
            .copied()
    }

    /// Every function of the program.
    pub fn functions(&self) -> impl Iterator<Item = FuncRef> + '_ {
        self.units.iter().enumerate().flat_map(|(u, unit)| {
            (0..unit.lowered.program.functions.len()).map(move |index| FuncRef { unit: u, index })
        })
    }
}
