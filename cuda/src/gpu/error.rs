//! Error types of the GPU layer: opening the CUDA libraries, reading kernel signatures from
//! PTX, and the driver's answers when probing device 0 or running a kernel.
//!
//! Typed so that callers can tell "no GPU here" from "the launch was wrong" from "the
//! kernel faulted" without reading the message; the command line prints them as they are.

use std::path::PathBuf;

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

/// Why a CUDA library (`libnvrtc`, `libcuda`) could not be opened. Kept once per process
/// and handed out again on every later call, hence `Clone`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// `WARPWISE_NVRTC` names a directory holding neither library name.
    #[error("WARPWISE_NVRTC={} is a directory without libnvrtc.so.12 or libnvrtc.so", .0.display())]
    NvrtcDirEmpty(PathBuf),
    /// `WARPWISE_NVRTC` names nothing that exists.
    #[error("WARPWISE_NVRTC={} does not exist", .0.display())]
    NvrtcPathMissing(PathBuf),
    /// A library path that `dlopen` cannot be given (it takes a C string of UTF-8 here).
    #[error("{} is not a UTF-8 path", .0.display())]
    NotUtf8(PathBuf),
    /// `dlopen` of a file failed; `dlerror` is the loader's text.
    #[error("cannot open {}: {dlerror}", path.display())]
    Open { path: PathBuf, dlerror: String },
    /// The file `WARPWISE_NVRTC` names opened but has no `nvrtcVersion`.
    #[error("{} has no nvrtcVersion: not a libnvrtc", .0.display())]
    NotNvrtc(PathBuf),
    /// The `WARPWISE_NVRTC` file opened, but cudarc's by-name `dlopen` cannot reach it: its
    /// SONAME is none of the names cudarc tries (`tried` lists them).
    #[error(
        "WARPWISE_NVRTC={} was opened, but its SONAME is none of the names cudarc, \
         built for CUDA 12, opens ({tried}); point it at a CUDA 12 libnvrtc.so.12",
        path.display()
    )]
    SonameMismatch { path: PathBuf, tried: String },
    /// cudarc's by-name `dlopen` found another libnvrtc (`name`) on the search path before
    /// the `WARPWISE_NVRTC` file.
    #[error(
        "WARPWISE_NVRTC={} was opened, but cudarc, which opens libraries by name \
         and is built for CUDA 12, found the name {name} as another file on the \
         library search path first; point WARPWISE_NVRTC at a CUDA 12 \
         libnvrtc.so.12, or take the other libnvrtc off LD_LIBRARY_PATH",
        path.display()
    )]
    Shadowed { path: PathBuf, name: String },
    /// None of cudarc's candidate names opens; `dlerror` is the last name's failure.
    #[error("no library named {tried} on the library search path ({dlerror})")]
    NotFound { tried: String, dlerror: String },
    /// `libcuda` is not there: the machine has no NVIDIA driver (or not this one).
    #[error("CUDA driver not available: {0}")]
    NoDriver(#[source] Box<LoadError>),
    /// cudarc panicked opening its own handle to a library the probe had opened.
    #[error("cudarc could not open {name}: {message}")]
    CudarcPanicked { name: String, message: String },
}

/// cudarc panicked inside a call (its loader panics for a missing symbol, a few of its safe
/// wrappers `unwrap` library results); `what` is what the GPU layer was doing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: cudarc panicked: {message}")]
pub struct Panicked {
    pub what: &'static str,
    pub message: String,
}

/// Why a kernel's signature could not be read from PTX text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PtxError {
    /// The PTX has no `.entry` at all.
    #[error("no kernel `{kernel}` in the PTX: it has no .entry at all")]
    NoEntries { kernel: String },
    /// The PTX has kernels, but not this one; `found` are their names.
    #[error(
        "no kernel `{kernel}` in the PTX; its kernels are: {} (a C++ kernel has a mangled name unless declared extern \"C\")",
        found.join(", ")
    )]
    NoSuchKernel { kernel: String, found: Vec<String> },
    /// The kernel's parameter list has no closing parenthesis.
    #[error("the parameter list of `{kernel}` in the PTX is not closed")]
    UnclosedParams { kernel: String },
    /// A `.param` declaration that is not one of the forms NVRTC writes.
    #[error("cannot read the PTX kernel parameter `{text}`")]
    BadParam { text: String },
}

/// Why probing device 0 or running a kernel on it failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// `libcuda` could not be opened: there is no GPU to use.
    #[error("no GPU: {0}")]
    DriverMissing(#[source] LoadError),
    /// The driver has no context on device 0 (no device, a broken install): to callers
    /// that is still "no GPU".
    #[error(
        "no GPU: creating a CUDA context on device 0: {source}{}",
        hint(source)
    )]
    NoDevice {
        #[source]
        source: DriverError,
    },
    /// `cuDriverGetVersion` failed.
    #[error("cuDriverGetVersion failed: {0:?}")]
    DriverVersion(CUresult),
    /// A driver call failed; `what` says which (`loading the PTX`, `running kernel `k``).
    /// A fault in the kernel comes back this way, from the call that waits for it.
    #[error("{what}: {source}{}", hint(source))]
    Call {
        what: String,
        #[source]
        source: DriverError,
    },
    /// cudarc panicked; caught and turned into this.
    #[error(transparent)]
    Panicked(#[from] Panicked),
    /// The launch shape has a zero dimension.
    #[error("grid {grid:?} and block {block:?} must have no zero dimension")]
    ZeroDimension { grid: [u32; 3], block: [u32; 3] },
    /// The block has more threads than CUDA allows.
    #[error("block {block:?} has {threads} threads; CUDA allows at most 1024")]
    TooManyThreads { block: [u32; 3], threads: u64 },
    /// `repetitions` is 0.
    #[error("repetitions must be at least 1")]
    NoRepetitions,
    /// The PTX or the kernel name has a NUL byte, which the driver cannot be given.
    #[error("the PTX or the kernel name contains a NUL byte")]
    NulByte,
    /// The kernel's signature could not be read from the PTX.
    #[error(transparent)]
    Ptx(#[from] PtxError),
    /// The arguments are not as many as the kernel's parameters.
    #[error("kernel `{kernel}` takes {params} parameters but {args} arguments were given")]
    ArgumentCount {
        kernel: String,
        params: usize,
        args: usize,
    },
    /// An argument's size differs from its parameter's; `argument` describes it.
    #[error(
        "argument {index} of `{kernel}` is {argument} ({argument_bytes} bytes) but the parameter is {param_bytes} bytes"
    )]
    ArgumentSize {
        kernel: String,
        index: usize,
        argument: String,
        argument_bytes: usize,
        param_bytes: usize,
    },
    /// The launch's own check of argument sizes against the signature (the last one
    /// before the driver reads them).
    #[error("kernel parameters take {params:?} bytes but the arguments are {args:?} bytes")]
    SizeMismatch {
        params: Vec<usize>,
        args: Vec<usize>,
    },
    /// A by-value argument of no bytes.
    #[error("a by-value argument has no bytes")]
    EmptyBytes,
    /// `cuLaunchKernel` refused the launch.
    #[error("kernel launch failed: {0}")]
    LaunchFailed(#[source] DriverError),
    /// The launch returned without the timing events it was asked to record.
    #[error("kernel launch recorded no timing events")]
    NoEvents,
    /// A bug of the GPU layer: something it made itself is missing.
    #[error("internal: {0}")]
    Internal(&'static str),
}

/// What the commonest driver errors mean for a warpwise user.
fn hint(error: &DriverError) -> &'static str {
    match error.0 {
        CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
            " (the PTX comes from a newer NVRTC than the driver supports: install the \
             nvidia-cuda-nvrtc-cu12 matching the driver's CUDA version)"
        }
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => " (the kernel accessed memory outside its buffers)",
        _ => "",
    }
}
