//! Where results go: the output format (text on a terminal, YAML otherwise), serialization
//! and writing to stdout or `-o FILE`.

use clap::ValueEnum;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The formats of `--format` (`analyze`, `instantiate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Yaml,
    Json,
    /// SARIF 2.1.0 (code scanning, editors), `analyze` only.
    Sarif,
    /// One self-contained HTML page (`-o report.html`), `analyze` only.
    Html,
}

/// The format asked for, else text on a terminal and YAML in a pipe or file.
pub fn resolve_format(format: Option<Format>, output: Option<&Path>) -> Format {
    let to_terminal = output.is_none() && std::io::stdout().is_terminal();
    format.unwrap_or(if to_terminal {
        Format::Text
    } else {
        Format::Yaml
    })
}

/// YAML or JSON of `value`; `None` for text (the caller renders it).
pub fn serialize<T: Serialize>(value: &T, format: Format) -> Option<String> {
    match format {
        Format::Yaml => Some(
            profile::yaml_out::to_string(value)
                .unwrap_or_else(|e| format!("# cannot serialize: {e}\n")),
        ),
        Format::Json => Some(
            serde_json::to_string_pretty(value)
                .map(|s| s + "\n")
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n")),
        ),
        Format::Text | Format::Sarif | Format::Html => None,
    }
}

/// Writes `text` to `output` (replacing a symlink there, never writing through it), or
/// stdout.
pub fn write_text(text: &str, output: Option<&Path>) -> Result<(), String> {
    write_text_bytes(text.as_bytes(), output)
}

fn write_text_bytes(bytes: &[u8], output: Option<&Path>) -> Result<(), String> {
    match output {
        Some(path) => frontend::files::write_output(path, bytes)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display())),
        None => match std::io::stdout()
            .lock()
            .write_all(bytes)
            .and_then(|()| std::io::stdout().lock().flush())
        {
            // The reader stopped reading (`warpwise analyze src | head`): what it wanted
            // it has, as with a program that SIGPIPE ends.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.map_err(|e| e.to_string()),
        },
    }
}

/// Refuses (exit 2) an output path that is one of the command's inputs, however spelled:
/// `analyze x.c -o x.c` must not replace the program with its report.
pub fn refuse_clobbering(output: Option<&Path>, inputs: &[PathBuf]) -> Result<(), String> {
    let Some(output) = output else {
        return Ok(());
    };
    match frontend::files::clobbered_input(output, inputs) {
        Some(input) => Err(format!(
            "the output `{}` is the input `{}`; refusing to overwrite it (choose another -o)",
            output.display(),
            input.display()
        )),
        None => Ok(()),
    }
}

/// The files a set of translation units reads, as paths from here.
pub fn unit_paths(inputs: &[frontend::preprocess::TranslationUnitInput]) -> Vec<PathBuf> {
    inputs
        .iter()
        .map(|u| match &u.working_dir {
            Some(dir) => dir.join(&u.file),
            None => u.file.clone(),
        })
        .collect()
}

/// Refuses (exit 2) a profile path that holds something other than a file or a symlink
/// (which is replaced): the instrumented program appends its runs to the profile and
/// `warpwise profile` reads them back and rewrites it, which a device or FIFO cannot take,
/// and `--fresh` would delete `/dev/null` itself.
pub fn refuse_special_profile(profile: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(profile) {
        // The program appends without following links (O_NOFOLLOW): through a link the run
        // would be lost and the old data reported.
        Ok(meta) if meta.is_symlink() => Err(format!(
            "the profile `{}` is a symbolic link; the program appends its runs only to a \
             regular file (name the file the link points to, or another one, with -o)",
            profile.display()
        )),
        Ok(meta) if !meta.is_file() => Err(format!(
            "the profile `{}` is not a regular file; the program appends its runs to it \
             and warpwise reads them back (choose a file for -o)",
            profile.display()
        )),
        _ => Ok(()),
    }
}

/// Output written a piece at a time (a report of many loops, each written as it is made):
/// into the temporary file that replaces `-o FILE` at [`Sink::finish`], as [`write_text`]
/// does, or, for stdout and the paths written in place, into an anonymous temporary file
/// copied there at the end. A run that fails before `finish` writes nothing.
#[derive(Debug)]
pub struct Sink {
    file: std::io::BufWriter<SinkFile>,
    output: Option<PathBuf>,
}

#[derive(Debug)]
enum SinkFile {
    Staged(frontend::files::Staged),
    Spooled(std::fs::File),
}

impl Write for SinkFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            SinkFile::Staged(s) => s.write(buf),
            SinkFile::Spooled(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            SinkFile::Staged(s) => s.flush(),
            SinkFile::Spooled(f) => f.flush(),
        }
    }
}

/// The error `write_text` gives for `output`.
fn cannot_write(output: Option<&Path>, e: std::io::Error) -> String {
    match output {
        Some(path) => format!("cannot write `{}`: {e}", path.display()),
        None => e.to_string(),
    }
}

impl Sink {
    pub fn new(output: Option<&Path>) -> Result<Sink, String> {
        let staged = match output {
            Some(path) => {
                frontend::files::stage_output(path).map_err(|e| cannot_write(output, e))?
            }
            None => None,
        };
        let file = match staged {
            Some(s) => SinkFile::Staged(s),
            None => SinkFile::Spooled(tempfile::tempfile().map_err(|e| cannot_write(output, e))?),
        };
        Ok(Sink {
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            output: output.map(Path::to_path_buf),
        })
    }

    /// Puts what was written where it goes.
    pub fn finish(self) -> Result<(), String> {
        let output = self.output;
        let file = self
            .file
            .into_inner()
            .map_err(|e| cannot_write(output.as_deref(), e.into_error()))?;
        match file {
            SinkFile::Staged(s) => s
                .commit(false)
                .map_err(|e| cannot_write(output.as_deref(), e)),
            SinkFile::Spooled(mut f) => {
                use std::io::{Read, Seek};
                f.rewind().map_err(|e| e.to_string())?;
                match &output {
                    // A FIFO or a device: written in place as `write_text` does.
                    Some(_) => {
                        let mut bytes = Vec::new();
                        f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
                        write_text_bytes(&bytes, output.as_deref())
                    }
                    None => {
                        let stdout = std::io::stdout();
                        let mut lock = stdout.lock();
                        match std::io::copy(&mut f, &mut lock).and_then(|_| lock.flush()) {
                            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                            other => other.map(|_| ()).map_err(|e| e.to_string()),
                        }
                    }
                }
            }
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}
