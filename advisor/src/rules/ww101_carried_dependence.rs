//! WW101 loop-carried dependence: an iteration reads or overwrites data another iteration
//! writes, shown by two concrete iterations (the witness).

use super::{Code, Example, Finding, Rule};
use crate::model::{Access, PairKind, Verdict, Witness};

pub const RULE: Rule = Rule {
    code: Code::WW101,
    name: "loop-carried dependence",
    explanation: "an iteration reads or overwrites data another iteration writes",
    gpu: "GPU threads run iterations concurrently: an iteration that reads what another writes sees the old or the new value depending on timing, and two writes race; the result differs from the sequential program",
    fix: "restructure the loop (a prefix sum becomes a parallel scan, a stencil updating in place reads from a copy), or parallelize an inner or outer loop that carries no dependence; the witness in the report names two iterations and the element they share",
    example: Example {
        source: include_str!("examples/ww101.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// A dependence of `kind` (`read-after-write`, ...) between accesses `a` and `b` to
/// `array`, at a constant `distance` in iterations when there is one; `shown` is the
/// witness's text. A read of what the previous iteration wrote is a recurrence, and the
/// help says what replaces one.
pub fn memory(
    kind: PairKind,
    array: &str,
    distance: Option<i64>,
    a: &Access,
    b: &Access,
    shown: &str,
    witness: Witness,
) -> Finding {
    let distance_text = distance
        .map(|d| format!(" at distance {d}"))
        .unwrap_or_default();
    let recurrence = distance == Some(1) && kind == PairKind::ReadAfterWrite;
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        format!(
            "{kind} dependence on `{array}`{distance_text}: `{}` (line {}) and `{}` (line {}) in different iterations: {shown}",
            a.text, a.line, b.text, b.line
        ),
        vec![a.line, b.line],
        recurrence.then(|| {
            "a recurrence like this (e.g. a prefix sum) needs a parallel scan algorithm".into()
        }),
    )
    .with_witness(Some(witness))
}

/// A scalar `name` that iteration `k` writes and `k + 1` reads (not a reduction), updated
/// at `lines`; `shown` is the witness's text.
pub fn scalar(name: &str, lines: Vec<u32>, shown: &str, witness: Witness) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        format!("`{name}` carries a value from one iteration to the next: {shown}"),
        lines,
        None,
    )
    .with_witness(Some(witness))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
