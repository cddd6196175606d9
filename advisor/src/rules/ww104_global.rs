//! WW104 global a GPU cannot hold: a volatile or thread-local global the loop uses, itself
//! or in a function it calls (other globals are memory the dependence tests judge).

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW104,
    name: "global a GPU cannot hold",
    explanation: "a volatile global may change outside the program and a thread-local one exists per host thread: a device copy can follow neither (other globals are copied like arrays)",
    gpu: "a device copy of a volatile global cannot follow changes made outside the program, and a thread-local global has one value per host thread, which device threads do not have",
    fix: "read its value once before the loop into a local and pass it to the kernel; keep writes to it on the host",
    example: Example {
        source: include_str!("examples/ww104.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// The loop uses, at `line`, a global no device copy can stand for; `why` says which and
/// how (`reads the volatile global variable `gain`: ...`).
pub fn unsupported(why: String, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        why,
        vec![line],
        Some("keep this variable out of the loop, or pass its value as a parameter".into()),
    )
}

/// A function the loop calls at `line` uses a global no device copy can stand for; `why`
/// names the function, as `unsupported` words the loop's own use.
pub fn in_callee(why: String, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        why,
        vec![line],
        Some("pass its value to the function as a parameter instead".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
