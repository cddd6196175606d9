//! The per-function work budget: dependence pair tests counted in units, not wall time, so
//! that a function's verdicts are the same on every machine and every run. A function that
//! spends its budget still gets a report for every loop: the pairs left untested are
//! undecided (WW111, `needs-profile`), and the loop says why in its assumptions.

use std::cell::Cell;

/// Pair tests one function may make by default. The real applications of
/// docs/evaluation.md need at most a tenth of it in their largest function (fasttree); a
/// generated body of thousands of statements reaches it.
pub const DEFAULT_PAIR_TESTS: u64 = 400_000;

/// Why a pair the budget left untested is undecided (the pair's WW111 says it).
pub const UNTESTED: &str = "the function's analysis budget is spent: the pair was not tested";

/// What is left of one function's budget.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    left: Cell<u64>,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            left: Cell::new(limit),
        }
    }

    /// Takes one unit; `false` when none is left.
    pub fn spend(&self) -> bool {
        match self.left.get() {
            0 => false,
            n => {
                self.left.set(n - 1);
                true
            }
        }
    }

    pub fn exhausted(&self) -> bool {
        self.left.get() == 0
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The caveat a loop whose pairs went untested states.
    pub fn caveat(&self) -> String {
        format!(
            "analysis budget exceeded: the function used its {} dependence pair tests (`--work-budget`); the pairs left untested are undecided",
            self.limit
        )
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(DEFAULT_PAIR_TESTS)
    }
}
