//! WW203 divergent branch (`warpwise check`): a branch whose condition differs between the
//! threads of a warp, so the warp runs both sides one after the other.

use super::{Code, Example, Finding, Rule, Subject};
use crate::model::{Reason, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW203,
    name: "divergent branch",
    explanation: "in a CUDA kernel, a branch whose condition is true for some threads of a warp and false for others, in some warps (a boundary along the thread index), every warp (a condition that alternates between neighbouring threads), every warp or some as a period the analysis does not know decides (`(i + 1) % rows == 0`: every warp when `rows` is 2 to 32, the warps holding a multiple above that) or any warp (a condition on data read per thread) (`warpwise check`)",
    gpu: "the 32 threads of a warp share one instruction stream: when they disagree on a branch, the warp runs one side with the other side's lanes masked off, then the other side, then joins; a warp that splits takes the time of both sides together, its lanes idle for the side they do not take, while a warp whose threads agree runs only its own side",
    fix: "where the branch only chooses between two values (`if (c) x = a; else x = b;`), compute both and select (`x = c ? a : b`) or use `min`/`max`, which compile without a branch; a guard on the thread index at a boundary (`if (i < n)`) splits at most one warp per row of threads and usually needs nothing; a condition that alternates between neighbouring threads is fixed by renumbering the work so that it changes only every 32 threads, and so is one that holds on one thread in every `rows` (`(i + 1) % rows == 0`) where `rows` can be 32 or less; for a condition on data, sort or bin the work so that the threads of a warp agree",
    example: Example {
        source: include_str!("examples/ww203.cu"),
        verdict: Verdict::NotFriendly,
        subject: Subject::Kernel,
    },
};

/// What the two sides of the branch do, which decides the fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The sides compute a value and join, with nothing that loads, stores or calls: it can
    /// be written as a select.
    Value,
    /// As `Value`, and the value chosen is one of the two operands of the comparison: a
    /// `min` or `max`.
    MinMax,
    /// Anything else.
    Work,
}

/// How a branch splits warps, in the classes that get a finding (`check` classifies; the
/// rule only words it, so it does not depend on the checker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Only where the condition changes along the thread index (a boundary).
    SomeWarps,
    /// Inside every warp (`threadIdx.x % 2`).
    EveryWarp,
    /// A remainder by a size the warp shares but the analysis does not know
    /// (`(i + 1) % rows == 0`): every warp when the period is 2 to 32, the warps holding
    /// the lane where it holds above that.
    Periodic,
    /// By data each thread reads: any warp.
    ByData,
}

/// What a finding says about one branch.
#[derive(Debug)]
pub struct Divergent<'a> {
    /// The condition as written.
    pub condition: &'a str,
    pub loop_exit: bool,
    pub split: Split,
    /// Why the analysis classified it so.
    pub why: &'a str,
    pub choice: Choice,
}

/// The finding for the branch at `line`, which splits warps as `d.split` says. A branch
/// whose threads always agree, or whose variation the analysis cannot classify, gets none:
/// there is nothing it can justify saying.
pub fn finding(d: &Divergent, line: u32) -> Reason {
    let class = match d.split {
        Split::SomeWarps => "diverges in some warps",
        Split::EveryWarp => "diverges in every warp",
        Split::Periodic => "diverges in every warp or some, by its period (periodic)",
        Split::ByData => "diverges by data (data-dependent)",
    };
    let what = if d.loop_exit { "loop exit" } else { "branch" };
    let message = format!(
        "{what} `{}` {class}: {}; a warp that splits runs both sides one after the other",
        d.condition, d.why
    );
    let help = match (d.choice, d.split) {
        (Choice::MinMax, _) => "the branch keeps the smaller or the larger of the two values it \
             compares: write it with `min`/`max` (`fminf`/`fmaxf` for floats), which compile \
             to one instruction and no branch"
            .to_string(),
        (Choice::Value, _) => "both sides only compute a value: compute both and select \
             (`x = c ? a : b`), which compiles without a branch, so no warp splits"
            .to_string(),
        (_, Split::SomeWarps) => "the condition changes once along the thread index (a \
             boundary such as a bounds guard), so at most one warp per row of threads splits: \
             this is usually fine as it is"
            .to_string(),
        (_, Split::EveryWarp) => "the condition alternates between neighbouring threads: \
             renumber the work so that it changes only every 32 threads (let the first threads \
             of the block take one case and the next ones the other), so that whole warps agree"
            .to_string(),
        (_, Split::Periodic) => "the condition holds on one thread in every period along the \
             thread index: where the period can be 32 or less, renumber the work so that the \
             threads where it holds are consecutive (or handle them in a pass of their own), so \
             that whole warps agree; where it is always above 32, a warp holds at most one \
             such thread, only the warps that hold one split, and this is usually fine"
            .to_string(),
        _ => "the condition depends on data each thread reads: sort or bin the work by the \
              condition before the launch, so that the threads of a warp agree"
            .to_string(),
    };
    Finding::new(&RULE, Verdict::NotFriendly, message, vec![line], Some(help)).reason
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
