//! The evaluation context of one loop: for every variable its value and where it comes
//! from — given with `--set`, solved from loop counts, recorded at loop entry — and whether
//! those sources agree.

use super::equations::{consistent_with_ranges, CountedLoop, Determined, Solved};
use super::eval::Values;
use super::model::VariableValue;
use frontend::loop_ref::LoopRef;
use profile::model::ValueStats;
use std::collections::{BTreeMap, BTreeSet};

/// Everything known about the variables of one loop.
#[derive(Debug)]
pub struct Sources<'a> {
    pub solved: &'a Solved,
    /// Values recorded at the entry of the loop (or of the loops of its nest), by name.
    pub recorded: BTreeMap<String, &'a ValueStats>,
    pub set: &'a Values,
    /// Loops of the same function with profile data, for consistency checks.
    pub loops: &'a [CountedLoop<'a>],
    /// Loops of the same function without profile data, by the variables their counts use.
    pub unprofiled: &'a [(LoopRef, BTreeSet<String>)],
}

/// Resolves every variable in `names`; returns the values and one line per variable.
pub fn resolve(names: &BTreeSet<String>, sources: &Sources<'_>) -> (Values, Vec<VariableValue>) {
    let mut values = Values::new();
    // Single recorded values first: they filter count candidates of other variables.
    let recorded_single: Values = sources
        .recorded
        .iter()
        .filter(|(_, s)| s.count > 0 && s.min == s.max)
        .map(|(n, s)| (n.clone(), s.min))
        .collect();
    let mut lines = Vec::new();
    for name in names {
        let evidence = Evidence::gather(name, sources, &recorded_single);
        let entry = evidence.resolve(sources);
        if let Some(v) = entry.value {
            values.insert(name.clone(), v);
        }
        lines.push(entry);
    }
    (values, lines)
}

/// What the sources say about one variable, before a value is chosen.
struct Evidence<'n> {
    name: &'n String,
    /// The values the loop counts admit (those consistent with the other loops' ranges).
    from_counts: Vec<i64>,
    /// The least and greatest value recorded at the loop's entry.
    at_entry: Option<[i64; 2]>,
    /// The value recorded at entry when it was always the same.
    single: Option<i64>,
    /// The range the loop counts admit when they do not give values.
    range: Option<(i64, i64)>,
    /// Whether the single recorded value is one of the counts' values.
    agree: Option<bool>,
    counts_text: String,
    entry_text: String,
}

impl<'n> Evidence<'n> {
    fn gather(name: &'n String, sources: &Sources<'_>, recorded_single: &Values) -> Self {
        let recorded = sources.recorded.get(name).filter(|s| s.count > 0);
        let at_entry = recorded.map(|s| [s.min, s.max]);
        let single = recorded.filter(|s| s.min == s.max).map(|s| s.min);
        let determined = sources.solved.determined.get(name);
        let from_counts: Vec<i64> = match determined {
            Some(Determined::Values(vs)) => {
                let mut known = sources.set.clone();
                known.extend(recorded_single.iter().map(|(k, v)| (k.clone(), *v)));
                known.remove(name);
                let kept = consistent_with_ranges(vs, name, sources.loops, &known);
                if kept.is_empty() {
                    vs.clone()
                } else {
                    kept
                }
            }
            _ => Vec::new(),
        };
        let range = match determined {
            Some(Determined::Range(lo, hi)) => Some((*lo, *hi)),
            _ => None,
        };
        let counts_text = match from_counts.as_slice() {
            [] => String::new(),
            [v] => format!("{v}"),
            vs => format!(
                "{{{}}}",
                vs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        let entry_text = match at_entry {
            Some([lo, hi]) if lo == hi => format!("{lo}"),
            Some([lo, hi]) => format!("{lo}..{hi}"),
            None => String::new(),
        };
        let agree = match (single, from_counts.is_empty()) {
            (Some(v), false) => Some(from_counts.contains(&v)),
            _ => None,
        };
        Evidence {
            name,
            from_counts,
            at_entry,
            single,
            range,
            agree,
            counts_text,
            entry_text,
        }
    }

    /// The variable's line: its value, where it comes from, and why.
    fn line(
        &self,
        value: Option<i64>,
        source: &str,
        agree: Option<bool>,
        message: String,
    ) -> VariableValue {
        VariableValue {
            name: self.name.clone(),
            value,
            source: source.to_string(),
            from_counts: self.from_counts.clone(),
            at_entry: self.at_entry,
            agree,
            message,
        }
    }

    /// The value by precedence: given, then the counts (with the entry's value to choose
    /// or to disagree), then the entry's value alone; else why there is none.
    fn resolve(&self, sources: &Sources<'_>) -> VariableValue {
        let name = self.name;
        if let Some(v) = given(sources.set, name) {
            let mut message = format!("{name} = {v} (given)");
            if !self.from_counts.is_empty() && !self.from_counts.contains(&v) {
                message.push_str(&format!(
                    "; the loop counts say {name} ∈ {}: the given value disagrees",
                    self.counts_text
                ));
            }
            self.line(Some(v), "set", self.agree, message)
        } else if self.from_counts.len() == 1 {
            self.one_count_value(self.from_counts[0])
        } else if self.from_counts.len() > 1 {
            self.several_counts_value()
        } else if let Some(e) = self.single {
            self.line(
                Some(e),
                "entry",
                None,
                format!("{name} = {e} as recorded at entry (no loop count determines it)"),
            )
        } else {
            self.undetermined(sources)
        }
    }

    /// The counts give one value `v`: it, or the entry's value where they disagree.
    fn one_count_value(&self, v: i64) -> VariableValue {
        let (name, agree) = (self.name, self.agree);
        match self.single {
            Some(e) if e == v => self.line(
                Some(v),
                "counts+entry",
                agree,
                format!("{name} = {v}: solved from the loop counts, equal to the value recorded at entry"),
            ),
            Some(e) => self.line(
                Some(e),
                "entry",
                agree,
                format!(
                    "{name} = {e} as recorded at entry; the loop counts say {v} (they disagree: \
                     a loop may exit early or the variable changes inside the function)"
                ),
            ),
            None => self.line(
                Some(v),
                "counts",
                agree,
                format!("{name} = {v}: solved from the loop counts"),
            ),
        }
    }

    /// The counts admit several values (integer division): the entry's value picks one,
    /// else the variable is ambiguous.
    fn several_counts_value(&self) -> VariableValue {
        let (name, agree, counts_text) = (self.name, self.agree, &self.counts_text);
        match self.single {
            Some(e) if self.from_counts.contains(&e) => self.line(
                Some(e),
                "counts+entry",
                agree,
                format!(
                    "{name} = {e}: the loop counts admit {name} ∈ {counts_text} (integer division); \
                     the value recorded at entry picks {e}"
                ),
            ),
            Some(e) => self.line(
                Some(e),
                "entry",
                agree,
                format!(
                    "{name} = {e} as recorded at entry; the loop counts admit {name} ∈ {counts_text} \
                     (they disagree)"
                ),
            ),
            None => self.line(
                None,
                "ambiguous",
                agree,
                format!(
                    "ambiguous: the loop counts admit {name} ∈ {counts_text} (integer division); \
                     give it with --set {name}=VALUE{}",
                    if self.at_entry.is_some() {
                        String::new()
                    } else {
                        " or profile with its entry value recorded".to_string()
                    }
                ),
            ),
        }
    }

    /// No value: what is known instead, the unprofiled loops whose counts would give it,
    /// and how to give it.
    fn undetermined(&self, sources: &Sources<'_>) -> VariableValue {
        let name = self.name;
        let mut why = match (self.range, self.at_entry) {
            (Some((lo, hi)), _) => format!("the loop counts admit {name} ∈ [{lo}, {hi}]"),
            (None, Some(_)) => format!("{name} took the values {} at entry", self.entry_text),
            (None, None) => format!("no profiled loop count determines {name}"),
        };
        let would: Vec<String> = sources
            .unprofiled
            .iter()
            .filter(|(_, vars)| vars.contains(name))
            .map(|(id, _)| id.to_string())
            .collect();
        if !would.is_empty() {
            why.push_str(&format!(
                "; the count of loop {} would (it has no profile data)",
                would.join(", ")
            ));
        }
        why.push_str(&format!("; give it with --set {name}=VALUE"));
        self.line(None, "undetermined", None, why)
    }
}

/// The value `--set` gives `name`, by its name or by the identifier a written report's
/// legend shows for it (`n_12` for `n@12`).
pub(crate) fn given(set: &Values, name: &str) -> Option<i64> {
    set.get(name)
        .copied()
        .or_else(|| advisor::legend::identifier(name).and_then(|id| set.get(&id).copied()))
}
