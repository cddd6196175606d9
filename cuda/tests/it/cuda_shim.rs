//! The CPU shim on hand-written CUDA: barriers make a block's threads wait for each other,
//! blocks and threads run in reverse order, and writes outside a device buffer are reported.

use cuda::{CPU_SHIM, SHIM_NAME};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "shim-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `source` with the shim and runs it; returns (status, stdout, report file).
fn run(name: &str, source: &str) -> (Option<i32>, String, String) {
    let dir = scratch(name);
    std::fs::write(dir.join(SHIM_NAME), CPU_SHIM).unwrap();
    std::fs::write(dir.join("t.cu"), source).unwrap();
    let exe = dir.join("t");
    let cc = Command::new("c++")
        .args([
            "-x",
            "c++",
            "-std=c++14",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
        ])
        .arg(&dir)
        .arg(dir.join("t.cu"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let report = dir.join("report.txt");
    let out = Command::new(&exe)
        .env("WW_CPU_REPORT", &report)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        std::fs::read_to_string(&report).unwrap_or_default(),
    )
}

#[test]
fn barriers_wait_for_the_whole_block() {
    // Each block reverses its slice through shared memory: without a real barrier a thread
    // would read a slot its partner has not written yet (poison).
    let src = r#"
#include "warpwise_cuda_cpu.h"
__global__ void rev(int *a)
{
    // The shim's dynamic shared memory is the array the generated code declares.
    extern __shared__ __align__(16) unsigned char ww_smem[];
    int *s = (int *)ww_smem;
    const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = a[base + t];
    __syncthreads();
    a[base + t] = s[blockDim.x - 1 - t];
}
int main()
{
    int h[64], *d;
    for (int i = 0; i < 64; i++) h[i] = i;
    cudaMalloc((void **)&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    ww_cpu_launch(rev, dim3(4), dim3(16), 16 * sizeof(int), d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (int i = 0; i < 64; i++) printf("%d ", h[i]);
    printf("\n");
    return 0;
}
"#;
    let (status, out, report) = run("barrier", src);
    assert_eq!(status, Some(0), "{out}{report}");
    let want: Vec<String> = (0..4)
        .flat_map(|b| (0..16).rev().map(move |t| (b * 16 + t).to_string()))
        .collect();
    assert_eq!(out.trim(), want.join(" "));
    assert!(report.contains("launch 4 1 1 16 1 1 64"), "{report}");
}

#[test]
fn threads_and_blocks_run_in_reverse() {
    // A carried dependence (`a[i] = a[i - 1] + 1`) run in the shim's order sees old values.
    let src = r#"
#include "warpwise_cuda_cpu.h"
__global__ void order(int *seen, int *next)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    seen[i] = (*next)++;
}
int main()
{
    int *seen, *next, h[12], zero = 0;
    cudaMalloc((void **)&seen, sizeof h);
    cudaMalloc((void **)&next, sizeof(int));
    cudaMemcpy(next, &zero, sizeof zero, cudaMemcpyHostToDevice);
    ww_cpu_launch(order, dim3(3), dim3(4), 0, seen, next);
    cudaMemcpy(h, seen, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 12; i++) printf("%d ", h[i]);
    printf("\n");
    return 0;
}
"#;
    let (status, out, _) = run("order", src);
    assert_eq!(status, Some(0));
    assert_eq!(out.trim(), "11 10 9 8 7 6 5 4 3 2 1 0");
}

#[test]
fn writes_outside_a_buffer_are_reported() {
    let src = r#"
#include "warpwise_cuda_cpu.h"
__global__ void over(int *a, int n) { a[threadIdx.x] = n; }
int main()
{
    int *d;
    cudaMalloc((void **)&d, 3 * sizeof(int));
    ww_cpu_launch(over, dim3(1), dim3(5), 0, d, 7);
    cudaFree(d);
    int h;
    printf("%d\n", cudaMemcpy(&h, d + 1, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
    return 0;
}
"#;
    let (status, out, report) = run("guard", src);
    assert_eq!(status, Some(0));
    // Bytes [12, 20): threads 3 and 4 wrote past the 12-byte buffer; the freed buffer is
    // no device memory any more.
    assert!(report.contains("guard 0 12 12 20"), "{report}");
    assert_eq!(out.trim(), "0");
    assert!(
        report.contains("cudaMemcpy of 4 bytes outside any device buffer"),
        "{report}"
    );
}

#[test]
fn a_barrier_not_reached_by_all_threads_is_an_error() {
    let src = r#"
#include "warpwise_cuda_cpu.h"
__global__ void bad(int *a)
{
    // The first thread to run (the last) waits; so do the other odd ones.
    if (threadIdx.x % 2 == 1)
        __syncthreads();
    a[threadIdx.x] = 1;
}
int main()
{
    int *d;
    cudaMalloc((void **)&d, 8 * sizeof(int));
    ww_cpu_launch(bad, dim3(1), dim3(8), 0, d);
    return 0;
}
"#;
    let (status, _, report) = run("divergent", src);
    assert_eq!(status, Some(3));
    assert!(
        report.contains("4 threads wait at __syncthreads while 4 finished without it"),
        "{report}"
    );
}
