//! Instantiation (thesis §6): profiling, equations from loop counts, evaluation, CUDA generation, validation.

pub mod gpu;
pub mod instance;
pub mod profile;
