//! The stable codes of every finding, in one table. A code never changes meaning; retired
//! codes are not reused.

/// A finding's code, short name and the one-line explanation used in docs.
#[derive(Debug)]
pub struct Code {
    pub code: &'static str,
    pub name: &'static str,
    pub explanation: &'static str,
}

/// Not a finding: the note SARIF output gives a loop that can run on a GPU.
pub const FRIENDLY: Code = Code {
    code: "WW001",
    name: "GPU-friendly loop",
    explanation: "no iteration depends on another, the loop is normalizable and calls nothing host-only: it can be offloaded as it is (OpenMP target pragma or a CUDA kernel)",
};
pub const CARRIED_DEPENDENCE: Code = Code {
    code: "WW101",
    name: "loop-carried dependence",
    explanation: "an iteration reads or overwrites data another iteration writes",
};
pub const REDUCTION: Code = Code {
    code: "WW102",
    name: "reduction",
    explanation: "a scalar or one element accumulates over iterations with an associative, commutative operator (sum, product, bit operations, logical and/or, min/max, arg-min); a note: the loop ports as a parallel reduction",
};
pub const INDIRECT_UPDATE: Code = Code {
    code: "WW103",
    name: "indirect read-modify-write",
    explanation: "an element chosen by data is read, updated and written back (a histogram); when nothing else in the loop touches the array it is a histogram reduction (a note: atomics), otherwise iterations collide when indices repeat",
};
pub const GLOBAL_WRITE: Code = Code {
    code: "WW104",
    name: "global a GPU cannot hold",
    explanation: "a volatile global may change outside the program and a thread-local one exists per host thread: a device copy can follow neither (other globals are copied like arrays)",
};
pub const HOST_CALL: Code = Code {
    code: "WW105",
    name: "host-only call",
    explanation: "the loop calls a function with no device version: a host library function, or a function of the program that none of the analysed files defines (its effects are unknown)",
};
pub const FUNCTION_POINTER: Code = Code {
    code: "WW106",
    name: "call through a function pointer",
    explanation: "the callee is unknown statically; device code needs it resolved",
};
pub const NOT_NORMALIZABLE: Code = Code {
    code: "WW107",
    name: "not normalizable",
    explanation: "the loop cannot be rewritten to run from 0 with step 1 over a fixed count",
};
pub const MAY_ALIAS: Code = Code {
    code: "WW110",
    name: "pointers may alias",
    explanation:
        "two pointer parameters may point into the same array; a profile or a `restrict` settles it",
};
pub const UNDECIDED_DEPENDENCE: Code = Code {
    code: "WW111",
    name: "dependence not decidable statically",
    explanation:
        "an index depends on data (e.g. `a[idx[i]]`) or is not affine; a profile settles it",
};
pub const CALLEE_EFFECTS: Code = Code {
    code: "WW112",
    name: "callee effects unknown",
    explanation:
        "the loop calls a function whose side effects are not fully known (mutual recursion, a recursion writing through a pointer it changes, a function pointer, a write through a pointer it reads from memory); a profile settles it",
};
pub const ALLOCATION: Code = Code {
    code: "WW120",
    name: "allocation in the loop",
    explanation: "`malloc`/`free` exist on the device but allocate from a small device heap",
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
