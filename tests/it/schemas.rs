//! The JSON Schemas of docs/schemas/ against the documents warpwise writes: kernel reports
//! of every sample and fixture directory (JSON, and YAML read as JSON), profiles (merged,
//! and the runtime's raw documents), reports with observed runs, instance reports; and
//! the schemas themselves: described, closed, rejecting a broken report.

use crate::common::{
    assert_all_valid, assert_valid, bin, root, schema_errors, scratch, text, warpwise,
    yaml_documents, SchemaKind,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `warpwise ARGS...` run in `dir`, which must succeed; its stdout.
fn run_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "warpwise {args:?}: {}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// The one document of a YAML text, as JSON.
fn yaml(text: &str) -> Value {
    let mut documents = yaml_documents(text);
    assert_eq!(documents.len(), 1, "one YAML document:\n{text}");
    documents.pop().unwrap()
}

fn loops(report: &Value) -> &Vec<Value> {
    report["loops"].as_array().expect("loops")
}

fn schema(kind: SchemaKind) -> Value {
    json(&std::fs::read_to_string(kind.path()).unwrap())
}

#[test]
fn kernel_reports_of_every_sample_and_fixture_match_their_schema() {
    let mut samples: Vec<_> = std::fs::read_dir(root().join("samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    samples.sort();
    assert!(samples.len() >= 20, "{samples:?}");
    let mut reports = Vec::new();
    for sample in &samples {
        let out = warpwise(&["analyze", sample.to_str().unwrap(), "--format", "json"]);
        assert!(out.status.success(), "{}: {}", sample.display(), text(&out));
        let name = sample.file_name().unwrap().to_string_lossy().into_owned();
        reports.push((name, json(&String::from_utf8(out.stdout).unwrap())));
    }
    // Whole directories as one program each (the samples' YAML read back as JSON): the
    // fixtures of the port tests hold the shapes the samples lack (counters, privates,
    // globals, calls, arg-min reductions).
    for (dir, format) in [
        ("samples", "yaml"),
        ("tests/fixtures/openmp", "json"),
        ("tests/fixtures/cuda", "json"),
        ("tests/fixtures/names", "yaml"),
        ("advisor/src/rules/examples", "json"),
    ] {
        let out = warpwise(&["analyze", dir, "--format", format, "-q"]);
        assert!(out.status.success(), "{dir}: {}", text(&out));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let report = if format == "yaml" {
            yaml(&stdout)
        } else {
            json(&stdout)
        };
        reports.push((format!("{dir} ({format})"), report));
    }
    for (name, report) in &reports {
        assert_eq!(report["schema"], advisor::model::SCHEMA, "{name}");
    }
    let all: usize = reports.iter().map(|(_, r)| loops(r).len()).sum();
    assert!(all > 300, "only {all} loops");
    let named: Vec<(&str, &Value)> = reports.iter().map(|(n, r)| (n.as_str(), r)).collect();
    assert_all_valid(SchemaKind::KernelReport, &named);
}

/// Two samples profiled into one file (one with dependence tracking, so the profile holds
/// observed dependences, reductions and classes), the raw documents the runtime appends,
/// and what is computed from the profile: reports with observed runs and instance reports,
/// through `instantiate` and `analyze --instantiate`, as JSON and as YAML.
#[test]
fn profiles_and_the_reports_made_from_them_match_their_schemas() {
    let dir = scratch("schemas", "profile");
    let samples = root().join("samples");
    let sample = |name: &str| samples.join(name).to_str().unwrap().to_string();
    let (every_fourth, dot, aliasing) = (
        sample("every_fourth_add.c"),
        sample("dot_product.c"),
        sample("aliasing.c"),
    );
    let profile = |args: &[&str]| {
        let mut all = vec!["profile", "-o", "p.yaml"];
        all.extend_from_slice(args);
        run_in(&dir, &all);
    };
    profile(&[every_fourth.as_str(), "--loops", "none", "--", "200"]);
    profile(&[dot.as_str(), "--loops", "all", "--full-tracking"]);
    // `shift` called with overlapping arrays: a needs-profile loop the run settles.
    profile(&[aliasing.as_str(), "--", "overlap"]);
    let merged = yaml(&std::fs::read_to_string(dir.join("p.yaml")).unwrap());
    assert_eq!(merged["schema"], profile::model::PROFILE_SCHEMA);
    assert_eq!(merged["runs"], 3);
    let profiled = merged["loops"].as_object().unwrap();
    let has = |key: &str| profiled.values().any(|l| l.get(key).is_some());
    assert!(
        has("dependences") && has("reductions") && has("inbounds"),
        "{merged:#}"
    );
    let fixture = yaml(
        &std::fs::read_to_string(root().join("tests/fixtures/every_fourth_add.profile.yaml"))
            .unwrap(),
    );

    // Raw documents: two runs of a program built with `warpwise cc`, tracked in full.
    run_in(&dir, &["cc", dot.as_str(), "-o", "dot"]);
    for _ in 0..2 {
        let status = Command::new(dir.join("dot"))
            .current_dir(&dir)
            .env("WARPWISE_PROFILE", "raw.yaml")
            .env("WARPWISE_FULL_TRACKING", "1")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let raw = yaml_documents(&std::fs::read_to_string(dir.join("raw.yaml")).unwrap());
    assert_eq!(raw.len(), 2);
    assert!(
        raw[0]["loops"]
            .as_object()
            .unwrap()
            .values()
            .all(|l| l.get("mean_trip").is_none()),
        "a raw document has no derived fields: {:#}",
        raw[0]
    );
    assert_all_valid(
        SchemaKind::Profile,
        &[
            ("merged profile", &merged),
            ("fixture profile", &fixture),
            ("raw run 1", &raw[0]),
            ("raw run 2", &raw[1]),
        ],
    );

    let files = [every_fourth.as_str(), dot.as_str(), aliasing.as_str()];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter()
            .chain(&files)
            .chain(tail)
            .map(|s| s.to_string())
            .collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_in(&dir, &args)
    };
    let observed = json(&run(with(
        &["analyze"],
        &["--profile", "p.yaml", "--format", "json"],
    )));
    assert!(
        loops(&observed).iter().any(|l| l.get("observed").is_some()),
        "{observed:#}"
    );
    assert_valid(SchemaKind::KernelReport, &observed);

    run(with(
        &["analyze"],
        &["--format", "json", "-o", "report.json"],
    ));
    let instances = [
        (
            "analyze --instantiate (json)",
            json(&run(with(
                &["analyze"],
                &["--profile", "p.yaml", "--instantiate", "--format", "json"],
            ))),
        ),
        (
            "analyze --instantiate (yaml)",
            yaml(&run(with(
                &["analyze"],
                &["--profile", "p.yaml", "--instantiate", "--format", "yaml"],
            ))),
        ),
        (
            "instantiate --profile (json)",
            json(&run_in(
                &dir,
                &[
                    "instantiate",
                    "report.json",
                    "--profile",
                    "p.yaml",
                    "--format",
                    "json",
                ],
            )),
        ),
        (
            "instantiate --count mean --block 64x4 (yaml)",
            yaml(&run_in(
                &dir,
                &[
                    "instantiate",
                    "report.json",
                    "--profile",
                    "p.yaml",
                    "--count",
                    "mean",
                    "--block",
                    "64x4",
                    "--format",
                    "yaml",
                ],
            )),
        ),
        // No profile: values given, or none (variables undetermined).
        (
            "instantiate --set (json)",
            json(&run_in(
                &dir,
                &[
                    "instantiate",
                    "report.json",
                    "--set",
                    "n=-5",
                    "--format",
                    "json",
                ],
            )),
        ),
        (
            "instantiate without values (json)",
            json(&run_in(
                &dir,
                &["instantiate", "report.json", "--format", "json"],
            )),
        ),
    ];
    for (name, instance) in &instances {
        assert_eq!(
            instance["schema"],
            instantiate::model::INSTANCE_SCHEMA,
            "{name}"
        );
    }
    assert!(
        loops(&instances[0].1)
            .iter()
            .any(|l| l.get("offload").is_some()),
        "{:#}",
        instances[0].1
    );
    let named: Vec<(&str, &Value)> = instances.iter().map(|(n, r)| (*n, r)).collect();
    assert_all_valid(SchemaKind::InstanceReport, &named);
}

/// A report with a field removed, a field renamed or a value outside its set is rejected,
/// at the place of the change: the check can fail.
#[test]
fn the_schemas_reject_broken_documents() {
    let report = json(&run_in(
        root(),
        &["analyze", "samples/vector_add.c", "--format", "json"],
    ));
    let fixture = "tests/fixtures/every_fourth_add.profile.yaml";
    let profile = yaml(&std::fs::read_to_string(root().join(fixture)).unwrap());
    let dir = scratch("schemas", "broken");
    let analysed = dir.join("report.json");
    let analysed = analysed.to_str().unwrap();
    run_in(
        root(),
        &[
            "analyze",
            "samples/every_fourth_add.c",
            "--format",
            "json",
            "-o",
            analysed,
        ],
    );
    let instance = json(&run_in(
        root(),
        &[
            "instantiate",
            analysed,
            "--profile",
            fixture,
            "--format",
            "json",
        ],
    ));
    let broken = |document: &Value, change: &dyn Fn(&mut Value)| {
        let mut copy = document.clone();
        change(&mut copy);
        copy
    };
    // (kind, name, document, where the error must be, what it must say)
    let cases: Vec<(SchemaKind, &str, Value, &str, &str)> = vec![
        (
            SchemaKind::KernelReport,
            "verdict removed",
            broken(&report, &|r| {
                r["loops"][0].as_object_mut().unwrap().remove("verdict");
            }),
            "/loops/0",
            "'verdict' is a required property",
        ),
        (
            SchemaKind::KernelReport,
            "trip_count renamed",
            broken(&report, &|r| {
                let induction = r["loops"][0]["induction"].as_object_mut().unwrap();
                let trips = induction.remove("trip_count").unwrap();
                induction.insert("trips".into(), trips);
            }),
            "/loops/0/induction",
            "'trips' was unexpected",
        ),
        (
            SchemaKind::KernelReport,
            "unknown verdict",
            broken(&report, &|r| {
                r["loops"][0]["verdict"] = "gpu-friendly".into()
            }),
            "/loops/0/verdict",
            "'gpu-friendly' is not one of",
        ),
        (
            SchemaKind::KernelReport,
            "malformed code",
            broken(&report, &|r| {
                r["loops"][0]["reasons"] =
                    serde_json::json!([{"code": "W101", "message": "m", "lines": [1]}]);
            }),
            "/loops/0/reasons/0/code",
            "does not match",
        ),
        (
            SchemaKind::KernelReport,
            "loop id without a column",
            broken(&report, &|r| {
                r["loops"][0]["id"] = "samples/vector_add.c:27".into()
            }),
            "/loops/0/id",
            "does not match",
        ),
        (
            SchemaKind::Profile,
            "runs as a string",
            broken(&profile, &|p| p["runs"] = "1".into()),
            "/runs",
            "is not of type 'integer'",
        ),
        (
            SchemaKind::Profile,
            "unknown dependence class",
            broken(&profile, &|p| {
                let l = p["loops"]
                    .as_object_mut()
                    .unwrap()
                    .values_mut()
                    .next()
                    .unwrap();
                l["dependences"] = serde_json::json!([{
                    "kind": "raw", "array": "a",
                    "first": {"line": 1, "text": "a[i]", "array": "a", "scalar": false},
                    "second": {"line": 1, "text": "a[i - 1]", "array": "a", "scalar": false},
                    "distance_min": 1, "distance_max": 1, "count": 1, "class": "harmless"
                }]);
            }),
            "/dependences/0/class",
            "'harmless' is not one of",
        ),
        (
            SchemaKind::InstanceReport,
            "a quantity with neither value nor why",
            broken(&instance, &|i| {
                i["loops"][0]["trip_count"]
                    .as_object_mut()
                    .unwrap()
                    .remove("value");
            }),
            "/loops/0/trip_count",
            "is not valid under any of the given schemas",
        ),
        (
            SchemaKind::InstanceReport,
            "unknown value source",
            broken(&instance, &|i| {
                i["loops"][0]["values"][0]["source"] = "guess".into()
            }),
            "/loops/0/values/0/source",
            "'guess' is not one of",
        ),
    ];
    for kind in [
        SchemaKind::KernelReport,
        SchemaKind::Profile,
        SchemaKind::InstanceReport,
    ] {
        let original = match kind {
            SchemaKind::KernelReport => &report,
            SchemaKind::Profile => &profile,
            SchemaKind::InstanceReport => &instance,
        };
        let mut documents = vec![("original", original)];
        documents.extend(
            cases
                .iter()
                .filter(|c| c.0 == kind)
                .map(|(_, name, document, _, _)| (*name, document)),
        );
        let Some(errors) = schema_errors(kind, &documents) else {
            return;
        };
        assert!(
            !errors.iter().any(|e| e.starts_with("original:")),
            "{errors:#?}"
        );
        for (_, name, _, at, says) in cases.iter().filter(|c| c.0 == kind) {
            assert!(
                errors.iter().any(|e| e.starts_with(&format!("{name}: "))
                    && e.contains(&format!("{at}: "))
                    && e.contains(says)),
                "`{name}` was not rejected at {at} with `{says}`: {errors:#?}"
            );
        }
    }
}

/// What makes a schema precise, checked on the schema text: each names draft 2020-12 and
/// the model's version string, every property has a description (its own or its
/// definition's), and every object that lists its properties says what else it allows.
#[test]
fn every_schema_describes_its_properties_and_closes_its_objects() {
    for (kind, version) in [
        (SchemaKind::KernelReport, advisor::model::SCHEMA),
        (SchemaKind::Profile, profile::model::PROFILE_SCHEMA),
        (
            SchemaKind::InstanceReport,
            instantiate::model::INSTANCE_SCHEMA,
        ),
    ] {
        let schema = schema(kind);
        let name = kind.path().display().to_string();
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert!(schema["description"].is_string(), "{name}");
        assert_eq!(schema["properties"]["schema"]["const"], version, "{name}");
        let mut problems = Vec::new();
        check_node(&schema, &schema, "#", &mut problems);
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    }
}

fn check_node(root: &Value, node: &Value, at: &str, problems: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                if !map.contains_key("additionalProperties") {
                    problems.push(format!(
                        "{at}: lists properties but not additionalProperties"
                    ));
                }
                for (name, property) in properties {
                    if !described(root, property) {
                        problems.push(format!("{at}/properties/{name}: no description"));
                    }
                }
            }
            for (key, value) in map {
                check_node(root, value, &format!("{at}/{key}"), problems);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_node(root, item, &format!("{at}/{i}"), problems);
            }
        }
        _ => {}
    }
}

/// A property schema with a description, or a reference to a definition that has one.
/// `false` (a property that must be absent) needs none.
fn described(root: &Value, property: &Value) -> bool {
    if property == &Value::Bool(false) || property["description"].is_string() {
        return true;
    }
    property["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .is_some_and(|name| root["$defs"][name]["description"].is_string())
}
