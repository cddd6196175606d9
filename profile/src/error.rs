//! Error types of the profiler: reading and writing profile files, and building and running
//! instrumented programs.
//!
//! Typed so that callers can tell the causes apart (a profile that is not there, one that
//! does not parse, a compiler that failed); the command line prints them as they are.

use std::io;
use std::path::PathBuf;

use frontend::diagnostic::Diagnostic;

/// Why a profile text does not parse. Every variant starts with the line in the text
/// (`LINE:COL: ` or `LINE: `), so that a caller can put the file name in front.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The text nests deeper than the YAML guard allows (a crafted file, not a profile).
    #[error("{line}:{col}: nested more than {max} levels deep: not a profile")]
    TooDeep { line: usize, col: usize, max: usize },
    /// A document is not valid YAML or not a profile's shape, at a known position.
    /// `message` is serde_yaml's, without its own position (which counts within the
    /// document, not the file).
    #[error("{line}:{col}: {message}")]
    Syntax {
        line: usize,
        col: usize,
        message: String,
        #[source]
        source: serde_yaml::Error,
    },
    /// A document that does not parse, where serde_yaml gives no position: `line` is where
    /// the document starts.
    #[error("{line}: {source}")]
    Document {
        line: usize,
        #[source]
        source: serde_yaml::Error,
    },
    /// A document of another profile schema (another version of warpwise wrote it).
    #[error("{line}: unsupported profile schema `{schema}` (expected `{expected}`)")]
    Schema {
        line: usize,
        schema: String,
        /// The schema this version reads (`model::PROFILE_SCHEMA`).
        expected: &'static str,
    },
    /// A document that counts more incomplete runs than runs.
    #[error("{line}: {incomplete} incomplete runs of {runs} runs in all")]
    IncompleteRuns {
        line: usize,
        incomplete: u64,
        runs: u64,
    },
}

impl ParseError {
    /// The line of the text the error is on, from 1.
    pub fn line(&self) -> usize {
        match self {
            ParseError::TooDeep { line, .. }
            | ParseError::Syntax { line, .. }
            | ParseError::Document { line, .. }
            | ParseError::Schema { line, .. }
            | ParseError::IncompleteRuns { line, .. } => *line,
        }
    }

    /// The column, from 1, where the parser gives one.
    pub fn column(&self) -> Option<usize> {
        match self {
            ParseError::TooDeep { col, .. } | ParseError::Syntax { col, .. } => Some(*col),
            _ => None,
        }
    }
}

/// Why a profile file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file exists but cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file does not parse: `path:LINE:COL: ...`.
    #[error("{}:{source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: ParseError,
    },
    /// Neither the file nor a snapshot of a killed run next to it exists.
    #[error("no profile at `{}`", path.display())]
    Missing { path: PathBuf },
    /// The merged profile could not be turned into YAML.
    #[error("{0}")]
    Serialize(#[source] serde_yaml::Error),
    /// The merged profile could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Why a C compiler command failed.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The compiler could not be started (not installed, not executable).
    #[error("cannot run the C compiler ({command}): {source}")]
    Spawn {
        /// The command line as `Command`'s `Debug` shows it.
        command: String,
        #[source]
        source: io::Error,
    },
    /// The compiler ran and failed; `stderr` is what it said.
    #[error("the C compiler failed: {command}\n{stderr}")]
    Failed { command: String, stderr: String },
}

impl CompileError {
    /// What the compiler printed on stderr when it failed; empty when it did not run.
    pub fn stderr(&self) -> &str {
        match self {
            CompileError::Failed { stderr, .. } => stderr,
            CompileError::Spawn { .. } => "",
        }
    }
}

/// Why an instrumented program could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A directory for the build could not be created.
    #[error("cannot create `{}`: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The runtime's source files could not be written into the build directory.
    #[error("cannot write the runtime to `{}`: {source}", dir.display())]
    WriteRuntime {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    /// An instrumented source file could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A file could not be loaded or instrumented; the diagnostic says where and why.
    #[error("{}", .0.render(false))]
    Instrument(Box<Diagnostic>),
    /// A compile or the link failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The built program could not be started.
    #[error("cannot run `{}`: {source}", exe.display())]
    Spawn {
        exe: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Waiting for the running program failed.
    #[error("cannot wait for the program: {0}")]
    Wait(#[source] io::Error),
    /// Reaping the program after it was killed at the timeout failed.
    #[error("{0}")]
    Reap(#[source] io::Error),
}
