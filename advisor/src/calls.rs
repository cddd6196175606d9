//! What the functions called from a loop mean on a GPU: CUDA device built-ins (the C math
//! library), allocators, host-only library calls, and functions of the program that need a
//! `__device__` port (with their own callees).

use crate::program::{FuncRef, ProgramView};
use frontend::ir::{Callee, Function, InstKind, Program};
use frontend::unit::Resolved;
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
    // glibc's NAN and INFINITY macros expand to these; CUDA device code has them.
    "__builtin_nan",
    "__builtin_nanf",
    "__builtin_inf",
    "__builtin_inff",
    "__builtin_huge_val",
    "__builtin_huge_valf",
];

/// C library functions on memory that CUDA provides in device code; their effects are the
/// byte sections of their arguments (`summaries` models them).
pub const DEVICE_MEMORY: &[&str] = &["memcpy", "memmove", "memset"];

/// Library functions device code has under another spelling: the loop may call them, and
/// the port replaces the call as said. glibc's `assert` expands to `__assert_fail`, which
/// CUDA's device `assert` replaces (a failing kernel traps); LAPACKE's complex constructors
/// are pure and cuComplex.h has their device versions.
const DEVICE_EQUIVALENTS: &[(&str, &str)] = &[
    (
        "__assert_fail",
        "`assert` works in device code (a failed assertion stops the kernel): nothing to do",
    ),
    (
        "ffs",
        "in device code write `__ffs(x)` (the same 1-based bit position)",
    ),
    (
        "ffsl",
        "in device code write `__ffsll(x)` (the same 1-based bit position)",
    ),
    (
        "ffsll",
        "in device code write `__ffsll(x)` (the same 1-based bit position)",
    ),
    (
        "lapack_make_complex_double",
        "pure; in device code write `make_cuDoubleComplex(re, im)` (cuComplex.h)",
    ),
    (
        "lapack_make_complex_float",
        "pure; in device code write `make_cuFloatComplex(re, im)` (cuComplex.h)",
    ),
];

/// How device code spells a library function it has under another name (see
/// [`DEVICE_EQUIVALENTS`]).
pub fn device_equivalent(name: &str) -> Option<&'static str> {
    DEVICE_EQUIVALENTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, how)| *how)
}

/// Whether device code can call `name` (itself or as its device equivalent).
pub fn is_device_available(name: &str) -> bool {
    DEVICE_MATH.contains(&name)
        || DEVICE_MEMORY.contains(&name)
        || device_equivalent(name).is_some()
}

/// Why well-known host functions cannot run in a kernel.
const HOST_ONLY_WHY: &[(&[&str], &str)] = &[
    (
        &[
            "printf", "fprintf", "puts", "putchar", "fputs", "fputc", "perror", "vprintf",
            "vfprintf",
        ],
        "it writes to a host stream",
    ),
    (
        &[
            "fopen", "fclose", "fread", "fwrite", "fscanf", "fgets", "fflush", "fseek", "ftell",
            "scanf", "sscanf", "remove", "rename",
        ],
        "it does file I/O on the host",
    ),
    (
        &[
            "rand", "srand", "random", "srandom", "drand48", "srand48", "rand_r",
        ],
        "it keeps hidden host state (use a per-thread generator such as cuRAND)",
    ),
    (
        &["exit", "abort", "_exit", "atexit", "system", "getenv"],
        "it acts on the host process",
    ),
    (
        &[
            "__builtin_va_start",
            "__builtin_va_end",
            "__builtin_va_arg",
            "__builtin_va_copy",
        ],
        "variadic arguments (`va_list`) have no device version",
    ),
    (
        &["qsort", "bsearch"],
        "it calls back through a function pointer on the host",
    ),
];

/// The reason a host-only function has no device version, when it is a well-known one.
pub fn host_only_detail(name: &str) -> Option<&'static str> {
    HOST_ONLY_WHY
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, why)| *why)
}

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
    if is_device_available(name) {
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
    for callee in crate::indirect::direct_callees(func) {
        if program.function(&callee).is_some() {
            transitive_callees(program, &callee, seen, depth + 1);
        } else {
            seen.insert(callee);
        }
    }
}

/// Whether a call to `name` cannot run on the device, directly or through a callee.
pub fn host_only_reason(program: &Program, name: &str) -> Option<String> {
    match classify(program, name) {
        CallKind::HostOnly => Some(host_only_text(name, None)),
        CallKind::Port { callees } => callees
            .iter()
            .find(|c| {
                program.function(c).is_none() && matches!(classify(program, c), CallKind::HostOnly)
            })
            .map(|c| format!("`{name}` calls {}", host_callee_text(c, None))),
        _ => None,
    }
}

/// What a host-only callee is, for the reason: the x86 SIMD intrinsics (`_mm_add_ps`,
/// `_mm256_load_pd`, GCC's `__builtin_ia32_*` behind them) are named as such, because the
/// fix differs: the loop's vector code must be rewritten as scalar code for the GPU.
fn host_only_kind(name: &str) -> &'static str {
    if name.starts_with("_mm") || name.starts_with("__builtin_ia32_") {
        "an x86 SIMD intrinsic"
    } else if name == "__asm__" {
        "inline assembly for the host processor"
    } else {
        "a host library function"
    }
}

/// "`f` is a host library function with no device version" with the reason when known;
/// for a function declared in the program's own files but defined in none of the analysed
/// ones, where it is declared instead (it may well be portable: it was not seen).
fn host_only_text(name: &str, declared: Option<&Resolved>) -> String {
    if let Some(at) = unanalysed(name, declared) {
        return format!(
            "`{name}` is declared at {at} but defined in none of the analysed files: its effects are unknown and it has no device version here (analyse the file that defines it)"
        );
    }
    match host_only_detail(name) {
        Some(why) => format!(
            "`{name}` is {} with no device version: {why}",
            host_only_kind(name)
        ),
        None => format!(
            "`{name}` is {} with no device version",
            host_only_kind(name)
        ),
    }
}

/// "`f`, a host library function with no device version" with the reason when known.
fn host_callee_text(name: &str, declared: Option<&Resolved>) -> String {
    if let Some(at) = unanalysed(name, declared) {
        return format!(
            "`{name}`, declared at {at} but defined in none of the analysed files (its effects are unknown)"
        );
    }
    match host_only_detail(name) {
        Some(why) => format!(
            "`{name}`, {} with no device version: {why}",
            host_only_kind(name)
        ),
        None => format!("`{name}`, {} with no device version", host_only_kind(name)),
    }
}

/// `file:line` of the declaration of a function of the program itself (not in a system
/// header, not a known library or intrinsic name) that no analysed file defines.
fn unanalysed(name: &str, declared: Option<&Resolved>) -> Option<String> {
    let at = declared?;
    let known_library = host_only_detail(name).is_some()
        || name.starts_with("_mm")
        || name.starts_with("__builtin")
        || name.starts_with("__sync_")
        || name.starts_with("__atomic_");
    (!at.in_system_header && !known_library).then(|| format!("{}:{}", at.path.display(), at.line))
}

/// [`classify`] over the whole program: a function defined in any unit of `view` (visible
/// from unit `from`) is a program function, with its callees resolved program-wide.
pub fn classify_in(view: &ProgramView, from: usize, name: &str) -> CallKind {
    if is_device_available(name) {
        return CallKind::Builtin;
    }
    if ALLOCATORS.contains(&name) {
        return CallKind::Allocator;
    }
    match view.resolve(from, name) {
        Some(f) => {
            let mut names: BTreeSet<String> = reachable(view, f)
                .iter()
                .map(|(callee, _)| callee.clone())
                .collect();
            names.remove(name);
            CallKind::Port {
                callees: names.into_iter().collect(),
            }
        }
        None => CallKind::HostOnly,
    }
}

/// [`host_only_reason`] over the whole program: the first host-only function `name` reaches,
/// each call resolved from the unit of the function that makes it.
pub fn host_only_reason_in(view: &ProgramView, from: usize, name: &str) -> Option<String> {
    match classify_in(view, from, name) {
        CallKind::HostOnly => Some(host_only_text(name, view.declaration(name).as_ref())),
        CallKind::Port { .. } => {
            let f = view.resolve(from, name)?;
            reachable(view, f)
                .iter()
                .find(|(callee, def)| def.is_none() && is_host_only_name(callee))
                .map(|(callee, _)| {
                    let declared = view.declaration(callee);
                    format!(
                        "`{name}` calls {}",
                        host_callee_text(callee, declared.as_ref())
                    )
                })
        }
        _ => None,
    }
}

fn is_host_only_name(name: &str) -> bool {
    // Compiler built-ins are lowered away or have device versions, except `va_list`'s.
    if name.starts_with("__builtin_") {
        return host_only_detail(name).is_some();
    }
    !(is_device_available(name) || ALLOCATORS.contains(&name))
}

/// Every name called directly or transitively from `start` (itself included), with its
/// definition when it is a program function; in breadth-first order, so the nearest host
/// call is named first.
fn reachable(view: &ProgramView, start: FuncRef) -> std::sync::Arc<crate::program::Reached> {
    view.reached(start, || walk_calls(view, start))
}

/// [`reachable`], walked.
fn walk_calls(view: &ProgramView, start: FuncRef) -> crate::program::Reached {
    let mut out = vec![(view.function(start).name.clone(), Some(start))];
    let mut seen_defs = BTreeSet::from([start]);
    let mut seen_names = BTreeSet::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(f) = queue.pop_front() {
        for callee in crate::indirect::resolved_callees(view, f) {
            let def = view.resolve(f.unit, &callee);
            match def {
                Some(d) => {
                    if seen_defs.insert(d) {
                        out.push((callee, Some(d)));
                        queue.push_back(d);
                    }
                }
                None => {
                    if seen_names.insert(callee.clone()) {
                        out.push((callee, None));
                    }
                }
            }
        }
    }
    out
}

/// What a function of the program does to memory outside its own frame, with its callees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEffects {
    pub reads: bool,
    pub writes: bool,
}

/// Library functions that write through their first argument.
const WRITING_LIBRARY: &[&str] = &["memset", "memcpy", "memmove", "strcpy", "strncpy", "strcat"];

/// The memory effects of calling `name`: loads and stores whose address is not one of the
/// callee's own locals (each call has its own frame, so those are private to an iteration).
/// Functions that are not in the program count as neither (their calls are judged as
/// host-only or built-in elsewhere), except the writing library functions.
pub fn memory_effects(program: &Program, name: &str) -> MemoryEffects {
    let mut seen = BTreeSet::new();
    let mut effects = MemoryEffects::default();
    effects_of(program, name, &mut seen, &mut effects, 0);
    effects
}

fn effects_of(
    program: &Program,
    name: &str,
    seen: &mut BTreeSet<String>,
    effects: &mut MemoryEffects,
    depth: u32,
) {
    if WRITING_LIBRARY.contains(&name) {
        effects.writes = true;
        effects.reads = true;
        return;
    }
    let Some(func) = program.function(name) else {
        return;
    };
    if depth > 16 || !seen.insert(name.to_string()) {
        return;
    }
    for inst in &func.insts {
        match &inst.kind {
            InstKind::Load { addr } if !is_local(func, *addr) => effects.reads = true,
            InstKind::Store { addr, .. } if !is_local(func, *addr) => effects.writes = true,
            InstKind::Call {
                callee: Callee::Direct(callee),
                ..
            } => effects_of(program, callee, seen, effects, depth + 1),
            InstKind::Call {
                callee: Callee::Indirect(_),
                ..
            } => {
                effects.reads = true;
                effects.writes = true;
            }
            _ => {}
        }
    }
}

/// Whether an address is inside one of the function's own stack slots.
pub(crate) fn is_local(func: &Function, mut addr: frontend::ir::Value) -> bool {
    for _ in 0..64 {
        match &func.inst(addr).kind {
            InstKind::SlotAddr(_) => return true,
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => addr = *base,
            InstKind::Cast(v) => addr = *v,
            _ => return false,
        }
    }
    false
}
