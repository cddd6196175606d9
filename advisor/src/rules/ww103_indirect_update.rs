//! WW103 indirect read-modify-write: an element chosen by data is read, updated and
//! written back; a histogram reduction (a note) when nothing else touches the array,
//! otherwise a question for a profile.

use super::{Code, Example, Finding, Rule};
use crate::model::{Verdict, Witness};

pub const RULE: Rule = Rule {
    code: Code::WW103,
    name: "indirect read-modify-write",
    explanation: "an element chosen by data is read, updated and written back (a histogram); when nothing else in the loop touches the array it is a histogram reduction (a note: atomics), otherwise iterations collide when indices repeat",
    gpu: "threads that pick the same element race on its read-modify-write; atomics serialize only the colliding updates",
    fix: "when nothing else touches the array, use atomics (`#pragma omp atomic update`, `atomicAdd`) or per-block private copies merged at the end; otherwise the loop needs the data's guarantee that indices do not repeat (run `warpwise profile`)",
    example: Example {
        source: include_str!("examples/ww103.c"),
        verdict: Verdict::Friendly,
        subject: super::Subject::Loop,
    },
};

/// The note for histogram reduction `name` into `target`, combined at `lines`; `strategy`
/// is how a port combines the updates.
pub fn histogram(name: &str, target: &str, lines: Vec<u32>, strategy: &str) -> Finding {
    Finding::new(
        &RULE,
        Verdict::Friendly,
        format!(
            "{name} is a histogram reduction: iterations read, combine and write back elements chosen per iteration, and nothing else in the loop touches `{target}`"
        ),
        lines,
        Some(format!("port it as a parallel reduction: {strategy}")),
    )
}

/// `updated` (an element of `array` at an index read from data) is read and written back
/// at `lines` while something else in the loop touches `array`; whether indices repeat is
/// a property of the data, so the loop needs a profile. `shown` is the conditional
/// witness's text, when one was built.
pub fn conditional(
    updated: &str,
    array: &str,
    lines: Vec<u32>,
    shown: Option<(String, Witness)>,
) -> Finding {
    let (text, witness) = match shown {
        Some((text, witness)) => (format!(": {text}"), Some(witness)),
        None => (String::new(), None),
    };
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        format!(
            "`{updated}` is read and written back at an index chosen by data: iterations with equal indices update the same element of `{array}`{text}"
        ),
        lines,
        Some("use atomicAdd (or per-block private copies merged at the end)".into()),
    )
    .with_witness(witness)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
