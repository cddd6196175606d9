//! WW112 callee effects unknown: the loop calls a function whose accesses the analysis
//! cannot summarize (mutual recursion, unresolved function pointers, writes through
//! pointers read from memory).

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW112,
    name: "callee effects unknown",
    explanation:
        "the loop calls a function whose side effects are not fully known (mutual recursion, a recursion writing through a pointer it changes, a function pointer whose targets the program does not show, a write through a pointer it reads from memory); a profile settles it",
    gpu: "the callee's accesses take part in the loop's dependences; when some are unknown (mutual recursion, a function pointer, a write through a pointer it reads from memory), so is the loop",
    fix: "port the callee and check its accesses, or run `warpwise profile` (it tracks accesses inside callees)",
    example: Example {
        source: include_str!("examples/ww112.c"),
        verdict: Verdict::NeedsProfile,
        subject: super::Subject::Loop,
    },
};

/// The call at `line`; `why` says which callee and what about it is unknown.
pub fn call(why: String, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        why,
        vec![line],
        Some("port the callee and check its accesses, or run `warpwise profile` (it tracks accesses inside callees)".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
