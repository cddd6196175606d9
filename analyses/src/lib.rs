//! Static analyses on the CDFG (thesis §8): dataflow framework, sign, loop-invariant, reconstruction, range.
