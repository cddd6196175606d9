//! Why a summary's effects are not all known: its first reasons in sorted order and how
//! many there are. A function high in a call tree gathers every reason below it, each
//! prefixed with the call it comes through (sqlite3's `sqlite3VdbeExec` had 42,007, 18 MB,
//! and a report listed them all for each call of it in a loop); keeping the first few and a
//! count bounds a summary by [`KEPT`] whatever the call tree.

use std::collections::{BTreeMap, BTreeSet};

/// Reasons a report lists per callee (a finding lists three).
pub const SHOWN: usize = 8;

/// Reasons kept, in sorted order: one more than are shown, so that a list is cut only where
/// that leaves two or more unlisted.
pub const KEPT: usize = SHOWN + 1;

/// The reasons of one summary, or of one instance of it at a call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unknowns {
    /// The first [`KEPT`] reasons, sorted, without repeats.
    first: Vec<String>,
    /// How many distinct reasons there are.
    total: usize,
}

impl Unknowns {
    /// The single reason `reason`.
    pub fn one(reason: String) -> Unknowns {
        let mut gathered = Gathered::default();
        gathered.push(reason);
        gathered.finish()
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many reasons there are, listed or not.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The first reasons in sorted order (all of them when there are at most [`KEPT`]).
    pub fn first(&self) -> &[String] {
        &self.first
    }

    /// The reasons a report lists, and how many it does not: all of them, or the first
    /// [`SHOWN`] and the rest counted.
    pub fn listed(&self) -> (&[String], usize) {
        if self.total <= self.first.len() {
            (&self.first, 0)
        } else {
            let shown = &self.first[..self.first.len().min(SHOWN)];
            (shown, self.total - shown.len())
        }
    }

    /// The reasons as a caller of `callee` gives them: "calls `f`, which is recursive". The
    /// prefix keeps their order and tells them from the caller's own.
    pub fn through(&self, callee: &str) -> Unknowns {
        Unknowns {
            first: self
                .first
                .iter()
                .map(|u| format!("{}{u}", prefix(callee)))
                .collect(),
            total: self.total,
        }
    }
}

/// What [`Unknowns::through`] puts before a callee's reasons.
fn prefix(callee: &str) -> String {
    format!("calls `{callee}`, which ")
}

/// A function's reasons as its summary is built: its own, and those of each callee it calls
/// (once per callee: every call of one callee gives the same reasons).
#[derive(Debug, Default)]
pub struct Gathered {
    own: BTreeSet<String>,
    via: BTreeMap<String, Unknowns>,
}

impl Gathered {
    /// One of the function's own reasons, in source names (`p`, not the analyses' `p#2`):
    /// a caller reads them as the callee's, and two that read the same are one (a report
    /// shows a callee's effects so). Own reasons never read as a callee's (none starts
    /// "calls `name`, which "), so the two kinds never count one reason twice.
    pub fn push(&mut self, reason: String) {
        debug_assert!(
            !(reason.starts_with("calls `") && reason.contains("`, which ")),
            "an own reason reads as a callee's: {reason}"
        );
        self.own.insert(crate::present::without_numbers(&reason));
    }

    /// The reasons of a call of `callee` (an instance's, already [`Unknowns::through`]).
    pub fn through(&mut self, callee: &str, reasons: Unknowns) {
        if !reasons.is_empty() {
            self.via.entry(callee.to_string()).or_insert(reasons);
        }
    }

    /// The reasons: the first [`KEPT`] of all of them are among the own ones and each
    /// callee's first [`KEPT`], and the callees' reasons differ by their prefix, so the
    /// count adds up.
    pub fn finish(self) -> Unknowns {
        let total = self.own.len() + self.via.values().map(|u| u.total).sum::<usize>();
        let mut first: Vec<String> = self.own.into_iter().take(KEPT).collect();
        for u in self.via.into_values() {
            first.extend(u.first);
        }
        first.sort();
        first.dedup();
        first.truncate(KEPT);
        Unknowns { first, total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons the old way: every one, sorted, without repeats.
    fn all(own: &[String], via: &[(&str, Vec<String>)]) -> Vec<String> {
        let mut out: Vec<String> = own.to_vec();
        for (callee, reasons) in via {
            out.extend(reasons.iter().map(|r| format!("{}{r}", prefix(callee))));
        }
        out.sort();
        out.dedup();
        out
    }

    fn unknowns(reasons: &[String]) -> Unknowns {
        let mut g = Gathered::default();
        for r in reasons {
            g.push(r.clone());
        }
        g.finish()
    }

    fn check(own: &[String], via: &[(&str, Vec<String>)]) {
        let mut g = Gathered::default();
        for r in own {
            g.push(r.clone());
        }
        for (callee, reasons) in via {
            g.through(callee, unknowns(reasons).through(callee));
        }
        let expected = all(own, via);
        let got = g.finish();
        assert_eq!(got.total(), expected.len());
        assert_eq!(got.first(), &expected[..expected.len().min(KEPT)]);
    }

    fn reasons(stem: &str, n: usize) -> Vec<String> {
        (0..n).map(|k| format!("{stem} {k:02}")).collect()
    }

    #[test]
    fn own_reasons_read_in_source_names() {
        let u = unknowns(&[
            "writes through `p#2`, a pointer".to_string(),
            "writes through `p#4`, a pointer".to_string(),
        ]);
        assert_eq!(u.total(), 1);
        assert_eq!(u.first(), ["writes through `p`, a pointer".to_string()]);
    }

    #[test]
    fn the_first_reasons_and_the_count_are_those_of_the_whole_list() {
        check(&[], &[]);
        check(&reasons("writes through `p`", 3), &[]);
        check(&reasons("writes through `p`", 20), &[]);
        check(
            &reasons("writes memory at", 2),
            &[("f", reasons("is recursive", 12)), ("a", reasons("x", 5))],
        );
        // The same callee twice gives its reasons once.
        check(
            &[],
            &[
                ("g", reasons("y", 9)),
                ("g", reasons("y", 9)),
                ("b", reasons("y", 1)),
            ],
        );
    }

    #[test]
    fn through_a_callee_the_reasons_keep_their_count() {
        let u = unknowns(&reasons("r", 30));
        let t = u.through("h");
        assert_eq!(t.total(), 30);
        assert_eq!(t.first().len(), KEPT);
        assert_eq!(t.first()[0], "calls `h`, which r 00");
        assert_eq!(t.listed().0.len(), SHOWN);
        assert_eq!(t.listed().1, 30 - SHOWN);
        // One more than shown is listed, not cut to "1 more".
        let nine = unknowns(&reasons("r", KEPT));
        assert_eq!(nine.listed(), (nine.first(), 0));
        assert_eq!(nine.first().len(), KEPT);
        assert!(Unknowns::default().is_empty());
        assert_eq!(Unknowns::one("x".into()).first(), ["x".to_string()]);
    }
}
