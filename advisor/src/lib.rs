//! The advisor (thesis §4-§5): GPU-friendliness, kernel parameters, coalescing, shared memory, reports.
