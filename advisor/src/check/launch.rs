//! The launches of kernels in host code, and the block and grid sizes they settle:
//! `k<<<grid, block>>>(...)` reaches the IR as a call of
//! [`frontend::cuda_source::LAUNCH_FUNCTION`] (kernel, grid, block, ...), and a size is
//! known when it is an integer constant expression, or a `dim3` built from such
//! expressions (`dim3 b(16, 16)` once, or `dim3(16, 16)` in place).

use frontend::cuda_source::{DIM3_FUNCTION, LAUNCH_FUNCTION};
use frontend::ir::{BinOp, Callee, Constant, Function, InstKind, Program, Value};
use frontend::unit::Unit;

/// A size per axis, `None` where the launch does not make it a constant.
pub type Dims = [Option<u64>; 3];

/// One launch of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub kernel: String,
    pub grid: Dims,
    pub block: Dims,
    /// The kernel's arguments, each where it is an integer constant expression.
    pub args: Vec<Option<u64>>,
    /// `file:line:col` of the launch.
    pub at: String,
    /// The same place, typed: where the kernel is named in the user's file.
    pub place: Option<frontend::unit::Resolved>,
}

/// Every launch in the host functions of `unit`, in order.
pub fn launches(unit: &Unit) -> Vec<Launch> {
    let program = &unit.lowered.program;
    let mut out = Vec::new();
    for func in &program.functions {
        for b in func.blocks() {
            let insts = &func.block(b).insts;
            for (i, &v) in insts.iter().enumerate() {
                let InstKind::Call {
                    callee: Callee::Direct(name),
                    args,
                } = &func.inst(v).kind
                else {
                    continue;
                };
                if name != LAUNCH_FUNCTION || args.len() < 3 {
                    continue;
                }
                let Some(kernel) = function_named(func, args[0]) else {
                    continue;
                };
                let place = unit.resolve(func.inst(v).origin.span);
                let at = place.as_ref().map(|r| r.to_string()).unwrap_or_default();
                let args_given = kernel_call(func, &insts[i + 1..], &kernel)
                    .iter()
                    .map(|&a| {
                        let a = strip_casts(func, a);
                        program
                            .types
                            .is_integer(func.inst(a).ty)
                            .then(|| constant(func, a, 0))
                            .flatten()
                    })
                    .collect();
                out.push(Launch {
                    grid: dims(program, func, args[1]),
                    block: dims(program, func, args[2]),
                    kernel,
                    args: args_given,
                    at,
                    place,
                });
            }
        }
    }
    out
}

/// The arguments of the kernel's own call, which the launch's rewrite puts right after the
/// configuration (`(__warpwise_launch(k, g, b), k(args))`): the first call of `kernel`
/// among the instructions that follow in the block.
fn kernel_call(func: &Function, after: &[Value], kernel: &str) -> Vec<Value> {
    after
        .iter()
        .find_map(|&v| match &func.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                args,
            } if name == kernel => Some(args.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The function whose address `v` is (through casts).
fn function_named(func: &Function, v: Value) -> Option<String> {
    match &func.inst(strip_casts(func, v)).kind {
        InstKind::FuncAddr(name) => Some(name.clone()),
        _ => None,
    }
}

fn strip_casts(func: &Function, mut v: Value) -> Value {
    for _ in 0..64 {
        match func.inst(v).kind {
            InstKind::Cast(inner) => v = inner,
            _ => break,
        }
    }
    v
}

/// The sizes a launch argument gives: an integer is `(n, 1, 1)`; a `dim3` is read from the
/// call that built it, in place or stored once in a local.
fn dims(program: &Program, func: &Function, v: Value) -> Dims {
    let v = strip_casts(func, v);
    if program.types.is_integer(func.inst(v).ty) {
        return [constant(func, v, 0), Some(1), Some(1)];
    }
    let built = match &func.inst(v).kind {
        InstKind::Load { addr } => stored_once(func, *addr),
        _ => Some(v),
    };
    let Some(built) = built else {
        return [None; 3];
    };
    match &func.inst(built).kind {
        InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } if name == DIM3_FUNCTION && args.len() >= 3 => [
            constant(func, args[0], 0),
            constant(func, args[1], 0),
            constant(func, args[2], 0),
        ],
        _ => [None; 3],
    }
}

/// The value stored into the local at `addr` when the function stores to it exactly once,
/// whole, and never lets its address go anywhere but that store and loads (a `dim3`
/// declared with its sizes).
fn stored_once(func: &Function, addr: Value) -> Option<Value> {
    let InstKind::SlotAddr(slot) = func.inst(addr).kind else {
        return None;
    };
    let mut stored = None;
    for v in func.values() {
        let kind = &func.inst(v).kind;
        for op in kind.operands() {
            if !matches!(func.inst(op).kind, InstKind::SlotAddr(s) if s == slot) {
                continue;
            }
            match kind {
                InstKind::Load { .. } => {}
                InstKind::Store { addr, value } if *addr == op => {
                    if stored.replace(*value).is_some() {
                        return None;
                    }
                }
                // Stored elsewhere, a field written, passed to a call: not one value.
                _ => return None,
            }
        }
    }
    stored
}

/// The value of an integer constant expression (folded through casts and arithmetic);
/// `None` for anything that is not, or that is negative or overflows.
fn constant(func: &Function, v: Value, depth: u32) -> Option<u64> {
    if depth > 32 {
        return None;
    }
    let value = match &func.inst(v).kind {
        InstKind::Const(Constant::Int(c)) => *c,
        InstKind::Cast(inner) => return constant(func, *inner, depth + 1),
        InstKind::Binary(op, a, b) => {
            let a = i128::from(constant(func, *a, depth + 1)?);
            let b = i128::from(constant(func, *b, depth + 1)?);
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                BinOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    u64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use frontend::preprocess::TranslationUnitInput;
    use frontend::unit::load_unit;

    #[test]
    fn sizes_settled_by_launches() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("l.cu");
        std::fs::write(
            &file,
            "#define B 16\n\
             __global__ void k(float *a) { a[threadIdx.x] = 0; }\n\
             void h(float *a, int n) {\n\
               dim3 block(B, B), grid(n / B, 2);\n\
               int t = 4 * 64;\n\
               k<<<grid, block>>>(a);\n\
               k<<<n / t, t>>>(a);\n\
               k<<<dim3(8, 4), dim3(32 * 2)>>>(a);\n\
               dim3 later(1);\n\
               later.x = n;\n\
               k<<<1, later>>>(a);\n\
             }\n",
        )
        .unwrap();
        let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
        let found: Vec<(Dims, Dims)> = launches(&unit)
            .into_iter()
            .map(|l| (l.grid, l.block))
            .collect();
        assert_eq!(
            found,
            [
                ([None, Some(2), Some(1)], [Some(16), Some(16), Some(1)]),
                ([None, Some(1), Some(1)], [Some(256), Some(1), Some(1)]),
                ([Some(8), Some(4), Some(1)], [Some(64), Some(1), Some(1)]),
                ([Some(1), Some(1), Some(1)], [None, None, None]),
            ]
        );
        assert!(launches(&unit).iter().all(|l| l.kernel == "k"));
        assert!(
            launches(&unit)[0].at.ends_with("l.cu:6:1"),
            "{:?}",
            launches(&unit)[0].at
        );
    }
}
