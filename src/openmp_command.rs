//! `warpwise emit --target openmp` (and `validate --target openmp`'s first step): ports the
//! friendly loops of the program's files and writes the copies and their patches.

use crate::inputs::ProgramArgs;
use crate::kernel_args::KernelArgs;
use cuda::openmp::{self, Outcome};
use frontend::preprocess::TranslationUnitInput;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Ports and writes `DIR/NAME.c` and `DIR/NAME.c.patch` per file. Exit 0 when every asked-for
/// loop (or at least one loop, when none was asked for) was ported, 1 when not, 2 for usage
/// and output errors.
pub fn emit(
    inputs: &[TranslationUnitInput],
    kernel: &KernelArgs,
    profile: Option<&profile::Profile>,
    dir: &Path,
    strict: bool,
) -> ExitCode {
    let wanted = &kernel.loop_ids;
    let outcome = openmp::port_inputs(inputs, wanted, profile, &port_options(kernel, strict));
    if let Some(code) = report(&outcome) {
        return code;
    }
    match write(&outcome, inputs, dir) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    if !wanted.is_empty() && !outcome.refused.is_empty() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn port_options(kernel: &KernelArgs, strict: bool) -> openmp::PortOptions {
    openmp::PortOptions {
        strict,
        shrink: kernel.debug_shrink.clone(),
        drop: kernel.debug_drop.clone(),
    }
}

/// Prints what was ported and what was not; an exit code when there is nothing to write.
pub fn report(outcome: &Outcome) -> Option<ExitCode> {
    for p in &outcome.problems {
        eprintln!("{}", p.trim_end());
    }
    for w in &outcome.unmatched {
        eprintln!("error: no loop at `{w}`");
    }
    if !outcome.unmatched.is_empty() {
        return Some(ExitCode::from(2));
    }
    for p in &outcome.ports {
        eprintln!("ported {} ({})", p.loop_id, p.function);
        for n in &p.notes {
            eprintln!("  note: {n}");
        }
    }
    for (id, function, kernel) in &outcome.inside_kernels {
        eprintln!(
            "on the device {id} ({function}): inside the target region of {kernel}, which calls `{function}`"
        );
    }
    for r in &outcome.regions {
        eprintln!("{}", r.describe());
    }
    for d in &outcome.declined_regions {
        eprintln!("{d}");
    }
    for (id, e) in &outcome.refused {
        let message = e
            .message
            .strip_prefix(&format!("{id}: "))
            .unwrap_or(&e.message);
        eprintln!("not ported {id}: {}", message.replace('\n', "\n  "));
    }
    if outcome.files.is_empty() {
        if outcome.refused.is_empty() && outcome.problems.is_empty() {
            eprintln!("error: no friendly loop to port");
        }
        return Some(ExitCode::from(if outcome.problems.is_empty() {
            1
        } else {
            2
        }));
    }
    None
}

/// Writes the ported files into `dir`; never over an input, never through a symlink.
pub fn write(
    outcome: &Outcome,
    inputs: &[TranslationUnitInput],
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut names = std::collections::BTreeSet::new();
    for f in &outcome.files {
        let name = f.path.file_name().unwrap_or_default().to_os_string();
        if !names.insert(name.clone()) {
            return Err(format!(
                "two ported files are named `{}`; port them into different directories with `--loop`",
                name.to_string_lossy()
            ));
        }
    }
    let read = crate::output::unit_paths(inputs);
    let mut planned = Vec::new();
    for f in &outcome.files {
        let name = f.path.file_name().unwrap_or_default().to_string_lossy();
        let code = dir.join(name.as_ref());
        let patch = dir.join(format!("{name}.patch"));
        for p in [&code, &patch] {
            crate::output::refuse_clobbering(Some(p), &read)?;
        }
        planned.push((code, &f.ported));
        planned.push((patch, &f.patch));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let mut written = Vec::new();
    for (path, text) in planned {
        frontend::files::write_output(&path, text.as_bytes())
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// `validate --target openmp`: ports the program, builds the original and the port with
/// clang's host offloading, runs both and compares their output. Exit 0 the same (numbers
/// within the tolerance), 1 different or nothing to port, 2 validation could not be done.
/// Takes `validate`'s options one by one, not its argument struct, so that this module
/// stays below the command that calls it.
pub fn validate(
    kernel: &KernelArgs,
    program: &ProgramArgs,
    (rtol, expect): (Option<f64>, Option<regex::Regex>),
    timeout_secs: u64,
    inputs: &[TranslationUnitInput],
) -> ExitCode {
    use cuda::openmp::validate as v;
    let profile = match kernel.read_profile() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Strict: `defaultmap(none)` turns a variable the clauses left out into a compile error;
    // under host offloading an unmapped pointer would otherwise keep working.
    let outcome = openmp::port_inputs(
        inputs,
        &kernel.loop_ids,
        profile.as_ref(),
        &port_options(kernel, true),
    );
    if let Some(code) = report(&outcome) {
        return code;
    }
    let (work_dir, _removed_on_exit) = match program.work_dir("validate") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let rtol = rtol.unwrap_or(1e-9);
    let opts = v::Options {
        cflags: program
            .codegen
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        ldflags: program.libs.iter().map(|l| format!("-l{l}")).collect(),
        args: program.args.clone(),
        timeout: std::time::Duration::from_secs(timeout_secs.max(1)),
        rtol,
        expect: expect.clone(),
    };
    let validating = crate::progress::Progress::spinner(
        crate::progress::Mode::detect(program.quiet),
        "building the original and the port with clang's OpenMP offloading to the host, running both",
    );
    let compared = v::validate(inputs, &outcome.files, &opts, &work_dir);
    validating.finish();
    match compared {
        Ok(c) => {
            let loops = outcome.ports.len();
            match &c.difference {
                None => {
                    let agree = match &expect {
                        Some(p) => format!("print what `--expect {}` asks for", p.as_str()),
                        None => "print the same".to_string(),
                    };
                    // A run that ends in an error (an error path taken) passes when both
                    // end alike: say how.
                    let ended = match (c.original.status, c.ported.status) {
                        (Some(a), Some(b)) if a == b && a != 0 => {
                            format!(" and exit with status {a}")
                        }
                        _ => String::new(),
                    };
                    println!(
                        "PASS: {loops} loop{} ported; the original and the port ({}, OMP_TARGET_OFFLOAD=MANDATORY) {agree}{ended}{}",
                        if loops == 1 { "" } else { "s" },
                        c.compiler,
                        if c.within_tolerance > 0 {
                            format!(" ({} numbers within relative tolerance {rtol:e} and their last printed digit's rounding)", c.within_tolerance)
                        } else {
                            String::new()
                        }
                    );
                    if !kernel.loop_ids.is_empty() && !outcome.refused.is_empty() {
                        return ExitCode::from(1);
                    }
                    ExitCode::SUCCESS
                }
                Some(d) => {
                    println!("FAIL: {d}");
                    if !c.ported.output_tail.trim().is_empty() {
                        println!(
                            "the port's output ended with:\n{}",
                            c.ported.output_tail.trim_end()
                        );
                    }
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
