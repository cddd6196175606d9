//! GCC's x86 intrinsics headers parse as they are, and their vector types (`__m128`,
//! `__m256d`, ...) have GCC's size and alignment: a program printing `sizeof`, `__alignof__`
//! and `offsetof` of them, alone and inside structs, prints the same compiled with `cc` and
//! run in the IR interpreter. (`__alignof__`, the alignment GCC lays structs out with: GCC's
//! C11 `_Alignof` says 16 for a 32-byte vector when AVX is not enabled, yet places it at a
//! multiple of 32.)

use frontend::interp::Interpreter;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use std::process::Command;
use tempfile::TempDir;

/// A fresh, private directory for one program's files, removed when the guard is dropped
/// (never a name shared by every run in the shared temp dir).
fn scratch() -> TempDir {
    tempfile::Builder::new()
        .prefix("warpwise-intrinsics-")
        .tempdir()
        .unwrap()
}

/// The unit of `source`, with the directory holding its file: the unit reads the file's
/// lines again for diagnostics, so callers keep the guard while they use the unit.
fn load(name: &str, source: &str) -> (TempDir, Unit) {
    let dir = scratch();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let unit =
        load_unit(&TranslationUnitInput::new(&c)).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    let errors: Vec<String> = unit
        .diagnostics()
        .iter()
        .map(|d| format!("{d:?}"))
        .collect();
    assert!(
        unit.lowered.errors.is_empty(),
        "{name}: lowering errors {errors:#?}"
    );
    (dir, unit)
}

#[test]
fn every_intrinsics_header_parses() {
    for header in [
        "xmmintrin.h",
        "emmintrin.h",
        "pmmintrin.h",
        "smmintrin.h",
        "immintrin.h",
        "x86intrin.h",
    ] {
        let source = format!(
            "#include <{header}>\nfloat first(const float *p) {{ __m128 v = _mm_loadu_ps(p); float out[4]; _mm_storeu_ps(out, v); return out[0]; }}\n"
        );
        let (_dir, unit) = load(&header.replace('.', "_"), &source);
        assert!(unit.lowered.program.function("first").is_some(), "{header}");
    }
}

#[test]
fn vector_types_have_gccs_layout() {
    let source = r#"#include <stdio.h>
#include <stddef.h>
#include <immintrin.h>
struct mixed { char tag; __m128 a; short s; __m256d b; __m128i c[3]; };
struct packed_u { char tag; __m128_u u; };
int main(void) {
    printf("%d %d %d %d\n", (int)sizeof(__m128), (int)__alignof__(__m128),
           (int)sizeof(__m256d), (int)__alignof__(__m256d));
    printf("%d %d %d %d\n", (int)sizeof(struct mixed), (int)__alignof__(struct mixed),
           (int)offsetof(struct mixed, b), (int)offsetof(struct mixed, c[1]));
    printf("%d %d\n", (int)sizeof(struct packed_u), (int)__alignof__(__m128_u));
    printf("%d\n", (int)sizeof(__m512) + (int)sizeof(__m128d));
    return 0;
}
"#;
    let dir = scratch();
    let c = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&c, source).unwrap();
    let built = Command::new("cc")
        .args(["-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
        .expect("cc runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let native = Command::new(&exe).output().expect("runs");
    let native = String::from_utf8_lossy(&native.stdout).into_owned();
    let (_dir, unit) = load("layout", source);
    let interpreted = Interpreter::new(&unit.lowered.program)
        .with_fuel(1_000_000)
        .run_main(&[])
        .expect("interpreter runs");
    assert_eq!(interpreted.stdout, native);
    assert_eq!(native, "16 16 32 32\n160 32 64 112\n17 1\n80\n");
}

/// The text warpwise parses is also what the profiler compiles (`blank_parser_shims`): it
/// must still compile with the real intrinsics: the headers' SSE3-and-later functions
/// compile only inside their own `#pragma GCC target("sse3")` ... lines (no `-msse3` here),
/// which must survive; and the `int`s inserted into old-style code must compile too.
#[test]
fn the_rewritten_text_still_compiles() {
    let source = r#"#include <stdio.h>
#include <immintrin.h>
static hsum(p) const float *p; {
    __m128 v = _mm_loadu_ps(p);
    float out[4];
    _mm_storeu_ps(out, _mm_add_ps(v, _mm_shuffle_ps(v, v, 0x4e)));
    return (int)(out[0] + out[1]);
}
main() { float x[4] = {1, 2, 3, 4}; printf("%d\n", hsum(x)); return 0; }
"#;
    let dir = scratch();
    let c = dir.path().join("compiles.c");
    std::fs::write(&c, source).unwrap();
    let pre =
        frontend::preprocess::preprocess(&TranslationUnitInput::new(&c)).expect("preprocesses");
    let text = frontend::preprocess::blank_parser_shims(&pre.text);
    assert!(text.contains("int hsum"), "implicit int inserted");
    let i = dir.path().join("compiles.i");
    let exe = dir.path().join("compiles");
    std::fs::write(&i, text).unwrap();
    let built = Command::new("cc")
        .args(["-std=gnu89", "-O2", "-w", "-o"])
        .arg(&exe)
        .arg(&i)
        .output()
        .expect("cc runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().expect("runs");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "10\n");
}
