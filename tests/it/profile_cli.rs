//! The profiler through the `warpwise` binary: `profile` leaves the program's output and
//! exit status alone, `cc` profiles a Makefile project, `analyze --profile` uses the result.

use crate::common::{assert_valid, yaml_documents, SchemaKind};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("profile-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

#[test]
fn profile_passes_output_and_status_through() {
    let dir = scratch("passthrough");
    let out = Command::new(bin())
        .current_dir(&dir)
        .arg("profile")
        .arg(samples().join("prefix_sum.c"))
        .args(["-o", "p.yaml", "--", "1000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let plain = dir.join("plain");
    let cc = Command::new("cc")
        .arg(samples().join("prefix_sum.c"))
        .arg("-o")
        .arg(&plain)
        .status()
        .unwrap();
    assert!(cc.success());
    let expected = Command::new(&plain).arg("1000").output().unwrap();
    assert_eq!(out.stdout, expected.stdout);
    let text = std::fs::read_to_string(dir.join("p.yaml")).unwrap();
    assert!(text.contains("schema: warpwise/profile/v1"));
    assert!(text.contains("iterations: 999"));
}

#[test]
fn make_project_through_the_wrapper() {
    let dir = scratch("make");
    for f in ["Makefile", "main.c", "filters.c", "filters.h"] {
        std::fs::copy(samples().join("make_project").join(f), dir.join(f)).unwrap();
    }
    let make = Command::new("make")
        .current_dir(&dir)
        .arg(format!("CC={} cc", bin()))
        .output()
        .expect("make is installed");
    assert!(
        make.status.success(),
        "{}",
        String::from_utf8_lossy(&make.stderr)
    );
    let run = Command::new(dir.join("smooth"))
        .current_dir(&dir)
        .env("WARPWISE_PROFILE", "out.yaml")
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "checksum: 188478\n");
    // The runtime's own document, before any `warpwise profile` rewrites it.
    for document in yaml_documents(&std::fs::read_to_string(dir.join("out.yaml")).unwrap()) {
        assert_valid(SchemaKind::Profile, &document);
    }
    let report = Command::new(bin())
        .current_dir(&dir)
        .args([
            "analyze",
            "filters.c",
            "--profile",
            "out.yaml",
            "--format",
            "yaml",
        ])
        .output()
        .unwrap();
    assert!(report.status.success());
    assert_valid(
        SchemaKind::KernelReport,
        &serde_yaml::from_slice(&report.stdout).unwrap(),
    );
    let yaml: serde_yaml::Value = serde_yaml::from_slice(&report.stdout).unwrap();
    let loops = yaml["loops"].as_sequence().unwrap();
    let get = |line: u64| {
        loops
            .iter()
            .find(|l| l["line"].as_u64() == Some(line))
            .unwrap_or_else(|| panic!("no loop at line {line}"))
    };
    // scale(): may alias statically, disjoint at run time.
    assert_eq!(get(21)["verdict"], "friendly");
    assert_eq!(get(21)["observed"]["evidence"], "dynamic");
    assert_eq!(get(21)["observed"]["iterations"], 1000);
    assert_eq!(get(15)["observed"]["iterations"], 998);
    assert_eq!(get(27)["observed"]["min_trip"], 999);
    // Ordered by profiled time.
    let times: Vec<u64> = loops
        .iter()
        .map(|l| l["observed"]["time_ns"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
}

/// Profiles `source` (written to a scratch directory) with `args` after `--`, stdout piped
/// and read only up to `read_bytes` before the pipe is closed; returns the profile text.
fn profile_dying(name: &str, source: &str, warpwise_args: &[&str], read_bytes: usize) -> String {
    use std::io::Read;
    let dir = scratch(name);
    std::fs::write(dir.join("prog.c"), source).unwrap();
    let mut child = Command::new(bin())
        .current_dir(&dir)
        .args(["profile", "prog.c", "-o", "p.yaml"])
        .args(warpwise_args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; read_bytes];
    let _ = stdout.read_exact(&mut buf);
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    std::fs::read_to_string(dir.join("p.yaml")).unwrap_or_else(|e| {
        panic!(
            "no profile ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Each way a profiled program can die leaves a profile of the loop, marked incomplete.
#[test]
fn profiles_survive_sigpipe_stack_overflow_and_ignored_timeouts() {
    let loop_then = |tail: &str| {
        format!(
            "#include <stdio.h>\n#include <signal.h>\n\
             static int depth(int n) {{ volatile char pad[4096]; pad[0] = (char)n; return depth(n + 1) + pad[0]; }}\n\
             int main(void) {{\n  double a[64];\n  for (int i = 0; i < 64; i++) a[i] = i;\n  {tail}\n  return (int)a[3];\n}}\n"
        )
    };
    let piped = profile_dying(
        "sigpipe",
        &loop_then("for (;;) printf(\"%g\\n\", a[5]);"),
        &[],
        4096,
    );
    let overflow = profile_dying("overflow", &loop_then("return depth(0);"), &[], 0);
    let ignored = profile_dying(
        "ignores-alarm",
        &loop_then("signal(SIGALRM, SIG_IGN); for (volatile int s = 0;; s++) {}"),
        &["--timeout", "1"],
        0,
    );
    for (what, text, end) in [
        ("SIGPIPE", &piped, "signal 13"),
        ("stack overflow", &overflow, "signal 11"),
        ("ignored SIGALRM", &ignored, "signal 15"),
    ] {
        assert!(
            text.contains("iterations: 64"),
            "{what}: the loop is missing:\n{text}"
        );
        assert!(text.contains(end), "{what}: not marked `{end}`:\n{text}");
        assert!(
            text.contains("incomplete_runs: 1"),
            "{what}: not incomplete:\n{text}"
        );
    }
}

#[test]
fn loops_of_one_macro_expansion_are_profiled_apart() {
    // `TWO` expands to a `while` and a `for` at the macro's place (8:3): they used to
    // share that id, and the profile added one's counts to the other's. Each has its own
    // id and counts. The `do`-`while (0)` around them runs once and is no loop.
    let dir = scratch("macro-loops");
    std::fs::write(
        dir.join("mac.c"),
        "#include <stdio.h>\n\
         #define TWO(a, n) do { int k = 0; while (k < 3) (a)[k++] = 0; \\\n    \
         for (int i = 0; i < (n); i++) (a)[i] = i; \\\n    \
         for (int j = 0; j < (n); j++) (a)[j] += 1; } while (0)\n\
         double buf[100];\n\
         int main(void)\n{\n  TWO(buf, 10);\n  printf(\"%g\\n\", buf[7]);\n  return 0;\n}\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(&dir)
        .args(["profile", "mac.c", "-o", "p.yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let profile: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(dir.join("p.yaml")).unwrap()).unwrap();
    let counts = |id: &str| {
        let l = &profile["loops"][id];
        (l["entries"].as_u64(), l["iterations"].as_u64())
    };
    assert_eq!(counts("mac.c:8:3"), (Some(1), Some(3)), "{profile:?}");
    assert_eq!(counts("mac.c:8:3#2"), (Some(1), Some(10)), "{profile:?}");
    let loops = profile["loops"].as_mapping().map_or(0, |m| m.len());
    assert_eq!(loops, 3, "the `do`-`while (0)` is no loop: {profile:?}");
    // The report names the loops alike, and `--loop` takes the rank.
    let report = Command::new(bin())
        .current_dir(&dir)
        .args([
            "analyze",
            "mac.c",
            "--loop",
            "mac.c:8:3#2",
            "--profile",
            "p.yaml",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let loops = report["loops"].as_array().unwrap();
    assert_eq!(loops.len(), 1, "{report:#}");
    assert_eq!(loops[0]["id"], "mac.c:8:3#2");
    assert_eq!(loops[0]["induction"]["trip_count"], "10");
}
