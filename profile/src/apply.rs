//! Applying a profile to `analyze`'s reports: run-time evidence settles `needs-profile`
//! loops, and loops are ordered by profiled time.

use super::model::{Dependence, Profile};
use advisor::model::{LoopReport, Observed, Reason, ReductionKind, Verdict};
use advisor::rules::Code;

fn describe(d: &Dependence) -> String {
    let distance = match d.distance {
        Some(k) => format!("distance {k}"),
        None => format!("distance {}..{}", d.distance_min, d.distance_max),
    };
    format!(
        "{} {}: line {} `{}` -> line {} `{}`, {distance}, {} times",
        d.kind, d.array, d.first.line, d.first.text, d.second.line, d.second.text, d.count
    )
}

/// Whether `d` is between two accesses of one of the report's element or histogram
/// reductions: the same lines, the element's own text (for an element) or the array
/// (for a histogram, which nothing else in the loop touches).
fn is_static_reduction(report: &LoopReport, d: &Dependence) -> bool {
    report.reductions.iter().any(|r| {
        let sites = [&d.first, &d.second];
        let lines = sites.iter().all(|s| !s.scalar && r.lines.contains(&s.line));
        lines
            && match r.kind {
                ReductionKind::Element => sites.iter().all(|s| s.text == r.target),
                ReductionKind::Histogram => {
                    d.array == r.target && sites.iter().all(|s| s.array == r.target)
                }
                _ => false,
            }
    })
}

/// Adds `observed` to every profiled loop, settles tracked `needs-profile` loops, and sorts
/// loops by inclusive profiled time (loops without a profile last, in their order).
pub fn apply(loops: &mut [LoopReport], profile: &Profile) {
    for report in loops.iter_mut() {
        let Some(p) = profile.find_loop(&report.id) else {
            continue;
        };
        // A dependence between the accesses of a reduction the static analysis recognised
        // (`C[i][j] += ...` over `k`) is that reduction, not a reason against the loop.
        let blocking: Vec<&Dependence> = p
            .blocking()
            .filter(|d| !is_static_reduction(report, d))
            .collect();
        report.observed = Some(Observed {
            evidence: "dynamic".into(),
            runs: profile.runs,
            entries: p.entries,
            iterations: p.iterations,
            min_trip: p.min_trip,
            max_trip: p.max_trip,
            time_ns: p.time_ns,
            tracked: p.tracked,
            dependences: blocking.iter().map(|d| describe(d)).collect(),
            reductions: p
                .reductions
                .iter()
                .map(|r| format!("{} ({})", r.var, r.op))
                .collect(),
            privatizable: p.privatizable.clone(),
        });
        if report.verdict != Verdict::NeedsProfile || !p.tracked || p.entries == 0 {
            continue;
        }
        let runs = match profile.runs {
            1 => "1 profiled run".to_string(),
            n => format!("{n} profiled runs"),
        };
        if blocking.is_empty() {
            report.verdict = Verdict::Friendly;
            // The static doubts stay visible, as what the profile settled; reduction notes
            // (WW102, WW103) stay reasons.
            let (notes, doubts): (Vec<Reason>, Vec<Reason>) = std::mem::take(&mut report.reasons)
                .into_iter()
                .partition(|r| matches!(r.code, Code::WW102 | Code::WW103));
            report.reasons = notes;
            for r in doubts {
                report
                    .assumptions
                    .push(format!("settled by the profile: {}", r.message));
            }
            let besides = if report.reductions.is_empty() {
                ""
            } else {
                " besides its reductions"
            };
            let resets = if p.shadow_resets == 0 {
                String::new()
            } else {
                format!(
                    " (the shadow memory reached its limit {} times and was cleared: a \
                     dependence across those points was not observed)",
                    p.shadow_resets
                )
            };
            let sampled = if p.sampled_out == 0 {
                String::new()
            } else {
                format!(
                    " (sampled: past the tracking budget, {} stretches of the loop ran \
                     untracked, and a dependence within or across them was not observed)",
                    p.sampled_out
                )
            };
            report.assumptions.push(format!(
                "friendly (observed): no loop-carried dependence{besides} in {} entries and {} \
                 iterations of {runs}{resets}{sampled}; dynamic evidence for those inputs, not \
                 a proof",
                p.entries, p.iterations
            ));
            // The profile's reductions stay in `observed`: they are not added to the loop's
            // own. A scalar this loop carries is a phi at its header, which the static
            // analysis classified already (a reduction, or WW101 and then the loop is
            // `not-friendly` and never settled here); a scalar the profile saw accumulate
            // inside an inner loop (`red` of the convolution) is private to each iteration.
        } else {
            let lines: Vec<u32> = blocking
                .iter()
                .flat_map(|d| [d.first.line, d.second.line])
                .collect();
            let observed: Vec<String> = blocking.iter().map(|d| describe(d)).collect();
            let finding = advisor::rules::ww130_observed_dependence::observed(
                lines,
                &observed.join("; "),
                &runs,
            );
            report.verdict = report.verdict.max(finding.verdict);
            report.reasons.push(finding.reason);
        }
    }
    let time = |r: &LoopReport| r.observed.as_ref().map(|o| o.time_ns);
    loops.sort_by(|a, b| match (time(a), time(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}
