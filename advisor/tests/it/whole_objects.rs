//! Gathered arrays sized by their allocation: a pointer the loop indexes by data
//! (`d->concs[d->mats[i]]`) has no section from its subscripts, but the program allocates it
//! with a size it keeps (`d->length_concs`), so the section is the whole object, `[0, size)`,
//! stated with where it was allocated. A pointer some store sets to anything else, or one
//! allocated with two sizes, stays unknown.

use crate::common;
use advisor::model::{LoopReport, Parameter, Verdict};

fn param<'a>(report: &'a LoopReport, name: &str) -> &'a Parameter {
    report
        .parameters
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no parameter `{name}` in {report:#?}"))
}

/// The section of `name` in the marked loop of `source`: `(hi, size)` and the notes.
fn check(source: &str, name: &str, expected: Option<(&str, &str)>) -> Vec<String> {
    let report = common::check(source, Verdict::Friendly);
    let p = param(&report, name);
    assert_eq!(
        p.bytes.as_ref().map(|b| (b.lo.as_str(), b.hi.as_str())),
        expected.map(|(hi, _)| ("0", hi)),
        "{p:#?}"
    );
    assert_eq!(
        p.whole_object.as_ref().map(|w| w.size.as_str()),
        expected.map(|(_, size)| size),
        "{p:#?}"
    );
    p.notes.clone()
}

const HEAD: &str = "#include <stdlib.h>\n\
    typedef struct { double *concs; int *mats; int length_concs; int length_mats; } Data;\n";

#[test]
fn a_field_allocated_with_a_sibling_length_is_the_whole_object() {
    let source = format!(
        "{HEAD}\
         void init(Data *d, int n) {{\n\
         \x20 d->length_concs = n;\n\
         \x20 d->concs = malloc(d->length_concs * sizeof(double));\n\
         }}\n\
         double sum(const Data *d, int n) {{\n\
         \x20 double s = 0;\n\
         \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
         \x20   s += d->concs[d->mats[i]];\n\
         \x20 return s;\n\
         }}\n"
    );
    let notes = check(
        &source,
        "d->concs",
        Some(("8*d->length_concs", "8*d->length_concs")),
    );
    assert!(
        notes.iter().any(|n| n
            .starts_with("whole object: allocated at fixture.c:5 with `8*d->length_concs` bytes")),
        "{notes:#?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("assumes `d->length_concs` still holds")),
        "{notes:#?}"
    );
}

/// XSBench's shape: an allocator of the program returns the memory, sized by its
/// parameter, and the caller passes the field that keeps the length (or its address).
#[test]
fn an_allocator_s_parameter_is_the_caller_s_field() {
    let source = format!(
        "{HEAD}\
         static double *load_concs(int n) {{ return calloc(n, sizeof(double)); }}\n\
         static int *load_mats(int *n) {{ *n = 12; int *m = malloc(3 * (*n) * sizeof(int)); return m; }}\n\
         void init(Data *d) {{\n\
         \x20 d->length_concs = 100;\n\
         \x20 d->concs = load_concs(d->length_concs);\n\
         \x20 d->mats = load_mats(&d->length_mats);\n\
         }}\n\
         double sum(Data D, int n) {{\n\
         \x20 double s = 0;\n\
         \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
         \x20   s += D.concs[D.mats[i % 7 * 3]];\n\
         \x20 return s;\n\
         }}\n"
    );
    check(
        &source,
        "D.concs",
        Some(("8*D.length_concs", "8*D.length_concs")),
    );
}

#[test]
fn a_field_also_set_to_other_memory_stays_unknown() {
    let source = format!(
        "{HEAD}\
         double shared[64];\n\
         void init(Data *d, int n) {{\n\
         \x20 d->length_concs = n;\n\
         \x20 d->concs = malloc(d->length_concs * sizeof(double));\n\
         \x20 if (n < 64) d->concs = shared;\n\
         }}\n\
         double sum(const Data *d, int n) {{\n\
         \x20 double s = 0;\n\
         \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
         \x20   s += d->concs[d->mats[i]];\n\
         \x20 return s;\n\
         }}\n"
    );
    check(&source, "d->concs", None);
}

#[test]
fn two_sizes_or_a_length_the_loop_cannot_name_stay_unknown() {
    for (alloc, why) in [
        (
            "d->concs = n > 4 ? malloc(d->length_concs * 8) : malloc(d->length_mats * 8);",
            "nor is the whole object known: `.concs` is allocated with sizes not shown equal",
        ),
        (
            "d->concs = malloc(n * sizeof(double));",
            "nor is the whole object known: `.concs` is assigned at fixture.c:4 with a size that depends on a parameter of `init`",
        ),
    ] {
        let source = format!(
            "{HEAD}\
             void init(Data *d, int n) {{\n\
             \x20 {alloc}\n\
             }}\n\
             double sum(const Data *d, int n) {{\n\
             \x20 double s = 0;\n\
             \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
             \x20   s += d->concs[d->mats[i]];\n\
             \x20 return s;\n\
             }}\n"
        );
        let notes = check(&source, "d->concs", None);
        assert!(notes.iter().any(|n| n.contains(why)), "{notes:#?}");
    }
}

#[test]
fn a_global_pointer_allocated_with_a_global_length() {
    let source = "#include <stdlib.h>\n\
                  int nz;\n\
                  double *vals;\n\
                  void init(void) { vals = malloc(nz * sizeof(double) + 16); }\n\
                  double sum(const int *idx, int n) {\n\
                  \x20 double s = 0;\n\
                  \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
                  \x20   s += vals[idx[i]];\n\
                  \x20 return s;\n\
                  }\n";
    // The memory a global pointer points to is named as the pointer: the pointer's own
    // storage is no parameter beside it.
    check(source, "vals", Some(("8*nz + 16", "8*nz + 16")));
}

/// NPB CG's shape: the loop's function receives file-scope arrays as parameters; every
/// call passes the start of an array of one fixed size, which is then the section.
#[test]
fn a_parameter_every_call_passes_the_same_fixed_array() {
    let head = "static double a[1000];\n\
                static double b[2000];\n\
                static int idx[500];\n";
    let body = |moved: &str| {
        format!(
            "double sum(double *v, const int *k, int n) {{\n\
             \x20 double s = 0;{moved}\n\
             \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
             \x20   s += v[k[i]];\n\
             \x20 return s;\n\
             }}\n"
        )
    };
    let same = format!(
        "{head}{}double run(void) {{ return sum(a, idx, 500) + sum(a, idx, 9); }}\n",
        body("")
    );
    check(&same, "v", Some(("8000", "8000")));
    // Two sizes, or a pointer that no longer points to the start at the loop: unknown.
    let two = format!(
        "{head}{}double run(void) {{ return sum(a, idx, 500) + sum(b, idx, 9); }}\n",
        body("")
    );
    check(&two, "v", None);
    let moved = format!(
        "{head}{}double run(void) {{ return sum(a, idx, 500); }}\n",
        body(" v += 1;")
    );
    check(&moved, "v", None);
}

/// NPB CG's `sparse`: the pointer reaches the loop's function through another function's
/// parameter (`main` → `makea` → `sparse`), passed on unchanged; the callers of the caller
/// decide. A caller that passes on something else (its parameter moved, another array)
/// leaves it unknown.
#[test]
fn a_parameter_passed_on_through_another_function_is_the_array_its_callers_pass() {
    let head = "static int rowstr[1402];\n\
                static int other[7];\n";
    let sparse = "void sparse(int *rs, const int *arow, int nnza) {\n\
                  \x20 for (int nza = 0; nza < nnza; nza++) /* LOOP */\n\
                  \x20   rs[arow[nza]] = rs[arow[nza]] + 1;\n\
                  }\n";
    let passed = |makea: &str, main: &str| format!("{head}{sparse}{makea}{main}");
    let makea = "void makea(int *rs, const int *arow, int n) { sparse(rs, arow, n); }\n";
    let main = "int main(void) { static int arow[10]; makea(rowstr, arow, 10); return 0; }\n";
    let notes = check(&passed(makea, main), "rs", Some(("5608", "5608")));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("the array the call there passes")),
        "{notes:#?}"
    );
    let two = "int main(void) { static int arow[10]; makea(rowstr, arow, 10); makea(other, arow, 1); return 0; }\n";
    check(&passed(makea, two), "rs", None);
    let moved = "void makea(int *rs, const int *arow, int n) { sparse(rs + 1, arow, n); }\n";
    check(&passed(moved, main), "rs", None);
}

/// RSBench's shape: the loop passes a struct by value to the function that gathers, and the
/// size reads a field of it. The whole object's size and the names it reads are the
/// report's names (`data.max_num_nucs`), never the analyses' numbered symbols.
#[test]
fn a_whole_object_s_size_reads_the_report_s_names() {
    let source = "#include <stdlib.h>\n\
        typedef struct { double *concs; int *mats; int max_num_nucs; } SD;\n\
        static double *load(int n) { return malloc(12 * n * sizeof(double)); }\n\
        void init(SD *d, int n) { d->max_num_nucs = n; d->concs = load(d->max_num_nucs); }\n\
        static double micro(SD data, int mat, int i) {\n\
        \x20 return data.concs[data.mats[mat * data.max_num_nucs + i]];\n\
        }\n\
        void run(SD data, int n, double *out) {\n\
        \x20 for (int i = 0; i < n; i++) /* LOOP */\n\
        \x20   out[i] = micro(data, i % 12, i % 5) * data.max_num_nucs;\n\
        }\n";
    let report = common::check(source, Verdict::Friendly);
    let p = param(&report, "data.concs");
    let whole = p.whole_object.as_ref().expect("a whole object");
    assert!(
        !whole.size.contains('#') && whole.reads.iter().all(|r| !r.contains('#')),
        "{whole:#?}"
    );
    assert_eq!(whole.reads, ["data.max_num_nucs"], "{whole:#?}");
    assert_eq!(whole.size, "96*data.max_num_nucs");
    let bytes = p.bytes.as_ref().expect("the whole object's section");
    assert_eq!(
        (bytes.lo.as_str(), bytes.hi.as_str()),
        ("0", "96*data.max_num_nucs")
    );
}

/// RSBench's generators: each allocates from the `Input` it receives by value (and a
/// maximum it computes, which it also stores through a pointer into the caller's struct),
/// and the caller sets a sibling length to the same count. The size is that length, in the
/// loop's names.
const RSBENCH: &str = "#include <stdlib.h>\n\
    typedef struct { int n_nuclides; int numL; } Input;\n\
    typedef struct { double a, b; } Pole;\n\
    typedef struct {\n\
    \x20 int *n_poles; unsigned long length_n_poles;\n\
    \x20 int *n_windows; unsigned long length_n_windows;\n\
    \x20 Pole *poles; unsigned long length_poles; int max_num_poles;\n\
    \x20 double *k0; unsigned long length_k0;\n\
    \x20 int *mats;\n\
    } SD_t;\n\
    static int *gen_n_windows(Input input) { return malloc(input.n_nuclides * sizeof(int)); }\n\
    static Pole *gen_poles(Input input, int *n_poles, int *max_num_poles) {\n\
    \x20 int max_poles = -1;\n\
    \x20 for (int i = 0; i < input.n_nuclides; i++)\n\
    \x20   if (n_poles[i] > max_poles) max_poles = n_poles[i];\n\
    \x20 *max_num_poles = max_poles;\n\
    \x20 Pole *R = malloc(input.n_nuclides * max_poles * sizeof(Pole));\n\
    \x20 return R;\n\
    }\n\
    static double *gen_k0(Input input) { return malloc(input.n_nuclides * input.numL * sizeof(double)); }\n\
    SD_t init(Input input, int *n_poles) {\n\
    \x20 SD_t SD;\n\
    \x20 SD.n_poles = gen_n_windows(input);\n\
    \x20 SD.length_n_poles = input.n_nuclides;\n\
    \x20 SD.n_windows = gen_n_windows(input);\n\
    \x20 SD.length_n_windows = input.n_nuclides;\n\
    \x20 SD.poles = gen_poles(input, n_poles, &SD.max_num_poles);\n\
    \x20 SD.length_poles = input.n_nuclides * SD.max_num_poles;\n\
    \x20 SD.k0 = gen_k0(input);\n\
    \x20 SD.length_k0 = input.n_nuclides * input.numL;\n\
    \x20 SD.mats = malloc(100 * sizeof(int));\n\
    \x20 return SD;\n\
    }\n\
    double run(SD_t data, int n) {\n\
    \x20 double s = 0;\n\
    \x20 for (int i = 0; i < n; i++) { /* LOOP */\n\
    \x20   int m = data.mats[i % 100];\n\
    \x20   s += data.n_windows[m] + data.poles[m].a + data.k0[m];\n\
    \x20 }\n\
    \x20 return s;\n\
    }\n";

#[test]
fn a_generator_s_by_value_input_is_named_by_the_caller_s_length() {
    let size = "4*data.length_n_windows";
    check(RSBENCH, "data.n_windows", Some((size, size)));
    let size = "8*data.length_k0";
    check(RSBENCH, "data.k0", Some((size, size)));
}

#[test]
fn a_maximum_the_generator_stores_for_its_caller_is_the_caller_s_field() {
    let size = "16*data.length_poles";
    check(RSBENCH, "data.poles", Some((size, size)));
}
