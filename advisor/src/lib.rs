//! The advisor (thesis §4-§5): GPU-friendliness, kernel parameters, coalescing, shared memory, reports.

// The API: what the binary, `cuda`, `instantiate`, `profile` and the fuzz targets use.
pub mod analyze;
pub mod budget;
pub mod calls;
pub mod check;
pub mod gpus;
pub mod legend;
pub mod mapping;
pub mod model;
pub mod parallel;
pub mod program;
pub mod quantity;
pub mod recipe;
pub mod rules;
pub mod summaries;
pub mod value_name;
pub mod verify;

// Components the soundness tests (tests/it: witnesses, coalescing, subscripts) drive
// directly against concrete executions, and the assumptions their results carry; not part
// of the API.
#[doc(hidden)]
pub mod access;
#[doc(hidden)]
pub mod assumption;
#[doc(hidden)]
pub mod coalescing;
#[doc(hidden)]
pub mod divergence;
#[doc(hidden)]
pub mod rebase;
#[doc(hidden)]
pub mod space;
#[doc(hidden)]
pub mod subscripts;
#[doc(hidden)]
pub mod witness;

// Internal.
mod aliasing;
mod banks;
mod body_names;
mod callsites;
mod code;
mod coefficient;
mod copies;
mod dependence;
mod error_paths;
mod escape;
mod findings;
mod fresh;
mod globals;
mod indirect;
mod liveness;
mod lookups;
mod merged;
mod mustwrite;
mod noreturn;
mod overlap;
mod performance;
mod present;
mod privatize;
mod program_facts;
mod prose_names;
mod reductions;
mod sealed;
mod shared_memory;
mod stale;
mod unswitch;
mod whole;

#[cfg(test)]
mod test_unit;
