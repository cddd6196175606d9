//! Where the address of a local object (array, struct, address-taken scalar) can go: an
//! object whose address is only used to load, store, fill or copy it, or is passed to a
//! function of the program that does not keep it, cannot be reached through any other
//! pointer, so every access to it is one the IR shows structurally.

use crate::program::{FuncRef, ProgramView};
use crate::program_facts::ParamFlow;
use frontend::ir::{Callee, Function, InstKind, Slot, Terminator, Value};
use std::collections::{HashMap, HashSet};

/// Library functions that only access their pointer arguments during the call, and
/// which argument positions are pointers they read or write: `memset(dst, c, n)`,
/// `memcpy(dst, src, n)`, `memmove(dst, src, n)`.
pub const COPY_FUNCTIONS: &[(&str, &[usize])] =
    &[("memset", &[0]), ("memcpy", &[0, 1]), ("memmove", &[0, 1])];

/// C library functions that use their pointer arguments only during the call and return
/// none of them: printing one (`%p`) or the bytes it points to, comparing, sorting or
/// freeing does not let another pointer reach the memory later.
pub const LIBRARY_KEEPS_NOTHING: &[&str] = &[
    "free",
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "vsprintf",
    "vsnprintf",
    "puts",
    "fputs",
    "fwrite",
    "fread",
    "strlen",
    "strnlen",
    "strcmp",
    "strncmp",
    "memcmp",
    "qsort",
    "__assert_fail",
];

/// Whether `name` is `memset`, `memcpy` or `memmove` with a pointer at argument `position`.
pub fn is_copy_argument(name: &str, position: usize) -> bool {
    COPY_FUNCTIONS
        .iter()
        .any(|(n, positions)| *n == name && positions.contains(&position))
}

/// The values that are addresses inside `slot` (its `SlotAddr`s and any address derived
/// from them), and whether one of them escapes.
#[derive(Clone, Debug, Default)]
pub struct SlotAddresses {
    pub derived: HashSet<Value>,
    pub escapes: bool,
}

/// Follows every address derived from `slot` through the function (of unit `unit` of the
/// program `view`: calls resolve program-wide).
pub fn slot_addresses(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    slot: Slot,
    users: &[Vec<Value>],
) -> SlotAddresses {
    let roots: Vec<Value> = func
        .values()
        .filter(|v| func.inst(*v).kind == InstKind::SlotAddr(slot))
        .collect();
    let (derived, escapes) = follow(view, unit, func, roots, users);
    SlotAddresses { derived, escapes }
}

/// The slots that hold a struct or union parameter passed by value and nothing else, with
/// the parameter's index: the copy is stored once, at entry, and never written after nor
/// handed to anything that might (no call receives an address inside it, none escapes).
/// Reading such a slot reads what the caller passed: its pointer members are pointers the
/// function received.
pub fn param_copies(view: &ProgramView, unit: usize, func: &Function) -> HashMap<Slot, u32> {
    let types = &view.unit(unit).lowered.program.types;
    let entry = &func.block(func.entry).insts;
    let mut candidates: HashMap<Slot, u32> = HashMap::new();
    for &v in entry {
        if let InstKind::Store { addr, value } = &func.inst(v).kind {
            if let (InstKind::SlotAddr(slot), InstKind::Param(i)) =
                (&func.inst(*addr).kind, &func.inst(*value).kind)
            {
                if matches!(types.get(func.inst(v).ty), frontend::types::Type::Record(_)) {
                    candidates.insert(*slot, *i);
                }
            }
        }
    }
    if candidates.is_empty() {
        return candidates;
    }
    let users = func.users();
    candidates.retain(|slot, _| {
        let addresses = slot_addresses(view, unit, func, *slot, &users);
        let mut stores = 0;
        !addresses.escapes
            && func.values().all(|v| match &func.inst(v).kind {
                InstKind::Store { addr, value } => {
                    if addresses.derived.contains(value) {
                        return false;
                    }
                    if addresses.derived.contains(addr) {
                        stores += 1;
                    }
                    stores <= 1
                }
                InstKind::Call { args, .. } => !args.iter().any(|a| addresses.derived.contains(a)),
                _ => true,
            })
    });
    candidates
}

/// Whether a function of the program may keep (store, return) the pointer it receives as
/// argument `position` when called from unit `unit`, or pass it somewhere that might.
/// Unknown functions may.
pub fn callee_captures(view: &ProgramView, unit: usize, name: &str, position: usize) -> bool {
    let Some(start) = view.resolve(unit, name) else {
        return !LIBRARY_KEEPS_NOTHING.contains(&name);
    };
    if let Some(known) = view.remembered_capture(start, position) {
        return known;
    }
    // Whether a parameter that may keep the address is reachable from `start` through the
    // parameters each one passes it to: a search over the program's (function, parameter)
    // graph, each node's own uses found once program-wide ([`ParamFlow`]). A cycle of
    // calls that only pass the address around keeps nothing.
    let mut seen = HashSet::from([(start, position)]);
    let mut work = vec![(start, position)];
    let mut kept = false;
    'search: while let Some((f, p)) = work.pop() {
        let flow = view.param_flow(f, p, || param_flow(view, f, p));
        if flow.keeps {
            kept = true;
            break;
        }
        for (name, q) in &flow.passes {
            match view.resolve(f.unit, name) {
                Some(g) => {
                    if seen.insert((g, *q)) {
                        work.push((g, *q));
                    }
                }
                None if LIBRARY_KEEPS_NOTHING.contains(&name.as_str()) => {}
                None => {
                    kept = true;
                    break 'search;
                }
            }
        }
    }
    // Nothing reachable from a parameter that keeps nothing keeps anything.
    if kept {
        view.remember_capture(start, position, true);
    } else {
        for (f, p) in seen {
            view.remember_capture(f, p, false);
        }
    }
    kept
}

fn param_flow(view: &ProgramView, r: FuncRef, position: usize) -> ParamFlow {
    let f = view.function(r);
    let Some(param) = f.params.get(position) else {
        // A variadic argument: the callee reads it with `va_arg`, untracked here.
        return ParamFlow {
            keeps: true,
            passes: Vec::new(),
        };
    };
    // A parameter spilled to a slot has its address taken: its value lives in memory.
    if param.slot.is_some() {
        return ParamFlow {
            keeps: true,
            passes: Vec::new(),
        };
    }
    let users = f.users();
    let mut passes = Vec::new();
    // Only what the callee does with the address matters here: a phi or select merging it
    // is followed (what the merged value then does counts), not taken as a way out.
    let reach = reach(
        view,
        r.unit,
        f,
        vec![param.value],
        &users,
        Merges::Derive,
        &mut |name: &str, q: usize| {
            passes.push((name.to_string(), q));
            false
        },
    );
    passes.sort();
    passes.dedup();
    ParamFlow {
        keeps: !reach.escapes.is_empty(),
        passes,
    }
}

/// The closure of `roots` under address arithmetic, and whether some use of it lets the
/// address out (stored as a value, returned, merged by a phi or select, passed to a call
/// that may keep it, converted to an integer).
fn follow(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    roots: Vec<Value>,
    users: &[Vec<Value>],
) -> (HashSet<Value>, bool) {
    let reach = reach(
        view,
        unit,
        func,
        roots,
        users,
        Merges::Escape,
        &mut |name, q| callee_captures(view, unit, name, q),
    );
    let escapes = !reach.escapes.is_empty();
    (reach.derived, escapes)
}

/// The way out of [`Reach`] for an address stored to memory.
pub const STORED: &str = "stored to memory";

/// What a phi or select that merges an address with other values is taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merges {
    /// A way out: the merged value is no longer followed (what privatization needs, where
    /// every access to the object must be seen as one of the object's).
    Escape,
    /// Another value that may hold the address, followed like the address itself (what
    /// aliasing needs: which values may point into the object).
    Derive,
}

/// The values of a function that may hold an address derived from `roots`, and the ways
/// the address gets out of them.
#[derive(Clone, Debug, Default)]
pub struct Reach {
    pub derived: HashSet<Value>,
    /// Where and why the address may be reached otherwise (`stored to memory`, `passed to
    /// \`log_pointer\``, `returned`, ...), in the order found; empty when it never gets out.
    pub escapes: Vec<(frontend::ir::Block, String)>,
}

impl Reach {
    /// The first way out, if any.
    pub fn escape(&self) -> Option<&str> {
        self.escapes.first().map(|(_, why)| why.as_str())
    }

    /// The first way out that happens before some execution of `block`: an escape on a path
    /// that reaches it. (After a loop, a pointer stored or freed cannot be what the loop's
    /// own loads read, unless an enclosing loop comes back.)
    pub fn escape_before(&self, func: &Function, block: frontend::ir::Block) -> Option<&str> {
        self.escapes
            .iter()
            .find(|(from, _)| reaches_block(func, *from, block))
            .map(|(_, why)| why.as_str())
    }
}

/// Whether some path of the control-flow graph leads from `from` to `to` (or `from == to`).
pub fn reaches_block(func: &Function, from: frontend::ir::Block, to: frontend::ir::Block) -> bool {
    let mut seen = HashSet::from([from]);
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        if b == to {
            return true;
        }
        for next in func.block(b).terminator.successors() {
            if seen.insert(next) {
                work.push(next);
            }
        }
    }
    false
}

/// [`Reach`] of `roots` in `func` (of unit `unit` of `view`: calls resolve program-wide).
pub fn reach_of(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    roots: Vec<Value>,
    users: &[Vec<Value>],
    merges: Merges,
) -> Reach {
    reach(view, unit, func, roots, users, merges, &mut |name, q| {
        callee_captures(view, unit, name, q)
    })
}

/// The closure of `roots` in `func`; `keeps(name, position)` tells whether the function
/// called `name` (in `unit`) may keep the address passed as its argument `position`.
fn reach(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    roots: Vec<Value>,
    users: &[Vec<Value>],
    merges: Merges,
    keeps: &mut dyn FnMut(&str, usize) -> bool,
) -> Reach {
    let types = &view.unit(unit).lowered.program.types;
    let mut derived: HashSet<Value> = roots.iter().copied().collect();
    let mut work = roots;
    let mut escapes = Vec::new();
    while let Some(d) = work.pop() {
        for &u in &users[d.index()] {
            let inst = func.inst(u);
            let mut note = |why: String| escapes.push((inst.block, why));
            let follows = match &inst.kind {
                InstKind::PtrAdd { base, index, .. } => {
                    if *index == d {
                        note("used as an integer".into());
                    }
                    *base == d
                }
                InstKind::FieldAddr { .. } => true,
                InstKind::Cast(_) if types.is_pointer(inst.ty) => true,
                InstKind::Cast(_) => {
                    note("converted to an integer".into());
                    false
                }
                InstKind::Phi(_) | InstKind::Select { .. } if merges == Merges::Derive => true,
                InstKind::Load { .. } => false,
                InstKind::Store { value, .. } => {
                    if *value == d {
                        note(STORED.into());
                    }
                    false
                }
                // Comparing addresses (`p != NULL`) does not let them out.
                InstKind::Binary(op, ..) => {
                    if !op.is_comparison() {
                        note("used as an integer".into());
                    }
                    false
                }
                InstKind::Call {
                    callee: Callee::Direct(name),
                    args,
                } => {
                    let kept = args.iter().enumerate().any(|(position, a)| {
                        *a == d && !is_copy_argument(name, position) && keeps(name, position)
                    });
                    if kept {
                        note(format!("passed to `{name}`"));
                    }
                    false
                }
                InstKind::Call {
                    callee: Callee::Indirect(pointer),
                    args,
                } if *pointer != d => {
                    // Through a pointer whose targets the program shows: each target's
                    // parameter must not keep it.
                    let targets = view
                        .resolve(unit, &func.name)
                        .and_then(|f| crate::indirect::targets(view, f, *pointer));
                    let kept = match targets {
                        Some(names) => args.iter().enumerate().any(|(position, a)| {
                            *a == d && names.iter().any(|name| keeps(name, position))
                        }),
                        None => args.contains(&d),
                    };
                    if kept {
                        note("passed through a function pointer".into());
                    }
                    false
                }
                InstKind::Phi(_) | InstKind::Select { .. } => {
                    note("merged with other values".into());
                    false
                }
                _ => {
                    note("used in a way not followed here".into());
                    false
                }
            };
            if follows && derived.insert(u) {
                work.push(u);
            }
        }
    }
    for b in func.blocks() {
        if let Terminator::Return(Some(r)) = func.block(b).terminator {
            if derived.contains(&r) {
                escapes.push((b, "returned".into()));
            }
        }
    }
    Reach { derived, escapes }
}

/// Whether an object of type `ty` can hold a pointer (a callee given its address could
/// then reach other memory through it).
pub fn holds_pointers(types: &frontend::types::TypeTable, ty: frontend::types::TypeId) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_unit::unit;

    /// Whether the slot named `name` of function `f` escapes.
    fn check(source: &str, f: &str, name: &str, escapes: bool) {
        let (_dir, u) = unit(source);
        let view = ProgramView::single(&u);
        let program = &u.lowered.program;
        let func = program.function(f).expect("function");
        let slot = func
            .slots
            .iter()
            .position(|s| s.name == name)
            .expect("slot");
        let users = func.users();
        let found = slot_addresses(&view, 0, func, Slot(slot as u32), &users);
        assert_eq!(found.escapes, escapes, "{name} in {source}");
    }

    #[test]
    fn loads_stores_and_copies_keep_an_array_local() {
        let src = "#include <string.h>\nvoid f(double *o) { double t[4] = {0}; double *p = t + 1; \
                   *p = 2; memcpy(o, t, sizeof t); o[0] = t[3]; }";
        check(src, "f", "t", false);
    }

    #[test]
    fn storing_the_address_lets_it_out() {
        let src = "void f(double **o) { double t[4]; o[0] = t; }";
        check(src, "f", "t", true);
    }

    #[test]
    fn a_callee_that_only_reads_through_its_parameter_keeps_it() {
        let src = "static double sum(const double *a) { return a[0] + a[1]; }\n\
                   double f(void) { double t[2] = {1, 2}; return sum(t); }";
        check(src, "f", "t", false);
    }

    #[test]
    fn a_callee_that_keeps_the_pointer_lets_it_out() {
        let src = "double *kept;\nstatic void keep(double *a) { kept = a; }\n\
                   void f(void) { double t[2]; keep(t); }";
        check(src, "f", "t", true);
    }

    #[test]
    fn an_unknown_callee_may_keep_the_pointer() {
        let src = "void ext(double *a);\nvoid f(void) { double t[2]; ext(t); }";
        check(src, "f", "t", true);
    }

    /// Recursion that only passes the address down (a tree walk with a scratch buffer)
    /// keeps nothing; the same cycle with one store in it keeps it. Before the search over
    /// (function, parameter) pairs, any cycle was assumed to keep the address.
    #[test]
    fn calls_in_a_cycle_keep_the_address_only_if_one_of_them_does() {
        let walk = "static double down(double *a, int n);\n\
                    static double up(double *a, int n) { return n ? down(a, n - 1) : a[0]; }\n\
                    static double down(double *a, int n) { a[n % 2] += 1; return up(a, n); }\n\
                    double f(int n) { double t[2] = {0}; return up(t, n); }";
        check(walk, "f", "t", false);
        let stores = "double *kept;\nstatic double down(double *a, int n);\n\
                      static double up(double *a, int n) { return n ? down(a, n - 1) : a[0]; }\n\
                      static double down(double *a, int n) { kept = a; return up(a, n); }\n\
                      double f(int n) { double t[2] = {0}; return up(t, n); }";
        check(stores, "f", "t", true);
    }

    /// A chain of calls deeper than the old search's depth limit (8) is followed to its end.
    #[test]
    fn a_long_chain_of_calls_is_followed_to_its_end() {
        let mut src = String::from("static double g0(double *a) { return a[0]; }\n");
        for k in 1..12 {
            src.push_str(&format!(
                "static double g{k}(double *a) {{ return g{}(a); }}\n",
                k - 1
            ));
        }
        src.push_str("double f(void) { double t[2] = {0}; return g11(t); }");
        check(&src, "f", "t", false);
    }

    #[test]
    fn pointers_inside_structs_are_seen() {
        let (_dir, u) = unit(
            "struct s { int a; double *p; }; struct t { int a[3]; double b; };\n\
                      struct s x; struct t y; int z[4];",
        );
        let types = &u.lowered.program.types;
        let ty = |name: &str| {
            u.lowered
                .program
                .globals
                .iter()
                .find(|g| g.name == name)
                .unwrap()
                .ty
        };
        assert!(holds_pointers(types, ty("x")));
        assert!(!holds_pointers(types, ty("y")));
        assert!(!holds_pointers(types, ty("z")));
    }
}
