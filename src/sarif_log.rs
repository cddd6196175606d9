//! What the SARIF logs of `analyze --format sarif` and `check --format sarif` share: the
//! driver with its rules table, artifact locations relative to the working directory
//! (`%SRCROOT%`), locations, line-free fingerprints and the log around the results, so
//! that both commands' logs read alike in code scanning and cannot drift apart.

use advisor::rules::{self, Rule};
use serde_sarif::sarif;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const SRCROOT: &str = "%SRCROOT%";

/// The log of one run of warpwise: `description` is the driver's, `rules` its rules table
/// (the order `rule_index` numbers them in), `invocations` only where there is something to
/// say about the run itself (declarations not analysed), as pretty JSON.
pub fn render(
    description: &str,
    rules: &[&Rule],
    results: Vec<sarif::Result>,
    invocations: Option<Vec<sarif::Invocation>>,
) -> String {
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| format!("file://{}/", d.display()))
        .unwrap_or_else(|| "file:///".into());
    let driver = sarif::ToolComponent::builder()
        .name("warpwise")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .full_description(text(description))
        .rules(rules.iter().map(|c| rule(c)).collect::<Vec<_>>())
        .build();
    let mut run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .original_uri_base_ids(BTreeMap::from([(
            SRCROOT.to_string(),
            sarif::ArtifactLocation::builder().uri(cwd).build(),
        )]))
        .results(results)
        .build();
    run.invocations = invocations;
    let log = sarif::Sarif::builder()
        .version(serde_json::json!("2.1.0"))
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .runs(vec![run])
        .build();
    serde_json::to_string_pretty(&log)
        .map(|s| s + "\n")
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize: {e}\"}}\n"))
}

/// Each rule's index in `rules`, for a result's `ruleIndex`.
pub fn rule_index(rules: &[&Rule]) -> HashMap<rules::Code, i64> {
    rules
        .iter()
        .enumerate()
        .map(|(k, c)| (c.code, k as i64))
        .collect()
}

fn text(s: &str) -> sarif::MultiformatMessageString {
    sarif::MultiformatMessageString::builder()
        .text(s.to_string())
        .build()
}

pub fn message(s: String) -> sarif::Message {
    sarif::Message::builder().text(s).build()
}

fn rule(c: &Rule) -> sarif::ReportingDescriptor {
    sarif::ReportingDescriptor::builder()
        .id(c.code.as_str())
        .name(pascal(c.name))
        .short_description(text(c.name))
        .full_description(text(c.explanation))
        .help(text(&format!(
            "{}: {}. On a GPU: {}. What to do: {}. (`warpwise explain {}`)",
            c.name, c.explanation, c.gpu, c.fix, c.code
        )))
        .build()
}

/// SARIF rule names are identifiers: "loop-carried dependence" is `LoopCarriedDependence`.
fn pascal(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A file path as a URI under `%SRCROOT%` (the working directory) when it is below it,
/// else as an absolute `file://` URI.
pub fn artifact(file: &str) -> sarif::ArtifactLocation {
    let path = Path::new(file);
    let cwd = std::env::current_dir().ok();
    let relative = if path.is_absolute() {
        cwd.as_deref()
            .and_then(|c| path.strip_prefix(c).ok())
            .map(|p| p.to_path_buf())
    } else {
        Some(path.strip_prefix("./").unwrap_or(path).to_path_buf())
    };
    match relative {
        Some(r) => sarif::ArtifactLocation::builder()
            .uri(uri_escape(&r.display().to_string()))
            .uri_base_id(SRCROOT)
            .build(),
        None => sarif::ArtifactLocation::builder()
            .uri(format!(
                "file://{}",
                uri_escape(&path.display().to_string())
            ))
            .build(),
    }
}

/// Percent-encodes what a URI path cannot hold (spaces, `%`, `#`, `?`, non-ASCII).
fn uri_escape(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~+,;=@:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn location(file: &str, line: i64, col: Option<i64>, what: Option<String>) -> sarif::Location {
    let region = match col {
        Some(c) => sarif::Region::builder()
            .start_line(line)
            .start_column(c)
            .build(),
        None => sarif::Region::builder().start_line(line).build(),
    };
    let physical = sarif::PhysicalLocation::builder()
        .artifact_location(artifact(file))
        .region(region)
        .build();
    match what {
        Some(m) => sarif::Location::builder()
            .physical_location(physical)
            .message(message(m))
            .build(),
        None => sarif::Location::builder()
            .physical_location(physical)
            .build(),
    }
}

/// `partialFingerprints` of a finding from what identifies it without its lines (callers
/// leave line numbers and columns out, and pass messages through [`without_digits`]), so
/// that an edit above it does not make a re-run report it as new. FNV-1a of the parts
/// joined by NULs, written out so that it never changes with the standard library's hasher.
pub fn fingerprint(parts: &[&str]) -> BTreeMap<String, String> {
    let key = parts.join("\u{0}");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    BTreeMap::from([("warpwise/v1".to_string(), format!("{hash:016x}"))])
}

/// A message without its digits, which name lines and so move with edits.
pub fn without_digits(message: &str) -> String {
    message.chars().filter(|c| !c.is_ascii_digit()).collect()
}
