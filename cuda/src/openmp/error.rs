//! Error types of the OpenMP ports: why a loop's pragma or a data region cannot be written
//! into the file, why a map section's unit cannot be written, and why `validate --target
//! openmp` could not build or run the program.
//!
//! A refusal names the file position or the code that stops the port, so that the user can
//! port by hand what warpwise declines; the command line prints them as they are.

use std::io;
use std::path::PathBuf;

use crate::plan::EmitError;
use crate::validate::RunError;
use frontend::loop_ref::LoopRef;
use profile::CompileError;

use super::validate::OFFLOAD_HELP;

/// Why a port's edits cannot be made in its file's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// An edit names a line past the end of the file (the file changed since the analysis).
    #[error("{}:{line}: no such line", path.display())]
    NoSuchLine { path: PathBuf, line: u32 },
    /// A loop's `for` or an atomic update's token is not where the analysis put it: the
    /// code is written by a macro. Checked before any edit; the loop is left out.
    #[error(
        "{}:{line}:{col}: expected `{token}` there (written by a macro?); the loop is not ported",
        path.display()
    )]
    NotAtToken {
        path: PathBuf,
        line: u32,
        col: u32,
        token: String,
    },
    /// The same, found while editing: the file is not written.
    #[error(
        "{}:{line}:{col}: expected `{token}` there (the loop is written by a macro?); the port is not written",
        path.display()
    )]
    EditNotAtToken {
        path: PathBuf,
        line: u32,
        col: u32,
        token: String,
    },
    /// A min/max update whose text `atomic compare` cannot take as written.
    #[error(
        "{}:{line}:{col}: the update cannot become `#pragma omp atomic compare`: {why}; the loop is not ported",
        path.display()
    )]
    CompareShape {
        path: PathBuf,
        line: u32,
        col: u32,
        why: String,
    },
    /// A `target` pragma is already on the loop (`line` is the pragma's).
    #[error("line {line}: the loop is already offloaded (`{directive}`)")]
    AlreadyOffloaded { line: usize, directive: String },
    /// An orphaned `omp for` is on the loop: a target region there would run once per
    /// thread of the enclosing `parallel` region.
    #[error(
        "line {line}: `{directive}` shares the loop among the threads of an enclosing `parallel` region (here or in a caller); a target region there would run once per thread: port the region by hand"
    )]
    Worksharing { line: usize, directive: String },
}

/// Why no `target data` region is written around a loop that holds ports (each
/// port then maps its own data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    /// A port maps structs or their members, which the region's clauses do not merge.
    #[error(
        "the port of {port} maps structs or their members, which a data region does not merge"
    )]
    MapsStructs { port: LoopRef },
    /// A port maps something other than a plain variable.
    #[error("the port of {port} maps `{name}`, which is not a plain variable")]
    NotPlainVariable { port: LoopRef, name: String },
    /// A `return` inside the loop would skip the copy back at the region's end.
    #[error("a `return` inside it would leave the region without copying the data back")]
    Return,
    /// A `goto` inside the loop may leave the region.
    #[error("a `goto` inside it may leave the region")]
    Goto,
    /// A port inside has an error path: its re-run on the host reads the host's copies.
    #[error(
        "the port of {port} has an error path, whose re-run of the failing iteration on the host reads the host's copies of the arrays"
    )]
    ErrorPath { port: LoopRef },
    /// The function's types could not be read.
    #[error(transparent)]
    Context(EmitError),
    /// A mapped array is assigned or declared inside the loop.
    #[error("`{name}` itself is assigned or declared inside it (line {line})")]
    AssignedInside { name: String, line: u32 },
    /// A mapped section's bounds depend on a variable the loop assigns; `section` is the
    /// section as the clause would write it.
    #[error(
        "the section of `{section}` depends on `{variable}`, which is assigned inside it (line {line}): the section is not known before the loop"
    )]
    SectionChanges {
        section: String,
        variable: String,
        line: u32,
    },
    /// The host code in the loop calls a function that may touch the mapped arrays.
    #[error("the host code calls `{function}` at line {line}, which may touch the mapped arrays")]
    UnsafeCall { function: String, line: u32 },
    /// The host code passes, copies or offsets a pointer.
    #[error(
        "the host code uses the pointer `{name}` itself at line {line} (passed, copied or offset): what it reaches is not known"
    )]
    PointerUsed { name: String, line: u32 },
    /// The host code calls through a function pointer.
    #[error("the host code calls through a pointer at line {line}")]
    CallThroughPointer { line: u32 },
    /// The host code accesses memory through an expression whose array is not known.
    #[error(
        "the host code accesses `{access}` at line {line}, and which array that reaches is not known"
    )]
    UnknownArray { access: String, line: u32 },
    /// The host code accesses memory through a pointer that may alias a mapped array.
    #[error(
        "the host code accesses `{access}` at line {line} through `{root}`, which may point into a mapped array"
    )]
    MayAlias {
        access: String,
        line: u32,
        root: String,
    },
    /// A host access in a loop header or condition around a port, where no `target
    /// update` can go.
    #[error(
        "`{access}` at line {line} is evaluated in a statement around a ported loop (a loop header or condition), where no `target update` can go"
    )]
    NoUpdatePlace { access: String, line: u32 },
    /// A host write in a statement that a `break` or `continue` may leave before the
    /// `target update` after it.
    #[error(
        "`{access}` at line {line} is written in a statement that a `break` or `continue` may leave before a `target update` after it"
    )]
    JumpsPastUpdate { access: String, line: u32 },
    /// A host access in a labeled statement: a jump to the label would skip the update.
    #[error(
        "the host access at line {line} is in a labeled statement, before which an update would be skipped"
    )]
    Labeled { line: u32 },
    /// The loop comes from a macro or a system header.
    #[error("the loop is written by a macro or in a system header")]
    LoopInMacro,
    /// The source map cannot place the loop's keyword, so no id names the region.
    #[error("the loop has no place in the source")]
    Unplaced,
    /// Host code in the loop comes from a macro or another file.
    #[error("host code in it is written by a macro or in another file")]
    HostCodeInMacro,
    /// A port inside the region is not written, so its loop would run on the host with
    /// the device's copy the newer one.
    #[error("{port} inside it is not ported")]
    PortNotWritten { port: LoopRef },
    /// The region's line is past the end of the file.
    #[error("{}:{line}: no such line", path.display())]
    NoSuchLine { path: PathBuf, line: u32 },
    /// The loop's keyword is not where the analysis put it: the code is written by a macro.
    #[error("{}:{line}:{col}: expected `{keyword}` there (written by a macro?)", path.display())]
    NotAtKeyword {
        path: PathBuf,
        line: u32,
        col: u32,
        keyword: String,
    },
    /// A pragma right above the loop applies to it; the region's would come between.
    #[error("line {line}: a `#pragma` applies to the loop; the data region would separate them")]
    PragmaAbove { line: u32 },
}

/// Why the unit an OpenMP section of an array counts in cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The variable's declaration was not found.
    #[error("the declared type of `{name}` is not known")]
    UnknownType { name: String },
    /// The variable is not declared where the loop is: only its callees name it.
    #[error(
        "`{name}` is not declared where the loop is: only the loop's callees name it (a `static` inside a callee or of another file), and a map clause at the loop cannot"
    )]
    NotInScope { name: String },
    /// The variable is neither an array nor a pointer.
    #[error("`{name}` is neither an array nor a pointer")]
    NotArrayOrPointer { name: String },
    /// An array of arrays with more than one variable dimension.
    #[error(
        "`{name}` is an array of arrays whose row size warpwise cannot write (more than one variable dimension)"
    )]
    VariableRows { name: String },
}

/// Why `validate --target openmp` could not build or run the programs.
#[derive(Debug, thiserror::Error)]
pub enum OffloadError {
    /// The probe's temporary directory could not be created.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] io::Error),
    /// A directory of the builds could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A source file could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// None of the compilers tried builds an offload program.
    #[error(
        "no compiler among `{}` builds an OpenMP offload program; {}",
        candidates.join("`, `"),
        OFFLOAD_HELP
    )]
    NoCompiler { candidates: Vec<String> },
    /// A compile or the link failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// A program could not be run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The original program's output does not match `--expect`: the pattern, or the
    /// program's run before any port, is wrong; nothing can be said of the port.
    #[error(
        "the original program's output does not match `--expect {pattern}` (exit status {status}); fix the pattern or the program's arguments: the port is judged by it"
    )]
    ExpectOriginal { pattern: String, status: String },
}
