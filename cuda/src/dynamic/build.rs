//! The program built for the CPU in a private directory: each CUDA file with its launches
//! rewritten (`rewrite`), compiled as C++ with the shim and `warpwise_dynamic.h`
//! force-included and ThreadSanitizer's instrumentation, whose hooks
//! (`warpwise_dynamic_hooks.c`) are linked in place of its runtime; C and C++ files
//! compiled as they are. Paths reach the compilers absolute, so no file name is read as an
//! option.

use super::rewrite::rewrite;
use super::{DynamicError, Request};
use advisor::check::dynamic::canonical;
use frontend::preprocess::{CompileFlags, TranslationUnitInput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RECORDER: &str = include_str!("warpwise_dynamic.h");
const HOOKS: &str = include_str!("warpwise_dynamic_hooks.c");
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

fn write(path: &Path, text: &str) -> Result<(), DynamicError> {
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
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let (text, _missed) = rewrite(&text, places, &file.display().to_string());
        let copy = src.join(file.strip_prefix("/").unwrap_or(file));
        write(&copy, &text)?;
        rewritten.insert(file.clone(), copy);
    }
    let hooks = dir.join("warpwise_dynamic_hooks.c");
    write(&hooks, HOOKS)?;
    let mut objects = Vec::new();
    let hooks_object = dir.join("hooks.o");
    let mut cmd = Command::new("cc");
    cmd.args(["-O2", "-w", "-c"])
        .arg(&hooks)
        .arg("-o")
        .arg(&hooks_object);
    compile(cmd, &hooks)?;
    objects.push(hooks_object);
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
            cmd.arg("-iquote").arg(parent);
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

/// The shim and its `--dynamic` additions included before every line of a unit, and its
/// stand-in headers (`include/`) first on the search path.
fn with_shim(cmd: &mut Command, shim: &Path) {
    cmd.arg("-include")
        .arg(shim.join(crate::SHIM_NAME))
        .arg("-include")
        .arg(shim.join("warpwise_dynamic.h"))
        .arg("-I")
        .arg(shim.join("include"));
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
