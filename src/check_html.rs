//! `check --format html -o check.html`: the report of `warpwise check` as one
//! self-contained page (the skeleton `analyze --format html` uses, `crate::html_page`). A
//! summary (kernels, accesses, findings by code, refused declarations, and each kernel's
//! name, which opens its panel), then the source of each checked file with a mark in the
//! gutter on every line that holds an access or branch (red with a finding, light without)
//! and on each kernel's declaration, and per kernel a panel, under its declaration, that
//! any of its marks opens: its launch configuration, each global access with its requests
//! and sectors per warp, each shared access with its bank conflicts, each branch with its
//! divergence, and their findings. Everything is escaped HTML; the script only opens and
//! closes panels (and opens the one a `#open=FILE:LINE:COL` link names, a kernel's place).

use crate::check_sarif::Place;
use crate::html_page::{esc, STYLE};
use advisor::check::model::{
    AccessReport, BranchReport, Call, CheckReport, Count, KernelReport, SharedAccessReport,
};
use advisor::model::Reason;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What `check` adds to the shared style: marks by finding, and kernel names as buttons.
const CHECK_STYLE: &str = r#"
.gutter { width: 48px; }
.badge.kernel { background: #1d2330; } .badge.finding { background: #c0392b; } .badge.analysed { background: #a9b8d6; }
.line.finding { background: #fdf0ee; } .line.analysed { background: #f4f6fb; } .line.kernel { background: #f0f4ff; }
.refused-mark { font: bold 11px ui-monospace, monospace; color: #b7791f; }
button.kname { font: 12.5px ui-monospace, monospace; color: inherit; background: none; border: 1px solid #56607a; border-radius: 3px; cursor: pointer; margin: 2px 4px 2px 0; }
.tag.finding { background: #c0392b; } .tag.none { background: #1f8a4c; }
td .code { font: bold 12px ui-monospace, monospace; color: #a32d1f; }
"#;

/// What one line holds of one kernel.
#[derive(Default)]
struct Mark {
    /// The kernel is declared here.
    declares: bool,
    /// Codes of the findings of its accesses and branches here.
    codes: Vec<String>,
    /// An access or branch of it is here.
    analysed: bool,
}

/// Marks by file, line and kernel (its index in the report).
type Marks = BTreeMap<String, BTreeMap<u32, BTreeMap<usize, Mark>>>;

/// The whole page.
pub fn render(report: &CheckReport) -> String {
    let mut out = String::new();
    crate::html_page::start(&mut out, "warpwise check", &format!("{STYLE}{CHECK_STYLE}"));
    summary(&mut out, report);
    out.push_str("</header>\n<main>\n");
    if !report.refused.is_empty() {
        out.push_str(
            "<section class=\"file\" id=\"refused\"><h2>Declarations not analysed</h2><ul>",
        );
        for r in &report.refused {
            let who = r
                .function
                .as_deref()
                .map(|f| format!("<code>{}</code> ", esc(f)))
                .unwrap_or_default();
            let _ = write!(
                out,
                "<li data-at=\"{}\"><code>{}</code>: {who}{}</li>",
                esc(&r.at),
                esc(&r.at),
                esc(&r.reason)
            );
        }
        out.push_str("</ul></section>\n");
    }
    let (files, marks) = marks(report);
    let mut placed = vec![false; report.kernels.len()];
    for file in &files {
        file_section(&mut out, report, file, &marks[file], &mut placed);
    }
    // Kernels whose place the report does not give as `file:line:col`.
    if placed.iter().any(|p| !p) {
        out.push_str("<section class=\"file\"><h2>Kernels without a source line</h2><ul>");
        for (k, kernel) in report.kernels.iter().enumerate() {
            if !placed[k] {
                let _ = write!(
                    out,
                    "<li><button class=\"badge kernel\" data-kernel=\"{}\" aria-controls=\"kernel-{k}\" aria-expanded=\"false\">K</button> <code>{}</code></li>",
                    esc(&kernel.at),
                    esc(&kernel.kernel)
                );
            }
        }
        out.push_str("</ul>\n");
        for (k, kernel) in report.kernels.iter().enumerate() {
            if !placed[k] {
                out.push_str(&panel(k, kernel));
            }
        }
        out.push_str("</section>\n");
    }
    crate::html_page::end(&mut out, "data-kernel");
    out
}

/// The header's counts and the kernels' names.
fn summary(out: &mut String, report: &CheckReport) {
    let kernels = &report.kernels;
    let accesses: usize = kernels.iter().map(|k| k.accesses.len()).sum();
    let shared: usize = kernels.iter().map(|k| k.shared_accesses.len()).sum();
    let branches: usize = kernels.iter().map(|k| k.branches.len()).sum();
    let mut by_code: BTreeMap<String, usize> = ["WW201", "WW202", "WW203"]
        .into_iter()
        .map(|c| (c.to_string(), 0))
        .collect();
    for k in kernels {
        for (_, reason) in findings(k) {
            *by_code.entry(reason.code.to_string()).or_default() += 1;
        }
    }
    let _ = write!(
        out,
        "<p class=\"counts\" id=\"summary\"><span>{} kernels</span><span>{accesses} global accesses</span><span>{shared} shared accesses</span><span>{branches} branches</span>",
        kernels.len()
    );
    for (code, n) in &by_code {
        let class = if *n > 0 { "finding" } else { "none" };
        let _ = write!(
            out,
            "<span class=\"tag {class}\" data-code=\"{}\" data-count=\"{n}\">{n} {}</span> ",
            esc(code),
            esc(code)
        );
    }
    let _ = writeln!(
        out,
        "<span>{} declarations not analysed</span></p>",
        report.refused.len()
    );
    if !kernels.is_empty() {
        out.push_str("<p class=\"kernels\">");
        for (k, kernel) in kernels.iter().enumerate() {
            let _ = write!(
                out,
                "<button class=\"kname\" aria-controls=\"kernel-{k}\" aria-expanded=\"false\" title=\"{}\">{}</button>",
                esc(&kernel.at),
                esc(&kernel.kernel)
            );
        }
        out.push_str("</p>\n");
    }
}

/// The findings of a kernel's accesses and branches, with their places.
fn findings(k: &KernelReport) -> impl Iterator<Item = (&String, &Reason)> {
    let accesses = k.accesses.iter().map(|a| (&a.at, a.finding.as_ref()));
    let shared = k
        .shared_accesses
        .iter()
        .map(|a| (&a.at, a.finding.as_ref()));
    let branches = k.branches.iter().map(|b| (&b.at, b.finding.as_ref()));
    accesses
        .chain(shared)
        .chain(branches)
        .filter_map(|(at, f)| Some((at, f?)))
}

/// The files in the order first seen, and what each line of them holds.
fn marks(report: &CheckReport) -> (Vec<String>, Marks) {
    let mut files: Vec<String> = Vec::new();
    let mut marks = Marks::new();
    let mut note = |at: &str, k: usize, f: &dyn Fn(&mut Mark)| {
        let Some(place) = Place::parse(at) else {
            return;
        };
        if !files.contains(&place.file) {
            files.push(place.file.clone());
        }
        let line = u32::try_from(place.line).unwrap_or(0);
        let mark = marks
            .entry(place.file)
            .or_default()
            .entry(line)
            .or_default()
            .entry(k)
            .or_default();
        f(mark);
    };
    for (k, kernel) in report.kernels.iter().enumerate() {
        note(&kernel.at, k, &|m| m.declares = true);
        let places = kernel
            .accesses
            .iter()
            .map(|a| &a.at)
            .chain(kernel.shared_accesses.iter().map(|a| &a.at))
            .chain(kernel.branches.iter().map(|b| &b.at));
        for at in places {
            note(at, k, &|m| m.analysed = true);
        }
        for (at, reason) in findings(kernel) {
            let code = reason.code.to_string();
            note(at, k, &|m| {
                if !m.codes.contains(&code) {
                    m.codes.push(code.clone());
                }
            });
        }
    }
    (files, marks)
}

/// One file: its source with the marks, each kernel's panel under its declaration.
fn file_section(
    out: &mut String,
    report: &CheckReport,
    file: &str,
    marks: &BTreeMap<u32, BTreeMap<usize, Mark>>,
    placed: &mut [bool],
) {
    crate::html_page::file_start(out, file);
    let source = std::fs::read_to_string(file).unwrap_or_default();
    let refused: Vec<(u32, &str)> = report
        .refused
        .iter()
        .filter_map(|r| {
            let place = Place::parse(&r.at).filter(|p| p.file == file)?;
            Some((u32::try_from(place.line).ok()?, r.reason.as_str()))
        })
        .collect();
    for (n, text) in source.lines().enumerate() {
        let n = n as u32 + 1;
        let here = marks.get(&n);
        let mut gutter = String::new();
        let mut class = "line";
        for (&k, mark) in here.into_iter().flatten() {
            let this = gutter_marks(&mut gutter, k, &report.kernels[k], mark);
            if weight(this) > weight(class) {
                class = this;
            }
        }
        for (_, why) in refused.iter().filter(|(line, _)| *line == n) {
            let _ = write!(
                gutter,
                "<span class=\"refused-mark\" title=\"not analysed: {}\">R</span>",
                esc(why)
            );
        }
        let _ = write!(
            out,
            "<span class=\"{class}\" id=\"{}-L{n}\"><span class=\"gutter\">{gutter}</span><span class=\"no\">{n}</span>{}</span>",
            esc(file),
            esc(text)
        );
        // A kernel's panel opens right under its declaration: the source is split there.
        let declared: Vec<usize> = here
            .into_iter()
            .flatten()
            .filter(|(_, m)| m.declares)
            .map(|(&k, _)| k)
            .collect();
        if !declared.is_empty() {
            out.push_str("</code></pre>\n");
            for k in declared {
                out.push_str(&panel(k, &report.kernels[k]));
                placed[k] = true;
            }
            out.push_str("<pre class=\"source\"><code>");
        }
    }
    if source.is_empty() {
        out.push_str(
            "<span class=\"line\"><span class=\"muted\">(source not readable)</span></span>",
        );
    }
    out.push_str("</code></pre>\n");
    // Panels of kernels declared in this file past its text (it could not be read again),
    // each with its mark, since no line holds one.
    for (_, kernels) in marks.range(source.lines().count() as u32 + 1..) {
        for (&k, mark) in kernels {
            if mark.declares && !placed[k] {
                let mut button = String::new();
                gutter_marks(&mut button, k, &report.kernels[k], mark);
                let _ = writeln!(
                    out,
                    "<p>{button} <code>{}</code></p>",
                    esc(&report.kernels[k].kernel)
                );
                out.push_str(&panel(k, &report.kernels[k]));
                placed[k] = true;
            }
        }
    }
    out.push_str("</section>\n");
}

/// A line's class by what it shows first: a finding over a declaration over an access.
fn weight(class: &str) -> usize {
    ["line", "line analysed", "line kernel", "line finding"]
        .iter()
        .position(|c| *c == class)
        .unwrap_or(0)
}

/// A line's marks for one kernel, each opening the kernel's panel, and the line's class.
fn gutter_marks(gutter: &mut String, k: usize, kernel: &KernelReport, mark: &Mark) -> &'static str {
    let at = esc(&kernel.at);
    let name = esc(&kernel.kernel);
    let mut class = "line";
    if mark.declares {
        let _ = write!(
            gutter,
            "<button class=\"badge kernel\" data-kernel=\"{at}\" aria-controls=\"kernel-{k}\" aria-expanded=\"false\" title=\"kernel {name}\">K</button>"
        );
        class = "line kernel";
    }
    if !mark.codes.is_empty() {
        let codes = esc(&mark.codes.join(" "));
        let _ = write!(
            gutter,
            "<button class=\"badge finding\" data-kernel=\"{at}\" data-codes=\"{codes}\" aria-controls=\"kernel-{k}\" aria-expanded=\"false\" title=\"{codes} in {name}\">!</button>"
        );
        class = "line finding";
    } else if mark.analysed {
        let _ = write!(
            gutter,
            "<button class=\"badge analysed\" data-kernel=\"{at}\" aria-controls=\"kernel-{k}\" aria-expanded=\"false\" title=\"analysed in {name}, no finding\">&#183;</button>"
        );
        if !mark.declares {
            class = "line analysed";
        }
    }
    class
}

/// One kernel's panel, hidden until one of its marks or its name is clicked.
fn panel(k: usize, kernel: &KernelReport) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<section class=\"panel\" id=\"kernel-{k}\" data-kernel-at=\"{}\" hidden>\n<h3>kernel <code>{}</code> at <code>{}</code></h3>\n",
        esc(&kernel.at),
        esc(&kernel.kernel),
        esc(&kernel.at)
    );
    let b = &kernel.block;
    let from = if b.from.is_empty() {
        "not known from a launch or <code>--set</code>".to_string()
    } else {
        format!("from {}", esc(&b.from.join(", ")))
    };
    let _ = writeln!(
        out,
        "<h4>Launch configuration</h4><p class=\"launch\">blockDim (<code>{}</code>, <code>{}</code>, <code>{}</code>), {from}</p>",
        esc(&b.x.to_string()),
        esc(&b.y.to_string()),
        esc(&b.z.to_string())
    );
    list(&mut out, "Assuming", &kernel.assumptions);
    if !kernel.accesses.is_empty() {
        out.push_str("<h4>Global accesses</h4><table class=\"accesses\"><tr><th>at</th><th>access</th><th>kind</th><th>bytes</th><th>requests per warp</th><th>value</th><th>sectors per warp</th><th>value</th><th>ideal sectors</th><th>coalescing</th><th>finding</th></tr>");
        for a in &kernel.accesses {
            access_row(&mut out, a);
        }
        out.push_str("</table>\n");
    }
    if !kernel.shared_accesses.is_empty() {
        out.push_str("<h4>Shared accesses</h4><table class=\"shared\"><tr><th>at</th><th>access</th><th>kind</th><th>bytes</th><th>bank-conflict degree</th><th>value</th><th>finding</th></tr>");
        for a in &kernel.shared_accesses {
            shared_row(&mut out, a);
        }
        out.push_str("</table>\n");
    }
    if !kernel.branches.is_empty() {
        out.push_str("<h4>Branches</h4><table class=\"branches\"><tr><th>at</th><th>condition</th><th>divergence</th><th>why</th><th>finding</th></tr>");
        for b in &kernel.branches {
            branch_row(&mut out, b);
        }
        out.push_str("</table>\n");
    }
    list(&mut out, "Not analysed", &kernel.not_analysed);
    out.push_str("</section>\n");
    out
}

fn list(out: &mut String, heading: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(out, "<h4>{heading}</h4><ul>");
    for item in items {
        let _ = write!(out, "<li>{}</li>", esc(item));
    }
    out.push_str("</ul>\n");
}

/// A count's expression (with its fewest and unaligned forms) and its value where settled.
fn count_cells(c: &Count) -> String {
    let mut symbolic = match &c.min {
        Some(min) => format!("{min} to {}", c.max),
        None => c.max.clone(),
    };
    if let Some(u) = &c.unaligned {
        let _ = write!(symbolic, " ({u} unaligned)");
    }
    let value = match c.value {
        Some(v) if c.exact => v.to_string(),
        Some(v) => format!("at most {v}"),
        None => String::new(),
    };
    format!(
        "<td><code>{}</code></td><td>{}</td>",
        esc(&symbolic),
        esc(&value)
    )
}

/// A finding's cell (code, message, help), and why the counts are what they are.
fn finding_cell(
    finding: Option<&Reason>,
    notes: &[Option<&str>],
    assumptions: &[String],
) -> String {
    let mut parts = Vec::new();
    if let Some(f) = finding {
        parts.push(format!(
            "<span class=\"code\">{}</span> {}",
            esc(f.code.as_str()),
            esc(&f.message)
        ));
        if let Some(help) = &f.help {
            parts.push(format!("<span class=\"muted\">help: {}</span>", esc(help)));
        }
    }
    for note in notes.iter().flatten() {
        parts.push(format!("<span class=\"muted\">{}</span>", esc(note)));
    }
    for a in assumptions {
        parts.push(format!("<span class=\"muted\">assuming {}</span>", esc(a)));
    }
    format!("<td>{}</td>", parts.join("<br>"))
}

/// A row's opening tag: its place (with the calls that reach it inside a device
/// function), and its finding's code for whoever reads the page.
fn row(out: &mut String, at: &str, via: &[Call], finding: Option<&Reason>) {
    let code = finding
        .map(|f| format!(" data-code=\"{}\" class=\"finding\"", esc(f.code.as_str())))
        .unwrap_or_default();
    let calls: String = via
        .iter()
        .map(|c| {
            format!(
                "<br>in <code>{}</code> called at <code>{}</code>",
                esc(&c.callee),
                esc(&c.at)
            )
        })
        .collect();
    let _ = write!(
        out,
        "<tr data-at=\"{}\"{code}><td><code>{}</code>{calls}</td>",
        esc(at),
        esc(at)
    );
}

fn access_row(out: &mut String, a: &AccessReport) {
    row(out, &a.at, &a.via, a.finding.as_ref());
    let when = a
        .when
        .as_deref()
        .map(|w| format!(" when <code>{}</code>", esc(w)))
        .unwrap_or_default();
    let lanes = a.active.as_deref().map(|l| format!("lanes: {l}"));
    let because = a.reason.as_deref().map(|r| format!("because {r}"));
    let _ = writeln!(
        out,
        "<td><code>{}</code></td><td>{}</td><td>{}</td>{}{}<td>{}</td><td>{}{when}</td>{}</tr>",
        esc(&a.access),
        a.kind.as_str(),
        a.bytes,
        count_cells(&a.requests),
        count_cells(&a.sectors),
        a.ideal_sectors,
        a.coalescing.as_str(),
        finding_cell(
            a.finding.as_ref(),
            &[lanes.as_deref(), because.as_deref()],
            &a.assumptions
        )
    );
}

fn shared_row(out: &mut String, a: &SharedAccessReport) {
    row(out, &a.at, &a.via, a.finding.as_ref());
    let lanes = a.active.as_deref().map(|l| format!("lanes: {l}"));
    let because = a.reason.as_deref().map(|r| format!("because {r}"));
    let _ = writeln!(
        out,
        "<td><code>{}</code></td><td>{}</td><td>{}</td>{}{}</tr>",
        esc(&a.access),
        a.kind.as_str(),
        a.bytes,
        count_cells(&a.bank_conflicts),
        finding_cell(
            a.finding.as_ref(),
            &[lanes.as_deref(), because.as_deref()],
            &a.assumptions
        )
    );
}

fn branch_row(out: &mut String, b: &BranchReport) {
    row(out, &b.at, &b.via, b.finding.as_ref());
    let exit = if b.loop_exit { " (loop exit)" } else { "" };
    let _ = writeln!(
        out,
        "<td><code>{}</code>{exit}</td><td>{}</td><td>{}</td>{}</tr>",
        esc(&b.condition),
        b.divergence.as_str(),
        esc(&b.why),
        finding_cell(b.finding.as_ref(), &[], &[])
    );
}
