//! Shared-memory bank conflicts (thesis §5.1 "possible extensions"; Ulvinge §2.1.6): shared
//! memory has 32 banks of 4-byte words, word `w` in bank `w mod 32`. A warp's access is
//! served in as many passes as the most distinct words any one bank must deliver; threads
//! reading the same word share it (broadcast).

use std::collections::{BTreeMap, BTreeSet};

pub const BANKS: i64 = 32;
pub const WORD: i64 = 4;

/// The conflict degree (1 = conflict-free) of a warp reading `elem` bytes at each address:
/// the passes needed divided by the fewest possible for that many distinct words (a warp
/// of doubles needs two passes however it is laid out).
pub fn degree(addresses: &[i64], elem: u64) -> usize {
    let mut words: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
    for &a in addresses {
        let first = a.div_euclid(WORD);
        let last = (a + elem.max(1) as i64 - 1).div_euclid(WORD);
        for w in first..=last {
            words.entry(w.rem_euclid(BANKS)).or_default().insert(w);
        }
    }
    let passes = words.values().map(BTreeSet::len).max().unwrap_or(1);
    let distinct: usize = words.values().map(BTreeSet::len).sum();
    let fewest = distinct.div_ceil(BANKS as usize).max(1);
    passes.div_ceil(fewest)
}

/// The degree of a warp whose thread `t` reads at `stride*t` bytes.
pub fn strided_degree(stride: i64, elem: u64) -> usize {
    let addresses: Vec<i64> = (0..32).map(|t| stride * t).collect();
    degree(&addresses, elem)
}

/// For a column access (threads `pitch` bytes apart), the smallest padding in bytes (a
/// multiple of the element size, at most 32 words) that makes it conflict-free.
pub fn padding_for(pitch: i64, elem: u64) -> Option<i64> {
    let step = (elem.max(1) as i64).max(WORD);
    (1..=32)
        .map(|k| k * step)
        .find(|pad| strided_degree(pitch + pad, elem) == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_patterns() {
        // Consecutive floats: one word per bank.
        assert_eq!(strided_degree(4, 4), 1);
        // Same address: broadcast.
        assert_eq!(strided_degree(0, 4), 1);
        // Stride of 2 words: 2-way.
        assert_eq!(strided_degree(8, 4), 2);
        // A column of a 32x32 float tile: 32-way, padded by one float it is conflict-free.
        assert_eq!(strided_degree(128, 4), 32);
        assert_eq!(padding_for(128, 4), Some(4));
        // Doubles: two passes are unavoidable, so consecutive doubles are conflict-free;
        // a column of doubles 256 bytes apart is 16-way.
        assert_eq!(strided_degree(8, 8), 1);
        assert_eq!(strided_degree(256, 8), 16);
        // RGB bytes, 3 apart: 24 words, no bank serves two.
        assert_eq!(strided_degree(3, 1), 1);
    }
}
