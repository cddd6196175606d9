//! Equality saturation (egg) for what the polynomial normal form cannot do alone: min/max inside
//! arithmetic, C division/remainder under sign facts, shifts and bit masks, nested divisions.
//!
//! Each e-class carries the normal form of its members when one exists (an e-class analysis),
//! and after every iteration classes with equal normal forms are merged, so the normal form
//! supplies commutativity/associativity/distributivity and the rules below stay directional.

use crate::compare::{compare, get_max, get_min};
use crate::error::SymError;
use crate::expr::{Expr, MAX_SHIFT};
use crate::parse::parse_term;
use crate::sign::{SignEnv, SignSet};
use crate::substitution::sign_of;
use crate::term::{lower_mask, BinOp, Term};
use crate::var::Var;
use egg::{
    define_language, rewrite as rw, Analysis, DidMerge, EGraph, Id, RecExpr, Rewrite, Runner,
    StopReason, Subst, Symbol,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::HashMap;
use std::time::Duration;

/// Iteration limit of the equality saturation runner.
pub const ITER_LIMIT: usize = 12;
/// E-node limit of the equality saturation runner.
pub const NODE_LIMIT: usize = 4_000;

define_language! {
    /// The C-like term language rewritten by egg.
    pub enum CLang {
        "+" = Add([Id; 2]),
        "*" = Mul([Id; 2]),
        "neg" = Neg(Id),
        "/" = TDiv([Id; 2]),
        "%" = TRem([Id; 2]),
        "floor_div" = FDiv([Id; 2]),
        "floor_mod" = FMod([Id; 2]),
        "<<" = Shl([Id; 2]),
        ">>" = Shr([Id; 2]),
        "&" = And([Id; 2]),
        "min" = Min([Id; 2]),
        "max" = Max([Id; 2]),
        "rat" = Rat([Id; 2]),
        Num(BigInt),
        Symbol(Symbol),
    }
}

/// E-class analysis: the normal form of the class (if any member has one) under a sign environment.
#[derive(Debug, Default)]
pub struct NormalForms {
    env: SignEnv,
}

fn int_of(e: &Option<Expr>) -> Option<BigInt> {
    e.as_ref().and_then(Expr::as_integer)
}

fn shift_of(e: &Option<Expr>) -> Option<u32> {
    int_of(e)
        .and_then(|k| k.to_u32())
        .filter(|k| *k <= MAX_SHIFT)
}

impl Analysis<CLang> for NormalForms {
    type Data = Option<Expr>;

    fn make(egraph: &mut EGraph<CLang, Self>, enode: &CLang, _id: Id) -> Option<Expr> {
        let d = |i: &Id| egraph[*i].data.clone();
        let env = &egraph.analysis.env;
        match enode {
            CLang::Num(n) => Some(Expr::integer(n.clone())),
            CLang::Symbol(s) => Some(Expr::var(s.as_str())),
            CLang::Add([a, b]) => d(a)?.checked_add(&d(b)?).ok(),
            CLang::Mul([a, b]) => d(a)?.mul_in(&d(b)?, env).ok(),
            CLang::Neg(a) => Some(d(a)?.neg()),
            CLang::TDiv([a, k]) => d(a)?.c_div(&int_of(&d(k))?).ok(),
            CLang::TRem([a, k]) => d(a)?.c_mod(&int_of(&d(k))?).ok(),
            CLang::FDiv([a, k]) => d(a)?.floor_div(&int_of(&d(k))?).ok(),
            CLang::FMod([a, k]) => d(a)?.floor_mod(&int_of(&d(k))?).ok(),
            CLang::Shl([a, k]) => d(a)?.shl(shift_of(&d(k))?).ok(),
            CLang::Shr([a, k]) => d(a)?.shr(shift_of(&d(k))?).ok(),
            CLang::And([a, b]) => {
                let (x, y) = (d(a)?, d(b)?);
                match (x.as_integer(), y.as_integer()) {
                    (_, Some(m)) => lower_mask(&x, &m).ok(),
                    (Some(m), None) => lower_mask(&y, &m).ok(),
                    _ => None,
                }
            }
            CLang::Min([a, b]) => get_min(&d(a)?, &d(b)?, env).ok(),
            CLang::Max([a, b]) => get_max(&d(a)?, &d(b)?, env).ok(),
            CLang::Rat([p, q]) => {
                let (p, q) = (int_of(&d(p))?, int_of(&d(q))?);
                (!q.is_zero()).then(|| Expr::rational(BigRational::new(p, q)))
            }
        }
    }

    fn merge(&mut self, to: &mut Option<Expr>, from: Option<Expr>) -> DidMerge {
        // Members of a class are equal, so any normal form will do; keep the smallest.
        match (to.as_ref(), from) {
            (None, None) => DidMerge(false, false),
            (None, Some(f)) => {
                *to = Some(f);
                DidMerge(true, false)
            }
            (Some(_), None) => DidMerge(false, true),
            (Some(t), Some(f)) => {
                if (f.size(), &f) < (t.size(), t) {
                    *to = Some(f);
                    DidMerge(true, true)
                } else {
                    DidMerge(false, *t != f)
                }
            }
        }
    }

    fn modify(egraph: &mut EGraph<CLang, Self>, id: Id) {
        // Constant folding: make the constant itself a member, so patterns on numbers match.
        if let Some(c) = egraph[id].data.as_ref().and_then(Expr::as_integer) {
            let n = egraph.add(CLang::Num(c));
            egraph.union(id, n);
        }
    }
}

type EG = EGraph<CLang, NormalForms>;

fn var(s: &str) -> egg::Var {
    // Only called with the literal `?name` pattern variables of the rules below.
    s.parse().expect("pattern variables are `?name` literals")
}

fn data(eg: &EG, subst: &Subst, v: &str) -> Option<Expr> {
    subst.get(var(v)).and_then(|id| eg[*id].data.clone())
}

fn sign_is(v: &'static str, set: SignSet) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    move |eg, _, s| {
        data(eg, s, v).is_some_and(|e| {
            let sg = sign_of(&e, &eg.analysis.env);
            !sg.is_empty() && sg.is_subset(set)
        })
    }
}

fn both<A, B>(a: A, b: B) -> impl Fn(&mut EG, Id, &Subst) -> bool
where
    A: Fn(&mut EG, Id, &Subst) -> bool,
    B: Fn(&mut EG, Id, &Subst) -> bool,
{
    move |eg, id, s| a(eg, id, s) && b(eg, id, s)
}

fn ge(a: &'static str, b: &'static str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    move |eg, _, s| match (data(eg, s, a), data(eg, s, b)) {
        (Some(x), Some(y)) => compare(&x, &y, &eg.analysis.env).is_ge(),
        _ => false,
    }
}

fn low_mask(m: &'static str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    // m = 2^k - 1 with k >= 1
    move |eg, _, s| {
        data(eg, s, m)
            .and_then(|e| e.as_integer())
            .is_some_and(|m| m.is_positive() && ((&m + 1u32) & &m).is_zero())
    }
}

fn divides(k: &'static str, m: &'static str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    move |eg, _, s| match (
        data(eg, s, k).and_then(|e| e.as_integer()),
        data(eg, s, m).and_then(|e| e.as_integer()),
    ) {
        (Some(k), Some(m)) => k.is_positive() && m.is_positive() && (m % k).is_zero(),
        _ => false,
    }
}

/// The directional rules, each with the identity it applies.
pub fn rules() -> Vec<Rewrite<CLang, NormalForms>> {
    let pos = SignSet::POS;
    let nonneg = SignSet::NON_NEG;
    let nonpos = SignSet::NON_POS;
    vec![
        // max(a, b) + c = max(a + c, b + c)
        rw!("max-add-r"; "(+ (max ?a ?b) ?c)" => "(max (+ ?a ?c) (+ ?b ?c))"),
        // c + max(a, b) = max(c + a, c + b)
        rw!("max-add-l"; "(+ ?c (max ?a ?b))" => "(max (+ ?c ?a) (+ ?c ?b))"),
        // min(a, b) + c = min(a + c, b + c)
        rw!("min-add-r"; "(+ (min ?a ?b) ?c)" => "(min (+ ?a ?c) (+ ?b ?c))"),
        // c + min(a, b) = min(c + a, c + b)
        rw!("min-add-l"; "(+ ?c (min ?a ?b))" => "(min (+ ?c ?a) (+ ?c ?b))"),
        // -max(a, b) = min(-a, -b)
        rw!("neg-max"; "(neg (max ?a ?b))" => "(min (neg ?a) (neg ?b))"),
        // -min(a, b) = max(-a, -b)
        rw!("neg-min"; "(neg (min ?a ?b))" => "(max (neg ?a) (neg ?b))"),
        // max(a, a) = a
        rw!("max-idem"; "(max ?a ?a)" => "?a"),
        // min(a, a) = a
        rw!("min-idem"; "(min ?a ?a)" => "?a"),
        // min(a, max(a, b)) = a
        rw!("min-max-absorb-l"; "(min ?a (max ?a ?b))" => "?a"),
        // min(a, max(b, a)) = a
        rw!("min-max-absorb-r"; "(min ?a (max ?b ?a))" => "?a"),
        // max(a, min(a, b)) = a
        rw!("max-min-absorb-l"; "(max ?a (min ?a ?b))" => "?a"),
        // max(a, min(b, a)) = a
        rw!("max-min-absorb-r"; "(max ?a (min ?b ?a))" => "?a"),
        // max(a, b) = a when a >= b
        rw!("max-left"; "(max ?a ?b)" => "?a" if ge("?a", "?b")),
        // max(a, b) = b when b >= a
        rw!("max-right"; "(max ?a ?b)" => "?b" if ge("?b", "?a")),
        // min(a, b) = a when a <= b
        rw!("min-left"; "(min ?a ?b)" => "?a" if ge("?b", "?a")),
        // min(a, b) = b when b <= a
        rw!("min-right"; "(min ?a ?b)" => "?b" if ge("?a", "?b")),
        // min(max(a, b), c) = max(min(a, c), min(b, c))   (distributive lattice)
        rw!("min-over-max"; "(min (max ?a ?b) ?c)" => "(max (min ?a ?c) (min ?b ?c))"),
        // k * max(a, b) = max(k*a, k*b) for k >= 0
        rw!("mul-max-nonneg"; "(* ?k (max ?a ?b))" => "(max (* ?k ?a) (* ?k ?b))" if sign_is("?k", nonneg)),
        // k * max(a, b) = min(k*a, k*b) for k <= 0
        rw!("mul-max-nonpos"; "(* ?k (max ?a ?b))" => "(min (* ?k ?a) (* ?k ?b))" if sign_is("?k", nonpos)),
        // k * min(a, b) = min(k*a, k*b) for k >= 0
        rw!("mul-min-nonneg"; "(* ?k (min ?a ?b))" => "(min (* ?k ?a) (* ?k ?b))" if sign_is("?k", nonneg)),
        // k * min(a, b) = max(k*a, k*b) for k <= 0
        rw!("mul-min-nonpos"; "(* ?k (min ?a ?b))" => "(max (* ?k ?a) (* ?k ?b))" if sign_is("?k", nonpos)),
        // max(a, b) * k = max(a*k, b*k) for k >= 0
        rw!("max-mul-nonneg"; "(* (max ?a ?b) ?k)" => "(max (* ?a ?k) (* ?b ?k))" if sign_is("?k", nonneg)),
        // min(a, b) * k = min(a*k, b*k) for k >= 0
        rw!("min-mul-nonneg"; "(* (min ?a ?b) ?k)" => "(min (* ?a ?k) (* ?b ?k))" if sign_is("?k", nonneg)),
        // C: x / k = floor(x / k) when x >= 0, k > 0
        rw!("cdiv-floor"; "(/ ?x ?k)" => "(floor_div ?x ?k)" if both(sign_is("?x", nonneg), sign_is("?k", pos))),
        // C: x % k = x mod k when x >= 0, k > 0
        rw!("crem-mod"; "(% ?x ?k)" => "(floor_mod ?x ?k)" if both(sign_is("?x", nonneg), sign_is("?k", pos))),
        // x & (2^k - 1) = x % 2^k for x >= 0 (C remainder)
        rw!("mask-crem"; "(& ?x ?m)" => "(% ?x (+ ?m 1))" if both(sign_is("?x", nonneg), low_mask("?m"))),
        // x & (2^k - 1) = x mod 2^k for every x (two's complement, floor modulo)
        rw!("mask-mod"; "(& ?x ?m)" => "(floor_mod ?x (+ ?m 1))" if low_mask("?m")),
        // x >> k = floor(x / 2^k) (arithmetic shift)
        rw!("shr-floor"; "(>> ?x ?k)" => "(floor_div ?x (<< 1 ?k))"),
        // x << k = x * 2^k
        rw!("shl-mul"; "(<< ?x ?k)" => "(* ?x (<< 1 ?k))"),
        // floor(floor(x / a) / b) = floor(x / (a*b)) for a, b > 0
        rw!("fdiv-fdiv"; "(floor_div (floor_div ?x ?a) ?b)" => "(floor_div ?x (* ?a ?b))" if both(sign_is("?a", pos), sign_is("?b", pos))),
        // C: (x / a) / b = x / (a*b) for a, b > 0
        rw!("cdiv-cdiv"; "(/ (/ ?x ?a) ?b)" => "(/ ?x (* ?a ?b))" if both(sign_is("?a", pos), sign_is("?b", pos))),
        // (x mod m) mod k = x mod k when k divides m
        rw!("fmod-fmod"; "(floor_mod (floor_mod ?x ?m) ?k)" => "(floor_mod ?x ?k)" if divides("?k", "?m")),
        // floor(max(a, b) / k) = max(floor(a / k), floor(b / k)) for k > 0 (monotone)
        rw!("fdiv-max"; "(floor_div (max ?a ?b) ?k)" => "(max (floor_div ?a ?k) (floor_div ?b ?k))" if sign_is("?k", pos)),
        // floor(min(a, b) / k) = min(floor(a / k), floor(b / k)) for k > 0
        rw!("fdiv-min"; "(floor_div (min ?a ?b) ?k)" => "(min (floor_div ?a ?k) (floor_div ?b ?k))" if sign_is("?k", pos)),
        // C: max(a, b) / k = max(a / k, b / k) for k > 0 (truncation is monotone)
        rw!("cdiv-max"; "(/ (max ?a ?b) ?k)" => "(max (/ ?a ?k) (/ ?b ?k))" if sign_is("?k", pos)),
        // C: min(a, b) / k = min(a / k, b / k) for k > 0
        rw!("cdiv-min"; "(/ (min ?a ?b) ?k)" => "(min (/ ?a ?k) (/ ?b ?k))" if sign_is("?k", pos)),
        // x = k*floor(x / k) + x mod k
        rw!("divmod"; "(+ (* (floor_div ?x ?k) ?k) (floor_mod ?x ?k))" => "?x"),
    ]
}

fn add_term(t: &Term, expr: &mut RecExpr<CLang>) -> Id {
    let bin = |op: fn([Id; 2]) -> CLang, a: &Term, b: &Term, expr: &mut RecExpr<CLang>| {
        let x = add_term(a, expr);
        let y = add_term(b, expr);
        expr.add(op([x, y]))
    };
    match t {
        Term::Num(n) => expr.add(CLang::Num(n.clone())),
        Term::Rat(p, q) => {
            let x = expr.add(CLang::Num(p.clone()));
            let y = expr.add(CLang::Num(q.clone()));
            expr.add(CLang::Rat([x, y]))
        }
        Term::Var(v) => expr.add(CLang::Symbol(Symbol::from(v.name()))),
        Term::Neg(a) => {
            let x = add_term(a, expr);
            expr.add(CLang::Neg(x))
        }
        Term::BitNot(a) => {
            // ~x = -x - 1
            let x = add_term(a, expr);
            let n = expr.add(CLang::Neg(x));
            let m1 = expr.add(CLang::Num(-BigInt::one()));
            expr.add(CLang::Add([n, m1]))
        }
        Term::Bin(op, a, b) => match op {
            BinOp::Add => bin(CLang::Add, a, b, expr),
            BinOp::Sub => {
                let x = add_term(a, expr);
                let y = add_term(b, expr);
                let ny = expr.add(CLang::Neg(y));
                expr.add(CLang::Add([x, ny]))
            }
            BinOp::Mul => bin(CLang::Mul, a, b, expr),
            BinOp::Div => bin(CLang::TDiv, a, b, expr),
            BinOp::Rem => bin(CLang::TRem, a, b, expr),
            BinOp::Shl => bin(CLang::Shl, a, b, expr),
            BinOp::Shr => bin(CLang::Shr, a, b, expr),
            BinOp::BitAnd => bin(CLang::And, a, b, expr),
        },
        Term::Min(ts) | Term::Max(ts) => {
            let is_min = matches!(t, Term::Min(_));
            let mut ids = ts
                .iter()
                .map(|x| add_term(x, expr))
                .collect::<Vec<_>>()
                .into_iter();
            let first = ids
                .next()
                .unwrap_or_else(|| expr.add(CLang::Num(BigInt::zero())));
            ids.fold(first, |acc, y| {
                expr.add(if is_min {
                    CLang::Min([acc, y])
                } else {
                    CLang::Max([acc, y])
                })
            })
        }
        Term::FloorDiv(a, k) => bin(CLang::FDiv, a, k, expr),
        Term::FloorMod(a, k) => bin(CLang::FMod, a, k, expr),
    }
}

/// Outcome of a saturation run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimplifyReport {
    /// The simplified normal form, when some equivalent term has one.
    pub result: Result<Expr, SymError>,
    /// Whether the rules saturated (otherwise a limit stopped the run; results are still sound).
    pub saturated: bool,
    /// Why the runner stopped.
    pub stop_reason: String,
    /// Iterations run.
    pub iterations: usize,
}

fn merge_equal_normal_forms(eg: &mut EG) {
    let mut seen: HashMap<Expr, Id> = HashMap::new();
    let mut pairs = Vec::new();
    for class in eg.classes() {
        if let Some(e) = &class.data {
            match seen.get(e) {
                Some(other) => pairs.push((*other, class.id)),
                None => {
                    seen.insert(e.clone(), class.id);
                }
            }
        }
    }
    for (a, b) in pairs {
        eg.union(a, b);
    }
    eg.rebuild();
}

fn run(terms: &[&Term], env: &SignEnv) -> (Runner<CLang, NormalForms>, Vec<Id>) {
    let mut eg = EGraph::new(NormalForms { env: env.clone() });
    let roots: Vec<Id> = terms
        .iter()
        .map(|t| {
            let mut rec = RecExpr::default();
            add_term(t, &mut rec);
            eg.add_expr(&rec)
        })
        .collect();
    eg.rebuild();
    let runner = Runner::default()
        .with_egraph(eg)
        .with_iter_limit(ITER_LIMIT)
        .with_node_limit(NODE_LIMIT)
        // No time limit: results must not depend on machine speed.
        .with_time_limit(Duration::from_secs(u64::MAX / 4))
        .with_hook(|r| {
            merge_equal_normal_forms(&mut r.egraph);
            Ok(())
        })
        .run(&rules());
    (runner, roots)
}

/// Simplifies a term with equality saturation; the report says how the run stopped.
pub fn simplify_report(t: &Term, env: &SignEnv) -> SimplifyReport {
    let (mut runner, roots) = run(&[t], env);
    merge_equal_normal_forms(&mut runner.egraph);
    let root = runner.egraph.find(roots[0]);
    let result = runner.egraph[root].data.clone().ok_or_else(|| {
        SymError::NotNormalForm(format!(
            "no equivalent form of {t} has min/max only at the top"
        ))
    });
    let stop = runner.stop_reason.clone();
    SimplifyReport {
        result,
        saturated: matches!(stop, Some(StopReason::Saturated)),
        stop_reason: format!("{stop:?}"),
        iterations: runner.iterations.len(),
    }
}

/// Simplifies a term (C idioms, min/max anywhere) to a normal form, using sign facts.
pub fn simplify(t: &Term, env: &SignEnv) -> Result<Expr, SymError> {
    simplify_report(t, env).result
}

/// Re-simplifies an expression with sign facts (e.g. C `/` of a non-negative value becomes a
/// floor division, which then simplifies further). Returns the input when nothing better is found.
pub fn simplify_expr(e: &Expr, env: &SignEnv) -> Expr {
    match parse_term(&e.to_c()) {
        Ok(t) => simplify(&t, env).unwrap_or_else(|_| e.clone()),
        Err(_) => e.clone(),
    }
}

/// Tries to prove `a = b` for all integer values allowed by `env`: `Some(true)` when proven
/// (same normal form, or same e-class after saturation), `Some(false)` when they provably
/// differ (their difference has a known nonzero sign, or a sampled assignment tells them apart),
/// `None` when undecided.
pub fn prove_equal(a: &Term, b: &Term, env: &SignEnv) -> Option<bool> {
    if let (Ok(x), Ok(y)) = (a.lower(env), b.lower(env)) {
        if x == y {
            return Some(true);
        }
    }
    let (mut runner, roots) = run(&[a, b], env);
    merge_equal_normal_forms(&mut runner.egraph);
    let (ra, rb) = (runner.egraph.find(roots[0]), runner.egraph.find(roots[1]));
    if ra == rb {
        return Some(true);
    }
    if let (Some(x), Some(y)) = (&runner.egraph[ra].data, &runner.egraph[rb].data) {
        if matches!(
            compare(x, y, env),
            crate::compare::Cmp::Less | crate::compare::Cmp::Greater
        ) {
            return Some(false);
        }
    }
    if differ_on_samples(a, b, env) {
        return Some(false);
    }
    None
}

fn differ_on_samples(a: &Term, b: &Term, env: &SignEnv) -> bool {
    let mut vars = std::collections::BTreeSet::new();
    collect_term_vars(a, &mut vars);
    collect_term_vars(b, &mut vars);
    let pool = |s: SignSet| -> Vec<i64> {
        let mut v = Vec::new();
        if s.has_neg() {
            v.extend([-1, -5, -8]);
        }
        if s.has_zero() {
            v.push(0);
        }
        if s.has_pos() {
            v.extend([1, 5, 8, 13]);
        }
        v
    };
    let pools: Vec<(Var, Vec<i64>)> = vars.iter().map(|v| (v.clone(), pool(env.get(v)))).collect();
    if pools.iter().any(|(_, p)| p.is_empty()) {
        return false;
    }
    for round in 0..32usize {
        let ctx: HashMap<Var, BigRational> = pools
            .iter()
            .enumerate()
            .map(|(j, (v, p))| {
                let x = p[(round * (j + 1) + round / 5 + j) % p.len()];
                (v.clone(), BigRational::from_integer(BigInt::from(x)))
            })
            .collect();
        if let (Ok(x), Ok(y)) = (a.eval_c(&ctx), b.eval_c(&ctx)) {
            if x != y {
                return true;
            }
        }
    }
    false
}

fn collect_term_vars(t: &Term, out: &mut std::collections::BTreeSet<Var>) {
    match t {
        Term::Num(_) | Term::Rat(..) => {}
        Term::Var(v) => {
            out.insert(v.clone());
        }
        Term::Neg(a) | Term::BitNot(a) => collect_term_vars(a, out),
        Term::Bin(_, a, b) | Term::FloorDiv(a, b) | Term::FloorMod(a, b) => {
            collect_term_vars(a, out);
            collect_term_vars(b, out);
        }
        Term::Min(ts) | Term::Max(ts) => ts.iter().for_each(|x| collect_term_vars(x, out)),
    }
}
