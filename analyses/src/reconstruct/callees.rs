//! Callees' return expressions, reconstructed once per program and configuration and
//! shared by every caller's reconstruction: a helper called from a thousand functions was
//! reconstructed a thousand times.
//!
//! A callee's reconstruction depends on the program, the configuration, its depth (the
//! inlining stops at [`super::ReconstructConfig::max_call_depth`]) and the inlining stack
//! (a function already on it is not inlined again), but on the stack only through the
//! names whose membership the reconstruction, or one nested in it, tested. Each entry keeps
//! those names and which of them were on the stack, so another caller whose stack agrees on
//! them gets the very result its own reconstruction would make.

use super::CalleeReturns;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// Callee reconstructions of one program under one configuration (see the module doc).
/// Shared between threads; an entry is never changed once made.
#[derive(Debug, Default)]
pub struct CalleeMemo {
    entries: Mutex<HashMap<String, Vec<Entry>>>,
}

/// What a callee's reconstruction made, and the stack membership tests it depends on.
#[derive(Debug, Clone)]
pub(super) struct Made {
    /// `None` when the callee's returns cannot be used.
    pub returns: Option<Arc<CalleeReturns>>,
    /// Names tested against the stack the callee was reconstructed under.
    pub tested: BTreeSet<String>,
}

#[derive(Debug)]
struct Entry {
    depth: u32,
    /// The names of `made.tested` that were on the stack.
    on_stack: BTreeSet<String>,
    made: Made,
}

impl CalleeMemo {
    pub fn new() -> Self {
        Self::default()
    }

    /// The reconstruction of `name` at `depth` under `stack`, when one whose tests agree
    /// with `stack` was made.
    pub(super) fn get(&self, name: &str, depth: u32, stack: &[String]) -> Option<Made> {
        let entries = lock(&self.entries);
        entries.get(name)?.iter().find_map(|e| {
            (e.depth == depth && agrees(&e.made.tested, &e.on_stack, stack)).then(|| e.made.clone())
        })
    }

    /// Records what the reconstruction of `name` at `depth` under `stack` made.
    pub(super) fn insert(&self, name: &str, depth: u32, stack: &[String], made: Made) {
        let on_stack: BTreeSet<String> = made
            .tested
            .iter()
            .filter(|t| stack.contains(t))
            .cloned()
            .collect();
        let mut entries = lock(&self.entries);
        let list = entries.entry(name.to_string()).or_default();
        // Another thread may have made the same one meanwhile: equal, keep one.
        if !list
            .iter()
            .any(|e| e.depth == depth && e.made.tested == made.tested && e.on_stack == on_stack)
        {
            list.push(Entry {
                depth,
                on_stack,
                made,
            });
        }
    }
}

/// Whether `stack` holds exactly the names `on_stack` of `tested`.
fn agrees(tested: &BTreeSet<String>, on_stack: &BTreeSet<String>, stack: &[String]) -> bool {
    tested
        .iter()
        .all(|t| stack.contains(t) == on_stack.contains(t))
}

/// The map behind `m`, whether or not a thread panicked while holding it (it only ever
/// gains complete entries).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(tested: &[&str]) -> Made {
        Made {
            returns: None,
            tested: tested.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn stack(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_entry_serves_stacks_that_agree_on_its_tested_names() {
        let memo = CalleeMemo::new();
        memo.insert("g", 1, &stack(&["f"]), made(&["h"]));
        // `h` was not on the stack: any stack without it agrees, whatever else it holds.
        assert!(memo.get("g", 1, &stack(&["k"])).is_some());
        assert!(memo.get("g", 1, &stack(&["f"])).is_some());
        assert!(memo.get("g", 1, &stack(&["h"])).is_none());
        // Another depth is another reconstruction.
        assert!(memo.get("g", 2, &stack(&["f"])).is_none());
        assert!(memo.get("other", 1, &stack(&["f"])).is_none());
    }

    #[test]
    fn a_name_on_the_stack_must_be_on_the_asking_stack_too() {
        let memo = CalleeMemo::new();
        memo.insert("g", 2, &stack(&["f", "h"]), made(&["h", "x"]));
        assert!(memo.get("g", 2, &stack(&["h", "y"])).is_some());
        assert!(memo.get("g", 2, &stack(&["f", "y"])).is_none());
        assert!(memo.get("g", 2, &stack(&["h", "x"])).is_none());
        // The same entry twice is kept once; a different one beside it.
        memo.insert("g", 2, &stack(&["h", "z"]), made(&["h", "x"]));
        memo.insert("g", 2, &stack(&["f"]), made(&["h", "x"]));
        assert_eq!(lock(&memo.entries)["g"].len(), 2);
        assert!(memo.get("g", 2, &stack(&["f", "y"])).is_some());
    }
}
