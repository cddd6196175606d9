//! Error types of snapshot replay: building and running the user's program, the snapshot
//! files, the launch a snapshot implies, the backends' replays, and the validation as a
//! whole.
//!
//! All of them mean "validation could not be done" (exit 2), never "the kernel is wrong":
//! a kernel's wrong results or crash are failures in the [`super::Validation`]. Typed so
//! that callers can tell the causes apart; the command line prints them as they are.

use std::io;
use std::path::PathBuf;

use crate::gpu::nvrtc::NvrtcError;
use crate::gpu::{GpuError, PtxError};
use crate::plan::{EmitError, EmitErrorKind};
use frontend::diagnostic::Diagnostic;
use profile::CompileError;

/// Why a program run with its output captured (`run_captured`) could not be run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The file for the program's output could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    Output {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The program could not be started; `command` as `Command`'s `Debug` shows it.
    #[error("cannot run {command}: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },
    /// Waiting for the program failed.
    #[error("cannot wait for {command}: {source}")]
    Wait {
        command: String,
        #[source]
        source: io::Error,
    },
    /// Reaping the program after it was killed at the timeout failed.
    #[error("{0}")]
    Reap(#[source] io::Error),
}

/// Why a record file (a snapshot, a replay's results) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file does not start with the snapshot magic.
    #[error("`{}` is not a warpwise snapshot", .0.display())]
    NotASnapshot(PathBuf),
    /// The file ends inside a record (the program died while writing it).
    #[error("`{}` is truncated", .0.display())]
    Truncated(PathBuf),
    /// A snapshot record of a kind the snapshot runtime does not write.
    #[error("`{}`: unknown record `{tag}`", path.display())]
    UnknownRecord { path: PathBuf, tag: char },
}

/// Why the snapshot of a loop could not be taken: instrumenting, building or running the
/// program, or reading what it left.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The loop's span is not in the unit's text.
    #[error("{loop_id}: the loop's text was not found")]
    LoopTextMissing {
        loop_id: frontend::loop_ref::LoopRef,
    },
    /// A build directory could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Another file of the program does not preprocess.
    #[error("{}", .0.render(false))]
    Preprocess(Box<Diagnostic>),
    /// A source file of the build could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A compile or the link failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The program could not be run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The program ran past the timeout before the loop's exit.
    #[error(
        "the program did not reach the loop's exit within {seconds} s{}",
        output_tail(output)
    )]
    TimedOut { seconds: u64, output: String },
    /// The program finished after entering the loop `entries` times, none of them the
    /// entry asked for (`entry`, 0: the first that runs an iteration).
    #[error(
        "the program entered the loop {entries} time{} and finished (status {status}) before {}; choose another --entry or other arguments{}",
        if *entries == 1 { "" } else { "s" },
        which_entry(*entry),
        output_tail(output)
    )]
    EntryNotReached {
        entries: u64,
        status: i32,
        entry: u64,
        output: String,
    },
    /// The program stopped before the entry asked for finished (a crash, an `exit`).
    #[error(
        "the program stopped (status {status}) before finishing {} of the loop{}",
        which_entry(*entry),
        output_tail(output)
    )]
    Stopped {
        status: i32,
        entry: u64,
        output: String,
    },
    /// The snapshot was written, but the program then failed.
    #[error(
        "the program stopped with status {status} while taking the snapshot{}",
        output_tail(output)
    )]
    Failed { status: i32, output: String },
    /// The snapshot file could not be read.
    #[error(transparent)]
    Records(#[from] RecordError),
}

impl SnapshotError {
    /// Whether the link failed for want of `main`: the commonest cause, a library file
    /// given alone.
    pub fn no_main(&self) -> bool {
        matches!(self, SnapshotError::Compile(e) if e.stderr().contains("undefined reference to `main'"))
    }
}

/// `entry N`, or the first entry that runs an iteration (0).
fn which_entry(entry: u64) -> String {
    match entry {
        0 => "an entry that runs an iteration".to_string(),
        n => format!("entry {n}"),
    }
}

/// The tail of a program's output, on lines of its own after the message; nothing when
/// it printed nothing.
fn output_tail(output: &str) -> String {
    if output.trim().is_empty() {
        String::new()
    } else {
        format!("\nits output ended with:\n{}", output.trim_end())
    }
}

/// Why the launch a plan needs could not be computed from a snapshot (the snapshot lacks
/// something the plan asks for).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A value the launch needs (`trip:x`, `shared`, a derived bound) was not recorded.
    #[error("the snapshot has no value `{key}`")]
    MissingValue { key: String },
    /// The grid would need more blocks than a `u32` dimension holds.
    #[error("{trip} iterations need more blocks than a grid has")]
    TooManyBlocks { trip: i64 },
    /// An array's section at the entry was not recorded.
    #[error("the snapshot has no section of `{array}`")]
    MissingSection { array: String },
    /// A struct passed by value whose size the plan does not know.
    #[error("the size of `{array}` is unknown")]
    UnknownSize { array: String },
    /// A struct's section starts before the struct.
    #[error("`{array}`: bad section")]
    BadSection { array: String },
    /// A struct's section ends after the struct.
    #[error("`{array}`: the section exceeds the object")]
    SectionExceedsObject { array: String },
    /// A scalar argument's bytes were not recorded.
    #[error("the snapshot has no value of `{name}`")]
    MissingScalar { name: String },
    /// A reduction variable's value at the entry was not recorded.
    #[error("the snapshot has no value of `{name}` at the entry")]
    MissingEntryValue { name: String },
}

/// Why the CUDA backend cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Device 0 does not answer. `seen` is what the system shows of a GPU all the same (a
    /// driver library missing or too old), when it shows one.
    #[error(
        "{source}{}",
        seen.as_ref().map(|s| format!(" (although {s} exist)")).unwrap_or_default()
    )]
    NoGpu {
        #[source]
        source: GpuError,
        seen: Option<String>,
    },
    /// NVRTC does not load.
    #[error(transparent)]
    NoNvrtc(#[from] NvrtcError),
}

/// Why a backend could not replay a kernel: a tool chain error, not the kernel's.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// NVRTC rejected the generated device code.
    #[error("the generated device code does not compile: {0}")]
    DeviceCode(#[source] NvrtcError),
    /// The kernel's signature could not be read from the PTX.
    #[error(transparent)]
    Ptx(#[from] PtxError),
    /// The PTX kernel has another number of parameters than the launch passes.
    #[error("kernel `{kernel}` has {params} parameters in the PTX but the launch passes {args}")]
    ParamCount {
        kernel: String,
        params: usize,
        args: usize,
    },
    /// A PTX parameter's size differs from its argument's; `argument` names the argument
    /// (`the pointer to `a``, `` `n` ``).
    #[error(
        "kernel `{kernel}`: parameter {param} is {param_bytes} bytes in the PTX but {argument} is {argument_bytes} bytes"
    )]
    ParamSize {
        kernel: String,
        param: String,
        param_bytes: usize,
        argument: String,
        argument_bytes: usize,
    },
    /// A section starts too far from its pointer for a device offset.
    #[error("section start {lo} is out of range")]
    SectionOutOfRange { lo: i64 },
    /// More shared memory than a launch can ask for.
    #[error("{0} bytes of shared memory")]
    SharedTooLarge(u64),
    /// The replay's scratch directory could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A file of the replay could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The C++ compiler could not be started.
    #[error("cannot run the C++ compiler ({command}): {source}")]
    CxxSpawn {
        command: String,
        #[source]
        source: io::Error,
    },
    /// The generated `.cu` does not compile with the CPU shim; `stderr` is the compiler's.
    #[error(
        "the generated code does not compile with the CPU shim ({command}):\n{}",
        stderr.trim_end()
    )]
    ShimCompile { command: String, stderr: String },
    /// The replay harness could not be run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The replay harness stopped other than by the kernel's or host function's failure.
    #[error("the replay harness stopped with status {status}: {}", output.trim())]
    Harness { status: i32, output: String },
    /// The harness's results could not be read.
    #[error(transparent)]
    Results(#[from] RecordError),
}

/// Why a loop could not be validated (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// `--backend cuda` and the CUDA backend cannot run.
    #[error("--backend cuda: {0}")]
    Backend(#[source] BackendError),
    /// The loop id names no loop of the inputs.
    #[error(transparent)]
    Locate(EmitError),
    /// The loop cannot be emitted: refused (not friendly, unsupported) or bad options.
    #[error("{}", emit_text(.0))]
    Emit(#[source] EmitError),
    /// The work directory could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The instrumented program does not build.
    #[error(
        "cannot build the instrumented program: {source}{}",
        if source.no_main() { NO_MAIN } else { "" }
    )]
    Build {
        #[source]
        source: SnapshotError,
    },
    /// The snapshot could not be taken.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The entry snapshotted runs no iteration, so the kernel would do nothing.
    #[error(
        "entry {entry} of the loop runs no iteration; choose another --entry or other arguments"
    )]
    NoIteration { entry: i64 },
    /// The launch could not be computed from the snapshot.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The backend could not replay the kernel.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// What a link that misses `main` needs, in the linker's words' place.
const NO_MAIN: &str = "\nnone of the files given defines `main`: validate builds and runs the program, so give all of its files, the one with `main` too";

/// An emit error as validation reports it: a refusal says that validation is what cannot
/// be done.
fn emit_text(e: &EmitError) -> String {
    match e.kind {
        EmitErrorKind::Refused => format!("cannot validate: {}", e.message),
        EmitErrorKind::Usage => e.message.clone(),
    }
}

/// Why the natural mapping's kernel has no time to compare with the recommended one's.
#[derive(Debug, thiserror::Error)]
pub enum NotTimed {
    /// It was replayed, but the backend did not time it (the kernel did not run).
    #[error("the kernel did not run")]
    DidNotRun,
    /// Its validation could not be done.
    #[error(transparent)]
    Failed(Box<ValidateError>),
}
