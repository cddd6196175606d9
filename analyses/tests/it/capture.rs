//! Whether calls keep the pointers they are passed (`analyses::capture`), and what that
//! lets the reconstruction name as one value.

use crate::reconstruct::unit_of;
use analyses::capture::Captures;
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use frontend::ir::{Callee, InstKind};
use frontend::loops::analyze_loops;

const CALLEES: &str = r#"
#include <string.h>
int *kept;
int *echo(int *p) { return p + 1; }
void fill(int *p, int n) { *p = n; p[1] = n + 1; }
void keep(int *p) { kept = p; }
void through(int *p) { fill(p, 3); }
void through_keep(int *p) { keep(p); }
void merge(int *p, int *q, int c) { int *r = c ? p : q; *r = 0; }
void compare(int *p, int *q) { if (p < q) *p = 1; }
void copy(int *p) { memcpy(p, p + 4, 8); }
void recurse(int *p, int n) { if (n > 0) recurse(p, n - 1); *p = n; }
void unknown(int *p);
void opaque(int *p) { unknown(p); }
"#;

/// Each callee's first parameter, kept or not.
#[test]
fn calls_keep_what_they_store_return_merge_or_pass_on_to_keep() {
    let unit = unit_of(CALLEES);
    let mut c = Captures::new(&unit.lowered.program);
    let mut keeps = |name: &str| c.call_may_keep(&Callee::Direct(name.into()), 0);
    for name in ["fill", "through", "compare", "copy", "memset", "printf"] {
        assert!(!keeps(name), "{name} keeps its pointer");
    }
    // A recursive function is taken to keep what it passes to itself: the decision it
    // waits on is its own.
    for name in [
        "echo",
        "keep",
        "through_keep",
        "merge",
        "opaque",
        "unknown",
        "free",
        "recurse",
    ] {
        assert!(keeps(name), "{name} does not keep its pointer");
    }
}

/// A local filled through its address by a call that does not keep it, then read before
/// and after another call given other locals' addresses (code_saturne's `_thread_range`
/// then `_sbloc_sizes`): the two loads read one value, as the loop bound and section
/// name it. Given a call that keeps its address instead, the later call may write it.
#[test]
fn a_local_only_a_non_capturing_call_fills_is_one_value_after_other_calls() {
    let symbols = |keeper: &str| {
        let source = format!(
            r#"
int *saved;
static void range(int n, int *s, int *e) {{ {keeper} *s = n / 4; *e = n - n / 8; }}
static void sizes(int n, int *nb) {{ *nb = n / 60 + 1; }}
void reduce(int n, double *out) {{
  int s_id, e_id, nb;
  range(n, &s_id, &e_id);
  int len = e_id - s_id;
  sizes(len, &nb);
  for (int id = s_id; id < s_id + len; id++)
    out[id] = nb;
}}
"#
        );
        load_symbols(&source, "reduce", "s_id")
    };
    assert_eq!(symbols("").len(), 1, "{:?}", symbols(""));
    assert_eq!(
        symbols("saved = s;").len(),
        2,
        "{:?}",
        symbols("saved = s;")
    );
}

/// The distinct symbols the reconstruction gives `function`'s loads of the variable
/// `variable`: one per value the loads read.
fn load_symbols(source: &str, function: &str, variable: &str) -> Vec<String> {
    let unit = unit_of(source);
    let program = &unit.lowered.program;
    let func = program.function(function).unwrap();
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let mut names: Vec<String> = func
        .values()
        .filter(|&v| matches!(func.inst(v).kind, InstKind::Load { .. }))
        .filter_map(|v| rec.symbol(v).map(|s| s.name().to_string()))
        .filter(|n| n == variable || n.starts_with(&format!("{variable}#")))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A pointer an unknown function filled through its address (so any call may write it),
/// read before and after a call to a function that stores nothing outside its locals
/// (code_saturne's `f_row_index`, around `_l_id_binary_search`): one value, one parameter.
/// When the callee stores through its argument, the two loads are two values.
#[test]
fn a_call_that_stores_nothing_leaves_a_let_out_pointer_one_value() {
    let symbols = |store: &str| {
        let source = format!(
            r#"
void get_rows(int **rows);
static int count(int n, int *a) {{ int c = 0; for (int k = 0; k < n; k++) c += a[k] > 0; {store} return c; }}
void spread(int n, int *out) {{
  int *rows;
  get_rows(&rows);
  for (int i = 0; i < n; i++) {{
    int first = rows[i];
    int c = count(first, out);
    out[i] = rows[i + 1] + c;
  }}
}}
"#
        );
        load_symbols(&source, "spread", "rows")
    };
    assert_eq!(symbols("").len(), 1, "{:?}", symbols(""));
    assert_eq!(symbols("a[0] = c;").len(), 2, "{:?}", symbols("a[0] = c;"));
}

/// A global pointer read around calls to a function of the program that writes only
/// through the argument it is given (code_saturne's
/// `cs_rotation_velocity(cs_glob_rotation + r, cog, vr1)`): given a local array, the call
/// cannot write the global, and the loads read one value; given the caller's parameter,
/// which may point anywhere, they are two.
#[test]
fn a_call_writing_only_a_local_through_its_argument_leaves_a_global_one_value() {
    let symbols = |out: &str| {
        let source = format!(
            r#"
double *table;
static void velocity(const double *c, double *o) {{ o[0] = 2 * c[0]; o[1] = c[1]; }}
void spin(int n, const int *rot, double *res) {{
  for (int i = 0; i < n; i++) {{
    double v1[2];
    velocity(table + rot[i], {out});
    velocity(table + rot[i] + 1, v1);
    res[i] = v1[0] + v1[1];
  }}
}}
"#
        );
        load_symbols(&source, "spin", "table")
    };
    assert_eq!(symbols("v1").len(), 1, "{:?}", symbols("v1"));
    assert_eq!(symbols("res").len(), 2, "{:?}", symbols("res"));
}
