//! `analyze --work-budget N`: a function that spends its budget of dependence pair
//! tests still gets a report for every loop; the untested pairs are undecided, so a loop
//! that would be friendly is `needs-profile` with the caveat, never friendly on an untested
//! pair; the same input and budget give the same report, byte for byte.

use std::path::Path;
use std::process::{Command, Output};

fn analyze(extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["analyze", "samples/matmul.c", "--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

fn loops(out: &Output) -> Vec<serde_json::Value> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["loops"].as_array().unwrap().clone()
}

fn caveat(l: &serde_json::Value) -> bool {
    l["assumptions"].as_array().is_some_and(|a| {
        a.iter().any(|x| {
            x.as_str()
                .unwrap_or("")
                .contains("analysis budget exceeded")
        })
    })
}

#[test]
fn a_spent_budget_leaves_loops_undecided_and_says_so() {
    let full = loops(&analyze(&[]));
    assert!(full.iter().any(|l| l["verdict"] == "friendly"));
    assert!(
        !full.iter().any(caveat),
        "the default budget is not reached"
    );

    let starved = loops(&analyze(&["--work-budget", "0"]));
    // Every loop is still reported.
    assert_eq!(starved.len(), full.len());
    for (before, after) in full.iter().zip(&starved) {
        assert_eq!(before["id"], after["id"]);
        // No loop is friendly on a pair it did not test; what was not friendly stays so
        // unless its only claim came from an untested pair.
        if after["verdict"] == "friendly" {
            assert_eq!(before["verdict"], "friendly");
        }
    }
    let friendly_before: Vec<&serde_json::Value> =
        full.iter().filter(|l| l["verdict"] == "friendly").collect();
    for l in friendly_before {
        let after = starved.iter().find(|a| a["id"] == l["id"]).unwrap();
        if after["verdict"] != "friendly" {
            assert_eq!(after["verdict"], "needs-profile", "{after:#}");
            assert!(caveat(after), "{after:#}");
        }
    }
    assert!(
        starved
            .iter()
            .any(|l| l["verdict"] == "needs-profile" && caveat(l)),
        "a budget of 0 leaves some pair untested"
    );
}

#[test]
fn the_same_budget_gives_the_same_report() {
    let one = analyze(&["--work-budget", "3"]);
    let two = analyze(&["--work-budget", "3"]);
    assert_eq!(one.status.code(), Some(0));
    assert_eq!(one.stdout, two.stdout);
}
