//! The symbolic engine's tests: properties, rewrites, the thesis' examples:
//! a module per feature. One test binary per crate: each binary links the whole analysis
//! and instantiates its generic code, so a binary per file multiplies the build's time.

mod floors;
mod parse_names;
mod props;
mod rewrite;
mod thesis;
