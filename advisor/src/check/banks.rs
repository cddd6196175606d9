//! The bank-conflict degree of a shared-memory access: shared memory is 32 banks of 4-byte
//! words (word `w` in bank `w % 32`), a warp's access is served in as many passes as the
//! most distinct words its active lanes touch in one bank (lanes reading the same word
//! share it: a broadcast). The degree is computed from the lanes' offsets
//! ([`super::lanes`]), exactly where they differ by constants.
//!
//! The bank pattern does not change when every address moves by whole words, so only the
//! warp's first offset modulo 4 matters: known when the offset's symbolic terms are
//! multiples of 4 (an array of 4-byte elements), else each of the four is tried and the
//! degree is the range. Lanes whose offsets differ by a symbol (rows `4*n` bytes apart)
//! are counted per row, the degree bounded between the most of one row and the rows' sum.
//! A symbolic stride `s` between neighbouring lanes of 4-byte elements gives `gcd(s/4, 32)`.
//! An access wider than 4 bytes is served 128 bytes of lanes at a time (a half warp of
//! `double`s): only lanes of one such pass are counted together.

use super::lanes::Lane;
use crate::coalescing::WARP;
use num_traits::{ToPrimitive, Zero};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use symbolic::Expr;

/// Bytes per bank word, and banks.
const WORD: i64 = 4;
const BANKS: i64 = 32;

/// The degree of one access over the warps listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Degree {
    /// The most passes a warp needs, as an expression (`gcd(n, 32)`) or a number.
    pub max: String,
    pub value: Option<u64>,
    /// The fewest, where warps or alignments differ.
    pub min: Option<u64>,
    pub exact: bool,
    pub assumptions: Vec<String>,
}

impl Degree {
    fn number(most: u64, fewest: u64, assumptions: Vec<String>) -> Degree {
        Degree {
            max: most.to_string(),
            value: Some(most),
            min: (fewest != most).then_some(fewest),
            exact: fewest == most,
            assumptions,
        }
    }

    /// Anything from 1 pass to every lane its own.
    pub fn unknown(why: &str) -> Degree {
        Degree {
            assumptions: vec![why.to_string()],
            ..Degree::number(WARP as u64, 1, Vec::new())
        }
    }
}

/// The degree of an access of `elem` bytes at `offset` (known sizes substituted) for each
/// warp of `warps` (its active lanes).
pub fn degree(offset: &Expr, elem: u64, warps: &[Vec<Lane>]) -> Degree {
    let mut most = 0;
    let mut fewest = u64::MAX;
    let mut assumptions: Vec<String> = Vec::new();
    let mut strided: Option<Degree> = None;
    for lanes in warps.iter().filter(|l| !l.is_empty()) {
        let offsets: Option<Vec<Expr>> = lanes
            .iter()
            .map(|l| offset.substitute(&l.coords).ok())
            .collect();
        let Some(offsets) = offsets else {
            return Degree::unknown("the offsets of the warp's lanes could not be listed");
        };
        let first = &offsets[0];
        let Some(diffs) = offsets
            .iter()
            .map(|o| o.checked_sub(first).ok())
            .collect::<Option<Vec<Expr>>>()
        else {
            return Degree::unknown("the offsets of the warp's lanes could not be compared");
        };
        let warp = match by_rows(first, &diffs, lanes, elem) {
            Some(d) => d,
            None => {
                // Every warp must give the same `gcd`: a number for one would not hold for
                // all.
                let d = symbolic_stride(first, &diffs, lanes, elem);
                if strided.as_ref().is_some_and(|s| *s != d) || most > 0 {
                    return Degree::unknown("the lanes' offsets differ by a symbolic amount");
                }
                strided = Some(d);
                continue;
            }
        };
        if strided.is_some() {
            return Degree::unknown("the lanes' offsets differ by a symbolic amount");
        }
        most = most.max(warp.value.unwrap_or(WARP as u64));
        fewest = fewest.min(warp.min.or(warp.value).unwrap_or(1));
        for a in warp.assumptions {
            if !assumptions.contains(&a) {
                assumptions.push(a);
            }
        }
    }
    if let Some(d) = strided {
        return d;
    }
    if most == 0 {
        // No warp runs the access.
        return Degree::number(0, 0, assumptions);
    }
    Degree::number(most, fewest, assumptions)
}

/// One warp: lanes grouped by the symbolic part of their difference to the first (rows),
/// each group's words counted for every possible first offset modulo 4. `None` when the
/// groups are several and no row has a constant placement (the symbolic-stride case).
fn by_rows(first: &Expr, diffs: &[Expr], lanes: &[Lane], elem: u64) -> Option<Degree> {
    let mut rows: BTreeMap<String, Vec<(u64, i64)>> = BTreeMap::new();
    for (d, lane) in diffs.iter().zip(lanes) {
        let (symbolic, constant) = split_constant(d)?;
        rows.entry(symbolic.to_string())
            .or_default()
            .push((lane.t, constant));
    }
    if rows.len() > 1 && rows.values().all(|r| r.len() == 1) {
        return None;
    }
    let residues = first_residues(first);
    let mut most = 0;
    let mut fewest = u64::MAX;
    for r in &residues {
        let per_row: Vec<u64> = rows
            .values()
            .map(|row| words_per_bank(row.iter().map(|(t, d)| (*t, r + d)), elem))
            .collect();
        let hi = if rows.len() == 1 {
            per_row[0]
        } else {
            per_row.iter().sum::<u64>().min(WARP as u64)
        };
        let lo = per_row.iter().copied().max().unwrap_or(1);
        most = most.max(hi);
        fewest = fewest.min(lo);
    }
    let mut assumptions = Vec::new();
    if residues.len() > 1 {
        assumptions.push(
            "the first lane's offset modulo 4 is not known: every placement in a word was counted"
                .to_string(),
        );
    }
    if rows.len() > 1 {
        let apart: Vec<&String> = rows.keys().filter(|k| k.as_str() != "0").collect();
        assumptions.push(format!(
            "rows of the warp are apart by {}: their banks depend on it, so the degree lies \
             between one row's and the rows' sum",
            apart
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Some(Degree::number(most, fewest, assumptions))
}

/// Every lane `s` bytes from the previous one, `s` symbolic, 4-byte elements on word
/// boundaries: `gcd(s/4, 32)` passes (lanes `32/gcd` apart share a bank), 1 when `s` is 0.
fn symbolic_stride(first: &Expr, diffs: &[Expr], lanes: &[Lane], elem: u64) -> Degree {
    let not_counted = || Degree::unknown("the lanes' offsets differ by a symbolic amount");
    if elem != WORD as u64 || lanes.len() != WARP as usize || first_residues(first) != [0] {
        return not_counted();
    }
    let Some(step) = diffs.get(1) else {
        return not_counted();
    };
    let regular = diffs.iter().zip(lanes).all(|(d, l)| {
        step.checked_mul(&Expr::constant(l.t as i64))
            .and_then(|e| e.checked_sub(d))
            .is_ok_and(|e| e.as_integer().is_some_and(|i| i.is_zero()))
    });
    let words = step
        .div_const(&num_rational::BigRational::from_integer(WORD.into()))
        .ok()
        .filter(|w| {
            w.as_poly()
                .is_some_and(|p| p.terms().iter().all(|(_, c)| c.is_integer()))
        });
    match (regular, words) {
        (true, Some(w)) => Degree {
            max: format!("gcd({w}, 32)"),
            value: None,
            min: None,
            exact: true,
            assumptions: vec![format!(
                "neighbouring lanes are {w} words apart: gcd({w}, 32) of them share a bank \
                 (1 when {w} is 0: a broadcast)"
            )],
        },
        _ => not_counted(),
    }
}

/// The most distinct 4-byte words in one bank among accesses of `elem` bytes by lanes
/// `(t, offset)`. An access wider than a word is served 128 bytes of lanes at a time (16
/// lanes of 8 bytes, 8 of 16), so only lanes of one such group can conflict: consecutive
/// `double`s take the two passes their 256 bytes need, and no more.
fn words_per_bank(lanes: impl Iterator<Item = (u64, i64)>, elem: u64) -> u64 {
    let per_group = lanes_per_pass(elem);
    let mut banks: HashMap<(u64, i64), BTreeSet<i64>> = HashMap::new();
    for (t, o) in lanes {
        let last = o + elem.max(1) as i64 - 1;
        for word in o.div_euclid(WORD)..=last.div_euclid(WORD) {
            banks
                .entry((t / per_group, word.rem_euclid(BANKS)))
                .or_default()
                .insert(word);
        }
    }
    banks.values().map(|w| w.len() as u64).max().unwrap_or(0)
}

/// The lanes one pass serves for accesses of `elem` bytes: the warp for a word or less,
/// 128 bytes' worth for wider ones.
pub fn lanes_per_pass(elem: u64) -> u64 {
    if elem > WORD as u64 && elem.is_multiple_of(WORD as u64) {
        (WARP as u64 * WORD as u64 / elem).max(1)
    } else {
        WARP as u64
    }
}

/// The first lane's offset modulo 4: one residue when its symbolic terms are integer
/// multiples of 4, else all four.
fn first_residues(first: &Expr) -> Vec<i64> {
    let Some(p) = first.as_poly() else {
        return (0..WORD).collect();
    };
    let mut constant = 0;
    for (m, c) in p.terms() {
        if !c.is_integer() {
            return (0..WORD).collect();
        }
        let c = c.to_integer();
        if m.factors().is_empty() {
            constant = (c % WORD).to_i64().unwrap_or(0);
        } else if !(c % WORD).is_zero() {
            return (0..WORD).collect();
        }
    }
    vec![constant.rem_euclid(WORD)]
}

/// `e` as (its non-constant part, its integer constant term), when its constant is one.
fn split_constant(e: &Expr) -> Option<(Expr, i64)> {
    let c = e.as_poly()?.constant_term();
    if !c.is_integer() {
        return None;
    }
    let c = c.to_integer().to_i64()?;
    Some((e.checked_sub(&Expr::constant(c)).ok()?, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::lanes::warps;
    use crate::check::warp::Coordinates;
    use symbolic::Var;

    fn one_row() -> Coordinates {
        Coordinates {
            thread: [
                Some(Var::new("threadIdx.x")),
                Some(Var::new("threadIdx.y")),
                None,
            ],
            block_dim_x: None,
            free: Vec::new(),
        }
    }

    fn of(offset: &str, elem: u64, block_x: Option<u64>) -> Degree {
        let e = symbolic::parse_expr(offset).unwrap();
        degree(&e, elem, &warps(block_x, None, &one_row()))
    }

    #[test]
    fn a_stride_of_words_conflicts_by_its_gcd_with_32() {
        assert_eq!(of("128*threadIdx.x + 4*k", 4, None).value, Some(32));
        assert_eq!(of("132*threadIdx.x + 4*k", 4, None).value, Some(1));
        assert_eq!(of("8*threadIdx.x", 4, None).value, Some(2));
        assert_eq!(of("4*threadIdx.x + 128*k", 4, Some(64)).value, Some(1));
        assert_eq!(of("4*k", 4, None).value, Some(1));
        // Doubles side by side: a half warp's 128 bytes a pass, no conflict; two apart, two.
        assert_eq!(of("8*threadIdx.x", 8, None).value, Some(1));
        assert_eq!(of("16*threadIdx.x", 8, None).value, Some(2));
        // A 32-byte structure a lane: four lanes a pass, side by side.
        assert_eq!(of("32*threadIdx.x", 32, None).value, Some(1));
    }

    #[test]
    fn a_symbolic_stride_is_a_gcd() {
        let d = of("4*n*threadIdx.x", 4, None);
        assert_eq!((d.max.as_str(), d.value), ("gcd(n, 32)", None));
    }

    #[test]
    fn a_half_warp_row_with_a_symbolic_pitch_is_bounded() {
        let d = of("4*n*threadIdx.y + 4*threadIdx.x", 4, Some(16));
        assert_eq!((d.value, d.min, d.exact), (Some(2), Some(1), false));
    }

    #[test]
    fn bytes_off_a_word_boundary_try_every_placement() {
        // Chars two apart: 16 lanes per two words, whatever the start; but with the start
        // unknown modulo 4 the warp spans 16 or 17 words, one a bank.
        let d = of("2*threadIdx.x + k", 1, None);
        assert_eq!(d.value, Some(1));
        assert!(d.exact, "{d:?}");
    }
}
