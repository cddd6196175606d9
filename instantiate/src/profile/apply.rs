//! Applying a profile to `analyze`'s reports: run-time evidence settles `needs-profile`
//! loops, and loops are ordered by profiled time.

use super::model::{Dependence, Profile};
use advisor::model::{LoopReport, Observed, Reason, Verdict};

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

/// Adds `observed` to every profiled loop, settles tracked `needs-profile` loops, and sorts
/// loops by inclusive profiled time (loops without a profile last, in their order).
pub fn apply(loops: &mut [LoopReport], profile: &Profile) {
    for report in loops.iter_mut() {
        let Some(p) = profile.find_loop(&report.id) else {
            continue;
        };
        let blocking: Vec<&Dependence> = p.blocking().collect();
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
            // The static doubts stay visible, as what the profile settled.
            for r in std::mem::take(&mut report.reasons) {
                report
                    .assumptions
                    .push(format!("settled by the profile: {}", r.message));
            }
            report.assumptions.push(format!(
                "friendly (observed): no loop-carried dependence in {} entries and {} iterations \
                 of {runs}; dynamic evidence for those inputs, not a proof",
                p.entries, p.iterations
            ));
            for r in &p.reductions {
                if !report.reductions.contains(&r.var) {
                    report.reductions.push(r.var.clone());
                }
            }
        } else {
            let mut lines: Vec<u32> = blocking
                .iter()
                .flat_map(|d| [d.first.line, d.second.line])
                .collect();
            lines.sort_unstable();
            lines.dedup();
            let list: Vec<String> = lines.iter().map(u32::to_string).collect();
            report.verdict = Verdict::NotFriendly;
            report.reasons.push(Reason {
                code: "observed-dependence".into(),
                message: format!(
                    "not-friendly (observed dependence at lines {}): {} (dynamic evidence from {runs})",
                    list.join(", "),
                    blocking
                        .iter()
                        .map(|d| describe(d))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                lines,
                help: Some(
                    "the profiled run really carried a value between iterations; restructure \
                     the loop (scan, atomics, privatization) before porting it"
                        .into(),
                ),
                witness: None,
            });
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
