//! Coalescing factors (thesis §5.1, Algorithm 1, made exact): the number of distinct 128-byte
//! segments `floor(addr / 128)` that the 32 threads of one warp touch in one execution of a
//! load or store (GPUDrano §3.2), as a symbolic expression in `[1, 32]`; and the same count
//! for the 32-byte *sectors* a request is served in (what Nsight Compute reports as sectors
//! per request), by the same algorithm with a 32-byte granule ([`sector_factor`]).
//!
//! The offset is first written in terms of the thread index `#tx` (the normalized iteration
//! index of the loop mapped to the grid's x). A warp is `#tx = 32*#warp + t`, `t in 0..32`:
//! blocks are assumed to have an x-dimension that is a multiple of 32, so warps never span
//! two rows of the grid. Everything else (the y index, inner loop variables, sizes) is a
//! fixed symbol for the warp. The array is assumed to start on a 128-byte boundary, as
//! `cudaMalloc` guarantees.
//!
//! * Affine offsets `s*#tx + c` with a constant stride are counted exactly: the warp's first
//!   address modulo 128 takes values in a residue class (known from the coefficients), and
//!   each possible residue is enumerated. When the class depends on symbolic row offsets
//!   (`4*N*i`), rows are assumed 128-byte aligned and the unaligned worst case is reported
//!   next to it.
//! * Affine offsets with a symbolic stride use the warp-area formula in bytes:
//!   `min(32, s/4)` when the stride is a multiple of 4 (exact for an aligned warp: `s/4` is
//!   `32*s / 128`), else `min(32, floor((r + 31*s + e - 1)/128) + 1)`. The sign of the
//!   stride comes from the sign facts, or from assumptions that are reported.
//! * Other offsets are enumerated for the 32 threads symbolically (the thesis' brute force);
//!   when every difference to the first thread is a constant the count is exact, otherwise
//!   monotone offsets use the warp area and the rest count distinct offsets (upper bounds).

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::collections::{BTreeSet, HashMap};
use symbolic::{
    min_of, monotonicity_with_assumptions, sign_of, simplify_expr, Expr, Monotonicity, SignEnv,
    SignSet, Var,
};

pub const WARP: i64 = 32;
/// The bytes of one memory request (a cache line).
pub const LINE: i64 = 128;
/// The bytes of one sector: the unit requests are served in.
pub const SECTOR: i64 = 32;

/// The normalized index of the loop mapped to the grid's x.
pub fn thread_var() -> Var {
    Var::new("#tx")
}

/// The index of a warp along x within its row: its first thread is `32 * #warp`.
pub fn warp_var() -> Var {
    Var::new("#warp")
}

/// How the names of shifts begin: see [`shift_var`].
const SHIFT: &str = "#shift.";

/// The stand-in for a uniform value `name` that shifts a warp's addresses by a multiple of
/// its coefficient (a kernel parameter added to the thread index, the first row of a warp
/// that spans rows). Unlike a row's pitch, nothing makes it a whole number of segments, so
/// it moves the warp's first address as the warp index does: its terms go with those of
/// [`warp_var`] into the aligned residues.
pub fn shift_var(name: &str) -> Var {
    Var::new(&format!("{SHIFT}{name}"))
}

/// Whether `a` is a [`shift_var`].
fn is_shift(a: &symbolic::Atom) -> bool {
    matches!(a, symbolic::Atom::Var(v) if v.name().starts_with(SHIFT))
}

pub const ALIGNED_ROWS: &str = "assuming 128-byte aligned rows";
pub const ALIGNED_SECTOR_ROWS: &str = "assuming 32-byte aligned rows";

/// The assumption that rows start on a granule boundary, in words.
fn aligned_rows(line: i64) -> &'static str {
    if line == LINE {
        ALIGNED_ROWS
    } else {
        ALIGNED_SECTOR_ROWS
    }
}

/// The most granules of `line` bytes one element of `elem` bytes covers: one when elements
/// tile the granule (`line % elem == 0`, accesses at multiples of their size from an aligned
/// base), otherwise it may start anywhere.
fn per_element(elem: u64, line: i64) -> i64 {
    let e = elem.max(1) as i64;
    if line % e == 0 {
        1
    } else {
        (e - 1) / line + 2
    }
}

/// The most granules a warp can touch: every thread its own.
fn most(elem: u64, line: i64) -> i64 {
    WARP * per_element(elem, line)
}

/// The coalescing factor of one offset expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Factor {
    /// The most requests a warp issues under `assumptions`.
    pub requests: Expr,
    /// The fewest, when warps differ.
    pub min_requests: Option<Expr>,
    /// The most without the aligned-rows assumption (present only when it was made).
    pub unaligned: Option<Expr>,
    /// Bytes between adjacent threads, when constant along the warp.
    pub stride: Option<Expr>,
    pub exact: bool,
    pub assumptions: Vec<String>,
}

impl Factor {
    /// Whether the count assumes rows start on its granule (a segment for requests, a
    /// sector for sectors): one of its assumptions is [`ALIGNED_ROWS`] or
    /// [`ALIGNED_SECTOR_ROWS`], and `unaligned` holds what a start off it costs.
    pub fn assumes_aligned_rows(&self) -> bool {
        self.assumptions
            .iter()
            .any(|a| a == ALIGNED_ROWS || a == ALIGNED_SECTOR_ROWS)
    }

    fn constant(n: i64, stride: Option<Expr>) -> Factor {
        Factor {
            requests: Expr::constant(n),
            min_requests: None,
            unaligned: None,
            stride,
            exact: true,
            assumptions: Vec::new(),
        }
    }

    pub fn worst(why: &str) -> Factor {
        Factor::worst_in(why, WARP)
    }

    fn worst_in(why: &str, most: i64) -> Factor {
        Factor {
            requests: Expr::constant(most),
            min_requests: None,
            unaligned: None,
            stride: None,
            exact: false,
            assumptions: vec![why.to_string()],
        }
    }
}

/// The sign environment for warp reasoning: thread and warp indices are non-negative.
pub fn warp_env(env: &SignEnv) -> SignEnv {
    env.clone()
        .with(thread_var(), SignSet::NON_NEG)
        .with(warp_var(), SignSet::NON_NEG)
}

/// Distinct 128-byte segments touched by accesses of `elem` bytes at `offsets`.
pub fn segments(offsets: &[i64], elem: u64) -> usize {
    granules(offsets, elem, LINE)
}

/// Distinct granules of `line` bytes touched by accesses of `elem` bytes at `offsets`.
pub fn granules(offsets: &[i64], elem: u64, line: i64) -> usize {
    // Each access covers the granules from its first byte's to its last byte's: a range
    // per access, sorted and deduplicated (a set insert per byte was a tenth of the
    // mapping evaluation on code_saturne).
    let last_byte = i64::try_from(elem.max(1) - 1).unwrap_or(i64::MAX);
    let mut seen: Vec<i64> = Vec::with_capacity(offsets.len());
    for &o in offsets {
        let first = o.div_euclid(line);
        let last = o.saturating_add(last_byte).div_euclid(line);
        seen.extend(first..=last);
    }
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// The residue class of an integer-valued expression modulo 128: `(k0, g)` means the value
/// is `k0 + g*m (mod 128)` for some integer `m`. `split` separates the terms that mention
/// `#warp` (their gcd is `g_warp`) from the other symbolic terms (`g_rows`).
struct Residues {
    k0: i64,
    g_warp: i64,
    g_rows: i64,
}

fn residues(e: &Expr, line: i64) -> Option<Residues> {
    let p = e.as_poly()?;
    let line = BigInt::from(line);
    let mut k0 = BigInt::zero();
    let mut g_warp = line.clone();
    let mut g_rows = line.clone();
    let w = warp_var();
    for (m, c) in p.terms() {
        if !c.is_integer() {
            return None;
        }
        let c = c.to_integer();
        if m.is_one() {
            k0 = c;
            continue;
        }
        let mentions_warp = m
            .factors()
            .iter()
            .any(|(a, _)| a.contains_var(&w) || is_shift(a));
        if mentions_warp {
            g_warp = g_warp.gcd(&c);
        } else {
            g_rows = g_rows.gcd(&c);
        }
    }
    Some(Residues {
        k0: k0.mod_floor(&line).to_i64()?,
        g_warp: g_warp.to_i64()?,
        g_rows: g_rows.to_i64()?,
    })
}

fn residue_set(k0: i64, g: i64, line: i64) -> Vec<i64> {
    let g = g.max(1);
    (0..line / g)
        .map(|m| (k0 + m * g).rem_euclid(line))
        .collect()
}

fn int_of(e: &Expr) -> Option<i64> {
    e.as_integer().and_then(|i| i.to_i64())
}

fn subst(e: &Expr, v: &Var, by: &Expr) -> Option<Expr> {
    e.substitute(&HashMap::from([(v.clone(), by.clone())])).ok()
}

/// The coalescing factor of `offset` (bytes from an aligned base), written in terms of
/// [`thread_var`], for accesses of `elem` bytes: 128-byte requests per warp.
pub fn coalescing_factor(offset: &Expr, elem: u64, env: &SignEnv) -> Factor {
    factor_in(offset, elem, env, LINE)
}

/// The same count in 32-byte sectors: how much of each request is moved.
pub fn sector_factor(offset: &Expr, elem: u64, env: &SignEnv) -> Factor {
    factor_in(offset, elem, env, SECTOR)
}

/// Distinct granules of `line` bytes a warp touches.
fn factor_in(offset: &Expr, elem: u64, env: &SignEnv, line: i64) -> Factor {
    let env = &warp_env(env);
    // `i / 4` with `i >= 0` is a floor: written so, the warp's offsets `(32*w + t) / 4`
    // split into `8*w + t/4` and the enumeration below counts them exactly.
    let floors = offset.truncs_to_floors(env).ok();
    let offset = floors.as_ref().unwrap_or(offset);
    let tx = thread_var();
    if !offset.contains_var(&tx) {
        // Every thread of the warp reads the same address: one element's granules (a
        // broadcast).
        let one = granules(&[0], elem, line) as i64;
        return Factor::constant(one, Some(Expr::constant(0)));
    }
    let next = subst(
        offset,
        &tx,
        &Expr::from(tx.clone())
            .checked_add(&Expr::constant(1))
            .unwrap_or_default(),
    );
    let stride = next.and_then(|n| n.checked_sub(offset).ok());
    let f = match stride {
        Some(s) if !s.contains_var(&tx) && s.as_poly().is_some() => {
            affine(offset, &s, elem, env, line)
        }
        _ => enumerate(offset, elem, env, line),
    };
    warp_independent(f, env, most(elem, line))
}

/// A count that depends on which warp along the row (`aux[i*i]`): the first warp's count is
/// the minimum when it grows with the warp index, and the maximum is the worst case 32.
fn warp_independent(mut f: Factor, env: &SignEnv, most: i64) -> Factor {
    let w = warp_var();
    if !f.requests.contains_var(&w) {
        return f;
    }
    let (m, _) = monotonicity_with_assumptions(&f.requests, &w, env);
    f.min_requests = (m == Monotonicity::Increasing)
        .then(|| subst(&f.requests, &w, &Expr::constant(0)))
        .flatten();
    f.requests = Expr::constant(most);
    f.unaligned = None;
    f.exact = false;
    f.assumptions.push(format!(
        "the count grows with the warp's position along x: {most} is the worst case"
    ));
    f
}

fn first_address(offset: &Expr) -> Option<Expr> {
    let start = Expr::from(warp_var())
        .checked_mul(&Expr::constant(WARP))
        .ok()?;
    subst(offset, &thread_var(), &start)
}

fn affine(offset: &Expr, s: &Expr, elem: u64, env: &SignEnv, line: i64) -> Factor {
    let start = first_address(offset);
    let res = start.as_ref().and_then(|a| residues(a, line));
    if let Some(sc) = int_of(s) {
        let Some(res) = res else {
            // Rational coefficients: alignment unknown; enumerate every residue.
            return by_residues(
                &(0..line).collect::<Vec<_>>(),
                &(0..line).collect::<Vec<_>>(),
                |r| (0..WARP).map(|t| r + sc * t).collect(),
                (elem, line),
                Some(s.clone()),
            );
        };
        let aligned = residue_set(res.k0, res.g_warp, line);
        let all = residue_set(res.k0, res.g_warp.gcd(&res.g_rows), line);
        return by_residues(
            &aligned,
            &all,
            |r| (0..WARP).map(|t| r + sc * t).collect(),
            (elem, line),
            Some(s.clone()),
        );
    }
    symbolic_stride(s, res, (elem, line), env, offset)
}

/// Counts per residue of the warp's first address: the aligned-rows residues decide the
/// reported range; all residues the unaligned worst case.
fn by_residues(
    aligned: &[i64],
    all: &[i64],
    offsets: impl Fn(i64) -> Vec<i64>,
    (elem, line): (u64, i64),
    stride: Option<Expr>,
) -> Factor {
    let count = |r: i64| granules(&offsets(r), elem, line) as i64;
    let lo = aligned.iter().map(|&r| count(r)).min().unwrap_or(1);
    let hi = aligned.iter().map(|&r| count(r)).max().unwrap_or(WARP);
    let worst = all.iter().map(|&r| count(r)).max().unwrap_or(WARP);
    let mut f = Factor::constant(hi, stride);
    f.exact = lo == hi;
    if lo != hi {
        f.min_requests = Some(Expr::constant(lo));
    }
    let sorted = |v: &[i64]| v.iter().copied().collect::<BTreeSet<_>>();
    if sorted(aligned) != sorted(all) {
        f.assumptions.push(aligned_rows(line).into());
        if worst != hi {
            f.unaligned = Some(Expr::constant(worst));
        }
    }
    f
}

/// `e` capped at `most` granules per warp.
fn clamp(e: &Expr, most: i64, env: &SignEnv) -> Expr {
    min_of(&[Expr::constant(most), e.clone()], env).unwrap_or_else(|_| e.clone())
}

fn symbolic_stride(
    s: &Expr,
    res: Option<Residues>,
    (elem, line): (u64, i64),
    env: &SignEnv,
    offset: &Expr,
) -> Factor {
    let cap = most(elem, line);
    let mut assumptions = Vec::new();
    let sign = sign_of(s, env);
    let positive = if !sign.has_neg() {
        true
    } else if !sign.has_pos() {
        false
    } else {
        let (m, used) = monotonicity_with_assumptions(offset, &thread_var(), env);
        assumptions.extend(used.iter().map(|a| format!("assuming {a}")));
        match m {
            Monotonicity::Increasing => true,
            Monotonicity::Decreasing => false,
            _ => return Factor::worst_in("the sign of the stride between threads is unknown", cap),
        }
    };
    let magnitude = if positive { s.clone() } else { s.neg() };
    let may_be_zero = sign.has_zero() && assumptions.is_empty();
    let e = elem.max(1) as i64;
    // A warp of aligned threads `s` apart covers `32*s` bytes: `s / (line/32)` granules
    // when that divides, and when elements tile the granule.
    let per_thread = line / WARP;
    let step = num_integer::lcm(per_thread, e);
    let divisible = line % e == 0
        && magnitude.as_poly().is_some_and(|p| {
            p.terms()
                .iter()
                .all(|(_, c)| c.is_integer() && (c.to_integer() % BigInt::from(step)).is_zero())
        });
    let (k0, needs_alignment) = match &res {
        Some(r) => (r.k0, r.g_warp % line == 0 && r.g_rows % line != 0),
        None => (0, true),
    };
    // The first address modulo the granule must be a single known value for an exact count.
    let fixed_residue = res.as_ref().is_some_and(|r| r.g_warp % line == 0);
    let area = |r: i64| -> Option<Expr> {
        // floor((r + 31*s + e - 1) / line) + 1, with s >= 0.
        let num = magnitude
            .checked_mul(&Expr::constant(WARP - 1))
            .ok()?
            .checked_add(&Expr::constant(r + e - 1))
            .ok()?;
        num.c_div_in(&BigInt::from(line), env)
            .ok()?
            .checked_add(&Expr::constant(1))
            .ok()
    };
    let formula = if divisible && k0 == 0 {
        magnitude
            .div_const(&BigRational::from_integer(BigInt::from(per_thread)))
            .ok()
    } else {
        area(k0)
    };
    let Some(mut requests) = formula else {
        return Factor::worst_in("the warp area could not be computed", cap);
    };
    if may_be_zero {
        requests =
            symbolic::max_of(&[Expr::constant(1), requests.clone()], env).unwrap_or(requests);
    }
    let mut f = Factor {
        requests: clamp(&requests, cap, env),
        min_requests: None,
        unaligned: None,
        stride: Some(s.clone()),
        exact: fixed_residue && line % e == 0,
        assumptions,
    };
    if needs_alignment && fixed_residue {
        f.assumptions.push(aligned_rows(line).into());
        f.unaligned = requests
            .checked_add(&Expr::constant(1))
            .ok()
            .map(|u| clamp(&u, cap, env));
    } else if !fixed_residue {
        f.exact = false;
        f.unaligned = area(line - 1).map(|u| clamp(&u, cap, env));
    }
    f
}

/// The thesis' brute force for offsets that are not affine in the thread index.
fn enumerate(offset: &Expr, elem: u64, env: &SignEnv, line: i64) -> Factor {
    let cap = most(elem, line);
    let w32 = Expr::from(warp_var())
        .checked_mul(&Expr::constant(WARP))
        .unwrap_or_default();
    let mut offsets = Vec::new();
    for t in 0..WARP {
        let Ok(x) = w32.checked_add(&Expr::constant(t)) else {
            return Factor::worst_in("the offsets of the warp could not be enumerated", cap);
        };
        match subst(offset, &thread_var(), &x) {
            Some(o) => offsets.push(simplify_expr(&o, env)),
            None => {
                return Factor::worst_in("the offsets of the warp could not be enumerated", cap)
            }
        }
    }
    let first = offsets[0].clone();
    let diffs: Option<Vec<i64>> = offsets
        .iter()
        .map(|o| o.checked_sub(&first).ok().and_then(|d| int_of(&d)))
        .collect();
    if let Some(diffs) = diffs {
        let mut f = granules_from(&first, &diffs, elem, line);
        f.assumptions
            .insert(0, "offsets enumerated for the 32 threads".into());
        return f;
    }
    let (m, used) = monotonicity_with_assumptions(offset, &thread_var(), env);
    let mut assumptions: Vec<String> = used.iter().map(|a| format!("assuming {a}")).collect();
    if matches!(m, Monotonicity::Increasing | Monotonicity::Decreasing) {
        let last = offsets[WARP as usize - 1].clone();
        let span = if m == Monotonicity::Increasing {
            last.checked_sub(&first)
        } else {
            first.checked_sub(&last)
        };
        if let Some(requests) = span.ok().and_then(|span| {
            span.checked_add(&Expr::constant(elem as i64 - 1 + line - 1))
                .ok()?
                .c_div_in(&BigInt::from(line), env)
                .ok()?
                .checked_add(&Expr::constant(1))
                .ok()
        }) {
            assumptions.push("monotone offsets: warp area, worst alignment".into());
            return Factor {
                requests: clamp(&requests, cap, env),
                min_requests: None,
                unaligned: None,
                stride: None,
                exact: false,
                assumptions,
            };
        }
    }
    // Distinct offsets, each covering at most `per_element` granules.
    let distinct: BTreeSet<&Expr> = offsets.iter().collect();
    assumptions.push("non-monotone offsets: counted distinct offsets".into());
    Factor {
        requests: Expr::constant(distinct.len() as i64 * per_element(elem, line)),
        min_requests: None,
        unaligned: None,
        stride: None,
        exact: false,
        assumptions,
    }
}

/// Distinct granules of `line` bytes touched by threads whose offsets are `first + d` for
/// each `d` of `diffs` (constants), accesses of `elem` bytes: exact for each residue of
/// `first` modulo the granule that its coefficients allow (terms in [`warp_var`] decide
/// the aligned-rows residues, the others only the unaligned worst case). What
/// `warpwise check` counts for a warp whose threads it lists one by one.
pub fn granules_from(first: &Expr, diffs: &[i64], elem: u64, line: i64) -> Factor {
    let (aligned, all) = match residues(first, line) {
        Some(r) => (
            residue_set(r.k0, r.g_warp, line),
            residue_set(r.k0, r.g_warp.gcd(&r.g_rows), line),
        ),
        None => ((0..line).collect(), (0..line).collect()),
    };
    by_residues(
        &aligned,
        &all,
        |r| diffs.iter().map(|d| r + d).collect(),
        (elem, line),
        None,
    )
}

/// The assumption [`together`] states.
pub const FORMS_TOGETHER: &str =
    "a warp's lanes may take different forms of the address: at most every form's granules together";

/// Forms of one access that the lanes of one warp may mix, each lane taking one (`idx` set
/// to `slice + k` or to `size + k` by a branch on the lane's `k`): the warp touches at most
/// the granules of every form together, so at most the forms' counts added, capped at a
/// lane each; from 1. Not exact: forms that share granules touch fewer.
pub fn together(parts: &[Factor], env: &SignEnv) -> Factor {
    let add = |pick: &dyn Fn(&Factor) -> Expr| {
        let sum = parts
            .iter()
            .try_fold(Expr::constant(0), |acc, f| acc.checked_add(&pick(f)));
        sum.map_or_else(|_| Expr::constant(WARP), |e| clamp(&e, WARP, env))
    };
    let requests = add(&|f| f.requests.clone());
    let unaligned = parts
        .iter()
        .any(|f| f.unaligned.is_some())
        .then(|| add(&|f| f.unaligned.clone().unwrap_or_else(|| f.requests.clone())))
        .filter(|u| *u != requests);
    let mut assumptions: Vec<String> = Vec::new();
    for a in parts.iter().flat_map(|f| &f.assumptions) {
        if !assumptions.contains(a) {
            assumptions.push(a.clone());
        }
    }
    assumptions.push(FORMS_TOGETHER.into());
    let stride = parts.first().and_then(|f| f.stride.clone());
    Factor {
        min_requests: (requests != Expr::constant(1)).then(|| Expr::constant(1)),
        requests,
        unaligned,
        stride: stride.filter(|s| parts.iter().all(|f| f.stride.as_ref() == Some(s))),
        exact: false,
        assumptions,
    }
}

/// Several possible offsets for one access (§5.1): the same base takes the maximum where
/// the offsets are one (`distinct` false), every form's granules together where a warp's
/// lanes may take different ones ([`together`]); different or unknown bases are the worst
/// case, 32.
pub fn combine(alternatives: &[(Option<Var>, Factor)], distinct: bool, env: &SignEnv) -> Factor {
    match alternatives {
        [] => Factor::worst("no address"),
        [(_, f)] => f.clone(),
        [(first, _), ..] => {
            if first.is_none() || alternatives.iter().any(|(b, _)| b != first) {
                return Factor::worst("the address may use different base pointers");
            }
            if distinct {
                let parts: Vec<Factor> = alternatives.iter().map(|(_, f)| f.clone()).collect();
                return together(&parts, env);
            }
            let mut f = alternatives[0].1.clone();
            for (_, g) in &alternatives[1..] {
                f.requests = symbolic::get_max(&f.requests, &g.requests, env)
                    .unwrap_or_else(|_| Expr::constant(WARP));
                f.exact = f.exact && g.exact && f.requests == g.requests;
                f.min_requests = None;
                f.unaligned = match (&f.unaligned, &g.unaligned) {
                    (Some(a), Some(b)) => symbolic::get_max(a, b, env).ok(),
                    (a, b) => a.clone().or(b.clone()),
                };
                if f.stride != g.stride {
                    f.stride = None;
                }
                for a in &g.assumptions {
                    if !f.assumptions.contains(a) {
                        f.assumptions.push(a.clone());
                    }
                }
            }
            f.assumptions
                .push("maximum over the possible offsets".into());
            f
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{granules, together, Factor, FORMS_TOGETHER};
    use proptest::prelude::*;
    use symbolic::{Expr, SignEnv};

    #[test]
    fn forms_a_warp_may_mix_add_up_to_a_lane_each() {
        let env = SignEnv::default();
        let form = |n: i64| Factor {
            requests: Expr::constant(n),
            min_requests: None,
            unaligned: None,
            stride: Some(Expr::constant(4)),
            exact: true,
            assumptions: Vec::new(),
        };
        let f = together(&[form(1), form(1)], &env);
        assert_eq!(f.requests, Expr::constant(2));
        assert_eq!(f.min_requests, Some(Expr::constant(1)));
        assert!(!f.exact);
        assert_eq!(f.stride, Some(Expr::constant(4)));
        assert_eq!(f.assumptions, [FORMS_TOGETHER]);
        assert_eq!(
            together(&[form(20), form(20)], &env).requests,
            Expr::constant(32)
        );
    }

    /// The granules every byte of every access falls in, one by one.
    fn by_bytes(offsets: &[i64], elem: u64, line: i64) -> usize {
        let mut seen = std::collections::BTreeSet::new();
        for &o in offsets {
            for b in 0..elem.max(1) as i64 {
                seen.insert((o + b).div_euclid(line));
            }
        }
        seen.len()
    }

    proptest! {
        #[test]
        fn granules_are_those_of_every_byte(
            offsets in proptest::collection::vec(-5000i64..5000, 0..40),
            elem in 0u64..300,
            line in prop_oneof![Just(32i64), Just(128i64)],
        ) {
            prop_assert_eq!(granules(&offsets, elem, line), by_bytes(&offsets, elem, line));
        }
    }
}
