//! `warpwise completions SHELL` and `warpwise man [SUBCOMMAND]`: shell completions and roff
//! manual pages generated from the clap definition itself, so they list exactly the options
//! the binary parses.

use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write the page of this subcommand (`warpwise-analyze(1)`) instead of the main one.
    pub subcommand: Option<String>,
}

/// Writes the completion script for `args.shell` to standard output.
pub fn completions(args: &CompletionsArgs, mut cli: clap::Command) -> ExitCode {
    let name = cli.get_name().to_string();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cli, name, &mut out);
    flushed(out.flush())
}

/// Writes the roff page of the tool or of one subcommand to standard output.
pub fn man(args: &ManArgs, mut cli: clap::Command) -> ExitCode {
    // Built as `--help` would be, so that subcommands carry their arguments; their pages
    // are named `warpwise-analyze`, as git's and cargo's are.
    cli.build();
    let page = match &args.subcommand {
        None => clap_mangen::Man::new(cli),
        Some(name) => match cli.find_subcommand(name) {
            Some(sub) => {
                let title = format!("{}-{}", cli.get_name(), sub.get_name());
                clap_mangen::Man::new(sub.clone()).title(title)
            }
            None => {
                let known: Vec<&str> = cli.get_subcommands().map(|s| s.get_name()).collect();
                eprintln!(
                    "warpwise: no subcommand `{name}` (one of: {})",
                    known.join(", ")
                );
                return ExitCode::from(2);
            }
        },
    };
    let mut bytes = Vec::new();
    if let Err(e) = page.render(&mut bytes) {
        eprintln!("warpwise: cannot render the manual page: {e}");
        return ExitCode::from(1);
    }
    let mut out = std::io::stdout().lock();
    flushed(out.write_all(&bytes).and_then(|()| out.flush()))
}

/// A closed pipe (`warpwise man | head`) is not an error worth a message.
fn flushed(result: std::io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("warpwise: cannot write: {e}");
            ExitCode::from(1)
        }
    }
}
