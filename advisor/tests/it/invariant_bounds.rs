//! Loops whose bound the loop re-evaluates on every iteration without changing it: a call
//! of a function that only reads memory (velvet's `i < getNodeLength(node)`), a library
//! function of numbers, a nested conditional expression (dtaidistance's `ci < MIN3(...)`),
//! and a local whose address a call took before the loop (hypre's `num_procs`). Before,
//! each was not friendly with nothing to show the bound change. A call is invariant when
//! its arguments are and no store of the loop can change what it reads; the join of a `?:`
//! when the values it joins and the conditions choosing among them are; a local when every
//! store of the loop goes through a pointer that cannot hold its address. Each verdict is
//! checked against runs with the loop reversed (which evaluates the bound once).

use crate::common;

use advisor::model::Verdict;
use common::*;

const NODE: &str = r#"
#include <stdio.h>
typedef struct { int length; double *data; } Node;
static int getNodeLength(const Node *node) { return node->length; }
static void doubled(const Node *node, double *out) {
    for (int i = 0; i < getNodeLength(node); i++) /* LOOP */
        out[i] = node->data[i] * 2.0;
}
int main(void) {
    double data[20], out[20] = {0};
    for (int k = 0; k < 20; k++) data[k] = k % 7;
    Node node = { 17, data };
    doubled(&node, out);
    for (int k = 0; k < 20; k++) printf("%g ", out[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_call_that_reads_what_the_loop_never_writes_is_an_invariant_bound() {
    let report = check_with_runs(NODE, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.upper, "(getNodeLength(node))");
    let out = report.parameters.iter().find(|p| p.name == "out").unwrap();
    let bytes = out.bytes.as_ref().expect("a section for `out`");
    assert_eq!(bytes.hi, "8*(getNodeLength(node))");
    // `out` holds doubles: by the effective-type rule no store changes the `int` length.
    assert!(
        report
            .assumptions
            .iter()
            .any(|a| a.contains("what `getNodeLength(node)` reads (`int`)")),
        "{:#?}",
        report.assumptions
    );
}

/// The store is an `int` too, so the effective-type rule does not help; `graph` and `lens`
/// are different objects at every call site.
const GRAPH: &str = r#"
#include <stdio.h>
typedef struct { int nodeCount; int *lengths; } Graph;
static int nodeCount(const Graph *graph) { return graph->nodeCount; }
static void lengths(const Graph *graph, int *lens) {
    for (int id = 1; id < nodeCount(graph) + 1; id++) /* LOOP */
        lens[id] = graph->lengths[id] + id;
}
int main(void) {
    int l[12], lens[12] = {0};
    for (int k = 0; k < 12; k++) l[k] = (k * 7) % 5;
    Graph graph = { 10, l };
    lengths(&graph, lens);
    for (int k = 0; k < 12; k++) printf("%d ", lens[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_count_read_through_a_call_is_unchanged_by_stores_into_another_array() {
    check_with_runs(GRAPH, Verdict::Friendly, true);
}

/// The body shortens the node: the bound changes, and the report says which read.
const TRUNCATE: &str = r#"
#include <stdio.h>
typedef struct { int length; double *data; } Node;
static int getNodeLength(const Node *node) { return node->length; }
static void truncate_at(Node *node, double *out, double limit) {
    for (int i = 0; i < getNodeLength(node); i++) { /* LOOP */
        out[i] = node->data[i];
        if (node->data[i] > limit)
            node->length = i + 1;
    }
}
int main(void) {
    double data[20], out[20] = {0};
    for (int k = 0; k < 20; k++) data[k] = k % 7;
    Node node = { 20, data };
    truncate_at(&node, out, 5.0);
    for (int k = 0; k < 20; k++) printf("%g ", out[k]);
    printf("%d\n", node.length);
    return 0;
}
"#;

#[test]
fn a_call_reading_what_the_body_writes_is_a_changing_bound() {
    let report = check_with_runs(TRUNCATE, Verdict::NotFriendly, false);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW107
                && r.message.contains("`getNodeLength(node)` which may change")),
        "{:#?}",
        report.reasons
    );
}

/// A function that writes memory is never taken for an invariant bound, even when what it
/// writes is not what it returns.
const COUNTING: &str = r#"
#include <stdio.h>
static int calls;
static int limit(int n) { calls++; return n; }
static void fill(double *out, int n) {
    for (int i = 0; i < limit(n); i++) /* LOOP */
        out[i] = i;
}
int main(void) {
    double out[10] = {0};
    fill(out, 10);
    printf("%g %d\n", out[9], calls);
    return 0;
}
"#;

#[test]
fn a_call_with_side_effects_in_the_bound_is_not_normalizable() {
    let report = check(COUNTING, Verdict::NotFriendly);
    assert!(has_code(&report, "WW107"), "{:#?}", report.reasons);
}

/// dtaidistance's band: the bound is `MIN3`, nested `?:` over values and conditions the loop
/// does not change.
const BAND: &str = r#"
#include <stdio.h>
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MIN3(a, b, c) MIN(MIN(a, b), c)
static void band(double *full, const double *wps, int cbs, int ces, int width, int l2) {
    for (int ci = cbs; ci < MIN3(ces, width - 1, l2); ci++) /* LOOP */
        full[ci - cbs] = wps[ci] + 0.5;
}
int main(void) {
    double wps[40], full[40] = {0};
    for (int k = 0; k < 40; k++) wps[k] = k % 9;
    band(full, wps, 3, 30, 25, 40);
    band(full, wps, 10, 40, 50, 18);
    band(full, wps, 9, 4, 40, 40);
    for (int k = 0; k < 40; k++) printf("%g ", full[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_min3_bound_is_one_expression_over_invariant_values() {
    let report = check_with_runs(BAND, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.upper, "min(width - 1, ces, l2)");
}

/// The `?:` of the bound chooses by a value the body changes: not normalizable, with the
/// variable named.
const CHOSEN: &str = r#"
#include <stdio.h>
static void fill(double *out, int n, int m) {
    int lim = n;
    for (int i = 0; i < lim; i++) { /* LOOP */
        out[i] = i;
        if (i > m)
            lim = m;
    }
}
int main(void) {
    double out[20] = {0};
    fill(out, 20, 6);
    for (int k = 0; k < 20; k++) printf("%g ", out[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_bound_the_body_assigns_is_named() {
    let report = check(CHOSEN, Verdict::NotFriendly);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW107
                && r.message == "the loop bound reads `lim`, which the loop assigns"),
        "{:#?}",
        report.reasons
    );
}

/// hypre's `hypre_MPI_Comm_size(comm, &num_procs)` before the loop: the local's address
/// went to a call, yet the loop's only store goes through memory allocated in the function,
/// which cannot be the local.
const ESCAPED: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void comm_size(int *n) { *n = 9; }
static int *partition(const int *row_starts) {
    int num_procs;
    comm_size(&num_procs);
    int *row = malloc(sizeof(int) * (num_procs + 1));
    for (int i = 0; i < num_procs + 1; i++) /* LOOP */
        row[i] = row_starts[i] * 2;
    return row;
}
int main(void) {
    int starts[12];
    for (int k = 0; k < 12; k++) starts[k] = k * k;
    int *row = partition(starts);
    for (int k = 0; k < 10; k++) printf("%d ", row[k]);
    printf("\n");
    free(row);
    return 0;
}
"#;

#[test]
fn a_local_whose_address_escaped_before_the_loop_is_unchanged_by_stores_elsewhere() {
    check_with_runs(ESCAPED, Verdict::Friendly, true);
}

/// The loop stores through a pointer read from a global that `set` assigns, `SAVED` in
/// the text below.
const SAVED_BY_SET: &str = r#"
#include <stdio.h>
static int *saved;
static int buffer[16];
static void set(int *n, int which) { *n = 9; saved = SAVED; }
static void fill(int *out) {
    int num_procs;
    set(&num_procs, 0);
    for (int i = 0; i < num_procs; i++) /* LOOP */
        saved[i] = 4;
    out[0] = num_procs;
}
int main(void) {
    int out[1];
    fill(out);
    printf("%d %d\n", out[0], buffer[8]);
    return 0;
}
"#;

/// `set` writes through the pointer it gets and keeps nothing: no memory holds the
/// local's address (the escape analysis of `advisor::escape`), so the global's pointer
/// cannot reach it.
#[test]
fn a_local_passed_to_a_call_that_keeps_nothing_is_unchanged_by_stores_through_memory() {
    let source = SAVED_BY_SET.replace("SAVED", "buffer");
    check_with_runs(&source, Verdict::Friendly, true);
}

#[test]
fn a_local_maybe_written_through_a_captured_pointer_needs_a_profile() {
    // `set` may store the local's address in the global the loop's pointer is read from:
    // only a run can tell (this one does not).
    let source = SAVED_BY_SET.replace("SAVED", "which ? n : buffer");
    let report = check(&source, Verdict::NeedsProfile);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW110
                && r.message.contains("the loop bound reads `num_procs`")
                && r.message.contains("its address was taken before the loop")),
        "{:#?}",
        report.reasons
    );
}

/// code_saturne's `cs_post.c`: the bound is a global `int` and the loop stores `int`s
/// through a pointer read from a global, but only into the members of structs
/// (`post_mesh->locate_ref -= 1`), which by C's rules are members of struct objects, never
/// the global. `STORE` below is the loop's store, `EXTRA` a declaration.
const MEMBERS: &str = r#"
#include <stdio.h>
typedef struct { int locate_ref; int edges_ref; } post_mesh_t;
static int n_meshes = 6;
static post_mesh_t storage[8];
static post_mesh_t *meshes = storage;
EXTRA
static void shift(int mesh_id) {
    for (int i = 0; i < n_meshes; i++) { /* LOOP */
        post_mesh_t *post_mesh = meshes + i;
        if (post_mesh->locate_ref > mesh_id)
            STORE;
    }
}
int main(void) {
    for (int k = 0; k < 8; k++) meshes[k].locate_ref = k;
    shift(2);
    for (int k = 0; k < 8; k++) printf("%d ", meshes[k].locate_ref);
    printf("%d\n", n_meshes);
    return 0;
}
"#;

#[test]
fn stores_into_struct_members_leave_a_plain_variable_bound_alone() {
    let source = MEMBERS
        .replace("STORE", "post_mesh->locate_ref -= 1")
        .replace("EXTRA", "");
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(
        report.assumptions.iter().any(|a| a.contains(
            "the loop's stores of a type that could modify `n_meshes` (`int`) all write members of structs, and it is a variable of no struct type"
        )),
        "{:#?}",
        report.assumptions
    );
    // The same `int` stored through a plain pointer may be the global: not friendly.
    let source = MEMBERS
        .replace("STORE", "*counter -= 1")
        .replace("EXTRA", "static int *counter = &n_meshes;");
    let report = check(&source, Verdict::NotFriendly);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.message.contains("the loop bound reads `n_meshes`")),
        "{:#?}",
        report.reasons
    );
}

/// A counter compared with a `double` bound runs ceil(x) times: 3 for 2.5, where a bound of
/// `x` would size the written section at 20 bytes instead of the 24 the run writes.
const FLOATING: &str = r#"
#include <stdio.h>
static void fill(double *a, double x) {
    for (int i = 0; i < x; i++) /* LOOP */
        a[i] = i + 1;
}
int main(void) {
    double a[4] = {0};
    fill(a, 2.5);
    printf("%g %g %g %g\n", a[0], a[1], a[2], a[3]);
    return 0;
}
"#;

#[test]
fn a_counter_compared_in_floating_point_has_no_integer_bound() {
    assert_eq!(run(FLOATING), "1 2 3 0\n");
    let report = check(FLOATING, Verdict::NotFriendly);
    assert!(report.induction.is_none(), "{:#?}", report.induction);
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW107
                && r.message.contains("compares the counter in floating point")),
        "{:#?}",
        report.reasons
    );
}

/// A `double` bound that holds an integer count (`double n = count`) compares as the
/// integers do: the loop is normalizable, over `count`.
const CONVERTED: &str = r#"
#include <stdio.h>
static void fill(double *a, int count) {
    double n = count;
    for (int i = 0; i < n; i++) /* LOOP */
        a[i] = i + 1;
}
int main(void) {
    double a[4] = {0};
    fill(a, 3);
    printf("%g %g %g %g\n", a[0], a[1], a[2], a[3]);
    return 0;
}
"#;

#[test]
fn a_bound_converted_from_an_integer_compares_as_the_integers_do() {
    assert_eq!(run(CONVERTED), "1 2 3 0\n");
    let report = check_with_runs(CONVERTED, Verdict::Friendly, true);
    let induction = report.induction.as_ref().expect("normalizable");
    assert_eq!(induction.trip_count, "count");
}
