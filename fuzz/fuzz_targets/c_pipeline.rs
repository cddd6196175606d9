//! Fuzz target: text as the C preprocessor would hand it over goes through the whole static
//! pipeline (compatibility rewrites, pragmas, source map, lang-c, lowering, every analysis,
//! the report's verifier, YAML and the text recipes), which must answer with reports or
//! diagnostics and never panic, abort or hang.
#![no_main]

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{Report, SCHEMA};
use frontend::unit::load_preprocessed;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    // A failure to load is a diagnostic with a location; that is an answer, not a crash.
    // `WARPWISE_FUZZ_VERBOSE=1 c_pipeline FILE...` says what each input gave, to check
    // that the seeds reach the analyses.
    let verbose = std::env::var_os("WARPWISE_FUZZ_VERBOSE").is_some();
    let unit = match load_preprocessed(Path::new("fuzz.c"), text) {
        Ok(unit) => unit,
        Err(d) => {
            if verbose {
                eprintln!("not loaded: {d}");
            }
            return;
        }
    };
    let diagnostics = unit.diagnostics();
    let loops = analyze_unit(&unit, &Filter::default());
    if verbose {
        eprintln!("{} loops, {} diagnostics", loops.len(), diagnostics.len());
    }
    let report = Report {
        schema: SCHEMA.to_string(),
        loops,
        skipped: Vec::new(),
    };
    // A report that breaks its own rules is a bug of warpwise, as the debug CLI asserts.
    let problems = advisor::verify::verify(&report);
    assert!(problems.is_empty(), "report check: {problems:?}");
    let yaml = serde_yaml::to_string(&report).expect("reports serialize");
    let again: Report = serde_yaml::from_str(&yaml).expect("a written report reads back");
    assert_eq!(again.loops.len(), report.loops.len());
    let _ = advisor::recipe::render(&report, std::slice::from_ref(&unit), true);
});
