//! WW202 shared-memory bank conflict (`warpwise check`): the lanes of a warp touch several
//! distinct words of one bank, so the access is served in that many passes.

use super::{Code, Example, Finding, Rule, Subject};
use crate::model::{Reason, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW202,
    name: "shared-memory bank conflict",
    explanation: "in a CUDA kernel, the threads of a warp access distinct 4-byte words of the same shared-memory bank, so the access is split into as many passes as the most words one bank holds (`warpwise check`)",
    gpu: "shared memory is 32 banks of 4-byte words, word w in bank w % 32; a warp's access takes one pass when its threads touch at most one word per bank (threads reading the same word share it), and one more pass for each further word in the busiest bank: a 32x32 float tile read down a column puts all 32 threads in one bank, 32 times slower",
    fix: "pad each row by one element (`__shared__ float tile[32][33]` for a 32x32 tile) so that a column's elements fall in different banks, or let threadIdx.x index the last subscript",
    example: Example {
        source: include_str!("examples/ww202.cu"),
        verdict: Verdict::NotFriendly,
        subject: Subject::Kernel,
    },
};

/// The finding for the access `access` at `line`, `degree` passes per warp, neighbouring
/// threads `stride` bytes apart where known.
pub fn finding(access: &str, degree: &str, stride: Option<&str>, line: u32) -> Reason {
    let apart = match stride {
        Some(s) => format!(" (neighbouring threads are {s} bytes apart)"),
        None => String::new(),
    };
    let message = format!(
        "`{access}`: a {degree}-way bank conflict, {degree} times the passes the warp's \
         words need{apart}"
    );
    let help = "pad each row of the array by one element (`[32][33]` for a 32x32 tile of \
                4-byte elements), so that elements a row apart fall in different banks, or let \
                threadIdx.x index the last subscript"
        .to_string();
    Finding::new(&RULE, Verdict::NotFriendly, message, vec![line], Some(help)).reason
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
