//! Snapshot replay (`warpwise validate`): the user's program, instrumented, records a loop's
//! inputs at its entry and its outputs at its exit; the generated kernel then runs on the
//! inputs alone (buffers holding only the reported sections, the rest poison) and its
//! outbound sections are compared with the program's.
//!
//! Backends run the kernel: [`cpu::CpuBackend`] compiles the `.cu` with the CUDA shim;
//! [`gpu::CudaBackend`] compiles the device code with NVRTC and launches
//! [`launch::LaunchSpec`] on the GPU, timing the kernel.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

pub mod compare;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod launch;
pub mod snapshot;

pub use error::{
    BackendError, LaunchError, NotTimed, RecordError, ReplayError, RunError, SnapshotError,
    ValidateError,
};

use crate::{EmitOptions, Emitted};
use advisor::model::Role;
use compare::{ArrayCompare, ElemKind};
use frontend::preprocess::TranslationUnitInput;
use launch::LaunchSpec;
use snapshot::{ProgramOptions, Section, Snapshot};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a backend gets: the generated code, the snapshot and the launch it implies.
#[derive(Debug)]
pub struct ReplayJob<'a> {
    pub emitted: &'a Emitted,
    pub snapshot: &'a Snapshot,
    /// The snapshot file (record format of `snapshot_rt.c`).
    pub snapshot_path: &'a Path,
    pub launch: &'a LaunchSpec,
    /// A scratch directory for the backend.
    pub dir: &'a Path,
    pub timeout: Duration,
}

/// What a backend returns.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// The outbound sections after the kernel ran, by array name.
    pub sections: BTreeMap<String, Section>,
    /// Problems that fail the validation (a crash, a write outside a buffer).
    pub failures: Vec<String>,
    pub warnings: Vec<String>,
    /// The launch that happened: grid, block, shared bytes.
    pub launched: Option<([u32; 3], [u32; 3], u64)>,
    /// The kernel's median time in milliseconds, from a backend that times it (cuda).
    pub kernel_ms: Option<f64>,
}

/// Runs a generated kernel on a snapshot.
pub trait Backend {
    /// `cpu`, `cuda`.
    fn name(&self) -> &'static str;
    /// How it runs the kernel, for the report.
    fn describe(&self) -> String;
    /// `Err` is an error of the tool chain (exit 2), not of the kernel.
    fn replay(&self, job: &ReplayJob<'_>) -> Result<Replayed, ReplayError>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    #[default]
    Auto,
    Cpu,
    Cuda,
}

/// Whether this machine has an NVIDIA GPU the driver exposes.
pub fn gpu_present() -> Option<String> {
    let gpus = Path::new("/proc/driver/nvidia/gpus");
    if let Ok(entries) = std::fs::read_dir(gpus) {
        let n = entries.count();
        if n > 0 {
            return Some(format!("{n} NVIDIA GPU(s) in {}", gpus.display()));
        }
    }
    Path::new("/dev/nvidia0")
        .exists()
        .then(|| "/dev/nvidia0".to_string())
}

/// The CUDA backend, or why it cannot run: the driver's or NVRTC's reason, and whether
/// the system shows a GPU all the same (a driver library missing or too old).
fn cuda_backend() -> Result<gpu::CudaBackend, BackendError> {
    gpu::CudaBackend::new().map_err(|why| match why {
        BackendError::NoGpu { source, .. } => BackendError::NoGpu {
            source,
            seen: gpu_present(),
        },
        why => why,
    })
}

/// The backend for `choice`, with a note saying which ran and why when `auto` chose.
pub fn select_backend(
    choice: BackendChoice,
) -> Result<(Box<dyn Backend>, Option<String>), ValidateError> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(cpu::CpuBackend), None)),
        BackendChoice::Auto => Ok(match cuda_backend() {
            Ok(b) => {
                let note = format!("auto chose cuda: {} answered and NVRTC loaded", b.gpu.name);
                (Box::new(b), Some(note))
            }
            Err(why) => (
                Box::new(cpu::CpuBackend),
                Some(format!("auto chose cpu: {why}")),
            ),
        }),
        BackendChoice::Cuda => match cuda_backend() {
            Ok(b) => Ok((Box::new(b), None)),
            Err(why) => Err(ValidateError::Backend(why)),
        },
    }
}

#[derive(Clone, Debug)]
pub struct ValidateOptions {
    pub loop_id: String,
    pub emit: EmitOptions,
    pub backend: BackendChoice,
    pub program: ProgramOptions,
    /// Scratch directory (instrumented build, snapshot, replay).
    pub work_dir: PathBuf,
    /// Relative tolerance for floating point (default by type, see `compare`).
    pub rtol: Option<f64>,
    pub profile: Option<profile::Profile>,
}

/// The result of a validation.
#[derive(Debug)]
pub struct Validation {
    pub loop_id: frontend::loop_ref::LoopRef,
    pub function: String,
    pub mapping: String,
    pub block: (u32, u32),
    pub shared: usize,
    pub backend: String,
    pub backend_description: String,
    pub backend_note: Option<String>,
    pub entry: u64,
    /// Each array's section at the entry: name, `lo`, `hi`, whether its pointer was null.
    pub inputs: Vec<(String, i64, i64, bool)>,
    pub launch: ([u32; 3], [u32; 3], u64),
    pub arrays: Vec<ArrayCompare>,
    pub failures: Vec<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// The kernel's median time (cuda backend).
    pub kernel_ms: Option<f64>,
    /// The natural mapping timed against this one (cuda backend, recommended mapping).
    pub comparison: Option<MappingComparison>,
}

/// The natural mapping's kernel, replayed on its own snapshot and timed like the recommended one.
#[derive(Debug)]
pub struct MappingComparison {
    pub natural: String,
    /// Its median time, or why it could not be measured.
    pub natural_ms: Result<f64, NotTimed>,
    /// Whether its results matched the program's too.
    pub natural_passed: bool,
}

impl Validation {
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.arrays.iter().all(ArrayCompare::passed)
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "validate {} (`{}`): mapping {}, block {}x{}{}",
            self.loop_id,
            self.function,
            self.mapping,
            self.block.0,
            self.block.1,
            if self.shared > 0 {
                format!(", {} area(s) in shared memory", self.shared)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "backend: {}: {}",
            self.backend, self.backend_description
        );
        if let Some(n) = &self.backend_note {
            let _ = writeln!(out, "  ({n})");
        }
        let sections: Vec<String> = self
            .inputs
            .iter()
            .map(|(n, lo, hi, null)| {
                let null = if *null { " of a null pointer" } else { "" };
                format!("`{n}` [{lo}, {hi}){null}")
            })
            .collect();
        let (g, b, s) = self.launch;
        let _ = writeln!(
            out,
            "snapshot: entry {} of the loop; sections {}; grid {}x{} of {}x{} threads{}",
            self.entry,
            sections.join(", "),
            g[0],
            g[1],
            b[0],
            b[1],
            if s > 0 {
                format!(", {s} bytes of shared memory")
            } else {
                String::new()
            }
        );
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        if let Some(ms) = self.kernel_ms {
            let _ = writeln!(
                out,
                "kernel time: {ms:.4} ms (median of {} runs)",
                gpu::REPETITIONS
            );
        }
        if let Some(c) = &self.comparison {
            let _ = writeln!(out, "{}", c.render(&self.mapping, self.kernel_ms));
        }
        for a in &self.arrays {
            let _ = writeln!(out, "  {a}");
        }
        for f in &self.failures {
            let _ = writeln!(out, "  FAIL: {f}");
        }
        for w in &self.warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
        let _ = writeln!(out, "{}", if self.passed() { "PASS" } else { "FAIL" });
        out
    }
}

impl MappingComparison {
    /// One line: both times and which mapping was faster by how much.
    pub fn render(&self, recommended: &str, recommended_ms: Option<f64>) -> String {
        let failed = if self.natural_passed {
            ""
        } else {
            " (its results did not match the program's)"
        };
        match (&self.natural_ms, recommended_ms) {
            (Ok(n), Some(r)) if *n > 0.0 && r > 0.0 => {
                let verdict = if n >= &r {
                    format!("recommended mapping measured {:.1}x faster", n / r)
                } else {
                    format!(
                        "recommended mapping measured {:.1}x slower than the natural one",
                        r / n
                    )
                };
                format!(
                    "mappings: recommended {recommended} {r:.4} ms, natural {} {n:.4} ms{failed}: {verdict}",
                    self.natural
                )
            }
            (Ok(_), _) => format!(
                "mappings: natural {}{failed}: no kernel time to compare",
                self.natural
            ),
            (Err(why), _) => format!("mappings: natural {} not timed: {why}", self.natural),
        }
    }
}

/// Validates the loop `opts.loop_id` of the program made of `inputs`.
pub fn validate(
    inputs: &[TranslationUnitInput],
    opts: &ValidateOptions,
) -> Result<Validation, ValidateError> {
    let (backend, backend_note) = select_backend(opts.backend)?;
    let located = crate::locate(
        inputs,
        &opts.loop_id,
        opts.emit.block,
        opts.profile.as_ref(),
    )
    .map_err(ValidateError::Locate)?;
    let mut v = validate_mapping(
        inputs,
        &located,
        opts,
        &opts.emit,
        backend.as_ref(),
        &opts.work_dir,
    )?;
    v.backend_note = backend_note;
    // On a GPU, the recommended mapping (no --mapping) is timed against the natural one
    // when the report says they differ: the measured counterpart of the report's estimate.
    let natural = crate::plan::find_report(&located.reports, &opts.loop_id)
        .ok()
        .and_then(|r| r.mapping_gain.as_ref())
        .map(|g| g.natural.clone());
    if let (Some(natural), Some(_), None) = (natural, v.kernel_ms, &opts.emit.mapping) {
        let text = match &natural.y {
            Some(y) => format!("x={},y={y}", natural.x),
            None => format!("x={}", natural.x),
        };
        let emit = EmitOptions {
            mapping: Some(text.clone()),
            ..opts.emit.clone()
        };
        let dir = opts.work_dir.join("natural");
        v.comparison = match validate_mapping(inputs, &located, opts, &emit, backend.as_ref(), &dir)
        {
            Ok(n) if n.mapping == v.mapping => None,
            Ok(n) => Some(MappingComparison {
                natural_passed: n.passed(),
                natural_ms: n.kernel_ms.ok_or(NotTimed::DidNotRun),
                natural: n.mapping,
            }),
            Err(e) => Some(MappingComparison {
                natural: format!("{{{}}}", text.replace('=', ": ").replace(',', ", ")),
                natural_ms: Err(NotTimed::Failed(Box::new(e))),
                natural_passed: false,
            }),
        };
    }
    Ok(v)
}

/// Emits the loop with `emit`, snapshots the program under that plan in `work_dir`,
/// replays the kernel with `backend` and compares.
fn validate_mapping(
    inputs: &[TranslationUnitInput],
    located: &crate::Located,
    opts: &ValidateOptions,
    emit: &EmitOptions,
    backend: &dyn Backend,
    work_dir: &Path,
) -> Result<Validation, ValidateError> {
    let Prepared {
        emitted,
        snapshot: snap,
        launch,
        build_dir,
    } = prepare_mapping(inputs, located, opts, emit, work_dir)?;
    let plan = &emitted.plan;
    let replay_dir = work_dir.join("replay");
    let job = ReplayJob {
        emitted: &emitted,
        snapshot: &snap,
        snapshot_path: &build_dir.join("snapshot.bin"),
        launch: &launch,
        dir: &replay_dir,
        timeout: opts.program.timeout,
    };
    let replayed = backend.replay(&job)?;

    let mut failures = replayed.failures.clone();
    if let Some((grid, block, shared)) = replayed.launched {
        if grid != launch.grid || block != launch.block || shared != launch.shared_bytes {
            failures.push(format!(
                "the host function launched a grid of {}x{} blocks of {}x{} threads ({shared} shared bytes); the loop's trip counts need {}x{} of {}x{} ({} shared bytes)",
                grid[0], grid[1], block[0], block[1], launch.grid[0], launch.grid[1],
                launch.block[0], launch.block[1], launch.shared_bytes
            ));
        }
    } else if failures.is_empty() {
        failures.push("the kernel was not launched".to_string());
    }
    let mut arrays = Vec::new();
    let crashed = !failures.is_empty() && replayed.sections.is_empty();
    for a in plan.arrays.iter().filter(|a| a.role != Role::In) {
        let Some(want) = snap.exit.get(&a.name) else {
            failures.push(format!(
                "the snapshot has no outbound section of `{}`",
                a.name
            ));
            continue;
        };
        let Some(got) = replayed.sections.get(&a.name) else {
            if !crashed {
                failures.push(format!("the replay returned no section of `{}`", a.name));
            }
            continue;
        };
        let elem = (ElemKind::of(&a.elem_type), a.elem_bytes);
        // A pointer the loop tests for null has no bytes on a side where it was null.
        arrays.push(if want.null || got.null {
            compare::compare_null(&a.name, (want.lo, want.hi), elem, want.null, got.null)
        } else {
            compare::compare(
                &a.name,
                (want.lo, want.hi),
                elem,
                &want.bytes,
                &got.bytes,
                opts.rtol,
            )
        });
    }
    // A scalar reduction's variable after the loop, as the program and the kernel left it.
    for r in plan
        .reductions
        .iter()
        .filter(|r| r.scalar_ident().is_some())
    {
        let name = &r.target;
        let Some(want) = snap.exit.get(name) else {
            failures.push(format!("the snapshot has no value of `{name}` at the exit"));
            continue;
        };
        let Some(got) = replayed.sections.get(name) else {
            if !crashed {
                failures.push(format!("the replay returned no value of `{name}`"));
            }
            continue;
        };
        arrays.push(compare::compare(
            name,
            (want.lo, want.hi),
            (ElemKind::of(&r.c_type), want.bytes.len() as u64),
            &want.bytes,
            &got.bytes,
            opts.rtol,
        ));
    }
    let mut notes: Vec<String> = plan.notes.clone();
    for a in plan.arrays.iter().filter(|a| a.reported_hi.is_some()) {
        // A null pointer's section is not copied at all, shrunk or not.
        if let Some(s) = snap.entry.get(&a.name).filter(|s| !s.null) {
            notes.push(format!(
                "debug: the generated code copies `{}` [{}, {}) instead of the reported [{}, {})",
                a.name,
                s.lo,
                s.hi - a.elem_bytes as i64,
                s.lo,
                s.hi
            ));
        }
    }
    if plan.swap_bounds {
        notes.push("debug: the kernel's x and y trip counts are swapped".into());
    }
    for r in &plan.forced_reasons {
        notes.push(format!("forced although {}: {r}", plan.verdict.as_str()));
    }
    Ok(Validation {
        loop_id: plan.loop_id.clone(),
        function: plan.function.clone(),
        mapping: plan.mapping_text(),
        block: plan.launch_block(),
        shared: plan.staged.len(),
        backend: backend.name().to_string(),
        backend_description: backend.describe(),
        backend_note: None,
        // The entry the runtime took (the first that runs an iteration by default).
        entry: snap
            .values
            .get("entry")
            .and_then(|v| u64::try_from(*v).ok())
            .unwrap_or(opts.program.entry),
        inputs: plan
            .arrays
            .iter()
            .filter_map(|a| {
                snap.entry
                    .get(&a.name)
                    .map(|s| (a.name.clone(), s.lo, s.hi, s.null))
            })
            .collect(),
        launch: (launch.grid, launch.block, launch.shared_bytes),
        arrays,
        failures,
        warnings: replayed.warnings,
        notes,
        kernel_ms: replayed.kernel_ms,
        comparison: None,
    })
}

/// A loop's kernel and the launch it needs on a snapshot: everything a replay starts from.
#[derive(Debug)]
pub struct Prepared {
    pub emitted: Emitted,
    pub snapshot: Snapshot,
    pub launch: LaunchSpec,
    /// The instrumented program and its `snapshot.bin`.
    pub build_dir: PathBuf,
}

/// Emits `opts.loop_id` with `opts.emit`, runs the instrumented program in `opts.work_dir`
/// and computes the launch, without replaying: what a test of the launch arguments needs.
pub fn prepare(
    inputs: &[TranslationUnitInput],
    opts: &ValidateOptions,
) -> Result<Prepared, ValidateError> {
    let located = crate::locate(
        inputs,
        &opts.loop_id,
        opts.emit.block,
        opts.profile.as_ref(),
    )
    .map_err(ValidateError::Locate)?;
    prepare_mapping(inputs, &located, opts, &opts.emit, &opts.work_dir)
}

fn prepare_mapping(
    inputs: &[TranslationUnitInput],
    located: &crate::Located,
    opts: &ValidateOptions,
    emit: &EmitOptions,
    work_dir: &Path,
) -> Result<Prepared, ValidateError> {
    let emitted = crate::emit_loop(located, &opts.loop_id, emit).map_err(ValidateError::Emit)?;
    let plan = &emitted.plan;
    std::fs::create_dir_all(work_dir).map_err(|source| ValidateError::CreateDir {
        path: work_dir.to_path_buf(),
        source,
    })?;
    let text = snapshot::instrument(&located.unit, plan)?;
    let build_dir = work_dir.join("program");
    let exe = snapshot::build(inputs, located.input, &text, &opts.program, &build_dir)
        .map_err(|source| ValidateError::Build { source })?;
    let snap = snapshot::take(&exe, &opts.program, &build_dir)?;
    let trips: Vec<i64> = ["trip:x", "trip:y"]
        .iter()
        .filter_map(|k| snap.values.get(*k).copied())
        .collect();
    if trips.iter().any(|&t| t <= 0) {
        return Err(ValidateError::NoIteration {
            entry: snap
                .values
                .get("entry")
                .copied()
                .unwrap_or(opts.program.entry as i64),
        });
    }
    let launch = launch::launch_spec(plan, &snap)?;
    Ok(Prepared {
        emitted,
        snapshot: snap,
        launch,
        build_dir,
    })
}
