//! Comparison of expressions by the sign of their difference, and getMin/getMax (thesis Algorithm 4)
//! keeping min/max flat and at the top level.

use crate::error::SymError;
use crate::expr::{Expr, MAX_MINMAX};
use crate::poly::Poly;
use crate::sign::{SignEnv, SignSet};
use crate::substitution::sign_of;

/// Outcome of comparing `a` with `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `a < b` always.
    Less,
    /// `a <= b` always.
    LessEq,
    /// `a = b` always.
    Equal,
    /// `a >= b` always.
    GreaterEq,
    /// `a > b` always.
    Greater,
    /// Incomparable, or not known.
    Unknown,
}

impl Cmp {
    /// Whether `a <= b` is guaranteed.
    pub fn is_le(self) -> bool {
        matches!(self, Cmp::Less | Cmp::LessEq | Cmp::Equal)
    }

    /// Whether `a >= b` is guaranteed.
    pub fn is_ge(self) -> bool {
        matches!(self, Cmp::Greater | Cmp::GreaterEq | Cmp::Equal)
    }

    /// The comparison with operands swapped.
    pub fn reverse(self) -> Cmp {
        match self {
            Cmp::Less => Cmp::Greater,
            Cmp::LessEq => Cmp::GreaterEq,
            Cmp::GreaterEq => Cmp::LessEq,
            Cmp::Greater => Cmp::Less,
            c => c,
        }
    }

    /// The comparison implied by the possible signs of `a - b`.
    pub fn from_sign(s: SignSet) -> Cmp {
        if s.is_empty() {
            Cmp::Unknown
        } else if s == SignSet::ZERO {
            Cmp::Equal
        } else if s.is_subset(SignSet::POS) {
            Cmp::Greater
        } else if s.is_subset(SignSet::NON_NEG) {
            Cmp::GreaterEq
        } else if s.is_subset(SignSet::NEG) {
            Cmp::Less
        } else if s.is_subset(SignSet::NON_POS) {
            Cmp::LessEq
        } else {
            Cmp::Unknown
        }
    }
}

fn cmp_poly(a: &Poly, b: &Poly, env: &SignEnv) -> Cmp {
    if a == b {
        return Cmp::Equal;
    }
    Cmp::from_sign(sign_of(&Expr::Poly(a.sub(b)), env))
}

/// Whether `x <= y` (or `x < y` if `strict`) is guaranteed.
fn le(x: &Expr, y: &Expr, strict: bool, env: &SignEnv) -> bool {
    let ok = |c: Cmp| {
        if strict {
            c == Cmp::Less
        } else {
            c.is_le()
        }
    };
    // Order of cases matters: it realises "for all / exists" in the strongest sound way.
    match (x, y) {
        (_, Expr::Min(ts)) => ts
            .iter()
            .all(|t| le(x, &Expr::Poly(t.clone()), strict, env)),
        (Expr::Max(ss), _) => ss
            .iter()
            .all(|s| le(&Expr::Poly(s.clone()), y, strict, env)),
        (Expr::Min(ss), _) => ss
            .iter()
            .any(|s| le(&Expr::Poly(s.clone()), y, strict, env)),
        (Expr::Poly(p), Expr::Max(ts)) => ts.iter().any(|t| ok(cmp_poly(p, t, env))),
        (Expr::Poly(p), Expr::Poly(q)) => ok(cmp_poly(p, q, env)),
    }
}

/// Compares two expressions under a sign environment (sign of `a - b`; min/max by their operands).
pub fn compare(a: &Expr, b: &Expr, env: &SignEnv) -> Cmp {
    if let (Expr::Poly(p), Expr::Poly(q)) = (a, b) {
        return cmp_poly(p, q, env);
    }
    if a == b {
        return Cmp::Equal;
    }
    let (lt, gt) = (le(a, b, true, env), le(b, a, true, env));
    let (le_, ge) = (le(a, b, false, env), le(b, a, false, env));
    if le_ && ge {
        Cmp::Equal
    } else if lt {
        Cmp::Less
    } else if gt {
        Cmp::Greater
    } else if le_ {
        Cmp::LessEq
    } else if ge {
        Cmp::GreaterEq
    } else {
        Cmp::Unknown
    }
}

/// `max` of polynomials: dominated operands are dropped; one survivor is returned as a polynomial.
pub fn build_max(items: Vec<Poly>, env: &SignEnv) -> Result<Expr, SymError> {
    build(items, env, true)
}

/// `min` of polynomials: dominated operands are dropped; one survivor is returned as a polynomial.
pub fn build_min(items: Vec<Poly>, env: &SignEnv) -> Result<Expr, SymError> {
    build(items, env, false)
}

fn build(mut v: Vec<Poly>, env: &SignEnv, is_max: bool) -> Result<Expr, SymError> {
    v.sort();
    v.dedup();
    if v.len() > MAX_MINMAX {
        return Err(SymError::TooLarge(format!("{} min/max operands", v.len())));
    }
    let n = v.len();
    let mut keep = vec![true; n];
    for i in 0..n {
        for j in 0..n {
            if i == j || !keep[j] {
                continue;
            }
            let c = cmp_poly(&v[i], &v[j], env);
            // For max, an operand below another adds nothing (dually for min).
            if (is_max && c.is_le()) || (!is_max && c.is_ge()) {
                keep[i] = false;
                break;
            }
        }
    }
    let mut out: Vec<Poly> = v
        .into_iter()
        .zip(keep)
        .filter_map(|(p, k)| k.then_some(p))
        .collect();
    Ok(match out.len() {
        0 => Expr::Poly(Poly::zero()),
        1 => Expr::Poly(out.pop().unwrap_or_default()),
        _ if is_max => Expr::Max(out),
        _ => Expr::Min(out),
    })
}

/// getMax (Algorithm 4): `a` if `a >= b`, `b` if `b >= a`, otherwise a flat `max`. The thesis'
/// patterns follow from comparing with operands: `max(a, min(a, b)) = a`,
/// `max(a, max(a, b)) = max(a, b)`, `max(min(a, b), max(a, b)) = max(a, b)`. A `min` that is
/// not dominated either way cannot be kept in normal form: [`SymError::NotNormalForm`].
pub fn get_max(a: &Expr, b: &Expr, env: &SignEnv) -> Result<Expr, SymError> {
    if le(b, a, false, env) {
        return Ok(a.clone());
    }
    if le(a, b, false, env) {
        return Ok(b.clone());
    }
    match (a, b) {
        (Expr::Min(_), _) | (_, Expr::Min(_)) => {
            Err(SymError::NotNormalForm("max of an incomparable min".into()))
        }
        _ => {
            let items: Vec<Poly> = a.parts().iter().chain(b.parts()).cloned().collect();
            build_max(items, env)
        }
    }
}

/// getMin: dual of [`get_max`] (`min(a, b) = -max(-a, -b)`).
pub fn get_min(a: &Expr, b: &Expr, env: &SignEnv) -> Result<Expr, SymError> {
    Ok(get_max(&a.neg(), &b.neg(), env)?.neg())
}

/// getMax of several expressions (left fold).
pub fn max_of(items: &[Expr], env: &SignEnv) -> Result<Expr, SymError> {
    let mut it = items.iter();
    let first = it.next().cloned().unwrap_or_default();
    it.try_fold(first, |acc, e| get_max(&acc, e, env))
}

/// getMin of several expressions (left fold).
pub fn min_of(items: &[Expr], env: &SignEnv) -> Result<Expr, SymError> {
    let mut it = items.iter();
    let first = it.next().cloned().unwrap_or_default();
    it.try_fold(first, |acc, e| get_min(&acc, e, env))
}
