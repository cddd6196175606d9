//! The text form of a `warpwise check` report: per kernel, its block shape, one entry per
//! global access (offset, requests and sectors per warp, verdict, finding with its fix), per
//! shared access (its bank-conflict degree) and per branch (its divergence, and its finding
//! where it splits warps), then what was assumed and what was not analysed; a summary at
//! the end.

use super::dynamic::shown;
use super::model::{
    AccessReport, Agreement, BranchReport, Call, CheckReport, Coalescing, Count, Dynamic,
    KernelReport, RunSummary, SharedAccessReport,
};
use std::fmt::Write;

pub fn render(report: &CheckReport) -> String {
    let mut out = String::new();
    for k in &report.kernels {
        kernel(&mut out, k);
    }
    for r in &report.refused {
        let who = r.function_prefix();
        let _ = writeln!(out, "{}: not analysed: {who}{}", r.at, r.reason);
    }
    if let Some(r) = &report.run {
        run(&mut out, report, r);
    }
    summary(&mut out, report);
    out
}

fn kernel(out: &mut String, k: &KernelReport) {
    let from = if k.block.from.is_empty() {
        String::new()
    } else {
        format!(" from {}", k.block.from.join(", "))
    };
    let _ = writeln!(
        out,
        "{}: kernel `{}`, blockDim ({}, {}, {}){from}",
        k.at, k.kernel, k.block.x, k.block.y, k.block.z
    );
    for a in &k.accesses {
        access(out, a);
    }
    for a in &k.shared_accesses {
        shared(out, a);
    }
    for b in &k.branches {
        branch(out, b);
    }
    if !k.assumptions.is_empty() {
        let _ = writeln!(out, "  assuming:");
        for a in &k.assumptions {
            let _ = writeln!(out, "    - {a}");
        }
    }
    for n in &k.not_analysed {
        let _ = writeln!(out, "  not analysed: {n}");
    }
    out.push('\n');
}

fn count(c: &Count) -> String {
    let mut s = match &c.min {
        Some(min) => format!("{min} to {}", c.max),
        None => c.max.clone(),
    };
    if let Some(u) = &c.unaligned {
        let _ = write!(s, " ({u} unaligned)");
    }
    s
}

fn access(out: &mut String, a: &AccessReport) {
    let _ = writeln!(
        out,
        "  {}: {} `{}` ({} bytes){}",
        a.at,
        a.kind.as_str(),
        a.access,
        a.bytes,
        a.offset
            .as_deref()
            .map(|o| format!(", offset {o}"))
            .unwrap_or_default()
    );
    let when = a
        .when
        .as_deref()
        .map(|w| format!(" when {w}"))
        .unwrap_or_default();
    through(out, &a.via);
    let _ = writeln!(
        out,
        "    requests {}, sectors {} per warp (ideal {}): {}{when}",
        count(&a.requests),
        count(&a.sectors),
        a.ideal_sectors,
        a.coalescing.as_str()
    );
    notes(
        out,
        a.active.as_deref(),
        a.reason.as_deref(),
        &a.assumptions,
        a.finding.as_ref(),
    );
    if let Some(d) = &a.dynamic {
        dynamic(out, d);
    }
}

/// `dynamic: 2 requests, 8 sectors in 40 warps; agrees`, with the partial warps apart.
fn dynamic(out: &mut String, d: &Dynamic) {
    let full = match (d.requests, d.sectors) {
        (Some(r), Some(s)) => format!(
            "{} requests, {} sectors in {} warps",
            shown(r),
            shown(s),
            d.warps
        ),
        _ => "no full warp".to_string(),
    };
    let partial = d
        .partial
        .as_ref()
        .map(|p| {
            format!(
                " (and {} partial warps: {} requests, {} sectors)",
                p.warps,
                shown(p.requests),
                shown(p.sectors)
            )
        })
        .unwrap_or_default();
    let verdict = match &d.agreement {
        Agreement::Agrees => "agrees".to_string(),
        Agreement::Unaligned(why) => format!("agrees without aligned rows: {why}"),
        Agreement::Disagrees(why) => format!("disagrees: {why}"),
        Agreement::NotComparable(why) => format!("not comparable: {why}"),
    };
    // A symbolic count evaluated with each launch's sizes and arguments.
    let per_launch = d
        .per_launch
        .as_ref()
        .map(|p| {
            format!(
                "; counted per launch ({} launches): {} requests, {} sectors",
                p.launches,
                shown(p.requests),
                shown(p.sectors)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(out, "    dynamic: {full}{partial}{per_launch}; {verdict}");
}

/// The run's totals (accesses counted, the report's accesses by verdict), and the places it
/// accessed global memory with no access of the report.
fn run(out: &mut String, report: &CheckReport, r: &RunSummary) {
    let mut verdicts: Vec<(&str, usize)> = Vec::new();
    for a in report.kernels.iter().flat_map(|k| &k.accesses) {
        let Some(d) = &a.dynamic else { continue };
        let v = match d.agreement {
            Agreement::Agrees => "agree",
            Agreement::Unaligned(_) => "agree without aligned rows",
            Agreement::Disagrees(_) => "disagree",
            Agreement::NotComparable(_) => "not comparable",
        };
        match verdicts.iter_mut().find(|(name, _)| *name == v) {
            Some((_, n)) => *n += 1,
            None => verdicts.push((v, 1)),
        }
    }
    let verdicts: Vec<String> = verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    let _ = writeln!(
        out,
        "dynamic run: {} global accesses counted{}{}{}",
        r.events,
        if verdicts.is_empty() {
            String::new()
        } else {
            format!("; accesses: {}", verdicts.join(", "))
        },
        r.exit_status
            .map(|s| format!("; the program exited with status {s}"))
            .unwrap_or_default(),
        r.truncated
            .as_deref()
            .map(|t| format!("; {t}"))
            .unwrap_or_default()
    );
    for u in &r.unmatched {
        let _ = writeln!(
            out,
            "  {}: {} in {} warps: no access of the report there",
            u.at,
            u.kind.as_str(),
            u.warps
        );
    }
}

fn shared(out: &mut String, a: &SharedAccessReport) {
    let _ = writeln!(
        out,
        "  {}: shared {} `{}` ({} bytes){}",
        a.at,
        a.kind.as_str(),
        a.access,
        a.bytes,
        a.offset
            .as_deref()
            .map(|o| format!(", offset {o}"))
            .unwrap_or_default()
    );
    through(out, &a.via);
    let _ = writeln!(
        out,
        "    bank conflicts: {}-way per warp",
        count(&a.bank_conflicts)
    );
    notes(
        out,
        a.active.as_deref(),
        a.reason.as_deref(),
        &a.assumptions,
        a.finding.as_ref(),
    );
}

fn branch(out: &mut String, b: &BranchReport) {
    let what = if b.loop_exit { "loop exit" } else { "branch" };
    let _ = writeln!(
        out,
        "  {}: {what} `{}` diverges: {} ({})",
        b.at,
        b.condition,
        b.divergence.as_str(),
        b.why
    );
    through(out, &b.via);
    notes(out, None, None, &[], b.finding.as_ref());
}

/// The calls from the kernel to the device function that holds what was just written.
fn through(out: &mut String, via: &[Call]) {
    if !via.is_empty() {
        let calls: Vec<String> = via
            .iter()
            .map(|c| format!("`{}` called at {}", c.callee, c.at))
            .collect();
        let _ = writeln!(out, "    in {}", calls.join(", then "));
    }
}

fn summary(out: &mut String, report: &CheckReport) {
    let accesses: Vec<&AccessReport> = report.kernels.iter().flat_map(|k| &k.accesses).collect();
    let of = |c: Coalescing| accesses.iter().filter(|a| a.coalescing == c).count();
    let shared: Vec<&SharedAccessReport> = report
        .kernels
        .iter()
        .flat_map(|k| &k.shared_accesses)
        .collect();
    let conflicts = shared.iter().filter(|a| a.finding.is_some()).count();
    let shared = if shared.is_empty() {
        String::new()
    } else {
        format!(
            "; {} shared access(es), {conflicts} with bank conflicts",
            shared.len()
        )
    };
    let branches: Vec<&BranchReport> = report.kernels.iter().flat_map(|k| &k.branches).collect();
    let divergent = branches.iter().filter(|b| b.finding.is_some()).count();
    let branches = if branches.is_empty() {
        String::new()
    } else {
        format!("; {} branch(es), {divergent} divergent", branches.len())
    };
    let _ = writeln!(
        out,
        "{} kernel(s), {} global access(es): {} coalesced, {} broadcast, {} misaligned, {} \
         uncoalesced, {} data-dependent, {} unknown{shared}{branches}; {} declaration(s) not analysed",
        report.kernels.len(),
        accesses.len(),
        of(Coalescing::Coalesced),
        of(Coalescing::Broadcast),
        of(Coalescing::Misaligned),
        of(Coalescing::Uncoalesced),
        of(Coalescing::DataDependent),
        of(Coalescing::Unknown),
        report.refused.len()
    );
}

/// The lines under an access or branch: which lanes it counts, why, what it assumes, and
/// its finding.
fn notes(
    out: &mut String,
    active: Option<&str>,
    reason: Option<&str>,
    assumptions: &[String],
    finding: Option<&crate::model::Reason>,
) {
    if let Some(lanes) = active {
        let _ = writeln!(out, "    lanes: {lanes}");
    }
    if let Some(r) = reason {
        let _ = writeln!(out, "    because {r}");
    }
    for assumption in assumptions {
        let _ = writeln!(out, "    assuming {assumption}");
    }
    if let Some(f) = finding {
        let _ = writeln!(out, "    {}: {}", f.code, f.message);
        if let Some(help) = &f.help {
            let _ = writeln!(out, "      help: {help}");
        }
    }
}
