//! The fixture test every rule runs on its own example: the loop marked `/* LOOP */` gets
//! the example's verdict and carries the rule's code, and its report passes the verifier.

use super::{Code, Rule, Subject};
use crate::analyze::{analyze_unit, Filter};
use crate::model::{LoopReport, Verdict};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

/// Analyses `rule`'s example and checks what it must show.
pub fn shows(rule: &Rule) {
    if rule.example.subject == Subject::Kernel {
        return kernel_shows(rule);
    }
    let report = marked_loop(rule);
    let problems = crate::verify::verify_loop(&report);
    assert!(problems.is_empty(), "{}: {problems:?}", rule.code);
    let codes: Vec<Code> = report.reasons.iter().map(|r| r.code).collect();
    match rule.code {
        Code::WW001 => {
            assert!(
                codes.is_empty(),
                "a friendly example with findings: {codes:?}"
            );
        }
        // A dependence only a run shows: statically the loop is the question a profile
        // answers (WW111); `profile/tests` profiles the example and checks WW130.
        Code::WW130 => {
            assert_eq!(report.verdict, Verdict::NeedsProfile, "{report:#?}");
            assert_eq!(codes, [Code::WW111], "{report:#?}");
            return;
        }
        code => assert!(
            codes.contains(&code),
            "{code}'s example does not show it: {report:#?}"
        ),
    }
    assert_eq!(report.verdict, rule.example.verdict, "{report:#?}");
    // The example is about its rule: other findings would muddle the explanation.
    assert!(
        codes.iter().all(|c| *c == rule.code),
        "{}'s example also carries {codes:?}",
        rule.code
    );
}

/// The report of the example's loop marked `/* LOOP */`.
fn marked_loop(rule: &Rule) -> LoopReport {
    let source = rule.example.source;
    let line = source
        .lines()
        .position(|l| l.contains("/* LOOP */"))
        .unwrap_or_else(|| panic!("{}'s example marks no loop", rule.code)) as u32
        + 1;
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir
        .path()
        .join(format!("{}.c", rule.code.as_str().to_ascii_lowercase()));
    std::fs::write(&file, source).expect("the example is written");
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("the example loads");
    analyze_unit(&unit, &Filter::default())
        .into_iter()
        .find(|r| r.line == line)
        .unwrap_or_else(|| panic!("{}: no loop at line {line}", rule.code))
}

/// A kernel rule's example: `warpwise check` gives the access marked `/* ACCESS */` (the
/// branch marked `/* BRANCH */`) the rule's finding, and nothing else in the example a
/// finding.
fn kernel_shows(rule: &Rule) {
    let source = rule.example.source;
    let line = source
        .lines()
        .position(|l| l.contains("/* ACCESS */") || l.contains("/* BRANCH */"))
        .unwrap_or_else(|| panic!("{}'s example marks no access or branch", rule.code))
        as u32
        + 1;
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir
        .path()
        .join(format!("{}.cu", rule.code.as_str().to_ascii_lowercase()));
    std::fs::write(&file, source).expect("the example is written");
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("the example loads");
    let report = crate::check::check_units(&[unit], &Default::default());
    let findings: Vec<(u32, Code)> = report
        .kernels
        .iter()
        .flat_map(|k| {
            k.accesses
                .iter()
                .filter_map(|a| a.finding.as_ref())
                .chain(k.shared_accesses.iter().filter_map(|a| a.finding.as_ref()))
                .chain(k.branches.iter().filter_map(|b| b.finding.as_ref()))
        })
        .flat_map(|f| f.lines.iter().map(move |l| (*l, f.code)))
        .collect();
    assert!(
        findings.contains(&(line, rule.code)),
        "{}'s example does not show it at line {line}: {report:#?}",
        rule.code
    );
    assert!(
        findings.iter().all(|(l, c)| *l == line && *c == rule.code),
        "{}'s example has other findings: {findings:?}",
        rule.code
    );
}
