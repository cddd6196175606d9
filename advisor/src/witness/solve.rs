//! Solving for a witness where enumerating one is out of reach: the search's fallback when
//! its point budget runs out.
//!
//! A time-step loop around stencil sweeps (PolyBench's jacobi-2d: `for t { for i for j
//! B[i][j] = f(A); for i for j A[i][j] = f(B); }` on a 1300 x 1300 grid) carries its
//! dependences between two different inner nests, each with its own induction variables;
//! enumerating either side means 1.7 million points per time step, far past the budget, so
//! [`super::search`] found no witness and the loop was left to a profile although step 0
//! plainly writes `A[1][1]` and step 1 reads it.
//!
//! Those nests are rectangular (every bound a function of the symbols alone) and their
//! offsets separable affine (`10400*i + 8*j + c`, each product holding at most one induction
//! variable, to the first power, its coefficient over the symbols). For given values of the
//! symbols, the difference of the two offsets is then a linear form `c0 + sum c_k * n_k` in
//! the iteration numbers `n_k` of both sides' loops (the enclosing loops shared, the
//! carrier as `n` and `n + d` with `d >= 1`, each side's inner loops its own), each in an
//! interval, and the accesses overlap exactly when the form lies in `(-s2, s1)` (element
//! sizes). A depth-first search over the `n_k`, smallest values first, cuts each one's
//! range to the values the remaining variables' extremes can still bring into that window:
//! the row is then fixed by the row stride and the column solved from the rest, in a few
//! steps. The in-bounds rules the enumeration checks at every point (subscripts into
//! fixed-size rows, the object's size) are checked over the whole box, exactly, by the
//! extremes of separable affine forms. A solution is a candidate only: the caller still
//! verifies it with exact evaluation, and the analysis' tests replay it in the interpreter.

use super::search::{Found, Problem, Side};
use symbolic::fast_eval::Compiled;
use symbolic::{Atom, Expr, Var};

/// Whether `e` is separable affine in `ivs`: each product holds at most one of them, to the
/// first power, and none inside a division.
fn separable_affine(e: &Expr, ivs: &[&Var]) -> bool {
    let Expr::Poly(p) = e else {
        return false;
    };
    p.terms().iter().all(|(monomial, _)| {
        let mut seen = 0;
        for (atom, exponent) in monomial.factors() {
            let mentions = ivs.iter().any(|v| atom.contains_var(v));
            if !mentions {
                continue;
            }
            seen += 1;
            if !matches!(atom, Atom::Var(_)) || *exponent != 1 || seen > 1 {
                return false;
            }
        }
        true
    })
}

/// Whether the problem has the shape the solver handles: the same enclosing loops and
/// carrier on both sides, every loop's bounds over symbols only, offsets and subscripts
/// separable affine, and no condition guarding the carrier (the enumeration skips the
/// enclosing iterations that fail one; the box would not).
pub(super) fn applies(problem: &Problem) -> bool {
    let (f, g) = (&problem.first, &problem.second);
    let position =
        |levels: &[&crate::space::IvRange]| levels.iter().position(|l| &l.var == problem.carrier);
    let (Some(cf), Some(cg)) = (position(&f.levels), position(&g.levels)) else {
        return false;
    };
    let shared = |k: usize| f.levels[k].var == g.levels[k].var;
    if !problem.guards.is_empty() || cf != cg || !(0..=cf).all(shared) {
        return false;
    }
    let ivs: Vec<&Var> = f.levels.iter().chain(&g.levels).map(|l| &l.var).collect();
    let free = |e: &Expr| e.vars().iter().all(|v| !ivs.contains(&v));
    let rectangular = f
        .levels
        .iter()
        .chain(&g.levels)
        .all(|l| free(&l.init) && free(&l.trips) && free(&l.lo) && free(&l.hi));
    rectangular
        && [f, g].iter().all(|side| {
            separable_affine(side.offset, &ivs)
                && side
                    .subscripts
                    .iter()
                    .all(|(e, _)| separable_affine(e, &ivs))
        })
}

/// `floor(a / b)` and `ceil(a / b)` for `b != 0`.
fn div_floor(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn div_ceil(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    })
}

/// One level under the symbols' values: its first value, step, and the iteration numbers
/// `n` (value `init + step * n`) that run and meet its `lo`/`hi` bounds, as the enumeration
/// takes them; `None` when it cannot be evaluated, `Some(None)` when it runs no iteration.
type Run = (i128, i128, i128, i128);

fn level_run(side: &Side, k: usize, vals: &[i128]) -> Option<Option<Run>> {
    let l = &side.levels[k];
    let init = l.init.eval_int(vals)?;
    let trips = l.trips.eval_int(vals)?;
    let (lo, hi) = (l.lo.eval(vals)?, l.hi.eval(vals)?);
    // Integer values: v >= ceil(lo), v <= floor(hi).
    let (lo, hi) = (div_ceil(lo.num, lo.den)?, div_floor(hi.num, hi.den)?);
    let step = l.step;
    let (mut first, mut last) = (0i128, trips.checked_sub(1)?);
    if step > 0 {
        first = first.max(div_ceil(lo.checked_sub(init)?, step)?);
        last = last.min(div_floor(hi.checked_sub(init)?, step)?);
    } else if step < 0 {
        first = first.max(div_ceil(init.checked_sub(hi)?, -step)?);
        last = last.min(div_floor(init.checked_sub(lo)?, -step)?);
    } else {
        return None;
    }
    Some((first <= last).then_some((init, step, first, last)))
}

/// A separable affine expression of one side as `c0 + sum c_k * n_k` over its levels'
/// iteration numbers.
fn linear(e: &Compiled, side: &Side, runs: &[Run], vals: &mut [i128]) -> Option<(i128, Vec<i128>)> {
    for (l, (init, ..)) in side.levels.iter().zip(runs) {
        vals[l.var] = *init;
    }
    let c0 = e.eval_int(vals)?;
    let mut coefficients = Vec::with_capacity(runs.len());
    for (l, (init, step, ..)) in side.levels.iter().zip(runs) {
        vals[l.var] = init.checked_add(*step)?;
        coefficients.push(e.eval_int(vals)?.checked_sub(c0)?);
        vals[l.var] = *init;
    }
    Some((c0, coefficients))
}

/// The least and greatest value of `c0 + sum c_k * n_k` over the box.
fn extremes(c0: i128, coefficients: &[i128], runs: &[Run]) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (c0, c0);
    for (c, (_, _, first, last)) in coefficients.iter().zip(runs) {
        let (a, b) = (c.checked_mul(*first)?, c.checked_mul(*last)?);
        lo = lo.checked_add(a.min(b))?;
        hi = hi.checked_add(a.max(b))?;
    }
    Some((lo, hi))
}

/// Induction variables and their values, outermost first.
type Ivs = Vec<(Var, i128)>;

/// What one assignment of the symbols gives.
pub(super) enum Solved {
    Found(Found),
    /// Some point of the box indexes outside its array: not a valid execution.
    OutOfBounds,
    Nothing,
    /// The node budget ran out.
    Truncated,
}

/// One side under the symbols' values: its levels' runs and its offset as a linear form.
struct Linear {
    runs: Vec<Run>,
    c0: i128,
    coefficients: Vec<i128>,
}

/// The side's runs and offset, after checking the in-bounds rules over its whole box.
fn side_linear(side: &Side, vals: &[i128]) -> Result<Option<Linear>, Solved> {
    let mut runs = Vec::new();
    for k in 0..side.levels.len() {
        match level_run(side, k, vals) {
            Some(Some(run)) => runs.push(run),
            // An empty level: the side touches nothing.
            Some(None) => return Ok(None),
            None => return Err(Solved::Nothing),
        }
    }
    let mut vals = vals.to_vec();
    let (c0, coefficients) = linear(&side.offset, side, &runs, &mut vals).ok_or(Solved::Nothing)?;
    let (lowest, highest) = extremes(c0, &coefficients, &runs).ok_or(Solved::Nothing)?;
    for (e, extent) in &side.subscripts {
        let (s0, sc) = linear(e, side, &runs, &mut vals).ok_or(Solved::OutOfBounds)?;
        let (lo, hi) = extremes(s0, &sc, &runs).ok_or(Solved::OutOfBounds)?;
        if lo < 0 || hi >= *extent {
            return Err(Solved::OutOfBounds);
        }
    }
    if let Some(size) = side.object_bytes {
        if lowest < 0 || highest.checked_add(side.bytes).is_none_or(|top| top > size) {
            return Err(Solved::OutOfBounds);
        }
    }
    Ok(Some(Linear {
        runs,
        c0,
        coefficients,
    }))
}

/// A variable of the search: an iteration number in `[first, last]` with its coefficient
/// in the offset difference.
#[derive(Clone, Copy)]
struct Unknown {
    first: i128,
    last: i128,
    coefficient: i128,
}

struct Dfs<'a> {
    unknowns: &'a [Unknown],
    /// Index of the carrier's iteration number; the next unknown is the distance `d`,
    /// whose last value is `carrier_last - n`.
    carrier: usize,
    /// The carrier's last iteration number.
    carrier_last: i128,
    /// Least and greatest contribution of unknowns `k..`.
    suffix: Vec<(i128, i128)>,
    window: (i128, i128),
    preferred: Option<i128>,
    budget: usize,
}

impl Dfs<'_> {
    fn run(&mut self, k: usize, sum: i128, values: &mut Vec<i128>) -> Result<bool, ()> {
        if k == self.unknowns.len() {
            return Ok(self.window.0 <= sum && sum <= self.window.1);
        }
        let u = self.unknowns[k];
        let mut last = u.last;
        if k == self.carrier + 1 {
            // The later iteration stays inside the carrier's run.
            last = last.min(
                self.carrier_last
                    .checked_sub(values[self.carrier])
                    .ok_or(())?,
            );
        }
        // sum + c*n + rest must meet the window, rest within suffix[k + 1].
        let (rest_lo, rest_hi) = self.suffix[k + 1];
        // Checked like every other step: an overflow is no witness, not a wrong one.
        let need = |bound: i128, rest: i128| bound.checked_sub(sum)?.checked_sub(rest);
        let need_lo = need(self.window.0, rest_hi).ok_or(())?;
        let need_hi = need(self.window.1, rest_lo).ok_or(())?;
        let (mut first, c) = (u.first, u.coefficient);
        if c > 0 {
            first = first.max(div_ceil(need_lo, c).ok_or(())?);
            last = last.min(div_floor(need_hi, c).ok_or(())?);
        } else if c < 0 {
            first = first.max(div_ceil(need_hi, c).ok_or(())?);
            last = last.min(div_floor(need_lo, c).ok_or(())?);
        } else if need_lo > 0 || need_hi < 0 {
            return Ok(false);
        }
        // The distance the static tests found first, then the nearest.
        let preferred = self
            .preferred
            .filter(|d| k == self.carrier + 1 && first <= *d && *d <= last);
        let order = preferred
            .into_iter()
            .chain((first..=last).filter(|n| Some(*n) != preferred));
        for n in order {
            if self.budget == 0 {
                return Err(());
            }
            self.budget -= 1;
            values.push(n);
            let next = sum.checked_add(c.checked_mul(n).ok_or(())?).ok_or(())?;
            if self.run(k + 1, next, values)? {
                return Ok(true);
            }
            values.pop();
        }
        Ok(false)
    }
}

/// The search's variables, in its order: the enclosing loops' iteration numbers (shared),
/// the carrier's `n` and the distance `d` (the second side at `n + d`), the first side's
/// inner loops, the second side's; each with its coefficient in `o1 - o2`. `None` on
/// overflow.
fn unknowns(f: &Linear, g: &Linear, c: usize) -> Option<Vec<Unknown>> {
    let mut out = Vec::new();
    for k in 0..c {
        out.push(Unknown {
            first: f.runs[k].2,
            last: f.runs[k].3,
            coefficient: f.coefficients[k].checked_sub(g.coefficients[k])?,
        });
    }
    let (carrier_first, carrier_last) = (f.runs[c].2, f.runs[c].3);
    out.push(Unknown {
        first: carrier_first,
        last: carrier_last.checked_sub(1)?,
        coefficient: f.coefficients[c].checked_sub(g.coefficients[c])?,
    });
    out.push(Unknown {
        first: 1,
        last: carrier_last.checked_sub(carrier_first)?,
        coefficient: g.coefficients[c].checked_neg()?,
    });
    for k in c + 1..f.runs.len() {
        out.push(Unknown {
            first: f.runs[k].2,
            last: f.runs[k].3,
            coefficient: f.coefficients[k],
        });
    }
    for k in c + 1..g.runs.len() {
        out.push(Unknown {
            first: g.runs[k].2,
            last: g.runs[k].3,
            coefficient: g.coefficients[k].checked_neg()?,
        });
    }
    Some(out)
}

/// Solves for two overlapping points under the symbol values in `vals` (the induction
/// variables' slots are overwritten), within `budget` search nodes (what is left of it
/// stays there).
pub(super) fn solve(
    problem: &Problem,
    first: &Side,
    second: &Side,
    vals: &[i128],
    symbols: Vec<(Var, i128)>,
    var_of: &dyn Fn(usize) -> Var,
    budget: &mut usize,
) -> Solved {
    let (f, g) = match (side_linear(first, vals), side_linear(second, vals)) {
        (Err(e), _) | (_, Err(e)) => return e,
        (Ok(Some(f)), Ok(Some(g))) => (f, g),
        _ => return Solved::Nothing,
    };
    let c = first.carrier;
    // The shared loops are one loop: the same run on both sides.
    if f.runs[..=c] != g.runs[..=c] {
        return Solved::Nothing;
    }
    let (carrier_first, carrier_last) = (f.runs[c].2, f.runs[c].3);
    let Some(unknowns) = unknowns(&f, &g, c) else {
        return Solved::Nothing;
    };
    if carrier_last <= carrier_first {
        return Solved::Nothing;
    }
    let mut suffix = vec![(0i128, 0i128); unknowns.len() + 1];
    for k in (0..unknowns.len()).rev() {
        let u = unknowns[k];
        let (Some(a), Some(b)) = (
            u.coefficient.checked_mul(u.first),
            u.coefficient.checked_mul(u.last),
        ) else {
            return Solved::Nothing;
        };
        let (Some(lo), Some(hi)) = (
            suffix[k + 1].0.checked_add(a.min(b)),
            suffix[k + 1].1.checked_add(a.max(b)),
        ) else {
            return Solved::Nothing;
        };
        suffix[k] = (lo, hi);
    }
    // Overlap of [o1, o1 + s1) and [o2, o2 + s2): o1 - o2 in [1 - s2, s1 - 1].
    let (s1, s2) = (first.bytes, second.bytes);
    let mut dfs = Dfs {
        unknowns: &unknowns,
        carrier: c,
        carrier_last,
        suffix,
        window: (1 - s2, s1 - 1),
        preferred: problem.distance.map(i128::from),
        budget: *budget,
    };
    let mut values = Vec::new();
    let Some(start) = f.c0.checked_sub(g.c0) else {
        return Solved::Nothing;
    };
    let outcome = dfs.run(0, start, &mut values);
    *budget = dfs.budget;
    match outcome {
        Ok(true) => {}
        Ok(false) => return Solved::Nothing,
        Err(()) => return Solved::Truncated,
    }
    // Back from iteration numbers to the induction variables' values.
    let value = |run: &Run, n: i128| run.1.checked_mul(n)?.checked_add(run.0);
    let ivs = || -> Option<(Ivs, Ivs)> {
        let carrier_n = values[c];
        let (mut first_ivs, mut second_ivs) = (Vec::new(), Vec::new());
        for (k, n) in values[..c].iter().enumerate() {
            let v = value(&f.runs[k], *n)?;
            first_ivs.push((var_of(first.levels[k].var), v));
            second_ivs.push((var_of(second.levels[k].var), v));
        }
        let later = carrier_n.checked_add(values[c + 1])?;
        first_ivs.push((var_of(first.levels[c].var), value(&f.runs[c], carrier_n)?));
        second_ivs.push((var_of(second.levels[c].var), value(&g.runs[c], later)?));
        let mut at = c + 2;
        for k in c + 1..f.runs.len() {
            first_ivs.push((var_of(first.levels[k].var), value(&f.runs[k], values[at])?));
            at += 1;
        }
        for k in c + 1..g.runs.len() {
            second_ivs.push((var_of(second.levels[k].var), value(&g.runs[k], values[at])?));
            at += 1;
        }
        Some((first_ivs, second_ivs))
    };
    let Some((first_ivs, second_ivs)) = ivs() else {
        return Solved::Nothing;
    };
    let offset = |side: &Side, ivs: &[(Var, i128)]| -> Option<i128> {
        let mut vals = vals.to_vec();
        for (l, (_, v)) in side.levels.iter().zip(ivs) {
            vals[l.var] = *v;
        }
        side.offset.eval_int(&vals)
    };
    let (Some(first_offset), Some(second_offset)) =
        (offset(first, &first_ivs), offset(second, &second_ivs))
    else {
        return Solved::Nothing;
    };
    Solved::Found(Found {
        values: symbols,
        first: first_ivs,
        first_offset,
        second: second_ivs,
        second_offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisions_round_the_right_way() {
        assert_eq!(div_floor(7, 2), Some(3));
        assert_eq!(div_floor(-7, 2), Some(-4));
        assert_eq!(div_floor(7, -2), Some(-4));
        assert_eq!(div_ceil(7, 2), Some(4));
        assert_eq!(div_ceil(-7, 2), Some(-3));
        assert_eq!(div_ceil(-7, -2), Some(4));
        assert_eq!(div_ceil(6, 3), Some(2));
    }

    #[test]
    fn only_one_induction_variable_per_product() {
        let (i, j) = (Var::new("i"), Var::new("j"));
        let e = |s: &str| symbolic::parse_expr(s).expect("parses");
        assert!(separable_affine(&e("10400*i + 8*j - 8"), &[&i, &j]));
        assert!(separable_affine(&e("8*n*i + 8*j"), &[&i, &j]));
        assert!(!separable_affine(&e("8*i*j"), &[&i, &j]));
        assert!(!separable_affine(&e("8*i*i"), &[&i, &j]));
    }
}
