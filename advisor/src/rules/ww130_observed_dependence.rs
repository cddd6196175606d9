//! WW130 observed dependence: a profiled run of the program carried a value between two
//! iterations of the loop (dynamic evidence, valid for the profiled inputs).

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW130,
    name: "dependence observed in a profiled run",
    explanation: "a run under `warpwise profile` saw one iteration touch an element another iteration wrote (two iterations and the element are in the profile): the loop the static analysis left undecided does carry a dependence, for those inputs",
    gpu: "the dependence happened on real data: threads running those two iterations concurrently would race on the element, so a port gives wrong results on those inputs",
    fix: "restructure the loop (a parallel scan, atomics for updates chosen by data, privatization of a scratch array) or port another loop of the nest; the profile names the two accesses and their distance in iterations",
    example: Example {
        source: include_str!("examples/ww130.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// The profile observed dependences at `lines`: `observed` describes each, `runs` says
/// how many runs gave the evidence (`1 profiled run`).
pub fn observed(lines: Vec<u32>, observed: &str, runs: &str) -> Finding {
    let list: Vec<String> = lines.iter().map(u32::to_string).collect();
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        format!(
            "not-friendly (observed dependence at lines {}): {observed} (dynamic evidence from {runs})",
            list.join(", ")
        ),
        lines,
        Some(
            "the profiled run really carried a value between iterations; restructure the loop (scan, atomics, privatization) before porting it"
                .into(),
        ),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
