//! Ports of friendly loops: CUDA generation (`warpwise emit`: a kernel, its launch and the
//! host code that replaces the loop, from the kernel report and the loop's own text, and the
//! CPU shim that runs the generated `.cu` with the system C++ compiler), OpenMP offload
//! pragmas (`openmp`), validation against the program's own data (`validate`), the run of
//! a CUDA program on the shim that `check --dynamic` counts (`dynamic`), and the GPU driver
//! layer (`gpu`, the only `unsafe`-adjacent code: cudarc's driver API and NVRTC).

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

pub mod argext;
pub mod counters;
pub mod ctext;
pub mod dynamic;
pub mod emit;
pub mod gpu;
pub mod minmax;
pub mod openmp;
pub mod plan;
pub mod reduce;
mod text_aliases;
pub mod validate;

pub use emit::{emit, Emitted, SHIM_NAME};
pub use plan::{EmitError, EmitErrorKind, EmitOptions, KernelPlan};

use advisor::model::LoopReport;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::path::{Path, PathBuf};

/// The CPU shim, written next to every generated `.cu`.
pub const CPU_SHIM: &str = include_str!("warpwise_cuda_cpu.h");

/// The unit holding the loop and its reports.
#[derive(Debug)]
pub struct Located {
    /// Index of the input among those given.
    pub input: usize,
    pub unit: Unit,
    pub reports: Vec<LoopReport>,
}

/// Loads the inputs as one program and analyses them until one has the loop `wanted`
/// (`FILE:LINE[:COL]`); inputs whose path matches the loop's file are tried first. As in
/// `warpwise analyze`, a function defined in another of the files is a program function
/// with a summary, not an unknown external (analysing the loop's file alone called 7 of
/// the real applications' friendly loops not-friendly). `profile` settles `needs-profile`
/// loops as `warpwise analyze --profile` does.
pub fn locate(
    inputs: &[TranslationUnitInput],
    wanted: &str,
    block: (u32, u32),
    profile: Option<&profile::Profile>,
) -> Result<Located, EmitError> {
    let selector = wanted.parse::<frontend::loop_ref::LoopSelector>().ok();
    let file = selector.as_ref().map_or(wanted, |s| s.file.as_str());
    let target = advisor::mapping::Target {
        block: (block.0 as u64, block.1 as u64),
        ..Default::default()
    };
    let mut problems = Vec::new();
    let mut units = Vec::new();
    let mut unit_inputs = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        match load_unit(input) {
            Ok(u) => {
                units.push(u);
                unit_inputs.push(i);
            }
            Err(d) => problems.push(d.render(false)),
        }
    }
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&u| !path_matches(&inputs[unit_inputs[u]].file, file));
    let mut all_ids = Vec::new();
    let mut found = None;
    {
        let view = advisor::program::ProgramView::new(&units);
        let summaries = advisor::summaries::Summaries::new(&view);
        for u in order {
            let mut reports = advisor::analyze::analyze_in_program(
                &summaries,
                u,
                &advisor::analyze::Filter::default(),
                &target,
                &std::collections::HashMap::new(),
            );
            if let Some(p) = profile {
                profile::apply::apply(&mut reports, p);
            }
            if selector
                .as_ref()
                .is_some_and(|s| reports.iter().any(|r| s.matches(&r.id)))
            {
                found = Some((u, reports));
                break;
            }
            all_ids.extend(reports.iter().map(|r| r.id.to_string()));
        }
    }
    if let Some((u, reports)) = found {
        let input = unit_inputs[u];
        return Ok(Located {
            input,
            unit: units.swap_remove(u),
            reports,
        });
    }
    let mut msg = format!("no loop at `{wanted}`");
    if !all_ids.is_empty() {
        msg.push_str(&format!("; loops: {}", all_ids.join(", ")));
    }
    for p in problems {
        msg.push('\n');
        msg.push_str(p.trim_end());
    }
    Err(EmitError::usage(msg))
}

fn path_matches(path: &Path, file: &str) -> bool {
    let p = path.to_string_lossy();
    p.ends_with(file) || file.ends_with(p.as_ref())
}

/// Plans and prints the kernel for the loop `wanted` of a located unit.
pub fn emit_loop(
    located: &Located,
    wanted: &str,
    opts: &EmitOptions,
) -> Result<Emitted, EmitError> {
    let report = plan::find_report(&located.reports, wanted)?;
    let plan = plan::plan(&located.unit, &located.reports, report, opts)?;
    Ok(emit(plan))
}

/// The files `emit` writes: `STEM.cu`, `STEM.md` and the CPU shim, with their text.
pub fn output_files(emitted: &Emitted) -> Vec<(String, &str)> {
    vec![
        (format!("{}.cu", emitted.stem), emitted.cu.as_str()),
        (format!("{}.md", emitted.stem), emitted.note.as_str()),
        (SHIM_NAME.to_string(), CPU_SHIM),
    ]
}

/// Why [`write`] could not write the generated files.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output directory could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes [`output_files`] into `dir` (each replaces what is at its path, a symlink
/// included, instead of writing through it); returns the paths written.
pub fn write(emitted: &Emitted, dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (name, text) in output_files(emitted) {
        let path = dir.join(name);
        if let Err(source) = frontend::files::write_output(&path, text.as_bytes()) {
            return Err(WriteError::Write { path, source });
        }
        out.push(path);
    }
    Ok(out)
}
