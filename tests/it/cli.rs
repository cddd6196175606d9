//! The `warpwise` command line end to end: exit codes, diagnostics with file:line:col, and
//! the output formats, on the samples and on broken inputs written to a temp dir.

use crate::common::{assert_valid, SchemaKind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn warpwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("warpwise runs")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

/// Checks the exit code and that stderr contains every `needle`.
fn check(args: &[&str], code: i32, stderr_needles: &[&str]) -> Output {
    let out = warpwise(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code of {args:?}; stderr:\n{stderr}"
    );
    for needle in stderr_needles {
        assert!(
            stderr.contains(needle),
            "stderr of {args:?} lacks `{needle}`:\n{stderr}"
        );
    }
    out
}

#[test]
fn usage_errors_exit_with_2() {
    check(&[], 2, &["Usage"]);
    check(
        &["analyze", "--format", "pdf", "samples/"],
        2,
        &["invalid value"],
    );
}

#[test]
fn missing_inputs_exit_with_1() {
    check(
        &["analyze", "no/such/file.c"],
        1,
        &["no such file or directory: `no/such/file.c`"],
    );
    check(&["ir", "no/such/file.c"], 1, &["nothing to analyse"]);
}

#[test]
fn a_syntax_error_is_one_diagnostic_with_its_location() {
    let dir = temp_dir("syntax");
    let bad = write(&dir, "bad.c", "int f(int n) {\n    return n +;\n}\n");
    let out = check(
        &["analyze", "--format", "yaml", &bad],
        1,
        &["bad.c:2:", "return n +;"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors = stderr.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, 2, "one diagnostic and the final line:\n{stderr}");
}

#[test]
fn a_bad_file_does_not_stop_the_others() {
    let dir = temp_dir("mixed");
    write(&dir, "bad.c", "int f( {\n");
    write(
        &dir,
        "good.c",
        "void scale(float *x, int n) { for (int i = 0; i < n; i++) x[i] *= 2; }\n",
    );
    write(
        &dir,
        "missing_header.c",
        "#include \"nowhere.h\"\nint g(void) { return 1; }\n",
    );
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = check(
        &["analyze", "--format", "yaml", &dir_arg],
        0,
        &["bad.c:1:", "missing_header.c:1:", "nowhere.h"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("good.c:1:31"),
        "the good file is analysed:\n{stdout}"
    );
    assert!(stdout.contains("verdict: friendly"));
}

#[test]
fn analyze_writes_yaml_json_and_text() {
    let out = check(
        &["analyze", "--format", "json", "samples/vector_add.c"],
        0,
        &[],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(json["schema"], "warpwise/kernel-report/v1");
    assert_eq!(json["loops"][0]["verdict"], "friendly");
    let out = check(
        &[
            "analyze",
            "--format",
            "text",
            "--function",
            "add",
            "samples/matrix_add.c",
        ],
        0,
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("port it as a 2D kernel"), "{text}");
    assert!(
        text.contains("cudaMemcpy(d_a, (char *)a + 0, 4*N*N, cudaMemcpyHostToDevice);"),
        "{text}"
    );
}

#[test]
fn analyze_writes_to_a_file_with_o() {
    let dir = temp_dir("output");
    let report = dir.join("report.yaml").to_string_lossy().into_owned();
    let out = check(&["analyze", "samples/char_cast.c", "-o", &report], 0, &[]);
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&report).expect("report written");
    assert!(text.starts_with("schema: warpwise/kernel-report/v1"));
}

/// The report is written a loop at a time as functions finish: a selection that matches
/// nothing, found only after the analysis, still leaves `-o` as it was (new or old), and the
/// loops come in the file's order, as the YAML and the JSON of the same run.
#[test]
fn a_report_written_as_it_is_made_is_all_or_nothing_and_in_order() {
    let dir = temp_dir("streamed");
    let mut source = String::new();
    for k in 0..40 {
        source.push_str(&format!(
            "void f{k}(double *a, int n) {{\n  for (int i = 0; i < n; i++) a[i] += {k};\n}}\n"
        ));
    }
    let file = write(&dir, "many.c", &source);
    let old = write(&dir, "old.yaml", "before\n");
    let new = dir.join("new.json").to_string_lossy().into_owned();
    for (output, format) in [(&old, "yaml"), (&new, "json")] {
        check(
            &[
                "analyze",
                &file,
                "--loop",
                "many.c:999",
                "--format",
                format,
                "-o",
                output,
            ],
            2,
            &["many.c:999"],
        );
    }
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "before\n");
    assert!(!Path::new(&new).exists());
    check(&["analyze", &file, "--format", "json", "-o", &new], 0, &[]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&new).unwrap()).unwrap();
    let yaml =
        String::from_utf8(check(&["analyze", &file, "--format", "yaml"], 0, &[]).stdout).unwrap();
    let yaml: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(json, yaml);
    let lines: Vec<u64> = json["loops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (0..40).map(|k| 2 + 3 * k).collect::<Vec<u64>>());
}

#[test]
fn loop_filter_selects_one_loop() {
    let out = check(
        &[
            "analyze",
            "--format",
            "yaml",
            "--loop",
            "every_fourth_add.c:43",
            "samples/every_fourth_add.c",
        ],
        0,
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("- id:").count(), 1, "{text}");
    assert!(text.contains("trip_count: (2*n + 3) / 4"), "{text}");
}

#[test]
fn ir_prints_text_and_dot() {
    let out = check(
        &[
            "ir",
            "--function",
            "every_fourth",
            "samples/every_fourth_add.c",
        ],
        0,
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("trip count: (2*n + 3) / 4 (when -n < n, else 0)"),
        "{text}"
    );
    assert!(text.contains("phi ["), "{text}");
    let out = check(
        &[
            "ir",
            "--format",
            "dot",
            "--function",
            "every_fourth",
            "samples/every_fourth_add.c",
        ],
        0,
        &[],
    );
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.starts_with("digraph \"every_fourth\""), "{dot}");
    let out = check(
        &[
            "ir",
            "--annotate",
            "ranges",
            "--function",
            "range_example",
            "samples/range_example.c",
        ],
        0,
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mux  [min(m, n), max(m, n)]"), "{text}");
}

#[test]
fn compile_commands_provide_files_and_flags() {
    let dir = temp_dir("compdb");
    let src = write(
        &dir,
        "k.c",
        "void k(float *x) { for (int i = 0; i < SIZE; i++) x[i] = 0; }\n",
    );
    let db = format!(
        r#"[{{"directory": "{}", "file": "{}", "arguments": ["cc", "-DSIZE=64", "-c", "{}"]}}]"#,
        dir.display(),
        src,
        src
    );
    std::fs::write(dir.join("compile_commands.json"), db).expect("db");
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = check(&["analyze", "--format", "yaml", "-p", &dir_arg], 0, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("trip_count: '64'"), "{text}");
}

/// `-fopenmp`, pasted from a compiler command line, reaches `cc -E`, which then defines
/// `_OPENMP` exactly as gcc does; without it the file's `#error` fires.
#[test]
fn fopenmp_defines_openmp_like_the_compiler() {
    let dir = temp_dir("fopenmp");
    let file = write(
        &dir,
        "omp.c",
        "#ifndef _OPENMP\n#error compile with -fopenmp\n#endif\n\
         void scale(int n, double *a) {\n#pragma omp parallel for\n\
         for (int i = 0; i < n; i++) a[i] *= 2.0;\n}\n",
    );
    check(&["analyze", &file], 1, &["compile with -fopenmp"]);
    let out = check(&["analyze", "-fopenmp", &file, "--format", "json"], 0, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("omp.c:6:"),
        "the loop is analysed:\n{stdout}"
    );
    // After the file too, and in `ir`, which shares the flag block.
    check(&["analyze", &file, "-fopenmp"], 0, &[]);
    check(&["ir", &file, "-fopenmp"], 0, &[]);
}

#[test]
fn files_given_together_are_one_program() {
    // `fill` calls `set_row`, defined in the second file: analysed together it is a
    // function of the program whose writes are the loop's (friendly, `out` written over
    // [0, 8*N*n)); analysed alone, `set_row` is an unknown host function.
    let dir = temp_dir("program");
    let caller = write(
        &dir,
        "fill.c",
        "void set_row(double *row, int n, double v);\n\
         void fill(double *out, int N, int n)\n{\n    for (int i = 0; i < N; i++)\n        \
         set_row(out + i * n, n, (double)i);\n}\n",
    );
    let callee = write(
        &dir,
        "row.c",
        "void set_row(double *row, int n, double v)\n{\n    for (int j = 0; j < n; j++)\n        \
         row[j] = v + j;\n}\n",
    );
    let out = check(&["analyze", &caller, &callee, "--format", "json"], 0, &[]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let fill = report["loops"]
        .as_array()
        .expect("loops")
        .iter()
        .find(|l| l["function"] == "fill")
        .expect("fill's loop");
    assert_eq!(fill["verdict"], "friendly", "{fill:#}");
    let out_param = fill["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .find(|p| p["name"] == "out")
        .expect("out");
    assert_eq!(out_param["role"], "out");
    assert_eq!(out_param["bytes"]["hi"], "8*N*n");
    let alone = check(&["analyze", &caller, "--format", "json"], 0, &[]);
    let report: serde_json::Value = serde_json::from_slice(&alone.stdout).expect("json");
    assert_eq!(report["loops"][0]["verdict"], "not-friendly");
}

#[test]
fn a_header_function_loop_is_reported_once_and_only_where_it_is_compiled() {
    // `util.h` defines two static inline functions with a loop each; `a.c` and `b.c` call
    // `scale`, nobody calls `clear`, so gcc compiles `scale` into both files and `clear`
    // into neither. `grid.h`, `grid.c`'s own header, keeps its unused `reset`.
    let dir = temp_dir("header-loops");
    write(
        &dir,
        "util.h",
        "static inline void scale(double *a, int n) { for (int i = 0; i < n; i++) a[i] *= 2; }\n\
         static inline void clear(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n",
    );
    write(
        &dir,
        "grid.h",
        "static inline void reset(int *g, int n) { for (int i = 0; i < n; i++) g[i] = -1; }\n",
    );
    let a = write(
        &dir,
        "a.c",
        "#include \"util.h\"\nvoid fa(double *x) { scale(x, 8); }\n",
    );
    let b = write(
        &dir,
        "b.c",
        "#include \"util.h\"\nvoid fb(double *y) { scale(y, 4); }\n",
    );
    let grid = write(&dir, "grid.c", "#include \"grid.h\"\nint g_size = 4;\n");
    let ids = |args: &[&str]| -> Vec<String> {
        let out = check(args, 0, &[]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let mut ids: Vec<String> = report["loops"]
            .as_array()
            .expect("loops")
            .iter()
            .map(|l| {
                let id = l["id"].as_str().expect("id");
                Path::new(id)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids(&["analyze", &a, &b, "--format", "json"]),
        ["util.h:1:46"]
    );
    assert_eq!(ids(&["analyze", &b, "--format", "json"]), ["util.h:1:46"]);
    assert_eq!(
        ids(&["analyze", &grid, "--format", "json"]),
        ["grid.h:1:43"]
    );
    // Asking for `clear` in a file that never calls it says why it is not there.
    check(
        &["analyze", &a, "--function", "clear"],
        2,
        &[
            "`clear` is a `static` function of",
            "util.h:2`",
            "no analysed file calls",
        ],
    );
    // A file that calls nothing of `util.h` and defines no function (hypre's CUDA files
    // without CUDA) is analysed, with no loops: exit 0, not "nothing could be analysed".
    let empty = write(&dir, "empty.c", "#include \"util.h\"\nint unused_global;\n");
    assert!(ids(&["analyze", &empty, "--format", "json"]).is_empty());
}

/// Loads `yaml` with PyYAML's `safe_load` (a YAML 1.1 reader) and returns it as JSON, or
/// `None` when python3 has no `yaml` module (CI installs it and sets
/// WARPWISE_REQUIRE_PYYAML, so there it fails instead).
fn pyyaml_load(yaml: &str) -> Option<serde_json::Value> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import json, sys\ntry:\n    import yaml\nexcept ImportError:\n    sys.exit(3)\n\
             print(json.dumps(yaml.safe_load(sys.stdin.read()), default=str))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(yaml.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_PYYAML").is_none(),
            "PyYAML is required (WARPWISE_REQUIRE_PYYAML) but python3 cannot import yaml"
        );
        eprintln!("skipped: python3 has no `yaml` module (pip install pyyaml)");
        return None;
    }
    assert!(
        out.status.success(),
        "PyYAML cannot load the report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Every report of the samples, and a profile, load with PyYAML (YAML 1.1) to the values
/// serde_yaml (YAML 1.2) reads: `=` reductions, loop variables named `n` or `on`. What
/// they load to also matches the kernel report's JSON Schema.
#[test]
fn reports_load_the_same_in_yaml_1_1_and_1_2_readers() {
    let dir = temp_dir("yaml11");
    let src = write(
        &dir,
        "flags.c",
        "void f(const int *v, int n, int *found, double *on) {\n\
         int flag = 0;\n\
         for (int i = 0; i < n; i++) if (v[i] == 7) flag = 1;\n\
         *found = flag;\n\
         for (int y = 0; y < n; y++) on[y] = y;\n}\n",
    );
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for args in [
        vec!["analyze", src.as_str(), "--format", "yaml"],
        vec![
            "analyze",
            samples.to_str().unwrap(),
            "--format",
            "yaml",
            "-q",
        ],
    ] {
        let out = warpwise(&args);
        assert!(out.status.success(), "{args:?}");
        let yaml = String::from_utf8(out.stdout).unwrap();
        let ours: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
        assert_valid(SchemaKind::KernelReport, &ours);
        let Some(theirs) = pyyaml_load(&yaml) else {
            return;
        };
        assert_eq!(theirs, ours, "{args:?}: PyYAML reads other values");
        if args[1] == src {
            assert!(yaml.contains("operator: '='"), "{yaml}");
        }
    }
}

/// `cd build && warpwise analyze -p . ../src`: the database's entries are relative to their
/// `directory`, the paths to where warpwise runs; both are resolved before they are compared.
#[test]
fn a_compile_database_and_paths_from_another_directory_meet() {
    let dir = temp_dir("p-relative");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/vector_add.c"),
        dir.join("src/vector_add.c"),
    )
    .unwrap();
    std::fs::write(
        dir.join("build/compile_commands.json"),
        format!(
            r#"[{{"directory": "{}", "file": "../src/vector_add.c",
                 "arguments": ["cc", "-c", "../src/vector_add.c"]}}]"#,
            dir.join("build").display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(dir.join("build"))
        .args(["analyze", "-p", ".", "../src", "--format", "yaml", "-q"])
        .output()
        .unwrap();
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(yaml.contains("function: vadd"), "found nothing:\n{yaml}");
}

/// A loop whose callee walks a tree from a root it receives: the nodes are not one array.
/// Both ports refuse it with that reason (not "section unknown"), and the recipe's kernel
/// takes no argument for them but says to copy the structure deep or share its memory.
#[test]
fn memory_reached_through_loaded_pointers_is_refused_by_both_ports_with_its_reason() {
    let dir = crate::common::scratch("reached", "tree");
    let file = dir.join("tree.c");
    std::fs::write(
        &file,
        "struct node { double v; struct node *left, *right; };\n\
         static double sum(const struct node *n, int d)\n\
         {\n    if (!n || d == 0)\n        return 0;\n    return n->v + sum(n->left, d - 1) + sum(n->right, d - 1);\n}\n\
         void k(double *z, const struct node *root, int n)\n\
         {\n    for (int i = 0; i < n; i++)\n        z[i] = sum(root, i % 5);\n}\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let why = "is not one array but every object reached by following pointers";
    let loop_at = format!("{path}:10");
    let cuda = crate::common::warpwise(&[
        "emit",
        "--target",
        "cuda",
        path,
        "--loop",
        &loop_at,
        "-o",
        dir.join("cuda").to_str().unwrap(),
    ]);
    assert!(
        crate::common::text(&cuda).contains(why),
        "{}",
        crate::common::text(&cuda)
    );
    let openmp = crate::common::warpwise(&[
        "emit",
        "--target",
        "openmp",
        path,
        "-o",
        dir.join("omp").to_str().unwrap(),
    ]);
    assert!(
        crate::common::text(&openmp).contains(why),
        "{}",
        crate::common::text(&openmp)
    );
    let recipe = crate::common::text(&crate::common::warpwise(&[
        "analyze", path, "--format", "text",
    ]));
    assert!(
        recipe.contains(
            "__global__ void k_L10_kernel(const struct node *d_root, double *d_z, int n)"
        ),
        "{recipe}"
    );
    assert!(recipe.contains("copy the structure deep"), "{recipe}");
}
