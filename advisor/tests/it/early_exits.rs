//! Inner loops without a symbolic range (a `break` or a `goto` out of them, no induction
//! variable, several initial values) inside a loop that has one: the outer
//! loop's accesses are still compared; what depends on the inner loop's variables is a
//! value that changes from iteration to iteration. Before, one such inner loop made the
//! whole nest "cannot be compared statically" (phono3py's `get_BZ_triplets_at_q_type1`,
//! whose `goto found` lands at the end of the outer body).
//!
//! Each verdict is checked against compiled runs: a friendly loop prints the same with its
//! iterations reversed; a loop whose inner search writes where it stopped does not.

use crate::common;

use advisor::model::Verdict;
use common::*;

/// A linear search per query: the inner loop breaks when it finds the value.
const SEARCH_BREAK: &str = r#"
#include <stdio.h>
static void lookup(const int *keys, int n, const int *queries, int m, int *where) {
    for (int i = 0; i < m; i++) { /* LOOP */
        int k;
        for (k = 0; k < n; k++)
            if (keys[k] == queries[i])
                break;
        where[i] = k < n ? k : -1;
    }
}
int main(void) {
    int keys[50], queries[40], where[40];
    for (int k = 0; k < 50; k++) keys[k] = (k * 37) % 101;
    for (int i = 0; i < 40; i++) queries[i] = (i * 11) % 101;
    lookup(keys, 50, queries, 40, where);
    for (int i = 0; i < 40; i++) printf("%d ", where[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_search_that_breaks_out_of_the_inner_loop_leaves_the_outer_loop_friendly() {
    let report = check(SEARCH_BREAK, Verdict::Friendly);
    // `keys` is read where the search stopped: no section from its subscripts, said so;
    // the only call passes a 50-int array, so the section is that whole object.
    let keys = report.parameters.iter().find(|p| p.name == "keys").unwrap();
    assert_eq!(
        keys.bytes.as_ref().map(|b| b.hi.as_str()),
        Some("200"),
        "{keys:#?}"
    );
    assert!(
        keys.notes
            .iter()
            .any(|n| n.starts_with("whole object") && n.contains("the offset depends on `k`")),
        "{keys:#?}"
    );
    // `where` is written at `[i]`: its section is still exact.
    let wherep = report
        .parameters
        .iter()
        .find(|p| p.name == "where")
        .unwrap();
    let bytes = wherep.bytes.as_ref().expect("a section for `where`");
    assert_eq!((bytes.lo.as_str(), bytes.hi.as_str()), ("0", "4*m"));
    same_in_any_order(SEARCH_BREAK);
}

/// The shape of phono3py's `get_BZ_triplets_at_q_type1`: nested searches leave through
/// `goto found`, a label at the end of the outer loop's body.
const GOTO_END_OF_BODY: &str = r#"
#include <stdio.h>
static void first_pair(const int *a, int n, const int *target, int m, int (*pair)[2]) {
    int i, p, q;
    for (i = 0; i < m; i++) { /* LOOP */
        pair[i][0] = -1;
        pair[i][1] = -1;
        for (p = 0; p < n; p++) {
            for (q = p + 1; q < n; q++) {
                if (a[p] + a[q] == target[i]) {
                    pair[i][0] = p;
                    pair[i][1] = q;
                    goto found;
                }
            }
        }
    found:;
    }
}
int main(void) {
    int a[30], target[25], pair[25][2];
    for (int k = 0; k < 30; k++) a[k] = (k * 7) % 23;
    for (int i = 0; i < 25; i++) target[i] = i + 3;
    first_pair(a, 30, target, 25, pair);
    for (int i = 0; i < 25; i++) printf("%d,%d ", pair[i][0], pair[i][1]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_goto_to_the_end_of_the_outer_body_leaves_the_outer_loop_friendly() {
    check(GOTO_END_OF_BODY, Verdict::Friendly);
    same_in_any_order(GOTO_END_OF_BODY);
}

/// An inner `while` with no induction variable (it walks a chain).
const WHILE_CHAIN: &str = r#"
#include <stdio.h>
static void depth(const int *next, int n, int *out) {
    for (int i = 0; i < n; i++) { /* LOOP */
        int d = 0, k = i;
        while (next[k] >= 0) {
            k = next[k];
            d++;
        }
        out[i] = d;
    }
}
int main(void) {
    int next[60], out[60];
    for (int k = 0; k < 60; k++) next[k] = k % 7 == 0 ? -1 : k - 1;
    depth(next, 60, out);
    for (int i = 0; i < 60; i++) printf("%d ", out[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn an_inner_while_without_induction_variable_leaves_the_outer_loop_friendly() {
    check(WHILE_CHAIN, Verdict::Friendly);
    same_in_any_order(WHILE_CHAIN);
}

/// Where the search stops is written: iterations that stop at the same place write the
/// same element, a real output dependence.
const WRITES_WHERE_IT_STOPPED: &str = r#"
#include <stdio.h>
static void mark(const int *keys, int n, const int *queries, int m, int *owner) {
    for (int i = 0; i < m; i++) { /* LOOP */
        int k;
        for (k = 0; k < n - 1; k++)
            if (keys[k] >= queries[i])
                break;
        owner[k] = i;
    }
}
int main(void) {
    int keys[20], queries[30], owner[20];
    for (int k = 0; k < 20; k++) { keys[k] = 5 * k; owner[k] = -1; }
    for (int i = 0; i < 30; i++) queries[i] = (i * 13) % 90;
    mark(keys, 20, queries, 30, owner);
    for (int k = 0; k < 20; k++) printf("%d ", owner[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_write_where_the_inner_search_stopped_is_not_called_friendly() {
    let report = marked_report(WRITES_WHERE_IT_STOPPED);
    assert_ne!(report.verdict, Verdict::Friendly, "{report:#?}");
    // The pair is named, not the whole nest given up on.
    assert!(
        report
            .reasons
            .iter()
            .any(|r| r.message.contains("owner[k]") && !r.message.contains("compared statically")),
        "{:#?}",
        report.reasons
    );
    differs_in_reverse(WRITES_WHERE_IT_STOPPED);
}

/// A `break` out of the outer loop itself is still an exit of that loop.
const BREAK_OUT_OF_OUTER: &str = r#"
#include <stdio.h>
static int fill_until(int *a, int n, int stop) {
    int i;
    for (i = 0; i < n; i++) { /* LOOP */
        if (a[i] == stop)
            break;
        a[i] = 2 * a[i] + 1;
    }
    return i;
}
int main(void) {
    int a[40];
    for (int k = 0; k < 40; k++) a[k] = k % 9;
    int at = fill_until(a, 40, 7);
    printf("%d", at);
    for (int k = 0; k < 40; k++) printf(" %d", a[k]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_break_out_of_the_outer_loop_still_stops_it_being_friendly() {
    let report = check(BREAK_OUT_OF_OUTER, Verdict::NotFriendly);
    assert!(has_code(&report, "WW107"), "{:#?}", report.reasons);
}

/// spglib's `get_dense_ir_reciprocal_mesh_distortion` in small: a temporary declared
/// outside the loop, filled by a normal inner loop and read by one that breaks. It is
/// private to each iteration in truth; the classifier cannot follow the early exit, so the
/// conflict on it is undecided, never a claimed dependence.
const TEMPORARY_READ_BY_A_SEARCH: &str = r#"
#include <stdio.h>
static void flag(const int *v, int n, int *out) {
    int tmp[3], bad;
    for (int i = 0; i < n; i++) { /* LOOP */
        for (int k = 0; k < 3; k++)
            tmp[k] = v[i] + k;
        bad = 0;
        for (int k = 0; k < 3; k++) {
            if (tmp[k] % 5 == 0) {
                bad = 1;
                break;
            }
        }
        out[i] = bad;
    }
}
int main(void) {
    int v[40], out[40];
    for (int i = 0; i < 40; i++) v[i] = (i * 7) % 23;
    flag(v, 40, out);
    for (int i = 0; i < 40; i++) printf("%d", out[i]);
    printf("\n");
    return 0;
}
"#;

#[test]
fn a_temporary_read_by_an_early_exit_loop_is_not_a_claimed_dependence() {
    let report = marked_report(TEMPORARY_READ_BY_A_SEARCH);
    assert_ne!(
        report.verdict,
        Verdict::NotFriendly,
        "{:#?}",
        report.reasons
    );
    assert!(!has_code(&report, "WW101"), "{:#?}", report.reasons);
    same_in_any_order(TEMPORARY_READ_BY_A_SEARCH);
}
