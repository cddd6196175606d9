//! Shared-memory opportunities (thesis §5.2, Algorithm 2) under the recommended mapping.
//!
//! For every load, the bytes one thread reads over the loops that stay inside the thread
//! (`[lo, hi)` as functions of the thread's grid position) are compared with those of its
//! x- and y-neighbours: a non-empty intersection is reuse worth staging. The block's area
//! comes from its first and last threads by monotonicity (the block whose first thread has
//! grid coordinates `block.x`, `block.y`). A linearized 2D access `R*row + col` (row pitch
//! `R` symbolic, §5.2.1) is reported as a tile of rows × bytes with its halo instead of a
//! linear range of "a bit more than blockDim.y rows". Loads of one array are grouped
//! (§5.2.2): tiles with the same pitch merge into one (scheme 1 when their starts differ by
//! constants, scheme 2 — by pointer, possibly with holes — otherwise). An array every
//! thread reads whole (a filter) is a broadcast area. An access that stays uncoalesced
//! under the recommended mapping and is a 2D pattern gets a tile too: loaded coalesced,
//! read from shared memory in the original pattern, with its bank conflicts and padding.

use crate::banks;
use crate::coalescing::{thread_var, warp_env};
use crate::gpus::blocks_per_sm;
use crate::mapping::{Evaluated, Nest, Target};
use crate::model::{Access, BankConflicts, Bytes, Occupancy, Quantity, SharedArea, Tile};
use crate::space::{extreme, IvRange, Space};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use std::collections::{BTreeMap, HashMap};
use symbolic::{get_max, get_min, sign_of, Expr, Poly, SignEnv, SignSet, Var};

pub fn row_var() -> Var {
    Var::new("#ty")
}
fn block_x() -> Var {
    Var::new("block.x")
}
fn block_y() -> Var {
    Var::new("block.y")
}
pub fn dim_x() -> Var {
    Var::new("blockDim.x")
}
pub fn dim_y() -> Var {
    Var::new("blockDim.y")
}

/// One load's per-thread pattern.
struct Pattern {
    access: Access,
    elem: u64,
    /// Offset with the mapped variables written as `#tx`, `#ty`.
    offset: Expr,
    two_d: Option<TwoD>,
    /// Requests per warp of this load under the mapping.
    requests: Option<i64>,
}

/// `offset = pitch*row + col`.
#[derive(Clone)]
struct TwoD {
    pitch: Expr,
    row: Expr,
    col: Expr,
}

fn add(a: &Expr, b: &Expr) -> Option<Expr> {
    a.checked_add(b).ok()
}
fn sub(a: &Expr, b: &Expr) -> Option<Expr> {
    a.checked_sub(b).ok()
}
fn mul(a: &Expr, b: &Expr) -> Option<Expr> {
    a.checked_mul(b).ok()
}
fn subst(e: &Expr, map: &HashMap<Var, Expr>) -> Option<Expr> {
    e.substitute(map).ok()
}
fn at(e: &Expr, v: &Var, by: Expr) -> Option<Expr> {
    subst(e, &HashMap::from([(v.clone(), by)]))
}

/// The analysis for the recommended mapping `best`.
pub fn analyze(
    nest: &Nest,
    best: &Evaluated,
    target: &Target,
) -> (Vec<SharedArea>, Option<Occupancy>) {
    let c = &best.candidate;
    let Some(mut map) = nest.thread_substitution(c) else {
        return (Vec::new(), None);
    };
    if let Some(y) = c.y.and_then(|y| nest.iv(y)) {
        let ty = mul(&Expr::from(row_var()), &Expr::integer(BigInt::from(y.step)));
        if let Some(e) = ty.and_then(|t| add(&y.init, &t)) {
            map.insert(y.var.clone(), e);
        }
    }
    let mapped: Vec<Var> = [Some(c.x), c.y]
        .into_iter()
        .flatten()
        .filter_map(|id| nest.iv(id).map(|r| r.var.clone()))
        .collect();
    // Loops that stay inside the thread: those nested in the innermost mapped loop.
    let innermost =
        c.y.filter(|y| nest.forest.loop_(*y).parent == Some(c.x))
            .unwrap_or(c.x);
    let innermost = if c
        .y
        .is_some_and(|y| nest.forest.loop_(c.x).parent == Some(y))
    {
        c.x
    } else {
        innermost
    };
    let mut env = warp_env(&nest.space.env).with(row_var(), SignSet::NON_NEG);
    for v in [block_x(), block_y()] {
        env.set(v, SignSet::NON_NEG);
    }
    for v in [dim_x(), dim_y()] {
        env.set(v, SignSet::POS);
    }
    let mut inner = Vec::new();
    for r in &nest.space.ivs {
        if mapped.contains(&r.var) || !is_inside(nest, r.loop_id, innermost) {
            continue;
        }
        let (Some(lo), Some(hi)) = (subst(&r.lo, &map), subst(&r.hi, &map)) else {
            return (Vec::new(), None);
        };
        inner.push(IvRange {
            lo,
            hi,
            ..r.clone()
        });
    }
    let inner_vars: Vec<Var> = inner.iter().map(|r| r.var.clone()).collect();
    let inner_space = Space {
        ivs: inner.clone(),
        env: env.clone(),
        assumptions: Vec::new(),
    };

    let mut by_base: BTreeMap<String, Vec<Pattern>> = BTreeMap::new();
    for (a, f) in nest.accesses.iter().zip(&best.factors) {
        if a.is_store {
            continue;
        }
        let (Some(base), [(_, offset)]) = (a.base(), a.alternatives.as_slice()) else {
            continue;
        };
        let offset = nest.shown_offset(Some(base), offset);
        let Some(offset) = subst(&offset, &map) else {
            continue;
        };
        let (line, text) = nest.access_text(a);
        let mut ivs = inner_vars.clone();
        ivs.push(thread_var());
        ivs.push(row_var());
        let two_d = reconstruct_2d(&offset, &ivs);
        by_base
            .entry(base.name().to_string())
            .or_default()
            .push(Pattern {
                access: Access { line, text },
                elem: a.elem_bytes,
                offset,
                two_d,
                requests: f.requests.as_integer().and_then(|i| i.to_i64()),
            });
    }

    let ctx = Ctx {
        env,
        inner: inner_space,
        two_d_grid: c.y.is_some(),
        target: *target,
    };
    let mut areas = Vec::new();
    let mut bytes = Vec::new();
    for (array, patterns) in by_base {
        if let Some((area, b)) = ctx.area(&array, &patterns) {
            areas.push(area);
            bytes.push(b);
        }
    }
    let occupancy = ctx.occupancy(&bytes);
    (areas, occupancy)
}

fn is_inside(nest: &Nest, id: frontend::loops::LoopId, outer: frontend::loops::LoopId) -> bool {
    let mut cur = nest.forest.loop_(id).parent;
    while let Some(p) = cur {
        if p == outer {
            return true;
        }
        cur = nest.forest.loop_(p).parent;
    }
    false
}

/// §5.2.1: `offset = pitch*row + col` where the coefficient of every "row" variable is a
/// constant multiple of one pitch — a symbolic single product (`3*width`), or failing that
/// a constant of at least 128 bytes that the other coefficients stay below (`int A[N][M]`
/// with `M` a macro) — and that of every "column" variable is a constant.
fn reconstruct_2d(offset: &Expr, ivs: &[Var]) -> Option<TwoD> {
    let p = offset.as_poly()?;
    let zero: HashMap<Var, Expr> = ivs.iter().map(|v| (v.clone(), Expr::constant(0))).collect();
    let base = subst(offset, &zero)?;
    let mut coeffs: Vec<(Var, Expr)> = Vec::new();
    for v in ivs {
        if !p.contains_var(v) {
            continue;
        }
        let next = at(offset, v, add(&Expr::from(v.clone()), &Expr::constant(1))?)?;
        let coeff = sub(&next, offset)?;
        if coeff.vars().iter().any(|w| ivs.contains(w)) {
            return None;
        }
        coeffs.push((v.clone(), coeff));
    }
    // The pitch: the first symbolic coefficient, else the largest constant one.
    let symbolic = coeffs
        .iter()
        .find(|(_, c)| c.as_constant().is_none())
        .map(|(_, c)| c.clone());
    let pitch_expr = match symbolic {
        Some(c) => {
            let cp = c.as_poly()?;
            let [(_, _)] = cp.terms() else { return None };
            c
        }
        None => {
            let (_, largest) = coeffs
                .iter()
                .filter_map(|(v, c)| Some((v, c.as_constant()?.abs())))
                .max_by(|a, b| a.1.cmp(&b.1))?;
            let smaller = coeffs
                .iter()
                .filter(|(_, c)| c.as_constant().is_some_and(|k| k.abs() < largest))
                .count();
            if largest < BigRational::from_integer(BigInt::from(128)) || smaller == 0 {
                return None;
            }
            Expr::rational(largest)
        }
    };
    let pp = pitch_expr.as_poly()?;
    let [(pm, pc)] = pp.terms() else { return None };
    let pm = pm.factors().to_vec();
    let pc = pc.clone();
    let mut row = Expr::constant(0);
    let mut col = Expr::constant(0);
    for (v, coeff) in &coeffs {
        let term = mul(coeff, &Expr::from(v.clone()))?;
        let cp = coeff.as_poly()?;
        let as_row = match cp.terms() {
            [(m, c)] if m.factors() == pm.as_slice() => {
                let k = c / pc.clone();
                k.is_integer().then_some(k)
            }
            _ => None,
        };
        match as_row {
            Some(k) => row = add(&row, &mul(&Expr::rational(k), &Expr::from(v.clone()))?)?,
            None if coeff.as_constant().is_some() => col = add(&col, &term)?,
            None => return None,
        }
    }
    // Split the constant part: products divisible by the pitch belong to the row (a
    // constant pitch takes the floor quotient of the constant term).
    for (m, c) in base.as_poly()?.terms() {
        let mut rest = m.factors().to_vec();
        let divisible = pm.iter().all(|(a, e)| {
            rest.iter_mut()
                .find(|(b, f)| b == a && *f >= *e)
                .map(|(_, f)| *f -= e)
                .is_some()
        });
        if pm.is_empty() && m.is_one() {
            let quotient = (c / pc.clone()).floor();
            row = add(&row, &Expr::rational(quotient.clone()))?;
            col = add(&col, &Expr::rational(c - quotient * pc.clone()))?;
            continue;
        }
        let k = c / pc.clone();
        if divisible && !pm.is_empty() && k.is_integer() {
            let mut q = Poly::constant(k);
            for (a, e) in rest.iter().filter(|(_, e)| *e > 0) {
                q = q
                    .checked_mul(&Poly::atom(a.clone()).checked_pow(*e).ok()?)
                    .ok()?;
            }
            row = add(&row, &Expr::from(q))?;
        } else {
            let mut t = Poly::constant(c.clone());
            for (a, e) in m.factors() {
                t = t
                    .checked_mul(&Poly::atom(a.clone()).checked_pow(*e).ok()?)
                    .ok()?;
            }
            col = add(&col, &Expr::from(t))?;
        }
    }
    let pitch = pitch_expr;
    (add(&mul(&pitch, &row)?, &col)? == *offset).then_some(TwoD { pitch, row, col })
}

struct Ctx {
    env: SignEnv,
    inner: Space,
    two_d_grid: bool,
    target: Target,
}

/// `[lo, hi]` of an expression over the thread's inner loops (inclusive).
struct Range {
    lo: Expr,
    hi: Expr,
}

/// The rows and byte columns of a tile (see `Ctx::tile_bounds`).
struct TileBounds {
    block_rows: Range,
    block_cols: Range,
    thread_rows: Range,
    thread_cols: Range,
    /// Whether the patterns' columns differ by constants (grouping scheme 1).
    constant_gaps: bool,
}

/// How far `e` moves when `v` grows by one, as a distance (a negative constant turned
/// positive).
fn neighbour_shift(e: &Expr, v: &Var) -> Option<Expr> {
    let moved = at(e, v, add(&Expr::from(v.clone()), &Expr::constant(1))?)?;
    let d = sub(&moved, e)?;
    Some(if d.as_constant().is_some_and(|c| c.is_negative()) {
        d.neg()
    } else {
        d
    })
}

/// The kind of a tile and the advice that stages it.
fn tile_message(array: &str, reuse: bool, rows: &Expr, row_bytes: &Expr) -> (&'static str, String) {
    if reuse {
        (
            "reuse",
            format!(
                "adjacent threads read overlapping parts of `{array}`: stage the block's tile of ({}) rows × ({}) bytes, halo included",
                rows.to_c(),
                row_bytes.to_c()
            ),
        )
    } else {
        (
            "uncoalesced",
            format!(
                "`{array}` is read uncoalesced under this mapping: load the block's tile of ({}) rows × ({}) bytes coalesced into shared memory, then read it in the original pattern",
                rows.to_c(),
                row_bytes.to_c()
            ),
        )
    }
}

impl Ctx {
    fn thread_range(&self, e: &Expr) -> Option<Range> {
        let mut notes = Vec::new();
        Some(Range {
            lo: extreme(e, &self.inner, false, &mut notes)?,
            hi: extreme(e, &self.inner, true, &mut notes)?,
        })
    }

    /// Over the whole block: thread ranges at the block's first and last threads.
    fn block_range(&self, r: &Range) -> Option<Range> {
        let first: HashMap<Var, Expr> = HashMap::from([
            (thread_var(), Expr::from(block_x())),
            (row_var(), Expr::from(block_y())),
        ]);
        let last: HashMap<Var, Expr> = HashMap::from([
            (
                thread_var(),
                sub(
                    &add(&Expr::from(block_x()), &Expr::from(dim_x()))?,
                    &Expr::constant(1),
                )?,
            ),
            (
                row_var(),
                sub(
                    &add(&Expr::from(block_y()), &Expr::from(dim_y()))?,
                    &Expr::constant(1),
                )?,
            ),
        ]);
        let grid = [thread_var(), row_var()];
        let mono = symbolic::monotonicity_by_set(&r.lo, &grid, &self.env);
        let mono_hi = symbolic::monotonicity_by_set(&r.hi, &grid, &self.env);
        use symbolic::Monotonicity::*;
        let pick = |e: &Expr, m, want_max: bool| -> Option<Expr> {
            match (m, want_max) {
                (Constant, _) => Some(e.clone()),
                (Increasing, false) | (Decreasing, true) => subst(e, &first),
                (Increasing, true) | (Decreasing, false) => subst(e, &last),
                _ => None,
            }
        };
        Some(Range {
            lo: pick(&r.lo, mono, false)?,
            hi: pick(&r.hi, mono_hi, true)?,
        })
    }

    /// A per-thread amount (the bytes a thread shares with the next one) as the most any
    /// thread of the block has, in C: it may depend on the thread (`8*#tx + 4` for rows
    /// that grow), which a report cannot name. Absent when that is not monotonic in the
    /// thread.
    fn most_in_block(&self, e: &Expr) -> Option<Quantity> {
        let grid = [thread_var(), row_var()];
        if !e.vars().iter().any(|v| grid.contains(v)) {
            return Some(Quantity::of(e));
        }
        let r = Range {
            lo: e.clone(),
            hi: e.clone(),
        };
        self.block_range(&r).map(|r| Quantity::of(&r.hi))
    }

    fn shape(&self, e: &Expr) -> Option<Expr> {
        let (bx, by) = self.target.block;
        let map = HashMap::from([
            (dim_x(), Expr::constant(bx as i64)),
            (
                dim_y(),
                Expr::constant(if self.two_d_grid { by as i64 } else { 1 }),
            ),
        ]);
        subst(e, &map)
    }

    fn area(&self, array: &str, patterns: &[Pattern]) -> Option<(SharedArea, Expr)> {
        let accesses: Vec<Access> = patterns.iter().map(|p| p.access.clone()).collect();
        let grid = [thread_var(), row_var()];
        let depends_on_grid = |e: &Expr| e.vars().iter().any(|v| grid.contains(v));
        let in_inner = |p: &Pattern| self.inner.ivs.iter().any(|r| p.offset.contains_var(&r.var));
        // Broadcast: the same area for every thread, read over inner loops.
        if patterns.iter().all(|p| !depends_on_grid(&p.offset)) {
            if !patterns.iter().any(in_inner) {
                return None;
            }
            let mut lo: Option<Expr> = None;
            let mut hi: Option<Expr> = None;
            for p in patterns {
                let r = self.thread_range(&p.offset)?;
                let end = add(&r.hi, &Expr::constant(p.elem as i64))?;
                lo = Some(match lo {
                    None => r.lo,
                    Some(l) => get_min(&l, &r.lo, &self.env).ok()?,
                });
                hi = Some(match hi {
                    None => end,
                    Some(h) => get_max(&h, &end, &self.env).ok()?,
                });
            }
            let (lo, hi) = (lo?, hi?);
            // Inner loops whose bounds follow the thread (`j <= i`) give each thread its own
            // area: adjacent threads share part of it, which is reuse, not a broadcast.
            if depends_on_grid(&lo) || depends_on_grid(&hi) {
                return self.linear_area(array, patterns, accesses);
            }
            let size = sub(&hi, &lo)?;
            let elem = patterns[0].elem;
            return Some((SharedArea {
                array: array.to_string(),
                accesses,
                kind: "broadcast".into(),
                message: format!(
                    "every thread of a block reads all of `{array}` [{}, {}): stage it in shared memory once per block",
                    lo.to_c(),
                    hi.to_c()
                ),
                overlap_x_bytes: Some(Quantity::of(&size)),
                overlap_y_bytes: self.two_d_grid.then(|| Quantity::of(&size)),
                block_section: Some(Bytes {
                    lo: Quantity::of(&lo),
                    hi: Quantity::of(&hi),
                    size: Quantity::of(&size),
                    reads: Vec::new(),
                }),
                tile: None,
                bytes_per_block: Quantity::of(&size),
                bytes_for_block: Quantity::of(&size),
                bank_conflicts: Some(BankConflicts {
                    degree: Quantity::constant(1),
                    pattern: format!(
                        "all threads read the same {elem}-byte element at a time (broadcast)"
                    ),
                    padding: None,
                }),
                grouping: (patterns.len() > 1)
                    .then(|| "grouped by pointer (scheme 2)".to_string()),
            }, size));
        }
        // Reuse between neighbours, or an uncoalesced 2D pattern to stage.
        let all_2d: Option<Vec<&TwoD>> = patterns.iter().map(|p| p.two_d.as_ref()).collect();
        let same_pitch = all_2d
            .as_ref()
            .is_some_and(|t| t.iter().all(|d| d.pitch == t[0].pitch));
        if let (Some(tiles), true) = (all_2d, same_pitch) {
            return self.tile_area(array, patterns, &tiles, accesses);
        }
        self.linear_area(array, patterns, accesses)
    }

    /// The block's tile of a 2D pattern all the array's loads share (same pitch): staged
    /// when neighbouring threads reuse part of it or a warp reads it uncoalesced.
    fn tile_area(
        &self,
        array: &str,
        patterns: &[Pattern],
        tiles: &[&TwoD],
        accesses: Vec<Access>,
    ) -> Option<(SharedArea, Expr)> {
        let pitch = tiles[0].pitch.clone();
        let bounds = self.tile_bounds(patterns, tiles)?;
        let Range {
            lo: row_lo,
            hi: row_hi,
        } = bounds.block_rows;
        let Range {
            lo: col_lo,
            hi: col_hi,
        } = bounds.block_cols;
        let rows = add(&sub(&row_hi, &row_lo)?, &Expr::constant(1))?;
        let row_bytes = sub(&col_hi, &col_lo)?;
        let bytes = rows.checked_mul(&row_bytes).ok()?;
        let bytes_for_block = self.shape(&bytes)?;
        let (ox, oy) = self.tile_overlaps(tiles[0], &bounds.thread_rows, &bounds.thread_cols)?;
        let reuse = !ox.is_zero_expr() || oy.as_ref().is_some_and(|o| !o.is_zero_expr());
        let uncoalesced = patterns.iter().any(|p| p.requests.is_some_and(|r| r > 2));
        if !reuse && !uncoalesced {
            return None;
        }
        let d_row = neighbour_shift(&tiles[0].row, &thread_var())?;
        let d_col = neighbour_shift(&tiles[0].col, &thread_var())?;
        let bank_conflicts = self.tile_bank_conflicts(&row_bytes, &d_row, &d_col, patterns[0].elem);
        let grouping = (patterns.len() > 1).then(|| {
            if bounds.constant_gaps {
                "grouped: starting offsets differ by constants (scheme 1)".to_string()
            } else {
                "grouped by pointer, may include holes (scheme 2)".to_string()
            }
        });
        let (kind, message) = tile_message(array, reuse, &rows, &row_bytes);
        Some((
            SharedArea {
                array: array.to_string(),
                accesses,
                kind: kind.into(),
                message,
                overlap_x_bytes: self.most_in_block(&ox),
                overlap_y_bytes: oy.and_then(|o| self.most_in_block(&o)),
                block_section: None,
                tile: Some(Tile {
                    row_pitch_bytes: Quantity::of(&pitch),
                    row_lo: Quantity::of(&row_lo),
                    row_hi: Quantity::of(&row_hi),
                    rows: Quantity::of(&rows),
                    col_lo: Quantity::of(&col_lo),
                    col_hi: Quantity::of(&col_hi),
                    row_bytes: Quantity::of(&row_bytes),
                }),
                bytes_per_block: Quantity::of(&bytes),
                bytes_for_block: Quantity::of(&bytes_for_block),
                bank_conflicts,
                grouping,
            },
            bytes_for_block,
        ))
    }

    /// The rows and byte columns the loads of all the patterns cover, per thread and over
    /// the whole block (`None` when a bound cannot be compared).
    fn tile_bounds(&self, patterns: &[Pattern], tiles: &[&TwoD]) -> Option<TileBounds> {
        let mut block_rows: Option<Range> = None;
        let mut block_cols: Option<Range> = None;
        let mut thread_rows: Option<Range> = None;
        let mut thread_cols: Option<Range> = None;
        let mut constant_gaps = true;
        let first_col = &tiles[0].col;
        for (p, t) in patterns.iter().zip(tiles) {
            let rows = self.thread_range(&t.row)?;
            let cols = self.thread_range(&t.col)?;
            let cols = Range {
                hi: add(&cols.hi, &Expr::constant(p.elem as i64))?,
                lo: cols.lo,
            };
            if sub(&t.col, first_col)?.as_constant().is_none() {
                constant_gaps = false;
            }
            thread_rows = Some(self.union(thread_rows, rows.lo.clone(), rows.hi.clone())?);
            thread_cols = Some(self.union(thread_cols, cols.lo.clone(), cols.hi.clone())?);
            let br = self.block_range(&rows)?;
            let bc = self.block_range(&cols)?;
            block_rows = Some(self.union(block_rows, br.lo, br.hi)?);
            block_cols = Some(self.union(block_cols, bc.lo, bc.hi)?);
        }
        Some(TileBounds {
            block_rows: block_rows?,
            block_cols: block_cols?,
            thread_rows: thread_rows?,
            thread_cols: thread_cols?,
            constant_gaps,
        })
    }

    /// `[lo, hi]` widened to cover `so_far` too.
    fn union(&self, so_far: Option<Range>, lo: Expr, hi: Expr) -> Option<Range> {
        Some(match so_far {
            None => Range { lo, hi },
            Some(r) => Range {
                lo: get_min(&r.lo, &lo, &self.env).ok()?,
                hi: get_max(&r.hi, &hi, &self.env).ok()?,
            },
        })
    }

    /// The bytes of the tile a thread shares with its neighbour along x, and along y on
    /// a 2D grid: rows × columns shared.
    fn tile_overlaps(
        &self,
        tile: &TwoD,
        thread_rows: &Range,
        thread_cols: &Range,
    ) -> Option<(Expr, Option<Expr>)> {
        let t_rows = add(&sub(&thread_rows.hi, &thread_rows.lo)?, &Expr::constant(1))?;
        let t_cols = sub(&thread_cols.hi, &thread_cols.lo)?;
        let overlap = |v: &Var| -> Option<Expr> {
            let dr = neighbour_shift(&tile.row, v)?;
            let dc = neighbour_shift(&tile.col, v)?;
            let r = sub(&t_rows, &dr)?;
            let c = sub(&t_cols, &dc)?;
            let (sr, sc) = (sign_of(&r, &self.env), sign_of(&c, &self.env));
            if !sr.has_pos() || !sc.has_pos() {
                return Some(Expr::constant(0));
            }
            r.checked_mul(&c).ok()
        };
        let ox = overlap(&thread_var())?;
        let oy = if self.two_d_grid {
            Some(overlap(&row_var())?)
        } else {
            None
        };
        Some((ox, oy))
    }

    /// Bank conflicts of the warp's reads from the tile, whose rows move by `d_row` and
    /// columns by `d_col` from one thread to the next: row pitch in shared memory is the
    /// tile's row_bytes at the chosen block shape.
    fn tile_bank_conflicts(
        &self,
        row_bytes: &Expr,
        d_row: &Expr,
        d_col: &Expr,
        elem: u64,
    ) -> Option<BankConflicts> {
        let shared_pitch = self.shape(row_bytes).and_then(|e| e.as_integer()?.to_i64());
        let d_row = d_row.as_integer().and_then(|i| i.to_i64());
        // Along a row the pitch does not matter.
        let shared_pitch = if d_row == Some(0) {
            Some(0)
        } else {
            shared_pitch
        };
        match (
            shared_pitch,
            d_row,
            d_col.as_integer().and_then(|i| i.to_i64()),
        ) {
            (Some(pitch_b), Some(dr), Some(dc)) => {
                let stride = dr * pitch_b + dc;
                let degree = banks::strided_degree(stride, elem);
                let column = dr != 0;
                let padding = (column && degree > 1)
                    .then(|| banks::padding_for(pitch_b, elem))
                    .flatten()
                    .map(|pad| {
                        format!(
                            "pad each shared row by {pad} bytes (pitch {} instead of {pitch_b}): conflict-free",
                            pitch_b + pad
                        )
                    });
                Some(BankConflicts {
                    degree: Quantity::constant(degree as i64),
                    pattern: if column {
                        format!("a warp reads a column of the tile, {stride} bytes apart")
                    } else {
                        format!("a warp reads along a row of the tile, {stride} bytes apart")
                    },
                    padding,
                })
            }
            _ => None,
        }
    }

    fn linear_area(
        &self,
        array: &str,
        patterns: &[Pattern],
        accesses: Vec<Access>,
    ) -> Option<(SharedArea, Expr)> {
        let mut lo: Option<Expr> = None;
        let mut hi: Option<Expr> = None;
        let mut ox: Option<Expr> = None;
        let mut oy: Option<Expr> = None;
        for p in patterns {
            let r = self.thread_range(&p.offset)?;
            let r = Range {
                hi: add(&r.hi, &Expr::constant(p.elem as i64))?,
                lo: r.lo,
            };
            let overlap = |v: &Var| -> Option<Expr> {
                let next = |e: &Expr| at(e, v, add(&Expr::from(v.clone()), &Expr::constant(1))?);
                let l = get_max(&r.lo, &next(&r.lo)?, &self.env).ok()?;
                let h = get_min(&r.hi, &next(&r.hi)?, &self.env).ok()?;
                let size = sub(&h, &l)?;
                let s = sign_of(&size, &self.env);
                Some(if !s.has_pos() {
                    Expr::constant(0)
                } else {
                    size
                })
            };
            let x = overlap(&thread_var())?;
            ox = Some(match ox {
                None => x,
                Some(o) => get_max(&o, &x, &self.env).ok()?,
            });
            if self.two_d_grid {
                let y = overlap(&row_var())?;
                oy = Some(match oy {
                    None => y,
                    Some(o) => get_max(&o, &y, &self.env).ok()?,
                });
            }
            let b = self.block_range(&r)?;
            lo = Some(match lo {
                None => b.lo,
                Some(l) => get_min(&l, &b.lo, &self.env).ok()?,
            });
            hi = Some(match hi {
                None => b.hi,
                Some(h) => get_max(&h, &b.hi, &self.env).ok()?,
            });
        }
        let (ox, lo, hi) = (ox?, lo?, hi?);
        let reuse = !ox.is_zero_expr() || oy.as_ref().is_some_and(|o| !o.is_zero_expr());
        if !reuse {
            return None;
        }
        let size = sub(&hi, &lo)?;
        let for_block = self.shape(&size)?;
        Some((SharedArea {
            array: array.to_string(),
            accesses,
            kind: "reuse".into(),
            message: format!(
                "adjacent threads read overlapping bytes of `{array}`: stage the block's section in shared memory"
            ),
            overlap_x_bytes: self.most_in_block(&ox),
            overlap_y_bytes: oy.and_then(|o| self.most_in_block(&o)),
            block_section: Some(Bytes {
                lo: Quantity::of(&lo),
                hi: Quantity::of(&hi),
                size: Quantity::of(&size),
                reads: Vec::new(),
            }),
            tile: None,
            bytes_per_block: Quantity::of(&size),
            bytes_for_block: Quantity::of(&for_block),
            bank_conflicts: None,
            grouping: (patterns.len() > 1)
                .then(|| "grouped by pointer (scheme 2)".to_string()),
        }, for_block))
    }

    fn occupancy(&self, areas: &[Expr]) -> Option<Occupancy> {
        if areas.is_empty() {
            return None;
        }
        let gpu = self.target.gpu;
        let (bx, by) = self.target.block;
        let by = if self.two_d_grid { by } else { 1 };
        let threads = bx * by;
        let mut total = Expr::constant(0);
        for a in areas {
            total = add(&total, a)?;
        }
        let block = format!("{bx}x{by}");
        let name = format!("{} ({})", gpu.name, gpu.example);
        Some(match total.as_integer().and_then(|b| b.to_u64()) {
            Some(bytes) => match blocks_per_sm(gpu, threads, bytes) {
                Some((n, by_what)) => Occupancy {
                    gpu: name,
                    block,
                    shared_bytes_per_block: Quantity::of(&total),
                    blocks_per_sm: Some(n),
                    limited_by: Some(by_what.into()),
                    message: format!(
                        "{n} blocks of {threads} threads per SM ({} threads, {}% of {}), limited by {by_what}{}",
                        n * threads,
                        n * threads * 100 / gpu.max_threads_per_sm,
                        gpu.max_threads_per_sm,
                        if bytes > gpu.shared_per_block_default {
                            format!("; {bytes} bytes exceed the 48 KiB static limit: use dynamic shared memory and cudaFuncSetAttribute")
                        } else {
                            String::new()
                        }
                    ),
                },
                None => Occupancy {
                    gpu: name,
                    block,
                    shared_bytes_per_block: Quantity::of(&total),
                    blocks_per_sm: None,
                    limited_by: None,
                    message: format!(
                        "the block cannot launch: {bytes} bytes of shared memory (limit {}) or {threads} threads (limit {})",
                        gpu.shared_per_block, gpu.max_threads_per_block
                    ),
                },
            },
            None => Occupancy {
                gpu: name,
                block,
                shared_bytes_per_block: Quantity::of(&total),
                blocks_per_sm: None,
                limited_by: None,
                message: format!(
                    "depends on the sizes: fits when {} <= {} bytes per block (48 KiB without the opt-in); full occupancy ({} blocks) needs at most {} bytes per block",
                    total.to_c(),
                    gpu.shared_per_block,
                    (gpu.max_threads_per_sm / threads.max(1)).min(gpu.max_blocks_per_sm),
                    gpu.shared_per_sm / (gpu.max_threads_per_sm / threads.max(1)).min(gpu.max_blocks_per_sm).max(1)
                        - gpu.reserved_per_block
                ),
            },
        })
    }
}

trait ZeroExpr {
    fn is_zero_expr(&self) -> bool;
}

impl ZeroExpr for Expr {
    fn is_zero_expr(&self) -> bool {
        self.as_constant().is_some_and(|c| c.is_zero())
    }
}
