//! Names callers use for symbols: plain identifiers, dotted and arrow member paths.

use symbolic::parse::parse_expr;

fn check(input: &str, expected_vars: &[&str], printed: &str) {
    let e = parse_expr(input).expect("parses");
    let vars: Vec<String> = e.vars().iter().map(|v| v.name().to_string()).collect();
    assert_eq!(vars, expected_vars, "vars of {input}");
    assert_eq!(e.to_string(), printed, "print of {input}");
}

#[test]
fn arrow_member_paths_are_one_symbol() {
    check(
        "4*filter->height*filter->width",
        &["filter->height", "filter->width"],
        "4*filter->height*filter->width",
    );
    check("c->n - 1", &["c->n"], "c->n - 1");
    check("s.len + 2", &["s.len"], "s.len + 2");
}

#[test]
fn a_minus_followed_by_a_comparison_is_not_a_name() {
    // `a->5` is not a member path: the lexer must not glue it.
    assert!(parse_expr("a->5").is_err());
}

/// A chain of binary operators is a tree as deep as it is long: past
/// [`symbolic::parse::MAX_OPERATORS`] it is a parse error, not a stack overflow in whatever
/// recurses over it next (a report whose section is a 200,000-term sum would abort
/// `instantiate`). Up to the limit it parses, normalises and evaluates, on a test thread's
/// small stack too.
#[test]
fn huge_sums_are_refused_with_an_error_not_a_crash() {
    let chain = |n: usize| vec!["n"; n].join(" + ");
    let limit = symbolic::parse::MAX_OPERATORS;
    // `chain(k)` has `k - 1` operators.
    let e = symbolic::parse::parse_expr(&chain(limit + 2)).unwrap_err();
    assert!(e.to_string().contains("expression too large"), "{e}");
    let e = symbolic::parse::parse_expr(&chain(200_000)).unwrap_err();
    assert!(e.to_string().contains("expression too large"), "{e}");
    let ok = symbolic::parse::parse_expr(&chain(limit + 1)).unwrap();
    let expected = format!("{}*n", limit + 1);
    assert_eq!(ok, symbolic::parse::parse_expr(&expected).unwrap());
}
