//! `warpwise explain CODE`: what a finding code means, why it matters for a GPU port and
//! how to deal with it, from the code table every report uses.

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A finding code (`WW101`), as reports, recipes and SARIF print it.
    pub code: String,
}

pub fn run(args: &ExplainArgs) -> ExitCode {
    let Some(code) = advisor::codes::find(&args.code) else {
        let known: Vec<&str> = advisor::codes::ALL
            .iter()
            .map(|c| c.code)
            .chain([advisor::codes::FRIENDLY.code])
            .collect();
        eprintln!(
            "error: `{}` is not a warpwise code (known: {})",
            args.code,
            known.join(", ")
        );
        return ExitCode::from(2);
    };
    println!("{}: {}\n", code.code, code.name);
    println!("What: {}.\n", sentence(code.explanation));
    println!("Why it matters on a GPU: {}.\n", sentence(code.gpu));
    println!("What to do: {}.", sentence(code.fix));
    ExitCode::SUCCESS
}

/// The text with its first letter capitalized and no final period (one is added).
fn sentence(text: &str) -> String {
    let text = text.trim_end_matches('.');
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}
