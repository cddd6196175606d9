//! `warpwise profile`: build the given C files with instrumentation, run the program with
//! the user's arguments, and leave a merged profile.

use crate::inputs::CFlags;
use clap::Args;
use frontend::loop_ref::LoopRef;
use profile::driver::{build, real_compiler, run, BuildOptions, RunOptions};
use profile::model::{normalize, DEFAULT_PROFILE};
use profile::{LoopSelection, Tracking};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The program's C files.
    #[arg(value_name = "FILE.c", required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    /// Loops whose dependences are tracked: `needs-profile` (what `analyze` could not
    /// decide), `all`, `none`, or loop ids `FILE:LINE[:COL],...`.
    #[arg(long, value_name = "WHICH", default_value = "needs-profile")]
    pub loops: String,
    /// Watch every access of the tracked loops, not only those of the pairs the static
    /// analysis left undecided (slower; the reference the default is tested against).
    #[arg(long)]
    pub full_tracking: bool,
    /// The profile file; an existing one gets this run added.
    #[arg(short = 'o', long, value_name = "FILE", default_value = DEFAULT_PROFILE)]
    pub output: PathBuf,
    /// Start a new profile instead of adding to an existing one.
    #[arg(long)]
    pub fresh: bool,
    /// Stop the program after this many seconds (the profile is kept, marked incomplete);
    /// 1 to 2147483647 (what the runtime's alarm can hold).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    pub timeout: Option<u64>,
    #[command(flatten)]
    pub program: crate::inputs::ProgramArgs,
}

pub fn run_command(args: &ProfileArgs) -> ExitCode {
    let Some(inputs) = crate::inputs::collect_all(&args.paths, &args.cflags, "profile") else {
        return ExitCode::from(1);
    };
    if let Err(e) =
        crate::output::refuse_clobbering(Some(&args.output), &crate::output::unit_paths(&inputs))
            .and_then(|()| crate::output::refuse_special_profile(&args.output))
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let (work_dir, _removed_on_exit) = match args.program.work_dir("profile") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let options = BuildOptions {
        cc: real_compiler(),
        cflags: args
            .program
            .codegen
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        ldflags: args.program.libs.iter().map(|l| format!("-l{l}")).collect(),
        selection: LoopSelection::parse(&args.loops),
        tracking: if args.full_tracking {
            Tracking::Full
        } else {
            Tracking::Undecided
        },
        work_dir: work_dir.clone(),
    };
    let mode = crate::progress::Mode::detect(args.program.quiet);
    let building = crate::progress::Progress::spinner(
        mode,
        &format!(
            "building {} file{} with instrumentation",
            inputs.len(),
            if inputs.len() == 1 { "" } else { "s" }
        ),
    );
    let built = build(&inputs, &options);
    building.finish();
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    // A loop id that selects nothing would profile nothing it names, silently.
    if let LoopSelection::Ids(wanted) = &options.selection {
        // The instrumented loops' ids as the profile keys them, parsed once; a loop with no
        // place (`f.c:?`) can be neither selected nor suggested.
        let ids: Vec<LoopRef> = built
            .loops
            .iter()
            .filter_map(|id| id.parse().ok())
            .collect();
        if let Some((missing, _)) = wanted.iter().find(|(_, w)| {
            !ids.iter()
                .any(|id| w.as_ref().is_some_and(|w| w.matches(id)))
        }) {
            eprintln!(
                "error: {}",
                crate::selection::unknown_loop(missing, &ids).replacen("`--loop ", "`--loops ", 1)
            );
            return ExitCode::from(2);
        }
    }
    eprintln!(
        "warpwise: instrumented {} loops ({} tracked for dependences, {} memory accesses)",
        built.loops.len(),
        built.tracked.len(),
        built.accesses
    );
    let profile = std::path::absolute(&args.output).unwrap_or_else(|_| args.output.clone());
    if args.fresh {
        let _ = std::fs::remove_file(&profile);
    }
    // The program's own output goes to the terminal: a line, not a spinner.
    crate::progress::Progress::say(
        mode,
        &format!(
            "running the program{}",
            if args.program.args.is_empty() {
                String::new()
            } else {
                format!(" with {}", args.program.args.join(" "))
            }
        ),
    );
    let status = run(
        &built.exe,
        &RunOptions {
            args: args.program.args.clone(),
            profile: profile.clone(),
            timeout: args.timeout,
        },
    );
    let code = match status {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    match normalize(&profile) {
        Ok(p) => {
            let state = if p.is_complete() { "" } else { " (incomplete)" };
            eprintln!(
                "warpwise: profile of {} run(s){state} in {}",
                p.runs,
                args.output.display()
            );
            let mut loops: Vec<_> = p.loops.iter().collect();
            loops.sort_by_key(|l| std::cmp::Reverse(l.1.time_ns));
            for (id, l) in loops {
                let deps: Vec<String> = l
                    .blocking()
                    .map(|d| {
                        format!(
                            "{} {} line {}->{}",
                            d.kind, d.array, d.first.line, d.second.line
                        )
                    })
                    .collect();
                let mut notes = Vec::new();
                if !deps.is_empty() {
                    notes.push(format!("dependences: {}", deps.join(", ")));
                }
                if !l.reductions.is_empty() {
                    let r: Vec<String> = l
                        .reductions
                        .iter()
                        .map(|r| format!("{} ({})", r.var, r.op))
                        .collect();
                    notes.push(format!("reductions: {}", r.join(", ")));
                }
                if l.tracked && deps.is_empty() {
                    notes.push("no loop-carried dependence".into());
                }
                eprintln!(
                    "  {id}: {} entries, {} iterations (trip {}..{}, mean {}), {:.3} ms{}",
                    l.entries,
                    l.iterations,
                    l.min_trip,
                    l.max_trip,
                    l.mean_trip,
                    l.time_ns as f64 / 1e6,
                    if notes.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", notes.join("; "))
                    }
                );
            }
        }
        Err(e) => eprintln!("warning: {e}"),
    }
    ExitCode::from(code.clamp(0, 255) as u8)
}
