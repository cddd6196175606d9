//! The skeleton of warpwise's self-contained HTML pages (`analyze --format html`, `check
//! --format html`): the head with its inline style, the closing script that opens and
//! closes panels, and escaping; nothing on a page is fetched from elsewhere.

use std::fmt::Write;

/// The page style both pages share (`analyze`'s loop verdicts and charts among it).
pub const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: 16px 24px; }
header h1 { margin: 0 0 4px; font-size: 20px; }
.counts span { display: inline-block; margin-right: 14px; }
main { padding: 16px 24px; }
.file { background: #fff; border: 1px solid #d9dde4; border-radius: 6px; margin-bottom: 20px; }
.file h2 { font-size: 15px; margin: 0; padding: 8px 12px; border-bottom: 1px solid #d9dde4; }
pre.source { margin: 0; padding: 0; overflow-x: auto; font: 12.5px/1.5 ui-monospace, monospace; }
.file > pre.source:first-of-type { padding-top: 6px; }
.line { display: block; white-space: pre; }
.line.loop { background: #f0f4ff; }
.gutter { display: inline-block; width: 28px; text-align: center; }
.no { display: inline-block; width: 44px; text-align: right; color: #8a93a3; padding-right: 10px; user-select: none; }
button.badge { font: bold 11px ui-monospace, monospace; border: 0; border-radius: 3px; color: #fff; cursor: pointer; padding: 0 5px; }
.friendly { background: #1f8a4c; } .needs-profile { background: #b7791f; } .not-friendly { background: #c0392b; }
.panel { border-top: 1px solid #d9dde4; padding: 10px 16px; background: #fbfcfe; }
.panel[hidden] { display: none; }
.panel h3 { margin: 0 0 6px; font-size: 15px; }
.panel pre { background: #fff; border: 1px solid #e3e6ec; padding: 8px; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; }
th, td { border: 1px solid #e3e6ec; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f6; }
tr.best td { background: #e9f7ef; }
.tag { font-size: 11px; padding: 1px 6px; border-radius: 8px; color: #fff; }
.chart .bar { height: 14px; background: #3b6fd6; display: inline-block; vertical-align: middle; }
.chart .cpu { background: #3b6fd6; } .chart .copy { background: #d98c1f; } .chart .kernel { background: #1f8a4c; }
.chart td.label { font-family: ui-monospace, monospace; }
.muted { color: #6b7486; }
"#;

/// Opens and closes panels; `data-loop` is the attribute a `#open=` link matches, which
/// [`end`] renames for a page whose marks name something else.
const SCRIPT: &str = r#"
(function () {
  function toggle(id, scroll) {
    var panel = document.getElementById(id);
    if (!panel) return;
    var show = panel.hidden;
    panel.hidden = !show;
    document.querySelectorAll('[aria-controls="' + id + '"]').forEach(function (b) {
      b.setAttribute('aria-expanded', String(show));
    });
    if (show && scroll) panel.scrollIntoView({block: 'nearest'});
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest('[aria-controls]');
    // A person's click scrolls to the panel; the one a link opens stays where the page is.
    if (b) { e.preventDefault(); toggle(b.getAttribute('aria-controls'), e.isTrusted); }
  });
  // `report.html#open=FILE:LINE:COL` opens that loop's panel, as a click on its mark does.
  var m = /^#open=(.+)$/.exec(decodeURIComponent(location.hash));
  if (m) {
    var badge = document.querySelector('button.badge[data-loop="' + m[1].replace(/"/g, '') + '"]');
    if (badge) badge.click();
  }
})();
"#;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page up to its header's title: doctype, head with `style` inline, `<body>`,
/// `<header>` and `<h1>`. The caller writes the rest of the header and opens `<main>`.
pub fn start(out: &mut String, title: &str, style: &str) {
    let title = esc(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n"
    );
}

/// Opens a file's section, its name as heading, and the source listing its lines go in.
pub fn file_start(out: &mut String, file: &str) {
    let _ = write!(
        out,
        "<section class=\"file\" data-file=\"{}\">\n<h2>{}</h2>\n<pre class=\"source\"><code>",
        esc(file),
        esc(file)
    );
}

/// Closes `<main>` and the page, with the panel script; `mark` is the attribute of the
/// marks (`button.badge`) that a `#open=VALUE` link clicks.
pub fn end(out: &mut String, mark: &str) {
    let script = SCRIPT.replace("data-loop", mark);
    let _ = write!(
        out,
        "</main>\n<script>{script}</script>\n</body>\n</html>\n"
    );
}
