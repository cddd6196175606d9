//! Must-write analysis of one memory object over one iteration of a loop: at each point of
//! the body, the bytes of the object that every path from the start of the iteration has
//! written, as intervals `[lo, hi)` relative to the object. Bounds are symbolic over
//! induction variables and values that do not change in the loop; anything mentioning a
//! value that may change inside the iteration is never kept.
//!
//! Within one iteration the body is acyclic once back edges are ignored: an inner loop's
//! header only keeps what was written before the inner loop, and the inner loop's own writes
//! count after it exits when they sweep a contiguous section: a write of `[lo(k), hi(k))`
//! on every iteration of an inner loop over `k`, with the next iteration's interval starting
//! where this one ends, has written `[lo(first k), hi(last k))` once the loop exits (an empty
//! section when the loop runs zero times). Nested inner loops compose: `t[j][k]` over `k`,
//! then over `j`. An interval that is the same in every iteration of an inner loop is
//! written once the loop has run, when its trip count is known to be positive (the nest's
//! space assumes every loop runs, and says so).
//!
//! A load is covered when its bytes lie in one written interval at its point, either for the
//! current values of the inner induction variables or for all of them (its range over the
//! inner loops containing it, against intervals written before those loops).

use crate::assumption::{Assumption, Relation};
use crate::space::{extreme, IvRange, Space};
use analyses::reconstruct::Reconstruction;
use frontend::ir::{Block, Function, Value};
use frontend::loops::{LoopForest, LoopId, Normalizable};
use num_bigint::BigInt;
use num_traits::Zero;
use std::collections::{BTreeSet, HashMap, HashSet};
use symbolic::{compare, Cmp, Expr, SignEnv, Var};

/// A byte interval `[lo, hi)` relative to the object's first byte.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub lo: Expr,
    pub hi: Expr,
}

impl Interval {
    /// `[offset, offset + size)`.
    pub fn at(offset: &Expr, size: &Expr) -> Option<Interval> {
        Some(Interval {
            lo: offset.clone(),
            hi: offset.checked_add(size).ok()?,
        })
    }

    fn vars(&self) -> BTreeSet<Var> {
        let mut v = self.lo.vars();
        v.extend(self.hi.vars());
        v
    }

    fn constant(&self) -> Option<(BigInt, BigInt)> {
        Some((self.lo.as_integer()?, self.hi.as_integer()?))
    }

    fn mentions(&self, vars: &HashSet<Var>) -> bool {
        self.vars().iter().any(|v| vars.contains(v))
    }
}

/// What one instruction does to the object.
#[derive(Clone, Debug, Default)]
pub struct Effect {
    /// Bytes it may read: each must have been written earlier in the iteration.
    pub reads: Vec<Interval>,
    /// Bytes it writes whenever it runs.
    pub must: Vec<Interval>,
    /// Bytes it may write (includes `must`).
    pub may: Vec<Interval>,
    /// It may read bytes that cannot be described (the object is then shared).
    pub unknown_read: bool,
    /// It may write bytes that cannot be described.
    pub unknown_write: bool,
}

/// The result for one object.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `Err` names the first read whose bytes may come from another iteration.
    pub reads_covered: Result<(), String>,
    /// Whether every iteration writes the same bytes, all of them on every path (so the
    /// last iteration leaves the object as a sequential run would): `Err` says why not.
    pub same_every_iteration: Result<(), String>,
    /// Sign assumptions the comparisons needed.
    pub assumptions: Vec<Assumption>,
}

/// The loop and what the analysis may rely on.
#[derive(Debug)]
pub struct Flow<'a> {
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub rec: &'a Reconstruction,
    pub loop_id: LoopId,
    /// The iteration space of the loop's nest (inner induction variables' ranges).
    pub space: Option<&'a Space>,
    /// Symbols whose value may change inside the loop (loads, non-primary counters):
    /// intervals mentioning them mean nothing at another point.
    pub variant: &'a HashSet<Var>,
}

struct Run<'f, 'a> {
    flow: &'f Flow<'a>,
    effects: &'f HashMap<Value, Effect>,
    env: SignEnv,
    out: HashMap<Block, Vec<Interval>>,
    /// Primary induction variable of every loop inside the analysed one (and its own).
    iv: HashMap<LoopId, Var>,
    reads_covered: Result<(), String>,
    assumptions: Vec<Assumption>,
}

impl Flow<'_> {
    /// Runs the analysis for one object whose instructions' effects are `effects`.
    pub fn analyze(&self, effects: &HashMap<Value, Effect>) -> Outcome {
        let l = self.forest.loop_(self.loop_id);
        let mut iv = HashMap::new();
        for id in self.forest.ids() {
            let m = self.forest.loop_(id);
            if id != self.loop_id && !self.inside(id) {
                continue;
            }
            if let Some(var) = m.primary_iv().and_then(|p| self.rec.symbol(p.phi)) {
                iv.insert(id, var.clone());
            }
        }
        let mut run = Run {
            flow: self,
            effects,
            env: self.space.map(|s| s.env.clone()).unwrap_or_default(),
            out: HashMap::new(),
            iv,
            reads_covered: Ok(()),
            assumptions: Vec::new(),
        };
        run.solve();
        let same = run.same_every_iteration(l);
        Outcome {
            reads_covered: run.reads_covered.clone(),
            same_every_iteration: same,
            assumptions: run.assumptions,
        }
    }

    /// Whether loop `id` is strictly inside the analysed loop.
    fn inside(&self, id: LoopId) -> bool {
        let mut p = self.forest.loop_(id).parent;
        while let Some(q) = p {
            if q == self.loop_id {
                return true;
            }
            p = self.forest.loop_(q).parent;
        }
        false
    }

    /// The loops strictly inside the analysed one that contain `block`, innermost first.
    fn chain(&self, block: Block) -> Vec<LoopId> {
        let mut out = Vec::new();
        let mut current = self.forest.innermost(block);
        while let Some(id) = current {
            if id == self.loop_id {
                break;
            }
            out.push(id);
            current = self.forest.loop_(id).parent;
        }
        out
    }

    fn range(&self, id: LoopId) -> Option<&IvRange> {
        self.space.and_then(|s| s.of_loop(id))
    }

    /// An inner loop whose writes may be summed up at its exit: one exit, taken at the
    /// header's test, with a known range.
    fn sweeps(&self, id: LoopId) -> bool {
        let m = self.forest.loop_(id);
        matches!(m.exits.as_slice(), [(from, _)] if *from == m.header)
            && !matches!(m.normalizable, Normalizable::No { .. })
            && self.range(id).is_some()
    }
}

impl Run<'_, '_> {
    fn le(&self, a: &Expr, b: &Expr) -> bool {
        compare(a, b, &self.env).is_le()
    }

    /// Whether `x` lies inside one interval of `state` (constant intervals are merged).
    fn covered(&self, state: &[Interval], x: &Interval) -> bool {
        if let Some((a, b)) = x.constant() {
            if a >= b {
                return true;
            }
        }
        state
            .iter()
            .any(|y| self.le(&y.lo, &x.lo) && self.le(&x.hi, &y.hi))
    }

    /// Adds a written interval, merging it with adjacent ones.
    fn add(&self, state: &mut Vec<Interval>, x: Interval) {
        if x.mentions(self.flow.variant) || self.covered(state, &x) {
            return;
        }
        let mut x = x;
        loop {
            let adjacent = state.iter().position(|y| {
                let touches = |a: &Expr, b: &Expr| {
                    a.checked_sub(b)
                        .ok()
                        .and_then(|d| d.as_integer())
                        .is_some_and(|d| d.is_zero())
                };
                let overlapping_constants = match (x.constant(), y.constant()) {
                    (Some((a, b)), Some((c, d))) => a <= d && c <= b,
                    _ => false,
                };
                overlapping_constants || touches(&y.hi, &x.lo) || touches(&x.hi, &y.lo)
            });
            let Some(k) = adjacent else { break };
            let y = state.remove(k);
            x = match (x.constant(), y.constant()) {
                (Some((a, b)), Some((c, d))) => Interval {
                    lo: Expr::integer(a.min(c)),
                    hi: Expr::integer(b.max(d)),
                },
                _ if self.le(&y.hi, &x.lo) || y.hi == x.lo => Interval { lo: y.lo, hi: x.hi },
                _ => Interval { lo: x.lo, hi: y.hi },
            };
        }
        state.retain(|y| !self.covered(std::slice::from_ref(&x), y));
        state.push(x);
    }

    /// What both states certainly hold.
    fn meet(&self, a: &[Interval], b: &[Interval]) -> Vec<Interval> {
        let mut out = Vec::new();
        for x in a.iter().filter(|x| self.covered(b, x)) {
            self.add(&mut out, x.clone());
        }
        for x in b.iter().filter(|x| self.covered(a, x)) {
            self.add(&mut out, x.clone());
        }
        for x in a {
            for y in b {
                if let (Some((p, q)), Some((r, s))) = (x.constant(), y.constant()) {
                    let (lo, hi) = (p.max(r), q.min(s));
                    if lo < hi {
                        self.add(
                            &mut out,
                            Interval {
                                lo: Expr::integer(lo),
                                hi: Expr::integer(hi),
                            },
                        );
                    }
                }
            }
        }
        out
    }

    /// Blocks whose state `block` needs first.
    fn deps(&self, block: Block) -> Vec<Block> {
        let flow = self.flow;
        let l = flow.forest.loop_(flow.loop_id);
        if block == l.header {
            return Vec::new();
        }
        let preds = self.preds(block);
        let mut out = preds.clone();
        for p in preds {
            for m in flow.chain(p) {
                let lm = flow.forest.loop_(m);
                if lm.contains(block) {
                    break;
                }
                if flow.sweeps(m) {
                    out.extend(lm.latches.iter().copied());
                }
            }
        }
        out
    }

    /// Predecessors within the iteration: back edges are left out.
    fn preds(&self, block: Block) -> Vec<Block> {
        let flow = self.flow;
        let l = flow.forest.loop_(flow.loop_id);
        let header_of = flow
            .forest
            .ids()
            .find(|id| flow.forest.loop_(*id).header == block && flow.inside(*id));
        flow.func
            .block(block)
            .preds
            .iter()
            .copied()
            .filter(|p| l.contains(*p))
            .filter(|p| header_of.is_none_or(|m| !flow.forest.loop_(m).contains(*p)))
            .collect()
    }

    /// Computes every block's state in an order where dependences come first.
    fn solve(&mut self) {
        let l = self.flow.forest.loop_(self.flow.loop_id);
        let blocks: Vec<Block> = l.blocks.iter().copied().collect();
        let mut pending = blocks.clone();
        while !pending.is_empty() {
            let before = pending.len();
            let mut next = Vec::new();
            for b in pending {
                if self.deps(b).iter().all(|d| self.out.contains_key(d)) {
                    self.compute(b);
                } else {
                    next.push(b);
                }
            }
            pending = next;
            if pending.len() == before {
                // Not expected for a reducible loop: give up on what remains, soundly.
                self.reads_covered = Err("the loop body's control flow is not structured".into());
                return;
            }
        }
    }

    fn compute(&mut self, block: Block) {
        let flow = self.flow;
        let l = flow.forest.loop_(flow.loop_id);
        let mut state = if block == l.header {
            Vec::new()
        } else {
            let mut merged: Option<Vec<Interval>> = None;
            for p in self.preds(block) {
                let s = self.edge_state(p, block);
                merged = Some(match merged {
                    None => s,
                    Some(m) => self.meet(&m, &s),
                });
            }
            merged.unwrap_or_default()
        };
        for &v in &flow.func.block(block).insts {
            let Some(effect) = self.effects.get(&v) else {
                continue;
            };
            if self.reads_covered.is_ok() {
                if effect.unknown_read {
                    self.reads_covered = Err(format!("{v} may read any byte of it"));
                }
                for r in &effect.reads {
                    if !self.read_covered(&state, r, block) {
                        self.reads_covered = Err(format!(
                            "{v} reads bytes [{}, {}) that the iteration may not have written",
                            r.lo.to_c(),
                            r.hi.to_c()
                        ));
                        break;
                    }
                }
            }
            for w in &effect.must {
                self.add(&mut state, w.clone());
            }
        }
        self.out.insert(block, state);
    }

    fn read_covered(&mut self, state: &[Interval], r: &Interval, block: Block) -> bool {
        if r.mentions(self.flow.variant) {
            return false;
        }
        if self.covered(state, r) {
            return true;
        }
        // Over every iteration of the inner loops around the read, against what was
        // written before them.
        let Some((range, inner)) = self.over_inner_loops(r, block) else {
            return false;
        };
        let before: Vec<Interval> = state
            .iter()
            .filter(|x| !x.mentions(&inner))
            .cloned()
            .collect();
        self.covered(&before, &range)
            || self.covered_when_loops_run(state, r)
            || self.covered_when_loops_run(&before, &range)
    }

    /// Whether `x` lies inside one interval of `state` given that every loop of the nest
    /// runs (the space's standing assumption), taken as linear facts on the trip counts:
    /// NPB BT's dissipation reads `ue[i + 2][m]` at `i = 2` after a sweep wrote
    /// `ue[0 .. grid_points[0]]`, and the loop `3 <= i <= grid_points[0] - 4` running
    /// means `grid_points[0] >= 7`. The facts used (those sharing a variable with the
    /// comparison) join the assumptions.
    fn covered_when_loops_run(&mut self, state: &[Interval], x: &Interval) -> bool {
        let Some(space) = self.flow.space else {
            return false;
        };
        let ivs: HashSet<&Var> = space.ivs.iter().map(|r| &r.var).collect();
        let runs: Vec<Expr> = space
            .ivs
            .iter()
            .filter(|r| !r.trips.vars().iter().any(|v| ivs.contains(v)))
            .filter_map(|r| r.trips.checked_sub(&Expr::constant(1)).ok())
            .filter(|fact| !fact.vars().iter().any(|v| self.flow.variant.contains(v)))
            .collect();
        if runs.is_empty() || x.mentions(self.flow.variant) {
            return false;
        }
        for y in state {
            let (Ok(low), Ok(high)) = (x.lo.checked_sub(&y.lo), y.hi.checked_sub(&x.hi)) else {
                continue;
            };
            let mut facts = runs.clone();
            for v in low.vars().into_iter().chain(high.vars()) {
                let sign = self.env.get(&v);
                if !sign.has_neg() {
                    facts.push(Expr::var(v.name()));
                }
            }
            if crate::subscripts::implied(&facts, &low) && crate::subscripts::implied(&facts, &high)
            {
                let mentioned: BTreeSet<Var> = low.vars().into_iter().chain(high.vars()).collect();
                for fact in &runs {
                    if fact.vars().iter().any(|v| mentioned.contains(v)) {
                        let trips = fact.checked_add(&Expr::constant(1));
                        let text = format!(
                            "{} > 0 (the loop runs)",
                            trips.as_ref().map(|t| t.to_c()).unwrap_or_default()
                        );
                        let assumed = match trips {
                            Ok(t) => Assumption::relation(text, t, Relation::Gt),
                            Err(_) => Assumption::plain(text),
                        };
                        if !self.assumptions.contains(&assumed) {
                            self.assumptions.push(assumed);
                        }
                    }
                }
                return true;
            }
        }
        false
    }

    /// The bytes `r` covers over all iterations of the inner loops containing `block`, and
    /// those loops' induction variables.
    fn over_inner_loops(&mut self, r: &Interval, block: Block) -> Option<(Interval, HashSet<Var>)> {
        let flow = self.flow;
        let space = flow.space?;
        let chain = flow.chain(block);
        let mut ivs = Vec::new();
        let mut inner = HashSet::new();
        for id in chain.iter().rev() {
            let range = flow.range(*id)?;
            inner.insert(range.var.clone());
            ivs.push(range.clone());
        }
        let sub = Space {
            ivs,
            env: space.env.clone(),
            assumptions: Vec::new(),
        };
        let mut used = Vec::new();
        let lo = extreme(&r.lo, &sub, false, &mut used)?;
        let hi = extreme(&r.hi, &sub, true, &mut used)?;
        for a in used {
            if !self.assumptions.contains(&a) {
                self.assumptions.push(a);
            }
        }
        Some((Interval { lo, hi }, inner))
    }

    /// The state along the edge `from -> to`: leaving inner loops forgets what depends on
    /// their induction variables and adds the sections they swept.
    fn edge_state(&mut self, from: Block, to: Block) -> Vec<Interval> {
        let flow = self.flow;
        let mut state = self.out.get(&from).cloned().unwrap_or_default();
        for m in flow.chain(from) {
            let lm = flow.forest.loop_(m);
            if lm.contains(to) {
                break;
            }
            let forget: HashSet<Var> = self
                .iv
                .iter()
                .filter(|(id, _)| **id == m || self.within(**id, m))
                .map(|(_, v)| v.clone())
                .collect();
            state.retain(|x| !x.mentions(&forget));
            if flow.sweeps(m) && from == lm.header {
                let mut at_latch: Option<Vec<Interval>> = None;
                for latch in &lm.latches {
                    let s = self.out.get(latch).cloned().unwrap_or_default();
                    at_latch = Some(match at_latch {
                        None => s,
                        Some(a) => self.meet(&a, &s),
                    });
                }
                for x in at_latch.unwrap_or_default() {
                    // Bytes written before the loop are still written after it.
                    if self.covered(&state, &x) {
                        continue;
                    }
                    if let Some(swept) = self.sweep(m, &x) {
                        if !swept.mentions(&forget) {
                            self.add(&mut state, swept);
                        }
                    }
                }
            }
        }
        state
    }

    /// Whether loop `a` is inside loop `b`.
    fn within(&self, a: LoopId, b: LoopId) -> bool {
        let mut p = self.flow.forest.loop_(a).parent;
        while let Some(q) = p {
            if q == b {
                return true;
            }
            p = self.flow.forest.loop_(q).parent;
        }
        false
    }

    /// The section an interval written on every iteration of loop `m` sweeps, when the
    /// intervals of consecutive iterations are adjacent.
    fn sweep(&mut self, m: LoopId, x: &Interval) -> Option<Interval> {
        let r = self.flow.range(m)?;
        let k = &r.var;
        if !x.vars().contains(k) {
            // The same bytes in every iteration (file-scope scratch `ue[j][m]` rewritten
            // over `j` in each iteration of a `k` loop around it): written once the loop
            // has run at all, which the nest's space assumes of every loop; a trip count
            // whose sign it does not know is assumed positive here, and the loop says so.
            // Only a count the same in every iteration of the analysed loop: a triangular
            // one (`j < i`) may be zero in some of them.
            let ivs: HashSet<&Var> = self.iv.values().collect();
            let trips = r.trips.vars();
            if trips
                .iter()
                .any(|v| self.flow.variant.contains(v) || ivs.contains(v))
            {
                return None;
            }
            if !compare(&r.trips, &Expr::constant(1), &self.env).is_ge() {
                let assumed = Assumption::relation(
                    format!("{} > 0 (the loop runs)", r.trips.to_c()),
                    r.trips.clone(),
                    Relation::Gt,
                );
                if !self.assumptions.contains(&assumed) {
                    self.assumptions.push(assumed);
                }
            }
            return Some(x.clone());
        }
        let step = Expr::integer(BigInt::from(r.step));
        let next = HashMap::from([(k.clone(), Expr::var(k.name()).checked_add(&step).ok()?)]);
        let stride = x.lo.substitute(&next).ok()?.checked_sub(&x.lo).ok()?;
        let width = x.hi.checked_sub(&x.lo).ok()?;
        if stride.contains_var(k) || width.contains_var(k) {
            return None;
        }
        let zero = |e: Result<Expr, _>| {
            e.ok()
                .and_then(|e: Expr| e.as_integer())
                .is_some_and(|d| d.is_zero())
        };
        let last = if r.step > 0 { &r.hi } else { &r.lo };
        let at = |e: &Expr, value: &Expr| {
            e.substitute(&HashMap::from([(k.clone(), value.clone())]))
                .ok()
        };
        let sign = compare(&stride, &Expr::constant(0), &self.env);
        if zero(stride.checked_sub(&width)) && sign == Cmp::Greater {
            // Ascending addresses: from the first iteration's start to the last one's end.
            Some(Interval {
                lo: at(&x.lo, &r.init)?,
                hi: at(&x.hi, last)?,
            })
        } else if zero(stride.checked_add(&width)) && sign == Cmp::Less {
            Some(Interval {
                lo: at(&x.lo, last)?,
                hi: at(&x.hi, &r.init)?,
            })
        } else {
            None
        }
    }

    /// Whether every iteration writes the same bytes on every path: each byte any write may
    /// touch (over the inner loops) lies in what every path has written by the end of the
    /// iteration, and that does not depend on the loop's own induction variable.
    fn same_every_iteration(&mut self, l: &frontend::loops::Loop) -> Result<(), String> {
        let flow = self.flow;
        let own: HashSet<Var> = self.iv.get(&flow.loop_id).cloned().into_iter().collect();
        let mut end: Option<Vec<Interval>> = None;
        for latch in &l.latches {
            let s = self.out.get(latch).cloned().unwrap_or_default();
            end = Some(match end {
                None => s,
                Some(a) => self.meet(&a, &s),
            });
        }
        let mut end = end.unwrap_or_default();
        end.retain(|x| !x.mentions(&own));
        let mut writes: Vec<(Value, Interval)> = Vec::new();
        for (v, effect) in self.effects {
            if effect.unknown_write {
                return Err(format!("{v} may write any byte of it"));
            }
            writes.extend(effect.may.iter().map(|w| (*v, w.clone())));
        }
        writes.sort_by_key(|(v, _)| *v);
        for (v, w) in writes {
            let block = flow.func.inst(v).block;
            let range = if self.covered(&end, &w) && !w.mentions(&own) {
                continue;
            } else {
                self.over_inner_loops(&w, block).map(|(r, _)| r)
            };
            match range {
                Some(r)
                    if !r.mentions(&own) && !r.mentions(flow.variant) && self.covered(&end, &r) => {
                }
                _ => {
                    return Err(format!(
                        "{v} writes bytes [{}, {}) that not every iteration writes",
                        w.lo.to_c(),
                        w.hi.to_c()
                    ))
                }
            }
        }
        Ok(())
    }
}
