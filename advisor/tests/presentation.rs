//! Report text as users read it (issue 17): names the source writes, qualified by line where
//! a loop's report shows two values of one variable, and expressions free of the analyses'
//! own variables (thread indices, version numbers). Every report here also passes
//! `model::verify`.

mod common;

use advisor::model::{LoopReport, Report, SCHEMA};
use common::marked_report;

/// The marked loop's report, checked by the verifier.
fn verified(source: &str) -> LoopReport {
    let report = marked_report(source);
    let problems = advisor::model::verify(&Report {
        schema: SCHEMA.into(),
        loops: vec![report.clone()],
        skipped: Vec::new(),
    });
    assert!(problems.is_empty(), "{problems:#?}");
    report
}

/// Every text of `report` (as YAML) contains each of `expected` and none of `absent`.
fn check(source: &str, expected: &[&str], absent: &[&str]) {
    let report = verified(source);
    let yaml = serde_yaml::to_string(&report).expect("serializable");
    for e in expected {
        assert!(yaml.contains(e), "`{e}` missing from:\n{yaml}");
    }
    for a in absent {
        assert!(!yaml.contains(a), "`{a}` present in:\n{yaml}");
    }
}

#[test]
fn a_variable_with_one_value_in_the_loop_reads_as_the_source_names_it() {
    // The second loop over `i` is `i#2` to the analyses; its section names the row `i`.
    check(
        r#"
void rows(int n, double (*a)[64], double *s) {
  for (int i = 0; i < n; i++)
    s[i] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 64; j++) /* LOOP */
      a[i][j] = s[i] + j;
}
"#,
        &["lo: 512*i", "var: j"],
        &["#", "i_2", "i@"],
    );
}

#[test]
fn two_values_of_one_variable_are_told_apart_by_line() {
    // `m` on entry and `m` after the branch (a merge of two values): the section uses both.
    check(
        r#"
void shifted(int m, int flag, double *a, const double *b) {
  int k = m;
  if (flag)
    m = 3;
  for (int i = 0; i < 8; i++) /* LOOP */
    a[i * k + m] = b[i];
}
"#,
        &["8*m@6"],
        &["#2", "m_2"],
    );
}

#[test]
fn overlaps_that_grow_with_the_thread_are_the_most_in_the_block() {
    // Thread i reads a[0..i]: it shares 8*i + 8 bytes with thread i + 1, which the report
    // states for the block's last thread, not in terms of the thread index.
    let report = verified(
        r#"
void prefix(int n, const double *a, double *out) {
  for (int i = 0; i < n; i++) { /* LOOP */
    double s = 0;
    for (int j = 0; j <= i; j++)
      s += a[j];
    out[i] = s;
  }
}
"#,
    );
    let area = report
        .shared_memory
        .iter()
        .find(|s| s.array == "a")
        .expect("a is shared");
    assert_eq!(
        area.overlap_x_bytes.as_deref(),
        Some("8*block.x + 8*blockDim.x")
    );
}
