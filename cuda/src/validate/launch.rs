//! The concrete launch of a kernel on a snapshot: grid, block, shared bytes and every
//! argument's bytes, computed from the plan and the values the program recorded.
//!
//! This is what a backend that launches the kernel itself (NVRTC and the CUDA driver, no
//! host code) needs; the CPU backend runs the generated host function instead and checks
//! that it launched this same grid.

use super::error::LaunchError;
use super::snapshot::{Section, Snapshot};
use crate::plan::{KernelArg, KernelPlan};

/// Fill byte of device memory outside the copied sections.
pub const POISON: u8 = 0xA5;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchArg {
    /// A device buffer: allocate `bytes.len()` bytes, copy `bytes` in, and pass the device
    /// address minus `lo` (a pointer such that the program's byte offsets `[lo, hi)` land in
    /// the buffer). After the launch, `out` buffers are read back as the array's section.
    /// `copied` is how many of the section's leading bytes the generated host function
    /// copies (all of them, except under `--debug-shrink`): the device holds only those,
    /// and only those come back.
    Buffer {
        array: String,
        lo: i64,
        bytes: Vec<u8>,
        out: bool,
        copied: usize,
    },
    /// A pointer that was null in the program (a loop that tests it, `if (p)`): the kernel
    /// gets null, as from the generated host function, and nothing is copied. An `out` one
    /// comes back as a null section `[lo, hi)`.
    Null {
        array: String,
        lo: i64,
        hi: i64,
        out: bool,
    },
    /// Passed by value: a scalar's bytes, a struct's bytes, or a `long long`.
    Value { what: String, bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u64,
    pub args: Vec<LaunchArg>,
}

fn value(snapshot: &Snapshot, key: &str) -> Result<i64, LaunchError> {
    snapshot
        .values
        .get(key)
        .copied()
        .ok_or_else(|| LaunchError::MissingValue {
            key: key.to_string(),
        })
}

/// The snapshot's section of `array` at the loop's entry.
fn section<'a>(snapshot: &'a Snapshot, array: &str) -> Result<&'a Section, LaunchError> {
    snapshot
        .entry
        .get(array)
        .ok_or_else(|| LaunchError::MissingSection {
            array: array.to_string(),
        })
}

/// The launch the plan asks for on this snapshot: the report's sections and bounds, and
/// what the generated host function copies of them (a test-only `--debug-shrink` copies
/// one element less; `--debug-swap-bounds` changes only the generated code).
pub fn launch_spec(plan: &KernelPlan, snapshot: &Snapshot) -> Result<LaunchSpec, LaunchError> {
    let (bx, by) = plan.launch_block();
    let trip_x = value(snapshot, "trip:x")?;
    let trip_y = if plan.y.is_some() {
        value(snapshot, "trip:y")?
    } else {
        1
    };
    let blocks = |trip: i64, b: u32| -> Result<u32, LaunchError> {
        u32::try_from((trip.max(0) + b as i64 - 1) / b as i64)
            .map_err(|_| LaunchError::TooManyBlocks { trip })
    };
    let shared_bytes = if plan.staged.is_empty() {
        0
    } else {
        u64::try_from(value(snapshot, "shared")?).unwrap_or(0)
    };
    let mut args = Vec::new();
    for arg in &plan.kernel_args {
        match arg {
            KernelArg::Buffer { array } => {
                let s = section(snapshot, array)?;
                let a = plan.array(array);
                let out = a.is_some_and(|a| a.role != advisor::model::Role::In);
                if s.null {
                    args.push(LaunchArg::Null {
                        array: array.clone(),
                        lo: s.lo,
                        hi: s.hi,
                        out,
                    });
                    continue;
                }
                let shrunk = a
                    .filter(|a| a.reported_hi.is_some())
                    .map_or(0, |a| a.elem_bytes as usize);
                args.push(LaunchArg::Buffer {
                    array: array.clone(),
                    lo: s.lo,
                    bytes: s.bytes.clone(),
                    out,
                    copied: s.bytes.len().saturating_sub(shrunk),
                });
            }
            KernelArg::Object { array, .. } => {
                let s = section(snapshot, array)?;
                let size = plan
                    .array(array)
                    .and_then(|a| a.object_bytes)
                    .ok_or_else(|| LaunchError::UnknownSize {
                        array: array.clone(),
                    })?;
                let mut bytes = vec![POISON; size as usize];
                let lo = usize::try_from(s.lo).map_err(|_| LaunchError::BadSection {
                    array: array.clone(),
                })?;
                let end = lo + s.bytes.len();
                if end > bytes.len() {
                    return Err(LaunchError::SectionExceedsObject {
                        array: array.clone(),
                    });
                }
                bytes[lo..end].copy_from_slice(&s.bytes);
                args.push(LaunchArg::Value {
                    what: array.clone(),
                    bytes,
                });
            }
            KernelArg::Scalar { name, .. } => {
                let bytes = snapshot
                    .scalars
                    .get(name)
                    .ok_or_else(|| LaunchError::MissingScalar { name: name.clone() })?;
                args.push(LaunchArg::Value {
                    what: name.clone(),
                    bytes: bytes.clone(),
                });
            }
            // The device copy of a reduction's variable: its value at the entry, read back.
            KernelArg::Reduction { name, .. } => {
                let s = snapshot
                    .entry
                    .get(name)
                    .ok_or_else(|| LaunchError::MissingEntryValue { name: name.clone() })?;
                args.push(LaunchArg::Buffer {
                    array: name.clone(),
                    lo: 0,
                    bytes: s.bytes.clone(),
                    out: true,
                    copied: s.bytes.len(),
                });
            }
            // An arg-min/arg-max's lock (0), winning iteration (-1) and entry values, a
            // word each, not read back.
            KernelArg::ArgState { target, partners } => {
                let mut bytes: Vec<u8> =
                    [0i64, -1i64].iter().flat_map(|w| w.to_le_bytes()).collect();
                for v in std::iter::once(target).chain(partners) {
                    let s = snapshot
                        .entry
                        .get(v)
                        .ok_or_else(|| LaunchError::MissingEntryValue { name: v.clone() })?;
                    let mut word = [0u8; 8];
                    let n = s.bytes.len().min(8);
                    word[..n].copy_from_slice(&s.bytes[..n]);
                    bytes.extend_from_slice(&word);
                }
                args.push(LaunchArg::Buffer {
                    array: format!("{target}:arg-state"),
                    lo: 0,
                    copied: bytes.len(),
                    bytes,
                    out: false,
                });
            }
            KernelArg::Derived { ident, .. } => args.push(LaunchArg::Value {
                what: ident.clone(),
                bytes: value(snapshot, ident)?.to_le_bytes().to_vec(),
            }),
            KernelArg::SectionBound { array, hi } => {
                let s = section(snapshot, array)?;
                let v = if *hi { s.hi } else { s.lo };
                args.push(LaunchArg::Value {
                    what: format!("{array}:{}", if *hi { "hi" } else { "lo" }),
                    bytes: v.to_le_bytes().to_vec(),
                });
            }
        }
    }
    Ok(LaunchSpec {
        kernel: plan.kernel_name.clone(),
        grid: [blocks(trip_x, bx)?, blocks(trip_y, by)?, 1],
        block: [bx, by, 1],
        shared_bytes,
        args,
    })
}
