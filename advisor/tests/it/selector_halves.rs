//! Two halves of one block chosen by a remainder (`p = t % 2` around the loop, writing
//! `v + p*n` from `v + (1 - p)*n`: ping-pong buffers in one allocation). The remainder
//! takes a few values, the same in both accesses of one instance of the loop, so the pair
//! is compared once per value; the loop is independent only when every value keeps the
//! accesses apart. Checked against compiled runs (forward, reversed, shuffled).

use crate::common::*;
use advisor::model::Verdict;

/// A sweep over `n - 2` points from one half of `v` into the other; `src` is the other
/// half's start written as `source` (in terms of `p` and `n`).
fn program(source: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #define N 24\n\
         static void sweep(double *v, int n, int T) {{\n\
           for (int t = 0; t < T; t++) {{\n\
             int p = t % 2;\n\
             double *dst = v + p * n, *src = v + {source};\n\
             for (int i = 1; i < n - 1; i++) /* LOOP */\n\
               dst[i] = 0.5 * (src[i - 1] + src[i + 1]) + t;\n\
           }}\n\
         }}\n\
         int main(void) {{\n\
           double v[2 * N];\n\
           for (int k = 0; k < 2 * N; k++) v[k] = k % 5;\n\
           sweep(v, N, 5);\n\
           for (int k = 0; k < 2 * N; k++) printf(\"%g \", v[k]);\n\
           printf(\"\\n\");\n\
           return 0;\n\
         }}\n"
    )
}

fn check(source: &str, expected: Verdict, independent: bool) {
    check_with_runs(&program(source), expected, independent);
}

#[test]
fn the_other_half_of_a_block_is_apart_for_each_value_of_the_selector() {
    check("(1 - p) * n", Verdict::Friendly, true);
}

/// With `p = 0` the source starts halfway into the half being written: a dependence in one
/// of the selector's cases keeps the loop from being friendly.
#[test]
fn a_source_that_overlaps_for_one_value_of_the_selector_is_not_friendly() {
    check("(1 - p) * (n / 2)", Verdict::NotFriendly, false);
}
