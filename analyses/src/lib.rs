//! Static analyses on the CDFG (thesis §8): dataflow framework, sign, loop-invariant, reconstruction, range.

pub mod annotate;
pub mod capture;
pub mod framework;
pub mod invariant;
pub mod library;
mod pvec;
pub mod range;
pub mod reconstruct;
mod regions;
pub mod sign;
pub mod symbols;
