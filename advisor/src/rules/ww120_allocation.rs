//! WW120 allocation in the loop: a warning, not an obstacle; device code can allocate,
//! slowly and from a small heap.

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW120,
    name: "allocation in the loop",
    explanation: "`malloc`/`free` exist on the device but allocate from a small device heap",
    gpu: "`malloc`/`free` exist in device code but allocate from a small device heap (8 MB by default in CUDA), slowly and per thread",
    fix: "allocate the buffers once before the kernel (one slice per thread, or shared memory) and pass them in",
    example: Example {
        source: include_str!("examples/ww120.c"),
        verdict: Verdict::Friendly,
        subject: super::Subject::Loop,
    },
};

const HELP: &str = "allocate once before the kernel";

/// The loop calls allocator `name` at `line`.
pub fn call(name: &str, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::Friendly,
        format!("calls `{name}` in the loop"),
        vec![line],
        Some(HELP.into()),
    )
}

/// `callee`, called at `line`, calls the allocators `allocators` (quoted names).
pub fn in_callee(callee: &str, allocators: &[String], line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::Friendly,
        format!("`{callee}` calls {} in the loop", allocators.join(", ")),
        vec![line],
        Some(HELP.into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
