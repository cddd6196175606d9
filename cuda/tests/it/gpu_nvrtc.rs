//! NVRTC through `cuda::gpu::nvrtc`: real compilation when libnvrtc loads, a visible skip when not.

use crate::VEC_ADD;
use std::time::Instant;

use cuda::gpu::nvrtc::{self, CompileOptions, NvrtcError};
use cuda::gpu::ptx;

/// NVRTC's location, or `None` after printing why the test is skipped. Skips are printed,
/// never silent, and `.ci/run` sets WARPWISE_REQUIRE_NVRTC=1 so that in CI a missing NVRTC
/// fails instead.
fn nvrtc_or_skip() -> Option<&'static str> {
    match nvrtc::library() {
        Ok(location) => Some(location),
        Err(error) if std::env::var_os("WARPWISE_REQUIRE_NVRTC").is_some_and(|v| !v.is_empty()) => {
            panic!("WARPWISE_REQUIRE_NVRTC is set but {error}")
        }
        Err(error) => {
            eprintln!("skipped: {error}");
            None
        }
    }
}

#[test]
fn vector_add_compiles_to_ptx_with_its_entry() {
    let Some(location) = nvrtc_or_skip() else {
        return;
    };
    let started = Instant::now();
    let ptx = nvrtc::compile_to_ptx(VEC_ADD, "vec_add.cu", &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let elapsed = started.elapsed();
    eprintln!(
        "NVRTC {:?} from {location}: vec_add.cu -> {} bytes of PTX in {:.1} ms",
        nvrtc::version(),
        ptx.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    assert!(ptx.contains(".entry vec_add("), "{ptx}");
    let sizes: Vec<usize> = ptx::entry_params(&ptx, "vec_add")
        .unwrap()
        .iter()
        .map(|p| p.bytes)
        .collect();
    assert_eq!(sizes, [8, 8, 8, 4]);
}

#[test]
fn architecture_option_reaches_nvrtc() {
    if nvrtc_or_skip().is_none() {
        return;
    }
    let options = CompileOptions {
        arch: Some("compute_80".into()),
        extra: vec!["-lineinfo".into()],
    };
    let ptx =
        nvrtc::compile_to_ptx(VEC_ADD, "vec_add.cu", &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains(".target sm_80"), "{ptx}");

    let options = CompileOptions {
        arch: Some("compute_1".into()),
        extra: Vec::new(),
    };
    let error = nvrtc::compile_to_ptx(VEC_ADD, "vec_add.cu", &options).unwrap_err();
    assert!(matches!(error, NvrtcError::Compile { .. }), "{error}");
    assert!(
        error.to_string().contains("--gpu-architecture=compute_1"),
        "{error}"
    );
}

#[test]
fn syntax_error_comes_back_with_the_line_in_the_log() {
    if nvrtc_or_skip().is_none() {
        return;
    }
    // Line 4 lacks its semicolon.
    let source = "extern \"C\" __global__ void broken(float *out, int n) {\n    int i = threadIdx.x;\n    if (i < n)\n        out[i] = 1.0f\n}\n";
    let error = nvrtc::compile_to_ptx(source, "broken.cu", &CompileOptions::default()).unwrap_err();
    let NvrtcError::Compile { status, log, .. } = &error else {
        panic!("expected a compile error, got {error}");
    };
    assert_eq!(status, "NVRTC_ERROR_COMPILATION");
    assert!(log.contains("broken.cu(") && log.contains("error"), "{log}");
    // NVRTC reports the missing `;` where the next token is, line 4 or 5.
    assert!(
        log.contains("broken.cu(4)") || log.contains("broken.cu(5)"),
        "{log}"
    );
    assert!(error.to_string().contains(log.trim_end()));
}

#[test]
fn standard_headers_are_not_available_but_builtin_math_is() {
    if nvrtc_or_skip().is_none() {
        return;
    }
    let with_header =
        "#include <math.h>\nextern \"C\" __global__ void k(float *x) { x[0] = sqrtf(x[0]); }\n";
    let error =
        nvrtc::compile_to_ptx(with_header, "header.cu", &CompileOptions::default()).unwrap_err();
    assert!(error.to_string().contains("math.h"), "{error}");

    let builtin = "extern \"C\" __global__ void k(float *x) { x[0] = sqrtf(x[0]) + expf(x[1]); }\n";
    nvrtc::compile_to_ptx(builtin, "builtin.cu", &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn nul_bytes_are_an_error_not_a_panic() {
    let error = nvrtc::compile_to_ptx(
        "__global__ void k() {}\0",
        "nul.cu",
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(error, NvrtcError::Failed(_)), "{error}");
}
