//! `warpwise analyze --format sarif`: the samples' SARIF passes Microsoft's SARIF
//! validator (`WARPWISE_SARIF_VALIDATOR`, installed by `.ci/run`; skipped with a reason when
//! absent unless `WARPWISE_REQUIRE_SARIF` is set), every result names a rule of the driver
//! and a file that exists, fingerprints are stable when lines move, and a friendly loop's
//! fix inserts the very pragma `emit --target openmp` writes.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `warpwise analyze ARGS --format sarif` in `dir` and parses the log.
fn sarif_of(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(dir)
        .arg("analyze")
        .args(args)
        .args(["--format", "sarif", "--quiet"])
        .output()
        .expect("warpwise runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("SARIF is JSON")
}

pub(crate) fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

/// The validator's path, or why the check is skipped.
pub(crate) fn validator() -> Option<String> {
    let found = std::env::var("WARPWISE_SARIF_VALIDATOR")
        .ok()
        .filter(|p| Path::new(p).exists());
    if found.is_none() {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_SARIF").is_none(),
            "WARPWISE_REQUIRE_SARIF is set but WARPWISE_SARIF_VALIDATOR names no sarif-multitool"
        );
        eprintln!(
            "skipped: no SARIF validator (npm install @microsoft/sarif-multitool, then set WARPWISE_SARIF_VALIDATOR to node_modules/.bin/sarif-multitool)"
        );
    }
    found
}

/// Validates `log` with the SARIF multitool: no error (warnings are allowed).
pub(crate) fn validate(log: &Value) {
    let Some(tool) = validator() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("log.sarif");
    std::fs::write(&file, serde_json::to_string_pretty(log).unwrap()).expect("write");
    let out = Command::new(&tool)
        .arg("validate")
        .arg(&file)
        .output()
        .expect("the validator runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "validator failed: {text}");
    assert!(
        !text.contains(": error "),
        "the SARIF validator reports errors:\n{text}"
    );
}

#[test]
fn the_samples_sarif_is_valid_and_every_result_names_a_rule_and_a_file() {
    let log = sarif_of(&root(), &["samples/"]);
    validate(&log);
    assert_eq!(log["version"], "2.1.0");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "warpwise");
    let rules: Vec<&str> = driver["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("rule id"))
        .collect();
    for code in ["WW001", "WW101", "WW102", "WW110", "WW111", "WW112"] {
        assert!(rules.contains(&code), "no rule {code}");
    }
    let results = results(&log);
    assert!(results.iter().any(|r| r["ruleId"] == "WW101"));
    assert!(results.iter().any(|r| r["ruleId"] == "WW001"));
    for r in results {
        let id = r["ruleId"].as_str().expect("ruleId");
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index], id);
        let location = &r["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        let uri = location["artifactLocation"]["uri"].as_str().expect("uri");
        assert!(root().join(uri).exists(), "{uri} does not exist");
        assert!(location["region"]["startLine"].as_u64().unwrap_or(0) >= 1);
        assert!(r["partialFingerprints"]["warpwise/v1"].is_string());
    }
    // A dependence names the loop as a related location.
    let dependence = results
        .iter()
        .find(|r| r["ruleId"] == "WW101")
        .expect("a WW101");
    assert!(dependence["relatedLocations"][0]["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("the loop"));
}

#[test]
fn a_real_multi_file_project_is_valid_sarif() {
    // Two files, a call from one into the other, a reduction and an aliasing question.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("kernels.c"),
        "void axpy(double *y, const double *x, double a, int n)\n{\n    for (int i = 0; i < n; i++)\n        y[i] += a * x[i];\n}\n\ndouble dot(const double *x, const double *y, int n)\n{\n    double s = 0;\n    for (int i = 0; i < n; i++)\n        s += x[i] * y[i];\n    return s;\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("main.c"),
        "void axpy(double *y, const double *x, double a, int n);\n\nvoid sweep(double *u, double *v, int m, int n)\n{\n    for (int k = 0; k < m; k++)\n        axpy(u + k * n, v + k * n, 0.5, n);\n    for (int i = 1; i < n; i++)\n        u[i] = u[i - 1] + v[i];\n}\n",
    )
    .expect("write");
    let log = sarif_of(dir.path(), &["kernels.c", "main.c"]);
    validate(&log);
    let results = results(&log);
    let uris: Vec<&str> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        uris.contains(&"main.c") && uris.contains(&"kernels.c"),
        "{uris:?}"
    );
    assert!(results.iter().any(|r| r["ruleId"] == "WW101"));
    // Results are not repeated: one fingerprint each.
    let mut prints: Vec<&str> = results
        .iter()
        .map(|r| r["partialFingerprints"]["warpwise/v1"].as_str().unwrap())
        .collect();
    let n = prints.len();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), n, "two results share a fingerprint");
}

#[test]
fn fingerprints_survive_lines_added_above() {
    let dir = tempfile::tempdir().expect("temp dir");
    let body = "void prefix(double *a, int n)\n{\n    for (int i = 1; i < n; i++)\n        a[i] += a[i - 1];\n}\n";
    std::fs::write(dir.path().join("p.c"), body).expect("write");
    let before = sarif_of(dir.path(), &["p.c"]);
    std::fs::write(
        dir.path().join("p.c"),
        format!("/* a comment\n   of three lines\n */\n{body}"),
    )
    .expect("write");
    let after = sarif_of(dir.path(), &["p.c"]);
    let print = |log: &Value| {
        results(log)
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["warpwise/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (b, a) = (print(&before), print(&after));
    assert!(!b.is_empty());
    assert_eq!(b.len(), a.len());
    for (x, y) in b.iter().zip(&a) {
        assert_eq!(
            (&x.0, &x.1),
            (&y.0, &y.1),
            "the fingerprint moved with the line"
        );
        assert_eq!(x.2 + 3, y.2);
    }
}

#[test]
fn a_friendly_loops_fix_inserts_the_openmp_pragma_emit_writes() {
    let log = sarif_of(&root(), &["samples/vector_add.c"]);
    let fixed = results(&log)
        .iter()
        .find(|r| r["ruleId"] == "WW001" && r["fixes"].is_array())
        .expect("a friendly loop with a fix");
    let replacement = &fixed["fixes"][0]["artifactChanges"][0]["replacements"][0];
    let line = replacement["deletedRegion"]["startLine"].as_u64().unwrap() as usize;
    let inserted = replacement["insertedContent"]["text"].as_str().unwrap();
    // Apply it, and compare with the port `emit --target openmp` writes.
    let source = std::fs::read_to_string(root().join("samples/vector_add.c")).unwrap();
    let mut lines: Vec<String> = source.lines().map(String::from).collect();
    lines.insert(line - 1, inserted.trim_end_matches('\n').to_string());
    let dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(root())
        .args(["emit", "samples/vector_add.c", "--target", "openmp", "-o"])
        .arg(dir.path())
        .output()
        .expect("warpwise runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ported = std::fs::read_to_string(dir.path().join("vector_add.c")).expect("the port");
    let pragma = inserted.trim();
    assert!(
        ported.contains(pragma),
        "the fix's pragma is not the port's:\n{pragma}\n---\n{ported}"
    );
    assert_eq!(lines[line - 1].trim(), pragma);
}

#[test]
fn one_samples_sarif_snapshot() {
    let mut log = sarif_of(&root(), &["samples/aliasing.c"]);
    // The working directory differs between machines.
    log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] = Value::from("file:///ROOT/");
    log["runs"][0]["tool"]["driver"]["version"] = Value::from("VERSION");
    log["runs"][0]["tool"]["driver"]["semanticVersion"] = Value::from("VERSION");
    insta::assert_json_snapshot!("aliasing_sarif", log);
}

#[test]
fn a_may_alias_findings_fix_declares_the_pointer_restrict_and_settles_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = std::fs::read_to_string(root().join("samples/aliasing.c")).expect("sample");
    std::fs::write(dir.path().join("aliasing.c"), &source).expect("copy");
    let log = sarif_of(dir.path(), &["aliasing.c"]);
    let finding = results(&log)
        .iter()
        .find(|r| r["ruleId"] == "WW110")
        .expect("the may-alias finding");
    let replacement = &finding["fixes"][0]["artifactChanges"][0]["replacements"][0];
    let line = replacement["deletedRegion"]["startLine"].as_u64().unwrap() as usize;
    let col = replacement["deletedRegion"]["startColumn"]
        .as_u64()
        .unwrap() as usize;
    let inserted = replacement["insertedContent"]["text"].as_str().unwrap();
    assert_eq!(inserted, "restrict ");
    // Apply it (columns count characters from 1; the sample's header line is ASCII).
    let mut lines: Vec<String> = source.lines().map(String::from).collect();
    lines[line - 1].insert_str(col - 1, inserted);
    assert!(
        lines[line - 1].contains("float *restrict dst"),
        "{}",
        lines[line - 1]
    );
    std::fs::write(dir.path().join("aliasing.c"), lines.join("\n") + "\n").expect("fixed");
    let after = sarif_of(dir.path(), &["aliasing.c"]);
    assert!(
        !results(&after).iter().any(|r| r["ruleId"] == "WW110"),
        "the fix did not settle the finding"
    );
}
