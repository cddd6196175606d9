//! Arg-min and arg-max reductions in ports (`if (a[i] < best) { best = a[i]; idx = i; }`):
//! what both targets need to know of one, and the one rule they generate it by.
//!
//! Every iteration runs its body on private copies of the extremum and its partners that
//! start from their values at the loop's entry, and offers the result with its iteration
//! number; the combine keeps the best value, and of equal values the earliest iteration,
//! the entry (number -1) before them all. This is the sequential loop's answer when ties
//! keep the earliest iteration (`<`, `>`): the analysis proved the body holds one
//! comparison of the extremum, taken or not, and that the partners take values that read
//! neither it nor themselves. An iteration whose comparison fails offers the entry values
//! exactly, which tie with the entry and lose to it. When ties keep the latest iteration
//! (`<=`), such an iteration would tie with one that took a value equal to the entry's, and
//! nothing tells them apart without a flag in the body: those are refused.

use advisor::model::{Reduction, ReductionKind, TieBreak};

/// An arg-min/arg-max a port generates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArgExtremum {
    /// The extremum's variable (`best`).
    pub target: String,
    /// The variables taken with it (`idx`).
    pub partners: Vec<String>,
    /// Arg-max rather than arg-min.
    pub max: bool,
}

impl ArgExtremum {
    /// `better` compares the candidate `(v, r)` with the kept `(kv, kr)` (C expressions):
    /// whether the candidate wins.
    pub fn better(&self, v: &str, r: &str, kv: &str, kr: &str) -> String {
        let cmp = if self.max { ">" } else { "<" };
        format!("({v} {cmp} {kv} || ({v} == {kv} && {r} < {kr}))")
    }

    /// `min` or `max`.
    pub fn op(&self) -> &'static str {
        if self.max {
            "max"
        } else {
            "min"
        }
    }
}

/// The arg-min/arg-max `r` as a port generates it, or why it cannot. `source_name` maps a
/// report variable to the name the loop's text uses.
pub(crate) fn check(
    r: &Reduction,
    source_name: &dyn Fn(&str) -> String,
) -> Result<ArgExtremum, String> {
    let max = match r.kind {
        ReductionKind::Argmin => false,
        ReductionKind::Argmax => true,
        _ => return Err(format!("{} is not an arg-min/arg-max", r.describe())),
    };
    if r.index.is_empty() {
        return Err(format!(
            "{} names no variable taken with the extremum",
            r.describe()
        ));
    }
    if r.ties.is_none() {
        return Err(format!(
            "{}: the report does not say which iteration wins a tie (a report written before `ties`): analyze the loop again",
            r.describe()
        ));
    }
    if r.ties != Some(TieBreak::First) {
        return Err(format!(
            "{}: ties keep the latest iteration (`{}=`), which a port cannot tell from an iteration that did not take the {}; write the comparison strictly (`{}`) if the earliest iteration may win",
            r.describe(),
            if max { ">" } else { "<" },
            if max { "maximum" } else { "minimum" },
            if max { ">" } else { "<" },
        ));
    }
    let target = source_name(&r.target);
    let partners: Vec<String> = r.index.iter().map(|p| source_name(p)).collect();
    if let Some(bad) = std::iter::once(&target)
        .chain(&partners)
        .find(|n| !is_identifier(n))
    {
        return Err(format!(
            "{}: `{bad}` is not a plain variable; a port copies each variable of an arg-min/arg-max",
            r.describe()
        ));
    }
    Ok(ArgExtremum {
        target,
        partners,
        max,
    })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduction(kind: ReductionKind, ties: Option<TieBreak>, index: &[&str]) -> Reduction {
        Reduction {
            target: "best".into(),
            operator: if kind == ReductionKind::Argmax {
                advisor::model::RedOp::Max
            } else {
                advisor::model::RedOp::Min
            },
            kind,
            c_type: "double".into(),
            strategy: String::new(),
            index: index.iter().map(|s| s.to_string()).collect(),
            ties,
            lines: vec![3],
        }
    }

    #[test]
    fn earliest_ties_are_generated_and_latest_ones_refused() {
        let same = |n: &str| n.to_string();
        let first = check(
            &reduction(ReductionKind::Argmin, Some(TieBreak::First), &["idx"]),
            &same,
        )
        .unwrap();
        assert_eq!(first.partners, ["idx"]);
        assert_eq!(
            first.better("v", "r", "kv", "kr"),
            "(v < kv || (v == kv && r < kr))"
        );
        let max = check(
            &reduction(ReductionKind::Argmax, Some(TieBreak::First), &["j", "k"]),
            &same,
        )
        .unwrap();
        assert_eq!(max.op(), "max");
        let last = check(
            &reduction(ReductionKind::Argmin, Some(TieBreak::Last), &["idx"]),
            &same,
        )
        .unwrap_err();
        assert!(
            last.contains("ties keep the latest iteration (`<=`)"),
            "{last}"
        );
        let member = check(
            &reduction(ReductionKind::Argmin, Some(TieBreak::First), &["s->idx"]),
            &same,
        )
        .unwrap_err();
        assert!(
            member.contains("`s->idx` is not a plain variable"),
            "{member}"
        );
    }
}
