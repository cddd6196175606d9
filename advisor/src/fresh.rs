//! New memory: the calls that return it (C's allocators, and functions of the program that
//! return only what one of them gave, such as `xmalloc` or a memory layer's tracked
//! `mem_malloc`), and the pointers of a function that can only hold it.

use crate::program::{FuncRef, ProgramView};
use crate::program_facts::ProgramAllocator;
use frontend::ir::{Callee, Function, InstKind, Terminator, Value};
use std::collections::{BTreeSet, HashMap};

/// C library functions that return a new object (or null). `realloc` is not one: it may
/// return its argument.
pub fn is_c_allocator(name: &str) -> bool {
    matches!(
        name,
        "malloc" | "calloc" | "aligned_alloc" | "valloc" | "memalign" | "polybench_alloc_data"
    )
}

impl ProgramView<'_> {
    /// The program's functions that return new memory or null on every path (see
    /// [`program_allocators`]), found once. Defined here rather than in `program` because
    /// the view, which keeps the answer, is written below the analysis that finds it.
    pub fn allocators(&self) -> &HashMap<FuncRef, ProgramAllocator> {
        self.allocators_found_by(|| program_allocators(self))
    }
}

/// The program's allocator functions, by function: found by iterating to a fixpoint, so a
/// wrapper of a wrapper counts (up to a few levels).
pub fn program_allocators(view: &ProgramView) -> HashMap<FuncRef, ProgramAllocator> {
    view.pointer_function_fixpoint(|f, found| {
        let func = view.function(f);
        let is_allocation = |v: Value| match &func.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => {
                is_c_allocator(name)
                    || view
                        .resolve(f.unit, name)
                        .is_some_and(|g| g != f && found.contains_key(&g))
            }
            _ => false,
        };
        let mut allocations = BTreeSet::new();
        let mut returns_any = false;
        for b in func.blocks() {
            if let Terminator::Return(Some(r)) = func.block(b).terminator {
                returns_any = true;
                allocations.extend(sources(func, r, &is_allocation)?);
            }
        }
        if !returns_any || allocations.is_empty() {
            return None;
        }
        let users = func.users();
        let roots = allocations.iter().map(|&v| Value(v)).collect();
        let reach = crate::escape::reach_of(
            view,
            f.unit,
            func,
            roots,
            &users,
            crate::escape::Merges::Derive,
        );
        let mut keeps_copy: Vec<String> = reach
            .escapes
            .iter()
            .filter(|(_, why)| why != "returned")
            .map(|(_, why)| why.clone())
            .collect();
        keeps_copy.sort();
        keeps_copy.dedup();
        Some(ProgramAllocator { keeps_copy })
    })
}

/// The allocation calls a pointer may come from when each of its possible values is such a
/// call (as `is_allocation` tells) or null, through casts, phis and selects; `None` when some value
/// may be anything else.
pub fn sources(
    func: &Function,
    v: Value,
    is_allocation: &dyn Fn(Value) -> bool,
) -> Option<BTreeSet<u32>> {
    let mut found = BTreeSet::new();
    for x in crate::merged::leaves(func, v)? {
        if crate::merged::is_null(func, x) {
            continue;
        }
        if !is_allocation(x) {
            return None;
        }
        found.insert(x.0);
    }
    Some(found)
}

/// New memory in one function: which calls return it, and how far their addresses go.
#[derive(Debug)]
pub struct FreshInFunction<'a> {
    view: &'a ProgramView<'a>,
    unit: usize,
    func: &'a Function,
    allocators: &'a HashMap<FuncRef, ProgramAllocator>,
    users: std::cell::OnceCell<Vec<Vec<Value>>>,
    reach: std::cell::RefCell<HashMap<Vec<Value>, std::rc::Rc<crate::escape::Reach>>>,
    /// [`Self::sources`] by value: asked for both pointers of every pair of every loop.
    sources: std::cell::RefCell<HashMap<Value, Option<BTreeSet<u32>>>>,
}

impl<'a> FreshInFunction<'a> {
    pub fn new(
        view: &'a ProgramView<'a>,
        unit: usize,
        func: &'a Function,
        allocators: &'a HashMap<FuncRef, ProgramAllocator>,
    ) -> Self {
        FreshInFunction {
            view,
            unit,
            func,
            allocators,
            users: Default::default(),
            reach: Default::default(),
            sources: Default::default(),
        }
    }

    /// The program allocator `v` calls, when it is a call to one (through casts).
    fn program_allocator(&self, v: Value) -> Option<(String, &'a ProgramAllocator)> {
        match &self.func.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => {
                let f = self.view.resolve(self.unit, name)?;
                self.allocators.get(&f).map(|a| (name.clone(), a))
            }
            InstKind::Cast(inner) => self.program_allocator(*inner),
            _ => None,
        }
    }

    /// Whether `v` is a call returning new memory: a C allocator or a program allocator.
    pub fn is_allocation(&self, v: Value) -> bool {
        match &self.func.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => is_c_allocator(name) || self.program_allocator(v).is_some(),
            _ => false,
        }
    }

    /// The allocation calls `v` may hold (see [`sources`]).
    pub fn sources(&self, v: Value) -> Option<BTreeSet<u32>> {
        if let Some(known) = self.sources.borrow().get(&v) {
            return known.clone();
        }
        let found = sources(self.func, v, &|x| self.is_allocation(x));
        self.sources.borrow_mut().insert(v, found.clone());
        found
    }

    /// The values that may hold an address into the allocations `sources`, and whether the
    /// address leaves them (stored, passed to a call that keeps it, returned).
    pub fn reach(&self, sources: &BTreeSet<u32>) -> std::rc::Rc<crate::escape::Reach> {
        let roots: Vec<Value> = sources.iter().map(|&v| Value(v)).collect();
        self.reach_of(roots)
    }

    /// [`Self::reach`] of any values (a `restrict` parameter).
    pub fn reach_of(&self, roots: Vec<Value>) -> std::rc::Rc<crate::escape::Reach> {
        if let Some(known) = self.reach.borrow().get(&roots) {
            return known.clone();
        }
        let users = self.users.get_or_init(|| self.func.users());
        let computed = std::rc::Rc::new(crate::escape::reach_of(
            self.view,
            self.unit,
            self.func,
            roots.clone(),
            users,
            crate::escape::Merges::Derive,
        ));
        self.reach.borrow_mut().insert(roots, computed.clone());
        computed
    }

    /// Every allocation call of the function, with where its address gets out (stored,
    /// merged with another pointer, converted to an integer, returned or passed to a
    /// function that may keep it) and its caveats: until then no other pointer reaches
    /// the new memory, which the loop-invariance analysis uses.
    pub fn allocation_blocks(&self) -> analyses::invariant::FreshAllocations {
        let users = self.users.get_or_init(|| self.func.users());
        let mut out = analyses::invariant::FreshAllocations::new();
        for v in self.func.values() {
            if !self.is_allocation(v) {
                continue;
            }
            let reach = crate::escape::reach_of(
                self.view,
                self.unit,
                self.func,
                vec![v],
                users,
                crate::escape::Merges::Escape,
            );
            let block = analyses::invariant::FreshBlock {
                caveats: self.caveats(&BTreeSet::from([v.0])),
                escapes: reach.escapes.iter().map(|(b, _)| *b).collect(),
            };
            out.insert(v, block);
        }
        out
    }

    /// What the report must assume for `sources` to be new memory: each program allocator
    /// that keeps a copy of the address somewhere, with where.
    pub fn caveats(&self, sources: &BTreeSet<u32>) -> Vec<String> {
        let mut out = Vec::new();
        for &v in sources {
            if let Some((name, allocator)) = self.program_allocator(Value(v)) {
                if !allocator.keeps_copy.is_empty() {
                    out.push(format!(
                        "`{name}` returns new memory (its address is also {}: assumed bookkeeping, never used to reach the memory)",
                        allocator.keeps_copy.join(", ")
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}
