//! OpenMP offload ports (`warpwise emit --target openmp`): for each friendly loop a
//! `#pragma omp target teams distribute parallel for` whose `map`, `private` and
//! `reduction` clauses come from the kernel report, written into a copy of the user's file
//! together with a unified diff against the original. The original is never touched.
//! A sequential loop around ports gets a `target data` region (`region`), so its
//! iterations do not copy the arrays to the device and back each time.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

pub mod argext;
pub mod atomic;
mod choose;
pub mod clauses;
mod copies;
pub mod counters;
pub mod error;
pub mod error_flag;
pub mod globals;
pub mod region;
pub mod rewrite;
mod rows;
pub mod sections;
pub mod validate;

pub use clauses::{plan_port, ArrayMap, LoopPort};
pub use error::{OffloadError, PortError, RegionError, UnitError};
pub use region::{plan_regions, DataRegion};
pub use rewrite::{port_file, DeviceFunction, PortedFile};

use crate::plan::EmitError;
use advisor::model::{LoopReport, Verdict};
use frontend::loop_ref::{LoopRef, LoopSelector};
use frontend::unit::Unit;

/// How ports are written.
#[derive(Clone, Debug, Default)]
pub struct PortOptions {
    /// Add [`LoopPort::strict_clauses`] (`defaultmap(none)`): validation builds.
    pub strict: bool,
    /// Test only: arrays whose map section loses its last element.
    pub shrink: Vec<String>,
    /// Test only: arrays left out of the map clauses; for an array of rows, its written
    /// rows are not copied back.
    pub drop: Vec<String>,
}

/// The `--loop` selectors, parsed once; one that does not parse selects nothing, and is
/// reported as unmatched.
fn selectors(wanted: &[String]) -> Vec<Option<LoopSelector>> {
    wanted.iter().map(|w| w.parse().ok()).collect()
}

/// The loops of `unit` to port: the given ids, or every friendly loop that no other
/// friendly loop of the same function encloses (one target region per outermost nest),
/// each replaced by the friendly loops inside it where `choose` finds that better.
/// Returns the ports and, for loops that could not be ported, why.
pub fn plan_unit(
    unit: &Unit,
    reports: &[LoopReport],
    wanted: &[String],
    options: &PortOptions,
) -> (Vec<LoopPort>, Vec<(LoopRef, EmitError)>) {
    let chosen: Vec<&LoopReport> = if wanted.is_empty() {
        reports
            .iter()
            .filter(|r| r.verdict == Verdict::Friendly && !inside_friendly(r, reports))
            .collect()
    } else {
        let selectors = selectors(wanted);
        reports
            .iter()
            .filter(|r| selectors.iter().flatten().any(|s| s.matches(&r.id)))
            .collect()
    };
    let (mut ports, mut refused) = if wanted.is_empty() {
        choose::ports_of(unit, reports, &chosen, options)
    } else {
        let mut ports = Vec::new();
        let mut refused = Vec::new();
        for r in chosen {
            match plan_port(unit, reports, r, options) {
                Ok(p) => ports.push(p),
                Err(e) => refused.push((r.id.clone(), e)),
            }
        }
        (ports, refused)
    };
    // A port inside another port's loop would nest target regions; keep the outer one.
    let spans: Vec<(LoopRef, std::path::PathBuf, u32, u32)> = ports
        .iter()
        .map(|p| (p.loop_id.clone(), p.file.clone(), p.line, p.last_line))
        .collect();
    ports.retain(|p| {
        !spans.iter().any(|(id, file, first, last)| {
            id != &p.loop_id && file == &p.file && *first <= p.line && p.last_line <= *last
        })
    });
    // Unasked-for loops inside a ported loop run inside its target region.
    if wanted.is_empty() {
        refused.retain(|(id, _)| {
            let Some(r) = reports.iter().find(|r| &r.id == id) else {
                return true;
            };
            !ports
                .iter()
                .any(|p| p.function == r.function && p.line < r.line && r.line <= p.last_line)
        });
    }
    (ports, refused)
}

/// Whether a friendly loop of the same function encloses `r` (its nest lists `r`, or its
/// lines contain `r`'s): `r` is then part of that loop's target region.
pub fn inside_friendly(r: &LoopReport, reports: &[LoopReport]) -> bool {
    reports.iter().any(|o| {
        o.id != r.id
            && o.function == r.function
            && o.verdict == Verdict::Friendly
            && o.nest.iter().skip(1).any(|n| n == &r.id)
    })
}

/// Refuses a loop that is not friendly, with its reasons.
pub(crate) fn require_friendly(report: &LoopReport) -> Result<(), EmitError> {
    if report.verdict == Verdict::Friendly {
        return Ok(());
    }
    let mut msg = format!(
        "loop {} is not friendly (verdict: {}); warpwise only ports friendly loops",
        report.id,
        report.verdict.as_str()
    );
    for r in crate::plan::verdict_reasons(report) {
        msg.push_str(&format!("\n  {r}"));
    }
    if report.verdict == Verdict::NeedsProfile {
        msg.push_str("\n  help: run `warpwise profile` and pass the profile with `--profile FILE`");
    }
    Err(EmitError::refused(msg))
}

/// What porting a program's files gave.
#[derive(Debug, Default)]
pub struct Outcome {
    pub files: Vec<PortedFile>,
    pub ports: Vec<LoopPort>,
    /// The data regions written.
    pub regions: Vec<DataRegion>,
    /// Loops around ports that got no data region, and why (one line each).
    pub declined_regions: Vec<String>,
    /// Loops that were chosen (or asked for) and could not be ported, with why.
    pub refused: Vec<(LoopRef, EmitError)>,
    /// Inputs that did not load (their diagnostics).
    pub problems: Vec<String>,
    /// Asked-for loop ids that name no loop.
    pub unmatched: Vec<String>,
    /// Friendly loops not ported on their own because a ported loop calls their function:
    /// they run on the device inside that loop's target region. (loop, its function, the
    /// ported loop that calls it)
    pub inside_kernels: Vec<(LoopRef, String, LoopRef)>,
}

/// Analyses every input (`profile` settles `needs-profile` loops as `analyze --profile`
/// does), plans the ports of the `wanted` loops (all outermost friendly ones when empty)
/// and rewrites copies of their files.
pub fn port_inputs(
    inputs: &[frontend::preprocess::TranslationUnitInput],
    wanted: &[String],
    profile: Option<&profile::Profile>,
    options: &PortOptions,
) -> Outcome {
    let mut out = Outcome::default();
    let (units, unit_inputs) = load_units(inputs, &mut out);
    let view = advisor::program::ProgramView::new(&units);
    let summaries = advisor::summaries::Summaries::new(&view);
    let mut matched = vec![false; wanted.len()];
    let planned = plan_each_unit(
        &summaries,
        &units,
        &unit_inputs,
        wanted,
        profile,
        options,
        &mut matched,
    );
    let port_units = place_ports(&mut out, planned, &units, &unit_inputs, wanted);
    out.unmatched = wanted
        .iter()
        .zip(&matched)
        .filter(|(_, m)| !**m)
        .map(|(w, _)| w.clone())
        .collect();
    let declare = cross_file_functions(&out.ports, &units, &unit_inputs);
    let device_globals = apply_device_globals(&mut out, &units, &unit_inputs, &port_units);
    rewrite_files(&mut out, &declare, &device_globals, options);
    keep_written(&mut out);
    out
}

/// Loads every input as one unit of the program; an input that does not load is a problem
/// of the outcome. All files as one program, as `warpwise analyze` does: a helper defined
/// in another file is a program function with a summary, not an unknown external.
fn load_units<'i>(
    inputs: &'i [frontend::preprocess::TranslationUnitInput],
    out: &mut Outcome,
) -> (
    Vec<Unit>,
    Vec<&'i frontend::preprocess::TranslationUnitInput>,
) {
    let mut units = Vec::new();
    let mut unit_inputs = Vec::new();
    for input in inputs {
        match frontend::unit::load_unit(input) {
            Ok(u) => {
                units.push(u);
                unit_inputs.push(input);
            }
            Err(d) => out.problems.push(d.render(false)),
        }
    }
    (units, unit_inputs)
}

/// One unit's plan before the program-wide steps: its index, reports, ports and refusals.
type PlannedUnit = (
    usize,
    Vec<LoopReport>,
    Vec<LoopPort>,
    Vec<(LoopRef, EmitError)>,
);

/// Analyses each unit in the program and plans its ports, marking in `matched` the
/// `wanted` selectors that name one of its loops: (unit index, reports, ports, refused).
fn plan_each_unit(
    summaries: &advisor::summaries::Summaries<'_>,
    units: &[Unit],
    unit_inputs: &[&frontend::preprocess::TranslationUnitInput],
    wanted: &[String],
    profile: Option<&profile::Profile>,
    options: &PortOptions,
    matched: &mut [bool],
) -> Vec<PlannedUnit> {
    let selectors = selectors(wanted);
    let target = advisor::mapping::Target::default();
    let mut planned = Vec::new();
    for (index, (unit, input)) in units.iter().zip(unit_inputs).enumerate() {
        let mut reports = advisor::analyze::analyze_in_program(
            summaries,
            index,
            &advisor::analyze::Filter::default(),
            &target,
            &std::collections::HashMap::new(),
        );
        if let Some(p) = profile {
            profile::apply::apply(&mut reports, p);
        }
        for (k, s) in selectors.iter().enumerate() {
            if s.as_ref()
                .is_some_and(|s| reports.iter().any(|r| s.matches(&r.id)))
            {
                matched[k] = true;
            }
        }
        let (mut ports, mut refused) = plan_unit(unit, &reports, wanted, options);
        // The source map names files as the compiler saw them, from its working directory.
        if let Some(dir) = &input.working_dir {
            for p in ports.iter_mut().filter(|p| p.file.is_relative()) {
                p.file = dir.join(&p.file);
            }
        }
        // Before the program-wide steps: a port refused here calls nothing on the device.
        // A loop asked for by id is ported as asked.
        if wanted.is_empty() {
            let regions = region::plan_regions(unit, &reports, &ports);
            let copied = copies::copied_every_iteration(unit, &reports, &ports, &regions.regions);
            ports.retain(|p| !copied.iter().any(|(id, _)| id == &p.loop_id));
            for (id, why) in copied {
                let message = format!("{id}: {why}");
                refused.push((id, EmitError::refused(message)));
            }
        }
        planned.push((index, reports, ports, refused));
    }
    planned
}

/// Moves the planned ports, regions and refusals into `out`, leaving out (unless loops were
/// asked for by id) a loop whose function another port calls; returns each port's unit.
fn place_ports(
    out: &mut Outcome,
    planned: Vec<PlannedUnit>,
    units: &[Unit],
    unit_inputs: &[&frontend::preprocess::TranslationUnitInput],
    wanted: &[String],
) -> std::collections::BTreeMap<LoopRef, usize> {
    // Each port's unit.
    let mut port_units: std::collections::BTreeMap<LoopRef, usize> = Default::default();
    // A loop of a function that another port calls runs inside that port's target region
    // on the device; ported itself, it would launch a target region from device code in
    // every iteration of the kernel (XSBench's lookup calls `calculate_macro_xs`, whose
    // loops are friendly too). Unless asked for by id, the caller's port covers it.
    let mut called: std::collections::BTreeMap<String, LoopRef> = Default::default();
    for p in planned.iter().flat_map(|(_, _, ports, _)| ports) {
        for f in &p.device_functions {
            called.entry(f.clone()).or_insert_with(|| p.loop_id.clone());
        }
    }
    for (index, reports, mut ports, refused) in planned {
        let (unit, input) = (&units[index], unit_inputs[index]);
        if wanted.is_empty() {
            ports.retain(|p| match called.get(&p.function) {
                Some(kernel) if kernel != &p.loop_id => {
                    out.inside_kernels.push((
                        p.loop_id.clone(),
                        p.function.clone(),
                        kernel.clone(),
                    ));
                    false
                }
                _ => true,
            });
        }
        let mut regions = region::plan_regions(unit, &reports, &ports);
        if let Some(dir) = &input.working_dir {
            for r in regions.regions.iter_mut().filter(|r| r.file.is_relative()) {
                r.file = dir.join(&r.file);
            }
        }
        out.regions.extend(regions.regions);
        out.declined_regions.extend(regions.declined);
        for p in &ports {
            port_units.insert(p.loop_id.clone(), index);
        }
        out.ports.extend(ports);
        out.refused.extend(refused);
    }
    port_units
}

/// Program functions the ported loops call, defined in another file than the loop's, by
/// the file that defines them: clang compiles them for the device only inside
/// `declare target` there.
fn cross_file_functions(
    ports: &[LoopPort],
    units: &[Unit],
    unit_inputs: &[&frontend::preprocess::TranslationUnitInput],
) -> std::collections::BTreeMap<std::path::PathBuf, Vec<DeviceFunction>> {
    let callers: std::collections::BTreeSet<(String, std::path::PathBuf)> = ports
        .iter()
        .flat_map(|p| {
            p.device_functions
                .iter()
                .map(|f| (f.clone(), p.file.clone()))
        })
        .collect();
    let mut declare: std::collections::BTreeMap<std::path::PathBuf, Vec<DeviceFunction>> =
        Default::default();
    if !callers.is_empty() {
        for (unit, input) in units.iter().zip(unit_inputs) {
            let Ok(sites) = frontend::access_sites::access_sites(&unit.preprocessed) else {
                continue;
            };
            let map = &unit.preprocessed.source_map;
            for f in &sites.functions {
                let start = map.locate(f.span.start as usize);
                let end = map.locate(f.span.end.saturating_sub(1) as usize);
                if map.is_system_header(start.file) || start.file != end.file {
                    continue;
                }
                let mut path = map.path(start.file).to_path_buf();
                if let (Some(dir), true) = (&input.working_dir, path.is_relative()) {
                    path = dir.join(&path);
                }
                let called_elsewhere = callers
                    .iter()
                    .any(|(name, caller)| name == &f.name && caller != &path);
                let entry = declare.entry(path).or_default();
                if called_elsewhere && !entry.iter().any(|d| d.name == f.name) {
                    entry.push(DeviceFunction {
                        name: f.name.clone(),
                        first_line: start.line,
                        last_line: end.line,
                    });
                }
            }
        }
        declare.retain(|_, v| !v.is_empty());
    }
    declare
}

/// Plans the globals the device code reaches: declared on the device where they are
/// declared, and kept current around each kernel that reaches them. A port they refuse
/// leaves `out`; the others get their maps (and lose them from their `firstprivate`).
fn apply_device_globals(
    out: &mut Outcome,
    units: &[Unit],
    unit_inputs: &[&frontend::preprocess::TranslationUnitInput],
    port_units: &std::collections::BTreeMap<LoopRef, usize>,
) -> globals::GlobalPlan {
    let unit_refs: Vec<&Unit> = units.iter().collect();
    let dirs: Vec<Option<&std::path::Path>> = unit_inputs
        .iter()
        .map(|i| i.working_dir.as_deref())
        .collect();
    let placed: Vec<(&LoopPort, usize)> = out
        .ports
        .iter()
        .filter_map(|p| port_units.get(&p.loop_id).map(|&u| (p, u)))
        .collect();
    let device_globals = globals::plan_globals(&unit_refs, &dirs, &placed);
    for (id, why) in &device_globals.refused {
        out.ports.retain(|p| &p.loop_id != id);
        out.refused
            .push((id.clone(), EmitError::refused(format!("{id}: {why}"))));
    }
    for p in out.ports.iter_mut() {
        if let Some((to, tofrom)) = device_globals.maps.get(&p.loop_id) {
            p.global_maps = (to.clone(), tofrom.clone());
            for c in p.strict_clauses.iter_mut() {
                if let Some(list) = c
                    .strip_prefix("firstprivate(")
                    .and_then(|l| l.strip_suffix(')'))
                {
                    let kept: Vec<&str> = list
                        .split(", ")
                        .filter(|v| !to.iter().chain(tofrom).any(|g| g == v))
                        .collect();
                    *c = format!("firstprivate({})", kept.join(", "));
                }
            }
            p.strict_clauses.retain(|c| c != "firstprivate()");
        }
    }
    device_globals
}

/// Writes one rewritten copy per file, all its loops at once, into `out.files`; a loop
/// or region the rewrite could not place is refused or declined there.
fn rewrite_files(
    out: &mut Outcome,
    declare: &std::collections::BTreeMap<std::path::PathBuf, Vec<DeviceFunction>>,
    device_globals: &globals::GlobalPlan,
    options: &PortOptions,
) {
    let mut files: Vec<std::path::PathBuf> = out.ports.iter().map(|p| p.file.clone()).collect();
    files.extend(declare.keys().cloned());
    files.extend(device_globals.declare.keys().cloned());
    files.sort();
    files.dedup();
    for file in files {
        let ports: Vec<&LoopPort> = out.ports.iter().filter(|p| p.file == file).collect();
        let regions: Vec<&DataRegion> = out.regions.iter().filter(|r| r.file == file).collect();
        let functions = declare.get(&file).map(Vec::as_slice).unwrap_or(&[]);
        let globals = device_globals
            .declare
            .get(&file)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // A file that cannot be read or edited refuses all its loops with the same reason.
        let result = match std::fs::read_to_string(&file) {
            Ok(text) => port_file(
                &file,
                &text,
                &ports,
                &regions,
                functions,
                globals,
                options.strict,
            )
            .map_err(|e| EmitError::refused(e.to_string())),
            Err(e) => Err(EmitError::refused(format!(
                "cannot read `{}`: {e}",
                file.display()
            ))),
        };
        match result {
            Ok(f) => {
                for (id, e) in &f.failed {
                    out.refused
                        .push((id.clone(), EmitError::refused(e.to_string())));
                }
                for (id, e) in &f.failed_regions {
                    out.declined_regions.push(format!(
                        "no data region around the loop at {id}: {e}; each ported loop maps its own data"
                    ));
                }
                if !f.loops.is_empty() || !functions.is_empty() || !globals.is_empty() {
                    out.files.push(f);
                }
            }
            Err(e) => {
                for p in &ports {
                    out.refused.push((p.loop_id.clone(), e.clone()));
                }
            }
        }
    }
}

/// Keeps only the ports and regions that a written file holds.
fn keep_written(out: &mut Outcome) {
    let written: std::collections::BTreeSet<&LoopRef> =
        out.files.iter().flat_map(|f| &f.loops).collect();
    out.ports.retain(|p| written.contains(&p.loop_id));
    let written: std::collections::BTreeSet<&LoopRef> =
        out.files.iter().flat_map(|f| &f.regions).collect();
    out.regions.retain(|r| written.contains(&r.loop_id));
}
