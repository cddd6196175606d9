//! Monotonicity of an expression w.r.t. one variable (thesis Algorithm 5, with a fresh strictly
//! positive delta) and w.r.t. a set of variables (Algorithm 6), with optional sign assumptions.

use crate::expr::Expr;
use crate::poly::{Atom, Poly};
use crate::sign::{poly_sign_fast, SignEnv, SignSet, Signs};
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

/// How an expression varies when one variable grows (over the integers allowed by the sign environment).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Monotonicity {
    /// Does not change.
    Constant,
    /// Never decreases (non-strict).
    Increasing,
    /// Never increases (non-strict).
    Decreasing,
    /// Proven to both increase and decrease somewhere (witnessed by sampled values).
    NonMonotonic,
    /// Could not be decided.
    Unknown,
}

/// A sign hypothesis under which a monotonicity verdict holds, e.g. `n > 0`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Assumption {
    /// The variable assumed about.
    pub var: Var,
    /// Its assumed sign set (`SignSet::POS` for `v > 0`).
    pub sign: SignSet,
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rel = match self.sign {
            SignSet::POS => "> 0",
            SignSet::NON_NEG => ">= 0",
            SignSet::NEG => "< 0",
            SignSet::NON_POS => "<= 0",
            SignSet::ZERO => "== 0",
            SignSet::NON_ZERO => "!= 0",
            _ => "in any sign",
        };
        write!(f, "{} {}", self.var, rel)
    }
}

/// Fresh delta variables; names start with `#` so they never clash with parsed names.
fn deltas() -> &'static [Var] {
    static D: OnceLock<Vec<Var>> = OnceLock::new();
    D.get_or_init(|| (0..9).map(|i| Var::new(&format!("#delta{i}"))).collect())
}

fn atom_monotonicity(a: &Atom, v: &Var, env: &SignEnv) -> Monotonicity {
    match a {
        Atom::Var(w) => {
            if w == v {
                Monotonicity::Increasing
            } else {
                Monotonicity::Constant
            }
        }
        Atom::FloorDiv(p, _) | Atom::TruncDiv(p, _) => {
            // Division by a positive constant is non-decreasing in the dividend.
            match poly_monotonicity_fast(p, v, Signs { env, extra: &[] }) {
                m @ (Monotonicity::Constant
                | Monotonicity::Increasing
                | Monotonicity::Decreasing) => m,
                _ => Monotonicity::Unknown,
            }
        }
        Atom::FloorMod(p, _) | Atom::TruncRem(p, _) => {
            if p.contains_var(v) {
                Monotonicity::Unknown
            } else {
                Monotonicity::Constant
            }
        }
    }
}

/// Algorithm 5 on a polynomial, signs by rules and bounds only (never the substitution method,
/// which itself needs monotonicity). Atoms that depend on `v` are shifted by their own deltas
/// whose sign follows the atom's monotonicity (chain rule).
pub(crate) fn poly_monotonicity_fast(p: &Poly, v: &Var, s: Signs) -> Monotonicity {
    if !p.contains_var(v) {
        return Monotonicity::Constant;
    }
    let ds = deltas();
    let mut shifted: Vec<(Atom, Poly)> = Vec::new();
    let mut extra: Vec<(Var, SignSet)> = s.extra.to_vec();
    for (m, _) in p.terms() {
        for (a, _) in m.factors() {
            if shifted.iter().any(|(b, _)| b == a) {
                continue;
            }
            let dir = match a {
                Atom::Var(w) if w == v => SignSet::POS,
                Atom::Var(_) => continue,
                _ => match atom_monotonicity(a, v, s.env) {
                    Monotonicity::Constant => continue,
                    Monotonicity::Increasing => SignSet::NON_NEG,
                    Monotonicity::Decreasing => SignSet::NON_POS,
                    _ => return Monotonicity::Unknown,
                },
            };
            let Some(d) = ds.get(shifted.len()) else {
                return Monotonicity::Unknown;
            };
            extra.push((d.clone(), dir));
            shifted.push((a.clone(), Poly::atom(a.clone()).add(&Poly::var(d.clone()))));
        }
    }
    if shifted.is_empty() {
        return Monotonicity::Constant;
    }
    let q = match p
        .replace_atoms(&|a: &Atom| shifted.iter().find(|(b, _)| b == a).map(|(_, r)| r.clone()))
    {
        Ok(q) => q,
        Err(_) => return Monotonicity::Unknown,
    };
    let diff = q.sub(p);
    let sign = poly_sign_fast(
        &diff,
        Signs {
            env: s.env,
            extra: &extra,
        },
    );
    verdict(sign)
}

fn verdict(sign: SignSet) -> Monotonicity {
    if sign.is_empty() {
        Monotonicity::Unknown
    } else if sign == SignSet::ZERO {
        Monotonicity::Constant
    } else if sign.is_subset(SignSet::NON_NEG) {
        Monotonicity::Increasing
    } else if sign.is_subset(SignSet::NON_POS) {
        Monotonicity::Decreasing
    } else {
        Monotonicity::Unknown
    }
}

fn monotonicity_decided(e: &Expr, v: &Var, env: &SignEnv) -> Monotonicity {
    let s = Signs { env, extra: &[] };
    match e {
        Expr::Poly(p) => poly_monotonicity_fast(p, v, s),
        Expr::Min(ps) | Expr::Max(ps) => {
            // min/max of non-decreasing functions is non-decreasing (same for non-increasing).
            let mut all_const = true;
            let mut inc = true;
            let mut dec = true;
            for p in ps {
                match poly_monotonicity_fast(p, v, s) {
                    Monotonicity::Constant => {}
                    Monotonicity::Increasing => {
                        all_const = false;
                        dec = false;
                    }
                    Monotonicity::Decreasing => {
                        all_const = false;
                        inc = false;
                    }
                    _ => return Monotonicity::Unknown,
                }
            }
            if all_const {
                Monotonicity::Constant
            } else if inc {
                Monotonicity::Increasing
            } else if dec {
                Monotonicity::Decreasing
            } else {
                Monotonicity::Unknown
            }
        }
    }
}

fn sample_values(s: SignSet) -> Vec<i64> {
    let mut v = Vec::new();
    if s.has_neg() {
        v.extend([-7, -3, -2, -1]);
    }
    if s.has_zero() {
        v.push(0);
    }
    if s.has_pos() {
        v.extend([1, 2, 3, 7]);
    }
    v
}

/// Looks for sampled values where `e` both increases and decreases in `v`.
fn witness_non_monotonic(e: &Expr, v: &Var, env: &SignEnv) -> bool {
    let others: Vec<Var> = e.vars().into_iter().filter(|w| w != v).collect();
    let pools: Vec<Vec<i64>> = others.iter().map(|w| sample_values(env.get(w))).collect();
    if pools.iter().any(|p| p.is_empty()) {
        return false;
    }
    let vpool = sample_values(env.get(v));
    if vpool.len() < 2 {
        return false;
    }
    let (mut up, mut down) = (false, false);
    for round in 0..24usize {
        let mut ctx: HashMap<Var, BigRational> = HashMap::new();
        for (j, (w, pool)) in others.iter().zip(&pools).enumerate() {
            let idx = (round * (2 * j + 3) + j * 5 + round / 3) % pool.len();
            ctx.insert(
                w.clone(),
                BigRational::from_integer(BigInt::from(pool[idx])),
            );
        }
        let mut prev: Option<BigRational> = None;
        for x in &vpool {
            ctx.insert(v.clone(), BigRational::from_integer(BigInt::from(*x)));
            let Ok(val) = e.eval(&ctx) else { return false };
            if let Some(p) = &prev {
                if val > *p {
                    up = true;
                } else if val < *p {
                    down = true;
                }
            }
            prev = Some(val);
        }
        if up && down {
            return true;
        }
    }
    false
}

/// Monotonicity of `e` w.r.t. `v` (Algorithm 5). `NonMonotonic` only when witnessed by sampled values.
pub fn monotonicity(e: &Expr, v: &Var, env: &SignEnv) -> Monotonicity {
    match monotonicity_decided(e, v, env) {
        Monotonicity::Unknown if witness_non_monotonic(e, v, env) => Monotonicity::NonMonotonic,
        m => m,
    }
}

/// Like [`monotonicity`], but when the answer is unknown and some variables of `e` have an
/// unknown sign, retries assuming them strictly positive (one at a time, then all together)
/// and returns the assumptions the verdict depends on (empty when none were needed).
pub fn monotonicity_with_assumptions(
    e: &Expr,
    v: &Var,
    env: &SignEnv,
) -> (Monotonicity, Vec<Assumption>) {
    let m = monotonicity_decided(e, v, env);
    if m != Monotonicity::Unknown {
        return (m, Vec::new());
    }
    let candidates: Vec<Var> = e
        .vars()
        .into_iter()
        .filter(|w| {
            let s = env.get(w);
            s.has_neg() && s.has_pos()
        })
        .collect();
    for c in &candidates {
        let env2 = env.clone().with(c.clone(), SignSet::POS);
        let m = monotonicity_decided(e, v, &env2);
        if m != Monotonicity::Unknown {
            return (
                m,
                vec![Assumption {
                    var: c.clone(),
                    sign: SignSet::POS,
                }],
            );
        }
    }
    if candidates.len() > 1 {
        let mut env2 = env.clone();
        for c in &candidates {
            env2.set(c.clone(), SignSet::POS);
        }
        let m = monotonicity_decided(e, v, &env2);
        if m != Monotonicity::Unknown {
            let assumptions = candidates
                .into_iter()
                .map(|var| Assumption {
                    var,
                    sign: SignSet::POS,
                })
                .collect();
            return (m, assumptions);
        }
    }
    (monotonicity(e, v, env), Vec::new())
}

/// Monotonicity w.r.t. a set of variables growing together (Algorithm 6). Unlike the thesis,
/// `Constant` is neutral: increasing in `i` and constant in `j` is increasing.
pub fn monotonicity_by_set(e: &Expr, vars: &[Var], env: &SignEnv) -> Monotonicity {
    let mut acc = Monotonicity::Constant;
    for v in vars {
        let m = monotonicity(e, v, env);
        acc = match (acc, m) {
            (_, Monotonicity::Unknown) | (Monotonicity::Unknown, _) => {
                return Monotonicity::Unknown
            }
            (a, Monotonicity::Constant) => a,
            (Monotonicity::Constant, b) => b,
            (a, b) if a == b => a,
            _ => Monotonicity::NonMonotonic,
        };
    }
    acc
}
