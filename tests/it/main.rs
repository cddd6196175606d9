//! The `warpwise` command line end to end:
//! a module per feature. One test binary per crate: each binary links the whole analysis
//! and instantiates its generic code, so a binary per file multiplies the build's time.

mod budget_cli;
mod check_dynamic;
mod check_emitted;
mod check_html;
mod check_kernels;
mod check_names;
mod check_periodic;
mod check_sarif;
mod cli;
mod common;
mod cuda_gpu;
mod cuda_nvrtc;
mod cuda_validate;
mod docs_options;
mod evaluation_page;
mod explain_cli;
mod html_report;
mod instantiate_cli;
mod legend_names;
mod openmp_port;
mod profile_cli;
mod progress_cli;
mod recipe_bounds;
mod safety_cli;
mod samples_run;
mod sarif_cli;
mod schemas;
mod shell_cli;
mod tutorial;
