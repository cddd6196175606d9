//! Compiles and runs every C sample under `samples/`: each must build with
//! `cc -std=c99 -O1 -Wall -Wextra -Werror`, exit with status 0 and print a
//! `checksum:` line.  For several samples the exact checksum is checked.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const FLAGS: [&str; 5] = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"];

/// Checksums of the samples whose values are exact on every IEEE platform
/// (integer arithmetic, or floats holding small integers).
const EXPECTED: [(&str, &str); 12] = [
    ("aliasing", "1100100"),
    ("char_cast", "3957290333598"),
    ("dot_product", "-66383634"),
    ("every_fourth_add", "833613"),
    ("get_index", "4247862"),
    ("histogram", "8418955"),
    ("matmul", "1823329"),
    ("matrix_add", "10192669384315996406"),
    ("matrix_add_struct", "4586513"),
    ("prefix_sum", "23663300"),
    ("reconstruction_example", "2279"),
    ("vector_add", "153069771"),
];

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// A fresh directory for one compilation, unique per process and call.
fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("samples_run")
        .join(format!("{}-{}-{}", std::process::id(), n, name));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles and runs `samples/<sample>.c`; returns the checksum value.
fn compile_and_run(sample: &str) -> String {
    let src = samples_dir().join(format!("{sample}.c"));
    assert!(src.is_file(), "missing sample {}", src.display());
    let dir = scratch_dir(sample);
    let exe = dir.join(sample);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args(FLAGS)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{sample}.c does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{sample} exited with {}:\n{stdout}{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let sums: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("checksum:"))
        .map(str::trim)
        .collect();
    assert_eq!(
        sums.len(),
        1,
        "{sample}: expected one checksum line in:\n{stdout}"
    );
    assert!(!sums[0].is_empty(), "{sample}: empty checksum");
    sums[0].to_string()
}

/// Runs a sample; with `Some(value)` also checks its exact checksum.
fn check(sample: &str, expected_checksum: Option<&str>) {
    let got = compile_and_run(sample);
    if let Some(want) = expected_checksum {
        assert_eq!(got, want, "{sample}: checksum");
    }
}

fn all_samples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(samples_dir())
        .expect("read samples/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_sample_compiles_runs_and_prints_a_checksum() {
    let names = all_samples();
    assert!(
        names.len() >= 19,
        "expected at least 19 samples, found {names:?}"
    );
    for name in &names {
        let expected = EXPECTED.iter().find(|(s, _)| s == name).map(|(_, v)| *v);
        check(name, expected);
    }
}

#[test]
fn expected_checksums_name_existing_samples() {
    let names = all_samples();
    for (sample, _) in EXPECTED {
        assert!(names.iter().any(|n| n == sample), "no sample {sample}.c");
    }
}

#[test]
fn every_sample_header_states_known_answers() {
    for name in all_samples() {
        let text = std::fs::read_to_string(samples_dir().join(format!("{name}.c"))).unwrap();
        assert!(
            text.starts_with("/*"),
            "{name}.c must start with a comment block"
        );
        let header = &text[..text.find("*/").expect("closed header")];
        assert!(
            header.contains("Known answers"),
            "{name}.c: no known answers"
        );
        assert!(
            header.contains("GPU-friendly"),
            "{name}.c: no GPU-friendly verdict"
        );
        let lines = text.lines().count();
        assert!((30..=120).contains(&lines), "{name}.c has {lines} lines");
    }
}
