//! Which read-modify-writes of memory are reductions, given the loop's dependence tests. An
//! update whose load and store carry a dependence only between themselves is a reduction:
//! at a loop-invariant address (every iteration updates one element: `C[i][j] += ...` over
//! `k`, `acc->sum += x`) nothing else in the loop may touch that element, except other
//! updates of one element with the same operator; at an address
//! chosen per iteration (`hist[key[i]] += w[i]`) nothing else may touch the array at all,
//! except other histogram updates with the same operator (the atomics commute).

use super::{MemoryUpdate, Op};
use crate::access::MemAccess;
use crate::dependence::{Outcome, PairResult};
use crate::model::ReductionKind;
use frontend::ir::Value;

/// A read-modify-write that is a reduction.
#[derive(Clone, Debug)]
pub struct Settled {
    pub kind: ReductionKind,
    pub update: MemoryUpdate,
    /// Indices of its load, its store and its load's twins in the loop's accesses.
    pub accesses: Vec<usize>,
    /// An element some other update with the same operator may touch too (`bal[0] -= x`
    /// and `bal[0] += y`): the report says so rather than "nothing else touches it".
    pub shared: bool,
}

/// An update whose accesses are found already (a callee's update of a global: its load and
/// store are the call's), with whether its address is the same in every iteration.
#[derive(Clone, Debug)]
pub struct Located {
    pub update: MemoryUpdate,
    pub accesses: Vec<usize>,
    pub invariant: bool,
}

struct Candidate {
    update: MemoryUpdate,
    accesses: Vec<usize>,
    invariant: bool,
    valid: bool,
}

/// The updates of `updates` that are reductions. `results` are the loop's carried-dependence
/// results over `accesses`; `invariant` says whether an address is the same in every
/// iteration of the loop. `located` are updates made inside called functions.
pub fn settle(
    updates: &[MemoryUpdate],
    located: &[Located],
    accesses: &[MemAccess],
    results: &[PairResult],
    invariant: &dyn Fn(Value) -> bool,
) -> Vec<Settled> {
    // Looked up, not searched: a body of thousands of statements has thousands of
    // updates and of accesses.
    let positions: std::collections::HashMap<Value, usize> = accesses
        .iter()
        .enumerate()
        .rev()
        .map(|(k, a)| (a.inst, k))
        .collect();
    let index = |inst: Value| positions.get(&inst).copied();
    let mut dependent: std::collections::HashMap<usize, Vec<usize>> =
        std::collections::HashMap::new();
    for r in results.iter().filter(|r| r.outcome != Outcome::Independent) {
        dependent.entry(r.first).or_default().push(r.second);
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    for u in updates {
        let (Some(l), Some(s)) = (index(u.load), index(u.store)) else {
            continue;
        };
        let mut mine = vec![l, s];
        mine.extend(u.twins.iter().filter_map(|t| index(*t)));
        // Only an update that carries a dependence needs to be a reduction (`a[i] += b[i]`
        // does not).
        let carried = mine.iter().any(|f| {
            dependent
                .get(f)
                .is_some_and(|seconds| seconds.iter().any(|s| mine.contains(s)))
        });
        if carried {
            candidates.push(Candidate {
                update: u.clone(),
                accesses: mine,
                invariant: invariant(accesses[l].addr),
                valid: true,
            });
        }
    }
    // A callee's update carries its dependence through the call's own accesses, as an
    // update written in the loop does.
    for u in located {
        let carried = u.accesses.iter().any(|f| {
            dependent
                .get(f)
                .is_some_and(|seconds| seconds.iter().any(|s| u.accesses.contains(s)))
        });
        if carried {
            candidates.push(Candidate {
                update: u.update.clone(),
                accesses: u.accesses.clone(),
                invariant: u.invariant,
                valid: true,
            });
        }
    }
    // Invalidating one candidate may invalidate the histograms that relied on it.
    loop {
        let mut changed = false;
        for c in 0..candidates.len() {
            if candidates[c].valid && !stands(c, &candidates, accesses, results) {
                candidates[c].valid = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    candidates
        .into_iter()
        .filter(|c| c.valid)
        .map(|c| {
            // Standing, any dependence it still has is with another update it commutes with.
            let shared = results.iter().any(|r| {
                r.outcome != Outcome::Independent
                    && c.accesses.contains(&r.first) != c.accesses.contains(&r.second)
            });
            Settled {
                kind: if c.invariant {
                    ReductionKind::Element
                } else {
                    ReductionKind::Histogram
                },
                update: c.update,
                accesses: c.accesses,
                shared,
            }
        })
        .collect()
}

fn stands(c: usize, all: &[Candidate], accesses: &[MemAccess], results: &[PairResult]) -> bool {
    let me = &all[c];
    let mine = &me.accesses;
    let one_side = |r: &&PairResult| mine.contains(&r.first) != mine.contains(&r.second);
    let other = |r: &PairResult| {
        if mine.contains(&r.first) {
            r.second
        } else {
            r.first
        }
    };
    if me.invariant {
        // Any dependence between the element and another access: something else touches
        // it, unless that access is another update of one element with the same operator
        // (code_saturne's `_balance[IN] -= t[0]` in one branch and `+= t[1]` in the
        // other): the updates commute, whichever iterations make them. Not for `=`,
        // whose constants may differ from one site to the other.
        let commutes = |k: usize| {
            all.iter().enumerate().any(|(d, other)| {
                d != c
                    && other.valid
                    && other.invariant
                    && other.update.op == me.update.op
                    && me.update.op != Op::Assign
                    && op_has_atomic(other.update.op)
                    && other.accesses.contains(&k)
            })
        };
        return results
            .iter()
            .filter(one_side)
            .all(|r| r.outcome == Outcome::Independent || commutes(other(r)));
    }
    let base = accesses[mine[0]].base();
    if base.is_none() || accesses[mine[1]].base() != base {
        return false;
    }
    // Another histogram update of the same array with the same operator commutes with this one.
    let commutes = |k: usize| {
        all.iter().enumerate().any(|(d, other)| {
            d != c
                && other.valid
                && !other.invariant
                && other.update.op == me.update.op
                && op_has_atomic(other.update.op)
                && other.accesses.contains(&k)
        })
    };
    let untouched = accesses
        .iter()
        .enumerate()
        .all(|(k, a)| mine.contains(&k) || (a.base().is_some() && a.base() != base) || commutes(k));
    untouched
        && results
            .iter()
            .filter(one_side)
            .all(|r| r.outcome == Outcome::Independent || commutes(other(r)))
}

/// Two updates of one element commute as atomics only for operators the hardware applies
/// atomically; a compare-and-swap loop per update would, but stay conservative.
fn op_has_atomic(op: Op) -> bool {
    !matches!(op, Op::Product)
}
