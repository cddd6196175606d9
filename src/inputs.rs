//! Turning command-line paths and compiler flags into translation units: files, directories
//! (every `.c` below them) or a `compile_commands.json` build directory.

use clap::Args;
use frontend::diagnostic::Diagnostic;
use frontend::preprocess::{inputs_from_compile_commands, CompileFlags, TranslationUnitInput};
use std::path::{Path, PathBuf};

/// Preprocessor flags shared by every command that reads C.
#[derive(Args, Debug, Clone, Default)]
pub struct CFlags {
    /// Add a directory to the include search path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a macro (`NAME` or `NAME=VALUE`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Undefine a macro.
    #[arg(short = 'U', value_name = "NAME")]
    pub undefine: Vec<String>,
    /// Language standard passed to the preprocessor (e.g. c99, gnu11).
    #[arg(long = "std", value_name = "STD")]
    pub std: Option<String>,
    /// Include a file before the source (like the compiler's -include).
    #[arg(long = "include", value_name = "FILE")]
    pub forced_include: Vec<PathBuf>,
    /// A compiler `-f` flag, written as the compiler takes it (`-fopenmp` defines `_OPENMP`
    /// exactly as gcc does); passed on to the preprocessor and to builds of the program.
    #[arg(short = 'f', value_name = "FLAG")]
    pub feature: Vec<String>,
    /// Read files and flags from BUILD_DIR/compile_commands.json.
    #[arg(short = 'p', value_name = "BUILD_DIR")]
    pub build_dir: Option<PathBuf>,
}

impl CFlags {
    fn compile_flags(&self) -> CompileFlags {
        CompileFlags {
            include_dirs: self.include.clone(),
            defines: self
                .define
                .iter()
                .map(|d| match d.split_once('=') {
                    Some((name, value)) => (name.to_string(), Some(value.to_string())),
                    None => (d.clone(), None),
                })
                .collect(),
            undefines: self.undefine.clone(),
            std: self.std.clone(),
            forced_includes: self.forced_include.clone(),
            // The compiler-command filter drops the `-f` flags that would make `cc -E` write
            // files or change its diagnostics (`-fdump-*`, `-fdiagnostics-*`).
            extra: CompileFlags::from_args(
                &self
                    .feature
                    .iter()
                    .map(|f| format!("-f{f}"))
                    .collect::<Vec<_>>(),
            )
            .0
            .extra,
        }
    }
}

/// The translation units to analyse, in a stable order, and diagnostics for paths that
/// could not be used.
pub fn collect(paths: &[PathBuf], flags: &CFlags) -> (Vec<TranslationUnitInput>, Vec<Diagnostic>) {
    let mut units = Vec::new();
    let mut problems = Vec::new();
    if let Some(build_dir) = &flags.build_dir {
        match inputs_from_compile_commands(build_dir) {
            Ok((found, notes)) => {
                problems.extend(notes);
                // With explicit paths, keep only the database entries below them.
                for unit in found {
                    // The entry's file is relative to its `directory`, the paths to here.
                    let file = match &unit.working_dir {
                        Some(dir) if unit.file.is_relative() => dir.join(&unit.file),
                        _ => unit.file.clone(),
                    };
                    if paths.is_empty() || paths.iter().any(|p| is_below(&file, p)) {
                        units.push(unit);
                    }
                }
            }
            Err(d) => problems.push(d),
        }
        return (units, problems);
    }
    let compile_flags = flags.compile_flags();
    for path in paths {
        if path.is_dir() {
            let mut files = Vec::new();
            let mut unreadable = Vec::new();
            walk_c_files(path, &mut files, &mut unreadable);
            files.sort();
            let top_unreadable = unreadable.iter().any(|(d, _)| d == path);
            for (dir, e) in unreadable {
                problems.push(Diagnostic::error(format!(
                    "cannot read the directory `{}`: {e}",
                    dir.display()
                )));
            }
            if files.is_empty() && !top_unreadable {
                problems.push(Diagnostic::warning(format!(
                    "no `.c` files below `{}`",
                    path.display()
                )));
            }
            for file in files {
                units.push(TranslationUnitInput {
                    file,
                    flags: compile_flags.clone(),
                    ..Default::default()
                });
            }
        } else if path.exists() {
            units.push(TranslationUnitInput {
                file: path.clone(),
                flags: compile_flags.clone(),
                ..Default::default()
            });
        } else {
            problems.push(Diagnostic::error(format!(
                "no such file or directory: `{}`",
                path.display()
            )));
        }
    }
    (units, problems)
}

fn is_below(file: &Path, root: &Path) -> bool {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    canonical(file).starts_with(canonical(root))
}

/// Every `.c` file below `dir`; directories that cannot be read are listed with the reason
/// (a permission problem must not read as "no `.c` files").
fn walk_c_files(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    unreadable: &mut Vec<(PathBuf, std::io::Error)>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            unreadable.push((dir.to_path_buf(), e));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            // Skip hidden directories and build output.
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.starts_with('.') && name != "target" {
                walk_c_files(&path, out, unreadable);
            }
        } else if path.extension().is_some_and(|e| e == "c") {
            out.push(path);
        }
    }
}

/// [`collect`] for commands that need every file: prints the problems, and `None` (after
/// `error: nothing to WHAT`) when there is no input or a path could not be used.
pub fn collect_all(
    paths: &[PathBuf],
    flags: &CFlags,
    what: &str,
) -> Option<Vec<TranslationUnitInput>> {
    let (inputs, problems) = collect(paths, flags);
    for p in &problems {
        eprint!("{}", p.render(false));
    }
    if inputs.is_empty() || problems.iter().any(|p| p.is_error()) {
        eprintln!("error: nothing to {what}");
        return None;
    }
    Some(inputs)
}

/// How to build and run the user's program, for the commands that do (`profile`, `validate`).
#[derive(Args, Debug, Clone)]
pub struct ProgramArgs {
    /// Code-generation flags for compiling the program.
    #[arg(
        long = "cflags",
        value_name = "FLAGS",
        default_value = "-O2",
        allow_hyphen_values = true
    )]
    pub codegen: String,
    /// Link with a library (`-l m`).
    #[arg(short = 'l', value_name = "LIB")]
    pub libs: Vec<String>,
    /// Keep the instrumented build (and for `validate` the snapshot and the replay) in this
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// No progress on stderr (results and diagnostics are still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Arguments for the program, after `--`.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

impl ProgramArgs {
    /// Where `WHAT` (`profile`, `validate`) builds the program: a fresh private directory
    /// (mode 0700, never a reused name in the shared temp directory) that is removed when the
    /// returned guard is dropped, on every exit path; with `--keep DIR`, a fresh directory
    /// of its own inside DIR (`DIR/WHAT-XXXXXX`, said on stderr) that stays. Nothing is
    /// ever written to a name planted in DIR beforehand: a symlink `DIR/0_a.i -> ~/x` is
    /// never followed.
    pub fn work_dir(&self, what: &str) -> Result<(PathBuf, Option<tempfile::TempDir>), String> {
        if let Some(dir) = &self.keep {
            return keep_dir(dir, what).map(|d| (d, None));
        }
        let dir = frontend::files::private_tempdir(&format!("warpwise-{what}-"))
            .map_err(|e| format!("cannot create a private build directory: {e}"))?;
        Ok((dir.path().to_path_buf(), Some(dir)))
    }
}

/// A fresh directory `DIR/WHAT-XXXXXX` (mode 0700), DIR made first when it does not exist,
/// as an absolute path (a `--keep -x` directory never reaches a compiler as an option).
fn keep_dir(dir: &Path, what: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create `{}` (--keep): {e}", dir.display()))?;
    let fresh = tempfile::Builder::new()
        .prefix(&format!("{what}-"))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(dir)
        .map_err(|e| {
            format!(
                "cannot create a build directory in `{}`: {e}",
                dir.display()
            )
        })?
        .keep();
    let fresh = std::path::absolute(&fresh).unwrap_or(fresh);
    eprintln!("warpwise: keeping the build in `{}`", fresh.display());
    Ok(fresh)
}
