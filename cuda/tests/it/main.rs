//! The cuda crate's integration tests, one binary: the CPU shim, the GPU driver layer and
//! NVRTC. Two tests keep binaries of their own because they change the process:
//! `gpu_nvrtc_env` sets `WARPWISE_NVRTC`, read once per process, and `gpu_device_fault`
//! poisons the CUDA context with a faulting kernel.

mod cuda_shim;
mod gpu_device;
mod gpu_nvrtc;

/// The kernel the driver and NVRTC tests compile and launch: `out = a + b` over `n` floats.
const VEC_ADD: &str = r#"
extern "C" __global__ void vec_add(const float *a, const float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}
"#;
