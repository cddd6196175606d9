//! The thesis' worked examples (§6.1, §7.1, §7.2) and integer-semantics cases as unit tests.

use num_bigint::BigInt;
use num_rational::BigRational;
use symbolic::*;

fn e(s: &str) -> Expr {
    parse_expr(s).unwrap_or_else(|err| panic!("{s}: {err}"))
}

fn v(s: &str) -> Var {
    Var::new(s)
}

fn q(n: i64) -> BigRational {
    BigRational::from_integer(BigInt::from(n))
}

#[test]
fn get_max_with_positive_n_stays_simple() {
    // §7.1: n > 0 known, x = n + 1: getMax(x, 1) = x, getMax(a, getMax(x, 1)) = max(a, x).
    let env = parse_signs("n > 0").unwrap();
    let x = e("n + 1");
    let inner = get_max(&x, &e("1"), &env).unwrap();
    assert_eq!(inner, x);
    let outer = get_max(&e("a"), &inner, &env).unwrap();
    assert_eq!(outer, e("max(a, n + 1)"));
    // Operands are sorted by the normal-form order (constant-led polynomials first).
    assert_eq!(outer.to_c(), "max(n + 1, a)");
}

#[test]
fn get_max_with_unknown_n_is_flat() {
    let env = SignEnv::new();
    let z = e("n + 1");
    let inner = get_max(&z, &e("1"), &env).unwrap();
    assert!(matches!(inner, Expr::Max(ref ps) if ps.len() == 2));
    let outer = get_max(&e("a"), &inner, &env).unwrap();
    match &outer {
        Expr::Max(ps) => assert_eq!(ps.len(), 3),
        other => panic!("expected a flat max, got {other}"),
    }
}

#[test]
fn get_max_patterns_of_algorithm_4() {
    let env = SignEnv::new();
    let (a, b) = (e("a"), e("b"));
    let mn = get_min(&a, &b, &env).unwrap();
    let mx = get_max(&a, &b, &env).unwrap();
    assert_eq!(get_max(&a, &mn, &env).unwrap(), a);
    assert_eq!(get_max(&a, &mx, &env).unwrap(), mx);
    assert_eq!(get_max(&mn, &mx, &env).unwrap(), mx);
    assert_eq!(get_min(&a, &mx, &env).unwrap(), a);
    assert!(get_max(&mn, &e("c"), &env).is_err());
}

#[test]
fn sign_of_a_minus_one_by_substitution() {
    let env = parse_signs("a > 0").unwrap();
    let f = e("a - 1");
    assert_eq!(sign_by_rules(&f, &env), SignSet::TOP);
    assert_eq!(sign_by_substitution(&f, &env), SignSet::NON_NEG);
    assert_eq!(sign_of(&f, &env), SignSet::NON_NEG);
    // Needs monotonicity, not just bounds: a*a - 3*a + 2 = (a-1)(a-2) is not handled, but a*b - 1 is.
    let env2 = parse_signs("a > 0, b > 0").unwrap();
    assert_eq!(sign_by_substitution(&e("a*b - 1"), &env2), SignSet::NON_NEG);
}

#[test]
fn compare_basics() {
    let env = parse_signs("n > 0, i >= 0").unwrap();
    assert_eq!(compare(&e("n"), &e("0"), &env), Cmp::Greater);
    assert_eq!(compare(&e("n - 1"), &e("0"), &env), Cmp::GreaterEq);
    assert_eq!(compare(&e("i"), &e("i + n"), &env), Cmp::Less);
    assert_eq!(compare(&e("a"), &e("b"), &env), Cmp::Unknown);
    assert_eq!(compare(&e("2*a + b"), &e("b + a + a"), &env), Cmp::Equal);
}

#[test]
fn linear_system_of_table_7_1() {
    let eqs = [
        parse_equation("x + y = 3").unwrap(),
        parse_equation("x - y = 1").unwrap(),
    ];
    let s = solve(
        &eqs,
        &[v("x"), v("y")],
        Semantics::Rational,
        &SignEnv::new(),
    );
    assert!(s.is_unique(), "{s}");
    assert_eq!(s.value(&v("x")), Some(&e("2")));
    assert_eq!(s.value(&v("y")), Some(&e("1")));
    assert!(s.alternatives[0].verified);
}

#[test]
fn instantiation_system_of_6_1() {
    let eqs = [
        parse_equation("tmp = 100").unwrap(),
        parse_equation("tmp = (2*n)/4").unwrap(),
    ];
    let unknowns = [v("tmp"), v("n")];
    let rat = solve(&eqs, &unknowns, Semantics::Rational, &SignEnv::new());
    assert_eq!(rat.semantics, Semantics::Rational);
    assert!(rat.is_unique(), "{rat}");
    assert_eq!(rat.value(&v("n")), Some(&e("200")));
    let int = solve(&eqs, &unknowns, Semantics::Integer, &SignEnv::new());
    assert_eq!(int.semantics, Semantics::Integer);
    assert_eq!(int.alternatives.len(), 2, "{int}");
    assert_eq!(int.constant_values(&v("n")), vec![q(200), q(201)]);
    assert!(int.alternatives.iter().all(|a| a.verified));
    assert_eq!(int.constant_values(&v("tmp")), vec![q(100)]);
}

#[test]
fn c_division_equation_with_offset() {
    let eqs = [parse_equation("100 = (2*n + 3)/4").unwrap()];
    let s = solve(&eqs, &[v("n")], Semantics::Integer, &SignEnv::new());
    assert_eq!(s.constant_values(&v("n")), vec![q(199), q(200)], "{s}");
}

#[test]
fn integer_systems_without_solution_or_with_many() {
    let s = solve(
        &[parse_equation("2*n = 5").unwrap()],
        &[v("n")],
        Semantics::Integer,
        &SignEnv::new(),
    );
    assert!(s.has_no_solution(), "{s}");
    let s = solve(
        &[parse_equation("n / 100 = 3").unwrap()],
        &[v("n")],
        Semantics::Integer,
        &SignEnv::new(),
    );
    assert_eq!(s.ranges.len(), 1, "{s}");
    assert_eq!(s.ranges[0].low, BigInt::from(300));
    assert_eq!(s.ranges[0].high, BigInt::from(399));
    let s = solve(
        &[parse_equation("n / 4 = -2").unwrap()],
        &[v("n")],
        Semantics::Integer,
        &SignEnv::new(),
    );
    assert_eq!(
        s.constant_values(&v("n")),
        (-11..=-8).map(q).collect::<Vec<_>>(),
        "{s}"
    );
}

#[test]
fn pseudo_nonlinear_system() {
    // Algorithm 7: after x = 2, the equation x*y = 6 becomes linear.
    let eqs = [
        parse_equation("x = 2").unwrap(),
        parse_equation("x*y = 6").unwrap(),
    ];
    let s = solve(
        &eqs,
        &[v("x"), v("y")],
        Semantics::Rational,
        &SignEnv::new(),
    );
    assert_eq!(s.value(&v("y")), Some(&e("3")), "{s}");
    // Parameters stay symbolic.
    let s = solve(
        &[parse_equation("x + m = 3").unwrap()],
        &[v("x")],
        Semantics::Rational,
        &SignEnv::new(),
    );
    assert_eq!(s.value(&v("x")), Some(&e("3 - m")));
}

#[test]
fn sign_equations() {
    let env = parse_signs("n > 0").unwrap();
    let out = solve_signs(&[parse_equation("k = n + 1").unwrap()], &env);
    assert_eq!(out.get(&v("k")), SignSet::POS);
}

#[test]
fn integer_division_atoms() {
    // a/2 + a/2 is not a for odd a: C division stays an atom.
    let half = e("a/2");
    let sum = half.checked_add(&half).unwrap();
    assert_ne!(sum, e("a"));
    assert_eq!(sum, e("2*(a/2)"));
    // Over Q it is a, and the result says it is not integer-exact.
    let qhalf = e("a").div_const(&q(2)).unwrap();
    let qsum = qhalf.checked_add(&qhalf).unwrap();
    assert_eq!(qsum, e("a"));
    assert!(!qhalf.is_exact_integer());
    assert!(half.is_exact_integer());
    // A division exact for every integer value is the rational polynomial: the triangular
    // offset `i*(2*n - i - 1)/2` (the product of an odd sum's two parts is even).
    let triangle = e("i*(2*n - i - 1)/2");
    assert_eq!(
        triangle,
        e("n*i")
            .checked_sub(&e("i*i + i").div_const(&q(2)).unwrap())
            .unwrap()
    );
    assert!(triangle.is_exact_integer());
    assert_eq!(triangle.to_c(), "(-i + 2*i*n - i*i) / 2");
    assert_eq!(e("(a*a + a)/2"), e("a*(a + 1)/2"));
    assert_eq!(e("a*(a + 1)*(a + 2)/6").to_c(), "(2*a + 3*a*a + a*a*a) / 6");
    // Not exact for odd `a`: stays C's truncation.
    assert_eq!(e("(a*a + 1)/2").to_c(), "(a*a + 1) / 2");
    assert!(e("(a*a + 1)/2")
        .as_poly()
        .is_some_and(|p| p.as_exact_quotient().is_none()));
    // (k*e)/k = e, common factors cancel.
    assert_eq!(e("(4*n + 8)/4"), e("n + 2"));
    assert_eq!(e("(2*n)/4"), e("n/2"));
    // Floor division absorbs multiples: floor((x + 4*m)/4) = floor(x/4) + m.
    assert_eq!(e("floor_div(x + 4*m, 4)"), e("floor_div(x, 4) + m"));
    assert_eq!(e("floor_mod(x + 4*m + 9, 4)"), e("floor_mod(x + 1, 4)"));
    // x = 4*floor(x/4) + x mod 4, and C's x = (x/4)*4 + x%4.
    assert_eq!(e("(x >> 2) << 2").checked_add(&e("x & 3")).unwrap(), e("x"));
    assert_eq!(e("(x/4)*4 + x%4"), e("x"));
    // 0 <= x mod k.
    assert_eq!(sign_of(&e("x & 7"), &SignEnv::new()), SignSet::NON_NEG);
    assert_eq!(e("x << 3"), e("8*x"));
    assert_eq!(e("x >> 3"), e("floor_div(x, 8)"));
}

#[test]
fn monotonicity_examples() {
    let env = parse_signs("n > 0").unwrap();
    let f = e("8800*i + 8*j");
    assert_eq!(monotonicity(&f, &v("i"), &env), Monotonicity::Increasing);
    assert_eq!(
        monotonicity(&e("n - i"), &v("i"), &env),
        Monotonicity::Decreasing
    );
    assert_eq!(
        monotonicity(&e("n + 3"), &v("i"), &env),
        Monotonicity::Constant
    );
    assert_eq!(
        monotonicity(&e("i*n"), &v("i"), &env),
        Monotonicity::Increasing
    );
    assert_eq!(
        monotonicity(&e("i*m"), &v("i"), &env),
        Monotonicity::NonMonotonic
    );
    assert_eq!(
        monotonicity(&e("(i + n)/4"), &v("i"), &env),
        Monotonicity::Increasing
    );
    let (m, a) = monotonicity_with_assumptions(&e("i*nk"), &v("i"), &SignEnv::new());
    assert_eq!(m, Monotonicity::Increasing);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].to_string(), "nk > 0");
    let set = [v("i"), v("j")];
    assert_eq!(
        monotonicity_by_set(&f, &set, &env),
        Monotonicity::Increasing
    );
    assert_eq!(
        monotonicity_by_set(&e("i - j"), &set, &env),
        Monotonicity::NonMonotonic
    );
}

#[test]
fn printing_in_c_and_math() {
    assert_eq!(e("8*j + 8800*i").to_c(), "8800*i + 8*j");
    assert_eq!(e("(2*n + 3) / 4").to_c(), "(2*n + 3) / 4");
    assert_eq!(e("min(b, a)").to_c(), "min(a, b)");
    let r = e("a")
        .div_const(&BigRational::new(2.into(), 3.into()))
        .unwrap();
    assert_eq!(r.to_c(), "rat(3, 2)*a");
    assert_eq!(r.to_string(), "3/2*a");
    assert_eq!(parse_expr(&r.to_c()).unwrap(), r);
}

#[test]
fn parse_errors_have_positions() {
    let err = parse_term("a + * b").unwrap_err();
    assert_eq!(err.pos, 4);
    let err = parse_term("a + (b").unwrap_err();
    assert_eq!(err.pos, 6);
    assert!(parse_expr("a / 0").is_err());
    assert!(parse_expr("a / b").is_err());
    assert!(parse_expr("a << 100000").is_err());
    assert!(parse_term(&"(".repeat(100_000)).is_err());
    let vals = parse_values("n=200, m = -3").unwrap();
    assert_eq!(vals[&v("m")], q(-3));
    assert_eq!(e("n*m + 1").eval(&vals).unwrap(), q(-599));
}
