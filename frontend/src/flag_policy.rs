//! Which compiler flags warpwise passes to the preprocessor: an allow-list, because the flags
//! of a `compile_commands.json` are data from whoever wrote the file, and some compiler flags
//! run code (`-fplugin=x.so`, `-B dir`, `-wrapper`, `-specs=`, `-Xclang -load`) or read
//! options from files (`@file`, `--config`).
//!
//! A flag is kept when it changes what the preprocessor produces and does nothing else
//! (include paths, macros, the language standard, target and feature flags that only set
//! predefined macros). Flags that cannot matter to preprocessing are dropped silently; every
//! other flag is dropped and reported, so the user sees what was ignored.

/// Flags whose value is the next argument, dropped with it (and reported). Listing them
/// keeps the value from being read as a flag of its own (`-Xclang -fplugin=x.so`).
pub const DROP_WITH_VALUE_REPORTED: &[&str] = &[
    "-Xclang",
    "-Xpreprocessor",
    "-Xassembler",
    "-Xcuda-ptxas",
    "-Xopenmp-target",
    "-mllvm",
    "-wrapper",
    "-specs",
    "-B",
    "--param",
    "--config",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-load",
    "-fplugin",
    "-fpass-plugin",
];

/// Flags whose value is the next argument and that do not matter to preprocessing.
pub const DROP_WITH_VALUE_SILENT: &[&str] = &[
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
];

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
    if arg == "-ansi"
        || arg == "-pthread"
        || arg.starts_with("-isystem")
        || arg.starts_with("-iquote")
        || arg.starts_with("-idirafter")
        || arg.starts_with("--sysroot=")
        || arg.starts_with("--target=")
        || (arg.starts_with("-O") && !arg.starts_with("-Ob"))
    {
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
            "-isystem/usr/include/x",
            "--target=x86_64-linux-gnu",
        ] {
            check(arg, Verdict::Keep);
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
