//! A scalar the loop assigns only under tests whose outcome is the same in every iteration
//! carries nothing from one iteration to the next: fix each such test's outcome (as loop
//! unswitching would) and, in every resulting version of the loop, either no iteration
//! observes the value an earlier one left (it is assigned before every use) or no iteration
//! changes it. code_saturne's `if (icvflb == 1) icvflf = 0;` before a call that reads
//! `icvflf` is one: with `icvflb == 1` each iteration assigns 0 first, otherwise no
//! iteration assigns it.
//!
//! Sound because a loop-invariant condition (operands defined outside the loop, or loads
//! nothing in the loop writes) takes one value throughout one execution of the loop, so each
//! execution runs entirely in one of the versions examined.

use frontend::ir::{Block, Function, InstKind, Terminator, Value};
use frontend::loops::Loop;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// Tests fixed at once at most: each doubles the versions examined.
const MAX_TESTS: usize = 3;
/// Blocks walked back from a use to find a test that decides it.
const MAX_WALK: usize = 64;

/// What the caller knows of the loop.
#[allow(missing_debug_implementations)] // two closures
pub struct Scope<'a> {
    pub func: &'a Function,
    pub loop_: &'a Loop,
    /// Each value's users inside instructions (`Function::users`).
    pub users: &'a [Vec<Value>],
    /// The blocks whose terminator uses a value.
    pub branch_users: &'a dyn Fn(Value) -> &'a [Block],
    /// Whether a value is the same in every iteration of the loop.
    pub invariant: &'a dyn Fn(Value) -> bool,
}

/// Why a header phi carries nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unswitched {
    /// The tests (their blocks) whose outcomes were fixed; empty when none needed fixing
    /// (nothing in the loop reads the carried value).
    pub tests: Vec<Block>,
    /// Whether, in some version, iterations read the value from before the loop (no
    /// iteration changes it there): each private copy must start from it.
    pub reads_entry: bool,
}

/// Whether header phi `phi` carries nothing once at most [`MAX_TESTS`] invariant tests
/// have their outcomes fixed, and how; `None` when that does not show it.
pub fn fixed_tests(scope: &Scope<'_>, phi: Value) -> Option<Unswitched> {
    let mut out = Unswitched::default();
    let mut dead = Vec::new();
    let strict = read_after_loop(scope, phi);
    if carries_nothing(scope, phi, strict, &mut dead, &mut out) {
        out.tests.sort();
        out.tests.dedup();
        Some(out)
    } else {
        None
    }
}

/// Whether `phi` carries nothing in every version of the loop where the edges in `dead`
/// are never taken, splitting on further invariant tests where needed; `out` collects the
/// tests split on and whether a version reads the entry value.
fn carries_nothing(
    scope: &Scope<'_>,
    phi: Value,
    strict: bool,
    dead: &mut Vec<(Block, Block)>,
    out: &mut Unswitched,
) -> bool {
    let world = World::new(scope, dead);
    let site = match world.private(phi, strict) {
        Ok(()) => return true,
        Err(site) => site,
    };
    if world.unchanged(phi) {
        out.reads_entry = true;
        return true;
    }
    if dead.len() >= MAX_TESTS {
        return false;
    }
    // Split on the nearest invariant test before the use that observed the value.
    let Some((test, then_block, else_block)) = world.nearest_test(site) else {
        return false;
    };
    out.tests.push(test);
    for taken_away in [then_block, else_block] {
        dead.push((test, taken_away));
        let ok = carries_nothing(scope, phi, strict, dead, out);
        dead.pop();
        if !ok {
            return false;
        }
    }
    true
}

/// The loop with some tests' outcomes fixed: the blocks an iteration can still reach and
/// the edges it can still take.
struct World<'s, 'a> {
    scope: &'s Scope<'a>,
    dead: &'s [(Block, Block)],
    live: HashSet<Block>,
}

impl<'s, 'a> World<'s, 'a> {
    fn new(scope: &'s Scope<'a>, dead: &'s [(Block, Block)]) -> World<'s, 'a> {
        let l = scope.loop_;
        let mut live = HashSet::from([l.header]);
        let mut queue = VecDeque::from([l.header]);
        while let Some(b) = queue.pop_front() {
            for s in scope.func.block(b).terminator.successors() {
                if l.contains(s) && !dead.contains(&(b, s)) && live.insert(s) {
                    queue.push_back(s);
                }
            }
        }
        World { scope, dead, live }
    }

    /// Whether control can go from `pred` to `block` (the entry edge of the header is).
    fn edge(&self, pred: Block, block: Block) -> bool {
        if !self.scope.loop_.contains(pred) {
            return true;
        }
        self.live.contains(&pred) && !self.dead.contains(&(pred, block))
    }

    fn in_live_block(&self, v: Value) -> bool {
        self.live.contains(&self.scope.func.inst(v).block)
    }

    /// The arguments of phi `v` that can still arrive.
    fn live_args(&self, v: Value) -> Vec<Value> {
        let inst = self.scope.func.inst(v);
        match &inst.kind {
            InstKind::Phi(args) => args
                .iter()
                .filter(|(b, _)| self.edge(*b, inst.block))
                .map(|(_, a)| *a)
                .collect(),
            _ => Vec::new(),
        }
    }

    fn is_loop_phi(&self, v: Value) -> bool {
        let inst = self.scope.func.inst(v);
        inst.kind.is_phi() && self.scope.loop_.contains(inst.block) && self.in_live_block(v)
    }

    /// `Ok` when nothing an iteration can reach reads the value `phi` brings from the
    /// previous iteration, else the block of a use that may read it. Phis pass the value on
    /// without reading it: those it may reach through edges still taken are followed. With
    /// `strict` (the value is read after the loop), only phis that are copies of it (every
    /// live argument is) may pass it on: a merge of it with a new value would make the value
    /// after the loop that of whichever iteration assigned last.
    fn private(&self, phi: Value, strict: bool) -> Result<(), Block> {
        let func = self.scope.func;
        let l = self.scope.loop_;
        // An ordered set: which use is found first decides which test is fixed next, and
        // reports must not depend on hash order. A worklist over the users keeps the walk
        // linear in the uses (a body of thousands of phis is walked once per variable).
        let mut carrying = BTreeSet::from([phi]);
        let mut work = vec![phi];
        while let Some(c) = work.pop() {
            for &u in &self.scope.users[c.index()] {
                if carrying.contains(&u) || !self.is_loop_phi(u) {
                    continue;
                }
                let args = self.live_args(u);
                if !args.contains(&c) {
                    continue;
                }
                if !strict || args.iter().all(|a| *a == u || carrying.contains(a)) {
                    carrying.insert(u);
                    work.push(u);
                }
            }
        }
        if strict {
            // Some path keeping the old value and another assigning a new one make the value
            // after the loop that of the last iteration that assigned it (a `continue`
            // before the assignment).
            let InstKind::Phi(args) = &func.inst(phi).kind else {
                return Err(l.header);
            };
            let kept: Vec<bool> = args
                .iter()
                .filter(|(b, _)| l.contains(*b) && self.edge(*b, l.header))
                .map(|(_, a)| carrying.contains(a))
                .collect();
            if kept.iter().any(|k| *k) && kept.iter().any(|k| !*k) {
                return Err(l.header);
            }
        }
        for &c in &carrying {
            for &u in &self.scope.users[c.index()] {
                let block = func.inst(u).block;
                if !l.contains(block) || !self.live.contains(&block) || carrying.contains(&u) {
                    continue;
                }
                if func.inst(u).kind.is_phi() && !self.live_args(u).contains(&c) {
                    continue;
                }
                return Err(block);
            }
            for &b in (self.scope.branch_users)(c) {
                if l.contains(b) && self.live.contains(&b) {
                    return Err(b);
                }
            }
        }
        Ok(())
    }

    /// Whether every value `phi` can receive from the latches is `phi` itself: no
    /// iteration changes it.
    fn unchanged(&self, phi: Value) -> bool {
        let func = self.scope.func;
        let l = self.scope.loop_;
        let InstKind::Phi(args) = &func.inst(phi).kind else {
            return false;
        };
        let mut stack: Vec<Value> = args
            .iter()
            .filter(|(b, _)| l.contains(*b) && self.edge(*b, l.header))
            .map(|(_, a)| *a)
            .collect();
        let mut seen = HashSet::new();
        while let Some(v) = stack.pop() {
            if v == phi || !seen.insert(v) {
                continue;
            }
            if !self.is_loop_phi(v) {
                return false;
            }
            stack.extend(self.live_args(v));
        }
        true
    }

    /// The nearest live block before `site` (walking back along live edges, not past the
    /// header) ending in a test of an invariant condition whose outcome is not fixed yet:
    /// the block and its two successors.
    fn nearest_test(&self, site: Block) -> Option<(Block, Block, Block)> {
        let func = self.scope.func;
        let l = self.scope.loop_;
        let mut seen = HashSet::from([site]);
        let mut queue = VecDeque::from([site]);
        while let Some(b) = queue.pop_front() {
            if let Terminator::Branch {
                cond,
                then_block,
                else_block,
            } = &func.block(b).terminator
            {
                let unfixed = !self.dead.iter().any(|(from, _)| *from == b);
                if b != site && unfixed && then_block != else_block && (self.scope.invariant)(*cond)
                {
                    return Some((b, *then_block, *else_block));
                }
            }
            if b == l.header || seen.len() > MAX_WALK {
                continue;
            }
            for &p in &func.block(b).preds {
                if l.contains(p) && self.live.contains(&p) && seen.insert(p) {
                    queue.push_back(p);
                }
            }
        }
        None
    }
}

/// Whether code after the loop may read the value `phi` holds: a use outside the loop of it
/// or of a phi of the loop it flows into.
pub fn read_after_loop(scope: &Scope<'_>, phi: Value) -> bool {
    let func = scope.func;
    let l = scope.loop_;
    let mut seen = HashSet::from([phi]);
    let mut stack = vec![phi];
    while let Some(v) = stack.pop() {
        if (scope.branch_users)(v).iter().any(|b| !l.contains(*b)) {
            return true;
        }
        for &u in &scope.users[v.index()] {
            let inst = func.inst(u);
            if !l.contains(inst.block) {
                return true;
            }
            if inst.kind.is_phi() && seen.insert(u) {
                stack.push(u);
            }
        }
    }
    false
}
