//! Bounds and sections name variables as the loop finds them (`advisor/src/stale.rs`):
//! after `n = n - 1;` the bound of `i < n` is `n`, not the entry value's `n - 1`, which a
//! port would map one element short; after `node = stack[--top]` the counter's section
//! starts at `4*top`; a value no longer in its variable keeps its line (`@L`) or takes the
//! local holding it.

use crate::common;

use advisor::model::LoopReport;
use common::marked_report;

/// The marked loop's bound and the section of `array`.
fn check(source: &str, upper: &str, array: &str, section: (&str, &str)) -> LoopReport {
    let report = marked_report(source);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.upper, upper, "{report:#?}");
    let p = report
        .parameters
        .iter()
        .find(|p| p.name == array)
        .unwrap_or_else(|| panic!("no parameter `{array}`: {report:#?}"));
    let bytes = p.bytes.as_ref().expect("a section");
    assert_eq!(
        (bytes.lo.as_str(), bytes.hi.as_str()),
        section,
        "{report:#?}"
    );
    report
}

#[test]
fn a_bound_decremented_before_the_loop_is_the_variable() {
    check(
        r#"
void f(double *a, int n) {
    n = n - 1;
    for (int i = 0; i < n; i++) /* LOOP */
        a[i] = 0;
}
"#,
        "n",
        "a",
        ("0", "8*n"),
    );
}

#[test]
fn a_start_incremented_before_the_loop_is_the_variable() {
    let report = check(
        r#"
void g(double *b, int n, int k) {
    k++;
    for (int i = k; i < n; i++) /* LOOP */
        b[i] = b[i] * 0.5;
}
"#,
        "n",
        "b",
        ("8*k", "8*n"),
    );
    assert_eq!(report.induction.unwrap().lower, "k");
}

#[test]
fn a_value_read_through_a_moved_pointer_is_named_by_its_local() {
    // kissfft: `p = *factors++;` then `for (k = 0; k < p; ++k)`: `*factors` at the loop is
    // the next factor.
    let report = marked_report(
        r#"
void work(double *out, const int *factors) {
    const int p = *factors++;
    const int m = *factors++;
    for (int k = 0; k < p; ++k) /* LOOP */
        out[k] = k * m;
}
"#,
    );
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.upper, "p");
}

#[test]
fn a_counter_decremented_by_the_read_of_the_node_starts_where_the_variable_is() {
    // fasttree's tree walk: `node = stack[--stack_size]`, then the loop pushes children.
    let report = check(
        r#"
typedef struct { int count; int child[4]; } node_t;
void walk(const node_t *nodes, int *stack, int root, int leaves) {
    int stack_size = 1;
    stack[0] = root;
    while (stack_size > 0) {
        int node = stack[--stack_size];
        if (node >= leaves)
            for (int i = 0; i < 4; i++) /* LOOP */
                stack[stack_size++] = nodes[node].child[i];
    }
}
"#,
        "4",
        "stack",
        ("4*stack_size", "4*stack_size + 16"),
    );
    let nodes = report
        .parameters
        .iter()
        .find(|p| p.name == "nodes")
        .unwrap();
    let bytes = nodes.bytes.as_ref().expect("a section");
    assert_eq!(bytes.lo, "20*node + 4", "{report:#?}");
}

#[test]
fn an_earlier_loop_over_the_same_variable_leaves_the_names_of_a_nest_alone() {
    // hypre's par_make_system.c: a first loop over `i`, then a nest whose inner bound reads
    // `H->i[i + 1]` with the outer loop's `i`, which the inner loop sees as it is.
    let report = marked_report(
        r#"
typedef struct { int *i; int *j; } csr;
void f(const csr *H, double *out, int rows, double *t) {
    int i, k;
    for (i = 0; i < 2; i++)
        t[i] = 0;
    for (i = 0; i < rows; i++)
        for (k = H->i[i]; k < H->i[i + 1]; k++) /* LOOP */
            out[k] = H->j[k] * 2.0;
}
"#,
    );
    let yaml = serde_yaml::to_string(&report).unwrap();
    assert!(!yaml.contains("@L"), "{yaml}");
    assert_eq!(report.induction.unwrap().upper, "H->i[i + 1]");
}

#[test]
fn a_row_swapped_before_the_loop_is_the_variable() {
    // dtaidistance: `i1 = 1 - i1;` then the loop resets row i1. The old report wrote the
    // section with the previous `i1`, so a port mapped the other row.
    check(
        r#"
void rows(double *dtw, int length, int l1) {
    int i1 = 0;
    for (int i = 0; i < l1; i++) {
        i1 = 1 - i1;
        for (int j = 0; j < length; j++) /* LOOP */
            dtw[length * i1 + j] = 1e300;
    }
}
"#,
        "length",
        "dtw",
        ("8*i1*length", "8*length + 8*i1*length"),
    );
}

/// A global the function reads into a local and then stores to before the loop: the loop's
/// bound is the value loaded, which the global no longer holds where the loop starts, so it
/// keeps its line (`n@L4`); a global stored to only after the loop, or never, is the
/// variable itself.
#[test]
fn a_global_stored_to_between_its_read_and_the_loop_keeps_its_line() {
    check(
        r#"
int n;
void f(double *x) {
    int n0 = n;
    n = 5;
    for (int j = 0; j < n0; j++) /* LOOP */
        x[j] = x[j] * 2;
}
"#,
        "n@L4",
        "x",
        ("0", "8*n@L4"),
    );
    check(
        r#"
int n;
void f(double *x) {
    int n0 = n;
    for (int j = 0; j < n0; j++) /* LOOP */
        x[j] = x[j] * 2;
    n = 5;
}
"#,
        "n",
        "x",
        ("0", "8*n"),
    );
}

/// A loop that reads the global itself (`i < g` after `g = 3;`) means the value it finds
/// there: the global's name stays as the report gave it, even though the reconstruction
/// gives that read the symbol of an earlier one (`m = g;`).
#[test]
fn a_global_the_loop_reads_itself_is_not_marked_stale() {
    let report = common::marked_report(
        r#"
int g;
void f(double *a) {
    int m = g;
    g = 3;
    for (int i = 0; i < g; i++) /* LOOP */
        a[i] += 1;
    g = m;
}
"#,
    );
    let upper = &report.induction.as_ref().expect("normalizable").upper;
    assert!(!upper.contains("@L"), "{report:#?}");
}
