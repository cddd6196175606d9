//! Where a function's addresses point (the object each derives from and how many pointer
//! loads lie between), solved once per function, and what that says about calls: whether a
//! call may write memory of its caller, or a given global. Loop invariance and the
//! reconstruction's memory versions both ask these questions.

use crate::library::pure_library_function;
use frontend::ir::{Callee, Function, GlobalId, InstKind, Program, Slot, Value};
use std::collections::HashMap;

/// Where an address points: the object it is derived from and how many pointer loads lie
/// between that object and the address (`p->data[i]` is `Param(p)` at depth 1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Base {
    Local(Slot),
    Global(GlobalId),
    Param(u32),
    /// The block an allocation call (this value) returned.
    Fresh(Value),
    Unknown,
}

/// The allocation calls of a function that return new memory (C's allocators, the
/// program's wrappers of them), by call: no pointer other than those derived from the
/// call can reach such a block until its address gets out (stored, merged with another
/// pointer, converted to an integer, returned or passed to a function that may keep it),
/// so in a loop no way out reaches, its accesses and everything else's never overlap.
pub type FreshAllocations = HashMap<Value, FreshBlock>;

/// One allocation call's new memory.
#[derive(Clone, Debug, Default)]
pub struct FreshBlock {
    /// What treating it as new memory assumes (a program allocator that keeps a copy of
    /// the address for its bookkeeping), for the report.
    pub caveats: Vec<String>,
    /// The blocks where its address gets out.
    pub escapes: Vec<frontend::ir::Block>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Region {
    pub(crate) base: Base,
    pub(crate) depth: u32,
}

impl Region {
    pub(crate) const UNKNOWN: Region = Region {
        base: Base::Unknown,
        depth: 0,
    };

    /// Pointers stored in locals and globals may point anywhere.
    pub(crate) fn normalized(self) -> Region {
        match self.base {
            Base::Local(_) | Base::Global(_) | Base::Fresh(_) if self.depth > 0 => Region::UNKNOWN,
            // Unknown memory stays unknown however many loads follow (and the fixpoint
            // stays finite).
            Base::Unknown => Region::UNKNOWN,
            _ => self,
        }
    }
}

/// The region of every value of one function, solved once as an optimistic fixpoint over
/// the SSA graph (a value's region is unknown until an operand says otherwise; a phi joins
/// its arms). Linear in the function per pass, and a value changes at most twice, so an
/// address reached through chains of phis (else-if ladders, pointers reassigned in many
/// branches of a loop) costs no more than a straight one. Pointer increments that cycle
/// back to their phi (`p = p + 1`) keep the phi's region, as they should.
#[derive(Debug)]
pub(crate) struct Regions {
    of: Vec<Option<Region>>,
}

impl Regions {
    pub(crate) fn new(func: &Function, fresh: &FreshAllocations) -> Self {
        let values: Vec<Value> = func.values().collect();
        let slots = values.iter().map(|v| v.index() + 1).max().unwrap_or(0);
        let mut regions = Regions {
            of: vec![None; slots],
        };
        loop {
            let mut changed = false;
            for &v in &values {
                if let Some(r) = regions.transfer(func, fresh, v) {
                    if regions.of[v.index()].as_ref() != Some(&r) {
                        regions.of[v.index()] = Some(r);
                        changed = true;
                    }
                }
            }
            if !changed {
                return regions;
            }
        }
    }

    /// Where `v` points; unknown for a value the function does not define.
    pub(crate) fn of(&self, v: Value) -> Region {
        self.of
            .get(v.index())
            .cloned()
            .flatten()
            .unwrap_or(Region::UNKNOWN)
    }

    /// The region of `v` from its operands' current regions; `None` while they have none.
    fn transfer(&self, func: &Function, fresh: &FreshAllocations, v: Value) -> Option<Region> {
        let known = |a: Value| self.of.get(a.index()).cloned().flatten();
        match &func.inst(v).kind {
            InstKind::Call { .. } if fresh.contains_key(&v) => Some(Region {
                base: Base::Fresh(v),
                depth: 0,
            }),
            InstKind::PtrAdd { base, .. }
            | InstKind::FieldAddr { base, .. }
            | InstKind::Cast(base) => known(*base),
            InstKind::SlotAddr(s) => Some(Region {
                base: Base::Local(*s),
                depth: 0,
            }),
            InstKind::GlobalAddr(g) => Some(Region {
                base: Base::Global(*g),
                depth: 0,
            }),
            InstKind::Param(i) => Some(Region {
                base: Base::Param(*i),
                depth: 0,
            }),
            InstKind::Load { addr } => {
                // A parameter spilled to a slot reads back as the parameter.
                if let InstKind::SlotAddr(s) = func.inst(*addr).kind {
                    if let Some(i) = func.params.iter().position(|p| p.slot == Some(s)) {
                        return Some(Region {
                            base: Base::Param(i as u32),
                            depth: 0,
                        });
                    }
                }
                let r = known(*addr)?;
                Some(
                    Region {
                        base: r.base,
                        depth: r.depth + 1,
                    }
                    .normalized(),
                )
            }
            InstKind::Phi(args) => {
                let mut out: Option<Region> = None;
                for (_, a) in args {
                    let Some(r) = known(*a) else { continue };
                    match &out {
                        None => out = Some(r),
                        Some(o) if *o == r => {}
                        Some(_) => return Some(Region::UNKNOWN),
                    }
                }
                out
            }
            _ => Some(Region::UNKNOWN),
        }
    }
}

/// Slots whose address reaches something other than loads, stores and address arithmetic:
/// only those can be reached through other pointers.
/// Whether calling `name` may write memory of the caller: a store of the callee (or of a
/// callee of it, four calls deep) outside its own locals, or a call the program does not
/// define.
pub(crate) fn call_may_write(
    program: &Program,
    callee: &Callee,
    depth: u32,
    stack: &mut Vec<String>,
) -> bool {
    let Callee::Direct(name) = callee else {
        return true;
    };
    if pure_library_function(name).is_some() {
        return false;
    }
    let Some(f) = program.function(name) else {
        return true;
    };
    if depth > 4 || stack.contains(name) {
        return true;
    }
    stack.push(name.clone());
    let regions = Regions::new(f, &FreshAllocations::new());
    let writes = f.values().any(|v| match &f.inst(v).kind {
        InstKind::Store { addr, .. } => !matches!(
            regions.of(*addr),
            Region {
                base: Base::Local(_),
                depth: 0
            }
        ),
        InstKind::Call { callee, .. } => call_may_write(program, callee, depth + 1, stack),
        _ => false,
    });
    stack.pop();
    writes
}

/// Which globals the direct calls of one function may write, asked call by call
/// ([`call_may_write_global`] with the caller's regions, solved once).
pub(crate) struct CallGlobalWrites<'a> {
    program: &'a Program,
    func: &'a Function,
    regions: std::cell::OnceCell<Regions>,
}

impl<'a> CallGlobalWrites<'a> {
    pub(crate) fn new(program: &'a Program, func: &'a Function) -> Self {
        CallGlobalWrites {
            program,
            func,
            regions: std::cell::OnceCell::new(),
        }
    }

    /// Whether the call `call` may write the global `target`; true for anything but a
    /// direct call.
    pub(crate) fn may_write(&self, call: Value, target: GlobalId) -> bool {
        let InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } = &self.func.inst(call).kind
        else {
            return true;
        };
        let regions = self
            .regions
            .get_or_init(|| Regions::new(self.func, &FreshAllocations::new()));
        let target = &self.program.global(target).name;
        call_may_write_global(
            self.program,
            regions,
            name,
            args,
            target,
            0,
            &mut Vec::new(),
        )
    }
}

/// Whether calling the function `name` of the program with `args` (values of the caller,
/// whose regions are `regions`) may write the global named `target`: a store of the callee
/// (or of a callee of it) into that global, or through a pointer that may point into it (a
/// parameter given such an address, a pointer loaded from memory). A loop that calls NPB's
/// `exact_solution(xi, eta, zeta, dtemp)` still reads `grid_points[0]` as an invariant.
pub(crate) fn call_may_write_global(
    program: &Program,
    regions: &Regions,
    name: &str,
    args: &[Value],
    target: &str,
    depth: u32,
    stack: &mut Vec<String>,
) -> bool {
    if pure_library_function(name).is_some() {
        return false;
    }
    let Some(f) = program.function(name) else {
        return true;
    };
    if depth > 4 || stack.iter().any(|s| s == name) {
        return true;
    }
    // Whether an address with region `r` (in the function whose arguments are `given`,
    // `None` past the first level) may point into the target.
    let may_be_target = |r: Region, given: Option<(&Regions, &[Value])>| -> bool {
        match (r.base, r.depth) {
            (Base::Local(_), 0) | (Base::Fresh(_), 0) => false,
            (Base::Global(h), 0) => program.global(h).name == target,
            (Base::Param(p), 0) => {
                match given.and_then(|(rs, a)| Some((rs, *a.get(p as usize)?))) {
                    Some((rs, a)) => match rs.of(a) {
                        Region {
                            base: Base::Local(_) | Base::Fresh(_),
                            depth: 0,
                        } => false,
                        Region {
                            base: Base::Global(h),
                            depth: 0,
                        } => program.global(h).name == target,
                        _ => true,
                    },
                    None => true,
                }
            }
            _ => true,
        }
    };
    stack.push(name.to_string());
    let inner = Regions::new(f, &FreshAllocations::new());
    let writes = f.values().any(|v| match &f.inst(v).kind {
        InstKind::Store { addr, .. } => may_be_target(inner.of(*addr), Some((regions, args))),
        InstKind::Call {
            callee: Callee::Direct(n),
            args: inner_args,
        } => {
            // Parameters of `f` passed on are not followed: any pointer argument that is
            // one counts as reaching the target.
            let passes_param = inner_args.iter().any(|a| {
                program.types.is_pointer(f.inst(*a).ty)
                    && matches!(inner.of(*a).base, Base::Param(_) | Base::Unknown)
            });
            passes_param
                || call_may_write_global(program, &inner, n, inner_args, target, depth + 1, stack)
        }
        InstKind::Call { .. } => true,
        _ => false,
    });
    stack.pop();
    writes
}
