//! Instantiation (thesis §6): profiling, equations from loop counts, evaluation, CUDA generation, validation.

pub mod cuda;
pub mod gpu;
pub mod instance;
pub mod openmp;
pub mod profile;
pub mod validate;
pub mod yaml_guard;
