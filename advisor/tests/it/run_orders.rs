//! The orders the compiled-run checks execute a marked loop in: reversed and shuffled are
//! permutations of its iterations, different from the forward order and from each other,
//! for `<` and `<=` headers and for a variable declared outside the header.

use crate::common::*;

/// The values the marked loop's variable takes, in the order a run prints them.
fn order(source: &str) -> Vec<i64> {
    run(source)
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect()
}

fn check(header: &str, expected: &[i64]) {
    let source = format!(
        "#include <stdio.h>\n\
         int main(void) {{\n\
           int lo = 3, hi = 13, i = 0;\n\
           (void)i;\n\
           for ({header}) /* LOOP */\n\
             printf(\"%d \", i);\n\
           return 0;\n\
         }}\n"
    );
    let forward = order(&source);
    assert_eq!(forward, expected);
    let backward = order(&reversed(&source));
    let shuffled = order(&shuffled(&source));
    let mut reversed_forward = forward.clone();
    reversed_forward.reverse();
    assert_eq!(backward, reversed_forward);
    assert_ne!(shuffled, forward);
    assert_ne!(shuffled, backward);
    let mut sorted = shuffled.clone();
    sorted.sort();
    assert_eq!(sorted, forward, "the shuffled order is a permutation");
}

#[test]
fn a_declared_variable_below_its_bound() {
    check("int i = lo; i < hi; i++", &(3..13).collect::<Vec<_>>());
}

#[test]
fn a_variable_declared_before_up_to_its_last_value() {
    check("i = lo; i <= hi; i++", &(3..=13).collect::<Vec<_>>());
}
