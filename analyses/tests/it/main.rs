//! The dataflow analyses' tests:
//! a module per feature. One test binary per crate: each binary links the whole analysis
//! and instantiates its generic code, so a binary per file multiplies the build's time.

mod capture;
mod invariant;
mod range;
mod reconstruct;
mod sign;
