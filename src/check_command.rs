//! `warpwise check`: requests and sectors per warp of each global access of existing CUDA
//! kernels, and the divergence of their branches (`advisor::check`); as text, YAML, JSON
//! SARIF (`check_sarif`) or one HTML page (`check_html`).

use crate::inputs::{collect, CFlags};
use advisor::check::model::RunSummary;
use clap::{Args, ValueEnum};
use frontend::unit::load_unit;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// CUDA files (`.cu`) to check together: a kernel's launches may be in another file.
    #[arg(value_name = "FILE", required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    /// A value for the counts, `NAME=VALUE`: `blockDim.x=16` (over the launches'), or a
    /// kernel parameter (`n=1024`); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Output format; `text` on a terminal, `yaml` otherwise; `sarif` (SARIF 2.1.0, one
    /// result per finding) for code scanning; `html`, one self-contained page (`-o
    /// check.html`) with the source, a mark on each line with an access or branch, and a
    /// panel per kernel.
    #[arg(long, value_enum)]
    pub format: Option<CheckFormat>,
    /// Write the report to this file instead of stdout (never one of the inputs).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also build the program (the files hold `main`) for the CPU shim, run it, and count
    /// per access what its warps really touched, against the static count.
    #[arg(long)]
    pub dynamic: bool,
    /// The program's arguments for `--dynamic`, split as a shell splits words (nothing is
    /// expanded; no shell runs).
    #[arg(
        long,
        value_name = "ARGS",
        allow_hyphen_values = true,
        requires = "dynamic"
    )]
    pub args: Option<String>,
    /// Seconds the `--dynamic` run may take before it is killed.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
}

/// The most global accesses a `--dynamic` run counts; the report says when it stopped there.
const MAX_EVENTS: u64 = 50_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Yaml,
    Json,
    Sarif,
    Html,
}

pub fn run(args: &CheckArgs) -> ExitCode {
    let mut set = BTreeMap::new();
    for s in &args.set {
        match s
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim().parse::<i64>()))
        {
            Some((name, Ok(value))) if !name.is_empty() => {
                set.insert(name.to_string(), value);
            }
            _ => {
                eprintln!("error: `--set {s}`: expected NAME=INTEGER, e.g. blockDim.x=16");
                return ExitCode::from(2);
            }
        }
    }
    let (inputs, problems) = collect(&args.paths, &args.cflags);
    for p in &problems {
        eprint!("{}", p.render(false));
    }
    if let Err(e) = crate::output::refuse_clobbering(
        args.output.as_deref(),
        &crate::output::unit_paths(&inputs),
    ) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut units = Vec::new();
    for input in &inputs {
        match load_unit(input) {
            Ok(unit) => {
                for d in unit.diagnostics() {
                    eprint!("{}", d.render(false));
                }
                units.push(unit);
            }
            Err(d) => eprint!("{}", d.render(false)),
        }
    }
    if units.is_empty() {
        eprintln!("error: nothing to check");
        return ExitCode::from(1);
    }
    let mut report = advisor::check::check_units(&units, &advisor::check::Options { set });
    let mut failed = false;
    if args.dynamic {
        let Some(argv) = cuda::dynamic::split_args(args.args.as_deref().unwrap_or_default()) else {
            eprintln!("error: `--args`: a quote is not closed");
            return ExitCode::from(2);
        };
        match dynamic(&units, &inputs, argv, args.timeout) {
            Ok((observed, run)) => {
                advisor::check::dynamic::attach(
                    &mut report,
                    &observed.sites,
                    &observed.launches,
                    run,
                );
            }
            Err(e) => {
                eprintln!("error: --dynamic: {e}");
                failed = true;
            }
        }
    }
    let format = args.format.unwrap_or(
        match crate::output::resolve_format(None, args.output.as_deref()) {
            crate::output::Format::Text => CheckFormat::Text,
            _ => CheckFormat::Yaml,
        },
    );
    let text = match format {
        CheckFormat::Text => advisor::check::text::render(&report),
        CheckFormat::Yaml => {
            crate::output::serialize(&report, crate::output::Format::Yaml).unwrap_or_default()
        }
        CheckFormat::Json => {
            crate::output::serialize(&report, crate::output::Format::Json).unwrap_or_default()
        }
        CheckFormat::Sarif => crate::check_sarif::render(&report),
        CheckFormat::Html => crate::check_html::render(&report),
    };
    match crate::output::write_text(&text, args.output.as_deref()) {
        Ok(()) if failed => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Builds and runs the program for `--dynamic`: its launches are those the frontend found.
fn dynamic(
    units: &[frontend::unit::Unit],
    inputs: &[frontend::preprocess::TranslationUnitInput],
    argv: Vec<String>,
    timeout: u64,
) -> Result<(cuda::dynamic::Observed, RunSummary), cuda::dynamic::DynamicError> {
    let launches = units
        .iter()
        .flat_map(advisor::check::launch::launches)
        .filter_map(|l| l.place)
        .map(|p| cuda::dynamic::LaunchPlace {
            file: p.path,
            line: p.line,
            col: p.col,
        })
        .collect();
    let request = cuda::dynamic::Request {
        inputs: inputs.to_vec(),
        launches,
        args: argv.clone(),
        timeout: std::time::Duration::from_secs(timeout.max(1)),
        max_events: MAX_EVENTS,
    };
    let observed = cuda::dynamic::run(&request)?;
    let run = RunSummary {
        args: argv,
        events: observed.events,
        truncated: observed
            .truncated
            .then(|| format!("the count stopped after {MAX_EVENTS} accesses")),
        exit_status: observed.exit_status,
        unmatched: Vec::new(),
    };
    Ok((observed, run))
}
