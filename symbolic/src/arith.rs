//! Arithmetic on expressions: sums, products, divisions, shifts and substitution, keeping a
//! `min`/`max` flat and its operands incomparable. Apart from `expr` because it compares
//! operands (`compare`) and asks their signs (`substitution`), which take the expression
//! type from there.

use crate::compare::{build_max, build_min, get_max, get_min};
use crate::error::SymError;
use crate::expr::{Expr, MAX_MINMAX, MAX_SHIFT};
use crate::poly::{self, Atom, Poly};
use crate::sign::{SignEnv, SignSet};
use crate::substitution::sign_of;
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::collections::HashMap;

impl Expr {
    /// Applies `f` to every operand; `increasing` says whether `f` is non-decreasing (keeps
    /// min/max) or non-increasing (swaps them).
    fn map_monotone(
        &self,
        increasing: bool,
        f: impl Fn(&Poly) -> Result<Poly, SymError>,
    ) -> Result<Expr, SymError> {
        let env = SignEnv::new();
        match self {
            Expr::Poly(p) => Ok(Expr::Poly(f(p)?)),
            Expr::Max(ps) => {
                let v = ps.iter().map(f).collect::<Result<Vec<_>, _>>()?;
                if increasing {
                    build_max(v, &env)
                } else {
                    build_min(v, &env)
                }
            }
            Expr::Min(ps) => {
                let v = ps.iter().map(f).collect::<Result<Vec<_>, _>>()?;
                if increasing {
                    build_min(v, &env)
                } else {
                    build_max(v, &env)
                }
            }
        }
    }

    /// Sum; `max(a, b) + c = max(a + c, b + c)`, `max(a, b) + max(c, d) = max(a+c, a+d, b+c, b+d)`;
    /// `max + min` is not representable.
    pub fn checked_add(&self, other: &Expr) -> Result<Expr, SymError> {
        let env = SignEnv::new();
        match (self, other) {
            (Expr::Poly(a), Expr::Poly(b)) => Ok(Expr::Poly(a.checked_add(b)?)),
            (Expr::Poly(p), m) | (m, Expr::Poly(p)) => m.map_monotone(true, |q| q.checked_add(p)),
            (Expr::Max(a), Expr::Max(b)) => {
                build_max(pairwise(a, b, |x, y| x.checked_add(y))?, &env)
            }
            (Expr::Min(a), Expr::Min(b)) => {
                build_min(pairwise(a, b, |x, y| x.checked_add(y))?, &env)
            }
            _ => Err(SymError::NotNormalForm("max(..) + min(..)".into())),
        }
    }

    /// Difference. Two minima (or two maxima) whose parts differ by one polynomial `d`,
    /// part for part, differ by `d`: `min(a + d, b + d) - min(a, b) = d`. Otherwise
    /// `min - min` is not representable (a pointer stepped back by `max(s - x, 0)` and its
    /// copy in another iteration are such a pair).
    pub fn checked_sub(&self, other: &Expr) -> Result<Expr, SymError> {
        match self.checked_add(&other.neg()) {
            Err(e) => uniform_difference(self, other).map(Expr::Poly).ok_or(e),
            sum => sum,
        }
    }

    /// Product. A min/max may only be multiplied by a constant here (`k*max(a,b) = max(ka,kb)`
    /// for `k >= 0`, `min(ka,kb)` for `k < 0`); see [`Expr::mul_in`] for sign-aware products.
    pub fn checked_mul(&self, other: &Expr) -> Result<Expr, SymError> {
        match (self, other) {
            (Expr::Poly(a), Expr::Poly(b)) => Ok(Expr::Poly(a.checked_mul(b)?)),
            (Expr::Poly(p), m) | (m, Expr::Poly(p)) => match p.as_constant() {
                Some(c) if c.is_zero() => Ok(Expr::Poly(Poly::zero())),
                Some(c) => m.map_monotone(!c.is_negative(), |q| Ok(q.scale(&c))),
                None => Err(SymError::NotNormalForm(
                    "product of min/max with a non-constant".into(),
                )),
            },
            _ => Err(SymError::NotNormalForm("product of two min/max".into())),
        }
    }

    /// Product using signs: `p*max(a,b) = max(pa,pb)` when `p >= 0` (min when `p <= 0`), and
    /// `max(a,b)*max(c,d) = max(ac,ad,bc,bd)` when all operands are non-negative.
    pub fn mul_in(&self, other: &Expr, env: &SignEnv) -> Result<Expr, SymError> {
        match self.checked_mul(other) {
            Err(SymError::NotNormalForm(_)) => {}
            r => return r,
        }
        match (self, other) {
            (Expr::Poly(p), m) | (m, Expr::Poly(p)) => {
                let s = sign_of(&Expr::Poly(p.clone()), env);
                if s.is_subset(SignSet::NON_NEG) {
                    m.map_monotone(true, |q| q.checked_mul(p))
                } else if s.is_subset(SignSet::NON_POS) {
                    m.map_monotone(false, |q| q.checked_mul(p))
                } else {
                    Err(SymError::NotNormalForm(
                        "product of min/max with a factor of unknown sign".into(),
                    ))
                }
            }
            (Expr::Max(a), Expr::Max(b)) | (Expr::Min(a), Expr::Min(b)) => {
                let nonneg = a
                    .iter()
                    .chain(b.iter())
                    .all(|p| sign_of(&Expr::Poly(p.clone()), env).is_subset(SignSet::NON_NEG));
                if !nonneg {
                    return Err(SymError::NotNormalForm(
                        "product of min/max of unknown sign".into(),
                    ));
                }
                let v = pairwise(a, b, |x, y| x.checked_mul(y))?;
                if matches!(self, Expr::Max(_)) {
                    build_max(v, env)
                } else {
                    build_min(v, env)
                }
            }
            _ => Err(SymError::NotNormalForm("product of max and min".into())),
        }
    }

    /// Exact division by a constant in Q (the thesis' `/`); the result is not integer-exact
    /// unless the constant divides every coefficient.
    pub fn div_const(&self, k: &BigRational) -> Result<Expr, SymError> {
        if k.is_zero() {
            return Err(SymError::DivisionByZero);
        }
        let inv = k.recip();
        self.map_monotone(!k.is_negative(), |p| Ok(p.scale(&inv)))
    }

    /// C's `self / k` (truncation toward zero). Truncating division by a positive constant is
    /// non-decreasing, so it distributes over min/max.
    pub fn c_div(&self, k: &BigInt) -> Result<Expr, SymError> {
        if k.is_zero() {
            return Err(SymError::DivisionByZero);
        }
        self.map_monotone(!k.is_negative(), |p| poly::trunc_div(p, k))
    }

    /// C's `self % k` (sign of `self`); min/max operands are rejected.
    pub fn c_mod(&self, k: &BigInt) -> Result<Expr, SymError> {
        match self {
            Expr::Poly(p) => Ok(Expr::Poly(poly::trunc_rem(p, k)?)),
            _ => Err(SymError::NotNormalForm("% of min/max".into())),
        }
    }

    /// `floor(self / k)`.
    pub fn floor_div(&self, k: &BigInt) -> Result<Expr, SymError> {
        if k.is_zero() {
            return Err(SymError::DivisionByZero);
        }
        self.map_monotone(!k.is_negative(), |p| poly::floor_div(p, k))
    }

    /// `self mod k`, floor convention (in `[0, k)` for `k > 0`); min/max operands are rejected.
    pub fn floor_mod(&self, k: &BigInt) -> Result<Expr, SymError> {
        match self {
            Expr::Poly(p) => Ok(Expr::Poly(poly::floor_mod(p, k)?)),
            _ => Err(SymError::NotNormalForm("mod of min/max".into())),
        }
    }

    /// C's `/` using signs: when the dividend is known `>= 0` (or `<= 0`) truncation is a floor
    /// (or a negated floor), which simplifies better (`(4*i + 1)/4 = i` for `i >= 0`).
    pub fn c_div_in(&self, k: &BigInt, env: &SignEnv) -> Result<Expr, SymError> {
        let s = sign_of(self, env);
        if s.is_subset(SignSet::NON_NEG) && !k.is_negative() {
            self.floor_div(k)
        } else if s.is_subset(SignSet::NON_POS) && !k.is_negative() {
            // trunc(x/k) = -floor(-x/k) for x <= 0
            Ok(self.neg().floor_div(k)?.neg())
        } else {
            self.c_div(k)
        }
    }

    /// Every C `/` and `%` whose dividend is known `>= 0` in `env` as floor division and
    /// modulo (equal there); see [`Poly::truncs_to_floors`].
    pub fn truncs_to_floors(&self, env: &SignEnv) -> Result<Expr, SymError> {
        let nonneg = |p: &Poly| sign_of(&Expr::Poly(p.clone()), env).is_subset(SignSet::NON_NEG);
        self.map_polys(env, &|p| p.truncs_to_floors(&nonneg))
    }

    /// Every floor division and modulo whose dividend is known `>= 0` in `env` as C's `/`
    /// and `%` (equal there), so that the expression prints as C; see
    /// [`Poly::floors_to_truncs`].
    pub fn floors_to_truncs(&self, env: &SignEnv) -> Result<Expr, SymError> {
        let nonneg = |p: &Poly| sign_of(&Expr::Poly(p.clone()), env).is_subset(SignSet::NON_NEG);
        self.map_polys(env, &|p| p.floors_to_truncs(&nonneg))
    }

    /// `self` with `f` applied to the polynomial, or to each operand of a min or max (which
    /// is then built again under `env`).
    fn map_polys(
        &self,
        env: &SignEnv,
        f: &dyn Fn(&Poly) -> Result<Poly, SymError>,
    ) -> Result<Expr, SymError> {
        match self {
            Expr::Poly(p) => Ok(Expr::Poly(f(p)?)),
            Expr::Min(ps) => build_min(ps.iter().map(f).collect::<Result<_, _>>()?, env),
            Expr::Max(ps) => build_max(ps.iter().map(f).collect::<Result<_, _>>()?, env),
        }
    }

    /// C's `%` using signs: equals the floor modulo when the dividend is known `>= 0`.
    pub fn c_mod_in(&self, k: &BigInt, env: &SignEnv) -> Result<Expr, SymError> {
        let s = sign_of(self, env);
        if s.is_subset(SignSet::NON_NEG) {
            self.floor_mod(&k.abs())
        } else if s.is_subset(SignSet::NON_POS) {
            // x % k = -((-x) mod k) for x <= 0
            Ok(self.neg().floor_mod(&k.abs())?.neg())
        } else {
            self.c_mod(k)
        }
    }

    /// `self << k` = `self * 2^k`.
    pub fn shl(&self, k: u32) -> Result<Expr, SymError> {
        if k > MAX_SHIFT {
            return Err(SymError::TooLarge(format!("shift by {k}")));
        }
        let f = BigRational::from_integer(BigInt::one() << k as usize);
        self.map_monotone(true, |p| Ok(p.scale(&f)))
    }

    /// `self >> k` as an arithmetic shift: `floor(self / 2^k)` (exact for all integers in two's complement).
    pub fn shr(&self, k: u32) -> Result<Expr, SymError> {
        if k > MAX_SHIFT {
            return Err(SymError::TooLarge(format!("shift by {k}")));
        }
        self.floor_div(&(BigInt::one() << k as usize))
    }

    /// Replaces variables by expressions. Values that are min/max are distributed where valid,
    /// otherwise the result is [`SymError::NotNormalForm`].
    pub fn substitute(&self, map: &HashMap<Var, Expr>) -> Result<Expr, SymError> {
        // Only the values of variables that occur matter; scanning the whole map made every
        // substitution cost as much as the map (quadratic when a summary's map grows).
        let occurring_polys = self
            .vars()
            .iter()
            .all(|v| map.get(v).is_none_or(|e| matches!(e, Expr::Poly(_))));
        if occurring_polys {
            let f = |v: &Var| map.get(v).and_then(|e| e.as_poly().cloned());
            return match self {
                Expr::Poly(p) => Ok(Expr::Poly(p.subst(&f)?)),
                Expr::Max(ps) => build_max(
                    ps.iter().map(|p| p.subst(&f)).collect::<Result<_, _>>()?,
                    &SignEnv::new(),
                ),
                Expr::Min(ps) => build_min(
                    ps.iter().map(|p| p.subst(&f)).collect::<Result<_, _>>()?,
                    &SignEnv::new(),
                ),
            };
        }
        let parts = self
            .parts()
            .iter()
            .map(|p| subst_poly_general(p, map))
            .collect::<Result<Vec<_>, _>>()?;
        let env = SignEnv::new();
        let mut it = parts.into_iter();
        let first = it.next().unwrap_or_default();
        it.try_fold(first, |acc, e| match self {
            Expr::Min(_) => get_min(&acc, &e, &env),
            _ => get_max(&acc, &e, &env),
        })
    }
}

/// `d` such that `a` is `b` with `d` added to every part, when `a` and `b` are both minima
/// or both maxima of as many parts.
fn uniform_difference(a: &Expr, b: &Expr) -> Option<Poly> {
    let (pa, pb) = match (a, b) {
        (Expr::Min(x), Expr::Min(y)) | (Expr::Max(x), Expr::Max(y)) => (x, y),
        _ => return None,
    };
    if pa.len() != pb.len() {
        return None;
    }
    let first = pa.first()?;
    pb.iter().find_map(|candidate| {
        let d = first.checked_add(&candidate.neg()).ok()?;
        let mut used = vec![false; pb.len()];
        let matched = pa.iter().all(|p| {
            let hit = pb
                .iter()
                .enumerate()
                .find(|(k, q)| !used[*k] && p.checked_add(&q.neg()).is_ok_and(|e| e == d));
            hit.map(|(k, _)| used[k] = true).is_some()
        });
        matched.then_some(d)
    })
}

fn pairwise(
    a: &[Poly],
    b: &[Poly],
    f: impl Fn(&Poly, &Poly) -> Result<Poly, SymError>,
) -> Result<Vec<Poly>, SymError> {
    if a.len().saturating_mul(b.len()) > MAX_MINMAX {
        return Err(SymError::TooLarge("min/max operands".into()));
    }
    let mut v = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            v.push(f(x, y)?);
        }
    }
    Ok(v)
}

fn subst_atom_general(a: &Atom, map: &HashMap<Var, Expr>) -> Result<Expr, SymError> {
    match a {
        Atom::Var(v) => Ok(map.get(v).cloned().unwrap_or_else(|| Expr::from(v.clone()))),
        Atom::TruncDiv(p, d) => subst_poly_general(p, map)?.c_div(d),
        Atom::TruncRem(p, d) => subst_poly_general(p, map)?.c_mod(d),
        Atom::FloorDiv(p, d) => subst_poly_general(p, map)?.floor_div(d),
        Atom::FloorMod(p, d) => subst_poly_general(p, map)?.floor_mod(d),
    }
}

fn subst_poly_general(p: &Poly, map: &HashMap<Var, Expr>) -> Result<Expr, SymError> {
    let mut sum = Expr::default();
    for (m, c) in p.terms() {
        let mut prod = Expr::rational(c.clone());
        for (a, e) in m.factors() {
            let base = subst_atom_general(a, map)?;
            for _ in 0..*e {
                prod = prod.checked_mul(&base)?;
            }
        }
        sum = sum.checked_add(&prod)?;
    }
    Ok(sum)
}

macro_rules! impl_binop {
    ($tr:ident, $method:ident, $checked:ident) => {
        impl std::ops::$tr<&Expr> for &Expr {
            type Output = Result<Expr, SymError>;
            fn $method(self, rhs: &Expr) -> Result<Expr, SymError> {
                self.$checked(rhs)
            }
        }
        impl std::ops::$tr<Expr> for Expr {
            type Output = Result<Expr, SymError>;
            fn $method(self, rhs: Expr) -> Result<Expr, SymError> {
                self.$checked(&rhs)
            }
        }
        impl std::ops::$tr<&Expr> for Expr {
            type Output = Result<Expr, SymError>;
            fn $method(self, rhs: &Expr) -> Result<Expr, SymError> {
                self.$checked(rhs)
            }
        }
    };
}

impl_binop!(Add, add, checked_add);
impl_binop!(Sub, sub, checked_sub);
impl_binop!(Mul, mul, checked_mul);
