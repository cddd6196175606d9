//! Input safety through the binary: outputs never land on inputs or write through symlinks,
//! builds happen in fresh private directories that leave nothing behind, and selections or
//! sizes that make no sense are usage errors (exit 2), never a silent "0 loops".

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `warpwise ARGS` in `dir` with `TMPDIR` set to `tmp`.
fn run_in(dir: &Path, tmp: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .args(args)
        .output()
        .unwrap()
}

/// A scratch directory holding a copy of `sample`, and a private TMPDIR.
struct Scratch {
    dir: tempfile::TempDir,
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn with(samples: &[&str]) -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
        };
        for name in samples {
            std::fs::copy(sample(name), s.dir.path().join(name)).unwrap();
        }
        s
    }

    fn run(&self, args: &[&str]) -> Output {
        run_in(self.dir.path(), self.tmp.path(), args)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// What warpwise left in its TMPDIR.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// `warpwise ARGS` must exit with `code` and say `expected` on stderr.
fn check(s: &Scratch, args: &[&str], code: i32, expected: &str) {
    let out = s.run(args);
    assert_eq!(out.status.code(), Some(code), "{args:?}\n{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(expected),
        "{args:?}: no `{expected}` in\n{}",
        text(&out)
    );
}

#[test]
fn an_output_onto_an_input_is_refused() {
    let s = Scratch::with(&["matmul.c", "vector_add.c"]);
    let before = std::fs::read(s.path("matmul.c")).unwrap();
    let refused = "refusing to overwrite it";
    check(&s, &["analyze", "matmul.c", "-o", "matmul.c"], 2, refused);
    check(&s, &["analyze", "matmul.c", "-o", "./matmul.c"], 2, refused);
    check(&s, &["profile", "matmul.c", "-o", "matmul.c"], 2, refused);
    check(
        &s,
        &["profile", "matmul.c", "--fresh", "-o", "matmul.c"],
        2,
        refused,
    );
    assert_eq!(std::fs::read(s.path("matmul.c")).unwrap(), before);

    let out = s.run(&[
        "analyze",
        "vector_add.c",
        "--format",
        "yaml",
        "-o",
        "r.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let report = std::fs::read(s.path("r.yaml")).unwrap();
    check(&s, &["instantiate", "r.yaml", "-o", "r.yaml"], 2, refused);
    assert_eq!(std::fs::read(s.path("r.yaml")).unwrap(), report);
}

/// `-o /dev/null`, `-o /dev/stdout` and a named pipe are written into, never renamed over
/// (as root, renaming over `/dev/null` leaves an ordinary file there for every program
/// after); a profile, which the program appends to and warpwise reads back, must be a file.
#[cfg(target_os = "linux")]
#[test]
fn devices_and_standard_streams_are_written_into_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let s = Scratch::with(&["vector_add.c"]);
    let report = ["analyze", "vector_add.c", "--format", "yaml", "-o"];
    let null_was_device = std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device();
    let out = s.run(&[&report[..], &["/dev/null"]].concat());
    assert!(out.status.success(), "{}", text(&out));
    let null_is_device = std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device();
    assert_eq!(null_was_device, null_is_device);

    let out = s.run(&[&report[..], &["/dev/stdout"]].concat());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kernel-report"),
        "{}",
        text(&out)
    );

    let fifo = s.path("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    check(
        &s,
        &["profile", "vector_add.c", "--fresh", "-o", "pipe"],
        2,
        "is not a regular file",
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[cfg(unix)]
#[test]
fn outputs_replace_symlinks_instead_of_writing_through_them() {
    let s = Scratch::with(&["matrix_add.c"]);
    let victim = s.path("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, s.path("report.yaml")).unwrap();
    let out = s.run(&[
        "analyze",
        "matrix_add.c",
        "--format",
        "yaml",
        "-o",
        "report.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(s.path("report.yaml"))
        .unwrap()
        .contains("kernel-report"));

    // `emit -o DIR` where DIR already holds a symlink named like the kernel it writes.
    std::fs::create_dir(s.path("out")).unwrap();
    std::os::unix::fs::symlink(&victim, s.path("out/add_L38.cu")).unwrap();
    let out = s.run(&[
        "emit",
        "matrix_add.c",
        "--loop",
        "matrix_add.c:38",
        "-o",
        "out",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(s.path("out/add_L38.cu"))
        .unwrap()
        .contains("__global__"));
}

/// The profiled program reports the directory it was built in: it must be fresh, private
/// (0700) and gone afterwards, and nothing may be left in TMPDIR (no reusable runtime
/// object another user could replace).
#[cfg(unix)]
#[test]
fn builds_happen_in_fresh_private_directories_that_are_removed() {
    let s = Scratch::with(&[]);
    std::fs::write(
        s.path("where.c"),
        r#"#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return 1;
    exe[n] = 0;
    *strrchr(exe, '/') = 0;
    struct stat st;
    if (stat(exe, &st) != 0) return 1;
    double a[8];
    for (int i = 0; i < 8; i++) a[i] = i;
    printf("%s %o %g\n", exe, (unsigned)(st.st_mode & 0777), a[7]);
    return 0;
}
"#,
    )
    .unwrap();
    let out = s.run(&["profile", "where.c", "-o", "p.yaml"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut words = stdout.split_whitespace();
    let (dir, mode) = (words.next().unwrap(), words.next().unwrap());
    assert_eq!(mode, "700", "the build directory `{dir}` is not private");
    assert!(!Path::new(dir).exists(), "`{dir}` was left behind");
    assert!(
        s.leftovers().is_empty(),
        "left in TMPDIR: {:?}",
        s.leftovers()
    );

    // The compiler wrapper links a runtime it compiled itself, and keeps no cache in TMPDIR.
    let cc = Command::new(bin())
        .current_dir(s.dir.path())
        .env("TMPDIR", s.tmp.path())
        .args(["cc", "where.c", "-o", "where"])
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", text(&cc));
    assert!(
        s.leftovers().is_empty(),
        "left in TMPDIR: {:?}",
        s.leftovers()
    );
}

#[test]
fn selections_and_sizes_that_make_no_sense_are_usage_errors() {
    let s = Scratch::with(&["matmul.c"]);
    check(&s, &["analyze"], 2, "Usage");
    check(
        &s,
        &["analyze", "matmul.c", "--loop", "garbage"],
        2,
        "expected FILE:LINE",
    );
    check(
        &s,
        &["analyze", "matmul.c", "--loop", "matmul.c:0"],
        2,
        "expected FILE:LINE",
    );
    check(
        &s,
        &["analyze", "matmul.c", "--loop", "matmul.c:999"],
        2,
        "no loop starts there (nearest: `matmul.c:68:9`",
    );
    check(
        &s,
        &["analyze", "matmul.c", "--function", "mtmul"],
        2,
        "closest: `matmul`",
    );
    check(
        &s,
        &["analyze", "matmul.c", "--block", "4294967295x4294967295"],
        2,
        "at most 1024 threads",
    );
    check(
        &s,
        &["analyze", "matmul.c", "--block", "64x32"],
        2,
        "at most 1024 threads",
    );
    // A selection that names a loop is fine.
    let out = s.run(&[
        "analyze",
        "matmul.c",
        "--loop",
        "matmul.c:68",
        "--format",
        "yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out));
}

/// An unreadable directory is named with the reason, not reported as holding no `.c` file.
/// Root reads every directory, so as root the run is made as `nobody` (with `runuser`).
#[cfg(unix)]
#[test]
fn an_unreadable_directory_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::with(&["matmul.c"]);
    let locked = s.path("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::copy(sample("vector_add.c"), locked.join("v.c")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = if std::fs::read_dir(&locked).is_ok() {
        let nobody_runs_warpwise = Command::new("runuser")
            .args(["-u", "nobody", "--", bin(), "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !nobody_runs_warpwise {
            std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
            eprintln!("skipped: running as root, and `nobody` cannot run warpwise with `runuser`");
            return;
        }
        // `nobody` needs a cache home it may write (its HOME does not exist).
        let home = s.path("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", bin()])
            .env("XDG_CACHE_HOME", &home);
        c
    } else {
        let mut c = Command::new(bin());
        c.env("TMPDIR", s.tmp.path());
        c
    };
    let out = cmd
        .current_dir(s.dir.path())
        .args(["analyze", ".", "--format", "yaml"])
        .output()
        .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read the directory"),
        "{}",
        text(&out)
    );
    assert!(stderr.contains("ermission denied"), "{}", text(&out));
    // The readable part is still analysed.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("matmul"),
        "{}",
        text(&out)
    );
}

#[test]
fn deeply_nested_yaml_is_refused_with_its_position() {
    // 100,000 nested `[` took the YAML parser tens of seconds to reject; the pre-scan
    // names the line and column where the nesting passes the limit.
    let s = Scratch::with(&["vector_add.c"]);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(
        s.path("deep.yaml"),
        format!("schema: warpwise/kernel-report/v1\nloops: {deep}\n"),
    )
    .unwrap();
    check(
        &s,
        &["instantiate", "deep.yaml"],
        1,
        "deep.yaml:2:72: not a kernel report: nested more than 64 levels deep",
    );
    let out = s.run(&[
        "analyze",
        "vector_add.c",
        "--format",
        "yaml",
        "-o",
        "r.yaml",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::write(
        s.path("p.yaml"),
        format!("schema: warpwise/profile/v1\nloops: {deep}\n"),
    )
    .unwrap();
    check(
        &s,
        &["instantiate", "r.yaml", "--profile", "p.yaml"],
        1,
        "p.yaml:2:72: nested more than 64 levels deep: not a profile",
    );
}

#[test]
fn a_profile_ended_by_a_signal_removes_its_build_directory() {
    let s = Scratch::with(&[]);
    std::fs::write(
        s.path("slow.c"),
        r#"#include <stdio.h>
#include <unistd.h>
int main(void) {
    double a[8];
    for (int i = 0; i < 8; i++) a[i] = i;
    FILE *f = fopen("started", "w");
    if (f) fclose(f);
    sleep(3);
    f = fopen("finished", "w");
    if (f) fclose(f);
    return a[7] > 0 ? 0 : 1;
}
"#,
    )
    .unwrap();
    let mut child = Command::new(bin())
        .current_dir(s.dir.path())
        .env("TMPDIR", s.tmp.path())
        .args(["profile", "slow.c", "-o", "p.yaml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the program runs, out of its build directory.
    let mut waited = 0;
    while !s.path("started").exists() && waited < 1200 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    assert!(s.path("started").exists(), "the program never started");
    assert!(
        !s.leftovers().is_empty(),
        "no build directory while running"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "exits as SIGTERM would");
    assert!(
        s.leftovers().is_empty(),
        "left in TMPDIR: {:?}",
        s.leftovers()
    );
    // The signal reached the program too: it wrote its profile and did not run on.
    let profile = std::fs::read_to_string(s.path("p.yaml")).unwrap_or_default();
    assert!(profile.contains("signal 15"), "{profile}");
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(
        !s.path("finished").exists(),
        "the program ran on after warpwise ended"
    );
}

/// A project directory whose `./cc1` records that it ran: gcc's `-B.` (however it reaches
/// gcc) runs it instead of the real compiler proper, so the marker's absence proves that no
/// flag or file of the inputs became code.
struct Booby {
    scratch: Scratch,
}

impl Booby {
    fn new() -> Booby {
        use std::os::unix::fs::PermissionsExt;
        let scratch = Scratch::with(&[]);
        let marker = scratch.path("pwned");
        let cc1 = scratch.path("cc1");
        std::fs::write(
            &cc1,
            format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
        )
        .unwrap();
        std::fs::set_permissions(&cc1, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(
            scratch.path("x.c"),
            "int x[4];\nvoid f(int *a) { for (int i = 0; i < 4; i++) a[i] = i; }\n",
        )
        .unwrap();
        // gcc reads `@evil.rsp` as the options in `evil.rsp`.
        std::fs::write(scratch.path("evil.rsp"), "-B. x.c\n").unwrap();
        Booby { scratch }
    }

    fn ran(&self) -> bool {
        self.scratch.path("pwned").exists()
    }

    /// `warpwise analyze -p .` over a database of one entry.
    fn analyze_database(&self, entry: &str) -> Output {
        std::fs::write(
            self.scratch.path("compile_commands.json"),
            format!("[{entry}]"),
        )
        .unwrap();
        self.scratch
            .run(&["analyze", "-p", ".", "--format", "yaml"])
    }
}

/// The booby trap itself works: without the flag filter gcc runs `./cc1`.
#[test]
fn the_trap_catches_a_plain_minus_b() {
    let b = Booby::new();
    let out = Command::new("gcc")
        .current_dir(b.scratch.dir.path())
        .args(["-E", "-B.", "x.c"])
        .output()
        .unwrap();
    assert!(b.ran(), "gcc -B. did not run ./cc1: {}", text(&out));
}

#[test]
fn no_compile_database_entry_runs_code() {
    let entries = [
        // A kept flag's value that the old filter dropped (an output flag), or left empty.
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-isystem", "-MD", "-iquote", "-B.", "-c", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-isystem", "-c", "-iquote", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-isystem", "-o", "-iquote", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-iquote", "-save-temps", "-iquote", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-U", "", "-isystem", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-D", "", "-isystem", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-I", "", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "command": "gcc -D '' -B. x.c"}"#,
        // Read by gcc as `-include` `-pch`.
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-include-pch", "-B.", "x.c"]}"#,
        // Values of flags that pass them on to the preprocessor or the compiler proper.
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-Xpreprocessor", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-Wp,-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "--param", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-target", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "--sysroot", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-imacros", "-B.", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc", "-idirafter", "-B.", "x.c"]}"#,
        // A compiler word with flags in it.
        r#"{"directory": ".", "file": "x.c", "arguments": ["gcc -B. -Dx=-gcc", "-c", "x.c"]}"#,
        r#"{"directory": ".", "file": "x.c", "command": "'gcc -B.' -c x.c"}"#,
        // The file read as a response file.
        r#"{"directory": ".", "file": "@evil.rsp", "arguments": ["gcc", "-x", "c", "-c", "@evil.rsp"]}"#,
    ];
    for entry in entries {
        let b = Booby::new();
        std::fs::copy(b.scratch.path("x.c"), b.scratch.path("@evil.rsp")).unwrap();
        let out = b.analyze_database(entry);
        assert!(!b.ran(), "code ran for {entry}\n{}", text(&out));
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{entry}: undocumented exit\n{}",
            text(&out)
        );
    }
}

#[test]
fn a_file_name_is_never_an_option_or_a_response_file() {
    let b = Booby::new();
    std::fs::copy(b.scratch.path("x.c"), b.scratch.path("@evil.rsp")).unwrap();
    std::fs::copy(b.scratch.path("x.c"), b.scratch.path("-B.c")).unwrap();
    for name in ["@evil.rsp", "-B.c"] {
        let out = b.scratch.run(&["analyze", "--format", "yaml", "--", name]);
        assert!(!b.ran(), "`{name}` ran code\n{}", text(&out));
        assert_eq!(out.status.code(), Some(0), "{name}\n{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("friendly"),
            "`{name}` was not analysed as C\n{}",
            text(&out)
        );
    }
}

/// A report's loop id names the file `instantiate` analyses again; `@evil.rsp` stays a file.
#[test]
fn a_report_never_runs_code_through_its_loop_ids() {
    let b = Booby::new();
    let s = &b.scratch;
    std::fs::copy(sample("upsample.c"), s.path("@evil.rsp")).unwrap();
    std::fs::copy(sample("upsample.c"), s.path("upsample.c")).unwrap();
    let out = s.run(&["analyze", "upsample.c", "--format", "yaml", "-o", "r.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    fn rename(v: &mut serde_yaml::Value) {
        match v {
            serde_yaml::Value::String(s) => *s = s.replace("upsample.c", "@evil.rsp"),
            serde_yaml::Value::Sequence(items) => items.iter_mut().for_each(rename),
            serde_yaml::Value::Mapping(m) => m.values_mut().for_each(rename),
            _ => {}
        }
    }
    let mut report: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(s.path("r.yaml")).unwrap()).unwrap();
    rename(&mut report);
    std::fs::write(s.path("evil.yaml"), serde_yaml::to_string(&report).unwrap()).unwrap();
    let out = s.run(&[
        "instantiate",
        "evil.yaml",
        "--set",
        "n=1000",
        "--set",
        "factor=4",
        "--format",
        "yaml",
    ]);
    assert!(!b.ran(), "the report's loop id ran code\n{}", text(&out));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("re-analysis"),
        "the section was not analysed again from `@evil.rsp`\n{}",
        text(&out)
    );
}

/// `--keep DIR`: a link planted in DIR under the name of a build file is never written
/// through; the build goes to a fresh directory inside DIR.
#[test]
fn keep_never_writes_through_planted_links() {
    let s = Scratch::with(&["vector_add.c"]);
    let keep = s.path("kept");
    std::fs::create_dir(&keep).unwrap();
    let victim = s.path("victim");
    std::fs::write(&victim, "precious").unwrap();
    for name in ["0_vector_add.i", "0_vector_add.o", "program", "runtime"] {
        std::os::unix::fs::symlink(&victim, keep.join(name)).unwrap();
    }
    let out = s.run(&[
        "profile",
        "vector_add.c",
        "-o",
        "p.yaml",
        "--keep",
        "kept",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let fresh: Vec<_> = std::fs::read_dir(&keep)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .collect();
    assert_eq!(fresh.len(), 1, "one fresh build directory in DIR");
    assert!(fresh[0].path().join("program").is_file());
}

#[test]
fn a_profile_that_is_a_link_is_refused_before_the_run() {
    let s = Scratch::with(&["vector_add.c"]);
    std::fs::write(s.path("old.yaml"), "old").unwrap();
    std::os::unix::fs::symlink(s.path("old.yaml"), s.path("p.yaml")).unwrap();
    check(
        &s,
        &["profile", "vector_add.c", "-o", "p.yaml"],
        2,
        "symbolic link",
    );
    assert_eq!(std::fs::read_to_string(s.path("old.yaml")).unwrap(), "old");
}

#[test]
fn sizes_and_names_that_would_wrap_or_be_ignored_are_usage_errors() {
    let s = Scratch::with(&["upsample.c"]);
    check(
        &s,
        &["profile", "upsample.c", "--timeout", "18446744073709551615"],
        2,
        "--timeout",
    );
    check(
        &s,
        &["profile", "upsample.c", "--timeout", "0"],
        2,
        "--timeout",
    );
    check(
        &s,
        &["profile", "upsample.c", "-q", "--loops", "nosuch.c:1"],
        2,
        "nosuch.c:1",
    );
    let out = s.run(&["analyze", "upsample.c", "--format", "yaml", "-o", "r.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    check(
        &s,
        &["instantiate", "r.yaml", "--set", "factr=4", "--set", "n=10"],
        2,
        "`factor`",
    );
    check(
        &s,
        &["instantiate", "r.yaml", "--set", "n=9223372036854775808"],
        2,
        "NAME=INTEGER",
    );
    // The largest value an i64 holds: counts and bytes that overflow have no value, never
    // a wrapped one (nor a panic).
    let out = s.run(&[
        "instantiate",
        "r.yaml",
        "--set",
        "n=9223372036854775807",
        "--set",
        "factor=1",
        "--format",
        "yaml",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let instance: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    let bytes = &instance["loops"][0]["memory"]["bytes_per_launch"];
    assert!(
        bytes.is_null() || bytes.as_i64().is_some_and(|b| b > 0),
        "wrapped: {bytes:?}"
    );
}

#[test]
fn an_endless_input_is_refused_not_read_until_memory_runs_out() {
    let s = Scratch::with(&[]);
    check(&s, &["instantiate", "/dev/zero"], 1, "MiB");
}

#[test]
fn a_reader_that_stops_reading_is_not_an_error() {
    let s = Scratch::with(&["upsample.c", "vector_add.c", "matmul.c"]);
    let mut child = Command::new(bin())
        .current_dir(s.dir.path())
        .args(["analyze", ".", "--format", "yaml", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -c 1`: one byte read, then the pipe closed.
    {
        use std::io::Read;
        let mut stdout = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        stdout.read_exact(&mut one).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// The profiler's crash path uses no malloc: a program that dies inside malloc while it
/// holds malloc's lock (here its own malloc, which takes a mutex and aborts) still ends,
/// and its profile is kept.
#[test]
fn a_program_that_dies_inside_malloc_ends_and_keeps_its_profile() {
    let s = Scratch::with(&[]);
    std::fs::write(
        s.path("crash.c"),
        r#"#include <pthread.h>
#include <stdlib.h>
#include <string.h>
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int die;
void *malloc(size_t n) {
    pthread_mutex_lock(&lock);
    if (die) abort();
    void *p = __libc_malloc(n);
    pthread_mutex_unlock(&lock);
    return p;
}
void free(void *p) { pthread_mutex_lock(&lock); __libc_free(p); pthread_mutex_unlock(&lock); }
void *calloc(size_t a, size_t b) { pthread_mutex_lock(&lock); void *p = __libc_calloc(a, b); pthread_mutex_unlock(&lock); return p; }
void *realloc(void *q, size_t n) { pthread_mutex_lock(&lock); void *p = __libc_realloc(q, n); pthread_mutex_unlock(&lock); return p; }
static void *work(void *arg) { return arg; }
int main(void) {
    double a[32];
    for (int i = 0; i < 32; i++) a[i] = i;
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    die = 1;
    /* Stored to a volatile object, so the call cannot be optimized away. */
    char *volatile p = malloc(16);
    strcpy(p, "never");
    return p[0] == 'n' ? 3 : (int)a[1];
}
"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = s.run(&[
        "profile",
        "crash.c",
        "-o",
        "p.yaml",
        "--timeout",
        "20",
        "-q",
        "-l",
        "pthread",
    ]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "the crash path hung until the timeout\n{}",
        text(&out)
    );
    assert_eq!(out.status.code(), Some(128 + 6), "{}", text(&out));
    let profile = std::fs::read_to_string(s.path("p.yaml")).unwrap();
    assert!(profile.contains("signal 6"), "{profile}");
    assert!(profile.contains("iterations: 32"), "{profile}");
}

/// Runs that end while `warpwise profile` rewrites the same profile are all kept: the
/// rewrite holds the runtime's lock, and a run that waited on the replaced file appends to
/// the new one.
#[test]
fn runs_appended_while_the_profile_is_rewritten_are_not_lost() {
    let s = Scratch::with(&["vector_add.c"]);
    let build = s.run(&["cc", "-O1", "vector_add.c", "-o", "prog"]);
    assert_eq!(build.status.code(), Some(0), "{}", text(&build));
    const RUNS: usize = 40;
    const REWRITES: usize = 4;
    let profile = s.path("p.yaml");
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..RUNS)
            .map(|_| {
                scope.spawn(|| {
                    Command::new(s.path("prog"))
                        .current_dir(s.dir.path())
                        .env("WARPWISE_PROFILE", &profile)
                        .arg("100")
                        .output()
                        .unwrap()
                })
            })
            .collect();
        for _ in 0..REWRITES {
            let out = s.run(&["profile", "vector_add.c", "-o", "p.yaml", "-q", "--", "100"]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        }
        for run in runs {
            let out = run.join().unwrap();
            assert!(out.status.success(), "{}", text(&out));
        }
    });
    // One more rewrite merges whatever was appended after the last one.
    let out = s.run(&["profile", "vector_add.c", "-o", "p.yaml", "-q", "--", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let merged: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert_eq!(
        merged["runs"].as_u64(),
        Some((RUNS + REWRITES + 1) as u64),
        "runs lost"
    );
}

/// A per-user cache that is refused (writable by others) is said once, and the private
/// directory used instead is removed when the run ends: none is left per run.
#[test]
fn a_refused_header_cache_is_said_once_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::with(&["vector_add.c", "matmul.c"]);
    let cache = s.path("cache");
    std::fs::create_dir_all(cache.join("warpwise")).unwrap();
    std::fs::set_permissions(
        cache.join("warpwise"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let out = Command::new(bin())
        .current_dir(s.dir.path())
        .env("TMPDIR", s.tmp.path())
        .env("XDG_CACHE_HOME", &cache)
        .args([
            "analyze",
            "vector_add.c",
            "matmul.c",
            "--format",
            "yaml",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("not using the per-user cache").count(),
        1,
        "{stderr}"
    );
    assert!(
        s.leftovers().is_empty(),
        "left in TMPDIR: {:?}",
        s.leftovers()
    );
}

#[test]
fn a_file_that_preprocesses_past_the_budget_is_refused_without_reading_it_all() {
    // A 1 MiB header included 70 times: 70 MiB of preprocessed text from a 1 KiB file.
    let s = Scratch::with(&[]);
    std::fs::write(s.path("big.h"), "int v;\n".repeat(150_000)).unwrap();
    let main = "#include \"big.h\"\n".repeat(70)
        + "void f(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n";
    std::fs::write(s.path("main.c"), main).unwrap();
    check(
        &s,
        &["analyze", "main.c"],
        1,
        "`main.c` preprocesses to more than 64 MiB of text, the most analysed per file",
    );
    // Below the budget the same file is analysed.
    std::fs::write(
        s.path("small.c"),
        "#include \"big.h\"\n".repeat(2)
            + "void f(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n",
    )
    .unwrap();
    let out = s.run(&["analyze", "small.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

/// The profiler's runtime is compiled once per compiler and kept in the per-user cache: a
/// second profile links the kept object without compiling it; a kept object others could
/// have written, or a link planted at its name, is not used: the runtime is compiled again
/// and a private file replaces it, the link's target untouched.
#[test]
fn the_runtime_is_compiled_once_and_kept_where_only_the_user_writes() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::with(&["vector_add.c"]);
    let cache = s.path("cache");
    // A compiler that logs its arguments, so the test sees which compiles happen.
    let log = s.path("cc.log");
    let cc = s.path("logging-cc");
    std::fs::write(
        &cc,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec cc \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let profile = || {
        let _ = std::fs::remove_file(&log);
        let out = Command::new(bin())
            .current_dir(s.dir.path())
            .env("TMPDIR", s.tmp.path())
            .env("XDG_CACHE_HOME", &cache)
            .env("WARPWISE_CC", &cc)
            .args(["profile", "vector_add.c", "-o", "p.yaml", "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let compiled = std::fs::read_to_string(&log).unwrap_or_default();
        compiled.contains("warpwise_rt.c")
    };
    let kept = || -> PathBuf {
        let dirs: Vec<PathBuf> = std::fs::read_dir(cache.join("warpwise"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("warpwise_rt-")
            })
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs[0].join("warpwise_rt.o")
    };
    assert!(profile(), "the first profile compiles the runtime");
    let object = kept();
    let is_private = |p: &Path| {
        let meta = std::fs::symlink_metadata(p).unwrap();
        meta.file_type().is_file() && meta.permissions().mode() & 0o022 == 0
    };
    assert!(is_private(&object));
    assert!(!profile(), "the second profile links the kept runtime");
    // Writable by others: compiled again, and replaced by a private file.
    std::fs::set_permissions(&object, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(
        profile(),
        "a runtime others could have written is compiled again"
    );
    assert!(is_private(&object));
    // A link at its name: compiled again; the link is replaced, its target untouched.
    let victim = s.path("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::remove_file(&object).unwrap();
    std::os::unix::fs::symlink(&victim, &object).unwrap();
    assert!(profile(), "a link at the runtime's name is not followed");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(is_private(&object));
    assert!(!profile());
}
