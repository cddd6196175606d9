//! Pointers that may alias, tested as if they were the same array.
//!
//! Two pointer parameters that the call sites do not prove disjoint may still be harmless
//! for a parallel loop: library routines such as `z[i] = a*x[i] + y[i]` are called in place
//! (`z == x`) as often as on separate arrays. If the pair cannot conflict across iterations
//! even when both pointers address the same array at the same start, the only remaining
//! danger is a *partial* overlap (`f(x, x + 1)`), which is rare and which the report then
//! names as an assumption instead of refusing the loop.

use crate::access::MemAccess;
use crate::dependence::CarriedTester;
use symbolic::Var;

/// Whether accesses `first` (through `base_first`) and `second` (through `base_second`)
/// carry no dependence across iterations of `carrier` when both bases are the same
/// pointer, with the loop's `tester` (made from all the accesses the pairs come from, with
/// no quotients: the same-base tests already saw them). Each access is tested against itself too (a store whose own offset repeats
/// would already be a dependence through one pointer, which the same-base tests report).
pub fn independent_if_same_array(
    first: &MemAccess,
    second: &MemAccess,
    base_first: &Var,
    base_second: &Var,
    tester: &CarriedTester,
    assumptions: &mut Vec<crate::assumption::Assumption>,
    budget: &crate::budget::Budget,
) -> bool {
    let rebased = |access: &MemAccess| {
        let mut copy = access.clone();
        for (base, _) in &mut copy.alternatives {
            if base.as_ref() == Some(base_second) {
                *base = Some(base_first.clone());
            }
        }
        copy
    };
    // Only the pair's own conflicts matter: each access alone was already tested.
    let pair = [rebased(first), rebased(second)];
    let mut needed = Vec::new();
    let conflicts = tester.test(&pair, &mut needed, budget);
    let independent = conflicts.iter().all(|r| r.first == r.second);
    if independent {
        assumptions.extend(needed);
    }
    independent
}
