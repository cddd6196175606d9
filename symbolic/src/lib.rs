//! Symbolic expressions over the rationals (thesis §7): normal form, signs, monotonicity, solving.
//!
//! Variables denote integers (C program values). Expressions are sums of products with exact
//! rational coefficients ([`Poly`]), or a flat `min`/`max` of those at the top level ([`Expr`]).
//! C's integer `/` and `%` are modelled faithfully as atoms (truncating division and remainder),
//! next to floor division/modulo which `>>` and `&` masks map to; see [`Atom`].

mod arith;
mod coeff;
pub mod compare;
pub mod error;
pub mod expr;
pub mod fast_eval;
#[cfg(test)]
mod fastpath_tests;
pub mod monotonicity;
pub mod parse;
pub mod poly;
pub mod print;
pub mod rewrite;
pub mod sign;
pub mod solve;
pub mod substitution;
pub mod term;
pub mod var;

pub use compare::{compare, get_max, get_min, max_of, min_of, Cmp};
pub use error::{EvalError, ParseError, SymError};
pub use expr::Expr;
pub use monotonicity::{
    monotonicity, monotonicity_by_set, monotonicity_with_assumptions, Assumption, Monotonicity,
};
pub use parse::{parse_equation, parse_expr, parse_signs, parse_term, parse_values};
pub use poly::{Atom, Monomial, Poly};
pub use rewrite::{prove_equal, simplify, simplify_expr, simplify_report, SimplifyReport};
pub use sign::{sign_by_rules, SignEnv, SignSet};
pub use solve::{solve, solve_signs, Alternative, Equation, IntegerRange, Semantics, Solution};
pub use substitution::{sign_by_substitution, sign_of};
pub use term::{BinOp, Term};
pub use var::Var;
