//! The `warpwise` command line: a thin clap layer over the workspace crates.
fn main() {}
