//! Loop bounds read through a pointer the loop's callees receive: the
//! bound is invariant when no store of the loop or of its callees' summaries may write it.
//! Each verdict is checked against concrete runs: the program prints the same with the
//! loop run forward and reversed exactly when the report calls it friendly.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::Verdict;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use std::process::Command;

/// The verdict of `grid`'s loop, and whether forward and reversed runs print the same.
fn check(helper: &str, verdict: Verdict, order_independent: bool) {
    let dir = tempfile::tempdir().unwrap();
    let kernel = format!(
        "{helper}\n\
         void grid(long *out, const int mesh[3])\n\
         {{\n    for (long i = 0; i < mesh[0] * mesh[1]; i++)\n        out[i] = visit(i, mesh);\n}}\n"
    );
    let file = dir.path().join("kernel.c");
    std::fs::write(&file, &kernel).unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let r = reports.iter().find(|r| r.function == "grid").unwrap();
    assert_eq!(r.verdict, verdict, "{:#?}", r.reasons);
    let reversed = kernel.replace("void grid(", "void grid_rev(").replace(
        "for (long i = 0; i < mesh[0] * mesh[1]; i++)",
        "for (long i = mesh[0] * mesh[1] - 1; i >= 0; i--)",
    );
    let program = format!(
        "#include <stdio.h>\n#include <string.h>\n{kernel}\n{}\n\
         int main(void) {{\n\
           long a[64] = {{0}}, b[64] = {{0}};\n\
           int m1[3] = {{4, 3, 1}}, m2[3] = {{4, 3, 1}};\n\
           grid(a, m1); grid_rev(b, m2);\n\
           return memcmp(a, b, sizeof a) != 0;\n\
         }}\n",
        reversed
            .split_once('\n')
            .map(|(_, rest)| rest)
            .unwrap_or(&reversed)
    );
    assert_eq!(runs_clean(dir.path(), &program, &[]), order_independent);
}

/// Compiles `program` with `cc -O0 FLAGS` in `dir` and runs it: whether it exits 0.
fn runs_clean(dir: &std::path::Path, program: &str, flags: &[&str]) -> bool {
    let source = dir.join("p.c");
    std::fs::write(&source, program).unwrap();
    let exe = dir.join("p");
    let built = Command::new("cc")
        .arg("-O0")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(built.success());
    Command::new(&exe).status().unwrap().success()
}

#[test]
fn a_bound_the_callees_only_read_is_invariant() {
    check(
        "static long visit(long i, const int mesh[3]) { return i % mesh[0] + mesh[2]; }",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn a_bound_a_callee_writes_is_not() {
    // `visit` shrinks the mesh as it goes: the trip count changes inside the loop.
    check(
        "static long visit(long i, const int mesh[3]) { if (i == 2) ((int *)mesh)[1] = 2; return i; }",
        Verdict::NotFriendly,
        false,
    );
}

/// `wave`'s loop stores `STORE` values through `out` while its bound reads an `unsigned long`
/// field of an image a call returned before the loop; `main` passes either a separate array
/// or the image itself. Checks the verdict and whether forward and reversed runs agree.
fn typed_kernel(store: &str) -> String {
    format!(
        "typedef struct {{ unsigned long columns; unsigned long pad[15]; }} Image;\n\
         Image *open_image(void);\n\
         void wave({store} *out)\n\
         {{\n    Image *w = open_image();\n\
         \x20   for (long x = 0; x < (long) w->columns; x++)\n\
         \x20       out[x] = ({store}) (x + 1);\n}}\n"
    )
}

/// The verdict of `wave`'s loop in `kernel` analysed with the C flags `extra`.
fn typed_verdict(
    dir: &std::path::Path,
    kernel: &str,
    extra: &[&str],
) -> advisor::model::LoopReport {
    let file = dir.join("kernel.c");
    std::fs::write(&file, kernel).unwrap();
    let mut input = TranslationUnitInput::new(file);
    input.flags.extra = extra.iter().map(|f| f.to_string()).collect();
    let unit = load_unit(&input).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    reports.into_iter().find(|r| r.function == "wave").unwrap()
}

fn check_typed(store: &str, out_is_the_image: bool, verdict: Verdict, order_independent: bool) {
    let dir = tempfile::tempdir().unwrap();
    let kernel = typed_kernel(store);
    let r = typed_verdict(dir.path(), &kernel, &[]);
    assert_eq!(r.verdict, verdict, "{:#?}", r.reasons);
    if verdict == Verdict::Friendly {
        assert!(
            r.assumptions.iter().any(|a| a.contains("C99 6.5p7")),
            "the type rule is stated: {:#?}",
            r.assumptions
        );
    }
    let reversed = kernel
        .replace("void wave(", "void wave_rev(")
        .replace(
            "for (long x = 0; x < (long) w->columns; x++)",
            "for (long x = (long) w->columns - 1; x >= 0; x--)",
        )
        .replace(
            "typedef struct { unsigned long columns; unsigned long pad[15]; } Image;\n",
            "",
        )
        .replace("Image *open_image(void);\n", "");
    let target = if out_is_the_image {
        format!("({store} *) &image")
    } else {
        "data".to_string()
    };
    let program = format!(
        "#include <string.h>\n{kernel}\n{reversed}\n\
         static Image image;\n\
         Image *open_image(void) {{ return &image; }}\n\
         static {store} data[16];\n\
         int main(void) {{\n\
           {store} first[16];\n\
           image.columns = 8; memset(data, 0, sizeof data);\n\
           wave({target}); memcpy(first, {target}, sizeof first);\n\
           image.columns = 8; memset(data, 0, sizeof data); memset(image.pad, 0, sizeof image.pad);\n\
           wave_rev({target});\n\
           return memcmp(first, {target}, sizeof first) != 0;\n\
         }}\n"
    );
    let same = runs_clean(dir.path(), &program, &["-fno-strict-aliasing"]);
    assert_eq!(same, order_independent);
}

#[test]
fn a_store_of_another_type_leaves_the_bound_unchanged() {
    check_typed("float", false, Verdict::Friendly, true);
    check_typed("double", false, Verdict::Friendly, true);
}

#[test]
fn a_store_of_the_bounds_type_may_change_it() {
    // `out` is the image itself: `out[0] = 1` sets `columns` to 1 on the forward run.
    check_typed("unsigned long", true, Verdict::NotFriendly, false);
    check_typed("long", true, Verdict::NotFriendly, false);
}

#[test]
fn without_strict_aliasing_a_store_of_another_type_may_change_the_bound() {
    // A program built with -fno-strict-aliasing may pun types: the rule is not assumed.
    let dir = tempfile::tempdir().unwrap();
    let kernel = typed_kernel("float");
    let r = typed_verdict(dir.path(), &kernel, &["-fno-strict-aliasing"]);
    assert_eq!(r.verdict, Verdict::NotFriendly, "{:#?}", r.reasons);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.code == advisor::rules::Code::WW107),
        "{:#?}",
        r.reasons
    );
    let r = typed_verdict(
        dir.path(),
        &kernel,
        &["-fno-strict-aliasing", "-fstrict-aliasing"],
    );
    assert_eq!(
        r.verdict,
        Verdict::Friendly,
        "the last flag wins: {:#?}",
        r.reasons
    );
}

/// `grid`'s loop over `mesh[0] * mesh[1]` stores ints through `out` and passes `mesh` and
/// `out + i` to a helper that writes the latter (so the invariance analysis alone cannot
/// clear the bound): whether `out` may point
/// into `mesh` is the aliasing policy's question. Returns the loop's report under `policy`.
fn same_type_bound(policy: advisor::analyze::Aliasing) -> advisor::model::LoopReport {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kernel.c");
    std::fs::write(
        &file,
        "static int visit(int i, const int *mesh, int *slot) { *slot = 0; return i % mesh[0] + mesh[2]; }\n\
         void grid(int *out, const int *mesh)\n{\n    for (int i = 0; i < mesh[0] * mesh[1]; i++)\n        out[i] = visit(i, mesh, out + i);\n}\n",
    )
    .unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let filter = Filter {
        aliasing: policy,
        ..Filter::default()
    };
    analyze_unit(&unit, &filter)
        .into_iter()
        .find(|r| r.function == "grid")
        .unwrap()
}

#[test]
fn a_bound_only_an_overlap_could_change_needs_a_profile_under_call_sites() {
    use advisor::analyze::Aliasing;
    let r = same_type_bound(Aliasing::Distinct);
    assert_eq!(r.verdict, Verdict::Friendly, "{:#?}", r.reasons);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("`mesh`") && a.contains("`out`")),
        "{:#?}",
        r.assumptions
    );
    // No claim that the bound changes: a profile settles whether `out` overlaps `mesh`.
    let r = same_type_bound(Aliasing::CallSites);
    assert_eq!(r.verdict, Verdict::NeedsProfile, "{:#?}", r.reasons);
    assert!(
        r.reasons
            .iter()
            .all(|x| x.code != advisor::rules::Code::WW107),
        "{:#?}",
        r.reasons
    );
    assert!(
        r.reasons
            .iter()
            .any(|x| x.code == advisor::rules::Code::WW110
                && x.message.contains("the loop bound reads `mesh[0]`")),
        "{:#?}",
        r.reasons
    );
    // The overlap is real when `grid(m, m)` is called: forward and reversed runs differ.
    let dir = tempfile::tempdir().unwrap();
    let program = "#include <stdio.h>\n\
        static int visit(int i, const int *mesh, int *slot) { *slot = 0; return i % mesh[0] + mesh[2]; }\n\
        static void fwd(int *out, const int *mesh) { for (int i = 0; i < mesh[0] * mesh[1]; i++) out[i] = visit(i, mesh, out + i); }\n\
        static void rev(int *out, const int *mesh) { for (int i = mesh[0] * mesh[1] - 1; i >= 0; i--) out[i] = visit(i, mesh, out + i); }\n\
        int main(void) { int a[16] = {3, 4, 1}, b[16] = {3, 4, 1}; fwd(a, a); rev(b, b);\n\
          for (int k = 0; k < 16; k++) if (a[k] != b[k]) return 1; return 0; }\n";
    assert!(!runs_clean(dir.path(), program, &[]));
}

/// The verdict of `pack`'s loop under `--aliasing call-sites`: its bound
/// `pkg->starts[pkg->n]` is read through a pointer the loop loads again every iteration,
/// while a helper stores `STORE`s into `pkg->buf`, memory reached from `pkg` too (so the
/// invariance analysis cannot clear the bound by itself).
fn chained_bound_verdict(store: &str) -> Verdict {
    use advisor::analyze::Aliasing;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pack.c");
    std::fs::write(
        &file,
        format!(
            "typedef struct {{ int n; int *starts; {store} *buf; }} Pkg;\n\
             static void put({store} *p, int v) {{ *p = ({store}) v; }}\n\
             void pack(const Pkg *pkg)\n{{\n\
             \x20   for (int i = 0; i < pkg->starts[pkg->n]; i++)\n\
             \x20       put(&pkg->buf[i], i);\n}}\n"
        ),
    )
    .unwrap();
    let unit = load_unit(&TranslationUnitInput::new(file)).expect("loads");
    let filter = Filter {
        aliasing: Aliasing::CallSites,
        ..Filter::default()
    };
    let r = analyze_unit(&unit, &filter)
        .into_iter()
        .find(|r| r.function == "pack")
        .unwrap();
    r.verdict
}

#[test]
fn a_bound_read_through_a_pointer_the_type_rule_clears_is_unchanged_too() {
    // `pkg->starts` (an `int *`) and then `pkg->starts[pkg->n]` (an `int`): double stores
    // change neither, so the second load's address is fixed once the first is.
    assert_eq!(chained_bound_verdict("double"), Verdict::Friendly);
    // Stores of `int` may change `pkg->n` or the start itself if `buf` points into them.
    assert_ne!(chained_bound_verdict("int"), Verdict::Friendly);
}
