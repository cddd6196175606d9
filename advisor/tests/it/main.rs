//! The advisor's tests against concrete executions, snapshots and reports:
//! a module per feature. One test binary per crate: each binary links the whole analysis
//! and instantiates its generic code, so a binary per file multiplies the build's time.

mod allocated_per_iteration;
mod bounds;
mod call_reductions;
mod coalescing;
mod common;
mod copied_pointers;
mod counters;
mod declared_extents;
mod early_exits;
mod error_paths;
mod face_loops;
mod frozen_elements;
mod gathers;
mod global_scratch;
mod intrinsics;
mod invariant_bounds;
mod linearized;
mod memory;
mod minmax_bounds;
mod mutated_inputs;
mod new_memory;
mod old_style;
mod overlap;
mod parameter_types;
mod pinned_symbols;
mod presentation;
mod private_calls;
mod recipe_names;
mod reductions;
mod restrict_locals;
mod run_orders;
mod samples;
mod selector_halves;
mod snapshots;
mod soundness;
mod stale_names;
mod subscripts;
mod summaries;
mod switch_loops;
mod tiled_bounds;
mod triangular;
mod unswitched_scalars;
mod whole_objects;
mod witnesses;
