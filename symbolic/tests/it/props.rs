//! Property tests: the normal form agrees with direct C evaluation, sign/compare/monotonicity
//! verdicts are never contradicted by samples, solver answers satisfy their equations, and
//! printing round-trips through the parser.

use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;
use std::collections::HashMap;
use symbolic::*;

const VARS: [&str; 4] = ["a", "b", "c", "d"];
const SIGNS: [SignSet; 6] = [
    SignSet::NEG,
    SignSet::ZERO,
    SignSet::POS,
    SignSet::NON_NEG,
    SignSet::NON_POS,
    SignSet::TOP,
];

fn leaf() -> impl Strategy<Value = Term> {
    prop_oneof![
        (0..VARS.len()).prop_map(|i| Term::var(VARS[i])),
        (-5i64..=5).prop_map(Term::num),
    ]
}

fn term() -> impl Strategy<Value = Term> {
    leaf().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Add, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Sub, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Mul, a, b)),
            (inner.clone(), 1i64..=8).prop_map(|(a, k)| Term::bin(BinOp::Div, a, Term::num(k))),
            (inner.clone(), 1i64..=8).prop_map(|(a, k)| Term::bin(BinOp::Rem, a, Term::num(k))),
            (inner.clone(), 0i64..=3).prop_map(|(a, k)| Term::bin(BinOp::Shl, a, Term::num(k))),
            (inner.clone(), 0i64..=3).prop_map(|(a, k)| Term::bin(BinOp::Shr, a, Term::num(k))),
            (inner.clone(), 0u32..=3, any::<bool>()).prop_map(|(a, k, neg)| {
                let m = if neg { -(1i64 << k) } else { (1i64 << k) - 1 };
                Term::bin(BinOp::BitAnd, a, Term::num(m))
            }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Min(vec![a, b])),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Max(vec![a, b])),
            inner.prop_map(|a| Term::Neg(Box::new(a))),
        ]
    })
}

fn env_strategy() -> impl Strategy<Value = SignEnv> {
    proptest::collection::vec(0..SIGNS.len(), VARS.len()).prop_map(|idx| {
        let mut env = SignEnv::new();
        for (i, s) in idx.into_iter().enumerate() {
            env.set(Var::new(VARS[i]), SIGNS[s]);
        }
        env
    })
}

/// A value with the given sign, chosen from `seed`.
fn value_in(s: SignSet, seed: u64) -> i64 {
    let mut opts = Vec::new();
    if s.has_neg() {
        opts.extend([-1, -2, -3, -7, -12]);
    }
    if s.has_zero() {
        opts.push(0);
    }
    if s.has_pos() {
        opts.extend([1, 2, 3, 7, 12]);
    }
    opts[(seed % opts.len() as u64) as usize]
}

fn ctx(env: &SignEnv, seeds: &[u64]) -> HashMap<Var, BigRational> {
    VARS.iter()
        .zip(seeds)
        .map(|(n, s)| {
            let v = Var::new(n);
            let x = value_in(env.get(&v), *s);
            (v, BigRational::from_integer(BigInt::from(x)))
        })
        .collect()
}

fn seeds() -> impl Strategy<Value = Vec<Vec<u64>>> {
    proptest::collection::vec(proptest::collection::vec(any::<u64>(), VARS.len()), 6)
}

fn holds(c: Cmp, x: &BigRational, y: &BigRational) -> bool {
    match c {
        Cmp::Less => x < y,
        Cmp::LessEq => x <= y,
        Cmp::Equal => x == y,
        Cmp::GreaterEq => x >= y,
        Cmp::Greater => x > y,
        Cmp::Unknown => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn normal_form_evaluates_like_c(t in term(), env in env_strategy(), ss in seeds()) {
        for lower_env in [SignEnv::new(), env.clone()] {
            let Ok(e) = t.lower(&lower_env) else { continue };
            prop_assert!(e.is_exact_integer());
            for s in &ss {
                let c = ctx(&env, s);
                let direct = t.eval_c(&c).unwrap();
                prop_assert_eq!(e.eval(&c).unwrap(), direct, "{} -> {}", t, e);
            }
        }
    }

    #[test]
    fn differences_evaluate_as_differences(t1 in term(), t2 in term(), t3 in term(), env in env_strategy(), ss in seeds()) {
        let (Ok(e1), Ok(e2), Ok(e3)) = (t1.lower(&env), t2.lower(&env), t3.lower(&env)) else { return Ok(()) };
        // A minimum and the same minimum shifted by `e3` (a polynomial) differ by `e3`.
        let shifted = e3.as_poly().is_some().then(|| {
            let m = get_min(&e1, &e2, &env).ok()?;
            let s = get_min(&e1.checked_add(&e3).ok()?, &e2.checked_add(&e3).ok()?, &env).ok()?;
            Some((s, m))
        }).flatten();
        let mut pairs = vec![(e1.clone(), e2.clone())];
        if let Some((s, m)) = shifted {
            let d = s.checked_sub(&m);
            prop_assert!(d.is_ok(), "{} - {} is not representable", s, m);
            pairs.push((s, m));
        }
        for (a, b) in pairs {
            let Ok(d) = a.checked_sub(&b) else { continue };
            for sd in &ss {
                let x = ctx(&env, sd);
                let want = a.eval(&x).unwrap() - b.eval(&x).unwrap();
                prop_assert_eq!(d.eval(&x).unwrap(), want, "{} - {} = {}", a, b, d);
            }
        }
    }

    #[test]
    fn signs_and_comparisons_hold(t1 in term(), t2 in term(), env in env_strategy(), ss in seeds()) {
        let (Ok(e1), Ok(e2)) = (t1.lower(&env), t2.lower(&env)) else { return Ok(()) };
        let s = sign_of(&e1, &env);
        let c = compare(&e1, &e2, &env);
        for sd in &ss {
            let x = ctx(&env, sd);
            let (v1, v2) = (e1.eval(&x).unwrap(), e2.eval(&x).unwrap());
            let actual = SignSet::of_rational(&v1);
            prop_assert!(actual.is_subset(s), "sign({}) = {} but value {}", e1, s, v1);
            prop_assert!(holds(c, &v1, &v2), "{} {:?} {} but {} vs {}", e1, c, e2, v1, v2);
        }
        if let Ok(m) = get_max(&e1, &e2, &env) {
            for sd in &ss {
                let x = ctx(&env, sd);
                let want = e1.eval(&x).unwrap().max(e2.eval(&x).unwrap());
                prop_assert_eq!(m.eval(&x).unwrap(), want);
            }
        }
        if let Ok(m) = get_min(&e1, &e2, &env) {
            for sd in &ss {
                let x = ctx(&env, sd);
                let want = e1.eval(&x).unwrap().min(e2.eval(&x).unwrap());
                prop_assert_eq!(m.eval(&x).unwrap(), want);
            }
        }
    }

    #[test]
    fn monotonicity_holds_on_pairs(t in term(), env in env_strategy(), ss in seeds(), deltas in proptest::collection::vec(1i64..6, 6)) {
        let Ok(e) = t.lower(&env) else { return Ok(()) };
        let v = Var::new("a");
        let m = monotonicity(&e, &v, &env);
        let (ma, assumptions) = monotonicity_with_assumptions(&e, &v, &env);
        let mut env2 = env.clone();
        for asm in &assumptions {
            env2.set(asm.var.clone(), asm.sign);
        }
        for (verdict, env_used) in [(m, &env), (ma, &env2)] {
            for (sd, d) in ss.iter().zip(&deltas) {
                let x = ctx(env_used, sd);
                let lo = x[&v].clone();
                // Both points must lie in a's sign range: step toward zero's far side stays inside.
                let hi = &lo + BigRational::from_integer(BigInt::from(*d));
                if !SignSet::of_rational(&hi).is_subset(env_used.get(&v)) {
                    continue;
                }
                let mut y = x.clone();
                y.insert(v.clone(), hi);
                let (f0, f1) = (e.eval(&x).unwrap(), e.eval(&y).unwrap());
                let ok = match verdict {
                    Monotonicity::Constant => f0 == f1,
                    Monotonicity::Increasing => f0 <= f1,
                    Monotonicity::Decreasing => f0 >= f1,
                    _ => true,
                };
                prop_assert!(ok, "{} is {:?} in a ({:?}) but f({})={} f(+{})={}", e, verdict, assumptions, x[&v], f0, d, f1);
            }
        }
    }

    /// Divisions that are exact for every integer (products of consecutive values, the
    /// triangular offsets of packed matrices) become rational polynomials: they must still
    /// evaluate like C, print as C that parses back to them, and stay exact.
    #[test]
    fn exact_divisions_evaluate_like_c(t in term(), k in 0i64..3, env in env_strategy(), ss in seeds()) {
        let plus = |a: &Term, c: i64| Term::bin(BinOp::Add, a.clone(), Term::num(c));
        let times = |a: Term, b: Term| Term::bin(BinOp::Mul, a, b);
        let shifted = plus(&t, k);
        let exact = [
            Term::bin(BinOp::Div, times(shifted.clone(), plus(&shifted, 1)), Term::num(2)),
            Term::bin(BinOp::Div, times(times(shifted.clone(), plus(&shifted, 1)), plus(&shifted, 2)), Term::num(6)),
            Term::bin(BinOp::Div, times(shifted.clone(), Term::bin(BinOp::Sub, times(Term::num(2), Term::var("b")), plus(&shifted, 1))), Term::num(2)),
        ];
        for x in exact {
            let Ok(e) = x.lower(&env) else { continue };
            prop_assert!(e.is_exact_integer(), "{} -> {}", x, e);
            for s in &ss {
                let c = ctx(&env, s);
                prop_assert_eq!(e.eval(&c).unwrap(), x.eval_c(&c).unwrap(), "{} -> {}", x, e);
            }
            let printed = e.to_c();
            prop_assert_eq!(parse_expr(&printed).ok(), Some(e.clone()), "printed: {}", printed);
        }
    }

    #[test]
    fn print_parse_round_trip(t in term(), env in env_strategy()) {
        let Ok(e) = t.lower(&env) else { return Ok(()) };
        let printed = e.to_c();
        let back = parse_expr(&printed);
        prop_assert_eq!(back.as_ref().ok(), Some(&e), "printed: {}", printed);
    }

    #[test]
    fn contains_var_agrees_with_vars(t in term(), env in env_strategy()) {
        let Ok(e) = t.lower(&env) else { return Ok(()) };
        let all = e.vars();
        for name in VARS {
            let v = Var::new(name);
            prop_assert_eq!(e.contains_var(&v), all.contains(&v), "{}", e.to_c());
        }
    }

    #[test]
    fn floors_written_as_c_keep_their_value_and_read_back(t in term(), env in env_strategy(), ss in seeds()) {
        let Ok(e) = t.lower(&env) else { return Ok(()) };
        let Ok(floors) = e.truncs_to_floors(&env) else { return Ok(()) };
        let Ok(c) = floors.floors_to_truncs(&env) else { return Ok(()) };
        for s in &ss {
            let x = ctx(&env, s);
            prop_assert_eq!(c.eval(&x).unwrap(), e.eval(&x).unwrap(), "{} -> {} -> {}", e, floors, c);
        }
        let back = parse_expr(&c.to_c());
        prop_assert!(back.is_ok(), "{} does not read back", c.to_c());
    }

    #[test]
    fn retained_terms_are_a_normal_form(t in term(), env in env_strategy(), mask in any::<u64>()) {
        let Ok(e) = t.lower(&env) else { return Ok(()) };
        let Some(p) = e.as_poly() else { return Ok(()) };
        let keep = |k: usize| mask >> (k % 64) & 1 == 1;
        let picked: Vec<_> = p.terms().iter().enumerate().filter(|(k, _)| keep(*k)).map(|(_, t)| t.clone()).collect();
        prop_assert_eq!(p.retain_terms(keep), Poly::from_terms(picked), "{}", e.to_c());
    }

    #[test]
    fn solver_answers_satisfy_equations(
        lhs in proptest::collection::vec(term(), 1..3),
        coeffs in proptest::collection::vec((-3i64..=3, -3i64..=3, 1i64..=4), 1..3),
        xs in (-9i64..=9, -9i64..=9),
        sd in proptest::collection::vec(any::<u64>(), VARS.len()),
    ) {
        // Equations c1*x + c2*y + term(params) [/ k] = value, built to have (xs) as a solution.
        let env = SignEnv::new();
        let params = ctx(&env, &sd);
        let mut truth = params.clone();
        truth.insert(Var::new("x"), BigRational::from_integer(xs.0.into()));
        truth.insert(Var::new("y"), BigRational::from_integer(xs.1.into()));
        let mut eqs = Vec::new();
        for (t, (c1, c2, k)) in lhs.iter().zip(&coeffs) {
            let lin = Term::bin(BinOp::Add,
                Term::bin(BinOp::Mul, Term::num(*c1), Term::var("x")),
                Term::bin(BinOp::Mul, Term::num(*c2), Term::var("y")));
            let whole = Term::bin(BinOp::Div, Term::bin(BinOp::Add, lin, t.clone()), Term::num(*k));
            let Ok(l) = whole.lower(&env) else { continue };
            let Ok(val) = l.eval(&truth) else { continue };
            eqs.push(Equation::new(l, Expr::rational(val)));
        }
        let unknowns = [Var::new("x"), Var::new("y")];
        for sem in [Semantics::Integer, Semantics::Rational] {
            let sol = solve(&eqs, &unknowns, sem, &env);
            for alt in sol.alternatives.iter().filter(|a| a.verified) {
                let map: HashMap<Var, Expr> = alt.values.clone().into_iter().collect();
                for eq in &eqs {
                    let l = eq.lhs.substitute(&map).unwrap();
                    let r = eq.rhs.substitute(&map).unwrap();
                    if sem == Semantics::Integer {
                        // Every verified integer alternative satisfies the C equations for all parameter values.
                        let mut c = params.clone();
                        for u in &unknowns {
                            c.entry(u.clone()).or_insert_with(|| BigRational::from_integer(3.into()));
                        }
                        prop_assert_eq!(l.eval(&c).unwrap(), r.eval(&c).unwrap(), "{} with {:?}", eq, alt.values);
                    }
                }
            }
            if sem == Semantics::Integer && sol.is_unique() && sol.undetermined.is_empty() {
                let alt = &sol.alternatives[0];
                if alt.values.values().all(|e| e.as_constant().is_some()) {
                    // A unique fully determined integer answer must be the one we built in.
                    prop_assert_eq!(alt.values[&Var::new("x")].as_constant(), truth.get(&Var::new("x")).cloned());
                }
            }
        }
    }
}
