//! Fuzz target: the readers of files a user hands back to warpwise. The input is a kernel
//! report, or a report and a profile separated by a NUL byte; each is read as `instantiate`
//! reads it (nesting guard, YAML, schema), and what reads is instantiated and rendered.
//! Malformed input must be an error with a location, never a panic, an overflow or a hang.
#![no_main]

use advisor::model::{Report, SCHEMA};
use instantiate::{instantiate, render, Options};
use libfuzzer_sys::fuzz_target;
use profile::yaml_guard::{too_deep, MAX_NESTING};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (report_text, profile_text) = match text.split_once('\0') {
        Some((r, p)) => (r.to_string(), Some(p.to_string())),
        None => (text.to_string(), None),
    };
    let profile = match &profile_text {
        Some(p) => profile::model::parse_profile(p).ok(),
        // Alone, the input is tried as a profile too.
        None => profile::model::parse_profile(&report_text).ok(),
    };
    if too_deep(&report_text, MAX_NESTING).is_some() {
        return;
    }
    let Ok(report) = serde_yaml::from_str::<Report>(&report_text) else {
        return;
    };
    if report.schema != SCHEMA {
        return;
    }
    let _ = advisor::verify::verify(&report);
    let options = Options {
        set: Default::default(),
        block: (32, 8),
        gpu: advisor::gpus::gpu(advisor::gpus::DEFAULT_GPU).expect("the default GPU"),
        link: Default::default(),
        statistic: Default::default(),
    };
    let instance = instantiate::<String>(&report, profile.as_ref(), &options, None);
    let _ = render::render(&instance);
    let _ = serde_yaml::to_string(&instance).expect("instances serialize");
});
