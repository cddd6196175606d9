//! The GPU layer: CUDA C++ to PTX with NVRTC, and PTX kernels run on a GPU, through cudarc.
//!
//! Nothing here needs CUDA at build time: cudarc is built with `dynamic-loading`, so
//! `libnvrtc` and `libcuda` are opened when first used. Without them (or without a GPU)
//! every function returns an error that says what is missing; none panics. See
//! `docs/gpu-backend.md` for how the libraries are found and what is timed.
//!
//! - [`nvrtc`]: [`nvrtc::compile_to_ptx`]. NVRTC ships no C or C++ standard library
//!   headers (`<stdio.h>`, `<math.h>`, `<stdint.h>` do not exist for it): generated kernels
//!   use the built-in device math (`sqrtf`, `expf`, ...) and spell out fixed-width types.
//!   Kernels should be `extern "C"` so their PTX entry has the plain name.
//! - [`device`]: [`device::probe`] and [`device::run_kernel`].
//! - [`ptx`]: kernel signatures read from PTX, which the launch checks its arguments against.
//! - `sys` (private): the only unsafe code in the workspace.
//! - [`error`]: why something failed ([`GpuError`], [`LoadError`], [`PtxError`]).

pub mod device;
pub mod error;
pub mod nvrtc;
pub mod ptx;
mod sys;

pub use error::{GpuError, LoadError, Panicked, PtxError};

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The message of a caught panic.
fn panic_text(payload: &Box<dyn Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic without a message".to_string()
    }
}

/// Runs `f`, turning a panic inside cudarc into an error. cudarc's loader panics for a
/// missing symbol and a few of its safe wrappers `unwrap` library results; the checks in
/// `sys` rule out the common causes first, this is the backstop. (It cannot help in a
/// `panic = "abort"` build, which warpwise does not use.)
fn no_panic<T, E: From<Panicked>>(
    what: &'static str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(Panicked {
            what,
            message: panic_text(&payload),
        }
        .into())
    })
}
