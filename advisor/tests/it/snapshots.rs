//! Snapshot tests of the YAML report and the text recipe of every sample. Paths are given
//! relative to the crate (`../samples/x.c`), so snapshots do not depend on the checkout.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{Report, SCHEMA};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::path::PathBuf;

fn sample_names() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("samples directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    names.sort();
    names
}

#[test]
fn reports_and_recipes_of_every_sample() {
    for name in sample_names() {
        let unit = load_unit(&TranslationUnitInput::new(
            PathBuf::from("../samples").join(&name),
        ))
        .expect("sample loads");
        let report = Report {
            schema: SCHEMA.into(),
            loops: analyze_unit(&unit, &Filter::default()),
            skipped: Vec::new(),
        };
        let problems = advisor::verify::verify(&report);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        // Every name an expression uses is one the source writes.
        let source =
            std::fs::read_to_string(PathBuf::from("../samples").join(&name)).expect("sample reads");
        let words: std::collections::HashSet<&str> = source
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        for l in &report.loops {
            let unknown = advisor::verify::unknown_identifiers(l, &|w| words.contains(w));
            assert!(unknown.is_empty(), "{}: names {unknown:?}", l.id);
        }
        let stem = name.trim_end_matches(".c");
        let yaml = serde_yaml::to_string(&report).expect("serializable");
        insta::assert_snapshot!(format!("{stem}_report"), yaml);
        let units = vec![unit];
        let text = advisor::recipe::render(&report, &units, true);
        insta::assert_snapshot!(format!("{stem}_recipe"), text);
        // The YAML reads back to the same report.
        let back: Report = serde_yaml::from_str(&yaml).expect("report parses back");
        assert_eq!(back, report);
    }
}
