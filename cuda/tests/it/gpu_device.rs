//! The driver side of `cuda::gpu`: probing, launching, and errors instead of panics without a GPU.

use crate::VEC_ADD;
use cuda::gpu::device::{self, KernelArg, Launch};
use cuda::gpu::nvrtc::{self, CompileOptions};
use cuda::gpu::{GpuError, PtxError};

/// In-place, so repeated runs show whether each starts from the same input.
const INCREMENT: &str = r#"
extern "C" __global__ void increment(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
"#;

/// Hand-written PTX for `vec_add`, so the argument checks run without NVRTC.
const VEC_ADD_PTX: &str = ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry vec_add(\n\t.param .u64 vec_add_param_0,\n\t.param .u64 vec_add_param_1,\n\t.param .u64 vec_add_param_2,\n\t.param .u32 vec_add_param_3\n)\n{\n\tret;\n}\n";

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn buffer(bytes: Vec<u8>, copy_back: bool) -> KernelArg {
    KernelArg::Buffer { bytes, copy_back }
}

/// The GPU, or `None` after printing why the test is skipped: no GPU, or a GPU but no
/// NVRTC to compile the kernels with.
fn gpu_or_skip() -> Option<device::GpuInfo> {
    let gpu = match device::probe() {
        Ok(info) => info,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    if let Err(error) = nvrtc::library() {
        eprintln!("skipped: a GPU ({}) but {error}", gpu.name);
        return None;
    }
    Some(gpu)
}

fn compile(source: &str, name: &str, gpu: &device::GpuInfo) -> String {
    let options = CompileOptions {
        arch: Some(gpu.nvrtc_arch()),
        extra: Vec::new(),
    };
    nvrtc::compile_to_ptx(source, name, &options).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn probe_answers_without_panicking() {
    // Without a GPU this is the whole test: an Err with a reason, not a panic or abort.
    match device::probe() {
        Ok(info) => {
            eprintln!("GPU: {info:?}");
            assert!(!info.name.is_empty());
            assert!(info.compute_capability.0 >= 3);
            assert!(info.memory_bytes > 0);
        }
        Err(why) => {
            eprintln!("{why}");
            let text = why.to_string();
            assert!(text.starts_with("no GPU:") || !text.is_empty(), "{why}");
        }
    }
    // Asking twice gives the same kind of answer.
    assert_eq!(device::probe().is_ok(), device::probe().is_ok());
}

#[test]
fn run_without_gpu_is_an_error_and_leaves_buffers_alone() {
    if device::probe().is_ok() {
        eprintln!("skipped: a GPU is present; this checks the no-GPU path");
        return;
    }
    let mut args = vec![
        buffer(f32_bytes(&[1.0]), false),
        buffer(f32_bytes(&[2.0]), false),
        buffer(f32_bytes(&[0.0]), true),
        KernelArg::I32(1),
    ];
    let before = args.clone();
    let error = device::run_kernel(VEC_ADD_PTX, "vec_add", &mut args, [1, 1, 1], [32, 1, 1], 0)
        .unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::DriverMissing(_) | GpuError::NoDevice { .. }
        ),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("no GPU:"), "{error}");
    assert_eq!(args, before);
}

#[test]
fn arguments_are_checked_against_the_ptx_signature_before_the_gpu() {
    let mut too_few = vec![buffer(vec![0; 4], false), KernelArg::I32(1)];
    let error = device::run_kernel(
        VEC_ADD_PTX,
        "vec_add",
        &mut too_few,
        [1, 1, 1],
        [1, 1, 1],
        0,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::ArgumentCount {
                params: 4,
                args: 2,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("takes 4 parameters but 2 arguments"),
        "{error}"
    );

    let mut wrong_size = vec![
        buffer(vec![0; 4], false),
        buffer(vec![0; 4], false),
        buffer(vec![0; 4], true),
        KernelArg::I64(1),
    ];
    let error = device::run_kernel(
        VEC_ADD_PTX,
        "vec_add",
        &mut wrong_size,
        [1, 1, 1],
        [1, 1, 1],
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("argument 3") && error.contains("parameter is 4 bytes"),
        "{error}"
    );

    let error = device::run_kernel(
        VEC_ADD_PTX,
        "vecAdd",
        &mut wrong_size,
        [1, 1, 1],
        [1, 1, 1],
        0,
    )
    .unwrap_err();
    assert!(
        matches!(error, GpuError::Ptx(PtxError::NoSuchKernel { .. })),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("its kernels are: vec_add"),
        "{error}"
    );

    let error = device::run_kernel(
        VEC_ADD_PTX,
        "vec_add",
        &mut wrong_size,
        [1, 1, 1],
        [2048, 1, 1],
        0,
    )
    .unwrap_err();
    assert!(error.to_string().contains("at most 1024"), "{error}");
}

#[test]
fn vector_add_runs_and_matches_the_cpu() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let ptx = compile(VEC_ADD, "vec_add.cu", &gpu);
    // Not a multiple of the block size, so the bounds guard matters.
    let n = 100_003;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let mut args = vec![
        buffer(f32_bytes(&a), false),
        buffer(f32_bytes(&b), false),
        buffer(vec![0; n * 4], true),
        KernelArg::I32(n as i32),
    ];
    let blocks = (n as u32).div_ceil(256);
    let launch = Launch {
        grid: [blocks, 1, 1],
        block: [256, 1, 1],
        shared_bytes: 0,
        repetitions: 5,
    };
    let stats = device::run_kernel_with(&ptx, "vec_add", &mut args, &launch)
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("vec_add on {}: {stats:?}", gpu.name);
    let KernelArg::Buffer { bytes, .. } = &args[2] else {
        unreachable!()
    };
    let out = f32s(bytes);
    for i in 0..n {
        assert_eq!(out[i], a[i] + b[i], "element {i}");
    }
    assert_eq!(stats.kernel_ms_each.len(), 5);
    assert!(stats.kernel_ms > 0.0);
}

#[test]
fn repeated_runs_start_from_the_same_input() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let ptx = compile(INCREMENT, "increment.cu", &gpu);
    let input: Vec<u8> = (0..64i32).flat_map(|v| v.to_ne_bytes()).collect();
    let mut args = vec![buffer(input, true), KernelArg::I32(64)];
    let launch = Launch {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        shared_bytes: 0,
        repetitions: 3,
    };
    device::run_kernel_with(&ptx, "increment", &mut args, &launch)
        .unwrap_or_else(|e| panic!("{e}"));
    let KernelArg::Buffer { bytes, .. } = &args[0] else {
        unreachable!()
    };
    let out: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(out, (1..65).collect::<Vec<i32>>());
}
