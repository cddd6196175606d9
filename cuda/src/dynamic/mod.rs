//! `warpwise check --dynamic`: the user's CUDA program built for the CPU shim and run, its
//! kernels' global-memory accesses counted per warp (`advisor::check::dynamic`).
//!
//! Modules: `rewrite` (each launch `k<<<g, b>>>(args)` made a call of the shim's
//! `ww_cpu_launch`), `build` (the files compiled with ThreadSanitizer's instrumentation
//! and linked with our hooks instead of its runtime), `trace` (the program run with a
//! timeout, its log of accesses read as it runs), `symbolize` (each access's PC to
//! `file:line:col`).

mod build;
mod rewrite;
mod symbolize;
mod trace;

use advisor::check::dynamic::Site;
use frontend::preprocess::TranslationUnitInput;
use std::path::PathBuf;
use std::time::Duration;

/// Where a launch's kernel is named in the user's source (1-based line, byte column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlace {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
}

/// What to build and how to run it.
#[derive(Clone, Debug)]
pub struct Request {
    /// The program's files (one holds `main`): CUDA files get the shim, C and C++ files are
    /// compiled as they are.
    pub inputs: Vec<TranslationUnitInput>,
    /// Every launch the frontend found, to rewrite.
    pub launches: Vec<LaunchPlace>,
    /// The program's arguments.
    pub args: Vec<String>,
    pub timeout: Duration,
    /// The log stops after this many global accesses.
    pub max_events: u64,
}

/// What the run did.
#[derive(Clone, Debug)]
pub struct Observed {
    pub sites: Vec<Site>,
    /// Each launch's grid, block and integer arguments, by its number in the log.
    pub launches: std::collections::HashMap<u64, advisor::check::dynamic::LaunchValues>,
    pub events: u64,
    /// The log stopped at `max_events`.
    pub truncated: bool,
    /// The program's exit status, when not 0 (and not a crash).
    pub exit_status: Option<i32>,
}

/// Why the program could not be counted.
#[derive(Debug)]
pub enum DynamicError {
    /// A file does not compile under the shim: the compiler's first error.
    Compile { file: PathBuf, first_error: String },
    /// The objects do not link: the linker's first error.
    Link(String),
    /// The program was killed by a signal or crashed in a kernel (the shim's message).
    Crashed(String),
    /// It ran past the timeout and was killed.
    TimedOut(u64),
    /// A tool (the compiler, the symbolizer) could not be run, or the build directory not
    /// written.
    Tool(String),
}

impl std::fmt::Display for DynamicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DynamicError::Compile { file, first_error } => write!(
                f,
                "`{}` does not compile for the CPU shim: {first_error}",
                file.display()
            ),
            DynamicError::Link(e) => write!(f, "the program does not link: {e}"),
            DynamicError::Crashed(e) => write!(f, "the program crashed: {e}"),
            DynamicError::TimedOut(s) => {
                write!(
                    f,
                    "the program ran past {s} s and was killed (`--timeout SECS`)"
                )
            }
            DynamicError::Tool(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for DynamicError {}

/// Builds the program in a fresh private directory, runs it in the directory of its first
/// file, and places its accesses in the source.
pub fn run(request: &Request) -> Result<Observed, DynamicError> {
    // A private (0700) directory that a signal ending warpwise removes too.
    let dir = frontend::files::private_tempdir("warpwise-dynamic-")
        .map_err(|e| DynamicError::Tool(format!("cannot create a build directory: {e}")))?;
    let exe = build::build(request, dir.path())?;
    let cwd = request
        .inputs
        .first()
        .map(|i| advisor::check::dynamic::canonical(&i.file))
        .and_then(|f| f.parent().map(|p| p.to_path_buf()))
        .unwrap_or_else(|| PathBuf::from("."));
    let traced = trace::run(&exe, &request.args, &cwd, dir.path(), request)?;
    let places = symbolize::places(&exe, traced.base, &traced.pcs, dir.path())?;
    let sites = traced
        .pcs
        .iter()
        .zip(traced.tallies)
        .zip(traced.by_launch)
        .zip(places)
        .filter_map(|((((_, write), tally), launches), frames)| {
            let (file, line, col) = frames.first()?.clone();
            Some(Site {
                file,
                line,
                col,
                write: *write,
                calls: frames[1..].to_vec(),
                tally,
                launches,
            })
        })
        .collect();
    Ok(Observed {
        sites,
        launches: traced.launches,
        events: traced.events,
        truncated: traced.truncated,
        exit_status: traced.exit_status,
    })
}

/// Splits `--args` as a POSIX shell splits words: blanks separate, quotes group (`'...'`
/// as is, `"..."` with `\` escaping `"`, `\` and `$`), `\` outside quotes escapes the next
/// character. Nothing is expanded: no shell ever runs. `None` for an unclosed quote.
pub fn split_args(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => out.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => w.push(c),
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => {
                if let Some(c) = chars.next() {
                    word.get_or_insert_with(String::new).push(c);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_as_a_shell_would_without_expanding() {
        let s = |t: &str| split_args(t).map(|v| v.join("|"));
        assert_eq!(s("-s 64"), Some("-s|64".into()));
        assert_eq!(
            s("  a  'b c' \"d \\\"e\\\"\" f\\ g $HOME"),
            Some("a|b c|d \"e\"|f g|$HOME".into())
        );
        assert_eq!(s("''"), Some("".into()));
        assert_eq!(split_args("'open"), None);
    }
}
