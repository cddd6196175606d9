//! Coefficient arithmetic with an integer fast path: exact `BigRational` results, identical to the
//! `num-rational` operators, without the gcd reductions when both operands are integers.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::One;

/// `a + b`.
#[inline]
pub(crate) fn add(a: &BigRational, b: &BigRational) -> BigRational {
    if a.denom().is_one() && b.denom().is_one() {
        // Integers: the sum is already in lowest terms.
        BigRational::new_raw(a.numer() + b.numer(), BigInt::one())
    } else {
        a + b
    }
}

/// `a - b`.
#[inline]
pub(crate) fn sub(a: &BigRational, b: &BigRational) -> BigRational {
    if a.denom().is_one() && b.denom().is_one() {
        BigRational::new_raw(a.numer() - b.numer(), BigInt::one())
    } else {
        a - b
    }
}

/// `a * b`.
#[inline]
pub(crate) fn mul(a: &BigRational, b: &BigRational) -> BigRational {
    if a.denom().is_one() && b.denom().is_one() {
        BigRational::new_raw(a.numer() * b.numer(), BigInt::one())
    } else {
        a * b
    }
}

/// `a += b`.
#[inline]
pub(crate) fn add_assign(a: &mut BigRational, b: &BigRational) {
    if a.denom().is_one() && b.denom().is_one() {
        let n = a.numer() + b.numer();
        *a = BigRational::new_raw(n, BigInt::one());
    } else {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn same_as_operators() {
        let vals = [
            r(0, 1),
            r(1, 1),
            r(-1, 1),
            r(7, 1),
            r(-12, 1),
            r(1, 2),
            r(-3, 4),
            r(5, 6),
            r(i64::MAX, 1),
        ];
        for a in &vals {
            for b in &vals {
                let (s, d, p) = (a + b, a - b, a * b);
                let mut c = a.clone();
                add_assign(&mut c, b);
                for (x, y) in [(add(a, b), &s), (sub(a, b), &d), (mul(a, b), &p), (c, &s)] {
                    // Same representation (numerator and denominator), not just the same value.
                    assert_eq!((x.numer(), x.denom()), (y.numer(), y.denom()));
                }
            }
        }
    }
}
