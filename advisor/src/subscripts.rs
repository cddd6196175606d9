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
//!
//! The row length may also be a constant (`27*X + 9*l + 3*m + n`, phono3py's 3x3x3 blocks),
//! and where every variable of the column equation has small constant bounds the system is
//! decided over the integers by enumerating them: elimination over the rationals finds
//! `l = 1.5` where no integer solution exists.
//!
//! Elimination itself works over the integers where it can, as the Omega test does: every
//! form tightened (integer coefficients divided by their gcd, the constant rounded down),
//! equations solved exactly or confined to a residue class, and the variables whose
//! elimination is exact taken first. What is left inexact only loses precision.

use crate::access::Extents;
use crate::assumption::Assumption;
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
    /// The loop bounds by variable, made on first use and kept by the caller with the
    /// renamed space they come from, so every pair of a carrier shares them.
    pub bounds: &'a std::cell::OnceCell<LoopBounds>,
}

impl PairSpace<'_> {
    /// The bounds connected to `equations` (see [`LoopBounds`]).
    fn bounds_for(&self, equations: &[Linear]) -> Vec<Linear> {
        self.bounds
            .get_or_init(|| LoopBounds::new(self))
            .connected(self, equations)
    }
}

/// What bounds the two iterations, indexed by variable: each loop variable of the renamed
/// space within its range, and the later iteration's carrier within the carrier's range.
/// A system takes the inequalities connected to its equations through shared variables,
/// and the signs the environment knows of the variables they mention: the others constrain
/// other variables only, so leaving them out keeps the solutions' projection on the
/// equations' variables (and elimination over them was most of the time spent). Made once
/// per carrier: converting every bound for each pair was a fifth of fasttree's analysis,
/// whose largest renamed space then held 67,332 loop variables (its helpers' loops, and
/// their primed copies).
#[derive(Debug)]
pub struct LoopBounds {
    /// Per entry: its two inequalities as expressions `>= 0` (above the lower bound, below
    /// the upper), and their linear forms, made on first use.
    entries: Vec<([Expr; 2], std::cell::OnceCell<Vec<Linear>>)>,
    /// The entries whose inequalities mention each variable.
    by_var: HashMap<Var, Vec<usize>>,
}

impl LoopBounds {
    fn new(pair: &PairSpace) -> LoopBounds {
        let mut ranges: Vec<(Expr, &Expr, &Expr)> = pair
            .renamed
            .ivs
            .iter()
            .map(|r| (Expr::var(r.var.name()), &r.lo, &r.hi))
            .collect();
        let c = pair.carrier;
        if let Some(later) = pair.second.get(&c.var) {
            ranges.push((later.clone(), &c.lo, &c.hi));
        }
        let mut out = LoopBounds {
            entries: Vec::with_capacity(ranges.len()),
            by_var: HashMap::new(),
        };
        // `v <= min(a, b)` is `v <= a` and `v <= b` (the upper bound a declared extent
        // adds to a triangular one: `j <= min(i - 1, 7)`), `v >= max(a, b)` likewise: each
        // part is a linear bound where the whole is not.
        let parts = |e: &Expr, upper: bool| -> Vec<Expr> {
            match e {
                Expr::Min(ps) if upper => ps.iter().cloned().map(Expr::Poly).collect(),
                Expr::Max(ps) if !upper => ps.iter().cloned().map(Expr::Poly).collect(),
                _ => vec![e.clone()],
            }
        };
        let mut bounds: Vec<(Expr, Expr, Expr)> = Vec::new();
        for (v, lo, hi) in ranges {
            let (los, his) = (parts(lo, false), parts(hi, true));
            for (k, lo) in los.iter().enumerate() {
                for (m, hi) in his.iter().enumerate() {
                    // Each part once: the other side's first part stands in for the rest.
                    if k == 0 || m == 0 {
                        bounds.push((v.clone(), lo.clone(), hi.clone()));
                    }
                }
            }
        }
        for (v, lo, hi) in bounds {
            let (Ok(above), Ok(below)) = (v.checked_sub(&lo), hi.checked_sub(&v)) else {
                continue;
            };
            let k = out.entries.len();
            let mut vars: Vec<Var> = above.vars().into_iter().chain(below.vars()).collect();
            vars.sort_by(|a, b| a.name().cmp(b.name()));
            vars.dedup();
            for var in vars {
                out.by_var.entry(var).or_default().push(k);
            }
            out.entries
                .push(([above, below], std::cell::OnceCell::new()));
        }
        out
    }

    /// The linear bounds reachable from the variables of `equations` through shared
    /// variables, and the sign floors of the variables they mention.
    fn connected(&self, pair: &PairSpace, equations: &[Linear]) -> Vec<Linear> {
        let mut reached: HashSet<Var> = equations
            .iter()
            .flat_map(|(t, _)| t.keys().cloned())
            .collect();
        let mut stack: Vec<Var> = reached.iter().cloned().collect();
        let mut taken: HashSet<usize> = HashSet::new();
        let mut out: Vec<Linear> = Vec::new();
        while let Some(var) = stack.pop() {
            for &k in self.by_var.get(&var).map(Vec::as_slice).unwrap_or(&[]) {
                if !taken.insert(k) {
                    continue;
                }
                let (exprs, made) = &self.entries[k];
                let forms = made.get_or_init(|| exprs.iter().filter_map(linear).collect());
                // A bound that is not linear is left out, and with it what it mentions.
                for (terms, _) in forms {
                    for w in terms.keys() {
                        if reached.insert(w.clone()) {
                            stack.push(w.clone());
                        }
                    }
                }
                out.extend(forms.iter().cloned());
            }
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
}

/// Whether the access at `f` in one iteration and the one at `g` in a later iteration of
/// the carrier never touch the same element of a row-major layout (see the module comment).
pub fn rows_never_meet(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
    pair: &PairSpace,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let Some((fe, ge)) = element_indices(f, g, (size_f, size_g)) else {
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
        let equations = vec![rows, columns];
        let inequalities = pair.bounds_for(&equations);
        if no_integer_solution(equations, inequalities) {
            add_assumptions(assumptions, needed);
            return true;
        }
    }
    constant_rows_never_meet(&fe, &ge, pair, assumptions)
}

/// Whether the access at `f` in one iteration and the one at `g` in a later iteration of
/// the carrier never touch the same element, their element indices taken whole as one
/// linear equation under the loops' bounds, which relate the two iterations' variables:
/// a triangular bound (`x[i] -= L[i][j] * x[j]` over `j < i`, Cholesky's `A[i][j] -=
/// A[i][k] * A[j][k]` over `k < j`) keeps the later iteration's `j + d` below `i`, which the
/// range tests, bounding each variable alone, cannot use. Both accesses are of one size and
/// at whole-element offsets, so they overlap exactly when the indices are equal.
pub fn elements_never_meet(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
    pair: &PairSpace,
) -> bool {
    let Some((fe, ge)) = element_indices(f, g, (size_f, size_g)) else {
        return false;
    };
    let Ok(ge2) = ge.substitute(pair.second) else {
        return false;
    };
    let Some(equation) = fe.checked_sub(&ge2).ok().as_ref().and_then(linear) else {
        return false;
    };
    let equations = vec![equation];
    let inequalities = pair.bounds_for(&equations);
    no_integer_solution(equations, inequalities)
}

/// What a proof by C's in-bounds rule adds to the loop's assumptions.
pub const WITHIN_EXTENTS: &str = "subscripts stay within their declared extents (C99 6.5.6: `A[i][j]` with `double A[N][M]` has `0 <= j < M`)";

/// Whether the access at `f` in one iteration and the one at `g` in a later iteration of
/// the carrier never touch a common byte when every subscript of each stays within its
/// declared extent (`extents`, see [`crate::access::subscript_extents`]). Both run in a
/// conflicting pair of iterations, so both obey the rule there: `forcing[i][j][k][m]`
/// against `forcing[i][j][k][0]` (`double forcing[13][13][13][6]`) over `i`, with `j`
/// given by a global, differ by `8112*d` plus at most `8104` bytes from the inner
/// subscripts, whatever the global holds. The system: the byte window of an overlap
/// (`-size_f < f - g' < size_g`), each subscript's `0 <= x <= extent - 1` in its own
/// iteration, and the loops' bounds. A subscript or offset that is not linear is left out,
/// which only enlarges the set of solutions.
pub fn within_extents_never_meet(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
    (extents_f, extents_g): (&Extents, &Extents),
    pair: &PairSpace,
) -> bool {
    if extents_f.is_empty() && extents_g.is_empty() {
        return false;
    }
    let Ok(g2) = g.substitute(pair.second) else {
        return false;
    };
    let Some((terms, constant)) = f.checked_sub(&g2).ok().as_ref().and_then(opaque_linear) else {
        return false;
    };
    // `f - g' + size_f - 1 >= 0` and `size_g - 1 - (f - g') >= 0`: integers, so the open
    // window is the closed one a byte narrower on each side.
    let one = BigRational::one();
    let above = (
        terms.clone(),
        &constant + BigRational::from_integer(size_f.clone()) - &one,
    );
    let below = (
        terms.iter().map(|(v, c)| (v.clone(), -c)).collect(),
        BigRational::from_integer(size_g.clone()) - &one - &constant,
    );
    let mut inequalities = vec![above, below];
    let later = extents_g
        .iter()
        .filter_map(|(e, n)| Some((e.substitute(pair.second).ok()?, *n)));
    for (x, n) in extents_f.iter().cloned().chain(later) {
        let Some((terms, constant)) = opaque_linear(&x) else {
            continue;
        };
        let top = BigRational::from_integer(BigInt::from(n)) - &one;
        inequalities.push((
            terms.iter().map(|(v, c)| (v.clone(), -c)).collect(),
            top - &constant,
        ));
        inequalities.push((terms, constant));
    }
    inequalities.extend(pair.bounds_for(&inequalities));
    no_integer_solution(Vec::new(), inequalities)
}

/// Whether `goal >= 0` follows from `facts >= 0` for integer values of their variables:
/// `goal <= -1` together with the facts has no rational solution. A fact that is not linear
/// is left out (it could only have helped); a goal that is not linear is not implied.
pub fn implied(facts: &[Expr], goal: &Expr) -> bool {
    let Some((terms, constant)) = opaque_linear(goal) else {
        return false;
    };
    let negated = (
        terms.iter().map(|(v, c)| (v.clone(), -c)).collect(),
        -constant - BigRational::one(),
    );
    let mut inequalities: Vec<Linear> = facts.iter().filter_map(opaque_linear).collect();
    inequalities.push(negated);
    infeasible(Vec::new(), inequalities)
}

/// The element indices of two accesses of one size at whole-element offsets: they overlap
/// exactly when the indices are equal.
fn element_indices(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
) -> Option<(Expr, Expr)> {
    if size_f != size_g || size_f.is_zero() {
        return None;
    }
    let elem = BigRational::from_integer(size_f.clone());
    Some((elements(f, &elem)?, elements(g, &elem)?))
}

/// Most constant row lengths [`constant_rows_never_meet`] tries.
const MAX_CONSTANT_ROWS: usize = 8;

/// The delinearization with a constant row length `r`: phono3py's `fc3[adrs + l*9 + m*3 + n]`
/// against `fc3[adrs_t + m*9 + l*3 + n]`, with `adrs` and `adrs_t` multiples of 27 built
/// from loads. Each index is `r*X + Y` with `X` the terms whose coefficients `r` divides
/// and `0 <= Y <= r - 1`; equal indices have equal `Y` (their difference is a multiple of
/// `r` smaller than `r`), so `Y = Y'` having no solution proves independence whatever `X`
/// is. `X` need not be linear, nor known: its equation is left out. The lengths tried are
/// the magnitudes of the coefficients, largest first.
fn constant_rows_never_meet(
    fe: &Expr,
    ge: &Expr,
    pair: &PairSpace,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let (Some(pf), Some(pg)) = (fe.as_poly(), ge.as_poly()) else {
        return false;
    };
    let mut lengths: Vec<BigInt> = pf
        .terms()
        .iter()
        .chain(pg.terms())
        .filter(|(m, c)| !m.is_one() && c.is_integer())
        .map(|(_, c)| c.to_integer().abs())
        .filter(|c| *c > BigInt::one())
        .collect();
    lengths.sort_unstable_by(|a, b| b.cmp(a));
    lengths.dedup();
    for r in lengths.into_iter().take(MAX_CONSTANT_ROWS) {
        let (Some((xf, yf)), Some((xg, yg))) = (split_constant(pf, &r), split_constant(pg, &r))
        else {
            continue;
        };
        // Nothing in a row part: the range tests already saw this difference.
        if xf.terms().is_empty() && xg.terms().is_empty() {
            continue;
        }
        let (yf, yg) = (Expr::Poly(yf), Expr::Poly(yg));
        let Ok(yg2) = yg.substitute(pair.second) else {
            continue;
        };
        let Some(columns) = yf.checked_sub(&yg2).ok().and_then(|c| linear(&c)) else {
            continue;
        };
        // The cheap question first: most lengths leave a column equation with solutions.
        // A box of constant bounds is decided exactly; elimination only where there is none.
        let equations = vec![columns];
        let inequalities = pair.bounds_for(&equations);
        let excluded = box_decides(&equations, &inequalities)
            .unwrap_or_else(|| infeasible(equations, inequalities));
        if !excluded {
            continue;
        }
        let mut needed = Vec::new();
        if within_constant_row(&yf, &r, pair.original, &mut needed)
            && within_constant_row(&yg, &r, pair.original, &mut needed)
        {
            add_assumptions(assumptions, needed);
            return true;
        }
    }
    false
}

/// `p = r*X + Y`: `X` the terms whose coefficients `r` divides (over `r`), with the multiple
/// of `r` in the constant; `Y` the rest. `None` when a coefficient is not an integer or `X`
/// may not be an integer.
fn split_constant(p: &symbolic::Poly, r: &BigInt) -> Option<(symbolic::Poly, symbolic::Poly)> {
    use num_integer::Integer;
    let (mut row, mut column) = (Vec::new(), Vec::new());
    for (monomial, c) in p.terms() {
        if !c.is_integer() {
            return None;
        }
        let c = c.to_integer();
        let (quotient, remainder) = c.div_mod_floor(r);
        if monomial.is_one() {
            row.push((monomial.clone(), BigRational::from_integer(quotient)));
            column.push((monomial.clone(), BigRational::from_integer(remainder)));
        } else if remainder.is_zero() {
            row.push((monomial.clone(), BigRational::from_integer(quotient)));
        } else {
            column.push((monomial.clone(), BigRational::from_integer(c)));
        }
    }
    let row = symbolic::Poly::from_terms(row);
    row.is_exact_integer()
        .then(|| (row, symbolic::Poly::from_terms(column)))
}

/// `0 <= y <= r - 1` over the iteration space.
fn within_constant_row(y: &Expr, r: &BigInt, space: &Space, needed: &mut Vec<Assumption>) -> bool {
    let mut env = space.env.clone();
    let (Some(lo), Some(hi)) = (
        extreme_in(y, space, false, &mut env, needed),
        extreme_in(y, space, true, &mut env, needed),
    ) else {
        return false;
    };
    let last = Expr::integer(r - BigInt::one());
    symbolic::compare(&lo, &Expr::constant(0), &env).is_ge()
        && symbolic::compare(&hi, &last, &env).is_le()
}

fn add_assumptions(assumptions: &mut Vec<Assumption>, needed: Vec<Assumption>) {
    for a in needed {
        if !assumptions.contains(&a) {
            assumptions.push(a);
        }
    }
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
fn in_row(y: &Expr, n: &Var, space: &Space, needed: &mut Vec<Assumption>) -> bool {
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
    linear_form(e, false)
}

/// [`linear`] with each division or remainder (`rem(sel[i], 4)`) taken as a variable of
/// its own, named by its text so that it is the same variable wherever it occurs: the
/// in-bounds rule bounds it as a subscript, and nothing else is known of it (which only
/// enlarges the set of solutions).
fn opaque_linear(e: &Expr) -> Option<Linear> {
    linear_form(e, true)
}

fn linear_form(e: &Expr, opaque_atoms: bool) -> Option<Linear> {
    let mut terms = BTreeMap::new();
    let mut constant = BigRational::zero();
    for (monomial, c) in e.as_poly()?.terms() {
        let v = match monomial.factors() {
            [] => {
                constant += c;
                continue;
            }
            [(Atom::Var(v), 1)] => v.clone(),
            [(atom, 1)] if opaque_atoms => Var::new(&format!("#{atom}")),
            _ => return None,
        };
        *terms.entry(v).or_insert_with(BigRational::zero) += c;
    }
    terms.retain(|_, c| !c.is_zero());
    Some((terms, constant))
}

/// Most points [`box_decides`] enumerates.
const MAX_BOX_POINTS: u64 = 4096;
/// Largest coefficient and bound [`box_decides`] takes (2^40).
const SMALL: i128 = 1 << 40;

/// Whether `equations = 0` and `inequalities >= 0` have no integer solution: none in a small
/// box of constant bounds, or none over the rationals.
fn no_integer_solution(equations: Vec<Linear>, inequalities: Vec<Linear>) -> bool {
    box_excludes(&equations, &inequalities) || infeasible(equations, inequalities)
}

fn box_excludes(equations: &[Linear], inequalities: &[Linear]) -> bool {
    box_decides(equations, inequalities) == Some(true)
}

/// Exact over the integers where elimination over the rationals is not: when every variable
/// of the equations has constant bounds among the inequalities and the box they make holds
/// at most [`MAX_BOX_POINTS`] points, whether none of them satisfies the system. phono3py's
/// `9l + 3m + n = 9m' + 3l + n'` over `0..3` with `m' > m` has rational solutions
/// (`l = 1.5`) and no integer one. Inequalities over other variables are left out, which
/// only enlarges the set of solutions. `None` when it does not apply.
fn box_decides(equations: &[Linear], inequalities: &[Linear]) -> Option<bool> {
    let mut vars: Vec<&Var> = equations.iter().flat_map(|(t, _)| t.keys()).collect();
    vars.sort_by(|a, b| a.name().cmp(b.name()));
    vars.dedup();
    if vars.is_empty() {
        return None;
    }
    let index: HashMap<&Var, usize> = vars.iter().enumerate().map(|(k, v)| (*v, k)).collect();
    let integral = |(terms, constant): &Linear| -> Option<(Vec<(usize, i128)>, i128)> {
        let scale = terms
            .values()
            .chain(std::iter::once(constant))
            .fold(BigInt::one(), |l, c| {
                num_integer::Integer::lcm(&l, c.denom())
            });
        let int = |c: &BigRational| (c * BigRational::from_integer(scale.clone())).to_integer();
        // Small enough that no evaluation below overflows: |a*x| < 2^80 for a few terms.
        let small = |c: BigInt| i128::try_from(c).ok().filter(|c| c.abs() <= SMALL);
        let terms = terms
            .iter()
            .map(|(v, c)| Some((*index.get(v)?, small(int(c))?)))
            .collect::<Option<Vec<_>>>()?;
        Some((terms, small(int(constant))?))
    };
    let eqs = equations.iter().map(integral).collect::<Option<Vec<_>>>()?;
    let ineqs: Vec<_> = inequalities.iter().filter_map(integral).collect();
    let (mut lo, mut hi) = (
        vec![None::<i128>; vars.len()],
        vec![None::<i128>; vars.len()],
    );
    for (terms, c) in &ineqs {
        // a*x + c >= 0
        if let [(v, a)] = terms.as_slice() {
            if *a > 0 {
                let bound = (-c).div_euclid(*a) + i128::from((-c).rem_euclid(*a) != 0);
                lo[*v] = Some(lo[*v].map_or(bound, |b| b.max(bound)));
            } else if *a < 0 {
                let bound = c.div_euclid(-a);
                hi[*v] = Some(hi[*v].map_or(bound, |b| b.min(bound)));
            }
        }
    }
    let mut points: u64 = 1;
    let mut bounds = Vec::with_capacity(vars.len());
    for (l, h) in lo.iter().zip(&hi) {
        let (Some(l), Some(h)) = (*l, *h) else {
            return None;
        };
        if l.abs() > SMALL || h.abs() > SMALL {
            return None;
        }
        if h < l {
            return Some(true);
        }
        let Ok(size) = u64::try_from(h - l + 1) else {
            return None;
        };
        points = points.saturating_mul(size);
        if points > MAX_BOX_POINTS {
            return None;
        }
        bounds.push((l, h));
    }
    let value = |(terms, c): &(Vec<(usize, i128)>, i128), x: &[i128]| {
        terms.iter().map(|(v, a)| a * x[*v]).sum::<i128>() + c
    };
    let mut x: Vec<i128> = bounds.iter().map(|(l, _)| *l).collect();
    loop {
        if eqs.iter().all(|f| value(f, &x) == 0) && ineqs.iter().all(|f| value(f, &x) >= 0) {
            return Some(false);
        }
        let mut k = 0;
        loop {
            if k == x.len() {
                return Some(true);
            }
            x[k] += 1;
            if x[k] <= bounds[k].1 {
                break;
            }
            x[k] = bounds[k].0;
            k += 1;
        }
    }
}

/// Whether `equations = 0` and `inequalities >= 0` have no integer solution: equations
/// substituted away, then Fourier-Motzkin elimination, each form kept tight over the
/// integers (see [`integral_form`]). Every variable of these systems holds an integer: a
/// subscript, a loop counter, a size or a byte address (a conversion from floating point is
/// an opaque atom, and a loop that compares its counter in floating point has no bounds).
/// `false` when unsure (too large).
fn infeasible(mut equations: Vec<Linear>, mut inequalities: Vec<Linear>) -> bool {
    let mut fresh = 0usize;
    loop {
        while let Some(equation) = equations.pop() {
            match solve_equation(equation, &mut fresh) {
                Solved::Contradiction => return true,
                Solved::Trivial => {}
                Solved::Substitute { var, value, again } => {
                    equations.extend(again);
                    for form in equations.iter_mut().chain(inequalities.iter_mut()) {
                        substitute(form, &var, &value);
                    }
                }
            }
        }
        // Of forms with the same terms only the tightest (smallest constant) constrains:
        // the others would multiply the work of every elimination after this one.
        let mut kept: BTreeMap<BTreeMap<Var, BigRational>, BigRational> = BTreeMap::new();
        for (terms, constant) in inequalities {
            let (terms, constant) = tightened(terms, constant);
            if terms.is_empty() {
                if constant.is_negative() {
                    return true;
                }
            } else {
                match kept.entry(terms) {
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert(constant);
                    }
                    std::collections::btree_map::Entry::Occupied(mut e) => {
                        if constant < *e.get() {
                            e.insert(constant);
                        }
                    }
                }
            }
        }
        // `t + c >= 0` and `-t - c >= 0` are the equation `t + c = 0` (a byte window
        // between accesses of one size, tightened): solved exactly over the integers
        // rather than eliminated as two inequalities. Opposite forms with no room
        // between them contradict each other.
        let mut opposite_pairs = Vec::new();
        for (terms, constant) in &kept {
            let negated: BTreeMap<Var, BigRational> =
                terms.iter().map(|(v, c)| (v.clone(), -c)).collect();
            if let Some(other) = kept.get(&negated) {
                let room = constant + other;
                if room.is_negative() {
                    return true;
                }
                if room.is_zero() && terms < &negated {
                    opposite_pairs.push((terms.clone(), negated, constant.clone()));
                }
            }
        }
        if !opposite_pairs.is_empty() {
            for (terms, negated, constant) in opposite_pairs {
                kept.remove(&terms);
                kept.remove(&negated);
                equations.push((terms, constant));
            }
            inequalities = kept.into_iter().collect();
            continue;
        }
        inequalities = kept.into_iter().collect();
        // The variable whose elimination makes the fewest new constraints, among those
        // whose elimination is exact over the integers when there are any: a variable with
        // coefficient 1 in every lower bound (or -1 in every upper bound) has an integer
        // between any two of its bounds (the Omega test's exact shadow). Eliminating `j`
        // of `100j - 100j' - d + 100 >= 0` first would keep the rational `j - j' = -0.5`.
        let mut best: Option<(Var, (bool, usize))> = None;
        let mut counts: BTreeMap<&Var, (usize, usize, bool, bool)> = BTreeMap::new();
        for (terms, _) in &inequalities {
            for (v, a) in terms {
                let entry = counts.entry(v).or_insert((0, 0, true, true));
                if a.is_positive() {
                    entry.0 += 1;
                    entry.2 &= a.is_one();
                } else {
                    entry.1 += 1;
                    entry.3 &= (-a).is_one();
                }
            }
        }
        for (v, (pos, neg, unit_lower, unit_upper)) in &counts {
            let cost = (!(*unit_lower || *unit_upper), pos * neg);
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

/// Most lattice substitutions one system may make (each shrinks the coefficients of the
/// equation it comes from, so a handful suffice).
const MAX_LATTICE_STEPS: usize = 32;

/// What one equation does to a system (see [`solve_equation`]).
enum Solved {
    /// No integer solution.
    Contradiction,
    /// `0 = 0`.
    Trivial,
    /// Replace `var` by `value` everywhere; `again` is the equation to solve once more
    /// (after a lattice step it still has to hold, over the new variable).
    Substitute {
        var: Var,
        value: Linear,
        again: Option<Linear>,
    },
}

/// One equation over integer variables, solved as the Omega test does: scaled to integer
/// coefficients; no solution when their gcd misses the constant (`6x + 3y = 2`); a
/// variable with coefficient ±1 substituted exactly; otherwise, where the other
/// coefficients share a factor `g` that the variable's `a` does not (`1200j - 1200i =
/// 1201d`: `g = 1200`), the variable is confined to its residue class, `d = g*t + r` with
/// `a*r + c ≡ 0 (mod g)` and `t` a fresh integer, and the equation is solved again over
/// `t`. With none of these, the rational substitution (which only loses precision).
fn solve_equation((terms, constant): Linear, fresh: &mut usize) -> Solved {
    use num_integer::Integer;
    let Some((g, c)) = integral_form(&terms, &constant) else {
        return if constant.is_zero() {
            Solved::Trivial
        } else {
            Solved::Contradiction
        };
    };
    if !(&c % &g).is_zero() {
        return Solved::Contradiction;
    }
    // The equation over coprime integer coefficients.
    let scale = terms
        .values()
        .chain(std::iter::once(&constant))
        .fold(BigInt::one(), |l, x| l.lcm(x.denom()));
    let factor = BigRational::new(scale, g);
    let coefficients: BTreeMap<Var, BigInt> = terms
        .iter()
        .map(|(v, a)| (v.clone(), (a * &factor).to_integer()))
        .collect();
    let c = (&constant * &factor).to_integer();
    let rational_substitution = |v: &Var, a: &BigInt| {
        let a = BigRational::from_integer(a.clone());
        let mut value: Linear = (BTreeMap::new(), -BigRational::from_integer(c.clone()) / &a);
        for (w, b) in &coefficients {
            if w != v {
                value
                    .0
                    .insert(w.clone(), -BigRational::from_integer(b.clone()) / &a);
            }
        }
        Solved::Substitute {
            var: v.clone(),
            value,
            again: None,
        }
    };
    if let Some((v, a)) = coefficients.iter().find(|(_, a)| a.abs().is_one()) {
        return rational_substitution(v, a);
    }
    if *fresh < MAX_LATTICE_STEPS {
        for (v, a) in &coefficients {
            let others = coefficients
                .iter()
                .filter(|(w, _)| *w != v)
                .fold(BigInt::zero(), |acc, (_, b)| acc.gcd(b));
            if others <= BigInt::one() {
                continue;
            }
            // gcd(a, others) = 1 (the coefficients are coprime): a has an inverse mod g.
            let inverse = a.mod_floor(&others).extended_gcd(&others).x;
            let residue = (-&c * inverse).mod_floor(&others);
            *fresh += 1;
            let t = Var::new(&format!("#lattice{fresh}"));
            let value: Linear = (
                BTreeMap::from([(t, BigRational::from_integer(others))]),
                BigRational::from_integer(residue),
            );
            let to_integers = |x: &BigInt| BigRational::from_integer(x.clone());
            let equation: Linear = (
                coefficients
                    .iter()
                    .map(|(w, b)| (w.clone(), to_integers(b)))
                    .collect(),
                to_integers(&c),
            );
            return Solved::Substitute {
                var: v.clone(),
                value,
                again: Some(equation),
            };
        }
    }
    let (v, a) = coefficients.iter().next().expect("an equation with terms");
    rational_substitution(v, a)
}

/// `terms + constant` scaled to integer coefficients: the gcd of the terms' coefficients and
/// the scaled constant. `None` without terms.
fn integral_form(
    terms: &BTreeMap<Var, BigRational>,
    constant: &BigRational,
) -> Option<(BigInt, BigInt)> {
    use num_integer::Integer;
    if terms.is_empty() {
        return None;
    }
    let scale = terms
        .values()
        .chain(std::iter::once(constant))
        .fold(BigInt::one(), |l, c| l.lcm(c.denom()));
    let g = terms.values().fold(BigInt::zero(), |g, c| {
        g.gcd(&(c * BigRational::from_integer(scale.clone())).to_integer())
    });
    let c = (constant * BigRational::from_integer(scale)).to_integer();
    (!g.is_zero()).then_some((g, c))
}

/// An inequality `terms + constant >= 0` over integers made as tight as its integer
/// solutions allow (the Omega test's normalization): scaled to integer coefficients with
/// gcd `g`, then divided by `g` with the constant rounded down. `100x - d >= 0` with
/// `d <= 98` and `d >= 1` has the rational solution `x = 0.5`; tightened, elimination finds
/// `x >= 1` and `x <= 0`.
fn tightened(
    terms: BTreeMap<Var, BigRational>,
    constant: BigRational,
) -> (BTreeMap<Var, BigRational>, BigRational) {
    use num_integer::Integer;
    let Some((g, c)) = integral_form(&terms, &constant) else {
        return (terms, constant);
    };
    let scale = terms
        .values()
        .chain(std::iter::once(&constant))
        .fold(BigInt::one(), |l, c| l.lcm(c.denom()));
    let factor = BigRational::new(scale, g.clone());
    let terms = terms.into_iter().map(|(v, a)| (v, a * &factor)).collect();
    (terms, BigRational::from_integer(c.div_floor(&g)))
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
    fn rows_a_whole_row_apart_need_a_column_past_its_extent() {
        // `v[j + 1][i]` against `v[j'][i + d]` with `double v[N][100]`: the byte window
        // `-8 < 800(j + 1 - j') - 8d < 8` and `1 <= d <= 98` (columns within 0..=99). Over
        // the rationals `j - j' = -0.5`, `d = 50` solves it; over the integers nothing does.
        let bounds = vec![
            form(&[("d", -8), ("j", 800), ("j'", -800)], 807),
            form(&[("d", 8), ("j", -800), ("j'", 800)], -793),
            form(&[("d", 1)], -1),
            form(&[("d", -1)], 98),
            form(&[("j", 1)], -1),
            form(&[("j'", 1)], -1),
            form(&[("j", -1), ("n", 1)], -2),
            form(&[("j'", -1), ("n", 1)], -2),
        ];
        assert!(infeasible(Vec::new(), bounds.clone()));
        // One column more and `d = 100` is a solution.
        let mut wider = bounds;
        wider[3] = form(&[("d", -1)], 100);
        assert!(!infeasible(Vec::new(), wider));
    }

    #[test]
    fn a_diagonal_meets_a_column_only_through_a_multiple_of_the_row_length() {
        // correlation's `corr[j][i]` against `corr[i + d][i + d]` with rows of 1200:
        // `1200j - 1200i - 1201d = 0` needs `d` a multiple of 1200, and the columns keep
        // `d <= 1199`. Over the rationals `d = 1` works.
        let equation = form(&[("j", 1200), ("i", -1200), ("d", -1201)], 0);
        let bounds = vec![
            form(&[("d", 1)], -1),
            form(&[("i", 1)], 0),
            form(&[("i", -1), ("d", -1)], 1199),
        ];
        assert!(infeasible(vec![equation.clone()], bounds.clone()));
        // Columns up to 1200 leave room for d = 1200.
        let mut wider = bounds.clone();
        wider[2] = form(&[("i", -1), ("d", -1)], 1200);
        assert!(!infeasible(vec![equation.clone()], wider));
        // The same equation written as a byte window of two 8-byte accesses.
        let scaled = |c: i64| form(&[("j", 9600), ("i", -9600), ("d", -9608)], c);
        let mut window = bounds;
        window.push(scaled(7));
        window.push((
            scaled(0).0.into_iter().map(|(v, c)| (v, -c)).collect(),
            BigRational::from_integer(BigInt::from(7)),
        ));
        assert!(infeasible(Vec::new(), window));
    }

    proptest::proptest! {
        /// Soundness over the integers: a system called infeasible has no integer point in
        /// a box around the origin, checked by enumeration. Random small coefficients, one
        /// optional equation and a few inequalities over three variables bounded to -4..=4.
        #[test]
        fn an_infeasible_system_has_no_integer_point(
            equation in proptest::option::of(proptest::collection::vec(-6i64..=6, 4)),
            rows in proptest::collection::vec(proptest::collection::vec(-6i64..=6, 4), 0..5),
        ) {
            let names = ["x", "y", "z"];
            let to_form = |r: &[i64]| {
                let terms: Vec<(&str, i64)> =
                    names.iter().zip(r).filter(|(_, c)| **c != 0).map(|(n, c)| (*n, *c)).collect();
                form(&terms, r[3])
            };
            let mut inequalities: Vec<Linear> = rows.iter().map(|r| to_form(r)).collect();
            for n in names {
                inequalities.push(form(&[(n, 1)], 4));
                inequalities.push(form(&[(n, -1)], 4));
            }
            let equations: Vec<Linear> = equation.iter().map(|r| to_form(r)).collect();
            if infeasible(equations, inequalities) {
                let holds = |r: &[i64], p: [i64; 3]| r[0] * p[0] + r[1] * p[1] + r[2] * p[2] + r[3];
                for x in -4..=4 {
                    for y in -4..=4 {
                        for z in -4..=4 {
                            let p = [x, y, z];
                            let solves = equation.as_ref().is_none_or(|e| holds(e, p) == 0)
                                && rows.iter().all(|r| holds(r, p) >= 0);
                            proptest::prop_assert!(!solves, "{:?} solves a system called infeasible", p);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_equation_whose_gcd_misses_its_constant_has_no_integer_solution() {
        assert!(infeasible(
            vec![form(&[("x", 6), ("y", 3)], -2)],
            Vec::new()
        ));
        assert!(!infeasible(
            vec![form(&[("x", 6), ("y", 3)], -3)],
            Vec::new()
        ));
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
    fn a_small_box_is_decided_over_the_integers() {
        // phono3py: 9l + 3m + n = 9m' + 3l + n' with m' = m + d, everything in 0..=2,
        // d >= 1. l = 1.5, m = 0, d = 1, n = n' solves it over the rationals.
        let equations = vec![form(
            &[("l", 6), ("m", 3), ("n", 1), ("m'", -9), ("n'", -1)],
            0,
        )];
        let mut bounds = vec![
            form(&[("m'", 1), ("m", -1)], -1),
            form(&[("q", 1), ("l", -1)], 0), // mentions a variable outside the equations
        ];
        for v in ["l", "m", "n", "m'", "n'"] {
            bounds.push(form(&[(v, 1)], 0));
            bounds.push(form(&[(v, -1)], 2));
        }
        // Both decide it: the box by enumeration, elimination by solving the equation over
        // the integers (`n = 9m' + 3l - 6l - 3m + n'` exactly, with tightened bounds).
        assert!(infeasible(equations.clone(), bounds.clone()));
        assert!(box_excludes(&equations, &bounds));
        assert!(no_integer_solution(equations, bounds));
    }

    #[test]
    fn a_box_with_a_solution_is_not_excluded() {
        // 9l + 3m + n = 9m' + 3l + n' has l = 2, m = 0, m' = 1, n = 0, n' = 3 once n' may
        // reach 3.
        let equations = vec![form(
            &[("l", 6), ("m", 3), ("n", 1), ("m'", -9), ("n'", -1)],
            0,
        )];
        let mut bounds = vec![form(&[("m'", 1), ("m", -1)], -1)];
        for (v, top) in [("l", 2), ("m", 2), ("n", 2), ("m'", 2), ("n'", 3)] {
            bounds.push(form(&[(v, 1)], 0));
            bounds.push(form(&[(v, -1)], top));
        }
        assert!(!box_excludes(&equations, &bounds));
    }

    #[test]
    fn an_unbounded_or_large_box_is_left_to_elimination() {
        let equations = vec![form(&[("x", 2), ("y", -2)], -1)];
        // y unbounded above.
        let bounds = vec![
            form(&[("x", 1)], 0),
            form(&[("x", -1)], 9),
            form(&[("y", 1)], 0),
        ];
        assert!(!box_excludes(&equations, &bounds));
        // 10,000 x 10,000 points.
        let bounds = vec![
            form(&[("x", 1)], 0),
            form(&[("x", -1)], 9_999),
            form(&[("y", 1)], 0),
            form(&[("y", -1)], 9_999),
        ];
        assert!(!box_excludes(&equations, &bounds));
    }

    #[test]
    fn a_constant_row_splits_off_its_multiples() {
        use symbolic::Expr;
        // 27*adrs + 9*l + 3*m + n + 30: rows of 27 hold 27*adrs + 27, the columns the rest.
        let e = symbolic::parse_expr("27*adrs + 9*l + 3*m + n + 30").unwrap();
        let (row, column) = split_constant(e.as_poly().unwrap(), &BigInt::from(27)).unwrap();
        assert_eq!(Expr::Poly(row).to_string(), "adrs + 1");
        assert_eq!(Expr::Poly(column).to_string(), "9*l + 3*m + n + 3");
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
