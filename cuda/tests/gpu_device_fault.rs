//! A kernel that faults on the GPU comes back as `Err`, not a panic or an abort.
//!
//! Its own test binary: a fault poisons the CUDA context, and whether the driver lets the
//! process work again afterwards is not ours to promise, so no other test shares the process.

use cuda::gpu::device::{self, KernelArg};
use cuda::gpu::nvrtc::{self, CompileOptions};

#[test]
fn out_of_bounds_kernel_is_an_error() {
    let gpu = match device::probe() {
        Ok(gpu) => gpu,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let options = CompileOptions {
        arch: Some(gpu.nvrtc_arch()),
        extra: Vec::new(),
    };
    let compile = |source: &str| match nvrtc::compile_to_ptx(source, "fault.cu", &options) {
        Ok(ptx) => Some(ptx),
        Err(error) => {
            eprintln!("skipped: a GPU ({}) but {error}", gpu.name);
            None
        }
    };
    let Some(ptx) =
        compile("extern \"C\" __global__ void bad(int *x) { x[threadIdx.x + (1 << 28)] = 1; }\n")
    else {
        return;
    };
    let mut args = vec![KernelArg::Buffer {
        bytes: vec![0; 4],
        copy_back: true,
    }];
    let error = device::run_kernel(&ptx, "bad", &mut args, [1, 1, 1], [32, 1, 1], 0).unwrap_err();
    eprintln!("faulting kernel: {error}");

    // Reported, not asserted: whether a fresh primary context recovers is up to the driver.
    let Some(ptx) = compile("extern \"C\" __global__ void one(int *x) { x[0] = 1; }\n") else {
        return;
    };
    let mut args = vec![KernelArg::Buffer {
        bytes: vec![0; 4],
        copy_back: true,
    }];
    match device::run_kernel(&ptx, "one", &mut args, [1, 1, 1], [1, 1, 1], 0) {
        Ok(_) => eprintln!("after the fault, the next run worked: {:?}", args[0]),
        Err(error) => eprintln!("after the fault, the next run failed: {error}"),
    }
}
