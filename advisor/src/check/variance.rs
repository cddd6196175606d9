//! Which values of a kernel can differ between the threads of one warp (divergence
//! analysis): a value is uniform when every thread of a warp that computes it gets the same.
//!
//! The sources are the thread coordinates that vary along a warp (`threadIdx.x` always;
//! `threadIdx.y` when a warp spans rows), per-thread memory (a local whose stores vary or
//! whose address escapes), loads from varying addresses, calls that may depend on the thread
//! (atomics return a different value to each thread) and the synchronization dependence of
//! a join: a phi where the paths of a varying branch meet (between the branch and its
//! immediate post-dominator) varies. A value computed inside a loop whose exit condition
//! varies and used after the loop varies too: threads leave after different iterations.
//!
//! The analysis is a fixpoint of monotone facts (a value only ever becomes varying), so it
//! terminates; everything it cannot tell is varying.

use frontend::ir::{
    thread_coordinate, Axis, Block, Callee, Function, InstKind, Program, Terminator, ThreadBuiltin,
    Value,
};
use frontend::loops::LoopForest;
use std::collections::{HashMap, HashSet};

/// Prefixes of the external functions that may answer each thread differently given the
/// same arguments: atomics (each thread gets the value before its own update), warp
/// shuffles and votes, clocks and random numbers. Other external functions of device code
/// are math (`sqrtf`, `__expf`, `min`), whose result the arguments decide.
const PER_THREAD: &[&str] = &[
    "atomic",
    "__shfl",
    "__ballot",
    "__any",
    "__all",
    "__activemask",
    "__match",
    "__lane",
    "clock",
    "rand",
    "curand",
];

/// The warp-varying values of one kernel.
#[derive(Clone, Debug)]
pub struct Variance {
    varies: Vec<bool>,
    /// Loops with an exit branch whose condition varies.
    divergent_loops: HashSet<frontend::loops::LoopId>,
    /// The block of each value's definition.
    def_block: Vec<Block>,
    /// The blocks of each loop of the forest.
    loop_blocks: Vec<std::collections::BTreeSet<Block>>,
    /// Values every thread computes alike whenever it does: constants, parameters, and
    /// what is computed from them and from `__constant__` memory alone (which no kernel
    /// writes), so that a thread leaving a loop early holds the same value as the others.
    fixed: Vec<bool>,
    /// Values whose form the lanes of a warp may choose differently: a phi where the paths
    /// of a varying branch meet, a `?:` on a varying condition, a local stored on more than
    /// one path while some branch varies, a value from another iteration of a loop threads
    /// leave apart, and what is computed from those. A value that does not mix has one
    /// form per warp even when it varies (`base + threadIdx.x` with `base` chosen by a
    /// uniform branch).
    mixes: Vec<bool>,
}

impl Variance {
    /// The analysis of `func`; `axes` says which of `threadIdx.x/y/z` vary along a warp.
    pub fn of(program: &Program, func: &Function, forest: &LoopForest, axes: [bool; 3]) -> Self {
        let n = func.insts.len();
        let def_block: Vec<Block> = func.insts.iter().map(|i| i.block).collect();
        let mut v = Variance {
            varies: vec![false; n],
            divergent_loops: HashSet::new(),
            def_block,
            loop_blocks: forest.loops.iter().map(|l| l.blocks.clone()).collect(),
            fixed: fixed_values(program, func),
            mixes: Vec::new(),
        };
        let pdom = PostDominators::of(func);
        let thread_dependent = ThreadDependentCallees::new(program);
        let mut slot_varies = vec![false; func.slots.len()];
        // Rounds until nothing changes: each round only adds varying facts.
        for _ in 0..=n + func.slots.len() + func.blocks.len() {
            let mut changed = false;
            let joins = divergent_joins(func, &v.varies, &pdom);
            let loops = divergent_loops(func, forest, &v.varies);
            if loops != v.divergent_loops {
                v.divergent_loops = loops;
                changed = true;
            }
            for b in func.blocks() {
                for &value in &func.block(b).insts {
                    let inst = func.inst(value);
                    if let InstKind::Store {
                        addr,
                        value: stored,
                    } = inst.kind
                    {
                        if let Some(slot) = local_slot(func, addr) {
                            let varying = v.operand_varies(addr, b) || v.operand_varies(stored, b);
                            if varying && !slot_varies[slot] {
                                slot_varies[slot] = true;
                                changed = true;
                            }
                        }
                        continue;
                    }
                    if v.varies[value.index()] {
                        continue;
                    }
                    let varying = v.computes_varying(
                        program,
                        func,
                        value,
                        b,
                        axes,
                        &joins,
                        &slot_varies,
                        &thread_dependent,
                    );
                    if varying {
                        v.varies[value.index()] = true;
                        changed = true;
                    }
                    // A local whose address reaches a call may be written by it.
                    if let InstKind::Call { args, .. } = &inst.kind {
                        for &a in args {
                            if let Some(slot) = local_slot(func, a) {
                                if !slot_varies[slot] {
                                    slot_varies[slot] = true;
                                    changed = true;
                                }
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let joins = divergent_joins(func, &v.varies, &pdom);
        v.mixes = v.mixing(func, &joins);
        v
    }

    /// Whether the lanes of a warp may hold `value` in different forms at `at` (see
    /// `Variance::mixes`).
    pub fn mixes_at(&self, value: Value, at: Block) -> bool {
        self.mixes.get(value.index()).copied().unwrap_or(true)
            || self.held_from_another_iteration(value, at)
    }

    /// Whether `value`, defined in a loop threads leave at different iterations, is used
    /// at `at` outside it (each lane holds its own last iteration's), unless every
    /// iteration computes it alike.
    fn held_from_another_iteration(&self, value: Value, at: Block) -> bool {
        if self.fixed.get(value.index()).copied().unwrap_or(false) {
            return false;
        }
        let Some(&def) = self.def_block.get(value.index()) else {
            return true;
        };
        self.divergent_loops.iter().any(|l| {
            let blocks = &self.loop_blocks[l.0 as usize];
            blocks.contains(&def) && !blocks.contains(&at)
        })
    }

    /// The fixpoint of `Variance::mixes`, once `varies` is final.
    fn mixing(&self, func: &Function, joins: &HashSet<Block>) -> Vec<bool> {
        let n = func.insts.len();
        let mut mixes = vec![false; n];
        let any_varying_branch = func.blocks().any(|b| {
            matches!(func.block(b).terminator, Terminator::Branch { cond, .. } if self.varies_at(cond, b))
        });
        // Locals stored in more than one block: under a varying branch, lanes keep
        // different stores.
        let mut stored_in: Vec<HashSet<Block>> = vec![HashSet::new(); func.slots.len()];
        for b in func.blocks() {
            for &value in &func.block(b).insts {
                if let InstKind::Store { addr, .. } = func.inst(value).kind {
                    if let Some(slot) = local_slot(func, addr) {
                        stored_in[slot].insert(b);
                    }
                }
            }
        }
        let mut slot_mixes: Vec<bool> = stored_in
            .iter()
            .map(|blocks| any_varying_branch && blocks.len() > 1)
            .collect();
        let operand = |mixes: &[bool], o: Value, at: Block| {
            mixes[o.index()] || self.held_from_another_iteration(o, at)
        };
        for _ in 0..=n + func.slots.len() {
            let mut changed = false;
            for b in func.blocks() {
                for &value in &func.block(b).insts {
                    let kind = &func.inst(value).kind;
                    if let InstKind::Store {
                        addr,
                        value: stored,
                    } = *kind
                    {
                        if let Some(slot) = local_slot(func, addr) {
                            if !slot_mixes[slot]
                                && (operand(&mixes, addr, b) || operand(&mixes, stored, b))
                            {
                                slot_mixes[slot] = true;
                                changed = true;
                            }
                        }
                        continue;
                    }
                    if mixes[value.index()] {
                        continue;
                    }
                    let now = match kind {
                        InstKind::Phi(args) => {
                            joins.contains(&b)
                                || args.iter().any(|&(pred, a)| operand(&mixes, a, pred))
                        }
                        InstKind::Select {
                            cond,
                            then_value,
                            else_value,
                        } => {
                            self.varies_at(*cond, b)
                                || operand(&mixes, *then_value, b)
                                || operand(&mixes, *else_value, b)
                        }
                        InstKind::Load { addr } => {
                            operand(&mixes, *addr, b)
                                || local_slot(func, *addr).is_some_and(|s| slot_mixes[s])
                        }
                        other => other.operands().iter().any(|&o| operand(&mixes, o, b)),
                    };
                    if now {
                        mixes[value.index()] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        mixes
    }

    /// Whether `value`, used in block `at`, may differ between the threads of a warp.
    pub fn varies_at(&self, value: Value, at: Block) -> bool {
        self.operand_varies(value, at)
    }

    /// Whether the value itself (wherever used inside its loops) may differ.
    pub fn varies(&self, value: Value) -> bool {
        self.varies.get(value.index()).copied().unwrap_or(true)
    }

    fn operand_varies(&self, value: Value, at: Block) -> bool {
        self.varies(value) || self.held_from_another_iteration(value, at)
    }

    #[allow(clippy::too_many_arguments)]
    fn computes_varying(
        &self,
        program: &Program,
        func: &Function,
        value: Value,
        at: Block,
        axes: [bool; 3],
        joins: &HashSet<Block>,
        slot_varies: &[bool],
        thread_dependent: &ThreadDependentCallees,
    ) -> bool {
        if let Some((builtin, axis)) = thread_coordinate(program, func, value) {
            return builtin == ThreadBuiltin::ThreadIdx
                && match axis {
                    Some(Axis::X) => axes[0],
                    Some(Axis::Y) => axes[1],
                    Some(Axis::Z) => axes[2],
                    None => false,
                };
        }
        let inst = func.inst(value);
        let any = |ops: &[Value]| ops.iter().any(|&o| self.operand_varies(o, at));
        match &inst.kind {
            InstKind::Param(_)
            | InstKind::Const(_)
            | InstKind::Undef
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => false,
            InstKind::Phi(args) => {
                joins.contains(&inst.block)
                    || args.iter().any(|&(pred, a)| self.operand_varies(a, pred))
            }
            InstKind::Load { addr } => {
                self.operand_varies(*addr, at)
                    || local_slot(func, *addr).is_some_and(|s| slot_varies[s])
            }
            InstKind::Call { callee, args } => {
                if any(args) {
                    return true;
                }
                match callee {
                    Callee::Indirect(_) => true,
                    Callee::Direct(name) => thread_dependent.is(name),
                }
            }
            other => any(&other.operands()),
        }
    }
}

/// The values of `func` that are the same for every thread at every point where they are
/// computed (see `Variance::fixed`); phis never are. Instruction order is not definition
/// order across blocks, so passes repeat until none adds a value (each only adds).
fn fixed_values(program: &Program, func: &Function) -> Vec<bool> {
    let mut fixed = vec![false; func.insts.len()];
    loop {
        let mut changed = false;
        for v in func.values() {
            if fixed[v.index()] {
                continue;
            }
            let all = |ops: &[Value]| ops.iter().all(|o| fixed[o.index()]);
            let now = match &func.inst(v).kind {
                InstKind::Const(_) | InstKind::Param(_) => true,
                InstKind::GlobalAddr(_) | InstKind::FuncAddr(_) | InstKind::StringAddr(_) => true,
                InstKind::Load { addr } => {
                    fixed[addr.index()] && in_constant_memory(program, func, *addr)
                }
                InstKind::Binary(..)
                | InstKind::Unary(..)
                | InstKind::Cast(_)
                | InstKind::Select { .. }
                | InstKind::PtrAdd { .. }
                | InstKind::FieldAddr { .. } => all(&func.inst(v).kind.operands()),
                _ => false,
            };
            if now {
                fixed[v.index()] = true;
                changed = true;
            }
        }
        if !changed {
            return fixed;
        }
    }
}

/// Whether `addr` points into a `__constant__` variable.
fn in_constant_memory(program: &Program, func: &Function, mut addr: Value) -> bool {
    for _ in 0..64 {
        match &func.inst(addr).kind {
            InstKind::GlobalAddr(g) => {
                return program.global(*g).cuda == Some(frontend::ir::CudaVariable::Constant)
            }
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => addr = *base,
            InstKind::Cast(v) => addr = *v,
            _ => return false,
        }
    }
    false
}

/// The non-shared local slot an address points into (per-thread memory), if any.
fn local_slot(func: &Function, mut addr: Value) -> Option<usize> {
    for _ in 0..64 {
        match &func.inst(addr).kind {
            InstKind::SlotAddr(s) => {
                return (!func.slot(*s).shared).then_some(s.index());
            }
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => addr = *base,
            InstKind::Cast(v) => addr = *v,
            _ => return None,
        }
    }
    None
}

/// The blocks where the two sides of a varying branch meet: reachable from both of the
/// branch's successors without passing through the branch again, up to and including its
/// immediate post-dominator. Their phis merge values of threads that took different sides.
fn divergent_joins(func: &Function, varies: &[bool], pdom: &PostDominators) -> HashSet<Block> {
    let mut joins = HashSet::new();
    for b in func.blocks() {
        let Terminator::Branch {
            cond,
            then_block,
            else_block,
        } = func.block(b).terminator
        else {
            continue;
        };
        if !varies[cond.index()] {
            continue;
        }
        let stop = pdom.immediate(b);
        let reach = |from: Block| {
            let mut seen = HashSet::new();
            let mut work = vec![from];
            while let Some(x) = work.pop() {
                if x == b || !seen.insert(x) {
                    continue;
                }
                if Some(x) == stop {
                    continue;
                }
                work.extend(func.block(x).terminator.successors());
            }
            seen
        };
        let (one, two) = (reach(then_block), reach(else_block));
        for j in one.intersection(&two) {
            if func.block(*j).preds.len() >= 2 {
                joins.insert(*j);
            }
        }
    }
    joins
}

/// The loops with an exit branch (a branch inside the loop with a successor outside it)
/// whose condition varies.
fn divergent_loops(
    func: &Function,
    forest: &LoopForest,
    varies: &[bool],
) -> HashSet<frontend::loops::LoopId> {
    let mut out = HashSet::new();
    for id in forest.ids() {
        let l = forest.loop_(id);
        let divergent = l.blocks.iter().any(|&b| match func.block(b).terminator {
            Terminator::Branch {
                cond,
                then_block,
                else_block,
            } => varies[cond.index()] && (!l.contains(then_block) || !l.contains(else_block)),
            _ => false,
        });
        if divergent {
            out.insert(id);
        }
    }
    out
}

/// Post-dominators by the iterative set algorithm over the reversed CFG; blocks that reach
/// no exit have none.
pub(crate) struct PostDominators {
    immediate: Vec<Option<Block>>,
}

impl PostDominators {
    pub(crate) fn of(func: &Function) -> Self {
        let n = func.blocks.len();
        let exits: Vec<bool> = func
            .blocks
            .iter()
            .map(|b| b.terminator.successors().is_empty())
            .collect();
        // pdom[b] as a bit set; `None` is "every block" (not yet known).
        let mut pdom: Vec<Option<Vec<bool>>> = (0..n)
            .map(|b| {
                exits[b].then(|| {
                    let mut set = vec![false; n];
                    set[b] = true;
                    set
                })
            })
            .collect();
        let mut changed = true;
        let mut rounds = 0;
        while changed && rounds <= n + 1 {
            changed = false;
            rounds += 1;
            for b in (0..n).rev() {
                if exits[b] {
                    continue;
                }
                let mut meet: Option<Vec<bool>> = None;
                for s in func.blocks[b].terminator.successors() {
                    let Some(set) = &pdom[s.index()] else {
                        continue;
                    };
                    meet = Some(match meet {
                        None => set.clone(),
                        Some(m) => m.iter().zip(set).map(|(a, b)| *a && *b).collect(),
                    });
                }
                let Some(mut set) = meet else {
                    continue;
                };
                set[b] = true;
                if pdom[b].as_ref() != Some(&set) {
                    pdom[b] = Some(set);
                    changed = true;
                }
            }
        }
        let size = |b: usize| {
            pdom[b]
                .as_ref()
                .map_or(0, |s| s.iter().filter(|x| **x).count())
        };
        let immediate = (0..n)
            .map(|b| {
                let set = pdom[b].as_ref()?;
                let own = size(b);
                // The strict post-dominator with one block fewer: the nearest one.
                (0..n)
                    .filter(|&p| p != b && set[p])
                    .find(|&p| size(p) + 1 == own)
                    .map(|p| Block(p as u32))
            })
            .collect();
        PostDominators { immediate }
    }

    fn immediate(&self, b: Block) -> Option<Block> {
        self.immediate.get(b.index()).copied().flatten()
    }

    /// Whether every path from `b` to an exit passes through `a` (`a == b` included).
    pub(crate) fn post_dominates(&self, a: Block, b: Block) -> bool {
        let mut at = Some(b);
        // The chain of immediate post-dominators is at most one per block long.
        for _ in 0..=self.immediate.len() {
            match at {
                Some(x) if x == a => return true,
                Some(x) => at = self.immediate(x),
                None => return false,
            }
        }
        false
    }
}

/// Which callees may return different values to different threads given the same
/// arguments: external functions named in [`PER_THREAD`], and defined functions that read a thread
/// coordinate, read memory or call such a function (memoized; recursion counts as varying).
struct ThreadDependentCallees<'p> {
    program: &'p Program,
    memo: std::cell::RefCell<HashMap<String, bool>>,
}

impl<'p> ThreadDependentCallees<'p> {
    fn new(program: &'p Program) -> Self {
        ThreadDependentCallees {
            program,
            memo: Default::default(),
        }
    }

    fn is(&self, name: &str) -> bool {
        if let Some(&known) = self.memo.borrow().get(name) {
            return known;
        }
        let Some(func) = self.program.function(name) else {
            return PER_THREAD.iter().any(|p| name.starts_with(p));
        };
        // Recursion: assumed varying while it is being decided.
        self.memo.borrow_mut().insert(name.to_string(), true);
        let depends = func.values().any(|v| {
            if thread_coordinate(self.program, func, v)
                .is_some_and(|(b, _)| b == ThreadBuiltin::ThreadIdx)
            {
                return true;
            }
            match &func.inst(v).kind {
                InstKind::Load { .. } => true,
                InstKind::Call {
                    callee: Callee::Direct(callee),
                    ..
                } => self.is(callee),
                InstKind::Call { .. } => true,
                _ => false,
            }
        });
        self.memo.borrow_mut().insert(name.to_string(), depends);
        depends
    }
}
