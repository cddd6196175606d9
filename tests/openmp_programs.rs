//! Whole programs ported by `warpwise emit --target openmp` and checked by
//! `validate --target openmp` (clang's host offloading: a separate device data
//! environment, so a global missing on the device does not link and a stale or short map
//! prints other numbers): globals that helpers compiled for the device read, in their own
//! file or another, changed by the host between kernels; and a data region around kernels
//! whose sections move with a counter that runs up to an inclusive bound; structs declared
//! in a loop's body, which no clause may name.
//!
//! The validation needs an offloading clang (`.ci/run` installs clang-16); without one the
//! tests check the emitted text only, unless `WARPWISE_REQUIRE_OFFLOAD` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "programs-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn warpwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpwise"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether an offloading clang is here; prints why not (and fails under
/// `WARPWISE_REQUIRE_OFFLOAD`).
fn offload_available() -> bool {
    let cc = std::env::var("WARPWISE_OFFLOAD_CC").unwrap_or_else(|_| "clang-16".into());
    let ok = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = format!(
            "skipped: `{cc}` is not installed (apt-get install clang-16 libomp-16-dev clang-tools-16)"
        );
        assert!(
            std::env::var_os("WARPWISE_REQUIRE_OFFLOAD").is_none(),
            "{why}, and WARPWISE_REQUIRE_OFFLOAD is set"
        );
        eprintln!("{why}");
    }
    ok
}

/// Writes `files` (name, text) into a fresh directory; their paths.
fn program(name: &str, files: &[(&str, &str)]) -> Vec<String> {
    let dir = scratch(name);
    files
        .iter()
        .map(|(f, t)| {
            std::fs::write(dir.join(f), t).unwrap();
            dir.join(f).to_string_lossy().to_string()
        })
        .collect()
}

/// `emit --target openmp` of `files`: the ported text of each file written, by name, and
/// what emit said.
fn emit(files: &[String]) -> (Vec<(String, String)>, String) {
    let dir = scratch("emit");
    let d = dir.to_string_lossy().to_string();
    let mut args = vec!["emit", "--target", "openmp"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", &d]);
    let out = warpwise(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut ported: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    ported.sort();
    (ported, text(&out))
}

/// `validate --target openmp FILES`: passes, with `ported` loops.
fn validates(files: &[String], ported: usize) {
    let mut args = vec!["validate", "--target", "openmp"];
    args.extend(files.iter().map(String::as_str));
    let out = warpwise(&args);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{files:?}:\n{all}");
    assert!(all.contains("PASS"), "{all}");
    let count = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("ported "))
        .count();
    assert_eq!(count, ported, "{all}");
}

/// A helper in another file reads a global table that the host rewrites between two runs
/// of the kernel (as NPB's `set_constants` fills `ce`): the table must exist on the
/// device (the image does not link otherwise) and be sent before each kernel (a device
/// copy made once would print the first pass's numbers twice).
#[test]
fn a_global_read_by_a_helper_in_another_file_is_on_the_device_and_current() {
    let files = program(
        "global-other-file",
        &[
            (
                "main.c",
                "#include <stdio.h>\n\
                 extern double coef[4];\n\
                 double scale(double x, int i);\n\
                 int main(void) {\n\
                 \x20 double a[64];\n\
                 \x20 for (int pass = 0; pass < 2; pass++) {\n\
                 \x20   for (int k = 0; k < 4; k++) coef[k] = k + 10 * pass;\n\
                 \x20   for (int i = 0; i < 64; i++) a[i] = scale(i, i);\n\
                 \x20   printf(\"%g %g %g\\n\", a[1], a[38], a[63]);\n\
                 \x20 }\n\
                 \x20 return 0;\n\
                 }\n",
            ),
            (
                "helper.c",
                "double coef[4];\n\
                 double scale(double x, int i) { return coef[i % 4] * x + coef[3]; }\n",
            ),
        ],
    );
    let (ported, said) = emit(&files);
    let helper = &ported.iter().find(|(n, _)| n == "helper.c").unwrap().1;
    assert!(
        helper.contains("double coef[4];\n#pragma omp declare target link(coef)\n"),
        "{helper}"
    );
    let main = &ported.iter().find(|(n, _)| n == "main.c").unwrap().1;
    assert!(
        main.contains("extern double coef[4];\n#pragma omp declare target link(coef)\n"),
        "{main}"
    );
    // The kernel that calls the helper maps the table (the loop filling it is ported too,
    // and a data region keeps both on the device with an update for the host's `printf`).
    assert!(main.contains("map(to: coef)"), "{main}\n{said}");
    if offload_available() {
        validates(&files, 2);
    }
}

/// A `static` table of the loop's own file, read only by the helper the kernel calls and
/// rewritten between kernels; and a `const` table, which the device gets once from its
/// definition (`declare target`, not `link`: always present, so a `map` of it copies
/// nothing).
#[test]
fn a_static_global_and_a_constant_table_read_by_a_helper() {
    let files = program(
        "static-global",
        &[(
            "main.c",
            "#include <stdio.h>\n\
             static double ce[3][5];\n\
             static const double w[3] = {0.5, 0.25, 0.125};\n\
             static double f(int i) { return ce[i % 3][i % 5] * w[i % 3]; }\n\
             int main(void) {\n\
             \x20 double a[100];\n\
             \x20 for (int pass = 1; pass <= 3; pass++) {\n\
             \x20   for (int m = 0; m < 3; m++)\n\
             \x20     for (int n = 0; n < 5; n++) ce[m][n] = pass * (m + 1) + n;\n\
             \x20   for (int i = 0; i < 100; i++) a[i] = f(i) + i;\n\
             \x20   printf(\"%g %g %g\\n\", a[0], a[7], a[99]);\n\
             \x20 }\n\
             \x20 return 0;\n\
             }\n",
        )],
    );
    let (ported, said) = emit(&files);
    let main = &ported[0].1;
    assert!(
        main.contains("static double ce[3][5];\n#pragma omp declare target link(ce)\n"),
        "{main}"
    );
    assert!(main.contains("#pragma omp declare target (w)\n"), "{main}");
    assert!(said.contains("ported "), "{said}");
    if offload_available() {
        validates(&files, 2);
    }
}

/// A sequential sweep `for (i = 1; i <= n; i++)` (each row reads the one before) around a
/// kernel over the row's columns: the data region maps the rows of every iteration, the
/// last one included (`i == n`); one row short, the last kernel's map would extend the
/// region's and the runtime refuses it.
#[test]
fn a_data_region_covers_the_kernels_of_an_inclusive_bound() {
    let files = program(
        "inclusive-region",
        &[(
            "sweep.c",
            "#include <stdio.h>\n\
             #define M 40\n\
             static void sweep(int n, double v[][M]) {\n\
             \x20 int i, j;\n\
             \x20 for (i = 1; i <= n; i++) {\n\
             \x20   for (j = 0; j < M; j++)\n\
             \x20     v[i][j] = 0.5 * v[i - 1][j] + j;\n\
             \x20 }\n\
             }\n\
             int main(void) {\n\
             \x20 static double v[21][M];\n\
             \x20 for (int i = 0; i < 21; i++)\n\
             \x20   for (int j = 0; j < M; j++) v[i][j] = i - j;\n\
             \x20 sweep(20, v);\n\
             \x20 printf(\"%g %g %g\\n\", v[1][3], v[19][39], v[20][0]);\n\
             \x20 sweep(20, v);\n\
             \x20 printf(\"%g %g %g\\n\", v[1][3], v[19][39], v[20][0]);\n\
             \x20 return 0;\n\
             }\n",
        )],
    );
    let (ported, said) = emit(&files);
    let sweep = &ported[0].1;
    assert!(sweep.contains("#pragma omp target data"), "{sweep}\n{said}");
    if offload_available() {
        validates(&files, 2);
    }
}

/// Structs declared in the loop's body and reached only through their members (RSBench's
/// `Pole pole = data.poles[...]`, a complex product returned by a helper): private by
/// their declaration, so no clause names them (not in scope at the pragma, the port
/// would not compile).
#[test]
fn structs_declared_in_the_body_are_named_by_no_clause() {
    let files = program(
        "body-structs",
        &[(
            "poles.c",
            "#include <stdio.h>\n\
             typedef struct { double r, i; } Cx;\n\
             typedef struct { Cx ea, rt; int l; } Pole;\n\
             static Cx c_mul(Cx a, Cx b) { Cx c = {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r}; return c; }\n\
             static Cx c_sub(Cx a, Cx b) { Cx c = {a.r - b.r, a.i - b.i}; return c; }\n\
             double sum_poles(const Pole *poles, int start, int end, Cx t1) {\n\
             \x20 double sig = 0;\n\
             \x20 for (int i = start; i < end; i++) {\n\
             \x20   Pole pole = poles[i];\n\
             \x20   Cx d = c_mul(pole.rt, c_sub(pole.ea, t1));\n\
             \x20   sig += d.r + pole.l;\n\
             \x20 }\n\
             \x20 return sig;\n\
             }\n\
             int main(void) {\n\
             \x20 static Pole poles[200];\n\
             \x20 for (int i = 0; i < 200; i++) {\n\
             \x20   poles[i].ea.r = i * 0.5; poles[i].ea.i = 1.0 / (i + 1);\n\
             \x20   poles[i].rt.r = 2.0 - i * 0.01; poles[i].rt.i = i % 7; poles[i].l = i % 4;\n\
             \x20 }\n\
             \x20 Cx t1 = {0.25, -0.5};\n\
             \x20 printf(\"%.6f\\n\", sum_poles(poles, 3, 180, t1));\n\
             \x20 printf(\"%.6f\\n\", sum_poles(poles, 0, 200, t1));\n\
             \x20 return 0;\n\
             }\n",
        )],
    );
    let (ported, said) = emit(&files);
    let text = &ported[0].1;
    assert!(
        !text.contains("pole)") && !text.contains("private(d"),
        "{text}\n{said}"
    );
    if offload_available() {
        validates(&files, 2);
    }
}

/// `double ***` grids allocated row by row (NPB MG): a kernel over `z[i3][i2][...]` maps
/// the row pointer `z[i3][i2]`, whose mapping clang 16's runtime keeps after the kernel, so
/// a later kernel mapping two of those pointers fails at run time. Such loops are refused
/// with that reason; the program still validates with what is ported.
#[test]
fn rows_of_rows_of_pointers_are_refused_and_the_program_still_runs() {
    let files = program(
        "rows-of-rows",
        &[(
            "grid.c",
            "#include <stdio.h>\n\
             #include <stdlib.h>\n\
             static void zero3(double ***z, int n1, int n2, int n3) {\n\
             \x20 for (int i3 = 0; i3 < n3; i3++)\n\
             \x20   for (int i2 = 0; i2 < n2; i2++)\n\
             \x20     for (int i1 = 0; i1 < n1; i1++) z[i3][i2][i1] = 0.0;\n\
             }\n\
             static void smooth(double ***u, double ***v, int n1, int n2, int n3) {\n\
             \x20 for (int i3 = 1; i3 < n3 - 1; i3++)\n\
             \x20   for (int i2 = 1; i2 < n2 - 1; i2++)\n\
             \x20     for (int i1 = 0; i1 < n1; i1++)\n\
             \x20       v[i3][i2][i1] += u[i3][i2 - 1][i1] + u[i3][i2 + 1][i1] + u[i3 - 1][i2][i1];\n\
             }\n\
             int main(void) {\n\
             \x20 int n1 = 16, n2 = 12, n3 = 6;\n\
             \x20 double ***u = malloc(n3 * sizeof(double **)), ***v = malloc(n3 * sizeof(double **));\n\
             \x20 for (int k = 0; k < n3; k++) {\n\
             \x20   u[k] = malloc(n2 * sizeof(double *)); v[k] = malloc(n2 * sizeof(double *));\n\
             \x20   for (int j = 0; j < n2; j++) { u[k][j] = malloc(n1 * sizeof(double)); v[k][j] = malloc(n1 * sizeof(double)); }\n\
             \x20 }\n\
             \x20 zero3(v, n1, n2, n3);\n\
             \x20 for (int k = 0; k < n3; k++) for (int j = 0; j < n2; j++) for (int i = 0; i < n1; i++) u[k][j][i] = k + 0.5 * j - 0.25 * i;\n\
             \x20 smooth(u, v, n1, n2, n3);\n\
             \x20 zero3(u, n1, n2, n3);\n\
             \x20 smooth(v, u, n1, n2, n3);\n\
             \x20 double w[64];\n\
             \x20 for (int i = 0; i < 64; i++) w[i] = 0.5 * i + n1;\n\
             \x20 printf(\"%g %g %g %g\\n\", v[2][3][4], u[3][5][7], u[4][10][15], w[63]);\n\
             \x20 return 0;\n\
             }\n",
        )],
    );
    let (_, said) = emit(&files);
    assert!(
        said.contains("not ported") && said.contains("is a row of a row of pointers"),
        "{said}"
    );
    if offload_available() {
        validates(&files, 1);
    }
}
