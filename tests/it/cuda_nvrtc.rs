//! Every kernel `warpwise emit` generates for a friendly sample loop is real CUDA: NVRTC
//! compiles it to PTX (`emit --check`), under the recommended and the natural mapping, and
//! with shared memory where the report advises it. Runs wherever NVRTC loads (no GPU
//! needed); elsewhere it prints why it skipped, and with `WARPWISE_REQUIRE_NVRTC=1` (CI)
//! a missing NVRTC fails.

use advisor::model::{GridMapping, Report, Verdict};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_warpwise")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "nvrtc-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn nvrtc_available() -> bool {
    match cuda::gpu::nvrtc::library() {
        Ok(_) => true,
        Err(e) if std::env::var_os("WARPWISE_REQUIRE_NVRTC").is_some_and(|v| !v.is_empty()) => {
            panic!("WARPWISE_REQUIRE_NVRTC is set but {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

fn mapping_flag(m: &GridMapping) -> String {
    match &m.y {
        Some(y) => format!("x={},y={}", m.x, y),
        None => format!("x={}", m.x),
    }
}

fn emit(file: &str, line: u32, extra: &[String]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.current_dir(root())
        .args([
            "emit",
            file,
            "--loop",
            &format!("{file}:{line}"),
            "--check",
            "-o",
        ])
        .arg(scratch())
        .args(extra);
    cmd.output().unwrap()
}

#[test]
fn every_generated_sample_and_fixture_kernel_compiles_to_ptx() {
    if !nvrtc_available() {
        return;
    }
    let mut compiled = 0;
    let mut refused = Vec::new();
    let mut with_reductions = 0;
    let mut samples: Vec<String> = Vec::new();
    for dir in ["samples", "tests/fixtures/cuda"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "c") {
                let name = path.file_name().unwrap().to_str().unwrap();
                samples.push(format!("{dir}/{name}"));
            }
        }
    }
    samples.sort();
    for file in samples {
        let out = Command::new(bin())
            .current_dir(root())
            .args(["analyze", &file, "--format", "yaml"])
            .output()
            .unwrap();
        let report: Report = serde_yaml::from_slice(&out.stdout).expect("a report");
        for l in report
            .loops
            .iter()
            .filter(|l| l.verdict == Verdict::Friendly)
        {
            let mut variants: Vec<Vec<String>> = vec![vec![]];
            if let (Some(natural), Some(recommended)) =
                (l.mappings.first(), l.recommended_mapping.as_ref())
            {
                if &natural.mapping != recommended {
                    variants.push(vec!["--mapping".into(), mapping_flag(&natural.mapping)]);
                }
            }
            if !l.shared_memory.is_empty() {
                variants.push(vec!["--shared".into()]);
            }
            for extra in variants {
                let out = emit(&file, l.line, &extra);
                let stderr = String::from_utf8_lossy(&out.stderr);
                match out.status.code() {
                    Some(0) => {
                        assert!(stderr.contains("NVRTC compiled"), "{stderr}");
                        compiled += 1;
                        with_reductions += usize::from(!l.reductions.is_empty());
                    }
                    // Refused before any CUDA was written (a reduction kind that is not
                    // generated, a mapping onto a loop that needs a profile): no kernel to check.
                    Some(1 | 2)
                        if !stderr.contains("does not compile") && !stderr.contains("--check") =>
                    {
                        refused.push(format!("{file}:{} {extra:?}", l.line));
                    }
                    _ => panic!("{file}:{} {extra:?}: {stderr}", l.line),
                }
            }
        }
    }
    eprintln!(
        "{compiled} kernels compiled to PTX ({with_reductions} with reductions); refused before \
         generation: {refused:?}"
    );
    assert!(compiled >= 30, "only {compiled} kernels compiled");
    assert!(
        with_reductions >= 30,
        "only {with_reductions} reduction kernels compiled"
    );
}

/// A callee that calls the math library: the kernel gets a `__device__` copy of the callee
/// and calls `sqrt` as device code has it (no port of `sqrt` is asked for or attempted),
/// the recipe says so, and NVRTC compiles the kernel.
#[test]
fn a_callee_calling_the_math_library_is_ported_without_porting_sqrt() {
    let file = "tests/fixtures/cuda/callee_math.c";
    let recipe = Command::new(bin())
        .current_dir(root())
        .args(["analyze", file, "--format", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&recipe.stdout);
    assert!(
        text.contains("norm2: defined in your program: add a `__device__` version\n"),
        "{text}"
    );
    assert!(!text.contains("of sqrt"), "{text}");
    if !nvrtc_available() {
        return;
    }
    let out = emit(file, 10, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("NVRTC compiled"), "{stderr}");
}

/// Kernels whose integer counters are computed from the index (`i++, k += 2`; `k++` in a
/// loop that runs down) compile: the copy is declared `auto`.
#[test]
fn kernels_computing_counters_from_the_index_compile() {
    if !nvrtc_available() {
        return;
    }
    for line in [17, 123] {
        let out = emit("tests/fixtures/openmp/walks.c", line, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line}: {stderr}");
        assert!(stderr.contains("NVRTC compiled"), "{line}: {stderr}");
    }
}

/// Arg-min/arg-max kernels compile: shuffles of the value, the iteration and each
/// partner, a lock in the state buffer, the entry values copied out of it.
#[test]
fn arg_min_and_arg_max_kernels_compile() {
    if !nvrtc_available() {
        return;
    }
    for line in [29, 39, 49, 59, 69, 90, 104, 114] {
        let out = emit("tests/fixtures/openmp/argext.c", line, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line}: {stderr}");
        assert!(stderr.contains("NVRTC compiled"), "{line}: {stderr}");
    }
}

/// The recipe of every sample prints C a user can paste: each kernel signature
/// compiles with NVRTC (the program's own type names stand for opaque types), and each
/// launch's grid, `cudaMalloc` and `cudaMemcpy` reads as a C expression.
#[test]
fn every_sample_recipe_prints_kernels_nvrtc_compiles_and_c_copies() {
    if !nvrtc_available() {
        return;
    }
    let mut samples: Vec<PathBuf> = std::fs::read_dir(root().join("samples"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    samples.sort();
    let mut kernels = 0;
    for sample in &samples {
        let out = Command::new(bin())
            .current_dir(root())
            .args(["analyze", &sample.to_string_lossy(), "--format", "text"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut typedefs = std::collections::BTreeSet::new();
        let mut source = String::new();
        for line in text.lines().map(str::trim) {
            if let Some(signature) = line.strip_prefix("__global__ void ") {
                for name in program_type_names(signature) {
                    typedefs.insert(format!("typedef long {name};\n"));
                }
                source.push_str(&format!("extern \"C\" __global__ void {signature} {{}}\n"));
                kernels += 1;
            }
            for call in ["cudaMalloc(", "cudaMemcpy("] {
                if line.starts_with(call) {
                    let expr = line.trim_end_matches(';');
                    assert!(
                        frontend::parse::is_c_expression(expr),
                        "{}: `{expr}` is not C",
                        sample.display()
                    );
                }
            }
            if let Some(launch) = line.strip_prefix("Launch ") {
                if let Some((_, rest)) = launch.split_once("<<<") {
                    let grid = rest.split(">>>").next().unwrap_or_default();
                    let grid = grid.rsplit_once(',').map_or(grid, |(g, _)| g);
                    assert!(
                        frontend::parse::is_c_expression(grid),
                        "{}: launch grid `{grid}` is not C",
                        sample.display()
                    );
                }
            }
        }
        if source.is_empty() {
            continue;
        }
        let program: String = typedefs.into_iter().collect::<String>() + &source;
        if let Err(e) = cuda::gpu::nvrtc::compile_to_ptx(
            &program,
            "recipe.cu",
            &cuda::gpu::nvrtc::CompileOptions::default(),
        ) {
            panic!(
                "{}: the recipe's kernels do not compile: {e}\n{program}",
                sample.display()
            );
        }
    }
    assert!(
        kernels > 50,
        "only {kernels} kernel signatures in the recipes"
    );
}

/// Identifiers of a kernel signature that name types of the program (`image_t`), not C's
/// own types, qualifiers or the parameters' names.
fn program_type_names(signature: &str) -> Vec<String> {
    const C_WORDS: [&str; 16] = [
        "const", "volatile", "restrict", "unsigned", "signed", "char", "short", "int", "long",
        "float", "double", "void", "_Bool", "struct", "union", "enum",
    ];
    let inner = signature
        .split_once('(')
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .unwrap_or_default();
    let mut out = Vec::new();
    for param in inner.split(',') {
        // Drop comments, then the declarator's name (the last identifier before any `[`).
        let param = match param.find("/*") {
            Some(at) => &param[..at],
            None => param,
        };
        let words: Vec<&str> = param
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        let Some((_, types)) = words.split_last() else {
            continue;
        };
        let mut after_tag = false;
        for w in types {
            if !C_WORDS.contains(w) && !after_tag {
                out.push(w.to_string());
            }
            after_tag = matches!(*w, "struct" | "union" | "enum");
        }
    }
    out
}
