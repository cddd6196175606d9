//! The cuda crate's integration tests, one binary: the CPU shim, the GPU driver layer and
//! NVRTC. Two tests keep binaries of their own because they change the process:
//! `gpu_nvrtc_env` sets `WARPWISE_NVRTC`, read once per process, and `gpu_device_fault`
//! poisons the CUDA context with a faulting kernel.

mod cuda_shim;
mod gpu_device;
mod gpu_nvrtc;
