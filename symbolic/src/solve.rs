//! Equation solving (thesis §7.2, Algorithm 7): linear equations by substitution, repeated on what
//! the substitutions make linear; C integer divisions `div(linear(x), k) = c` give the finite set
//! of integer solutions; every alternative is verified by substituting back. Also sign equations.

use crate::error::SymError;
use crate::expr::Expr;
use crate::poly::{Atom, Poly};
use crate::sign::{poly_sign_fast, SignEnv, Signs};
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// Most alternatives (integer solutions) enumerated before reporting a range instead.
pub const MAX_ALTERNATIVES: usize = 16;

/// How divisions in the equations are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// The thesis' reading: every division is exact division in Q (`(2*n)/4 = 100` gives `n = 200`).
    /// Remainders stay uninterpreted.
    Rational,
    /// C's reading: unknowns are integers, `/` truncates (`(2*n)/4 = 100` gives `n ∈ {200, 201}`).
    Integer,
}

impl fmt::Display for Semantics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Semantics::Rational => "rational (divisions exact in Q)",
            Semantics::Integer => "integer (C division truncates, unknowns are integers)",
        })
    }
}

/// `lhs = rhs`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Equation {
    /// Left-hand side.
    pub lhs: Expr,
    /// Right-hand side.
    pub rhs: Expr,
}

impl Equation {
    /// Builds an equation.
    pub fn new(lhs: Expr, rhs: Expr) -> Equation {
        Equation { lhs, rhs }
    }
}

impl fmt::Display for Equation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.lhs, self.rhs)
    }
}

/// One solution: values of the determined unknowns (possibly in terms of undetermined ones and parameters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternative {
    /// Values of determined unknowns.
    pub values: BTreeMap<Var, Expr>,
    /// Whether substituting back made every equation an identity (false: some stayed symbolic).
    pub verified: bool,
}

/// Too many integer solutions to list: `var` ranges over `[low, high]` (other values as in `partial`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegerRange {
    /// The unknown.
    pub var: Var,
    /// Smallest solution.
    pub low: BigInt,
    /// Largest solution.
    pub high: BigInt,
    /// Values determined before the range was found (may mention `var`).
    pub partial: BTreeMap<Var, Expr>,
}

/// Result of [`solve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The semantics used.
    pub semantics: Semantics,
    /// Verified alternatives; several when integer division admits several values.
    pub alternatives: Vec<Alternative>,
    /// Integer solution sets too large to enumerate.
    pub ranges: Vec<IntegerRange>,
    /// Unknowns no alternative determines.
    pub undetermined: Vec<Var>,
    /// Why branches had no solution (contradictions, no integer solution).
    pub conflicts: Vec<String>,
    /// Equations left unsolved (non-linear) after substitution.
    pub unsolved: Vec<Equation>,
}

impl Solution {
    /// Whether there is exactly one alternative and no range.
    pub fn is_unique(&self) -> bool {
        self.alternatives.len() == 1 && self.ranges.is_empty()
    }

    /// Whether the system was found to have no solution at all.
    pub fn has_no_solution(&self) -> bool {
        self.alternatives.is_empty() && self.ranges.is_empty() && !self.conflicts.is_empty()
    }

    /// The value of `v` when the solution is unique.
    pub fn value(&self, v: &Var) -> Option<&Expr> {
        if self.is_unique() {
            self.alternatives[0].values.get(v)
        } else {
            None
        }
    }

    /// The distinct constant values `v` takes across alternatives, sorted.
    pub fn constant_values(&self, v: &Var) -> Vec<BigRational> {
        let mut out: Vec<BigRational> = self
            .alternatives
            .iter()
            .filter_map(|a| a.values.get(v).and_then(Expr::as_constant))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

impl fmt::Display for Solution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "semantics: {}", self.semantics)?;
        for (i, a) in self.alternatives.iter().enumerate() {
            let vals: Vec<String> = a.values.iter().map(|(v, e)| format!("{v} = {e}")).collect();
            let tag = if a.verified {
                ""
            } else {
                " (not fully verified)"
            };
            writeln!(f, "alternative {}: {}{tag}", i + 1, vals.join(", "))?;
        }
        for r in &self.ranges {
            writeln!(f, "{} in [{}, {}]", r.var, r.low, r.high)?;
        }
        for c in &self.conflicts {
            writeln!(f, "conflict: {c}")?;
        }
        for e in &self.unsolved {
            writeln!(f, "unsolved: {e}")?;
        }
        if !self.undetermined.is_empty() {
            let u: Vec<String> = self.undetermined.iter().map(|v| v.to_string()).collect();
            writeln!(f, "undetermined: {}", u.join(", "))?;
        }
        Ok(())
    }
}

/// Replaces divisions by exact rational division (the Rational semantics).
fn relax(p: &Poly) -> Result<Poly, SymError> {
    p.replace_atoms(&|a: &Atom| match a {
        Atom::TruncDiv(n, k) | Atom::FloorDiv(n, k) => relax(n)
            .ok()
            .map(|r| r.scale(&BigRational::new(BigInt::one(), k.clone()))),
        _ => None,
    })
}

#[derive(Clone)]
struct Branch {
    eqs: Vec<Poly>,
    assign: BTreeMap<Var, Poly>,
}

#[derive(Default)]
struct Acc {
    finals: Vec<(BTreeMap<Var, Poly>, Vec<Poly>)>,
    ranges: Vec<IntegerRange>,
    conflicts: Vec<String>,
}

enum DivPattern {
    Values(Var, Vec<BigInt>),
    Range(Var, BigInt, BigInt),
    Empty(String),
}

fn ceil_div(a: &BigRational) -> BigInt {
    a.ceil().to_integer()
}

/// `a*div(alpha*x + beta, k) + r = 0` with constants a, r, alpha, beta and integer unknown x.
fn div_pattern(p: &Poly, unknowns: &BTreeSet<Var>) -> Option<DivPattern> {
    let r = p.constant_term();
    let rest: Vec<_> = p.terms().iter().filter(|t| !t.0.is_one()).collect();
    let [(m, a)] = rest.as_slice() else {
        return None;
    };
    let [(atom, 1)] = m.factors() else {
        return None;
    };
    let (floor, n, k) = match atom {
        Atom::FloorDiv(n, k) => (true, n, k),
        Atom::TruncDiv(n, k) => (false, n, k),
        _ => return None,
    };
    let mut vars = BTreeSet::new();
    n.collect_vars(&mut vars);
    let x = match vars.iter().collect::<Vec<_>>().as_slice() {
        [x] if unknowns.contains(*x) => (*x).clone(),
        _ => return None,
    };
    let (alpha, rest_n) = n.linear_coeff(&x)?;
    let beta = rest_n.as_constant()?;
    let t = -r / a;
    if !t.is_integer() {
        return Some(DivPattern::Empty(format!(
            "{} = {} has no integer solution",
            Expr::Poly(Poly::atom(atom.clone())),
            t
        )));
    }
    let (t, k) = (t.to_integer(), k.clone());
    let one = BigInt::one();
    // The dividend range giving quotient t: floor and truncation differ only for t <= 0.
    let (lo, hi) = if floor || t.is_positive() {
        (&k * &t, &k * &t + &k - &one)
    } else if t.is_negative() {
        (&k * &t - &k + &one, &k * &t)
    } else {
        (-&k + &one, &k - &one)
    };
    let to_r = |v: &BigInt| BigRational::from_integer(v.clone());
    let (xl, xh) = if alpha.is_positive() {
        ((to_r(&lo) - &beta) / &alpha, (to_r(&hi) - &beta) / &alpha)
    } else {
        ((to_r(&hi) - &beta) / &alpha, (to_r(&lo) - &beta) / &alpha)
    };
    let (xl, xh) = (ceil_div(&xl), xh.floor().to_integer());
    if xl > xh {
        return Some(DivPattern::Empty(format!(
            "no integer {x} gives {} = {t}",
            Expr::Poly(Poly::atom(atom.clone()))
        )));
    }
    let count = &xh - &xl + &one;
    if count > BigInt::from(MAX_ALTERNATIVES) {
        return Some(DivPattern::Range(x, xl, xh));
    }
    let mut vals = Vec::new();
    let mut v = xl;
    while v <= xh {
        vals.push(v.clone());
        v += &one;
    }
    Some(DivPattern::Values(x, vals))
}

fn assign(br: &mut Branch, u: &Var, value: &Poly) -> Result<(), SymError> {
    let f = |w: &Var| if w == u { Some(value.clone()) } else { None };
    for e in br.eqs.iter_mut() {
        *e = e.subst(&f)?;
    }
    for (_, val) in br.assign.iter_mut() {
        *val = val.subst(&f)?;
    }
    br.assign.insert(u.clone(), value.clone());
    Ok(())
}

fn solve_branch(mut br: Branch, unknowns: &BTreeSet<Var>, sem: Semantics, acc: &mut Acc) {
    if acc.finals.len() >= MAX_ALTERNATIVES {
        acc.conflicts
            .push("too many alternatives; some branches were dropped".into());
        return;
    }
    loop {
        br.eqs.retain(|p| !p.is_zero());
        if let Some(p) = br.eqs.iter().find(|p| p.is_constant()) {
            acc.conflicts
                .push(format!("contradiction: {} = 0", Expr::Poly(p.clone())));
            return;
        }
        // Pick an equation linear in some unknown; prefer unit coefficients (integer-friendly).
        let mut pick: Option<(usize, Var, BigRational, Poly)> = None;
        'outer: for (i, p) in br.eqs.iter().enumerate() {
            let mut vars = BTreeSet::new();
            p.collect_vars(&mut vars);
            for u in vars.intersection(unknowns) {
                if let Some((c, r)) = p.linear_coeff(u) {
                    let unit = c.abs().is_one();
                    if pick.is_none() || unit {
                        pick = Some((i, u.clone(), c, r));
                    }
                    if unit {
                        break 'outer;
                    }
                }
            }
        }
        let Some((i, u, c, r)) = pick else { break };
        br.eqs.remove(i);
        let value = r.neg().scale(&c.recip());
        if sem == Semantics::Integer {
            if let Some(v) = value.as_constant() {
                if !v.is_integer() {
                    acc.conflicts
                        .push(format!("no integer solution: {u} = {v}"));
                    return;
                }
            }
        }
        if let Err(e) = assign(&mut br, &u, &value) {
            acc.conflicts.push(format!("substitution failed: {e}"));
            return;
        }
    }
    if sem == Semantics::Integer {
        for idx in 0..br.eqs.len() {
            match div_pattern(&br.eqs[idx], unknowns) {
                None => continue,
                Some(DivPattern::Empty(why)) => {
                    acc.conflicts.push(why);
                    return;
                }
                Some(DivPattern::Range(x, low, high)) => {
                    let partial = br
                        .assign
                        .iter()
                        .map(|(v, p)| (v.clone(), Expr::Poly(p.clone())))
                        .collect();
                    acc.ranges.push(IntegerRange {
                        var: x,
                        low,
                        high,
                        partial,
                    });
                    return;
                }
                Some(DivPattern::Values(x, vals)) => {
                    for v in vals {
                        let mut b = br.clone();
                        b.eqs.remove(idx);
                        let val = Poly::constant(BigRational::from_integer(v));
                        if assign(&mut b, &x, &val).is_ok() {
                            solve_branch(b, unknowns, sem, acc);
                        }
                    }
                    return;
                }
            }
        }
    }
    acc.finals.push((br.assign, br.eqs));
}

/// Solves `equations` for `unknowns` (other variables are parameters) under `semantics`.
/// Signs in `env` are used only to discard alternatives that contradict them.
pub fn solve(
    equations: &[Equation],
    unknowns: &[Var],
    semantics: Semantics,
    env: &SignEnv,
) -> Solution {
    let unknown_set: BTreeSet<Var> = unknowns.iter().cloned().collect();
    let mut acc = Acc::default();
    let mut eqs = Vec::new();
    let mut minmax = Vec::new();
    for e in equations {
        match e.lhs.checked_sub(&e.rhs) {
            Ok(Expr::Poly(p)) => {
                let p = if semantics == Semantics::Rational {
                    match relax(&p) {
                        Ok(r) => r,
                        Err(err) => {
                            acc.conflicts.push(format!("{e}: {err}"));
                            continue;
                        }
                    }
                } else {
                    p
                };
                eqs.push(p);
            }
            _ => minmax.push(e.clone()),
        }
    }
    solve_branch(
        Branch {
            eqs,
            assign: BTreeMap::new(),
        },
        &unknown_set,
        semantics,
        &mut acc,
    );
    let mut alternatives = Vec::new();
    let mut unsolved: Vec<Equation> = Vec::new();
    for (assign, leftover) in acc.finals {
        let values: BTreeMap<Var, Expr> = assign
            .into_iter()
            .map(|(v, p)| (v, Expr::Poly(p)))
            .collect();
        match verify(equations, &values, semantics, env) {
            Verdict::Holds => alternatives.push(Alternative {
                values,
                verified: true,
            }),
            Verdict::Symbolic => {
                for p in leftover {
                    let eq = Equation::new(Expr::Poly(p), Expr::constant(0));
                    if !unsolved.contains(&eq) {
                        unsolved.push(eq);
                    }
                }
                alternatives.push(Alternative {
                    values,
                    verified: false,
                });
            }
            Verdict::Fails(why) => acc.conflicts.push(why),
        }
    }
    for e in minmax {
        if alternatives.iter().all(|a| !a.verified) && !unsolved.contains(&e) {
            unsolved.push(e);
        }
    }
    let undetermined = unknowns
        .iter()
        .filter(|u| !alternatives.iter().any(|a| a.values.contains_key(*u)))
        .cloned()
        .collect();
    Solution {
        semantics,
        alternatives,
        ranges: acc.ranges,
        undetermined,
        conflicts: acc.conflicts,
        unsolved,
    }
}

enum Verdict {
    Holds,
    Symbolic,
    Fails(String),
}

fn verify(
    equations: &[Equation],
    values: &BTreeMap<Var, Expr>,
    sem: Semantics,
    env: &SignEnv,
) -> Verdict {
    let map: HashMap<Var, Expr> = values.iter().map(|(v, e)| (v.clone(), e.clone())).collect();
    for (v, e) in values {
        let s = crate::substitution::sign_of(e, env);
        if s.intersect(env.get(v)).is_empty() {
            return Verdict::Fails(format!("{v} = {e} contradicts the sign of {v}"));
        }
    }
    let mut symbolic = false;
    for eq in equations {
        let diff = eq
            .lhs
            .substitute(&map)
            .and_then(|l| l.checked_sub(&eq.rhs.substitute(&map)?));
        let diff = match (diff, sem) {
            (Ok(Expr::Poly(p)), Semantics::Rational) => relax(&p).map(Expr::Poly),
            (d, _) => d,
        };
        match diff {
            Ok(d) if d.as_constant().is_some_and(|c| c.is_zero()) => {}
            Ok(d) if d.as_constant().is_some() => {
                return Verdict::Fails(format!("{eq} fails: difference {d}"))
            }
            _ => symbolic = true,
        }
    }
    if symbolic {
        Verdict::Symbolic
    } else {
        Verdict::Holds
    }
}

/// Sign-level solving: refines the signs of variables that occur linearly, `v = -r/c`
/// gives `sign(v) ⊆ sign(-r/c)`, iterated to a fixpoint (bounded).
pub fn solve_signs(equations: &[Equation], env: &SignEnv) -> SignEnv {
    let polys: Vec<Poly> = equations
        .iter()
        .filter_map(|e| e.lhs.checked_sub(&e.rhs).ok())
        .filter_map(|e| e.as_poly().cloned())
        .collect();
    let mut env = env.clone();
    for _ in 0..8 {
        let mut changed = false;
        for p in &polys {
            let mut vars = BTreeSet::new();
            p.collect_vars(&mut vars);
            for v in vars {
                let Some((c, r)) = p.linear_coeff(&v) else {
                    continue;
                };
                let val = r.neg().scale(&c.recip());
                let s = poly_sign_fast(
                    &val,
                    Signs {
                        env: &env,
                        extra: &[],
                    },
                );
                let cur = env.get(&v);
                let new = cur.intersect(s);
                if new != cur {
                    env.set(v, new);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    env
}
