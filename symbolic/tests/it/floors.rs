//! C divisions of non-negative dividends rewritten as floors: equal values, and multiples of
//! the divisor leave the atom when variables are substituted.

use num_rational::BigRational;
use std::collections::HashMap;
use symbolic::{parse_expr, Expr, SignEnv, SignSet, Var};

fn nonneg(vars: &[&str]) -> SignEnv {
    let mut env = SignEnv::new();
    for v in vars {
        env.set(Var::new(v), SignSet::NON_NEG);
    }
    env
}

fn check(input: &str, env: &SignEnv, substitute: &[(&str, &str)], expected: &str) {
    let e = parse_expr(input).unwrap().truncs_to_floors(env).unwrap();
    let map: HashMap<Var, Expr> = substitute
        .iter()
        .map(|(v, by)| (Var::new(v), parse_expr(by).unwrap()))
        .collect();
    assert_eq!(e.substitute(&map).unwrap().to_string(), expected, "{input}");
}

#[test]
fn multiples_of_the_divisor_leave_the_atom() {
    let env = nonneg(&["i", "w"]);
    check("4*(i / 4)", &env, &[("i", "32*w + 5")], "32*w + 4");
    check("i % 8", &env, &[("i", "32*w + 13")], "5");
}

#[test]
fn dividends_of_unknown_sign_stay_truncations() {
    let env = SignEnv::new();
    let e = parse_expr("i / 4").unwrap();
    assert_eq!(e.truncs_to_floors(&env).unwrap(), e);
}

#[test]
fn values_are_unchanged() {
    let env = nonneg(&["i", "j"]);
    for text in [
        "(i + 3) / 4 + (j % 5) * 2",
        "((2*i + j) / 3) % 7",
        "(i - j) / 2",
    ] {
        let before = parse_expr(text).unwrap();
        let after = before.truncs_to_floors(&env).unwrap();
        for i in 0..12i64 {
            for j in 0..12i64 {
                let ctx: HashMap<Var, BigRational> = [("i", i), ("j", j)]
                    .iter()
                    .map(|(n, v)| (Var::new(n), BigRational::from_integer((*v).into())))
                    .collect();
                assert_eq!(
                    before.eval(&ctx),
                    after.eval(&ctx),
                    "{text} at i={i}, j={j}"
                );
            }
        }
    }
}

/// The inverse: floors of dividends known `>= 0` print as C's `/` and `%`, with the same
/// values; a dividend of unknown sign keeps its floor.
fn check_c(input: &str, env: &SignEnv, expected: &str) {
    let before = parse_expr(input).unwrap();
    let after = before.floors_to_truncs(env).unwrap();
    assert_eq!(after.to_c(), expected, "{input}");
    assert_eq!(
        parse_expr(&after.to_c()).unwrap(),
        after,
        "{input} reads back"
    );
    for i in 0..40i64 {
        for j in 0..5i64 {
            let ctx: HashMap<Var, BigRational> = [("n", i), ("m", j)]
                .iter()
                .map(|(name, v)| (Var::new(name), BigRational::from_integer((*v).into())))
                .collect();
            assert_eq!(
                before.eval(&ctx),
                after.eval(&ctx),
                "{input} at n={i}, m={j}"
            );
        }
    }
}

#[test]
fn floors_of_non_negative_dividends_print_as_c() {
    let env = nonneg(&["n", "m"]);
    check_c("floor_div(n + 31, 32)", &env, "(n + 31) / 32");
    check_c(
        "min(floor_div(93*n + 1, 128) + 1, 32)",
        &env,
        "min(((93*n + 1) / 128) + 1, 32)",
    );
    check_c("floor_mod(3*n + m, 8)", &env, "(m + 3*n) % 8");
    check_c(
        "floor_div(floor_div(n, 3) + m, 2)",
        &env,
        "(m + (n / 3)) / 2",
    );
    let unknown = SignEnv::new();
    check_c("floor_div(n, 2)", &unknown, "floor_div(n, 2)");
    // The floor splits `m` out of `n - m` first (`-m + floor((n + 3*m)/4)`), and then the
    // dividend is known `>= 0`.
    check_c("floor_div(n - m, 4)", &env, "-m + ((3*m + n) / 4)");
    check_c(
        "floor_div(n - m, 4)",
        &nonneg(&["n"]),
        "-m + floor_div(3*m + n, 4)",
    );
}
