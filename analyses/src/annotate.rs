//! Analysis facts as per-instruction text for `warpwise ir --annotate`.
//!
//! Range analysis (`analyses/src/range.rs`) is not wired here yet: add an
//! [`Annotation`] variant and one arm in [`annotate_function`] once it lands.

use crate::invariant::{loop_invariants, AliasPolicy, Invariants};
use crate::reconstruct::{reconstruct, ReconstructConfig, Reconstruction};
use crate::sign::{sign_analysis, SignFacts};
use frontend::ir::{Function, InstKind, Program, Value};
use frontend::loops::LoopForest;
use std::collections::HashMap;

/// Which facts to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Annotation {
    /// The sign set of each value where it is defined, e.g. `{0,+}`.
    Signs,
    /// For each loop containing the instruction (outermost first): `L0:inv` or `L0:var`.
    Invariants,
    /// The reconstructed expressions, e.g. `{i*N + j}`.
    Exprs,
    /// The symbolic range of each value where it is defined, e.g. `[0, n - 1]`.
    Ranges,
}

/// The text of every annotated value, and notes for the whole function (assumptions).
#[derive(Clone, Debug, Default)]
pub struct Annotated {
    pub per_value: HashMap<Value, String>,
    pub notes: Vec<String>,
}

impl Annotated {
    pub fn text(&self, v: Value) -> Option<String> {
        self.per_value.get(&v).cloned()
    }
}

/// Runs the analyses `kinds` need and renders their facts. Invariance uses
/// [`AliasPolicy::DistinctParameters`], as the thesis does; the assumption is a note.
pub fn annotate_function(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    kinds: &[Annotation],
) -> Annotated {
    let rec: Reconstruction = reconstruct(program, func, forest, &ReconstructConfig::default());
    let signs: Option<SignFacts> = kinds
        .contains(&Annotation::Signs)
        .then(|| sign_analysis(program, func, forest, &rec, &HashMap::new()));
    let invariants: Vec<Invariants> = if kinds.contains(&Annotation::Invariants) {
        forest
            .ids()
            .map(|id| {
                loop_invariants(
                    program,
                    func,
                    forest,
                    id,
                    &rec,
                    AliasPolicy::DistinctParameters,
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    // Range analysis gets the signs the sign analysis finds at function entry.
    let ranges = kinds.contains(&Annotation::Ranges).then(|| {
        let facts = signs
            .clone()
            .unwrap_or_else(|| sign_analysis(program, func, forest, &rec, &HashMap::new()));
        let env = facts.env_for(func.entry, &rec);
        crate::range::range_analysis(
            program,
            func,
            forest,
            &rec,
            &env,
            &crate::range::RangeConfig::default(),
        )
    });
    let mut out = Annotated::default();
    if let Some(reason) = ranges.as_ref().and_then(|r| r.gave_up()) {
        out.notes.push(format!("ranges: {reason}"));
    }
    for inv in &invariants {
        if let Some(a) = inv.assumption() {
            out.notes.push(format!("{}: {a}", inv.loop_id));
        }
    }
    for v in func.values() {
        let inst = func.inst(v);
        if matches!(inst.kind, InstKind::Store { .. }) {
            continue;
        }
        let mut parts = Vec::new();
        for kind in kinds {
            match kind {
                Annotation::Signs => {
                    if let Some(s) = &signs {
                        parts.push(format!("sign {}", s.of(v)));
                    }
                }
                Annotation::Invariants => {
                    let mut loops: Vec<_> = forest
                        .ids()
                        .filter(|id| forest.loop_(*id).contains(inst.block))
                        .collect();
                    loops.sort_by_key(|id| forest.loop_(*id).depth);
                    let marks: Vec<String> = loops
                        .iter()
                        .map(|id| {
                            let inv = invariants[id.0 as usize].is_invariant(v);
                            format!("{id}:{}", if inv { "inv" } else { "var" })
                        })
                        .collect();
                    if !marks.is_empty() {
                        parts.push(marks.join(" "));
                    }
                }
                Annotation::Exprs => {
                    let exprs: Vec<String> = rec.of(v).iter().map(|e| e.to_string()).collect();
                    if !exprs.is_empty() {
                        parts.push(format!("{{{}}}", exprs.join(", ")));
                    }
                }
                Annotation::Ranges => {
                    if let Some(facts) = &ranges {
                        let range = facts.of(v);
                        if !range.is_top() {
                            parts.push(range.to_string());
                        }
                    }
                }
            }
        }
        if !parts.is_empty() {
            out.per_value.insert(v, parts.join("  "));
        }
    }
    out
}
