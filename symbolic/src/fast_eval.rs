//! Exact evaluation of symbolic expressions over `i128` rationals, for code that evaluates
//! the same expression at many points (the advisor's witness search: two offsets and the
//! loop bounds; sampled monotonicity).
//!
//! [`crate::Expr::eval`] works in big rationals and hash maps, which is too slow for that. An expression is compiled once against a numbering of its variables; every
//! operation is checked, so an overflow is "no value" rather than a wrong one.

use crate::{Atom, Expr, Poly, Var};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::collections::HashMap;

/// An exact rational `num / den`, `den > 0`, in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rat {
    pub num: i128,
    pub den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Rat {
    pub fn int(v: i128) -> Rat {
        Rat { num: v, den: 1 }
    }

    fn new(num: i128, den: i128) -> Option<Rat> {
        if den == 0 {
            return None;
        }
        let (num, den) = if den < 0 {
            (num.checked_neg()?, den.checked_neg()?)
        } else {
            (num, den)
        };
        let g = gcd(num, den).max(1);
        Some(Rat {
            num: num / g,
            den: den / g,
        })
    }

    fn add(self, o: Rat) -> Option<Rat> {
        let num = self
            .num
            .checked_mul(o.den)?
            .checked_add(o.num.checked_mul(self.den)?)?;
        Rat::new(num, self.den.checked_mul(o.den)?)
    }

    fn mul(self, o: Rat) -> Option<Rat> {
        Rat::new(self.num.checked_mul(o.num)?, self.den.checked_mul(o.den)?)
    }

    /// The value when it is an integer.
    pub fn as_int(self) -> Option<i128> {
        (self.den == 1).then_some(self.num)
    }

    /// `self < o`; `None` on overflow.
    pub fn less(self, o: Rat) -> Option<bool> {
        Some(self.num.checked_mul(o.den)? < o.num.checked_mul(self.den)?)
    }
}

fn to_i128(b: &BigInt) -> Option<i128> {
    b.to_i128()
}

#[derive(Clone, Debug)]
enum CAtom {
    Var(usize),
    /// Dividend, divisor, and which of C's `/`, `%` or floor `/`, `mod`.
    Div(Box<CPoly>, i128, DivKind),
}

#[derive(Clone, Copy, Debug)]
enum DivKind {
    Trunc,
    TruncRem,
    Floor,
    FloorMod,
}

#[derive(Clone, Debug)]
struct CPoly {
    terms: Vec<(Rat, Vec<(CAtom, u32)>)>,
    /// Integer coefficients all the way down: evaluated without fractions.
    integral: bool,
}

/// A compiled expression: a polynomial, or the `min`/`max` of several.
#[derive(Clone, Debug)]
pub struct Compiled {
    parts: Vec<CPoly>,
    /// `Some(true)` for `max`, `Some(false)` for `min`.
    extreme: Option<bool>,
    /// Every part is integral: [`Compiled::eval_int`] needs no fractions.
    integral: bool,
}

/// Variable numbering shared by the compiled expressions of one search.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    index: HashMap<Var, usize>,
}

impl Slots {
    pub fn slot(&mut self, v: &Var) -> usize {
        let n = self.index.len();
        *self.index.entry(v.clone()).or_insert(n)
    }
    pub fn get(&self, v: &Var) -> Option<usize> {
        self.index.get(v).copied()
    }
    /// How many variables are numbered.
    pub fn count(&self) -> usize {
        self.index.len()
    }
    pub fn vars(&self) -> impl Iterator<Item = (&Var, usize)> {
        self.index.iter().map(|(v, k)| (v, *k))
    }
}

fn compile_poly(p: &Poly, slots: &mut Slots) -> Option<CPoly> {
    let mut terms = Vec::new();
    for (monomial, c) in p.terms() {
        let coefficient = Rat::new(to_i128(c.numer())?, to_i128(c.denom())?)?;
        let mut factors = Vec::new();
        for (atom, e) in monomial.factors() {
            let a = match atom {
                Atom::Var(v) => CAtom::Var(slots.slot(v)),
                Atom::TruncDiv(q, d)
                | Atom::TruncRem(q, d)
                | Atom::FloorDiv(q, d)
                | Atom::FloorMod(q, d) => {
                    let kind = match atom {
                        Atom::TruncDiv(..) => DivKind::Trunc,
                        Atom::TruncRem(..) => DivKind::TruncRem,
                        Atom::FloorDiv(..) => DivKind::Floor,
                        _ => DivKind::FloorMod,
                    };
                    CAtom::Div(Box::new(compile_poly(q, slots)?), to_i128(d)?, kind)
                }
            };
            factors.push((a, *e));
        }
        terms.push((coefficient, factors));
    }
    let integral = terms.iter().all(|(c, factors)| {
        c.den == 1
            && factors.iter().all(|(a, _)| match a {
                CAtom::Var(_) => true,
                CAtom::Div(p, ..) => p.integral,
            })
    });
    Some(CPoly { terms, integral })
}

/// Compiles `e`, numbering its variables in `slots`; `None` when a coefficient does not
/// fit in 128 bits.
pub fn compile(e: &Expr, slots: &mut Slots) -> Option<Compiled> {
    let parts = e
        .parts()
        .iter()
        .map(|p| compile_poly(p, slots))
        .collect::<Option<Vec<_>>>()?;
    let extreme = match e {
        Expr::Poly(_) => None,
        Expr::Min(_) => Some(false),
        Expr::Max(_) => Some(true),
    };
    let integral = parts.iter().all(|p| p.integral);
    Some(Compiled {
        parts,
        extreme,
        integral,
    })
}

/// [`eval_poly`] for an integral polynomial: plain checked integer arithmetic, in 64 bits
/// when every value fits (a 64-bit checked multiply is one instruction, a 128-bit one a
/// call), else in 128.
fn eval_int_poly(p: &CPoly, vals: &[i128]) -> Option<i128> {
    match eval_int_poly_in::<i64>(p, vals) {
        Some(v) => Some(i128::from(v)),
        None => eval_int_poly_in::<i128>(p, vals),
    }
}

/// The checked integer arithmetic [`eval_int_poly_in`] needs, in 64 or 128 bits.
trait Checked: Copy + Ord + TryFrom<i128> {
    const ZERO: Self;
    fn add(self, o: Self) -> Option<Self>;
    fn sub(self, o: Self) -> Option<Self>;
    fn mul(self, o: Self) -> Option<Self>;
    fn neg(self) -> Option<Self>;
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
    fn div_euclid(self, o: Self) -> Option<Self>;
}

macro_rules! checked_int {
    ($t:ty) => {
        impl Checked for $t {
            const ZERO: Self = 0;
            fn add(self, o: Self) -> Option<Self> {
                self.checked_add(o)
            }
            fn sub(self, o: Self) -> Option<Self> {
                self.checked_sub(o)
            }
            fn mul(self, o: Self) -> Option<Self> {
                self.checked_mul(o)
            }
            fn neg(self) -> Option<Self> {
                self.checked_neg()
            }
            fn div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            fn rem(self, o: Self) -> Option<Self> {
                self.checked_rem(o)
            }
            fn div_euclid(self, o: Self) -> Option<Self> {
                self.checked_div_euclid(o)
            }
        }
    };
}

checked_int!(i64);
checked_int!(i128);

/// `floor(x / d)`, `d != 0`: for `d < 0` it is `floor(-x / -d)`.
fn floor_div<T: Checked>(x: T, d: T) -> Option<T> {
    if d > T::ZERO {
        x.div_euclid(d)
    } else {
        x.neg()?.div_euclid(d.neg()?)
    }
}

/// [`eval_int_poly`] in `T`: `None` on overflow, on a value or coefficient that does not
/// fit, and on a zero divisor.
fn eval_int_poly_in<T: Checked>(p: &CPoly, vals: &[i128]) -> Option<T> {
    let fit = |v: i128| T::try_from(v).ok();
    let mut sum = T::ZERO;
    for (c, factors) in &p.terms {
        let mut prod = fit(c.num)?;
        for (atom, e) in factors {
            let v = match atom {
                CAtom::Var(i) => fit(*vals.get(*i)?)?,
                CAtom::Div(q, d, kind) => {
                    let x = eval_int_poly_in::<T>(q, vals)?;
                    let d = fit(*d)?;
                    if d == T::ZERO {
                        return None;
                    }
                    match kind {
                        DivKind::Trunc => x.div(d)?,
                        DivKind::TruncRem => x.rem(d)?,
                        DivKind::Floor => floor_div(x, d)?,
                        DivKind::FloorMod => x.sub(d.mul(floor_div(x, d)?)?)?,
                    }
                }
            };
            for _ in 0..*e {
                prod = prod.mul(v)?;
            }
        }
        sum = sum.add(prod)?;
    }
    Some(sum)
}

fn eval_poly(p: &CPoly, vals: &[i128]) -> Option<Rat> {
    if p.integral {
        return eval_int_poly(p, vals).map(Rat::int);
    }
    let mut sum = Rat::int(0);
    for (c, factors) in &p.terms {
        let mut prod = *c;
        for (atom, e) in factors {
            let v = eval_atom(atom, vals)?;
            for _ in 0..*e {
                prod = prod.mul(v)?;
            }
        }
        sum = sum.add(prod)?;
    }
    Some(sum)
}

fn eval_atom(a: &CAtom, vals: &[i128]) -> Option<Rat> {
    match a {
        CAtom::Var(i) => vals.get(*i).copied().map(Rat::int),
        CAtom::Div(p, d, kind) => {
            if *d == 0 {
                return None;
            }
            let x = eval_poly(p, vals)?;
            // x / d = num / (den * d)
            let den = x.den.checked_mul(*d)?;
            let (n, m) = if den < 0 {
                (x.num.checked_neg()?, den.checked_neg()?)
            } else {
                (x.num, den)
            };
            let q = match kind {
                DivKind::Trunc | DivKind::TruncRem => n / m,
                DivKind::Floor | DivKind::FloorMod => n.div_euclid(m),
            };
            match kind {
                DivKind::Trunc | DivKind::Floor => Some(Rat::int(q)),
                // x - d*q
                DivKind::TruncRem | DivKind::FloorMod => {
                    x.add(Rat::int(d.checked_mul(q)?.checked_neg()?))
                }
            }
        }
    }
}

impl Compiled {
    /// The exact value with variable `k` set to `vals[k]`.
    pub fn eval(&self, vals: &[i128]) -> Option<Rat> {
        if self.integral {
            return self.eval_int(vals).map(Rat::int);
        }
        let mut best: Option<Rat> = None;
        for p in &self.parts {
            let v = eval_poly(p, vals)?;
            best = Some(match (best, self.extreme) {
                (None, _) => v,
                (Some(b), Some(true)) => {
                    if b.less(v)? {
                        v
                    } else {
                        b
                    }
                }
                (Some(b), _) => {
                    if v.less(b)? {
                        v
                    } else {
                        b
                    }
                }
            });
        }
        best
    }

    /// The value when it is an integer.
    pub fn eval_int(&self, vals: &[i128]) -> Option<i128> {
        // Integer coefficients throughout (subscripts, offsets, most bounds): plain checked
        // integers and integer min/max, no fractions to build and compare.
        if self.integral {
            let mut best: Option<i128> = None;
            for p in &self.parts {
                let v = eval_int_poly(p, vals)?;
                best = Some(match (best, self.extreme) {
                    (None, _) => v,
                    (Some(b), Some(true)) => b.max(v),
                    (Some(b), _) => b.min(v),
                });
            }
            return best;
        }
        self.eval(vals)?.as_int()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;
    use num_rational::BigRational;

    /// The compiled value agrees with the engine's exact evaluation.
    fn check(text: &str, values: &[(&str, i64)]) {
        let e = parse_expr(text).expect("parses");
        let mut slots = Slots::default();
        let c = compile(&e, &mut slots).expect("compiles");
        let mut vals = vec![0i128; slots.count()];
        let mut ctx = HashMap::new();
        for (name, v) in values {
            let var = Var::new(name);
            if let Some(k) = slots.get(&var) {
                vals[k] = *v as i128;
            }
            ctx.insert(var, BigRational::from_integer(BigInt::from(*v)));
        }
        let exact = e.eval(&ctx).expect("evaluates");
        let fast = c.eval(&vals).expect("fast evaluates");
        assert_eq!(c.eval_int(&vals), fast.as_int(), "{text} at {values:?}");
        assert_eq!(
            BigRational::new(BigInt::from(fast.num), BigInt::from(fast.den)),
            exact,
            "{text} at {values:?}"
        );
    }

    #[test]
    fn agrees_with_exact_evaluation() {
        for n in -7..=7 {
            for i in -3..=3 {
                let values = [("n", n), ("i", i)];
                check("4*i + 8*n - 3", &values);
                check("(2*n + 3) / 4 + i % 3", &values);
                check("min(n, i + 3)", &values);
                check("max(2*n, i + 1)", &values);
                check("i*n*n - (n - i) / 2", &values);
                check("n / 2 + i / 3 - (2*n + 1) % 4", &values);
                check("floor_div(2*n - 1, 4) + floor_mod(i - 5, 3)", &values);
                check("rat(1, 2)*n + floor_div(n, 2)", &values);
            }
        }
        // Past 64 bits: the 128-bit evaluation takes over.
        for n in [1_000, -1_000, 1_000_000] {
            let values = [("n", n), ("i", 3)];
            check("n*n*n*n*n*n + i", &values);
            check("floor_div(n*n*n*n, 7) + floor_mod(n*n*n, -5)", &values);
            check("min(n*n*n, 4*n*n*n - i)", &values);
        }
    }
}
