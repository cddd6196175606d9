//! egg-based simplification and equality proofs on C idioms, min/max and integer division.

use symbolic::*;

fn t(s: &str) -> Term {
    parse_term(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn e(s: &str) -> Expr {
    parse_expr(s).unwrap_or_else(|err| panic!("{s}: {err}"))
}

#[test]
fn shifts_and_masks() {
    let env = parse_signs("x >= 0").unwrap();
    assert_eq!(
        simplify(&t("(x >> 2) << 2"), &env).unwrap(),
        e("4*floor_div(x, 4)")
    );
    assert_eq!(
        prove_equal(&t("((x >> 2) << 2) + (x & 3)"), &t("x"), &env),
        Some(true)
    );
    assert_eq!(prove_equal(&t("x & 7"), &t("x % 8"), &env), Some(true));
    // Without x >= 0, C's % differs from the mask for negative x.
    assert_eq!(
        prove_equal(&t("x & 7"), &t("x % 8"), &SignEnv::new()),
        Some(false)
    );
    assert_eq!(
        prove_equal(&t("x << 3"), &t("8*x"), &SignEnv::new()),
        Some(true)
    );
    assert_eq!(
        prove_equal(&t("(x >> 1) >> 2"), &t("x >> 3"), &SignEnv::new()),
        Some(true)
    );
    assert_eq!(
        prove_equal(&t("(x / 2) / 4"), &t("x / 8"), &SignEnv::new()),
        Some(true)
    );
}

#[test]
fn c_division_under_signs() {
    let env = parse_signs("i >= 0").unwrap();
    // C's (4*i + 1)/4 is i for i >= 0 (floor), but not for negative i.
    assert_eq!(simplify(&t("(4*i + 1) / 4"), &env).unwrap(), e("i"));
    assert_eq!(
        prove_equal(&t("(4*i + 1) / 4"), &t("i"), &SignEnv::new()),
        Some(false)
    );
    assert_eq!(simplify_expr(&e("(8*i + 3) % 8"), &env), e("3"));
}

#[test]
fn min_max_inside_arithmetic() {
    let env = parse_signs("n > 0").unwrap();
    // The normal form alone rejects min + max, but a dominated operand makes it simple.
    assert!(parse_expr("max(a, b) + min(n, 0)").is_err());
    assert_eq!(
        simplify(&t("max(a, b) + min(n, 0)"), &env).unwrap(),
        e("max(a, b)")
    );
    // n * max(a, b) needs n's sign.
    assert_eq!(
        simplify(&t("n * max(a, b)"), &env).unwrap(),
        e("max(n*a, n*b)")
    );
    assert_eq!(
        prove_equal(&t("min(a, max(a, b))"), &t("a"), &SignEnv::new()),
        Some(true)
    );
    assert_eq!(
        prove_equal(
            &t("max(a, b) + c"),
            &t("max(c + b, a + c)"),
            &SignEnv::new()
        ),
        Some(true)
    );
    assert_eq!(
        prove_equal(&t("max(x, 1) >> 1"), &t("max(x >> 1, 0)"), &SignEnv::new()),
        Some(true)
    );
    let r = simplify_report(&t("max(a, b) + min(n, 0)"), &env);
    assert!(r.iterations <= rewrite::ITER_LIMIT);
    assert!(!r.stop_reason.is_empty());
}

#[test]
fn undecided_and_unsupported_are_reported() {
    let env = SignEnv::new();
    assert_eq!(prove_equal(&t("a*b"), &t("b*a"), &env), Some(true));
    assert_eq!(prove_equal(&t("a"), &t("a + 1"), &env), Some(false));
    assert!(simplify(&t("max(a, b) * min(c, d)"), &env).is_err());
    assert!(simplify(&t("x & y"), &env).is_err());
}
