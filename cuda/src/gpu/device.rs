//! The GPU itself: what device 0 is, and running one PTX kernel on it with timing.
//!
//! Every function returns a [`GpuError`] when there is no driver, no GPU or the driver
//! refuses something; none panics. Each call retains device 0's primary context and
//! releases it on return, so that after a kernel fault (which poisons the context) a later
//! call can start from a fresh one; the driver may still refuse work in that process, so a
//! caller running untrusted kernels in bulk should use a child process per kernel. Context
//! set-up per call is not part of any reported time.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DriverError, LaunchConfig};
use cudarc::nvrtc::Ptx as CudarcPtx;

use super::error::GpuError;
use super::sys::{self, DeviceArg};
use super::{no_panic, ptx};

/// Device 0, as the driver describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    /// e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// `(major, minor)`, e.g. `(9, 0)`.
    pub compute_capability: (u32, u32),
    /// Global memory in bytes.
    pub memory_bytes: u64,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// The newest CUDA version the driver supports, `(major, minor)`; PTX from a newer
    /// NVRTC than this cannot be loaded.
    pub driver_cuda_version: (u32, u32),
}

impl GpuInfo {
    /// The NVRTC architecture option for this GPU, e.g. `compute_90`.
    pub fn nvrtc_arch(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("compute_{major}{minor}")
    }
}

/// Describes device 0, or says why there is none (no driver library, no device, ...).
pub fn probe() -> Result<GpuInfo, GpuError> {
    sys::driver().map_err(GpuError::DriverMissing)?;
    let driver_cuda_version = sys::driver_version()?;
    no_panic("probing the GPU", || {
        let context = context()?;
        let name = context
            .name()
            .map_err(|e| driver_error("cuDeviceGetName", e))?;
        let (major, minor) = context
            .compute_capability()
            .map_err(|e| driver_error("compute capability", e))?;
        let memory_bytes = context
            .total_mem()
            .map_err(|e| driver_error("cuDeviceTotalMem", e))?;
        let multiprocessors = context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| driver_error("multiprocessor count", e))?;
        Ok(GpuInfo {
            name,
            compute_capability: (major as u32, minor as u32),
            memory_bytes: memory_bytes as u64,
            multiprocessors: multiprocessors as u32,
            driver_cuda_version,
        })
    })
}

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelArg {
    /// A device buffer, passed as a pointer: `bytes` are copied to the device before the
    /// launch and, when `copy_back`, the device contents are copied back into `bytes` after it.
    Buffer {
        bytes: Vec<u8>,
        copy_back: bool,
    },
    /// A device buffer as [`KernelArg::Buffer`], but the kernel gets the buffer's device
    /// address plus `offset` bytes (which may be negative: a pointer such that the kernel's
    /// own indices, counted from a base outside the buffer, land in it). The pointer is
    /// only computed, never dereferenced, on the host.
    BufferAt {
        bytes: Vec<u8>,
        copy_back: bool,
        offset: i64,
    },
    /// Raw bytes passed by value: a struct, or a scalar of any size, exactly as the
    /// kernel's parameter lays it out. Its length must equal the parameter's size.
    Bytes(Vec<u8>),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

/// Grid, block, dynamic shared memory and how many times to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block (`extern __shared__`), in bytes.
    pub shared_bytes: u32,
    /// Timed runs, at least 1. Every run starts from the same buffer contents.
    pub repetitions: u32,
}

/// What a run cost. Times are milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    /// The median of `kernel_ms_each`.
    pub kernel_ms: f64,
    /// Each run: CUDA events recorded on the stream right before and right after the
    /// launch, so this is the kernel alone, without copies or launch set-up on the host.
    pub kernel_ms_each: Vec<f64>,
    /// Loading the PTX (the driver JIT-compiles it for the GPU) and finding the kernel.
    pub module_load_ms: f64,
    /// Allocating the buffers and copying them to the device once (host wall clock).
    pub copy_in_ms: f64,
    /// Copying the `copy_back` buffers to the host (host wall clock).
    pub copy_out_ms: f64,
    /// The GPU's name.
    pub device: String,
}

/// Runs `kernel` from `ptx` once on device 0; see [`run_kernel_with`].
pub fn run_kernel(
    ptx: &str,
    kernel: &str,
    args: &mut [KernelArg],
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
) -> Result<RunStats, GpuError> {
    let launch = Launch {
        grid,
        block,
        shared_bytes,
        repetitions: 1,
    };
    run_kernel_with(ptx, kernel, args, &launch)
}

/// Runs `kernel` from `ptx` on device 0 `launch.repetitions` times and copies the
/// `copy_back` buffers into `args` after the last run.
///
/// Before touching the GPU it checks the launch shape and that `args` match the kernel's
/// parameters in the PTX (count and sizes: a buffer is an 8-byte pointer). Before every run
/// after the first the buffers are copied in again, so a kernel that updates in place
/// sees the same input each time and the results are those of one run.
pub fn run_kernel_with(
    ptx: &str,
    kernel: &str,
    args: &mut [KernelArg],
    launch: &Launch,
) -> Result<RunStats, GpuError> {
    check_launch(launch)?;
    if ptx.contains('\0') || kernel.contains('\0') {
        return Err(GpuError::NulByte);
    }
    let param_sizes: Vec<usize> = ptx::entry_params(ptx, kernel)?
        .iter()
        .map(|p| p.bytes)
        .collect();
    check_args(kernel, &param_sizes, args)?;
    sys::driver().map_err(GpuError::DriverMissing)?;
    no_panic("running the kernel", || {
        run_on_device(ptx, kernel, args, launch, &param_sizes)
    })
}

fn check_launch(launch: &Launch) -> Result<(), GpuError> {
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(GpuError::ZeroDimension {
            grid: launch.grid,
            block: launch.block,
        });
    }
    let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if threads > 1024 {
        return Err(GpuError::TooManyThreads {
            block: launch.block,
            threads,
        });
    }
    if launch.repetitions == 0 {
        return Err(GpuError::NoRepetitions);
    }
    Ok(())
}

/// The host bytes, `copy_back` and pointer offset of a buffer argument; `None` for a value.
fn buffer_parts(arg: &KernelArg) -> Option<(&Vec<u8>, bool, i64)> {
    match arg {
        KernelArg::Buffer { bytes, copy_back } => Some((bytes, *copy_back, 0)),
        KernelArg::BufferAt {
            bytes,
            copy_back,
            offset,
        } => Some((bytes, *copy_back, *offset)),
        _ => None,
    }
}

fn arg_size(arg: &KernelArg) -> usize {
    match arg {
        KernelArg::Bytes(bytes) => bytes.len(),
        KernelArg::Buffer { .. }
        | KernelArg::BufferAt { .. }
        | KernelArg::I64(_)
        | KernelArg::U64(_)
        | KernelArg::F64(_) => 8,
        KernelArg::I32(_) | KernelArg::U32(_) | KernelArg::F32(_) => 4,
    }
}

fn describe(arg: &KernelArg) -> String {
    match arg {
        KernelArg::Buffer { bytes, .. } => {
            format!("a buffer of {} bytes, passed as a pointer", bytes.len())
        }
        KernelArg::BufferAt { bytes, offset, .. } => format!(
            "a buffer of {} bytes, passed as a pointer {offset:+} bytes from its start",
            bytes.len()
        ),
        KernelArg::Bytes(bytes) => format!("{} raw bytes by value", bytes.len()),
        KernelArg::I32(v) => format!("i32 {v}"),
        KernelArg::I64(v) => format!("i64 {v}"),
        KernelArg::U32(v) => format!("u32 {v}"),
        KernelArg::U64(v) => format!("u64 {v}"),
        KernelArg::F32(v) => format!("f32 {v}"),
        KernelArg::F64(v) => format!("f64 {v}"),
    }
}

fn check_args(kernel: &str, param_sizes: &[usize], args: &[KernelArg]) -> Result<(), GpuError> {
    if param_sizes.len() != args.len() {
        return Err(GpuError::ArgumentCount {
            kernel: kernel.to_string(),
            params: param_sizes.len(),
            args: args.len(),
        });
    }
    for (index, (&param, arg)) in param_sizes.iter().zip(args).enumerate() {
        if param != arg_size(arg) {
            return Err(GpuError::ArgumentSize {
                kernel: kernel.to_string(),
                index,
                argument: describe(arg),
                argument_bytes: arg_size(arg),
                param_bytes: param,
            });
        }
    }
    Ok(())
}

/// A failed driver call, `what` saying which.
fn driver_error(what: impl Into<String>, error: DriverError) -> GpuError {
    GpuError::Call {
        what: what.into(),
        source: error,
    }
}

fn context() -> Result<Arc<CudaContext>, GpuError> {
    // The driver is there but may have no device (CUDA_ERROR_NO_DEVICE) or a broken
    // install: for callers that is still "no GPU".
    CudaContext::new(0).map_err(|source| GpuError::NoDevice { source })
}

fn run_on_device(
    ptx: &str,
    kernel: &str,
    args: &mut [KernelArg],
    launch: &Launch,
    param_sizes: &[usize],
) -> Result<RunStats, GpuError> {
    let context = context()?;
    let device = context.name().unwrap_or_else(|_| "device 0".into());
    let stream = context.default_stream();

    let started = Instant::now();
    let module = context
        .load_module(CudarcPtx::from_src(ptx))
        .map_err(|e| driver_error("loading the PTX", e))?;
    let function = module
        .load_function(kernel)
        .map_err(|e| driver_error(format!("finding kernel `{kernel}`"), e))?;
    if launch.shared_bytes > 48 * 1024 {
        // Above 48 KiB a kernel must opt in to dynamic shared memory.
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                launch.shared_bytes as i32,
            )
            .map_err(|e| driver_error("allowing the dynamic shared memory", e))?;
    }
    let module_load_ms = ms_since(started);

    let started = Instant::now();
    let mut buffers: Vec<Option<CudaSlice<u8>>> = Vec::with_capacity(args.len());
    for arg in args.iter() {
        buffers.push(match buffer_parts(arg) {
            Some((bytes, ..)) => Some(upload(&stream, bytes)?),
            None => None,
        });
    }
    sync(&stream)?;
    let copy_in_ms = ms_since(started);

    let config = LaunchConfig {
        grid_dim: (launch.grid[0], launch.grid[1], launch.grid[2]),
        block_dim: (launch.block[0], launch.block[1], launch.block[2]),
        shared_mem_bytes: launch.shared_bytes,
    };
    let mut kernel_ms_each = Vec::with_capacity(launch.repetitions as usize);
    for run in 0..launch.repetitions {
        if run > 0 {
            restore(&stream, args, &mut buffers)?;
        }
        let device_args = device_args(args, &buffers)?;
        let (start, end) = sys::launch(&stream, &function, &device_args, param_sizes, config)?;
        // elapsed_ms waits for the end event, so a fault in the kernel surfaces here.
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| driver_error(format!("running kernel `{kernel}`"), e))?;
        kernel_ms_each.push(f64::from(ms));
    }
    sync(&stream)?;

    let started = Instant::now();
    for (arg, buffer) in args.iter_mut().zip(&buffers) {
        let bytes = match arg {
            KernelArg::Buffer {
                bytes,
                copy_back: true,
            }
            | KernelArg::BufferAt {
                bytes,
                copy_back: true,
                ..
            } => bytes,
            _ => continue,
        };
        if let Some(buffer) = buffer {
            if !bytes.is_empty() {
                stream
                    .memcpy_dtoh(buffer, bytes.as_mut_slice())
                    .map_err(|e| driver_error("copying a buffer back", e))?;
            }
        }
    }
    sync(&stream)?;
    let copy_out_ms = ms_since(started);

    Ok(RunStats {
        kernel_ms: median(&kernel_ms_each),
        kernel_ms_each,
        module_load_ms,
        copy_in_ms,
        copy_out_ms,
        device,
    })
}

/// A device copy of `bytes`. An empty buffer still gets a (1-byte) allocation: the driver
/// rejects size 0 and the kernel still needs a valid pointer.
fn upload(stream: &Arc<CudaStream>, bytes: &[u8]) -> Result<CudaSlice<u8>, GpuError> {
    let result = if bytes.is_empty() {
        stream.alloc_zeros::<u8>(1)
    } else {
        stream.clone_htod(bytes)
    };
    result.map_err(|e| driver_error(format!("copying {} bytes to the device", bytes.len()), e))
}

fn restore(
    stream: &Arc<CudaStream>,
    args: &[KernelArg],
    buffers: &mut [Option<CudaSlice<u8>>],
) -> Result<(), GpuError> {
    for (arg, buffer) in args.iter().zip(buffers.iter_mut()) {
        if let (Some((bytes, ..)), Some(buffer)) = (buffer_parts(arg), buffer) {
            if !bytes.is_empty() {
                stream
                    .memcpy_htod(bytes.as_slice(), buffer)
                    .map_err(|e| driver_error("copying a buffer to the device", e))?;
            }
        }
    }
    Ok(())
}

fn device_args<'a>(
    args: &'a [KernelArg],
    buffers: &'a [Option<CudaSlice<u8>>],
) -> Result<Vec<DeviceArg<'a>>, GpuError> {
    args.iter()
        .zip(buffers)
        .map(|(arg, buffer)| {
            Ok(match (arg, buffer) {
                (KernelArg::Buffer { .. }, Some(buffer)) => DeviceArg::Buffer(buffer),
                (KernelArg::BufferAt { offset, .. }, Some(buffer)) => {
                    DeviceArg::BufferAt(buffer, *offset)
                }
                (KernelArg::Buffer { .. } | KernelArg::BufferAt { .. }, None) => {
                    return Err(GpuError::Internal(
                        "a buffer argument has no device allocation",
                    ))
                }
                (KernelArg::Bytes(bytes), _) => DeviceArg::Bytes(bytes),
                (KernelArg::I32(v), _) => DeviceArg::I32(*v),
                (KernelArg::I64(v), _) => DeviceArg::I64(*v),
                (KernelArg::U32(v), _) => DeviceArg::U32(*v),
                (KernelArg::U64(v), _) => DeviceArg::U64(*v),
                (KernelArg::F32(v), _) => DeviceArg::F32(*v),
                (KernelArg::F64(v), _) => DeviceArg::F64(*v),
            })
        })
        .collect()
}

fn sync(stream: &Arc<CudaStream>) -> Result<(), GpuError> {
    stream
        .synchronize()
        .map_err(|e| driver_error("synchronizing the stream", e))
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn offset_buffers_and_raw_bytes_are_sized_like_their_parameters() {
        let args = [
            KernelArg::BufferAt {
                bytes: vec![0; 12],
                copy_back: true,
                offset: -40,
            },
            KernelArg::Bytes(vec![1; 24]),
            KernelArg::I32(3),
        ];
        assert!(check_args("k", &[8, 24, 4], &args).is_ok());
        let wrong = check_args("k", &[8, 16, 4], &args).unwrap_err().to_string();
        assert!(wrong.contains("24 raw bytes by value"), "{wrong}");
        assert_eq!(buffer_parts(&args[0]), Some((&vec![0; 12], true, -40)));
        assert_eq!(buffer_parts(&args[1]), None);
    }

    #[test]
    fn launch_shape_is_checked() {
        let mut launch = Launch {
            grid: [1, 1, 1],
            block: [32, 32, 2],
            shared_bytes: 0,
            repetitions: 1,
        };
        assert!(check_launch(&launch)
            .unwrap_err()
            .to_string()
            .contains("2048 threads"));
        launch.block = [0, 1, 1];
        assert!(check_launch(&launch).is_err());
        launch.block = [256, 1, 1];
        assert!(check_launch(&launch).is_ok());
    }
}
