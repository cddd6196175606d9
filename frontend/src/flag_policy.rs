//! Which compiler flags warpwise passes to the preprocessor: an allow-list, because the flags
//! of a `compile_commands.json` are data from whoever wrote the file, and some compiler flags
//! run code (`-fplugin=x.so`, `-B dir`, `-wrapper`, `-specs=`, `-Xclang -load`) or read
//! options from files (`@file`, `--config`, `-include-pch`).
//!
//! A flag is kept when it changes what the preprocessor produces and does nothing else
//! (include paths, macros, the language standard, target and feature flags that only set
//! predefined macros). Flags that cannot matter to preprocessing are dropped silently; every
//! other flag is dropped and reported, so the user sees what was ignored. The policy decides
//! on a flag together with its value ([`crate::compile_args`] pairs them); what it keeps is
//! one word each, so the rebuilt command has no value standing apart from its flag.

/// Flags with a value that do not matter to preprocessing and do nothing else worth a word.
const VALUED_SILENT: &[&str] = &[
    "-o",
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-Xlinker",
    "-L",
    "-l",
    "-arch",
    "-aux-info",
    "-e",
    "-u",
    "-z",
    "--output",
    "--language",
    "--library-directory",
    "--for-linker",
    "--force-link",
];

/// Include-path flags kept with their value joined to them (`-isystem/usr/x`): gcc and
/// clang both read the joined spelling, and a joined word cannot split.
const VALUED_PATH_KEPT: &[&str] = &["-isystem", "-iquote", "-idirafter", "-imacros", "-isysroot"];

/// What to do with a flag that has a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValuedVerdict {
    /// `-I DIR`.
    IncludeDir,
    /// `-D NAME[=VALUE]`.
    Define,
    /// `-U NAME`.
    Undefine,
    /// `-include FILE`.
    ForcedInclude,
    /// Kept as this one word (`-isystem/usr/x`, `--sysroot=/s`, `--target=x86_64-linux-gnu`).
    KeepJoined(String),
    /// Irrelevant to preprocessing (`-o a.o`, `-MF a.d`, `-l m`).
    DropSilently,
    /// Dropped and reported: it may run code or read a file of options (`-Xclang -load`,
    /// `-include-pch`, `--param`), or its value is empty (`-D ""` would leave a bare `-D`
    /// that takes the next word).
    DropReported,
}

/// The verdict for the flag `name` with its value `value`.
pub fn valued_flag(name: &str, value: &str) -> ValuedVerdict {
    use crate::compile_args::safe_path;
    if value.is_empty() {
        return if VALUED_SILENT.contains(&name) {
            ValuedVerdict::DropSilently
        } else {
            ValuedVerdict::DropReported
        };
    }
    match name {
        "-I" | "--include-directory" => ValuedVerdict::IncludeDir,
        "-D" | "--define-macro" if !value.starts_with('=') => ValuedVerdict::Define,
        "-U" | "--undefine-macro" => ValuedVerdict::Undefine,
        "-include" | "--include" => ValuedVerdict::ForcedInclude,
        "--sysroot" => ValuedVerdict::KeepJoined(format!("--sysroot={}", safe_path(value))),
        // Only clang knows it; `CompileFlags::to_args` leaves it out for other compilers.
        "-target" | "--target" if is_plain_word(value) => {
            ValuedVerdict::KeepJoined(format!("--target={value}"))
        }
        _ if VALUED_PATH_KEPT.contains(&name) => {
            ValuedVerdict::KeepJoined(format!("{name}{}", safe_path(value)))
        }
        _ if VALUED_SILENT.contains(&name) => ValuedVerdict::DropSilently,
        _ => ValuedVerdict::DropReported,
    }
}

/// A target triple or similar value: letters, digits, `-`, `_`, `.`, not starting with `-`.
fn is_plain_word(value: &str) -> bool {
    !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Whether `arg`, kept in `CompileFlags::extra`, stands on its own: not a flag that would
/// take the next word as its value. Everything the policy keeps is; a hand-built list is
/// checked too.
pub fn is_single_word_flag(arg: &str) -> bool {
    use crate::compile_args::{split, Word};
    arg.starts_with('-')
        && matches!(
            split(&[arg]).as_slice(),
            [Word::Flag { missing: false, .. }]
        )
        && classify_kept(arg)
}

/// Whether `arg` is a word the policy keeps: a single flag it accepts, or a macro,
/// include-path, sysroot or target flag with its value joined.
fn classify_kept(arg: &str) -> bool {
    use crate::compile_args::{split, Word};
    match split(&[arg]).as_slice() {
        [Word::Flag {
            name,
            value: Some(value),
            ..
        }] => match valued_flag(name, value) {
            ValuedVerdict::KeepJoined(_) | ValuedVerdict::Define | ValuedVerdict::Undefine => true,
            // `-I-` is a flag of its own; a path starting with `-` or `@` must not be joined.
            ValuedVerdict::IncludeDir | ValuedVerdict::ForcedInclude => {
                crate::compile_args::safe_path(value) == *value
            }
            _ => false,
        },
        [Word::Flag { name, .. }] => classify(name) == Verdict::Keep,
        _ => false,
    }
}

/// `-f` flags that only set predefined macros or language rules the preprocessor follows.
/// An entry ending in `=` or `-` matches as a prefix.
const F_FLAGS_KEPT: &[&str] = &[
    "-fopenmp",
    "-fno-openmp",
    "-fopenmp-simd",
    "-fopenmp-version=",
    "-fopenmp-targets=",
    "-fopenacc",
    "-fsigned-char",
    "-funsigned-char",
    "-fno-signed-char",
    "-fno-unsigned-char",
    "-fshort-enums",
    "-fno-short-enums",
    "-fshort-wchar",
    "-fno-short-wchar",
    "-fgnu89-inline",
    "-fno-gnu89-inline",
    "-fbuiltin",
    "-fno-builtin",
    "-fno-builtin-",
    "-fpic",
    "-fPIC",
    "-fpie",
    "-fPIE",
    "-fno-pic",
    "-fno-PIC",
    "-fno-pie",
    "-fno-PIE",
    "-ffast-math",
    "-fno-fast-math",
    "-ffinite-math-only",
    "-fno-finite-math-only",
    "-funsafe-math-optimizations",
    "-fno-unsafe-math-optimizations",
    "-fmath-errno",
    "-fno-math-errno",
    "-ffreestanding",
    "-fhosted",
    "-fwrapv",
    "-fno-wrapv",
    "-fms-extensions",
    "-fno-ms-extensions",
    "-fexceptions",
    "-fno-exceptions",
    "-fasm",
    "-fno-asm",
    "-fgnu-keywords",
    "-fno-gnu-keywords",
    "-fdollars-in-identifiers",
    "-fno-dollars-in-identifiers",
    "-fextended-identifiers",
    "-fcommon",
    "-fno-common",
    "-fstrict-aliasing",
    "-fno-strict-aliasing",
    "-fvisibility=",
    "-finput-charset=",
    "-fexec-charset=",
    "-fwide-exec-charset=",
    "-fsingle-precision-constant",
    "-fcx-limited-range",
    "-fno-trapping-math",
    "-ftrapping-math",
    "-fomit-frame-pointer",
    "-fno-omit-frame-pointer",
];

/// What to do with one flag (its value, for flags that take one, is handled by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Passed to the preprocessor.
    Keep,
    /// Irrelevant to preprocessing (`-c`, `-g`, `-Wall`): dropped without a word.
    DropSilently,
    /// Dropped and reported: it may run code, read options from a file, or change the
    /// preprocessor's output in a way warpwise does not vouch for.
    DropReported,
}

/// The verdict for a flag that is not one of the with-value flags above, `-I`/`-D`/`-U`,
/// `-std=` or `-include` (which the caller keeps itself).
pub fn classify(arg: &str) -> Verdict {
    if arg.starts_with('@') {
        // A response file: options from a file nobody checked.
        return Verdict::DropReported;
    }
    if !arg.starts_with('-') {
        return Verdict::Keep;
    }
    if let Some(f) = arg.strip_prefix("-f") {
        if is_diagnostic_flag(arg) || f.starts_with("no-diagnostics") {
            return Verdict::DropSilently;
        }
        let kept = F_FLAGS_KEPT
            .iter()
            .any(|k| arg == *k || ((k.ends_with('=') || k.ends_with('-')) && arg.starts_with(k)))
            || arg.starts_with("-fopenmp-");
        return if kept {
            Verdict::Keep
        } else {
            Verdict::DropReported
        };
    }
    if arg == "-ansi" || arg == "-pthread" || (arg.starts_with("-O") && !arg.starts_with("-Ob")) {
        // These change predefined macros (`__OPTIMIZE__`, `__STRICT_ANSI__`, ...) or where
        // headers come from.
        return Verdict::Keep;
    }
    if arg.starts_with("-m") && !arg.starts_with("-mllvm") {
        // Target features: `__AVX__`, `__x86_64__` and friends.
        return Verdict::Keep;
    }
    let silent = [
        "-c", "-S", "-E", "-w", "-v", "-s", "-pipe", "-shared", "-static",
    ];
    let silent_prefixes = [
        "-g",
        "-M",
        "-pedantic",
        "-rdynamic",
        "-L",
        "-l",
        "-save-temps",
        "-Q",
        "-time",
    ];
    let linker_or_tools =
        arg.starts_with("-Wl,") || arg.starts_with("-Wa,") || arg.starts_with("-Wp,");
    if silent.contains(&arg)
        || silent_prefixes.iter().any(|p| arg.starts_with(p))
        || (arg.starts_with("-W") && !linker_or_tools)
    {
        return Verdict::DropSilently;
    }
    Verdict::DropReported
}

/// Flags that only change the compiler's messages or its outputs besides the preprocessed
/// text.
pub fn is_diagnostic_flag(arg: &str) -> bool {
    [
        "-fdiagnostics",
        "-fcolor",
        "-fno-color",
        "-fmessage-length",
        "-fdump",
        "-fprofile",
        "-fsanitize",
        "-fno-sanitize",
        "-fcoverage",
        "-fstack",
    ]
    .iter()
    .any(|p| arg.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(arg: &str, expected: Verdict) {
        assert_eq!(classify(arg), expected, "{arg}");
    }

    #[test]
    fn flags_that_run_code_or_read_option_files_are_reported() {
        for arg in [
            "-fplugin=./evil.so",
            "-fplugin-arg-evil-x=1",
            "-fpass-plugin=./evil.so",
            "-specs=./evil.specs",
            "-B./evil",
            "-Wp,-fplugin=./evil.so",
            "-Wl,--wrap=main",
            "@flags.rsp",
            "--config=./evil.cfg",
            "-fload-plugin",
            "-frandom-new-flag",
        ] {
            check(arg, Verdict::DropReported);
        }
    }

    #[test]
    fn flags_that_only_shape_preprocessing_are_kept() {
        for arg in [
            "-fopenmp",
            "-fopenmp-simd",
            "-fno-builtin-memcpy",
            "-funsigned-char",
            "-fvisibility=hidden",
            "-O2",
            "-mavx2",
            "-m64",
            "-pthread",
            "-ansi",
        ] {
            check(arg, Verdict::Keep);
        }
    }

    fn check_valued(name: &str, value: &str, expected: ValuedVerdict) {
        assert_eq!(valued_flag(name, value), expected, "{name} {value:?}");
    }

    #[test]
    fn flags_with_values_are_decided_with_their_value() {
        let joined = |s: &str| ValuedVerdict::KeepJoined(s.to_string());
        check_valued(
            "-isystem",
            "/usr/include/x",
            joined("-isystem/usr/include/x"),
        );
        check_valued("-isystem", "-MD", joined("-isystem./-MD"));
        check_valued(
            "-iquote",
            "-fplugin=./evil.so",
            joined("-iquote./-fplugin=./evil.so"),
        );
        check_valued("--sysroot", "/s", joined("--sysroot=/s"));
        check_valued(
            "-target",
            "x86_64-linux-gnu",
            joined("--target=x86_64-linux-gnu"),
        );
        check_valued("-target", "-fplugin=x", ValuedVerdict::DropReported);
        for (name, value) in [
            ("-include-pch", "-fplugin=./evil.so"),
            ("-Xclang", "-load"),
            ("-Xpreprocessor", "-fplugin=x"),
            ("--param", "x=1"),
            ("-D", ""),
            ("-U", ""),
            ("-I", ""),
            ("-include", ""),
            ("-D", "=x"),
            ("-B", "."),
            ("-wrapper", "sh"),
            ("-specs", "x"),
        ] {
            check_valued(name, value, ValuedVerdict::DropReported);
        }
        check_valued("-o", "a.o", ValuedVerdict::DropSilently);
        check_valued("-MF", "a.d", ValuedVerdict::DropSilently);
        check_valued("-D", "X=1", ValuedVerdict::Define);
    }

    #[test]
    fn only_words_that_stand_alone_are_single_word_flags() {
        for arg in [
            "-O2",
            "-fopenmp",
            "-isystem/x",
            "--sysroot=/s",
            "-mavx2",
            "-DX=1",
            "-Iinc",
        ] {
            assert!(is_single_word_flag(arg), "{arg}");
        }
        for arg in [
            "-isystem",
            "-iquote",
            "-MD",
            "-include",
            "-fplugin=x",
            "x.c",
            "-I",
            "-I-",
        ] {
            assert!(!is_single_word_flag(arg), "{arg}");
        }
    }

    #[test]
    fn irrelevant_flags_are_dropped_quietly() {
        for arg in [
            "-c",
            "-g3",
            "-Wall",
            "-Werror=format",
            "-MD",
            "-pedantic",
            "-fdiagnostics-color",
            "-w",
        ] {
            check(arg, Verdict::DropSilently);
        }
    }
}
