//! The exact subscript test for rows of a row-major array: delinearize both addresses into
//! (row, column) subscripts, and decide whether the subscript equations and the loop bounds
//! have a common solution by Fourier-Motzkin elimination.
//!
//! The range tests bound an address difference; they cannot see that `a[k][l]` and `a[l][k]`
//! over `l > k` never meet across iterations of `k` (a symmetrization, a triangular copy
//! `a[j][i] = a[i][j]` over `j >= i`): the difference `n*(k - l') + (l - k')` takes every
//! sign. Written as subscripts, the accesses meet only when `k = l'` and `l = k'`, and with
//! `l > k`, `l' > k'` and `k' = k + d`, `d >= 1`, that asks for `k > k + d`: no solution.
//!
//! Delinearization: an element index `n*X + Y` with `0 <= Y <= n - 1` over the loop's
//! iterations (checked, on each access in its own iteration) is the pair `(X, Y)`, and two
//! such indices are equal exactly when both parts are. The system over the two iterations'
//! variables is then linear (products with `n` are gone), and a system with no rational
//! solution has no integer one: independence is proven. A bound that is not linear is left
//! out, which only enlarges the set of solutions (still sound).

use crate::space::{extreme_in, IvRange, Space};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::collections::{BTreeMap, HashMap, HashSet};
use symbolic::{Atom, Expr, Var};

/// Most inequalities elimination may create before giving up (it is exponential in the
/// worst case; dependence systems have a handful of variables).
const MAX_CONSTRAINTS: usize = 400;

/// The two iterations of a pair test: the space of one iteration, the space of both (the
/// later one's inner variables primed, the distance `d >= 1` in front), the substitution
/// that gives the later iteration's names, and the loop that carries them.
#[derive(Debug)]
pub struct PairSpace<'a> {
    pub original: &'a Space,
    pub renamed: &'a Space,
    pub second: &'a HashMap<Var, Expr>,
    pub carrier: &'a IvRange,
}

/// Whether the access at `f` in one iteration and the one at `g` in a later iteration of
/// the carrier never touch the same element of a row-major layout (see the module comment).
pub fn rows_never_meet(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
    pair: &PairSpace,
    assumptions: &mut Vec<String>,
) -> bool {
    if size_f != size_g || size_f.is_zero() {
        return false;
    }
    let elem = BigRational::from_integer(size_f.clone());
    let (Some(fe), Some(ge)) = (elements(f, &elem), elements(g, &elem)) else {
        return false;
    };
    let ivs: HashSet<&Var> = pair.renamed.ivs.iter().map(|r| &r.var).collect();
    // A block offset both accesses share and the loop does not change
    // (`adrs_shift + k*n + l` and `adrs_shift + l*n + k`) cancels out.
    let renamed: HashSet<&Var> = pair.second.keys().collect();
    let (fe, ge) = without_common_base(&fe, &ge, &renamed).unwrap_or((fe, ge));
    let mut candidates: Vec<Var> = fe
        .vars()
        .into_iter()
        .chain(ge.vars())
        .filter(|v| !ivs.contains(v))
        .collect();
    candidates.sort_by(|a, b| a.name().cmp(b.name()));
    candidates.dedup();
    for n in candidates {
        let mut needed = Vec::new();
        let Some(((xf, yf), (xg, yg))) = split(&fe, &n).zip(split(&ge, &n)) else {
            continue;
        };
        if !in_row(&yf, &n, pair.original, &mut needed)
            || !in_row(&yg, &n, pair.original, &mut needed)
        {
            continue;
        }
        let (Ok(xg2), Ok(yg2)) = (xg.substitute(pair.second), yg.substitute(pair.second)) else {
            continue;
        };
        let (Ok(rows), Ok(columns)) = (xf.checked_sub(&xg2), yf.checked_sub(&yg2)) else {
            continue;
        };
        let (Some(rows), Some(columns)) = (linear(&rows), linear(&columns)) else {
            continue;
        };
        if infeasible(vec![rows, columns], bounds(pair)) {
            for a in needed {
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
            return true;
        }
    }
    false
}

/// The offset in elements, when every coefficient is a multiple of the element size.
fn elements(offset: &Expr, elem: &BigRational) -> Option<Expr> {
    let e = offset.div_const(elem).ok()?;
    e.as_poly()?
        .terms()
        .iter()
        .all(|(_, c)| c.is_integer())
        .then_some(e)
}

/// `f` and `g` without the terms that mention none of the `renamed` variables (the carrier,
/// the loops inside it), when those are the same in both: the later iteration has them too.
fn without_common_base(f: &Expr, g: &Expr, renamed: &HashSet<&Var>) -> Option<(Expr, Expr)> {
    let base = |e: &Expr| -> Option<Expr> {
        let terms = e
            .as_poly()?
            .terms()
            .iter()
            .filter(|(m, _)| {
                !m.factors()
                    .iter()
                    .any(|(a, _)| renamed.iter().any(|v| a.contains_var(v)))
            })
            .cloned()
            .collect();
        Some(Expr::Poly(symbolic::Poly::from_terms(terms)))
    };
    let (bf, bg) = (base(f)?, base(g)?);
    if bf != bg || bf.vars().is_empty() {
        return None;
    }
    Some((f.checked_sub(&bf).ok()?, g.checked_sub(&bg).ok()?))
}

/// `e = n*X + Y` with neither part mentioning `n`.
fn split(e: &Expr, n: &Var) -> Option<(Expr, Expr)> {
    let (x, y) = crate::coefficient::symbolic_coefficient(e.as_poly()?, n)?;
    Some((Expr::Poly(x), Expr::Poly(y)))
}

/// `0 <= y <= n - 1` over the iteration space.
fn in_row(y: &Expr, n: &Var, space: &Space, needed: &mut Vec<String>) -> bool {
    let mut env = space.env.clone();
    let Some(lo) = extreme_in(y, space, false, &mut env, needed) else {
        return false;
    };
    let Some(hi) = extreme_in(y, space, true, &mut env, needed) else {
        return false;
    };
    let Ok(room) = Expr::var(n.name())
        .checked_sub(&Expr::constant(1))
        .and_then(|top| top.checked_sub(&hi))
    else {
        return false;
    };
    symbolic::compare(&lo, &Expr::constant(0), &env).is_ge()
        && symbolic::compare(&room, &Expr::constant(0), &env).is_ge()
}

/// `sum a_v * v + c`, a linear form over the variables.
type Linear = (BTreeMap<Var, BigRational>, BigRational);

fn linear(e: &Expr) -> Option<Linear> {
    let mut terms = BTreeMap::new();
    let mut constant = BigRational::zero();
    for (monomial, c) in e.as_poly()?.terms() {
        match monomial.factors() {
            [] => constant += c,
            [(Atom::Var(v), 1)] => {
                *terms.entry(v.clone()).or_insert_with(BigRational::zero) += c;
            }
            _ => return None,
        }
    }
    terms.retain(|_, c| !c.is_zero());
    Some((terms, constant))
}

/// `a - b >= 0` as a linear form, when both are linear.
fn at_least(a: &Expr, b: &Expr) -> Option<Linear> {
    linear(&a.checked_sub(b).ok()?)
}

/// Every bound the two iterations satisfy that is linear: each variable of the renamed
/// space within its range, the later iteration's carrier within the carrier's range, and
/// the signs the environment knows.
fn bounds(pair: &PairSpace) -> Vec<Linear> {
    let mut out = Vec::new();
    for r in &pair.renamed.ivs {
        let v = Expr::var(r.var.name());
        out.extend(at_least(&v, &r.lo));
        out.extend(at_least(&r.hi, &v));
    }
    let c = pair.carrier;
    if let Some(later) = pair.second.get(&c.var) {
        out.extend(at_least(later, &c.lo));
        out.extend(at_least(&c.hi, later));
    }
    let mut vars: Vec<Var> = out.iter().flat_map(|(t, _)| t.keys().cloned()).collect();
    vars.sort_by(|a, b| a.name().cmp(b.name()));
    vars.dedup();
    for v in vars {
        let sign = pair.renamed.env.get(&v);
        let floor = if !sign.has_neg() && !sign.has_zero() {
            1
        } else if !sign.has_neg() {
            0
        } else {
            continue;
        };
        out.push((
            BTreeMap::from([(v, BigRational::one())]),
            BigRational::from_integer(BigInt::from(-floor)),
        ));
    }
    out
}

/// Whether `equations = 0` and `inequalities >= 0` have no rational solution: equations
/// substituted away, then Fourier-Motzkin elimination. `false` when unsure (too large).
fn infeasible(mut equations: Vec<Linear>, mut inequalities: Vec<Linear>) -> bool {
    while let Some((terms, constant)) = equations.pop() {
        let Some((v, a)) = terms.iter().next().map(|(v, a)| (v.clone(), a.clone())) else {
            if !constant.is_zero() {
                return true;
            }
            continue;
        };
        // v = -(rest + constant) / a, substituted everywhere else.
        let mut value: Linear = (BTreeMap::new(), -constant / &a);
        for (w, b) in &terms {
            if *w != v {
                value.0.insert(w.clone(), -b / &a);
            }
        }
        for form in equations.iter_mut().chain(inequalities.iter_mut()) {
            substitute(form, &v, &value);
        }
    }
    loop {
        let mut kept = Vec::new();
        for (terms, constant) in inequalities {
            if terms.is_empty() {
                if constant.is_negative() {
                    return true;
                }
            } else {
                kept.push((terms, constant));
            }
        }
        inequalities = kept;
        // The variable whose elimination makes the fewest new constraints.
        let mut best: Option<(Var, usize)> = None;
        let mut counts: BTreeMap<&Var, (usize, usize)> = BTreeMap::new();
        for (terms, _) in &inequalities {
            for (v, a) in terms {
                let entry = counts.entry(v).or_default();
                if a.is_positive() {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
            }
        }
        for (v, (pos, neg)) in &counts {
            let cost = pos * neg;
            if best.as_ref().is_none_or(|(_, c)| cost < *c) {
                best = Some(((*v).clone(), cost));
            }
        }
        let Some((v, _)) = best else {
            return false;
        };
        let (mut pos, mut neg, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        for form in inequalities {
            match form.0.get(&v).map(|a| a.is_positive()) {
                Some(true) => pos.push(form),
                Some(false) => neg.push(form),
                None => rest.push(form),
            }
        }
        for p in &pos {
            for q in &neg {
                // p/a_p + q/|a_q| has no `v`.
                let ap = p.0[&v].clone();
                let aq = -q.0[&v].clone();
                let mut terms: BTreeMap<Var, BigRational> = BTreeMap::new();
                for (w, c) in p.0.iter() {
                    *terms.entry(w.clone()).or_insert_with(BigRational::zero) += c / &ap;
                }
                for (w, c) in q.0.iter() {
                    *terms.entry(w.clone()).or_insert_with(BigRational::zero) += c / &aq;
                }
                terms.retain(|_, c| !c.is_zero());
                rest.push((terms, &p.1 / &ap + &q.1 / &aq));
            }
            if rest.len() > MAX_CONSTRAINTS {
                return false;
            }
        }
        inequalities = rest;
    }
}

/// Replaces `v` by `value` in `form`.
fn substitute(form: &mut Linear, v: &Var, value: &Linear) {
    let Some(a) = form.0.remove(v) else {
        return;
    };
    for (w, b) in &value.0 {
        *form.0.entry(w.clone()).or_insert_with(BigRational::zero) += &a * b;
    }
    form.1 += &a * &value.1;
    form.0.retain(|_, c| !c.is_zero());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(terms: &[(&str, i64)], constant: i64) -> Linear {
        (
            terms
                .iter()
                .map(|(v, c)| (Var::new(v), BigRational::from_integer(BigInt::from(*c))))
                .collect(),
            BigRational::from_integer(BigInt::from(constant)),
        )
    }

    #[test]
    fn a_symmetrization_has_no_solution() {
        // k = l', l = k + d, l >= k + 1, l' >= k + d + 1, d >= 1.
        let equations = vec![
            form(&[("k", 1), ("l'", -1)], 0),
            form(&[("l", 1), ("k", -1), ("d", -1)], 0),
        ];
        let bounds = vec![
            form(&[("l", 1), ("k", -1)], -1),
            form(&[("l'", 1), ("k", -1), ("d", -1)], -1),
            form(&[("d", 1)], -1),
        ];
        assert!(infeasible(equations, bounds));
    }

    #[test]
    fn a_feasible_system_is_not_called_infeasible() {
        // k = l', l = k + d with l' >= k only (not strictly): k = l' works for d >= 1.
        let equations = vec![
            form(&[("k", 1), ("l'", -1)], 0),
            form(&[("l", 1), ("k", -1), ("d", -1)], 0),
        ];
        let bounds = vec![
            form(&[("l'", 1), ("k", -1)], 0),
            form(&[("d", 1)], -1),
            form(&[("n", 1), ("l", -1)], -1),
        ];
        assert!(!infeasible(equations, bounds));
    }

    #[test]
    fn contradicting_constants_are_infeasible() {
        assert!(infeasible(vec![form(&[], 3)], vec![]));
        assert!(infeasible(
            vec![],
            vec![form(&[("x", 1)], -5), form(&[("x", -1)], 2)]
        ));
        assert!(!infeasible(
            vec![],
            vec![form(&[("x", 1)], -5), form(&[("x", -1)], 7)]
        ));
    }
}
