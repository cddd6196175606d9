//! WW001 GPU-friendly loop: not a finding but the note SARIF output gives a loop that can
//! run on a GPU as it is.

use super::{Code, Example, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW001,
    name: "GPU-friendly loop",
    explanation: "no iteration depends on another, the loop is normalizable and calls nothing host-only: it can be offloaded as it is (OpenMP target pragma or a CUDA kernel)",
    gpu: "a kernel runs every iteration at once, in no order; this loop's result does not depend on the order",
    fix: "`warpwise emit --target openmp` writes the port (or `warpwise emit` the CUDA kernel), and `warpwise validate` checks it on the program's own data",
    example: Example {
        source: include_str!("examples/ww001.c"),
        verdict: Verdict::Friendly,
        subject: super::Subject::Loop,
    },
};

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
