//! The frontend's tests: preprocessing, lowering, IR snapshots, robustness:
//! a module per feature. One test binary per crate: each binary links the whole analysis
//! and instantiates its generic code, so a binary per file multiplies the build's time.

mod cuda_frontend;
mod declarations;
mod inlining;
mod intrinsics_headers;
mod ir_snapshots;
mod layout;
mod lowering;
mod old_style;
mod preprocess;
mod robustness;
