//! Finite-volume face loops (as code_saturne writes them): the faces are split
//! into groups and threads whose face ranges come from a numbering array, a cell's
//! accumulators are updated at indices read from the face-to-cell table, and a small array
//! declared at the top of the function is reused as scratch by several loops. Whether two
//! threads' ranges or two faces' cells meet is a property of the data: the verdict is
//! needs-profile, never not-friendly on a conflict that only chosen data would make. Each
//! fixture runs compiled: with the program's own numbering, reversing the thread loop does
//! not change the result.

use crate::common;

use advisor::model::Verdict;
use common::{check_with_runs, has_code};

/// Six faces over four cells, two threads whose faces touch disjoint cells (what the
/// numbering guarantees), and a scratch array `fctb` the next loop reuses.
const FACES: &str = r#"#include <stdio.h>
static const int group_index[4] = {0, 3, 3, 6};
static const int face_cells[6][2] = {{0, 1}, {1, 0}, {0, 1}, {2, 3}, {3, 2}, {2, 3}};
static double rhs[4][4];
static void gradient(int n_threads, const double *weight, const double (*normal)[3]) {
  double fctb[4];
  for (int t_id = 0; t_id < n_threads; t_id++) { /* LOOP */
    for (int f = group_index[2 * t_id]; f < group_index[2 * t_id + 1]; f++) {
      int ii = face_cells[f][0], jj = face_cells[f][1];
      double pfac = weight[f] * rhs[ii][3] + (1.0 - weight[f]) * rhs[jj][3];
      for (int ll = 0; ll < 3; ll++)
        fctb[ll] = pfac * normal[f][ll];
      for (int ll = 0; ll < 3; ll++) {
        rhs[ii][ll] += fctb[ll];
        rhs[jj][ll] -= fctb[ll];
      }
    }
  }
  for (int f = 0; f < 6; f++) {
    for (int ll = 0; ll < 3; ll++)
      fctb[ll] = normal[f][ll] * 0.5;
    rhs[face_cells[f][0]][3] += fctb[0] + fctb[1] + fctb[2];
  }
}
int main(void) {
  double weight[6], normal[6][3];
  for (int f = 0; f < 6; f++) {
    weight[f] = 0.25 + 0.1 * f;
    for (int l = 0; l < 3; l++) normal[f][l] = f - l * 0.5;
  }
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 4; l++) rhs[c][l] = c + 0.125 * l;
  gradient(2, weight, normal);
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 4; l++) printf("%.17g\n", rhs[c][l]);
  return 0;
}
"#;

#[test]
fn a_thread_loop_over_numbered_face_ranges_needs_a_profile_not_a_verdict() {
    let report = check_with_runs(FACES, Verdict::NeedsProfile, true);
    // No dependence is claimed: the only witnesses choose the numbering's values.
    assert!(!has_code(&report, "WW101"), "{report:#?}");
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.code == advisor::rules::Code::WW111 || r.code == advisor::rules::Code::WW103),
        "{report:#?}"
    );
}

#[test]
fn scratch_reused_by_the_next_loop_is_private_to_each_thread() {
    let report = check_with_runs(FACES, Verdict::NeedsProfile, true);
    let fctb = report
        .private
        .iter()
        .find(|p| p.name == "fctb")
        .unwrap_or_else(|| panic!("fctb is private: {report:#?}"));
    assert!(
        !fctb.last_value,
        "the next loop writes it before reading it"
    );
}

/// A cell array updated at face indices and also read at another index (`rhs[ii][3]`): not
/// a histogram reduction, so iterations collide exactly when data repeats a cell.
const SHARED_CELLS: &str = r#"#include <stdio.h>
static const int face_cells[6][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}};
static double rhs[4][4];
static void accumulate(int n_faces, const double *flux) {
  for (int f = 0; f < n_faces; f++) { /* LOOP */
    int ii = face_cells[f][0];
    rhs[ii][0] += flux[f] * rhs[ii][3];
  }
}
int main(void) {
  double flux[6];
  for (int f = 0; f < 6; f++) flux[f] = 1.0 + f;
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 4; l++) rhs[c][l] = c + 0.5 * l;
  accumulate(6, flux);
  for (int c = 0; c < 4; c++) printf("%.17g\n", rhs[c][0]);
  return 0;
}
"#;

#[test]
fn an_update_at_a_cell_chosen_by_data_needs_a_profile() {
    // The faces 0 and 4 share cell 0: reversing changes the order of the additions only,
    // and the sum is exact here, so the run cannot tell; the verdict says the data decides.
    let report = check_with_runs(SHARED_CELLS, Verdict::NeedsProfile, true);
    assert!(!has_code(&report, "WW101"), "{report:#?}");
}

/// Row ranges read from an array the function read before (so the analyses number the
/// range's values: `start[i + 1]#2`): a witness that picks them is still one the data
/// must make, not a dependence. Warpwise claimed WW101 here while the chosen values were
/// compared by report name instead of by symbol.
const RANGES_READ_TWICE: &str = r#"#include <stdio.h>
static const int start[4] = {0, 2, 3, 6};
static void scatter(int n, double *buf, const double *w) {
  for (int i = 0; i < n; i++)
    buf[start[i]] += w[start[i + 1] - 1];
  for (int i = 0; i < n; i++) { /* LOOP */
    for (int c = start[i]; c < start[i + 1]; c++)
      buf[c] = w[i] * (c + 1);
  }
}
int main(void) {
  double buf[6] = {0}, w[6] = {1, 2, 3, 4, 5, 6};
  scatter(3, buf, w);
  for (int c = 0; c < 6; c++) printf("%.17g\n", buf[c]);
  return 0;
}
"#;

#[test]
fn ranges_whose_values_the_function_read_before_still_need_a_profile() {
    let report = check_with_runs(RANGES_READ_TWICE, Verdict::NeedsProfile, true);
    assert!(!has_code(&report, "WW101"), "{report:#?}");
    // The loop's index is named as the source names it.
    assert_eq!(report.induction.as_ref().map(|i| i.var.as_str()), Some("i"));
}

/// code_saturne's group and thread loops around a face loop whose range is read from the
/// numbering at the thread's subscript: only the face loop has a section in closed form;
/// the outer loops' sections depend on values read inside them.
const GROUPS: &str = r#"
static void scale(int n_groups, int n_threads, const int *restrict group_index,
                  double *restrict flux) {
  for (int g_id = 0; g_id < n_groups; g_id++) { /* LOOP */
    for (int t_id = 0; t_id < n_threads; t_id++) {
      for (int face_id = group_index[(t_id * n_groups + g_id) * 2];
           face_id < group_index[(t_id * n_groups + g_id) * 2 + 1]; face_id++)
        flux[face_id] *= 2;
    }
  }
}
int main(void) {
  int group_index[8] = {0, 2, 4, 6, 2, 4, 6, 8};
  double flux[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  scale(2, 2, group_index, flux);
  return (int)flux[7];
}
"#;

#[test]
fn a_section_read_at_an_inner_loops_subscript_is_not_the_outer_loops() {
    let unit = common::load(GROUPS);
    let reports = advisor::analyze::analyze_unit(&unit, &advisor::analyze::Filter::default());
    let flux = |line: u32| {
        let r = reports
            .iter()
            .find(|r| r.line == line)
            .unwrap_or_else(|| panic!("no loop at line {line}: {reports:#?}"));
        r.parameters
            .iter()
            .find(|p| p.name == "flux")
            .cloned()
            .expect("flux")
    };
    // The group and thread loops: one face range is not their section; no subscript
    // bounds theirs, so it is the whole 8-double array `main` passes.
    for line in [4, 5] {
        let p = flux(line);
        assert!(p.whole_object.is_some(), "line {line}: {p:#?}");
        assert_eq!(
            p.bytes.as_ref().map(|b| (b.lo.as_str(), b.hi.as_str())),
            Some(("0", "64")),
            "line {line}: {p:#?}"
        );
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("a value read inside the loop")),
            "line {line}: {p:#?}"
        );
    }
    // The face loop: the range its thread reads.
    let b = flux(6).bytes.expect("the face loop's section");
    assert_eq!(
        (b.lo.as_str(), b.hi.as_str()),
        (
            "8*group_index[(t_id * n_groups + g_id) * 2]",
            "8*group_index[(t_id * n_groups + g_id) * 2 + 1]"
        )
    );
}

/// What keeps its section: a row of an array of structs' pointers, for each `i` the row's
/// own extent (`rows[i]->v` over `rows[i]->n`), and a counter's entry value (`k`).
const ROWS: &str = r#"
typedef struct { int n; double *v; } row_t;
static void zero(int m, row_t **rows, int k, int n, int *out) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < rows[i]->n; j++)
      rows[i]->v[j] = 0;
  while (n-- > 0)
    out[k++] = 1;
}
int main(void) {
  double a[3] = {1, 2, 3}, b[2] = {4, 5};
  row_t r0 = {3, a}, r1 = {2, b};
  row_t *rows[2] = {&r0, &r1};
  int out[8] = {0};
  zero(2, rows, 2, 4, out);
  return (int)(a[0] + b[1]) + out[5];
}
"#;

#[test]
fn a_rows_extent_and_a_counters_entry_value_keep_their_sections() {
    let unit = common::load(ROWS);
    let reports = advisor::analyze::analyze_unit(&unit, &advisor::analyze::Filter::default());
    let bytes = |line: u32, name: &str| {
        let r = reports
            .iter()
            .find(|r| r.line == line)
            .unwrap_or_else(|| panic!("no loop at line {line}: {reports:#?}"));
        let p = r.parameters.iter().find(|p| p.name == name);
        let b = p.and_then(|p| p.bytes.clone());
        b.map(|b| (b.lo.to_string(), b.hi.to_string()))
            .unwrap_or_else(|| panic!("line {line}: no section of {name}: {r:#?}"))
    };
    assert_eq!(bytes(4, "rows[i]->v"), ("0".into(), "8*rows[i]->n".into()));
    assert_eq!(bytes(7, "out"), ("4*k".into(), "4*k + 4*n".into()));
}
