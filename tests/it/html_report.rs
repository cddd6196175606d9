//! `warpwise analyze --format html`: the page of the samples has every loop (a
//! gutter mark and a panel each), references nothing outside itself, and in a real headless
//! browser (Debian's `chromium`, installed by `.ci/run`; skipped with a reason when absent
//! unless `WARPWISE_REQUIRE_BROWSER` is set) a click on a loop's mark opens its panel. A
//! screenshot of the opened panel is kept as `target/test-artifacts/html_report.png`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn warpwise(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("warpwise runs")
}

/// `analyze ARGS --format html` written to `DIR/report.html`, read back.
fn html_page(dir: &Path, args: &[&str]) -> String {
    let page = dir.join("report.html");
    let mut all = vec!["analyze"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "html", "-q", "-o", page.to_str().unwrap()]);
    let out = warpwise(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(page).expect("the page")
}

/// The HTML page and the JSON report of the same input.
fn page_and_report(dir: &Path, input: &str) -> (String, Value) {
    let page = html_page(dir, &[input]);
    let json = warpwise(&["analyze", input, "--format", "json", "-q"]);
    assert!(json.status.success());
    (page, serde_json::from_slice(&json.stdout).expect("JSON"))
}

fn loop_ids(report: &Value) -> Vec<String> {
    report["loops"]
        .as_array()
        .expect("loops")
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect()
}

/// A page is self-contained: no scripts, styles, images or fonts from elsewhere.
pub(crate) fn assert_self_contained(page: &str) {
    for external in [
        "src=",
        "href=\"http",
        "href=\"//",
        "@import",
        "url(",
        "<link",
    ] {
        assert!(!page.contains(external), "the page references `{external}`");
    }
}

/// Attribute values as the page writes them.
pub(crate) fn attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

#[test]
fn every_loop_has_a_mark_and_a_panel_and_nothing_is_fetched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, report) = page_and_report(dir.path(), "samples/");
    let ids = loop_ids(&report);
    assert!(ids.len() > 50, "{}", ids.len());
    for id in &ids {
        assert!(
            page.contains(&format!("data-loop=\"{}\"", attr(id))),
            "no gutter mark for {id}"
        );
        assert!(
            page.contains(&format!("data-loop-id=\"{}\"", attr(id))),
            "no panel for {id}"
        );
    }
    assert_self_contained(&page);
    // The summary counts match the report.
    let friendly = report["loops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["verdict"] == "friendly")
        .count();
    assert!(page.contains(&format!("{friendly} GPU-friendly")));
    // Coalescing tables carry requests and sectors.
    assert!(page.contains("<th>sectors per warp</th>"));
    // Source text is escaped, not interpreted.
    assert!(page.contains("#include &lt;stdio.h&gt;"));
}

pub(crate) fn browser() -> Option<String> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok())
        .map(String::from);
    if found.is_none() {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_BROWSER").is_none(),
            "WARPWISE_REQUIRE_BROWSER is set but no chromium is installed"
        );
        eprintln!("skipped: no headless browser (apt-get install chromium)");
    }
    found
}

pub(crate) fn headless(browser: &str, extra: &[&str], url: &str) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .args(extra)
        .arg(url)
        .output()
        .expect("the browser runs")
}

/// The opening tag's attributes of every panel of a page's DOM (`hidden` when closed).
pub(crate) fn panel_tags(dom: &str) -> Vec<&str> {
    dom.split("<section class=\"panel\"")
        .skip(1)
        .map(|s| &s[..s.find('>').unwrap_or(s.len())])
        .collect()
}

#[test]
fn clicking_a_loops_mark_opens_its_panel_in_a_browser() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, report) = page_and_report(dir.path(), "samples/");
    let ids = loop_ids(&report);
    let page = dir.path().join("report.html");
    // The page's own script clicks the mark the link names, through the same handler a
    // person's click runs.
    let target = ids
        .iter()
        .find(|id| id.contains("matmul.c:38"))
        .unwrap_or(&ids[0])
        .clone();
    let url = format!("file://{}#open={target}", page.display());
    let loaded = headless(&browser, &["--dump-dom"], &url);
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let dom = String::from_utf8_lossy(&loaded.stdout).to_string();
    let panels = panel_tags(&dom);
    assert_eq!(panels.len(), ids.len(), "every loop's panel is in the DOM");
    let open: Vec<&&str> = panels.iter().filter(|p| !p.contains("hidden")).collect();
    assert_eq!(open.len(), 1, "exactly the clicked panel is open: {open:?}");
    assert!(
        open[0].contains(&format!("data-loop-id=\"{}\"", attr(&target))),
        "{open:?}"
    );
    assert!(dom.contains(&format!("data-loop=\"{}\" aria-controls", attr(&target))));
    assert!(
        dom.contains("aria-expanded=\"true\""),
        "the mark says it is open"
    );

    // A screenshot of an opened panel, kept for people to look at: one file, so that the
    // loop near its top shows with its panel.
    let (_, _) = page_and_report(dir.path(), "samples/matmul.c");
    let url = format!("file://{}#open=samples/matmul.c:38:5", page.display());
    let artifacts = root().join("target").join("test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact directory");
    let shot = artifacts.join("html_report.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    let taken = headless(&browser, &[&screenshot, "--window-size=1280,1500"], &url);
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn with_a_profile_and_instantiate_the_page_charts_the_offload_estimate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = dir.path().join("profile.yaml");
    let profiled = warpwise(&[
        "profile",
        "samples/matmul.c",
        "-o",
        profile.to_str().unwrap(),
        "-q",
        "--",
        "32",
        "24",
        "16",
    ]);
    assert!(
        profiled.status.success(),
        "{}",
        String::from_utf8_lossy(&profiled.stderr)
    );
    let page = html_page(
        dir.path(),
        &[
            "samples/matmul.c",
            "--profile",
            profile.to_str().unwrap(),
            "--instantiate",
        ],
    );
    assert!(page.contains("id=\"profile\""), "no profiled-time ranking");
    assert!(page.contains("id=\"offload\""), "no offload estimate");
    // The outer matmul loop has an estimate with all three bars.
    let row = page
        .split("<tr>")
        .find(|r| r.contains("samples/matmul.c:38:5") && r.contains("class=\"bar copy\""))
        .expect("the outer loop's estimate row");
    assert!(row.contains("class=\"bar cpu\"") && row.contains("class=\"bar kernel\""));
    for external in ["src=", "href=\"http", "url(", "<link"] {
        assert!(!page.contains(external), "the page references `{external}`");
    }
}
