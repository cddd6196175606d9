//! A WARPWISE_NVRTC that names no library is reported, not ignored and not a panic.
//!
//! Its own test binary: the variable is read once per process, and setting it here must not
//! change what the other NVRTC tests load.

use cuda::gpu::nvrtc::{self, CompileOptions, NvrtcError};

#[test]
fn missing_warpwise_nvrtc_file_is_an_unavailable_error() {
    std::env::set_var("WARPWISE_NVRTC", "/nonexistent/warpwise/libnvrtc.so.12");
    let error = nvrtc::compile_to_ptx(
        "extern \"C\" __global__ void k() {}",
        "k.cu",
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(error, NvrtcError::Unavailable(_)), "{error}");
    let text = error.to_string();
    assert!(text.starts_with("NVRTC not available: WARPWISE_NVRTC=/nonexistent/warpwise/libnvrtc.so.12 does not exist"), "{text}");
    assert!(text.contains("nvidia-cuda-nvrtc-cu12"), "{text}");
    // The answer is kept: a second call gives the same error without retrying.
    assert_eq!(nvrtc::library().unwrap_err(), error);
}
