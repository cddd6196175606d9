//! For the unit tests: a C source loaded as a unit from a fresh, private directory.

use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};

/// The unit of `source`, with the directory holding its file: the unit reads the file's
/// lines again for diagnostics, so callers keep the guard while they use the unit (the
/// directory is removed when it drops).
pub(crate) fn unit(source: &str) -> (tempfile::TempDir, Unit) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-advisor-test-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("t.c");
    std::fs::write(&file, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    (dir, unit)
}
