//! The advisor (thesis §4-§5): GPU-friendliness, kernel parameters, coalescing, shared memory, reports.

pub mod access;
pub mod aliasing;
pub mod analyze;
pub mod banks;
pub mod budget;
pub mod calls;
pub mod callsites;
pub mod coalescing;
pub mod codes;
pub mod dependence;
pub mod divergence;
pub mod escape;
pub mod globals;
pub mod gpus;
pub mod mapping;
pub mod model;
pub mod mustwrite;
pub mod overlap;
pub mod privatize;
pub mod program;
pub mod recipe;
pub mod reductions;
pub mod shared_memory;
pub mod space;
pub mod summaries;
pub mod witness;
