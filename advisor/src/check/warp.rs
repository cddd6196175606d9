//! Requests and sectors per warp for one access of a kernel, from its byte offset written
//! in the thread coordinates (`threadIdx.x`, `threadIdx.y`), by the engine of
//! [`crate::coalescing`].
//!
//! * `blockDim.x` unknown, or a known multiple of 32: a warp is 32 consecutive
//!   `threadIdx.x` of one row, which is the engine's `#tx = 32*#warp + t` as it stands.
//!   An unknown `blockDim.x` is written `32*#bdx32` for the count (the kernel states the
//!   assumption that it is a multiple of 32), so that `blockIdx.x*blockDim.x` is a multiple
//!   of 32 threads, and is written back in the result.
//! * `blockDim.x` known and not a multiple of 32 (`16`): a warp spans rows. Its threads are
//!   listed one by one (linear thread id `32*w + t` to `(tx, ty)`), for each of the
//!   `blockDim.x / gcd(blockDim.x, 32)` positions a warp can start at along x, with the
//!   warp's first row a symbol. Threads whose offsets differ by a constant are counted
//!   exactly ([`crate::coalescing::granules_from`]); threads on rows a symbolic distance
//!   apart are counted apart (an upper bound, said in the assumptions).

use crate::coalescing::{
    coalescing_factor, granules_from, sector_factor, shift_var, thread_var, warp_env, Factor, LINE,
    SECTOR, WARP,
};
use num_integer::Integer;
use std::collections::{BTreeMap, HashMap};
use symbolic::{Expr, SignEnv, SignSet, Var};

/// The symbols a kernel's offsets name its coordinates by (absent when it never reads one).
#[derive(Clone, Debug, Default)]
pub struct Coordinates {
    /// `threadIdx.x`, `.y`, `.z`.
    pub thread: [Option<Var>; 3],
    /// `blockDim.x`.
    pub block_dim_x: Option<Var>,
    /// Uniform names that may shift a warp's addresses off a segment when added to the
    /// index alone, each with the step its values take ([`shifted`]).
    pub free: Vec<(Var, i64)>,
}

/// A count per warp in requests (128-byte segments) and in sectors (32 bytes).
#[derive(Clone, Debug)]
pub struct WarpCount {
    pub requests: Factor,
    pub sectors: Factor,
    /// Bytes between the addresses of `threadIdx.x` and `threadIdx.x + 1`, when known.
    pub stride: Option<Expr>,
    /// Distinct addresses among the warp's threads (at most; 32 when unknown): what the
    /// warp's bytes are, and so the sectors they need at best.
    pub distinct: u64,
}

/// The stand-in for an unknown `blockDim.x / 32`.
pub(super) fn block_dim_warps() -> Var {
    Var::new("#bdx32")
}

/// The warp's first row (its first thread's `threadIdx.y`) when warps span rows.
fn first_row() -> Var {
    Var::new("#row")
}

/// Counts `offset` (bytes from an aligned base, known sizes already substituted) for
/// accesses of `elem` bytes; `block_x` is `blockDim.x` when known, `threads` the block's
/// size when known (a block under 32 threads has a short warp).
pub fn count(
    offset: &Expr,
    elem: u64,
    block_x: Option<u64>,
    threads: Option<u64>,
    coordinates: &Coordinates,
    env: &SignEnv,
) -> WarpCount {
    let tx = coordinates.thread[0].as_ref();
    let stride = stride_along_x(offset, coordinates);
    let offset = &shifted(offset, &coordinates.free);
    match block_x {
        Some(x) if x % WARP as u64 != 0 => {
            let (requests, sectors, distinct) =
                spanning_rows(offset, elem, x, threads, coordinates);
            WarpCount {
                requests,
                sectors,
                stride,
                distinct,
            }
        }
        _ => {
            let mut map = HashMap::new();
            if let Some(tx) = tx {
                map.insert(tx.clone(), Expr::from(thread_var()));
            }
            let mut env = warp_env(env);
            if block_x.is_none() {
                if let Some(bdx) = &coordinates.block_dim_x {
                    let warps = Expr::from(block_dim_warps())
                        .checked_mul(&Expr::constant(WARP))
                        .unwrap_or_default();
                    map.insert(bdx.clone(), warps);
                    env.set(block_dim_warps(), SignSet::POS);
                }
            }
            let along = offset.substitute(&map).unwrap_or_else(|_| offset.clone());
            let back = |f: Factor| written_back(f, coordinates);
            WarpCount {
                requests: back(coalescing_factor(&along, elem, &env)),
                sectors: back(sector_factor(&along, elem, &env)),
                stride,
                distinct: distinct_along_x(&along),
            }
        }
    }
}

/// Requests and sectors over the lanes a guard leaves in each warp ([`super::mask`]), each
/// lane at every offset of `forms` (one, or a clamp's), the most and the fewest over the
/// warps; `exact`: every lane left certainly runs the access at its one form (else the
/// count is the most, from 1). `None` when a warp's offsets are not a constant apart.
pub fn count_lanes(
    forms: &[Expr],
    elem: u64,
    warps: &[Vec<super::lanes::Lane>],
    exact: bool,
    free: &[(Var, i64)],
) -> Option<WarpCount> {
    let mut per_warp: Vec<(Factor, Factor)> = Vec::new();
    let mut distinct = 1;
    for lanes in warps {
        let offsets: Vec<Expr> = lanes
            .iter()
            .flat_map(|l| {
                forms.iter().map(|f| {
                    let o = shifted(f, free).substitute(&l.coords).ok()?;
                    Some(shifted(&o, &rows_of(free)))
                })
            })
            .collect::<Option<_>>()?;
        let first = offsets.first()?;
        let diffs: Vec<i64> = offsets
            .iter()
            .map(|o| {
                o.checked_sub(first)
                    .ok()?
                    .as_integer()
                    .and_then(|i| i64::try_from(i).ok())
            })
            .collect::<Option<_>>()?;
        // A lane reads one address whatever its form: at most a warp's worth.
        let seen: std::collections::BTreeSet<i64> = diffs.iter().copied().collect();
        distinct = distinct.max((seen.len() as u64).min(lanes.len() as u64));
        per_warp.push((
            granules_from(first, &diffs, elem, LINE),
            granules_from(first, &diffs, elem, SECTOR),
        ));
    }
    let over = |parts: Vec<Factor>| {
        let mut f = over_warps(parts)?;
        if !exact {
            f.min_requests = Some(Expr::constant(1));
            f.exact = false;
            f.assumptions
                .push("counted for every lane the guard may let through: the most".into());
        }
        Some(f)
    };
    let stride = None;
    Some(WarpCount {
        requests: over(per_warp.iter().map(|(r, _)| r.clone()).collect())?,
        sectors: over(per_warp.into_iter().map(|(_, s)| s).collect())?,
        stride,
        distinct,
    })
}

/// The counts of an access whose every lane takes the same one of several forms: the most
/// and the fewest over the forms (exact when they agree and each is). `None` when a count is
/// not a number.
pub fn over_forms(each: Vec<WarpCount>) -> Option<WarpCount> {
    let distinct = each.iter().map(|c| c.distinct).max()?;
    let requests = over_warps(each.iter().map(|c| c.requests.clone()).collect())?;
    let sectors = over_warps(each.iter().map(|c| c.sectors.clone()).collect())?;
    Some(WarpCount {
        requests,
        sectors,
        stride: None,
        distinct,
    })
}

/// Forms of an address a warp's lanes may mix, each counted alone: every form's granules
/// together, at most the counts added (`coalescing::together`).
pub fn together(each: Vec<WarpCount>, env: &SignEnv) -> WarpCount {
    let requests: Vec<Factor> = each.iter().map(|c| c.requests.clone()).collect();
    let sectors: Vec<Factor> = each.iter().map(|c| c.sectors.clone()).collect();
    WarpCount {
        requests: crate::coalescing::together(&requests, env),
        sectors: crate::coalescing::together(&sectors, env),
        stride: None,
        distinct: each
            .iter()
            .map(|c| c.distinct)
            .sum::<u64>()
            .min(WARP as u64),
    }
}

/// Constant counts of several warps together: the most, the fewest where they differ, and
/// the most without the aligned-rows assumption where some warp's count makes it (a
/// block's offset, `16*blockIdx.x` bytes, taken as a whole number of segments).
fn over_warps(parts: Vec<Factor>) -> Option<Factor> {
    let value = |e: &Expr| e.as_integer().and_then(|i| i64::try_from(i).ok());
    let mut most = 0;
    let mut fewest = i64::MAX;
    let mut unaligned: Option<i64> = None;
    let mut exact = true;
    let mut assumptions: Vec<String> = Vec::new();
    for f in &parts {
        let hi = value(&f.requests)?;
        let lo = f.min_requests.as_ref().map_or(Some(hi), value)?;
        most = most.max(hi);
        fewest = fewest.min(lo);
        if let Some(u) = f.unaligned.as_ref() {
            unaligned = Some(unaligned.unwrap_or(0).max(value(u)?));
        }
        exact &= f.exact;
        for a in &f.assumptions {
            if !assumptions.contains(a) {
                assumptions.push(a.clone());
            }
        }
    }
    (!parts.is_empty()).then(|| Factor {
        requests: Expr::constant(most),
        min_requests: (fewest != most).then(|| Expr::constant(fewest)),
        unaligned: unaligned
            .map(|u| u.max(most))
            .filter(|u| *u != most)
            .map(Expr::constant),
        stride: None,
        exact: exact && fewest == most,
        assumptions,
    })
}

/// `offset` with each term that is a number times one name of `free` alone (`4*t` in
/// `4*t + 4*threadIdx.x`) written with that name's [`shift_var`], its coefficient times
/// the name's step: a kernel parameter added to the index, unknown, may start the warp
/// anywhere its element size allows, so the count is the most and the fewest over those
/// starts rather than the aligned start's alone. A name that also multiplies another in the
/// offset is a row's pitch (`4*n*threadIdx.y - 4*n`, the row above) and its terms stay
/// under the aligned-rows assumption.
pub fn shifted(offset: &Expr, free: &[(Var, i64)]) -> Expr {
    let Some(poly) = offset.as_poly() else {
        return offset.clone();
    };
    let mut out = offset.clone();
    for (m, c) in poly.terms() {
        let [(symbolic::Atom::Var(v), 1)] = m.factors() else {
            continue;
        };
        let Some((_, step)) = free.iter().find(|(f, _)| f == v) else {
            continue;
        };
        let pitch = poly
            .terms()
            .iter()
            .any(|(other, _)| other != m && other.factors().iter().any(|(a, _)| a.contains_var(v)));
        if pitch {
            continue;
        }
        let Some(c) = c
            .is_integer()
            .then(|| c.to_integer())
            .and_then(|c| i64::try_from(c).ok())
        else {
            continue;
        };
        let moved = Expr::from(v.clone())
            .checked_mul(&Expr::constant(c))
            .and_then(|term| out.checked_sub(&term))
            .and_then(|rest| {
                Expr::from(shift_var(v.name()))
                    .checked_mul(&Expr::constant(c.saturating_mul(*step)))
                    .and_then(|s| rest.checked_add(&s))
            });
        if let Ok(e) = moved {
            out = e;
        }
    }
    out
}

/// The part of `offset` that the aligned-rows assumption takes to be a multiple of `line`
/// bytes: its terms in neither `threadIdx.x` nor a name of `free` (a warp's lanes differ
/// in those alone; `threadIdx.y` picks the warp's row), whose coefficient is
/// not already a multiple of `line` (`-4*border - 8*blockIdx.x*iteration` of pathfinder's
/// `1024*blockIdx.x - 4*border + 4*threadIdx.x - 8*blockIdx.x*iteration`); `None` when no
/// such term is left (or the offset is no polynomial), where the assumption has no
/// expression to name.
pub fn unaligned_rows(offset: &Expr, line: i64, coordinates: &Coordinates) -> Option<Expr> {
    let poly = offset.as_poly()?;
    let mentions =
        |m: &symbolic::Monomial, v: &Var| m.factors().iter().any(|(a, _)| a.contains_var(v));
    let line = num_bigint::BigInt::from(line);
    let kept = poly.retain_terms(|k| {
        let (m, c) = &poly.terms()[k];
        !m.is_one()
            && !coordinates.thread[0]
                .as_ref()
                .is_some_and(|t| mentions(m, t))
            && !coordinates.free.iter().any(|(f, _)| mentions(m, f))
            && (!c.is_integer() || !c.to_integer().is_multiple_of(&line))
    });
    (!kept.is_zero()).then(|| Expr::from(kept))
}

/// The warp's first row among `free`: what listing a warp's lanes brings into an offset.
fn rows_of(free: &[(Var, i64)]) -> Vec<(Var, i64)> {
    free.iter()
        .filter(|(v, _)| *v == first_row())
        .cloned()
        .collect()
}

/// Distinct offsets among the threads `#tx = 32*#warp + t` of a warp (32 when they cannot
/// be told apart).
fn distinct_along_x(offset: &Expr) -> u64 {
    let tx = thread_var();
    if !offset.contains_var(&tx) {
        return 1;
    }
    let first = Expr::from(crate::coalescing::warp_var())
        .checked_mul(&Expr::constant(WARP))
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for t in 0..WARP {
        let Ok(at) = first.checked_add(&Expr::constant(t)) else {
            return WARP as u64;
        };
        match offset.substitute(&HashMap::from([(tx.clone(), at)])) {
            Ok(e) => {
                seen.insert(e.to_string());
            }
            Err(_) => return WARP as u64,
        }
    }
    seen.len() as u64
}

/// Bytes between the offsets of `threadIdx.x + 1` and `threadIdx.x` when that does not
/// depend on `threadIdx.x` (zero when the offset does not use it).
pub fn stride_along_x(offset: &Expr, coordinates: &Coordinates) -> Option<Expr> {
    let Some(tx) = coordinates.thread[0].as_ref() else {
        return Some(Expr::constant(0));
    };
    let next = Expr::from(tx.clone())
        .checked_add(&Expr::constant(1))
        .ok()?;
    let shifted = offset
        .substitute(&HashMap::from([(tx.clone(), next)]))
        .ok()?;
    let s = shifted.checked_sub(offset).ok()?;
    (!s.contains_var(tx)).then_some(s)
}

/// `f` with `#bdx32` written as `blockDim.x / 32` again.
fn written_back(mut f: Factor, coordinates: &Coordinates) -> Factor {
    let Some(bdx) = &coordinates.block_dim_x else {
        return f;
    };
    let Ok(per_warp) =
        Expr::from(bdx.clone()).div_const(&num_rational::BigRational::from_integer(WARP.into()))
    else {
        return f;
    };
    let map = HashMap::from([(block_dim_warps(), per_warp)]);
    f.requests = substituted(&f.requests, &map);
    f.min_requests = f.min_requests.as_ref().map(|e| substituted(e, &map));
    f.unaligned = f.unaligned.as_ref().map(|e| substituted(e, &map));
    f.stride = f.stride.as_ref().map(|e| substituted(e, &map));
    f
}

/// `e` with `map` substituted, or as it is when that fails.
fn substituted(e: &Expr, map: &HashMap<Var, Expr>) -> Expr {
    e.substitute(map).unwrap_or_else(|_| e.clone())
}

/// Counts for a known `blockDim.x` that is not a multiple of 32: every start of a warp along
/// x, its threads listed; the most over the starts, and the fewest.
fn spanning_rows(
    offset: &Expr,
    elem: u64,
    x: u64,
    threads: Option<u64>,
    coordinates: &Coordinates,
) -> (Factor, Factor, u64) {
    let warp = threads.map_or(WARP as u64, |t| t.clamp(1, WARP as u64));
    let starts = x / x.gcd(&(WARP as u64));
    let mut per_start = Vec::new();
    let mut distinct = 1;
    for p in 0..starts {
        let first_x = (WARP as u64 * p) % x;
        let offsets: Option<Vec<Expr>> = (0..warp)
            .map(|t| {
                let linear = first_x + t;
                let mut map = HashMap::new();
                if let Some(tx) = &coordinates.thread[0] {
                    map.insert(tx.clone(), Expr::constant((linear % x) as i64));
                }
                if let Some(ty) = &coordinates.thread[1] {
                    let row = Expr::from(first_row())
                        .checked_add(&Expr::constant((linear / x) as i64))
                        .ok()?;
                    map.insert(ty.clone(), row);
                }
                offset
                    .substitute(&map)
                    .ok()
                    .map(|o| shifted(&o, &rows_of(&coordinates.free)))
            })
            .collect();
        let Some(offsets) = offsets else {
            let worst = Factor::worst("the offsets of the warp could not be listed");
            return (worst.clone(), worst, WARP as u64);
        };
        let different: std::collections::BTreeSet<String> =
            offsets.iter().map(|o| o.to_string()).collect();
        distinct = distinct.max(different.len() as u64);
        per_start.push((
            rows_apart(&offsets, elem, LINE),
            rows_apart(&offsets, elem, SECTOR),
        ));
    }
    let requests = over_starts(per_start.iter().map(|(r, _)| r.clone()).collect(), x);
    let sectors = over_starts(per_start.into_iter().map(|(_, s)| s).collect(), x);
    (requests, sectors, distinct)
}

/// One warp's granules: threads grouped by the symbolic part of their offset's difference
/// to the first thread's (their row), each group counted exactly, the groups added.
fn rows_apart(offsets: &[Expr], elem: u64, line: i64) -> Factor {
    let first = &offsets[0];
    // Per symbolic difference (the constant term removed): the group's first offset and the
    // constant differences to it.
    let mut groups: BTreeMap<String, (Expr, Vec<i64>)> = BTreeMap::new();
    for o in offsets {
        let Ok(d) = o.checked_sub(first) else {
            return Factor::worst("the offsets of the warp could not be compared");
        };
        let (symbolic, constant) = split_constant(&d);
        let key = symbolic.to_string();
        match groups.get_mut(&key) {
            Some((group_first, diffs)) => {
                let Some(k) = o
                    .checked_sub(group_first)
                    .ok()
                    .and_then(|e| e.as_integer())
                    .and_then(|i| i64::try_from(i).ok())
                else {
                    return Factor::worst("the offsets of a row could not be compared");
                };
                diffs.push(k);
            }
            None => {
                let _ = constant;
                groups.insert(key, (o.clone(), vec![0]));
            }
        }
    }
    let counted: Vec<Factor> = groups
        .values()
        .map(|(group_first, diffs)| granules_from(group_first, diffs, elem, line))
        .collect();
    let mut total = added(&counted);
    if counted.len() > 1 {
        // Rows closer than a granule could share one; the sum is exact when they do not.
        let apart: Vec<String> = groups
            .keys()
            .filter(|k| k.as_str() != "0")
            .cloned()
            .collect();
        total.assumptions.push(format!(
            "rows of the warp are {line} bytes apart or more (their addresses differ by {}),              so they share no {line}-byte {}",
            apart.join(", "),
            if line == LINE { "segment" } else { "sector" }
        ));
    }
    total
}

/// `e` as (its non-constant part, its constant term).
fn split_constant(e: &Expr) -> (Expr, i64) {
    let Some(p) = e.as_poly() else {
        return (e.clone(), 0);
    };
    let c = p.constant_term();
    let constant = if c.is_integer() {
        i64::try_from(c.to_integer()).unwrap_or(0)
    } else {
        0
    };
    let rest = e
        .checked_sub(&Expr::constant(constant))
        .unwrap_or_else(|_| e.clone());
    (rest, constant)
}

/// The sum of constant counts (what separate groups of a warp touch together, at most).
fn added(parts: &[Factor]) -> Factor {
    let value = |e: &Expr| e.as_integer().and_then(|i| i64::try_from(i).ok());
    let mut most = 0i64;
    let mut fewest = 0i64;
    let mut unaligned = 0i64;
    let mut any_unaligned = false;
    let mut exact = true;
    let mut assumptions: Vec<String> = Vec::new();
    for f in parts {
        let (Some(hi), lo) = (value(&f.requests), f.min_requests.as_ref().and_then(value)) else {
            return Factor::worst("a row's count is not a number");
        };
        most += hi;
        fewest += lo.unwrap_or(hi);
        any_unaligned |= f.unaligned.is_some();
        unaligned += f.unaligned.as_ref().and_then(value).unwrap_or(hi);
        exact &= f.exact;
        for a in &f.assumptions {
            if !assumptions.contains(a) {
                assumptions.push(a.clone());
            }
        }
    }
    Factor {
        requests: Expr::constant(most),
        min_requests: (fewest != most).then(|| Expr::constant(fewest)),
        unaligned: any_unaligned.then(|| Expr::constant(unaligned)),
        stride: None,
        exact,
        assumptions,
    }
}

/// The counts of the warps' possible starts along x together: the most, and the fewest.
fn over_starts(starts: Vec<Factor>, x: u64) -> Factor {
    let value = |e: &Expr| e.as_integer().and_then(|i| i64::try_from(i).ok());
    let mut iter = starts.into_iter();
    let Some(mut f) = iter.next() else {
        return Factor::worst("no warp");
    };
    let mut fewest = f
        .min_requests
        .as_ref()
        .and_then(value)
        .or(value(&f.requests));
    for g in iter {
        let (Some(a), Some(b)) = (value(&f.requests), value(&g.requests)) else {
            return Factor::worst("a warp's count is not a number");
        };
        let g_fewest = g.min_requests.as_ref().and_then(value).unwrap_or(b);
        fewest = fewest.map(|m| m.min(g_fewest));
        if a != b {
            f.exact = false;
        }
        f.exact &= g.exact;
        if b > a {
            f.requests = g.requests.clone();
        }
        f.unaligned = match (
            f.unaligned.as_ref().and_then(value),
            g.unaligned.as_ref().and_then(value),
        ) {
            (Some(u), Some(v)) => Some(Expr::constant(u.max(v))),
            (u, v) => u.or(v).map(Expr::constant),
        };
        for a in g.assumptions {
            if !f.assumptions.contains(&a) {
                f.assumptions.push(a);
            }
        }
    }
    let most = value(&f.requests);
    f.min_requests = match (fewest, most) {
        (Some(lo), Some(hi)) if lo != hi => Some(Expr::constant(lo)),
        _ => None,
    };
    f.assumptions.insert(
        0,
        format!("threads listed one by one: blockDim.x = {x}, so a warp spans rows"),
    );
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coordinates() -> Coordinates {
        Coordinates {
            thread: [
                Some(Var::new("threadIdx.x")),
                Some(Var::new("threadIdx.y")),
                None,
            ],
            block_dim_x: Some(Var::new("blockDim.x")),
            free: Vec::new(),
        }
    }

    fn int(e: &Expr) -> i64 {
        i64::try_from(e.as_integer().unwrap()).unwrap()
    }

    #[test]
    fn unknown_block_width_is_taken_in_whole_warps() {
        let e = symbolic::parse_expr("4*threadIdx.x + 4*blockDim.x*blockIdx.x").unwrap();
        let c = count(&e, 4, None, None, &coordinates(), &SignEnv::new());
        assert_eq!(int(&c.requests.requests), 1);
        assert!(
            c.requests.exact && c.requests.assumptions.is_empty(),
            "{c:?}"
        );
        assert_eq!(int(&c.sectors.requests), 4);
        assert_eq!(c.stride.as_ref().map(int), Some(4));
    }

    #[test]
    fn a_half_warp_row_is_two_rows_per_warp() {
        // a[ty * n + tx] with blockDim.x = 16: two rows of 64 bytes.
        let e = symbolic::parse_expr("4*threadIdx.y*n + 4*threadIdx.x").unwrap();
        let c = count(&e, 4, Some(16), None, &coordinates(), &SignEnv::new());
        assert_eq!(int(&c.requests.requests), 2, "{c:?}");
        assert_eq!(int(&c.sectors.requests), 4, "{c:?}");
        // Exact when the rows share no sector, which the count says it assumes.
        assert!(c.sectors.exact, "{c:?}");
        assert!(
            c.sectors.assumptions.iter().any(|a| a.starts_with(
                "rows of the warp are 32 bytes apart or more (their addresses differ by 4*n)"
            )),
            "{c:?}"
        );
        assert_eq!(c.distinct, 32);
    }
}
