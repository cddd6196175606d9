//! The stable codes of every finding, in one table. A code never changes meaning; retired
//! codes are not reused.

/// A finding's code, short name, the one-line explanation used in docs, why it matters for
/// a GPU port and how to deal with it (`warpwise explain CODE`).
#[derive(Debug)]
pub struct Code {
    pub code: &'static str,
    pub name: &'static str,
    pub explanation: &'static str,
    pub gpu: &'static str,
    pub fix: &'static str,
}

/// The code `text` names (`WW101`, `ww101`), if it is one.
pub fn find(text: &str) -> Option<&'static Code> {
    ALL.iter()
        .chain([&&FRIENDLY])
        .copied()
        .find(|c| c.code.eq_ignore_ascii_case(text.trim()))
}

/// Not a finding: the note SARIF output gives a loop that can run on a GPU.
pub const FRIENDLY: Code = Code {
    code: "WW001",
    name: "GPU-friendly loop",
    explanation: "no iteration depends on another, the loop is normalizable and calls nothing host-only: it can be offloaded as it is (OpenMP target pragma or a CUDA kernel)",
    gpu: "a kernel runs every iteration at once, in no order; this loop's result does not depend on the order",
    fix: "`warpwise emit --target openmp` writes the port (or `warpwise emit` the CUDA kernel), and `warpwise validate` checks it on the program's own data",
};
pub const CARRIED_DEPENDENCE: Code = Code {
    code: "WW101",
    name: "loop-carried dependence",
    explanation: "an iteration reads or overwrites data another iteration writes",
    gpu: "GPU threads run iterations concurrently: an iteration that reads what another writes sees the old or the new value depending on timing, and two writes race; the result differs from the sequential program",
    fix: "restructure the loop (a prefix sum becomes a parallel scan, a stencil updating in place reads from a copy), or parallelize an inner or outer loop that carries no dependence; the witness in the report names two iterations and the element they share",
};
pub const REDUCTION: Code = Code {
    code: "WW102",
    name: "reduction",
    explanation: "a scalar or one element accumulates over iterations with an associative, commutative operator (sum, product, bit operations, logical and/or, min/max, arg-min); a note: the loop ports as a parallel reduction",
    gpu: "the iterations all combine into one value: in parallel each thread keeps a partial result and the partials are combined, which is correct for associative, commutative operators (floating-point sums round differently)",
    fix: "port it as a reduction: OpenMP `reduction(+: s)` (what `emit --target openmp` writes), or a CUDA block reduction with one atomic per block",
};
pub const INDIRECT_UPDATE: Code = Code {
    code: "WW103",
    name: "indirect read-modify-write",
    explanation: "an element chosen by data is read, updated and written back (a histogram); when nothing else in the loop touches the array it is a histogram reduction (a note: atomics), otherwise iterations collide when indices repeat",
    gpu: "threads that pick the same element race on its read-modify-write; atomics serialize only the colliding updates",
    fix: "when nothing else touches the array, use atomics (`#pragma omp atomic update`, `atomicAdd`) or per-block private copies merged at the end; otherwise the loop needs the data's guarantee that indices do not repeat (run `warpwise profile`)",
};
pub const GLOBAL_WRITE: Code = Code {
    code: "WW104",
    name: "global a GPU cannot hold",
    explanation: "a volatile global may change outside the program and a thread-local one exists per host thread: a device copy can follow neither (other globals are copied like arrays)",
    gpu: "a device copy of a volatile global cannot follow changes made outside the program, and a thread-local global has one value per host thread, which device threads do not have",
    fix: "read its value once before the loop into a local and pass it to the kernel; keep writes to it on the host",
};
pub const HOST_CALL: Code = Code {
    code: "WW105",
    name: "host-only call",
    explanation: "the loop calls a function with no device version: a host library function, or a function of the program that none of the analysed files defines (its effects are unknown)",
    gpu: "device code can only call device functions: host library calls (I/O, locks, the C library beyond math) and functions the analysis cannot see have no device version",
    fix: "move the call out of the loop, replace it with device code, or analyse the file that defines the function (give it on the command line or through `compile_commands.json`)",
};
pub const FUNCTION_POINTER: Code = Code {
    code: "WW106",
    name: "call through a function pointer",
    explanation: "the callee is unknown statically; device code needs it resolved",
    gpu: "device code needs every callee compiled for the device; a pointer's target is unknown statically",
    fix: "call the function directly, or compile every possible target for the device (`__device__`, `declare target`) and pass the function's index instead of its address",
};
pub const NOT_NORMALIZABLE: Code = Code {
    code: "WW107",
    name: "not normalizable",
    explanation: "the loop cannot be rewritten to run from 0 with step 1 over a fixed count",
    gpu: "a kernel launch needs the iteration count before it starts: threads are numbered 0..n-1 and map back to the loop's index",
    fix: "rewrite the loop as `for (i = lo; i < hi; i += step)` with a bound that does not change in the body (copy it into a local first), without `break`/`return` out of it",
};
pub const MAY_ALIAS: Code = Code {
    code: "WW110",
    name: "pointers may alias",
    explanation:
        "two pointer parameters may point into the same array; a profile or a `restrict` settles it",
    gpu: "if the two pointers overlap, iterations writing through one change what others read through the other, and the threads race",
    fix: "declare the parameters `restrict` when they never overlap, or run `warpwise profile` to observe whether the program's runs make them overlap",
};
pub const UNDECIDED_DEPENDENCE: Code = Code {
    code: "WW111",
    name: "dependence not decidable statically",
    explanation:
        "an index depends on data (e.g. `a[idx[i]]`) or is not affine; a profile settles it",
    gpu: "whether two iterations touch the same element depends on data (an index read from memory) or on an expression the analysis cannot bound; a wrong guess races",
    fix: "run `warpwise profile` (it records the accesses and reports observed dependences), or make the index a function of the loop variable",
};
pub const CALLEE_EFFECTS: Code = Code {
    code: "WW112",
    name: "callee effects unknown",
    explanation:
        "the loop calls a function whose side effects are not fully known (mutual recursion, a recursion writing through a pointer it changes, a function pointer whose targets the program does not show, a write through a pointer it reads from memory); a profile settles it",
    gpu: "the callee's accesses take part in the loop's dependences; when some are unknown (mutual recursion, a function pointer, a write through a pointer it reads from memory), so is the loop",
    fix: "port the callee and check its accesses, or run `warpwise profile` (it tracks accesses inside callees)",
};
pub const ALLOCATION: Code = Code {
    code: "WW120",
    name: "allocation in the loop",
    explanation: "`malloc`/`free` exist on the device but allocate from a small device heap",
    gpu: "`malloc`/`free` exist in device code but allocate from a small device heap (8 MB by default in CUDA), slowly and per thread",
    fix: "allocate the buffers once before the kernel (one slice per thread, or shared memory) and pass them in",
};

pub const ALL: &[&Code] = &[
    &CARRIED_DEPENDENCE,
    &REDUCTION,
    &INDIRECT_UPDATE,
    &GLOBAL_WRITE,
    &HOST_CALL,
    &FUNCTION_POINTER,
    &NOT_NORMALIZABLE,
    &MAY_ALIAS,
    &UNDECIDED_DEPENDENCE,
    &CALLEE_EFFECTS,
    &ALLOCATION,
];
