//! `analyze --format html -o report.html`: one self-contained page a person opens in a
//! browser (no network: styles, script and data inline). A summary of the loops by verdict
//! (and, with `--profile`, the loops ranked by profiled time as a bar chart; with
//! `--profile --instantiate`, the offload estimate per loop as bars: CPU time against
//! transfer plus kernel time), the source of
//! each file with every loop's verdict in the gutter, and per loop a panel that a click on
//! its gutter mark opens: the recipe or findings, parameters and byte sections, requests and
//! sectors per warp under each mapping (the recommended one marked), shared memory,
//! divergence and assumptions. Everything is rendered here as escaped HTML; the script only
//! opens and closes panels (and opens the one a `#open=LOOP` link names).

use crate::html_page::{esc, STYLE};
use advisor::model::{LoopReport, Report, Verdict};
use frontend::unit::Unit;
use instantiate::InstanceReport;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The loop id's file and line.
fn file_and_line(l: &LoopReport) -> Option<(String, u32)> {
    Some((l.id.file.clone(), l.id.line))
}

fn badge_letter(v: Verdict) -> &'static str {
    match v {
        Verdict::Friendly => "F",
        Verdict::NeedsProfile => "P",
        Verdict::NotFriendly => "N",
    }
}

/// The whole page; with an instance (`--instantiate`), its offload estimates too.
pub fn render(report: &Report, units: &[Unit], instance: Option<&InstanceReport>) -> String {
    let mut out = String::new();
    let count = |v: Verdict| report.loops.iter().filter(|l| l.verdict == v).count();
    crate::html_page::start(&mut out, "warpwise report", STYLE);
    let _ = write!(
        out,
        "<p class=\"counts\" id=\"summary\"><span>{} loops</span><span class=\"tag friendly\">{} GPU-friendly</span> <span class=\"tag needs-profile\">{} need a profile</span> <span class=\"tag not-friendly\">{} not GPU-friendly</span></p>\n</header>\n<main>\n",
        report.loops.len(),
        count(Verdict::Friendly),
        count(Verdict::NeedsProfile),
        count(Verdict::NotFriendly)
    );
    out.push_str(&profile_chart(report));
    if let Some(instance) = instance {
        out.push_str(&offload_chart(instance));
    }
    // Loops by file, in report order; files in the order first seen.
    let mut files: Vec<String> = Vec::new();
    let mut by_file: BTreeMap<String, Vec<(usize, &LoopReport)>> = BTreeMap::new();
    for (k, l) in report.loops.iter().enumerate() {
        let Some((file, _)) = file_and_line(l) else {
            continue;
        };
        if !files.contains(&file) {
            files.push(file.clone());
        }
        by_file.entry(file).or_default().push((k, l));
    }
    for file in &files {
        let loops = &by_file[file];
        crate::html_page::file_start(&mut out, file);
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let mut marks: BTreeMap<u32, Vec<(usize, &LoopReport)>> = BTreeMap::new();
        for &(k, l) in loops {
            if let Some((_, line)) = file_and_line(l) {
                marks.entry(line).or_default().push((k, l));
            }
        }
        for (n, text) in source.lines().enumerate() {
            let n = n as u32 + 1;
            let here = marks.get(&n);
            let class = if here.is_some() { "line loop" } else { "line" };
            let mut gutter = String::new();
            for (k, l) in here.into_iter().flatten() {
                let _ = write!(
                    gutter,
                    "<button class=\"badge {v}\" data-loop=\"{id}\" aria-controls=\"panel-{k}\" aria-expanded=\"false\" title=\"{id}: {v}\">{letter}</button>",
                    v = l.verdict.as_str(),
                    id = esc(&l.id.to_string()),
                    letter = badge_letter(l.verdict)
                );
            }
            let _ = write!(
                out,
                "<span class=\"{class}\" id=\"{}-L{n}\"><span class=\"gutter\">{gutter}</span><span class=\"no\">{n}</span>{}</span>",
                esc(file),
                esc(text)
            );
            // The loop's panel opens right under its line: the source is split there.
            if let Some(here) = here {
                out.push_str("</code></pre>\n");
                for &(k, l) in here {
                    out.push_str(&panel(k, l, report, units));
                }
                out.push_str("<pre class=\"source\"><code>");
            }
        }
        if source.is_empty() {
            // The file could not be read again: the marks alone, one per loop.
            for &(k, l) in loops {
                let _ = write!(
                    out,
                    "<span class=\"line loop\"><span class=\"gutter\"><button class=\"badge {v}\" data-loop=\"{id}\" aria-controls=\"panel-{k}\" aria-expanded=\"false\">{letter}</button></span><span class=\"no\">{}</span><span class=\"muted\">(source not readable)</span></span>",
                    l.line,
                    v = l.verdict.as_str(),
                    id = esc(&l.id.to_string()),
                    letter = badge_letter(l.verdict)
                );
            }
        }
        out.push_str("</code></pre>\n");
        // Panels of loops whose line is not in the text (it could not be read again).
        let lines = source.lines().count() as u32;
        for &(k, l) in loops {
            if source.is_empty() || l.line > lines {
                out.push_str(&panel(k, l, report, units));
            }
        }
        out.push_str("</section>\n");
    }
    if !report.skipped.is_empty() {
        out.push_str("<section class=\"file\"><h2>Skipped</h2><ul>");
        for s in &report.skipped {
            let _ = write!(out, "<li>{}</li>", esc(s));
        }
        out.push_str("</ul></section>\n");
    }
    crate::html_page::end(&mut out, "data-loop");
    out
}

/// With a profile: the loops ranked by profiled time, as bars.
fn profile_chart(report: &Report) -> String {
    let mut timed: Vec<(&LoopReport, u64)> = report
        .loops
        .iter()
        .filter_map(|l| l.observed.as_ref().map(|o| (l, o.time_ns)))
        .filter(|(_, t)| *t > 0)
        .collect();
    if timed.is_empty() {
        return String::new();
    }
    timed.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
    let most = timed[0].1.max(1) as f64;
    let mut out = String::from(
        "<section class=\"file chart\" id=\"profile\"><h2>Loops by profiled time</h2><table><tr><th>loop</th><th>verdict</th><th>time</th><th></th></tr>",
    );
    for (l, t) in timed.iter().take(30) {
        let width = (300.0 * *t as f64 / most).round().max(1.0);
        let _ = write!(
            out,
            "<tr><td class=\"label\">{}</td><td><span class=\"tag {v}\">{v}</span></td><td>{:.3} ms</td><td><span class=\"bar\" style=\"width:{width}px\"></span></td></tr>",
            esc(&l.id.to_string()),
            *t as f64 / 1e6,
            v = l.verdict.as_str()
        );
    }
    out.push_str("</table></section>\n");
    out
}

/// With an instance: per loop with an estimate, the profiled CPU time of all its entries
/// against the GPU's (copies plus kernel), on one scale, ranked by the time a port saves.
fn offload_chart(instance: &InstanceReport) -> String {
    let mut rows: Vec<(
        &instantiate::model::InstanceLoop,
        &instantiate::model::Offload,
    )> = instance
        .loops
        .iter()
        .filter_map(|l| l.offload.as_ref().map(|o| (l, o)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by(|a, b| b.1.saved_ns.total_cmp(&a.1.saved_ns));
    let ms = |ns: f64| ns / 1e6;
    let mut out = format!(
        "<section class=\"file chart\" id=\"offload\"><h2>Offload estimate ({}, block {}; {} profiled run{})</h2>\
         <p class=\"muted\"><span class=\"bar cpu\" style=\"width:12px\"></span> CPU time \
         <span class=\"bar copy\" style=\"width:12px\"></span> copies \
         <span class=\"bar kernel\" style=\"width:12px\"></span> kernel, over all entries of the loop (each row on its own scale)</p>\
         <table><tr><th>loop</th><th>estimate</th><th>CPU / GPU</th><th></th></tr>",
        esc(&instance.inputs.gpu),
        esc(&instance.inputs.block),
        instance.inputs.profile_runs,
        if instance.inputs.profile_runs == 1 { "" } else { "s" }
    );
    for (l, o) in rows.iter().take(30) {
        let n = o.entries as f64;
        // Each row on its own scale: the longer of the two bars is 300 pixels.
        let most = (o.cpu_ns.max(o.transfer_ns + o.kernel_ns) * n).max(1.0);
        let width = |ns: f64| (300.0 * ns / most).round().max(1.0);
        let _ = write!(
            out,
            "<tr><td class=\"label\">{}</td><td>{} (x{:.2})</td><td>{:.3} ms / {:.3} ms</td>\
             <td><span class=\"bar cpu\" style=\"width:{}px\"></span><br>\
             <span class=\"bar copy\" style=\"width:{}px\"></span><span class=\"bar kernel\" style=\"width:{}px\"></span></td></tr>",
            esc(&l.id.to_string()),
            esc(&o.verdict),
            o.speedup,
            ms(o.cpu_ns * n),
            ms(o.gpu_ns * n),
            width(o.cpu_ns * n),
            width(o.transfer_ns * n),
            width(o.kernel_ns * n)
        );
    }
    out.push_str("</table></section>\n");
    out
}

/// One loop's panel, hidden until its mark is clicked.
fn panel(k: usize, l: &LoopReport, report: &Report, units: &[Unit]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<section class=\"panel\" id=\"panel-{k}\" data-loop-id=\"{}\" hidden>\n<h3><span class=\"tag {v}\">{v}</span> {} in <code>{}</code></h3>\n",
        esc(&l.id.to_string()),
        esc(&l.id.to_string()),
        esc(&l.function),
        v = l.verdict.as_str()
    );
    let text = advisor::recipe::loop_text(l, report, units, false);
    let heading = if l.verdict == Verdict::Friendly {
        "Porting recipe"
    } else {
        "Findings"
    };
    let _ = writeln!(out, "<h4>{heading}</h4><pre>{}</pre>", esc(&text));
    if !l.parameters.is_empty() {
        out.push_str("<h4>Parameters and sections</h4><table><tr><th>name</th><th>role</th><th>kind</th><th>C type</th><th>bytes [lo, hi)</th><th>size</th><th>notes</th></tr>");
        for p in &l.parameters {
            let (range, size) = match &p.bytes {
                Some(b) => (format!("[{}, {})", b.lo, b.hi), b.size.to_string()),
                None => (String::new(), String::new()),
            };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>",
                esc(&p.name),
                esc(&format!("{:?}", p.role).to_lowercase()),
                esc(&format!("{:?}", p.kind).to_lowercase()),
                esc(p.type_text()),
                esc(&range),
                esc(&size),
                esc(&p.notes.join("; "))
            );
        }
        out.push_str("</table>\n");
    }
    for m in &l.mappings {
        let best = l.recommended_mapping.as_ref() == Some(&m.mapping);
        let label = match m.mapping.y_text() {
            Some(y) => format!("x = {}, y = {y}", m.mapping.x_text()),
            None => format!("x = {}", m.mapping.x_text()),
        };
        let _ = write!(
            out,
            "<h4>Mapping {}{}</h4><table class=\"mapping\"><tr><th>line</th><th>access</th><th>kind</th><th>requests per warp</th><th>sectors per warp</th><th>exact</th></tr>",
            esc(&label),
            if best { " (recommended)" } else { "" }
        );
        for a in &m.accesses {
            let _ = write!(
                out,
                "<tr{}><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>",
                if best { " class=\"best\"" } else { "" },
                a.line,
                esc(&a.text),
                esc(&a.kind),
                esc(&a.requests_per_warp),
                esc(&a.sectors_per_warp),
                if a.exact { "yes" } else { "bound" }
            );
        }
        let _ = writeln!(
            out,
            "<tr><th colspan=\"3\">all accesses</th><td><code>{}</code></td><td><code>{}</code></td><td></td></tr></table>",
            esc(&m.total_requests_per_warp),
            esc(&m.total_sectors_per_warp)
        );
    }
    if !l.shared_memory.is_empty() {
        out.push_str("<h4>Shared memory</h4><ul>");
        for s in &l.shared_memory {
            let _ = write!(
                out,
                "<li><code>{}</code> ({}): {}; {} bytes per block</li>",
                esc(&s.array),
                esc(&s.kind),
                esc(&s.message),
                esc(&s.bytes_for_block)
            );
        }
        out.push_str("</ul>\n");
    }
    if !l.divergence.is_empty() {
        out.push_str("<h4>Divergent branches</h4><ul>");
        for d in &l.divergence {
            let _ = write!(
                out,
                "<li>line {}: <code>{}</code>: {}</li>",
                d.line,
                esc(&d.condition),
                esc(&d.message)
            );
        }
        out.push_str("</ul>\n");
    }
    if !l.assumptions.is_empty() {
        out.push_str("<h4>Assumptions</h4><ul>");
        for a in &l.assumptions {
            let _ = write!(out, "<li>{}</li>", esc(a));
        }
        out.push_str("</ul>\n");
    }
    if let Some(o) = &l.observed {
        let _ = writeln!(
            out,
            "<h4>Profile</h4><p>{} runs, {} entries, {} iterations (trip {}..{}), {:.3} ms{}</p>",
            o.runs,
            o.entries,
            o.iterations,
            o.min_trip,
            o.max_trip,
            o.time_ns as f64 / 1e6,
            if o.dependences.is_empty() {
                String::new()
            } else {
                format!("; observed dependences: {}", esc(&o.dependences.join("; ")))
            }
        );
    }
    out.push_str("</section>\n");
    out
}
