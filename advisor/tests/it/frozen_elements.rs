//! Local array elements written once before the loop that reads them: code_saturne's
//! `cs_lnum_t db_size[2] = {b_size[0], b_size[0]*b_size[0]};` and the block loops over
//! `ii*db_size[1] + jj*db_size[0] + kk`. Read back, `db_size[1]` is `B*B` and `db_size[0]`
//! is `B`, so the rows of `m_val` are whole blocks that never meet; as loads of their own,
//! nothing related them and the loop needed a profile. Each verdict here is checked against
//! compiled runs, forward and reversed; the others show where forwarding would be wrong.

use crate::common;

use advisor::model::Verdict;
use common::check_with_runs;

/// A program printing `m` after `kernel` runs the loop marked `/* LOOP */` in `body` over
/// rows `ii` of blocks of `bs` by `bs` (`bs = 3`, 4 rows).
fn program(helper: &str, body: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         {helper}\n\
         void kernel(double *m, const double *da, int n_rows, const int b_size[4], int flag)\n{{\n\
           int ii, jj, kk;\n\
         {body}\n}}\n\
         int main(void) {{\n\
           double m[64], da[64];\n\
           int b_size[4] = {{3, 3, 3, 9}};\n\
           for (int k = 0; k < 64; k++) {{ m[k] = 0; da[k] = k * k % 11 - 5; }}\n\
           kernel(m, da, 4, b_size, 1);\n\
           for (int k = 0; k < 64; k++) printf(\"%g \", m[k]);\n\
           printf(\"\\n\");\n\
           return 0;\n\
         }}\n"
    )
}

/// The block loop of code_saturne's `_b_pre_dump_diag_contrib`: each row `ii` writes its own
/// block of `m`, and adds what the row before left in the element it reads (so rows that
/// meet give different results in reverse).
const BLOCK_LOOP: &str = "  for (ii = 0; ii < n_rows; ii++) { /* LOOP */\n\
       for (jj = 0; jj < b_size[0]; jj++)\n\
         for (kk = 0; kk < b_size[0]; kk++)\n\
           m[ii*db_size[1] + jj*db_size[0] + kk] =\n\
             m[ii*db_size[1] + jj*db_size[0] + kk] * 0.5 + da[ii*b_size[3] + jj*b_size[2] + kk];\n\
     }";

fn check(helper: &str, setup: &str, expected: Verdict, independent: bool) {
    let body = format!("{setup}\n{BLOCK_LOOP}");
    check_with_runs(&program(helper, &body), expected, independent);
}

#[test]
fn sizes_written_once_by_the_initializer() {
    check(
        "",
        "  int db_size[2] = {b_size[0], b_size[0]*b_size[0]};",
        Verdict::Friendly,
        true,
    );
}

#[test]
fn sizes_stored_one_by_one_before_the_loop() {
    check(
        "",
        "  int db_size[3];\n  db_size[0] = b_size[0];\n  db_size[1] = b_size[0] * b_size[0];",
        Verdict::Friendly,
        true,
    );
}

/// A callee receives the array and makes the row stride 1: the rows overlap. Its address
/// escapes, so no load reads the initializer's value.
#[test]
fn an_array_a_callee_may_change_is_not_read_back() {
    check(
        "static void narrow(int *d) { d[1] = 1; }",
        "  int db_size[2] = {b_size[0], b_size[0]*b_size[0]};\n  narrow(db_size);",
        Verdict::NeedsProfile,
        false,
    );
}

/// A second store under a condition: which value the loop reads depends on `flag`. The
/// other element still reads back (`db_size[0]` is `b_size[0]`), and with the stride 1
/// that `flag` may store, two iterations write one element: the witness.
#[test]
fn an_element_stored_twice_is_not_read_back() {
    check(
        "",
        "  int db_size[2] = {b_size[0], b_size[0]*b_size[0]};\n  if (flag) db_size[1] = 1;",
        Verdict::NotFriendly,
        false,
    );
}

/// Through a pointer into the array the loop cannot see which element is written.
#[test]
fn an_array_written_through_a_variable_index_is_not_read_back() {
    check(
        "",
        "  int db_size[2] = {b_size[0], b_size[0]*b_size[0]};\n  db_size[flag] = 1;",
        Verdict::NeedsProfile,
        false,
    );
}
