//! Coalescing of accesses whose offset is a value computed per iteration: a gather
//! `in[idx[i]]` or a hash `in[(i * 7919) % m]` is not the same address for every thread of
//! a warp; the count is the worst case, never a claimed broadcast. A division by a constant
//! `in[i / 4]` is counted exactly.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::AccessCoalescing;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;

const SOURCE: &str = r#"
void gather(const float *in, const int *idx, float *out, int n, int m)
{
    for (int i = 0; i < n; i++)
        out[i] = in[idx[i]] + in[(i * 7919) % m] + in[i / 4];
}
"#;

fn accesses() -> Vec<AccessCoalescing> {
    // Tests run in parallel: each call gets its own fresh, private directory, removed when
    // `dir` drops at the end.
    let dir = tempfile::Builder::new()
        .prefix("warpwise-gathers-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("gather.c");
    std::fs::write(&file, SOURCE).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    reports[0].mappings[0].accesses.clone()
}

fn check(text: &str, requests: &str, exact: bool) {
    let all = accesses();
    let a = all
        .iter()
        .find(|a| a.text == text)
        .unwrap_or_else(|| panic!("no access `{text}` in {all:#?}"));
    assert_eq!(
        (a.requests_per_warp.as_str(), a.exact),
        (requests, exact),
        "{a:#?}"
    );
}

#[test]
fn a_gather_is_the_worst_case() {
    check("in[idx[i]]", "32", false);
}

#[test]
fn a_hashed_index_is_the_worst_case() {
    check("in[(i * 7919) % m]", "32", false);
}

#[test]
fn a_division_by_a_constant_is_exact() {
    check("in[i / 4]", "1", true);
}
