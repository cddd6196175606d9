//! `warpwise explain CODE`: what a finding code means, why it matters for a GPU port, how
//! to deal with it and a loop that shows it, from the rule registry every report uses.

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A finding code (`WW101`), as reports, recipes and SARIF print it.
    pub code: String,
}

pub fn run(args: &ExplainArgs) -> ExitCode {
    let Some(code) = advisor::rules::find(&args.code) else {
        let known: Vec<&str> = advisor::rules::every().map(|c| c.code.as_str()).collect();
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
    println!("What to do: {}.\n", sentence(code.fix));
    let example = &code.example;
    if example.subject == advisor::rules::Subject::Kernel {
        let marked = if example.source.contains("/* BRANCH */") {
            "the branch marked /* BRANCH */"
        } else {
            "the access marked /* ACCESS */"
        };
        println!("Example (`warpwise check` gives {marked} {}):\n", code.code);
        print!("{}", example.source);
        return ExitCode::SUCCESS;
    }
    let how = if code.code == advisor::rules::ww130_observed_dependence::RULE.code {
        "`warpwise profile` then `warpwise analyze --profile`"
    } else {
        "`warpwise analyze`"
    };
    println!(
        "Example ({how} reports the loop marked /* LOOP */ as {}):\n",
        example.verdict.as_str()
    );
    print!("{}", example.source);
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
