//! The expression type: a polynomial, or a flat `min`/`max` of polynomials at the top level
//! only; with what needs no comparison (constructors, parts, negation, evaluation).
//! Arithmetic, which keeps a `min`/`max` in normal form by comparing its operands, is in
//! `arith`, above `compare` and the signs, which take expressions from here.

use crate::error::EvalError;
use crate::poly::Poly;
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::{BTreeSet, HashMap};

/// Largest shift amount accepted by [`Expr::shl`]/[`Expr::shr`] (C shifts past the width are UB anyway).
pub const MAX_SHIFT: u32 = 1024;
/// Largest number of operands of a top-level `min`/`max`.
pub const MAX_MINMAX: usize = 64;

/// A symbolic expression in normal form.
///
/// * `Poly`: a sum of products with exact rational coefficients (see [`Poly`]).
/// * `Min`/`Max`: at least two polynomials, sorted, pairwise incomparable (as far as the
///   environment used to build them can tell); never nested.
///
/// Variables denote integers. Coefficients are rational: a non-integer coefficient only comes
/// from [`Expr::div_const`] (division in Q, the thesis' semantics); C's integer `/` and `%`
/// are atoms ([`Atom`](crate::poly::Atom)), so [`Expr::is_exact_integer`] tells whether a
/// result models C exactly.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Expr {
    /// A polynomial.
    Poly(Poly),
    /// `min` of at least two incomparable polynomials.
    Min(Vec<Poly>),
    /// `max` of at least two incomparable polynomials.
    Max(Vec<Poly>),
}

impl Default for Expr {
    fn default() -> Expr {
        Expr::Poly(Poly::zero())
    }
}

impl From<Poly> for Expr {
    fn from(p: Poly) -> Expr {
        Expr::Poly(p)
    }
}

impl From<Var> for Expr {
    fn from(v: Var) -> Expr {
        Expr::Poly(Poly::var(v))
    }
}

impl Expr {
    /// An integer constant.
    pub fn constant(c: i64) -> Expr {
        Expr::Poly(Poly::int(c))
    }

    /// A big integer constant.
    pub fn integer(c: BigInt) -> Expr {
        Expr::Poly(Poly::constant(BigRational::from_integer(c)))
    }

    /// A rational constant.
    pub fn rational(c: BigRational) -> Expr {
        Expr::Poly(Poly::constant(c))
    }

    /// A variable, by name (interned).
    pub fn var(name: &str) -> Expr {
        Expr::Poly(Poly::var(Var::new(name)))
    }

    /// The polynomial, if this is not a min/max.
    pub fn as_poly(&self) -> Option<&Poly> {
        match self {
            Expr::Poly(p) => Some(p),
            _ => None,
        }
    }

    /// The value if this is a constant.
    pub fn as_constant(&self) -> Option<BigRational> {
        self.as_poly().and_then(Poly::as_constant)
    }

    /// The integer value if this is an integer constant.
    pub fn as_integer(&self) -> Option<BigInt> {
        self.as_constant()
            .filter(|c| c.is_integer())
            .map(|c| c.to_integer())
    }

    /// The polynomials of this expression (one for `Poly`).
    pub fn parts(&self) -> &[Poly] {
        match self {
            Expr::Poly(p) => std::slice::from_ref(p),
            Expr::Min(ps) | Expr::Max(ps) => ps,
        }
    }

    /// Whether all coefficients are integers, i.e. the value at integer points is the C value
    /// with no rounding lost to rational arithmetic.
    pub fn is_exact_integer(&self) -> bool {
        self.parts().iter().all(Poly::is_exact_integer)
    }

    /// All variables, sorted by name.
    pub fn vars(&self) -> BTreeSet<Var> {
        let mut s = BTreeSet::new();
        for p in self.parts() {
            p.collect_vars(&mut s);
        }
        s
    }

    /// Whether `v` occurs anywhere in the expression, without collecting the others
    /// (`vars().contains(v)` built an ordered set of every name for one question).
    pub fn contains_var(&self, v: &Var) -> bool {
        self.parts().iter().any(|p| p.contains_var(v))
    }

    /// Whether this is a polynomial `c*v + r` with `c` a nonzero constant and `v` not in `r`.
    pub fn is_linear_in(&self, v: &Var) -> bool {
        self.as_poly().is_some_and(|p| p.is_linear_in(v))
    }

    /// Highest total degree of a product.
    pub fn degree(&self) -> u32 {
        self.parts().iter().map(Poly::degree).max().unwrap_or(0)
    }

    /// Total number of products (a size measure).
    pub fn size(&self) -> usize {
        self.parts().iter().map(|p| p.terms().len()).sum()
    }

    /// Negation (`-max(a, b) = min(-a, -b)`).
    pub fn neg(&self) -> Expr {
        match self {
            Expr::Poly(p) => Expr::Poly(p.neg()),
            Expr::Max(ps) => Expr::Min(sorted(ps.iter().map(Poly::neg).collect())),
            Expr::Min(ps) => Expr::Max(sorted(ps.iter().map(Poly::neg).collect())),
        }
    }

    /// Exact value in a context of variable values.
    pub fn eval(&self, ctx: &HashMap<Var, BigRational>) -> Result<BigRational, EvalError> {
        self.eval_with(&|v| ctx.get(v).cloned())
    }

    /// Exact value with variable values given by a function.
    pub fn eval_with(
        &self,
        ctx: &dyn Fn(&Var) -> Option<BigRational>,
    ) -> Result<BigRational, EvalError> {
        let mut vals = self.parts().iter().map(|p| p.eval(ctx));
        let first = vals.next().unwrap_or_else(|| Ok(BigRational::zero()))?;
        vals.try_fold(first, |acc, v| {
            let v = v?;
            Ok(match self {
                Expr::Min(_) => acc.min(v),
                _ => acc.max(v),
            })
        })
    }
}

fn sorted(mut v: Vec<Poly>) -> Vec<Poly> {
    v.sort();
    v
}
impl std::ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(self)
    }
}

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(&self)
    }
}
