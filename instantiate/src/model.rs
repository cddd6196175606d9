//! The instantiated report (`warpwise/instance-report/v1`, see `docs/instantiation.md`):
//! every number next to the symbolic expression it came from and the values it used.

use super::equations::CountEquation;
use frontend::loop_ref::LoopRef;
use serde::{Deserialize, Serialize};

pub const INSTANCE_SCHEMA: &str = "warpwise/instance-report/v1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceReport {
    pub schema: String,
    /// Where the numbers come from.
    pub inputs: Inputs,
    /// Loops, most estimated time saved first.
    pub loops: Vec<InstanceLoop>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    pub profile_runs: u64,
    #[serde(default)]
    pub incomplete_runs: u64,
    /// Which per-entry count the equations use when entries differ (`min`, `mean`, `max`).
    pub count_statistic: String,
    pub gpu: String,
    pub block: String,
    /// Host-device link: bandwidth in bytes/s and latency per copy in nanoseconds.
    pub link_bytes_per_s: u64,
    pub link_latency_ns: u64,
    pub launch_overhead_ns: u64,
    /// Values given with `--set`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<String>,
}

/// A number with its expression: `value` absent when it could not be evaluated (`why`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quantity {
    pub expr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Its values under each candidate of an ambiguous variable, when they differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The report's quantity `expr` prints, for the passes that evaluate it again with more
    /// values (a section averaged over a loop's entries): they take its expression, not a
    /// reading of `expr`. Not written; `None` for a number that has no report quantity.
    #[serde(skip)]
    pub source: Option<advisor::model::Quantity>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceLoop {
    pub id: LoopRef,
    pub function: String,
    pub line: u32,
    pub verdict: String,
    /// `all runs` (no value was needed), `profiled run` (values from the profile) or
    /// `given values` (only `--set`).
    pub valid_for: String,
    pub values: Vec<VariableValue>,
    pub equations: Vec<CountEquation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_count: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
    pub parameters: Vec<InstanceParameter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryTraffic>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_memory: Vec<SharedInstance>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub divergence: Vec<DivergenceInstance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<Offload>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The legend of the values the loop's texts tell apart from others of the same
    /// variable, as in the kernel report (`advisor::legend`); filled where it is written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<advisor::model::NamedValue>,
}

impl InstanceLoop {
    /// Writes every place-qualified name of the loop's texts as the identifier of its
    /// legend entry, listed in `names`: the last step before the loop is written.
    pub fn name_values(&mut self) {
        let legend = {
            let texts = self.texts_mut();
            // The instance names no callee: `x@f` is a loop's iteration number or left.
            advisor::legend::Legend::of(texts.iter().map(|t| t.as_str()), &|_| false)
        };
        if legend.entries.is_empty() {
            return;
        }
        for t in self.texts_mut() {
            *t = legend.rename(t);
        }
        self.names = legend.entries;
    }

    /// Every text of the loop that may name a value of the program: the one list of them.
    fn texts_mut(&mut self) -> Vec<&mut String> {
        let mut t: Vec<&mut String> = Vec::new();
        for v in self.values.iter_mut() {
            t.extend([&mut v.name, &mut v.message]);
        }
        for e in self.equations.iter_mut() {
            t.push(&mut e.trip_count);
            t.extend(e.note.iter_mut());
        }
        t.extend(self.conflicts.iter_mut());
        if let Some(q) = self.trip_count.as_mut() {
            q.texts_mut(&mut t);
        }
        if let Some(g) = self.grid.as_mut() {
            t.push(&mut g.mapping);
            g.threads_x.texts_mut(&mut t);
            if let Some(q) = g.threads_y.as_mut() {
                q.texts_mut(&mut t);
            }
        }
        for p in self.parameters.iter_mut() {
            t.push(&mut p.name);
            for q in [&mut p.lo, &mut p.hi, &mut p.size].into_iter().flatten() {
                q.texts_mut(&mut t);
            }
            t.extend(p.notes.iter_mut());
        }
        if let Some(m) = self.memory.as_mut() {
            t.push(&mut m.mapping);
            for a in m.accesses.iter_mut() {
                a.requests_per_warp.texts_mut(&mut t);
                t.extend(a.executions_per_warp.iter_mut());
                t.extend(a.why.iter_mut());
            }
        }
        for s in self.shared_memory.iter_mut() {
            t.push(&mut s.array);
            s.bytes_per_block.texts_mut(&mut t);
        }
        for d in self.divergence.iter_mut() {
            t.push(&mut d.condition);
            d.warps_per_row.texts_mut(&mut t);
            for q in d.diverging_warps_per_row.iter_mut() {
                q.texts_mut(&mut t);
            }
        }
        if let Some(o) = self.offload.as_mut() {
            t.push(&mut o.verdict);
            t.extend(o.caveats.iter_mut());
        }
        t.extend(self.notes.iter_mut());
        t
    }
}

impl Quantity {
    fn texts_mut<'a>(&'a mut self, t: &mut Vec<&'a mut String>) {
        t.push(&mut self.expr);
        t.extend(self.why.iter_mut());
        t.extend(self.candidates.iter_mut());
    }
}

/// One variable of the loop's expressions and where its value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariableValue {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    /// `set`, `counts`, `counts+entry`, `entry`, `ambiguous`, `undetermined`.
    pub source: String,
    /// Values the loop counts admit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_counts: Vec<i64>,
    /// `[min, max]` at loop entry in the profiled runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_entry: Option<[i64; 2]>,
    /// Whether counts and entry values agree, when both exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agree: Option<bool>,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub mapping: String,
    pub threads_x: Quantity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_y: Option<Quantity>,
    pub block: String,
    /// Threads per launch (from the trip counts, else from the profiled counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<i64>,
    /// Warps that have at least one thread inside the iteration space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warps: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceParameter {
    pub name: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// `static` (the report's section, evaluated), `allocation` (the whole object, sized
    /// by its allocation: the report's `whole_object`), `re-analysis` (§6.2: analysed
    /// again with the values injected; valid for the profiled run only) or `profile` (the
    /// whole block the pointer held at the loop's entries, as the profiler saw it
    /// allocated; valid for the profiled run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_from: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Global-memory requests of one kernel launch under the chosen mapping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryTraffic {
    pub mapping: String,
    pub accesses: Vec<AccessInstance>,
    /// Sum over the accesses of `requests_per_launch`, when every one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_launch: Option<i64>,
    /// `requests_per_launch * 128`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_launch: Option<i64>,
    /// The most iterations of its inner loops one thread runs (1 without inner loops): the
    /// sequential steps the latency bound of the offload estimate counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_thread: Option<f64>,
    /// Warps of one launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warps: Option<i64>,
    /// A thread's inner loops store to memory, so a later step's loads may wait for an
    /// earlier step's store (they are not overlapped).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stores_in_steps: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessInstance {
    pub line: u32,
    pub text: String,
    pub kind: String,
    pub requests_per_warp: Quantity,
    /// Times each warp executes the access per launch (1, or the inner loop's iterations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executions_per_warp: Option<String>,
    /// `requests_per_warp * warps * executions_per_warp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_launch: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedInstance {
    pub array: String,
    pub bytes_per_block: Quantity,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivergenceInstance {
    pub line: u32,
    pub condition: String,
    pub warps_per_row: Quantity,
    pub diverging_warps_per_row: [Quantity; 2],
    /// `diverging / warps_per_row`, `[min, max]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<[f64; 2]>,
}

/// The offload estimate of one kernel launch (one entry of the loop); see
/// `docs/instantiation.md` for the formulas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offload {
    pub bytes_to_device: i64,
    pub bytes_to_host: i64,
    pub copies: u64,
    pub transfer_ns: f64,
    pub kernel_bytes: i64,
    pub kernel_ns: f64,
    pub gpu_ns: f64,
    /// Profiled inclusive CPU time per entry.
    pub cpu_ns: f64,
    pub entries: u64,
    pub speedup: f64,
    /// Share of the GPU time spent copying, 0..1.
    pub transfer_share: f64,
    /// `(cpu_ns - gpu_ns) * entries`; negative when porting loses time.
    pub saved_ns: f64,
    /// `worth porting`, `transfer-bound: ...` or `not worth it`.
    pub verdict: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}
