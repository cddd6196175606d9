//! `analyze --format sarif`: the findings as SARIF 2.1.0 (typed with serde-sarif), for
//! GitHub code scanning and editors' SARIF viewers.
//!
//! One result per finding, with the finding's code as `ruleId` and the rule's name and
//! explanation in the driver's `rules`; one `note` per outermost friendly loop (rule `WW001`,
//! not repeated for the inner loop of a nest it maps to the grid) whose
//! `fix` inserts the OpenMP offload pragma `emit --target openmp` would write, when the port
//! needs nothing else (no helper functions to declare for the device); a may-alias finding
//! (WW110) between two pointer parameters gets a `fix` declaring the first of them
//! `restrict` (`float *restrict dst`), the promise that settles it. Locations are the
//! finding's lines in the loop's file, relative to the working directory (`%SRCROOT%`);
//! the loop itself is a related location. `partialFingerprints` hash what identifies a
//! finding without its line numbers (file, function, code, message with digits removed), so
//! that an edit above it does not make a re-run report it as new. The driver, paths,
//! locations and fingerprint hash are `crate::sarif_log`'s, shared with `check --format sarif`.

use crate::sarif_log::{artifact, fingerprint, location, message, without_digits};
use advisor::model::{LoopReport, Reason, Report, Verdict};
use advisor::rules::{self, Rule};
use frontend::loop_ref::LoopRef;
use frontend::unit::Unit;
use serde_sarif::sarif;
use std::collections::{BTreeMap, HashMap};

/// The SARIF log of `report` (the loops of `units`), as pretty JSON.
pub fn render(report: &Report, units: &[Unit]) -> String {
    let rules: Vec<&Rule> = rules::ALL
        .iter()
        .copied()
        .chain([rules::FRIENDLY])
        .collect();
    let rule_index = crate::sarif_log::rule_index(&rules);
    let (pragmas, regions) = port_pragmas(report, units);
    let restricts = RestrictFixes::new(units);
    let mut results = Vec::new();
    for l in &report.loops {
        let Some(site) = LoopSite::of(l, &report.loops) else {
            continue;
        };
        let in_a_region = regions.iter().any(|(file, lines)| {
            *file == site.file && lines.contains(&site.line) && *lines.start() != site.line
        });
        if l.verdict == Verdict::Friendly
            && !cuda::openmp::inside_friendly(l, &report.loops)
            && !in_a_region
        {
            results.push(friendly_result(l, &site, &rule_index, pragmas.get(&l.id)));
        }
        for reason in &l.reasons {
            let mut result = finding(l, &site, reason, &rule_index);
            if reason.code == rules::ww110_may_alias::RULE.code {
                result.fixes = restricts.fix(l).map(|f| vec![f]);
            }
            results.push(result);
        }
    }
    crate::sarif_log::render(
        "Tells C programmers which loops can run on a GPU and how to port them",
        &rules,
        results,
        None,
    )
}

/// Where a loop is: its file (as the user named it), line and column, from its id.
struct LoopSite {
    file: String,
    line: i64,
    col: i64,
    /// How many loops of the same function come before it in the report.
    rank: usize,
}

impl LoopSite {
    fn of(l: &LoopReport, all: &[LoopReport]) -> Option<LoopSite> {
        let id = &l.id;
        let (col, line, file) = (i64::from(id.col), i64::from(id.line), id.file.clone());
        let rank = all
            .iter()
            .take_while(|o| o.id != l.id)
            .filter(|o| o.function == l.function && o.id.file == file)
            .count();
        Some(LoopSite {
            file,
            line,
            col,
            rank,
        })
    }
}

/// How serious a finding is for code scanning: what stops the port is a warning, what a
/// profile settles or a port handles (reductions, allocations) a note.
fn level(l: &LoopReport) -> sarif::ResultLevel {
    match l.verdict {
        Verdict::NotFriendly => sarif::ResultLevel::Warning,
        _ => sarif::ResultLevel::Note,
    }
}

fn finding(
    l: &LoopReport,
    site: &LoopSite,
    reason: &Reason,
    rules: &HashMap<rules::Code, i64>,
) -> sarif::Result {
    let first = reason.lines.first().map(|&n| n as i64).unwrap_or(site.line);
    let mut related = vec![location(
        &site.file,
        site.line,
        Some(site.col),
        Some(format!("the loop (`{}`)", l.function)),
    )];
    related.extend(reason.lines.iter().skip(1).map(|&n| {
        location(
            &site.file,
            n as i64,
            None,
            Some("the other access".to_string()),
        )
    }));
    let mut text = format!(
        "{} (loop at line {} of `{}`)",
        reason.message, site.line, l.function
    );
    if let Some(help) = &reason.help {
        text.push_str(&format!(". Help: {help}"));
    }
    let text = with_names(text, l);
    let mut result = sarif::Result::builder()
        .rule_id(reason.code.as_str())
        .level(level(l))
        .message(message(text))
        .locations(vec![location(&site.file, first, None, None)])
        .related_locations(related)
        .partial_fingerprints(loop_fingerprint(
            site,
            l,
            reason.code.as_str(),
            &reason.message,
        ))
        .build();
    result.rule_index = rules.get(&reason.code).copied();
    result
}

/// `text` with what each name of the loop's legend that it uses stands for (a SARIF
/// reader sees the message alone, not the report's `names`).
fn with_names(mut text: String, l: &LoopReport) -> String {
    let used = advisor::legend::said_in(&l.names, &text);
    if !used.is_empty() {
        text.push_str(&format!(" (where {})", used.join("; ")));
    }
    text
}

fn friendly_result(
    l: &LoopReport,
    site: &LoopSite,
    rules: &HashMap<rules::Code, i64>,
    pragma: Option<&Fix>,
) -> sarif::Result {
    let parameters: Vec<&str> = l.parameters.iter().map(|p| p.name.as_str()).collect();
    let text = format!(
        "The loop at line {} of `{}` can run on a GPU: no iteration depends on another{}. `warpwise analyze {} --format text` gives the porting recipe; `warpwise emit --target openmp` writes the port.",
        site.line,
        l.function,
        if parameters.is_empty() {
            String::new()
        } else {
            format!(" (kernel parameters: {})", parameters.join(", "))
        },
        site.file
    );
    let text = with_names(text, l);
    let mut result = sarif::Result::builder()
        .rule_id(rules::FRIENDLY.code.as_str())
        .level(sarif::ResultLevel::Note)
        .message(message(text))
        .locations(vec![location(&site.file, site.line, Some(site.col), None)])
        .partial_fingerprints(loop_fingerprint(site, l, rules::FRIENDLY.code.as_str(), ""))
        .build();
    result.rule_index = rules.get(&rules::FRIENDLY.code).copied();
    result.fixes = pragma.map(|fix| vec![fix.to_sarif(&site.file)]);
    result
}

/// Stable across edits outside the function: no line numbers or columns, digits in the
/// message (which name lines) removed, the loop named by its rank among the function's
/// loops.
fn loop_fingerprint(
    site: &LoopSite,
    l: &LoopReport,
    code: &str,
    message: &str,
) -> BTreeMap<String, String> {
    fingerprint(&[
        &site.file,
        &l.function,
        &site.rank.to_string(),
        code,
        &without_digits(message),
    ])
}

/// The lines of a planned target region: (file, first..=last line).
type Region = (String, std::ops::RangeInclusive<i64>);

/// A pragma inserted on its own line above the loop, indented as the loop is.
struct Fix {
    line: i64,
    inserted: String,
}

impl Fix {
    fn to_sarif(&self, file: &str) -> sarif::Fix {
        let at = sarif::Region::builder()
            .start_line(self.line)
            .start_column(1)
            .end_line(self.line)
            .end_column(1)
            .build();
        let replacement = sarif::Replacement::builder()
            .deleted_region(at)
            .inserted_content(
                sarif::ArtifactContent::builder()
                    .text(self.inserted.clone())
                    .build(),
            )
            .build();
        sarif::Fix::builder()
            .description(message(
                "offload the loop with OpenMP (the map clauses are the reported sections)".into(),
            ))
            .artifact_changes(vec![sarif::ArtifactChange::builder()
                .artifact_location(artifact(file))
                .replacements(vec![replacement])
                .build()])
            .build()
    }
}

/// The OpenMP pragma of every friendly loop whose port is that pragma alone (no function
/// to compile for the device, no atomic update to insert, no text of the loop rewritten
/// nor code around it: counters, arg-min/arg-max, error paths), by loop id; and the lines of
/// every target region planned (the loops inside one are ported with it).
fn port_pragmas(report: &Report, units: &[Unit]) -> (HashMap<LoopRef, Fix>, Vec<Region>) {
    let mut out = HashMap::new();
    let mut regions = Vec::new();
    for unit in units {
        let path = unit.path.display().to_string();
        let reports: Vec<LoopReport> = report
            .loops
            .iter()
            .filter(|l| l.id.file == path)
            .cloned()
            .collect();
        if !reports.iter().any(|l| l.verdict == Verdict::Friendly) {
            continue;
        }
        let (ports, _) =
            cuda::openmp::plan_unit(unit, &reports, &[], &cuda::openmp::PortOptions::default());
        let Ok(source) = std::fs::read_to_string(&unit.path) else {
            continue;
        };
        let lines: Vec<&str> = source.lines().collect();
        for port in ports {
            regions.push((
                unit.path.display().to_string(),
                port.line as i64..=port.last_line as i64,
            ));
            if !port.device_functions.is_empty()
                || !port.atomics.is_empty()
                || !port.edits.is_empty()
                || port.preamble.is_some()
                || port.rerun.is_some()
            {
                continue;
            }
            if port.file != unit.path {
                continue;
            }
            let Some(text) = lines.get(port.line as usize - 1) else {
                continue;
            };
            let indent: String = text.chars().take_while(|c| c.is_whitespace()).collect();
            out.insert(
                port.loop_id.clone(),
                Fix {
                    line: port.line as i64,
                    inserted: format!("{indent}{}\n", port.pragma),
                },
            );
        }
    }
    (out, regions)
}

/// `restrict` on a pointer parameter of the loop's function, where its declarator is
/// `TYPE *NAME` in the file the loop is in (not written by a macro).
struct RestrictFixes<'a> {
    units: &'a [Unit],
    sites: std::cell::RefCell<HashMap<usize, Option<frontend::access_sites::Sites>>>,
}

impl<'a> RestrictFixes<'a> {
    fn new(units: &'a [Unit]) -> Self {
        RestrictFixes {
            units,
            sites: std::cell::RefCell::new(HashMap::new()),
        }
    }

    /// The fix for a loop's may-alias finding: the first parameter of its first pair
    /// (`needs_evidence` of kind `may-alias`, `a / b`) that can take `restrict`.
    fn fix(&self, l: &LoopReport) -> Option<sarif::Fix> {
        let pair = l
            .needs_evidence
            .iter()
            .find(|p| p.kind == advisor::model::PairKind::MayAlias)?;
        let names: Vec<&str> = pair.array.split(" / ").map(str::trim).collect();
        let site = LoopSite::of(l, &[])?;
        let (k, unit) = self
            .units
            .iter()
            .enumerate()
            .find(|(_, u)| u.path.display().to_string() == site.file)?;
        let mut cache = self.sites.borrow_mut();
        let sites = cache
            .entry(k)
            .or_insert_with(|| frontend::access_sites::access_sites(&unit.preprocessed).ok())
            .as_ref()?;
        let func = unit.lowered.program.function(&l.function)?;
        let f = sites.functions.iter().find(|f| f.name == l.function)?;
        let text = &unit.preprocessed.text;
        let header = text.get(f.span.start as usize..f.body.start as usize)?;
        let toks = cuda::ctext::code_tokens(header);
        for name in names {
            if !func.params.iter().any(|p| p.name.as_deref() == Some(name)) {
                continue;
            }
            // The parameter's declarator: `* name` (not `*restrict name` already).
            let at = toks.iter().enumerate().find(|(j, t)| {
                cuda::ctext::tok_text(header, t) == name
                    && *j > 0
                    && cuda::ctext::tok_text(header, &toks[j - 1]) == "*"
            });
            let Some((_, t)) = at else { continue };
            let start = f.span.start + t.start as u32;
            let span = frontend::ir::Span {
                start,
                end: start + name.len() as u32,
            };
            let place = unit.resolve(span)?;
            if place.in_system_header || place.path != unit.path {
                return None;
            }
            // Inserted only where the name stands in the user's text (not from a macro).
            if unit.snippet(span) != name {
                return None;
            }
            let at = sarif::Region::builder()
                .start_line(place.line as i64)
                .start_column(place.col as i64)
                .end_line(place.line as i64)
                .end_column(place.col as i64)
                .build();
            let replacement = sarif::Replacement::builder()
                .deleted_region(at)
                .inserted_content(sarif::ArtifactContent::builder().text("restrict ").build())
                .build();
            return Some(
                sarif::Fix::builder()
                    .description(message(format!(
                        "declare `{name}` restrict: the promise that no other pointer reaches what it points to while `{}` runs (check the callers first)",
                        l.function
                    )))
                    .artifact_changes(vec![sarif::ArtifactChange::builder()
                        .artifact_location(artifact(&site.file))
                        .replacements(vec![replacement])
                        .build()])
                    .build(),
            );
        }
        None
    }
}
