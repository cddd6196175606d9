//! Which loops `emit --target openmp` ports when no `--loop` is given: each outermost
//! friendly loop, or, where that loop cannot be ported or would be parallel only through
//! floating-point atomics, the outermost friendly loops inside it (the outer loop then
//! stays sequential on the host around their target regions).
//!
//! Why floating-point atomics count against a loop: `#pragma omp atomic update` on a
//! `double` sums in whatever order the threads arrive, so the result changes from run to
//! run and differs from the program's. When the loops inside hold every atomic update and
//! need none themselves (`B[r][s] += A[r][t] * A[s][t]` inside `for t`: the `r`, `s` nest
//! is parallel and each element still sums over `t` in order), porting them gives the
//! program's own values, and a data region keeps the arrays on the device across the
//! outer loop's iterations.

use super::clauses::{plan_port, LoopPort};
use super::PortOptions;
use crate::plan::EmitError;
use advisor::model::{LoopReport, ReductionKind, Verdict};
use frontend::access_sites::Sites;
use frontend::loop_ref::LoopRef;
use frontend::unit::Unit;
use std::collections::HashMap;

/// The ports of `chosen` (outermost friendly loops), each replaced by the ports of the
/// friendly loops inside it where that is better, and the loops that could not be ported.
pub(super) fn ports_of(
    unit: &Unit,
    reports: &[LoopReport],
    chosen: &[&LoopReport],
    options: &PortOptions,
) -> (Vec<LoopPort>, Vec<(LoopRef, EmitError)>) {
    let sites = frontend::access_sites::access_sites(&unit.preprocessed).ok();
    // Each loop's id and children once: a file of thousands of loops asks for them often.
    let mut site_of: HashMap<LoopRef, usize> = HashMap::new();
    let mut children: Vec<Vec<usize>> = Vec::new();
    if let Some(sites) = &sites {
        children = vec![Vec::new(); sites.loops.len()];
        for (k, l) in sites.loops.iter().enumerate() {
            if let Some(id) = unit.loop_ref_at(l.keyword) {
                site_of.entry(id).or_insert(k);
            }
            if let Some(parent) = l.parent {
                children[parent].push(k);
            }
        }
    }
    let ids: HashMap<usize, &LoopRef> = site_of.iter().map(|(id, k)| (*k, id)).collect();
    let by_id: HashMap<&LoopRef, &LoopReport> = reports.iter().map(|r| (&r.id, r)).collect();
    let chooser = Chooser {
        unit,
        reports,
        options,
        sites: sites.as_ref(),
        site_of: &site_of,
        ids: &ids,
        by_id: &by_id,
        children: &children,
    };
    let mut ports = Vec::new();
    let mut refused = Vec::new();
    for r in chosen {
        chooser.port(r, &mut ports, &mut refused);
    }
    // A loop both chosen and inside a refused one is planned twice: keep one of each.
    let mut seen = std::collections::HashSet::new();
    ports.retain(|p| seen.insert(p.loop_id.clone()));
    let mut seen = std::collections::HashSet::new();
    refused.retain(|(id, _)| seen.insert(id.clone()));
    (ports, refused)
}

struct Chooser<'a> {
    unit: &'a Unit,
    reports: &'a [LoopReport],
    options: &'a PortOptions,
    sites: Option<&'a Sites>,
    /// Loop site by id, id by site, and each site's children.
    site_of: &'a HashMap<LoopRef, usize>,
    ids: &'a HashMap<usize, &'a LoopRef>,
    /// Each report by its loop's id.
    by_id: &'a HashMap<&'a LoopRef, &'a LoopReport>,
    children: &'a [Vec<usize>],
}

impl Chooser<'_> {
    /// Ports `report`, or the friendly loops inside it instead.
    fn port(
        &self,
        report: &LoopReport,
        ports: &mut Vec<LoopPort>,
        refused: &mut Vec<(LoopRef, EmitError)>,
    ) {
        match plan_port(self.unit, self.reports, report, self.options) {
            Ok(p) if !reorders_float_updates(report) => ports.push(p),
            Ok(p) => match self.deterministic_inside(report, &p) {
                Some(inner) => ports.extend(inner),
                None => ports.push(p),
            },
            Err(e) => {
                refused.push((report.id.clone(), e));
                for inner in self.friendly_inside(report) {
                    self.port(inner, ports, refused);
                }
            }
        }
    }

    /// Ports of the friendly loops inside `report` that need no floating-point atomics
    /// and hold every atomic update of `outer` (its port), with a note on each saying why
    /// the outer loop is not ported; `None` when they do not.
    fn deterministic_inside(&self, report: &LoopReport, outer: &LoopPort) -> Option<Vec<LoopPort>> {
        let inner = self.friendly_inside(report);
        if inner.is_empty() {
            return None;
        }
        let mut ports = Vec::new();
        let mut refused = Vec::new();
        for r in &inner {
            self.port(r, &mut ports, &mut refused);
        }
        let clean = ports.iter().all(|p| {
            self.by_id
                .get(&p.loop_id)
                .is_some_and(|r| !reorders_float_updates(r))
        });
        let covered = outer.atomics.iter().all(|a| {
            ports
                .iter()
                .any(|p| p.file == outer.file && p.line <= a.line && a.line <= p.last_line)
        });
        if ports.is_empty() || !clean || !covered {
            return None;
        }
        let targets: Vec<String> = report
            .reductions
            .iter()
            .filter(|r| reorders(r))
            .map(|r| format!("`{}`", r.target))
            .collect();
        for p in &mut ports {
            p.enclosing = Some((report.id.clone(), outer.arrays.clone()));
            p.notes.push(format!(
                "the loop at {} around it is not ported: in parallel it would update {} with floating-point atomics, whose order changes between runs; here each element is updated in the program's order",
                report.id,
                targets.join(", ")
            ));
        }
        Some(ports)
    }

    /// The friendly loops inside `report` that no other friendly loop inside it encloses.
    fn friendly_inside(&self, report: &LoopReport) -> Vec<&LoopReport> {
        let Some(sites) = self.sites else {
            return Vec::new();
        };
        let Some(&outer) = self.site_of.get(&report.id) else {
            return Vec::new();
        };
        let friendly = |k: usize| {
            let r = *self.by_id.get(self.ids.get(&k)?)?;
            (r.verdict == Verdict::Friendly).then_some(r)
        };
        let mut found = Vec::new();
        // Walk down from `outer`, stopping at each friendly loop.
        let mut stack: Vec<usize> = self.children[outer].clone();
        while let Some(k) = stack.pop() {
            match friendly(k) {
                Some(r) => found.push((k, r)),
                None => stack.extend(self.children[k].iter().copied()),
            }
        }
        found.sort_by_key(|(k, _)| sites.loops[*k].span.start);
        found.into_iter().map(|(_, r)| r).collect()
    }
}

/// Whether the loop's port would update an element with a floating-point `+`, `-` or `*`
/// atomic (min and max do not depend on the order).
fn reorders_float_updates(report: &LoopReport) -> bool {
    report.reductions.iter().any(reorders)
}

fn reorders(r: &advisor::model::Reduction) -> bool {
    matches!(r.kind, ReductionKind::Element | ReductionKind::Histogram)
        && super::clauses::reassociates_floats(r)
}
