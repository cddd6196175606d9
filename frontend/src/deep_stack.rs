//! Threads with a large stack for the passes that recurse along the syntax tree: lang-c's
//! parser, the lowering and the tree's drop. A file's passes share one such thread
//! ([`run`] runs a pass in place when the thread it is on is deep enough) instead of each
//! starting its own: a thread's start, its fresh stack pages and, for the first one that
//! allocates, a fresh malloc arena are a measurable part of analysing a small file.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// (an address near the base of this thread's stack, the bytes usable below it), on a
    /// thread [`run`] started.
    static DEEP: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// What [`run`] leaves unused of the stack it asks for: the frames above the closure
/// (thread start, the marker's own) and rounding.
const SLACK: usize = 1 << 20;

/// An address in the current frame.
pub(crate) fn address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// The bytes of stack left below the caller on a thread [`run`] started; `None` on any
/// other thread.
pub(crate) fn remaining() -> Option<usize> {
    DEEP.with(Cell::get)
        .map(|(base, usable)| usable.saturating_sub(base.saturating_sub(address())))
}

/// Runs `f` with at least `size` bytes of stack: in place when this thread is one `run`
/// started and has that much left, else on a new thread named `name`. A panic in `f` is
/// caught either way. `None` when no thread could be started (`f` has not run).
pub(crate) fn run<R: Send>(
    name: &str,
    size: usize,
    f: impl FnOnce() -> R + Send,
) -> Option<std::thread::Result<R>> {
    if remaining().is_some_and(|left| left >= size) {
        return Some(catch_unwind(AssertUnwindSafe(f)));
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(name.into())
            .stack_size(size + SLACK)
            .spawn_scoped(scope, move || {
                DEEP.with(|deep| deep.set(Some((address(), size))));
                f()
            })
            .ok()
            .map(|handle| handle.join())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_runs_in_place_on_a_thread_deep_enough_else_on_its_own() {
        assert_eq!(remaining(), None);
        let outer = std::thread::current().id();
        let (first, inner_same, inner_other) = run("outer", 64 << 20, || {
            let here = std::thread::current().id();
            let same = run("inner", 32 << 20, || std::thread::current().id());
            let other = run("inner", 128 << 20, || std::thread::current().id());
            (here, same, other)
        })
        .unwrap()
        .unwrap();
        assert_ne!(first, outer);
        assert_eq!(inner_same.unwrap().unwrap(), first);
        assert_ne!(inner_other.unwrap().unwrap(), first);
        let caught = run("panics", 1 << 20, || panic!("caught"));
        assert!(caught.unwrap().is_err());
    }
}
