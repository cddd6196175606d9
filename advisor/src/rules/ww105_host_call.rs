//! WW105 host-only call: the loop calls a function with no device version, or one no
//! analysed file defines.

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW105,
    name: "host-only call",
    explanation: "the loop calls a function with no device version: a host library function, or a function of the program that none of the analysed files defines (its effects are unknown)",
    gpu: "device code can only call device functions: host library calls (I/O, locks, the C library beyond math) and functions the analysis cannot see have no device version",
    fix: "move the call out of the loop, replace it with device code, or analyse the file that defines the function (give it on the command line or through `compile_commands.json`)",
    example: Example {
        source: include_str!("examples/ww105.c"),
        verdict: Verdict::NotFriendly,
        subject: super::Subject::Loop,
    },
};

/// The call at `line`; `why` names the callee and what makes it host-only.
pub fn call(why: String, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        why,
        vec![line],
        Some("move the call out of the loop, or replace it with device code".into()),
    )
}

/// The call at `line`, on an error path a port cannot run again exactly on the host
/// (`detail` says why).
pub fn on_error_path(why: String, detail: &str, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NotFriendly,
        format!("{why}; it is on an error path, but a port could not run the failing iteration again on the host as the program ran it: {detail}"),
        vec![line],
        Some("move the call out of the loop, or replace it with device code".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
