//! `warpwise check --format html`: for the kernels of `check_sarif` (an uncoalesced access,
//! a divergent branch, a bank conflict, a refused template) and one guarded by
//! `a < b && c > d`, every finding of the JSON report of the same file has its mark on its
//! line and its row, with its code, in its kernel's panel; the page references nothing
//! outside itself, shows source text escaped, `-o` neither replaces an input nor writes
//! through a link, and in a headless browser (skipped with a
//! reason where none is installed, as `html_report` does) a `#open=` link opens exactly
//! the kernel's panel.

use crate::check_sarif::{check_in, report_findings, MIXED};
use crate::html_report::{attr, browser, headless};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A kernel whose condition holds `<`, `>` and `&&`, which the page must escape.
const GUARD: &str = r#"
__global__ void guard(float *v, int b, int d)
{
    int a = threadIdx.x;
    int c = blockIdx.x;
    if (a < b && c > d)
        v[a] = 0;
}
"#;

const FILE: &str = "kernels.cu";

/// `check kernels.cu --format html -o page.html` in `dir`: the page, and the JSON report
/// of the same file.
fn page_and_report(dir: &Path) -> (String, Value) {
    std::fs::write(dir.join(FILE), format!("{MIXED}{GUARD}")).expect("fixture");
    let out = Command::new(crate::common::bin())
        .current_dir(dir)
        .args(["check", FILE, "--format", "html", "-o", "page.html"])
        .output()
        .expect("warpwise runs");
    assert!(out.status.success(), "{}", crate::common::text(&out));
    assert!(out.stdout.is_empty(), "the page goes to -o, not stdout");
    let page = std::fs::read_to_string(dir.join("page.html")).expect("the page");
    (page, check_in(dir, FILE, "json"))
}

/// The text of kernel `k`'s panel.
fn panel(page: &str, k: usize) -> &str {
    let start = page
        .find(&format!("<section class=\"panel\" id=\"kernel-{k}\""))
        .unwrap_or_else(|| panic!("no panel for kernel {k}"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").expect("the panel ends")]
}

/// The gutter of a source line.
fn gutter<'a>(page: &'a str, line: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"{FILE}-L{line}\""))
        .unwrap_or_else(|| panic!("no source line {line}"));
    let rest = &page[start..];
    &rest[..rest.find("<span class=\"no\">").expect("the line number")]
}

#[test]
fn every_finding_has_its_mark_and_its_panel_row_and_nothing_is_fetched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, report) = page_and_report(dir.path());
    let all = report_findings(&report);
    let codes: Vec<&str> = all.iter().map(|(c, _)| c.as_str()).collect();
    for code in ["WW201", "WW202", "WW203"] {
        assert!(codes.contains(&code), "the fixture has no {code}: {all:?}");
        let n = codes.iter().filter(|c| **c == code).count();
        assert!(
            page.contains(&format!("data-code=\"{code}\" data-count=\"{n}\"")),
            "the summary does not count {n} {code}"
        );
    }
    let kernels = report["kernels"].as_array().expect("kernels");
    let mut rows = 0;
    for (k, kernel) in kernels.iter().enumerate() {
        let name = kernel["kernel"].as_str().unwrap();
        assert!(
            page.contains(&format!(
                "aria-controls=\"kernel-{k}\" aria-expanded=\"false\" title=\"{}\">{name}</button>",
                attr(kernel["at"].as_str().unwrap())
            )),
            "no button with the name of {name}"
        );
        let panel = panel(&page, k);
        for list in ["accesses", "shared_accesses", "branches"] {
            for item in kernel[list].as_array().into_iter().flatten() {
                let Some(code) = item["finding"]["code"].as_str() else {
                    continue;
                };
                let at = item["at"].as_str().unwrap();
                let line = at.rsplit(':').nth(1).unwrap();
                let marks = gutter(&page, line);
                assert!(
                    marks.contains("class=\"badge finding\"")
                        && marks.contains(code)
                        && marks.contains(&format!("aria-controls=\"kernel-{k}\"")),
                    "line {line} has no {code} mark opening {name}'s panel: {marks}"
                );
                assert!(
                    panel.contains(&format!(
                        "<tr data-at=\"{}\" data-code=\"{code}\"",
                        attr(at)
                    )),
                    "{name}'s panel has no {code} row at {at}"
                );
                rows += 1;
            }
        }
    }
    assert_eq!(rows, all.len());
    let finding_rows = page
        .split("<tr data-at=")
        .skip(1)
        .filter(|row| row[..row.find('>').unwrap()].contains("data-code="))
        .count();
    assert_eq!(
        finding_rows,
        all.len(),
        "a row with a code per finding, no more"
    );
    // The analysed lines without a finding have the lighter mark.
    assert!(gutter(&page, "16").contains("class=\"badge analysed\""));
    // The refused template is listed, with its place.
    for r in report["refused"].as_array().expect("refused") {
        assert!(page.contains(&format!(
            "<li data-at=\"{}\">",
            attr(r["at"].as_str().unwrap())
        )));
    }
    crate::html_report::assert_self_contained(&page);
}

#[test]
fn source_and_conditions_are_escaped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, _) = page_and_report(dir.path());
    assert!(
        page.contains("if (a &lt; b &amp;&amp; c &gt; d)"),
        "the source line"
    );
    assert!(page.contains("template &lt;typename T&gt;"));
    assert!(
        page.contains("<code>a &lt; b</code>"),
        "the branch's condition"
    );
    assert!(!page.contains("a < b"), "unescaped text from the source");
    assert!(!page.contains("<typename"));
}

#[test]
fn the_output_never_replaces_an_input_nor_follows_a_link() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, _) = page_and_report(dir.path());
    let out = Command::new(crate::common::bin())
        .current_dir(dir.path())
        .args(["check", FILE, "--format", "html", "-o", FILE])
        .output()
        .expect("warpwise runs");
    assert_eq!(out.status.code(), Some(2), "{}", crate::common::text(&out));
    let kept = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
    assert_eq!(kept, format!("{MIXED}{GUARD}"));
    // A symbolic link at the output is replaced by the page, not written through.
    let elsewhere = dir.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "kept").unwrap();
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let out = Command::new(crate::common::bin())
        .current_dir(dir.path())
        .args(["check", FILE, "--format", "html", "-o", "link.html"])
        .output()
        .expect("warpwise runs");
    assert!(out.status.success(), "{}", crate::common::text(&out));
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.is_file(), "the link was written through");
    assert!(std::fs::read_to_string(&link)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

#[test]
fn a_link_to_a_kernel_opens_its_panel_in_a_browser() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, report) = page_and_report(dir.path());
    let kernels = report["kernels"].as_array().expect("kernels");
    let target = kernels
        .iter()
        .find(|k| k["kernel"] == "row_sums")
        .expect("row_sums")["at"]
        .as_str()
        .unwrap()
        .to_string();
    // The page's own script clicks the kernel's mark, through the handler a click runs.
    let url = format!(
        "file://{}#open={target}",
        dir.path().join("page.html").display()
    );
    let loaded = headless(&browser, &["--dump-dom"], &url);
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let dom = String::from_utf8_lossy(&loaded.stdout).to_string();
    let panels = crate::html_report::panel_tags(&dom);
    assert_eq!(
        panels.len(),
        kernels.len(),
        "every kernel's panel is in the DOM"
    );
    let open: Vec<&&str> = panels.iter().filter(|p| !p.contains("hidden")).collect();
    assert_eq!(open.len(), 1, "exactly the linked panel is open: {open:?}");
    assert!(
        open[0].contains(&format!("data-kernel-at=\"{}\"", attr(&target))),
        "{open:?}"
    );
    // Its name in the header says so as well as its marks.
    assert!(
        dom.contains(&format!(
            "aria-expanded=\"true\" title=\"{}\">row_sums</button>",
            attr(&target)
        )),
        "the kernel's name does not say its panel is open"
    );
}
