//! Tiled loops as polyhedral code generators write them: bounds with `floord`/`ceild`
//! (`x < 0 ? -((-x + d - 1)/d) : x/d`) inside `min`/`max`. Each choice is one expression,
//! `floor_div(x, d)`, so the tile loops are normalizable, and a loop inside a tile loop is
//! compared within one tile even when the tile loop around it has no range. Verdicts are
//! checked against compiled runs (forward, reversed, shuffled); trip counts against the
//! count of iterations the C code runs, for negative arguments too.

use crate::common::*;
use advisor::model::Verdict;
use num_rational::BigRational;
use std::collections::HashMap;
use symbolic::{parse_expr, Var};

const MACROS: &str = "#include <stdio.h>\n\
    #define floord(n,d) (((n)<0) ? -((-(n)+(d)-1)/(d)) : (n)/(d))\n\
    #define ceild(n,d)  (((n)<0) ? -((-(n))/(d)) : ((n)+(d)-1)/(d))\n\
    #define max(x,y)    ((x) > (y)? (x) : (y))\n\
    #define min(x,y)    ((x) < (y)? (x) : (y))\n";

/// A program around `function` (which defines `void kernel(int n)` over the globals) that
/// fills `A`, runs the kernel and prints `B`.
fn program(function: &str) -> String {
    format!(
        "{MACROS}#define N 70\n\
         static double A[N][N], B[N][N];\n\
         {function}\n\
         int main(void) {{\n\
           for (int i = 0; i < N; i++)\n\
             for (int j = 0; j < N; j++) A[i][j] = (i * 7 + j * 3) % 11;\n\
           kernel(N);\n\
           for (int i = 0; i < N; i++)\n\
             for (int j = 0; j < N; j++) printf(\"%g \", B[i][j]);\n\
           printf(\"\\n\");\n\
           return 0;\n\
         }}\n"
    )
}

/// The tile loops of a copy over a square, as Pluto emits them.
const TILED_COPY: &str = "void kernel(int n) {\n\
  int t1, t2, t3, t4;\n\
  if (n >= 1) {\n\
    for (t1 = 0; t1 <= floord(n - 1, 32); t1++) /* LOOP */\n\
      for (t2 = 0; t2 <= floord(n - 1, 32); t2++)\n\
        for (t3 = 32 * t1; t3 <= min(n - 1, 32 * t1 + 31); t3++)\n\
          for (t4 = 32 * t2; t4 <= min(n - 1, 32 * t2 + 31); t4++)\n\
            B[t3][t4] = 2 * A[t3][t4] + 1;\n\
  }\n\
}";

#[test]
fn tile_loops_with_floord_bounds_are_friendly() {
    let report = check_with_runs(&program(TILED_COPY), Verdict::Friendly, true);
    let induction = report
        .induction
        .as_ref()
        .expect("the tile loop is normalizable");
    assert_eq!(induction.upper, "floor_div(n + 31, 32) - 1");
}

/// The same nest marked at the point loop inside a tile loop.
#[test]
fn a_loop_inside_tile_loops_is_compared_within_its_tile() {
    let inner = TILED_COPY
        .replace(" /* LOOP */", "")
        .replace("t3++)\n", "t3++) /* LOOP */\n");
    check_with_runs(&program(&inner), Verdict::Friendly, true);
}

/// Each tile reads the row the tile before it wrote: the tile loop carries a dependence,
/// shown with two iterations, and reversing the tiles changes the result.
#[test]
fn tiles_that_read_the_previous_tile_are_not_friendly() {
    let carried = "void kernel(int n) {\n\
      int t1, t3, t4;\n\
      for (t3 = 0; t3 < n; t3++) for (t4 = 0; t4 < n; t4++) B[t3][t4] = A[t3][t4];\n\
      for (t1 = 1; t1 <= floord(n - 1, 8); t1++) /* LOOP */\n\
        for (t3 = 8 * t1; t3 <= min(n - 1, 8 * t1 + 7); t3++)\n\
          for (t4 = 0; t4 < n; t4++)\n\
            B[t3][t4] = B[t3 - 8][t4] + 1;\n\
    }";
    let report = check_with_runs(&program(carried), Verdict::NotFriendly, false);
    assert!(has_code(&report, "WW101"), "{report:#?}");
}

/// The number of iterations of `for (k = LO; k <= HI; k++)`.
fn count(lo: i64, hi: i64) -> i64 {
    (hi - lo + 1).max(0)
}

/// The C macros' values, computed as C does (truncating division).
fn floord(n: i64, d: i64) -> i64 {
    if n < 0 {
        -((-n + d - 1) / d)
    } else {
        n / d
    }
}
fn ceild(n: i64, d: i64) -> i64 {
    if n < 0 {
        -((-n) / d)
    } else {
        (n + d - 1) / d
    }
}

/// The reported trip count of a loop from `ceild(lo, 4)` to `floord(hi, 4)` is the count of
/// iterations for every sign of `lo` and `hi`.
#[test]
fn floord_and_ceild_are_exact_for_negative_arguments() {
    let source = format!(
        "{MACROS}void kernel(int lo, int hi, double *y) {{\n\
           for (int k = ceild(lo, 4); k <= floord(hi, 4); k++) /* LOOP */\n\
             y[k + 8] = k;\n\
         }}\n"
    );
    let report = check(&source, Verdict::Friendly);
    let induction = report.induction.as_ref().expect("normalizable");
    let trip = parse_expr(&induction.trip_count).expect("the trip count parses");
    for lo in -13..=13 {
        for hi in -13..=13 {
            let expected = count(ceild(lo, 4), floord(hi, 4));
            if expected == 0 {
                // The report assumes the loop runs (its sections say so).
                continue;
            }
            let values = HashMap::from([
                (Var::new("lo"), BigRational::from_integer(lo.into())),
                (Var::new("hi"), BigRational::from_integer(hi.into())),
            ]);
            let got = trip.eval(&values).expect("the trip count evaluates");
            assert_eq!(
                got,
                BigRational::from_integer(expected.into()),
                "lo = {lo}, hi = {hi}: {}",
                induction.trip_count
            );
        }
    }
}

/// A loop inside a loop whose bound has two values no single expression states: the outer
/// loop has no range, but within one of its iterations the inner loop's iterations are
/// still compared (the outer variable is one value there).
#[test]
fn a_loop_inside_a_loop_without_a_range_is_compared_within_one_iteration() {
    let nest = "void kernel(int n) {\n\
      for (int t = 0; t < (n > 50 ? n : 2 * n / 3); t++)\n\
        for (int i = 1; i < n; i++) /* LOOP */\n\
          B[t][i] = A[t][i - 1] + A[t][i];\n\
    }";
    check_with_runs(&program(nest), Verdict::Friendly, true);
}
