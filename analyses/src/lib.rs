//! Static analyses on the CDFG (thesis §8): dataflow framework, sign, loop-invariant, reconstruction, range.

pub mod framework;
pub mod range;
pub mod reconstruct;
pub mod symbols;
