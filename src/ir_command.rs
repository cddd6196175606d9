//! `warpwise ir`: print the CDFG of each function with loops and induction variables.

use crate::inputs::{collect, CFlags};
use analyses::annotate::{annotate_function, Annotation};
use clap::{Args, ValueEnum};
use frontend::listing::{print_dot, print_function_annotated};
use frontend::loops::analyze_loops;
use frontend::unit::load_unit;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct IrArgs {
    /// C files or directories to read.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    /// Print only this function.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    #[arg(long, value_enum, default_value_t = IrFormat::Text)]
    pub format: IrFormat,
    /// Append analysis facts to each instruction (text format; repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub annotate: Vec<AnnotateKind>,
}

/// Facts `--annotate` can print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnnotateKind {
    /// Sign set of each value where it is defined.
    Signs,
    /// `inv`/`var` for each loop containing the instruction.
    Invariants,
    /// Reconstructed symbolic expressions.
    Exprs,
    /// Symbolic ranges, e.g. `[0, n - 1]`.
    Ranges,
}

impl From<AnnotateKind> for Annotation {
    fn from(k: AnnotateKind) -> Annotation {
        match k {
            AnnotateKind::Signs => Annotation::Signs,
            AnnotateKind::Invariants => Annotation::Invariants,
            AnnotateKind::Exprs => Annotation::Exprs,
            AnnotateKind::Ranges => Annotation::Ranges,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IrFormat {
    Text,
    Dot,
}

pub fn run(args: &IrArgs) -> ExitCode {
    let (inputs, problems) = collect(&args.paths, &args.cflags);
    for p in &problems {
        eprint!("{}", p.render(false));
    }
    if inputs.is_empty() {
        eprintln!("error: nothing to analyse");
        return ExitCode::from(1);
    }
    let mut analysed = 0usize;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for input in &inputs {
        eprintln!("warpwise: reading {}", input.file.display());
        let unit = match load_unit(input) {
            Ok(unit) => unit,
            Err(d) => {
                eprint!("{}", d.render(false));
                continue;
            }
        };
        for d in unit.diagnostics() {
            eprint!("{}", d.render(false));
        }
        let locate = |span| unit.resolve(span).map(|r| r.to_string());
        let program = &unit.lowered.program;
        for func in &program.functions {
            if args.function.as_deref().is_some_and(|f| f != func.name) {
                continue;
            }
            analysed += 1;
            let forest = analyze_loops(func);
            let text = match args.format {
                IrFormat::Text => {
                    let kinds: Vec<Annotation> =
                        args.annotate.iter().map(|k| (*k).into()).collect();
                    let facts = if kinds.is_empty() {
                        Default::default()
                    } else {
                        annotate_function(program, func, &forest, &kinds)
                    };
                    let mut text =
                        print_function_annotated(program, func, Some(&forest), &locate, &|v| {
                            facts.text(v)
                        });
                    for note in &facts.notes {
                        text.push_str(&format!("  ; note {note}\n"));
                    }
                    text
                }
                IrFormat::Dot => print_dot(program, func, Some(&forest)),
            };
            if writeln!(out, "{text}").is_err() {
                return ExitCode::SUCCESS;
            }
        }
    }
    if analysed == 0 {
        eprintln!("error: no function could be analysed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
