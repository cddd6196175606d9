//! `warpwise check`: the memory behaviour of existing CUDA kernels, by the engine that
//! advises on sequential loops. Per kernel, each global-memory load, store and atomic gets
//! its requests (128-byte segments) and sectors (32 bytes) per warp as expressions of the
//! block's shape, the kernel's parameters and the layout, and each branch whether it splits
//! warps.
//!
//! The block's shape comes from `--set blockDim.x=16` or from the launches in the files
//! checked (`k<<<grid, dim3(16, 16)>>>`, when every launch of the kernel agrees); where it
//! stays unknown, `blockDim.x` is taken to be a multiple of 32 and the report says so.
//! Modules: `launch` (host launches), `variance` (what differs between a warp's threads),
//! `warp` (the count for one offset), `lanes` (a warp's threads one by one), `banks`
//! (shared-memory bank conflicts), `mask` (the lanes a guard lets run an access), `choice`
//! (what a branch's sides do, for its fix), `kernel` (one kernel, with `kernel::gather` for
//! gathers by per-lane data and `kernel::aggregate` for structures copied whole), `model`
//! (the report),
//! `dynamic` (what a run touched, against the static count), `text`.

mod banks;
mod choice;
pub mod dynamic;
mod kernel;
mod lanes;
pub mod launch;
mod mask;
pub mod model;
pub(crate) mod present;
pub mod text;
mod variance;
mod warp;

use frontend::ir::inline::{inline_calls, Inlined, Limits};
use frontend::ir::ExecutionSpace;
use frontend::unit::Unit;
use launch::{Dims, Launch};
use model::{CheckReport, Dim, KernelReport, Refused, Shape, SCHEMA};
use std::collections::BTreeMap;

pub use kernel::ideal_sectors;

/// What `check` is asked.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--set NAME=VALUE`: `blockDim.x`, `gridDim.y`, or a kernel parameter; these win over
    /// the launches.
    pub set: BTreeMap<String, i64>,
}

const AXES: [&str; 3] = ["x", "y", "z"];
const BLOCK_DIM: [&str; 3] = ["blockDim.x", "blockDim.y", "blockDim.z"];

/// Checks every kernel of `units` (analysed together: a kernel may be launched from
/// another file).
pub fn check_units(units: &[Unit], options: &Options) -> CheckReport {
    let launches: Vec<Launch> = units.iter().flat_map(launch::launches).collect();
    let mut kernels = Vec::new();
    let mut refused = Vec::new();
    for unit in units {
        for error in &unit.lowered.errors {
            refused.push(Refused {
                at: unit
                    .resolve(error.span)
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| unit.path.display().to_string()),
                function: error.function.clone(),
                reason: error.message.clone(),
            });
        }
        for func in &unit.lowered.program.functions {
            if func.execution != ExecutionSpace::Kernel {
                continue;
            }
            // The device functions a kernel calls are read in place: their accesses are
            // the kernel's, with the arguments the kernel passes.
            let inlined = inline_calls(&unit.lowered.program, func, Limits::default(), |f| {
                matches!(
                    f.execution,
                    ExecutionSpace::Device | ExecutionSpace::HostDevice
                )
            });
            kernels.push(check_kernel(unit, &inlined, &launches, options));
        }
    }
    CheckReport {
        schema: SCHEMA.to_string(),
        kernels,
        refused,
        run: None,
    }
}

fn check_kernel(
    unit: &Unit,
    calls: &Inlined,
    launches: &[Launch],
    options: &Options,
) -> KernelReport {
    let func = &calls.func;
    let own: Vec<&Launch> = launches.iter().filter(|l| l.kernel == func.name).collect();
    let mut assumptions = Vec::new();
    let mut from = Vec::new();
    let (mut block, block_notes) = settled(own.iter().map(|l| &l.block), "blockDim");
    let (mut grid, grid_notes) = settled(own.iter().map(|l| &l.grid), "gridDim");
    assumptions.extend(block_notes);
    assumptions.extend(grid_notes);
    if own.is_empty() {
        assumptions.push(format!(
            "no launch of `{}` in the files checked: its sizes are unknown",
            func.name
        ));
    } else if block.iter().chain(&grid).any(Option::is_some) {
        from.extend(own.iter().map(|l| format!("the launch at {}", l.at)));
    }
    for (axis, name) in AXES.iter().enumerate() {
        for (dims, prefix) in [(&mut block, "blockDim"), (&mut grid, "gridDim")] {
            let key = format!("{prefix}.{name}");
            if let Some(&v) = options.set.get(&key) {
                dims[axis] = u64::try_from(v).ok().filter(|v| *v > 0);
                from.push(format!("--set {key}={v}"));
            }
        }
    }
    let mut known: BTreeMap<String, i64> = BTreeMap::new();
    for (axis, name) in AXES.iter().enumerate() {
        for (dims, prefix) in [(&block, "blockDim"), (&grid, "gridDim")] {
            if let Some(v) = dims[axis].and_then(|v| i64::try_from(v).ok()) {
                known.insert(format!("{prefix}.{name}"), v);
            }
        }
    }
    assumptions.extend(settle_parameters(func, &own, options, &mut known));
    for (name, v) in &options.set {
        known.insert(name.clone(), *v);
    }
    match block {
        [None, ..] => assumptions.push(
            "blockDim.x is a multiple of 32: a warp is 32 consecutive threadIdx.x of one row \
             (`--set blockDim.x=N`, or a launch with a constant size, counts otherwise)"
                .into(),
        ),
        [Some(x), None, _] if x % 32 != 0 => assumptions.push(
            "a warp does not cross a z-slice of the block (blockDim.z is 1, or \
             blockDim.x*blockDim.y is a multiple of 32)"
                .into(),
        ),
        [Some(x), Some(y), z] if (x * y) % 32 != 0 && z != Some(1) => assumptions
            .push("a warp does not cross a z-slice of the block (blockDim.z is 1)".into()),
        _ => {}
    }
    assumptions.push("arrays start on a 128-byte boundary, as cudaMalloc's do".into());
    let checked = kernel::check(&kernel::Setting {
        unit,
        func,
        block,
        known: &known,
        calls,
    });
    let dim = |axis: usize| match block[axis] {
        Some(v) => Dim::Known(v),
        None => Dim::Unknown(BLOCK_DIM[axis]),
    };
    let mut report = KernelReport {
        kernel: func.name.clone(),
        at: unit
            .resolve(func.name_span)
            .map(|r| r.to_string())
            .unwrap_or_default(),
        block: Shape {
            x: dim(0),
            y: dim(1),
            z: dim(2),
            from,
        },
        assumptions,
        accesses: checked.accesses,
        parameters: func
            .params
            .iter()
            .map(|p| p.name.clone().unwrap_or_default())
            .collect(),
        shared_accesses: checked.shared,
        branches: checked.branches,
        not_analysed: checked.not_analysed,
    };
    present::present(&mut report);
    report
}

/// The kernel's integer parameters every launch passes the same constant (a size, a value
/// template's argument), into `known` unless `--set` gives them; a note for each.
fn settle_parameters(
    func: &frontend::ir::Function,
    own: &[&Launch],
    options: &Options,
    known: &mut BTreeMap<String, i64>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if own.is_empty() {
        return notes;
    }
    for (index, param) in func.params.iter().enumerate() {
        let Some(name) = &param.name else { continue };
        if options.set.contains_key(name) {
            continue;
        }
        let mut values = own.iter().map(|l| l.args.get(index).copied().flatten());
        let Some(Some(first)) = values.next() else {
            continue;
        };
        if values.all(|v| v == Some(first)) {
            let Ok(value) = i64::try_from(first) else {
                continue;
            };
            known.insert(name.clone(), value);
            notes.push(format!(
                "every launch passes `{name}` = {value}: counted with that value"
            ));
        }
    }
    notes
}

/// The sizes every launch agrees on, axis by axis, and a note for each axis they disagree
/// on.
fn settled<'l>(all: impl Iterator<Item = &'l Dims>, what: &str) -> (Dims, Vec<String>) {
    let all: Vec<&Dims> = all.collect();
    let mut out = [None; 3];
    let mut notes = Vec::new();
    for axis in 0..3 {
        let mut values: Vec<Option<u64>> = all.iter().map(|d| d[axis]).collect();
        values.sort_unstable();
        values.dedup();
        match values.as_slice() {
            [one] => out[axis] = *one,
            [] => {}
            several => {
                let listed: Vec<String> = several
                    .iter()
                    .map(|v| v.map_or("a size not known statically".into(), |v| v.to_string()))
                    .collect();
                notes.push(format!(
                    "the launches give {what}.{} as {}: it is left symbolic",
                    AXES[axis],
                    listed.join(", ")
                ));
            }
        }
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use frontend::preprocess::TranslationUnitInput;

    /// A symbolic count leaves the analysis with its expression beside its text, in the
    /// names the text shows: what `--dynamic` evaluates per launch.
    #[test]
    fn a_symbolic_count_carries_its_expression_in_the_shown_names() {
        let dir = tempfile::Builder::new()
            .prefix("warpwise-advisor-test-")
            .tempdir()
            .unwrap();
        let file = dir.path().join("strided.cu");
        std::fs::write(
            &file,
            "__global__ void strided(const float *in, float *out, int s)\n{\n    \
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n    out[i] = in[i * s];\n}\n",
        )
        .unwrap();
        let unit = frontend::unit::load_unit(&TranslationUnitInput::new(file)).expect("loads");
        let report = check_units(&[unit], &Options::default());
        let access = report.kernels[0]
            .accesses
            .iter()
            .find(|a| a.access == "in[i * s]")
            .expect("the strided load");
        for count in [&access.requests, &access.sectors] {
            assert_eq!(count.value, None, "symbolic: {count:?}");
            let e = count
                .exprs
                .max
                .as_ref()
                .expect("an expression beside the text");
            let names: Vec<String> = e.vars().iter().map(|v| v.name().to_string()).collect();
            assert_eq!(names, ["s"], "{count:?}");
        }
    }
}
