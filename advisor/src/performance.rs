//! A loop's performance advice, put together: the what-if mappings (`mapping`), and shared
//! memory and divergence under the recommended one. Above the three analyses, which share
//! the nest and the target but not each other.

use crate::mapping::{candidates, gain, recommend, Evaluated, Nest, Target};
use analyses::reconstruct::Reconstruction;
use frontend::ir::Function;
use frontend::loops::{LoopForest, LoopId};
use frontend::unit::Unit;

/// Adds the mappings, the recommendation, shared memory and divergence to a loop's report.
#[allow(clippy::too_many_arguments)]
pub fn attach(
    unit: &Unit,
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    outer: LoopId,
    parallel: &dyn Fn(LoopId) -> bool,
    private: &std::collections::HashSet<frontend::ir::Value>,
    target: &Target,
    entry_offset: &dyn Fn(&symbolic::Var) -> Option<symbolic::Expr>,
    report: &mut crate::model::LoopReport,
) {
    let types = &unit.lowered.program.types;
    let Ok(space) = crate::space::iteration_space(func, forest, outer, rec) else {
        return;
    };
    // Private storage is each thread's own, not global memory shared by a warp.
    let mut accesses = crate::access::collect_accesses(func, forest, outer, rec, types);
    accesses.retain(|a| !private.contains(&a.inst));
    // Where each base variable points when the loop starts, past the value the offsets
    // are expressed from (`crate::rebase`): what the report shows is from there.
    let moved: std::collections::HashMap<symbolic::Var, symbolic::Expr> = accesses
        .iter()
        .flat_map(|a| a.alternatives.iter().filter_map(|(b, _)| b.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|b| entry_offset(&b).map(|m| (b, m)))
        .collect();
    let mut nest = Nest::new(unit, func, forest, rec, outer, space, accesses);
    nest.moved = moved;
    let evals: Vec<Evaluated> = candidates(forest, outer, parallel)
        .iter()
        .filter(|c| nest.iv(c.x).is_some() && c.y.is_none_or(|y| nest.iv(y).is_some()))
        .map(|c| nest.evaluate(c))
        .collect();
    let Some((best, how)) = recommend(&evals, &nest.space.env) else {
        return;
    };
    report.mappings = evals.iter().map(|e| e.report.clone()).collect();
    report.recommended_mapping = Some(evals[best].report.mapping.clone());
    report.mapping_gain = gain(&evals, best, &how);
    let (areas, occupancy) = crate::shared_memory::analyze(&nest, &evals[best], target);
    report.shared_memory = areas;
    report.occupancy = occupancy;
    report.divergence = crate::divergence::analyze(&nest, &evals[best].candidate, target);
}
