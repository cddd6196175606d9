//! What evaluating a report's expressions takes (values by name) and how it fails: shared
//! by `eval` and the `memo` that serves it.

use std::collections::BTreeMap;

/// Integer values of the program's variables, by the names reports use (`n`, `c->n`).
pub type Values = BTreeMap<String, i64>;

/// Why an expression has no number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalFailure {
    /// The text is not an expression the symbolic engine reads.
    Unparsable(String),
    /// These variables have no value.
    Missing(Vec<String>),
    /// The value is not an integer or does not fit in 64 bits.
    NotInteger(String),
}

impl std::fmt::Display for EvalFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalFailure::Unparsable(why) => write!(f, "cannot read the expression: {why}"),
            EvalFailure::Missing(names) => write!(f, "no value for {}", names.join(", ")),
            EvalFailure::NotInteger(v) => write!(f, "the value {v} is not a 64-bit integer"),
        }
    }
}
