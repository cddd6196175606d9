//! Interval bounds with explicit infinities, and the side-aware min/max/arithmetic on them.
//!
//! Every operation is told which side of an interval it computes ([`Side::Lo`] or
//! [`Side::Hi`]), because that decides what a sound fallback is: when the symbolic engine
//! cannot represent a result (an incomparable `max` of a `min`, an oversized polynomial),
//! a lower bound may only move down and an upper bound only up, ending at the infinity of
//! its side. This is the thesis' note under Table 8.4 ("if the operators fail for a given
//! bound then the value is replaced by -inf (+inf)") made systematic.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use std::fmt;
use symbolic::{compare, get_max, get_min, sign_of, Cmp, Expr, SignEnv, SignSet, SymError};

/// Polynomials with more products than this become infinite: bounds that grow without
/// converging would otherwise make every later operation slower.
pub const MAX_BOUND_SIZE: usize = 48;

/// One end of an interval.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    NegInf,
    Finite(Expr),
    PosInf,
}

/// Which end of an interval a computation produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Lo,
    Hi,
}

impl Side {
    pub fn flip(self) -> Side {
        match self {
            Side::Lo => Side::Hi,
            Side::Hi => Side::Lo,
        }
    }

    /// The bound that claims nothing on this side.
    pub fn infinity(self) -> Bound {
        match self {
            Side::Lo => Bound::NegInf,
            Side::Hi => Bound::PosInf,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::NegInf => f.write_str("-inf"),
            Bound::PosInf => f.write_str("+inf"),
            Bound::Finite(e) => write!(f, "{e}"),
        }
    }
}

impl From<Expr> for Bound {
    fn from(e: Expr) -> Bound {
        Bound::Finite(e)
    }
}

impl Bound {
    pub fn constant(c: i64) -> Bound {
        Bound::Finite(Expr::constant(c))
    }

    pub fn integer(c: BigInt) -> Bound {
        Bound::Finite(Expr::integer(c))
    }

    pub fn finite(&self) -> Option<&Expr> {
        match self {
            Bound::Finite(e) => Some(e),
            _ => None,
        }
    }

    pub fn is_finite(&self) -> bool {
        matches!(self, Bound::Finite(_))
    }

    pub fn neg(&self) -> Bound {
        match self {
            Bound::NegInf => Bound::PosInf,
            Bound::PosInf => Bound::NegInf,
            Bound::Finite(e) => Bound::Finite(e.neg()),
        }
    }

    /// `self <= other` provably.
    pub fn le(&self, other: &Bound, env: &SignEnv) -> bool {
        match (self, other) {
            (Bound::NegInf, _) | (_, Bound::PosInf) => true,
            (_, Bound::NegInf) | (Bound::PosInf, _) => false,
            (Bound::Finite(a), Bound::Finite(b)) => a == b || compare(a, b, env).is_le(),
        }
    }

    /// `self > other` provably.
    pub fn gt(&self, other: &Bound, env: &SignEnv) -> bool {
        match (self, other) {
            (Bound::Finite(a), Bound::Finite(b)) => compare(a, b, env) == Cmp::Greater,
            (Bound::PosInf, Bound::NegInf) => true,
            _ => false,
        }
    }

    /// The possible signs of the bound's value (infinities count as the sign they lean to).
    pub fn sign(&self, env: &SignEnv) -> SignSet {
        match self {
            Bound::NegInf => SignSet::NEG,
            Bound::PosInf => SignSet::POS,
            Bound::Finite(e) => sign_of(e, env),
        }
    }
}

/// A computed expression as a bound of `side`, or that side's infinity when the engine
/// failed or the result is too large to be useful.
pub fn lift(result: Result<Expr, SymError>, side: Side) -> Bound {
    match result {
        Ok(e) if e.size() <= MAX_BOUND_SIZE => Bound::Finite(e),
        _ => side.infinity(),
    }
}

pub fn add(a: &Bound, b: &Bound, side: Side) -> Bound {
    match (a, b) {
        (Bound::Finite(x), Bound::Finite(y)) => lift(x.checked_add(y), side),
        (Bound::NegInf, Bound::PosInf) | (Bound::PosInf, Bound::NegInf) => side.infinity(),
        (Bound::NegInf, _) | (_, Bound::NegInf) => Bound::NegInf,
        _ => Bound::PosInf,
    }
}

pub fn add_const(a: &Bound, c: i64, side: Side) -> Bound {
    add(a, &Bound::constant(c), side)
}

/// `a * k` for a constant `k`; the caller swaps sides when `k < 0`.
pub fn scale(a: &Bound, k: &BigInt, side: Side) -> Bound {
    if k.is_zero() {
        return Bound::constant(0);
    }
    match a {
        Bound::Finite(e) => lift(e.checked_mul(&Expr::integer(k.clone())), side),
        inf if k.is_positive() => inf.clone(),
        inf => inf.neg(),
    }
}

/// A product of two bounds. With an infinite factor the result depends on the other
/// factor's sign; where that is not known the side's infinity is the only sound answer.
pub fn mul(a: &Bound, b: &Bound, side: Side, env: &SignEnv) -> Bound {
    if let (Bound::Finite(x), Bound::Finite(y)) = (a, b) {
        return lift(x.mul_in(y, env), side);
    }
    let (sa, sb) = (a.sign(env), b.sign(env));
    let s = sa.times(sb);
    // Outcomes: a negative product of an infinity is -inf, zero stays 0 (the infinity is
    // never attained), a positive one is +inf.
    let candidates = [
        (s.has_neg(), Bound::NegInf),
        (s.has_zero(), Bound::constant(0)),
        (s.has_pos(), Bound::PosInf),
    ];
    let possible: Vec<Bound> = candidates
        .into_iter()
        .filter_map(|(p, b)| p.then_some(b))
        .collect();
    match side {
        Side::Lo => possible.into_iter().next().unwrap_or(Bound::NegInf),
        Side::Hi => possible.into_iter().last().unwrap_or(Bound::PosInf),
    }
}

/// Operand of a flat min/max used to relax it: a symbolic operand is preferred, since a
/// constant operand usually comes from a branch constraint and the symbol is the value.
fn pick_operand(e: &Expr) -> Expr {
    let parts = e.parts();
    let chosen = parts
        .iter()
        .find(|p| !p.is_constant())
        .or(parts.first())
        .cloned()
        .unwrap_or_default();
    Expr::Poly(chosen)
}

/// `min(a, b)` as a bound of `side`. On the low side a failure relaxes downwards: a `max`
/// operand is replaced by one of its operands (each is below the max), then `-inf`. On the
/// high side any operand is a sound over-approximation of the minimum.
pub fn min(a: &Bound, b: &Bound, side: Side, env: &SignEnv) -> Bound {
    match (a, b) {
        (Bound::NegInf, _) | (_, Bound::NegInf) => Bound::NegInf,
        (Bound::PosInf, x) | (x, Bound::PosInf) => x.clone(),
        (Bound::Finite(x), Bound::Finite(y)) => match get_min(x, y, env) {
            Ok(e) => lift(Ok(e), side),
            Err(_) if side == Side::Hi => Bound::Finite(x.clone()),
            Err(_) => {
                let relax = |e: &Expr| match e {
                    Expr::Max(_) => pick_operand(e),
                    _ => e.clone(),
                };
                lift(get_min(&relax(x), &relax(y), env), side)
            }
        },
    }
}

/// `max(a, b)` as a bound of `side`; the dual of [`min`].
pub fn max(a: &Bound, b: &Bound, side: Side, env: &SignEnv) -> Bound {
    match (a, b) {
        (Bound::PosInf, _) | (_, Bound::PosInf) => Bound::PosInf,
        (Bound::NegInf, x) | (x, Bound::NegInf) => x.clone(),
        (Bound::Finite(x), Bound::Finite(y)) => match get_max(x, y, env) {
            Ok(e) => lift(Ok(e), side),
            Err(_) if side == Side::Lo => Bound::Finite(x.clone()),
            Err(_) => {
                let relax = |e: &Expr| match e {
                    Expr::Min(_) => pick_operand(e),
                    _ => e.clone(),
                };
                lift(get_max(&relax(x), &relax(y), env), side)
            }
        },
    }
}

/// C's truncating `a / k` for a constant `k != 0`; the caller swaps sides when `k < 0`.
pub fn div_const(a: &Bound, k: &BigInt, side: Side, env: &SignEnv) -> Bound {
    match a {
        Bound::Finite(e) => lift(e.c_div_in(k, env), side),
        inf if k.is_positive() => inf.clone(),
        inf => inf.neg(),
    }
}

/// `floor(a / 2^k)`, the arithmetic right shift.
pub fn shr(a: &Bound, k: u32, side: Side) -> Bound {
    match a {
        Bound::Finite(e) => lift(e.shr(k), side),
        inf => inf.clone(),
    }
}
