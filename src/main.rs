//! The `warpwise` command line: a thin clap layer over the workspace crates.
//!
//! Exit codes: 0 when at least one input was analysed (whatever the findings), 1 when
//! nothing could be analysed or an input file is unreadable or malformed, 2 for usage
//! errors (clap's own code, and bad option values). Ended by SIGINT, SIGTERM or SIGHUP, it
//! removes its private build directories first and exits with 128 + the signal's number.

mod analyze_command;
mod cc_command;
mod check_command;
mod check_html;
mod check_sarif;
mod emit_command;
mod explain_command;
mod html_output;
mod html_page;
mod inputs;
mod instance_output;
mod instantiate_command;
mod ir_command;
mod kernel_args;
mod openmp_command;
mod output;
mod profile_command;
mod progress;
mod report_heads;
mod report_stream;
mod sarif_log;
mod sarif_output;
mod selection;
mod shell_command;
mod validate_command;

use clap::{CommandFactory, Parser, Subcommand};
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
    /// Build and run C files with instrumentation; write loop counts and dependences.
    Profile(profile_command::ProfileArgs),
    /// Compiler wrapper for builds: `CC="warpwise cc" make`.
    Cc(cc_command::CcArgs),
    /// Evaluate a kernel report with a profile: variables solved from loop counts, bytes,
    /// requests per launch and an offload estimate.
    Instantiate(instantiate_command::InstantiateArgs),
    /// Write a CUDA kernel and host function for a friendly loop (`-o DIR`).
    Emit(emit_command::EmitArgs),
    /// Run a loop's generated kernel on a snapshot of the program's inputs and compare.
    Validate(validate_command::ValidateArgs),
    /// Count requests and sectors per warp of each global access of existing CUDA kernels,
    /// and the divergence of their branches.
    Check(check_command::CheckArgs),
    /// Explain a finding code (`warpwise explain WW101`): what it means, why it matters on a
    /// GPU, what to do.
    Explain(explain_command::ExplainArgs),
    /// Print a shell completion script (`warpwise completions bash > ~/.local/share/bash-completion/completions/warpwise`).
    Completions(shell_command::CompletionsArgs),
    /// Print the manual page in roff (`warpwise man | man -l -`), or a subcommand's.
    Man(shell_command::ManArgs),
}

/// On SIGINT, SIGTERM or SIGHUP: pass the signal on to the user's program if one runs, remove
/// the private build directories (their guards do not run when a signal ends the process),
/// then exit as the signal would (128 + its number).
/// Installed by the first private directory's creation (`frontend::files`), so runs that
/// make none keep the default handling and start no thread.
fn remove_build_dirs_on_termination() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // The user's program (`profile`, `validate`) ends with us, its profile
                // written, rather than running on unwatched.
                frontend::files::forward_signal_to_children(
                    signal,
                    std::time::Duration::from_secs(5),
                );
                frontend::files::remove_private_tempdirs();
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}

fn main() -> ExitCode {
    // The wrapper takes the compiler's arguments verbatim, `-v` and `--version` included.
    let argv: Vec<String> = std::env::args().collect();
    frontend::files::install_cleanup_on_signal_before_first_tempdir(
        remove_build_dirs_on_termination,
    );
    let code = if argv.get(1).map(String::as_str) == Some("cc") {
        cc_command::run_command(&argv[2..])
    } else {
        run(Cli::parse())
    };
    // What a guard does not remove (the replacement headers' private directory where the
    // per-user cache was refused) goes now, not one directory per run left behind.
    frontend::files::remove_private_tempdirs();
    code
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Analyze(args) => analyze_command::run(&args),
        Command::Ir(args) => ir_command::run(&args),
        Command::Profile(args) => profile_command::run_command(&args),
        Command::Cc(args) => cc_command::run_command(&args.args),
        Command::Instantiate(args) => instantiate_command::run(&args),
        Command::Emit(args) => emit_command::run(&args),
        Command::Validate(args) => validate_command::run(&args),
        Command::Check(args) => check_command::run(&args),
        Command::Explain(args) => explain_command::run(&args),
        Command::Completions(args) => shell_command::completions(&args, Cli::command()),
        Command::Man(args) => shell_command::man(&args, Cli::command()),
    }
}
