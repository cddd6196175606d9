//! C99 frontend: preprocessing, lang-c parsing, lowering to an SSA control/data-flow graph, loops.

pub mod access_sites;
pub mod bench_input;
pub mod compile_args;
mod ctokens;
mod cuda_reference;
pub mod cuda_source;
mod cuda_template;
mod deep_stack;
pub mod diagnostic;
pub mod files;
pub mod flag_policy;
mod gnu_compat;
mod implicit_int;
pub mod interp;
pub mod ir;
pub mod launch_syntax;
pub mod listing;
pub mod loop_ref;
pub mod loops;
pub mod lower;
pub mod parse;
pub mod preprocess;
mod prune;
pub mod source_map;
pub mod tables;
pub mod types;
pub mod unit;
