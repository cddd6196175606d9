//! The bounded search for two iterations whose accesses touch a common byte.
//!
//! For a few small values of the symbols (parameters, loop-invariant loads) that meet the
//! constraints, every point of the iteration space around each access is enumerated (the
//! loops enclosing the carrier fixed and shared, the carrier's iteration and the inner
//! loops free on each side); the first access's byte ranges are then matched against the
//! second's, in a later iteration of the carrier. Everything is bounded: a budget of nodes
//! walked and of symbol assignments, the cheapest assignments and small values first, so a
//! witness found is a small one.

pub use crate::assumption::{Constraint, Relation};
use crate::space::IvRange;
use std::ops::RangeInclusive;
use symbolic::fast_eval::{compile, Compiled, Slots};
use symbolic::{Expr, Poly, SignSet, Var};

/// Nodes of the enumeration (points, the loops' values around them, values skipped) per
/// search, over all assignments, for a pair the static tests found dependent; pairs they
/// could not decide get a tenth (the search is then only a chance).
pub const POINT_BUDGET: usize = 60_000;
/// Largest value tried for a symbol.
const MAX_VALUE: i128 = 64;

/// One access of the pair, as the search sees it.
#[derive(Clone, Debug)]
pub struct SideInput<'a> {
    /// Byte offset from the common base.
    pub offset: &'a Expr,
    pub bytes: u64,
    /// The loops around the access, outermost first, from the enclosing ones of the carrier
    /// down to the innermost loop containing the access.
    pub levels: Vec<&'a IvRange>,
    /// C's in-bounds rule: `0 <= index < extent` for subscripts into fixed-size rows.
    pub subscripts: Vec<(Expr, u64)>,
    /// The size of the memory object when known (local arrays, globals): every byte touched
    /// lies inside it.
    pub object_bytes: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Problem<'a> {
    /// The carrier loop's variable: its level in both sides' `levels`.
    pub carrier: &'a Var,
    pub first: SideInput<'a>,
    pub second: SideInput<'a>,
    /// Signs the symbols must have.
    pub signs: &'a symbolic::SignEnv,
    pub constraints: Vec<Constraint>,
    /// The distance the static test found, preferred when several pairs would do.
    pub distance: Option<i64>,
    /// Further expressions whose variables need values (bounds of inner loops).
    pub extra: Vec<Expr>,
    /// Points to enumerate at most.
    pub budget: usize,
    /// Conditions over the symbols and the enclosing loops' variables under which the
    /// carrier is reached (`if (k != j)` around it): contexts that fail them are skipped.
    pub guards: Vec<Constraint>,
}

/// A point of one side: its induction variables' values and the byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub values: Vec<(Var, i128)>,
    pub first: Vec<(Var, i128)>,
    pub first_offset: i128,
    pub second: Vec<(Var, i128)>,
    pub second_offset: i128,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Found(Found),
    /// No pair overlaps. `exhaustive`: there were no symbols to choose and the whole space
    /// was enumerated, so none exists at all; `what` says what was tried.
    NotFound {
        exhaustive: bool,
        what: String,
    },
}

pub(super) struct Level {
    pub(super) var: usize,
    pub(super) init: Compiled,
    pub(super) trips: Compiled,
    pub(super) lo: Compiled,
    pub(super) hi: Compiled,
    pub(super) step: i128,
    /// Its bounds read no loop variable of the side (`n`, not `i + 1`): one value per
    /// assignment of the symbols.
    pub(super) closed: bool,
}

pub(super) struct Side {
    pub(super) offset: Compiled,
    pub(super) bytes: i128,
    pub(super) levels: Vec<Level>,
    pub(super) carrier: usize,
    pub(super) subscripts: Vec<(Compiled, i128)>,
    pub(super) object_bytes: Option<i128>,
    guards: Vec<(Compiled, Relation)>,
    /// For each level above the carrier, the guards whose variables are all set on entering
    /// it (symbols only at level 0): a guard that is false there is false at the carrier for
    /// every point below, so the subtree is skipped rather than walked to the carrier
    /// (`if (atom_list[i] != map_atoms[atom_list[i]])` around a six-deep nest was 7 million
    /// visits for no point).
    early_guards: Vec<Vec<usize>>,
}

impl Side {
    /// Whether a closed level (bounds free of the side's loop variables) runs no iteration
    /// under the symbols' values in `vals`.
    fn closed_empty(&self, vals: &[i128]) -> bool {
        self.levels
            .iter()
            .any(|l| l.closed && l.trips.eval_int(vals).is_some_and(|t| t <= 0))
    }
}

/// A point: values of the side's levels, the carrier's iteration number and the offset.
struct Point {
    ivs: Vec<i128>,
    k: i128,
    offset: i128,
}

/// Symbols of the problem: every variable of the expressions that is not an induction
/// variable of a level.
fn symbols_of(problem: &Problem) -> Vec<Var> {
    let mut ivs = Vec::new();
    let mut all = std::collections::BTreeSet::new();
    for e in problem
        .extra
        .iter()
        .chain(problem.guards.iter().map(|g| &g.expr))
    {
        all.extend(e.vars());
    }
    for side in [&problem.first, &problem.second] {
        all.extend(side.offset.vars());
        for (e, _) in &side.subscripts {
            all.extend(e.vars());
        }
        for l in &side.levels {
            ivs.push(l.var.clone());
            for e in [&l.init, &l.trips, &l.lo, &l.hi] {
                all.extend(e.vars());
            }
        }
    }
    all.into_iter().filter(|v| !ivs.contains(v)).collect()
}

fn compile_side(
    input: &SideInput,
    carrier: &Var,
    guards: &[Constraint],
    slots: &mut Slots,
) -> Option<Side> {
    let mut levels = Vec::new();
    let mut carrier_level = None;
    for (k, l) in input.levels.iter().enumerate() {
        if &l.var == carrier {
            carrier_level = Some(k);
        }
        let closed = [&l.init, &l.trips, &l.lo, &l.hi].iter().all(|e| {
            let vars = e.vars();
            input.levels.iter().all(|other| !vars.contains(&other.var))
        });
        levels.push(Level {
            closed,
            var: slots.slot(&l.var),
            init: compile(&l.init, slots)?,
            trips: compile(&l.trips, slots)?,
            lo: compile(&l.lo, slots)?,
            hi: compile(&l.hi, slots)?,
            step: l.step,
        });
    }
    Some(Side {
        offset: compile(input.offset, slots)?,
        bytes: i128::from(input.bytes),
        levels,
        carrier: carrier_level?,
        subscripts: input
            .subscripts
            .iter()
            .map(|(e, n)| Some((compile(e, slots)?, i128::from(*n))))
            .collect::<Option<Vec<_>>>()?,
        object_bytes: input.object_bytes.map(i128::from),
        guards: guards
            .iter()
            .map(|g| Some((compile(&g.expr, slots)?, g.op)))
            .collect::<Option<Vec<_>>>()?,
        early_guards: early_guards(input, carrier_level?, guards),
    })
}

/// [`Side::early_guards`]: each guard at the first level whose entry sets all its variables
/// (one past the deepest level variable it reads); guards that need the carrier's own
/// enclosing values in full stay at the carrier only.
fn early_guards(input: &SideInput, carrier: usize, guards: &[Constraint]) -> Vec<Vec<usize>> {
    let mut early = vec![Vec::new(); carrier];
    for (g, guard) in guards.iter().enumerate() {
        let vars = guard.expr.vars();
        let needs = input
            .levels
            .iter()
            .rposition(|l| vars.contains(&l.var))
            .map_or(0, |deepest| deepest + 1);
        if needs < carrier {
            early[needs].push(g);
        }
    }
    early
}

/// Enumerates the points of `side` under the symbol values already in `vals`; `false`
/// when the budget ran out. `oob` is set when some point indexes outside its bounds.
/// Every node of the walk costs one unit, not only the points: loops around an inner loop
/// that is empty for most of their values (blocks past the end of the data) made a million
/// visits per search for a few thousand points.
fn enumerate(
    side: &Side,
    vals: &mut Vec<i128>,
    level: usize,
    k: i128,
    out: &mut Vec<Point>,
    budget: &mut usize,
    oob: &mut bool,
) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if level == side.levels.len() {
        let Some(offset) = side.offset.eval_int(vals) else {
            *oob = true;
            return true;
        };
        let inside = side
            .subscripts
            .iter()
            .all(|(e, n)| e.eval_int(vals).is_some_and(|v| v >= 0 && v < *n))
            && side
                .object_bytes
                .is_none_or(|size| offset >= 0 && offset + side.bytes <= size);
        if !inside {
            *oob = true;
        }
        out.push(Point {
            ivs: side.levels.iter().map(|l| vals[l.var]).collect(),
            k,
            offset,
        });
        return true;
    }
    // A guard already false here is false at the carrier for every point below. One that
    // cannot be evaluated yet is left to the carrier, which decides as before.
    if let Some(early) = side.early_guards.get(level) {
        for &g in early {
            let (guard, op) = &side.guards[g];
            if guard.eval_int(vals).is_some_and(|v| !op.holds(v)) {
                return true;
            }
        }
    }
    // The enclosing loops' values are all set: the carrier is reached only under its guards.
    if level == side.carrier {
        for (g, op) in &side.guards {
            match g.eval_int(vals) {
                Some(v) if op.holds(v) => {}
                Some(_) => return true,
                // Not known whether these iterations reach the loop: nothing is concluded
                // from the space being empty here.
                None => {
                    *oob = true;
                    return true;
                }
            }
        }
    }
    let l = &side.levels[level];
    let (Some(init), Some(trips), Some(lo), Some(hi)) = (
        l.init.eval_int(vals),
        l.trips.eval_int(vals),
        l.lo.eval(vals),
        l.hi.eval(vals),
    ) else {
        *oob = true;
        return true;
    };
    for n in 0..trips.max(0) {
        let Some(v) = n.checked_mul(l.step).and_then(|s| s.checked_add(init)) else {
            return true;
        };
        // `lo`/`hi` may be tighter than the trip count (C's in-bounds rule on subscripts).
        let below = v.checked_mul(lo.den).is_none_or(|x| x < lo.num);
        let above = v.checked_mul(hi.den).is_none_or(|x| x > hi.num);
        if below || above {
            // Skipped values cost too: a trip count of 64^3 clipped to a row is a long walk.
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            continue;
        }
        vals[l.var] = v;
        let k = if level == side.carrier { n } else { k };
        if !enumerate(side, vals, level + 1, k, out, budget, oob) {
            return false;
        }
    }
    true
}

fn sign_allows(s: SignSet, v: i128) -> bool {
    match v.signum() {
        -1 => s.has_neg(),
        0 => s.has_zero(),
        _ => s.has_pos(),
    }
}

/// The value each symbol must have, where the constraints' bounds leave it one:
/// `status - 1 >= 0` with `-status + 1 >= 0` (GraphicsMagick's `status` is `MagickPass`
/// where its loops start). Varying such a symbol only makes assignments the
/// constraints exclude; worse, the small values tried vary one symbol at a time, so a
/// witness that needs `width = 2` and `columns = 2` was never tried while `status = 2`.
fn pinned_symbols(symbols: &[Var], constraints: &[Constraint]) -> Vec<Option<i128>> {
    let mut lo: Vec<Option<i128>> = vec![None; symbols.len()];
    let mut hi: Vec<Option<i128>> = vec![None; symbols.len()];
    for c in constraints {
        let Expr::Poly(p) = &c.expr else { continue };
        for (k, v) in symbols.iter().enumerate() {
            let Some((coeff, rest)) = p.linear_coeff(v) else {
                continue;
            };
            let Some(rest) = rest
                .as_constant()
                .filter(|r| r.is_integer())
                .and_then(|r| num_traits::ToPrimitive::to_i128(&r.to_integer()))
            else {
                continue;
            };
            // `coeff*v + rest OP 0` with `coeff` = 1 or -1.
            let one = num_rational::BigRational::from_integer(1.into());
            let sign = if coeff == one {
                1
            } else if coeff == -one {
                -1
            } else {
                continue;
            };
            let at = -rest * sign;
            // Equalities are left alone: the check that a witness does not hinge on small
            // layout values (`GENERIC_VALUES`) states its pins as equalities, and pinning
            // those too would let it succeed where the layout value only has to be below
            // a row count (`x_data[i + x_vecstride]` with `x_vecstride = 37` and 38 rows).
            match (c.op, sign) {
                (Relation::Ge, 1) | (Relation::Le, -1) => {
                    lo[k] = Some(lo[k].map_or(at, |l| l.max(at)));
                }
                (Relation::Ge, -1) | (Relation::Le, 1) => {
                    hi[k] = Some(hi[k].map_or(at, |h| h.min(at)));
                }
                _ => {}
            }
        }
    }
    lo.into_iter()
        .zip(hi)
        .map(|(l, h)| match (l, h) {
            (Some(l), Some(h)) if l == h => Some(l),
            _ => None,
        })
        .collect()
}

/// `assignments` with the pinned symbols at their values, each distinct one once.
fn pinned(assignments: Vec<Vec<i128>>, pins: &[Option<i128>]) -> Vec<Vec<i128>> {
    if pins.iter().all(Option::is_none) {
        return assignments;
    }
    let mut seen = std::collections::HashSet::new();
    assignments
        .into_iter()
        .map(|mut a| {
            for (x, pin) in a.iter_mut().zip(pins) {
                if let Some(p) = pin {
                    *x = *p;
                }
            }
            a
        })
        .filter(|a| seen.insert(a.clone()))
        .collect()
}

/// Candidate assignments, small values first, within `limit` assignments.
fn assignments(symbols: &[Var], signs: &symbolic::SignEnv, limit: usize) -> Vec<Vec<i128>> {
    let pick = |v: &Var, x: i128| -> i128 {
        let s = signs.get(v);
        if sign_allows(s, x) {
            x
        } else if sign_allows(s, -x) {
            -x
        } else {
            0
        }
    };
    let mut out: Vec<Vec<i128>> = Vec::new();
    // Seen assignments, so that each is tried once (a scan of `out` was quadratic in the
    // limit: 2,000 assignments, 2 million comparisons per search).
    let mut seen: std::collections::HashSet<Vec<i128>> = std::collections::HashSet::new();
    let mut push = |a: Vec<i128>, out: &mut Vec<Vec<i128>>| {
        if seen.insert(a.clone()) {
            out.push(a);
        }
    };
    if symbols.is_empty() {
        return vec![Vec::new()];
    }
    // Every symbol the same small value.
    for x in 1..=MAX_VALUE {
        push(symbols.iter().map(|v| pick(v, x)).collect(), &mut out);
    }
    // One symbol varied, the others small: non-negative values for every symbol first,
    // then negative ones (`rb = 1, re = 3` before `rb = -1, re = 1`).
    let ranges: [Vec<i128>; 2] = [(0..=MAX_VALUE).collect(), (-16..0).rev().collect()];
    for values in &ranges {
        for base in [1, 2, 4, 8] {
            for (k, _) in symbols.iter().enumerate() {
                for &x in values {
                    let a = symbols
                        .iter()
                        .enumerate()
                        .map(|(j, v)| if j == k { pick(v, x) } else { pick(v, base) })
                        .collect();
                    push(a, &mut out);
                    if out.len() >= limit {
                        return out;
                    }
                }
            }
        }
    }
    // A coarse grid for a few symbols.
    if symbols.len() <= 3 {
        let grid = [0i128, 1, 2, 3, 5, 8, 13, 21, 34];
        let mut idx = vec![0usize; symbols.len()];
        loop {
            push(
                symbols
                    .iter()
                    .zip(&idx)
                    .map(|(v, &g)| pick(v, grid[g]))
                    .collect(),
                &mut out,
            );
            if out.len() >= limit {
                break;
            }
            let mut p = 0;
            while p < idx.len() {
                idx[p] += 1;
                if idx[p] < grid.len() {
                    break;
                }
                idx[p] = 0;
                p += 1;
            }
            if p == idx.len() {
                break;
            }
        }
    }
    out.truncate(limit);
    // Cheapest first: the walk over an assignment's iteration space grows with the product
    // of its values, so every symbol at 64 (a 64 x 64 grid of blocks around each inner
    // loop) came before one symbol at 3 and spent the search's budget on empty blocks.
    // Non-negative assignments still come first (a witness at `s_id = 0, e_id = 17` reads
    // better than one at `s_id = -15, e_id = 1`), and the sort is stable: among equal
    // products the order above (small values first) stays.
    out.sort_by_cached_key(|a| {
        let product = a
            .iter()
            .fold(1u128, |p, x| p.saturating_mul(x.unsigned_abs().max(1)));
        (a.iter().any(|x| *x < 0), product)
    });
    out
}

/// What one assignment of the symbols gave.
enum Attempt {
    Found(Found),
    /// Some iteration would index outside its array: not a valid execution.
    OutOfBounds,
    Nothing,
    /// The constraints exclude the assignment.
    Excluded,
}

struct Searcher<'p> {
    problem: &'p Problem<'p>,
    symbols: Vec<Var>,
    slots: Slots,
    first: Side,
    second: Side,
    constraints: Vec<(Compiled, Relation)>,
    budget: usize,
    /// The budget ran out during an attempt.
    truncated: bool,
    /// Attempts solve for the pair ([`super::solve`]) instead of enumerating the points.
    solving: bool,
}

impl Searcher<'_> {
    fn attempt(&mut self, assignment: &[i128]) -> Attempt {
        let mut vals = vec![0i128; self.slots.count()];
        for (s, v) in self.symbols.iter().zip(assignment) {
            if let Some(k) = self.slots.get(s) {
                vals[k] = *v;
            }
        }
        if !self
            .constraints
            .iter()
            .all(|(c, op)| c.eval_int(&vals).is_some_and(|v| op.holds(v)))
        {
            return Attempt::Excluded;
        }
        if self.solving {
            return self.solve(assignment, &vals);
        }
        // A loop whose trip count is the same for every iteration around it, and not
        // positive, leaves its side without points: nothing to enumerate. (Walking the
        // loops around it found nothing either, at up to 64^k visits per assignment.)
        if self.first.closed_empty(&vals) || self.second.closed_empty(&vals) {
            return Attempt::Nothing;
        }
        let (mut p1, mut p2) = (Vec::new(), Vec::new());
        let mut oob = false;
        let budget = &mut self.budget;
        let complete = enumerate(
            &self.first,
            &mut vals.clone(),
            0,
            0,
            &mut p1,
            budget,
            &mut oob,
        ) && enumerate(
            &self.second,
            &mut vals.clone(),
            0,
            0,
            &mut p2,
            budget,
            &mut oob,
        );
        if !complete {
            self.truncated = true;
        }
        if oob {
            return Attempt::OutOfBounds;
        }
        let Some((a, b)) = match_points(&self.first, &p1, &self.second, &p2, self.problem.distance)
        else {
            return Attempt::Nothing;
        };
        let name = |levels: &[Level], ivs: &[i128]| -> Vec<(Var, i128)> {
            levels
                .iter()
                .zip(ivs)
                .map(|(l, v)| (var_of(&self.slots, l.var), *v))
                .collect()
        };
        Attempt::Found(Found {
            values: self
                .symbols
                .iter()
                .cloned()
                .zip(assignment.iter().copied())
                .collect(),
            first: name(&self.first.levels, &p1[a].ivs),
            first_offset: p1[a].offset,
            second: name(&self.second.levels, &p2[b].ivs),
            second_offset: p2[b].offset,
        })
    }

    fn solve(&mut self, assignment: &[i128], vals: &[i128]) -> Attempt {
        let symbols = self
            .symbols
            .iter()
            .cloned()
            .zip(assignment.iter().copied())
            .collect();
        let slots = &self.slots;
        match super::solve::solve(
            self.problem,
            &self.first,
            &self.second,
            vals,
            symbols,
            &|k| var_of(slots, k),
            &mut self.budget,
        ) {
            super::solve::Solved::Found(found) => Attempt::Found(found),
            super::solve::Solved::OutOfBounds => Attempt::OutOfBounds,
            super::solve::Solved::Nothing => Attempt::Nothing,
            super::solve::Solved::Truncated => {
                self.truncated = true;
                Attempt::Nothing
            }
        }
    }

    /// Lowers each symbol's value in turn as far as a witness still exists, so the stated
    /// values are as small as the search can make them (`nk = 2`, others 1).
    fn shrink(&mut self, mut found: Found) -> Found {
        for k in 0..self.symbols.len() {
            let current = found.values[k].1;
            let sign = self.problem.signs.get(&self.symbols[k]);
            let mut candidates: Vec<i128> = (0..current.abs()).collect();
            if current < 0 {
                candidates = candidates.into_iter().map(|x| -x).collect();
            }
            for x in candidates {
                if !sign_allows(sign, x) || self.budget == 0 {
                    continue;
                }
                let mut assignment: Vec<i128> = found.values.iter().map(|(_, v)| *v).collect();
                assignment[k] = x;
                if let Attempt::Found(smaller) = self.attempt(&assignment) {
                    found = smaller;
                    break;
                }
            }
        }
        found
    }
}

/// Searches for a witness of `problem`.
pub fn search(problem: &Problem) -> Outcome {
    let not_found = |exhaustive: bool, what: String| Outcome::NotFound { exhaustive, what };
    // The proofs over small boxes first: a pair they prove independent has no witness for
    // the search to find (each searched all its budget in phono3py's fc3). Larger boxes
    // wait until the search has failed, as they cost more than most searches.
    if box_independent(problem, SMALL_BOX) {
        return not_found(true, "no two iterations touch the same bytes".into());
    }
    let symbols = symbols_of(problem);
    let mut slots = Slots::default();
    for s in &symbols {
        slots.slot(s);
    }
    let (Some(first), Some(second)) = (
        compile_side(&problem.first, problem.carrier, &problem.guards, &mut slots),
        compile_side(
            &problem.second,
            problem.carrier,
            &problem.guards,
            &mut slots,
        ),
    ) else {
        return not_found(false, "the addresses could not be evaluated".into());
    };
    let constraints: Vec<(Compiled, Relation)> = problem
        .constraints
        .iter()
        .filter(|c| c.expr.vars().iter().all(|v| symbols.contains(v)))
        .filter_map(|c| Some((compile(&c.expr, &mut slots)?, c.op)))
        .collect();
    let mut searcher = Searcher {
        problem,
        symbols: symbols.clone(),
        slots,
        first,
        second,
        constraints,
        budget: problem.budget,
        truncated: false,
        solving: false,
    };
    let pins = pinned_symbols(&symbols, &problem.constraints);
    let mut any_oob = false;
    let mut tried = 0usize;
    let limit = if problem.budget < POINT_BUDGET {
        200
    } else {
        2_000
    };
    for assignment in pinned(assignments(&symbols, problem.signs, limit), &pins) {
        match searcher.attempt(&assignment) {
            Attempt::Found(found) => return Outcome::Found(searcher.shrink(found)),
            Attempt::OutOfBounds => any_oob = true,
            Attempt::Nothing => {}
            Attempt::Excluded => continue,
        }
        tried += 1;
        if searcher.truncated {
            break;
        }
    }
    // The budget ran out before the points were all matched (a time-step loop around
    // nests over a large grid): where the shape allows, the pair is solved for instead,
    // the same budget again, in search nodes.
    if searcher.truncated && super::solve::applies(problem) {
        searcher.solving = true;
        searcher.budget = problem.budget;
        for assignment in pinned(assignments(&symbols, problem.signs, limit), &pins) {
            if let Attempt::Found(found) = searcher.attempt(&assignment) {
                return Outcome::Found(searcher.shrink(found));
            }
            if searcher.budget == 0 {
                break;
            }
        }
        searcher.truncated = true;
    }
    let exhaustive = (symbols.is_empty() && !searcher.truncated && !any_oob)
        || box_independent_with(problem, false, SMALL_BOX + 1..=BOX_BUDGET);
    let what = if symbols.is_empty() {
        "no two iterations touch the same bytes".to_string()
    } else {
        let names: Vec<String> = symbols.iter().map(|s| format!("`{s}`")).collect();
        format!(
            "no two iterations touch the same bytes for the {tried} combinations of small values of {} tried{}",
            names.join(", "),
            if any_oob {
                " that keep every index inside its array"
            } else {
                ""
            }
        )
    };
    not_found(exhaustive, what)
}

/// A constant bound on a level: the constant operand of a `max` (for `lo`) or `min` (for
/// `hi`), or the expression itself when constant.
fn constant_bound(e: &Expr) -> Option<i128> {
    let constant = |p: &symbolic::Poly| -> Option<i128> {
        let c = Expr::Poly(p.clone()).as_integer()?;
        num_traits::ToPrimitive::to_i128(&c)
    };
    match e {
        Expr::Poly(p) => constant(p),
        Expr::Min(parts) | Expr::Max(parts) => parts.iter().find_map(constant),
    }
}

/// An offset as (the terms that read no level variable, the others): the first part is
/// one value for every point of the side. `None` when a term reads both a level variable
/// and a symbol (`i*n`), or the offset is not a polynomial.
fn split_symbolic(offset: &Expr, is_level: &dyn Fn(&Var) -> bool) -> Option<(Poly, Poly)> {
    let Expr::Poly(p) = offset else {
        return None;
    };
    let mut symbolic = vec![false; p.terms().len()];
    for (k, term) in p.terms().iter().enumerate() {
        let mut vars = std::collections::BTreeSet::new();
        Poly::from_terms(vec![term.clone()]).collect_vars(&mut vars);
        let levels = vars.iter().filter(|v| is_level(v)).count();
        match levels {
            0 => symbolic[k] = !vars.is_empty(),
            n if n == vars.len() => {}
            _ => return None,
        }
    }
    Some((
        p.retain_terms(|k| symbolic[k]),
        p.retain_terms(|k| !symbolic[k]),
    ))
}

/// The `g` for which a difference of the two offsets' symbolic parts is always a multiple
/// of `g`: 0 when the parts are equal, the gcd of the integer coefficients of an
/// integer-valued difference otherwise (`216*b*n - 216*c*n + 216*c - 216*b`: 216, whatever
/// `b`, `c` and `n` are); `None` when neither holds. The symbols hold one value over the
/// loop (the search's premise: a pair whose offsets read a value that changes between
/// iterations is not searched), so both sides' parts are evaluated at the same values.
fn symbolic_modulus(difference: &Poly) -> Option<i128> {
    if difference.is_zero() {
        return Some(0);
    }
    if !difference.is_exact_integer() || !difference.terms().iter().all(|(_, c)| c.is_integer()) {
        return None;
    }
    let g = difference
        .terms()
        .iter()
        .fold(num_bigint::BigInt::from(0), |g, (_, c)| {
            num_integer::Integer::gcd(&g, &c.to_integer())
        });
    num_traits::ToPrimitive::to_i128(&g).filter(|g| *g > 0)
}

/// The levels of `side` whose variables are `mentioned`, each as (variable, least value,
/// greatest value, step's sign) when its bounds are constants (the extents of fixed-size
/// rows, `j <= min(15, m - 1)`); `None` when one is not.
fn constant_box(
    side: &SideInput,
    mentioned: &std::collections::BTreeSet<Var>,
) -> Option<Vec<(Var, i128, i128, i128)>> {
    side.levels
        .iter()
        .filter(|l| mentioned.contains(&l.var))
        .map(|l| {
            let lo =
                constant_bound(&l.lo).filter(|_| matches!(l.lo, Expr::Poly(_) | Expr::Max(_)))?;
            let hi =
                constant_bound(&l.hi).filter(|_| matches!(l.hi, Expr::Poly(_) | Expr::Min(_)))?;
            Some((l.var.clone(), lo, hi, l.step.signum()))
        })
        .collect()
}

/// Whether the accesses never meet in two different iterations of a carrier that moves
/// both addresses by the same stride, whatever the carrier's bounds (`face_id <
/// n_i_faces`): code_saturne's `xa[face_id][0][i][j]` and `xa[face_id][1][i][j]` over a
/// `cs_real_332_t` per face, 144 bytes apart per face, the two halves 72 bytes apart.
///
/// The carrier enters each address as one term `c*v` (the same `c` on both sides), so two
/// iterations `d >= 1` apart differ there by `c*step*d`, a nonzero multiple of
/// `G = |c*step|`. With the other symbolic terms equal on both sides, the addresses can
/// meet only where the walked parts (over a box of constant bounds of the loops inside the
/// carrier; the loops around it are symbols, one value for both accesses) differ by a
/// nonzero multiple of `G`; with them different
/// by multiples of `g` ([`symbolic_modulus`]), by any multiple of `gcd(G, g)`. Every pair
/// of points is tried, so finding none proves independence. Same premise as
/// [`box_independent`]: the symbols hold one value over the loop.
fn strided_carrier_independent(problem: &Problem, points: RangeInclusive<i128>) -> bool {
    let carrier = problem.carrier;
    let Some(carrier_level) = problem.first.levels.iter().find(|l| &l.var == carrier) else {
        return false;
    };
    // The loops around the carrier are symbols here: one value for both accesses.
    let enclosing = enclosing_vars(problem);
    let others: Vec<&Var> = [&problem.first, &problem.second]
        .iter()
        .flat_map(|s| s.levels.iter().map(|l| &l.var))
        .filter(|v| *v != carrier && !enclosing.contains(v))
        .collect();
    let is_level = |v: &Var| others.contains(&v);
    let (Some((symbolic_f, walked_f)), Some((symbolic_g, walked_g))) = (
        split_symbolic(problem.first.offset, &is_level),
        split_symbolic(problem.second.offset, &is_level),
    ) else {
        return false;
    };
    let (Some((c_f, rest_f)), Some((c_g, rest_g))) = (
        symbolic_f.linear_coeff(carrier),
        symbolic_g.linear_coeff(carrier),
    ) else {
        return false;
    };
    if c_f != c_g || !c_f.is_integer() {
        return false;
    }
    let Some(stride) = num_traits::ToPrimitive::to_i128(&c_f.to_integer())
        .and_then(|c| c.checked_mul(carrier_level.step))
        .map(i128::abs)
        .filter(|g| *g > 0)
    else {
        return false;
    };
    let Some(others_modulus) = symbolic_modulus(&rest_f.sub(&rest_g)) else {
        return false;
    };
    // The differences the symbolic parts can make: nonzero multiples of the stride, or any
    // multiple of the common divisor when other symbols may cancel the carrier's step.
    let (modulus, nonzero) = if others_modulus == 0 {
        (stride, true)
    } else {
        (num_integer::Integer::gcd(&stride, &others_modulus), false)
    };
    let (walked_f, walked_g) = (Expr::Poly(walked_f), Expr::Poly(walked_g));
    let mentioned: std::collections::BTreeSet<Var> =
        walked_f.vars().into_iter().chain(walked_g.vars()).collect();
    if mentioned.contains(carrier) {
        return false;
    }
    let Some(Boxes {
        b1,
        b2,
        f,
        g,
        slots,
    }) = Boxes::new(problem, (&walked_f, &walked_g), &mentioned, &points)
    else {
        return false;
    };
    let (Some(p1), Some(p2)) = (box_offsets(&b1, &f, &slots), box_offsets(&b2, &g, &slots)) else {
        return false;
    };
    let meets = |t| meets_across_multiples(t, problem, modulus, nonzero);
    !p1.iter().any(|o1| p2.iter().any(|o2| meets(o2 - o1)))
}

/// Whether two accesses whose walked offsets differ by `t = o2 - o1` can overlap when
/// their symbolic parts differ by some multiple of `modulus` (a nonzero one when
/// `nonzero`): `[o1 + S1, o1 + S1 + s1)` and `[o2 + S2, o2 + S2 + s2)` meet when
/// `-s2 < t - (S1 - S2) < s1`, so for some `k` with `t - s1 < k*modulus < t + s2`.
fn meets_across_multiples(t: i128, problem: &Problem, modulus: i128, nonzero: bool) -> bool {
    let (s1, s2) = (
        i128::from(problem.first.bytes),
        i128::from(problem.second.bytes),
    );
    let (lo, hi) = (t - s1 + 1, t + s2 - 1);
    let k_lo = num_integer::Integer::div_ceil(&lo, &modulus);
    let k_hi = num_integer::Integer::div_floor(&hi, &modulus);
    k_lo <= k_hi && !(nonzero && k_lo == 0 && k_hi == 0)
}

/// Points in a box of the proofs that enumerate one: at most this many per side before the
/// search, where every pair of points may be compared ([`strided_carrier_independent`]).
const SMALL_BOX: i128 = 1024;
/// At most this many per side after the search has failed ([`box_independent_with`] with
/// the loops around the carrier enumerated, as before the smaller boxes were tried first).
const BOX_BUDGET: i128 = 200_000;

/// The boxes of both sides over the `mentioned` levels and their walked offsets, compiled.
struct Boxes {
    b1: Vec<(Var, i128, i128, i128)>,
    b2: Vec<(Var, i128, i128, i128)>,
    f: Compiled,
    g: Compiled,
    slots: Slots,
}

impl Boxes {
    /// `None` when a level has no constant bounds, the larger box's points are not in
    /// `points`, or an offset cannot be compiled.
    fn new(
        problem: &Problem,
        (walked_f, walked_g): (&Expr, &Expr),
        mentioned: &std::collections::BTreeSet<Var>,
        points: &RangeInclusive<i128>,
    ) -> Option<Boxes> {
        let b1 = constant_box(&problem.first, mentioned)?;
        let b2 = constant_box(&problem.second, mentioned)?;
        if !box_sizes_within(&b1, &b2, points) {
            return None;
        }
        let mut slots = Slots::default();
        let f = compile(walked_f, &mut slots)?;
        let g = compile(walked_g, &mut slots)?;
        Some(Boxes {
            b1,
            b2,
            f,
            g,
            slots,
        })
    }
}

/// The points of a box: the product of its levels' lengths (`None` past `i128`).
fn box_size(b: &[(Var, i128, i128, i128)]) -> Option<i128> {
    b.iter().try_fold(1i128, |acc, (_, lo, hi, _)| {
        acc.checked_mul((hi - lo + 1).max(0))
    })
}

/// Whether the larger of two boxes has a number of points in `points`.
fn box_sizes_within(
    b1: &[(Var, i128, i128, i128)],
    b2: &[(Var, i128, i128, i128)],
    points: &RangeInclusive<i128>,
) -> bool {
    matches!((box_size(b1), box_size(b2)), (Some(x), Some(y)) if points.contains(&x.max(y)))
}

/// Calls `visit` with each point of the box `b` (its levels' values, in order) and the
/// slot values it gives; stops at the first `None` and returns it.
fn walk_box(
    b: &[(Var, i128, i128, i128)],
    slots: &Slots,
    mut visit: impl FnMut(&[i128], &[i128]) -> Option<()>,
) -> Option<()> {
    if b.iter().any(|(_, lo, hi, _)| lo > hi) {
        return Some(());
    }
    let mut current: Vec<i128> = b.iter().map(|(_, lo, ..)| *lo).collect();
    loop {
        let mut vals = vec![0i128; slots.count()];
        for ((v, ..), x) in b.iter().zip(&current) {
            if let Some(k) = slots.get(v) {
                vals[k] = *x;
            }
        }
        visit(&current, &vals)?;
        // The next point, the last level fastest.
        let mut p = b.len();
        loop {
            if p == 0 {
                return Some(());
            }
            p -= 1;
            if current[p] < b[p].2 {
                current[p] += 1;
                break;
            }
            current[p] = b[p].1;
        }
    }
}

/// The offset `e` at every point of the box `b`; `None` when one cannot be evaluated.
fn box_offsets(b: &[(Var, i128, i128, i128)], e: &Compiled, slots: &Slots) -> Option<Vec<i128>> {
    let mut out = Vec::new();
    walk_box(b, slots, |_, vals| {
        out.push(e.eval_int(vals)?);
        Some(())
    })?;
    Some(out)
}

/// Whether the accesses never meet for any values of the symbols, shown by enumerating a
/// box that contains every iteration space the symbols can give: each level bounded by
/// constants (the extents of fixed-size rows, `j <= min(15, m - 1)`). Every integer of the
/// box is tried (a superset of the iterations), so finding no overlap proves independence;
/// finding one proves nothing.
///
/// The offsets' terms that read no level variable may hold symbols when the two sides'
/// such parts differ by a multiple of a `g` (their [`symbolic_modulus`]) at least the bytes
/// of both accesses together: the mixed-radix addresses of scientific codes (phono3py's
/// `fc3[a*n*n*27 + b*n*27 + c*27 + i*9 + j*3 + k]` against the same with `b`, `c` and `j`,
/// `k` swapped). The accesses can then meet only where the walked parts meet modulo `g`:
/// the box's offsets are taken modulo `g`, and the second side's also one `g` below and
/// above, so that every overlap some multiple of `g` allows is seen.
///
/// Three proofs, each on boxes of at most `points` points per side: the loops around the
/// carrier enumerated, then taken as symbols ([`box_independent_with`]), then a carrier
/// without constant bounds ([`strided_carrier_independent`]).
fn box_independent(problem: &Problem, points: i128) -> bool {
    box_independent_with(problem, false, 0..=points)
        || box_independent_with(problem, true, 0..=points)
        || strided_carrier_independent(problem, 0..=points)
        || nonzero_difference_independent(problem, 0..=points)
}

/// Whether the constraints say `d` is never zero: some `e != 0` (or `e < 0`, `e > 0`)
/// among them with `d` a nonzero constant multiple of `e` (`8*adrs - 8*adrs_t` under
/// `if (adrs != adrs_t)`).
fn known_nonzero(d: &Poly, constraints: &[Constraint]) -> bool {
    if d.is_zero() {
        return false;
    }
    constraints
        .iter()
        .filter(|c| matches!(c.op, Relation::Ne | Relation::Lt | Relation::Gt))
        .any(|c| {
            let Expr::Poly(e) = &c.expr else {
                return false;
            };
            let Some((m, k)) = e.terms().first() else {
                return false;
            };
            let Some((_, dk)) = d.terms().iter().find(|(dm, _)| dm == m) else {
                return false;
            };
            let ratio = dk / k;
            !num_traits::Zero::is_zero(&ratio) && e.scale(&ratio) == *d
        })
}

/// Whether the accesses never meet when the program has ruled out the one case where
/// their symbolic parts coincide: phono3py's in-place transpose
/// `fc3[adrs + l*9 + m*3 + n] = fc3[adrs_t + m*9 + l*3 + n]` under `if (adrs != adrs_t)`,
/// with `adrs` and `adrs_t` multiples of 27 elements. Their difference is then a nonzero
/// multiple of 216 bytes, while the walked parts (`l*72 + m*24 + n*8` and its transpose,
/// both in `[0, 216)`) differ by less: no two iterations meet. Without the guard they do
/// (`adrs == adrs_t`, `l = 0, m = 1` against `l = 1, m = 0`).
///
/// The loops around the carrier are symbols (one value for both accesses, under which
/// the guard held); every pair of points of the boxes of the other levels in different
/// carrier iterations is tried against every nonzero multiple. Same premise as
/// [`box_independent`]: the symbols hold one value over the loop.
fn nonzero_difference_independent(problem: &Problem, points: RangeInclusive<i128>) -> bool {
    let Some((difference, walked_f, walked_g)) = split_offsets(problem, true) else {
        return false;
    };
    if !known_nonzero(&difference, &problem.constraints) {
        return false;
    }
    let Some(modulus) = symbolic_modulus(&difference).filter(|g| *g > 0) else {
        return false;
    };
    let Some(Boxes {
        b1,
        b2,
        f,
        g,
        slots,
    }) = carrier_boxes(problem, (&walked_f, &walked_g), &points)
    else {
        return false;
    };
    // (carrier value, walked offset) at every point of a box.
    let points = |b: &[(Var, i128, i128, i128)], e: &Compiled| -> Option<Vec<(i128, i128)>> {
        let carrier = b.iter().position(|(v, ..)| v == problem.carrier)?;
        let mut out = Vec::new();
        walk_box(b, &slots, |current, vals| {
            out.push((current[carrier], e.eval_int(vals)?));
            Some(())
        })?;
        Some(out)
    };
    let (Some(p1), Some(p2)) = (points(&b1, &f), points(&b2, &g)) else {
        return false;
    };
    let meets = |t| meets_across_multiples(t, problem, modulus, true);
    !p1.iter()
        .any(|(c1, o1)| p2.iter().any(|(c2, o2)| c1 != c2 && meets(o2 - o1)))
}

/// The loops around the carrier (the same on both sides, with one value for both
/// accesses).
fn enclosing_vars<'a>(problem: &'a Problem) -> Vec<&'a Var> {
    problem
        .first
        .levels
        .iter()
        .take_while(|l| &l.var != problem.carrier)
        .map(|l| &l.var)
        .collect()
}

/// Both offsets split by [`split_symbolic`] over the levels of the problem (the loops
/// around the carrier taken as symbols when `enclosing_as_symbols`): the difference of the
/// symbolic parts (first minus second) and the two walked parts.
fn split_offsets(problem: &Problem, enclosing_as_symbols: bool) -> Option<(Poly, Expr, Expr)> {
    let enclosing = enclosing_vars(problem);
    let ivs: Vec<&Var> = [&problem.first, &problem.second]
        .iter()
        .flat_map(|s| s.levels.iter().map(|l| &l.var))
        .filter(|v| !(enclosing_as_symbols && enclosing.contains(v)))
        .collect();
    let is_level = |v: &Var| ivs.contains(&v);
    let (symbolic_f, walked_f) = split_symbolic(problem.first.offset, &is_level)?;
    let (symbolic_g, walked_g) = split_symbolic(problem.second.offset, &is_level)?;
    Some((
        symbolic_f.sub(&symbolic_g),
        Expr::Poly(walked_f),
        Expr::Poly(walked_g),
    ))
}

/// [`Boxes::new`] over the carrier and the levels the walked offsets mention: the others
/// are equal on both sides (enclosing loops) or free (inner loops), whatever their bounds.
fn carrier_boxes(
    problem: &Problem,
    walked: (&Expr, &Expr),
    points: &RangeInclusive<i128>,
) -> Option<Boxes> {
    let mentioned: std::collections::BTreeSet<Var> = walked
        .0
        .vars()
        .into_iter()
        .chain(walked.1.vars())
        .chain(std::iter::once(problem.carrier.clone()))
        .collect();
    Boxes::new(problem, walked, &mentioned, points)
}

/// [`box_independent`], the loops around the carrier enumerated (their bounds constants)
/// or, with `enclosing_as_symbols`, taken as symbols: they hold one value for both
/// accesses, so `144*face_id` on both sides cancels whatever `face_id`'s bounds are
/// (`xa[face_id][1][j][i]` against `xa[face_id][0][i][j]` over `i` and `j`).
fn box_independent_with(
    problem: &Problem,
    enclosing_as_symbols: bool,
    points: RangeInclusive<i128>,
) -> bool {
    let Some((difference, walked_f, walked_g)) = split_offsets(problem, enclosing_as_symbols)
    else {
        return false;
    };
    let Some(modulus) = symbolic_modulus(&difference) else {
        return false;
    };
    let bytes = i128::from(problem.first.bytes) + i128::from(problem.second.bytes);
    if modulus != 0 && modulus < bytes {
        return false;
    }
    let Some(Boxes {
        b1,
        b2,
        f,
        g,
        slots,
    }) = carrier_boxes(problem, (&walked_f, &walked_g), &points)
    else {
        return false;
    };
    let points = |b: &[(Var, i128, i128, i128)], e: &Compiled| -> Option<Vec<Point>> {
        let carrier = b.iter().position(|(v, ..)| v == problem.carrier)?;
        let mut out = Vec::new();
        walk_box(b, &slots, |current, vals| {
            out.push(Point {
                ivs: current.to_vec(),
                k: current[carrier] * b[carrier].3,
                offset: e.eval_int(vals)?,
            });
            Some(())
        })?;
        Some(out)
    };
    let (Some(mut p1), Some(mut p2)) = (points(&b1, &f), points(&b2, &g)) else {
        return false;
    };
    if modulus != 0 {
        for p in &mut p1 {
            p.offset = p.offset.rem_euclid(modulus);
        }
        p2 = p2
            .into_iter()
            .flat_map(|p| {
                let offset = p.offset.rem_euclid(modulus);
                [-modulus, 0, modulus].map(|shift| Point {
                    ivs: p.ivs.clone(),
                    k: p.k,
                    offset: offset + shift,
                })
            })
            .collect();
    }
    let side = |b: &[(Var, i128, i128, i128)], bytes: u64| Side {
        offset: f.clone(),
        bytes: i128::from(bytes),
        levels: Vec::new(),
        carrier: b
            .iter()
            .position(|(v, ..)| v == problem.carrier)
            .unwrap_or(0),
        subscripts: Vec::new(),
        object_bytes: None,
        guards: Vec::new(),
        early_guards: Vec::new(),
    };
    let (s1, s2) = (
        side(&b1, problem.first.bytes),
        side(&b2, problem.second.bytes),
    );
    match_points(&s1, &p1, &s2, &p2, None).is_none()
}

fn var_of(slots: &Slots, k: usize) -> Var {
    slots
        .vars()
        .find(|(_, i)| *i == k)
        .map(|(v, _)| v.clone())
        .unwrap_or_else(|| Var::new("?"))
}

/// The first pair (earliest first iteration; the stated distance, else the nearest later
/// iteration) of a first point and a second point with equal enclosing values, a later
/// carrier iteration, and overlapping bytes.
fn match_points(
    first: &Side,
    p1: &[Point],
    second: &Side,
    p2: &[Point],
    distance: Option<i64>,
) -> Option<(usize, usize)> {
    // Second points sorted by their enclosing values, then offset, then carrier iteration
    // (then position): the groups a first point can meet are ranges found by bisection, with
    // no map of maps built per attempt.
    let carrier = second.carrier;
    fn enclosing_of(p: &Point, carrier: usize) -> &[i128] {
        &p.ivs[..carrier]
    }
    let enclosing = |p| enclosing_of(p, carrier);
    let mut sorted: Vec<usize> = (0..p2.len()).collect();
    sorted.sort_unstable_by(|&a, &b| {
        let (x, y) = (&p2[a], &p2[b]);
        enclosing(x)
            .cmp(enclosing(y))
            .then(x.offset.cmp(&y.offset))
            .then(x.k.cmp(&y.k))
            .then(a.cmp(&b))
    });
    let mut order: Vec<usize> = (0..p1.len()).collect();
    order.sort_by_key(|&n| p1[n].k);
    let mut best: Option<(i128, i128, usize, usize)> = None;
    for n in order {
        let p = &p1[n];
        if best.is_some_and(|(k1, ..)| p.k > k1) {
            break;
        }
        let at = &p.ivs[..first.carrier];
        let from = sorted.partition_point(|&m| enclosing(&p2[m]) < at);
        let to = from + sorted[from..].partition_point(|&m| enclosing(&p2[m]) <= at);
        let same = &sorted[from..to];
        // Overlap of [o1, o1 + s1) and [o2, o2 + s2): o1 - s2 < o2 < o1 + s1.
        let (lo, hi) = (p.offset - second.bytes + 1, p.offset + first.bytes);
        let start = same.partition_point(|&m| p2[m].offset < lo);
        let end = same.partition_point(|&m| p2[m].offset < hi);
        let want = distance.map(|d| p.k + i128::from(d));
        let mut g = start;
        while g < end {
            // One offset's points, by carrier iteration.
            let offset = p2[same[g]].offset;
            let group = &same[g..end][..same[g..end].partition_point(|&m| p2[m].offset == offset)];
            g += group.len();
            let exact = want.and_then(|w| {
                let k = group.partition_point(|&m| p2[m].k < w);
                group.get(k).filter(|&&m| p2[m].k == w).copied()
            });
            let later = || {
                let k = group.partition_point(|&m| p2[m].k <= p.k);
                group.get(k).copied()
            };
            if let Some(m) = exact.or_else(later) {
                let k2 = p2[m].k;
                // Prefer the stated distance, then the nearest iteration.
                let score = if Some(k2) == want { 0 } else { k2 - p.k };
                if best.is_none_or(|(_, s, ..)| score < s) {
                    best = Some((p.k, score, n, m));
                }
            }
        }
    }
    best.map(|(_, _, a, b)| (a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use frontend::loops::LoopId;

    fn level(var: &str, hi: i64) -> IvRange {
        IvRange {
            loop_id: LoopId(0),
            var: Var::new(var),
            init: Expr::integer(0.into()),
            lo: Expr::integer(0.into()),
            hi: Expr::integer(hi.into()),
            trips: Expr::integer((hi + 1).into()),
            step: 1,
            bound: Expr::integer((hi + 1).into()),
        }
    }

    /// Whether the box test proves `first` and `second` (8 bytes each, over `i` and `j`
    /// in 0..=2, `i` carrying) apart for every value of their symbols.
    fn apart(first: &str, second: &str) -> bool {
        let (i, j) = (level("i", 2), level("j", 2));
        let (f, g) = (
            symbolic::parse_expr(first).unwrap(),
            symbolic::parse_expr(second).unwrap(),
        );
        let side = |offset| SideInput {
            offset,
            bytes: 8,
            levels: vec![&i, &j],
            subscripts: Vec::new(),
            object_bytes: None,
        };
        let signs = symbolic::SignEnv::new();
        box_independent(
            &Problem {
                carrier: &i.var,
                first: side(&f),
                second: side(&g),
                signs: &signs,
                constraints: Vec::new(),
                distance: None,
                extra: Vec::new(),
                budget: POINT_BUDGET,
                guards: Vec::new(),
            },
            SMALL_BOX,
        )
    }

    /// A level over `0..n` for a symbol `n`: no constant bounds.
    fn open_level(var: &str) -> IvRange {
        let n = symbolic::parse_expr("n").unwrap();
        IvRange {
            loop_id: LoopId(0),
            var: Var::new(var),
            init: Expr::integer(0.into()),
            lo: Expr::integer(0.into()),
            hi: symbolic::parse_expr("n - 1").unwrap(),
            trips: n.clone(),
            step: 1,
            bound: n,
        }
    }

    /// Whether the tests without an enumeration of the whole space prove `first` and
    /// `second` (8 bytes each) apart, over `levels` (names: `o` open over `0..n`, any other
    /// over 0..=2), the carrier named.
    fn apart_over(first: &str, second: &str, levels: &[&str], carrier: &str) -> bool {
        apart_under(first, second, levels, carrier, &[])
    }

    /// [`apart_over`] where the program guarantees `e != 0` for each `e` of `nonzero`.
    fn apart_under(
        first: &str,
        second: &str,
        levels: &[&str],
        carrier: &str,
        nonzero: &[&str],
    ) -> bool {
        let constraints = nonzero
            .iter()
            .map(|e| Constraint {
                expr: symbolic::parse_expr(e).unwrap(),
                op: Relation::Ne,
            })
            .collect();
        let ranges: Vec<IvRange> = levels
            .iter()
            .map(|v| {
                if v.starts_with('o') {
                    open_level(v)
                } else {
                    level(v, 2)
                }
            })
            .collect();
        let (f, g) = (
            symbolic::parse_expr(first).unwrap(),
            symbolic::parse_expr(second).unwrap(),
        );
        let side = |offset| SideInput {
            offset,
            bytes: 8,
            levels: ranges.iter().collect(),
            subscripts: Vec::new(),
            object_bytes: None,
        };
        let signs = symbolic::SignEnv::new();
        let carrier = Var::new(carrier);
        let problem = Problem {
            carrier: &carrier,
            first: side(&f),
            second: side(&g),
            signs: &signs,
            constraints,
            distance: None,
            extra: Vec::new(),
            budget: POINT_BUDGET,
            guards: Vec::new(),
        };
        box_independent(&problem, SMALL_BOX)
    }

    #[test]
    fn symbols_whose_bounds_meet_are_pinned_in_every_assignment() {
        let c = |e: &str, op| Constraint {
            expr: symbolic::parse_expr(e).unwrap(),
            op,
        };
        let symbols = [Var::new("status"), Var::new("width"), Var::new("x")];
        let constraints = [
            c("status - 1", Relation::Ge),
            c("-status + 1", Relation::Ge),
            c("width - 2", Relation::Ge),
            // Equalities are the generic-layout check's pins: left to the search.
            c("x - 37", Relation::Eq),
        ];
        let pins = pinned_symbols(&symbols, &constraints);
        assert_eq!(pins, vec![Some(1), None, None]);
        let tried = pinned(vec![vec![2, 2, 0], vec![1, 2, 0], vec![3, 3, 1]], &pins);
        // Each distinct assignment once, `status` at 1 in all.
        assert_eq!(tried, vec![vec![1, 2, 0], vec![1, 3, 1]]);
    }

    #[test]
    fn a_guard_that_rules_out_equal_symbolic_parts_leaves_only_nonzero_multiples() {
        // phono3py's in-place transpose: fc3[a + 9l + 3m + n] = fc3[b + 9m + 3l + n] with
        // a, b multiples of 27 elements (216 bytes), carried by l.
        let (write, read) = ("216*a + 72*l + 24*m + 8*n", "216*b + 72*m + 24*l + 8*n");
        let levels = ["l", "m", "n"];
        // Without `a != b` the blocks may be one: l = 0, m = 1 meets l = 1, m = 0.
        assert!(!apart_under(write, read, &levels, "l", &[]));
        // With it, the walked parts (both in [0, 216)) cannot make up a nonzero multiple.
        assert!(apart_under(write, read, &levels, "l", &["a - b"]));
        // The guard as written in the program, a constant multiple of the difference.
        assert!(apart_under(write, read, &levels, "l", &["27*a - 27*b"]));
        // A guard on something else proves nothing.
        assert!(!apart_under(write, read, &levels, "l", &["a - 2*b"]));
        // Blocks of 27 elements 8 bytes apart per unit of a - b: a nonzero multiple of 8
        // bytes still lets l = 0, m = 1 meet l = 1, m = 0 one element over.
        assert!(!apart_under(
            "8*a + 72*l + 24*m + 8*n",
            "8*b + 72*m + 24*l + 8*n",
            &levels,
            "l",
            &["a - b"]
        ));
    }

    #[test]
    fn a_carrier_that_strides_both_addresses_alike_needs_no_bounds() {
        // xa[o][0][i] and xa[o][1][i] over a double[2][3] per face: 48 bytes per face.
        assert!(apart_over(
            "48*o + 8*i",
            "48*o + 24 + 8*i",
            &["o", "i"],
            "o"
        ));
        // The same store in two faces: a nonzero multiple of 48 apart.
        assert!(apart_over("48*o + 8*i", "48*o + 8*i", &["o", "i"], "o"));
        // Rows of 16 bytes, three elements each: face o's last meets face o + 1's first.
        assert!(!apart_over("16*o + 8*i", "16*o + 8*i", &["o", "i"], "o"));
        // Other symbols that may cancel the step (b - c = -2 at d = 3): any multiple.
        assert!(!apart_over(
            "48*o + 144*b + 8*i",
            "48*o + 144*c + 8*i",
            &["o", "i"],
            "o"
        ));
        // Different strides on the two sides: not decided here.
        assert!(!apart_over("48*o + 8*i", "96*o + 8*i", &["o", "i"], "o"));
    }

    #[test]
    fn loops_around_the_carrier_are_one_value_for_both_accesses() {
        // xa[o][1][j][i] against xa[o][0][i][j], carried by i: 72 + 24*j + 8*i never
        // equals 24*i' + 8*j' (9 + 3*j + i > 8), whatever face o.
        assert!(apart_over(
            "144*o + 72 + 24*j + 8*i",
            "144*o + 24*i + 8*j",
            &["o", "i", "j"],
            "i"
        ));
        // xa[o][0][i][j] against xa[o][0][j][i], carried by i: the transpose meets.
        assert!(!apart_over(
            "144*o + 24*i + 8*j",
            "144*o + 24*j + 8*i",
            &["o", "i", "j"],
            "i"
        ));
    }

    #[test]
    fn symbolic_parts_a_multiple_apart_leave_the_walked_parts_to_decide() {
        // Digits of a mixed radix: 9*i + 3*j and 9*i + j (times 8 bytes) never meet in
        // different rows `i`, whatever `b` and `c` add in multiples of 72 elements.
        assert!(apart("576*b + 72*i + 24*j", "576*c + 72*i + 8*j"));
        assert!(apart(
            "576*b*n + 72*i + 24*j",
            "576*c*n + 576*b + 72*i + 8*j"
        ));
        // 8*(i + j) meets 8*(i' + j'), j = j' + 1 for i' = i + 1: no radix separates rows.
        assert!(!apart("576*b + 8*i + 8*j", "576*c + 8*i + 8*j"));
        // A term reading both a symbol and a loop variable: not decided here.
        assert!(!apart("576*b*i + 8*j", "576*c + 8*j"));
        // A multiple smaller than both accesses together: every residue can meet.
        assert!(!apart("8*b + 72*i", "8*c + 72*i + 1000"));
    }

    #[test]
    fn residues_near_the_multiple_meet_across_it() {
        // 16*b against 16*c + 12*i: at i' = 1 the residue 12 is 4 bytes below the next
        // multiple of 16 (c = b - 1: bytes 0..8 and -4..4 from 16*b).
        assert!(!apart("16*b", "16*c + 12*i"));
        // Residues 0, 8, 16 against 32, 40, 48 modulo 64: never within 8 bytes.
        assert!(apart("64*b + 8*i", "64*c + 8*i + 32"));
    }
}
