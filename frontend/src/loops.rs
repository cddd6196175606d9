//! The loop forest of a function: natural loops from dominators, their nesting, exits,
//! basic induction variables and normalizability (thesis §4.1), and trip counts in source
//! terms.
//!
//! A loop is *normalizable* when it has one exit, taken by a test that compares a basic
//! induction variable (one phi at the header, updated by a constant step on every path to
//! the latch and nowhere else) against a bound computed outside the loop. Bounds that read
//! memory inside the loop (`y < image->height`, `i < nodeCount(graph)`) are normalizable
//! only if what they read is loop-invariant, which memory analysis decides later: such loops
//! are reported as [`Normalizable::IfInvariant`] with the loads and calls in question.

use crate::ir::dominators::{DomIntervals, Dominators};
use crate::ir::{BinOp, Block, Callee, Function, InstKind, SourceLoopId, Terminator, UnOp, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Index of a loop in [`LoopForest::loops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopId(pub u32);

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

/// A basic induction variable `iv = phi(init, iv + step)`.
#[derive(Clone, Debug, PartialEq)]
pub struct InductionVariable {
    pub phi: Value,
    pub name: Option<String>,
    /// Value entering from outside the loop.
    pub init: Value,
    /// Constant step added on every iteration.
    pub step: i128,
    /// The value `iv + step` flowing back to the header.
    pub update: Value,
}

/// How the loop exits, normalized to `iv' CMP bound` where `iv'` is the induction variable
/// (or its updated value when `tests_update`, as in `do { } while (++i < n)`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExitTest {
    /// The induction variable tested (index into [`Loop::induction_variables`]).
    pub iv: usize,
    /// The loop continues while `iv CMP bound` holds.
    pub cmp: BinOp,
    pub bound: Value,
    pub tests_update: bool,
    /// The block whose branch leaves the loop.
    pub block: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Normalizable {
    Yes,
    /// Yes, provided these loads and calls of functions (with invariant arguments) inside
    /// the loop give the same value every iteration: a call does when the function only
    /// reads memory that the loop does not write.
    IfInvariant {
        reads: Vec<Value>,
    },
    No {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub header: Block,
    pub latches: Vec<Block>,
    /// All blocks of the loop, header included, in ascending order.
    pub blocks: BTreeSet<Block>,
    /// Edges leaving the loop: (from inside, to outside).
    pub exits: Vec<(Block, Block)>,
    pub parent: Option<LoopId>,
    pub children: Vec<LoopId>,
    /// 1 for outermost loops.
    pub depth: u32,
    /// The loop as written in the source, when lowering recorded one for this header.
    pub source: Option<SourceLoopId>,
    pub induction_variables: Vec<InductionVariable>,
    pub exit_test: Option<ExitTest>,
    /// The header's test of an induction variable against a bound when the loop may also
    /// leave elsewhere (`break`, `return`): every iteration still passes it, so the
    /// variable's visited values lie within the range it bounds. `None` when `exit_test` is
    /// set (then it is the same test) or the header does not test a variable.
    pub header_test: Option<ExitTest>,
    pub normalizable: Normalizable,
}

impl Loop {
    pub fn contains(&self, block: Block) -> bool {
        self.blocks.contains(&block)
    }

    /// The induction variable the exit test uses: the loop's index.
    pub fn primary_iv(&self) -> Option<&InductionVariable> {
        self.exit_test
            .as_ref()
            .map(|t| &self.induction_variables[t.iv])
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LoopForest {
    pub loops: Vec<Loop>,
    /// Set when the CFG has a cycle that is not a natural loop (e.g. `goto` into a loop).
    pub irreducible: Option<String>,
    /// Immediate dominator of every reachable block.
    pub idom: Vec<Option<Block>>,
    /// [`LoopForest::innermost`] of every block.
    innermost: Vec<Option<LoopId>>,
    /// [`LoopForest::dominates`] in O(1): summaries ask it for every pair of a function's
    /// accesses, and a walk up the dominators is as long as the function.
    dominance: DomIntervals,
    /// The deepest block that dominates every reachable `return`: a block lies on every
    /// path to a return exactly when it dominates this one. `None` when no return is
    /// reachable.
    returns_dominator: Option<Block>,
}

impl LoopForest {
    pub fn loop_(&self, id: LoopId) -> &Loop {
        &self.loops[id.0 as usize]
    }
    pub fn ids(&self) -> impl Iterator<Item = LoopId> {
        (0..self.loops.len() as u32).map(LoopId)
    }
    pub fn roots(&self) -> impl Iterator<Item = LoopId> + '_ {
        self.ids().filter(|l| self.loop_(*l).parent.is_none())
    }
    /// The innermost loop containing `block`.
    pub fn innermost(&self, block: Block) -> Option<LoopId> {
        self.innermost.get(block.index()).copied().flatten()
    }
    /// The loop created for a source loop.
    pub fn of_source(&self, source: SourceLoopId) -> Option<LoopId> {
        self.ids().find(|l| self.loop_(*l).source == Some(source))
    }
    /// Whether `a` dominates `b`.
    /// Every block dominates itself; a block the entry does not reach dominates nothing and
    /// is dominated by nothing.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.dominance.dominates(a, b)
    }
    /// Whether every path from the entry to a reachable `return` passes through `block`
    /// (vacuously, when no return is reachable).
    pub fn on_every_path_to_return(&self, block: Block) -> bool {
        self.returns_dominator
            .is_none_or(|meet| self.dominates(block, meet))
    }
}

/// The nearest common dominator of the reachable blocks that end in `return`.
fn returns_dominator(
    func: &Function,
    doms: &DomIntervals,
    idom: &[Option<Block>],
) -> Option<Block> {
    let reachable = |b: Block| b == func.entry || idom.get(b.index()).copied().flatten().is_some();
    let mut meet: Option<Block> = None;
    for b in func.blocks() {
        if !matches!(func.block(b).terminator, Terminator::Return(_)) || !reachable(b) {
            continue;
        }
        let mut m = meet.unwrap_or(b);
        // Up the tree from the meet so far until it covers `b`: each step moves up, so all
        // the returns together cost the function's size.
        while !doms.dominates(m, b) {
            m = idom.get(m.index()).copied().flatten()?;
        }
        meet = Some(m);
    }
    meet
}

/// Computes the loop forest of a function.
pub fn analyze_loops(func: &Function) -> LoopForest {
    let doms = Dominators::of(func);
    let idom = doms.immediate();

    // Back edges (target dominates source) grouped by header; other retreating edges make
    // the CFG irreducible.
    let mut latches: BTreeMap<Block, Vec<Block>> = BTreeMap::new();
    let mut irreducible = None;
    let order = dfs_order(func);
    for b in func.blocks() {
        for s in func.block(b).terminator.successors() {
            // A back edge is retreating in every DFS; testing that first keeps the walk up
            // the dominator tree off the other edges (quadratic on long else-if chains).
            if !order.is_retreating(b, s) {
                continue;
            }
            if doms.dominates(s, b) {
                latches.entry(s).or_default().push(b);
            } else {
                irreducible = Some(format!("irreducible control flow: the edge {b} -> {s} enters a cycle not through its header"));
            }
        }
    }

    let mut loops: Vec<Loop> = Vec::new();
    for (header, latch_list) in latches {
        let mut blocks = BTreeSet::from([header]);
        let mut stack: Vec<Block> = latch_list.clone();
        while let Some(b) = stack.pop() {
            if blocks.insert(b) {
                stack.extend(func.block(b).preds.iter().copied());
            }
        }
        let mut exits = Vec::new();
        for &b in &blocks {
            for s in func.block(b).terminator.successors() {
                if !blocks.contains(&s) {
                    exits.push((b, s));
                }
            }
        }
        let source = func
            .source_loops()
            .find(|(_, l)| source_header(l) == header)
            .map(|(id, _)| id);
        loops.push(Loop {
            header,
            latches: latch_list,
            blocks,
            exits,
            parent: None,
            children: Vec::new(),
            depth: 1,
            source,
            induction_variables: Vec::new(),
            exit_test: None,
            header_test: None,
            normalizable: Normalizable::No {
                reason: String::new(),
            },
        });
    }

    // Nesting: the parent is the smallest larger loop containing the header (the first
    // in loop order among equals). Loops are visited by decreasing size, each block
    // remembering the smallest loop seen so far that holds it: linear in the loops' sizes
    // (a search of every loop per loop made a thousand loops in a row quadratic).
    let count = loops.len();
    let mut by_size: Vec<usize> = (0..count).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(loops[i].blocks.len()));
    let mut owner: Vec<Option<usize>> = vec![None; func.blocks.len()];
    let mut start = 0;
    while start < by_size.len() {
        let size = loops[by_size[start]].blocks.len();
        let end = start + by_size[start..].partition_point(|&i| loops[i].blocks.len() == size);
        let group = &by_size[start..end];
        for &i in group {
            let parent = owner.get(loops[i].header.index()).copied().flatten();
            loops[i].parent = parent.map(|p| LoopId(p as u32));
        }
        // Lower indices last, so that they win among loops of one size.
        let mut group = group.to_vec();
        group.sort_unstable_by_key(|&i| std::cmp::Reverse(i));
        for i in group {
            for b in &loops[i].blocks {
                if let Some(slot) = owner.get_mut(b.index()) {
                    *slot = Some(i);
                }
            }
        }
        start = end;
    }
    for i in 0..count {
        if let Some(p) = loops[i].parent {
            loops[p.0 as usize].children.push(LoopId(i as u32));
        }
        let mut depth = 1;
        let mut current = loops[i].parent;
        while let Some(p) = current {
            depth += 1;
            current = loops[p.0 as usize].parent;
            if depth > count as u32 {
                break;
            }
        }
        loops[i].depth = depth;
    }

    for l in &mut loops {
        l.induction_variables = induction_variables(func, l);
        l.exit_test = exit_test(func, l);
        let header_exits = l.exits.iter().any(|(b, _)| *b == l.header);
        if l.exit_test.is_none() && header_exits {
            l.header_test = block_test(func, l, l.header);
        }
        l.normalizable = normalizability(func, l, &idom);
    }
    let innermost = innermost_loops(func, &loops);
    let dominance = doms.intervals().clone();
    let returns_dominator = returns_dominator(func, &dominance, &idom);
    LoopForest {
        loops,
        irreducible,
        idom,
        innermost,
        dominance,
        returns_dominator,
    }
}

/// The deepest loop containing each block: asked for every access of every loop, a scan of
/// all loops per question made a thousand loops in a row quadratic.
fn innermost_loops(func: &Function, loops: &[Loop]) -> Vec<Option<LoopId>> {
    let mut innermost: Vec<Option<LoopId>> = vec![None; func.blocks.len()];
    for (k, l) in loops.iter().enumerate() {
        for b in &l.blocks {
            if let Some(slot) = innermost.get_mut(b.index()) {
                if slot.is_none_or(|m| loops[m.0 as usize].depth <= l.depth) {
                    *slot = Some(LoopId(k as u32));
                }
            }
        }
    }
    innermost
}

/// The header lowering creates for a source loop.
fn source_header(l: &crate::ir::SourceLoop) -> Block {
    match l.kind {
        crate::ir::LoopKind::DoWhile => l.body_block,
        _ => l.cond_block,
    }
}

struct DfsOrder {
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl DfsOrder {
    /// An edge to an ancestor on the DFS stack.
    fn is_retreating(&self, from: Block, to: Block) -> bool {
        let (f, t) = (from.index(), to.index());
        self.pre[t] <= self.pre[f] && self.post[t] >= self.post[f] && self.pre[t] != u32::MAX
    }
}

fn dfs_order(func: &Function) -> DfsOrder {
    let n = func.blocks.len();
    let mut pre = vec![u32::MAX; n];
    let mut post = vec![0u32; n];
    let (mut pre_counter, mut post_counter) = (0u32, 0u32);
    let mut stack: Vec<(Block, usize)> = vec![(func.entry, 0)];
    pre[func.entry.index()] = pre_counter;
    pre_counter += 1;
    while let Some((block, next)) = stack.pop() {
        let succs = func.block(block).terminator.successors();
        if next < succs.len() {
            stack.push((block, next + 1));
            let s = succs[next];
            if pre[s.index()] == u32::MAX {
                pre[s.index()] = pre_counter;
                pre_counter += 1;
                stack.push((s, 0));
            }
        } else {
            post[block.index()] = post_counter;
            post_counter += 1;
        }
    }
    DfsOrder { pre, post }
}

/// Looks through casts (`(long)i`): integer widening keeps an induction variable affine.
pub fn strip_casts(func: &Function, mut v: Value) -> Value {
    for _ in 0..8 {
        match func.inst(v).kind {
            // `i < (int)sqrt(x)` is not `i < sqrt(x)`.
            InstKind::Cast(_) if func.truncations.contains_key(&v) => break,
            InstKind::Cast(inner) => v = inner,
            _ => break,
        }
    }
    v
}

/// Whether the comparison `cond` is made in floating point on a value that may not be an
/// integer: one operand is an integer converted to a floating type (through the casts
/// [`strip_casts`] looks through) and the other is not (`i < x` with `double x`, or a
/// `double` counter against `7`). Both converted (`kk < n` with `double n = count`) compare
/// as the integers do, below 2^53.
fn compares_in_floating_point(func: &Function, cond: Value) -> bool {
    let InstKind::Binary(_, a, b) = func.inst(cond).kind else {
        return false;
    };
    let promoted = |mut v: Value| {
        for _ in 0..8 {
            if func.float_promotions.contains(&v) {
                return true;
            }
            match func.inst(v).kind {
                InstKind::Cast(inner) if !func.truncations.contains_key(&v) => v = inner,
                _ => break,
            }
        }
        false
    };
    promoted(a) != promoted(b)
}

fn induction_variables(func: &Function, l: &Loop) -> Vec<InductionVariable> {
    let mut ivs = Vec::new();
    for &v in &func.block(l.header).insts {
        let InstKind::Phi(args) = &func.inst(v).kind else {
            continue;
        };
        let outside: Vec<Value> = args
            .iter()
            .filter(|(b, _)| !l.contains(*b))
            .map(|(_, v)| *v)
            .collect();
        let inside: Vec<Value> = args
            .iter()
            .filter(|(b, _)| l.contains(*b))
            .map(|(_, v)| *v)
            .collect();
        let [init] = outside.as_slice() else { continue };
        let Some(&update) = inside.first() else {
            continue;
        };
        if inside.iter().any(|u| *u != update) {
            continue;
        }
        if let Some(step) = step_of(func, v, update) {
            ivs.push(InductionVariable {
                phi: v,
                name: func.inst(v).origin.var_name.clone(),
                init: *init,
                step,
                update,
            });
        }
    }
    ivs
}

/// `step` when `update` is `phi` advanced by constants (through casts): `phi + c`,
/// `phi - c`, `p++` (a byte step of `scale * c`), or a chain of those within one iteration
/// (`ii = *p++; jj = *p++;` advances `p` by two elements), whose steps add up.
fn step_of(func: &Function, phi: Value, update: Value) -> Option<i128> {
    // Longer chains are not written by hand; the bound keeps a hostile one cheap.
    const LONGEST_CHAIN: usize = 64;
    let mut total: i128 = 0;
    let mut v = update;
    for _ in 0..LONGEST_CHAIN {
        let (base, step) = constant_step(func, v)?;
        total = total.checked_add(step)?;
        if base == phi {
            return Some(total).filter(|s| *s != 0);
        }
        v = base;
    }
    None
}

/// `v` as `base + step` with a constant step (through casts): `(base, step)`.
fn constant_step(func: &Function, v: Value) -> Option<(Value, i128)> {
    let v = strip_casts(func, v);
    match func.inst(v).kind {
        InstKind::Binary(BinOp::Add, a, b) => {
            let (a, b) = (strip_casts(func, a), strip_casts(func, b));
            match (func.const_int(a), func.const_int(b)) {
                (None, Some(c)) => Some((a, c)),
                (Some(c), None) => Some((b, c)),
                _ => None,
            }
        }
        InstKind::Binary(BinOp::Sub, a, b) => {
            let c = func.const_int(strip_casts(func, b))?;
            Some((strip_casts(func, a), c.checked_neg()?))
        }
        // Pointer induction `p++`, `p--`: a byte step of `scale * c`.
        InstKind::PtrAdd { base, index, scale } => {
            let c = signed_constant(func, index)?.checked_mul(i128::from(scale))?;
            Some((strip_casts(func, base), c))
        }
        _ => None,
    }
}

/// `v` as an integer constant, through casts and a negation: `p--` lowers its index as
/// `neg 1`, which no other pass folds.
fn signed_constant(func: &Function, v: Value) -> Option<i128> {
    let v = strip_casts(func, v);
    match func.inst(v).kind {
        InstKind::Unary(UnOp::Neg, a) => func.const_int(strip_casts(func, a))?.checked_neg(),
        _ => func.const_int(v),
    }
}

fn exit_test(func: &Function, l: &Loop) -> Option<ExitTest> {
    // The loop must have exactly one exiting block, ending in a conditional branch.
    let exiting: BTreeSet<Block> = l.exits.iter().map(|(b, _)| *b).collect();
    let [block] = exiting.iter().copied().collect::<Vec<_>>()[..] else {
        return None;
    };
    block_test(func, l, block)
}

/// The test of an induction variable against a bound that `block`'s branch makes to stay
/// in the loop or leave it.
fn block_test(func: &Function, l: &Loop, block: Block) -> Option<ExitTest> {
    let Terminator::Branch {
        cond,
        then_block,
        else_block,
    } = func.block(block).terminator
    else {
        return None;
    };
    let InstKind::Binary(op, a, b) = func.inst(cond).kind else {
        return None;
    };
    if !op.is_comparison() {
        return None;
    }
    // Continue while the comparison holds: if the true edge leaves, negate it.
    let op = if l.contains(then_block) && !l.contains(else_block) {
        op
    } else if l.contains(else_block) && !l.contains(then_block) {
        op.negated()?
    } else {
        return None;
    };
    // A test in floating point (`i < x` with `double x`) runs `ceil(x)` times: no bound of
    // the counter's type states that.
    if compares_in_floating_point(func, cond) {
        return None;
    }
    let (a, b) = (strip_casts(func, a), strip_casts(func, b));
    for (index, iv) in l.induction_variables.iter().enumerate() {
        let update = strip_casts(func, iv.update);
        for (iv_side, other, cmp) in [(a, b, op), (b, a, op.swapped())] {
            if iv_side == iv.phi || iv_side == update {
                return Some(ExitTest {
                    iv: index,
                    cmp,
                    bound: other,
                    tests_update: iv_side == update,
                    block,
                });
            }
        }
    }
    None
}

fn normalizability(func: &Function, l: &Loop, idom: &[Option<Block>]) -> Normalizable {
    let no = |reason: String| Normalizable::No { reason };
    let exiting: BTreeSet<Block> = l.exits.iter().map(|(b, _)| *b).collect();
    if exiting.len() > 1 {
        return no(format!(
            "the loop has {} exits (break, return or goto out of the loop)",
            exiting.len()
        ));
    }
    if exiting.is_empty() {
        return no("the loop never exits through its condition".into());
    }
    let Some(test) = &l.exit_test else {
        let floating = exiting.iter().any(|&b| match func.block(b).terminator {
            Terminator::Branch { cond, .. } => compares_in_floating_point(func, cond),
            _ => false,
        });
        if floating && !l.induction_variables.is_empty() {
            return no(
                "the exit test compares the counter in floating point (`i < x` with a \
                 `double` bound runs ceil(x) times): compute an integer bound before the loop"
                    .into(),
            );
        }
        return no(if l.induction_variables.is_empty() {
            "no induction variable: no variable is updated by a constant step on every iteration"
                .into()
        } else {
            "the exit condition does not compare an induction variable with a bound".into()
        });
    };
    let iv = &l.induction_variables[test.iv];
    match test.cmp {
        BinOp::Lt | BinOp::Le if iv.step < 0 => {
            return no(
                "the induction variable decreases but the loop runs while it is below the bound"
                    .into(),
            )
        }
        BinOp::Gt | BinOp::Ge if iv.step > 0 => {
            return no(
                "the induction variable increases but the loop runs while it is above the bound"
                    .into(),
            )
        }
        BinOp::Ne if iv.step.abs() != 1 => {
            return no("`!=` exit test with a step other than 1 may never terminate".into())
        }
        BinOp::Eq => {
            return no("the loop runs while the induction variable equals the bound".into())
        }
        _ => {}
    }
    // A write to the induction variable in the body shows up in SSA as a back-edge value
    // that is not `iv + step`, which `induction_variables` already rejected.
    let mut reads = Vec::new();
    let within = Within { func, l, idom };
    for (what, v) in [("bound", test.bound), ("start", iv.init)] {
        if let Err(culprit) = within.invariant(v, &mut reads, 0) {
            return no(within.explain(what, culprit));
        }
    }
    if reads.is_empty() {
        Normalizable::Yes
    } else {
        Normalizable::IfInvariant { reads }
    }
}

/// A loop of a function, with the function's immediate dominators: what the invariance of
/// a bound is decided in.
struct Within<'a> {
    func: &'a Function,
    l: &'a Loop,
    idom: &'a [Option<Block>],
}

/// Most blocks between a join and its immediate dominator whose branches are inspected.
const MAX_JOIN_REGION: usize = 64;

/// Why a value is not invariant: the first value found to change, or `None` when the
/// search gave up (too deep, or too many blocks to inspect).
type Culprit = Option<Value>;

impl Within<'_> {
    /// Whether `v` is computed from values defined outside the loop; loads and calls inside
    /// the loop are collected, since only memory analysis can tell whether they are
    /// invariant. `Err` holds the value that changes.
    fn invariant(&self, v: Value, reads: &mut Vec<Value>, depth: u32) -> Result<(), Culprit> {
        if depth > 32 {
            return Err(None);
        }
        let inst = self.func.inst(v);
        if !self.l.contains(inst.block) {
            return Ok(());
        }
        match &inst.kind {
            InstKind::Const(_)
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => Ok(()),
            InstKind::Load { addr } => {
                reads.push(v);
                self.invariant(*addr, reads, depth + 1)
            }
            // `i < nodeCount(graph)`: the same result every iteration if the function only
            // reads memory the loop does not write, which the summaries of the program's
            // functions tell.
            InstKind::Call {
                callee: Callee::Direct(_),
                args,
            } => {
                reads.push(v);
                args.iter()
                    .try_for_each(|a| self.invariant(*a, reads, depth + 1))
            }
            // The join of a conditional expression in the bound (`MIN3(a, b, c)` expands to
            // nested `?:`): the same value on every iteration when every value it joins is,
            // and every branch deciding which of them arrives is.
            InstKind::Phi(args) if inst.block != self.l.header => {
                args.iter()
                    .try_for_each(|(_, a)| self.invariant(*a, reads, depth + 1))?;
                self.decided_invariantly(inst.block, reads, depth)
            }
            InstKind::Phi(_)
            | InstKind::Call { .. }
            | InstKind::Store { .. }
            | InstKind::Param(_)
            | InstKind::Undef => Err(Some(v)),
            other => other
                .operands()
                .into_iter()
                .try_for_each(|op| self.invariant(op, reads, depth + 1)),
        }
    }

    /// Whether every branch between `join`'s immediate dominator and `join` tests an
    /// invariant condition: then every iteration that reaches the dominator takes the same
    /// path from it to `join`, and arrives by the same edge.
    fn decided_invariantly(
        &self,
        join: Block,
        reads: &mut Vec<Value>,
        depth: u32,
    ) -> Result<(), Culprit> {
        let Some(Some(top)) = self.idom.get(join.index()).copied() else {
            return Err(None);
        };
        let mut region = BTreeSet::from([top]);
        let mut stack: Vec<Block> = self.func.block(join).preds.clone();
        while let Some(b) = stack.pop() {
            if !self.l.contains(b) || region.len() > MAX_JOIN_REGION {
                return Err(None);
            }
            if region.insert(b) {
                stack.extend(self.func.block(b).preds.iter().copied());
            }
        }
        region
            .iter()
            .try_for_each(|&b| match self.func.block(b).terminator {
                Terminator::Branch { cond, .. } => self.invariant(cond, reads, depth + 1),
                _ => Ok(()),
            })
    }

    /// The reason a loop is not normalizable because its bound (or its start: `what`)
    /// changes, naming what changes where it can.
    fn explain(&self, what: &str, culprit: Culprit) -> String {
        let generic = format!("the loop {what} is computed in the loop from values that change");
        let Some(v) = culprit else {
            return generic;
        };
        let inst = self.func.inst(v);
        match &inst.kind {
            InstKind::Phi(_) if inst.block == self.l.header => match &inst.origin.var_name {
                Some(name) => format!("the loop {what} reads `{name}`, which the loop assigns"),
                None => generic,
            },
            InstKind::Phi(_) => format!(
                "the loop {what} is chosen by a condition that changes from iteration to iteration"
            ),
            InstKind::Call { .. } => {
                format!("the loop {what} calls a function through a pointer on every iteration")
            }
            _ => generic,
        }
    }
}

/// The trip count of a normalizable loop in source terms, e.g. `(2*n + 3) / 4`, valid when
/// the loop runs at least once (`when` holds); `None` when it cannot be written as a
/// linear form over source expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TripCount {
    /// C expression of the number of iterations (integer division truncates).
    pub count: String,
    /// Condition under which `count` is exact; otherwise the loop runs 0 times.
    pub when: String,
    /// Normalized induction: `iv = lower + step*k`, `k` in `[0, count)`.
    pub lower: String,
    pub upper: String,
    pub step: i128,
}

impl fmt::Display for TripCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.when == "always" {
            write!(f, "{}", self.count)
        } else {
            write!(f, "{} (when {}, else 0)", self.count, self.when)
        }
    }
}

pub fn trip_count(func: &Function, l: &Loop) -> Option<TripCount> {
    let test = l.exit_test.as_ref()?;
    let iv = &l.induction_variables[test.iv];
    let init = crate::ir::print::linear_form(func, iv.init)?;
    let bound = crate::ir::print::linear_form(func, test.bound)?;
    let is_do_while = l
        .source
        .is_some_and(|s| func.source_loop(s).kind == crate::ir::LoopKind::DoWhile);
    // In a `for`/`while` header, a test on the updated value `iv + step < n` is the test
    // `iv < n - step`. A do-while tests the update at the end of the body, which counts the
    // same iterations as testing `iv` before it.
    let bound = if test.tests_update && !is_do_while {
        bound.add_constant(-iv.step)
    } else {
        bound
    };
    let step = iv.step;
    let (numerator, when) = match test.cmp {
        BinOp::Lt => (
            bound.sub(&init).add_constant(step - 1),
            format!("{} < {}", init, bound),
        ),
        BinOp::Le => (
            bound.sub(&init).add_constant(step),
            format!("{} <= {}", init, bound),
        ),
        BinOp::Gt => (
            init.sub(&bound).add_constant(-step - 1),
            format!("{} > {}", init, bound),
        ),
        BinOp::Ge => (
            init.sub(&bound).add_constant(-step),
            format!("{} >= {}", init, bound),
        ),
        BinOp::Ne => {
            if step > 0 {
                (bound.sub(&init), format!("{} < {}", init, bound))
            } else {
                (init.sub(&bound), format!("{} > {}", init, bound))
            }
        }
        _ => return None,
    };
    let magnitude = step.abs();
    let count = if magnitude == 1 {
        numerator.to_string()
    } else {
        format!("({numerator}) / {magnitude}")
    };
    if is_do_while {
        // The body runs once before the first test.
        return Some(TripCount {
            count: format!("max(1, {count})"),
            when: "always".into(),
            lower: init.to_string(),
            upper: bound.to_string(),
            step,
        });
    }
    Some(TripCount {
        count,
        when,
        lower: init.to_string(),
        upper: bound.to_string(),
        step,
    })
}
