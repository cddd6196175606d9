//! `check --format sarif`: the findings of `warpwise check` as SARIF 2.1.0 (typed with
//! serde-sarif, through the driver, locations and fingerprints `analyze --format sarif`
//! uses, `crate::sarif_log`).
//!
//! One result per finding of the report (an uncoalesced global access, WW201; a shared
//! access with bank conflicts, WW202; a branch that splits warps, WW203), with the
//! finding's code as `ruleId`, the level its rule implies (a kernel rule's finding is
//! something to fix: `warning`), the finding's message and help as the message, the
//! access's or branch's `file:line:col` as the location and the kernel's as a related
//! location. A branch whose threads agree carries no finding, so it is no result: the YAML,
//! JSON and text forms give every branch's divergence. Declarations
//! not analysed (`refused`: C++ the frontend cannot read) are warnings of the run's
//! invocation (`toolExecutionNotifications`), not results: they say what the check could
//! not see, not something wrong in the code; a kernel's `not_analysed` lines are notes
//! there, at the kernel.

use crate::sarif_log::{fingerprint, location, message, without_digits};
use advisor::check::model::{CheckReport, KernelReport};
use advisor::model::{Reason, Verdict};
use advisor::rules::{self, Rule};
use serde_sarif::sarif;
use std::collections::HashMap;

/// The SARIF log of `report`, as pretty JSON.
pub fn render(report: &CheckReport) -> String {
    let rules: Vec<&Rule> = rules::KERNEL.to_vec();
    let index = crate::sarif_log::rule_index(&rules);
    let mut results = Vec::new();
    // How many findings with the same fingerprint came before: two identical accesses of
    // one kernel stay two results in code scanning.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for k in &report.kernels {
        // (where, what as written, its kind, its finding, whether it is minor) of each
        // access and branch. A boundary (a bounds guard) splits at most one warp per row of
        // threads, usually nothing to fix: a note, so that code scanning does not warn on
        // every guarded kernel.
        let accesses = k.accesses.iter().map(|a| {
            let finding = a.finding.as_ref();
            (&a.at, &a.access, a.kind.as_str(), finding, false, &a.via)
        });
        let shared = k.shared_accesses.iter().map(|a| {
            let finding = a.finding.as_ref();
            (&a.at, &a.access, a.kind.as_str(), finding, false, &a.via)
        });
        let branches = k.branches.iter().map(|b| {
            let minor = b.divergence == advisor::check::model::Divergence::SomeWarps;
            (
                &b.at,
                &b.condition,
                "branch",
                b.finding.as_ref(),
                minor,
                &b.via,
            )
        });
        let findings = accesses.chain(shared).chain(branches).filter_map(
            |(at, what, kind, finding, minor, via)| Some((at, what, kind, finding?, minor, via)),
        );
        for (at, access, kind, reason, minor, via) in findings {
            let Some(place) = Place::parse(at) else {
                continue;
            };
            // The callees a device function's finding is reached through tell its instances
            // apart (not the calls' lines, which move).
            let mut key = format!(
                "{}\u{0}{}\u{0}{}\u{0}{access}\u{0}{kind}\u{0}{}",
                place.file,
                k.kernel,
                reason.code,
                without_digits(&reason.message)
            );
            for call in via {
                key.push_str(&format!("\u{0}{}", call.callee));
            }
            let rank = seen.entry(key.clone()).or_default();
            let mut result = finding(k, &place, reason, &fingerprint(&[&key, &rank.to_string()]));
            // The calls that reach a device function's finding, outermost first.
            let calls = via.iter().filter_map(|c| {
                let call = Place::parse(&c.at)?;
                Some(call.location(Some(format!("the call of `{}`", c.callee))))
            });
            if let Some(related) = &mut result.related_locations {
                related.extend(calls);
            }
            if minor {
                result.level = Some(sarif::ResultLevel::Note);
            }
            *rank += 1;
            result.rule_index = index.get(&reason.code).copied();
            results.push(result);
        }
    }
    let notifications = notifications(report);
    let invocations = (!notifications.is_empty()).then(|| {
        vec![sarif::Invocation::builder()
            .execution_successful(true)
            .tool_execution_notifications(notifications)
            .build()]
    });
    crate::sarif_log::render(
        "Tells CUDA programmers how the accesses of their kernels use the memory system and \
         where their branches split warps",
        &rules,
        results,
        invocations,
    )
}

/// A `file:line:col` of the report (the HTML page places its marks by it too).
pub(crate) struct Place {
    pub(crate) file: String,
    pub(crate) line: i64,
    col: i64,
}

impl Place {
    /// From the right, since a file name may hold a colon.
    pub(crate) fn parse(at: &str) -> Option<Place> {
        let mut parts = at.rsplitn(3, ':');
        let col = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        let file = parts.next().filter(|f| !f.is_empty())?.to_string();
        Some(Place { file, line, col })
    }

    fn location(&self, what: Option<String>) -> sarif::Location {
        location(&self.file, self.line, Some(self.col), what)
    }
}

/// A kernel rule's finding is something to fix (its example's verdict says so): a warning.
fn level(code: rules::Code) -> sarif::ResultLevel {
    match rules::KERNEL.iter().find(|r| r.code == code) {
        Some(r) if r.example.verdict != Verdict::NotFriendly => sarif::ResultLevel::Note,
        _ => sarif::ResultLevel::Warning,
    }
}

fn finding(
    k: &KernelReport,
    place: &Place,
    reason: &Reason,
    fingerprints: &std::collections::BTreeMap<String, String>,
) -> sarif::Result {
    let mut text = reason.message.clone();
    if let Some(help) = &reason.help {
        text.push_str(&format!(". Help: {help}"));
    }
    let mut result = sarif::Result::builder()
        .rule_id(reason.code.as_str())
        .level(level(reason.code))
        .message(message(text))
        .locations(vec![place.location(None)])
        .partial_fingerprints(fingerprints.clone())
        .build();
    if let Some(kernel) = Place::parse(&k.at) {
        result.related_locations = Some(vec![
            kernel.location(Some(format!("the kernel `{}`", k.kernel)))
        ]);
    }
    result
}

/// What the run could not see: each refused declaration (a warning, at the construct that
/// stopped it) and each kernel's `not_analysed` line (a note, at the kernel).
fn notifications(report: &CheckReport) -> Vec<sarif::Notification> {
    let mut out = Vec::new();
    for r in &report.refused {
        let who = r.function_prefix();
        out.push(notification(
            "warning",
            format!("{who}not analysed: {}", r.reason),
            &r.at,
        ));
    }
    for k in &report.kernels {
        for n in &k.not_analysed {
            out.push(notification(
                "note",
                format!("kernel `{}`: not analysed: {n}", k.kernel),
                &k.at,
            ));
        }
    }
    out
}

fn notification(level: &str, text: String, at: &str) -> sarif::Notification {
    let place = match Place::parse(at) {
        Some(p) => Some(p.location(None)),
        // A refusal the frontend could not place names the file alone.
        None if !at.is_empty() => Some(
            sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(crate::sarif_log::artifact(at))
                        .build(),
                )
                .build(),
        ),
        None => None,
    };
    let mut n = sarif::Notification::builder()
        .level(serde_json::json!(level))
        .message(message(text))
        .build();
    n.locations = place.map(|p| vec![p]);
    n
}
