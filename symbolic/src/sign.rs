//! Signs: the {-, 0, +} set lattice, sign environments, and the sign of an expression by the
//! rule method and the integer bound method (thesis §7.2). The substitution method, which
//! needs monotonicity, and the best sign `sign_of` are in `substitution`, above
//! `monotonicity`, which computes its signs with the methods here.

use crate::coeff;
use crate::expr::Expr;
use crate::poly::{Atom, Monomial, Poly};
use crate::var::{Var, VarBuildHasher};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use std::collections::HashMap;
use std::fmt;

/// A set of possible signs, as a bitset of {negative, zero, positive}.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SignSet(u8);

impl SignSet {
    /// No possible value (unreachable context).
    pub const EMPTY: SignSet = SignSet(0);
    /// Strictly negative.
    pub const NEG: SignSet = SignSet(1);
    /// Exactly zero.
    pub const ZERO: SignSet = SignSet(2);
    /// Strictly positive (for an integer: `>= 1`).
    pub const POS: SignSet = SignSet(4);
    /// `<= 0`.
    pub const NON_POS: SignSet = SignSet(3);
    /// `>= 0`.
    pub const NON_NEG: SignSet = SignSet(6);
    /// `!= 0`.
    pub const NON_ZERO: SignSet = SignSet(5);
    /// Any sign (nothing known).
    pub const TOP: SignSet = SignSet(7);

    /// Builds from three flags.
    pub fn new(neg: bool, zero: bool, pos: bool) -> SignSet {
        SignSet(neg as u8 | (zero as u8) << 1 | (pos as u8) << 2)
    }

    /// The sign of a number.
    pub fn of_rational(x: &BigRational) -> SignSet {
        if x.is_zero() {
            SignSet::ZERO
        } else if x.is_positive() {
            SignSet::POS
        } else {
            SignSet::NEG
        }
    }

    /// The sign of an integer.
    pub fn of_int(x: &BigInt) -> SignSet {
        SignSet::of_rational(&BigRational::from_integer(x.clone()))
    }

    /// Whether negative values are possible.
    pub fn has_neg(self) -> bool {
        self.0 & 1 != 0
    }
    /// Whether zero is possible.
    pub fn has_zero(self) -> bool {
        self.0 & 2 != 0
    }
    /// Whether positive values are possible.
    pub fn has_pos(self) -> bool {
        self.0 & 4 != 0
    }
    /// Whether no value is possible.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether every sign is possible.
    pub fn is_top(self) -> bool {
        self.0 == 7
    }
    /// Subset test.
    pub fn is_subset(self, other: SignSet) -> bool {
        self.0 & !other.0 == 0
    }
    /// Set union (join of possibilities).
    pub fn union(self, other: SignSet) -> SignSet {
        SignSet(self.0 | other.0)
    }
    /// Set intersection (both facts hold).
    pub fn intersect(self, other: SignSet) -> SignSet {
        SignSet(self.0 & other.0)
    }

    fn singletons(self) -> impl Iterator<Item = SignSet> {
        [SignSet::NEG, SignSet::ZERO, SignSet::POS]
            .into_iter()
            .filter(move |s| s.is_subset(self))
    }

    fn lift(self, other: SignSet, f: impl Fn(SignSet, SignSet) -> SignSet) -> SignSet {
        let mut r = SignSet::EMPTY;
        for a in self.singletons() {
            for b in other.singletons() {
                r = r.union(f(a, b));
            }
        }
        r
    }

    /// Possible signs of `x + y` (rule table lifted to sets).
    pub fn plus(self, other: SignSet) -> SignSet {
        self.lift(other, |a, b| {
            if a == SignSet::ZERO {
                b
            } else if b == SignSet::ZERO || a == b {
                a
            } else {
                SignSet::TOP
            }
        })
    }

    /// Possible signs of `x * y`.
    pub fn times(self, other: SignSet) -> SignSet {
        self.lift(other, |a, b| {
            if a == SignSet::ZERO || b == SignSet::ZERO {
                SignSet::ZERO
            } else if a == b {
                SignSet::POS
            } else {
                SignSet::NEG
            }
        })
    }

    /// Possible signs of `-x`.
    pub fn negated(self) -> SignSet {
        SignSet::new(self.has_pos(), self.has_zero(), self.has_neg())
    }

    /// Possible signs of `x^e`.
    pub fn pow(self, e: u32) -> SignSet {
        if e == 0 {
            return SignSet::POS;
        }
        if e & 1 == 0 {
            // Even powers lose the sign: negatives become positive.
            SignSet::new(false, self.has_zero(), self.has_neg() || self.has_pos())
        } else {
            self
        }
    }

    /// Possible signs of `max(x, y)`.
    pub fn max(self, other: SignSet) -> SignSet {
        self.lift(other, |a, b| if a.0 >= b.0 { a } else { b })
    }

    /// Possible signs of `min(x, y)`.
    pub fn min(self, other: SignSet) -> SignSet {
        self.lift(other, |a, b| if a.0 <= b.0 { a } else { b })
    }
}

impl fmt::Debug for SignSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for SignSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.has_neg() {
            parts.push("-");
        }
        if self.has_zero() {
            parts.push("0");
        }
        if self.has_pos() {
            parts.push("+");
        }
        write!(f, "{{{}}}", parts.join(","))
    }
}

/// Known signs of variables; a variable not in the environment may have any sign.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignEnv {
    map: HashMap<Var, SignSet, VarBuildHasher>,
}

impl SignEnv {
    /// The environment where nothing is known.
    pub fn new() -> SignEnv {
        SignEnv::default()
    }

    /// Sets (overrides) the sign of a variable; returns `self` for chaining.
    pub fn set(&mut self, v: Var, s: SignSet) -> &mut SignEnv {
        self.map.insert(v, s);
        self
    }

    /// Builder form of [`SignEnv::set`].
    pub fn with(mut self, v: Var, s: SignSet) -> SignEnv {
        self.map.insert(v, s);
        self
    }

    /// The possible signs of a variable (`TOP` when unknown).
    pub fn get(&self, v: &Var) -> SignSet {
        self.map.get(v).copied().unwrap_or(SignSet::TOP)
    }

    /// What is known about the variables `keep` holds only: a test that reads a few
    /// variables copies a small environment instead of a whole function's.
    /// How many variables have a sign set.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no variable has a sign set.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn restricted_to(&self, keep: &std::collections::HashSet<Var>) -> SignEnv {
        let map = if keep.len() < self.map.len() {
            keep.iter()
                .filter_map(|v| self.map.get(v).map(|s| (v.clone(), *s)))
                .collect()
        } else {
            self.map
                .iter()
                .filter(|(v, _)| keep.contains(*v))
                .map(|(v, s)| (v.clone(), *s))
                .collect()
        };
        SignEnv { map }
    }

    /// Forgets what is known about a variable.
    pub fn remove(&mut self, v: &Var) {
        self.map.remove(v);
    }

    /// Conjunction of facts (thesis: the operands' environments are merged): a variable known
    /// in both gets the intersection, one known in either keeps its set.
    pub fn merge(&self, other: &SignEnv) -> SignEnv {
        let mut map = self.map.clone();
        for (v, s) in &other.map {
            let e = map.entry(v.clone()).or_insert(SignSet::TOP);
            *e = e.intersect(*s);
        }
        SignEnv { map }
    }

    /// Disjunction (control-flow join): union of sets; a variable unknown on one side becomes unknown.
    pub fn join(&self, other: &SignEnv) -> SignEnv {
        let mut map = HashMap::default();
        for (v, s) in &self.map {
            if let Some(t) = other.map.get(v) {
                let u = s.union(*t);
                if !u.is_top() {
                    map.insert(v.clone(), u);
                }
            }
        }
        SignEnv { map }
    }

    /// Variables with a known sign, sorted by name.
    pub fn entries(&self) -> Vec<(Var, SignSet)> {
        let mut v: Vec<_> = self.map.iter().map(|(k, s)| (k.clone(), *s)).collect();
        v.sort();
        v
    }
}

/// Sign lookup: an environment plus a few overriding entries (fresh deltas), without cloning the map.
#[derive(Clone, Copy)]
pub(crate) struct Signs<'a> {
    pub env: &'a SignEnv,
    pub extra: &'a [(Var, SignSet)],
}

impl Signs<'_> {
    pub fn get(&self, v: &Var) -> SignSet {
        for (w, s) in self.extra {
            if w == v {
                return *s;
            }
        }
        self.env.get(v)
    }
}

pub(crate) fn atom_sign(a: &Atom, s: Signs) -> SignSet {
    match a {
        Atom::Var(v) => s.get(v),
        Atom::FloorMod(..) => SignSet::NON_NEG,
        Atom::FloorDiv(p, _) => {
            let ps = poly_sign_fast(p, s);
            // floor(x/k) for k >= 2: positive x may give 0, negative x stays negative.
            let mut r = SignSet::EMPTY;
            if ps.has_neg() {
                r = r.union(SignSet::NEG);
            }
            if ps.has_zero() || ps.has_pos() {
                r = r.union(SignSet::ZERO);
            }
            if ps.has_pos() {
                r = r.union(SignSet::POS);
            }
            r
        }
        Atom::TruncDiv(p, _) | Atom::TruncRem(p, _) => {
            let ps = poly_sign_fast(p, s);
            // Truncation and C remainder keep the sign of the dividend or give 0.
            let mut r = ps;
            if !ps.is_empty() {
                r = r.union(SignSet::ZERO);
            }
            r
        }
    }
}

fn monomial_sign(m: &Monomial, s: Signs) -> SignSet {
    let mut r = SignSet::POS;
    for (a, e) in m.factors() {
        r = r.times(atom_sign(a, s).pow(*e));
    }
    r
}

/// Rule method only (thesis table), lifted to sets.
pub(crate) fn poly_sign_rules(p: &Poly, s: Signs) -> SignSet {
    let mut r = SignSet::ZERO;
    for (m, c) in p.terms() {
        r = r.plus(SignSet::of_rational(c).times(monomial_sign(m, s)));
        if r.is_top() {
            break;
        }
    }
    r
}

/// Integer bound method: a product known nonzero is at least 1 in absolute value, since all
/// atoms are integers; summing per-term bounds gives `a - 1 >= 0` for `a` in `{+}`.
pub(crate) fn poly_sign_bounds(p: &Poly, s: Signs) -> SignSet {
    // The constant term, if any, comes first (lowest degree).
    let (constant, rest) = match p.terms() {
        [(m, c), rest @ ..] if m.is_one() => (Some(c), rest),
        all => (None, all),
    };
    bounds_sign(
        constant,
        rest.iter().map(|(m, c)| (c, 1, monomial_sign(m, s))),
    )
}

/// The integer bound method on a sum `constant + sum(c * mult * m)` of non-constant products
/// given by coefficient, positive integer multiplier and sign of the product.
pub(crate) fn bounds_sign<'a>(
    constant: Option<&BigRational>,
    terms: impl Iterator<Item = (&'a BigRational, u64, SignSet)>,
) -> SignSet {
    let mut lo: Option<BigRational> = Some(constant.cloned().unwrap_or_default());
    let mut hi: Option<BigRational> = lo.clone();
    // x + c * mult * b for a bound b in {-1, 0, 1}.
    let step = |x: BigRational, c: &BigRational, mult: u64, b: i8| -> BigRational {
        if b == 0 {
            return x;
        }
        let cm;
        let c = if mult == 1 {
            c
        } else {
            cm = c * BigRational::from_integer(BigInt::from(mult));
            &cm
        };
        if b > 0 {
            coeff::add(&x, c)
        } else {
            coeff::sub(&x, c)
        }
    };
    for (c, mult, ms) in terms {
        // Bounds of the monomial value: (lower, upper), None = infinite.
        let (mlo, mhi): (Option<i8>, Option<i8>) = if ms == SignSet::ZERO {
            (Some(0), Some(0))
        } else if ms.is_subset(SignSet::POS) {
            (Some(1), None)
        } else if ms.is_subset(SignSet::NON_NEG) {
            (Some(0), None)
        } else if ms.is_subset(SignSet::NEG) {
            (None, Some(-1))
        } else if ms.is_subset(SignSet::NON_POS) {
            (None, Some(0))
        } else {
            (None, None)
        };
        let (tlo, thi) = if c.is_positive() {
            (mlo, mhi)
        } else {
            (mhi, mlo)
        };
        lo = match (lo, tlo) {
            (Some(x), Some(b)) => Some(step(x, c, mult, b)),
            _ => None,
        };
        hi = match (hi, thi) {
            (Some(x), Some(b)) => Some(step(x, c, mult, b)),
            _ => None,
        };
        if lo.is_none() && hi.is_none() {
            return SignSet::TOP;
        }
    }
    let mut r = SignSet::TOP;
    if let Some(l) = lo {
        if l.is_positive() {
            r = r.intersect(SignSet::POS);
        } else if l.is_zero() {
            r = r.intersect(SignSet::NON_NEG);
        }
    }
    if let Some(h) = hi {
        if h.is_negative() {
            r = r.intersect(SignSet::NEG);
        } else if h.is_zero() {
            r = r.intersect(SignSet::NON_POS);
        }
    }
    r
}

/// Rules and bounds together: cheap, never calls monotonicity (breaks the thesis' cycle).
pub(crate) fn poly_sign_fast(p: &Poly, s: Signs) -> SignSet {
    let r = poly_sign_rules(p, s);
    if r.is_empty() || r == SignSet::ZERO || r == SignSet::POS || r == SignSet::NEG {
        return r;
    }
    r.intersect(poly_sign_bounds(p, s))
}

/// The extreme integer value of a variable with sign set `s`: the minimum if `low`, else the maximum.
pub(crate) fn extreme(s: SignSet, low: bool) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    if low {
        if s.has_neg() {
            None
        } else if s.has_zero() {
            Some(0)
        } else {
            Some(1)
        }
    } else if s.has_pos() {
        None
    } else if s.has_zero() {
        Some(0)
    } else {
        Some(-1)
    }
}

/// Sign of an expression by the rule method only (thesis table lifted to sets).
pub fn sign_by_rules(e: &Expr, env: &SignEnv) -> SignSet {
    let s = Signs { env, extra: &[] };
    fold_minmax(e, |p| poly_sign_rules(p, s))
}

/// The sign of `e` from the sign `f` gives each of its polynomials.
pub(crate) fn fold_minmax(e: &Expr, f: impl Fn(&Poly) -> SignSet) -> SignSet {
    match e {
        Expr::Poly(p) => f(p),
        Expr::Max(ps) => ps
            .iter()
            .map(&f)
            .reduce(SignSet::max)
            .unwrap_or(SignSet::TOP),
        Expr::Min(ps) => ps
            .iter()
            .map(&f)
            .reduce(SignSet::min)
            .unwrap_or(SignSet::TOP),
    }
}
