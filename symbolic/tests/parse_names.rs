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
