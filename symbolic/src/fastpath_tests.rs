//! Property tests of the shortcuts against the reference algorithms they replace: the same
//! results, exactly (monotonicity of a polynomial, substitution of a unit, subtraction).

use crate::monotonicity::Monotonicity;
use crate::monotonicity::{poly_monotonicity_fast, poly_monotonicity_slow};
use crate::poly::Poly;
use crate::sign::{extreme, SignEnv, SignSet, Signs};
use crate::substitution::bound_chains;
use crate::term::{BinOp, Term};
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;

const VARS: [&str; 4] = ["a", "b", "c", "d"];
const SIGNS: [SignSet; 7] = [
    SignSet::NEG,
    SignSet::ZERO,
    SignSet::POS,
    SignSet::NON_NEG,
    SignSet::NON_POS,
    SignSet::TOP,
    SignSet::NON_ZERO,
];

fn leaf() -> impl Strategy<Value = Term> {
    prop_oneof![
        (0..VARS.len()).prop_map(|i| Term::var(VARS[i])),
        (-5i64..=5).prop_map(Term::num),
    ]
}

fn term() -> impl Strategy<Value = Term> {
    leaf().prop_recursive(5, 32, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Add, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Sub, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Mul, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::bin(BinOp::Mul, a, b)),
            (inner.clone(), 1i64..=8).prop_map(|(a, k)| Term::bin(BinOp::Div, a, Term::num(k))),
            (inner.clone(), 1i64..=8).prop_map(|(a, k)| Term::bin(BinOp::Rem, a, Term::num(k))),
            (inner.clone(), 0i64..=3).prop_map(|(a, k)| Term::bin(BinOp::Shr, a, Term::num(k))),
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

/// Polynomials from two random terms (their sum and their difference), optionally with a
/// rational factor.
fn polys(t: &Term, u: &Term, den: i64, env: &SignEnv) -> Vec<Poly> {
    let none = SignEnv::new();
    let mut out = Vec::new();
    for e in [&none, env] {
        let (Ok(x), Ok(y)) = (t.lower(e), u.lower(e)) else {
            continue;
        };
        for z in [x.checked_add(&y), x.checked_sub(&y), x.checked_mul(&y)]
            .into_iter()
            .flatten()
        {
            let z = z
                .div_const(&BigRational::from_integer(BigInt::from(den)))
                .unwrap_or(z);
            if let Some(p) = z.as_poly() {
                out.push(p.clone());
            }
        }
    }
    out
}

/// The bound chain as it was before the lockstep version: one chain at a time, general
/// substitution only.
fn bound_chain_reference(p: &Poly, env: &SignEnv, lower: bool) -> Option<Poly> {
    let mut vars = std::collections::BTreeSet::new();
    p.collect_vars(&mut vars);
    let mut g = p.clone();
    let mut progressed = false;
    for v in vars {
        if !g.contains_var(&v) {
            continue;
        }
        let sv = env.get(&v);
        if extreme(sv, true).is_none() && extreme(sv, false).is_none() {
            continue;
        }
        let mono = poly_monotonicity_slow(&g, &v, Signs { env, extra: &[] });
        let x = if sv == SignSet::ZERO {
            Some(0)
        } else {
            match mono {
                Monotonicity::Constant => extreme(sv, true).or_else(|| extreme(sv, false)),
                Monotonicity::Increasing => extreme(sv, lower),
                Monotonicity::Decreasing => extreme(sv, !lower),
                _ => None,
            }
        };
        let Some(x) = x else { continue };
        let val = Poly::int(x);
        match g.subst(&|w: &Var| if *w == v { Some(val.clone()) } else { None }) {
            Ok(ng) => {
                g = ng;
                progressed = true;
            }
            Err(_) => return None,
        }
    }
    progressed.then_some(g)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn monotonicity_shortcut_is_exact(t in term(), u in term(), den in 1i64..=3, env in env_strategy()) {
        for p in polys(&t, &u, den, &env) {
            for n in VARS {
                let v = Var::new(n);
                for e in [&env, &SignEnv::new()] {
                    let s = Signs { env: e, extra: &[] };
                    prop_assert_eq!(
                        poly_monotonicity_fast(&p, &v, s),
                        poly_monotonicity_slow(&p, &v, s),
                        "{} in {}", p, n
                    );
                }
            }
        }
    }

    #[test]
    fn subst_unit_is_exact(t in term(), u in term(), den in 1i64..=3, env in env_strategy()) {
        for p in polys(&t, &u, den, &env) {
            for n in VARS {
                let v = Var::new(n);
                for x in -1i64..=1 {
                    if let Some(q) = p.subst_unit(&v, x) {
                        let val = Poly::int(x);
                        let r = p.subst(&|w: &Var| (*w == v).then(|| val.clone()));
                        prop_assert_eq!(Ok(q), r, "{} with {} = {}", p, n, x);
                    }
                }
            }
        }
    }

    #[test]
    fn sub_is_add_neg(t in term(), u in term(), env in env_strategy()) {
        let ps = polys(&t, &u, 1, &env);
        for p in &ps {
            for q in &ps {
                prop_assert_eq!(p.sub(q), p.add(&q.neg()));
            }
        }
    }

    #[test]
    fn bound_chains_are_exact(t in term(), u in term(), den in 1i64..=3, env in env_strategy()) {
        for p in polys(&t, &u, den, &env) {
            let (lo, up) = bound_chains(&p, &env);
            prop_assert_eq!(lo, bound_chain_reference(&p, &env, true), "lower {}", p);
            prop_assert_eq!(up, bound_chain_reference(&p, &env, false), "upper {}", p);
        }
    }
}
