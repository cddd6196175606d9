//! The CUDA backend: the kernel's device code compiled with NVRTC for the probed GPU and
//! launched through the driver with the snapshot's buffers and values, as
//! [`super::launch::LaunchSpec`] lays them out. The generated host function is not run
//! (there is no CUDA compiler for host code): its copies are reproduced from the plan
//! (what it copies in and back, with poison guards around each buffer), its grid is not
//! checked here; the CPU backend checks that.

use super::error::{BackendError, ReplayError};
use super::launch::{LaunchArg, LaunchSpec, POISON};
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
    pub fn new() -> Result<CudaBackend, BackendError> {
        let gpu = device::probe().map_err(|source| BackendError::NoGpu { source, seen: None })?;
        let nvrtc = nvrtc::library()?;
        Ok(CudaBackend {
            gpu,
            nvrtc: nvrtc.to_string(),
        })
    }
}

/// Poison bytes allocated on each side of every device buffer. A kernel that writes
/// outside its section writes there and the replay says so, as the CPU backend's shim does
/// with its guards; a kernel that reads there reads poison, which the comparison shows.
pub const GUARD: usize = 256;

/// The GPU layer's arguments for `spec`, in the kernel's parameter order: a buffer holds
/// `GUARD` poison bytes, the bytes the host function copies of the section, poison up to
/// the section's end, and `GUARD` poison bytes; it is passed so that the program's byte
/// offsets `[lo, hi)` of the array land on the section. Every buffer is copied back, so
/// that its guards can be checked. A value passes its bytes as they are (a scalar of the
/// program's size, a whole struct, a `long long` bound).
pub fn kernel_args(spec: &LaunchSpec) -> Result<Vec<KernelArg>, ReplayError> {
    spec.args
        .iter()
        .map(|arg| match arg {
            LaunchArg::Buffer {
                lo, bytes, copied, ..
            } => {
                let copied = (*copied).min(bytes.len());
                let mut device = vec![POISON; GUARD + bytes.len() + GUARD];
                device[GUARD..GUARD + copied].copy_from_slice(&bytes[..copied]);
                Ok(KernelArg::BufferAt {
                    bytes: device,
                    copy_back: true,
                    offset: (GUARD as i64)
                        .checked_sub(*lo)
                        .ok_or(ReplayError::SectionOutOfRange { lo: *lo })?,
                })
            }
            // The pointer's 8 bytes, all zero: what `(T *)0` passes.
            LaunchArg::Null { .. } => Ok(KernelArg::U64(0)),
            LaunchArg::Value { bytes, .. } => Ok(KernelArg::Bytes(bytes.clone())),
        })
        .collect()
}

/// After a run: each outbound section as the host sees it once the host function copied
/// its part back (the bytes it does not copy keep the host's values), and a failure for
/// each buffer whose guards or uncopied tail the kernel wrote. An outbound pointer that was
/// null stays null: there is nothing to read back.
pub fn read_back(spec: &LaunchSpec, args: &[KernelArg], replayed: &mut Replayed) {
    for (launch_arg, arg) in spec.args.iter().zip(args) {
        if let LaunchArg::Null {
            array,
            lo,
            hi,
            out: true,
        } = launch_arg
        {
            replayed
                .sections
                .insert(array.clone(), Section::null(*lo, *hi));
            continue;
        }
        let (
            LaunchArg::Buffer {
                array,
                lo,
                bytes: entry,
                out,
                copied,
            },
            KernelArg::BufferAt { bytes: device, .. },
        ) = (launch_arg, arg)
        else {
            continue;
        };
        let copied = (*copied).min(entry.len());
        let inside = GUARD..GUARD + copied;
        let written: Vec<usize> = device
            .iter()
            .enumerate()
            .filter(|(i, b)| !inside.contains(i) && **b != POISON)
            .map(|(i, _)| i)
            .collect();
        if let (Some(first), Some(last)) = (written.first(), written.last()) {
            let at = |i: usize| lo + i as i64 - GUARD as i64;
            replayed.failures.push(format!(
                "the kernel wrote outside the device buffer of `{array}` ({copied} bytes): bytes [{}, {}) relative to `{array}`",
                at(*first),
                at(*last + 1)
            ));
        }
        if *out {
            let mut bytes = device[inside].to_vec();
            bytes.extend_from_slice(&entry[copied..]);
            let hi = lo + bytes.len() as i64;
            replayed
                .sections
                .insert(array.clone(), Section::of(*lo, hi, bytes));
        }
    }
}

/// What each argument of `spec` occupies as a kernel parameter, in bytes.
pub fn param_sizes(spec: &LaunchSpec) -> Vec<usize> {
    spec.args
        .iter()
        .map(|arg| match arg {
            LaunchArg::Buffer { .. } | LaunchArg::Null { .. } => 8,
            LaunchArg::Value { bytes, .. } => bytes.len(),
        })
        .collect()
}

/// Checks `spec`'s arguments against the kernel's parameters in `ptx` (count and sizes),
/// naming the first that differs: the check a launch makes before the driver reads them.
pub fn check_params(ptx_text: &str, spec: &LaunchSpec) -> Result<(), ReplayError> {
    let params = ptx::entry_params(ptx_text, &spec.kernel)?;
    let want = param_sizes(spec);
    if params.len() != want.len() {
        return Err(ReplayError::ParamCount {
            kernel: spec.kernel.clone(),
            params: params.len(),
            args: want.len(),
        });
    }
    for ((param, size), arg) in params.iter().zip(&want).zip(&spec.args) {
        if param.bytes != *size {
            let what = match arg {
                LaunchArg::Buffer { array, .. } | LaunchArg::Null { array, .. } => {
                    format!("the pointer to `{array}`")
                }
                LaunchArg::Value { what, .. } => format!("`{what}`"),
            };
            return Err(ReplayError::ParamSize {
                kernel: spec.kernel.clone(),
                param: param.name.clone(),
                param_bytes: param.bytes,
                argument: what,
                argument_bytes: *size,
            });
        }
    }
    Ok(())
}

/// Compiles `device_source` to PTX for `arch` (`None`: NVRTC's default).
pub fn compile(
    device_source: &str,
    stem: &str,
    arch: Option<String>,
) -> Result<String, ReplayError> {
    let options = nvrtc::CompileOptions {
        arch,
        extra: Vec::new(),
    };
    nvrtc::compile_to_ptx(device_source, &format!("{stem}.cu"), &options)
        .map_err(ReplayError::DeviceCode)
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn describe(&self) -> String {
        format!(
            "the kernel compiled with NVRTC ({}) for {} ({}, compute capability {}.{}) and launched \
             {REPETITIONS} times on the sections the host function copies, between poison guards; \
             the host function itself is not run",
            self.nvrtc,
            self.gpu.name,
            self.gpu.nvrtc_arch(),
            self.gpu.compute_capability.0,
            self.gpu.compute_capability.1
        )
    }

    fn replay(&self, job: &ReplayJob<'_>) -> Result<Replayed, ReplayError> {
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
                .map_err(|_| ReplayError::SharedTooLarge(spec.shared_bytes))?,
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
        read_back(spec, &args, &mut replayed);
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
                    copied: 16,
                },
                LaunchArg::Buffer {
                    array: "c".into(),
                    lo: -8,
                    bytes: vec![7; 24],
                    out: true,
                    copied: 20,
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

    /// `GUARD` poison bytes, then `body`, then `GUARD` poison bytes.
    fn guarded(body: &[u8]) -> Vec<u8> {
        let mut v = vec![POISON; GUARD];
        v.extend_from_slice(body);
        v.extend(std::iter::repeat_n(POISON, GUARD));
        v
    }

    #[test]
    fn buffers_are_guarded_hold_what_the_host_copies_and_values_pass_as_raw_bytes() {
        let args = kernel_args(&spec()).unwrap();
        let mut c = vec![7; 20];
        c.extend([POISON; 4]);
        assert_eq!(
            args,
            vec![
                KernelArg::BufferAt {
                    bytes: guarded(&[1; 16]),
                    copy_back: true,
                    offset: GUARD as i64 - 40
                },
                KernelArg::BufferAt {
                    bytes: guarded(&c),
                    copy_back: true,
                    offset: GUARD as i64 + 8
                },
                KernelArg::Bytes(7i32.to_le_bytes().to_vec()),
                KernelArg::Bytes(vec![2; 20]),
            ]
        );
        assert_eq!(param_sizes(&spec()), vec![8, 8, 4, 20]);
    }

    #[test]
    fn read_back_keeps_the_host_bytes_it_does_not_copy_and_reports_writes_outside() {
        let spec = spec();
        let mut args = kernel_args(&spec).unwrap();
        // The kernel wrote all 24 bytes of `c` (4 past the 20 the host copies) and one byte
        // below `a`'s section.
        if let KernelArg::BufferAt { bytes, .. } = &mut args[1] {
            bytes[GUARD..GUARD + 24].fill(9);
        }
        if let KernelArg::BufferAt { bytes, .. } = &mut args[0] {
            bytes[GUARD - 1] = 0;
        }
        let mut replayed = Replayed::default();
        read_back(&spec, &args, &mut replayed);
        let c = &replayed.sections["c"];
        let mut want = vec![9; 20];
        want.extend([7; 4]);
        assert_eq!((c.lo, c.hi, &c.bytes), (-8, 16, &want));
        assert!(!replayed.sections.contains_key("a"));
        assert_eq!(
            replayed.failures,
            vec![
                "the kernel wrote outside the device buffer of `a` (16 bytes): bytes [39, 40) relative to `a`",
                "the kernel wrote outside the device buffer of `c` (20 bytes): bytes [12, 16) relative to `c`",
            ]
        );
    }

    #[test]
    fn a_scalar_reductions_device_copy_starts_at_the_entry_value_and_is_read_back() {
        // `sum` (long long) is passed as a one-element buffer holding its value at the
        // loop's entry, between guards; after the kernel combined into it, its bytes are
        // the section compared with the program's value at the exit.
        let spec = LaunchSpec {
            kernel: "k".into(),
            grid: [2, 1, 1],
            block: [96, 1, 1],
            shared_bytes: 0,
            args: vec![LaunchArg::Buffer {
                array: "sum".into(),
                lo: 0,
                bytes: 5i64.to_le_bytes().to_vec(),
                out: true,
                copied: 8,
            }],
        };
        let mut args = kernel_args(&spec).unwrap();
        assert_eq!(
            args,
            vec![KernelArg::BufferAt {
                bytes: guarded(&5i64.to_le_bytes()),
                copy_back: true,
                offset: GUARD as i64,
            }]
        );
        assert_eq!(param_sizes(&spec), vec![8]);
        if let KernelArg::BufferAt { bytes, .. } = &mut args[0] {
            bytes[GUARD..GUARD + 8].copy_from_slice(&47i64.to_le_bytes());
        }
        let mut replayed = Replayed::default();
        read_back(&spec, &args, &mut replayed);
        let sum = &replayed.sections["sum"];
        assert_eq!((sum.lo, sum.hi), (0, 8));
        assert_eq!(sum.bytes, 47i64.to_le_bytes().to_vec());
        assert!(replayed.failures.is_empty(), "{:?}", replayed.failures);
        // An atomic on the wrong word (one past the variable) lands in the guard.
        if let KernelArg::BufferAt { bytes, .. } = &mut args[0] {
            bytes[GUARD + 8] = 0;
        }
        let mut replayed = Replayed::default();
        read_back(&spec, &args, &mut replayed);
        assert_eq!(
            replayed.failures,
            vec!["the kernel wrote outside the device buffer of `sum` (8 bytes): bytes [8, 9) relative to `sum`"]
        );
    }

    #[test]
    fn a_null_pointer_is_passed_as_null_and_an_outbound_one_comes_back_null() {
        // `dir` was null in the program: the kernel gets a zero pointer (8 bytes, as the
        // PTX's .u64 parameter), no buffer, and an outbound one reads back as null.
        let spec = LaunchSpec {
            kernel: "k".into(),
            grid: [1, 1, 1],
            block: [256, 1, 1],
            shared_bytes: 0,
            args: vec![
                LaunchArg::Null {
                    array: "dir".into(),
                    lo: 0,
                    hi: 64,
                    out: false,
                },
                LaunchArg::Null {
                    array: "res".into(),
                    lo: 8,
                    hi: 72,
                    out: true,
                },
            ],
        };
        let args = kernel_args(&spec).unwrap();
        assert_eq!(args, vec![KernelArg::U64(0), KernelArg::U64(0)]);
        assert_eq!(param_sizes(&spec), vec![8, 8]);
        let mut replayed = Replayed::default();
        read_back(&spec, &args, &mut replayed);
        assert!(replayed.failures.is_empty(), "{:?}", replayed.failures);
        assert!(!replayed.sections.contains_key("dir"));
        assert_eq!(replayed.sections["res"], Section::null(8, 72));
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
        let e = check_params(ptx_text, &s).unwrap_err().to_string();
        assert!(
            e.contains("k_param_3 is 20 bytes") && e.contains("`in` is 24"),
            "{e}"
        );
        s.args.pop();
        assert!(check_params(ptx_text, &s)
            .unwrap_err()
            .to_string()
            .contains("4 parameters in the PTX but the launch passes 3"));
    }
}
