//! `warpwise check --format sarif`: a kernel file with an uncoalesced access, a divergent
//! branch, a bank conflict and a C++ declaration gives a log that passes the SARIF
//! validator (`crate::sarif_cli::validate`, skipped with its reason where absent) and holds
//! exactly the findings of the JSON report of the same file (accesses' and branches'), code
//! for code and place for place; the refused declaration is a notification of the run, not
//! a result.

use crate::sarif_cli::validate;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Two kernels and a template: `p[i].x` is loaded and stored 12 bytes apart (WW201 twice),
/// `threadIdx.x % 2` splits every warp (WW203), `tile[tx][k]` conflicts 32 ways (WW202), and
/// `scale` is C++ the frontend refuses.
pub(crate) const MIXED: &str = r#"struct Particle { float x, y, z; };

__global__ void shift(struct Particle *p, float *flag, float dx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i].x += dx;
    if (threadIdx.x % 2 == 0)
        flag[i] = 1;
}

__global__ void row_sums(const float *in, float *out)
{
    __shared__ float tile[32][32];
    int tx = threadIdx.x;
    for (int k = 0; k < 32; k++)
        tile[k][tx] = in[k * 32 + tx];
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < 32; k++)
        sum += tile[tx][k];
    out[tx] = sum;
}

template <typename T>
__global__ void scale(T *a, T s)
{
    a[threadIdx.x] *= s;
}
"#;

/// `warpwise check FILE --format FORMAT` run in `dir` (so that the log's paths are
/// relative to it), parsed as JSON.
pub(crate) fn check_in(dir: &Path, file: &str, format: &str) -> Value {
    let out = Command::new(crate::common::bin())
        .current_dir(dir)
        .args(["check", file, "--format", format])
        .output()
        .expect("warpwise runs");
    assert!(out.status.success(), "{}", crate::common::text(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Every finding of a JSON check report: (code, `file:line:col` of its access or branch).
pub(crate) fn report_findings(report: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for k in report["kernels"].as_array().expect("kernels") {
        for list in ["accesses", "shared_accesses", "branches"] {
            for a in k[list].as_array().into_iter().flatten() {
                if let Some(code) = a["finding"]["code"].as_str() {
                    out.push((code.to_string(), a["at"].as_str().unwrap().to_string()));
                }
            }
        }
    }
    out.sort();
    out
}

/// Every result of a SARIF log: (ruleId, `uri:line:col` of its location).
fn sarif_findings(log: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = crate::sarif_cli::results(log)
        .iter()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}:{}",
                    at["artifactLocation"]["uri"].as_str().unwrap(),
                    at["region"]["startLine"],
                    at["region"]["startColumn"]
                ),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_sarif_of_check_is_valid_and_holds_exactly_the_reports_findings() {
    let dir = crate::common::scratch("check-sarif", "mixed");
    std::fs::write(dir.join("mixed.cu"), MIXED).unwrap();
    let report = check_in(&dir, "mixed.cu", "json");
    let log = check_in(&dir, "mixed.cu", "sarif");
    validate(&log);
    assert_eq!(log["version"], "2.1.0");

    // The fixture holds what it says, so that the comparison below covers each kind.
    let expected = report_findings(&report);
    let codes: Vec<&str> = expected.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["WW201", "WW201", "WW202", "WW203"], "{report:#}");
    let splits = report["kernels"][0]["branches"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["divergence"] == "every-warp" && b["finding"]["code"] == "WW203");
    assert!(splits, "a branch that splits every warp: {report:#}");

    // Result for finding, none dropped and none added: a missing result fails here.
    assert_eq!(sarif_findings(&log), expected, "{log:#}");

    let driver = &log["runs"][0]["tool"]["driver"];
    for r in crate::sarif_cli::results(&log) {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(driver["rules"][index]["id"], r["ruleId"], "{r:#}");
        assert_eq!(r["level"], "warning", "{r:#}");
        let uri = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(uri["uriBaseId"], "%SRCROOT%");
        let kernel = r["relatedLocations"][0]["message"]["text"]
            .as_str()
            .unwrap();
        let line = r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"].clone();
        match r["ruleId"].as_str().unwrap() {
            "WW201" | "WW203" => assert_eq!((kernel, line), ("the kernel `shift`", 3.into())),
            _ => assert_eq!((kernel, line), ("the kernel `row_sums`", 11.into())),
        }
        assert!(
            r["message"]["text"].as_str().unwrap().contains("Help: "),
            "{r:#}"
        );
    }
    // The load and the store of `p[i].x` stay two findings for code scanning.
    let prints: std::collections::BTreeSet<&str> = crate::sarif_cli::results(&log)
        .iter()
        .filter_map(|r| r["partialFingerprints"]["warpwise/v1"].as_str())
        .collect();
    assert_eq!(prints.len(), expected.len());

    // The template is no result but a warning of the run, at its line.
    let notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications");
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!(notes[0]["level"], "warning");
    assert!(notes[0]["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("`scale` not analysed: it uses C++"));
    assert_eq!(
        notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        24
    );
}

#[test]
fn check_fingerprints_survive_lines_added_above() {
    let dir = crate::common::scratch("check-sarif", "moved");
    std::fs::write(dir.join("mixed.cu"), MIXED).unwrap();
    let before = check_in(&dir, "mixed.cu", "sarif");
    std::fs::write(dir.join("mixed.cu"), format!("\n\n/* moved */\n{MIXED}")).unwrap();
    let after = check_in(&dir, "mixed.cu", "sarif");
    let prints = |log: &Value| -> Vec<Value> {
        crate::sarif_cli::results(log)
            .iter()
            .map(|r| r["partialFingerprints"].clone())
            .collect()
    };
    assert_eq!(prints(&before), prints(&after));
    let line = |log: &Value| {
        crate::sarif_cli::results(log)[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_i64()
    };
    assert_eq!(line(&after), line(&before).map(|l| l + 3));
}

/// A bounds guard splits at most one warp per row of threads, usually nothing to fix: its
/// WW203 is a note, not a warning, so code scanning does not warn on every guarded kernel.
#[test]
fn a_bounds_guard_is_a_note() {
    let dir = crate::common::scratch("check-sarif", "guard");
    std::fs::write(
        dir.join("guard.cu"),
        "__global__ void zero(float *a, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n)\n        a[i] = 0;\n}\n",
    )
    .unwrap();
    let report = check_in(&dir, "guard.cu", "json");
    assert_eq!(
        report["kernels"][0]["branches"][0]["divergence"], "some-warps",
        "{report:#}"
    );
    let log = check_in(&dir, "guard.cu", "sarif");
    validate(&log);
    let results = crate::sarif_cli::results(&log);
    assert_eq!(results.len(), 1, "{log:#}");
    assert_eq!(results[0]["ruleId"], "WW203");
    assert_eq!(results[0]["level"], "note", "{log:#}");
}

/// A finding inside a device function called twice is two results, one per call, each with
/// the call that reaches it among its related locations (after the kernel).
#[test]
fn a_device_functions_finding_names_the_call_that_reaches_it() {
    let dir = crate::common::scratch("check-sarif", "via");
    std::fs::write(
        dir.join("via.cu"),
        "__device__ float at(const float *a, int i) { return a[i]; }\n\
         __global__ void pairs(const float *a, float *out)\n\
         {\n\
             int t = blockIdx.x * blockDim.x + threadIdx.x;\n\
             out[t] = at(a, 2 * t) + at(a, 2 * t + 1);\n\
         }\n",
    )
    .unwrap();
    let log = check_in(&dir, "via.cu", "sarif");
    validate(&log);
    let results = crate::sarif_cli::results(&log);
    let inside: Vec<&Value> = results
        .iter()
        .filter(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == 1)
        .collect();
    assert_eq!(inside.len(), 2, "{log:#}");
    let calls: Vec<(i64, i64)> = inside
        .iter()
        .map(|r| {
            let related = r["relatedLocations"].as_array().unwrap();
            assert_eq!(related.len(), 2, "{r:#}");
            assert!(
                related[1]["message"]["text"]
                    .as_str()
                    .unwrap()
                    .contains("the call of `at`"),
                "{r:#}"
            );
            let region = &related[1]["physicalLocation"]["region"];
            (
                region["startLine"].as_i64().unwrap(),
                region["startColumn"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(calls, [(5, 10), (5, 25)], "{log:#}");
    // Two results, two fingerprints.
    assert_ne!(
        inside[0]["partialFingerprints"],
        inside[1]["partialFingerprints"]
    );
    // The HTML page says it too.
    let html = Command::new(crate::common::bin())
        .current_dir(&dir)
        .args(["check", "via.cu", "--format", "html"])
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&html.stdout);
    assert!(
        page.contains("in <code>at</code> called at <code>via.cu:5:10</code>"),
        "{page}"
    );
}
