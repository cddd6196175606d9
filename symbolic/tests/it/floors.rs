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
