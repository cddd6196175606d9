//! The substitution method (thesis §7.2): bounds of a polynomial from substituting extreme
//! values for its variables, following its monotonicity in each; and `sign_of`, the best
//! sign, which tries it when the rule and bound methods of `sign` leave a sign ambiguous.
//! Apart from `sign` because it needs `monotonicity`, which itself computes signs by rules
//! and bounds only (the thesis' cycle between signs and monotonicity, broken by layers).

use crate::expr::Expr;
use crate::monotonicity::{poly_monotonicity_fast, Monotonicity};
use crate::poly::Poly;
use crate::sign::{extreme, fold_minmax, poly_sign_fast, SignEnv, SignSet, Signs};
use crate::var::Var;

fn poly_sign_substitution(p: &Poly, env: &SignEnv) -> SignSet {
    let s = Signs { env, extra: &[] };
    let (lower, upper) = bound_chains(p, env);
    let lower = lower.map(|g| poly_sign_fast(&g, s));
    let upper = upper.map(|g| poly_sign_fast(&g, s));
    let mut r = SignSet::TOP;
    if let Some(l) = lower {
        // f >= g: positive g forces positive f; non-negative g forces non-negative f.
        if l.is_subset(SignSet::POS) && !l.is_empty() {
            r = r.intersect(SignSet::POS);
        } else if l.is_subset(SignSet::NON_NEG) && !l.is_empty() {
            r = r.intersect(SignSet::NON_NEG);
        }
    }
    if let Some(u) = upper {
        if u.is_subset(SignSet::NEG) && !u.is_empty() {
            r = r.intersect(SignSet::NEG);
        } else if u.is_subset(SignSet::NON_POS) && !u.is_empty() {
            r = r.intersect(SignSet::NON_POS);
        }
    }
    r
}

/// The value substituted for `v` (sign set `sv`, monotonicity `mono` of the current bound) in
/// the lower (`lower`) or upper bound chain, if any.
fn chain_value(sv: SignSet, mono: Monotonicity, lower: bool) -> Option<i64> {
    if sv == SignSet::ZERO {
        return Some(0);
    }
    // Lower bound: increasing -> use v's minimum, decreasing -> its maximum (and the reverse for upper).
    match mono {
        // Constant in v over its range: any allowed value gives the same polynomial.
        Monotonicity::Constant => extreme(sv, true).or_else(|| extreme(sv, false)),
        Monotonicity::Increasing => extreme(sv, lower),
        Monotonicity::Decreasing => extreme(sv, !lower),
        _ => None,
    }
}

/// `g` with `v` replaced by `x`; `None` when the substitution fails (a cap).
fn chain_subst(g: &Poly, v: &Var, x: i64) -> Option<Poly> {
    if let Some(ng) = g.subst_unit(v, x) {
        return Some(ng);
    }
    let val = Poly::int(x);
    g.subst(&|w: &Var| if w == v { Some(val.clone()) } else { None })
        .ok()
}

/// One step of a bound chain: a live chain `(g, progressed)` after considering `v`; `None` once
/// a substitution failed (the chain then gives no bound).
fn chain_step(c: (Poly, bool), v: &Var, env: &SignEnv, lower: bool) -> Option<(Poly, bool)> {
    let (g, progressed) = c;
    if !g.contains_var(v) {
        return Some((g, progressed));
    }
    let sv = env.get(v);
    if extreme(sv, true).is_none() && extreme(sv, false).is_none() {
        // No finite extreme value to substitute: skip the costly monotonicity query.
        return Some((g, progressed));
    }
    let mono = if sv == SignSet::ZERO {
        Monotonicity::Unknown // unused: zero is substituted whatever the monotonicity
    } else {
        poly_monotonicity_fast(&g, v, Signs { env, extra: &[] })
    };
    match chain_value(sv, mono, lower) {
        None => Some((g, progressed)),
        Some(x) => chain_subst(&g, v, x).map(|ng| (ng, true)),
    }
}

/// Substitutes variables one at a time by their extreme values, following monotonicity, to get
/// polynomials `g <= p` (lower) and `g >= p` (upper) for all values allowed by `env`; `None`
/// for a chain that substituted nothing or failed.
///
/// The two chains run in lockstep and share their work (the monotonicity query, the
/// substitution) as long as they hold the same polynomial, which they often do for the
/// whole chain (no variable monotone); each chain's result is the one it computes alone.
pub(crate) fn bound_chains(p: &Poly, env: &SignEnv) -> (Option<Poly>, Option<Poly>) {
    let mut vars = std::collections::BTreeSet::new();
    p.collect_vars(&mut vars);
    let mut vars = vars.into_iter();
    // Shared phase: both chains hold `g` and the same `progressed`.
    let (mut g, mut progressed) = (p.clone(), false);
    let (mut low, mut up) = loop {
        let Some(v) = vars.next() else {
            let r = progressed.then_some(g);
            return (r.clone(), r);
        };
        if !g.contains_var(&v) {
            continue;
        }
        let sv = env.get(&v);
        if extreme(sv, true).is_none() && extreme(sv, false).is_none() {
            continue;
        }
        let mono = if sv == SignSet::ZERO {
            Monotonicity::Unknown // unused
        } else {
            poly_monotonicity_fast(&g, &v, Signs { env, extra: &[] })
        };
        let (xl, xu) = (chain_value(sv, mono, true), chain_value(sv, mono, false));
        if xl == xu {
            let Some(x) = xl else { continue };
            match chain_subst(&g, &v, x) {
                Some(ng) => (g, progressed) = (ng, true),
                None => return (None, None),
            }
        } else {
            let sub = |x: Option<i64>| match x {
                None => Some((g.clone(), progressed)),
                Some(x) => chain_subst(&g, &v, x).map(|ng| (ng, true)),
            };
            break (sub(xl), sub(xu));
        }
    };
    // Split phase: each chain on its own.
    for v in vars {
        low = low.and_then(|c| chain_step(c, &v, env, true));
        up = up.and_then(|c| chain_step(c, &v, env, false));
        if low.is_none() && up.is_none() {
            break;
        }
    }
    let done = |c: Option<(Poly, bool)>| c.and_then(|(g, progressed)| progressed.then_some(g));
    (done(low), done(up))
}

/// Sign by the substitution method (§7.2): variables are replaced by their extreme integer values
/// following the expression's monotonicity, giving lower/upper bounds whose sign is computed by rules.
pub fn sign_by_substitution(e: &Expr, env: &SignEnv) -> SignSet {
    fold_minmax(e, |p| poly_sign_substitution(p, env))
}

/// Best sign: intersection of the rule, integer-bound and (when still ambiguous) substitution methods.
pub fn sign_of(e: &Expr, env: &SignEnv) -> SignSet {
    let s = Signs { env, extra: &[] };
    fold_minmax(e, |p| {
        let r = poly_sign_fast(p, s);
        if r.is_empty() || r == SignSet::ZERO || r == SignSet::POS || r == SignSet::NEG {
            return r;
        }
        r.intersect(poly_sign_substitution(p, env))
    })
}
