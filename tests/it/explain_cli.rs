//! `warpwise explain CODE` for every rule of the registry (with its example), and the
//! documentation listing each.

use std::process::Command;

fn explain(code: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .args(["explain", code])
        .output()
        .expect("warpwise runs")
}

#[test]
fn every_code_is_explained_and_documented() {
    let read = |page: &str| {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page))
            .expect("docs")
    };
    // Loop rules are documented with the report of `analyze`, kernel rules with `check`.
    let (loop_docs, kernel_docs) = (read("docs/report-format.md"), read("docs/check.md"));
    for code in advisor::rules::every() {
        let out = explain(code.code.as_str());
        assert!(out.status.success(), "{}", code.code);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&format!("{}: {}", code.code, code.name)),
            "{text}"
        );
        for part in ["What: ", "Why it matters on a GPU: ", "What to do: "] {
            assert!(text.contains(part), "{}: no `{part}` in {text}", code.code);
        }
        // The example the rule's own test analyses, whole, with what it shows.
        let kernel = code.example.subject == advisor::rules::Subject::Kernel;
        let shows = if kernel && code.example.source.contains("/* BRANCH */") {
            format!("gives the branch marked /* BRANCH */ {}", code.code)
        } else if kernel {
            format!("gives the access marked /* ACCESS */ {}", code.code)
        } else {
            format!(
                "reports the loop marked /* LOOP */ as {}",
                code.example.verdict.as_str()
            )
        };
        assert!(
            text.contains(code.example.source) && text.contains(&shows),
            "{}: no example in {text}",
            code.code
        );
        let (docs, page) = if kernel {
            (&kernel_docs, "docs/check.md")
        } else {
            (&loop_docs, "docs/report-format.md")
        };
        assert!(
            docs.contains(&format!("| {} |", code.code)),
            "{} is missing from {page}'s table",
            code.code
        );
    }
    // Codes are matched without regard to case, as people type them.
    assert!(explain("ww110").status.success());
}

#[test]
fn an_unknown_code_is_a_usage_error_listing_the_known_ones() {
    let out = explain("WW999");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`WW999` is not a warpwise code") && err.contains("WW101"),
        "{err}"
    );
}
