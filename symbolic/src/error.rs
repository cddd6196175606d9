//! Error types of the symbolic engine: every failure is a value, nothing panics.

use std::fmt;

/// Why a symbolic operation could not produce a result.
///
/// Callers decide what an error means (for range analysis it usually means "unknown bound").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SymError {
    /// A division, modulo or shift by the constant zero (or a negative shift).
    #[error("division by zero")]
    DivisionByZero,
    /// The result would exceed the size caps (number of products, degree, nesting, shift width).
    #[error("expression too large: {0}")]
    TooLarge(String),
    /// The result cannot be written with min/max only at the top level.
    #[error("not representable in normal form: {0}")]
    NotNormalForm(String),
    /// A divisor, modulus or shift amount is not a constant integer.
    #[error("operand must be an integer constant: {0}")]
    NonConstant(String),
    /// An operation the engine does not model (e.g. `x & y` with a non-mask constant).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Text could not be parsed.
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// Evaluation failed.
    #[error("evaluation failed: {0}")]
    Eval(#[from] EvalError),
}

/// Why an expression could not be evaluated to a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A variable has no value in the context.
    #[error("variable `{0}` has no value")]
    UnboundVar(String),
    /// A division or modulo by zero happened at evaluation time.
    #[error("division by zero")]
    DivisionByZero,
    /// An operation that needs integers got a non-integer (e.g. a shift amount).
    #[error("non-integer operand: {0}")]
    NonInteger(String),
    /// A value would be unreasonably large (e.g. a huge shift).
    #[error("value too large: {0}")]
    TooLarge(String),
}

/// A syntax error with the byte offset where it was detected (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the parsed string.
    pub pos: usize,
    /// What went wrong.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parse error at offset {}: {}", self.pos, self.msg)
    }
}

impl std::error::Error for ParseError {}
