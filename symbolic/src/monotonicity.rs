//! Monotonicity of an expression w.r.t. one variable (thesis Algorithm 5, with a fresh strictly
//! positive delta) and w.r.t. a set of variables (Algorithm 6), with optional sign assumptions.

use crate::expr::Expr;
use crate::poly::{Atom, Poly, MAX_DEGREE, MAX_TERMS};
use crate::sign::{atom_sign, bounds_sign, poly_sign_fast, SignEnv, SignSet, Signs};
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
///
/// The sign of the difference `p(atoms + deltas) - p` is computed term by term from the
/// binomial expansion, without building either polynomial; the result is the same as
/// [`poly_monotonicity_slow`], which is used when the shortcut's preconditions fail.
pub(crate) fn poly_monotonicity_fast(p: &Poly, v: &Var, s: Signs) -> Monotonicity {
    if !p.contains_var(v) {
        return Monotonicity::Constant;
    }
    match shifted_diff_sign(p, v, s) {
        Ok(sign) => verdict(sign),
        Err(Shortcut::Unknown) => Monotonicity::Unknown,
        Err(Shortcut::Constant) => Monotonicity::Constant,
        Err(Shortcut::NotApplicable) => poly_monotonicity_slow(p, v, s),
    }
}

/// Why [`shifted_diff_sign`] gave no sign.
enum Shortcut {
    /// The reference algorithm answers `Unknown` before computing a sign.
    Unknown,
    /// No atom depends on `v`.
    Constant,
    /// The preconditions of the shortcut fail: use the reference algorithm.
    NotApplicable,
}

/// Whether an internal (`#`) variable occurs anywhere in `p`: it could clash with a delta.
fn has_internal_var(p: &Poly) -> bool {
    p.terms().iter().any(|(m, _)| {
        m.factors().iter().any(|(a, _)| match a {
            Atom::Var(w) => w.is_internal(),
            _ => a.div_parts().is_some_and(|(q, _)| has_internal_var(q)),
        })
    })
}

/// Binomial coefficient for small arguments (`n <= MAX_DEGREE`, so it fits in `u64`).
fn binomial(n: u32, k: u32) -> u64 {
    let k = k.min(n - k) as u64;
    let n = n as u64;
    let mut r: u64 = 1;
    for i in 0..k {
        r = r * (n - i) / (i + 1);
    }
    r
}

/// The sign (by rules and bounds, as [`poly_sign_fast`]) of `q - p`, where `q` is `p` with each
/// atom depending on `v` replaced by itself plus a fresh delta.
///
/// Each product `c * r * a1^e1 * .. * am^em` (the `ai` shifted, `r` the rest) contributes
/// `c * r * prod C(ei, ki) ai^(ei-ki) di^ki` for every `k != 0`; these products are pairwise
/// distinct (the exponents of the `di` and `ai` give back `k`, `e` and `r`), so the difference
/// has exactly these terms and its sign can be folded from them in any order (the set
/// operations are exact images, hence associative and commutative).
fn shifted_diff_sign(p: &Poly, v: &Var, s: Signs) -> Result<SignSet, Shortcut> {
    if !s.extra.is_empty() || p.has_rem_term() {
        return Err(Shortcut::NotApplicable);
    }
    let ds = deltas();
    // Shifted atoms in the order of the reference algorithm (same deltas, same early exits,
    // which come before any use of the deltas). `v` itself is looked up by pointer.
    let mut shifted: Vec<(&Atom, SignSet)> = Vec::new();
    let mut v_idx: Option<usize> = None;
    let mut internal = false;
    for (m, _) in p.terms() {
        for (a, _) in m.factors() {
            let dir = match a {
                Atom::Var(w) => {
                    internal |= w.is_internal();
                    if w != v || v_idx.is_some() {
                        continue;
                    }
                    SignSet::POS
                }
                _ => {
                    if shifted.iter().any(|(b, _)| *b == a) {
                        continue;
                    }
                    internal |= a.div_parts().is_some_and(|(q, _)| has_internal_var(q));
                    match atom_monotonicity(a, v, s.env) {
                        Monotonicity::Constant => continue,
                        Monotonicity::Increasing => SignSet::NON_NEG,
                        Monotonicity::Decreasing => SignSet::NON_POS,
                        _ => return Err(Shortcut::Unknown),
                    }
                }
            };
            if shifted.len() >= ds.len() {
                return Err(Shortcut::Unknown);
            }
            if matches!(a, Atom::Var(_)) {
                v_idx = Some(shifted.len());
            }
            shifted.push((a, dir));
        }
    }
    if internal {
        // An internal variable could be one of the deltas.
        return Err(Shortcut::NotApplicable);
    }
    if shifted.is_empty() {
        return Err(Shortcut::Constant);
    }
    let extra: Vec<(Var, SignSet)> = shifted
        .iter()
        .zip(ds)
        .map(|((_, dir), d)| (d.clone(), *dir))
        .collect();
    let se = Signs {
        env: s.env,
        extra: &extra,
    };
    let shifted_signs: Vec<SignSet> = shifted.iter().map(|(a, _)| atom_sign(a, se)).collect();
    let only_v = shifted.len() == 1 && v_idx.is_some();
    // Enumerate the expansion: (coefficient, multiplier, product sign) per term.
    let mut terms: Vec<(&BigRational, u64, SignSet)> = Vec::new();
    let mut total_terms = p.terms().len();
    let mut sh: Vec<(usize, u32)> = Vec::new();
    let mut ks: Vec<u32> = Vec::new();
    for (m, c) in p.terms() {
        // The rest's sign and the shifted factors (index into `shifted`, exponent).
        let mut rest = SignSet::POS;
        sh.clear();
        for (a, e) in m.factors() {
            let idx = match a {
                Atom::Var(w) => (w == v).then_some(v_idx).flatten(),
                _ if only_v => None,
                _ => shifted.iter().position(|(b, _)| *b == a),
            };
            match idx {
                Some(i) => sh.push((i, *e)),
                None => rest = rest.times(atom_sign(a, se).pow(*e)),
            }
        }
        if sh.is_empty() {
            continue;
        }
        // Caps of the reference algorithm: it fails (Unknown) past them; leave that to it.
        if m.degree() > MAX_DEGREE {
            return Err(Shortcut::NotApplicable);
        }
        let count = sh
            .iter()
            .try_fold(1usize, |acc, (_, e)| acc.checked_mul(*e as usize + 1))
            .filter(|n| *n <= MAX_TERMS)
            .ok_or(Shortcut::NotApplicable)?;
        total_terms += count - 1;
        if total_terms > MAX_TERMS {
            return Err(Shortcut::NotApplicable);
        }
        ks.clear();
        ks.resize(sh.len(), 0);
        loop {
            // Next k vector (odometer); stop after wrapping around to all zeros.
            let mut i = 0;
            while i < ks.len() {
                if ks[i] < sh[i].1 {
                    ks[i] += 1;
                    break;
                }
                ks[i] = 0;
                i += 1;
            }
            if i == ks.len() {
                break;
            }
            let mut mult = 1u64;
            let mut sign = rest;
            for ((idx, e), k) in sh.iter().zip(&ks) {
                mult *= binomial(*e, *k);
                sign = sign
                    .times(shifted_signs[*idx].pow(e - k))
                    .times(shifted[*idx].1.pow(*k));
            }
            if sign.is_empty() {
                // The reference fold is order-dependent with empty sets: leave it to it.
                return Err(Shortcut::NotApplicable);
            }
            terms.push((c, mult, sign));
        }
    }
    // Rule method.
    let mut r = SignSet::ZERO;
    for (c, _, ms) in &terms {
        r = r.plus(SignSet::of_rational(c).times(*ms));
        if r.is_top() {
            break;
        }
    }
    if r == SignSet::ZERO || r == SignSet::POS || r == SignSet::NEG {
        return Ok(r);
    }
    // Integer bound method (no constant term: every product has a delta).
    Ok(r.intersect(bounds_sign(
        None,
        terms.iter().map(|(c, mult, ms)| (*c, *mult, *ms)),
    )))
}

/// Reference implementation of [`poly_monotonicity_fast`]: builds the shifted polynomial and
/// the difference explicitly. Used where the shortcut does not apply (and by tests, to check it).
pub(crate) fn poly_monotonicity_slow(p: &Poly, v: &Var, s: Signs) -> Monotonicity {
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
    // The expression compiled once to checked `i128` arithmetic: the same exact values as
    // `Expr::eval` in big rationals, many times faster (phono3py's fc3.c spent two thirds
    // of its analysis here). A point where it overflows is evaluated exactly.
    let mut slots = crate::fast_eval::Slots::default();
    let compiled = crate::fast_eval::compile(e, &mut slots);
    let mut vals = vec![0i128; slots.count()];
    let (mut up, mut down) = (false, false);
    for round in 0..24usize {
        let mut ctx: HashMap<Var, BigRational> = HashMap::new();
        for (j, (w, pool)) in others.iter().zip(&pools).enumerate() {
            let idx = (round * (2 * j + 3) + j * 5 + round / 3) % pool.len();
            if let Some(k) = slots.get(w) {
                vals[k] = i128::from(pool[idx]);
            }
            ctx.insert(
                w.clone(),
                BigRational::from_integer(BigInt::from(pool[idx])),
            );
        }
        let mut prev: Option<BigRational> = None;
        for x in &vpool {
            if let Some(k) = slots.get(v) {
                vals[k] = i128::from(*x);
            }
            let fast = compiled
                .as_ref()
                .and_then(|c| c.eval(&vals))
                .map(|r| BigRational::new_raw(BigInt::from(r.num), BigInt::from(r.den)));
            let val = match fast {
                Some(val) => val,
                None => {
                    ctx.insert(v.clone(), BigRational::from_integer(BigInt::from(*x)));
                    let Ok(val) = e.eval(&ctx) else { return false };
                    val
                }
            };
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
