//! The options `emit` and `validate` share: which loop, how to map it, and what to
//! generate. Apart from both commands because `openmp_command`, which each calls for
//! `--target openmp`, reads them too.

use clap::Args;
use cuda::plan::DebugOptions;
use cuda::EmitOptions;
use std::path::PathBuf;

/// Options shared by `emit` and `validate`: which loop and how to map it.
#[derive(Args, Debug, Clone)]
pub struct KernelArgs {
    /// The loop: `FILE:LINE` or `FILE:LINE:COL` (`#K` after it for the K-th loop of one
    /// macro expansion; CUDA: exactly one; OpenMP: any number, none for every outermost
    /// friendly loop).
    #[arg(long = "loop", value_name = "FILE:LINE[:COL]")]
    pub loop_ids: Vec<String>,
    /// Loops to grid axes, `x=j,y=i` (default: the report's recommended mapping).
    #[arg(long, value_name = "x=VAR[,y=VAR]")]
    pub mapping: Option<String>,
    /// Threads per block, `XxY` (a 1D mapping launches X*Y threads along x).
    #[arg(long, value_name = "XxY", default_value = "32x8")]
    pub block: String,
    /// Stage the report's shared-memory areas (`__shared__`, cooperative loads, barrier).
    #[arg(long)]
    pub shared: bool,
    /// A profile from `warpwise profile`: settles `needs-profile` loops as `analyze --profile`.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Test only: emit the loop whatever its verdict.
    #[arg(long, hide = true)]
    pub debug_force: bool,
    /// Test only: copy one element less of this array's section.
    #[arg(long, hide = true, value_name = "ARRAY")]
    pub debug_shrink: Vec<String>,
    /// Test only (`--target openmp`): leave this array out of the map clauses (an array of
    /// rows: do not copy its written rows back).
    #[arg(long, hide = true, value_name = "ARRAY")]
    pub debug_drop: Vec<String>,
    /// Test only: swap the x and y trip counts of a 2D mapping.
    #[arg(long, hide = true)]
    pub debug_swap_bounds: bool,
}

impl KernelArgs {
    /// The one loop a CUDA kernel is made for.
    pub fn one_loop(&self) -> Result<&str, String> {
        match self.loop_ids.as_slice() {
            [one] => Ok(one),
            [] => Err("`--loop FILE:LINE[:COL]` is required for `--target cuda`".into()),
            many => Err(format!(
                "`--target cuda` makes one kernel; {} loops were given",
                many.len()
            )),
        }
    }

    pub fn options(&self) -> Result<EmitOptions, String> {
        let (x, y) = advisor::mapping::parse_block(&self.block)
            .filter(|&(x, y)| x >= 1 && y >= 1 && x * y <= 1024)
            .ok_or_else(|| {
                format!(
                    "`--block {}`: expected XxY with at most 1024 threads, e.g. 32x8",
                    self.block
                )
            })?;
        Ok(EmitOptions {
            mapping: self.mapping.clone(),
            block: (x as u32, y as u32),
            shared: self.shared,
            debug: DebugOptions {
                force: self.debug_force,
                shrink: self.debug_shrink.clone(),
                swap_bounds: self.debug_swap_bounds,
            },
        })
    }

    pub fn read_profile(&self) -> Result<Option<profile::Profile>, String> {
        match &self.profile {
            Some(p) => profile::read_profile(p)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// A CUDA kernel, its launch and the host code for one loop.
    Cuda,
    /// `#pragma omp target teams distribute parallel for` with `map` clauses on friendly
    /// loops, in a copy of each file (`DIR/NAME.c`) and a patch (`DIR/NAME.c.patch`).
    Openmp,
}
