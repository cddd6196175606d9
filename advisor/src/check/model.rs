//! The report of `warpwise check`, as serializable data (schema `warpwise/check-report/v1`,
//! documented in `docs/check.md`): per kernel, its block shape and where it came from, each
//! global-memory access with its requests and sectors per warp, and each branch with its
//! divergence (and its WW203 finding where it splits warps). Every count is an expression
//! (C syntax over the kernel's names) next to its value when that is a number.

use serde::Serialize;
use symbolic::Expr;

pub const SCHEMA: &str = "warpwise/check-report/v1";

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    pub schema: String,
    pub kernels: Vec<KernelReport>,
    /// Functions not analysed (C++, or what the lowering could not read), with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refused>,
    /// `check --dynamic`: what the run of the program as a whole did (its accesses are
    /// under each access's `dynamic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSummary>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refused {
    /// `file:line:col` of the construct that stopped it.
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    pub reason: String,
}

impl Refused {
    /// "`f` " naming the refused function before a message, or nothing for a declaration
    /// outside any.
    pub fn function_prefix(&self) -> String {
        self.function
            .as_deref()
            .map(|f| format!("`{f}` "))
            .unwrap_or_default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelReport {
    pub kernel: String,
    pub at: String,
    pub block: Shape,
    /// What every count of the kernel relies on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    pub accesses: Vec<AccessReport>,
    /// The kernel's parameters in order (a value template's first): what a launch's
    /// arguments are named by when `--dynamic` evaluates a count with them.
    #[serde(skip)]
    pub parameters: Vec<String>,
    /// Each `__shared__` load, store and atomic with its bank conflicts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_accesses: Vec<SharedAccessReport>,
    pub branches: Vec<BranchReport>,
    /// Accesses and calls this version does not analyse, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_analysed: Vec<String>,
}

/// `blockDim` as the counts used it: numbers where known, else the name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub x: Dim,
    pub y: Dim,
    pub z: Dim,
    /// Where the known sizes come from (`--set`, launches at `file:line:col`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Dim {
    Known(u64),
    Unknown(&'static str),
}

impl Dim {
    pub fn value(self) -> Option<u64> {
        match self {
            Dim::Known(v) => Some(v),
            Dim::Unknown(_) => None,
        }
    }
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Known(v) => write!(f, "{v}"),
            Dim::Unknown(name) => f.write_str(name),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessKind {
    Load,
    Store,
    /// An atomic read-modify-write (`atomicAdd(&a[i], v)`).
    Atomic,
}

impl AccessKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// How a warp's access uses the memory system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coalescing {
    /// Every thread reads the same address: one element's sectors.
    Broadcast,
    /// The sectors the warp's bytes need, no more.
    Coalesced,
    /// Contiguous, but starting off a sector boundary: one sector more than needed.
    Misaligned,
    /// More sectors than the warp's bytes need (strided, array of structures, column walk).
    Uncoalesced,
    /// The lanes' addresses come from data each lane reads at an address of its own (a
    /// gather, `in[idx[i]]`): from 1 request to every lane its own, as the data falls.
    DataDependent,
    /// Depends on values the analysis does not know (data read per thread).
    Unknown,
}

impl Coalescing {
    pub fn as_str(self) -> &'static str {
        match self {
            Coalescing::Broadcast => "broadcast",
            Coalescing::Coalesced => "coalesced",
            Coalescing::Misaligned => "misaligned",
            Coalescing::Uncoalesced => "uncoalesced",
            Coalescing::DataDependent => "data-dependent",
            Coalescing::Unknown => "unknown",
        }
    }
}

/// A count per warp: the most (`max`, with its value when it is a number), the fewest when
/// warps differ, and the most without the aligned-rows assumption.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub max: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned: Option<String>,
    pub exact: bool,
    /// The expressions the texts print, carried beside them for `check --dynamic` to
    /// evaluate with each launch's values: no count text is parsed back.
    /// Boxed: a report holds many counts, most of them numbers.
    #[serde(skip)]
    pub exprs: Box<CountExprs>,
}

impl Count {
    /// The fewest, where the count states one and it is a number.
    pub fn min_number(&self) -> Option<u64> {
        number(self.exprs.min.as_ref()?)
    }

    /// The most without the aligned-rows assumption, where it is a number.
    pub fn unaligned_number(&self) -> Option<u64> {
        number(self.exprs.unaligned.as_ref()?)
    }
}

fn number(e: &Expr) -> Option<u64> {
    e.as_integer().and_then(|i| u64::try_from(i).ok())
}

/// The expressions of a [`Count`]'s `max`, `min` and `unaligned`, in the names the texts
/// read by (the presentation renames both together); `None` where the count states no
/// expression (a bank-conflict degree, which is never evaluated per launch).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CountExprs {
    pub max: Option<Expr>,
    pub min: Option<Expr>,
    pub unaligned: Option<Expr>,
}

/// A call a device function's access or branch is reached through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Call {
    /// The device function called.
    pub callee: String,
    /// `file:line:col` of the call.
    pub at: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AccessReport {
    pub at: String,
    /// The calls from the kernel down to the device function that holds it, outermost
    /// first; empty in the kernel's own body.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Call>,
    /// The access as written (`p[i].x`).
    pub access: String,
    pub kind: AccessKind,
    pub bytes: u64,
    /// The pointer or array it goes through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// Bytes from `array`, in the thread coordinates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
    /// Bytes between the addresses of neighbouring threads along x.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<String>,
    pub requests: Count,
    pub sectors: Count,
    /// The bytes the warp's threads access: distinct addresses times the element's size.
    pub warp_bytes: u64,
    /// The sectors a warp's bytes need at best.
    pub ideal_sectors: u64,
    pub coalescing: Coalescing,
    /// For an uncoalesced access whose stride is symbolic: when it is so (`n > 1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Why the counts are bounds only (data read per thread, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    /// Whether the counts assume rows start on a segment (or sector): one of
    /// `assumptions` says which terms of the offset, and `unaligned` what a start off it
    /// costs. `check --dynamic` reads a run outside the count but within that as the
    /// assumption failing, not as a disagreement.
    #[serde(skip)]
    pub aligned_rows: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<crate::model::Reason>,
    /// The lanes the count is for, where a guard that differs between lanes holds the
    /// access (`1 of a warp's 32 lanes: those `threadIdx.x == 0` lets through`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
    /// Why a run cannot line up the lanes' executions of the access: it runs under a
    /// condition that differs between the lanes and from one iteration to the next of a
    /// loop around it, so a lane's n-th execution may be another lane's later iteration.
    /// `check --dynamic` shows the run's counts without comparing them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpaired: Option<String>,
    /// `check --dynamic`: what the run's warps touched at this access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic: Option<Box<Dynamic>>,
}

/// The fewest and the most of a count over the warps of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

/// What the warps of a run touched at one access: per execution of a warp (a lane's n-th
/// execution of the access with the other lanes' n-th), its distinct 128-byte segments
/// (`requests`) and 32-byte sectors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    /// Executions by a full warp (32 active lanes, or every thread of a block of fewer),
    /// which the static count is for.
    pub warps: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sectors: Option<Range>,
    /// Executions by warps with fewer active lanes (a guard, a block's last warp), counted
    /// apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<PartialWarps>,
    /// Where the static count is written in sizes the run knows (`min(32, Size)`,
    /// `blockDim.x`, a kernel parameter): the count evaluated with each launch's grid,
    /// block and integer arguments, and the agreement launch by launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_launch: Option<PerLaunch>,
    pub agreement: Agreement,
}

/// A symbolic static count evaluated per launch of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PerLaunch {
    /// Launches compared (that ran the access, with every name of the count known).
    pub launches: u64,
    /// The evaluated counts' most, over the launches.
    pub requests: Range,
    pub sectors: Range,
}

/// Executions of an access by warps with fewer than their full lanes active.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartialWarps {
    pub warps: u64,
    pub requests: Range,
    pub sectors: Range,
}

/// Whether the run's full warps bear the static count out: an exact count must equal
/// every full warp's, a bound must hold each.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "why", rename_all = "kebab-case")]
pub enum Agreement {
    Agrees,
    /// Outside the count, but inside the count without the aligned-rows assumption: the
    /// run's rows do not start on 128-byte (32-byte) boundaries.
    Unaligned(String),
    Disagrees(String),
    NotComparable(String),
}

impl Agreement {
    pub fn as_str(&self) -> &'static str {
        match self {
            Agreement::Agrees => "agrees",
            Agreement::Unaligned(_) => "unaligned rows",
            Agreement::Disagrees(_) => "disagrees",
            Agreement::NotComparable(_) => "not comparable",
        }
    }
}

/// The run of `check --dynamic` as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The program's command line as run (its arguments).
    pub args: Vec<String>,
    /// Global-memory accesses the kernels made and the run counted.
    pub events: u64,
    /// Why the count stopped early (the event cap), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
    /// The program's exit status when it was not 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// Places where the run touched global memory that the static report has no access
    /// for (an access inside a function that is not inlined, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<UnmatchedSite>,
}

/// A place the run accessed global memory from, with no access of the report there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnmatchedSite {
    pub at: String,
    pub kind: AccessKind,
    pub warps: u64,
}

/// A shared-memory access: how many passes its warp needs through the 32 banks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedAccessReport {
    pub at: String,
    /// The calls from the kernel down to the device function that holds it, outermost
    /// first; empty in the kernel's own body.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Call>,
    /// The access as written (`tile[threadIdx.x][k]`).
    pub access: String,
    pub kind: AccessKind,
    pub bytes: u64,
    /// The `__shared__` array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// Bytes from `array`, in the thread coordinates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
    /// Bytes between the addresses of neighbouring threads along x.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<String>,
    /// The bank-conflict degree: the most distinct 4-byte words the warp's active lanes
    /// touch in one bank (1: no conflict).
    pub bank_conflicts: Count,
    /// Why the degree is a bound only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<crate::model::Reason>,
    /// The lanes the count is for, where a guard that differs between lanes holds the
    /// access (`1 of a warp's 32 lanes: those `threadIdx.x == 0` lets through`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
}

/// Whether a branch splits warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Divergence {
    /// The condition is the same for every thread of a warp.
    Never,
    /// Only the warps where the condition changes (it changes at most once along x).
    SomeWarps,
    /// It changes inside every warp (`threadIdx.x % 2`).
    EveryWarp,
    /// A remainder by a size the warp's threads share and the analysis does not know
    /// (`(i + 1) % rows == 0`): the truth repeats with a symbolic period along the threads,
    /// so every warp splits when the period is 2 to 32, only the warps holding the lane
    /// where it holds when it is above 32, none when it is 1; `why` gives the period.
    Periodic,
    /// It depends on data read per thread: any warp may split.
    DataDependent,
    /// Thread-dependent in a way the analysis does not classify.
    Unknown,
}

impl Divergence {
    pub fn as_str(self) -> &'static str {
        match self {
            Divergence::Never => "never",
            Divergence::SomeWarps => "some warps",
            Divergence::EveryWarp => "every warp",
            Divergence::Periodic => "periodic",
            Divergence::DataDependent => "data-dependent",
            Divergence::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BranchReport {
    pub at: String,
    /// The calls from the kernel down to the device function that holds it, outermost
    /// first; empty in the kernel's own body.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Call>,
    /// The deciding condition as written.
    pub condition: String,
    /// The branch leaves a loop.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub loop_exit: bool,
    pub divergence: Divergence,
    pub why: String,
    /// WW203 where the branch splits warps (`some-warps`, `every-warp`, `periodic`,
    /// `data-dependent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<crate::model::Reason>,
}
