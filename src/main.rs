//! The `warpwise` command line: a thin clap layer over the workspace crates.
//!
//! Exit codes: 0 when at least one input was analysed (whatever the findings), 1 when
//! nothing could be analysed, 2 for usage errors (clap's own code).

mod analyze_command;
mod inputs;
mod ir_command;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "warpwise",
    version,
    about = "Tells C programmers which loops can run on a GPU and how to port them"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Find GPU-friendly loops; write porting recipes (text) or kernel reports (YAML/JSON).
    Analyze(analyze_command::AnalyzeArgs),
    /// Print the SSA control/data-flow graph with the loop forest and induction variables.
    Ir(ir_command::IrArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => analyze_command::run(&args),
        Command::Ir(args) => ir_command::run(&args),
    }
}
