//! The program built for the CPU in a private directory: each CUDA file with its launches
//! rewritten (`rewrite`), compiled as C++ with the shim and `warpwise_dynamic.h`
//! force-included and ThreadSanitizer's instrumentation, whose hooks
//! (`warpwise_dynamic_hooks.c`) are linked in place of its runtime; C and C++ files
//! compiled as they are, the runtime's set-up calls with C linkage
//! (`warpwise_dynamic_runtime.c`) linked for them. Every user file a CUDA file includes is
//! copied beside the rewritten ones, so that an include reaches the rewritten copies.
//! Paths reach the compilers absolute, so no file name is read as an option.

use super::rewrite::rewrite;
use super::{DynamicError, Request};
use advisor::check::dynamic::canonical;
use frontend::preprocess::{CompileFlags, TranslationUnitInput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RECORDER: &str = include_str!("warpwise_dynamic.h");
const HOOKS: &str = include_str!("warpwise_dynamic_hooks.c");
const RUNTIME: &str = include_str!("warpwise_dynamic_runtime.c");
/// Stand-ins for the CUDA samples' helper headers, which programs include from the samples'
/// `common/inc`: searched after the program's own include directories (`-idirafter`).
const FALLBACK_HEADERS: &[(&str, &str)] = &[
    ("helper_cuda.h", include_str!("fallback/helper_cuda.h")),
    ("helper_timer.h", include_str!("fallback/helper_timer.h")),
];
/// CUDA's headers, which the shim stands in for: empty, so that `#include <cuda.h>` finds
/// something.
const CUDA_HEADERS: &[&str] = &[
    "cuda.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "device_launch_parameters.h",
    "device_functions.h",
    "vector_types.h",
];

fn io(what: &Path) -> impl Fn(std::io::Error) -> DynamicError + '_ {
    move |e| DynamicError::Tool(format!("cannot write `{}`: {e}", what.display()))
}

fn write(path: &Path, text: impl AsRef<[u8]>) -> Result<(), DynamicError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(path, text).map_err(io(path))
}

/// Builds the program in `dir`; returns the executable.
pub fn build(request: &Request, dir: &Path) -> Result<PathBuf, DynamicError> {
    let shim = dir.join("shim");
    write(&shim.join(crate::SHIM_NAME), crate::CPU_SHIM)?;
    write(&shim.join("warpwise_dynamic.h"), RECORDER)?;
    for h in CUDA_HEADERS {
        write(&shim.join("include").join(h), "")?;
    }
    for (name, text) in FALLBACK_HEADERS {
        write(&shim.join("fallback").join(name), text)?;
    }
    // Each file with launches, rewritten, at its own absolute path under `src/`, so that
    // `#include "kernels.cu"` finds the rewritten copy beside the rewritten includer.
    let mut by_file: BTreeMap<PathBuf, Vec<(u32, u32)>> = request
        .inputs
        .iter()
        .filter(|i| is_cuda(&i.file))
        .map(|i| (canonical(&i.file), Vec::new()))
        .collect();
    for l in &request.launches {
        by_file
            .entry(canonical(&l.file))
            .or_default()
            .push((l.line, l.col));
    }
    let src = dir.join("src");
    let mut rewritten: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for (file, places) in &by_file {
        let Some(text) = rewritten_file(file, places) else {
            continue;
        };
        let copy = mirrored(&src, file);
        write(&copy, &text)?;
        rewritten.insert(file.clone(), copy);
    }
    // A launch may sit in a file that the input reaches through files without launches
    // (myocyte: main.cu includes work.cu, which includes master.cu). An include is searched
    // first beside the file that names it, so a file between, read from its own directory,
    // would find the original, unrewritten file. Every user file a CUDA unit includes is
    // therefore copied into the mirror too, at its own path: each include, quoted and
    // relative or through `-I`, resolves there as it does in the user's tree, and reaches
    // the rewritten copies. Copying only the files on a path to a launch would not do: a
    // copied file's other includes would be searched beside the copy, where its neighbours
    // are not. The files are those the preprocessor reads under the unit's own flags
    // (`-MM`: no system headers), so conditional and macro includes count as they compile.
    for input in request.inputs.iter().filter(|i| is_cuda(&i.file)) {
        for file in user_includes(input, &shim, dir)? {
            let real = canonical(&file);
            if rewritten.contains_key(&real) && real == file {
                continue;
            }
            let places = by_file.get(&real).map(Vec::as_slice).unwrap_or_default();
            let Some(text) = rewritten_file(&real, places) else {
                continue;
            };
            write(&mirrored(&src, &file), &text)?;
        }
    }
    let mut objects = Vec::new();
    // The hooks, and the runtime's set-up calls for host C files, which compile without the
    // shim.
    for (name, text) in [
        ("warpwise_dynamic_hooks.c", HOOKS),
        ("warpwise_dynamic_runtime.c", RUNTIME),
    ] {
        let file = dir.join(name);
        write(&file, text)?;
        let object = file.with_extension("o");
        let mut cmd = Command::new("cc");
        cmd.args(["-O2", "-w", "-c"])
            .arg(&file)
            .arg("-o")
            .arg(&object);
        compile(cmd, &file)?;
        objects.push(object);
    }
    for (n, input) in request.inputs.iter().enumerate() {
        let original = canonical(&input.file);
        let source = rewritten.get(&original).unwrap_or(&original);
        let object = dir.join(format!("unit{n}.o"));
        let ext = original
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        let mut cmd = match ext {
            _ if is_cuda(&original) => {
                let mut cmd = Command::new("c++");
                cmd.args([
                    "-x",
                    "c++",
                    "-std=c++14",
                    "-O1",
                    "-g",
                    "-finline-small-functions",
                ])
                .args(["-fsanitize=thread", "-fpermissive", "-w"]);
                with_shim(&mut cmd, &shim);
                cmd
            }
            "c" => {
                let mut cmd = Command::new("cc");
                cmd.args(["-O1", "-g", "-w"]);
                cmd
            }
            // C++ host code may include the program's CUDA headers: the shim, uninstrumented.
            _ => {
                let mut cmd = Command::new("c++");
                cmd.args(["-O1", "-g", "-w", "-fpermissive"]);
                with_shim(&mut cmd, &shim);
                cmd
            }
        };
        if let Some(parent) = original.parent() {
            if is_cuda(&original) {
                cmd.arg("-iquote").arg(mirrored(&src, parent));
            }
            cmd.arg("-iquote").arg(parent);
        }
        if is_cuda(&original) {
            cmd.args(mirrored_dirs(&src, input));
        }
        cmd.args(flags(input, &input.flags))
            .arg("-c")
            .arg(source)
            .arg("-o")
            .arg(&object);
        compile(cmd, &original)?;
        objects.push(object);
    }
    let exe = dir.join("program");
    let mut cmd = Command::new("c++");
    cmd.args(&objects).arg("-o").arg(&exe).args(["-lm", "-ldl"]);
    let out = cmd
        .output()
        .map_err(|e| DynamicError::Tool(format!("cannot run `c++`: {e}")))?;
    if !out.status.success() {
        return Err(DynamicError::Link(first_error(&out.stderr)));
    }
    Ok(exe)
}

/// `file`'s bytes with the launches at `places` rewritten (`rewrite`), `None` where it
/// cannot be read. A file that is not UTF-8 (Latin-1 comments: myocyte's `main.cu`) is
/// read a byte a character and written back so, its bytes unchanged but for the launches;
/// the `#line` line that names it stays UTF-8, as the path is.
fn rewritten_file(file: &Path, places: &[(u32, u32)]) -> Option<Vec<u8>> {
    let shown = file.display().to_string();
    let bytes = std::fs::read(file).ok()?;
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Some(rewrite(&text, places, &shown).0.into_bytes()),
        Err(e) => e.into_bytes(),
    };
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    let out = rewrite(&text, places, &shown).0;
    let body = out.find('\n').map_or(0, |at| at + 1);
    let mut back = out.as_bytes()[..body].to_vec();
    // Each character of the body is one of the file's bytes, or ASCII the rewrite wrote.
    back.extend(out[body..].chars().map(|c| c as u32 as u8));
    Some(back)
}

/// Where the copy of the user's `file` (absolute) lives under the mirror `src`.
fn mirrored(src: &Path, file: &Path) -> PathBuf {
    src.join(file.strip_prefix("/").unwrap_or(file))
}

/// The input's `-I` directories in the mirror, to put before the originals: an include
/// found through `-I` finds the copy first.
fn mirrored_dirs(src: &Path, input: &TranslationUnitInput) -> Vec<String> {
    flags(input, &input.flags)
        .iter()
        .filter_map(|f| f.strip_prefix("-I"))
        .map(|d| format!("-I{}", mirrored(src, Path::new(d)).display()))
        .collect()
}

/// The user's files a CUDA unit includes, as the preprocessor names them (absolute,
/// made lexically plain: `a/./b/../c` is `a/c`, so that the mirror's directories stand
/// where the includer looks), outside the build directory `dir` (the shim's headers). An
/// input that does not preprocess has none: its compile says why.
fn user_includes(
    input: &TranslationUnitInput,
    shim: &Path,
    dir: &Path,
) -> Result<Vec<PathBuf>, DynamicError> {
    let original = canonical(&input.file);
    let deps = dir.join("deps.d");
    let mut cmd = Command::new("c++");
    cmd.args([
        "-x",
        "c++",
        "-std=c++14",
        "-E",
        "-w",
        "-MM",
        "-MT",
        "x",
        "-MF",
    ])
    .arg(&deps);
    with_shim(&mut cmd, shim);
    if let Some(parent) = original.parent() {
        cmd.arg("-iquote").arg(parent);
    }
    cmd.args(flags(input, &input.flags))
        .arg(&original)
        .arg("-o")
        .arg("/dev/null");
    let ran = cmd
        .output()
        .map_err(|e| DynamicError::Tool(format!("cannot run `c++`: {e}")))?;
    let text = std::fs::read_to_string(&deps).unwrap_or_default();
    let _ = std::fs::remove_file(&deps);
    if !ran.status.success() {
        return Ok(Vec::new());
    }
    let cwd = original.parent().unwrap_or(Path::new("/"));
    Ok(make_words(&text)
        .into_iter()
        .skip(1) // the target, `x:`
        .map(|w| plain(&cwd.join(w)))
        .filter(|f| !f.starts_with(dir) && f.is_absolute())
        .collect())
}

/// The words of a make rule as `-MM` writes it: lines joined at `\\` ends, words split at
/// blanks, `\\ ` a blank inside a word and `$$` a `$`.
fn make_words(rule: &str) -> Vec<String> {
    let rule = rule.replace("\\\n", " ").replace("$$", "$");
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = rule.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| *n == ' ' || *n == '#') => {
                word.push(chars.next().unwrap_or(' '));
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `path` with its `.` and `..` parts resolved by name, not through the file system.
fn plain(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out
}

fn is_cuda(file: &Path) -> bool {
    frontend::cuda_source::is_cuda_file(file)
}

/// The input's `-I`, `-D` and `-U` flags, directories made absolute (the compiler runs
/// elsewhere).
fn flags(input: &TranslationUnitInput, flags: &CompileFlags) -> Vec<String> {
    let mut out = Vec::new();
    for d in &flags.include_dirs {
        let d = match (&input.working_dir, d.is_relative()) {
            (Some(w), true) => w.join(d),
            _ => d.clone(),
        };
        out.push(format!("-I{}", canonical(&d).display()));
    }
    for (name, value) in &flags.defines {
        out.push(match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        });
    }
    out.extend(flags.undefines.iter().map(|u| format!("-U{u}")));
    out
}

/// The shim and its `--dynamic` additions included before every line of a unit, its
/// stand-in headers (`include/`) first on the search path and the samples' helpers
/// (`fallback/`) last.
fn with_shim(cmd: &mut Command, shim: &Path) {
    cmd.arg("-include")
        .arg(shim.join(crate::SHIM_NAME))
        .arg("-include")
        .arg(shim.join("warpwise_dynamic.h"))
        .arg("-I")
        .arg(shim.join("include"))
        .arg("-idirafter")
        .arg(shim.join("fallback"));
}

fn compile(mut cmd: Command, file: &Path) -> Result<(), DynamicError> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| DynamicError::Tool(format!("cannot run {shown}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(DynamicError::Compile {
        file: file.to_path_buf(),
        first_error: first_error(&out.stderr),
    })
}

/// The compiler's first line that says `error` (the linker's first undefined reference or
/// multiple definition),
/// else its first line.
fn first_error(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find(|l| l.contains("undefined reference") || l.contains("multiple definition"))
        .or_else(|| text.lines().find(|l| l.contains("error")))
        .or_else(|| text.lines().next())
        .unwrap_or("(no message)")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_make_rule_splits_into_its_files() {
        let rule = "x: /p/main.cu /p/sub/../a\\ b.h \\\n /p/./c$$.h\n";
        assert_eq!(
            make_words(rule),
            ["x:", "/p/main.cu", "/p/sub/../a b.h", "/p/./c$.h"]
        );
        assert_eq!(plain(Path::new("/p/sub/../a b.h")), Path::new("/p/a b.h"));
        assert_eq!(plain(Path::new("/p/./c.h")), Path::new("/p/c.h"));
    }

    #[test]
    fn a_file_that_is_not_utf8_keeps_its_bytes() {
        let dir = std::env::temp_dir().join(format!("ww-latin1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.cu");
        std::fs::write(&file, b"// caf\xe9\nint main() { k<<<1, 32>>>(p); }\n").unwrap();
        let out = rewritten_file(&file, &[(2, 14)]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let body = &out[out.iter().position(|&b| b == b'\n').unwrap() + 1..];
        assert_eq!(
            body,
            b"// caf\xe9\nint main() { ww_cpu_launch(k, dim3(1), dim3(32), (size_t)(0), p); }\n"
        );
    }
}
