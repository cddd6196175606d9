//! WW108 error path: a note, not an obstacle; host-only calls on a branch that only leads
//! to a call that does not return (`fprintf(stderr, ...)` then `exit(1)`) stay on the host.

use super::{Code, Example, Finding, Rule};
use crate::model::{ErrorEnd, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW108,
    name: "error path",
    explanation: "a branch of the loop's body only leads to a call that does not return (`exit`, `abort`, a failed `assert`, `longjmp`, a function of the program that always ends in one); its host-only calls do not stop a port; a note",
    gpu: "a kernel cannot print or end the program, but it can record that an iteration failed: a port sets an error flag with the first failing iteration on the device, skips the rest of that iteration, and after the kernel runs that iteration again on the host, where the message and the exit happen as in the sequential program",
    fix: "nothing to do: `warpwise emit --target openmp` writes the flag and the re-run; by hand, replace the branch's body with an atomic minimum of the iteration, and after the kernel run the loop's body for that iteration on the host",
    example: Example {
        source: include_str!("examples/ww108.c"),
        verdict: Verdict::Friendly,
        subject: super::Subject::Loop,
    },
};

/// The note for the error branch of the `if` at `condition_line` that `ending` (called at
/// `line`) ends, with the other host-only calls it makes (`also`, quoted names).
pub fn note(
    ending: &str,
    end: ErrorEnd,
    line: u32,
    condition_line: u32,
    also: &[String],
) -> Finding {
    let where_ = if also.is_empty() {
        format!("the branch of the `if` at line {condition_line}")
    } else {
        format!(
            "the branch of the `if` at line {condition_line}, which also calls {}",
            also.join(", ")
        )
    };
    let message = match end {
        ErrorEnd::Exit => format!(
            "`{ending}` at line {line} ends the program on an error path ({where_}): a port sets an error flag on the device and, after the kernel, reports the first failing iteration and exits as the program would (it runs that iteration again on the host)"
        ),
        ErrorEnd::Jump => format!(
            "`{ending}` at line {line} leaves the loop on an error path ({where_}): a port sets an error flag on the device and, after the kernel, runs the first failing iteration again on the host, which leaves as the program would"
        ),
    };
    Finding::new(
        &RULE,
        Verdict::Friendly,
        message,
        vec![condition_line, line],
        Some("`warpwise emit --target openmp` writes the flag and the re-run".into()),
    )
}

/// What a port of a loop with that error path assumes.
pub fn assumption(ending: &str, end: ErrorEnd, line: u32) -> String {
    match end {
        ErrorEnd::Exit => format!(
            "the error path ending in `{ending}` at line {line}: when it is taken, a port has also run the iterations after the first failing one before the program exits; what they wrote is assumed unread by exit handlers (`atexit`)"
        ),
        ErrorEnd::Jump => format!(
            "the error path ending in `{ending}` at line {line}: when it is taken, a port has also run the iterations after the first failing one before the program goes on elsewhere, and it finds what they wrote (the sequential loop stops at the failing iteration): assumed not read after the jump"
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
