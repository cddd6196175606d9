//! CUDA C through the frontend: kernels and device functions are marked in the IR, the
//! built-in coordinates are recognised, launches and `dim3` reach the IR as calls, and C++
//! is refused one declaration at a time with its `file:line:col`.

use frontend::cuda_source::{DIM3_FUNCTION, LAUNCH_FUNCTION};
use frontend::ir::{thread_coordinate, Axis, Callee, ExecutionSpace, InstKind, ThreadBuiltin};
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use tempfile::TempDir;

fn load(name: &str, source: &str) -> (TempDir, Unit) {
    let dir = tempfile::Builder::new()
        .prefix("warpwise-cuda-")
        .tempdir()
        .unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, source).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap_or_else(|d| panic!("{d:?}"));
    (dir, unit)
}

/// The messages of the unit's error diagnostics, in order.
fn error_messages(unit: &Unit) -> Vec<String> {
    unit.diagnostics()
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect()
}

const PROGRAM: &str = r#"#include <stdio.h>
#include <iostream>
#define BLOCK 256

struct Node { int starting; int no_of_edges; };

__global__ void vadd(const float *__restrict__ a, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + threadIdx.y;
}

__device__ __host__ float twice(float x) { return 2 * x; }

extern "C" __global__ void graph(Node *nodes, int *cost)
{
    __shared__ float tile[BLOCK];
    tile[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&cost[nodes[blockIdx.x].starting], 1);
}

template <typename T> __global__ void tmpl(T *a) { a[threadIdx.x] = 0; }

void print(int x) { std::cout << x; }

void swap(float &a, float &b) { float t = a; a = b; b = t; }

int main(void)
{
    int n = 1 << 20;
    float *a = 0, *c = 0;
    dim3 grid(n / BLOCK), block(BLOCK, 1);
    vadd<<<grid, block>>>(a, c, n);
    vadd<<<n / 256,
           256>>>(a, c, n);
    return 0;
}
"#;

#[test]
fn kernels_device_functions_and_coordinates_are_in_the_ir() {
    let (_dir, unit) = load("prog.cu", PROGRAM);
    let program = &unit.lowered.program;
    let space = |name: &str| program.function(name).map(|f| f.execution);
    assert_eq!(space("vadd"), Some(ExecutionSpace::Kernel));
    assert_eq!(space("graph"), Some(ExecutionSpace::Kernel));
    assert_eq!(space("twice"), Some(ExecutionSpace::HostDevice));
    assert_eq!(space("main"), Some(ExecutionSpace::Host));
    let vadd = program.function("vadd").unwrap();
    let mut coordinates: Vec<_> = vadd
        .values()
        .filter_map(|v| thread_coordinate(program, vadd, v))
        .collect();
    coordinates.sort();
    assert_eq!(
        coordinates,
        [
            (ThreadBuiltin::ThreadIdx, Some(Axis::X)),
            (ThreadBuiltin::ThreadIdx, Some(Axis::Y)),
            (ThreadBuiltin::BlockIdx, Some(Axis::X)),
            (ThreadBuiltin::BlockDim, Some(Axis::X)),
        ]
    );
    let graph = program.function("graph").unwrap();
    assert!(graph.slots.iter().any(|s| s.name == "tile" && s.shared));
}

#[test]
fn launches_and_dim3_are_calls() {
    let (_dir, unit) = load("prog.cu", PROGRAM);
    let main = unit.lowered.program.function("main").unwrap();
    let calls: Vec<(String, usize)> = main
        .values()
        .filter_map(|v| match &main.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                args,
            } => Some((name.clone(), args.len())),
            _ => None,
        })
        .collect();
    let count = |name: &str| calls.iter().filter(|(n, _)| n == name).count();
    assert_eq!(count(LAUNCH_FUNCTION), 2, "{calls:?}");
    assert_eq!(count("vadd"), 2, "{calls:?}");
    assert_eq!(count(DIM3_FUNCTION), 2, "{calls:?}");
    // The launch: kernel, grid, block.
    assert!(calls.iter().all(|(n, a)| n != LAUNCH_FUNCTION || *a == 3));
}

#[test]
fn cxx_is_refused_per_function_with_its_position() {
    let (_dir, unit) = load("prog.cu", PROGRAM);
    let refused: Vec<String> = unit
        .diagnostics()
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            let at = d
                .primary
                .as_ref()
                .map(|l| format!("{}:{}", l.line, l.col))
                .unwrap_or_default();
            format!("{at} {}", d.message)
        })
        .collect();
    assert_eq!(
        refused,
        [
            "23:11 cannot analyse function `tmpl`: it uses C++ (`template`): `typename T` is not \
             a value parameter; warpwise reads templates whose parameters are values \
             (`template <int N>`)",
            "25:24 cannot analyse function `print`: it uses C++ (the scope operator `::`)",
        ]
    );
    // The rest of the file is analysed; `swap`'s references are read as pointers.
    for name in ["vadd", "graph", "twice", "swap", "main"] {
        assert!(unit.lowered.program.function(name).is_some(), "{name}");
    }
}

#[test]
fn what_the_scan_misses_the_parser_refuses() {
    let source = "__global__ void k(float *a) { float v{2}; a[threadIdx.x] = v; }\n\
                  __global__ void ok(float *a) { a[threadIdx.x] = 2; }\n";
    let (_dir, unit) = load("miss.cu", source);
    let errors = error_messages(&unit);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("cannot analyse function `k`: lang-c cannot parse it"));
    assert!(unit.lowered.program.function("ok").is_some());
}

#[test]
fn a_plain_c_file_is_not_read_as_cuda() {
    let (_dir, unit) = load(
        "plain.c",
        "int threadIdx; int f(void) { return threadIdx; }\n",
    );
    let f = unit.lowered.program.function("f").unwrap();
    assert_eq!(f.execution, ExecutionSpace::Host);
    assert!(f
        .values()
        .all(|v| thread_coordinate(&unit.lowered.program, f, v).is_none()));
}

#[test]
fn arbitrary_cuda_text_never_panics() {
    for source in [
        "k<<<",
        "void f() { k<<<1, 2>>>; }",
        "void f() { k<<<1, 2(x); }",
        "void f() { <<<1>>>(x); }",
        "void f() { dim3 g(; }",
        "extern \"C\" {",
        "namespace a { int x; ",
        "template <",
        "struct S { S() {} ; ",
        "void f(int &) { }",
        "}}}",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.cu");
        std::fs::write(&file, source).unwrap();
        let _ = load_unit(&TranslationUnitInput::new(&file));
    }
}

/// A value template's head and its `bool` (a macro of `<stdbool.h>`, after which the
/// preprocessor writes a line marker) leave every line where it was: the kernel, its
/// accesses and a reference parameter's uses resolve to the lines written.
#[test]
fn templates_and_references_keep_their_lines() {
    let (_dir, unit) = load(
        "lines.cu",
        "template <bool wide, int step>\n\
         __device__ void at(float *a, int &i)\n\
         {\n\
             // a comment line\n\
             a[i] = 0;\n\
         }\n\
         template <bool wide>\n\
         __global__ void k(float *a)\n\
         {\n\
             int i = threadIdx.x;\n\
             at<wide, 2>(a, i);\n\
         }\n",
    );
    let line = |span| {
        let at = unit
            .resolve(span)
            .map(|r| r.to_string())
            .unwrap_or_default();
        at.rsplit('/').next().unwrap_or_default().to_string()
    };
    let k = unit.lowered.program.function("k").unwrap();
    assert_eq!(line(k.name_span), "lines.cu:8:17");
    let at = unit.lowered.program.function("at").unwrap();
    assert_eq!(line(at.name_span), "lines.cu:2:17");
    let store = at
        .values()
        .find(|&v| matches!(at.inst(v).kind, InstKind::Store { .. }))
        .unwrap();
    assert_eq!(line(at.inst(store).origin.span), "lines.cu:5:1");
    // As written, not as read (`a[(*i)]`).
    assert_eq!(unit.snippet(at.inst(store).origin.span), "a[i]");
}

/// C++ names the runtime's tags without their keyword (`cudaError err = call;` in the
/// CUDA SDK's `cutil.h` macros): the replacement header declares those names, so the host
/// function parses and its launch is read.
#[test]
fn the_runtime_s_tags_are_type_names() {
    let (_dir, unit) = load(
        "tags.cu",
        "__global__ void k(float *a) { a[threadIdx.x] = 0; }\n\
         int main(void)\n\
         {\n\
             float *a;\n\
             cudaError err = cudaMalloc((void **)&a, 64);\n\
             cudaMemcpyKind kind = cudaMemcpyHostToDevice;\n\
             cudaChannelFormatDesc desc;\n\
             (void)kind; (void)desc;\n\
             k<<<1, 16>>>(a);\n\
             return err == cudaSuccess ? 0 : 1;\n\
         }\n",
    );
    let errors = error_messages(&unit);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(unit.lowered.program.function("main").is_some());
}
