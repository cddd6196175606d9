//! The registry of findings: one module per code, each owning the code's documentation
//! (`warpwise explain`), an example loop that shows it, and the text of its findings.
//!
//! A code never changes meaning; retired codes are not reused. The analyses decide *that*
//! something is wrong; the rule module decides how it reads and what it does to the loop's
//! verdict, so a finding's wording and severity live in one place per cause.

pub mod ww001_friendly;
pub mod ww101_carried_dependence;
pub mod ww102_reduction;
pub mod ww103_indirect_update;
pub mod ww104_global;
pub mod ww105_host_call;
pub mod ww106_function_pointer;
pub mod ww107_not_normalizable;
pub mod ww108_error_path;
pub mod ww110_may_alias;
pub mod ww111_undecided_dependence;
pub mod ww112_callee_effects;
pub mod ww120_allocation;
pub mod ww130_observed_dependence;
pub mod ww201_uncoalesced;
pub mod ww202_bank_conflict;
pub mod ww203_divergent_branch;

pub use crate::code::Code;

use crate::model::{Reason, Verdict, Witness};

/// A finding's code, its short name, the one-line explanation used in docs, why it matters
/// for a GPU port, how to deal with it, and a loop that shows it.
#[derive(Debug)]
pub struct Rule {
    pub code: Code,
    pub name: &'static str,
    pub explanation: &'static str,
    pub gpu: &'static str,
    pub fix: &'static str,
    pub example: Example,
}

/// A small file that shows the rule's finding: printed by `warpwise explain` and analysed
/// by the rule's fixture test, so the documentation cannot drift from what the analyses
/// say. A loop rule's example is C with a loop marked `/* LOOP */`; a kernel rule's is
/// CUDA C with an access marked `/* ACCESS */`, or a branch marked `/* BRANCH */`.
#[derive(Debug)]
pub struct Example {
    pub source: &'static str,
    /// The marked loop's verdict under `analyze`'s defaults (for WW130, after profiling
    /// the example's `main`). A kernel example has no loop: `NotFriendly`, since a finding
    /// of `check` is something to fix.
    pub verdict: Verdict,
    pub subject: Subject,
}

/// What a rule's findings are about, and so which command reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A sequential loop (`warpwise analyze`).
    Loop,
    /// An access or branch of an existing CUDA kernel (`warpwise check`).
    Kernel,
}

/// Every code a finding of `warpwise analyze` can carry, in code order.
pub const ALL: &[&Rule] = &[
    &ww101_carried_dependence::RULE,
    &ww102_reduction::RULE,
    &ww103_indirect_update::RULE,
    &ww104_global::RULE,
    &ww105_host_call::RULE,
    &ww106_function_pointer::RULE,
    &ww107_not_normalizable::RULE,
    &ww108_error_path::RULE,
    &ww110_may_alias::RULE,
    &ww111_undecided_dependence::RULE,
    &ww112_callee_effects::RULE,
    &ww120_allocation::RULE,
    &ww130_observed_dependence::RULE,
];

/// Every code a finding of `warpwise check` can carry, in code order.
pub const KERNEL: &[&Rule] = &[
    &ww201_uncoalesced::RULE,
    &ww202_bank_conflict::RULE,
    &ww203_divergent_branch::RULE,
];

/// Not a finding: the note SARIF output gives a loop that can run on a GPU.
pub const FRIENDLY: &Rule = &ww001_friendly::RULE;

/// Every rule, the friendly note first, then the loop rules, then the kernel rules.
pub fn every() -> impl Iterator<Item = &'static Rule> {
    std::iter::once(FRIENDLY)
        .chain(ALL.iter().copied())
        .chain(KERNEL.iter().copied())
}

/// The rule `text` names (`WW101`, `ww101`), if it is one.
pub fn find(text: &str) -> Option<&'static Rule> {
    let code = Code::parse(text)?;
    every().find(|r| r.code == code)
}

/// A finding about to join a loop's report: its reason and the verdict it implies (a
/// note implies `Friendly`, which leaves the loop's verdict as it is).
#[derive(Clone, Debug)]
pub struct Finding {
    pub reason: Reason,
    pub verdict: Verdict,
}

impl Finding {
    /// A finding of `rule` at `lines` (sorted, deduplicated, unknown lines dropped).
    pub fn new(
        rule: &Rule,
        verdict: Verdict,
        message: String,
        mut lines: Vec<u32>,
        help: Option<String>,
    ) -> Finding {
        lines.sort_unstable();
        lines.dedup();
        lines.retain(|l| *l != 0);
        Finding {
            reason: Reason {
                code: rule.code,
                message,
                lines,
                help,
                witness: None,
                instances: Vec::new(),
                read_at: None,
            },
            verdict,
        }
    }

    /// The finding with the two iterations that show it.
    pub fn with_witness(mut self, witness: Option<Witness>) -> Finding {
        self.reason.witness = witness;
        self
    }
}

#[cfg(test)]
mod example_check;
