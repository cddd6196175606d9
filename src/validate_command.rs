//! `warpwise validate`: runs the generated kernel for a loop on a snapshot of the program's
//! own inputs and compares its results with the program's.
//!
//! Exit codes: 0 every outbound section matches; 1 a mismatch or a failed kernel (the
//! report names the array, the bytes and the values); 2 validation could not be done (the
//! loop was refused, the program did not build or reach the loop, no backend).

use crate::inputs::CFlags;
use crate::kernel_args::{KernelArgs, Target};
use clap::{Args, ValueEnum};
use cuda::validate::snapshot::ProgramOptions;
use cuda::validate::{validate, BackendChoice, ValidateOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// CUDA when a GPU can run it, else the CPU (and the report says so).
    Auto,
    /// The CUDA shim on the host.
    Cpu,
    /// A GPU.
    Cuda,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The program's C files.
    #[arg(value_name = "FILE.c", required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// What to validate: the CUDA kernel of one loop on a snapshot, or the OpenMP offload
    /// port of the program (the original and the ported program built with clang's host
    /// offloading, their outputs compared).
    #[arg(long, value_enum, default_value = "cuda")]
    pub target: Target,
    /// Where the kernel runs (`--target cuda`).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// Which entry of the loop to snapshot (1 = the first time the program reaches it);
    /// default: the first entry that runs at least one iteration.
    #[arg(long, value_name = "N")]
    pub entry: Option<u64>,
    /// Relative tolerance for float and double results (default 1e-5 float, 1e-12 double).
    #[arg(long, value_name = "X")]
    pub rtol: Option<f64>,
    /// `--target openmp`: instead of comparing the two programs' outputs line by line,
    /// require both to match this pattern (a Rust regex searched in the whole output,
    /// `(?m)` for line anchors): for a program that checks its own results and prints
    /// timings, `--expect 'VERIFICATION SUCCESSFUL'`.
    #[arg(long, value_name = "REGEX", value_parser = parse_expect)]
    pub expect: Option<regex::Regex>,
    /// Stop the program or the replay after this many seconds (1 to 2147483647).
    #[arg(long, value_name = "SECS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    pub timeout: u64,
    #[command(flatten)]
    pub program: crate::inputs::ProgramArgs,
}

/// `--expect`'s pattern, compiled once (the regex crate matches in linear time whatever
/// the pattern; its size is bounded so a hostile one cannot take the memory).
fn parse_expect(text: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(text)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())
}

pub fn run(args: &ValidateArgs) -> ExitCode {
    let Some(inputs) = crate::inputs::collect_all(&args.paths, &args.cflags, "validate") else {
        return ExitCode::from(2);
    };
    if args.entry == Some(0) {
        eprintln!("error: `--entry` counts from 1");
        return ExitCode::from(2);
    }
    if args.rtol.is_some_and(|r| !(0.0..1.0).contains(&r)) {
        eprintln!("error: `--rtol` must be in [0, 1)");
        return ExitCode::from(2);
    }
    if args.target == Target::Openmp {
        return crate::openmp_command::validate(
            &args.kernel,
            &args.program,
            (args.rtol, args.expect.clone()),
            args.timeout,
            &inputs,
        );
    }
    if args.expect.is_some() {
        eprintln!(
            "error: `--expect` checks a whole program's output: it goes with `--target openmp` (`--target cuda` compares the kernel's results with the loop's)"
        );
        return ExitCode::from(2);
    }
    let (emit, profile) = match (args.kernel.options(), args.kernel.read_profile()) {
        (Ok(o), Ok(p)) => (o, p),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (work_dir, _removed_on_exit) = match args.program.work_dir("validate") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = ValidateOptions {
        loop_id: match args.kernel.one_loop() {
            Ok(l) => l.to_string(),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        emit,
        backend: match args.backend {
            Backend::Auto => BackendChoice::Auto,
            Backend::Cpu => BackendChoice::Cpu,
            Backend::Cuda => BackendChoice::Cuda,
        },
        program: ProgramOptions {
            cc: profile::driver::real_compiler(),
            cflags: args
                .program
                .codegen
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            ldflags: args.program.libs.iter().map(|l| format!("-l{l}")).collect(),
            args: args.program.args.clone(),
            entry: args.entry.unwrap_or(0),
            timeout: Duration::from_secs(args.timeout.max(1)),
        },
        work_dir: work_dir.clone(),
        rtol: args.rtol,
        profile,
    };
    let validating = crate::progress::Progress::spinner(
        crate::progress::Mode::detect(args.program.quiet),
        &format!(
            "validating {}: building the program with snapshots, running it, replaying the kernel",
            opts.loop_id
        ),
    );
    let result = validate(&inputs, &opts);
    validating.finish();
    match result {
        Ok(v) => {
            print!("{}", v.render());
            if v.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
