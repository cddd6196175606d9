//! WW106 call through a function pointer: the callee is not known statically.

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW106,
    name: "call through a function pointer",
    explanation: "the callee is unknown statically; device code needs it resolved",
    gpu: "device code needs every callee compiled for the device; a pointer's target is unknown statically",
    fix: "call the function directly, or compile every possible target for the device (`__device__`, `declare target`) and pass the function's index instead of its address",
    example: Example {
        source: include_str!("examples/ww106.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// The indirect call at `line`.
pub fn call(line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        "calls through a function pointer".into(),
        vec![line],
        Some("call the function directly, or port every possible target as `__device__`".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
