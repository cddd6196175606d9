//! WW107 not normalizable: the loop cannot be rewritten to run from 0 with step 1 over a
//! count known when it starts.

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW107,
    name: "not normalizable",
    explanation: "the loop cannot be rewritten to run from 0 with step 1 over a fixed count",
    gpu: "a kernel launch needs the iteration count before it starts: threads are numbered 0..n-1 and map back to the loop's index",
    fix: "rewrite the loop as `for (i = lo; i < hi; i += step)` with a bound that does not change in the body (copy it into a local first), without `break`/`return` out of it",
    example: Example {
        source: include_str!("examples/ww107.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// The loop's shape, at the keyword's `line`, is not one a kernel can take; `why` says
/// what (an early exit, no induction variable, ...).
pub fn shape(why: String, line: u32) -> Finding {
    Finding::new(&RULE, Verdict::NotFriendly, why, vec![line], None)
}

/// The bound reads `bounds` (quoted names), which the loop may change.
pub fn bound_changes(bounds: &[String], line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        format!(
            "the loop bound reads {} which may change inside the loop",
            bounds.join(", ")
        ),
        vec![line],
        Some("copy the bound into a local variable before the loop".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
