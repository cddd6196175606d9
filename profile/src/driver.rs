//! Building and running instrumented programs: `warpwise profile` (files to a profiled run)
//! and `warpwise cc` (a compiler wrapper for make and CMake).

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use super::error::{CompileError, DriverError};
use super::instrument::{
    instrument_with, Instrumented, LoopSelection, Tracking, RUNTIME_C, RUNTIME_H,
};
use advisor::analyze::{analyze_unit, Filter};
use frontend::diagnostic::Diagnostic;
use frontend::preprocess::{CompileFlags, TranslationUnitInput};
use frontend::unit::load_unit;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The real C compiler: `$WARPWISE_CC`, else `cc`.
pub fn real_compiler() -> String {
    std::env::var("WARPWISE_CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string())
}

/// A command running the C compiler `cc`: a program name, or a name with arguments as `CC`
/// may hold (`clang-16 -fopenmp`).
pub fn command(cc: &str) -> Command {
    let mut words = cc.split_whitespace();
    let mut cmd = Command::new(words.next().unwrap_or("cc"));
    cmd.args(words);
    cmd
}

/// Loads, analyses and instruments one file.
pub fn instrument_input(
    input: &TranslationUnitInput,
    selection: &LoopSelection,
    tracking: Tracking,
) -> Result<(Instrumented, Vec<Diagnostic>), Diagnostic> {
    let unit = load_unit(input)?;
    let diagnostics: Vec<Diagnostic> = unit.diagnostics();
    let reports = analyze_unit(&unit, &Filter::default());
    let done = instrument_with(&unit, &reports, selection, tracking)?;
    Ok((done, diagnostics))
}

fn stem(file: &Path, n: usize) -> String {
    let s = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("unit{n}"));
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs a compiler command; its stderr becomes the error when it fails.
pub fn run_cc(mut cmd: Command) -> Result<(), CompileError> {
    let shown = format!("{cmd:?}");
    let out = match cmd.output() {
        Ok(out) => out,
        Err(source) => {
            return Err(CompileError::Spawn {
                command: shown,
                source,
            })
        }
    };
    if out.status.success() {
        Ok(())
    } else {
        Err(CompileError::Failed {
            command: shown,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

/// Writes the runtime's sources into `dir` and returns its object file: the one a run
/// before compiled with the same compiler when it is kept (see [`kept_object`]), else a
/// fresh compile. At `-O2` the compile takes over a second, most of a small program's
/// profile build.
pub fn compile_runtime(cc: &str, dir: &Path) -> Result<PathBuf, DriverError> {
    std::fs::create_dir_all(dir).map_err(|source| DriverError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    std::fs::write(dir.join("warpwise_rt.h"), RUNTIME_H)
        .and_then(|_| std::fs::write(dir.join("warpwise_rt.c"), RUNTIME_C))
        .map_err(|source| DriverError::WriteRuntime {
            dir: dir.to_path_buf(),
            source,
        })?;
    const FLAGS: [&str; 4] = ["-O2", "-std=gnu99", "-w", "-c"];
    let key = [
        FLAGS.join(" "),
        RUNTIME_H.to_string(),
        RUNTIME_C.to_string(),
    ];
    kept_object(cc, "warpwise_rt.o", &key, || {
        let object = dir.join("warpwise_rt.o");
        let mut cmd = command(cc);
        cmd.args(FLAGS)
            .arg(dir.join("warpwise_rt.c"))
            .arg("-o")
            .arg(&object);
        run_cc(cmd)?;
        Ok(object)
    })
}

/// The object file `compile` makes with the compiler `cc`, kept in the per-user cache
/// directory `STEM-VERSION-HASH` (`files::user_cache_dir`, checked to be the user's alone),
/// HASH over `key` (the flags and the sources' texts), the compiler command and what
/// `cc --version` prints, so that another compiler, or a new one under the same name, gets
/// its own. A kept copy that is ours alone is returned without compiling; one that is a
/// link or that others could write is compiled again and replaced. Without a cache
/// directory, or when `cc` does not answer `--version`, `compile` runs every time.
pub fn kept_object<E>(
    cc: &str,
    name: &str,
    key: &[String],
    compile: impl FnOnce() -> Result<PathBuf, E>,
) -> Result<PathBuf, E> {
    let kept = kept_path(cc, name, key);
    if let Some(object) = kept
        .as_ref()
        .filter(|o| frontend::files::is_private_file(o))
    {
        return Ok(object.clone());
    }
    let object = compile()?;
    // Renamed into place whole, so a run beside this one never links half an object; a
    // failure to keep it only costs the next run a compile.
    if let Some(kept) = kept {
        if std::fs::read(&object).is_ok_and(|b| frontend::files::write_output(&kept, &b).is_ok()) {
            return Ok(kept);
        }
    }
    Ok(object)
}

fn kept_path(cc: &str, name: &str, key: &[String]) -> Option<PathBuf> {
    let version = command(cc)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?
        .stdout;
    let hash = key
        .iter()
        .flat_map(|k| k.bytes().chain([0]))
        .chain(cc.bytes())
        .chain(version)
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
    let stem = name.strip_suffix(".o").unwrap_or(name);
    let sub = format!("{stem}-{}-{hash:016x}", env!("CARGO_PKG_VERSION"));
    let dir = frontend::files::user_cache_dir(&sub).ok()?;
    Some(dir.join(name))
}

#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub cc: String,
    /// Compiler flags for code generation (`-O2`), given to every compile.
    pub cflags: Vec<String>,
    /// Extra link arguments (`-lm` is always added).
    pub ldflags: Vec<String>,
    pub selection: LoopSelection,
    /// Which accesses of the tracked loops are watched.
    pub tracking: Tracking,
    pub work_dir: PathBuf,
}

#[derive(Debug)]
pub struct Built {
    pub exe: PathBuf,
    pub loops: Vec<String>,
    pub tracked: Vec<String>,
    pub accesses: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// Instruments, compiles and links `inputs` into `work_dir/program`.
pub fn build(inputs: &[TranslationUnitInput], opts: &BuildOptions) -> Result<Built, DriverError> {
    std::fs::create_dir_all(&opts.work_dir).map_err(|source| DriverError::CreateDir {
        path: opts.work_dir.clone(),
        source,
    })?;
    let mut objects = Vec::new();
    let mut built = Built {
        exe: opts.work_dir.join("program"),
        loops: Vec::new(),
        tracked: Vec::new(),
        accesses: 0,
        diagnostics: Vec::new(),
    };
    // All files as one program, as `warpwise analyze` reads them: a loop's report then
    // knows what other files do (where a gathered array is allocated, and with which
    // lengths), and the instrumentation records what that report names.
    let mut units = Vec::new();
    for input in inputs {
        let unit = load_unit(input).map_err(|d| DriverError::Instrument(Box::new(d)))?;
        built.diagnostics.extend(unit.diagnostics());
        units.push(unit);
    }
    let view = advisor::program::ProgramView::new(&units);
    let summaries = advisor::summaries::Summaries::new(&view);
    for (n, (input, unit)) in inputs.iter().zip(&units).enumerate() {
        let reports = advisor::analyze::analyze_in_program(
            &summaries,
            n,
            &Filter::default(),
            &advisor::mapping::Target::default(),
            &std::collections::HashMap::new(),
        );
        let done = instrument_with(unit, &reports, &opts.selection, opts.tracking)
            .map_err(|d| DriverError::Instrument(Box::new(d)))?;
        let name = format!("{n}_{}", stem(&input.file, n));
        let source = opts.work_dir.join(format!("{name}.i"));
        std::fs::write(&source, &done.text).map_err(|e| DriverError::Write {
            path: source.clone(),
            source: e,
        })?;
        let object = opts.work_dir.join(format!("{name}.o"));
        let mut cmd = command(&opts.cc);
        cmd.args(&opts.cflags)
            .args(code_flags(&input.flags))
            .args(["-w", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object);
        if let Some(dir) = &input.working_dir {
            cmd.current_dir(dir);
        }
        run_cc(cmd)?;
        objects.push(object);
        built.loops.extend(done.loops);
        built.tracked.extend(done.tracked);
        built.accesses += done.accesses;
    }
    objects.push(compile_runtime(&opts.cc, &opts.work_dir.join("runtime"))?);
    let mut cmd = command(&opts.cc);
    cmd.args(&opts.cflags)
        .args(&objects)
        .arg("-o")
        .arg(&built.exe)
        .args(&opts.ldflags)
        .arg("-lm");
    run_cc(cmd)?;
    Ok(built)
}

/// Code-generation flags among the preprocessor's (`-fopenmp`, `-m64`, `-O2`); the rest
/// were used up by preprocessing.
pub fn code_flags(flags: &CompileFlags) -> Vec<String> {
    // Each kept flag is one word (`CompileFlags::extra`): `-isystem/x` is not a code flag.
    flags
        .extra
        .iter()
        .filter(|a| {
            a.starts_with("-m") || a.starts_with("-f") || a.starts_with("-O") || *a == "-pthread"
        })
        .cloned()
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub args: Vec<String>,
    pub profile: PathBuf,
    /// Seconds; the run is stopped with a profile marked `timeout`.
    pub timeout: Option<u64>,
}

/// Runs a profiled program with the user's stdin/stdout/stderr; returns its exit status
/// (128 + signal number when killed by a signal, as shells report it).
pub fn run(exe: &Path, opts: &RunOptions) -> Result<i32, DriverError> {
    let mut cmd = Command::new(exe);
    cmd.args(&opts.args).env("WARPWISE_PROFILE", &opts.profile);
    if let Some(t) = opts.timeout {
        cmd.env("WARPWISE_TIMEOUT", t.clamp(1, i32::MAX as u64).to_string());
    }
    let mut child = cmd.spawn().map_err(|source| DriverError::Spawn {
        exe: exe.to_path_buf(),
        source,
    })?;
    frontend::files::child_started(child.id());
    let status = wait_with_timeout(&mut child, opts.timeout);
    frontend::files::child_ended(child.id());
    Ok(exit_code(status?))
}

/// Waits for the profiled program, stopping it at the timeout.
fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: Option<u64>,
) -> Result<std::process::ExitStatus, DriverError> {
    let started = Instant::now();
    // The runtime stops the program itself at the timeout (SIGALRM). For a program that
    // ignores or blocks SIGALRM the driver enforces it from outside: SIGTERM two seconds
    // later (the runtime writes the profile and exits), SIGKILL after a grace period (the
    // last periodic snapshot is kept).
    let term_at = timeout.map(|t| Duration::from_secs(t.clamp(1, u64::MAX - 5) + 2));
    let kill_at = timeout.map(|t| Duration::from_secs(t.clamp(1, u64::MAX - 5) + 5));
    let mut terminated = false;
    Ok(loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(DriverError::Wait(e)),
        }
        if !terminated && term_at.is_some_and(|t| started.elapsed() > t) {
            terminated = true;
            // `std` sends only SIGKILL; the system's `kill` sends SIGTERM.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .stderr(std::process::Stdio::null())
                .status();
        }
        if kill_at.is_some_and(|k| started.elapsed() > k) {
            let _ = child.kill();
            break child.wait().map_err(DriverError::Reap)?;
        }
        std::thread::sleep(Duration::from_millis(5));
    })
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

/// `warpwise cc ARGS...`: instruments the C files of one compiler invocation, compiles them
/// with the same arguments, and adds the runtime when linking. Anything it cannot
/// instrument is compiled as it is, with a warning. Returns the compiler's exit status.
pub fn cc(args: &[String]) -> i32 {
    let cc = real_compiler();
    let passthrough = || -> i32 {
        match command(&cc).args(args).status() {
            Ok(s) => exit_code(s),
            Err(e) => {
                eprintln!("warpwise cc: cannot run `{cc}`: {e}");
                127
            }
        }
    };
    let only_preprocess = args
        .iter()
        .any(|a| a == "-E" || a == "-M" || a == "-MM" || a == "--version" || a == "-v");
    if only_preprocess || args.is_empty() {
        return passthrough();
    }
    let links = !args.iter().any(|a| a == "-c" || a == "-S");
    let (flags, inputs) = CompileFlags::from_args(args);
    let sources: Vec<&String> = inputs.iter().filter(|i| i.ends_with(".c")).collect();
    if sources.is_empty() && !links {
        return passthrough();
    }
    let selection = LoopSelection::parse(&std::env::var("WARPWISE_LOOPS").unwrap_or_default());
    let tracking = if std::env::var("WARPWISE_FULL_TRACKING").is_ok_and(|v| v == "1") {
        Tracking::Full
    } else {
        Tracking::Undecided
    };
    // Fresh and private (0700), removed when dropped: never a name in the shared temp
    // directory that another user could have planted.
    let work_dir = match frontend::files::private_tempdir("warpwise-cc-") {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "warpwise cc: warning: cannot create a private build directory ({e}); \
                 compiling without instrumentation"
            );
            return passthrough();
        }
    };
    let work = work_dir.path().to_path_buf();
    let mut replaced: Vec<(String, PathBuf)> = Vec::new();
    for source in &sources {
        let input = TranslationUnitInput {
            file: PathBuf::from(source.as_str()),
            flags: flags.clone(),
            working_dir: None,
            compiler: Some(cc.clone()),
        };
        match instrument_input(&input, &selection, tracking) {
            Ok((done, _)) if !done.loops.is_empty() => {
                // Same file name, so `cc -c dir/a.c` still writes `a.o`.
                let dir = work.join(replaced.len().to_string());
                let name = Path::new(source.as_str())
                    .with_extension("i")
                    .file_name()
                    .map(|n| n.to_os_string())
                    .unwrap_or_default();
                let path = dir.join(name);
                if std::fs::create_dir_all(&dir)
                    .and_then(|_| std::fs::write(&path, &done.text))
                    .is_ok()
                {
                    replaced.push((source.to_string(), path));
                }
            }
            Ok(_) => {}
            Err(d) => eprintln!(
                "warpwise cc: warning: `{source}` is compiled without instrumentation: {}",
                d.to_string().lines().next().unwrap_or("")
            ),
        }
    }
    let runtime = if links {
        // Taken from the per-user cache when a run before compiled it with this compiler.
        match compile_runtime(&cc, &work.join("runtime")) {
            Ok(o) => Some(o),
            Err(e) => {
                eprintln!("warpwise cc: cannot build the profiler runtime: {e}");
                return passthrough();
            }
        }
    } else {
        None
    };
    let mut new_args: Vec<String> = Vec::new();
    for a in args {
        if matches!(a.as_str(), "-pedantic-errors" | "-Werror") || a.starts_with("-Werror=") {
            continue;
        }
        match replaced.iter().find(|(s, _)| s == a) {
            Some((_, path)) => new_args.push(path.to_string_lossy().into_owned()),
            None => new_args.push(a.clone()),
        }
    }
    if !replaced.is_empty() {
        new_args.push("-w".into());
    }
    if let Some(o) = &runtime {
        new_args.push(o.to_string_lossy().into_owned());
    }
    let status = match command(&cc).args(&new_args).status() {
        Ok(s) => exit_code(s),
        Err(e) => {
            eprintln!("warpwise cc: cannot run `{cc}`: {e}");
            127
        }
    };
    if status != 0 && !replaced.is_empty() {
        eprintln!("warpwise cc: warning: the instrumented build failed; compiling without instrumentation");
        let mut plain: Vec<String> = args.to_vec();
        if let Some(o) = &runtime {
            plain.push(o.to_string_lossy().into_owned());
        }
        return match command(&cc).args(&plain).status() {
            Ok(s) => exit_code(s),
            Err(_) => status,
        };
    }
    status
}
