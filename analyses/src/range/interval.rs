//! Symbolic intervals `[lo, hi]` and their arithmetic (thesis Tables 8.3 and 8.4, with the
//! multiplication and division rules re-derived: Table 8.4's case list has typos and misses
//! sign combinations, so products take the min and max of all four bound products, which
//! is right for every sign case and lets `getMin`/`getMax` keep explicit `min`/`max` when
//! the products are incomparable).
//!
//! Values are integers unless said otherwise: branch constraints use `x < y => x <= y - 1`.

use super::bound::{self, Bound, Side};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::fmt;
use symbolic::{Expr, SignEnv, SignSet};

/// A symbolic interval; `[-inf, +inf]` is top. Bottom (no value yet) is the absence of a
/// range in an analysis state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub lo: Bound,
    pub hi: Bound,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

impl Range {
    pub fn new(lo: Bound, hi: Bound) -> Range {
        Range { lo, hi }
    }

    pub fn top() -> Range {
        Range::new(Bound::NegInf, Bound::PosInf)
    }

    pub fn is_top(&self) -> bool {
        self.lo == Bound::NegInf && self.hi == Bound::PosInf
    }

    pub fn singleton(e: Expr) -> Range {
        Range::new(Bound::Finite(e.clone()), Bound::Finite(e))
    }

    pub fn constant(c: i64) -> Range {
        Range::singleton(Expr::constant(c))
    }

    pub fn constants(lo: i64, hi: i64) -> Range {
        Range::new(Bound::constant(lo), Bound::constant(hi))
    }

    /// The expression when the interval is one (symbolic) point.
    pub fn as_singleton(&self) -> Option<&Expr> {
        match (&self.lo, &self.hi) {
            (Bound::Finite(a), Bound::Finite(b)) if a == b => Some(a),
            _ => None,
        }
    }

    /// The constant when the interval is one integer.
    pub fn as_integer(&self) -> Option<BigInt> {
        self.as_singleton().and_then(Expr::as_integer)
    }

    /// Provably empty (`lo > hi`): the program point cannot be reached.
    pub fn is_empty(&self, env: &SignEnv) -> bool {
        self.lo.gt(&self.hi, env) || self.lo == Bound::PosInf || self.hi == Bound::NegInf
    }

    /// Possible signs of the values.
    pub fn sign(&self, env: &SignEnv) -> SignSet {
        let (l, h) = (self.lo.sign(env), self.hi.sign(env));
        let neg = l.has_neg();
        let pos = h.has_pos();
        let zero = (l.has_neg() || l.has_zero()) && (h.has_pos() || h.has_zero());
        SignSet::new(neg, zero, pos)
    }

    pub fn is_non_negative(&self, env: &SignEnv) -> bool {
        self.lo.sign(env).is_subset(SignSet::NON_NEG)
    }

    pub fn is_non_positive(&self, env: &SignEnv) -> bool {
        self.hi.sign(env).is_subset(SignSet::NON_POS)
    }

    /// Table 8.3 union: `[min(a, c), max(b, d)]`.
    pub fn union(&self, other: &Range, env: &SignEnv) -> Range {
        Range::new(
            bound::min(&self.lo, &other.lo, Side::Lo, env),
            bound::max(&self.hi, &other.hi, Side::Hi, env),
        )
    }

    /// Table 8.3 intersection: `[max(a, c), min(b, d)]`; when a bound is already known to
    /// be the tighter one it is kept as it is rather than wrapped in a `max`/`min`.
    pub fn intersect(&self, other: &Range, env: &SignEnv) -> Range {
        let lo = if other.lo.le(&self.lo, env) {
            self.lo.clone()
        } else if self.lo.le(&other.lo, env) {
            other.lo.clone()
        } else {
            bound::max(&self.lo, &other.lo, Side::Lo, env)
        };
        let hi = if self.hi.le(&other.hi, env) {
            self.hi.clone()
        } else if other.hi.le(&self.hi, env) {
            other.hi.clone()
        } else {
            bound::min(&self.hi, &other.hi, Side::Hi, env)
        };
        Range::new(lo, hi)
    }

    /// Widening. Table 8.3 keeps a bound only if it is unchanged; keeping it whenever the
    /// new bound is provably no looser is as convergent (each bound still changes at most
    /// once, to its infinity) and keeps bounds that a join merely restated.
    pub fn widen(&self, new: &Range, env: &SignEnv) -> Range {
        let lo = if self.lo.le(&new.lo, env) {
            self.lo.clone()
        } else {
            Bound::NegInf
        };
        let hi = if new.hi.le(&self.hi, env) {
            self.hi.clone()
        } else {
            Bound::PosInf
        };
        Range::new(lo, hi)
    }

    /// Table 8.3 narrowing: only infinite bounds are replaced by the recomputed ones.
    pub fn narrow(&self, new: &Range) -> Range {
        let lo = if self.lo == Bound::NegInf {
            new.lo.clone()
        } else {
            self.lo.clone()
        };
        let hi = if self.hi == Bound::PosInf {
            new.hi.clone()
        } else {
            self.hi.clone()
        };
        Range::new(lo, hi)
    }

    pub fn add(&self, other: &Range) -> Range {
        Range::new(
            bound::add(&self.lo, &other.lo, Side::Lo),
            bound::add(&self.hi, &other.hi, Side::Hi),
        )
    }

    pub fn neg(&self) -> Range {
        Range::new(self.hi.neg(), self.lo.neg())
    }

    pub fn sub(&self, other: &Range) -> Range {
        self.add(&other.neg())
    }

    pub fn add_const(&self, c: i64) -> Range {
        self.add(&Range::constant(c))
    }

    /// `self * k` for a constant.
    pub fn scale(&self, k: &BigInt) -> Range {
        if k.is_negative() {
            Range::new(
                bound::scale(&self.hi, k, Side::Lo),
                bound::scale(&self.lo, k, Side::Hi),
            )
        } else {
            Range::new(
                bound::scale(&self.lo, k, Side::Lo),
                bound::scale(&self.hi, k, Side::Hi),
            )
        }
    }

    /// Product: the min and max of the four bound products, valid for every sign of the
    /// operands (Table 8.4 corrected). Constant and symbolic singletons take shortcuts that
    /// avoid needless `min`/`max` of equal products.
    pub fn mul(&self, other: &Range, env: &SignEnv) -> Range {
        if let Some(k) = other.as_integer() {
            return self.scale(&k);
        }
        if let Some(k) = self.as_integer() {
            return other.scale(&k);
        }
        if let (Some(a), Some(b)) = (self.as_singleton(), other.as_singleton()) {
            return Range::new(
                bound::lift(a.mul_in(b, env), Side::Lo),
                bound::lift(a.mul_in(b, env), Side::Hi),
            );
        }
        // Known signs pick the two products that are the extremes (Table 8.4's cases,
        // corrected); unknown signs fall back to all four.
        let sign = |r: &Range| {
            if r.is_non_negative(env) {
                Some(true)
            } else if r.is_non_positive(env) {
                Some(false)
            } else {
                None
            }
        };
        let (a, b, c, d) = (&self.lo, &self.hi, &other.lo, &other.hi);
        let extremes = match (sign(self), sign(other)) {
            (Some(true), Some(true)) => Some(((a, c), (b, d))),
            (Some(true), Some(false)) => Some(((b, c), (a, d))),
            (Some(false), Some(true)) => Some(((a, d), (b, c))),
            (Some(false), Some(false)) => Some(((b, d), (a, c))),
            _ => None,
        };
        if let Some(((l1, l2), (h1, h2))) = extremes {
            return Range::new(
                bound::mul(l1, l2, Side::Lo, env),
                bound::mul(h1, h2, Side::Hi, env),
            );
        }
        let pairs = [
            (&self.lo, &other.lo),
            (&self.lo, &other.hi),
            (&self.hi, &other.lo),
            (&self.hi, &other.hi),
        ];
        let mut lo = Bound::PosInf;
        let mut hi = Bound::NegInf;
        for (a, b) in pairs {
            lo = bound::min(&lo, &bound::mul(a, b, Side::Lo, env), Side::Lo, env);
            hi = bound::max(&hi, &bound::mul(a, b, Side::Hi, env), Side::Hi, env);
        }
        Range::new(lo, hi)
    }

    /// `x * x`: a square is never negative, whatever the signs of the bounds.
    pub fn square(&self, env: &SignEnv) -> Range {
        let r = self.mul(self, env);
        if self.is_non_negative(env) || self.is_non_positive(env) {
            return r;
        }
        let sq = |b: &Bound| bound::mul(b, b, Side::Hi, env);
        Range::new(
            Bound::constant(0),
            bound::max(&sq(&self.lo), &sq(&self.hi), Side::Hi, env),
        )
    }

    /// C's truncating division by a constant: monotone in the dividend, non-decreasing
    /// for `k > 0` and non-increasing for `k < 0`.
    pub fn div_const(&self, k: &BigInt, env: &SignEnv) -> Range {
        if k.is_zero() {
            return Range::top();
        }
        if k.is_positive() {
            Range::new(
                bound::div_const(&self.lo, k, Side::Lo, env),
                bound::div_const(&self.hi, k, Side::Hi, env),
            )
        } else {
            Range::new(
                bound::div_const(&self.hi, k, Side::Lo, env),
                bound::div_const(&self.lo, k, Side::Hi, env),
            )
        }
    }

    /// Division by a non-constant: only when the divisor is provably at least 1 in absolute
    /// value, then `|x / y| <= |x|` with the sign of `x` (or of `-x` for `y <= -1`).
    pub fn div(&self, divisor: &Range, env: &SignEnv) -> Range {
        if let Some(k) = divisor.as_integer() {
            return self.div_const(&k, env);
        }
        let zero = Bound::constant(0);
        let shrink = |r: &Range| {
            Range::new(
                bound::min(&zero, &r.lo, Side::Lo, env),
                bound::max(&zero, &r.hi, Side::Hi, env),
            )
        };
        if Bound::constant(1).le(&divisor.lo, env) {
            shrink(self)
        } else if divisor.hi.le(&Bound::constant(-1), env) {
            shrink(&self.neg())
        } else {
            Range::top()
        }
    }

    /// C's `%`: the result has the dividend's sign and magnitude below the divisor's, so
    /// `x % k` is in `[0, k-1]` for `x >= 0`, `[-(k-1), 0]` for `x <= 0` and `[-(k-1), k-1]`
    /// otherwise, each also within the dividend's own range.
    pub fn rem(&self, divisor: &Range, env: &SignEnv) -> Range {
        let limit = match divisor.as_integer() {
            Some(k) if !k.is_zero() => Bound::integer(k.abs() - BigInt::one()),
            _ if Bound::constant(1).le(&divisor.lo, env) => {
                bound::add_const(&divisor.hi, -1, Side::Hi)
            }
            _ if divisor.hi.le(&Bound::constant(-1), env) => {
                bound::add_const(&divisor.lo.neg(), -1, Side::Hi)
            }
            _ => Bound::PosInf,
        };
        let zero = Bound::constant(0);
        let magnitude = Range::new(limit.neg(), limit);
        let sign_part = if self.is_non_negative(env) {
            Range::new(zero.clone(), magnitude.hi.clone())
        } else if self.is_non_positive(env) {
            Range::new(magnitude.lo.clone(), zero.clone())
        } else {
            magnitude
        };
        // `x % k` lies between 0 and `x`: `[min(0, lo), max(0, hi)]`.
        let own = Range::new(
            bound::min(&zero, &self.lo, Side::Lo, env),
            bound::max(&zero, &self.hi, Side::Hi, env),
        );
        sign_part.intersect(&own, env)
    }

    pub fn shl(&self, k: u32) -> Range {
        self.scale(&(BigInt::one() << k as usize))
    }

    pub fn shr(&self, k: u32) -> Range {
        Range::new(
            bound::shr(&self.lo, k, Side::Lo),
            bound::shr(&self.hi, k, Side::Hi),
        )
    }

    /// `x & y`: with a non-negative operand the result lies in `[0, that operand]`
    /// (two's complement), whatever the other operand is.
    pub fn bit_and(&self, other: &Range, env: &SignEnv) -> Range {
        let zero = Bound::constant(0);
        match (self.is_non_negative(env), other.is_non_negative(env)) {
            (true, true) => Range::new(zero, bound::min(&self.hi, &other.hi, Side::Hi, env)),
            (true, false) => Range::new(zero, self.hi.clone()),
            (false, true) => Range::new(zero, other.hi.clone()),
            (false, false) => Range::top(),
        }
    }

    /// `x | y` and `x ^ y` of non-negative operands are in `[0, x + y]`.
    pub fn bit_or_xor(&self, other: &Range, env: &SignEnv) -> Range {
        if self.is_non_negative(env) && other.is_non_negative(env) {
            Range::new(
                Bound::constant(0),
                bound::add(&self.hi, &other.hi, Side::Hi),
            )
        } else {
            Range::top()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use symbolic::parse_expr;

    fn r(lo: &str, hi: &str) -> Range {
        let b = |s: &str| match s {
            "-inf" => Bound::NegInf,
            "+inf" => Bound::PosInf,
            s => Bound::Finite(parse_expr(s).expect("parses")),
        };
        Range::new(b(lo), b(hi))
    }

    #[test]
    fn products_cover_every_sign_case() {
        let env = SignEnv::new();
        let cases = [
            (("2", "3"), ("4", "5"), "[8, 15]"),
            (("-3", "-2"), ("-5", "-4"), "[8, 15]"),
            (("-3", "-2"), ("4", "5"), "[-15, -8]"),
            (("-2", "3"), ("4", "5"), "[-10, 15]"),
            (("-2", "3"), ("-5", "4"), "[-15, 12]"),
            (("-2", "3"), ("-inf", "1"), "[-inf, +inf]"),
            (("0", "3"), ("1", "+inf"), "[0, +inf]"),
            (("2", "3"), ("-inf", "-1"), "[-inf, -2]"),
        ];
        for ((a, b), (c, d), expected) in cases {
            assert_eq!(
                r(a, b).mul(&r(c, d), &env).to_string(),
                expected,
                "{a}..{b} * {c}..{d}"
            );
        }
    }

    #[test]
    fn division_truncates_and_flips_for_negative_divisors() {
        let env = SignEnv::new();
        let k = BigInt::from(-2);
        assert_eq!(r("-7", "5").div_const(&k, &env).to_string(), "[-2, 3]");
        assert_eq!(
            r("-7", "5").div_const(&BigInt::from(2), &env).to_string(),
            "[-3, 2]"
        );
    }

    #[test]
    fn remainder_follows_the_dividend_sign() {
        let env = SignEnv::new();
        let k = Range::constant(4);
        assert_eq!(r("0", "+inf").rem(&k, &env).to_string(), "[0, 3]");
        assert_eq!(r("0", "2").rem(&k, &env).to_string(), "[0, 2]");
        assert_eq!(r("-9", "-1").rem(&k, &env).to_string(), "[-3, 0]");
        assert_eq!(r("-inf", "+inf").rem(&k, &env).to_string(), "[-3, 3]");
        assert_eq!(
            r("-inf", "+inf")
                .rem(&Range::constant(-4), &env)
                .to_string(),
            "[-3, 3]"
        );
    }

    #[test]
    fn widening_and_narrowing_follow_table_8_3() {
        let env = SignEnv::new();
        assert_eq!(
            r("0", "0").widen(&r("0", "1"), &env).to_string(),
            "[0, +inf]"
        );
        assert_eq!(r("0", "n").widen(&r("1", "n"), &env).to_string(), "[0, n]");
        assert_eq!(
            r("0", "+inf").narrow(&r("0", "n - 1")).to_string(),
            "[0, n - 1]"
        );
    }

    #[test]
    fn union_keeps_incomparable_bounds_as_min_max() {
        let env = SignEnv::new();
        assert_eq!(
            r("m", "m").union(&r("n", "n"), &env).to_string(),
            "[min(m, n), max(m, n)]"
        );
    }
}
