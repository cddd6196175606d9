//! Porting recipes: the text form of a report. For each friendly loop, numbered steps a
//! programmer follows (kernel signature, index mapping and launch, allocations and copies
//! with exact byte counts, called functions, copy back); other loops get one rustc-style
//! finding each, with the source line and a `help:` line.

use crate::body_names::{body_names, on_device, BodyName};
use crate::legend::has_word;
use crate::model::{
    Branch, Device, ErrorEnd, GridMapping, LoopReport, NamedValue, ParamKind, Parameter, RedOp,
    Reduction, ReductionKind, Report, Role, Verdict,
};
use frontend::diagnostic::{Diagnostic, Label};
use frontend::unit::Unit;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Renders the whole report. `verbose` prints every loop in full.
pub fn render(report: &Report, units: &[Unit], verbose: bool) -> String {
    let mut out = String::new();
    let friendly = report
        .loops
        .iter()
        .filter(|l| l.verdict == Verdict::Friendly)
        .count();
    let profile = report
        .loops
        .iter()
        .filter(|l| l.verdict == Verdict::NeedsProfile)
        .count();
    let _ = writeln!(
        out,
        "warpwise: {} loops: {friendly} GPU-friendly, {profile} need a profile, {} not GPU-friendly\n",
        report.loops.len(),
        report.loops.len() - friendly - profile
    );
    for l in &report.loops {
        out.push_str(&loop_text(l, report, units, verbose));
        out.push('\n');
    }
    for s in &report.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    out
}

/// One loop's part of [`render`]: its recipe when friendly, its findings otherwise (and
/// the recipe too when `verbose`).
pub fn loop_text(l: &LoopReport, report: &Report, units: &[Unit], verbose: bool) -> String {
    match l.verdict {
        Verdict::Friendly => recipe(l, report),
        _ if verbose => findings(l, units, true) + &recipe(l, report),
        _ => findings(l, units, false),
    }
}

fn loop_title(l: &LoopReport) -> String {
    let vars = l
        .induction
        .as_ref()
        .map(|i| format!(" over `{}`", i.var))
        .unwrap_or_default();
    format!("{}: loop in `{}`{vars}", l.id, l.function)
}

/// One diagnostic per reason, located at the loop and its lines; with `verbose`, each
/// finding a grouped reason stands for as a note.
fn findings(l: &LoopReport, units: &[Unit], verbose: bool) -> String {
    let mut out = String::new();
    let what = match l.verdict {
        Verdict::NeedsProfile => "needs run-time evidence before it can be ported",
        _ => "is not GPU-friendly",
    };
    let _ = writeln!(out, "{} {what}", loop_title(l));
    let path = l.id.file.clone();
    let unit = units.iter().find(|u| u.path.to_string_lossy() == path);
    for reason in &l.reasons {
        let mut d = Diagnostic::warning(reason.message.clone()).with_code(reason.code.as_str());
        if let Some(&line) = reason.lines.first().or(Some(&l.line)) {
            let mut label = Label::new(path.clone(), line, 1);
            if let Some(text) = unit.and_then(|u| main_line_text(u, line)) {
                let col = first_non_space(&text);
                label = Label::new(path.clone(), line, col)
                    .with_end_col(text.trim_end().len() as u32 + 1)
                    .with_line_text(text);
            }
            d = d.with_primary(label);
        }
        if let Some(help) = &reason.help {
            d = d.with_help(help.clone());
        }
        if verbose {
            for each in &reason.instances {
                let at: Vec<String> = each.lines.iter().map(u32::to_string).collect();
                d = d.with_note(format!("line {}: {}", at.join(", "), each.message));
            }
        }
        out.push_str(&d.render(false));
    }
    names_line(&mut out, &l.names.iter().collect::<Vec<_>>());
    out
}

fn main_line_text(unit: &Unit, line: u32) -> Option<String> {
    let map = &unit.preprocessed.source_map;
    map.line_text(map.main_file(), line).map(str::to_string)
}

fn first_non_space(text: &str) -> u32 {
    text.find(|c: char| !c.is_whitespace())
        .map(|i| i as u32 + 1)
        .unwrap_or(1)
}

/// The numbered porting steps of a friendly loop.
fn recipe(l: &LoopReport, report: &Report) -> String {
    let mut out = String::new();
    let two_d = l.nest.len() == 2;
    let kind = if two_d {
        "2D kernel (this loop and the one inside it)"
    } else {
        "1D kernel"
    };
    let _ = writeln!(out, "{}: port it as a {kind}", loop_title(l));
    // Memory reached through loaded pointers is no kernel argument: step 3 says what to do.
    let arrays: Vec<&Parameter> = l
        .parameters
        .iter()
        .filter(|p| !matches!(p.kind, ParamKind::Scalar | ParamKind::Reached))
        .collect();
    let reached: Vec<&Parameter> = l
        .parameters
        .iter()
        .filter(|p| p.kind == ParamKind::Reached)
        .collect();
    // The names the body writes for the arrays: a pointer the loop copied from a field
    // (`volume = mq->cell_vol`) is such a name, not a scalar to pass (a host address).
    let body = body_names(l, &arrays);
    let scalars: Vec<&Parameter> = l
        .parameters
        .iter()
        .filter(|p| {
            p.kind == ParamKind::Scalar
                && !(is_pointer(p) && body.iter().any(|b| names_through(&b.text, &p.name)))
                && (p.role == Role::In
                    || (p.role == Role::Inout
                        && l.private
                            .iter()
                            .any(|v| v.initial_value && v.name == p.name)))
        })
        .collect();
    // Named by function and line, as `warpwise emit` names it: a function with several
    // loops gets a kernel per loop.
    let kernel = format!("{}_L{}_kernel", l.function, l.line);

    let legend = legend_of(l, report);
    let (bounds, hosted) = kernel_bounds(l, report, &scalars, &arrays);
    signature(&mut out, &kernel, &arrays, &scalars, &hosted);
    body_line(&mut out, &body);
    mapping(&mut out, l, &bounds, &hosted, &kernel);
    copies_in(&mut out, &arrays, &reached);
    let mut s = Steps { out, step: 4 };
    call_step(&mut s, l);
    private_step(&mut s, l);
    error_path_steps(&mut s, l);
    reduction_steps(&mut s, l);
    copy_back(&mut s, l, &arrays);
    let Steps { mut out, step } = s;
    performance(l, step, &mut out);
    closing_notes(&mut out, &legend, l);
    out
}

/// The legend entries a recipe may use: the loop's, then those of the inner loop a 2D
/// mapping takes its bounds from that the loop's do not name.
fn legend_of<'a>(l: &'a LoopReport, report: &'a Report) -> Vec<&'a NamedValue> {
    let mut names: Vec<&NamedValue> = l.names.iter().collect();
    if let Some(inner) = inner_loop(l, report) {
        for v in &inner.names {
            if !names.iter().any(|n| n.name == v.name) {
                names.push(v);
            }
        }
    }
    names
}

/// The inner loop of a 2D mapping, whose bounds the recipe writes beside the loop's.
fn inner_loop<'a>(l: &LoopReport, report: &'a Report) -> Option<&'a LoopReport> {
    let id = l.nest.get(1)?;
    report.loops.iter().find(|r| &r.id == id)
}

/// A recipe being written: its text so far and the number its next step takes.
struct Steps {
    out: String,
    step: usize,
}

/// Step 1: the kernel's signature, arrays as device pointers, then the scalars it takes and
/// the bounds the host computes for it.
fn signature(
    out: &mut String,
    kernel: &str,
    arrays: &[&Parameter],
    scalars: &[&Parameter],
    hosted: &[Hosted],
) {
    // 1. Signature.
    let mut params: Vec<String> = arrays.iter().map(|p| device_param(p)).collect();
    params.extend(scalars.iter().map(|p| match &p.c_type {
        Some(ty) => declaration(ty, &p.name),
        None => device_param(p),
    }));
    params.extend(hosted.iter().map(|h| format!("long {}", h.name)));
    let _ = writeln!(
        out,
        "  1. Write the kernel:\n       __global__ void {kernel}({})",
        params.join(", ")
    );
}

/// A C declaration of `name` with type `ty`: the name inside a declarator that wraps it
/// (`int (*cells)[2]`, `double m[3]`), else after the type (`double *vol`, `int n`).
fn declaration(ty: &str, name: &str) -> String {
    let ty = ty.trim();
    // `(*)`, `(*restrict)`, `(*const)`: the name goes before the group's `)`.
    if let Some(close) = ty
        .find("(*")
        .and_then(|at| ty[at..].find(')').map(|c| at + c))
    {
        let inner = &ty[..close];
        let space = if inner.ends_with('*') { "" } else { " " };
        return format!("{inner}{space}{name}{}", &ty[close..]);
    }
    if let Some(at) = ty.find('[').filter(|_| ty.ends_with(']')) {
        return format!("{} {name}{}", ty[..at].trim_end(), &ty[at..]);
    }
    if ty.ends_with('*') {
        format!("{ty}{name}")
    } else {
        format!("{ty} {name}")
    }
}

/// Step 1's second half: what the body writes for each array, as its device pointer.
fn body_line(out: &mut String, body: &[BodyName]) {
    if body.is_empty() {
        return;
    }
    let pairs: Vec<String> = body
        .iter()
        .map(|b| format!("`{}` for `{}`", device_name(&b.array), b.text))
        .collect();
    let _ = writeln!(
        out,
        "     In the body, write each array as its device pointer: {}.",
        pairs.join(", ")
    );
}

/// Whether the body's name `text` for an array is the pointer `name` or a path through it
/// (`mq->flag`): renamed, the body no longer reads the pointer there.
fn names_through(text: &str, name: &str) -> bool {
    text.strip_prefix(name).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with(['.', '[']) || rest.starts_with("->")
    })
}

/// Whether a scalar parameter holds an address (a pointer, an array's first element).
fn is_pointer(p: &Parameter) -> bool {
    p.c_type.as_deref().is_some_and(|t| t.contains(['*', '[']))
}

/// Step 2: how iterations map to threads (1D, or the nest on a 2D grid) and the launch, then
/// the bounds the host computes for the kernel ([`kernel_bounds`]).
fn mapping(
    out: &mut String,
    l: &LoopReport,
    bounds: &[LoopBounds],
    hosted: &[Hosted],
    kernel: &str,
) {
    let two_d = l.nest.len() == 2;
    // 2. Mapping and launch.
    let step_text = |b: &LoopBounds, k: &str| match (b.lower.as_str(), b.step.as_str()) {
        ("0", "1") => format!("{} = {k}", b.var),
        ("0", step) => format!("{} = {step}*{k}", b.var),
        (lower, "1") => format!("{} = {lower} + {k}", b.var),
        (lower, step) => format!("{} = {lower} + {step}*{k}", b.var),
    };
    match (bounds.first(), two_d) {
        (Some(b), false) => {
            // The thread's index must not be a name the recipe uses otherwise: the loop's own
            // variable (`k = ...; k = k;`), a parameter, a private variable or a reduction's
            // target (a private `k` next to the index `k` reads as one variable).
            let mut texts: Vec<&str> = vec![&b.var, &b.lower, &b.step, &b.trips];
            texts.extend(shown_names(l));
            let k = index_name(&["k", "tid", "thread_k"], &texts);
            let _ = writeln!(
                out,
                "  2. Map iterations to threads: {k} = blockIdx.x*blockDim.x + threadIdx.x; {}; return if {k} >= {}.\n     Launch {kernel}<<<({} + 255)/256, 256>>>(...).",
                step_text(b, k),
                b.trips,
                b.trips
            );
        }
        (Some(b), true) => {
            // The recommended mapping may put the outer loop on x (fewer requests per warp).
            let outer_on_x = l
                .recommended_mapping
                .as_ref()
                .is_some_and(|m| m.x == b.var && m.y.is_some());
            // As in 1D, the threads' indices avoid every name the recipe shows.
            let mut texts: Vec<&str> = vec![&b.var, &b.lower, &b.step, &b.trips];
            let inner = bounds.get(1);
            if let Some(j) = inner {
                texts.extend([j.var.as_str(), &j.lower, &j.step, &j.trips]);
            }
            texts.extend(shown_names(l));
            let kx = index_name(&["kx", "tx", "thread_x"], &texts);
            let ky = index_name(&["ky", "ty", "thread_y"], &texts);
            let (inner_var, inner_map, inner_trips, inner_grid) = match inner {
                Some(j) => (
                    j.var.clone(),
                    step_text(j, kx),
                    j.trips.clone(),
                    j.grid_trips.clone(),
                ),
                None => (
                    "the inner variable".into(),
                    format!("the inner variable from {kx}"),
                    "its trip count".into(),
                    "its trip count".into(),
                ),
            };
            if outer_on_x {
                let inner_y = match inner {
                    Some(j) => step_text(j, ky),
                    None => format!("the inner variable from {ky}"),
                };
                let _ = writeln!(
                    out,
                    "  2. Map the nest to a 2D grid, `{}` to x (consecutive threads) and `{inner_var}` to y:\n       {kx} = blockIdx.x*blockDim.x + threadIdx.x; {};\n       {ky} = blockIdx.y*blockDim.y + threadIdx.y; {inner_y};\n       return if {kx} >= {} or {ky} >= {inner_trips}.\n     Launch with dim3 block(32, 8); dim3 grid(({} + 31)/32, ({inner_grid} + 7)/8).",
                    b.var,
                    step_text(b, kx),
                    b.trips,
                    b.trips
                );
            } else {
                let _ = writeln!(
                    out,
                    "  2. Map the nest to a 2D grid, `{inner_var}` to x (consecutive threads, consecutive inner iterations) and `{}` to y:\n       {kx} = blockIdx.x*blockDim.x + threadIdx.x; {inner_map};\n       {ky} = blockIdx.y*blockDim.y + threadIdx.y; {};\n       return if {kx} >= {inner_trips} or {ky} >= {}.\n     Launch with dim3 block(32, 8); dim3 grid(({inner_grid} + 31)/32, ({} + 7)/8).",
                    b.var,
                    step_text(b, ky),
                    b.trips,
                    b.trips
                );
            }
            if let Some(j) = inner.filter(|j| j.grid_trips != j.trips) {
                let _ = writeln!(
                    out,
                    "     `{}` is the largest of `{}` over the outer loop's iterations: the inner loop's trip count depends on `{}`.",
                    j.grid_trips, j.host_trips, b.var
                );
            }
            let _ = writeln!(out, "     The inner loop's body becomes the kernel body; statements of the outer loop outside the inner one are computed in every thread.");
        }
        (None, _) => {
            let _ = writeln!(out, "  2. Map iterations to threads (the loop's induction could not be written in source terms).");
        }
    }
    if !hosted.is_empty() {
        let lines: Vec<String> = hosted
            .iter()
            .map(|h| format!("long {} = {};", h.name, h.text))
            .collect();
        let _ = writeln!(
            out,
            "     Compute on the host where the loop starts, and pass to the kernel: {}",
            lines.join(" ")
        );
    }
}

/// One loop's bounds as the kernel writes them.
struct LoopBounds {
    var: String,
    lower: String,
    step: String,
    trips: String,
    /// What the host sizes the grid by: `trips`, or a name for its largest value where the
    /// kernel computes it per thread.
    grid_trips: String,
    /// The trip count as the host writes it (`trips` reads the device's copies).
    host_trips: String,
}

/// A bound the host computes where the loop starts and passes to the kernel as a `long`
/// argument: `name` stands for the report's expression `text`.
struct Hosted {
    name: String,
    text: String,
}

/// The bounds of the loop and, on a 2D grid, of its inner loop. A bound that reads a name
/// the kernel takes no argument for (a structure's field `img->width`, a global, a value of
/// the legend such as `n_11`, memory the loop reads) is no expression the kernel can
/// evaluate: the host computes it where the loop starts and passes it (`k_trips`). Bounds
/// are integers, and a `long` holds every count and start a loop of `int`s or `long`s has.
fn kernel_bounds(
    l: &LoopReport,
    report: &Report,
    scalars: &[&Parameter],
    arrays: &[&Parameter],
) -> (Vec<LoopBounds>, Vec<Hosted>) {
    let mut loops: Vec<&crate::model::Induction> = l.induction.iter().collect();
    if l.nest.len() == 2 {
        loops.extend(inner_loop(l, report).and_then(|r| r.induction.as_ref()));
    }
    let scalars: BTreeSet<&str> = scalars.iter().map(|p| p.name.as_str()).collect();
    // Names the recipe shows, which a hosted bound's name must not take.
    let mut texts: Vec<String> = shown_names(l).map(str::to_string).collect();
    for ind in &loops {
        texts.extend([
            ind.var.clone(),
            ind.lower.to_string(),
            ind.step.to_string(),
            ind.trip_count.to_string(),
        ]);
    }
    let mut hosted: Vec<Hosted> = Vec::new();
    let mut bounds: Vec<LoopBounds> = Vec::new();
    for ind in loops {
        // A loop's bounds name its own variable as the loop finds it (`for (; c < n; c++)`
        // starts at `c`), a value of the host's; an inner loop's name the outer loop's
        // variable, which the kernel computes from the thread's index.
        let outer: Vec<&str> = bounds.iter().map(|b| b.var.as_str()).collect();
        let mut declared = scalars.clone();
        declared.extend(outer.iter().copied());
        let mut host = |role: &str, text: String| {
            // A bound that reads the outer loop's variable differs from thread to thread:
            // the host cannot compute it once (`a->rows[i]`), and the kernel reads it.
            // It reads the arrays there, by their device pointers (`d_A_i[i]`).
            let per_thread = outer.iter().any(|o| has_word(&text, o));
            if per_thread {
                return on_device(&text, arrays, &device_name);
            }
            if !reads_undeclared(&text, &declared) {
                return text;
            }
            let candidates = [
                format!("{}_{role}", ind.var),
                format!("{}_{role}_value", ind.var),
                format!("host_{}_{role}", ind.var),
            ];
            let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
            let shown: Vec<&str> = texts
                .iter()
                .map(String::as_str)
                .chain(hosted.iter().map(|h| h.name.as_str()))
                .collect();
            let name = index_name(&candidates, &shown).to_string();
            hosted.push(Hosted {
                name: name.clone(),
                text,
            });
            name
        };
        let lower = host("start", ind.lower.to_string());
        let step = host("step", ind.step.to_string());
        let host_trips = ind.trip_count.to_string();
        let trips = host("trips", host_trips.clone());
        // The grid is sized on the host: an inner trip count that depends on the outer
        // loop's variable (a triangular nest) sizes it by its largest value.
        let triangular = outer.iter().any(|o| has_word(&trips, o));
        bounds.push(LoopBounds {
            grid_trips: if triangular {
                format!("{}_trips_max", ind.var)
            } else {
                trips.clone()
            },
            var: ind.var.clone(),
            lower,
            step,
            trips,
            host_trips,
        });
    }
    (bounds, hosted)
}

/// Whether `text` reads a name that is not among `declared`: an identifier other than a
/// function's (`min(`).
fn reads_undeclared(text: &str, declared: &BTreeSet<&str>) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let called = text[i..].trim_start().starts_with('(');
            if !called && !declared.contains(&text[start..i]) {
                return true;
            }
        } else if b[i].is_ascii_digit() {
            // A number's digits and suffix (`8`, `1u`, `0x1fL`) name nothing.
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    false
}

/// How the host names a parameter's memory: the pointer, or `&v` for a variable's own
/// storage (a scalar or structure global, a local whose address is taken).
fn host_pointer(p: &Parameter) -> String {
    if p.by_address {
        format!("&{}", p.name)
    } else {
        p.name.clone()
    }
}

/// Step 3: the allocations and the copies in, with each array's byte section.
fn copies_in(out: &mut String, arrays: &[&Parameter], reached: &[&Parameter]) {
    // 3. Allocations and copies in.
    let _ = writeln!(
        out,
        "  3. Allocate device memory and copy inputs (byte sections relative to each pointer):"
    );
    for p in arrays {
        match &p.bytes {
            Some(bytes) => {
                let size = bytes.size.clone();
                let device = device_name(&p.name);
                let _ = writeln!(out, "       cudaMalloc(&{device}, {size});");
                if matches!(p.role, Role::In | Role::Inout) {
                    let _ = writeln!(out, "       cudaMemcpy({device}, (char *){} + {}, {size}, cudaMemcpyHostToDevice);", host_pointer(p), paren(&bytes.lo));
                }
            }
            None => {
                let _ = writeln!(out, "       {}: section not known statically ({}) — allocate and copy the whole array", p.name, p.notes.join("; "));
            }
        }
    }
    for p in reached {
        let direction = match p.role {
            Role::In => "reads",
            Role::Out => "writes",
            Role::Inout => "reads and writes",
        };
        let _ = writeln!(out, "       {}: the loop {direction} objects it reaches by following pointers, not one array: copy the structure deep (each object, with its pointers rewritten to device addresses) or allocate it with `cudaMallocManaged` so that host and device share its pointers", p.name);
    }
    if arrays
        .iter()
        .any(|p| p.bytes.as_ref().is_some_and(|b| b.lo != "0"))
    {
        let _ = writeln!(out, "     A section that does not start at 0 is copied to the start of its device buffer: pass `d_x - lo/sizeof(*x)` to the kernel so indices stay the same.");
    }
}

/// The step on the functions the loop calls, and what each needs on the device.
fn call_step(s: &mut Steps, l: &LoopReport) {
    let Steps { out, step } = s;
    // 4. Calls.
    if !l.calls.is_empty() {
        let _ = writeln!(out, "  {step}. Functions called in the loop:");
        for c in &l.calls {
            let what = match c.device {
                Device::Builtin => match crate::calls::device_equivalent(&c.name) {
                    Some(how) => how.to_string(),
                    None => "a CUDA device function: nothing to do".to_string(),
                },
                Device::Port => {
                    // Its callees that device code already has need no port, only the
                    // advice their device versions come with.
                    let (builtin, ported): (Vec<&String>, Vec<&String>) = c
                        .callees
                        .iter()
                        .partition(|n| crate::calls::is_device_available(n));
                    let mut what = if ported.is_empty() {
                        "defined in your program: add a `__device__` version".to_string()
                    } else {
                        let names: Vec<&str> = ported.iter().map(|n| n.as_str()).collect();
                        format!(
                            "defined in your program: add `__device__` versions of it and of {}",
                            names.join(", ")
                        )
                    };
                    for n in builtin {
                        if let Some(how) = crate::calls::device_equivalent(n) {
                            let _ = write!(what, "; it calls `{n}`: {how}");
                        }
                    }
                    what
                }
                Device::Allocator => {
                    "available on the device but slow: allocate before the kernel".to_string()
                }
                Device::HostOnly => match l.error_paths.iter().find(|e| e.calls.contains(&c.name)) {
                    Some(e) => format!(
                        "host-only, on the error path at line {}: it stays on the host (see the error path step)",
                        e.condition_line
                    ),
                    None => "host-only: must be removed from the loop".to_string(),
                },
                Device::Unknown => "unknown: must be removed from the loop".to_string(),
            };
            let _ = writeln!(out, "       {}: {what}", c.name);
        }
        *step += 1;
    }
}

/// The step on private variables: each thread's own copy, and which start from a value.
fn private_step(s: &mut Steps, l: &LoopReport) {
    let Steps { out, step } = s;
    // Private storage: each thread's own copy.
    if !l.private.is_empty() {
        let _ = writeln!(
            out,
            "  {step}. Private variables: each thread declares its own copy in the kernel:"
        );
        for p in &l.private {
            let _ = writeln!(out, "       {}: {}", p.name, p.why);
            if p.initial_value {
                let _ = writeln!(
                    out,
                    "       (pass `{}` by value: each copy starts from its value before the loop)",
                    p.name
                );
            }
        }
        *step += 1;
    }
}

/// One step per error path: the device flag and the failing iteration rerun on the host.
fn error_path_steps(s: &mut Steps, l: &LoopReport) {
    let Steps { out, step } = s;
    // Error paths: a flag on the device, the failing iteration again on the host.
    for e in &l.error_paths {
        let index = l.induction.as_ref().map_or("i", |i| i.var.as_str());
        let leaves = match e.ends {
            ErrorEnd::Exit => "exits",
            ErrorEnd::Jump => "leaves",
        };
        let _ = writeln!(
            out,
            "  {step}. Error path: the {} branch of the `if` at line {} ends in `{}` (line {}). In the kernel, replace that branch's body with `atomicMin(&d_err_at, iteration)` and skip the rest of the iteration; after the kernel copy `d_err_at` back, and when an iteration failed run the loop's body on the host for that `{index}` only: it prints and {leaves} as the program would (the iterations after it have run too).",
            match e.branch {
                Branch::Then => "then",
                Branch::Else => "else",
            },
            e.condition_line,
            e.ends_with,
            e.line,
        );
        *step += 1;
    }
}

/// One step per reduction: its kind, type, strategy and how to write it.
fn reduction_steps(s: &mut Steps, l: &LoopReport) {
    let Steps { out, step } = s;
    // Reductions: one step each.
    for r in &l.reductions {
        let _ = writeln!(
            out,
            "  {step}. Reduce {}: {} reduction of `{}`, {}.\n     {}",
            r.describe(),
            kind_name(r.kind),
            r.c_type,
            r.strategy,
            reduction_how(r)
        );
        *step += 1;
    }
}

/// The copy-back step (arrays written, scalars used after the loop) and the last values of
/// private variables read after it.
fn copy_back(s: &mut Steps, l: &LoopReport, arrays: &[&Parameter]) {
    let Steps { out, step } = s;
    // 5. Copy back.
    let outputs: Vec<&&Parameter> = arrays
        .iter()
        .filter(|p| matches!(p.role, Role::Out | Role::Inout))
        .collect();
    let mut back = Vec::new();
    for p in outputs {
        if let Some(bytes) = &p.bytes {
            back.push(format!(
                "       cudaMemcpy((char *){} + {}, {}, {}, cudaMemcpyDeviceToHost);",
                host_pointer(p),
                paren(&bytes.lo),
                device_name(&p.name),
                bytes.size
            ));
        }
    }
    // A reduction's result comes back as its step says.
    for p in l.parameters.iter().filter(|p| {
        p.kind == ParamKind::Scalar
            && p.role != Role::In
            && !l
                .reductions
                .iter()
                .any(|r| r.target == p.name || r.index.contains(&p.name))
    }) {
        back.push(format!("       `{}` is computed in the loop and used after it: return it through a device variable", p.name));
    }
    if !back.is_empty() || l.reductions.is_empty() {
        let _ = writeln!(out, "  {step}. Copy results back:");
        for line in back {
            let _ = writeln!(out, "{line}");
        }
        *step += 1;
    }
    for p in l
        .private
        .iter()
        .filter(|p| p.last_value && !l.parameters.iter().any(|q| q.name == p.name))
    {
        let _ = writeln!(
            out,
            "       `{}` is read after the loop: copy the last iteration's copy back",
            p.name
        );
    }
}

/// The lines after the steps: assumptions, what qualified names stand for, existing pragmas.
fn closing_notes(out: &mut String, legend: &[&NamedValue], l: &LoopReport) {
    if !l.assumptions.is_empty() {
        let _ = writeln!(out, "  assuming: {}", l.assumptions.join("; "));
    }
    names_line(out, legend);
    if !l.pragmas.is_empty() {
        let _ = writeln!(
            out,
            "  note: the loop already carries `#pragma {}`",
            l.pragmas.join("`, `#pragma ")
        );
    }
}

/// A `names:` line saying what each name of `legend` that `out` uses stands for, once each.
fn names_line(out: &mut String, legend: &[&NamedValue]) {
    let used = crate::legend::said_in(legend.iter().copied(), out);
    if !used.is_empty() {
        let _ = writeln!(out, "  names: {}", used.join("; "));
    }
}

fn kind_name(kind: ReductionKind) -> &'static str {
    match kind {
        ReductionKind::Scalar => "scalar",
        ReductionKind::Element => "element",
        ReductionKind::Histogram => "histogram",
        ReductionKind::Argmin => "arg-min",
        ReductionKind::Argmax => "arg-max",
    }
}

/// The value a thread's partial result starts from.
fn identity(r: &Reduction) -> String {
    let floating = matches!(r.c_type.as_str(), "float" | "double" | "long double");
    match r.operator {
        RedOp::Sum | RedOp::BitOr | RedOp::BitXor | RedOp::Or => "0".into(),
        RedOp::Product | RedOp::And => "1".into(),
        RedOp::BitAnd => "~0 (all bits set)".into(),
        RedOp::Min if floating => "INFINITY".into(),
        RedOp::Max if floating => "-INFINITY".into(),
        RedOp::Min => format!("the largest `{}`", r.c_type),
        RedOp::Max => format!("the smallest `{}`", r.c_type),
        RedOp::Assign => "the identity of `=`".into(),
    }
}

/// What the programmer does around the strategy.
fn reduction_how(r: &Reduction) -> String {
    match r.kind {
        ReductionKind::Scalar if r.operator == RedOp::Assign => format!(
            "Copy `{}`'s value before the loop to a device variable; each thread that assigns stores the same constant into it; copy it back.",
            r.target
        ),
        ReductionKind::Scalar => format!(
            "Each thread starts from {}; combine the kernel's result with `{}`'s value before the loop and return it through a device variable.",
            identity(r),
            r.target
        ),
        ReductionKind::Element => format!(
            "Each thread starts from {}; the block's result updates `{}` once (copied in and back with its array).",
            identity(r),
            r.target
        ),
        ReductionKind::Histogram => format!(
            "Every update of `{}` becomes one atomic; the array is copied in and back.",
            r.target
        ),
        ReductionKind::Argmin | ReductionKind::Argmax => format!(
            "Each thread keeps its best ({}, iteration) and its `{}`; the winner's values are the results, combined with their values before the loop.",
            r.target,
            r.index.join("`, `")
        ),
    }
}

fn device_param(p: &Parameter) -> String {
    let name = device_name(&p.name);
    // Memory with no C type to write: an untyped pointer, said so.
    let Some(ty) = p.c_type.as_deref().map(str::trim) else {
        let constness = if p.role == Role::In { "const " } else { "" };
        return format!("{constness}void *{name} /* element type not known */");
    };
    // A pointer to rows (`double (*)[N]`): the name goes inside the declarator. Rows of a
    // variable-length array cannot be a kernel parameter's type: a flat pointer instead.
    if let Some((at, close)) = ty
        .find("(*")
        .and_then(|at| ty[at..].find(')').map(|c| (at, at + c)))
    {
        let constness = if p.role == Role::In && !ty.starts_with("const") {
            "const "
        } else {
            ""
        };
        // `(*restrict)`: the pointer's own qualifiers stay with it.
        let qualifiers = ty[at + 2..close].trim();
        let qualifiers = if qualifiers.is_empty() {
            String::new()
        } else {
            format!("{qualifiers} ")
        };
        let (elem, dims) = (ty[..at].trim(), &ty[close + 1..]);
        return if dims.contains('*') {
            format!("{constness}{elem} *{qualifiers}{name} /* rows of a variable-length array: {name}[i * row_length + j] */")
        } else {
            format!("{constness}{elem} (*{qualifiers}{name}){dims}")
        };
    }
    // An array object (`int [128]`, a struct's member array): the kernel receives a pointer
    // to its first element, `int *d_a`, or to its first row, `int (*d_a)[16]`.
    if let Some(at) = ty.find('[').filter(|_| ty.ends_with(']')) {
        let constness = if p.role == Role::In && !ty.starts_with("const") {
            "const "
        } else {
            ""
        };
        let elem = ty[..at].trim();
        let rows = ty[at..].find(']').map(|e| &ty[at + e + 1..]).unwrap_or("");
        return if rows.is_empty() {
            format!("{constness}{elem} *{name}")
        } else {
            format!("{constness}{elem} (*{name}){rows}")
        };
    }
    // A pointer that is itself qualified (`double *restrict`, a `restrict` parameter): the
    // name follows the qualifiers, `double *restrict d_concs`, not another `*`.
    let mut unqualified = ty;
    while let Some(rest) = [
        "restrict",
        "__restrict",
        "__restrict__",
        "const",
        "volatile",
    ]
    .iter()
    .find_map(|q| unqualified.strip_suffix(q))
    .filter(|rest| rest.ends_with(|c: char| c == '*' || c.is_whitespace()))
    {
        unqualified = rest.trim_end();
    }
    if unqualified.len() < ty.len() && unqualified.ends_with('*') {
        let constness = if p.role == Role::In && !ty.starts_with("const") {
            "const "
        } else {
            ""
        };
        return format!("{constness}{ty} {name}");
    }
    if p.role == Role::In && ty.ends_with('*') && !ty.starts_with("const") {
        format!("const {ty}{name}")
    } else if ty.ends_with('*') {
        format!("{ty}{name}")
    } else {
        format!("{ty} *{name}")
    }
}

/// `d_a` for `a`, `d_c_data` for `c->data`.
fn device_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let collapsed = cleaned
        .split('_')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    format!("d_{collapsed}")
}

fn paren(e: &str) -> String {
    if e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        e.to_string()
    } else {
        format!("({e})")
    }
}

fn mapping_text(m: &GridMapping) -> String {
    match m.y_text() {
        Some(y) => format!("map {} to x and {y} to y", m.x_text()),
        None => format!("map {} to x", m.x_text()),
    }
}

/// Steps from the coalescing, shared-memory and divergence analyses (thesis §5).
fn performance(l: &LoopReport, mut step: usize, out: &mut String) {
    if let (Some(best), Some(gain)) = (&l.recommended_mapping, &l.mapping_gain) {
        let natural = l.mappings.iter().find(|m| m.mapping == gain.natural);
        let chosen = l.mappings.iter().find(|m| &m.mapping == best);
        // The access that gains most visibly: the first whose factor changes.
        let example = natural.zip(chosen).and_then(|(n, c)| {
            n.accesses
                .iter()
                .zip(&c.accesses)
                .find(|(a, b)| {
                    a.requests_per_warp != b.requests_per_warp && a.requests_per_warp != "1"
                })
                .map(|(a, b)| {
                    format!(
                        "{}: {} requests ({} sectors of 32 bytes) per warp -> {} ({})",
                        a.text,
                        a.requests_per_warp,
                        a.sectors_per_warp,
                        b.requests_per_warp,
                        b.sectors_per_warp
                    )
                })
        });
        let sectors = natural
            .zip(chosen)
            .map(|(n, c)| {
                format!(
                    " ({} -> {} sectors)",
                    n.total_sectors_per_warp, c.total_sectors_per_warp
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {step}. Coalescing: {} ({}); all accesses: {} -> {} requests per warp{sectors} instead of {}.",
            mapping_text(best),
            example.unwrap_or_else(|| "fewer requests".into()),
            gain.natural_requests_per_warp,
            gain.recommended_requests_per_warp,
            mapping_text(&gain.natural)
        );
        step += 1;
    }
    for area in &l.shared_memory {
        let what = match area.kind.as_str() {
            "broadcast" => format!(
                "every thread of a block reads all {} bytes",
                area.bytes_per_block
            ),
            _ => area.message.clone(),
        };
        let _ = writeln!(
            out,
            "  {step}. Stage `{}` in shared memory: {what}; {} bytes per block{}.",
            area.array,
            area.bytes_for_block,
            l.occupancy
                .as_ref()
                .map(|o| format!(" of {}", o.block))
                .unwrap_or_default()
        );
        if let Some(b) = &area.bank_conflicts {
            if let Some(p) = &b.padding {
                let _ = writeln!(
                    out,
                    "     Bank conflicts: {}-way ({}); {p}.",
                    b.degree, b.pattern
                );
            }
        }
        step += 1;
    }
    if let Some(o) = &l.occupancy {
        let _ = writeln!(out, "     Occupancy on {}: {}.", o.gpu, o.message);
    }
    for d in l.divergence.iter().filter(|d| d.ratio[1] != "0") {
        let _ = writeln!(
            out,
            "  {step}. Line {}: `{}` may diverge in [{}, {}] of the warps ({}).",
            d.line, d.condition, d.ratio[0], d.ratio[1], d.message
        );
        if let Some(help) = &d.help {
            let _ = writeln!(out, "     help: {help}");
        }
        step += 1;
    }
}

/// The names a recipe shows besides the loops' own: parameters, private variables and
/// reduction targets.
fn shown_names(l: &LoopReport) -> impl Iterator<Item = &str> {
    l.parameters
        .iter()
        .map(|p| p.name.as_str())
        .chain(l.private.iter().map(|p| p.name.as_str()))
        .chain(l.reductions.iter().map(|r| r.target.as_str()))
}

/// The first of `candidates` that is no identifier of `texts`: a name for the thread's index
/// that cannot be mistaken for a variable of the loop.
fn index_name<'a>(candidates: &[&'a str], texts: &[&str]) -> &'a str {
    let used = |name: &str| texts.iter().any(|t| has_word(t, name));
    candidates
        .iter()
        .copied()
        .find(|c| !used(c))
        .unwrap_or(candidates[candidates.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::index_name;

    #[test]
    fn array_objects_are_passed_as_pointers_to_their_first_element() {
        let param = |c_type: &str, role| super::Parameter {
            name: "A.data".into(),
            nested: true,
            role,
            kind: super::ParamKind::Array,
            c_type: (c_type != "?").then(|| c_type.into()),
            elem_bytes: Some(4),
            bytes: None,
            notes: Vec::new(),
            whole_object: None,
            storage: None,
            by_address: false,
            holds: None,
        };
        use super::{device_param, Role};
        assert_eq!(
            device_param(&param("int [128]", Role::Out)),
            "int *d_A_data"
        );
        assert_eq!(
            device_param(&param("float [8][16]", Role::In)),
            "const float (*d_A_data)[16]"
        );
        assert_eq!(
            device_param(&param("double *", Role::In)),
            "const double *d_A_data"
        );
        assert_eq!(
            device_param(&param("double *restrict", Role::Inout)),
            "double *restrict d_A_data"
        );
        assert_eq!(
            device_param(&param("int *restrict", Role::In)),
            "const int *restrict d_A_data"
        );
        assert_eq!(
            device_param(&param("double *const", Role::Out)),
            "double *const d_A_data"
        );
        assert_eq!(
            device_param(&param("?", Role::In)),
            "const void *d_A_data /* element type not known */"
        );
        assert_eq!(
            device_param(&param("int (*)[128]", Role::Out)),
            "int (*d_A_data)[128]"
        );
        assert_eq!(
            device_param(&param("double (*restrict)[3]", Role::In)),
            "const double (*restrict d_A_data)[3]"
        );
    }

    #[test]
    fn the_thread_index_is_not_a_name_of_the_loop() {
        let candidates = ["k", "tid", "thread_k"];
        assert_eq!(index_name(&candidates, &["i", "0", "1", "n"]), "k");
        assert_eq!(
            index_name(&candidates, &["k", "i - slice", "1", "2*slice"]),
            "tid"
        );
        assert_eq!(
            index_name(&candidates, &["k", "tid + 1", "1", "nk"]),
            "thread_k"
        );
        // A name inside another (`kx`, `nk`) is not the name.
        assert_eq!(index_name(&candidates, &["j", "kx", "1", "nk"]), "k");
    }

    #[test]
    fn scalars_are_declared_as_c_declares_them() {
        for (ty, name, declared) in [
            ("int", "n", "int n"),
            ("double *", "vol", "double *vol"),
            ("int (*)[2]", "cells", "int (*cells)[2]"),
            ("const double (*)[3][3]", "m", "const double (*m)[3][3]"),
            ("double [3]", "v", "double v[3]"),
            ("double *restrict", "p", "double *restrict p"),
            ("double (*restrict)[3]", "c", "double (*restrict c)[3]"),
        ] {
            assert_eq!(super::declaration(ty, name), declared);
        }
    }
}
