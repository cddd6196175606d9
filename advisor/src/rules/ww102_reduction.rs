//! WW102 reduction: a note, not an obstacle; values that accumulate over the iterations
//! with an associative, commutative operator port as a parallel reduction.

use super::{Code, Example, Finding, Rule};
use crate::model::Verdict;

pub const RULE: Rule = Rule {
    code: Code::WW102,
    name: "reduction",
    explanation: "a scalar or one element accumulates over iterations with an associative, commutative operator (sum, product, bit operations, logical and/or, min/max, arg-min); a note: the loop ports as a parallel reduction",
    gpu: "the iterations all combine into one value: in parallel each thread keeps a partial result and the partials are combined, which is correct for associative, commutative operators (floating-point sums round differently)",
    fix: "port it as a reduction: OpenMP `reduction(+: s)` (what `emit --target openmp` writes), or a CUDA block reduction with one atomic per block",
    example: Example {
        source: include_str!("examples/ww102.c"),
        verdict: Verdict::Friendly,
        subject: super::Subject::Loop,
    },
};

/// What kind of value accumulates, for the note's wording.
#[derive(Debug)]
pub enum Accumulates<'a> {
    /// Every assigning iteration assigns the same value.
    ConstantAssignment,
    /// A scalar combined with the operator named (`sum`, `max`).
    Scalar(&'a str),
    /// One element every iteration updates.
    Element(&'a str),
    /// One element every iteration updates, which other updates with the same operator
    /// may touch too (`bal[0] -= x` in one branch, `bal[0] += y` in the other).
    SharedElement(&'a str),
    /// An arg-min or arg-max: `op` is `min`/`max`, `compared` the value compared and
    /// `carried` the variables taken from the winning iteration.
    Arg {
        op: &'a str,
        compared: &'a str,
        carried: &'a [String],
    },
}

/// The note for reduction `name` (`sum` as the report describes it), combined at `lines`;
/// `strategy` is how a port combines the partial results.
pub fn note(name: &str, what: Accumulates, lines: Vec<u32>, strategy: &str) -> Finding {
    let message = match what {
        Accumulates::ConstantAssignment => format!(
            "{name} is a constant-assignment reduction: the iterations that assign it all assign the same value, so their order does not matter"
        ),
        Accumulates::Scalar(op) => {
            format!("{name} is a {op} reduction: the iterations combine into it in any order")
        }
        Accumulates::Element(op) => format!(
            "{name} is a {op} reduction into one element: every iteration updates the same address, nothing else touches it"
        ),
        Accumulates::SharedElement(op) => format!(
            "{name} is a {op} reduction into one element: every iteration updates the same address, and the only other accesses that may touch it are {op} updates, which commute with it"
        ),
        Accumulates::Arg {
            op,
            compared,
            carried,
        } => {
            let which = if op == "min" { "minimum" } else { "maximum" };
            format!(
                "{name} is an arg-{op} reduction: `{}` comes from the iteration holding the {which} `{compared}`",
                carried.join("`, `")
            )
        }
    };
    Finding::new(
        &RULE,
        Verdict::Friendly,
        message,
        lines,
        Some(format!("port it as a parallel reduction: {strategy}")),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
