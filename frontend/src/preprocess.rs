//! Runs the system C preprocessor (`cc -E`) on one translation unit and prepares its output for lang-c.
//!
//! # Workarounds for headers lang-c cannot parse
//!
//! Measured with gcc 12.2 / glibc 2.36 and `lang_c::driver::Config::with_gcc()` (GNU flavour):
//!
//! * **`omp.h`** — gcc's own header puts `__attribute__((__deprecated__))` on enumerators
//!   (`omp_lock_hint_none __GOMP_DEPRECATED_5_0 = ...`), which lang-c rejects. warpwise ships a
//!   replacement (`fake_headers/omp.h`: the OpenMP 5.1 runtime API with plain types), writes it
//!   at run time to a per-version cache directory under the system temp dir, and passes that
//!   directory with `-I` *before* the user's directories so `#include <omp.h>` finds it. Files
//!   from that directory are reported as system headers by the [`SourceMap`].
//! * **glibc** — stdio, stdlib, string, math, stdint, stdbool, complex, time, assert, limits,
//!   float, sys/time, unistd, pthread (and stdarg, ctype, errno, fcntl, signal, setjmp,
//!   inttypes, wchar, tgmath, threads, sys/mman) all parse as they are, with and
//!   without `-std=c99`, `-D_GNU_SOURCE`, `-O2`, `-D_FORTIFY_SOURCE=2`, `-fopenmp`. No
//!   `-D__extension__=`-style keyword erasure is needed, so none is added (each one would also
//!   change what the user's code means).
//! * **`stdatomic.h`** — the header parses, but its generic macros (`atomic_store_explicit`,
//!   `atomic_load`, ...) expand to statement expressions declaring `__auto_type` temporaries,
//!   which lang-c rejects. `fake_headers/stdatomic.h` (in the same directory as `omp.h`)
//!   includes the real header with `#include_next` and redefines them as the `__atomic_*`
//!   builtins they stand for.
//! * **`__int128`, `__int128_t`, `__uint128_t`** — GCC knows them without a declaration, lang-c
//!   does not: `fake_headers/warpwise_builtins.h` declares them and is forced-included (`-include`)
//!   before the user's file. `unsigned __int128` is rewritten to `__uint128_t` (see below).
//! * **`__attribute__((fallthrough));`** — a statement attribute lang-c rejects; it is blanked
//!   with spaces, leaving an empty statement.
//! * **x86 intrinsics headers** (`xmmintrin.h` ... `immintrin.h`, `x86intrin.h`) parse as they
//!   are after two length-preserving rewrites ([`crate::gnu_compat`]: `__extension__` erased,
//!   `unsigned __int128` spelled `__uint128_t`); their vector types are lowered with GCC's
//!   size and alignment (`lower::vector`). Real headers, not replacements, so the text the
//!   profiler compiles still has the real intrinsics.
//! * **Implicit `int`** (`bar() { ... }`, `register i;`): lang-c needs a type specifier, so
//!   [`crate::implicit_int`] inserts `int ` where C89 assumes it, before the source map is
//!   built (its token alignment keeps the user's columns).
//!
//! `#pragma` lines (including those `_Pragma("...")` turns into) are recorded in
//! [`Preprocessed::pragmas`] and blanked with spaces, so byte offsets and line numbers of the
//! text lang-c sees match the compiler's output exactly. (lang-c would skip them as directives,
//! but only when they start a line; blanking removes the question.)

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::ctokens::Tok;
use crate::diagnostic::{Diagnostic, Label};
use crate::source_map::{Location, SourceMap};

pub use crate::source_map::Pragma;

/// The flags of one compilation that matter to the preprocessor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileFlags {
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME` (`None`) or `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    pub undefines: Vec<String>,
    /// Value of `-std=`, e.g. `c99`.
    pub std: Option<String>,
    pub forced_includes: Vec<PathBuf>,
    /// Passed through unchanged (`-isystem DIR`, `-fopenmp`, `-O2`, `-m64`, ...).
    pub extra: Vec<String>,
}

impl CompileFlags {
    /// Picks the preprocessor-relevant flags out of a compiler command line (without the
    /// compiler itself). Returns the flags and the non-option arguments (source files).
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> (CompileFlags, Vec<String>) {
        let (flags, inputs, _) = Self::from_args_reporting(args);
        (flags, inputs)
    }

    /// [`CompileFlags::from_args`] under the allow-list of [`crate::flag_policy`], with the
    /// flags it dropped for a reason the user should hear (a flag that may run code, read
    /// options from a file, or that warpwise does not know), values attached.
    ///
    /// The words are first split into (flag, value) pairs by the compilers' arity table
    /// ([`crate::compile_args`]), the policy decides on whole pairs, and [`Self::to_args`]
    /// rebuilds the command from the kept pairs only: a value never becomes a flag.
    pub fn from_args_reporting<S: AsRef<str>>(
        args: &[S],
    ) -> (CompileFlags, Vec<String>, Vec<String>) {
        use crate::compile_args::{split, Word};
        use crate::flag_policy::{classify, valued_flag, ValuedVerdict, Verdict};
        let mut flags = CompileFlags::default();
        let mut inputs = Vec::new();
        let mut dropped = Vec::new();
        for word in split(args) {
            let (name, value, joined) = match word {
                Word::Input(input) => {
                    inputs.push(input.to_string());
                    continue;
                }
                Word::Flag {
                    name,
                    missing: true,
                    ..
                } => {
                    dropped.push(format!("{name} (no value)"));
                    continue;
                }
                Word::Flag {
                    name, value: None, ..
                } => {
                    if let Some(std) = name.strip_prefix("-std=") {
                        flags.std = Some(std.to_string());
                        continue;
                    }
                    match classify(name) {
                        Verdict::Keep => flags.extra.push(name.to_string()),
                        Verdict::DropSilently => {}
                        Verdict::DropReported => dropped.push(name.to_string()),
                    }
                    continue;
                }
                Word::Flag {
                    name,
                    value: Some(value),
                    joined,
                    ..
                } => (name, value, joined),
            };
            match valued_flag(name, value) {
                ValuedVerdict::IncludeDir => flags.include_dirs.push(value.into()),
                ValuedVerdict::Define => flags.defines.push(match value.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (value.to_string(), None),
                }),
                ValuedVerdict::Undefine => flags.undefines.push(value.to_string()),
                ValuedVerdict::ForcedInclude => flags.forced_includes.push(value.into()),
                ValuedVerdict::KeepJoined(word) => flags.extra.push(word),
                ValuedVerdict::DropSilently => {}
                ValuedVerdict::DropReported => dropped.push(if joined {
                    format!(
                        "{name}{}{value}",
                        if name.starts_with("--") { "=" } else { "" }
                    )
                } else if value.is_empty() {
                    format!("{name} \"\"")
                } else {
                    format!("{name} {value}")
                }),
            }
        }
        (flags, inputs, dropped)
    }

    /// The flags as compiler arguments for any C compiler: every value is joined to its
    /// flag or follows it as one word that cannot be read as an option (paths starting with
    /// `-` or `@` get `./`), and flags only clang knows (`--target=`) are left out.
    pub fn to_args(&self) -> Vec<String> {
        self.to_args_for(false)
    }

    /// [`Self::to_args`] for the compiler `program` (clang keeps `--target=`).
    pub fn to_args_for_compiler(&self, program: &str) -> Vec<String> {
        let name = Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        self.to_args_for(name.contains("clang"))
    }

    fn to_args_for(&self, clang: bool) -> Vec<String> {
        use crate::compile_args::safe_path;
        let mut args = Vec::new();
        if let Some(std) = &self.std {
            args.push(format!("-std={std}"));
        }
        for d in &self.include_dirs {
            args.push("-I".into());
            args.push(safe_path(&d.to_string_lossy()));
        }
        // An empty name would leave a bare `-D`, which takes the next word as its value.
        for (name, value) in self.defines.iter().filter(|(n, _)| !n.is_empty()) {
            args.push(match value {
                Some(v) => format!("-D{name}={v}"),
                None => format!("-D{name}"),
            });
        }
        for u in self.undefines.iter().filter(|u| !u.is_empty()) {
            args.push(format!("-U{u}"));
        }
        for f in &self.forced_includes {
            args.push("-include".into());
            args.push(safe_path(&f.to_string_lossy()));
        }
        args.extend(
            self.extra
                .iter()
                .filter(|a| crate::flag_policy::is_single_word_flag(a))
                .filter(|a| clang || !a.starts_with("--target="))
                .cloned(),
        );
        args
    }
}

/// One C file to analyse, with how it is compiled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TranslationUnitInput {
    /// As the user gave it; relative paths are relative to `working_dir`.
    pub file: PathBuf,
    pub flags: CompileFlags,
    /// Directory the compiler runs in (compile_commands' `directory`); default: ours.
    pub working_dir: Option<PathBuf>,
    /// Compiler command (may contain spaces, e.g. `ccache gcc`); default: `$CC`, then `cc`.
    pub compiler: Option<String>,
}

impl TranslationUnitInput {
    pub fn new(file: impl Into<PathBuf>) -> Self {
        TranslationUnitInput {
            file: file.into(),
            ..Default::default()
        }
    }
}

/// Preprocessed translation unit, ready for `parse::parse` (named, not linked: the
/// preprocessor does not depend on the parser).
#[derive(Debug, Clone)]
pub struct Preprocessed {
    /// What lang-c parses: the compiler's output with `#pragma` lines blanked.
    pub text: String,
    pub source_map: SourceMap,
    pub pragmas: Vec<Pragma>,
    /// The file is CUDA C (`.cu`, `.cuh`).
    pub cuda: bool,
    /// The declarations of a CUDA file left out because they are C++ (see
    /// [`crate::cuda_source`]); offsets in `text`.
    pub refused: Vec<crate::cuda_source::Refusal>,
}

/// Reads `BUILD_DIR/compile_commands.json` (clang's JSON compilation database) and returns its
/// C translation units, with notes on what of it warpwise will not run or pass on.
///
/// The database is data, not code: its flags pass [`crate::flag_policy`]'s allow-list, and
/// its compiler runs only when it is a known compiler found on `PATH` or installed in a
/// system directory; otherwise `$CC`/`cc` preprocesses.
pub fn inputs_from_compile_commands(
    build_dir: &Path,
) -> Result<(Vec<TranslationUnitInput>, Vec<Diagnostic>), Diagnostic> {
    let db = build_dir.join("compile_commands.json");
    let text = crate::files::read_input_text(&db).map_err(|e| {
        Diagnostic::error(format!("cannot read `{}`: {e}", db.display())).with_help(
            "generate it with `cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON` or `bear -- make`",
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        let line = e.line() as u32;
        let mut label = Label::new(&db, line, e.column() as u32);
        if let Some(t) = text.lines().nth(line.saturating_sub(1) as usize) {
            label = label.with_line_text(t);
        }
        Diagnostic::error(format!("`{}` is not valid JSON: {e}", db.display())).with_primary(label)
    })?;
    let entries = json.as_array().ok_or_else(|| {
        Diagnostic::error(format!(
            "`{}` must contain a JSON array of compile commands",
            db.display()
        ))
    })?;

    let mut out = Vec::new();
    let mut dropped_flags = std::collections::BTreeSet::new();
    let mut refused_compilers = std::collections::BTreeSet::new();
    for (n, entry) in entries.iter().enumerate() {
        let bad = |what: &str| Diagnostic::error(format!("entry {n} of `{}` {what}", db.display()));
        let file = entry
            .get("file")
            .and_then(|f| f.as_str())
            .ok_or_else(|| bad("has no `file`"))?;
        let dir = entry
            .get("directory")
            .and_then(|d| d.as_str())
            .unwrap_or(".");
        let dir = if Path::new(dir).is_relative() {
            build_dir.join(dir)
        } else {
            PathBuf::from(dir)
        };
        let words: Vec<String> =
            if let Some(args) = entry.get("arguments").and_then(|a| a.as_array()) {
                args.iter()
                    .map(|a| {
                        a.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad("has a non-string argument"))
                    })
                    .collect::<Result<_, _>>()?
            } else if let Some(cmd) = entry.get("command").and_then(|c| c.as_str()) {
                shell_split(cmd).ok_or_else(|| bad("has an unterminated quote in `command`"))?
            } else {
                return Err(bad("has neither `arguments` nor `command`"));
            };
        if !is_c_file(file, &words) {
            continue;
        }
        let (compiler, rest) = split_compiler(&words);
        let compiler = compiler.filter(|c| {
            let trusted = is_trusted_compiler(c);
            if !trusted {
                refused_compilers.insert(c.clone());
            }
            trusted
        });
        let (flags, _, dropped) = CompileFlags::from_args_reporting(rest);
        dropped_flags.extend(dropped);
        out.push(TranslationUnitInput {
            file: PathBuf::from(file),
            flags,
            working_dir: Some(dir),
            compiler,
        });
    }
    let mut notes = Vec::new();
    if !dropped_flags.is_empty() {
        let list: Vec<String> = dropped_flags
            .into_iter()
            .map(|f| format!("`{f}`"))
            .collect();
        notes.push(Diagnostic::note(format!(
            "`{}`: not passed to the preprocessor (not on warpwise's list of flags that only \
             shape preprocessing): {}",
            db.display(),
            list.join(", ")
        )));
    }
    if !refused_compilers.is_empty() {
        let list: Vec<String> = refused_compilers
            .into_iter()
            .map(|c| format!("`{c}`"))
            .collect();
        notes.push(
            Diagnostic::note(format!(
                "`{}`: not running its compiler {} (not a known C compiler on PATH or in a \
                 system directory); preprocessing with $CC or `cc` instead",
                db.display(),
                list.join(", ")
            ))
            .with_help("point $CC at the compiler if it is one you trust"),
        );
    }
    Ok((out, notes))
}

/// Whether a compile database's compiler may be run: a known C compiler's name, and either
/// a bare name (found on the user's own `PATH`) or a path into a system directory.
fn is_trusted_compiler(compiler: &str) -> bool {
    // One program, run as one word: `"gcc -B. -Dx=-gcc"` is a known name followed by
    // flags that would be run unfiltered.
    if compiler.is_empty()
        || compiler.starts_with('-')
        || compiler
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '\'' | '"' | '\\'))
    {
        return false;
    }
    let path = Path::new(compiler);
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    // `gcc`, `gcc-12`, `x86_64-linux-gnu-gcc-12`, `clang-16`, `cc`, `icx`, `mpicc`...
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    let family = stem.rsplit('-').next().unwrap_or(stem);
    let known = [
        "cc", "c89", "c99", "gcc", "clang", "icc", "icx", "nvc", "pgcc", "xlc", "mpicc", "tcc",
    ];
    if !known.contains(&family) {
        return false;
    }
    if !compiler.contains('/') {
        return true;
    }
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    ["/usr/", "/bin/", "/opt/"]
        .iter()
        .any(|dir| real.starts_with(dir))
}

fn is_c_file(file: &str, words: &[String]) -> bool {
    let lang = words
        .windows(2)
        .rev()
        .find(|w| w[0] == "-x")
        .map(|w| w[1].as_str());
    match lang {
        Some(l) => l == "c",
        None => Path::new(file).extension().is_some_and(|e| e == "c"),
    }
}

/// Separates the compiler (skipping launchers such as `ccache`) from its arguments.
fn split_compiler(words: &[String]) -> (Option<String>, &[String]) {
    let mut i = 0;
    while i + 1 < words.len() {
        let name = Path::new(&words[i])
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if matches!(name, "ccache" | "sccache" | "distcc" | "icecc") {
            i += 1;
        } else {
            break;
        }
    }
    match words.get(i) {
        Some(c) if !c.starts_with('-') => (Some(c.clone()), &words[i + 1..]),
        _ => (None, words),
    }
}

/// POSIX-shell word splitting (quotes and backslashes), as compile_commands' `command` needs.
fn shell_split(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                cur.push(chars.next()?);
                in_word = true;
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => {
                            let n = chars.next()?;
                            if !matches!(n, '"' | '\\' | '$' | '`') {
                                cur.push('\\');
                            }
                            cur.push(n);
                        }
                        c => cur.push(c),
                    }
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

const FAKE_OMP_H: &str = include_str!("fake_headers/omp.h");
/// `<stdatomic.h>` with its generic macros written without `__auto_type` (see the file).
const FAKE_STDATOMIC_H: &str = include_str!("fake_headers/stdatomic.h");
/// Forced-included before every file: typedefs for `__int128` and friends (see the file).
const FAKE_BUILTINS_H: &str = include_str!("fake_headers/warpwise_builtins.h");

/// The subdirectory of the replacement headers searched first for CUDA files only.
const CUDA_HEADER_DIR: &str = "cuda";
/// The header nvcc includes before every `.cu` file; warpwise's stand-in is in
/// [`CUDA_HEADERS`].
const CUDA_FORCED_INCLUDE: &str = "cuda_runtime.h";

/// Replacement headers for CUDA files (`fake_headers/cuda`): CUDA's own headers, declaring
/// what analysis needs, and the C++ library's names of the C headers (`<cmath>`), or empty
/// stand-ins (`<iostream>`) so that a file that includes them is still read and only the
/// functions that use them are refused.
const CUDA_HEADERS: &[(&str, &str)] = &[
    (
        "cuda_runtime.h",
        include_str!("fake_headers/cuda/cuda_runtime.h"),
    ),
    ("cuda.h", include_str!("fake_headers/cuda/cuda.h")),
    (
        "cuda_runtime_api.h",
        include_str!("fake_headers/cuda/cuda_runtime_api.h"),
    ),
    (
        "device_launch_parameters.h",
        include_str!("fake_headers/cuda/device_launch_parameters.h"),
    ),
    (
        "device_functions.h",
        include_str!("fake_headers/cuda/device_functions.h"),
    ),
    (
        "vector_types.h",
        include_str!("fake_headers/cuda/vector_types.h"),
    ),
    (
        "cuda_profiler_api.h",
        include_str!("fake_headers/cuda/cuda_profiler_api.h"),
    ),
    (
        "sm_11_atomic_functions.h",
        include_str!("fake_headers/cuda/sm_11_atomic_functions.h"),
    ),
    (
        "sm_12_atomic_functions.h",
        include_str!("fake_headers/cuda/sm_12_atomic_functions.h"),
    ),
    (
        "sm_13_double_functions.h",
        include_str!("fake_headers/cuda/sm_13_double_functions.h"),
    ),
    (
        "sm_20_atomic_functions.h",
        include_str!("fake_headers/cuda/sm_20_atomic_functions.h"),
    ),
    ("cuda_fp16.h", include_str!("fake_headers/cuda/cuda_fp16.h")),
    (
        "math_functions.h",
        include_str!("fake_headers/cuda/math_functions.h"),
    ),
    (
        "host_defines.h",
        include_str!("fake_headers/cuda/host_defines.h"),
    ),
    ("cstdio", include_str!("fake_headers/cuda/cstdio")),
    ("cstdlib", include_str!("fake_headers/cuda/cstdlib")),
    ("cmath", include_str!("fake_headers/cuda/cmath")),
    ("cstring", include_str!("fake_headers/cuda/cstring")),
    ("ctime", include_str!("fake_headers/cuda/ctime")),
    ("cassert", include_str!("fake_headers/cuda/cassert")),
    ("climits", include_str!("fake_headers/cuda/climits")),
    ("cfloat", include_str!("fake_headers/cuda/cfloat")),
    ("cstdint", include_str!("fake_headers/cuda/cstdint")),
    ("cstddef", include_str!("fake_headers/cuda/cstddef")),
    ("cctype", include_str!("fake_headers/cuda/cctype")),
    ("cerrno", include_str!("fake_headers/cuda/cerrno")),
    ("iostream", include_str!("fake_headers/cuda/iostream")),
    ("fstream", include_str!("fake_headers/cuda/fstream")),
    ("sstream", include_str!("fake_headers/cuda/sstream")),
    ("iomanip", include_str!("fake_headers/cuda/iomanip")),
    ("string", include_str!("fake_headers/cuda/string")),
    ("vector", include_str!("fake_headers/cuda/vector")),
    ("algorithm", include_str!("fake_headers/cuda/algorithm")),
    ("map", include_str!("fake_headers/cuda/map")),
    ("set", include_str!("fake_headers/cuda/set")),
    ("list", include_str!("fake_headers/cuda/list")),
    ("queue", include_str!("fake_headers/cuda/queue")),
    ("stack", include_str!("fake_headers/cuda/stack")),
    ("utility", include_str!("fake_headers/cuda/utility")),
    ("limits", include_str!("fake_headers/cuda/limits")),
    ("numeric", include_str!("fake_headers/cuda/numeric")),
    ("functional", include_str!("fake_headers/cuda/functional")),
    ("memory", include_str!("fake_headers/cuda/memory")),
    (
        "helper_cuda.h",
        include_str!("fake_headers/cuda/helper_cuda.h"),
    ),
    (
        "helper_timer.h",
        include_str!("fake_headers/cuda/helper_timer.h"),
    ),
    ("cstdarg", include_str!("fake_headers/cuda/cstdarg")),
    ("cinttypes", include_str!("fake_headers/cuda/cinttypes")),
    ("cstdbool", include_str!("fake_headers/cuda/cstdbool")),
    ("csignal", include_str!("fake_headers/cuda/csignal")),
    ("iterator", include_str!("fake_headers/cuda/iterator")),
    ("deque", include_str!("fake_headers/cuda/deque")),
    ("bitset", include_str!("fake_headers/cuda/bitset")),
    ("array", include_str!("fake_headers/cuda/array")),
    ("tuple", include_str!("fake_headers/cuda/tuple")),
    (
        "unordered_map",
        include_str!("fake_headers/cuda/unordered_map"),
    ),
    (
        "unordered_set",
        include_str!("fake_headers/cuda/unordered_set"),
    ),
    ("typeinfo", include_str!("fake_headers/cuda/typeinfo")),
    ("exception", include_str!("fake_headers/cuda/exception")),
    ("stdexcept", include_str!("fake_headers/cuda/stdexcept")),
    ("ostream", include_str!("fake_headers/cuda/ostream")),
    ("istream", include_str!("fake_headers/cuda/istream")),
    ("new", include_str!("fake_headers/cuda/new")),
    ("complex", include_str!("fake_headers/cuda/complex")),
    ("valarray", include_str!("fake_headers/cuda/valarray")),
];

/// Writes the replacement headers once per process into a cache directory keyed by the tool
/// version and the headers' contents, so different warpwise builds never share stale files.
fn fake_header_dir() -> Result<&'static Path, Diagnostic> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let hash = FAKE_OMP_H
            .bytes()
            .chain(FAKE_BUILTINS_H.bytes())
            .chain(FAKE_STDATOMIC_H.bytes())
            .chain(
                CUDA_HEADERS
                    .iter()
                    .flat_map(|(name, text)| name.bytes().chain(text.bytes())),
            )
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            });
        // A per-user cache directory, never a name in the shared temp directory (another
        // user could plant headers there); a fresh private one when there is no cache home.
        let name = format!("headers-{}-{hash:016x}", env!("CARGO_PKG_VERSION"));
        let dir = match crate::files::user_cache_dir(&name) {
            Ok(d) => d,
            Err(refused) => {
                // Said once a process; the private directory is removed when the process
                // ends (`files::remove_private_tempdirs`, also on a signal).
                eprintln!(
                    "warpwise: note: not using the per-user cache for the replacement headers \
                     ({refused}); using a private directory removed at exit"
                );
                crate::files::private_tempdir("warpwise-headers-")
                    .map_err(|e| format!("cannot create a directory for warpwise's headers: {e}"))?
                    .keep()
            }
        };
        write_atomic(&dir, "omp.h", FAKE_OMP_H)
            .and_then(|()| write_atomic(&dir, "warpwise_builtins.h", FAKE_BUILTINS_H))
            .and_then(|()| write_atomic(&dir, "stdatomic.h", FAKE_STDATOMIC_H))
            .and_then(|()| {
                let cuda = dir.join(CUDA_HEADER_DIR);
                std::fs::create_dir_all(&cuda)?;
                CUDA_HEADERS
                    .iter()
                    .try_for_each(|(name, text)| write_atomic(&cuda, name, text))
            })
            .map_err(|e| {
                format!(
                    "cannot write warpwise's replacement headers to `{}`: {e}",
                    dir.display()
                )
            })?;
        Ok(dir)
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(|e| {
        Diagnostic::error(e.clone())
            .with_help("set XDG_CACHE_HOME (or TMPDIR) to a directory of your own")
    })
}

/// Writes a header unless it is already there: a fresh file renamed into place, so
/// concurrent warpwise runs never see half a header.
fn write_atomic(dir: &Path, name: &str, contents: &str) -> std::io::Result<()> {
    let target = dir.join(name);
    if std::fs::read(&target).is_ok_and(|old| old == contents.as_bytes()) {
        return Ok(());
    }
    crate::files::write_output(&target, contents.as_bytes())
}

/// The compiler command: the compile database's compiler (one program, never split into
/// words: it is data), then `$CC` (the user's own setting, which may carry arguments, as
/// `make` reads it), then `cc`.
fn compiler_words(explicit: Option<&str>) -> Vec<String> {
    if let Some(program) = explicit {
        return vec![program.to_string()];
    }
    let cmd = std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string());
    shell_split(&cmd)
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| vec![cmd])
}

/// Runs `cc -E` on the input and returns the text lang-c will parse, with its source map and
/// the pragmas it contained.
pub fn preprocess(input: &TranslationUnitInput) -> Result<Preprocessed, Diagnostic> {
    preprocess_with_tokens(input).map(|(pre, _)| pre)
}

/// [`preprocess`], with the tokens of the text (what the parse's pruning would lex again).
pub(crate) fn preprocess_with_tokens(
    input: &TranslationUnitInput,
) -> Result<(Preprocessed, Vec<Tok>), Diagnostic> {
    let cwd = match &input.working_dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| {
            Diagnostic::error(format!("cannot determine the current directory: {e}"))
        })?,
    };
    let resolved = cwd.join(&input.file);
    match std::fs::metadata(&resolved) {
        Ok(m) if m.is_file() => {}
        Ok(_) => {
            return Err(Diagnostic::error(format!(
                "`{}` is not a file",
                input.file.display()
            )))
        }
        Err(e) => {
            return Err(Diagnostic::error(format!(
                "cannot read `{}`: {e}",
                input.file.display()
            )))
        }
    }
    let fake_dir = fake_header_dir()?;
    let alias = SourceAlias::for_file(&input.file, &resolved)?;
    let source_arg = match &alias {
        Some(a) => a.link.clone(),
        // A file named `-x.c` is a file, not an option.
        None => crate::compile_args::safe_path_buf(&input.file),
    };

    let cuda = crate::cuda_source::is_cuda_file(&input.file);
    // CUDA files: warpwise's CUDA headers first, `cuda_runtime.h` included before the file
    // and nvcc's macros defined, as nvcc does.
    let cuda_dir = fake_dir.join(CUDA_HEADER_DIR);
    let cuda_args: Vec<std::ffi::OsString> = if cuda {
        vec![
            "-I".into(),
            cuda_dir.clone().into_os_string(),
            "-include".into(),
            cuda_dir.join(CUDA_FORCED_INCLUDE).into_os_string(),
            "-D__CUDACC__".into(),
            "-D__NVCC__".into(),
        ]
    } else {
        Vec::new()
    };
    let run = |words: &[String]| {
        let mut command = Command::new(&words[0]);
        command
            .args(&words[1..])
            .arg("-E")
            .args(&cuda_args)
            .arg("-I")
            .arg(fake_dir)
            .arg("-include")
            .arg(fake_dir.join("warpwise_builtins.h"))
            .args(input.flags.to_args_for_compiler(&words[0]))
            .args(alias.iter().flat_map(SourceAlias::include_args))
            .arg("-x")
            .arg("c")
            .arg(&source_arg)
            .current_dir(&cwd)
            // English, ASCII-quoted messages we can parse.
            .env("LC_ALL", "C")
            .env_remove("GCC_COLORS")
            .stdin(Stdio::null());
        output_through_files(&mut command, MAX_UNIT_BYTES)
    };
    let mut words = compiler_words(input.compiler.as_deref());
    let mut output = run(&words);
    if input.compiler.is_some()
        && matches!(&output, Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    {
        // compile_commands.json often names a compiler of another machine (cross or
        // versioned gcc); any C preprocessor of ours does for analysis.
        words = compiler_words(None);
        output = run(&words);
    }
    let output = output.map_err(|e| {
        Diagnostic::error(format!(
            "cannot run the C preprocessor `{}`: {e}",
            words.join(" ")
        ))
        .with_help("install a C compiler or point $CC at one")
    })?;
    // Checked before the status: a preprocessor stopped for its output's size has failed.
    if output.stdout.len() as u64 > MAX_UNIT_BYTES {
        return Err(Diagnostic::error(format!(
            "`{}` preprocesses to more than {} MiB of text, the most analysed per file \
             (the analysis budget): it is not analysed",
            input.file.display(),
            MAX_UNIT_BYTES >> 20
        )));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(compiler_error(&stderr, &cwd, &words[0]));
    }

    let mut text = String::from_utf8(output.stdout)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    if let Some(a) = &alias {
        a.restore_name(&mut text, &input.file);
    }
    Ok(from_compiler_output_with_tokens(
        text,
        &cwd,
        &[fake_dir.to_path_buf()],
        cuda,
    ))
}

/// A link with a plain name to a source file whose name starts with `@` or `-`. gcc derives
/// `-dumpbase` for its compiler proper from the file's base name, and the compiler proper
/// reads `-dumpbase @evil.rsp` as a response file: the options in `evil.rsp` would run.
/// No prefix helps (the base name stays), so the compiler sees a name of ours, and the
/// line markers are given the user's name back.
struct SourceAlias {
    _dir: tempfile::TempDir,
    link: PathBuf,
    /// The directory of the real file, where `#include "x.h"` looks first.
    real_dir: PathBuf,
}

impl SourceAlias {
    fn for_file(file: &Path, resolved: &Path) -> Result<Option<SourceAlias>, Diagnostic> {
        let risky = file
            .file_name()
            .map(|n| n.as_encoded_bytes())
            .and_then(|n| n.first())
            .is_some_and(|b| *b == b'@' || *b == b'-');
        if !risky {
            return Ok(None);
        }
        let fail = |e: std::io::Error| {
            Diagnostic::error(format!(
                "cannot prepare `{}` for the preprocessor: {e}",
                file.display()
            ))
        };
        let real = std::path::absolute(resolved).map_err(fail)?;
        let dir = crate::files::private_tempdir("warpwise-src-").map_err(fail)?;
        let link = dir.path().join("source.c");
        std::os::unix::fs::symlink(&real, &link).map_err(fail)?;
        Ok(Some(SourceAlias {
            _dir: dir,
            link,
            real_dir: real.parent().map(Path::to_path_buf).unwrap_or_default(),
        }))
    }

    fn include_args(&self) -> [std::ffi::OsString; 2] {
        ["-iquote".into(), self.real_dir.clone().into_os_string()]
    }

    /// Puts the user's `name` in the line markers that name the link.
    fn restore_name(&self, text: &mut String, name: &Path) {
        let quote = |p: &str| p.replace('\\', "\\\\").replace('"', "\\\"");
        let ours = format!("\"{}\"", quote(&self.link.to_string_lossy()));
        if !text.contains(&ours) {
            return;
        }
        let theirs = format!("\"{}\"", quote(&name.to_string_lossy()));
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if line.starts_with('#') && line.contains(&ours) {
                out.push_str(&line.replacen(&ours, &theirs, 1));
            } else {
                out.push_str(line);
            }
        }
        *text = out;
    }
}

/// The most preprocessed text of one translation unit that is analysed (the analysis
/// budget). The text passes hold about 14 bytes of memory per byte of text (the text, its
/// tokens and the source map), so this keeps one file under 1 GB; real translation units
/// are far smaller (the amalgamated sqlite3.c preprocesses to about 9 MB).
pub const MAX_UNIT_BYTES: u64 = 64 << 20;

/// How often a running preprocessor's output is measured against [`MAX_UNIT_BYTES`]. A
/// file that preprocesses in less never waits for it: its end is received at once.
const OUTPUT_CHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `command` to its end with its standard output and error going to fresh unnamed
/// files (`tempfile::tempfile`: private, gone when closed), read once it has exited. Pipes
/// read while the child writes cost a wakeup per chunk: poll and context switches take 0.5 ms
/// of a 19 ms small file. Where no such file can be made (no writable temporary directory),
/// the pipes after all.
///
/// Standard output past `cap` bytes is not kept: the command is stopped once its output
/// holds more (a macro that doubles itself would otherwise fill the disk and the memory),
/// and the output returned holds `cap + 1` bytes, which the caller refuses.
fn output_through_files(command: &mut Command, cap: u64) -> std::io::Result<std::process::Output> {
    use std::io::{Read, Seek};
    let (Ok(stdout), Ok(stderr)) = (tempfile::tempfile(), tempfile::tempfile()) else {
        return command.output();
    };
    // Its own process group, so that stopping it stops the compiler proper too (`cc1`,
    // which the driver runs and which writes the text). It never reads the terminal.
    let mut child = std::os::unix::process::CommandExt::process_group(
        command
            .stdout(stdout.try_clone()?)
            .stderr(stderr.try_clone()?),
        0,
    )
    .spawn()?;
    let status = wait_within(&mut child, &stdout, cap)?;
    let read = |mut file: std::fs::File, cap: u64| -> std::io::Result<Vec<u8>> {
        file.rewind()?;
        let mut bytes = Vec::new();
        file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    Ok(std::process::Output {
        status,
        stdout: read(stdout, cap)?,
        stderr: read(stderr, MAX_DIAGNOSTIC_BYTES)?,
    })
}

/// How much of the preprocessor's standard error is read: its diagnostics are quoted, and
/// a hostile file can make millions of them.
const MAX_DIAGNOSTIC_BYTES: u64 = 16 << 20;

/// Waits for `child`, stopping its process group (SIGKILL) once `output` holds more than
/// `cap` bytes. The
/// wait runs on its own thread so that an end is seen the moment it comes; the size is
/// measured only while the child runs longer than [`OUTPUT_CHECK`].
fn wait_within(
    child: &mut std::process::Child,
    output: &std::fs::File,
    cap: u64,
) -> std::io::Result<std::process::ExitStatus> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let pid = child.id();
    let (ended, end) = channel();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let _ = ended.send(child.wait());
        });
        let mut stopped = false;
        loop {
            match end.recv_timeout(OUTPUT_CHECK) {
                Ok(status) => return status,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(std::io::Error::other(
                        "the preprocessor's wait ended unseen",
                    ))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !stopped && output.metadata()?.len() > cap {
                        // The child is not reaped before its end is received, so `pid` is
                        // still its group's.
                        stopped = true;
                        let _ = Command::new("kill")
                            .args(["-KILL", "--"])
                            .arg(format!("-{pid}"))
                            .stdin(Stdio::null())
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .status();
                    }
                }
            }
        }
    })
}

/// Prepares the preprocessor's output `text` for lang-c: GNU spellings rewritten, implicit
/// `int` inserted, pragmas taken out and remembered, the source map built. `cwd` resolves
/// the relative paths of line markers; headers under `own_headers` (warpwise's parser-only
/// replacements) count as system headers.
pub fn from_compiler_output(text: String, cwd: &Path, own_headers: &[PathBuf]) -> Preprocessed {
    from_compiler_output_with_tokens(text, cwd, own_headers, false).0
}

/// [`from_compiler_output`], with the tokens of the final text. The text is lexed once:
/// each rewrite hands the next the tokens of the text it leaves.
/// `cuda`: the text is CUDA C ([`crate::cuda_source`] prepares it and refuses its C++).
pub(crate) fn from_compiler_output_with_tokens(
    mut text: String,
    cwd: &Path,
    own_headers: &[PathBuf],
    cuda: bool,
) -> (Preprocessed, Vec<Tok>) {
    // Length-preserving first (GNU spellings in GCC's headers), then the rewrites that
    // insert text; the pragmas are found in the final text, so their offsets hold.
    let tokens = crate::gnu_compat::rewrite(&mut text, own_headers);
    // C++ has no implicit `int`, so a CUDA file never relies on it.
    let (prepared, mut tokens) = if cuda {
        let prepared = crate::cuda_source::prepare(&mut text, own_headers);
        (prepared, Vec::new())
    } else {
        let tokens = crate::implicit_int::insert(&mut text, tokens).1;
        (Default::default(), tokens)
    };
    // Pragma lines were directives to the lexer: blanking them leaves the tokens as they are.
    let raw_pragmas = blank_pragmas(&mut text, own_headers);
    let blanked = blank_fallthrough(&mut text);
    if !crate::ctokens::drop_within(&mut tokens, &blanked) {
        tokens = crate::ctokens::lex(&text, own_headers);
    }
    let source_map = SourceMap::new(text.clone(), Some(cwd), own_headers);
    // Refused CUDA declarations go after the map is made: it still shows their text.
    if cuda {
        crate::cuda_source::blank_refused(&mut text, &prepared.blank);
        tokens = crate::ctokens::lex(&text, own_headers);
    }
    let pragmas = raw_pragmas
        .into_iter()
        .map(|(offset, text)| {
            let loc = source_map.locate(offset);
            // The pragma line is blank now; point at the directive in the original line.
            let col = source_map
                .line_text(loc.file, loc.line)
                .map_or(1, |t| t.len() - t.trim_start().len() + 1) as u32;
            Pragma {
                location: Location { col, ..loc },
                text,
                offset,
            }
        })
        .collect();
    let pre = Preprocessed {
        text,
        source_map,
        pragmas,
        cuda,
        refused: prepared.refused,
    };
    (pre, tokens)
}

/// Replaces each `#pragma` line by spaces (offsets stay put) and returns (line offset, text).
///
/// `#pragma GCC ...` lines of system headers stay: lang-c skips them as directives, and the
/// text compiled by the profiler needs them (`#pragma GCC target("sse3")` around the SSE3
/// intrinsics: without it GCC does not know their builtins).
fn blank_pragmas(text: &mut String, system_dirs: &[PathBuf]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut start = 0;
    let mut in_system = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let t = body.trim_start();
        if let Some((_, Some(name), flags)) = crate::source_map::parse_line_marker(t) {
            in_system =
                flags.contains(&3) || system_dirs.iter().any(|d| Path::new(&name).starts_with(d));
        }
        if let Some(rest) = t.strip_prefix('#').map(str::trim_start) {
            if let Some(p) = rest.strip_prefix("pragma") {
                if p.is_empty() || p.starts_with(char::is_whitespace) {
                    let keep = in_system && p.trim_start().starts_with("GCC");
                    found.push((start, start + body.len(), p.trim().to_string(), keep));
                }
            }
        }
        start += line.len();
    }
    for (s, e, _, keep) in &found {
        if !keep {
            text.replace_range(*s..*e, &" ".repeat(e - s));
        }
    }
    found.into_iter().map(|(s, _, t, _)| (s, t)).collect()
}

/// Blanks GCC's statement attribute `__attribute__((fallthrough))` (lang-c accepts attributes
/// only on declarations; sqlite, zlib-ng and the kernel's `fallthrough` macro use it). The `;`
/// after it stays, as an empty statement, and offsets stay put.
/// Returns the ranges it blanked.
fn blank_fallthrough(text: &mut String) -> Vec<(usize, usize)> {
    const KEY: &str = "__attribute__";
    let mut ranges = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(KEY).map(|i| from + i) {
        from = i + KEY.len();
        let mut j = from;
        let expect = |j: &mut usize, what: &[u8]| {
            while *j < bytes.len() && bytes[*j].is_ascii_whitespace() {
                *j += 1;
            }
            let ok = bytes[*j..].starts_with(what);
            if ok {
                *j += what.len();
            }
            ok
        };
        let matched = expect(&mut j, b"(")
            && expect(&mut j, b"(")
            && (expect(&mut j, b"fallthrough") || expect(&mut j, b"__fallthrough__"))
            && expect(&mut j, b")")
            && expect(&mut j, b")");
        let mut k = j;
        if matched && expect(&mut k, b";") {
            ranges.push((i, j));
            from = j;
        }
    }
    for &(s, e) in &ranges {
        text.replace_range(s..e, &" ".repeat(e - s));
    }
    ranges
}

/// Turns the compiler's stderr into one diagnostic at the first `file:line:col: error:`.
fn compiler_error(stderr: &str, cwd: &Path, compiler: &str) -> Diagnostic {
    let mut includes = Vec::new();
    let mut first: Option<(String, u32, u32, String)> = None;
    let mut others = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line
            .strip_prefix("In file included from ")
            .or_else(|| line.trim_start().strip_prefix("from "))
        {
            if first.is_none() {
                includes.push(rest.trim_end_matches([',', ':']).to_string());
            }
            continue;
        }
        if let Some(parsed) = parse_error_line(line) {
            if first.is_none() {
                first = Some(parsed);
            } else if others.len() < 3 {
                others.push(line.to_string());
            }
        } else if first.is_none() && (line.contains("error:") || line.contains("fatal error")) {
            // No position (e.g. `cc1: fatal error: x.c: No such file or directory`).
            let msg = line.split_once("error:").map_or(line, |(_, m)| m).trim();
            return Diagnostic::error(format!("C preprocessor failed: {msg}"));
        }
    }
    let Some((file, line, col, msg)) = first else {
        let tail: String = stderr.lines().take(5).collect::<Vec<_>>().join("\n");
        return Diagnostic::error(format!("C preprocessor `{compiler}` failed")).with_note(
            if tail.is_empty() {
                "no error output".to_string()
            } else {
                tail
            },
        );
    };
    let mut label = Label::new(&file, line, col);
    let path = cwd.join(&file);
    if let Some(text) = std::fs::read(&path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .and_then(|t| {
            t.lines()
                .nth(line.saturating_sub(1) as usize)
                .map(str::to_string)
        })
    {
        if let Some(end) = token_end(&text, col as usize - 1) {
            label = label.with_end_col(end as u32 + 1);
        }
        label = label.with_line_text(text);
    }
    let mut d = Diagnostic::error(msg.clone()).with_primary(label);
    for inc in includes {
        d = d.with_note(format!("included from {inc}"));
    }
    for o in others {
        d = d.with_note(o);
    }
    if msg.contains("No such file or directory") {
        d = d.with_help(
            "add the directory that holds the header with -I, or analyse with the build's compile_commands.json",
        );
    }
    d
}

/// `path:line:col: [fatal ]error: message`.
fn parse_error_line(line: &str) -> Option<(String, u32, u32, String)> {
    let (head, msg) = line
        .split_once(": fatal error: ")
        .or_else(|| line.split_once(": error: "))?;
    let mut parts = head.rsplitn(3, ':');
    let col: u32 = parts.next()?.parse().ok()?;
    let ln: u32 = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    Some((file.to_string(), ln, col.max(1), msg.trim().to_string()))
}

/// End (exclusive byte index) of the token starting at `start`: a whole `<...>`/`"..."` header
/// name, an identifier, or one character.
fn token_end(text: &str, start: usize) -> Option<usize> {
    let rest = text.get(start..)?;
    let first = rest.chars().next()?;
    let len = match first {
        '<' => rest.find('>').map(|i| i + 1),
        '"' => rest[1..].find('"').map(|i| i + 2),
        c if c.is_alphanumeric() || c == '_' => {
            rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
        }
        _ => None,
    }
    .unwrap_or(first.len_utf8());
    Some(start + len.min(rest.len()))
}

/// The preprocessed text with the parser-only declarations of `warpwise_builtins.h`
/// blanked (spaces, same length, so spans stay valid): `typedef long long __int128;` lets
/// lang-c parse the type name, but a C compiler given the text must not see it.
pub fn blank_parser_shims(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_shim = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("# ") || line.starts_with("#line") {
            in_shim = line.contains("warpwise_builtins.h");
            out.push_str(line);
        } else if in_shim {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_split_quotes() {
        assert_eq!(
            shell_split(r#"gcc -DX="a b" -I'inc dir' a\ b.c"#).unwrap(),
            vec!["gcc", "-DX=a b", "-Iinc dir", "a b.c"]
        );
        assert!(shell_split("gcc \"x").is_none());
    }

    #[test]
    fn error_line() {
        assert_eq!(
            parse_error_line("a.c:3:10: fatal error: foo.h: No such file or directory"),
            Some((
                "a.c".into(),
                3,
                10,
                "foo.h: No such file or directory".into()
            ))
        );
    }
}
