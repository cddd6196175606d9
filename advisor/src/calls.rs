//! What the functions called from a loop mean on a GPU: CUDA device built-ins (the C math
//! library), allocators, host-only library calls, and functions of the program that need a
//! `__device__` port (with their own callees).

use frontend::ir::{Callee, Function, InstKind, Program};
use std::collections::BTreeSet;

/// C math functions that CUDA provides as device functions with the same name.
const DEVICE_MATH: &[&str] = &[
    "sqrt",
    "sqrtf",
    "cbrt",
    "cbrtf",
    "rsqrt",
    "rsqrtf",
    "hypot",
    "hypotf",
    "exp",
    "expf",
    "exp2",
    "exp2f",
    "expm1",
    "expm1f",
    "exp10",
    "exp10f",
    "log",
    "logf",
    "log2",
    "log2f",
    "log10",
    "log10f",
    "log1p",
    "log1pf",
    "pow",
    "powf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanf",
    "asin",
    "asinf",
    "acos",
    "acosf",
    "atan",
    "atanf",
    "atan2",
    "atan2f",
    "sinh",
    "sinhf",
    "cosh",
    "coshf",
    "tanh",
    "tanhf",
    "asinh",
    "asinhf",
    "acosh",
    "acoshf",
    "atanh",
    "atanhf",
    "fabs",
    "fabsf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "round",
    "roundf",
    "trunc",
    "truncf",
    "rint",
    "rintf",
    "lrint",
    "lrintf",
    "lround",
    "lroundf",
    "nearbyint",
    "nearbyintf",
    "fmod",
    "fmodf",
    "remainder",
    "remainderf",
    "fmin",
    "fminf",
    "fmax",
    "fmaxf",
    "fdim",
    "fdimf",
    "fma",
    "fmaf",
    "copysign",
    "copysignf",
    "erf",
    "erff",
    "erfc",
    "erfcf",
    "tgamma",
    "tgammaf",
    "lgamma",
    "lgammaf",
    "ldexp",
    "ldexpf",
    "frexp",
    "frexpf",
    "modf",
    "modff",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "abs",
    "labs",
    "llabs",
    "min",
    "max",
    "__builtin_expect",
    "__builtin_fabs",
    "__builtin_sqrt",
    "__builtin_unreachable",
];

/// Functions CUDA kernels may call with device-side semantics that differ from the host.
const ALLOCATORS: &[&str] = &["malloc", "free", "calloc", "realloc"];

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallKind {
    /// A CUDA device function exists.
    Builtin,
    Allocator,
    /// Defined in the program: needs a `__device__` port; the names it calls in turn.
    Port {
        callees: Vec<String>,
    },
    /// A library call with no device version (I/O, system calls).
    HostOnly,
    /// Through a function pointer.
    Indirect,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallSite {
    pub name: String,
    pub kind: CallKind,
}

/// Classifies a call by name.
pub fn classify(program: &Program, name: &str) -> CallKind {
    if DEVICE_MATH.contains(&name) {
        return CallKind::Builtin;
    }
    if ALLOCATORS.contains(&name) {
        return CallKind::Allocator;
    }
    if program.function(name).is_some() {
        let mut callees = BTreeSet::new();
        transitive_callees(program, name, &mut callees, 0);
        callees.remove(name);
        return CallKind::Port {
            callees: callees.into_iter().collect(),
        };
    }
    CallKind::HostOnly
}

fn transitive_callees(program: &Program, name: &str, seen: &mut BTreeSet<String>, depth: u32) {
    if depth > 16 || !seen.insert(name.to_string()) {
        return;
    }
    let Some(func) = program.function(name) else {
        return;
    };
    for callee in direct_callees(func) {
        if program.function(&callee).is_some() {
            transitive_callees(program, &callee, seen, depth + 1);
        } else {
            seen.insert(callee);
        }
    }
}

/// Names called directly by a function.
pub fn direct_callees(func: &Function) -> BTreeSet<String> {
    func.insts
        .iter()
        .filter_map(|i| match &i.kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Whether a call to `name` cannot run on the device, directly or through a callee.
pub fn host_only_reason(program: &Program, name: &str) -> Option<String> {
    match classify(program, name) {
        CallKind::HostOnly => Some(format!(
            "`{name}` is a host library function with no device version"
        )),
        CallKind::Port { callees } => callees
            .iter()
            .find(|c| {
                program.function(c).is_none() && matches!(classify(program, c), CallKind::HostOnly)
            })
            .map(|c| {
                format!("`{name}` calls `{c}`, a host library function with no device version")
            }),
        _ => None,
    }
}
