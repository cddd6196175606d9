//! What CUDA C adds to the IR: where a function runs (`__global__`, `__device__`,
//! `__host__`), which memory a variable lives in (`__shared__`, `__constant__`, `__device__`),
//! and the built-in thread coordinates (`threadIdx.x`, `blockDim.y`, ...), recognised as the
//! loads of warpwise's declarations of them (`fake_headers/cuda/cuda_runtime.h`).

use super::{Function, InstKind, Program, Value};

/// Where a function runs. Plain C functions are `Host`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExecutionSpace {
    #[default]
    Host,
    /// `__global__`: a kernel, launched from the host with `<<<grid, block>>>`.
    Kernel,
    /// `__device__`: called from kernels and other device functions.
    Device,
    /// `__host__ __device__`: compiled for both.
    HostDevice,
}

impl ExecutionSpace {
    /// Whether the function runs on the GPU (a kernel or a device function).
    pub fn on_device(self) -> bool {
        !matches!(self, ExecutionSpace::Host)
    }
}

/// The variables CUDA predefines in device code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadBuiltin {
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    WarpSize,
}

impl ThreadBuiltin {
    /// The built-in CUDA declares under `name`.
    pub fn named(name: &str) -> Option<ThreadBuiltin> {
        Some(match name {
            "threadIdx" => ThreadBuiltin::ThreadIdx,
            "blockIdx" => ThreadBuiltin::BlockIdx,
            "blockDim" => ThreadBuiltin::BlockDim,
            "gridDim" => ThreadBuiltin::GridDim,
            "warpSize" => ThreadBuiltin::WarpSize,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ThreadBuiltin::ThreadIdx => "threadIdx",
            ThreadBuiltin::BlockIdx => "blockIdx",
            ThreadBuiltin::BlockDim => "blockDim",
            ThreadBuiltin::GridDim => "gridDim",
            ThreadBuiltin::WarpSize => "warpSize",
        }
    }
}

/// One coordinate of a built-in: `threadIdx.x` is `(ThreadIdx, Some(Axis::X))`, `warpSize`
/// has no axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }

    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];
}

/// CUDA's memory space of a variable declared with a qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CudaVariable {
    /// `__device__`: global memory, one object for the whole device.
    Device,
    /// `__shared__`: one object per thread block.
    Shared,
    /// `__constant__`: read-only constant memory.
    Constant,
    /// A built-in coordinate (only warpwise's header declares these).
    Builtin(ThreadBuiltin),
}

/// A built-in coordinate a value reads: `Some((BlockDim, Some(Axis::Y)))` for a load of
/// `blockDim.y`. Only loads of warpwise's own built-in declarations count, so a user's
/// variable that happens to be named `threadIdx` is never taken for one.
pub fn thread_coordinate(
    program: &Program,
    func: &Function,
    v: Value,
) -> Option<(ThreadBuiltin, Option<Axis>)> {
    let InstKind::Load { addr } = func.inst(v).kind else {
        return None;
    };
    let (global, offset) = match &func.inst(addr).kind {
        InstKind::GlobalAddr(g) => (*g, 0),
        InstKind::FieldAddr { base, offset, .. } => match func.inst(*base).kind {
            InstKind::GlobalAddr(g) => (g, *offset),
            _ => return None,
        },
        _ => return None,
    };
    let Some(CudaVariable::Builtin(builtin)) = program.globals.get(global.index())?.cuda else {
        return None;
    };
    if builtin == ThreadBuiltin::WarpSize {
        return (offset == 0).then_some((builtin, None));
    }
    // `uint3` and `dim3` are three `unsigned int`s.
    let axis = match offset {
        0 => Axis::X,
        4 => Axis::Y,
        8 => Axis::Z,
        _ => return None,
    };
    Some((builtin, Some(axis)))
}
