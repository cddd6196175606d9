//! The GPU layer's only unsafe code: opening the CUDA libraries and launching a kernel.
// Opening a shared library runs its initialisers, reading a symbol trusts its type, and a
// kernel launch hands the driver raw pointers to the arguments: none of that can be
// expressed in safe Rust. Everything else under `gpu/` is safe code over these functions.
#![allow(unsafe_code)]

use std::panic::catch_unwind;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use libloading::Library;

use super::error::{GpuError, LoadError};
use super::nvrtc::NvrtcError;
use super::panic_text;

/// A library opened once per process, and where it came from. The handles stay open for
/// the life of the process: they keep the files mapped, which is what lets cudarc's
/// by-name `dlopen` resolve to them.
#[derive(Debug)]
struct Loaded {
    description: String,
    _handles: Vec<Library>,
}

/// Opens NVRTC once per process and says where it came from, or why it could not.
///
/// cudarc opens libraries by name only (`libnvrtc.so`, ..., `libnvrtc.so.12`) and panics
/// when none opens. To honour `WARPWISE_NVRTC` we open that file by path first: glibc's
/// `dlopen` of a bare name returns an already loaded object whose SONAME matches, so
/// cudarc's `libnvrtc.so.12` then resolves to our file. Setting `LD_LIBRARY_PATH` from
/// inside the process would not work: the loader reads it once, at start-up.
pub(crate) fn nvrtc() -> Result<&'static str, LoadError> {
    static STATE: OnceLock<Result<Loaded, LoadError>> = OnceLock::new();
    match STATE.get_or_init(load_nvrtc) {
        Ok(loaded) => Ok(&loaded.description),
        Err(why) => Err(why.clone()),
    }
}

fn load_nvrtc() -> Result<Loaded, LoadError> {
    let mut handles = Vec::new();
    // The file WARPWISE_NVRTC names and the address of its nvrtcVersion.
    let mut preloaded = None;
    if let Some(value) = std::env::var_os("WARPWISE_NVRTC").filter(|v| !v.is_empty()) {
        let path = nvrtc_file(Path::new(&value))?;
        // libnvrtc dlopens libnvrtc-builtins.so.X.Y by name when it compiles. The pip
        // package's libnvrtc has RUNPATH=$ORIGIN, but a copy without it would need
        // LD_LIBRARY_PATH; loading the builtins from the same directory first makes that
        // name resolve by SONAME, as for libnvrtc itself.
        for builtins in builtins_next_to(&path) {
            handles.push(open_path(&builtins)?);
        }
        let library = open_path(&path)?;
        let address = symbol_address(&library, "nvrtcVersion")
            .ok_or_else(|| LoadError::NotNvrtc(path.clone()))?;
        handles.push(library);
        preloaded = Some((path, address));
    }

    let (name, probe) = open_first("nvrtc").map_err(|why| match &preloaded {
        Some((path, _)) => LoadError::SonameMismatch {
            path: path.clone(),
            tried: tried("nvrtc"),
        },
        None => why,
    })?;
    handles.push(probe);
    // Make cudarc open its own handle now, where its panic (it has no error path for a
    // missing library) is caught; the probe above makes that panic unexpected.
    let culib = catch_unwind(|| {
        // SAFETY: opens the same library by the same name as the probe above did.
        unsafe { cudarc::nvrtc::sys::culib() }
    })
    .map_err(|payload| LoadError::CudarcPanicked {
        name: name.clone(),
        message: panic_text(&payload),
    })?;

    let description = match preloaded {
        // Equal addresses mean cudarc's handle is our file and not another libnvrtc that
        // an earlier candidate name found on the search path.
        Some((path, ours)) if symbol_address(culib, "nvrtcVersion") == Some(ours) => {
            format!("{} (from WARPWISE_NVRTC)", path.display())
        }
        Some((path, _)) => return Err(LoadError::Shadowed { path, name }),
        None => format!("{name} (from the library search path)"),
    };
    Ok(Loaded {
        description,
        _handles: handles,
    })
}

/// `WARPWISE_NVRTC` may name the library or the directory holding it.
fn nvrtc_file(value: &Path) -> Result<PathBuf, LoadError> {
    if value.is_dir() {
        for name in ["libnvrtc.so.12", "libnvrtc.so"] {
            let candidate = value.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        return Err(LoadError::NvrtcDirEmpty(value.to_path_buf()));
    }
    if !value.exists() {
        return Err(LoadError::NvrtcPathMissing(value.to_path_buf()));
    }
    Ok(value.to_path_buf())
}

/// `libnvrtc-builtins.so*` files next to `nvrtc`. The pip package also ships
/// `libnvrtc-builtins.alt.so*`, the builtins of its `libnvrtc.alt.so`; the prefix skips them.
fn builtins_next_to(nvrtc: &Path) -> Vec<PathBuf> {
    let Some(dir) = nvrtc.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    found.sort();
    found
}

fn open_path(path: &Path) -> Result<Library, LoadError> {
    let Some(text) = path.to_str() else {
        return Err(LoadError::NotUtf8(path.to_path_buf()));
    };
    // SAFETY: the file is a CUDA library (we were told so); its initialisers only set up
    // its own state.
    unsafe { Library::new(text) }.map_err(|e| LoadError::Open {
        path: path.to_path_buf(),
        dlerror: dl_error(&e),
    })
}

/// The names cudarc tries for `lib`, in its order, without repeats.
fn candidates(lib: &str) -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates(lib);
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names
}

/// The candidates that can exist on Linux (`libnvrtc.so`, `libnvrtc.so.12`, ...), for messages.
fn tried(lib: &str) -> String {
    let names = candidates(lib);
    let prefix = format!("lib{lib}.so");
    let shown: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    format!(
        "{} or {} other names",
        shown.join(", "),
        names.len() - shown.len()
    )
}

/// A libloading error with dlerror's text, which libloading keeps as the source.
fn dl_error(error: &libloading::Error) -> String {
    match std::error::Error::source(error) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}

/// Opens the first of cudarc's candidate names that opens, which is the library cudarc
/// itself will pick: same names, same order, same `dlopen`.
fn open_first(lib: &str) -> Result<(String, Library), LoadError> {
    let mut last_error = String::new();
    for name in candidates(lib) {
        // SAFETY: as in `open_path`; these are the names cudarc opens.
        match unsafe { Library::new(name.as_str()) } {
            Ok(handle) => return Ok((name, handle)),
            Err(e) => last_error = dl_error(&e),
        }
    }
    Err(LoadError::NotFound {
        tried: tried(lib),
        dlerror: last_error,
    })
}

fn symbol_address(library: &Library, symbol: &str) -> Option<usize> {
    // SAFETY: the symbol is only read as an address, never called.
    let function = unsafe { library.get::<unsafe extern "C" fn()>(symbol) }.ok()?;
    Some(*function as usize)
}

/// NVRTC's version, `(major, minor)`.
pub(crate) fn nvrtc_version() -> Result<(u32, u32), NvrtcError> {
    nvrtc().map_err(NvrtcError::Unavailable)?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above) and nvrtcVersion exists in every release;
    // it writes two ints through the pointers, which point at live locals.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(NvrtcError::Failed(format!(
            "nvrtcVersion failed: {status:?}"
        )));
    }
    Ok((major as u32, minor as u32))
}

/// Opens the CUDA driver library (`libcuda`) once per process, or says why it could not.
pub(crate) fn driver() -> Result<&'static str, LoadError> {
    static STATE: OnceLock<Result<Loaded, LoadError>> = OnceLock::new();
    let state = STATE.get_or_init(|| {
        let (name, probe) = open_first("cuda").map_err(|why| LoadError::NoDriver(Box::new(why)))?;
        catch_unwind(|| {
            // SAFETY: opens the same library by the same name as the probe above did.
            unsafe { cudarc::driver::sys::culib() };
        })
        .map_err(|payload| LoadError::CudarcPanicked {
            name: name.clone(),
            message: panic_text(&payload),
        })?;
        Ok(Loaded {
            description: name,
            _handles: vec![probe],
        })
    });
    match state {
        Ok(loaded) => Ok(&loaded.description),
        Err(why) => Err(why.clone()),
    }
}

/// The CUDA version the installed driver supports, `(major, minor)`.
pub(crate) fn driver_version() -> Result<(u32, u32), GpuError> {
    driver().map_err(GpuError::DriverMissing)?;
    let mut version = 0;
    // SAFETY: the driver is loaded (checked above); cuDriverGetVersion exists in every
    // release and writes one int through a pointer to a live local.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    if status != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::DriverVersion(status));
    }
    Ok(((version / 1000) as u32, ((version % 1000) / 10) as u32))
}

/// One kernel argument as it is passed: a device buffer or a scalar by value.
#[derive(Debug)]
pub(crate) enum DeviceArg<'a> {
    Buffer(&'a CudaSlice<u8>),
    /// A device buffer's address plus a signed byte offset, passed as a 64-bit pointer.
    BufferAt(&'a CudaSlice<u8>, i64),
    /// Raw bytes by value (a struct); the parameter is `len()` bytes.
    Bytes(&'a [u8]),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl DeviceArg<'_> {
    /// Bytes the kernel parameter occupies; a buffer is a 64-bit device pointer.
    pub(crate) fn size(&self) -> usize {
        match self {
            DeviceArg::Bytes(bytes) => bytes.len(),
            DeviceArg::Buffer(_)
            | DeviceArg::BufferAt(..)
            | DeviceArg::I64(_)
            | DeviceArg::U64(_)
            | DeviceArg::F64(_) => 8,
            DeviceArg::I32(_) | DeviceArg::U32(_) | DeviceArg::F32(_) => 4,
        }
    }
}

/// Launches `function` once on `stream` with CUDA events recorded right before and right
/// after it, so their elapsed time is the kernel alone.
///
/// `param_sizes` are the kernel's parameter sizes read from the PTX it was loaded from;
/// the launch is refused unless `args` match them one for one.
pub(crate) fn launch(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    args: &[DeviceArg<'_>],
    param_sizes: &[usize],
    config: LaunchConfig,
) -> Result<(CudaEvent, CudaEvent), GpuError> {
    let arg_sizes: Vec<usize> = args.iter().map(DeviceArg::size).collect();
    if arg_sizes != param_sizes {
        return Err(GpuError::SizeMismatch {
            params: param_sizes.to_vec(),
            args: arg_sizes,
        });
    }
    if args
        .iter()
        .any(|a| matches!(a, DeviceArg::Bytes(b) if b.is_empty()))
    {
        return Err(GpuError::EmptyBytes);
    }
    // Offset pointers and raw bytes are passed as values the driver copies from host
    // memory: they must outlive the builder, so they are made here, before it. Raw bytes
    // are copied into u64 words so the driver reads from aligned memory; the words hold
    // at least `len()` bytes, which is what the driver reads.
    let mut guards = Vec::new();
    let mut pointers = Vec::new();
    let mut words: Vec<Vec<u64>> = Vec::new();
    for arg in args {
        match arg {
            DeviceArg::BufferAt(buffer, offset) => {
                let (address, guard) = buffer.device_ptr(stream);
                guards.push(guard);
                pointers.push(address.wrapping_add_signed(*offset));
            }
            DeviceArg::Bytes(bytes) => {
                let mut w = vec![0u64; bytes.len().div_ceil(8)];
                for (i, b) in bytes.iter().enumerate() {
                    w[i / 8] |= u64::from(*b) << (8 * (i % 8));
                }
                words.push(w);
            }
            _ => {}
        }
    }
    let (mut next_pointer, mut next_words) = (pointers.iter(), words.iter());
    let mut builder = stream.launch_builder(function);
    for arg in args {
        match arg {
            DeviceArg::Buffer(buffer) => builder.arg(*buffer),
            DeviceArg::BufferAt(..) => match next_pointer.next() {
                Some(p) => builder.arg(p),
                None => return Err(GpuError::Internal("an offset pointer is missing")),
            },
            DeviceArg::Bytes(_) => match next_words.next().and_then(|w| w.first()) {
                // The driver reads the parameter's size from this address: the whole Vec.
                Some(first) => builder.arg(first),
                None => return Err(GpuError::Internal("by-value bytes are missing")),
            },
            DeviceArg::I32(v) => builder.arg(v),
            DeviceArg::I64(v) => builder.arg(v),
            DeviceArg::U32(v) => builder.arg(v),
            DeviceArg::U64(v) => builder.arg(v),
            DeviceArg::F32(v) => builder.arg(v),
            DeviceArg::F64(v) => builder.arg(v),
        };
    }
    builder.record_kernel_launch(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    // SAFETY: the driver reads one parameter per entry of the kernel's signature, at the
    // size the signature gives; the check above makes `args` exactly that list, so it
    // reads only the values and device pointers pushed here, which live until the
    // builder is dropped. The buffers are device allocations owned by the caller that
    // cudarc keeps alive until the launch's work on `stream` completes. An offset pointer
    // is a u64 in `pointers`; raw bytes are read from `words`, whose Vec for that argument
    // holds at least the parameter's size (size checked above, rounded up to words);
    // both live past the launch. An offset pointer may point outside its allocation:
    // only the kernel dereferences it, on the device, at indices the launch spec puts
    // back inside the buffer. What the kernel
    // does to device memory cannot corrupt host memory; a fault there comes back as an
    // error from the next synchronisation.
    let events = unsafe { builder.launch(config) }.map_err(GpuError::LaunchFailed)?;
    // The guards record the buffers' use on the stream after the launch is queued.
    drop(guards);
    events.ok_or(GpuError::NoEvents)
}
