//! The instantiated report as text for a person: one block per loop, numbers first, the
//! expressions they came from beside them.

use super::model::{Inputs, InstanceLoop, InstanceReport, Quantity};
use std::fmt::Write;

fn q(quantity: &Quantity) -> String {
    match quantity.value {
        Some(v) => format!("{v}"),
        None if !quantity.candidates.is_empty() => quantity.candidates.join(" | "),
        None => format!("? ({})", quantity.why.as_deref().unwrap_or("unknown")),
    }
}

fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

pub fn render(report: &InstanceReport) -> String {
    let mut out = head(&report.inputs);
    for l in &report.loops {
        out.push('\n');
        render_loop(&mut out, l);
    }
    out
}

/// The line above the loops: where the numbers come from.
pub fn head(i: &Inputs) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "instantiated with {} profiled run(s){}; counts: {} per entry; GPU {}; block {}; link {:.1} GB/s",
        i.profile_runs,
        if i.incomplete_runs > 0 {
            format!(" ({} incomplete)", i.incomplete_runs)
        } else {
            String::new()
        },
        i.count_statistic,
        i.gpu,
        i.block,
        i.link_bytes_per_s as f64 / 1e9
    );
    out
}

/// One loop's block (the caller puts an empty line before it).
pub fn render_loop(out: &mut String, l: &InstanceLoop) {
    render_values(out, l);
    render_grid(out, l);
    render_parameters(out, l);
    render_memory(out, l);
    render_offload(out, l);
    render_names(out, l);
}

/// What each legend name the loop's lines use stands for.
fn render_names(out: &mut String, l: &InstanceLoop) {
    let said = advisor::legend::said_in(&l.names, out);
    if !said.is_empty() {
        let _ = writeln!(out, "  names: {}", said.join("; "));
    }
}

/// The loop's line, its variables' values, the equations and conflicts they came from, and
/// the trip count they give.
fn render_values(out: &mut String, l: &InstanceLoop) {
    let _ = writeln!(
        out,
        "{}  {}  {}  (valid for: {})",
        l.id, l.function, l.verdict, l.valid_for
    );
    if !l.values.is_empty() {
        let _ = writeln!(out, "  values:");
        for v in &l.values {
            let _ = writeln!(out, "    {}", v.message);
        }
    }
    for e in l.equations.iter().filter(|e| e.used) {
        let _ = writeln!(
            out,
            "  equation: {} = {} (loop {}, {} entries{})",
            e.trip_count,
            e.observed,
            e.loop_id,
            e.entries,
            e.note
                .as_deref()
                .map(|n| format!("; {n}"))
                .unwrap_or_default()
        );
    }
    for c in &l.conflicts {
        let _ = writeln!(out, "  conflict: {c}");
    }
    if let Some(t) = &l.trip_count {
        let _ = writeln!(out, "  trip count: {} = {}", t.expr, q(t));
    }
}

/// The grid the mapping launches.
fn render_grid(out: &mut String, l: &InstanceLoop) {
    if let Some(g) = &l.grid {
        let _ = writeln!(
            out,
            "  grid: {}, threads x {}{} = {}, block {}, {} blocks, {} warps",
            g.mapping,
            q(&g.threads_x),
            g.threads_y
                .as_ref()
                .map(|y| format!(" y {}", q(y)))
                .unwrap_or_default(),
            g.threads.map_or("?".into(), |t| t.to_string()),
            g.block,
            g.blocks.map_or("?".into(), |b| b.to_string()),
            g.warps.map_or("?".into(), |w| w.to_string()),
        );
    }
}

/// Each parameter's section in bytes, with the expressions it was evaluated from.
fn render_parameters(out: &mut String, l: &InstanceLoop) {
    for p in &l.parameters {
        let section = match (&p.lo, &p.hi, &p.size) {
            (Some(lo), Some(hi), Some(size)) => format!(
                "[{}, {}) = {} bytes   from [{}, {}){}",
                q(lo),
                q(hi),
                q(size),
                lo.expr,
                hi.expr,
                match p.section_from.as_deref() {
                    Some("re-analysis") => ", re-analysed with the values (profiled run only)",
                    Some("allocation") => ", the whole object as allocated",
                    Some("profile") => {
                        ", the whole block it pointed to in the profiled run"
                    }
                    _ => "",
                }
            ),
            _ => format!(
                "unknown{}",
                p.notes
                    .first()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ),
        };
        let _ = writeln!(out, "  {:5} {}  {}", p.role, p.name, section);
    }
}

/// What the kernel costs on the GPU: global memory per launch access by access, shared
/// memory per block, and the divergence of branches.
fn render_memory(out: &mut String, l: &InstanceLoop) {
    if let Some(m) = &l.memory {
        let _ = writeln!(
            out,
            "  global memory per launch ({}): {} requests, {} bytes",
            m.mapping,
            m.requests_per_launch.map_or("?".into(), |r| r.to_string()),
            m.bytes_per_launch.map_or("?".into(), |r| r.to_string()),
        );
        for a in &m.accesses {
            let _ = writeln!(
                out,
                "    line {} {} `{}`: {} per warp{} -> {}",
                a.line,
                a.kind,
                a.text,
                q(&a.requests_per_warp),
                a.executions_per_warp
                    .as_deref()
                    .filter(|e| *e != "1")
                    .map(|e| format!(" x {e} per warp"))
                    .unwrap_or_default(),
                a.requests_per_launch.map_or_else(
                    || format!("? ({})", a.why.as_deref().unwrap_or("")),
                    |r| r.to_string()
                )
            );
        }
    }
    for s in &l.shared_memory {
        let _ = writeln!(
            out,
            "  shared memory `{}`: {} bytes per block",
            s.array,
            q(&s.bytes_per_block)
        );
    }
    for d in &l.divergence {
        let _ = writeln!(
            out,
            "  divergence line {} `{}`: {}",
            d.line,
            d.condition,
            match d.ratio {
                Some([lo, hi]) => format!("{:.1}%..{:.1}% of warps", lo * 100.0, hi * 100.0),
                None => "unknown".into(),
            }
        );
    }
}

/// The offload estimate and the notes.
fn render_offload(out: &mut String, l: &InstanceLoop) {
    if let Some(o) = &l.offload {
        let _ = writeln!(
            out,
            "  offload per entry: {} bytes in, {} bytes out ({} copies) {}; kernel {} ({} bytes); GPU {} vs CPU {}",
            o.bytes_to_device,
            o.bytes_to_host,
            o.copies,
            time(o.transfer_ns),
            time(o.kernel_ns),
            o.kernel_bytes,
            time(o.gpu_ns),
            time(o.cpu_ns)
        );
        let _ = writeln!(
            out,
            "  => {} (x{} entries: {} {})",
            o.verdict,
            o.entries,
            time(o.saved_ns.abs()),
            if o.saved_ns >= 0.0 { "saved" } else { "lost" }
        );
        for c in &o.caveats {
            let _ = writeln!(out, "     note: {c}");
        }
    }
    for n in &l.notes {
        let _ = writeln!(out, "  note: {n}");
    }
}
