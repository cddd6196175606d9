//! The legend of a written report: a value the report tells apart from others of its
//! variable is written as a C identifier that the loop's `names` defines, in every format;
//! `--set` takes it, and `instantiate` reads a report file with it back to the same numbers
//! as the analysis in one run.

use crate::common::{scratch, text, warpwise, yaml_documents};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/names/entry_value.c";

/// `warpwise ARGS...`, which must succeed; its stdout.
fn run(args: &[&str]) -> String {
    let out = warpwise(args);
    assert!(out.status.success(), "warpwise {args:?}: {}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// Every string of `v` (object keys too: a witness maps names to values).
fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => {
            for (k, x) in o {
                out.push(k);
                strings(x, out);
            }
        }
        _ => {}
    }
}

/// Whether `text` holds `word` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// The loop's report names no value by an `@` form, and each of its legend's names is
/// used and defined once; the legend's names, in order.
fn check(report: &Value, expected: &[(&str, &str, u64)]) {
    let l = &report["loops"][0];
    let mut all = Vec::new();
    strings(l, &mut all);
    let qualified: Vec<&&str> = all.iter().filter(|s| s.contains('@')).collect();
    assert!(qualified.is_empty(), "{qualified:?}");
    let names = l["names"].as_array().expect("a legend");
    let got: Vec<(&str, &str, u64)> = names
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap(),
                v["variable"].as_str().unwrap(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let mut outside = Vec::new();
    for (k, v) in l.as_object().unwrap() {
        if k != "names" {
            strings(v, &mut outside);
        }
    }
    for (name, _, _) in expected {
        assert!(outside.iter().any(|s| has_word(s, name)), "`{name}` unused");
    }
}

#[test]
fn written_reports_name_values_by_their_legend() {
    let expected = [("n_11", "n", 11), ("n_6", "n", 6)];
    let json: Value =
        serde_json::from_str(&run(&["analyze", FIXTURE, "--format", "json", "-q"])).unwrap();
    check(&json, &expected);
    let yaml = yaml_documents(&run(&["analyze", FIXTURE, "--format", "yaml", "-q"]));
    check(&yaml[0], &expected);
    assert_eq!(json["loops"][0]["induction"]["trip_count"], "n_11");
    // The recipe says what the names it shows are.
    let recipe = run(&["analyze", FIXTURE, "--format", "text", "-q"]);
    assert!(!recipe.contains('@'), "{recipe}");
    assert!(
        recipe.contains("names: `n_11` is the value of `n` from line 11"),
        "{recipe}"
    );
}

#[test]
fn instantiate_reads_the_legend_back_to_the_same_numbers() {
    let dir = scratch("legend", "instantiate");
    let report = dir.join("report.yaml");
    run(&[
        "analyze",
        FIXTURE,
        "--format",
        "yaml",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    let from_file = |set: &str| -> Value {
        let out = run(&[
            "instantiate",
            report.to_str().unwrap(),
            "--set",
            set,
            "--format",
            "json",
        ]);
        serde_json::from_str(&out).unwrap()
    };
    let by_legend = from_file("n_11=100");
    let l = &by_legend["loops"][0];
    assert_eq!(l["trip_count"]["expr"], "n_11");
    assert_eq!(l["trip_count"]["value"], 100);
    let num = l["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "num")
        .unwrap();
    assert_eq!(num["size"]["value"], 400);
    assert_eq!(l["names"][0]["name"], "n_11");
    // The qualified form names the same value.
    let by_place = from_file("n@11=100");
    assert_eq!(by_place["loops"], by_legend["loops"]);
    // A JSON report is read a loop at a time, its loop heads apart: the same numbers.
    let json = dir.join("report.json");
    run(&[
        "analyze",
        FIXTURE,
        "--format",
        "json",
        "-q",
        "-o",
        json.to_str().unwrap(),
    ]);
    let out = run(&[
        "instantiate",
        json.to_str().unwrap(),
        "--set",
        "n_11=100",
        "--format",
        "json",
    ]);
    let from_json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(from_json["loops"], by_legend["loops"]);
    // The analysis and the instantiation in one run agree with the file's.
    let one_run: Value = serde_json::from_str(&run(&[
        "analyze",
        FIXTURE,
        "--instantiate",
        "--set",
        "n_11=100",
        "--format",
        "json",
        "-q",
    ]))
    .unwrap();
    assert_eq!(one_run["loops"], by_legend["loops"]);
    // A name no loop uses is refused, with the legend's names as the nearest.
    let out = warpwise(&["instantiate", report.to_str().unwrap(), "--set", "n_12=1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("nearest: `n_11`"), "{}", text(&out));
}

/// A SARIF reader sees a result's message alone, a terminal a finding: each says what the
/// legend names it uses are.
#[test]
fn sarif_messages_and_findings_say_what_their_names_are() {
    let sweeps = "tests/fixtures/names/two_sweeps.c";
    let log: Value =
        serde_json::from_str(&run(&["analyze", sweeps, "--format", "sarif", "-q"])).unwrap();
    let mut all = Vec::new();
    strings(&log, &mut all);
    let qualified: Vec<&&str> = all.iter().filter(|s| s.contains("i@")).collect();
    assert!(qualified.is_empty(), "{qualified:?}");
    let messages: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["message"]["text"].as_str())
        .filter(|m| has_word(m, "i_8"))
        .collect();
    assert!(!messages.is_empty(), "{log:#}");
    for m in messages {
        assert!(
            m.contains("(where `i_8` is the value of `i` from line 8)"),
            "{m}"
        );
    }
    // So does the text form's finding.
    let text = run(&["analyze", sweeps, "--format", "text", "-q"]);
    assert!(
        text.contains("  names: `i_8` is the value of `i` from line 8\n"),
        "{text}"
    );
}
