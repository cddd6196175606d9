//! `warpwise validate --backend cuda`: without a GPU the refusal and auto's fallback name
//! the reason; with NVRTC the generated device code of sample kernels compiles to PTX whose
//! parameters match the launch's arguments; with a GPU, samples pass on it and are timed.
//! Tests that need what this machine lacks print `skipped: ...` and return.

use cuda::gpu::{device, nvrtc};
use cuda::validate::snapshot::ProgramOptions;
use cuda::validate::{gpu, prepare, BackendChoice, ValidateOptions};
use cuda::EmitOptions;
use frontend::preprocess::TranslationUnitInput;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cuda-gpu-{}-{}-{name}",
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

/// `validate --backend BACKEND samples/FILE:LINE extra -- args`.
fn validate(backend: &str, file: &str, line: u32, extra: &[&str], args: &[&str]) -> Output {
    let path = format!("samples/{file}");
    let id = format!("{path}:{line}");
    let mut all: Vec<&str> = vec!["validate", &path, "--loop", &id, "--backend", backend];
    all.extend_from_slice(extra);
    all.push("--");
    all.extend_from_slice(args);
    warpwise(&all)
}

#[test]
fn without_a_gpu_cuda_is_refused_and_auto_says_it_chose_cpu() {
    let why = match device::probe() {
        Ok(gpu) => {
            eprintln!(
                "skipped: a GPU is present ({}), nothing to refuse",
                gpu.name
            );
            return;
        }
        Err(why) => why,
    };
    let out = validate("cuda", "vector_add.c", 27, &[], &["100"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains(&format!("--backend cuda: {why}")), "{t}");
    let out = validate("auto", "vector_add.c", 27, &[], &["100"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("backend: cpu"), "{t}");
    assert!(t.contains(&format!("(auto chose cpu: {why})")), "{t}");
    assert!(!t.contains("kernel time"), "{t}");
}

/// The kernel time from a report: `kernel time: X ms`.
fn kernel_ms(t: &str) -> f64 {
    let at = t.find("kernel time: ").expect("a kernel time") + "kernel time: ".len();
    t[at..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn on_a_gpu_samples_pass_under_both_mappings_and_are_timed() {
    if let Err(why) = device::probe() {
        eprintln!("skipped: no GPU: {why}");
        return;
    }
    if let Err(why) = nvrtc::library() {
        eprintln!("skipped: a GPU but {why}");
        return;
    }
    let cases: &[(&str, u32, &[&str], &[&str])] = &[
        ("vector_add.c", 27, &[], &["1000"]),
        ("matrix_add.c", 38, &[], &["40"]),
        ("matrix_add.c", 38, &["--mapping", "x=i,y=j"], &["40"]),
        ("matrix_add.c", 38, &["--mapping", "x=j,y=i"], &["40"]),
        ("every_fourth_add.c", 43, &[], &["50"]),
        ("transpose.c", 37, &["--shared"], &[]),
        // Reductions: a scalar, an element, two at once, a histogram.
        ("dot_product.c", 27, &[], &["100000"]),
        ("matmul.c", 40, &[], &["13", "11", "7"]),
        ("../tests/fixtures/cuda/reductions.c", 175, &[], &["1000"]),
        ("../tests/fixtures/cuda/reductions.c", 273, &[], &["1000"]),
        // One element updated at two sites (`-=` and `+=`): one accumulator.
        ("../tests/fixtures/cuda/reductions.c", 195, &[], &["1000"]),
        (
            "../tests/fixtures/cuda/reductions.c",
            49,
            &["--block", "7x3"],
            &["37"],
        ),
    ];
    let mut failed = Vec::new();
    for (file, line, extra, args) in cases {
        let out = validate("cuda", file, *line, extra, args);
        let t = text(&out);
        if out.status.code() != Some(0) || !t.contains("backend: cuda") || !t.contains("PASS") {
            failed.push(format!("{file}:{line} {extra:?}:\n{t}"));
        } else if kernel_ms(&t) <= 0.0 {
            failed.push(format!(
                "{file}:{line} {extra:?}: no positive kernel time\n{t}"
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The recommended mapping of matrix_add differs from the natural one: both are timed.
    let t = text(&validate("cuda", "matrix_add.c", 38, &[], &["40"]));
    assert!(t.contains("recommended mapping measured"), "{t}");
    let t = text(&validate("auto", "vector_add.c", 27, &[], &["100"]));
    assert!(
        t.contains("auto chose cuda") && t.contains("backend: cuda"),
        "{t}"
    );
}

/// NVRTC or `None` after printing why; `.ci/run` sets WARPWISE_REQUIRE_NVRTC to fail instead.
fn nvrtc_or_skip() -> bool {
    match nvrtc::library() {
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

#[test]
fn device_sources_compile_and_their_ptx_takes_the_launch_arguments() {
    if !nvrtc_or_skip() {
        return;
    }
    // File, line, --mapping, --shared, program arguments.
    type Case<'a> = (&'a str, u32, Option<&'a str>, bool, &'a [&'a str]);
    let cases: &[Case] = &[
        ("vector_add.c", 27, None, false, &["100"]),
        ("matrix_add.c", 38, None, false, &["40"]),
        ("matrix_add.c", 38, Some("x=i,y=j"), false, &["40"]),
        // A section starting below the pointer: the buffer is passed at an offset.
        ("every_fourth_add.c", 43, None, false, &["50"]),
        ("transpose.c", 37, None, true, &[]),
        // A pointer reached through a local struct (`in.pixmap`).
        ("conv2d_rgb.c", 100, None, false, &[]),
        ("signal_conv1d.c", 44, None, false, &["100", "5"]),
        // Reductions: a scalar's device copy is one more buffer; an element and two
        // scalars at once.
        ("dot_product.c", 27, None, false, &["100"]),
        ("matmul.c", 40, None, false, &["13", "11", "7"]),
        (
            "../tests/fixtures/cuda/reductions.c",
            175,
            None,
            false,
            &["37"],
        ),
    ];
    let mut failed = Vec::new();
    for (file, line, mapping, shared, args) in cases {
        let path = root().join("samples").join(file);
        let opts = ValidateOptions {
            loop_id: format!("{}:{line}", path.display()),
            emit: EmitOptions {
                mapping: mapping.map(str::to_string),
                block: (32, 8),
                shared: *shared,
                debug: Default::default(),
            },
            backend: BackendChoice::Cpu,
            program: ProgramOptions {
                cc: profile::driver::real_compiler(),
                cflags: vec!["-O1".into()],
                ldflags: vec!["-lm".into()],
                args: args.iter().map(|a| a.to_string()).collect(),
                entry: 1,
                timeout: Duration::from_secs(60),
            },
            work_dir: scratch(file),
            rtol: None,
            profile: None,
        };
        let prepared = match prepare(&[TranslationUnitInput::new(&path)], &opts) {
            Ok(p) => p,
            Err(e) => {
                failed.push(format!("{file}:{line}: {e}"));
                continue;
            }
        };
        let e = &prepared.emitted;
        // Each scalar reduction's variable travels as a one-element buffer read back.
        for r in e
            .plan
            .reductions
            .iter()
            .filter(|r| r.scalar_ident().is_some())
        {
            let found = prepared.launch.args.iter().any(|a| {
                matches!(a, cuda::validate::launch::LaunchArg::Buffer { array, lo: 0, out: true, bytes, copied }
                    if array == &r.target && *copied == bytes.len() && !bytes.is_empty())
            });
            if !found {
                failed.push(format!(
                    "{file}:{line}: no read-back buffer for `{}` in {:?}",
                    r.target, prepared.launch.args
                ));
            }
        }
        let checked = gpu::compile(&e.device_source, &e.stem, Some("compute_80".into()))
            .and_then(|ptx| gpu::check_params(&ptx, &prepared.launch));
        if let Err(why) = checked {
            failed.push(format!("{file}:{line} {mapping:?}: {why}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
