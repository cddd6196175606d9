//! Which pointers cannot reach an array (CFD codes allocate work arrays through a
//! tracked wrapper, declare `restrict` parameters and fetch fields from a registry): new
//! memory from an allocator wrapper whose address goes nowhere before the loop, a
//! `restrict` parameter the function keeps to itself, and a lookup's result (a pointer the
//! program keeps, assumed apart under the default policy). Each verdict is checked on
//! compiled runs: the loop reversed gives the same output when it is friendly, and a
//! different one in the negative fixtures, where the pointers really do meet.

use crate::common;

use advisor::model::{LoopReport, Verdict};
use common::{check_with_runs, has_code};

/// A registry of fields and a tracked allocator, as a CFD code's memory layer has them:
/// `mem_malloc` records each address in a table (bookkeeping) and returns new memory.
const PRELUDE: &str = r#"#include <stdio.h>
#include <stdlib.h>
typedef struct { int n; double *val; } field_t;
static void *tracked[16];
static int n_tracked;
static void track(void *p) { tracked[n_tracked++ % 16] = p; }
void *mem_malloc(size_t ni, size_t size) {
  void *p = malloc(ni * size);
  if (p == NULL)
    return NULL;
  track(p);
  return p;
}
void *mem_free(void *p) { free(p); return NULL; }
static field_t *fields[4];
field_t *field_by_id(int id) { return fields[id]; }
static field_t *new_field(int n) {
  field_t *f = malloc(sizeof *f);
  f->n = n;
  f->val = malloc((n + 1) * sizeof(double));
  for (int i = 0; i <= n; i++) f->val[i] = i * 0.5 + (i % 3);
  return f;
}
"#;

/// `PRELUDE`, the function under test, and a `main` that registers two fields of 32
/// values, calls `body` and prints the fields.
fn program(function: &str, body: &str) -> String {
    format!(
        "{PRELUDE}{function}\nint main(void) {{\n  fields[0] = new_field(32);\n  fields[1] = new_field(32);\n  {body}\n  for (int id = 0; id < 2; id++)\n    for (int i = 0; i <= 32; i++) printf(\"%g\\n\", fields[id]->val[i]);\n  return 0;\n}}\n"
    )
}

fn assumes(report: &LoopReport, text: &str) -> bool {
    report.assumptions.iter().any(|a| a.contains(text))
}

#[test]
fn a_tracked_allocation_is_apart_from_a_field_until_it_is_freed() {
    let source = program(
        r#"double difference(field_t *f) {
  double *t = mem_malloc(f->n, sizeof(double));
  for (int i = 0; i < f->n; i++) /* LOOP */
    t[i] = f->val[i + 1] - f->val[i];
  double s = 0;
  for (int i = 0; i < f->n; i++) s += t[i] * (i + 1);
  t = mem_free(t);
  return s;
}"#,
        r#"printf("%g\n", difference(fields[0]));"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(!has_code(&report, "WW110"), "{report:#?}");
    assert!(
        assumes(
            &report,
            "`mem_malloc` returns new memory (its address is also passed to `track`"
        ),
        "the bookkeeping copy is stated: {:#?}",
        report.assumptions
    );
    assert!(
        !assumes(&report, "are the same array or do not overlap"),
        "{report:#?}"
    );
}

#[test]
fn new_memory_stored_into_the_field_before_the_loop_may_be_what_it_reads() {
    let source = program(
        r#"void shift(field_t *f) {
  double *t = mem_malloc(f->n + 1, sizeof(double));
  for (int i = 0; i <= f->n; i++) t[i] = f->val[i];
  f->val = t;
  double *v = field_by_id(0)->val;
  for (int i = 0; i < f->n; i++) /* LOOP */
    t[i] = v[i + 1] - v[i];
}"#,
        r#"shift(fields[0]);"#,
    );
    let report = check_with_runs(&source, Verdict::NeedsProfile, false);
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_restrict_parameter_is_apart_from_every_pointer_not_derived_from_it() {
    let source = program(
        r#"void difference(double *restrict out, field_t *f) {
  const double *v = f->val;
  for (int i = 0; i < f->n; i++) /* LOOP */
    out[i] = v[i + 1] - v[i];
}"#,
        r#"difference(fields[1]->val, fields[0]);"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(
        !assumes(&report, "`f->val` and `out`") && !assumes(&report, "`out` and"),
        "restrict is a guarantee, not an assumption: {:#?}",
        report.assumptions
    );
}

#[test]
fn a_restrict_parameter_stored_before_the_loop_may_be_reached_again() {
    // `f->val` is loaded after `out` was stored there: it is based on `out`, and C allows
    // the two to meet.
    let source = program(
        r#"void difference(double *restrict out, field_t *f) {
  f->val = out;
  const double *v = f->val;
  for (int i = 0; i < f->n; i++) /* LOOP */
    out[i] = v[i + 1] - v[i];
}"#,
        r#"difference(fields[1]->val, fields[0]);"#,
    );
    let report = check_with_runs(&source, Verdict::NeedsProfile, false);
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn fields_from_a_lookup_are_assumed_apart_and_the_report_says_so() {
    let source = program(
        r#"void difference(int dst, int src) {
  double *out = field_by_id(dst)->val;
  const double *v = field_by_id(src)->val;
  for (int i = 0; i < 32; i++) /* LOOP */
    out[i] = v[i + 1] - v[i];
}"#,
        r#"difference(1, 0);"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(
        assumes(
            &report,
            "do not overlap: pointers the program keeps and hands out (`field_by_id`) are assumed to be different arrays"
        ),
        "{:#?}",
        report.assumptions
    );
}

#[test]
fn a_row_computed_from_a_matrix_is_not_a_lookup() {
    // `row` returns an offset into memory the caller also reaches: never assumed apart.
    let source = program(
        r#"double *row(field_t *f, int r) { return f->val + r; }
void difference(field_t *f) {
  double *out = row(f, 1);
  const double *v = f->val;
  for (int i = 0; i < 16; i++) /* LOOP */
    out[i] = v[i + 2] - v[i];
}"#,
        r#"difference(fields[0]);"#,
    );
    let report = check_with_runs(&source, Verdict::NeedsProfile, false);
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

/// A dot product chosen at run time through a file-scope function pointer, as
/// code_saturne's `cs_dot` calls `_cs_glob_dot`: passing new memory to it keeps the memory
/// unreached when no target keeps the pointer.
const DOT: &str = r#"typedef double (dot_t)(int n, const double *x, const double *y);
static const double *kept;
static double dot_plain(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}
static double dot_pairs(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i + 1 < n; i += 2) s += x[i] * y[i] + x[i + 1] * y[i + 1];
  if (n % 2) s += x[n - 1] * y[n - 1];
  return s;
}
double dot_keeping(int n, const double *x, const double *y) {
  kept = x;
  return dot_plain(n, x, y);
}
static dot_t *glob_dot = dot_plain;
void set_dot(int k) {
  if (k == 1)
    glob_dot = dot_pairs;
  else
    glob_dot = KEEPING;
}
double dot(int n, const double *x, const double *y) { return glob_dot(n, x, y); }
double smooth(field_t *f) {
  double *t = mem_malloc(f->n, sizeof(double));
  for (int i = 0; i < f->n; i++) t[i] = f->val[i];
  double s = dot(f->n, t, t);
  for (int i = 0; i < f->n; i++) /* LOOP */
    t[i] = f->val[i + 1] - f->val[i] + s;
  s = t[0];
  t = mem_free(t);
  return s;
}"#;

#[test]
fn new_memory_passed_through_a_function_pointer_stays_unreached_when_no_target_keeps_it() {
    let source = program(
        &DOT.replace("KEEPING", "dot_plain"),
        r#"set_dot(1); printf("%g\n", smooth(fields[0]));"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(!has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_function_pointer_target_that_keeps_the_pointer_lets_it_be_reached() {
    let source = program(
        &DOT.replace("KEEPING", "dot_keeping"),
        r#"set_dot(1); printf("%g\n", smooth(fields[0]));"#,
    );
    let report = common::check(&source, Verdict::NeedsProfile);
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_work_buffer_the_caller_provides_or_the_function_allocates_is_apart_from_parameters() {
    // code_saturne's Krylov solvers and spglib's `perm_argsort`: `_aux = aux ? aux :
    // mem_malloc(..)`. New memory cannot be a parameter; the caller's buffer is assumed
    // apart from the other parameters, as any two received pointers are.
    let source = program(
        r#"void axpy(int n, double *vx, const double *b, double *aux) {
  double *work = aux;
  if (work == NULL)
    work = mem_malloc(n + 1, sizeof(double));
  for (int i = 0; i <= n; i++) work[i] = b[i] * 0.5;
  for (int i = 0; i < n; i++) /* LOOP */
    vx[i] += 2.0 * work[i + 1];
  if (aux == NULL)
    work = mem_free(work);
}"#,
        r#"axpy(32, fields[1]->val, fields[0]->val, NULL);"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(
        assumes(
            &report,
            "do not overlap: no call site in the analysed files passes them"
        ),
        "{:#?}",
        report.assumptions
    );
}

#[test]
fn a_provided_or_new_buffer_is_not_assumed_apart_from_a_pointer_loaded_later() {
    // The other pointer is loaded from memory after the new buffer's address was stored
    // there: it may be the buffer.
    let source = program(
        r#"void shift(field_t *f, double *aux) {
  double *work = aux;
  if (work == NULL)
    work = mem_malloc(f->n + 1, sizeof(double));
  for (int i = 0; i <= f->n; i++) work[i] = f->val[i];
  f->val = work;
  double *v = field_by_id(0)->val;
  for (int i = 0; i < f->n; i++) /* LOOP */
    work[i] = v[i + 1] - v[i];
}"#,
        r#"shift(fields[0], NULL);"#,
    );
    let report = check_with_runs(&source, Verdict::NeedsProfile, false);
    assert!(has_code(&report, "WW110"), "{report:#?}");
}

#[test]
fn a_store_into_new_memory_leaves_a_bound_of_the_same_type_unchanged() {
    // spglib's kpoint.c: an `int` scratch array filled up to an `int` count read through
    // another structure in every iteration. C's type rule cannot tell the two apart; the
    // new memory can.
    let source = program(
        r#"typedef struct { int size; int (*mat)[3]; } counts_t;
static counts_t *new_counts(int size) {
  counts_t *c = malloc(sizeof *c);
  c->size = size;
  c->mat = NULL;
  return c;
}
double mark(field_t *f) {
  counts_t *r = new_counts(f->n);
  int *unique = malloc(sizeof(int) * r->size);
  for (int i = 0; i < r->size; i++) /* LOOP */
    unique[i] = i % 3 - 1;
  double s = 0;
  for (int i = 0; i < r->size; i++) s += unique[i] * f->val[i];
  free(unique);
  free(r);
  return s;
}"#,
        r#"printf("%g\n", mark(fields[0]));"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(!has_code(&report, "WW107"), "{report:#?}");
}

#[test]
fn a_tracked_scratch_array_leaves_an_offset_read_through_a_parameter_unchanged() {
    // code_saturne's cs_grid.c: a work array from the tracked allocator, freed after the
    // loop nest, indexed with block sizes read through the parameter in every iteration.
    // Before, the store into the work array made `db_size[2]` a value that changes from
    // iteration to iteration; the reason now names the real obstacle, block sizes that
    // cannot be compared (rows of `db_size[3]` elements, `db_size[0]` of them written).
    let source = program(
        r#"typedef struct { int db_size[4]; double *val; } grid_t;
double scaled(grid_t *g, int n) {
  const int *db_size = g->db_size;
  double *w = mem_malloc(n * db_size[3] + 4, sizeof(double));
  for (int i = 0; i < n; i++) /* LOOP */
    for (int j = 0; j < db_size[0]; j++)
      w[i * db_size[3] + j + db_size[2]] = g->val[i] * 2 + j;
  double s = 0;
  for (int i = 0; i < n * db_size[3]; i++) s += w[i] * (i + 1);
  w = mem_free(w);
  return s;
}"#,
        r#"grid_t g = { { 2, 1, 3, 2 }, fields[0]->val };
  printf("%g\n", scaled(&g, 8));"#,
    );
    let report = check_with_runs(&source, Verdict::NeedsProfile, true);
    let reasons: Vec<&str> = report.reasons.iter().map(|r| r.message.as_str()).collect();
    assert!(
        reasons
            .iter()
            .all(|r| !r.contains("changes from iteration to iteration")),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("cannot bound the address difference")),
        "{reasons:#?}"
    );
}

#[test]
fn new_memory_whose_address_got_out_before_the_loop_may_hold_the_bound() {
    // `fields[2]` is the new block itself: the loop's store changes its own bound.
    let source = program(
        r#"int grow(field_t *f) {
  field_t *g = malloc(sizeof *g);
  g->n = 4;
  g->val = f->val;
  fields[2] = g;
  int count = 0;
  for (int i = 0; i < fields[2]->n; i++) /* LOOP */ {
    g->n = 8;
    count += i;
  }
  return count;
}"#,
        r#"printf("%d\n", grow(fields[0]));"#,
    );
    let report = check_with_runs(&source, Verdict::NotFriendly, false);
    assert!(has_code(&report, "WW107"), "{report:#?}");
}

#[test]
fn a_bound_in_a_received_struct_stays_put_while_a_new_structs_arrays_fill() {
    // spglib's refinement.c and code_saturne's `_coarse_init`: a constructor returns a
    // struct whose arrays it allocates, and the loop fills them up to a count read through
    // the struct it was given. The dependence test assumed the data stores leave
    // `*src`'s fields alone, yet the bound check called `src->n` variant: one assumption,
    // now made (and stated) by both.
    let source = program(
        r#"typedef struct { int n; int *kind; double (*pos)[3]; } cell_t;
static cell_t *new_cell(int n) {
  cell_t *c = malloc(sizeof *c);
  c->n = n;
  c->kind = malloc(sizeof(int) * n);
  c->pos = malloc(sizeof(double[3]) * n);
  return c;
}
cell_t *shifted(const cell_t *src, double dx) {
  cell_t *c = new_cell(src->n);
  for (int i = 0; i < src->n; i++) { /* LOOP */
    c->kind[i] = src->kind[i] + 1;
    for (int j = 0; j < 3; j++) c->pos[i][j] = src->pos[i][j] + dx;
  }
  return c;
}
double cell_sum(field_t *f) {
  cell_t *a = new_cell(f->n);
  for (int i = 0; i < f->n; i++) {
    a->kind[i] = i % 4;
    for (int j = 0; j < 3; j++) a->pos[i][j] = f->val[i] * (j + 1);
  }
  cell_t *b = shifted(a, 0.25);
  double s = 0;
  for (int i = 0; i < b->n; i++) s += b->kind[i] + b->pos[i][0] - b->pos[i][2];
  return s;
}"#,
        r#"printf("%g\n", cell_sum(fields[0]));"#,
    );
    let report = check_with_runs(&source, Verdict::Friendly, true);
    assert!(!has_code(&report, "WW107"), "{report:#?}");
    assert!(
        assumes(
            &report,
            "stores through `c->kind` do not modify the struct `*src`"
        ),
        "{:#?}",
        report.assumptions
    );
    // A `double` store cannot change the `int` count (C's type rule): no statement for it.
    assert!(
        !assumes(&report, "stores through `c->pos`"),
        "{:#?}",
        report.assumptions
    );
}
