//! Calls that do not return: the C library's (`exit`, `abort`, `longjmp`, glibc's
//! `__assert_fail` behind `assert`), functions a declaration marks `_Noreturn` or
//! `__attribute__((noreturn))`, and functions of the program every path of which ends in
//! one of these (a fixpoint over the call graph). `error_paths` ends its paths with them.

use crate::model::ErrorEnd;
use crate::program::{FuncRef, ProgramView};
use frontend::ir::{BinOp, Block, Callee, Constant, Function, InstKind, Terminator, UnOp, Value};
use std::collections::{BTreeSet, HashMap};

/// The C library's functions that never return, and how each leaves.
const LIBRARY: &[(&str, ErrorEnd)] = &[
    ("exit", ErrorEnd::Exit),
    ("_Exit", ErrorEnd::Exit),
    ("_exit", ErrorEnd::Exit),
    ("quick_exit", ErrorEnd::Exit),
    ("abort", ErrorEnd::Exit),
    // What glibc's `assert` expands to when the assertion fails.
    ("__assert_fail", ErrorEnd::Exit),
    ("__assert_perror_fail", ErrorEnd::Exit),
    // BSD's <err.h>, in glibc too.
    ("err", ErrorEnd::Exit),
    ("errx", ErrorEnd::Exit),
    ("verr", ErrorEnd::Exit),
    ("verrx", ErrorEnd::Exit),
    ("longjmp", ErrorEnd::Jump),
    ("_longjmp", ErrorEnd::Jump),
    ("siglongjmp", ErrorEnd::Jump),
];

/// How a call of `name` from unit `from` leaves, when it never returns: a function of the
/// program by its body (or its declaration), a library function by name or by a
/// declaration in a system header. A function of the program's own headers that no
/// analysed file defines is not taken at its word: what it does before leaving is unknown.
pub fn ending(view: &ProgramView, from: usize, name: &str) -> Option<ErrorEnd> {
    match view.resolve(from, name) {
        Some(f) => endings(view).get(&f).copied(),
        None => ending_outside(view, name),
    }
}

/// The program's functions that never return, each with how it leaves.
fn endings<'v>(view: &'v ProgramView) -> &'v HashMap<FuncRef, ErrorEnd> {
    view.endings_found_by(|| find_endings(view))
}

/// A function is found when its declaration says so, or when it calls one already known
/// not to return and no path from its entry gets out without such a call; rounds repeat
/// until nothing changes (each adds at least one function, so there are at most as many
/// as functions).
fn find_endings(view: &ProgramView) -> HashMap<FuncRef, ErrorEnd> {
    let mut found: HashMap<FuncRef, ErrorEnd> = HashMap::new();
    let functions: Vec<FuncRef> = view.functions().collect();
    let ends_here = |found: &HashMap<FuncRef, ErrorEnd>, f: FuncRef, name: &str| match view
        .resolve(f.unit, name)
    {
        Some(g) => found.get(&g).copied(),
        None => ending_outside(view, name),
    };
    loop {
        let mut changed = false;
        for &f in &functions {
            if found.contains_key(&f) {
                continue;
            }
            let func = view.function(f);
            let declared = view
                .unit(f.unit)
                .lowered
                .program
                .noreturn
                .contains(&func.name);
            let calls = |v: Value| direct_callee(func, v).and_then(|n| ends_here(&found, f, n));
            let doomed = doomed_blocks(func, &|_| true, &|v| calls(v).is_some());
            let ends_somewhere = func.values().any(|v| calls(v).is_some());
            if declared || (ends_somewhere && doomed.contains(&func.entry)) {
                found.insert(f, ErrorEnd::Exit);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // How each leaves: a jump anywhere in it (or a body that does not show how, for a
    // declaration taken at its word) makes it a jump; repeated until callers agree.
    loop {
        let mut changed = false;
        for &f in &functions {
            if found.get(&f) != Some(&ErrorEnd::Exit) {
                continue;
            }
            let func = view.function(f);
            let jumps = func.values().any(|v| {
                direct_callee(func, v)
                    .is_some_and(|n| ends_here(&found, f, n) == Some(ErrorEnd::Jump))
            });
            let ends = |v: Value| {
                direct_callee(func, v).is_some_and(|n| ends_here(&found, f, n).is_some())
            };
            let shown = func.values().any(ends)
                && doomed_blocks(func, &|_| true, &ends).contains(&func.entry);
            if jumps || !shown {
                found.insert(f, ErrorEnd::Jump);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    found
}

/// [`ending`] for a name no unit defines.
fn ending_outside(view: &ProgramView, name: &str) -> Option<ErrorEnd> {
    if let Some((_, end)) = LIBRARY.iter().find(|(n, _)| *n == name) {
        return Some(*end);
    }
    let declared = view
        .units()
        .iter()
        .any(|u| u.lowered.program.noreturn.contains(name));
    (declared && view.declaration(name).is_some_and(|d| d.in_system_header))
        .then_some(ErrorEnd::Jump)
}

/// The name a direct call instruction calls.
pub(crate) fn direct_callee(func: &Function, v: Value) -> Option<&str> {
    match &func.inst(v).kind {
        InstKind::Call {
            callee: Callee::Direct(name),
            ..
        } => Some(name),
        _ => None,
    }
}

/// The blocks `within` accepts from which no path gets out of them without an instruction
/// `ends` accepts: a `return`, an edge out of `within`, or a block with no successors and
/// no ending call is a way out, and so is every block with a path to one that passes no
/// ending call. The greatest such set: a path that cycles forever inside (a loop printing
/// a message) never gets out either, and what it does is what the program does; the
/// callers require an ending call to be there.
pub(crate) fn doomed_blocks(
    func: &Function,
    within: &dyn Fn(Block) -> bool,
    ends: &dyn Fn(Value) -> bool,
) -> BTreeSet<Block> {
    doomed_among(func, func.blocks().filter(|b| within(*b)).collect(), ends)
}

/// [`doomed_blocks`] over `candidates` only (a loop's blocks): the work is proportional to
/// them, not to the function, so 10,000 loops in a row stay linear.
pub(crate) fn doomed_among(
    func: &Function,
    candidates: Vec<Block>,
    ends: &dyn Fn(Value) -> bool,
) -> BTreeSet<Block> {
    let ending: BTreeSet<Block> = candidates
        .iter()
        .copied()
        .filter(|b| func.block(*b).insts.iter().any(|v| ends(*v)))
        .collect();
    let mut doomed: BTreeSet<Block> = candidates.iter().copied().collect();
    loop {
        let before = doomed.len();
        for &b in &candidates {
            if !doomed.contains(&b) || ending.contains(&b) {
                continue;
            }
            let next = taken_successors(func, b);
            if next.is_empty() || next.iter().any(|s| !doomed.contains(s)) {
                doomed.remove(&b);
            }
        }
        if doomed.len() == before {
            return doomed;
        }
    }
}

/// The successors of `b` that its terminator may take: a branch on a constant condition
/// takes one (`assert(0)` expands to `(0 != 0) ? (void)0 : __assert_fail(...)`).
pub(crate) fn taken_successors(func: &Function, b: Block) -> Vec<Block> {
    match &func.block(b).terminator {
        Terminator::Branch {
            cond,
            then_block,
            else_block,
        } => match constant(func, *cond, 0) {
            Some(c) if c != 0 => vec![*then_block],
            Some(_) => vec![*else_block],
            None => vec![*then_block, *else_block],
        },
        t => t.successors(),
    }
}

/// The integer value of `v` when it is a constant, a cast of one, or a comparison or `!`
/// of constants; a few levels deep.
fn constant(func: &Function, v: Value, depth: u32) -> Option<i128> {
    if depth > 8 {
        return None;
    }
    let c = |x: Value| constant(func, x, depth + 1);
    match &func.inst(v).kind {
        InstKind::Const(Constant::Int(k)) => Some(*k),
        // A small value survives a cast to any arithmetic type.
        InstKind::Cast(x) => c(*x).filter(|k| (-128..=127).contains(k)),
        InstKind::Unary(UnOp::Not, x) => c(*x).map(|k| i128::from(k == 0)),
        InstKind::Binary(op, a, b) => {
            let (a, b) = (c(*a)?, c(*b)?);
            let truth = match op {
                BinOp::Eq => a == b,
                BinOp::Ne => a != b,
                BinOp::Lt => a < b,
                BinOp::Le => a <= b,
                BinOp::Gt => a > b,
                BinOp::Ge => a >= b,
                _ => return None,
            };
            Some(i128::from(truth))
        }
        _ => None,
    }
}
