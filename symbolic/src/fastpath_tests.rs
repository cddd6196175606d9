//! Property tests of the shortcuts against the reference algorithms they replace: the same
//! results, exactly (monotonicity of a polynomial, substitution of a unit, subtraction).

use crate::monotonicity::{poly_monotonicity_fast, poly_monotonicity_slow};
use crate::poly::Poly;
use crate::sign::{SignEnv, SignSet, Signs};
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
}
