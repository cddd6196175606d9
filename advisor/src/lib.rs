//! The advisor (thesis §4-§5): GPU-friendliness, kernel parameters, coalescing, shared memory, reports.

pub mod access;
pub mod aliasing;
pub mod analyze;
pub mod calls;
pub mod codes;
pub mod dependence;
pub mod model;
pub mod recipe;
pub mod space;
