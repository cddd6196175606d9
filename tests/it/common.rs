//! Helpers the command-line test modules share: the `warpwise` binary run from the
//! repository root, its output as one text, and a fresh scratch directory per call.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory under the tests' target directory, `PREFIX-PID-N-NAME`: tests run in
/// parallel, and a rerun must not see a previous run's files.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{prefix}-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `warpwise ARGS...` run from the repository root.
pub fn warpwise(args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

/// What a run printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
