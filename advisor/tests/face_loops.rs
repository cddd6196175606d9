//! Finite-volume face loops (issue 13, as code_saturne writes them): the faces are split
//! into groups and threads whose face ranges come from a numbering array, a cell's
//! accumulators are updated at indices read from the face-to-cell table, and a small array
//! declared at the top of the function is reused as scratch by several loops. Whether two
//! threads' ranges or two faces' cells meet is a property of the data: the verdict is
//! needs-profile, never not-friendly on a conflict that only chosen data would make. Each
//! fixture runs compiled: with the program's own numbering, reversing the thread loop does
//! not change the result.

mod common;

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
            .any(|r| r.code == "WW111" || r.code == "WW103"),
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
