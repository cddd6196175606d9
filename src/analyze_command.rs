//! `warpwise analyze`: find GPU-friendly loops and write kernel reports or porting recipes.

use crate::inputs::{collect, CFlags};
use crate::output::Format;
use crate::progress::Progress;
use advisor::analyze::{analyze_units, analyze_units_reporting, Aliasing, Filter};
use advisor::model::{Report, SCHEMA};
use clap::{Args, ValueEnum};
use frontend::unit::load_unit;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// C files or directories (every `.c` below them).
    #[arg(value_name = "PATH", required_unless_present = "build_dir")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    /// Only loops of this function.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// Only this loop (`FILE:LINE` or `FILE:LINE:COL`; `FILE:LINE:COL#K` for the K-th loop
    /// of one macro expansion, as reports name it).
    #[arg(long = "loop", value_name = "FILE:LINE")]
    pub loop_id: Option<String>,
    /// What to assume of two pointers a function receives when no call site in the
    /// analysed files shows how they relate: `distinct` (the default) assumes they do not
    /// overlap, as `restrict` would promise, and lists the assumption in each loop that
    /// relies on it; `call-sites` assumes only what the call sites prove (a may-alias pair,
    /// WW110, is `needs-profile`).
    #[arg(long, value_enum, default_value = "distinct", value_name = "POLICY")]
    pub aliasing: AliasingArg,
    /// Dependence pair tests each function may make (work units, so that results do not
    /// depend on the machine); past it, the function's untested pairs are undecided and
    /// its loops `needs-profile` with the caveat "analysis budget exceeded".
    #[arg(long, value_name = "N", default_value_t = advisor::budget::DEFAULT_PAIR_TESTS)]
    pub work_budget: u64,
    /// Output format; `text` (the porting recipe) is the default on a terminal, `yaml` otherwise.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write the report to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// In text form, show every loop in full, not one line per loop that cannot be ported.
    #[arg(long)]
    pub verbose: bool,
    /// No progress on stderr (diagnostics are still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Target GPU architecture for shared-memory and occupancy advice (sm_70, sm_80, sm_90).
    #[arg(long, value_name = "NAME", default_value = advisor::gpus::DEFAULT_GPU)]
    pub gpu: String,
    /// Block shape for shared-memory sizes and divergence, `XxY` (default 32x8).
    #[arg(long, value_name = "XxY", default_value = "32x8")]
    pub block: String,
    /// Settle `needs-profile` loops with a profile from `warpwise profile` / `warpwise cc`,
    /// and order loops by profiled time.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Instead of the kernel report, write it instantiated with the profile (and `--set`
    /// values): what `warpwise instantiate` writes.
    #[arg(long)]
    pub instantiate: bool,
    #[command(flatten)]
    pub instance: crate::instantiate_command::InstanceArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AliasingArg {
    Distinct,
    CallSites,
}

pub fn run(args: &AnalyzeArgs) -> ExitCode {
    let loop_selector = match args.loop_id.as_deref().map(crate::selection::parse_loop) {
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        Some(Ok(selector)) => Some(selector),
        None => None,
    };
    let (inputs, problems) = collect(&args.paths, &args.cflags);
    for p in &problems {
        eprint!("{}", p.render(false));
    }
    if inputs.is_empty() {
        eprintln!("error: nothing to analyse");
        return ExitCode::from(1);
    }
    let mut read = crate::output::unit_paths(&inputs);
    read.extend(args.profile.iter().cloned());
    if let Err(e) = crate::output::refuse_clobbering(args.output.as_deref(), &read) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let Some(gpu) = advisor::gpus::gpu(&args.gpu) else {
        eprintln!(
            "error: unknown GPU `{}` (known: {})",
            args.gpu,
            advisor::gpus::known()
        );
        return ExitCode::from(2);
    };
    let Some(block) = advisor::mapping::parse_block(&args.block) else {
        eprintln!(
            "error: `--block {}`: expected XxY with at most 1024 threads, e.g. 32x8",
            args.block
        );
        return ExitCode::from(2);
    };
    let target = advisor::mapping::Target { gpu, block };
    let filter = Filter {
        function: args.function.clone(),
        loop_id: loop_selector,
        aliasing: match args.aliasing {
            AliasingArg::Distinct => Aliasing::Distinct,
            AliasingArg::CallSites => Aliasing::CallSites,
        },
        work_budget: Some(args.work_budget),
    };
    let mut report = Report {
        schema: SCHEMA.to_string(),
        loops: Vec::new(),
        skipped: Vec::new(),
    };
    // Every unit is loaded first, so that calls resolve program-wide (a function defined in
    // any file given is a function of the program) and callees are summarized once.
    // Files are preprocessed, parsed and lowered in parallel; their messages are printed
    // afterwards in the order given.
    let mode = crate::progress::Mode::detect(args.quiet);
    let loading = Progress::start(mode, "loading", inputs.len());
    // `Diagnostic` is large, but errors are the cold path (as in the frontend).
    #[allow(clippy::result_large_err)]
    let loaded: Vec<_> = advisor::parallel::map(&inputs, |input| {
        let loaded = load_unit(input);
        let name = loaded.as_ref().map(|u| u.path.display().to_string());
        loading.done(name.as_deref().unwrap_or(""));
        loaded
    });
    loading.finish();
    let progress = Progress::start(mode, "analysing", inputs.len());
    let mut units = Vec::new();
    let mut analysed = 0usize;
    for (input, loaded) in inputs.iter().zip(loaded) {
        progress.line(&format!("analysing {}", input.file.display()));
        match loaded {
            Ok(unit) => {
                for d in unit.diagnostics() {
                    if d.is_error() {
                        report.skipped.push(d.to_string());
                    }
                    progress.print(&d.render(false));
                }
                // A file without function definitions (declarations only, or code its
                // macros leave out) is analysed and has no loops; one whose every function
                // failed to lower is not.
                if !unit.lowered.program.functions.is_empty() || unit.lowered.errors.is_empty() {
                    analysed += 1;
                }
                units.push(unit);
            }
            Err(d) => {
                report.skipped.push(d.to_string());
                progress.print(&d.render(false));
                progress.done(&input.file.display().to_string());
            }
        }
    }
    let format = crate::output::resolve_format(args.format, args.output.as_deref());
    if args.profile.is_none() && !args.instantiate {
        if let Some(pieces) = crate::instance_output::Pieces::around(&report, format) {
            if let Ok(sink) = crate::output::Sink::new(args.output.as_deref()) {
                let written =
                    write_streaming(args, &units, &filter, &target, pieces, sink, progress);
                if written != ExitCode::SUCCESS || analysed > 0 {
                    return written;
                }
                eprintln!("error: nothing could be analysed");
                return ExitCode::from(1);
            }
        }
    }
    report
        .loops
        .extend(analyze_units_reporting(&units, &filter, &target, &|unit| {
            progress.done(&unit.path.display().to_string())
        }));
    progress.finish();
    // Every report is checked before it is written (docs/report-format.md, "Names").
    let problems = advisor::verify::verify(&report);
    report_problems(&problems);
    if let Some(e) = unmatched_selection(&units, &filter, &target, report.loops.is_empty()) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut profile = None;
    if let Some(path) = &args.profile {
        match profile::read_profile(path) {
            Ok(p) => {
                profile::apply::apply(&mut report.loops, &p);
                profile = Some(p);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if args.instantiate {
        let options = match crate::instantiate_command::options(&args.instance, &args.gpu, block) {
            Ok(o) => o,
            Err((code, e)) => {
                eprintln!("error: {e}");
                return ExitCode::from(code);
            }
        };
        let instance = crate::instantiate_command::instantiate_report(
            &report,
            profile.as_ref(),
            &options,
            &args.cflags,
        );
        if let Err(e) =
            crate::instantiate_command::check_set_names(&report, &instance, &options.set)
        {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        // The page shows the analysis with the instance's offload estimates on top.
        let written = if args.format == Some(Format::Html) {
            name_values(&mut report);
            let page = crate::html_output::render(&report, &units, Some(&instance));
            match crate::output::write_text(&page, args.output.as_deref()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        } else {
            crate::instantiate_command::write(&instance, args.format, args.output.as_deref())
        };
        if analysed == 0 {
            eprintln!("error: nothing could be analysed");
            return ExitCode::from(1);
        }
        return written;
    }
    name_values(&mut report);
    let text = match format {
        Format::Sarif => crate::sarif_output::render(&report, &units),
        Format::Html => crate::html_output::render(&report, &units, None),
        _ => crate::output::serialize(&report, format)
            .unwrap_or_else(|| advisor::recipe::render(&report, &units, args.verbose)),
    };
    let written = crate::output::write_text(&text, args.output.as_deref());
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    if analysed == 0 {
        eprintln!("error: nothing could be analysed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Writes each loop's values as its legend names them (`advisor::legend`): the last step
/// before the report is written, after everything that reads the analyses' names.
fn name_values(report: &mut Report) {
    for l in report.loops.iter_mut() {
        advisor::legend::name_values(l);
    }
}

/// The kernel report (YAML or JSON, no profile) written a loop at a time as the functions'
/// analyses finish, in order, into `sink`: a file of many functions is not held as reports
/// and then as one text. Checks and errors as for the report made whole.
fn write_streaming(
    args: &AnalyzeArgs,
    units: &[frontend::unit::Unit],
    filter: &Filter,
    target: &advisor::mapping::Target,
    mut pieces: crate::instance_output::Pieces,
    mut sink: crate::output::Sink,
    progress: Progress,
) -> ExitCode {
    use std::io::Write;
    let mut write_error = sink.write_all(pieces.head().as_bytes()).err();
    let mut problems = Vec::new();
    let mut any = false;
    // Several units may each report a loop of a function they share (a header's).
    let mut seen: std::collections::HashMap<
        frontend::loop_ref::LoopRef,
        Vec<advisor::model::LoopReport>,
    > = std::collections::HashMap::new();
    let several = units.len() > 1;
    advisor::analyze::analyze_units_streaming(
        units,
        filter,
        target,
        &|unit| progress.done(&unit.path.display().to_string()),
        &mut |reports| {
            for mut r in reports {
                if several {
                    let same = seen.entry(r.id.clone()).or_default();
                    if same.contains(&r) {
                        continue;
                    }
                    same.push(r.clone());
                }
                any = true;
                problems.extend(advisor::verify::verify_loop(&r));
                advisor::legend::name_values(&mut r);
                if write_error.is_none() {
                    let item = pieces.item(&r);
                    write_error = pieces.put(&mut sink, &item).err();
                }
            }
        },
    );
    progress.finish();
    report_problems(&problems);
    if let Some(e) = unmatched_selection(units, filter, target, !any) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let written = match write_error {
        Some(e) => Err(match &args.output {
            Some(path) => format!("cannot write `{}`: {e}", path.display()),
            None => e.to_string(),
        }),
        None => sink
            .write_all(pieces.tail().as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|()| sink.finish()),
    };
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The usage error for a `--function` or `--loop` that selected nothing, naming the closest
/// candidates (found by analysing again without `--loop`, which only an error pays for).
fn unmatched_selection(
    units: &[frontend::unit::Unit],
    filter: &Filter,
    target: &advisor::mapping::Target,
    nothing_selected: bool,
) -> Option<String> {
    if units.is_empty() {
        return None;
    }
    if let Some(f) = &filter.function {
        if let Some(e) = crate::selection::unknown_function(f, units) {
            return Some(e);
        }
    }
    let wanted = filter.loop_id.as_ref()?;
    if !nothing_selected {
        return None;
    }
    let all = Filter {
        loop_id: None,
        ..filter.clone()
    };
    let ids: Vec<frontend::loop_ref::LoopRef> = analyze_units(units, &all, target)
        .into_iter()
        .map(|l| l.id)
        .collect();
    Some(crate::selection::unknown_loop(&wanted.to_string(), &ids))
}

/// A broken rule of the report is a bug of warpwise: debug builds (the tests) stop at it,
/// release builds name it on stderr and the rest of the report stands.
fn report_problems<P: std::fmt::Display>(problems: &[P]) {
    debug_assert!(
        problems.is_empty(),
        "the report breaks its rules:\n{}",
        problems
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for p in problems {
        eprintln!("warning: report check: {p} (a bug of warpwise; the rest of the report stands)");
    }
}
