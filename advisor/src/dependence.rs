//! Static loop-carried dependence tests on reconstructed byte addresses.
//!
//! For a loop `L` with induction variable `i`, two accesses through the same base conflict
//! across iterations if some iteration `i` of the first and a later iteration `i + d`
//! (`d >= 1`) of the second touch a common byte. With `f` and `g` their byte offsets, the
//! second's loop variables renamed (`j'`) and `i` replaced by `i + d`, the difference
//! `f - g` must lie in `(-size_g, size_f)` for an overlap. The tests, in order:
//!
//! - a symbolic range test (Banerjee-style bounds, as Blume and Eigenmann's range test with
//!   the engine's monotonicity): if the minimum of `f - g` over the iteration space is at
//!   least `size_g`, or its maximum at most `-size_f`, there is no dependence;
//! - a GCD test on the linear difference: if no value `c0 + gcd*m` falls in the window;
//! - an exact test when the difference depends on `d` alone (`4 - 4*d`): it yields the
//!   dependence distance (prefix sum: distance 1).
//!
//! Whatever none of them decides is "unknown": indirect indices (`a[idx[i]]`), aliasing.

use crate::access::MemAccess;
use crate::space::{extreme, IvRange, Space};
use frontend::loops::LoopId;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::{HashMap, HashSet};
use symbolic::{Expr, SignSet, Var};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependenceKind {
    /// Read after write: a later iteration reads what an earlier one wrote.
    Flow,
    /// Write after read.
    Anti,
    /// Write after write.
    Output,
}

impl DependenceKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            DependenceKind::Flow => "read-after-write",
            DependenceKind::Anti => "write-after-read",
            DependenceKind::Output => "write-after-write",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Independent,
    /// Proven, with the distance in iterations when it is a constant.
    Dependent {
        distance: Option<i64>,
    },
    Unknown {
        why: String,
    },
}

/// The result of testing one ordered pair of accesses (`first` in iteration `i`, `second`
/// in iteration `i + d`).
#[derive(Clone, Debug)]
pub struct PairResult {
    pub first: usize,
    pub second: usize,
    pub kind: DependenceKind,
    pub outcome: Outcome,
}

/// Tests every ordered pair with at least one store, through the same base, for a
/// dependence carried by loop `carrier`. `variant` lists symbols (other than induction
/// variables) whose value changes between iterations of the carrier, such as loads of
/// `idx[i]`: a difference that mentions them cannot be decided statically.
pub fn carried_dependences(
    accesses: &[MemAccess],
    space: &Space,
    carrier: LoopId,
    variant: &HashSet<Var>,
) -> Vec<PairResult> {
    let mut out = Vec::new();
    let Some(carrier_range) = space.of_loop(carrier) else {
        return out;
    };
    let renamed = RenamedSpace::new(space, carrier_range, variant);
    for (a, first) in accesses.iter().enumerate() {
        for (b, second) in accesses.iter().enumerate() {
            if !first.is_store && !second.is_store {
                continue;
            }
            let kind = match (first.is_store, second.is_store) {
                (true, true) => DependenceKind::Output,
                (true, false) => DependenceKind::Flow,
                _ => DependenceKind::Anti,
            };
            let mut outcome = Outcome::Independent;
            'pairs: for (base_f, f) in &first.alternatives {
                for (base_g, g) in &second.alternatives {
                    let result = match (base_f, base_g) {
                        (Some(x), Some(y)) if x == y => {
                            test_pair(f, g, first.elem_bytes, second.elem_bytes, &renamed, variant)
                        }
                        (Some(_), Some(_)) => continue, // different bases: the caller decides about aliasing
                        _ => Outcome::Unknown {
                            why: "the address has no single base pointer".into(),
                        },
                    };
                    outcome = merge(outcome, result);
                    if matches!(outcome, Outcome::Dependent { .. }) {
                        break 'pairs;
                    }
                }
            }
            if outcome != Outcome::Independent {
                out.push(PairResult {
                    first: a,
                    second: b,
                    kind,
                    outcome,
                });
            }
        }
    }
    out
}

fn merge(current: Outcome, next: Outcome) -> Outcome {
    match (current, next) {
        (d @ Outcome::Dependent { .. }, _) | (_, d @ Outcome::Dependent { .. }) => d,
        (u @ Outcome::Unknown { .. }, _) | (_, u @ Outcome::Unknown { .. }) => u,
        _ => Outcome::Independent,
    }
}

/// The iteration space with the second access's loop variables renamed: the carrier's
/// variable `i` becomes `i + d` (`d >= 1`), inner ones `j` become `j'`.
struct RenamedSpace {
    space: Space,
    /// Substitution applied to the second access's offset.
    second: HashMap<Var, Expr>,
    /// Inner induction variables and their renamed copies (`j`, `j'`).
    inner_pairs: Vec<(Var, Var)>,
    distance: Var,
}

impl RenamedSpace {
    fn new(space: &Space, carrier: &IvRange, variant: &HashSet<Var>) -> RenamedSpace {
        let d = Var::new("d#dep");
        let mut second: HashMap<Var, Expr> = HashMap::new();
        // Values loaded in the loop differ between the two iterations: `idx[i]` becomes
        // `idx[i]'`, and a difference that keeps either cannot be bounded.
        for v in variant {
            second.insert(v.clone(), Expr::var(&format!("{}'", v.name())));
        }
        // The next iteration is `i + step`, so iteration `k + d` has `i + step*d`.
        let step_d = Expr::var(d.name())
            .checked_mul(&Expr::integer(BigInt::from(carrier.step)))
            .unwrap_or_else(|_| Expr::var(d.name()));
        let carrier_plus_d = Expr::var(carrier.var.name())
            .checked_add(&step_d)
            .unwrap_or_else(|_| Expr::var(carrier.var.name()));
        second.insert(carrier.var.clone(), carrier_plus_d);
        let carrier_depth = space
            .ivs
            .iter()
            .position(|r| r.loop_id == carrier.loop_id)
            .unwrap_or(0);
        let mut ivs: Vec<IvRange> = space.ivs.clone();
        let mut env = space.env.clone();
        // Loops nested inside the carrier run independently in the second iteration.
        let mut inner_pairs = Vec::new();
        for r in space.ivs.iter().skip(carrier_depth + 1) {
            let primed = Var::new(&format!("{}'", r.var.name()));
            second.insert(r.var.clone(), Expr::var(primed.name()));
            inner_pairs.push((r.var.clone(), primed));
        }
        for r in space.ivs.iter().skip(carrier_depth + 1) {
            let primed = Var::new(&format!("{}'", r.var.name()));
            let lo = r.lo.substitute(&second).unwrap_or_else(|_| r.lo.clone());
            let hi = r.hi.substitute(&second).unwrap_or_else(|_| r.hi.clone());
            env.set(primed.clone(), env.get(&r.var));
            ivs.push(IvRange {
                var: primed,
                lo,
                hi,
                ..r.clone()
            });
        }
        // d ranges over [1, trips - 1]; it is the outermost variable of the renamed space.
        let trips_minus_one = carrier
            .trips
            .checked_sub(&Expr::constant(1))
            .unwrap_or_else(|_| carrier.trips.clone());
        env.set(d.clone(), SignSet::POS);
        let d_range = IvRange {
            var: d.clone(),
            lo: Expr::constant(1),
            hi: trips_minus_one,
            ..carrier.clone()
        };
        ivs.insert(0, d_range);
        RenamedSpace {
            space: Space {
                ivs,
                env,
                assumptions: space.assumptions.clone(),
            },
            second,
            inner_pairs,
            distance: d,
        }
    }
}

fn test_pair(
    f: &Expr,
    g: &Expr,
    size_f: u64,
    size_g: u64,
    renamed: &RenamedSpace,
    variant: &HashSet<Var>,
) -> Outcome {
    let Ok(g2) = g.substitute(&renamed.second) else {
        return Outcome::Unknown {
            why: "the address is too large to compare".into(),
        };
    };
    let Ok(diff) = f.checked_sub(&g2) else {
        return Outcome::Unknown {
            why: "the address is too large to compare".into(),
        };
    };
    let primed: HashSet<Var> = variant
        .iter()
        .map(|v| Var::new(&format!("{}'", v.name())))
        .collect();
    if let Some(v) = diff
        .vars()
        .iter()
        .find(|v| variant.contains(*v) || primed.contains(*v))
    {
        let name = v.name().trim_end_matches('\'');
        return Outcome::Unknown {
            why: format!(
                "the index depends on `{name}`, which changes from iteration to iteration"
            ),
        };
    }
    let size_f = BigInt::from(size_f);
    let size_g = BigInt::from(size_g);
    // Exact test: the difference depends on the distance alone.
    if diff.vars().iter().all(|v| *v == renamed.distance) {
        if let Some(outcome) = exact_in_distance(&diff, &renamed.distance, &size_f, &size_g) {
            return outcome;
        }
    }
    let window = size_f.clone().max(size_g.clone());
    let diff = drop_dominant_pairs(diff, renamed, &window);
    let mut assumptions = Vec::new();
    let min = extreme(&diff, &renamed.space, false, &mut assumptions);
    let max = extreme(&diff, &renamed.space, true, &mut assumptions);
    let env = &renamed.space.env;
    let ge = |e: &Option<Expr>, k: &BigInt| {
        e.as_ref()
            .is_some_and(|e| symbolic::compare(e, &Expr::integer(k.clone()), env).is_ge())
    };
    let le = |e: &Option<Expr>, k: &BigInt| {
        e.as_ref()
            .is_some_and(|e| symbolic::compare(e, &Expr::integer(k.clone()), env).is_le())
    };
    if ge(&min, &size_g) || le(&max, &-size_f.clone()) {
        return Outcome::Independent;
    }
    if gcd_excludes(&diff, &size_f, &size_g) {
        return Outcome::Independent;
    }
    Outcome::Unknown {
        why: format!("cannot bound the address difference {}", diff.to_c()),
    }
}

/// `diff = c0 + c1*d`: overlap iff `-size_g < diff < size_f` for some integer `d >= 1`.
fn exact_in_distance(diff: &Expr, d: &Var, size_f: &BigInt, size_g: &BigInt) -> Option<Outcome> {
    let poly = diff.as_poly()?;
    if !poly.is_linear_in(d) || !diff.is_exact_integer() {
        return None;
    }
    let c0 = poly.constant_term();
    let c1 = poly
        .linear_coeff(d)
        .map(|(c, _)| c)
        .unwrap_or_else(BigRational::zero);
    let lo = BigRational::from_integer(-size_g.clone());
    let hi = BigRational::from_integer(size_f.clone());
    if c1.is_zero() {
        let overlaps = c0 > lo && c0 < hi;
        return Some(if overlaps {
            Outcome::Dependent { distance: None }
        } else {
            Outcome::Independent
        });
    }
    // Smallest integer d >= 1 with lo < c0 + c1*d < hi.
    let (a, b) = ((lo - &c0) / &c1, (hi - &c0) / &c1);
    let (low, high) = if c1.is_positive() { (a, b) } else { (b, a) };
    let mut candidate = low.floor() + BigRational::one();
    if candidate < BigRational::one() {
        candidate = BigRational::one();
    }
    if candidate < high {
        let distance = candidate.to_integer().to_i64();
        return Some(Outcome::Dependent { distance });
    }
    Some(Outcome::Independent)
}

/// GCD test: the difference takes only values `c0 + g*m`; none of them in the window.
fn gcd_excludes(diff: &Expr, size_f: &BigInt, size_g: &BigInt) -> bool {
    let Some(poly) = diff.as_poly() else {
        return false;
    };
    if !diff.is_exact_integer() || poly.degree() > 1 {
        return false;
    }
    let mut g = BigInt::zero();
    let mut c0 = BigInt::zero();
    for (monomial, coefficient) in poly.terms() {
        if !coefficient.is_integer() {
            return false;
        }
        let c = coefficient.to_integer();
        if monomial.is_one() {
            c0 = c;
        } else {
            if !matches!(monomial.factors(), [(symbolic::Atom::Var(_), 1)]) {
                return false;
            }
            g = g.gcd(&c);
        }
    }
    if g.is_zero() {
        return false;
    }
    // Values c0 + g*m inside (-size_g, size_f)?
    let lo: BigInt = -size_g.clone() + 1;
    let hi: BigInt = size_f.clone() - 1;
    let first = {
        let r = (lo.clone() - &c0).mod_floor(&g);
        if r.is_zero() {
            lo.clone()
        } else {
            lo.clone() + (&g - r)
        }
    };
    first > hi
}

/// Delinearization: in `c*(j - j') + rest`, if `|c|` exceeds everything `rest` can reach by
/// at least the access size, the two accesses can only meet when `j = j'`, so the pair is
/// dropped (`B[j][i]` flattened to `640*j + 4*i`: rows never meet unless the row is equal).
fn drop_dominant_pairs(diff: Expr, renamed: &RenamedSpace, window: &BigInt) -> Expr {
    let mut current = diff;
    let env = &renamed.space.env;
    for (v, primed) in &renamed.inner_pairs {
        let Some(poly) = current.as_poly() else { break };
        let Some((c, rest)) = symbolic_coefficient(poly, v) else {
            continue;
        };
        let Some((c2, rest)) = symbolic_coefficient(&rest, primed) else {
            continue;
        };
        if c.is_zero() || c2 != c.neg() {
            continue;
        }
        let c_expr = Expr::Poly(c.clone());
        let magnitude = match symbolic::sign_of(&c_expr, env) {
            s if s.is_subset(SignSet::POS) => c_expr,
            s if s.is_subset(SignSet::NEG) => c_expr.neg(),
            _ => continue,
        };
        let rest = Expr::Poly(rest);
        let mut assumptions = Vec::new();
        let (Some(hi), Some(lo)) = (
            extreme(&rest, &renamed.space, true, &mut assumptions),
            extreme(&rest, &renamed.space, false, &mut assumptions),
        ) else {
            continue;
        };
        let Ok(reach) = symbolic::get_max(&hi, &lo.neg(), env) else {
            continue;
        };
        let Ok(margin) = magnitude.checked_sub(&reach) else {
            continue;
        };
        if symbolic::compare(&margin, &Expr::integer(window.clone()), env).is_ge() {
            current = rest;
        }
    }
    current
}

/// `p = coefficient*v + rest` with `coefficient` and `rest` free of `v`; `None` when `v`
/// appears non-linearly.
fn symbolic_coefficient(p: &symbolic::Poly, v: &Var) -> Option<(symbolic::Poly, symbolic::Poly)> {
    use symbolic::{Atom, Monomial, Poly};
    let mut coefficient = Vec::new();
    let mut rest = Vec::new();
    for (monomial, c) in p.terms() {
        let mut has = false;
        let mut other = Monomial::one();
        for (atom, exponent) in monomial.factors() {
            match atom {
                Atom::Var(w) if w == v => {
                    if *exponent != 1 {
                        return None;
                    }
                    has = true;
                }
                _ => {
                    if atom.contains_var(v) {
                        return None;
                    }
                    for _ in 0..*exponent {
                        other = other.mul(&Monomial::atom(atom.clone()));
                    }
                }
            }
        }
        if has {
            coefficient.push((other, c.clone()));
        } else {
            rest.push((monomial.clone(), c.clone()));
        }
    }
    Some((Poly::from_terms(coefficient), Poly::from_terms(rest)))
}
