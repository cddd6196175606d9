//! docs/tutorial.md's commands run as written on the program it uses, kissfft 131.1.0 from
//! Debian (`python3 tools/realapps.py fetch kissfft`, into `$WARPWISE_REALAPPS` or
//! `~/.cache/warpwise-realapps`). Every line of the tutorial's `sh` blocks runs, in order,
//! with `sh` in a fresh copy of the program's directory and this build's `warpwise` first on
//! the `PATH`, and must exit 0; the fetch and the `cd` into the fetched copy are what the
//! copy stands for. Then the files the tutorial says the commands write must exist.
//!
//! Without the fetched copy the test is skipped with the reason printed, unless `CI` is
//! set (`.ci/run` fetches it). Without clang-16 the `validate --target openmp` step is
//! skipped likewise, unless `WARPWISE_REQUIRE_OFFLOAD` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = "kissfft-131.1.0";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fetched copy, if there is one.
fn fetched() -> Option<PathBuf> {
    let base = std::env::var_os("WARPWISE_REALAPPS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/warpwise-realapps"))
        })?;
    let dir = base.join(PROGRAM);
    dir.join("kiss_fft.c").is_file().then_some(dir)
}

/// The lines of the tutorial's ```sh blocks, `\` continuations joined.
fn commands(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        let fence = line.trim_start();
        if fence.starts_with("```") {
            in_sh = !in_sh && fence == "```sh";
            continue;
        }
        if !in_sh || line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\'));
        pending.push(' ');
        if !line.ends_with('\\') {
            out.push(std::mem::take(&mut pending).trim().to_string());
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create directory");
    for entry in std::fs::read_dir(from).expect("read directory") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok()
}

#[test]
fn the_tutorials_commands_run_as_written() {
    let Some(source) = fetched() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but {PROGRAM} was not fetched (python3 tools/realapps.py fetch kissfft)"
        );
        eprintln!(
            "skipped: {PROGRAM} is not fetched; `python3 tools/realapps.py fetch kissfft` \
             puts it in ~/.cache/warpwise-realapps"
        );
        return;
    };
    let tutorial = std::fs::read_to_string(root().join("docs/tutorial.md")).expect("tutorial");
    let all = commands(&tutorial);
    assert!(
        all.len() >= 8,
        "too few commands in docs/tutorial.md: {all:?}"
    );
    let offload = has("clang-16");
    if !offload {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_OFFLOAD").is_none(),
            "WARPWISE_REQUIRE_OFFLOAD is set but clang-16 is missing"
        );
    }

    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join(PROGRAM);
    copy_dir(&source, &dir);
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_warpwise"), bin.join("warpwise"))
        .expect("symlink");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let mut ran = 0;
    for command in &all {
        if command.starts_with("python3 tools/realapps.py fetch") || command.starts_with("cd ") {
            continue;
        }
        if command.contains("validate --target openmp") && !offload {
            eprintln!("skipped: `{command}` needs clang-16 (apt-get install clang-16 libomp-16-dev clang-tools-16)");
            continue;
        }
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "`{command}` exited with {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} commands ran");
    for written in [
        "twotone.profile.yaml",
        "report.yaml",
        "report.html",
        "ports/twotonetest.c",
        "ports/twotonetest.c.patch",
    ] {
        assert!(
            dir.join(written).is_file(),
            "the tutorial's commands wrote no {written}"
        );
    }
    let port = std::fs::read_to_string(dir.join("ports/twotonetest.c")).expect("port");
    assert!(
        port.contains("#pragma omp target teams distribute parallel for"),
        "{port}"
    );
}

#[test]
fn the_tutorials_command_reader_joins_continuations_and_skips_other_blocks() {
    let doc = "```sh\nwarpwise analyze a.c \\\n  -I .\n# a comment\n\nmake\n```\n\
               ```text\nwarpwise: output\n```\n";
    assert_eq!(commands(doc), ["warpwise analyze a.c    -I .", "make"]);
}
