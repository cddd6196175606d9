//! The CUDA backend: the kernel's device code compiled with NVRTC for the probed GPU and
//! launched through the driver with the snapshot's buffers and values, as
//! [`super::launch::LaunchSpec`] lays them out. The generated host function is not run
//! (there is no CUDA compiler for host code), so its copies and grid are not checked here;
//! the CPU backend checks those.

use super::launch::{LaunchArg, LaunchSpec};
use super::snapshot::Section;
use super::{Backend, ReplayJob, Replayed};
use crate::gpu::device::{self, GpuInfo, KernelArg, Launch};
use crate::gpu::{nvrtc, ptx};

/// Timed runs per replay; the report gives their median, which one slow first run (caches,
/// clocks ramping up) does not move.
pub const REPETITIONS: u32 = 5;

#[derive(Debug)]
pub struct CudaBackend {
    pub gpu: GpuInfo,
    /// Where NVRTC was loaded from.
    pub nvrtc: String,
}

impl CudaBackend {
    /// The backend when device 0 answers and NVRTC loads, else why not.
    pub fn new() -> Result<CudaBackend, String> {
        let gpu = device::probe()?;
        let nvrtc = nvrtc::library().map_err(|e| e.to_string())?;
        Ok(CudaBackend {
            gpu,
            nvrtc: nvrtc.to_string(),
        })
    }
}

/// The GPU layer's arguments for `spec`, in the kernel's parameter order: a buffer is
/// passed `lo` bytes before its device copy, so the program's byte offsets `[lo, hi)` of
/// the array land in the buffer; a value passes its bytes as they are (a scalar of the
/// program's size, a whole struct, a `long long` bound).
pub fn kernel_args(spec: &LaunchSpec) -> Result<Vec<KernelArg>, String> {
    spec.args
        .iter()
        .map(|arg| match arg {
            LaunchArg::Buffer { lo, bytes, out, .. } => Ok(KernelArg::BufferAt {
                bytes: bytes.clone(),
                copy_back: *out,
                offset: lo
                    .checked_neg()
                    .ok_or_else(|| format!("section start {lo} has no negation"))?,
            }),
            LaunchArg::Value { bytes, .. } => Ok(KernelArg::Bytes(bytes.clone())),
        })
        .collect()
}

/// What each argument of `spec` occupies as a kernel parameter, in bytes.
pub fn param_sizes(spec: &LaunchSpec) -> Vec<usize> {
    spec.args
        .iter()
        .map(|arg| match arg {
            LaunchArg::Buffer { .. } => 8,
            LaunchArg::Value { bytes, .. } => bytes.len(),
        })
        .collect()
}

/// Checks `spec`'s arguments against the kernel's parameters in `ptx` (count and sizes),
/// naming the first that differs: the check a launch makes before the driver reads them.
pub fn check_params(ptx_text: &str, spec: &LaunchSpec) -> Result<(), String> {
    let params = ptx::entry_params(ptx_text, &spec.kernel)?;
    let want = param_sizes(spec);
    if params.len() != want.len() {
        return Err(format!(
            "kernel `{}` has {} parameters in the PTX but the launch passes {}",
            spec.kernel,
            params.len(),
            want.len()
        ));
    }
    for ((param, size), arg) in params.iter().zip(&want).zip(&spec.args) {
        if param.bytes != *size {
            let what = match arg {
                LaunchArg::Buffer { array, .. } => format!("the pointer to `{array}`"),
                LaunchArg::Value { what, .. } => format!("`{what}`"),
            };
            return Err(format!(
                "kernel `{}`: parameter {} is {} bytes in the PTX but {what} is {size} bytes",
                spec.kernel, param.name, param.bytes
            ));
        }
    }
    Ok(())
}

/// Compiles `device_source` to PTX for `arch` (`None`: NVRTC's default).
pub fn compile(device_source: &str, stem: &str, arch: Option<String>) -> Result<String, String> {
    let options = nvrtc::CompileOptions {
        arch,
        extra: Vec::new(),
    };
    nvrtc::compile_to_ptx(device_source, &format!("{stem}.cu"), &options)
        .map_err(|e| format!("the generated device code does not compile: {e}"))
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn describe(&self) -> String {
        format!(
            "the kernel compiled with NVRTC ({}) for {} ({}, compute capability {}.{}) and launched \
             {REPETITIONS} times on the snapshot's sections; the host function is not run",
            self.nvrtc,
            self.gpu.name,
            self.gpu.nvrtc_arch(),
            self.gpu.compute_capability.0,
            self.gpu.compute_capability.1
        )
    }

    fn replay(&self, job: &ReplayJob<'_>) -> Result<Replayed, String> {
        let spec = job.launch;
        let e = job.emitted;
        let ptx_text = compile(&e.device_source, &e.stem, Some(self.gpu.nvrtc_arch()))?;
        // Kept for --keep; a failure to write it does not matter to the replay.
        if std::fs::create_dir_all(job.dir).is_ok() {
            let _ = std::fs::write(job.dir.join(format!("{}.ptx", e.stem)), &ptx_text);
        }
        check_params(&ptx_text, spec)?;
        let mut args = kernel_args(spec)?;
        let launch = Launch {
            grid: spec.grid,
            block: spec.block,
            shared_bytes: u32::try_from(spec.shared_bytes)
                .map_err(|_| format!("{} bytes of shared memory", spec.shared_bytes))?,
            repetitions: REPETITIONS,
        };
        let mut replayed = Replayed::default();
        match device::run_kernel_with(&ptx_text, &spec.kernel, &mut args, &launch) {
            Ok(stats) => {
                replayed.kernel_ms = Some(stats.kernel_ms);
                replayed.launched = Some((spec.grid, spec.block, spec.shared_bytes));
            }
            // The arguments were checked above, so a failure here is the kernel's (a
            // fault) or the driver's; either way there are no results to compare.
            Err(why) => {
                replayed
                    .failures
                    .push(format!("the kernel failed on the GPU: {why}"));
                return Ok(replayed);
            }
        }
        for (launch_arg, arg) in spec.args.iter().zip(args) {
            if let (
                LaunchArg::Buffer {
                    array,
                    lo,
                    out: true,
                    ..
                },
                KernelArg::BufferAt { bytes, .. },
            ) = (launch_arg, arg)
            {
                let hi = lo + bytes.len() as i64;
                replayed
                    .sections
                    .insert(array.clone(), Section { lo: *lo, hi, bytes });
            }
        }
        Ok(replayed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            kernel: "k".into(),
            grid: [4, 1, 1],
            block: [256, 1, 1],
            shared_bytes: 0,
            args: vec![
                LaunchArg::Buffer {
                    array: "a".into(),
                    lo: 40,
                    bytes: vec![1; 16],
                    out: false,
                },
                LaunchArg::Buffer {
                    array: "c".into(),
                    lo: -8,
                    bytes: vec![0xA5; 24],
                    out: true,
                },
                LaunchArg::Value {
                    what: "n".into(),
                    bytes: 7i32.to_le_bytes().to_vec(),
                },
                LaunchArg::Value {
                    what: "in".into(),
                    bytes: vec![2; 20],
                },
            ],
        }
    }

    #[test]
    fn buffers_are_passed_lo_bytes_before_their_copy_and_values_as_raw_bytes() {
        let args = kernel_args(&spec()).unwrap();
        assert_eq!(
            args,
            vec![
                KernelArg::BufferAt {
                    bytes: vec![1; 16],
                    copy_back: false,
                    offset: -40
                },
                KernelArg::BufferAt {
                    bytes: vec![0xA5; 24],
                    copy_back: true,
                    offset: 8
                },
                KernelArg::Bytes(7i32.to_le_bytes().to_vec()),
                KernelArg::Bytes(vec![2; 20]),
            ]
        );
        assert_eq!(param_sizes(&spec()), vec![8, 8, 4, 20]);
    }

    #[test]
    fn ptx_parameters_are_checked_against_the_launch() {
        let ptx_text = ".visible .entry k(\n .param .u64 k_param_0,\n .param .u64 k_param_1,\n \
                        .param .u32 k_param_2,\n .param .align 4 .b8 k_param_3[20]\n)\n{\n ret;\n}\n";
        check_params(ptx_text, &spec()).unwrap();
        let mut s = spec();
        s.args[3] = LaunchArg::Value {
            what: "in".into(),
            bytes: vec![2; 24],
        };
        let e = check_params(ptx_text, &s).unwrap_err();
        assert!(
            e.contains("k_param_3 is 20 bytes") && e.contains("`in` is 24"),
            "{e}"
        );
        s.args.pop();
        assert!(check_params(ptx_text, &s)
            .unwrap_err()
            .contains("4 parameters in the PTX but the launch passes 3"));
    }
}
