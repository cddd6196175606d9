//! Error paths of a loop: branches of `if` statements in its body from which no path gets
//! back to the loop's header, or out of the loop, without a call that does not return
//! (`noreturn`). The host-only
//! calls on them (`fprintf(stderr, ...)` before `exit(1)`) do not keep the loop off the GPU:
//! a port flags the failing iteration on the device, skips the rest of it, and after the
//! kernel runs the first failing iteration again on the host, where the calls happen as in
//! the sequential program.
//!
//! That re-run is exact when the iteration reads, up to its ending call, what it read in
//! the sequential program. Friendliness already says no other iteration writes what it
//! reads; [`rerun_conflict`] checks that the iteration itself has not overwritten, before
//! its error branch, memory it reads before that write, and [`carried_read`] that the path
//! reads no value carried from the previous iteration (a reduction's running value).

use crate::access::MemAccess;
use crate::model::{Branch, ErrorEnd};
use crate::noreturn::{direct_callee, doomed_among, taken_successors};
use crate::program::ProgramView;
use frontend::ir::{Block, Function, InstKind, Span, Value};
use frontend::loops::Loop;
use std::collections::{BTreeSet, HashSet};

/// One error branch of a loop.
#[derive(Clone, Debug)]
pub struct ErrorBranch {
    /// Its first block, which only the branch's edge enters.
    pub entry: Block,
    /// The blocks from `entry` up to the ending calls.
    pub blocks: BTreeSet<Block>,
    /// The `if` statement (an index into `Function::ifs`) and which of its branches.
    pub if_index: usize,
    pub branch: Branch,
    /// The calls that do not return, in source order, with how each leaves.
    pub endings: Vec<(Value, String, ErrorEnd)>,
    /// Every call the branch makes, in source order.
    pub calls: Vec<Value>,
}

impl ErrorBranch {
    /// How the branch leaves: a jump when any of its ending calls may resume the program.
    pub fn ends(&self) -> ErrorEnd {
        self.endings
            .iter()
            .map(|(_, _, e)| *e)
            .max()
            .unwrap_or(ErrorEnd::Exit)
    }
}

/// The error branches of loop `l` of `func` (in unit `unit` of `view`): each the outermost
/// branch of an `if` statement of the body from which no path gets back to the header or
/// out of the loop without a call that does not return (a loop printing lines before
/// `exit` is fine), and whose code is all written inside the branch (a `goto` to shared error code
/// elsewhere is not one: the port replaces the branch's text).
pub fn find(view: &ProgramView, unit: usize, func: &Function, l: &Loop) -> Vec<ErrorBranch> {
    let ending = |v: Value| {
        direct_callee(func, v).and_then(|n| crate::noreturn::ending(view, unit, n).map(|e| (n, e)))
    };
    let in_iteration = |b: Block| l.contains(b) && b != l.header;
    let body: Vec<Block> = l
        .blocks
        .iter()
        .copied()
        .filter(|b| in_iteration(*b))
        .collect();
    let doomed = doomed_among(func, body, &|v| ending(v).is_some());
    if doomed.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(Span, ErrorBranch)> = Vec::new();
    for (if_index, r) in func.ifs.iter().enumerate() {
        if !r.statement || !in_iteration(r.cond_block) {
            continue;
        }
        let branches = [
            (Branch::Then, Some(r.then_block), Some(r.then_span)),
            (Branch::Else, r.else_block, r.else_span),
        ];
        for (branch, entry, span) in branches {
            let (Some(entry), Some(span)) = (entry, span) else {
                continue;
            };
            if !doomed.contains(&entry) || doomed.contains(&r.cond_block) {
                continue;
            }
            let blocks = branch_blocks(func, entry, &in_iteration, &|v| ending(v).is_some());
            let inside = |s: Span| s.is_none() || (span.start <= s.start && s.end <= span.end);
            let written_inside = blocks.iter().all(|b| {
                func.block(*b)
                    .insts
                    .iter()
                    .all(|v| inside(func.inst(*v).origin.span))
            });
            if !written_inside {
                continue;
            }
            let mut calls: Vec<Value> = blocks
                .iter()
                .flat_map(|b| func.block(*b).insts.iter().copied())
                .filter(|v| matches!(func.inst(*v).kind, InstKind::Call { .. }))
                .collect();
            calls.sort_by_key(|v| (func.inst(*v).origin.span.start, *v));
            let endings = calls
                .iter()
                .filter_map(|v| ending(*v).map(|(n, e)| (*v, n.to_string(), e)))
                .collect();
            found.push((
                span,
                ErrorBranch {
                    entry,
                    blocks,
                    if_index,
                    branch,
                    endings,
                    calls,
                },
            ));
        }
    }
    // The outermost branches: one inside another is part of it.
    let spans: Vec<Span> = found.iter().map(|(s, _)| *s).collect();
    found
        .into_iter()
        .filter(|(s, _)| {
            !spans
                .iter()
                .any(|o| o != s && o.start <= s.start && s.end <= o.end)
        })
        .map(|(_, b)| b)
        .collect()
}

/// The blocks from `entry` on, not past a block that holds an ending call.
fn branch_blocks(
    func: &Function,
    entry: Block,
    within: &dyn Fn(Block) -> bool,
    ends: &dyn Fn(Value) -> bool,
) -> BTreeSet<Block> {
    let mut seen = BTreeSet::from([entry]);
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        if func.block(b).insts.iter().any(|v| ends(*v)) {
            continue;
        }
        for s in taken_successors(func, b) {
            if within(s) && seen.insert(s) {
                work.push(s);
            }
        }
    }
    seen
}

/// The blocks reachable from `from` in one iteration of `l` (edges back to the header
/// left out); `from` itself only through a cycle of an inner loop.
fn reached_in_iteration(func: &Function, l: &Loop, from: Block) -> BTreeSet<Block> {
    let mut seen = BTreeSet::new();
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        for s in func.block(b).terminator.successors() {
            if l.contains(s) && s != l.header && seen.insert(s) {
                work.push(s);
            }
        }
    }
    seen
}

/// A store the kernel makes before `branch` is taken and a load the re-run makes before
/// its ending call that may touch the same memory, the load first: re-run, the iteration
/// would read what its first run wrote (`a[i] = a[i] * 2;` before `if (a[i] < 0) exit(1);`).
/// `apart` says whether two accesses' bases are known to be different objects. Returns
/// (load, store).
pub fn rerun_conflict<'m>(
    func: &Function,
    l: &Loop,
    branch: &ErrorBranch,
    accesses: &'m [MemAccess],
    apart: &dyn Fn(&MemAccess, &MemAccess) -> bool,
) -> Option<(&'m MemAccess, &'m MemAccess)> {
    let block_of = |a: &MemAccess| func.inst(a.inst).block;
    // Blocks of the iteration that can run before the branch is entered: the header
    // and every block from which the branch is reachable within the iteration.
    let before: BTreeSet<Block> = l
        .blocks
        .iter()
        .copied()
        .filter(|b| {
            !branch.blocks.contains(b)
                && (*b == l.header || reached_in_iteration(func, l, *b).contains(&branch.entry))
        })
        .collect();
    let reach: std::collections::HashMap<Block, BTreeSet<Block>> = before
        .iter()
        .chain(&branch.blocks)
        .map(|b| (*b, reached_in_iteration(func, l, *b)))
        .collect();
    let position = |a: &MemAccess| {
        let b = block_of(a);
        func.block(b).insts.iter().position(|v| *v == a.inst)
    };
    let stores = accesses
        .iter()
        .filter(|a| a.is_store && before.contains(&block_of(a)));
    for store in stores {
        for load in accesses.iter().filter(|a| !a.is_store) {
            let lb = block_of(load);
            if !before.contains(&lb) && !branch.blocks.contains(&lb) {
                continue;
            }
            // A call may read and then write the same memory: its position is the call's.
            let first = (lb == block_of(store) && position(load) <= position(store))
                || reach.get(&lb).is_some_and(|r| r.contains(&block_of(store)));
            if first && !apart(load, store) {
                return Some((load, store));
            }
        }
    }
    None
}

/// A value the branch uses that is carried from the previous iteration of `l` (a header
/// phi other than an induction variable's, such as a reduction's running value), found
/// through the operands of the branch's instructions: on the host after the kernel it
/// holds another value than it held in the failing iteration.
pub fn carried_read(
    func: &Function,
    l: &Loop,
    branch: &ErrorBranch,
    induction: &HashSet<Value>,
) -> Option<Value> {
    let mut seen = HashSet::new();
    let mut work: Vec<Value> = branch
        .blocks
        .iter()
        .flat_map(|b| func.block(*b).insts.iter())
        .flat_map(|v| func.inst(*v).kind.operands())
        .collect();
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        let data = func.inst(v);
        if !l.contains(data.block) {
            continue;
        }
        if let InstKind::Phi(args) = &data.kind {
            if data.block == l.header {
                if induction.contains(&v) {
                    continue;
                }
                return Some(v);
            }
            work.extend(args.iter().map(|(_, a)| *a));
            continue;
        }
        work.extend(data.kind.operands());
    }
    None
}
