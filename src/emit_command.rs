//! `warpwise emit`: writes a CUDA kernel, its host function and a patch note for one
//! friendly loop (`--target cuda`), or a copy of the program's files with OpenMP offload
//! pragmas on its friendly loops and the patch (`--target openmp`).
//!
//! Exit codes: 0 written; 1 the loop was refused, or no loop could be ported (not friendly,
//! or something generation does not support; the message says what); 2 usage or input
//! errors (no such loop, bad options, unreadable files, an output that cannot be written).

use crate::inputs::CFlags;
use crate::kernel_args::{KernelArgs, Target};
use clap::Args;
use cuda::{self, EmitErrorKind};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The program's C files.
    #[arg(value_name = "FILE.c", required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// What to generate.
    #[arg(long, value_enum, default_value = "cuda")]
    pub target: Target,
    /// `--target openmp`: add `defaultmap(none)` and a `firstprivate` of every scalar the
    /// loop reads, so the compiler checks that the data clauses name every variable.
    #[arg(long)]
    pub strict: bool,
    /// Directory for `FUNCTION_LLINE.cu`, `.md` and the CPU shim header (CUDA), or for the
    /// ported files and their patches (OpenMP).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: PathBuf,
    /// Compile the kernel with NVRTC (no GPU needed) and write `FUNCTION_LLINE.ptx`: proof
    /// that the generated code is CUDA. NVRTC is found as `docs/gpu-backend.md` says.
    #[arg(long)]
    pub check: bool,
    /// With `--check`: the virtual architecture, e.g. `compute_80` (default: NVRTC's own).
    #[arg(long, value_name = "compute_XY", requires = "check")]
    pub arch: Option<String>,
}

pub fn run(args: &EmitArgs) -> ExitCode {
    let Some(inputs) = crate::inputs::collect_all(&args.paths, &args.cflags, "read") else {
        return ExitCode::from(2);
    };
    let (opts, profile) = match (args.kernel.options(), args.kernel.read_profile()) {
        (Ok(o), Ok(p)) => (o, p),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.target == Target::Openmp {
        if args.check {
            eprintln!("error: `--check` compiles CUDA; it does not apply to `--target openmp`");
            return ExitCode::from(2);
        }
        return crate::openmp_command::emit(
            &inputs,
            &args.kernel,
            profile.as_ref(),
            &args.output,
            args.strict,
        );
    }
    let loop_id = match args.kernel.one_loop() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let emitted = cuda::locate(&inputs, loop_id, opts.block, profile.as_ref())
        .and_then(|located| cuda::emit_loop(&located, loop_id, &opts));
    let emitted = match emitted {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(match e.kind {
                EmitErrorKind::Refused => 1,
                EmitErrorKind::Usage => 2,
            });
        }
    };
    for n in &emitted.plan.notes {
        eprintln!("note: {n}");
    }
    let read = crate::output::unit_paths(&inputs);
    for (name, _) in cuda::output_files(&emitted) {
        let path = args.output.join(name);
        if let Err(e) = crate::output::refuse_clobbering(Some(&path), &read) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    match cuda::write(&emitted, &args.output) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    if args.check {
        return check(&emitted, &args.output, args.arch.clone());
    }
    ExitCode::SUCCESS
}

/// Compiles the emitted device code (kernel, device functions, types; the host function is
/// C++ for nvcc or the CPU shim and is not NVRTC's business) to PTX. Exit 1 when NVRTC
/// rejects it, 2 when NVRTC cannot be loaded.
fn check(emitted: &cuda::Emitted, dir: &std::path::Path, arch: Option<String>) -> ExitCode {
    use cuda::gpu::nvrtc::{compile_to_ptx, CompileOptions, NvrtcError};
    let name = format!("{}.cu", emitted.stem);
    let options = CompileOptions {
        arch,
        extra: Vec::new(),
    };
    let started = std::time::Instant::now();
    match compile_to_ptx(&emitted.device_source, &name, &options) {
        Ok(ptx) => {
            let path = dir.join(format!("{}.ptx", emitted.stem));
            if let Err(e) = frontend::files::write_output(&path, ptx.as_bytes()) {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                return ExitCode::from(2);
            }
            println!("{}", path.display());
            eprintln!(
                "check: NVRTC compiled `{}` to PTX ({} bytes, {:.0} ms)",
                emitted.plan.kernel_name,
                ptx.len(),
                started.elapsed().as_secs_f64() * 1e3
            );
            ExitCode::SUCCESS
        }
        Err(e @ NvrtcError::Unavailable(_)) => {
            eprintln!("error: --check: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: --check: the generated CUDA does not compile: {e}");
            ExitCode::from(1)
        }
    }
}
