//! CUDA C++ source to PTX with NVRTC, loaded at run time; a missing NVRTC is an error, not a panic.

use std::fmt;

use cudarc::nvrtc::result::NvrtcError as RawNvrtcError;
use cudarc::nvrtc::sys::nvrtcResult;
use cudarc::nvrtc::CompileError;

use super::error::{LoadError, Panicked};
use super::{no_panic, sys};

/// PTX assembly text, ready for [`super::device::run_kernel`].
pub type Ptx = String;

/// How to compile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Virtual architecture, e.g. `compute_80` (`--gpu-architecture`). `None` is NVRTC's
    /// default (`compute_52` for NVRTC 12), whose PTX the driver JIT-compiles for any
    /// newer GPU; [`super::device::GpuInfo::nvrtc_arch`] gives the probed GPU's own.
    pub arch: Option<String>,
    /// Further NVRTC options, passed as they are (e.g. `-lineinfo`, `--use_fast_math`).
    pub extra: Vec<String>,
}

impl CompileOptions {
    /// The NVRTC command line these options stand for.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(arch) = &self.arch {
            args.push(format!("--gpu-architecture={arch}"));
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// Why a compilation produced no PTX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvrtcError {
    /// NVRTC could not be loaded; the reason says what was tried.
    Unavailable(LoadError),
    /// NVRTC rejected the program: its log has `program_name(LINE): error: ...` lines.
    Compile {
        /// NVRTC's status, e.g. `NVRTC_ERROR_COMPILATION`.
        status: String,
        /// The NVRTC command line.
        options: Vec<String>,
        /// NVRTC's program log.
        log: String,
    },
    /// Anything else: bad input (a NUL byte), a failing NVRTC call.
    Failed(String),
}

impl fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NvrtcError::Unavailable(why) => write!(
                f,
                "NVRTC not available: {why} (install the Python package nvidia-cuda-nvrtc-cu12 \
                 or set WARPWISE_NVRTC=/path/libnvrtc.so.12)"
            ),
            NvrtcError::Compile {
                status,
                options,
                log,
            } => {
                write!(f, "NVRTC compilation failed ({status}")?;
                if !options.is_empty() {
                    write!(f, ", options: {}", options.join(" "))?;
                }
                write!(f, "):\n{}", log.trim_end())
            }
            NvrtcError::Failed(why) => write!(f, "NVRTC: {why}"),
        }
    }
}

impl std::error::Error for NvrtcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NvrtcError::Unavailable(why) => Some(why),
            NvrtcError::Compile { .. } | NvrtcError::Failed(_) => None,
        }
    }
}

/// Where NVRTC was loaded from (`/path/libnvrtc.so.12 (from WARPWISE_NVRTC)`), loading it
/// on the first call.
pub fn library() -> Result<&'static str, NvrtcError> {
    sys::nvrtc().map_err(NvrtcError::Unavailable)
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(u32, u32), NvrtcError> {
    library()?;
    sys::nvrtc_version()
}

/// Compiles CUDA C++ `source` to PTX. `program_name` names the source in the log
/// (`program_name(12): error: ...`), so a `.cu` file name reads best.
pub fn compile_to_ptx(
    source: &str,
    program_name: &str,
    options: &CompileOptions,
) -> Result<Ptx, NvrtcError> {
    // cudarc `expect`s these to be C strings; say so instead.
    if source.contains('\0') {
        return Err(NvrtcError::Failed("the source contains a NUL byte".into()));
    }
    if program_name.contains('\0') || options.to_args().iter().any(|o| o.contains('\0')) {
        return Err(NvrtcError::Failed(
            "the program name or an option contains a NUL byte".into(),
        ));
    }
    library()?;
    let cudarc_options = cudarc::nvrtc::CompileOptions {
        name: Some(program_name.to_string()),
        options: options.to_args(),
        ..Default::default()
    };
    let compiled = no_panic::<_, Panicked>("NVRTC", || {
        Ok(cudarc::nvrtc::compile_ptx_with_opts(source, cudarc_options).map(|ptx| ptx.to_src()))
    })
    .map_err(|panicked| NvrtcError::Failed(panicked.to_string()))?;
    compiled.map_err(from_cudarc)
}

fn from_cudarc(error: CompileError) -> NvrtcError {
    match error {
        CompileError::CompileError {
            nvrtc: RawNvrtcError(status),
            options,
            log,
        } => {
            let mut log = log.to_string_lossy().into_owned();
            if status == nvrtcResult::NVRTC_ERROR_BUILTIN_OPERATION_FAILURE {
                log.push_str(
                    "\nNVRTC could not load its builtins library (libnvrtc-builtins.so.*): it must \
                     sit next to libnvrtc (WARPWISE_NVRTC loads it from there) or be on \
                     LD_LIBRARY_PATH",
                );
            }
            NvrtcError::Compile {
                status: format!("{status:?}"),
                options,
                log,
            }
        }
        CompileError::CreationError(e) => NvrtcError::Failed(format!("nvrtcCreateProgram: {e:?}")),
        CompileError::GetLogError(e) => NvrtcError::Failed(format!("nvrtcGetProgramLog: {e:?}")),
        CompileError::GetPtxError(e) => NvrtcError::Failed(format!("nvrtcGetPTX: {e:?}")),
        CompileError::DestroyError(e) => NvrtcError::Failed(format!("nvrtcDestroyProgram: {e:?}")),
    }
}
