//! The pragma of one loop's OpenMP offload port, from its kernel report: which loops are
//! collapsed, what is mapped in which direction, what is private, what is reduced, and
//! which updates become `atomic`.

use super::atomic::{AtomicForm, AtomicSite};
use super::counters::TextEdit;
use super::error::UnitError;
use super::sections::{c, covering, Section};
use crate::ctext::expr_roots;
use crate::plan::{
    dealias, declared_in, perfectly_nested_child, vla_pitch, written_in, Ctx, EmitError,
};
pub(super) use crate::text_aliases::is_identifier;
use crate::text_aliases::{scalars_written_inside, text_aliases};
use advisor::model::{
    Device, LoopReport, ParamKind, Quantity, RedOp, ReductionKind, Role, ValuePlace,
};
use advisor::value_name::{each_name, without_places};
use frontend::access_sites::{AccessMode, LoopSite};
use frontend::ir::Span;
use frontend::loop_ref::LoopRef;
use frontend::types::{Type, TypeId};
use frontend::unit::Unit;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One loop's port: where the pragma goes and what it says.
#[derive(Clone, Debug)]
pub struct LoopPort {
    pub loop_id: LoopRef,
    pub function: String,
    /// The file holding the loop, as the preprocessor named it, and the loop keyword's
    /// line and column there (1-based).
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    /// The loop statement's last line.
    pub last_line: u32,
    /// The loop statement in the unit's preprocessed text.
    pub span: Span,
    /// `#pragma omp target teams distribute parallel for ...`, clauses on continuation
    /// lines (`\` then a newline) when it is long.
    pub pragma: String,
    /// The reductions' update statements made atomic.
    pub atomics: Vec<AtomicSite>,
    /// Text the port replaces in the loop (its counters computed from the index, its body
    /// wrapped for an arg-min/arg-max).
    pub edits: Vec<TextEdit>,
    /// Lines written before the pragma, which open a block the edits close after the loop
    /// (an arg-min/arg-max's struct, `declare reduction` and variables).
    pub preamble: Option<String>,
    /// Clauses that make the compiler check the data clauses are complete
    /// (`defaultmap(none)` and the scalars' `firstprivate`, which is their default anyway):
    /// added for validation builds, where a variable left out is a compile error rather
    /// than a host address that happens to work under host offloading.
    pub strict_clauses: Vec<String>,
    /// Program functions the loop calls, directly or not: compiled for the device (those
    /// defined in another file get `#pragma omp declare target` there).
    pub device_functions: Vec<String>,
    /// The plain arrays the `map` clauses name, for a data region around several ports.
    pub arrays: Vec<ArrayMap>,
    /// Whether the `map` clauses also name structs or their members, which a data region
    /// does not merge.
    pub maps_structs: bool,
    /// The loop around this one whose port gave way to the ports inside it (its id), and
    /// the arrays it would have mapped: what a data region around it maps.
    pub enclosing: Option<(LoopRef, Vec<ArrayMap>)>,
    /// The host code after the loop that runs the first iteration that took an error path
    /// again (`super::error_flag`).
    pub rerun: Option<super::error_flag::Rerun>,
    /// Globals declared on the device (`declare target link`) that a function the loop
    /// calls reaches, mapped `to` and `tofrom` by the kernel; filled in for the whole
    /// program once every unit's ports are planned ([`super::globals`]).
    pub global_maps: (Vec<String>, Vec<String>),
    /// The variables its `reduction` clauses name: each thread's private copy is what the
    /// loop's own statements update, never what a function it calls reaches.
    pub reduced: Vec<String>,
    pub notes: Vec<String>,
}

/// One array of a port's `map` clauses: a variable in scope at the loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayMap {
    pub name: String,
    /// The section mapped; `None`: the whole array (a declared array's own type).
    pub section: Option<Section>,
    /// The bytes `[lo, hi)` the section covers and the unit it counts in (report
    /// expressions): sections of one array are united there, where bounds compare.
    pub bytes: Option<(Quantity, Quantity, Quantity)>,
    /// The loop reads it (`to` or `tofrom`).
    pub read: bool,
    /// The loop writes it (`tofrom`).
    pub written: bool,
}

/// Direction of a `map` clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    To,
    ToFrom,
}

impl Dir {
    fn of(role: Role) -> Dir {
        match role {
            Role::In => Dir::To,
            // `from` would copy device memory the loop never wrote (holes of a strided
            // section, the rest of a covering row) over the host's values.
            Role::Out | Role::Inout => Dir::ToFrom,
        }
    }
    fn keyword(self) -> &'static str {
        match self {
            Dir::To => "to",
            Dir::ToFrom => "tofrom",
        }
    }
}

/// Plans the port of `report`, one of `reports` of `unit`.
pub fn plan_port(
    unit: &Unit,
    reports: &[LoopReport],
    report: &LoopReport,
    options: &super::PortOptions,
) -> Result<LoopPort, EmitError> {
    super::require_friendly(report)?;
    let refuse = |m: String| refusal(report, m);
    let device_functions = device_functions(report)?;
    let induction = report
        .induction
        .as_ref()
        .ok_or_else(|| refuse("the loop is not normalizable".into()))?;
    let ctx = Ctx::new(unit, report)?;
    let site = ctx
        .loop_site(&report.id)
        .ok_or_else(|| refuse("the loop's text was not found".into()))?;
    let scope = Scope {
        unit,
        reports,
        report,
        options,
        ctx: &ctx,
        site,
        induction,
    };
    let form = check_loop_form(&scope)?;
    let mut notes = form.counters.notes.clone();
    let mut clauses = Vec::new();
    let loop_vars = collapse_loops(&scope, &mut clauses, &mut notes);
    // Reductions first: their targets are neither mapped nor private.
    let reductions = plan_reductions(&scope, &mut notes)?;
    let args_port = plan_arg_port(&scope, &reductions.args, &form.counters, &mut notes)?;
    let privates = plan_privates(&scope, &loop_vars, &reductions)?;
    let claimed = Claimed {
        loop_vars,
        reductions,
        privates,
    };
    let (data, trees) = plan_data(&scope, &form, &claimed, &mut notes)?;
    data_clauses(
        &data,
        trees.as_ref(),
        &claimed,
        args_port.as_ref(),
        &mut clauses,
        &mut notes,
    );
    let mut edits = collect_edits(
        form.counters.edits,
        args_port.as_ref(),
        form.returned_members,
        &claimed.reductions.grouped,
        &mut notes,
    );
    let flag_port = plan_error_flag(
        &scope,
        args_port.is_some(),
        trees.is_some(),
        &mut edits,
        &mut clauses,
        &mut notes,
    )?;
    let rerun = flag_port.as_ref().map(|f| f.rerun.clone());
    let preamble = args_port
        .map(|a| a.preamble)
        .or(flag_port.map(|f| f.preamble));
    let preamble = place_tree_maps(&scope, trees, preamble, form.start.file, &mut edits)?;
    for a in &report.assumptions {
        notes.push(format!("assumes {a}"));
    }
    Ok(LoopPort {
        loop_id: report.id.clone(),
        function: report.function.clone(),
        file: form.file,
        line: form.start.line,
        col: form.start.col,
        last_line: form.end.line,
        span: site.span,
        pragma: pragma_text("#pragma omp target teams distribute parallel for", &clauses),
        atomics: claimed.reductions.atomics,
        edits,
        preamble,
        device_functions,
        global_maps: Default::default(),
        reduced: claimed
            .reductions
            .reduced
            .iter()
            .map(|(_, t)| t.clone())
            .collect(),
        strict_clauses: strict_clauses(&data.firstprivate),
        maps_structs: !data.struct_members.is_empty() || !data.struct_pointers.is_empty(),
        enclosing: None,
        arrays: data.arrays,
        rerun,
        notes,
    })
}

/// The clauses of a validation build: `defaultmap(none)`, and the scalars each thread
/// reads a copy of as `firstprivate`.
fn strict_clauses(firstprivate: &[String]) -> Vec<String> {
    std::iter::once("defaultmap(none)".to_string())
        .chain(
            (!firstprivate.is_empty())
                .then(|| format!("firstprivate({})", firstprivate.join(", "))),
        )
        .collect()
}

/// What every phase of a port's plan reads: the loop, its report and the options.
struct Scope<'s, 'u> {
    unit: &'u Unit,
    reports: &'u [LoopReport],
    report: &'u LoopReport,
    options: &'u super::PortOptions,
    ctx: &'s Ctx<'u>,
    site: &'s LoopSite,
    induction: &'u advisor::model::Induction,
}

impl Scope<'_, '_> {
    /// The refusal of this loop's port: `message` after the loop's id.
    fn refuse(&self, message: String) -> EmitError {
        refusal(self.report, message)
    }
}

/// The refusal of `report`'s port: `message` after the loop's id.
fn refusal(report: &LoopReport, message: String) -> EmitError {
    EmitError::refused(format!("{}: {message}", report.id))
}

/// Decides which program functions the loop calls for the device (directly or not, off
/// its error paths); a call with no device version refuses the port.
fn device_functions(report: &LoopReport) -> Result<Vec<String>, EmitError> {
    let mut device_functions: Vec<String> = Vec::new();
    // A call on an error path runs on the host only, in the re-run of the failing iteration.
    let on_error_path = |name: &str| {
        report
            .error_paths
            .iter()
            .any(|e| e.calls.iter().any(|c| c == name))
    };
    for c in report.calls.iter().filter(|c| !on_error_path(&c.name)) {
        match c.device {
            Device::Builtin => {}
            Device::Port => {
                for f in std::iter::once(&c.name).chain(&c.callees) {
                    if !device_functions.contains(f) {
                        device_functions.push(f.clone());
                    }
                }
            }
            other @ (Device::HostOnly | Device::Allocator | Device::Unknown) => {
                return Err(refusal(
                    report,
                    format!("calls `{}` ({other}), which has no device version", c.name),
                ))
            }
        }
    }
    Ok(device_functions)
}

/// The loop's text as the port takes it: the returned members it reads through a local,
/// its second counters, and where it is written.
struct LoopForm {
    returned_members: Vec<TextEdit>,
    counters: super::counters::CounterPort,
    /// The loop keyword's place and the loop's last character's.
    start: frontend::source_map::Location,
    end: frontend::source_map::Location,
    file: PathBuf,
    /// The variables of the start the port writes into a header without one: each thread
    /// reads its copy (`firstprivate`).
    start_names: Vec<String>,
}

/// Decides whether the loop's text has OpenMP's canonical form (a `for` with one
/// initialization and a canonical increment once its counters are computed from the
/// index), reads no member the port cannot rewrite, and is written in a file of its own.
fn check_loop_form(scope: &Scope<'_, '_>) -> Result<LoopForm, EmitError> {
    let (ctx, site, induction) = (scope.ctx, scope.site, scope.induction);
    let refuse = |m: String| scope.refuse(m);
    let map = &scope.unit.preprocessed.source_map;
    // A member of a struct a call returns, `(f(x)).r`, is read through a local the port
    // declares (`({ __typeof__(f(x)) v = f(x); v.r; })`): clang 16 rejects the member of
    // an rvalue in a target region ("expected addressable lvalue in 'map' clause").
    let returned_members = returned_member_edits(ctx.slice(site.span), site.span.start, map)
        .map_err(|access| {
            refuse(format!(
                "the body reads a member of a struct a call returns, `{access}`, in a shape the port does not rewrite (over several lines, or one inside another): clang 16 rejects it in a target region (\"expected addressable lvalue in 'map' clause\"); assign the call's result to a local first"
            ))
        })?;
    if let Some(access) = member_through_address(ctx.slice(site.span)) {
        return Err(refuse(format!(
            "the body reads a member through an address it takes, `{access}` (a macro's `(&p[i])->red`, say): clang 16 rejects it in a target region (\"expected addressable lvalue in 'map' clause\"); write it `p[i].red`"
        )));
    }
    let keyword = ctx.slice(site.keyword);
    if keyword != "for" {
        return Err(refuse(format!(
            "a `{keyword}` loop: OpenMP distributes only `for` loops in canonical form; rewrite it as `for ({} = {}; {} < {}; {} += {})` first",
            induction.var, induction.lower, induction.var, induction.upper, induction.var, induction.step
        )));
    }
    // A loop without an initialization (`for (; x < n; x++)`, continuing where a previous
    // statement left `x`) is given its start, as the loop finds it: OpenMP's canonical form
    // starts `for (x = ...;`.
    let mut start: Option<String> = None;
    if let Some(init) = for_init(ctx.slice(site.span)) {
        if init.trim().is_empty() {
            start = Some(written_start(scope).map_err(|why| {
                refuse(format!(
                    "the loop has no initialization, and OpenMP's canonical loop form starts `for ({} = ...;`: {why}; write the start there",
                    induction.var
                ))
            })?);
        }
        let toks = crate::ctext::code_tokens(init);
        let mut depth = 0i32;
        let comma = toks.iter().position(|t| {
            match crate::ctext::tok_text(init, t) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                "," => return depth == 0,
                _ => {}
            }
            false
        });
        if let Some(c) = comma {
            return Err(refuse(format!(
                "the loop's initialization `{}` also sets `{}`: OpenMP's canonical loop form takes `{} = ...` alone; assign the rest before the loop",
                init.trim(),
                init[toks[c].end..].trim(),
                induction.var
            )));
        }
    }
    // Second counters (`p++`, `k += 2` beside `i++`) are computed from the index in the
    // body; the increment is checked as it is once their updates are dropped.
    let mut counters = super::counters::plan_counters(
        ctx,
        scope.unit,
        site,
        scope.report,
        induction,
        start.as_deref(),
    )
    .map_err(|why| {
        refuse(format!(
            "{why}; or compute it from `{}` yourself",
            induction.var
        ))
    })?;
    let start_names = start.as_deref().map(identifiers).unwrap_or_default();
    if let Some(start) = start {
        // The statement's second token is its `(`: `for (;` becomes `for (x = start;`.
        if counters.replaced.iter().any(|(first, _, _)| *first <= 1) {
            return Err(refuse(
                "the loop has no initialization, and its counters' rewrite takes its start: write the start there".into(),
            ));
        }
        let init = format!("{} = {start}", induction.var);
        counters.replaced.push((1, 1, format!("({init}")));
        counters.edits = super::counters::text_edits(ctx, scope.unit, site, &counters.replaced)
            .map_err(|original| refuse(format!("{original}: write the loop's start by hand")))?;
        counters.notes.push(format!(
            "the loop starts `for ({init};`, the value it finds there"
        ));
    }
    if let Some(step) = counters
        .increment
        .as_deref()
        .or_else(|| for_increment(ctx.slice(site.span)))
    {
        if !canonical_increment(step, &induction.var) {
            return Err(refuse(format!(
                "the loop's increment `{}` is not OpenMP's canonical `{v}++` or `{v} += step`: move the rest into the body",
                step.trim(),
                v = induction.var
            )));
        }
    }
    let start = map.locate(site.keyword.start as usize);
    let end = map.locate(site.span.end.saturating_sub(1) as usize);
    if map.is_system_header(start.file) || end.file != start.file {
        return Err(refuse(
            "the loop is written by a macro or in a system header".into(),
        ));
    }
    let file = map.path(start.file).to_path_buf();
    Ok(LoopForm {
        returned_members,
        counters,
        start,
        end,
        file,
        start_names,
    })
}

/// The start a loop without an initialization is given (`for (x = start;`): the loop's
/// start as the report writes it, a C expression of the names as the loop finds them; an
/// error says why there is none to write.
fn written_start(scope: &Scope<'_, '_>) -> Result<String, String> {
    let (report, induction) = (scope.report, scope.induction);
    let lower = induction.lower.text();
    let toks = crate::ctext::code_tokens(lower);
    let word = |k: usize| toks.get(k).map(|t| crate::ctext::tok_text(lower, t));
    let names_itself = (0..toks.len()).any(|k| word(k) == Some(induction.var.as_str()));
    let calls = (0..toks.len()).any(|k| {
        word(k).is_some_and(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
            && word(k + 1) == Some("(")
    });
    if names_itself {
        return Err(format!(
            "it starts from the value `{}` holds, which `for ({v} = {v};` cannot say",
            induction.var,
            v = induction.var
        ));
    }
    if advisor::value_name::has_place(lower) || calls {
        return Err(format!(
            "its start, `{lower}`, is no C expression of the names there"
        ));
    }
    // Each thread computes the start from its copies of scalars; memory it would read
    // (`row[k]`, `s.n`, `p->n`) is not mapped for it.
    if lower.contains(['[', '.']) || lower.contains("->") {
        return Err(format!("its start, `{lower}`, reads memory"));
    }
    // An arg-min's and the error flag's rewrites of the loop hold its text as written.
    let arg_reduction = report
        .reductions
        .iter()
        .any(|r| matches!(r.kind, ReductionKind::Argmin | ReductionKind::Argmax));
    if arg_reduction || !report.error_paths.is_empty() {
        return Err("the port's rewrite of the loop keeps its text as written".into());
    }
    Ok(lower.to_string())
}

/// The identifiers of the C expression `text`, keywords aside, once each.
fn identifiers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in crate::ctext::code_tokens(text) {
        let w = crate::ctext::tok_text(text, &t);
        if t.kind == crate::ctext::TokKind::Ident
            && !crate::ctext::is_keyword(w)
            && !out.iter().any(|o| o == w)
        {
            out.push(w.to_string());
        }
    }
    out
}

/// Decides which loops the port collapses: pushes the `collapse` clause and returns the
/// loop variables (the loop's own, then the collapsed inner loops').
fn collapse_loops(
    scope: &Scope<'_, '_>,
    clauses: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let report = scope.report;
    let mut collapsed = collapse(
        scope.ctx,
        scope.unit,
        scope.reports,
        report,
        scope.site,
        notes,
    );
    // An arg-min/arg-max numbers the outer loop's iterations; the inner loop runs inside one.
    let arg_reduction = report
        .reductions
        .iter()
        .any(|r| matches!(r.kind, ReductionKind::Argmin | ReductionKind::Argmax));
    if arg_reduction && collapsed.len() > 1 {
        collapsed.truncate(1);
        notes.push("not collapsed: the arg-min/arg-max numbers the outer loop's iterations".into());
    }
    // The error flag records the outer loop's iteration, which the host runs again whole.
    if !report.error_paths.is_empty() && collapsed.len() > 1 {
        collapsed.truncate(1);
        notes.push("not collapsed: the error flag records the outer loop's iteration".into());
    }
    if collapsed.len() > 1 {
        clauses.push(format!("collapse({})", collapsed.len()));
    }
    std::iter::once(scope.induction.var.clone())
        .chain(collapsed.iter().skip(1).cloned())
        .collect()
}

/// The loop's reductions as the port writes them.
struct Reductions {
    /// The `reduction` clauses' operators and variables.
    reduced: Vec<(String, String)>,
    /// `=` reductions: flags every assigning iteration sets to the same value, mapped
    /// `tofrom` and stored atomically.
    flags: Vec<String>,
    atomics: Vec<AtomicSite>,
    /// Parentheses that group the rest of a sum after its target (`x = x + (a + b)`).
    grouped: Vec<TextEdit>,
    /// The arg-min/arg-max reductions.
    args: Vec<crate::argext::ArgExtremum>,
}

impl Reductions {
    /// Whether `n` is a reduction's variable: scalar accumulators are the reduction
    /// clause's; arrays updated atomically are mapped.
    fn covers(&self, n: &str) -> bool {
        self.reduced.iter().any(|(_, t)| t == n)
            || self.flags.iter().any(|f| f == n)
            || self
                .args
                .iter()
                .flat_map(|a| std::iter::once(&a.target).chain(&a.partners))
                .any(|v| v == n)
    }
}

/// Decides how each of the loop's reductions is ported: a `reduction` clause, an atomic
/// update or write, or an arg-min/arg-max; refuses one OpenMP cannot express.
fn plan_reductions(
    scope: &Scope<'_, '_>,
    notes: &mut Vec<String>,
) -> Result<Reductions, EmitError> {
    let (ctx, unit, site, report) = (scope.ctx, scope.unit, scope.site, scope.report);
    let refuse = |m: String| scope.refuse(m);
    let mut reduced: Vec<(String, String)> = Vec::new();
    let mut flags: Vec<String> = Vec::new();
    let mut atomics = Vec::new();
    let mut grouped: Vec<TextEdit> = Vec::new();
    let mut needs_openmp_51 = false;
    let mut args: Vec<crate::argext::ArgExtremum> = Vec::new();
    for r in &report.reductions {
        let lines = || {
            r.lines
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if r.operator == RedOp::Assign && r.kind == ReductionKind::Scalar {
            atomics.extend(atomic_sites(
                ctx,
                unit,
                site,
                r,
                AtomicForm::Write,
                &mut grouped,
            )?);
            flags.push(r.target.clone());
            notes.push(format!(
                "{} is stored with `#pragma omp atomic write` (lines {}) and mapped `tofrom`: the iterations that assign it store the same value",
                r.describe(),
                lines()
            ));
            continue;
        }
        let op = omp_operator(r.operator).ok_or_else(|| {
            refuse(format!(
                "{} is a reduction with `{}`, which OpenMP has no reduction for",
                r.describe(),
                r.operator
            ))
        })?;
        // A global or static scalar (`static double R23` of NPB IS's `randlc`) is an
        // `Element` for the analysis, a variable for OpenMP: a clause reduces it (and maps
        // it `tofrom`, as a combined target construct does its reduction variables).
        let plain_variable = r.kind == ReductionKind::Element
            && r.index.is_empty()
            && r.target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        match r.kind {
            ReductionKind::Scalar if r.index.is_empty() => {
                reduced.push((op.to_string(), r.target.clone()));
            }
            _ if plain_variable => {
                reduced.push((op.to_string(), r.target.clone()));
            }
            ReductionKind::Element | ReductionKind::Histogram
                if matches!(op, "+" | "*" | "&" | "|" | "^") =>
            {
                atomics.extend(atomic_sites(
                    ctx,
                    unit,
                    site,
                    r,
                    AtomicForm::Update,
                    &mut grouped,
                )?);
                notes.push(format!(
                    "{} is updated with `#pragma omp atomic update` (lines {})",
                    r.describe(),
                    lines()
                ));
            }
            ReductionKind::Element | ReductionKind::Histogram if matches!(op, "min" | "max") => {
                let form = AtomicForm::Compare {
                    max: op == "max",
                    c_type: r.c_type.clone(),
                };
                atomics.extend(atomic_sites(ctx, unit, site, r, form, &mut grouped)?);
                needs_openmp_51 = true;
                notes.push(format!(
                    "{} is updated with `#pragma omp atomic compare` (lines {})",
                    r.describe(),
                    lines()
                ));
            }
            ReductionKind::Argmin | ReductionKind::Argmax => {
                args.push(
                    crate::argext::check(r, &|n: &str| source_name(ctx, n)).map_err(&refuse)?,
                );
            }
            _ => {
                return Err(refuse(format!(
                    "{} ({:?}): this reduction kind is not generated for OpenMP",
                    r.describe(),
                    r.kind
                )))
            }
        }
    }
    if needs_openmp_51 {
        notes.push("`atomic compare` is OpenMP 5.1: build with `-fopenmp-version=51` where the compiler's default is older (clang 16)".into());
    }
    let floating = report.reductions.iter().any(reassociates_floats);
    if floating && !report.assumptions.iter().any(|a| a.contains("reassociat")) {
        notes.push("the floating-point reduction is reassociated: its rounding may differ from the sequential loop's".into());
    }
    Ok(Reductions {
        reduced,
        flags,
        atomics,
        grouped,
        args,
    })
}

/// Decides the port of the loop's arg-min/arg-max reductions, if any: its variables are
/// copied in the body and combined by the port's own `declare reduction`.
fn plan_arg_port(
    scope: &Scope<'_, '_>,
    args: &[crate::argext::ArgExtremum],
    counters: &super::counters::CounterPort,
    notes: &mut Vec<String>,
) -> Result<Option<super::argext::ArgPort>, EmitError> {
    if args.is_empty() {
        return Ok(None);
    }
    if counters.finals {
        return Err(scope.refuse(format!(
            "an arg-{} beside a counter read after the loop is not generated: the counter's final value would have to follow the combined values; compute the counter from `{}` after the loop yourself",
            args[0].op(),
            scope.induction.var
        )));
    }
    let port = super::argext::plan_args(
        scope.ctx,
        scope.unit,
        scope.site,
        scope.report,
        scope.induction,
        args,
        &counters.replaced,
    )
    .map_err(|why| scope.refuse(format!("an arg-{}: {why}", args[0].op())))?;
    notes.extend(port.notes.iter().cloned());
    Ok(Some(port))
}

/// The variables the loop's own clauses claim before any map.
struct Claimed {
    /// The loop's variable and those of the loops collapsed with it.
    loop_vars: Vec<String>,
    reductions: Reductions,
    privates: Privates,
}

/// The private copies' clauses.
struct Privates {
    private: Vec<String>,
    lastprivate: Vec<String>,
    /// `firstprivate`: assigned only under a test whose outcome is fixed for the loop.
    starts_from_entry: Vec<String>,
}

/// Decides which variables are `private`, `lastprivate` or `firstprivate` (starting from
/// their value before the loop); refuses one that would need two of them.
fn plan_privates(
    scope: &Scope<'_, '_>,
    loop_vars: &[String],
    reductions: &Reductions,
) -> Result<Privates, EmitError> {
    let (ctx, site, report) = (scope.ctx, scope.site, scope.report);
    let is_reduced = |n: &str| reductions.covers(n);
    let mut private: Vec<String> = Vec::new();
    let mut lastprivate: Vec<String> = Vec::new();
    let mut starts_from_entry: Vec<String> = Vec::new();
    let renamed = |n: &str| source_name(ctx, n);
    let privates: Vec<advisor::model::Private> = report
        .private
        .iter()
        .map(|p| advisor::model::Private {
            name: renamed(&p.name),
            ..p.clone()
        })
        .collect();
    for p in &privates {
        // A phrase (`compound literal`) names an object of the body, private already.
        // A variable declared in the body (`double hue;` whose address a call takes) is
        // private already, and not in scope at the pragma.
        let declared_inside = ctx.sites.accesses.iter().any(|a| {
            a.span.start >= site.span.start
                && a.span.end <= site.span.end
                && a.variable.as_ref().is_some_and(|v| {
                    v.name == p.name && v.local_decl.is_some_and(|d| d >= site.span.start)
                })
        });
        if loop_vars.contains(&p.name)
            || is_reduced(&p.name)
            || !is_identifier(&p.name)
            || declared_inside
        {
            continue;
        }
        if p.initial_value {
            // Assigned only under a test whose outcome is fixed for the loop: where the test
            // fails, iterations read the value from before the loop, which `private` would
            // leave undefined.
            if p.last_value {
                return Err(scope.refuse(format!(
                    "`{}` starts from its value before the loop where the test it is assigned under fails, and is read after the loop: OpenMP takes a variable in both `firstprivate` and `lastprivate` on no `distribute` construct; copy its last value out by hand",
                    p.name
                )));
            }
            starts_from_entry.push(p.name.clone());
        } else if p.last_value {
            lastprivate.push(p.name.clone());
        } else {
            private.push(p.name.clone());
        }
    }
    for v in inner_loop_variables(ctx, site)
        .into_iter()
        .chain(scalars_written_inside(&ctx.sites, site))
    {
        if is_reduced(&v) {
            continue;
        }
        if !loop_vars.contains(&v)
            && !private.contains(&v)
            && !lastprivate.contains(&v)
            && !starts_from_entry.contains(&v)
        {
            private.push(v);
        }
    }

    // A counter's body copy is private already; the variable keeps its entry value.
    let is_counter = |v: &str| report.counters.iter().any(|c| c.name == v);
    private.retain(|v| !is_counter(v));
    // A clause may name only what is in scope at the pragma: a struct declared in the body
    // (`Pole pole = ...`, reached only through its members, so no access names it) is
    // private already, and a temporary of the analysis is no variable at all.
    let in_scope = |v: &String| visible_at_pragma(ctx, site, v);
    private.retain(in_scope);
    lastprivate.retain(in_scope);
    starts_from_entry.retain(in_scope);
    Ok(Privates {
        private,
        lastprivate,
        starts_from_entry,
    })
}

/// The report's parameters as the loop's text names them, and what the loop's start reads.
struct Parameters {
    list: Vec<advisor::model::Parameter>,
    /// The report's names of values and the variables the loop's text names them by.
    aliases: BTreeMap<String, String>,
    init_reads: Vec<InitRead>,
}

/// Decides the names and sections the parameters are mapped by: the source's names, the
/// aliases the loop's text uses, and sections widened by what the loop's start reads.
fn prepare_parameters(scope: &Scope<'_, '_>) -> Result<Parameters, EmitError> {
    let (ctx, site, report) = (scope.ctx, scope.site, scope.report);
    let renamed = |n: &str| source_name(ctx, n);
    let parameters: Vec<advisor::model::Parameter> = report
        .parameters
        .iter()
        .map(|p| advisor::model::Parameter {
            name: renamed(&p.name),
            ..p.clone()
        })
        .collect();
    // The loop's text names `xd` where the report names the value it holds
    // (`x->content->data`, `xd = NV_DATA_OMP(x)` before the loop): map what the text names.
    let aliases = text_aliases(&ctx.sites, site, report, &|n| ctx.is_pointer(n));
    let parameters: Vec<advisor::model::Parameter> = parameters
        .into_iter()
        .map(|p| match aliases.get(&p.name) {
            Some(alias) => advisor::model::Parameter {
                name: alias.clone(),
                nested: false,
                ..p
            },
            None => p,
        })
        .collect();
    // The loop's start is computed on the device too (`j = A_diag_i[i]`,
    // `i = settings->psi_2e`): the memory it reads before the first iteration, which the
    // report's sections (the iterations' accesses) do not cover. An element of an array
    // the loop also reads widens that array's section.
    let init_reads = init_reads(for_init(ctx.slice(site.span)).unwrap_or_default())
        .map_err(|m| scope.refuse(m))?;
    let parameters: Vec<advisor::model::Parameter> = parameters
        .into_iter()
        .map(|mut p| {
            let element = init_reads.iter().find_map(|r| match r {
                InitRead::Element { array, index } if *array == p.name => Some(index),
                _ => None,
            });
            if let (Some(index), Some(b), Some(size)) = (element, p.bytes.as_mut(), p.elem_bytes) {
                let first = format!("{size}*({index})");
                let end = format!("{size}*({index}) + {size}");
                b.lo = widened(&b.lo, &Quantity::from_source(&first), false);
                b.hi = widened(&b.hi, &Quantity::from_source(&end), true);
            }
            p
        })
        .collect();
    Ok(Parameters {
        list: parameters,
        aliases,
        init_reads,
    })
}

/// Decides the loop's data: the parameters' maps and copies, the arrays of rows mapped
/// around the kernel, and what the loop's start, its text and its pointer counters read.
fn plan_data(
    scope: &Scope<'_, '_>,
    form: &LoopForm,
    claimed: &Claimed,
    notes: &mut Vec<String>,
) -> Result<(DataMaps, Option<super::rows::RowTrees>), EmitError> {
    let parameters = prepare_parameters(scope)?;
    // Arrays of rows (`double ***u` with `u[i3][i2][i1]`): mapped level by level around the
    // kernel (`rows`), not by its own clauses.
    let trees = super::rows::plan_trees(
        scope.ctx,
        scope.reports,
        scope.report,
        scope.site,
        (form.start.line, form.end.line),
        &parameters.list,
        &claimed.loop_vars,
        scope.options,
        &|m| scope.refuse(m),
    )?;
    let mut data = DataMaps {
        firstprivate: form.counters.integers.clone(),
        ..DataMaps::default()
    };
    map_parameters(
        scope,
        claimed,
        &parameters,
        trees.as_ref(),
        &mut data,
        notes,
    )?;
    map_flags_and_start_reads(&mut data, &claimed.reductions.flags, parameters.init_reads);
    merge_struct_maps(&mut data);
    firstprivate_scalar_reads(scope, claimed, &mut data);
    for name in &form.start_names {
        if !data.firstprivate.contains(name) && !mapped(&data.maps, name) {
            data.firstprivate.push(name.clone());
        }
    }
    map_counter_pointers(&mut data, &form.counters.pointers);
    Ok((data, trees))
}

/// The data clauses as they are built.
#[derive(Default)]
struct DataMaps {
    /// The `map` clauses' items by direction.
    maps: BTreeMap<Dir, Vec<String>>,
    /// Structs mapped whole, with the sections of their members.
    struct_members: BTreeMap<String, (Dir, Vec<String>)>,
    /// Pointers to structs whose members' sections are mapped.
    struct_pointers: BTreeMap<String, Dir>,
    /// The scalars each thread reads a copy of (`strict_clauses`).
    firstprivate: Vec<String>,
    arrays: Vec<ArrayMap>,
}

/// One array of the `map` clauses, read and written as `role` says.
fn array_map(
    name: &str,
    section: Option<Section>,
    bytes: Option<(Quantity, Quantity, Quantity)>,
    role: Role,
) -> ArrayMap {
    ArrayMap {
        name: name.to_string(),
        section,
        bytes,
        read: role != Role::Out,
        written: role != Role::In,
    }
}

/// Decides how each parameter reaches the device: a scalar's copy, an array's section, a
/// struct or a member's section; refuses one the port cannot map.
fn map_parameters(
    scope: &Scope<'_, '_>,
    claimed: &Claimed,
    parameters: &Parameters,
    trees: Option<&super::rows::RowTrees>,
    data: &mut DataMaps,
    notes: &mut Vec<String>,
) -> Result<(), EmitError> {
    let in_tree = |n: &str| trees.is_some_and(|t| t.covered.contains(n));
    for p in &parameters.list {
        if p.kind == ParamKind::Scalar {
            map_scalar_parameter(scope, claimed, parameters, p, data)?;
            continue;
        }
        if claimed.reductions.covers(&p.name) || in_tree(&p.name) {
            continue;
        }
        let dir = Dir::of(p.role);
        if scope.options.drop.contains(&p.name) {
            continue;
        }
        refuse_unmappable(scope, &claimed.loop_vars, p)?;
        if let Some(member) = split_member(&p.name) {
            map_member(scope, p, member, dir, data, notes)?;
            continue;
        }
        map_variable(scope, p, dir, data, notes)?;
    }
    Ok(())
}

/// Decides whether a scalar parameter is `firstprivate` (when no clause claims it
/// already); refuses one the loop writes, or a pointer with no section.
fn map_scalar_parameter(
    scope: &Scope<'_, '_>,
    claimed: &Claimed,
    parameters: &Parameters,
    p: &advisor::model::Parameter,
    data: &mut DataMaps,
) -> Result<(), EmitError> {
    let privates = &claimed.privates;
    let written = p.role != Role::In;
    let handled = claimed.reductions.covers(&p.name)
        || parameters.aliases.values().any(|a| *a == p.name)
        || privates.private.contains(&p.name)
        || privates.lastprivate.contains(&p.name)
        || privates.starts_from_entry.contains(&p.name)
        || claimed.loop_vars.contains(&p.name);
    if written && !handled {
        return Err(scope.refuse(format!(
            "`{}` is computed in the loop and used after it; it is not a reduction nor private",
            p.name
        )));
    }
    if p.c_type.as_deref().is_some_and(|t| t.contains('*')) && !handled {
        return Err(scope.refuse(format!(
            "pointer `{}` ({}) is used without a known section; warpwise cannot tell which bytes to map",
            p.name,
            p.type_text()
        )));
    }
    if !handled {
        data.firstprivate.push(p.name.clone());
    }
    Ok(())
}

/// Decides whether an array parameter has a shape no `map` clause can name: a `void *`,
/// or a row of pointers not named by a variable.
fn refuse_unmappable(
    scope: &Scope<'_, '_>,
    loop_vars: &[String],
    p: &advisor::model::Parameter,
) -> Result<(), EmitError> {
    // The report's type, not the IR's: a pointer first set to `NULL` has a `void *`
    // value there whatever its declaration.
    let pointee_void = {
        let c_type = p.c_type.as_deref().unwrap_or_default();
        let words: Vec<&str> = c_type
            .split(|c: char| c.is_whitespace() || c == '*')
            .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "restrict"))
            .collect();
        words == ["void"] && c_type.matches('*').count() == 1
    };
    if pointee_void {
        return Err(scope.refuse(format!(
            "`{}` is a `void *`: an OpenMP section counts elements of a type; copy it into a typed pointer before the loop",
            p.name
        )));
    }
    // Arrays of rows named by a variable are the trees' (`rows`); these are reached
    // through a member or a dereference (`s->rows[i][j]`), which the row-by-row maps
    // do not name.
    if p.name.matches('[').count() >= 2 && split_member(&p.name).is_none() {
        return Err(scope.refuse(format!(
            "`{}` is a row of a row of pointers not named by a variable: only arrays of rows a variable holds (`u[i][j]`) are mapped row by row; copy the pointer into a local before the loop",
            p.name
        )));
    }
    // `out[i]` for an array of pointers: a row the port can map only while the
    // subscript holds still.
    if let Some(open) = p.name.find('[') {
        let loop_text = scope.ctx.slice(scope.site.span);
        let moving = expr_roots(&p.name[open..])
            .into_iter()
            .find(|v| loop_vars.contains(v) || written_in(loop_text, v));
        if let Some(v) = moving {
            return Err(scope.refuse(format!(
                "`{}` is another row in each iteration (`{v}` changes in the loop) of an array of pointers not named by a variable: only arrays of rows a variable holds (`out[i]`) are mapped row by row; copy the pointer into a local before the loop",
                p.name
            )));
        }
    }
    Ok(())
}

/// Decides the section of a struct's member (`s.p`, `s->p`) and the struct it is mapped
/// with; refuses one nested deeper.
fn map_member(
    scope: &Scope<'_, '_>,
    p: &advisor::model::Parameter,
    (root, arrow, member): (&str, bool, &str),
    dir: Dir,
    data: &mut DataMaps,
    notes: &mut Vec<String>,
) -> Result<(), EmitError> {
    let refuse = |m: String| scope.refuse(m);
    if member.contains(['.', '-', '[']) {
        return Err(refuse(format!(
            "`{}` is nested more than one member deep; map it by hand",
            p.name
        )));
    }
    let (lo, hi) = byte_section(scope.ctx, scope.report, p, &refuse, notes)?;
    let unit_bytes =
        map_unit(scope.ctx, scope.report, &p.name).map_err(|e| refuse(e.to_string()))?;
    let item = covering(&lo, &hi, &unit_bytes).render(&p.name);
    if arrow {
        data.struct_pointers
            .entry(root.to_string())
            .or_insert(Dir::To);
        data.maps.entry(dir).or_default().push(item);
    } else {
        let e = data
            .struct_members
            .entry(root.to_string())
            .or_insert((Dir::To, Vec::new()));
        e.0 = e.0.max(dir);
        e.1.push(item);
    }
    Ok(())
}

/// Decides how a variable parameter is mapped: a complex or global scalar's copy, a
/// struct whole, a declared array whole, or a pointer's section.
fn map_variable(
    scope: &Scope<'_, '_>,
    p: &advisor::model::Parameter,
    dir: Dir,
    data: &mut DataMaps,
    notes: &mut Vec<String>,
) -> Result<(), EmitError> {
    let (ctx, report) = (scope.ctx, scope.report);
    let refuse = |m: String| scope.refuse(m);
    let ty = ctx.type_of(&p.name).map(|t| ctx.types.get(t).clone());
    // A `_Complex` scalar, which the analyses see as two components: its value is one
    // variable for OpenMP, not an array to take a section of.
    if complex_scalar(ctx, &p.name) {
        if dir != Dir::To {
            return Err(refuse(format!(
                "the complex `{}` is written in the loop and is not private nor a reduction",
                p.name
            )));
        }
        data.firstprivate.push(p.name.clone());
        return Ok(());
    }
    if matches!(ty, Some(Type::Int { .. } | Type::Float(_))) {
        // A global scalar: read-only here (a written one is private or a reduction).
        if dir == Dir::ToFrom {
            return Err(refuse(format!(
                "the global `{}` is written in the loop and is not private nor a reduction",
                p.name
            )));
        }
        data.firstprivate.push(p.name.clone());
        return Ok(());
    }
    match ty {
        Some(Type::Record(_)) => {
            let e = data
                .struct_members
                .entry(p.name.clone())
                .or_insert((Dir::To, Vec::new()));
            e.0 = e.0.max(dir);
            return Ok(());
        }
        Some(Type::Array { .. }) if p.bytes.is_none() => {
            data.maps.entry(dir).or_default().push(p.name.clone());
            data.arrays.push(array_map(&p.name, None, None, p.role));
            return Ok(());
        }
        _ => {}
    }
    let (lo, hi) = byte_section(ctx, report, p, &refuse, notes)?;
    let unit_bytes = map_unit(ctx, report, &p.name).map_err(|e| refuse(e.to_string()))?;
    let mut section: Section = covering(&lo, &hi, &unit_bytes);
    if null_tested(ctx.slice(scope.site.span), &p.name) {
        section.length = Quantity::c_text(format!("({} ? {} : 0)", p.name, c(&section.length)));
        notes.push(format!(
            "`{}` is tested for null in the loop: its section is empty when it is null (libomptarget copies a mapped section from any pointer, a null one too)",
            p.name
        ));
    }
    let mut bytes = Some((lo, hi, unit_bytes));
    if scope.options.shrink.contains(&p.name) {
        section.length = Quantity::c_text(format!("{} - 1", c(&section.length)));
        bytes = None;
    }
    data.maps
        .entry(dir)
        .or_default()
        .push(section.render(&p.name));
    data.arrays
        .push(array_map(&p.name, Some(section), bytes, p.role));
    Ok(())
}

/// Whether a `map` clause names `name` or a section of it.
fn mapped(maps: &BTreeMap<Dir, Vec<String>>, name: &str) -> bool {
    maps.values().flatten().any(|item| {
        item.split(", ")
            .any(|i| i == name || i.starts_with(&format!("{name}[")))
    })
}

/// Maps the `=` reductions' flags `tofrom`, then what the loop's start reads that the
/// parameters' maps leave out: a struct it reaches into, an array the loop does not read.
fn map_flags_and_start_reads(data: &mut DataMaps, flags: &[String], init_reads: Vec<InitRead>) {
    for f in flags {
        data.maps.entry(Dir::ToFrom).or_default().push(f.clone());
    }
    // The start's other reads: a struct it reaches into, an array the loop does not read.
    for read in init_reads {
        match read {
            InitRead::Member { root, arrow: true } => {
                if !mapped(&data.maps, &root) && !data.struct_members.contains_key(&root) {
                    data.struct_pointers.entry(root).or_insert(Dir::To);
                }
            }
            InitRead::Member { root, arrow: false } => {
                if !data.struct_members.contains_key(&root) && !data.firstprivate.contains(&root) {
                    data.firstprivate.push(root);
                }
            }
            InitRead::Element { array, index } => {
                if !mapped(&data.maps, &array) && !data.struct_members.contains_key(&array) {
                    data.maps
                        .entry(Dir::To)
                        .or_default()
                        .push(format!("{array}[{index}:1]"));
                }
            }
        }
    }
}

/// Adds the structs to the `map` clauses: each struct whole with its members' sections,
/// and each struct a member pointer is reached through.
fn merge_struct_maps(data: &mut DataMaps) {
    for (root, dir) in &data.struct_pointers {
        // The struct a member pointer is reached through must be on the device too for
        // clang to attach the member's section (a member section alone is not enough).
        let mapped = data
            .maps
            .values()
            .flatten()
            .any(|item| item == root || item.starts_with(&format!("{root}[")));
        if !data.struct_members.contains_key(root) && !mapped {
            data.maps
                .entry(*dir)
                .or_default()
                .push(format!("{root}[0:1]"));
        }
    }
    for (root, (dir, members)) in &data.struct_members {
        // `map(tofrom: s, s.p[0:n])` in one clause: clang 16 attaches `s.p` only then.
        let mut items = vec![root.clone()];
        items.extend(members.iter().cloned());
        let dir = if members.is_empty() {
            *dir
        } else {
            Dir::ToFrom
        };
        data.maps.entry(dir).or_default().push(items.join(", "));
    }
}

/// Decides which scalars and structs the loop's text reads that no clause names yet are
/// `firstprivate`.
fn firstprivate_scalar_reads(scope: &Scope<'_, '_>, claimed: &Claimed, data: &mut DataMaps) {
    let (ctx, site) = (scope.ctx, scope.site);
    // Scalars the loop's text reads that the report folded into constants (`n` set to
    // 1000 before the loop) are still variables there.
    // A copy the IR drops (`a1 = a5 = k;` before the loop) has no type there: its
    // declaration before the loop gives one.
    let loop_text = &ctx.text[site.span.start as usize..site.span.end as usize];
    for v in scalars_read_inside(ctx, site) {
        let scalar = match ctx.type_of(&v) {
            Some(t) => matches!(ctx.types.get(t), Type::Int { .. } | Type::Float(_)),
            None => {
                ctx.declared_at(&v, site.span)
                    .is_some_and(|t| ctx.types.is_arithmetic(t))
                    && !written_in(loop_text, &v)
            }
        };
        let handled = data.firstprivate.contains(&v)
            || claimed.privates.private.contains(&v)
            || claimed.privates.lastprivate.contains(&v)
            || claimed.loop_vars.contains(&v)
            || claimed.reductions.covers(&v);
        // A struct the loop reads by value (`fc3[i] = comp_zero;`): each thread's copy.
        let read_struct = ctx
            .type_of(&v)
            .is_some_and(|t| matches!(ctx.types.get(t), Type::Record(_)))
            && !written_in(loop_text, &v)
            && !data.struct_members.contains_key(&v)
            && !mapped(&data.maps, &v);
        if (scalar || read_struct) && !handled {
            data.firstprivate.push(v);
        }
    }
}

/// Maps the arrays the pointer counters point into, where no clause maps them yet.
fn map_counter_pointers(data: &mut DataMaps, pointers: &[String]) {
    // A pointer counter's entry value becomes the device address of the array it points
    // into, which the clauses above map (a zero-length section maps nothing itself).
    for p in pointers {
        if !mapped(&data.maps, p) {
            data.maps
                .entry(Dir::To)
                .or_default()
                .push(format!("{p}[0:0]"));
        }
    }
}

/// Writes the data clauses in their order: maps, the trees' `alloc` maps, private copies,
/// reductions, then the arg-min/arg-max's own.
fn data_clauses(
    data: &DataMaps,
    trees: Option<&super::rows::RowTrees>,
    claimed: &Claimed,
    args_port: Option<&super::argext::ArgPort>,
    clauses: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    for (dir, items) in &data.maps {
        clauses.push(format!("map({}: {})", dir.keyword(), items.join(", ")));
    }
    // The trees are on the device already: the kernel finds them present.
    if let Some(t) = trees {
        clauses.push(format!("map(alloc: {})", t.kernel_maps.join(", ")));
        notes.extend(t.notes.iter().cloned());
    }
    let privates = &claimed.privates;
    if !privates.private.is_empty() {
        clauses.push(format!("private({})", privates.private.join(", ")));
    }
    if !privates.starts_from_entry.is_empty() {
        clauses.push(format!(
            "firstprivate({})",
            privates.starts_from_entry.join(", ")
        ));
    }
    if !privates.lastprivate.is_empty() {
        clauses.push(format!("lastprivate({})", privates.lastprivate.join(", ")));
    }
    let mut by_op: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (op, t) in &claimed.reductions.reduced {
        by_op.entry(op.as_str()).or_default().push(t.as_str());
    }
    for (op, targets) in by_op {
        clauses.push(format!("reduction({op}: {})", targets.join(", ")));
    }
    if let Some(a) = args_port {
        clauses.extend(a.clauses.iter().cloned());
    }
}

/// Decides the text edits of the loop: the counters' (or the arg-min's, which hold
/// them), the returned members read through a local, and the grouped sums.
fn collect_edits(
    counter_edits: Vec<TextEdit>,
    args_port: Option<&super::argext::ArgPort>,
    returned_members: Vec<TextEdit>,
    grouped: &[TextEdit],
    notes: &mut Vec<String>,
) -> Vec<TextEdit> {
    // The arg-min's edits already hold the counters' (one merged rewrite of the loop).
    let mut edits = counter_edits;
    if let Some(a) = args_port {
        edits = a.edits.clone();
    }
    if !returned_members.is_empty() {
        let rewritten = returned_members;
        notes.push(format!(
            "{} member{} of a struct a call returns read through a local (`({{ __typeof__(f(x)) v = f(x); v.r; }})`): clang 16 rejects the member of a returned value in a target region",
            rewritten.len(),
            if rewritten.len() == 1 { "" } else { "s" }
        ));
        edits.extend(rewritten);
    }
    if !grouped.is_empty() {
        notes.push(format!(
            "{} update{} `x = x + a + b` written `x = x + (a + b)` (`x = x - a + b` as `x = x + (-a + b)`) for `#pragma omp atomic update`: the sum of the rest is added as one value, which may round differently from the sequential loop",
            grouped.len() / 2,
            if grouped.len() > 2 { "s" } else { "" }
        ));
        edits.extend(grouped.iter().cloned());
    }
    edits
}

/// Decides the port of the loop's error paths, if any: a flag in a block opened before
/// the pragma, the branches replaced, the failing iteration run again after the loop;
/// refuses them beside another rewrite that wraps the loop or edits the same text.
fn plan_error_flag(
    scope: &Scope<'_, '_>,
    has_args: bool,
    has_trees: bool,
    edits: &mut Vec<TextEdit>,
    clauses: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<Option<super::error_flag::FlagPort>, EmitError> {
    let (ctx, unit, site, report) = (scope.ctx, scope.unit, scope.site, scope.report);
    let refuse = |m: String| scope.refuse(m);
    // Error paths: a flag in a block opened before the pragma, the branches replaced, the
    // failing iteration run again after the loop.
    if report.error_paths.is_empty() {
        return Ok(None);
    }
    let beside = if !report.counters.is_empty() {
        Some("a counter the loop advances beside its index (the re-run would start it from its final value)")
    } else if has_args {
        Some("an arg-min/arg-max (both wrap the loop in a block of their own)")
    } else if has_trees {
        Some("arrays of rows (both wrap the loop in a block of their own)")
    } else {
        None
    };
    if let Some(what) = beside {
        return Err(refuse(format!(
            "an error path beside {what} is not generated; move the error test out of the loop or port it by hand"
        )));
    }
    let flag = super::error_flag::plan_flag(ctx, unit, site, report, scope.induction)
        .map_err(|why| refuse(format!("its error path cannot be ported: {why}")))?;
    let flag_edits =
        super::counters::text_edits(ctx, unit, site, &flag.replaced).map_err(|original| {
            refuse(format!(
                "{original}: the port cannot replace the error branch"
            ))
        })?;
    if let Some(e) = edits.iter().find(|e| {
        flag_edits
            .iter()
            .any(|f| (f.line, f.col) == (e.line, e.col))
    }) {
        return Err(refuse(format!(
            "`{}` at line {} is edited both for an update and for the error path; port it by hand",
            e.original, e.line
        )));
    }
    edits.extend(flag_edits);
    clauses.push(flag.clause.clone());
    notes.extend(flag.notes.iter().cloned());
    Ok(Some(flag))
}

/// Decides the preamble: the arrays of rows' enter maps (with their exit maps after the
/// loop's last token), or else `preamble`, the arg-min/arg-max's or the error flag's;
/// refuses arrays of rows beside another preamble.
fn place_tree_maps(
    scope: &Scope<'_, '_>,
    trees: Option<super::rows::RowTrees>,
    preamble: Option<String>,
    file: frontend::source_map::FileId,
    edits: &mut Vec<TextEdit>,
) -> Result<Option<String>, EmitError> {
    let (ctx, site) = (scope.ctx, scope.site);
    let refuse = |m: String| scope.refuse(m);
    let Some(t) = trees else {
        return Ok(preamble);
    };
    if preamble.is_some() {
        return Err(refuse(
            "an arg-min/arg-max beside arrays of rows is not generated: both wrap the loop in a block of their own".into(),
        ));
    }
    // The exit maps follow the loop's last token, in the block the enter maps open.
    let stmt = ctx.slice(site.span);
    let last = crate::ctext::code_tokens(stmt)
        .pop()
        .ok_or_else(|| refuse("the loop has no text".into()))?;
    let at = scope
        .unit
        .preprocessed
        .source_map
        .locate(site.span.start as usize + last.start);
    let original = stmt[last.start..last.end].to_string();
    if at.file != file || edits.iter().any(|e| e.line == at.line && e.col == at.col) {
        return Err(refuse(format!(
            "the loop's last token `{original}` is written by a macro or edited already: the maps of its arrays of rows cannot follow it"
        )));
    }
    let line_start = ctx.text[..site.span.start as usize]
        .rfind('\n')
        .map_or(0, |k| k + 1);
    let indent: String = ctx.text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let exit: String = t.exit.lines().map(|l| format!("\n{indent}{l}")).collect();
    edits.push(TextEdit {
        line: at.line,
        col: at.col,
        replacement: format!("{original}{exit}"),
        original,
    });
    Ok(Some(t.enter))
}

/// Whether combining the reduction's partial results in another order can change its
/// rounding: a sum or product of `float`s or `double`s (min and max never round).
pub(crate) fn reassociates_floats(r: &advisor::model::Reduction) -> bool {
    matches!(r.operator, RedOp::Sum | RedOp::Product)
        && ["float", "double"].iter().any(|t| r.c_type.contains(t))
}

/// A directive (`head`, `#pragma omp target teams distribute parallel for`) and its
/// clauses, continued on further lines when the whole would pass 100 columns.
pub(crate) fn pragma_text(head: &str, clauses: &[String]) -> String {
    let one_line = std::iter::once(head.to_string())
        .chain(clauses.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    if one_line.len() <= 100 {
        return one_line;
    }
    let mut out = head.to_string();
    for c in clauses {
        out.push_str(" \\\n    ");
        out.push_str(c);
    }
    out
}

/// The report's operator as an OpenMP reduction identifier.
fn omp_operator(op: RedOp) -> Option<&'static str> {
    match op {
        RedOp::Assign => None,
        other => Some(other.symbol()),
    }
}

/// `s.f` -> (`s`, false, `f`); `p->f` -> (`p`, true, `f`).
/// Whether the loop's text tests the pointer `name` for null: `if (q_direction)`, `!p`,
/// `p && ...`, `p ? a : b`, `p != NULL`, `0 == p`. The program then expects it to be null at
/// times, and a `map` of a section of a null pointer makes libomptarget copy from address 0
/// (the offloaded run crashed). A false positive (`f(p)`) only guards a section needlessly.
fn null_tested(text: &str, name: &str) -> bool {
    let toks = crate::ctext::code_tokens(text);
    let t: Vec<&str> = toks
        .iter()
        .map(|k| crate::ctext::tok_text(text, k))
        .collect();
    let null = |s: &str| matches!(s, "NULL" | "0" | "nullptr");
    (0..t.len()).any(|k| {
        if t[k] != name {
            return false;
        }
        let prev = if k > 0 { t[k - 1] } else { "" };
        let next = t.get(k + 1).copied().unwrap_or("");
        if matches!(prev, "." | "->") {
            return false;
        }
        // `p ? a : b` tests `p` only when nothing binds it to an operand first
        // (`c < *p ? c : *p` tests the comparison).
        let ternary = next == "?"
            && matches!(
                prev,
                "" | "(" | "=" | "," | "&&" | "||" | "?" | ":" | "return" | "{" | ";"
            );
        let condition = prev == "!"
            || ternary
            || (matches!(next, ")" | "&&" | "||") && matches!(prev, "(" | "&&" | "||"));
        let compared = (matches!(next, "==" | "!=") && t.get(k + 2).is_some_and(|s| null(s)))
            || (matches!(prev, "==" | "!=") && k >= 2 && null(t[k - 2]));
        condition || compared
    })
}

fn split_member(name: &str) -> Option<(&str, bool, &str)> {
    let dot = name.find('.');
    let arrow = name.find("->");
    match (dot, arrow) {
        (Some(d), Some(a)) if a < d => Some((&name[..a], true, &name[a + 2..])),
        (Some(d), _) => Some((&name[..d], false, &name[d + 1..])),
        (None, Some(a)) => Some((&name[..a], true, &name[a + 2..])),
        (None, None) => None,
    }
}

/// `(lo, hi)` of an array parameter's section in bytes, in the names the source has at
/// the loop, clamped at the array's start (with a note) when it may start below it;
/// refused when it names something the source does not declare.
pub(super) fn byte_section(
    ctx: &Ctx<'_>,
    report: &LoopReport,
    p: &advisor::model::Parameter,
    refuse: &dyn Fn(String) -> EmitError,
    notes: &mut Vec<String>,
) -> Result<(Quantity, Quantity), EmitError> {
    if p.kind == advisor::model::ParamKind::Reached {
        return Err(refuse(format!(
            "{} is not one array but every object reached by following pointers: it needs a deep copy or memory the device shares (`requires unified_shared_memory`), which warpwise does not generate",
            p.name
        )));
    }
    let b = p.bytes.as_ref().ok_or_else(|| {
        refuse(format!(
            "the section of `{}` is unknown statically{}",
            p.name,
            p.notes
                .first()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ))
    })?;
    let lo = b.lo.map_names(|t| dealias(ctx, report, t));
    let hi = b.hi.map_names(|t| dealias(ctx, report, t));
    let (lo, hi) = unqualified_section(ctx, report, &p.name, &lo, &hi).map_err(refuse)?;
    let lo = if may_be_negative(&lo) {
        notes.push(format!(
            "the section of `{}` may start below it (byte `{lo}`): the report's section is the envelope of the addresses and does not use the guards in the loop; the port maps from `{}[0]`, which is right when the accesses below are guarded or happen only when the loop does not run. If the loop really reads before `{}`, map it by hand; `warpwise validate --target openmp` checks a run",
            p.name, p.name, p.name
        ));
        widened(&lo, &Quantity::constant(0), true)
    } else {
        lo
    };
    // `matrix->structure->row_index` where `structure` is a `const void *` (the analysis
    // followed the cast the code made into a local): C cannot write it at the loop.
    for chain in member_chains(&lo).into_iter().chain(member_chains(&hi)) {
        if declared_type(ctx, &chain).is_none() {
            return Err(refuse(format!(
                "the section of `{}` ([{lo}, {hi}) bytes) names `{chain}`, which C cannot write at the loop (a member of what a `void *` or an unknown type points to)",
                p.name
            )));
        }
    }
    for root in expr_roots(&lo).into_iter().chain(expr_roots(&hi)) {
        // A call the bound makes (`getNodeLength(node)`), which the analysis showed returns
        // the same value on every iteration: the host calls it again for the clause.
        let Some(t) = ctx.type_of(&root).or_else(|| ctx.return_type(&root)) else {
            return Err(refuse(format!(
                "the section of `{}` ([{lo}, {hi}) bytes) names `{root}`, which is not a variable in scope at the loop",
                p.name
            )));
        };
        // `(max_tau - min_tau) / delta_tau` divides as doubles; a section's bounds are
        // integers, and rounding them here could leave out the last element.
        if matches!(ctx.types.get(t), Type::Float(_)) {
            return Err(refuse(format!(
                "the section of `{}` ([{lo}, {hi}) bytes) depends on the floating-point `{root}`: map it by hand",
                p.name
            )));
        }
    }
    Ok((lo, hi))
}

/// A member of a struct a call returns in a loop's text, `(f(x)).r` or `f(x).r`: the byte
/// ranges of the whole access and of the call, and the member's name.
struct ReturnedMember {
    whole: (usize, usize),
    call: (usize, usize),
    member: String,
}

/// Every member of a struct a call returns in `text`, in order.
fn returned_members(text: &str) -> Vec<ReturnedMember> {
    let toks = crate::ctext::code_tokens(text);
    let t = |k: usize| crate::ctext::tok_text(text, &toks[k]);
    let is_name = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && !matches!(
                w,
                "if" | "while" | "for" | "switch" | "return" | "sizeof" | "_Alignof"
            )
    };
    // The index of the `(` matching the `)` at `close`.
    let opening = |close: usize| -> Option<usize> {
        let mut depth = 0usize;
        for j in (0..=close).rev() {
            match t(j) {
                ")" => depth += 1,
                "(" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    };
    let mut found = Vec::new();
    for k in 1..toks.len().saturating_sub(1) {
        if t(k) != "." || t(k - 1) != ")" || !is_name(t(k + 1)) {
            continue;
        }
        let Some(open) = opening(k - 1) else { continue };
        // `f(...).m`, or `(f(...)).m`: the parentheses hold one call and nothing else.
        let call = open > 0 && is_name(t(open - 1));
        let wrapped_call = open + 2 < k - 1
            && is_name(t(open + 1))
            && t(open + 2) == "("
            && opening(k - 2) == Some(open + 2);
        let (first, call_first, call_last) = if call {
            (open - 1, open - 1, k - 1)
        } else if wrapped_call {
            (open, open + 1, k - 2)
        } else {
            continue;
        };
        found.push(ReturnedMember {
            whole: (toks[first].start, toks[k + 1].end),
            call: (toks[call_first].start, toks[call_last].end),
            member: t(k + 1).to_string(),
        });
    }
    found
}

/// Edits that read each member of a struct a call returns (see [`returned_members`]) in
/// `text`, a loop statement starting at byte `base` of the unit, through a local:
/// `({ __typeof__(f(x)) __ww_rvN = f(x); __ww_rvN.r; })`, which evaluates the call once, as
/// the original does. `Err` names one that cannot be written as an edit of one line, or
/// that lies inside another.
fn returned_member_edits(
    text: &str,
    base: u32,
    map: &frontend::source_map::SourceMap,
) -> Result<Vec<TextEdit>, String> {
    let mut edits = Vec::new();
    let mut last_end = 0;
    for (n, m) in returned_members(text).into_iter().enumerate() {
        let original = &text[m.whole.0..m.whole.1];
        if m.whole.0 < last_end || original.contains('\n') {
            return Err(original.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        last_end = m.whole.1;
        let call = &text[m.call.0..m.call.1];
        let name = format!("__ww_rv{n}");
        let at = map.locate(base as usize + m.whole.0);
        edits.push(TextEdit {
            line: at.line,
            col: at.col,
            original: original.to_string(),
            replacement: format!(
                "({{ __typeof__({call}) {name} = {call}; {name}.{}; }})",
                m.member
            ),
        });
    }
    Ok(edits)
}

/// The first `(&...)->` in the loop's text (after macro expansion): a member read through
/// an address taken in the same expression, e.g. GraphicsMagick's `GetRedSample(&p[i])`.
fn member_through_address(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(k) = text[from..].find("(&") {
        let open = from + k;
        let mut depth = 0usize;
        let mut close = None;
        for (j, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        let rest = text[close + 1..].trim_start();
        if rest.starts_with("->") && !text[open + 2..close].contains("&&") {
            let member: String = rest[2..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            return Some(format!("{}->{member}", &text[open..=close]));
        }
        from = open + 2;
    }
    None
}

/// The initialization clause of a `for` statement's text: what lies between its `(` and
/// its first `;` at that depth.
pub(crate) fn for_init(stmt: &str) -> Option<&str> {
    let toks = crate::ctext::code_tokens(stmt);
    let t = |k: usize| toks.get(k).map(|x| crate::ctext::tok_text(stmt, x));
    if t(0)? != "for" || t(1)? != "(" {
        return None;
    }
    let mut depth = 0i32;
    for (k, tok) in toks.iter().enumerate().skip(2) {
        match crate::ctext::tok_text(stmt, tok) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            ";" if depth == 0 => return Some(&stmt[toks[1].end..toks[k].start]),
            _ => {}
        }
    }
    None
}

/// The references with members in `expr` (`m->b->idx[k]`, `s.n`), outermost only.
fn member_chains(expr: &str) -> Vec<String> {
    use crate::ctext::{closing_bracket, tok_text, TokKind};
    let toks = crate::ctext::code_tokens(expr);
    let t = |k: usize| toks.get(k).map_or("", |x| tok_text(expr, x));
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let root = toks[k].kind == TokKind::Ident && !matches!(t(k.wrapping_sub(1)), "." | "->");
        if !root || t(k + 1) == "(" {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        let mut members = false;
        loop {
            match t(end) {
                "." | "->" if toks.get(end + 1).is_some_and(|x| x.kind == TokKind::Ident) => {
                    members = true;
                    end += 2;
                }
                "[" => end = closing_bracket(expr, &toks, end).saturating_add(1),
                _ => break,
            }
        }
        if members && end <= toks.len() {
            out.push(expr[toks[k].start..toks[end - 1].end].to_string());
        }
        k = end.max(k + 1);
    }
    out
}

/// Whether `name` is declared `_Complex` (`double _Complex z`, a macro's expansion
/// included): its type reads as two floating components.
fn complex_scalar(ctx: &Ctx<'_>, name: &str) -> bool {
    use crate::ctext::tok_text;
    let two_floats = ctx.type_of(name).is_some_and(|t| {
        matches!(ctx.types.get(t), Type::Array { elem, len: frontend::types::ArrayLen::Fixed(2) }
            if matches!(ctx.types.get(*elem), Type::Float(_)))
    });
    if !two_floats {
        return false;
    }
    let text = ctx.text.as_str();
    let toks = crate::ctext::code_tokens(text);
    toks.iter().enumerate().any(|(k, t)| {
        if tok_text(text, t) != "_Complex" {
            return false;
        }
        // The declarators after it, to the end of the declaration: a pointer (`*`) or an
        // array (`[`) is not a complex value; initializers are skipped.
        let mut pointer = false;
        let mut initializer = false;
        let mut depth = 0i32;
        let mut j = k + 1;
        while let Some(x) = toks.get(j) {
            match tok_text(text, x) {
                "(" | "[" | "{" if initializer => depth += 1,
                ")" | "]" | "}" if initializer => depth -= 1,
                "=" if !initializer => initializer = true,
                "," if depth == 0 => {
                    initializer = false;
                    pointer = false;
                }
                ";" => return false,
                _ if initializer => {}
                "(" | ")" | "{" | "}" => return false,
                "*" => pointer = true,
                s if s == name => {
                    return !pointer
                        && !matches!(toks.get(j + 1).map(|n| tok_text(text, n)), Some("(" | "["));
                }
                _ => {}
            }
            j += 1;
        }
        false
    })
}

/// `min(bound, other)` (or `max`), simplified where the symbolic engine can (`min(4*i + 4,
/// 4*i)` is `4*i`); C text otherwise.
fn widened(bound: &Quantity, other: &Quantity, max: bool) -> Quantity {
    let env = symbolic::SignEnv::new();
    let both = bound.expr().zip(other.expr()).and_then(|(b, o)| {
        let items = [b.clone(), o.clone()];
        let e = if max {
            symbolic::max_of(&items, &env)
        } else {
            symbolic::min_of(&items, &env)
        };
        e.ok()
    });
    match both {
        Some(e) => Quantity::of(&symbolic::simplify_expr(&e, &env)),
        None => Quantity::c_text(format!(
            "{}({bound}, {other})",
            if max { "max" } else { "min" }
        )),
    }
}

/// Memory a `for` statement's initialization reads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum InitRead {
    /// `p->f` (`arrow`) or `s.f`.
    Member { root: String, arrow: bool },
    /// `a[e]`.
    Element { array: String, index: String },
}

/// The memory reads of a loop's initialization (`j = A_diag_i[i]`, `i = s->first`,
/// `j = r.e`): one member or one subscript of a variable. Deeper ones (`p->a[k]`) are
/// refused: the port would have to map what they point to.
fn init_reads(init: &str) -> Result<Vec<InitRead>, String> {
    use crate::ctext::{closing_bracket, tok_text, TokKind};
    let toks = crate::ctext::code_tokens(init);
    let t = |k: usize| toks.get(k).map_or("", |x| tok_text(init, x));
    let Some(assign) = (0..toks.len()).find(|&k| t(k) == "=") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut k = assign + 1;
    while k < toks.len() {
        let root = t(k);
        let plain = toks[k].kind == TokKind::Ident
            && !crate::ctext::is_keyword(root)
            && !matches!(t(k.wrapping_sub(1)), "." | "->");
        if !plain {
            k += 1;
            continue;
        }
        let read = match t(k + 1) {
            "->" | "." if toks.get(k + 2).is_some_and(|x| x.kind == TokKind::Ident) => (
                k + 3,
                InitRead::Member {
                    root: root.to_string(),
                    arrow: t(k + 1) == "->",
                },
            ),
            "[" => {
                let close = closing_bracket(init, &toks, k + 1);
                let index = init[toks[k + 1].end..toks[close.min(toks.len() - 1)].start].trim();
                (
                    close + 1,
                    InitRead::Element {
                        array: root.to_string(),
                        index: index.to_string(),
                    },
                )
            }
            _ => {
                k += 1;
                continue;
            }
        };
        if matches!(t(read.0), "." | "->" | "[") {
            return Err(format!(
                "the loop's start `{}` reads memory more than one step from a variable; assign it to a variable before the loop",
                init[toks[assign + 1].start..].trim()
            ));
        }
        out.push(read.1);
        k = read.0;
    }
    Ok(out)
}

/// The increment clause of a `for` statement's text: between its second `;` and the `)`
/// that closes its header.
fn for_increment(stmt: &str) -> Option<&str> {
    let toks = crate::ctext::code_tokens(stmt);
    let t = |k: usize| toks.get(k).map(|x| crate::ctext::tok_text(stmt, x));
    if t(0)? != "for" || t(1)? != "(" {
        return None;
    }
    let mut depth = 0i32;
    let mut semis: Vec<usize> = Vec::new();
    for (k, tok) in toks.iter().enumerate().skip(2) {
        match crate::ctext::tok_text(stmt, tok) {
            "(" | "[" | "{" => depth += 1,
            ")" if depth == 0 => {
                let from = toks[*semis.get(1)?].end;
                return Some(&stmt[from..tok.start]);
            }
            ")" | "]" | "}" => depth -= 1,
            ";" if depth == 0 => semis.push(k),
            _ => {}
        }
    }
    None
}

/// Whether `step` is an increment OpenMP takes for the loop variable `var`: `v++`, `++v`,
/// `v--`, `--v`, `v += e`, `v -= e`, `v = v + e`, `v = e + v`, `v = v - e`, with `e` not
/// assigning anything.
fn canonical_increment(step: &str, var: &str) -> bool {
    let toks = crate::ctext::token_strings(step);
    let assigns = |rest: &[&str]| {
        rest.iter()
            .any(|t| matches!(*t, "=" | "++" | "--" | "+=" | "-=" | "*=" | "/=" | ","))
    };
    match toks.as_slice() {
        [v, "++" | "--"] | ["++" | "--", v] => *v == var,
        [v, "+=" | "-=", rest @ ..] => *v == var && !rest.is_empty() && !assigns(rest),
        [v, "=", w, "+" | "-", rest @ ..] if v == w => {
            *v == var && !rest.is_empty() && !assigns(rest)
        }
        [v, "=", rest @ .., "+", w] if v == w => *v == var && !rest.is_empty() && !assigns(rest),
        _ => false,
    }
}

/// A section with its place-qualified values (`blockSize@4346`: the report tells the value
/// loaded there from the variable `blockSize` apart from the variable itself, which it lists
/// as a parameter when its address is taken) written as the variable: a clause at the loop
/// reads it at the loop's entry, which is the same value, since the report's section is
/// built from the loop's own loads. Two values of one variable, or a variable the loop
/// assigns, have no such spelling: refused.
fn unqualified_section(
    ctx: &Ctx<'_>,
    report: &LoopReport,
    array: &str,
    lo: &Quantity,
    hi: &Quantity,
) -> Result<(Quantity, Quantity), String> {
    // Each variable's values the section names (`n@12`), a name inside another's variable
    // (`i@12` in `a[i@12]@14`) among them.
    let mut stems: BTreeMap<String, BTreeMap<String, ValuePlace>> = BTreeMap::new();
    for q in [lo, hi] {
        each_name(q.text(), &mut |o| {
            stems
                .entry(o.name.variable.clone())
                .or_default()
                .insert(o.name.to_string(), o.name.place.clone());
        });
    }
    let (lo, hi) = (lo.map_names(without_places), hi.map_names(without_places));
    let loop_text = ctx
        .loop_site(&report.id)
        .map(|site| ctx.slice(site.span))
        .unwrap_or_default();
    for (stem, values) in &stems {
        let all: Vec<String> = values.keys().map(|v| format!("`{v}`")).collect();
        // `n@L3`: the value `n` had at line 3, which the function changed before the loop.
        if let Some((v, line)) = values.iter().find_map(|(v, place)| match place {
            ValuePlace::Before { line } => Some((v, line)),
            _ => None,
        }) {
            return Err(format!(
                "the section of `{array}` names `{v}`: `{stem}` as it was at line {line}, written with a variable the function changes before the loop; a clause at the loop cannot name it"
            ));
        }
        if values.len() > 1 {
            return Err(format!(
                "the section of `{array}` names {} values of `{stem}` ({}); a clause at the loop can name only the one it holds there",
                values.len(),
                all.join(", ")
            ));
        }
        let root = expr_roots(stem).into_iter().next().unwrap_or_default();
        if ctx.type_of(&root).is_none() || written_in(loop_text, &root) {
            return Err(format!(
                "the section of `{array}` names {}, the value `{stem}` had at that place, which a clause at the loop cannot name",
                all.join(", ")
            ));
        }
    }
    Ok((lo, hi))
}

/// The declared type of `name`: a variable with its selectors (`s.f`, `p->f`, `in[i]`,
/// `c->rows[k].data`), each member or subscript taken on the type before it.
fn declared_type(ctx: &Ctx<'_>, name: &str) -> Option<TypeId> {
    use crate::ctext::{closing_bracket, tok_text, TokKind};
    let toks = crate::ctext::code_tokens(name);
    let t = |k: usize| toks.get(k).map_or("", |x| tok_text(name, x));
    let mut ty = ctx.type_of(t(0))?;
    let field = |ty: TypeId, member: &str| {
        let Type::Record(r) = ctx.types.get(ty) else {
            return None;
        };
        ctx.types
            .record(*r)
            .fields
            .iter()
            .find(|f| f.name.as_deref() == Some(member))
            .map(|f| f.ty)
    };
    let element = |ty: TypeId| match ctx.types.get(ty) {
        Type::Pointer { pointee, .. } => Some(*pointee),
        Type::Array { elem, .. } => Some(*elem),
        _ => None,
    };
    let mut k = 1;
    while k < toks.len() {
        match t(k) {
            "." | "->" if toks.get(k + 1).is_some_and(|x| x.kind == TokKind::Ident) => {
                if t(k) == "->" {
                    ty = element(ty)?;
                }
                ty = field(ty, t(k + 1))?;
                k += 2;
            }
            "[" => {
                ty = element(ty)?;
                k = closing_bracket(name, &toks, k) + 1;
            }
            _ => return None,
        }
    }
    Some(ty)
}

/// The unit an OpenMP section of `name` counts in, in bytes (C text): the element its
/// declared type points to or holds, which for an array of arrays (`double A[n][m]`,
/// `double (*A)[m]`, `static double u[N][N][5]`) is a whole row. An OpenMP section
/// `a[s:l]` counts in that type whatever the loop's accesses read through casts.
pub(super) fn map_unit(
    ctx: &Ctx<'_>,
    report: &LoopReport,
    name: &str,
) -> Result<Quantity, UnitError> {
    let name_owned = || name.to_string();
    let head = crate::ctext::code_tokens(name)
        .first()
        .map(|t| crate::ctext::tok_text(name, t).to_string())
        .unwrap_or_default();
    if ctx.type_of(&head).is_none() {
        return Err(UnitError::NotInScope { name: head });
    }
    let t =
        declared_type(ctx, name).ok_or_else(|| UnitError::UnknownType { name: name_owned() })?;
    let row = match ctx.types.get(t) {
        Type::Array { elem, .. } => *elem,
        Type::Pointer { pointee, .. } => *pointee,
        _ => return Err(UnitError::NotArrayOrPointer { name: name_owned() }),
    };
    if let Some(n) = ctx.types.size_of(row).filter(|n| *n > 0) {
        return Ok(Quantity::of(&symbolic::Expr::integer(n.into())));
    }
    // A variable-length row: its one dimension from the declaration.
    let elem_bytes = match ctx.types.get(row) {
        Type::Array { elem, .. } => ctx.types.size_of(*elem),
        _ => None,
    };
    let pitch = ctx
        .function_site(&report.function)
        .and_then(|f| vla_pitch(ctx, f, name));
    match (elem_bytes, pitch) {
        (Some(e), Some(p)) => Ok(Quantity::from_source(&format!("{e}*({p})"))),
        _ => Err(UnitError::VariableRows { name: name_owned() }),
    }
}

/// Whether a section bound may be negative: some product has a negative coefficient
/// (variables at loop entry are sizes and indices; a bound that subtracts one may reach
/// below the array, as a guarded border access's envelope does).
fn may_be_negative(bound: &Quantity) -> bool {
    match bound.expr() {
        Some(e) => e.parts().iter().any(|p| {
            p.terms()
                .iter()
                .any(|(_, c)| c < &num_rational::BigRational::from_integer(0.into()))
        }),
        None => true,
    }
}

/// The loops `collapse` takes: the loop's variable, and the inner loop's when the two are
/// perfectly nested, the report's nest names both and the inner bounds do not depend on the
/// outer variable.
fn collapse(
    ctx: &Ctx<'_>,
    unit: &Unit,
    reports: &[LoopReport],
    report: &LoopReport,
    site: &LoopSite,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let outer = report.induction.as_ref().map(|i| i.var.clone());
    let mut vars: Vec<String> = outer.iter().cloned().collect();
    if report.nest.len() < 2 {
        return vars;
    }
    let Some(child) = perfectly_nested_child(ctx, site) else {
        return vars;
    };
    if ctx.slice(child.keyword) != "for" {
        return vars;
    }
    let Some(id) = unit.loop_ref_at(child.keyword) else {
        return vars;
    };
    if report.nest.get(1) != Some(&id) {
        return vars;
    }
    let Some(inner) = reports.iter().find(|r| r.id == id) else {
        return vars;
    };
    let (Some(o), Some(i)) = (outer, inner.induction.as_ref()) else {
        return vars;
    };
    let depends = [&i.lower, &i.upper, &i.step]
        .iter()
        .any(|e| expr_roots(e).contains(&o));
    if depends {
        notes.push(format!(
            "loop {} is not collapsed: its bounds depend on `{o}` (a triangular nest)",
            inner.id
        ));
        return vars;
    }
    vars.push(i.var.clone());
    vars
}

/// Variables of loops inside `site` declared outside it (`int j;` at the top, then
/// `for (j = 0; ...)`): shared by default in a `parallel for`, so they must be private.
fn inner_loop_variables(ctx: &Ctx<'_>, site: &LoopSite) -> Vec<String> {
    let Some(index) = ctx
        .sites
        .loops
        .iter()
        .position(|l| l.keyword == site.keyword)
    else {
        return Vec::new();
    };
    let inside = |l: &LoopSite| {
        let mut parent = l.parent;
        while let Some(p) = parent {
            if p == index {
                return true;
            }
            parent = ctx.sites.loops[p].parent;
        }
        false
    };
    let body = ctx.slice(site.body);
    let mut out = Vec::new();
    for l in ctx.sites.loops.iter().filter(|l| inside(l)) {
        let Some(init) = l.header.first().map(|h| ctx.slice(*h)) else {
            continue;
        };
        let toks = crate::ctext::token_strings(init);
        // `j = 0`, `j = 0, k = 1`: each assigned name.
        for w in toks.windows(2) {
            if w[1] == "=" && is_identifier(w[0]) {
                let v = w[0].to_string();
                if !declared_in(init, &v) && !declared_in(body, &v) && !out.contains(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Whether `name` may be in scope at the loop's pragma: a global of the unit, or a name the
/// function's text uses before the loop (its parameters and earlier declarations).
fn visible_at_pragma(ctx: &Ctx<'_>, site: &LoopSite, name: &str) -> bool {
    let function = &ctx.sites.functions[site.function];
    let before = ctx
        .text
        .get(function.span.start as usize..site.span.start as usize)
        .unwrap_or("");
    crate::ctext::token_strings(before).contains(&name)
        || ctx
            .unit
            .lowered
            .program
            .globals
            .iter()
            .any(|g| g.name == name && g.local_to.is_none())
}

/// Variables declared outside the loop (parameters and globals included) that it reads.
fn scalars_read_inside(ctx: &Ctx<'_>, site: &LoopSite) -> Vec<String> {
    crate::text_aliases::variables_inside(&ctx.sites, site, false)
}

/// The report writes `in_2` for a variable whose name two declarations of the function
/// share; at the loop the source has one `in` in scope.
fn source_name(ctx: &Ctx<'_>, name: &str) -> String {
    let end = name.find(['.', '-', '[']).unwrap_or(name.len());
    let root = &name[..end];
    if ctx.type_of(root).is_some() {
        return name.to_string();
    }
    match root.rsplit_once('_') {
        Some((base, n))
            if !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && ctx.type_of(base).is_some() =>
        {
            format!("{base}{}", &name[end..])
        }
        _ => name.to_string(),
    }
}

/// True when `after` (the text after the lvalue `x`) is ` = x + e;` or ` = x - e;` with no
/// operator in `e` binding looser than `*` at its top level, or ` = x * e;` with none
/// looser than unary ones: the `x = x binop expr` form of `#pragma omp atomic update`.
/// Also ` = e + x;` and ` = e * x;` (NPB IS's `R23 = 0.50 * R23;`), the `x = expr binop x`
/// form, with no operator in `e` binding looser than the last one at its top level.
fn self_update(lvalue: &str, after: &str) -> bool {
    let after = after.trim_start();
    let Some(rhs) = after.strip_prefix('=').filter(|r| !r.starts_with('=')) else {
        return false;
    };
    let rhs = &rhs[..rhs.find(';').unwrap_or(rhs.len())];
    let lhs = crate::ctext::token_strings(lvalue);
    let toks = crate::ctext::token_strings(rhs);
    if toks.len() <= lhs.len() + 1 {
        return false;
    }
    if toks[..lhs.len()] != lhs[..] {
        // `e op x`: the same test on `e`, the operator being the last one.
        let (rest, last) = toks.split_at(toks.len() - lhs.len());
        let Some((op, e)) = rest.split_last() else {
            return false;
        };
        let looser: &[&str] = match *op {
            "+" => &[],
            "*" => &["+", "-"],
            _ => return false,
        };
        return last == &lhs[..] && !e.is_empty() && no_looser_operator(e, looser);
    }
    let op = toks[lhs.len()];
    let looser: &[&str] = match op {
        "+" | "-" => &["+", "-"],
        "*" => &["+", "-", "*", "/", "%"],
        _ => return false,
    };
    no_looser_operator(&toks[lhs.len() + 1..], looser)
}

/// Whether the tokens `e` are balanced and have, at their top level, neither a comparison,
/// bitwise, logical, conditional, comma or assignment operator nor a binary one of `looser`.
fn no_looser_operator(e: &[&str], looser: &[&str]) -> bool {
    let mut depth = 0i32;
    let mut previous_is_operand = false;
    for t in e {
        match *t {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "<<" | ">>" | "<" | ">" | "<=" | ">=" | "==" | "!=" | "&" | "^" | "|" | "&&" | "||"
            | "?" | ":" | "," | "="
                if depth == 0 =>
            {
                return false
            }
            t if depth == 0 && previous_is_operand && looser.contains(&t) => return false,
            _ => {}
        }
        previous_is_operand = matches!(*t, ")" | "]")
            || t.chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
    }
    depth == 0
}

/// The statements of `r`'s updates inside the loop, each made atomic in `form`: where
/// each starts in the original file and the token it starts with. `x op= e;`, `x++;` and
/// `x = x + e;` for an update, `x = e;` for a write or a compare (whose right side the
/// rewrite takes apart). An update inside a larger expression is refused.
fn atomic_sites(
    ctx: &Ctx<'_>,
    unit: &Unit,
    site: &LoopSite,
    r: &advisor::model::Reduction,
    form: AtomicForm,
    grouped: &mut Vec<TextEdit>,
) -> Result<Vec<AtomicSite>, EmitError> {
    let map = &unit.preprocessed.source_map;
    let roots = expr_roots(&r.target);
    let mut out = Vec::new();
    // An update of a shape `atomic update` does not take, for the refusal.
    let mut shapeless: Option<(String, u32)> = None;
    for a in &ctx.sites.accesses {
        if a.span.start < site.span.start || a.span.end > site.span.end {
            continue;
        }
        let after = &ctx.text[a.span.end as usize..];
        // `x = x + a + b` is `(x + a) + b`, which `atomic update` does not take: written
        // `x = x + (a + b)`, it does.
        let mut regroup = None;
        let wanted = match form {
            // `x op= e;`, `x++;`, or `x = x + e;` (PolyBench's atax and bicg), which
            // `#pragma omp atomic update` also takes.
            AtomicForm::Update => {
                a.mode == AccessMode::Update
                    || (a.mode == AccessMode::Write && {
                        regroup = (!self_update(ctx.slice(a.span), after))
                            .then(|| grouped_sum(ctx.slice(a.span), after))
                            .flatten();
                        self_update(ctx.slice(a.span), after) || regroup.is_some()
                    })
            }
            AtomicForm::Write | AtomicForm::Compare { .. } => a.mode == AccessMode::Write,
        };
        let loc = map.locate(a.span.start as usize);
        if !wanted {
            if a.mode == AccessMode::Write && r.lines.contains(&loc.line) {
                let statement = after.split(';').next().unwrap_or("");
                let text = format!("{}{}", ctx.slice(a.span), statement);
                shapeless.get_or_insert((
                    text.split_whitespace().collect::<Vec<_>>().join(" "),
                    loc.line,
                ));
            }
            continue;
        }
        if !r.lines.contains(&loc.line) {
            continue;
        }
        if let Some((plus, semi)) = regroup {
            let base = a.span.end as usize;
            // `x = x - a + b` is `x = x + (-a + b)`: the first operand's sign moves inside.
            let (op, opened) = if after[plus..].starts_with('-') {
                ("-", "+ (-")
            } else {
                ("+", "+ (")
            };
            for (at, original, replacement) in [(plus, op, opened), (semi, ";", ");")] {
                let l = map.locate(base + at);
                grouped.push(TextEdit {
                    line: l.line,
                    col: l.col,
                    original: original.into(),
                    replacement: replacement.into(),
                });
            }
        }
        let lvalue = ctx.slice(a.span);
        // The array's name, also through a pointer to it: `(*B)[r][s]`.
        let first = crate::ctext::token_strings(lvalue)
            .into_iter()
            .find(|t| !matches!(*t, "(" | "*"))
            .map(|s| s.to_string())
            .unwrap_or_default();
        if !roots.contains(&first) && !roots.is_empty() {
            continue;
        }
        // The statement must start at the update (`x += e;`, `x++;`, `++x;`): the token
        // before it ends a statement or opens a body.
        let before = ctx.text[..a.span.start as usize].trim_end();
        let (before, prefix) = match before.strip_suffix("++").or(before.strip_suffix("--")) {
            Some(b) => (b.trim_end(), true),
            None => (before, false),
        };
        let starts_statement = before.ends_with([';', '{', '}', ')', ':'])
            || before.ends_with("else")
            || before.ends_with("do");
        let after = ctx.text[a.span.end as usize..].trim_start();
        let ends_statement = match form {
            // The rewrite parses the statement (`x = MAX(x, e);` has commas).
            AtomicForm::Compare { .. } => true,
            _ => {
                let stmt_end = after.find(';').unwrap_or(after.len());
                let rest = &after[..stmt_end];
                // One update, nothing chained (`x += y = 3` or `x++, y++` is not atomic-able).
                !rest.contains(',') && rest.matches('=').count() <= 1
            }
        };
        if !starts_statement || !ends_statement {
            return Err(EmitError::refused(format!(
                "{}: the update of `{}` at line {} is part of a larger expression; `#pragma omp atomic` needs it as its own statement",
                r.describe(),
                lvalue,
                loc.line
            )));
        }
        let (line, col, token) = if prefix {
            let at = before.len()
                + (ctx.text[before.len()..a.span.start as usize].len()
                    - ctx.text[before.len()..a.span.start as usize]
                        .trim_start()
                        .len());
            let l = map.locate(at);
            (l.line, l.col, ctx.text[at..at + 2].to_string())
        } else {
            // The statement's first token as written (`(` of `(*B)[r][s]`).
            let written = crate::ctext::token_strings(lvalue)
                .first()
                .map_or(first, |t| t.to_string());
            (loc.line, loc.col, written)
        };
        out.push(AtomicSite {
            line,
            col,
            token,
            form: form.clone(),
        });
    }
    if out.is_empty() {
        if let Some((text, line)) = shapeless {
            return Err(EmitError::refused(format!(
                "{}: its update `{text};` at line {line} is not one the port makes atomic: it writes `#pragma omp atomic update` over `x op= e`, `x++`, `x = x + e`, `x = e + x`, `x = x * e`, `x = e * x`, `x = x + a + b` (as `x = x + (a + b)`) and `x = x - a + b` (as `x = x + (-a + b)`)",
                r.describe()
            )));
        }
        return Err(EmitError::refused(format!(
            "{}: its update statement was not found for `#pragma omp atomic`",
            r.describe()
        )));
    }
    Ok(out)
}

/// Where `after` (the text after the lvalue `x`) is ` = x + a + b ...;` or
/// ` = x - a + b ...;`, a sum whose top-level operators are `+` and `-` only: the offsets
/// in `after` of the operator after `x` and of the `;`, between which `(` and `)` make it
/// `x = x + (a + b ...)` (`x = x + (-a + b ...)`), the form `#pragma omp atomic update`
/// takes.
fn grouped_sum(lvalue: &str, after: &str) -> Option<(usize, usize)> {
    let semi = after.find(';')?;
    let stmt = &after[..semi];
    let toks = crate::ctext::code_tokens(stmt);
    let t = |k: usize| toks.get(k).map_or("", |x| crate::ctext::tok_text(stmt, x));
    if t(0) != "=" {
        return None;
    }
    let lhs = crate::ctext::token_strings(lvalue);
    if toks.len() <= lhs.len() + 2 || (0..lhs.len()).any(|j| t(j + 1) != lhs[j]) {
        return None;
    }
    let plus = lhs.len() + 1;
    if t(plus) != "+" && t(plus) != "-" {
        return None;
    }
    let mut depth = 0i32;
    let mut previous_is_operand = false;
    let mut sums = 0;
    for (k, tok) in toks.iter().enumerate().skip(plus + 1) {
        match t(k) {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "<<" | ">>" | "<" | ">" | "<=" | ">=" | "==" | "!=" | "&" | "^" | "|" | "&&" | "||"
            | "?" | ":" | "," | "=" | "+=" | "-=" | "*=" | "/="
                if depth == 0 =>
            {
                return None
            }
            "+" | "-" if depth == 0 && previous_is_operand => sums += 1,
            _ => {}
        }
        previous_is_operand = matches!(t(k), ")" | "]") || tok.kind != crate::ctext::TokKind::Punct;
    }
    (sums > 0 && depth == 0).then(|| (toks[plus].start, semi))
}

#[cfg(test)]
mod null_tests {
    use super::null_tested;

    #[test]
    fn tests_for_null_in_every_spelling() {
        for text in [
            "for (j = 0; j < n; j++) if (dir) out[j] = dir[j];",
            "for (j = 0; j < n; j++) out[j] = dir ? dir[j] : 0;",
            "for (j = 0; j < n; j++) if (dir != NULL) out[j] = dir[j];",
            "for (j = 0; j < n; j++) if (NULL == dir) continue;",
            "for (j = 0; j < n; j++) if (!dir || j > 2) out[j] = 1;",
            "for (j = 0; j < n; j++) if (k && dir) out[j] = dir[j];",
        ] {
            assert!(null_tested(text, "dir"), "{text}");
        }
        for text in [
            "for (j = 0; j < n; j++) out[j] = dir[j];",
            "for (j = 0; j < n; j++) out[j] = s->dir + f(x, dir);",
            "for (j = 0; j < n; j++) if (p.dir) out[j] = 1;",
            "for (j = 0; j < n; j++) if (direction) out[j] = 1;",
            "for (j = 0; j < n; j++) *dir = c < *dir ? c : *dir;",
        ] {
            assert!(!null_tested(text, "dir"), "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_sum_after_the_target_is_grouped() {
        use super::grouped_sum as g;
        let after = " = u[i][j]\n + c * r[i][j] - (a + b) * 2;\n";
        let (plus, semi) = g("u[i][j]", after).unwrap();
        assert_eq!(&after[plus..plus + 1], "+");
        assert_eq!(&after[semi..semi + 1], ";");
        // One operand after `x` is `atomic update`'s own form; a product, another target
        // or a comparison are not grouped; a subtraction first is (its sign moves inside).
        assert_eq!(g("x", " = x + a * b;"), None);
        assert_eq!(g("x", " = y + a + b;"), None);
        assert_eq!(g("x", " = x * a + b;"), None);
        let (minus, _) = g("x", " = x - a + b;").unwrap();
        assert_eq!(&" = x - a + b;"[minus..minus + 1], "-");
        assert_eq!(g("x", " = x - a;"), None);
        assert_eq!(g("x", " = x + a + (b < c);").map(|_| ()), Some(()));
        assert_eq!(g("x", " = x + a + b < c;"), None);
    }

    #[test]
    fn a_member_read_through_a_taken_address_is_found() {
        use super::member_through_address as f;
        assert_eq!(
            f("x = ((&pixels[i])->opacity) + 1;").as_deref(),
            Some("(&pixels[i])->opacity")
        );
        assert_eq!(
            f("y = (&a[(i)])  ->  red;").as_deref(),
            Some("(&a[(i)])->red")
        );
        assert_eq!(f("f(&a[i]); b[i] = (a[i]).x;"), None);
        assert_eq!(f("if ((&p)->n && q) r = 1;").as_deref(), Some("(&p)->n"));
    }

    #[test]
    fn a_member_of_a_returned_struct_is_found() {
        let f = |text: &str| {
            super::returned_members(text).first().map(|m| {
                format!(
                    "{} / {} / {}",
                    &text[m.whole.0..m.whole.1],
                    &text[m.call.0..m.call.1],
                    m.member
                )
            })
        };
        assert_eq!(
            f("s += (c_mul(p.rt, d)).r;").as_deref(),
            Some("(c_mul(p.rt, d)).r / c_mul(p.rt, d) / r")
        );
        assert_eq!(
            f("s += c_div(a, b).i;").as_deref(),
            Some("c_div(a, b).i / c_div(a, b) / i")
        );
        // Members of variables, parenthesized lvalues and conditions are not calls.
        assert_eq!(f("s += (a[i]).x + d.r;"), None);
        assert_eq!(f("if (x) y = p.q; s += (x + y).z;"), None);
    }

    use super::self_update;

    #[test]
    fn increments_of_the_canonical_form() {
        use super::{canonical_increment, for_increment};
        for ok in [
            "i++",
            "++i",
            "i--",
            "i += 2",
            "i -= s",
            "i = i + k*2",
            "i = 2 + i",
        ] {
            assert!(canonical_increment(ok, "i"), "{ok}");
        }
        for bad in ["da[i++] = 0.0", "i++, k++", "j++", "i += k++", "i = j + 1"] {
            assert!(!canonical_increment(bad, "i"), "{bad}");
        }
        assert_eq!(
            for_increment("for (ii = 0; ii < n; da[ii++] = 0.0);"),
            Some(" da[ii++] = 0.0")
        );
        assert_eq!(
            for_increment("for (i = f(a, b); i < g(c); i++) x;"),
            Some(" i++")
        );
    }

    #[test]
    fn member_chains_are_the_outermost_references() {
        assert_eq!(
            super::member_chains("8*m->b->idx[(t * s.n + g) * 2] + 8*k + x.f"),
            ["m->b->idx[(t * s.n + g) * 2]", "x.f"]
        );
        assert!(super::member_chains("8*a[i] + n").is_empty());
    }

    #[test]
    fn assignments_of_the_atomic_update_form() {
        assert!(self_update("y[j]", " = y[j] + A[i][j] * tmp[i];"));
        assert!(self_update("s", " = s - r[i] * (a + b);"));
        assert!(self_update("p", " = p * -x[i];"));
        // `x = expr binop x`, for the commutative operators.
        assert!(self_update("y[j]", " = A[i][j] + y[j];"));
        assert!(self_update("R23", " = 0.50 * R23;"));
        assert!(self_update("s", " = a * b + s;"));
        assert!(self_update("p", " = a / b * p;"));
        // Not an update of `x`: `a + (b * p)`, `a - x`, `x` inside a larger last operand.
        assert!(!self_update("p", " = a + b * p;"));
        assert!(!self_update("s", " = a - s;"));
        assert!(!self_update("s", " = a + b[s];"));
        assert!(!self_update("s", " = a < b + s;"));
        // Not `x = x binop expr`: a looser operator in expr, `==`, another element.
        assert!(!self_update("y[j]", " = y[j] + a - b;"));
        assert!(!self_update("y[j]", " = y[j] * a + b;"));
        assert!(!self_update("y[j]", " == y[j] + a;"));
        assert!(!self_update("y[j]", " = y[k] + a;"));
        assert!(self_update("y[j]", " = y[j] + (a > b);"));
    }
}
