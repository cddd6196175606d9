//! Progress of `warpwise analyze` on stderr: an indicatif bar on a terminal (checked through
//! a pseudo-terminal made by util-linux `script`), plain lines when piped, nothing with
//! `--quiet`; stdout carries only the results in every case.

use std::path::Path;
use std::process::Command;

fn two_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for (name, body) in [
        (
            "scale.c",
            "void scale(double *a, int n) { for (int i = 0; i < n; i++) a[i] *= 2.0; }\n",
        ),
        (
            "shift.c",
            "void shift(float *b, int n) { for (int i = 0; i < n; i++) b[i] += 1.0f; }\n",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, body).expect("write fixture");
        files.push(path.display().to_string());
    }
    files
}

#[test]
fn piped_progress_is_one_line_per_file_and_quiet_silences_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = two_files(dir.path());
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_warpwise"))
            .arg("analyze")
            .args(&files)
            .args(["--format", "yaml"])
            .args(extra)
            .output()
            .expect("warpwise runs")
    };
    let out = run(&[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for f in &files {
        assert!(err.contains(&format!("warpwise: analysing {f}")), "{err}");
    }
    // No bar drawing (carriage returns, escape sequences) when stderr is not a terminal.
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("schema:"), "{stdout}");

    let quiet = run(&["--quiet"]);
    assert!(quiet.status.success());
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(!err.contains("analysing"), "{err}");
    assert_eq!(
        quiet.stdout, out.stdout,
        "progress must not change the results"
    );
}

#[test]
fn a_terminal_gets_a_bar_instead_of_lines() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` (to make a pseudo-terminal) is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let files = two_files(dir.path());
    let report = dir.path().join("out.yaml");
    // stdout goes to a file, so what the terminal shows is stderr's progress.
    let command = format!(
        "{} analyze {} --format yaml -o {}",
        env!("CARGO_BIN_EXE_warpwise"),
        files.join(" "),
        report.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("warpwise: analysing [") || screen.contains("warpwise: loading ["),
        "no progress bar on the terminal: {screen:?}"
    );
    assert!(screen.contains("/2"), "{screen:?}");
    assert!(
        !screen.contains("warpwise: analysing /"),
        "plain lines on a terminal: {screen:?}"
    );
    let written = std::fs::read_to_string(&report).expect("report written");
    assert!(written.starts_with("schema:"));
}

#[test]
fn profile_says_what_it_builds_and_runs_unless_quiet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("prog.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\nint main(void) { double a[64]; for (int i = 0; i < 64; i++) a[i] = i; printf(\"%g\\n\", a[7]); return 0; }\n",
    )
    .expect("write");
    let profile = dir.path().join("p.yaml");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_warpwise"))
            .arg("profile")
            .arg(&source)
            .arg("-o")
            .arg(&profile)
            .arg("--fresh")
            .args(extra)
            .output()
            .expect("warpwise runs")
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warpwise: building 1 file with instrumentation"),
        "{err}"
    );
    assert!(err.contains("warpwise: running the program"), "{err}");
    // The program's own output is untouched.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n");
    let quiet = run(&["--quiet"]);
    assert!(quiet.status.success());
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        !err.contains("building") && !err.contains("running the program"),
        "{err}"
    );
    // Results stay: the summary of the profile.
    assert!(err.contains("warpwise: profile of 1 run(s)"), "{err}");
}
