//! The iteration space of a loop nest in symbolic terms, and the extremes of an expression
//! over it.
//!
//! Each normalizable loop contributes its induction variable `v = init + step*k`,
//! `k in [0, T)`, with `T` the trip count as a symbolic expression (C integer division kept
//! exact as a structured atom): `v` ranges over `[init, init + step*(T - 1)]` (or the
//! mirror image for negative steps). The minimum and maximum of an address offset over the
//! whole nest follow from its monotonicity in each induction variable, innermost first,
//! since inner bounds may mention outer variables (triangular loops). Unknown signs are
//! resolved by the assumptions the engine proposes (`N > 0`), which are returned so that
//! reports can state them.

use crate::assumption::{Assumption, Relation};
use analyses::reconstruct::Reconstruction;
use frontend::ir::{BinOp, Function, LoopKind};
use frontend::loops::{ExitTest, InductionVariable, LoopForest, LoopId, Normalizable};
use num_bigint::BigInt;
use std::collections::HashMap;
use symbolic::{monotonicity_with_assumptions, Expr, Monotonicity, SignEnv, SignSet, Var};

/// The range of one induction variable.
#[derive(Clone, Debug)]
pub struct IvRange {
    pub loop_id: LoopId,
    pub var: Var,
    /// First value, in source terms.
    pub init: Expr,
    /// Smallest and largest value over the loop's iterations (inclusive).
    pub lo: Expr,
    pub hi: Expr,
    /// Number of iterations per entry.
    pub trips: Expr,
    pub step: i128,
    /// The bound as written, exclusive in the direction of the step.
    pub bound: Expr,
}

/// The iteration space of a nest: induction variables outermost first, the sign facts they
/// imply, and the assumptions made.
#[derive(Clone, Debug)]
pub struct Space {
    pub ivs: Vec<IvRange>,
    pub env: SignEnv,
    pub assumptions: Vec<Assumption>,
}

impl Space {
    pub fn iv(&self, var: &Var) -> Option<&IvRange> {
        self.ivs.iter().find(|r| &r.var == var)
    }
    pub fn of_loop(&self, id: LoopId) -> Option<&IvRange> {
        self.ivs.iter().find(|r| r.loop_id == id)
    }
}

/// Why a loop has no symbolic iteration range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAffine(pub String);

/// The range of a normalizable loop's primary induction variable.
pub fn iv_range(
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    rec: &Reconstruction,
    env: &SignEnv,
) -> Result<IvRange, NotAffine> {
    range_of(func, forest, id, shape(forest, id, rec)?, env)
}

/// A superset of the values the primary induction variable takes in a loop that may also
/// leave early (`break`, `return`): every iteration that runs has passed the header's test,
/// so the range of the loop without its other exits contains them, and `trips` is an upper
/// bound. For a normalizable loop, its [`iv_range`]. Good for sections and summaries, which
/// over-approximate; not for trip counts or anything said to run exactly.
pub fn visited_range(
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    rec: &Reconstruction,
    env: &SignEnv,
) -> Result<IvRange, NotAffine> {
    let not_normalizable = match iv_range(func, forest, id, rec, env) {
        Ok(range) => return Ok(range),
        Err(e) => e,
    };
    let l = forest.loop_(id);
    let Some(test) = &l.header_test else {
        return Err(not_normalizable);
    };
    let iv = &l.induction_variables[test.iv];
    // The direction rules of a normalizable loop; a `!=` test a larger step may jump over
    // bounds nothing.
    let bounded = match test.cmp {
        BinOp::Lt | BinOp::Le => iv.step > 0,
        BinOp::Gt | BinOp::Ge => iv.step < 0,
        BinOp::Ne => iv.step.abs() == 1,
        _ => false,
    };
    if !bounded {
        return Err(not_normalizable);
    }
    let shape = Shape {
        var: rec
            .symbol(iv.phi)
            .cloned()
            .ok_or_else(|| NotAffine("the induction variable has no symbol".into()))?,
        init: single(rec, iv.init, "the initial value")?,
        bound: single(rec, test.bound, "the bound")?,
        test,
        iv,
    };
    range_of(func, forest, id, shape, env)
}

/// The range a loop's test and induction variable give.
fn range_of(
    func: &Function,
    forest: &LoopForest,
    id: LoopId,
    shape: Shape,
    env: &SignEnv,
) -> Result<IvRange, NotAffine> {
    let l = forest.loop_(id);
    let Shape {
        var,
        init,
        mut bound,
        test,
        iv,
    } = shape;
    let is_do_while = l
        .source
        .is_some_and(|s| func.source_loop(s).kind == LoopKind::DoWhile);
    if test.tests_update && !is_do_while {
        bound = sub(&bound, &Expr::integer(BigInt::from(iv.step)))?;
    }
    let step = iv.step;
    let magnitude = Expr::integer(BigInt::from(step.abs()));
    let one = Expr::constant(1);
    // Distance to cover, in the direction of the step, before dividing by the step.
    let span = match (test.cmp, step > 0) {
        (BinOp::Lt, true) => add(&sub(&bound, &init)?, &sub(&magnitude, &one)?)?,
        (BinOp::Le, true) => add(&sub(&bound, &init)?, &magnitude)?,
        (BinOp::Gt, false) => add(&sub(&init, &bound)?, &sub(&magnitude, &one)?)?,
        (BinOp::Ge, false) => add(&sub(&init, &bound)?, &magnitude)?,
        (BinOp::Ne, true) => sub(&bound, &init)?,
        (BinOp::Ne, false) => sub(&init, &bound)?,
        _ => {
            return Err(NotAffine(
                "the exit test does not match the direction of the step".into(),
            ))
        }
    };
    let trips = if step.abs() == 1 {
        span
    } else {
        // With the dividend's sign known, C's division may simplify away (`(3*w + 2)/3` is
        // `w`); when it does not, keep C's `/`, which prints as C.
        let k = BigInt::from(step.abs());
        let simplified = span
            .c_div_in(&k, env)
            .map_err(|e| NotAffine(format!("trip count: {e}")))?;
        if simplified.to_c().contains("floor_") {
            span.c_div(&k)
                .map_err(|e| NotAffine(format!("trip count: {e}")))?
        } else {
            simplified
        }
    };
    let step_expr = Expr::integer(BigInt::from(step));
    // With a unit step the last value is read off the bound (the same polynomial as
    // `init + step*(trips - 1)`), which also keeps `i < min(hi, n)` from `i = max(lo, 0)`
    // in normal form: a max plus a min has none.
    let last = if step.abs() == 1 {
        match test.cmp {
            BinOp::Le | BinOp::Ge => bound.clone(),
            _ => sub(&bound, &step_expr)?,
        }
    } else {
        add(&init, &mul(&step_expr, &sub(&trips, &one)?)?)?
    };
    let (lo, hi) = if step > 0 {
        (init.clone(), last)
    } else {
        (last, init.clone())
    };
    Ok(IvRange {
        loop_id: id,
        var,
        init,
        lo,
        hi,
        trips,
        step,
        bound,
    })
}

/// What a loop needs for a symbolic range: a normalizable loop whose induction variable
/// has a symbol, one initial value and one bound.
struct Shape<'f> {
    var: Var,
    init: Expr,
    bound: Expr,
    test: &'f ExitTest,
    iv: &'f InductionVariable,
}

fn shape<'f>(
    forest: &'f LoopForest,
    id: LoopId,
    rec: &Reconstruction,
) -> Result<Shape<'f>, NotAffine> {
    let l = forest.loop_(id);
    if let Normalizable::No { reason } = &l.normalizable {
        return Err(NotAffine(reason.clone()));
    }
    let test = l
        .exit_test
        .as_ref()
        .ok_or_else(|| NotAffine("no exit test on an induction variable".into()))?;
    let iv = &l.induction_variables[test.iv];
    let var = rec
        .symbol(iv.phi)
        .cloned()
        .ok_or_else(|| NotAffine("the induction variable has no symbol".into()))?;
    Ok(Shape {
        var,
        init: single(rec, iv.init, "the initial value")?,
        bound: single(rec, test.bound, "the bound")?,
        test,
        iv,
    })
}

/// The loops strictly inside `outer` that have no symbolic range (an early exit, no
/// induction variable, several initial values or bounds), with why. An iteration space
/// leaves them out: within one iteration of `outer` their variables may take any value,
/// so whatever depends on them is a value that changes from iteration to iteration (the
/// dependence tests name it and do not decide), while the accesses that do not depend on
/// them are still compared. A `break` or `goto` that leaves `outer` itself is an exit of
/// `outer`, which then has no range at all.
pub fn unranged_inner_loops(
    forest: &LoopForest,
    outer: LoopId,
    rec: &Reconstruction,
) -> Vec<(LoopId, NotAffine)> {
    let mut out = Vec::new();
    let mut stack = forest.loop_(outer).children.clone();
    while let Some(id) = stack.pop() {
        if let Err(why) = shape(forest, id, rec) {
            out.push((id, why));
        }
        stack.extend(forest.loop_(id).children.iter().copied());
    }
    out.sort_by_key(|(id, _)| *id);
    out
}

fn single(rec: &Reconstruction, v: frontend::ir::Value, what: &str) -> Result<Expr, NotAffine> {
    match rec.of(v) {
        [e] => Ok(e.clone()),
        [] => Err(NotAffine(format!("{what} of the loop is not known"))),
        _ => Err(NotAffine(format!(
            "{what} of the loop has several possible values"
        ))),
    }
}

fn add(a: &Expr, b: &Expr) -> Result<Expr, NotAffine> {
    a.checked_add(b).map_err(|e| NotAffine(e.to_string()))
}
fn sub(a: &Expr, b: &Expr) -> Result<Expr, NotAffine> {
    a.checked_sub(b).map_err(|e| NotAffine(e.to_string()))
}
fn mul(a: &Expr, b: &Expr) -> Result<Expr, NotAffine> {
    a.checked_mul(b).map_err(|e| NotAffine(e.to_string()))
}

/// The iteration space of loop `outer` and every loop nested in it.
pub fn iteration_space(
    func: &Function,
    forest: &LoopForest,
    outer: LoopId,
    rec: &Reconstruction,
) -> Result<Space, NotAffine> {
    space_from(func, forest, outer, rec, &SignEnv::new(), false)
}

/// [`iteration_space`] starting from known signs (the sign analysis at the loop's header):
/// facts the program establishes itself (`if (n <= 0) return;`) then need no assumption.
/// `with_context` adds the ranges of the loops around `outer`: their induction variables
/// are fixed during one instance of `outer`, but bounded, which dependence tests may use
/// (`x > t` around Fan2's inner loop). Enclosing loops that are not normalizable are left
/// out (their variables stay free symbols).
pub fn iteration_space_with_signs(
    func: &Function,
    forest: &LoopForest,
    outer: LoopId,
    rec: &Reconstruction,
    known: &SignEnv,
    with_context: bool,
) -> Result<Space, NotAffine> {
    space_from(func, forest, outer, rec, known, with_context)
}

fn space_from(
    func: &Function,
    forest: &LoopForest,
    outer: LoopId,
    rec: &Reconstruction,
    known: &SignEnv,
    with_context: bool,
) -> Result<Space, NotAffine> {
    let mut enclosing = Vec::new();
    let mut parent = forest.loop_(outer).parent;
    while let (true, Some(p)) = (with_context, parent) {
        // An enclosing loop with no symbolic range (not normalizable, or a start or bound
        // of several values) is left out: its variable is one fixed value during an
        // instance of `outer`, which is all the dependence tests of `outer` compare.
        if shape(forest, p, rec).is_ok() {
            enclosing.push(p);
        }
        parent = forest.loop_(p).parent;
    }
    let mut ids = vec![outer];
    let mut i = 0;
    while i < ids.len() {
        let mut children = forest.loop_(ids[i]).children.clone();
        children.sort();
        ids.extend(children);
        i += 1;
    }
    let unranged: Vec<LoopId> = unranged_inner_loops(forest, outer, rec)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.retain(|id| !unranged.contains(id));
    ids.extend(enclosing);
    ids.sort_by_key(|id| (forest.loop_(*id).depth, *id));
    // Every loop of the nest is assumed to run at least once; for `v = c; v < k*b` with
    // `c >= 0` and `k > 0` that makes `b` positive, which decides signs and divisions.
    let mut env = known.clone();
    let mut assumptions = Vec::new();
    for &id in &ids {
        if let Some((var, text)) = runs_assumption(forest, id, rec) {
            if !env.get(&var).is_subset(SignSet::POS) {
                env.set(var, SignSet::POS);
                assumptions.push(text);
            }
        }
    }
    let mut ivs = Vec::new();
    for id in ids {
        ivs.push(iv_range(func, forest, id, rec, &env)?);
    }
    for r in &ivs {
        let iv_sign = match r.lo.as_integer() {
            Some(lo) if lo > BigInt::from(0) => SignSet::POS,
            Some(lo) if lo == BigInt::from(0) => SignSet::NON_NEG,
            _ => SignSet::TOP,
        };
        env.set(r.var.clone(), iv_sign);
    }
    assumptions.dedup();
    Ok(Space {
        ivs,
        env,
        assumptions,
    })
}

/// A sign fact that holds when the loop runs at least once: for an increasing loop
/// `v < b` starting at `v0`, `b - v0 > 0`; when that difference is `k*x` with `k > 0`,
/// `x > 0` (`for (i = 0; i < n; ...)` gives `n > 0`; `for (k = i - s; k < i + s; ...)`
/// gives `s > 0`).
fn runs_assumption(
    forest: &LoopForest,
    id: LoopId,
    rec: &Reconstruction,
) -> Option<(Var, Assumption)> {
    let l = forest.loop_(id);
    let test = l.exit_test.as_ref()?;
    let iv = &l.induction_variables[test.iv];
    if iv.step <= 0 || !matches!(test.cmp, BinOp::Lt | BinOp::Le | BinOp::Ne) {
        return None;
    }
    let init = single(rec, iv.init, "").ok()?;
    let bound = single(rec, test.bound, "").ok()?;
    let distance = bound.checked_sub(&init).ok()?;
    let poly = distance.as_poly()?;
    let [(monomial, coefficient)] = poly.terms() else {
        return None;
    };
    let [(symbolic::Atom::Var(var), 1)] = monomial.factors() else {
        return None;
    };
    if !num_traits::Signed::is_positive(coefficient) {
        return None;
    }
    let text = if distance == bound {
        format!("{var} > 0 (the loop runs)")
    } else {
        format!(
            "{var} > 0 (the loop runs: {} > {})",
            bound.to_c(),
            init.to_c()
        )
    };
    let fact = Assumption::relation(text, Expr::var(var.name()), Relation::Gt);
    Some((var.clone(), fact))
}

/// Monotonicity of `e` in the induction variable `space.ivs[at]` over that variable's own
/// range, when the sign rules alone cannot tell (`8*n*i - 4*i*i` grows only while
/// `i < n - 1/2`): the forward difference `e(r + 1) - e(r)`, one degree lower in `r`, is
/// bounded over `r` in `[lo, hi - 1]` and the loops outside it. Non-negative there: `e` grows
/// from every integer `r` to the next one in the range, so its maximum is at `hi`.
fn monotone_on_range(
    e: &Expr,
    space: &Space,
    at: usize,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
    differences: u32,
    fuel: &mut u32,
) -> Monotonicity {
    let r = &space.ivs[at];
    let Ok(next) = Expr::var(r.var.name()).checked_add(&Expr::constant(1)) else {
        return Monotonicity::Unknown;
    };
    let shift = HashMap::from([(r.var.clone(), next)]);
    let Some(delta) = e
        .substitute(&shift)
        .ok()
        .and_then(|shifted| shifted.checked_sub(e).ok())
    else {
        return Monotonicity::Unknown;
    };
    let Ok(last_with_next) = r.hi.checked_sub(&Expr::constant(1)) else {
        return Monotonicity::Unknown;
    };
    let mut outer = Space {
        ivs: space.ivs[..=at].to_vec(),
        env: env.clone(),
        assumptions: Vec::new(),
    };
    outer.ivs[at].hi = last_with_next;
    let zero = Expr::constant(0);
    // Each direction is tried in a copy of the environment, so that the assumptions of a
    // failed attempt are not kept.
    for want_max in [false, true] {
        let mut trial = env.clone();
        let mut needed = Vec::new();
        let settled = extreme_at_depth(
            &delta,
            &outer,
            want_max,
            &mut trial,
            &mut needed,
            differences,
            fuel,
        )
        .is_some_and(|b| {
            let c = symbolic::compare(&b, &zero, &trial);
            if want_max {
                c.is_le()
            } else {
                c.is_ge()
            }
        });
        if settled {
            *env = trial;
            for text in needed {
                if !assumptions.contains(&text) {
                    assumptions.push(text);
                }
            }
            return if want_max {
                Monotonicity::Decreasing
            } else {
                Monotonicity::Increasing
            };
        }
    }
    Monotonicity::Unknown
}

/// How many variables of a sign environment per loop variable of the space [`extreme`]
/// copies whole; past that it copies the variables it reads.
const WHOLE_ENV_PER_LOOP: usize = 8;

/// The minimum (`want_max = false`) or maximum of `e` over the iteration space, or `None`
/// when monotonicity cannot be established for some induction variable. Assumptions used
/// are appended to `assumptions` as text (`n > 0`).
pub fn extreme(
    e: &Expr,
    space: &Space,
    want_max: bool,
    assumptions: &mut Vec<Assumption>,
) -> Option<Expr> {
    // The search reads the signs of the variables of `e` and of the bounds it substitutes
    // for the induction variables, nothing else. A copy of the whole environment per call
    // costs the size of the function's symbols, and a section calls this twice per access
    // (a `?:` chain of `n` loads of `c[i]`: `n` copies of `n`); collecting the variables
    // read costs the size of the nest's bounds (thousands of loop variables where a loop
    // calls helpers with loops). An environment much larger than the nest is copied
    // restricted to them, any other whole.
    let mut env = if space.env.len() > WHOLE_ENV_PER_LOOP * (space.ivs.len() + 8) {
        let mut keep: std::collections::HashSet<Var> = e.vars().into_iter().collect();
        for r in &space.ivs {
            keep.insert(r.var.clone());
            keep.extend(r.lo.vars());
            keep.extend(r.hi.vars());
        }
        space.env.restricted_to(&keep)
    } else {
        space.env.clone()
    };
    extreme_in(e, space, want_max, &mut env, assumptions)
}

/// [`extreme`] in a caller's sign environment, which gains the assumptions made, so that
/// later comparisons can rely on them too.
pub fn extreme_in(
    e: &Expr,
    space: &Space,
    want_max: bool,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> Option<Expr> {
    let mut fuel = DIFFERENCE_FUEL;
    extreme_at_depth(e, space, want_max, env, assumptions, 0, &mut fuel)
}

/// How many forward differences [`monotone_on_range`] may take in a row (one per degree of
/// the variable: a cubic needs three).
const MAX_DIFFERENCES: u32 = 3;
/// How many forward differences one extreme may take in all: each one bounds an expression
/// over the space again, so without a cap the work would grow with the number of loop
/// variables to the power [`MAX_DIFFERENCES`].
const DIFFERENCE_FUEL: u32 = 12;

fn extreme_at_depth(
    e: &Expr,
    space: &Space,
    want_max: bool,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
    differences: u32,
    fuel: &mut u32,
) -> Option<Expr> {
    let mut current = e.clone();
    for (at, r) in space.ivs.iter().enumerate().rev() {
        if !current.contains_var(&r.var) {
            continue;
        }
        let (mut m, used) = monotonicity_with_assumptions(&current, &r.var, env);
        for a in used {
            let assumed = Assumption::sign(&a);
            env.set(a.var.clone(), a.sign);
            if !assumptions.contains(&assumed) {
                assumptions.push(assumed);
            }
        }
        if !matches!(
            m,
            Monotonicity::Increasing | Monotonicity::Decreasing | Monotonicity::Constant
        ) && differences < MAX_DIFFERENCES
            && *fuel > 0
        {
            *fuel -= 1;
            m = monotone_on_range(&current, space, at, env, assumptions, differences + 1, fuel);
        }
        let pick = match (m, want_max) {
            (Monotonicity::Increasing, true) | (Monotonicity::Decreasing, false) => &r.hi,
            (Monotonicity::Increasing, false) | (Monotonicity::Decreasing, true) => &r.lo,
            (Monotonicity::Constant, _) => continue,
            _ => return None,
        };
        let map = HashMap::from([(r.var.clone(), pick.clone())]);
        current = current.substitute(&map).ok()?;
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyses::reconstruct::{reconstruct, ReconstructConfig};

    /// "The loop runs" is made with the relation it states, for the witness search to
    /// meet: `n > 0` over the symbol the bound is.
    #[test]
    fn the_loop_runs_assumption_carries_its_relation() {
        let (_dir, unit) = crate::test_unit::unit(
            "void f(int *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n",
        );
        let program = &unit.lowered.program;
        let func = program.function("f").expect("f");
        let forest = frontend::loops::analyze_loops(func);
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        let id = forest.ids().next().expect("a loop");
        let space = iteration_space(func, &forest, id, &rec).expect("a space");
        let [runs] = space.assumptions.as_slice() else {
            panic!("one assumption: {:?}", space.assumptions);
        };
        assert!(runs.text.ends_with("> 0 (the loop runs)"), "{}", runs.text);
        let relation = runs.relation.as_ref().expect("a typed relation");
        assert_eq!(relation.op, Relation::Gt);
        let vars: Vec<Var> = relation.expr.vars().into_iter().collect();
        let [n] = vars.as_slice() else {
            panic!("one variable: {:?}", relation.expr);
        };
        assert!(runs.text.starts_with(&format!("{n} > 0")), "{}", runs.text);
        assert_eq!(relation.expr, Expr::var(n.name()));
    }
}
