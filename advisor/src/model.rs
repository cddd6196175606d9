//! The kernel report: what `warpwise analyze` says about each loop, as serializable data.
//! The schema is `warpwise/kernel-report/v1`, documented in `docs/report-format.md`.
//! Every expression is a C expression over the function's variables (integer semantics,
//! `min(a, b)`/`max(a, b)` allowed) that the symbolic engine parses back.

use serde::{Deserialize, Serialize};

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
    pub lower: String,
    pub upper: String,
    pub step: String,
    /// Number of iterations per entry of the loop.
    pub trip_count: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub code: String,
    pub message: String,
    pub lines: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
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
}

/// A half-open byte interval `[lo, hi)` relative to a parameter's base pointer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytes {
    pub lo: String,
    pub hi: String,
    /// `hi - lo`, simplified: what `cudaMemcpy` copies.
    pub size: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
    pub role: Role,
    pub kind: ParamKind,
    pub c_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elem_bytes: Option<u64>,
    /// The accessed section; absent for scalars and when it cannot be computed statically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Why `bytes` is absent or what it assumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub name: String,
    /// `builtin` (a CUDA device function exists), `port` (defined in the program: needs a
    /// `__device__` version), `host-only`, `allocator`, `unknown`.
    pub device: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callees: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencePair {
    pub kind: String,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopReport {
    pub id: String,
    pub function: String,
    pub line: u32,
    pub induction: Option<Induction>,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// The loops mapped to the grid, outermost first (1 or 2).
    pub nest: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
    /// Scalars updated by a reduction (`sum += ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<String>,
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
