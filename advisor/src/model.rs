//! The kernel report: what `warpwise analyze` says about each loop, as serializable data.
//! The schema is `warpwise/kernel-report/v1`, documented in `docs/report-format.md`.
//! Every expression is a C expression over the function's variables (integer semantics,
//! `min(a, b)`/`max(a, b)` allowed) that the symbolic engine parses back.

pub use crate::quantity::{Forms, Quantity};
use frontend::loop_ref::LoopRef;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "warpwise/kernel-report/v1";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub loops: Vec<LoopReport>,
    /// Files or functions that could not be analysed, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    // Declaration order is severity order: combining findings keeps the worst.
    Friendly,
    NeedsProfile,
    NotFriendly,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Friendly => "friendly",
            Verdict::NotFriendly => "not-friendly",
            Verdict::NeedsProfile => "needs-profile",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Induction {
    pub var: String,
    /// Normalized: the variable runs from `lower` by `step` while below `upper` (exclusive,
    /// in the direction of the step).
    pub lower: Quantity,
    pub upper: Quantity,
    pub step: Quantity,
    /// Number of iterations per entry of the loop.
    pub trip_count: Quantity,
    /// The variable is read after the loop (so it is declared before it): a port must leave
    /// it the value the sequential loop does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_value: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub code: crate::code::Code,
    pub message: String,
    pub lines: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// For a dependence (WW101) or an indirect update (WW103): two concrete iterations and
    /// the element both touch, checked by evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
    /// For a finding that stands for several of one cause (see `findings::group`): each
    /// of them, in the order found; empty for a single finding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<Reason>,
    /// For a finding about two accesses, their lines, first then second: where the message's
    /// names are read (a primed name at the second). The presentation uses it and clears
    /// it; reports never hold it.
    #[serde(skip)]
    pub read_at: Option<(u32, u32)>,
}

/// Two iterations of a loop that touch the same element, under stated values of the
/// program's variables: the evidence behind a dependence claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// Values of the variables the accesses and the loop bounds depend on (parameters,
    /// loop-invariant loads), chosen to meet the report's assumptions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub values: std::collections::BTreeMap<String, i64>,
    /// The access in the earlier iteration.
    pub first: WitnessAccess,
    /// The access in the later iteration.
    pub second: WitnessAccess,
    /// A condition on data the witness needs (an indirect update: `key[0] == key[1]`);
    /// absent when the values and iterations alone make the two accesses meet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// One side of a [`Witness`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessAccess {
    /// Values of the induction variables of the loops around the access (the loop itself,
    /// the loops around it and the loops inside it that contain the access).
    pub iteration: std::collections::BTreeMap<String, i64>,
    /// The access as written in the source.
    pub access: String,
    pub line: u32,
    /// `read` or `write`.
    pub kind: String,
    /// The element touched: `a[4]`, `C[0][1]`, `bytes [16, 20) of a`, or the scalar's name.
    pub element: String,
    /// The bytes touched, `[byte_offset, byte_offset + bytes)` from the array's base pointer
    /// (absent for scalars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    In,
    Out,
    Inout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    Scalar,
    Array,
    Struct,
    /// Every object a callee reaches by following pointers it loads (a list, a tree, an
    /// array of pointers): not one array, so no section and no C type; a port copies the
    /// structure deep or shares the memory with the device.
    Reached,
}

/// A half-open byte interval `[lo, hi)` relative to a parameter's base pointer.
#[derive(Clone, Debug, Eq, Serialize, Deserialize)]
pub struct Bytes {
    pub lo: Quantity,
    pub hi: Quantity,
    /// `hi - lo`, simplified: what `cudaMemcpy` copies.
    pub size: Quantity,
    /// The variables `lo` and `hi` read, as the loop names them (`n`, `in.n_gridpoints`):
    /// the profiler records those it can read at the loop's entry, so that `instantiate`
    /// can evaluate the section. Derived from the expressions, so not written: a report
    /// read back from a file has it empty.
    #[serde(skip)]
    pub reads: Vec<String>,
}

/// Two sections are equal when their bounds are: `reads` is derived from them, and a
/// report read back from a file has it empty.
impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        (&self.lo, &self.hi, &self.size) == (&other.lo, &other.hi, &other.size)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
    pub role: Role,
    pub kind: ParamKind,
    /// The C type of the variable; absent where no C type can be written (memory a callee
    /// reaches through pointers it loads, whose objects the program does not show), with
    /// the reason in `notes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elem_bytes: Option<u64>,
    /// The accessed section; absent for scalars and when it cannot be computed statically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Why `bytes` is absent or what it assumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The section is the whole object the pointer points to, sized by its allocation:
    /// present when no subscript bounds the accesses (a gather through data-dependent
    /// indices) but every store of the pointer, program-wide, is an allocation whose size
    /// the loop can name. `bytes` is then `[0, size)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_object: Option<WholeObject>,
    /// Where the object lives when it is not reached through the function's parameters or
    /// locals: `global` for a file-scope or `static` variable (the port copies it to the
    /// device like an array argument). Absent for parameters and locals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
    /// The memory is the variable `name` itself, a scalar or a structure (a global, or a
    /// local whose address the program takes), not an array nor what a pointer points to:
    /// its host address is `&name`. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_address: bool,
    /// For a scalar holding a pointer: the array parameter whose memory it points to, by
    /// that parameter's name (`vol` holds `m->vol` after `double *vol = m->vol;`). A kernel
    /// has that array's device copy in its place. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<String>,
}

impl Parameter {
    /// The C type for messages: the type, or words saying it is not known.
    pub fn type_text(&self) -> &str {
        self.c_type.as_deref().unwrap_or("type not known")
    }
}

/// A section that is a whole allocated object (see [`Parameter::whole_object`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WholeObject {
    /// Each place the program allocates it, `file:line` (`GridInit.c:36`); for a parameter
    /// every call passes a fixed-size array, each call with what it passes.
    pub allocated_at: Vec<String>,
    /// Its size in bytes, an expression over names visible at the loop.
    pub size: Quantity,
    /// The variables `size` reads (`SD.length_concs`): integers at the loop's entry, which
    /// the profiler records so that `instantiate` can evaluate the size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
}

/// Where a memory object lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    /// A file-scope or `static` variable.
    Global,
}

/// What a privatized variable is, for the port's declaration of its per-thread copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrivateKind {
    Scalar,
    Struct,
    Array,
    Pointer,
}

/// A variable each iteration may have its own copy of (OpenMP `private` / `lastprivate`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Private {
    pub name: String,
    pub kind: PrivateKind,
    /// Why no value flows through it from one iteration to another.
    pub why: String,
    /// Its value is read after the loop: the port must copy out the last iteration's value
    /// (OpenMP `lastprivate`).
    pub last_value: bool,
    /// Some iterations may read its value from before the loop (it is assigned only under a
    /// test whose outcome is the same in every iteration, and when the test fails no
    /// iteration assigns it): each copy must start from that value (OpenMP `firstprivate`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub initial_value: bool,
    /// `global` for a file-scope or `static` variable; absent for locals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
}

/// A second counter of a loop: `name` grows by `step` per iteration, from its value at the
/// loop's entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub step: i64,
    /// Its value is read after the loop: the port must copy out the final value.
    pub last_value: bool,
}

impl Counter {
    /// Why a port of `report`'s loop is refused while it advances this counter, and the
    /// rewrite that lets it be ported (`then` says what to run again).
    pub fn refusal(&self, report: &LoopReport, then: &str) -> String {
        let index = report
            .induction
            .as_ref()
            .map(|i| i.var.as_str())
            .unwrap_or("i");
        format!(
            "the loop advances `{}` by {} per iteration beside `{index}`: compute it from `{index}` at the top of the body (its value at the loop's entry plus {} times the iteration number) and drop its update, then {then}",
            self.name, self.step, self.step
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub name: String,
    /// Whether and how the callee runs on the device.
    pub device: Device,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callees: Vec<String>,
    /// The callee's side-effect summary in words (`param row: writes [0, 8*n)`), for
    /// functions of the program and `memcpy`/`memmove`/`memset`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<String>,
}

/// Whether a callee has a device version, as a report writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Device {
    /// A CUDA device function of the same name exists (`sqrt`, `fabs`).
    Builtin,
    /// Defined in the program: a port needs a `__device__` version of it.
    Port,
    /// A host library function with no device version (`printf`, `fopen`).
    HostOnly,
    /// `malloc`, `calloc`, `free` and their kin: allocations a port hoists out.
    Allocator,
    /// A call through a function pointer, or to a function nothing is known of.
    Unknown,
}

impl Device {
    /// `host-only`, as reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Builtin => "builtin",
            Device::Port => "port",
            Device::HostOnly => "host-only",
            Device::Allocator => "allocator",
            Device::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a call that does not return leaves the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorEnd {
    /// The program ends (`exit`, `abort`, a failed `assert`).
    Exit,
    /// Control resumes elsewhere (`longjmp`), or the callee's way out is not known.
    Jump,
}

/// Which branch of an `if` statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    Then,
    Else,
}

/// A branch of a loop's body from which every path ends in a call that does not return
/// (see [`LoopReport::error_paths`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorPath {
    /// The line of the call that ends the path (the first in the source when there are
    /// several).
    pub line: u32,
    /// The function that call names (`exit`, `abort`, `longjmp`, `die`).
    pub ends_with: String,
    /// `exit` when every way out ends the program, `jump` when one may resume it.
    pub ends: ErrorEnd,
    /// The `if` whose branch the path is: its keyword's line and column, and the branch.
    pub condition_line: u32,
    pub condition_col: u32,
    pub branch: Branch,
    /// The calls on the path with no device version (host library functions, program
    /// functions that reach one), each once in source order: a port leaves them to the
    /// host.
    pub calls: Vec<String>,
}

/// What a reduction accumulates into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReductionKind {
    /// A local scalar (`sum += a[i]`, `m = fmax(m, a[i])`).
    Scalar,
    /// One element or struct field at an address that does not change in the loop
    /// (`C[i][j] += ...` over `k`, `acc->sum += x`).
    Element,
    /// Elements chosen per iteration, each updated by a read-modify-write
    /// (`hist[key[i]] += w[i]`).
    Histogram,
    /// A minimum (maximum) and the variables updated with it under the same condition
    /// (`if (d < best) { best = d; idx = j; }`).
    Argmin,
    Argmax,
}

/// The operator a reduction combines with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RedOp {
    #[serde(rename = "+")]
    Sum,
    #[serde(rename = "*")]
    Product,
    #[serde(rename = "&")]
    BitAnd,
    #[serde(rename = "|")]
    BitOr,
    #[serde(rename = "^")]
    BitXor,
    /// `acc = acc && e`.
    #[serde(rename = "&&")]
    And,
    /// `acc = acc || e`.
    #[serde(rename = "||")]
    Or,
    #[serde(rename = "min")]
    Min,
    #[serde(rename = "max")]
    Max,
    /// `if (c) flag = K;` with the same `K` everywhere: whichever iterations assign, the
    /// result is `K` (the OpenMP idiom of a benign race on a flag).
    #[serde(rename = "=")]
    Assign,
}

impl RedOp {
    /// `+`, `&&`, `min`: as reports write it.
    pub fn symbol(self) -> &'static str {
        match self {
            RedOp::Sum => "+",
            RedOp::Product => "*",
            RedOp::BitAnd => "&",
            RedOp::BitOr => "|",
            RedOp::BitXor => "^",
            RedOp::And => "&&",
            RedOp::Or => "||",
            RedOp::Min => "min",
            RedOp::Max => "max",
            RedOp::Assign => "=",
        }
    }

    /// `sum`, `logical-and`: as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            RedOp::Sum => "sum",
            RedOp::Product => "product",
            RedOp::BitAnd => "bitwise-and",
            RedOp::BitOr => "bitwise-or",
            RedOp::BitXor => "bitwise-xor",
            RedOp::And => "logical-and",
            RedOp::Or => "logical-or",
            RedOp::Min => "minimum",
            RedOp::Max => "maximum",
            RedOp::Assign => "constant-assignment",
        }
    }
}

impl std::fmt::Display for RedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.symbol())
    }
}

/// One reduction of a loop: `target op= value` in every iteration, in any order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    /// The variable, element (`C[i][j]`, `acc->sum`) or array (`hist`) accumulated into.
    pub target: String,
    pub operator: RedOp,
    pub kind: ReductionKind,
    /// The C type of the accumulated value.
    #[serde(rename = "type")]
    pub c_type: String,
    /// How a kernel computes it.
    pub strategy: String,
    /// For arg-min/arg-max: the variables that take their value from the iteration that
    /// holds the minimum (`idx`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index: Vec<String>,
    /// For arg-min/arg-max: which iteration wins a tie, `first` (`<`, `>`: the earliest
    /// keeps the extremum) or `last` (`<=`, `>=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ties: Option<TieBreak>,
    /// The lines of the updates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

/// Which of the iterations holding the same extremum an arg-min/arg-max keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TieBreak {
    First,
    Last,
}

impl Reduction {
    /// `` `sum` (+) ``, as messages name it.
    pub fn describe(&self) -> String {
        if self.index.is_empty() {
            format!("`{}` ({})", self.target, self.operator)
        } else {
            format!(
                "`{}` ({}) with `{}`",
                self.target,
                self.operator,
                self.index.join("`, `")
            )
        }
    }
}

/// The dependence a pair of accesses may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairKind {
    /// A later iteration may read what an earlier one wrote.
    ReadAfterWrite,
    /// A later iteration may overwrite what an earlier one read.
    WriteAfterRead,
    /// Two iterations may write the same bytes.
    WriteAfterWrite,
    /// Two pointers may point into one array.
    MayAlias,
}

impl PairKind {
    /// `read-after-write`, as reports and messages write it.
    pub fn as_str(self) -> &'static str {
        match self {
            PairKind::ReadAfterWrite => "read-after-write",
            PairKind::WriteAfterRead => "write-after-read",
            PairKind::WriteAfterWrite => "write-after-write",
            PairKind::MayAlias => "may-alias",
        }
    }
}

impl std::fmt::Display for PairKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencePair {
    pub kind: PairKind,
    pub array: String,
    pub first: Access,
    pub second: Access,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    pub line: u32,
    pub text: String,
}

/// The C type of each value a loop's report names by a place, by that qualified name
/// ([`LoopReport::value_types`]). Derived where the report is made and not written, so a
/// report read back has it empty: it takes no part in comparing reports.
#[derive(Clone, Debug, Default)]
pub struct ValueTypes(pub BTreeMap<String, String>);

impl PartialEq for ValueTypes {
    fn eq(&self, _: &ValueTypes) -> bool {
        true
    }
}

impl Eq for ValueTypes {}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopReport {
    /// Where the loop keyword is; written as its text, `file:line:col[#k]`.
    pub id: LoopRef,
    pub function: String,
    pub line: u32,
    pub induction: Option<Induction>,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// The loops mapped to the grid, outermost first (1 or 2).
    pub nest: Vec<LoopRef>,
    /// The values the report tells apart from others of the same variable, each written as
    /// the identifier it defines (`m_1052`: `m` as computed at line 1052); see
    /// docs/report-format.md, "Names". Filled where a report is written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<NamedValue>,
    /// The C type of each value the presentation qualifies by a place (`n@11`: `int`), by
    /// that qualified name: what the legend's entries say of their type. Not written: the
    /// legend carries it.
    #[serde(skip)]
    pub value_types: ValueTypes,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
    /// Branches of the body that only lead to a call that does not return (`exit`,
    /// `abort`, `longjmp`): their host-only calls do not stop a port, which flags the
    /// failing iteration on the device and runs it again on the host after the kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_paths: Vec<ErrorPath>,
    /// Reductions the loop is parallel apart from (`sum += ...`, `C[i][j] += ...` over `k`,
    /// `hist[key[i]] += w[i]`, min/max, arg-min): each with its operator and a strategy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<Reduction>,
    /// Variables written in the loop that need no sharing between iterations: declared in
    /// its body, or written before they are read in every iteration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private: Vec<Private>,
    /// Variables the loop advances by a constant beside its index (`k += 2` next to `i++`):
    /// each iteration's value is `entry + step * iteration`, so a port computes it from the
    /// iteration (OpenMP `linear(k: 2)`) instead of carrying it from the previous one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<Counter>,
    /// Accesses whose independence needs run-time evidence (for `needs-profile`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_evidence: Vec<DependencePair>,
    /// Assumptions the results rely on ("N > 0", "pointer parameters do not alias").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    /// Existing `#pragma` lines on the loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pragmas: Vec<String>,
    /// What profiled runs showed (`analyze --profile`); absent without a profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// Requests per warp of every access under each possible loop-to-grid mapping (§5.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mappings: Vec<MappingReport>,
    /// The mapping with the fewest requests per warp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended_mapping: Option<GridMapping>,
    /// How much the recommended mapping beats the natural one (`x` = the outer loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping_gain: Option<MappingGain>,
    /// Areas worth staging in shared memory under the recommended mapping (§5.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_memory: Vec<SharedArea>,
    /// What the staged areas cost in occupancy on the target GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<Occupancy>,
    /// Branches whose outcome may differ between the threads of a warp.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub divergence: Vec<DivergentBranch>,
}

/// Which loop variable runs along the grid's x (consecutive threads of a warp) and y, and
/// which loops those are: a nest with two inner loops over `j` has two candidates that
/// differ only in `x_loop`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GridMapping {
    pub x: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<String>,
    /// The id of the loop along x; absent in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_loop: Option<LoopRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_loop: Option<LoopRef>,
}

impl GridMapping {
    /// "`j` (line 93)" for the x loop, or "`j`" when the loop is not known.
    pub fn x_text(&self) -> String {
        loop_text(&self.x, self.x_loop.as_ref())
    }

    /// [`Self::x_text`] for the y loop.
    pub fn y_text(&self) -> Option<String> {
        let y = self.y.as_ref()?;
        Some(loop_text(y, self.y_loop.as_ref()))
    }
}

/// A loop variable with the line of its loop: what tells two loops over variables of one
/// name apart in text.
fn loop_text(var: &str, loop_id: Option<&LoopRef>) -> String {
    match loop_id {
        Some(id) => format!("`{var}` (line {})", id.line),
        None => format!("`{var}`"),
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingReport {
    pub mapping: GridMapping,
    /// Sum over the accesses of `requests_per_warp` (each access counted once per execution).
    pub total_requests_per_warp: Quantity,
    /// Sum over the accesses of `sectors_per_warp`.
    pub total_sectors_per_warp: Quantity,
    pub accesses: Vec<AccessCoalescing>,
}

/// The coalescing factor of one load or store: distinct 128-byte segments touched by a warp.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessCoalescing {
    pub line: u32,
    pub text: String,
    /// `load` or `store`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The byte offset from `base`; one per form when the access has several (its index
    /// set one way or the other, its pointer chosen at run time), written as a list.
    pub offset_bytes: Forms,
    /// The innermost loop containing the access when it runs inside each thread (a loop
    /// nested in the grid-mapped ones): every thread executes the access once per iteration
    /// of that loop. Absent when the access runs once per thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_loop: Option<LoopRef>,
    /// Bytes between the addresses of adjacent threads, when that is one expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<Quantity>,
    /// The most requests any warp issues, under `assumptions`, in `[1, 32]` (for elements
    /// that tile 128 bytes; an element that may straddle two lines counts both).
    pub requests_per_warp: Quantity,
    /// The most distinct 32-byte sectors any warp touches, under the same assumptions (with
    /// 32-byte aligned rows where `requests_per_warp` assumes 128-byte aligned ones): the
    /// bytes moved are `32 * sectors_per_warp`. `4 * requests_per_warp` at most.
    pub sectors_per_warp: Quantity,
    /// The fewest, when warps differ (a warp straddling a 128-byte line issues one more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_requests_per_warp: Option<Quantity>,
    /// The most when rows are not 128-byte aligned (present when that assumption was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unaligned_requests_per_warp: Option<Quantity>,
    /// Every warp issues exactly `requests_per_warp` requests under `assumptions`.
    pub exact: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingGain {
    pub natural: GridMapping,
    pub natural_requests_per_warp: Quantity,
    pub recommended_requests_per_warp: Quantity,
    /// How the two totals were compared (`symbolic`, or the sizes a numeric comparison used).
    pub compared: String,
}

/// A sharing opportunity (§5.2): one array's accesses, grouped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedArea {
    pub array: String,
    pub accesses: Vec<Access>,
    /// `reuse` (adjacent threads read overlapping bytes), `broadcast` (every thread reads the
    /// same area) or `uncoalesced` (stage through shared memory to coalesce the global access).
    pub kind: String,
    pub message: String,
    /// Bytes that x-adjacent / y-adjacent threads both read (the most over the block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap_x_bytes: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap_y_bytes: Option<Quantity>,
    /// The block's bytes `[lo, hi)` relative to the array, for the block whose first thread
    /// has grid coordinates (`block.x`, `block.y`): a linear section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_section: Option<Bytes>,
    /// The block's sub-matrix when the access is a linearized 2D pattern (§5.2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<Tile>,
    /// Shared bytes per block as an expression of `blockDim.x`, `blockDim.y`.
    pub bytes_per_block: Quantity,
    /// The same for the chosen block shape.
    pub bytes_for_block: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_conflicts: Option<BankConflicts>,
    /// How the accesses were grouped (§5.2.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grouping: Option<String>,
}

/// Rows `[row_lo, row_hi]` of pitch `row_pitch_bytes`, bytes `[col_lo, col_hi)` of each row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tile {
    pub row_pitch_bytes: Quantity,
    pub row_lo: Quantity,
    pub row_hi: Quantity,
    pub rows: Quantity,
    pub col_lo: Quantity,
    pub col_hi: Quantity,
    pub row_bytes: Quantity,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankConflicts {
    /// The most distinct 4-byte words one bank serves for one warp access (1 = none).
    pub degree: Quantity,
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padding: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    pub gpu: String,
    pub block: String,
    pub shared_bytes_per_block: Quantity,
    /// Resident blocks per SM (limited by threads, blocks and shared memory), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks_per_sm: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<String>,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DivergentBranch {
    pub line: u32,
    pub condition: String,
    /// Fraction of warps whose threads disagree on the condition, `[min, max]`, written
    /// `d/W` with real division (`W` the warps per row of the grid).
    pub ratio: [String; 2],
    /// Warps per row that diverge, `[min, max]`, and warps per row (C expressions).
    pub diverging_warps_per_row: [Quantity; 2],
    pub warps_per_row: Quantity,
    pub exact: bool,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// Run-time evidence from a profile: observed in these runs, not proven for all inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// Always `dynamic`.
    pub evidence: String,
    pub runs: u64,
    pub entries: u64,
    pub iterations: u64,
    pub min_trip: u64,
    pub max_trip: u64,
    pub time_ns: u64,
    /// Whether dependences were tracked for this loop.
    pub tracked: bool,
    /// Loop-carried dependences seen, one line each (`raw out: line 29 -> line 29, distance 1`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependences: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub privatizable: Vec<String>,
}

/// One entry of a report's legend of values ([`LoopReport::names`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedValue {
    /// The identifier the report's texts write for the value.
    pub name: String,
    /// The variable, as the source writes it (`m`, `c->n`, `rows[k]`).
    pub variable: String,
    /// Where the value is.
    #[serde(flatten)]
    pub place: ValuePlace,
    /// The value's C type, where the analyses know it (`int`, `double *`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_type: Option<String>,
    /// The same in words.
    pub is: String,
}

/// Which value of a variable a legend entry names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "place", rename_all = "snake_case")]
pub enum ValuePlace {
    /// The value the program computes at `line` (and `column`, when two share the line);
    /// `ordinal` tells apart values one place computes (the loads of one macro expansion).
    At {
        line: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        column: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ordinal: Option<u32>,
    },
    /// A value the analyses cannot place in the source, numbered in order of appearance.
    Unplaced { ordinal: u32 },
    /// The value the variable held at `line`, which it no longer holds where the loop
    /// starts.
    Before { line: u32 },
    /// A file-scope variable of another file, numbered among the files defining that name.
    Global { ordinal: u32 },
    /// The iteration number of the loop over the entry's `variable` inside each thread
    /// (`k@j`), the same in every thread.
    Iteration,
    /// A variable of a called function: for the call at `line`, and numbered when the
    /// analyses cannot place it.
    Callee {
        function: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ordinal: Option<u32>,
    },
}
