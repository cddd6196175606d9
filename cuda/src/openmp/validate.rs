//! `warpwise validate --target openmp`: builds the program as it is and with its ported
//! files under clang's OpenMP offloading to the host (`-fopenmp-targets=x86_64-pc-linux-gnu`),
//! runs both with `OMP_TARGET_OFFLOAD=MANDATORY` and compares what they print. Target
//! regions run in a separate device data environment there, so a missing or short `map`
//! clause gives wrong results exactly as on a GPU.

use super::error::OffloadError;
use super::rewrite::PortedFile;
use crate::validate::snapshot::{run_captured, RunOutcome};
use frontend::preprocess::TranslationUnitInput;
use profile::driver::{command as tool, run_cc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The compilers tried, in order, when `WARPWISE_OFFLOAD_CC` is not set.
pub const OFFLOAD_COMPILERS: [&str; 2] = ["clang-16", "clang"];

/// Where the offloading compiler comes from, for messages.
pub const OFFLOAD_HELP: &str = "OpenMP offloading to the host needs clang with libomptarget: on Debian `apt-get install clang-16 libomp-16-dev clang-tools-16`, or name a compiler with WARPWISE_OFFLOAD_CC";

#[derive(Clone, Debug)]
pub struct Options {
    /// Code-generation flags for both builds (`-O2`).
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    pub args: Vec<String>,
    pub timeout: Duration,
    /// Relative tolerance for numbers that print differently.
    pub rtol: f64,
    /// A pattern both programs' output must match (`VERIFICATION SUCCESSFUL`), in place of
    /// comparing their outputs line by line: for programs that check their own results and
    /// print timings that differ from run to run.
    pub expect: Option<regex::Regex>,
}

/// The compilers to try, in order: `WARPWISE_OFFLOAD_CC` alone when it is set, else
/// [`OFFLOAD_COMPILERS`].
pub fn offload_candidates() -> Vec<String> {
    match std::env::var("WARPWISE_OFFLOAD_CC") {
        Ok(c) if !c.trim().is_empty() => vec![c],
        _ => OFFLOAD_COMPILERS.iter().map(|s| s.to_string()).collect(),
    }
}

/// Whether `cc` compiles and links a one-line OpenMP offload program for the host. The
/// probe is a full offloading compile and link (about a second), so it runs only after a
/// build with `cc` failed: to tell a compiler that cannot offload (try the next one) from
/// a program that does not build with one that can.
pub fn can_offload(cc: &str) -> Result<bool, OffloadError> {
    let dir = frontend::files::private_tempdir("warpwise-offload-probe")
        .map_err(OffloadError::TempDir)?;
    let src = dir.path().join("probe.c");
    std::fs::write(
        &src,
        "int main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\n x = 1;\n return !x; }\n",
    )
    .map_err(|source| OffloadError::Write {
        path: src.clone(),
        source,
    })?;
    let mut cmd = tool(cc);
    cmd.args(offload_flags())
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("probe"));
    Ok(run_cc(cmd).is_ok())
}

/// OpenMP 5.1 for the ports' `atomic compare` (clang 16 defaults to 5.0).
fn offload_flags() -> [&'static str; 3] {
    [
        "-fopenmp",
        "-fopenmp-version=51",
        "-fopenmp-targets=x86_64-pc-linux-gnu",
    ]
}

/// How the two runs compared.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The offloading compiler both programs were built with.
    pub compiler: String,
    pub original: RunOutcome,
    pub ported: RunOutcome,
    /// `None`: the same; else what differs.
    pub difference: Option<String>,
    /// Numbers that printed differently but agree within the tolerance (and the rounding
    /// of their last printed digit).
    pub within_tolerance: usize,
}

/// Builds both programs in `dir` with the first of [`offload_candidates`] that can offload,
/// runs them and compares their output.
pub fn validate(
    inputs: &[TranslationUnitInput],
    ported: &[PortedFile],
    opts: &Options,
    dir: &Path,
) -> Result<Comparison, OffloadError> {
    let candidates = offload_candidates();
    for compiler in &candidates {
        let built = build_both(compiler, inputs, ported, opts, dir);
        // A failed build settles nothing until the compiler is known to offload.
        let failed = !matches!(built, Ok(Ok(_)));
        if failed && !can_offload(compiler)? {
            continue;
        }
        return match built? {
            Ok((original, port)) => compare_runs(compiler, &original, &port, opts, dir),
            Err(why) => {
                let none = RunOutcome {
                    status: None,
                    timed_out: false,
                    output_tail: String::new(),
                };
                Ok(Comparison {
                    compiler: compiler.clone(),
                    original: none.clone(),
                    ported: none,
                    difference: Some(why),
                    within_tolerance: 0,
                })
            }
        };
    }
    Err(OffloadError::NoCompiler { candidates })
}

/// The original's and the port's executables, or (inner `Err`) why the port does not
/// compile when the original does: a variable the clauses left out is an error under
/// `defaultmap(none)`, the port's failure rather than the tool chain's.
type Built = Result<(PathBuf, PathBuf), String>;

fn build_both(
    compiler: &str,
    inputs: &[TranslationUnitInput],
    ported: &[PortedFile],
    opts: &Options,
    dir: &Path,
) -> Result<Built, OffloadError> {
    let original = build(compiler, inputs, &[], opts, &dir.join("original"), false)?;
    Ok(
        match build(compiler, inputs, ported, opts, &dir.join("ported"), true) {
            Ok(port) => Ok((original, port)),
            Err(e) => Err(format!("the port does not compile: {e}")),
        },
    )
}

/// Runs both programs and compares what they print.
fn compare_runs(
    compiler: &str,
    original: &Path,
    port: &Path,
    opts: &Options,
    dir: &Path,
) -> Result<Comparison, OffloadError> {
    let run = |exe: &Path, name: &str| -> Result<RunOutcome, OffloadError> {
        let mut cmd = Command::new(exe);
        cmd.args(&opts.args)
            .env("OMP_TARGET_OFFLOAD", "MANDATORY")
            .current_dir(dir);
        Ok(run_captured(cmd, dir, name, opts.timeout)?)
    };
    let a = run(original, "original")?;
    let b = run(port, "ported")?;
    let text_a = std::fs::read_to_string(dir.join("original.out")).unwrap_or_default();
    let text_b = std::fs::read_to_string(dir.join("ported.out")).unwrap_or_default();
    let (mut difference, within_tolerance) = match &opts.expect {
        None => compare_outputs(&text_a, &text_b, opts.rtol),
        Some(pattern) => {
            if a.timed_out || !pattern.is_match(&text_a) {
                return Err(OffloadError::ExpectOriginal {
                    pattern: pattern.as_str().to_string(),
                    status: status_text(&a),
                });
            }
            let missing = (!pattern.is_match(&text_b)).then(|| {
                format!(
                    "the port's output does not match `--expect {}` (the original's does)",
                    pattern.as_str()
                )
            });
            (missing, 0)
        }
    };
    if a.timed_out || b.timed_out {
        difference = Some(format!(
            "the {} program did not finish within {} s",
            if a.timed_out { "original" } else { "ported" },
            opts.timeout.as_secs()
        ));
    } else if a.status != b.status {
        difference = Some(format!(
            "exit status {} (original) vs {} (ported)",
            a.status.unwrap_or(-1),
            b.status.unwrap_or(-1)
        ));
    }
    Ok(Comparison {
        compiler: compiler.to_string(),
        original: a,
        ported: b,
        difference,
        within_tolerance,
    })
}

/// A run's end for messages: its exit status, a timeout, or a signal.
fn status_text(run: &RunOutcome) -> String {
    match (run.timed_out, run.status) {
        (true, _) => "none: it did not finish in time".to_string(),
        (false, Some(code)) => code.to_string(),
        (false, None) => "none: it was killed by a signal".to_string(),
    }
}

/// Compiles every input (the ported text in place of its file when there is one) and links.
fn build(
    compiler: &str,
    inputs: &[TranslationUnitInput],
    ported: &[PortedFile],
    opts: &Options,
    dir: &Path,
    offload: bool,
) -> Result<PathBuf, OffloadError> {
    std::fs::create_dir_all(dir).map_err(|source| OffloadError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut objects = Vec::new();
    for (n, input) in inputs.iter().enumerate() {
        let path = match &input.working_dir {
            Some(wd) if input.file.is_relative() => wd.join(&input.file),
            _ => input.file.clone(),
        };
        let mut cmd = tool(compiler);
        cmd.args(&opts.cflags).args(input.flags.to_args());
        if offload {
            cmd.args(offload_flags());
        } else {
            cmd.arg("-fopenmp");
        }
        let port = ported
            .iter()
            .find(|p| same_file(&p.path, &path, input.working_dir.as_deref()));
        let source = match port {
            Some(p) => {
                let sub = dir.join(format!("unit{n}"));
                std::fs::create_dir_all(&sub).map_err(|source| OffloadError::CreateDir {
                    path: sub.clone(),
                    source,
                })?;
                let copy = sub.join(path.file_name().unwrap_or_default());
                std::fs::write(&copy, &p.ported).map_err(|source| OffloadError::Write {
                    path: copy.clone(),
                    source,
                })?;
                // `#include "x.h"` finds the original's neighbours.
                if let Some(parent) = absolute(&path).parent() {
                    cmd.arg("-iquote").arg(parent);
                }
                copy
            }
            None => absolute(&path),
        };
        let object = dir.join(format!("unit{n}.o"));
        cmd.args(["-w", "-c"]).arg(&source).arg("-o").arg(&object);
        if let Some(wd) = &input.working_dir {
            cmd.current_dir(wd);
        }
        run_cc(cmd)?;
        objects.push(object);
    }
    let exe = dir.join("program");
    let link = |linker: Option<&str>| {
        let mut cmd = tool(compiler);
        cmd.args(&opts.cflags);
        if offload {
            cmd.args(offload_flags());
        } else {
            cmd.arg("-fopenmp");
        }
        cmd.args(linker)
            .args(&objects)
            .arg("-o")
            .arg(&exe)
            .args(&opts.ldflags)
            .arg("-lm");
        if offload {
            // An `atomic` on a 16-byte value (`long double`) calls libatomic in the target
            // region's code, which the offloading link does not add by itself.
            cmd.arg("-latomic");
        }
        run_cc(cmd)
    };
    // Both programs are linked alike, with gold where it is installed: the host link of an
    // offload program reads libomptarget's 9 MB device runtime archive, which takes the
    // default linker (GNU ld) a second and gold a quarter of that. A link gold refuses is
    // made again with the default linker, whose verdict stands.
    match fast_linker() {
        Some(flag) if link(Some(flag)).is_ok() => {}
        _ => link(None)?,
    }
    Ok(exe)
}

/// `-fuse-ld=gold` when `ld.gold` is on the PATH.
pub fn fast_linker() -> Option<&'static str> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .any(|dir| dir.join("ld.gold").is_file())
        .then_some("-fuse-ld=gold")
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn same_file(a: &Path, b: &Path, wd: Option<&Path>) -> bool {
    let a = match wd {
        Some(wd) if a.is_relative() => wd.join(a),
        _ => a.to_path_buf(),
    };
    absolute(&a) == absolute(b)
}

/// Compares two outputs token by token: equal text, or numbers within `rtol` of each
/// other (reductions reassociate). Returns the first difference and how many numbers
/// differed within the tolerance.
pub fn compare_outputs(a: &str, b: &str, rtol: f64) -> (Option<String>, usize) {
    if a == b {
        return (None, 0);
    }
    let mut within = 0;
    let la: Vec<&str> = a.lines().collect();
    let lb: Vec<&str> = b.lines().collect();
    if la.len() != lb.len() {
        return (
            Some(format!(
                "the original printed {} lines, the port {}{}",
                la.len(),
                lb.len(),
                first_different_line(&la, &lb)
            )),
            within,
        );
    }
    for (k, (x, y)) in la.iter().zip(&lb).enumerate() {
        if x == y {
            continue;
        }
        let tx: Vec<&str> = x.split_whitespace().collect();
        let ty: Vec<&str> = y.split_whitespace().collect();
        let same = tx.len() == ty.len()
            && tx.iter().zip(&ty).all(|(p, q)| {
                if p == q {
                    return true;
                }
                let (p, q) = (
                    p.trim_end_matches([',', ';']),
                    q.trim_end_matches([',', ';']),
                );
                match (p.parse::<f64>(), q.parse::<f64>()) {
                    (Ok(u), Ok(v)) if close_printed(p, q, u, v, rtol) => {
                        within += 1;
                        true
                    }
                    _ => false,
                }
            });
        if !same {
            return (
                Some(format!(
                    "line {}: the original printed `{}`, the port `{}`",
                    k + 1,
                    clip(x),
                    clip(y)
                )),
                within,
            );
        }
    }
    (None, within)
}

/// Whether two printed numbers can come from values within `rtol` of each other. A
/// number printed with a fraction or an exponent (`0.52`, `1.5e-03`) stands for any value
/// within half a unit of its last digit, so two such numbers may differ by the two halves
/// on top of `rtol`: a reassociated sum that lands on the other side of a rounding
/// boundary prints `0.53` where the sequential one printed `0.52`. A plain integer is
/// taken as exact (a count, an index), so it gets no such slack.
fn close_printed(p: &str, q: &str, u: f64, v: f64, rtol: f64) -> bool {
    if u.is_nan() || v.is_nan() {
        return u.is_nan() && v.is_nan();
    }
    let slack = (half_unit(p) + half_unit(q)) * (1.0 + 1e-9);
    (u - v).abs() <= rtol * u.abs().max(v.abs()) + slack
}

/// Half a unit of the last digit of a number printed with a fraction or an exponent
/// (`0.52`: 0.005; `1.5e-03`: 0.00005); 0 for a plain integer or a word.
fn half_unit(text: &str) -> f64 {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let Some(dot) = mantissa.find('.') else {
        return if exponent != 0 || text.contains(['e', 'E']) {
            0.5 * 10f64.powi(exponent)
        } else {
            0.0
        };
    };
    let decimals = mantissa[dot + 1..]
        .chars()
        .filter(char::is_ascii_digit)
        .count() as i32;
    0.5 * 10f64.powi(exponent - decimals)
}

fn first_different_line(a: &[&str], b: &[&str]) -> String {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            return format!("; line {}: `{}` vs `{}`", k + 1, clip(x), clip(y));
        }
    }
    String::new()
}

fn clip(s: &str) -> String {
    if s.chars().count() > 160 {
        format!("{}...", s.chars().take(160).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_compare_numbers_within_the_tolerance() {
        assert_eq!(compare_outputs("a 1\n", "a 1\n", 1e-9), (None, 0));
        assert_eq!(
            compare_outputs("sum 1.0000000001\n", "sum 1.0000000002\n", 1e-9),
            (None, 1)
        );
        let (d, _) = compare_outputs("sum 1.0\n", "sum 1.2\n", 1e-9);
        assert!(d.unwrap().contains("line 1"));
        let (d, _) = compare_outputs("a\nb\n", "a\n", 1e-9);
        assert!(d.unwrap().contains("2 lines"));
        let (d, _) = compare_outputs("x nan\n", "x 1\n", 1e-9);
        assert!(d.is_some());
    }

    /// A reassociated sum may land on the other side of a rounding boundary: one unit of
    /// the last printed digit is within the printing's own error; two are not, and an
    /// integer (a count) gets no slack.
    #[test]
    fn printed_numbers_differ_by_their_rounding_at_most() {
        assert_eq!(
            compare_outputs("0.52 1.00\n", "0.53 1.00\n", 1e-12),
            (None, 1)
        );
        assert_eq!(
            compare_outputs("v 1.5e-03\n", "v 1.6e-03\n", 1e-12),
            (None, 1)
        );
        let (d, _) = compare_outputs("0.52\n", "0.54\n", 1e-12);
        assert!(d.is_some());
        let (d, _) = compare_outputs("count 52\n", "count 53\n", 1e-12);
        assert!(d.is_some());
        let (d, _) = compare_outputs("v 1.5e-03\n", "v 1.7e-03\n", 1e-12);
        assert!(d.is_some());
    }
}
