//! `warpwise instantiate`: a kernel report plus a profile become numbers — the program's
//! variables solved from loop counts, sections in bytes, requests per launch, an offload
//! estimate (thesis §6; formulas in docs/instantiation.md).

use crate::inputs::{collect, CFlags};
use crate::output::Format;
use advisor::analyze::{analyze_unit_injected, Filter};
use advisor::mapping::Target;
use advisor::model::{LoopReport, Report};
use clap::Args;
use frontend::loop_ref::LoopSelector;
use frontend::unit::load_unit;
use instantiate::equations::CountStatistic;
use instantiate::eval::Values;
use instantiate::model::INSTANCE_SCHEMA;
use instantiate::offload::Link;
use instantiate::{instantiate, render, InstanceReport, Options};
use profile::Profile;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options shared by `instantiate` and `analyze --instantiate`.
#[derive(Args, Debug, Clone)]
pub struct InstanceArgs {
    /// Give a variable's value (repeatable); it takes precedence over the profile.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// The per-entry count the equations use when a loop's entries ran different counts.
    #[arg(long = "count", value_name = "min|mean|max", default_value = "max")]
    pub count: String,
    /// Host-device bandwidth in GB/s (default: PCIe 4.0 x16, about 25).
    #[arg(long = "link-gbps", value_name = "GB/S", default_value_t = 25.0)]
    pub link_gbps: f64,
    /// Fixed cost of one host-device copy, microseconds.
    #[arg(long = "copy-latency-us", value_name = "US", default_value_t = 10.0)]
    pub copy_latency_us: f64,
    /// Fixed cost of one kernel launch, microseconds.
    #[arg(long = "launch-us", value_name = "US", default_value_t = 5.0)]
    pub launch_us: f64,
}

#[derive(Args, Debug)]
pub struct InstantiateArgs {
    /// A kernel report from `warpwise analyze --format yaml` (or json).
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,
    /// The profile from `warpwise profile` / `warpwise cc`.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub instance: InstanceArgs,
    /// Target GPU (sm_70, sm_80, sm_90 or a card name).
    #[arg(long, value_name = "NAME", default_value = advisor::gpus::DEFAULT_GPU)]
    pub gpu: String,
    /// Block shape `XxY` (default: the report's, else 32x8).
    #[arg(long, value_name = "XxY")]
    pub block: Option<String>,
    /// Flags to read the report's C files again where a section needs re-analysis (§6.2).
    #[command(flatten)]
    pub cflags: CFlags,
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Exit code 2 for bad options, 1 for unreadable inputs.
pub fn options(args: &InstanceArgs, gpu: &str, block: (u64, u64)) -> Result<Options, (u8, String)> {
    let gpu = advisor::gpus::gpu(gpu).ok_or_else(|| {
        (
            2,
            format!("unknown GPU `{gpu}` (known: {})", advisor::gpus::known()),
        )
    })?;
    let mut set = Values::new();
    for s in &args.set {
        let parsed = s
            .split_once('=')
            .and_then(|(n, v)| Some((n.trim().to_string(), v.trim().parse::<i64>().ok()?)));
        match parsed {
            Some((name, value)) if !name.is_empty() => {
                set.insert(name, value);
            }
            _ => return Err((2, format!("`--set {s}`: expected NAME=INTEGER, e.g. n=200"))),
        }
    }
    let statistic = CountStatistic::parse(&args.count).ok_or_else(|| {
        (
            2,
            format!("`--count {}`: expected min, mean or max", args.count),
        )
    })?;
    if args.link_gbps.is_nan()
        || args.link_gbps <= 0.0
        || args.copy_latency_us < 0.0
        || args.launch_us < 0.0
    {
        return Err((
            2,
            "link bandwidth must be positive and latencies not negative".into(),
        ));
    }
    Ok(Options {
        set,
        block,
        gpu,
        link: Link {
            bytes_per_s: (args.link_gbps * 1e9) as u64,
            latency_ns: (args.copy_latency_us * 1e3) as u64,
            launch_ns: (args.launch_us * 1e3) as u64,
        },
        statistic,
    })
}

/// Re-analyses one loop with values injected, reading its file with `cflags`.
pub fn reanalyze_with(
    cflags: &CFlags,
    target: Target,
) -> impl Fn(&LoopReport, &Values) -> Result<LoopReport, String> + '_ {
    move |l: &LoopReport, values: &Values| {
        let id = &l.id;
        let file = id.file.as_str();
        let path = Path::new(file);
        if !path.is_file() {
            return Err(format!("`{file}` is not readable from here"));
        }
        let (inputs, problems) = collect(&[path.to_path_buf()], cflags);
        let input = inputs
            .into_iter()
            .next()
            .ok_or_else(|| problems.first().map(|d| d.to_string()).unwrap_or_default())?;
        let unit = load_unit(&input).map_err(|d| d.to_string())?;
        let injected: HashMap<String, i64> = values.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let this_loop = LoopSelector::from(id);
        let filter = Filter {
            function: Some(l.function.clone()),
            loop_id: Some(this_loop.clone()),
            ..Filter::default()
        };
        analyze_unit_injected(&unit, &filter, &target, &injected)
            .into_iter()
            .find(|r| this_loop.matches(&r.id))
            .ok_or_else(|| format!("loop {} not found again in `{file}`", l.id))
    }
}

pub fn run(args: &InstantiateArgs) -> ExitCode {
    let mut read = vec![args.report.clone()];
    read.extend(args.profile.iter().cloned());
    if let Err(e) = crate::output::refuse_clobbering(args.output.as_deref(), &read) {
        return fail(2, &e);
    }
    if let Some(code) = run_streaming(args) {
        return code;
    }
    let text = match frontend::files::read_input_text(&args.report) {
        Ok(t) => t,
        Err(e) => return fail(1, &format!("cannot read `{}`: {e}", args.report.display())),
    };
    if let Some((line, col)) =
        profile::yaml_guard::too_deep(&text, profile::yaml_guard::MAX_NESTING)
    {
        return fail(
            1,
            &format!(
                "{}:{line}:{col}: not a kernel report: nested more than {} levels deep",
                args.report.display(),
                profile::yaml_guard::MAX_NESTING
            ),
        );
    }
    // A JSON report is read straight into the model; serde_yaml first loads every event of
    // the document (a 77,000-loop report of 77 MB took 1.6 GB). JSON that serde_json
    // refuses goes through YAML as before, for the same messages.
    let json = text.trim_start().starts_with('{');
    let parsed = match json.then(|| serde_json::from_str::<Report>(&text)) {
        Some(Ok(report)) => Ok(report),
        _ => serde_yaml::from_str(&text),
    };
    let mut report: Report = match parsed {
        Ok(r) => r,
        Err(e) => {
            let at = e
                .location()
                .map(|l| format!("{}:{}:{}: ", args.report.display(), l.line(), l.column()))
                .unwrap_or_else(|| format!("{}: ", args.report.display()));
            return fail(1, &format!("{at}not a kernel report: {e}"));
        }
    };
    // The analyses' names of the values, which the profile and the evaluation use.
    report.loops.iter_mut().for_each(advisor::legend::restore);
    if report.schema != advisor::model::SCHEMA {
        return fail(
            1,
            &format!(
                "{}: schema `{}`, expected `{}`",
                args.report.display(),
                report.schema,
                advisor::model::SCHEMA
            ),
        );
    }
    let profile = match &args.profile {
        Some(p) => match profile::read_profile(p) {
            Ok(p) => Some(p),
            Err(e) => return fail(1, &e.to_string()),
        },
        None => None,
    };
    let block_text = args.block.clone().unwrap_or_else(|| {
        report
            .loops
            .iter()
            .find_map(|l| l.occupancy.as_ref().map(|o| o.block.clone()))
            .unwrap_or_else(|| "32x8".into())
    });
    let Some(block) = advisor::mapping::parse_block(&block_text) else {
        return fail(
            2,
            &format!("`--block {block_text}`: expected XxY with at most 1024 threads, e.g. 32x8"),
        );
    };
    let options = match options(&args.instance, &args.gpu, block) {
        Ok(o) => o,
        Err((code, e)) => return fail(code, &e),
    };
    let target = Target {
        gpu: options.gpu,
        block,
    };
    let reanalyze = reanalyze_with(&args.cflags, target);
    let instance = instantiate(&report, profile.as_ref(), &options, Some(&reanalyze));
    if let Err(e) = check_set_names(&report, &instance, &options.set) {
        return fail(2, &e);
    }
    write(&instance, args.format, args.output.as_deref())
}

/// `instantiate` on a JSON report, read a loop at a time in two passes over the file (the
/// first for what loops need of each other, the second to instantiate and write each loop
/// as it is read) into output written as it is made: memory for the loops' sketches, not
/// the report. `None` where the report is to be read whole: not JSON, or with a problem
/// (a malformed report, an unreadable profile, a bad option...), which reading it whole
/// reports with the same message, in the same order, as always.
fn run_streaming(args: &InstantiateArgs) -> Option<ExitCode> {
    use std::io::{BufReader, Read, Write};
    let format = crate::output::resolve_format(args.format, args.output.as_deref());
    if !matches!(format, Format::Text | Format::Yaml | Format::Json) {
        return None;
    }
    let open = || std::fs::File::open(&args.report).ok();
    let mut start = [0u8; 4096];
    let n = open()?.read(&mut start).ok()?;
    if start[..n].iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    // First pass: the sketches, the first block, whether the loops were profiled.
    let heads = crate::report_heads::read(open()?)?;
    if heads.schema != advisor::model::SCHEMA {
        return None;
    }
    let (mut sketches, block_text, observed) = (heads.sketches, heads.block, heads.observed);
    let profile = match &args.profile {
        Some(p) => Some(profile::read_profile(p).ok()?),
        None => None,
    };
    let block_text = args
        .block
        .clone()
        .or(block_text)
        .unwrap_or_else(|| "32x8".into());
    let block = advisor::mapping::parse_block(&block_text)?;
    let options = options(&args.instance, &args.gpu, block).ok()?;
    let target = Target {
        gpu: options.gpu,
        block,
    };
    let apply = profile.is_some() && !observed;
    instantiate::order_sketches(&mut sketches, profile.as_ref(), apply);
    let index = instantiate::LoopIndex::new(&sketches);
    // Second pass: each loop instantiated and written as it is read. Loops a profile may
    // move ahead are held (as many as the profile has loops); with a profile, the others
    // wait in a temporary file to be written after them.
    let mut sink = crate::output::Sink::new(args.output.as_deref()).ok()?;
    let mut spool = match &profile {
        Some(_) => Some(std::io::BufWriter::new(tempfile::tempfile().ok()?)),
        None => None,
    };
    let mut order = instantiate::Order::default();
    let mut known: BTreeSet<String> = BTreeSet::new();
    let mut spooled = false;
    let mut write_error: Option<String> = None;
    let empty = InstanceReport {
        schema: INSTANCE_SCHEMA.to_string(),
        inputs: instantiate::inputs(profile.as_ref(), &options),
        loops: Vec::new(),
    };
    let mut pieces = crate::instance_output::Pieces::instance(&empty, format)?;
    sink.write_all(pieces.head().as_bytes()).ok()?;
    // Loops are read in batches, each loop's text found by a scan of the bytes (on a thread
    // of its own); a batch is parsed, instantiated and formatted on every core (a loop
    // needs only itself and the sketches), then placed and written in report order, so the
    // output does not depend on the thread count. Parsing on the reading thread, a loop at
    // a time, was a third of the run.
    let mut texts = 0usize;
    let mut write_batch = |batch: Vec<Vec<u8>>| -> Result<(), String> {
        texts += batch.len();
        let shared = &pieces;
        // A loop written at once is dropped here, on the cores, not on the writing thread
        // while they wait for the next batch (its many small parts were a tenth of that
        // thread's work).
        let done: Vec<(
            Vec<String>,
            Option<instantiate::model::InstanceLoop>,
            String,
        )> = batch
            .into_par_iter()
            .map(|text| {
                let mut l: LoopReport = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
                advisor::legend::restore(&mut l);
                drop(text);
                let mut names: Vec<String> = l.parameters.iter().map(|p| p.name.clone()).collect();
                // Made here: the closure behind `&dyn Fn` is not shared between threads.
                let reanalyze = reanalyze_with(&args.cflags, target);
                let mut one = instantiate::instantiate_one(
                    l,
                    &index,
                    profile.as_ref(),
                    &options,
                    Some(&reanalyze),
                    apply,
                );
                names.extend(one.values.iter().map(|v| v.name.clone()));
                // Named for writing here, and held so: what the order reads is numbers.
                one.name_values();
                let item = shared.instance_item(&one);
                let held = instantiate::Order::holds(&one, profile.as_ref(), apply);
                Ok((names, held.then_some(one), item))
            })
            .collect::<Result<_, String>>()?;
        for (names, held, item) in done {
            for name in names {
                if !known.contains(&name) {
                    known.insert(name);
                }
            }
            // A loop held here is formatted again when it is written.
            if let Some(one) = held {
                order.place(one, profile.as_ref(), apply);
                continue;
            }
            let written = match &mut spool {
                Some(spool) => {
                    spooled = true;
                    spool.write_all(item.as_bytes())
                }
                None => pieces.put(&mut sink, &item),
            };
            written.map_err(|e| {
                write_error = Some(e.to_string());
                e.to_string()
            })?;
        }
        Ok(())
    };
    let file = open()?;
    let (found, batches) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(2);
    let read = std::thread::scope(|scope| {
        // The scan, a tenth of the run, goes on beside the work on the batches it found.
        let scan = scope.spawn(move || {
            let mut batches = crate::report_heads::TextBatches::new(found, BATCH);
            let reader = BufReader::with_capacity(1 << 20, file);
            instantiate::loop_texts::each_loop_text(reader, |text| batches.push(text))?;
            batches.finish()
        });
        let mut written = Ok(());
        for batch in &batches {
            written = write_batch(batch);
            if written.is_err() {
                break;
            }
        }
        // Stops the scan where the writing stopped first.
        drop(batches);
        let scanned = scan
            .join()
            .unwrap_or_else(|_| Err("the scan of the report stopped".into()));
        written.and(scanned)
    });
    if let Some(e) = write_error {
        return Some(fail(1, &e));
    }
    read.ok()?;
    // As many loops as the first pass read: else the file changed in between.
    if texts != sketches.len() {
        return None;
    }
    let known_names: BTreeSet<&str> = known.iter().map(String::as_str).collect();
    if let Err(e) = unknown_set_names(&known_names, &options.set) {
        return Some(fail(2, &e));
    }
    let written = (|| -> std::io::Result<()> {
        for mut l in order.held() {
            l.name_values();
            let item = pieces.instance_item(&l);
            pieces.put(&mut sink, &item)?;
        }
        if let (Some(spool), true) = (spool, spooled) {
            let mut file = spool.into_inner().map_err(|e| e.into_error())?;
            use std::io::Seek;
            file.rewind()?;
            pieces.put_all(&mut sink, &mut BufReader::new(file))?;
        }
        sink.write_all(pieces.tail().as_bytes())
    })();
    if let Err(e) = written {
        return Some(fail(1, &e.to_string()));
    }
    Some(match sink.finish() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(1, &e),
    })
}

/// Loops instantiated together on the cores: enough to keep them busy, few enough that a
/// batch of parsed loops takes little memory.
const BATCH: usize = 512;

/// A `--set NAME=VALUE` whose name no loop of the report uses is a mistake (a typo, a
/// variable of another report) that would otherwise change nothing and say nothing: an
/// error naming the nearest names the loops do use.
pub fn check_set_names(
    report: &Report,
    instance: &InstanceReport,
    set: &Values,
) -> Result<(), String> {
    let known: BTreeSet<&str> = instance
        .loops
        .iter()
        .flat_map(|l| l.values.iter().map(|v| v.name.as_str()))
        .chain(
            report
                .loops
                .iter()
                .flat_map(|l| l.parameters.iter().map(|p| p.name.as_str())),
        )
        .collect();
    unknown_set_names(&known, set)
}

/// [`check_set_names`] given the names the loops use.
fn unknown_set_names(known: &BTreeSet<&str>, set: &Values) -> Result<(), String> {
    // A written report shows a place-qualified name by its legend's identifier.
    let shown: BTreeSet<String> = known
        .iter()
        .filter_map(|k| advisor::legend::identifier(k))
        .collect();
    let unknown: Vec<&String> = set
        .keys()
        .filter(|name| !known.contains(name.as_str()) && !shown.contains(name.as_str()))
        .collect();
    let Some(first) = unknown.first() else {
        return Ok(());
    };
    let names: Vec<String> = known
        .iter()
        .map(|k| advisor::legend::identifier(k).unwrap_or_else(|| k.to_string()))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let nearest = crate::selection::nearest_names(first, &names);
    let list = |names: &[&String]| -> String {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(format!(
        "`--set`: no loop of the report uses {}{}",
        list(&unknown),
        if nearest.is_empty() {
            String::new()
        } else {
            format!(
                " (nearest: {})",
                nearest
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ))
}

/// Instantiates an in-memory report (for `analyze --instantiate`).
pub fn instantiate_report(
    report: &Report,
    profile: Option<&Profile>,
    options: &Options,
    cflags: &CFlags,
) -> InstanceReport {
    let target = Target {
        gpu: options.gpu,
        block: options.block,
    };
    let reanalyze = reanalyze_with(cflags, target);
    instantiate(report, profile, options, Some(&reanalyze))
}

pub fn write(instance: &InstanceReport, format: Option<Format>, output: Option<&Path>) -> ExitCode {
    let format = crate::output::resolve_format(format, output);
    if matches!(format, Format::Sarif | Format::Html) {
        return fail(
            2,
            "`--format sarif` and `--format html` are for `analyze`; an instantiated report is text, yaml or json",
        );
    }
    let mut instance = instance.clone();
    instance
        .loops
        .iter_mut()
        .for_each(instantiate::model::InstanceLoop::name_values);
    let text =
        crate::output::serialize(&instance, format).unwrap_or_else(|| render::render(&instance));
    match crate::output::write_text(&text, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(1, &e),
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}
