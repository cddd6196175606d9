//! The threads of a warp listed one by one: for each position a warp can start at, each
//! lane's `threadIdx.x` and `threadIdx.y` as expressions, to substitute into an offset or a
//! guard. What the bank-conflict degree and the counts under a guard are computed from.
//!
//! * `blockDim.x` unknown: the row's first warp, `threadIdx.x = t`, and any later one,
//!   `threadIdx.x = 32 + 32*#warp + t` (the kernel assumes `blockDim.x` a multiple of 32, so
//!   one warp is one row and `threadIdx.y` is the same for its lanes). The first apart, so
//!   that a guard `threadIdx.x < 16` is decided: all of it in the first, none in the others.
//! * `blockDim.x` a known multiple of 32: every warp of a row, `threadIdx.x = 32*w + t`
//!   with `w` a number.
//! * `blockDim.x` known and not a multiple of 32: a warp spans rows; lane `t` of the warp
//!   starting at `first_x` is thread `(first_x + t) % blockDim.x` of row
//!   `#row + (first_x + t) / blockDim.x`, `#row` the warp's first row.

use super::warp::Coordinates;
use crate::coalescing::{warp_var, WARP};
use num_integer::Integer;
use std::collections::HashMap;
use symbolic::{Expr, Var};

/// One lane: its index in the warp and the values of the thread coordinates it reads.
#[derive(Clone, Debug)]
pub struct Lane {
    pub t: u64,
    pub coords: HashMap<Var, Expr>,
}

/// The most warp starts listed for a known block width (1024 threads is 32 warps a row).
const MOST_STARTS: u64 = 64;

/// The first row of a warp that spans rows.
pub fn first_row() -> Var {
    Var::new("#row")
}

/// Every distinct warp (by where it starts along x), its lanes in order. `threads` is the
/// block's size when known: a block under 32 threads has one short warp.
pub fn warps(
    block_x: Option<u64>,
    threads: Option<u64>,
    coordinates: &Coordinates,
) -> Vec<Vec<Lane>> {
    let width = threads.map_or(WARP as u64, |t| t.clamp(1, WARP as u64));
    let lane = |t: u64, tx: Expr, ty: Option<Expr>| {
        let mut coords = HashMap::new();
        if let Some(v) = &coordinates.thread[0] {
            coords.insert(v.clone(), tx);
        }
        if let (Some(v), Some(ty)) = (&coordinates.thread[1], ty) {
            coords.insert(v.clone(), ty);
        }
        if let (None, Some(v)) = (block_x, &coordinates.block_dim_x) {
            // A whole number of warps, as the kernel assumes: `blockIdx.x*blockDim.x` then
            // starts a warp on a 128-byte boundary for 4-byte elements.
            let warps = Expr::from(super::warp::block_dim_warps())
                .checked_mul(&Expr::constant(WARP))
                .unwrap_or_default();
            coords.insert(v.clone(), warps);
        }
        Lane { t, coords }
    };
    match block_x {
        None => {
            let later = Expr::from(warp_var())
                .checked_add(&Expr::constant(1))
                .and_then(|w| w.checked_mul(&Expr::constant(WARP)))
                .unwrap_or_default();
            [Expr::constant(0), later]
                .iter()
                .map(|first| {
                    (0..width)
                        .map(|t| {
                            let tx = first
                                .checked_add(&Expr::constant(t as i64))
                                .unwrap_or_default();
                            lane(t, tx, None)
                        })
                        .collect()
                })
                .collect()
        }
        Some(x) if x % WARP as u64 == 0 => (0..(x / WARP as u64).min(MOST_STARTS))
            .map(|w| {
                (0..width)
                    .map(|t| lane(t, Expr::constant((w * WARP as u64 + t) as i64), None))
                    .collect()
            })
            .collect(),
        Some(x) => {
            let starts = x / x.gcd(&(WARP as u64));
            (0..starts.min(MOST_STARTS))
                .map(|p| {
                    let first_x = (WARP as u64 * p) % x;
                    (0..width)
                        .map(|t| {
                            let linear = first_x + t;
                            let row = Expr::from(first_row())
                                .checked_add(&Expr::constant((linear / x) as i64))
                                .unwrap_or_default();
                            lane(t, Expr::constant((linear % x) as i64), Some(row))
                        })
                        .collect()
                })
                .collect()
        }
    }
}
