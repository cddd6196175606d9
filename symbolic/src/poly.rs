//! Polynomials in normal form: sorted sums of sorted products with exact rational coefficients,
//! over atoms that are variables or integer division/remainder of a polynomial by a constant.

use crate::coeff;
use crate::error::{EvalError, SymError};
use crate::var::Var;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::sync::Arc;

/// Cap on the number of products in one polynomial.
pub const MAX_TERMS: usize = 256;
/// Cap on the number of pairwise products a multiplication may form before combining.
pub const MAX_PRODUCTS: usize = 4096;
/// Cap on the total degree of a product.
pub const MAX_DEGREE: u32 = 32;
/// Cap on the nesting depth of division/remainder atoms.
pub const MAX_DEPTH: usize = 8;

/// An indivisible factor of a product. All atoms are integer-valued when variables are.
///
/// Divisors are always integers `>= 2` (smaller ones are simplified away) and the inner
/// polynomial has integer coefficients with no common factor with the divisor.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Atom {
    /// A variable.
    Var(Var),
    /// C's `/`: `num / den` truncated toward zero.
    TruncDiv(Arc<Poly>, BigInt),
    /// C's `%`: `num - den * trunc(num / den)` (has the sign of `num`).
    TruncRem(Arc<Poly>, BigInt),
    /// Floor division `floor(num / den)`; equals C's `/` when `num >= 0`, and `num >> k` for `den = 2^k`.
    FloorDiv(Arc<Poly>, BigInt),
    /// Floor modulo `num - den * floor(num / den)`, always in `[0, den)`; equals `num & (den - 1)` for `den = 2^k`.
    FloorMod(Arc<Poly>, BigInt),
}

impl Atom {
    /// The dividend and divisor of a division/remainder atom.
    pub fn div_parts(&self) -> Option<(&Poly, &BigInt)> {
        match self {
            Atom::Var(_) => None,
            Atom::TruncDiv(p, d)
            | Atom::TruncRem(p, d)
            | Atom::FloorDiv(p, d)
            | Atom::FloorMod(p, d) => Some((p, d)),
        }
    }

    /// Nesting depth of division atoms (a variable has depth 0).
    pub fn depth(&self) -> usize {
        match self.div_parts() {
            None => 0,
            Some((p, _)) => 1 + p.depth(),
        }
    }

    /// Rebuild this atom (same kind and divisor) around a new dividend, simplifying.
    pub fn rebuild(&self, num: &Poly) -> Result<Poly, SymError> {
        match self {
            Atom::Var(v) => Ok(Poly::var(v.clone())),
            Atom::TruncDiv(_, d) => trunc_div(num, d),
            Atom::TruncRem(_, d) => trunc_rem(num, d),
            Atom::FloorDiv(_, d) => floor_div(num, d),
            Atom::FloorMod(_, d) => floor_mod(num, d),
        }
    }

    /// Whether `v` occurs in the atom (a variable, or inside a division).
    pub fn contains_var(&self, v: &Var) -> bool {
        match self {
            Atom::Var(w) => w == v,
            _ => self.div_parts().is_some_and(|(p, _)| p.contains_var(v)),
        }
    }
}

/// A product of atoms with exponents, sorted by atom; the empty product is 1.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Monomial(Arc<[(Atom, u32)]>);

impl PartialOrd for Monomial {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Monomial {
    fn cmp(&self, other: &Self) -> Ordering {
        // Shared monomials are common after cloning; skip the element walk for them.
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        // Lower degree first so the constant leads and linear terms come before products.
        self.degree()
            .cmp(&other.degree())
            .then_with(|| self.0.cmp(&other.0))
    }
}

impl Monomial {
    /// The empty product (value 1).
    pub fn one() -> Monomial {
        static ONE: std::sync::OnceLock<Monomial> = std::sync::OnceLock::new();
        ONE.get_or_init(|| Monomial(Arc::from(Vec::new()))).clone()
    }

    /// A single atom to the first power.
    pub fn atom(a: Atom) -> Monomial {
        Monomial(Arc::from(vec![(a, 1)]))
    }

    /// The factors with their exponents, sorted.
    pub fn factors(&self) -> &[(Atom, u32)] {
        &self.0
    }

    /// The product without its `k`-th factor (in [`Monomial::factors`] order).
    pub fn without_factor(&self, k: usize) -> Monomial {
        let mut rest = self.0.to_vec();
        rest.remove(k);
        Monomial(Arc::from(rest))
    }

    /// Whether this is the empty product.
    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// Total degree (sum of exponents).
    pub fn degree(&self) -> u32 {
        self.0.iter().map(|(_, e)| *e).sum()
    }

    /// Product of two monomials (sorted merge).
    pub fn mul(&self, other: &Monomial) -> Monomial {
        if self.is_one() {
            return other.clone();
        }
        if other.is_one() {
            return self.clone();
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                Ordering::Less => {
                    out.push(a[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(b[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    out.push((a[i].0.clone(), a[i].1.saturating_add(b[j].1)));
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        Monomial(Arc::from(out))
    }
}

/// A polynomial: a sorted list of (product, nonzero coefficient); zero is the empty list.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Poly {
    terms: Vec<(Monomial, BigRational)>,
}

fn rat(i: BigInt) -> BigRational {
    BigRational::from_integer(i)
}

impl Poly {
    /// The zero polynomial.
    pub fn zero() -> Poly {
        Poly { terms: Vec::new() }
    }

    /// A constant.
    pub fn constant(c: BigRational) -> Poly {
        if c.is_zero() {
            Poly::zero()
        } else {
            Poly {
                terms: vec![(Monomial::one(), c)],
            }
        }
    }

    /// An integer constant.
    pub fn int(c: i64) -> Poly {
        Poly::constant(rat(BigInt::from(c)))
    }

    /// A variable.
    pub fn var(v: Var) -> Poly {
        Poly::atom(Atom::Var(v))
    }

    /// A single atom.
    pub fn atom(a: Atom) -> Poly {
        Poly {
            terms: vec![(Monomial::atom(a), BigRational::one())],
        }
    }

    /// Builds a polynomial from unsorted terms (combining equal products).
    pub fn from_terms(mut terms: Vec<(Monomial, BigRational)>) -> Poly {
        terms.sort_by(|x, y| x.0.cmp(&y.0));
        let mut out: Vec<(Monomial, BigRational)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some(last) if last.0 == m => coeff::add_assign(&mut last.1, &c),
                _ => {
                    if let Some(last) = out.last() {
                        if last.1.is_zero() {
                            out.pop();
                        }
                    }
                    out.push((m, c));
                }
            }
        }
        if out.last().is_some_and(|l| l.1.is_zero()) {
            out.pop();
        }
        Poly { terms: out }.fuse_divmod()
    }

    /// The polynomial of the terms `keep` accepts (by position in [`Poly::terms`]): already
    /// sorted, distinct and nonzero, and with no quotient and remainder left to fuse, as
    /// part of a normal form; no sort or merge needed.
    pub fn retain_terms(&self, mut keep: impl FnMut(usize) -> bool) -> Poly {
        Poly {
            terms: self
                .terms
                .iter()
                .enumerate()
                .filter(|(k, _)| keep(*k))
                .map(|(_, t)| t.clone())
                .collect(),
        }
    }

    /// The products and coefficients, sorted by product (constant first).
    pub fn terms(&self) -> &[(Monomial, BigRational)] {
        &self.terms
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether this is a constant (including zero).
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty() || (self.terms.len() == 1 && self.terms[0].0.is_one())
    }

    /// The value if this is a constant.
    pub fn as_constant(&self) -> Option<BigRational> {
        match self.terms.as_slice() {
            [] => Some(BigRational::zero()),
            [(m, c)] if m.is_one() => Some(c.clone()),
            _ => None,
        }
    }

    /// The constant term (zero if none).
    pub fn constant_term(&self) -> BigRational {
        match self.terms.first() {
            Some((m, c)) if m.is_one() => c.clone(),
            _ => BigRational::zero(),
        }
    }

    /// The single variable if this polynomial is exactly `1*v`.
    pub fn as_var(&self) -> Option<&Var> {
        match self.terms.as_slice() {
            [(m, c)] if c.is_one() => match m.factors() {
                [(Atom::Var(v), 1)] => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// Highest total degree of a product (0 for constants).
    pub fn degree(&self) -> u32 {
        self.terms
            .iter()
            .map(|(m, _)| m.degree())
            .max()
            .unwrap_or(0)
    }

    /// Deepest nesting of division atoms.
    pub fn depth(&self) -> usize {
        self.terms
            .iter()
            .flat_map(|(m, _)| m.factors().iter().map(|(a, _)| a.depth()))
            .max()
            .unwrap_or(0)
    }

    /// Whether the polynomial is integer-valued for integer atoms, also inside atoms: all
    /// coefficients are integers, or the fractional ones make an exact division
    /// (`i*i/2 + i/2`).
    pub fn is_exact_integer(&self) -> bool {
        let atoms_exact = self.terms.iter().all(|(m, _)| {
            m.factors().iter().all(|(a, _)| {
                a.div_parts()
                    .map(|(p, _)| p.is_exact_integer())
                    .unwrap_or(true)
            })
        });
        atoms_exact
            && (self.terms.iter().all(|(_, c)| c.is_integer())
                || self.as_exact_quotient().is_some())
    }

    /// Whether `v` occurs anywhere (also inside atoms).
    pub fn contains_var(&self, v: &Var) -> bool {
        self.terms
            .iter()
            .any(|(m, _)| m.factors().iter().any(|(a, _)| a.contains_var(v)))
    }

    /// Collects all variables (also inside atoms).
    pub fn collect_vars(&self, out: &mut std::collections::BTreeSet<Var>) {
        for (m, _) in &self.terms {
            for (a, _) in m.factors() {
                match a {
                    Atom::Var(v) => {
                        out.insert(v.clone());
                    }
                    _ => {
                        if let Some((p, _)) = a.div_parts() {
                            p.collect_vars(out);
                        }
                    }
                }
            }
        }
    }

    /// Whether the polynomial is `c*v + r` with `c` a nonzero constant and `v` absent from `r`.
    pub fn is_linear_in(&self, v: &Var) -> bool {
        self.linear_coeff(v).is_some()
    }

    /// If the polynomial is `c*v + r` (`c` constant nonzero, `v` not in `r`), returns `(c, r)`.
    pub fn linear_coeff(&self, v: &Var) -> Option<(BigRational, Poly)> {
        let mut coeff = None;
        let mut rest = Vec::with_capacity(self.terms.len());
        for (m, c) in &self.terms {
            match m.factors() {
                [(Atom::Var(w), 1)] if w == v => coeff = Some(c.clone()),
                fs => {
                    if fs.iter().any(|(a, _)| a.contains_var(v)) {
                        return None;
                    }
                    rest.push((m.clone(), c.clone()));
                }
            }
        }
        coeff.map(|c| (c, Poly { terms: rest }))
    }

    /// Multiplies by a constant.
    pub fn scale(&self, k: &BigRational) -> Poly {
        if k.is_zero() {
            return Poly::zero();
        }
        if k.is_one() {
            return self.clone();
        }
        Poly {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), coeff::mul(c, k)))
                .collect(),
        }
    }

    /// Negation.
    pub fn neg(&self) -> Poly {
        Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), -c)).collect(),
        }
    }

    /// Sum (linear merge of the sorted term lists). Never fails; see [`Poly::checked_add`].
    pub fn add(&self, other: &Poly) -> Poly {
        if self.terms.is_empty() {
            return other.clone();
        }
        if other.terms.is_empty() {
            return self.clone();
        }
        self.merge(other, false)
    }

    /// Difference (the same as `self.add(&other.neg())`, without building the negation).
    pub fn sub(&self, other: &Poly) -> Poly {
        if other.terms.is_empty() {
            return self.clone();
        }
        if self.terms.is_empty() {
            return other.neg();
        }
        self.merge(other, true)
    }

    /// `self + other`, or `self - other` if `negate`: linear merge of the sorted term lists.
    fn merge(&self, other: &Poly, negate: bool) -> Poly {
        let (a, b) = (&self.terms, &other.terms);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        let take_b = |t: &(Monomial, BigRational)| {
            if negate {
                (t.0.clone(), -&t.1)
            } else {
                t.clone()
            }
        };
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                Ordering::Less => {
                    out.push(a[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(take_b(&b[j]));
                    j += 1;
                }
                Ordering::Equal => {
                    let c = if negate {
                        coeff::sub(&a[i].1, &b[j].1)
                    } else {
                        coeff::add(&a[i].1, &b[j].1)
                    };
                    if !c.is_zero() {
                        out.push((a[i].0.clone(), c));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend(b[j..].iter().map(take_b));
        Poly { terms: out }.fuse_divmod()
    }

    /// Sum, failing when the result exceeds [`MAX_TERMS`].
    pub fn checked_add(&self, other: &Poly) -> Result<Poly, SymError> {
        let r = self.add(other);
        if r.terms.len() > MAX_TERMS {
            return Err(SymError::TooLarge(format!("{} products", r.terms.len())));
        }
        Ok(r)
    }

    /// Product, failing past [`MAX_PRODUCTS`], [`MAX_TERMS`] or [`MAX_DEGREE`].
    pub fn checked_mul(&self, other: &Poly) -> Result<Poly, SymError> {
        if let Some(c) = self.as_constant() {
            return Ok(other.scale(&c));
        }
        if let Some(c) = other.as_constant() {
            return Ok(self.scale(&c));
        }
        let n = self.terms.len().saturating_mul(other.terms.len());
        if n > MAX_PRODUCTS {
            return Err(SymError::TooLarge(format!("{n} partial products")));
        }
        if self.degree().saturating_add(other.degree()) > MAX_DEGREE {
            return Err(SymError::TooLarge("degree".into()));
        }
        let mut v = Vec::with_capacity(n);
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                v.push((ma.mul(mb), coeff::mul(ca, cb)));
            }
        }
        let r = Poly::from_terms(v);
        if r.terms.len() > MAX_TERMS {
            return Err(SymError::TooLarge(format!("{} products", r.terms.len())));
        }
        Ok(r)
    }

    /// Power by repeated multiplication (capped).
    pub fn checked_pow(&self, e: u32) -> Result<Poly, SymError> {
        let mut r = Poly::int(1);
        for _ in 0..e {
            r = r.checked_mul(self)?;
        }
        Ok(r)
    }

    /// Replaces variables by polynomials (`f` returns `None` to keep a variable), resimplifying atoms.
    pub fn subst(&self, f: &dyn Fn(&Var) -> Option<Poly>) -> Result<Poly, SymError> {
        let mut kept = Vec::with_capacity(self.terms.len());
        let mut changed: Vec<Poly> = Vec::new();
        for (m, c) in &self.terms {
            let mut any = false;
            let mut vals = Vec::with_capacity(m.factors().len());
            for (a, e) in m.factors() {
                let v = subst_atom(a, f)?;
                any |= v.is_some();
                vals.push((a, v, *e));
            }
            if !any {
                kept.push((m.clone(), c.clone()));
                continue;
            }
            let mut prod = Poly::constant(c.clone());
            for (a, v, e) in vals {
                let base = v.unwrap_or_else(|| Poly::atom(a.clone()));
                prod = prod.checked_mul(&base.checked_pow(e)?)?;
            }
            changed.push(prod);
        }
        let mut r = Poly { terms: kept };
        for p in changed {
            r = r.checked_add(&p)?;
        }
        Ok(r)
    }

    /// `self` with every C division and remainder whose dividend `nonneg` says is never
    /// negative written as floor division and modulo, which are equal there. Floor atoms
    /// split multiples of the divisor out when variables are later substituted
    /// (`floor((32*w + 5)/4) = 8*w + 1`), which truncation cannot do without signs.
    pub fn truncs_to_floors(&self, nonneg: &dyn Fn(&Poly) -> bool) -> Result<Poly, SymError> {
        self.map_divisions(&|a, inner| match a {
            Atom::TruncDiv(_, d) if nonneg(inner) => Some(floor_div(inner, d)),
            Atom::TruncRem(_, d) if nonneg(inner) => Some(floor_mod(inner, d)),
            _ => None,
        })
    }

    /// `self` with every floor division and modulo whose dividend `nonneg` says is never
    /// negative written as C's `/` and `%`, which are equal there (by a positive divisor):
    /// the form C text prints, where floors have no operator. The inverse of
    /// [`Poly::truncs_to_floors`].
    pub fn floors_to_truncs(&self, nonneg: &dyn Fn(&Poly) -> bool) -> Result<Poly, SymError> {
        self.map_divisions(&|a, inner| match a {
            Atom::FloorDiv(p, d) if d.is_positive() && nonneg(p) => Some(trunc_div(inner, d)),
            Atom::FloorMod(p, d) if d.is_positive() && nonneg(p) => Some(trunc_rem(inner, d)),
            _ => None,
        })
    }

    /// `self` with each division or remainder atom, innermost first, replaced by what
    /// `convert` makes of it (given the atom and its dividend already converted), or rebuilt
    /// on the converted dividend where `convert` gives `None`.
    fn map_divisions(&self, convert: &DivisionRewrite) -> Result<Poly, SymError> {
        let mut r = Poly::zero();
        for (m, c) in &self.terms {
            let mut prod = Poly::constant(c.clone());
            for (a, e) in m.factors() {
                let converted = match a.div_parts() {
                    None => Poly::atom(a.clone()),
                    Some((p, _)) => {
                        let inner = p.map_divisions(convert)?;
                        match convert(a, &inner) {
                            Some(done) => done?,
                            None => a.rebuild(&inner)?,
                        }
                    }
                };
                prod = prod.checked_mul(&converted.checked_pow(*e)?)?;
            }
            r = r.checked_add(&prod)?;
        }
        Ok(r)
    }

    /// `self` with `v` replaced by `x` in `{-1, 0, 1}`: the same result as
    /// [`Poly::subst`] with that constant, computed without polynomial products. `None` when the
    /// shortcut does not apply (then `subst` must be used): `v` inside a division atom, a
    /// remainder atom that could fuse, a product of degree over [`MAX_DEGREE`], or more than
    /// [`MAX_TERMS`] products.
    pub(crate) fn subst_unit(&self, v: &Var, x: i64) -> Option<Poly> {
        if !(-1..=1).contains(&x) || self.terms.len() > MAX_TERMS {
            return None;
        }
        let mut out: Vec<(Monomial, BigRational)> = Vec::with_capacity(self.terms.len());
        let mut changed = false;
        for (m, c) in &self.terms {
            let mut pos = None;
            for (k, (a, e)) in m.factors().iter().enumerate() {
                match a {
                    Atom::Var(w) if w == v => pos = Some((k, *e)),
                    Atom::Var(_) => {}
                    _ => {
                        if a.div_parts().is_some_and(|(p, _)| p.contains_var(v)) {
                            return None;
                        }
                    }
                }
            }
            let nm = match pos {
                None => m.clone(),
                Some((k, e)) => {
                    changed = true;
                    if m.degree() > MAX_DEGREE {
                        return None;
                    }
                    if x == 0 {
                        continue;
                    }
                    let fs: Vec<(Atom, u32)> = m
                        .factors()
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != k)
                        .map(|(_, f)| f.clone())
                        .collect();
                    let nc = if x == -1 && e % 2 == 1 { -c } else { c.clone() };
                    out.push((Monomial(Arc::from(fs)), nc));
                    continue;
                }
            };
            out.push((nm, c.clone()));
        }
        // A single remainder atom could fuse with its division partner along the way.
        if out.iter().any(|(m, _)| is_rem_monomial(m)) {
            return None;
        }
        if !changed {
            return Some(self.clone());
        }
        Some(Poly::from_terms_raw(out))
    }

    /// Whether some product is a single remainder atom (so [`Poly::fuse_divmod`] may apply).
    pub(crate) fn has_rem_term(&self) -> bool {
        self.has_rem_atom()
    }

    /// Replaces whole top-level atoms (not descending into division atoms).
    pub fn replace_atoms(&self, f: &dyn Fn(&Atom) -> Option<Poly>) -> Result<Poly, SymError> {
        let mut kept = Vec::with_capacity(self.terms.len());
        let mut changed: Vec<Poly> = Vec::new();
        for (m, c) in &self.terms {
            let vals: Vec<_> = m.factors().iter().map(|(a, e)| (a, f(a), *e)).collect();
            if vals.iter().all(|(_, v, _)| v.is_none()) {
                kept.push((m.clone(), c.clone()));
                continue;
            }
            let mut prod = Poly::constant(c.clone());
            for (a, v, e) in vals {
                let base = v.unwrap_or_else(|| Poly::atom(a.clone()));
                prod = prod.checked_mul(&base.checked_pow(e)?)?;
            }
            changed.push(prod);
        }
        let mut r = Poly { terms: kept };
        for p in changed {
            r = r.checked_add(&p)?;
        }
        Ok(r)
    }

    /// Exact value given values of the variables.
    pub fn eval(
        &self,
        ctx: &dyn Fn(&Var) -> Option<BigRational>,
    ) -> Result<BigRational, EvalError> {
        let mut sum = BigRational::zero();
        for (m, c) in &self.terms {
            let mut prod = c.clone();
            for (a, e) in m.factors() {
                let v = eval_atom(a, ctx)?;
                prod *= num_traits::pow::pow(v, *e as usize);
            }
            sum += prod;
        }
        Ok(sum)
    }

    /// Whether some top-level product contains a remainder atom (cheap pre-check for fusing).
    fn has_rem_atom(&self) -> bool {
        self.terms.iter().any(|(m, _)| is_rem_monomial(m))
    }

    /// Rewrites `c*d*div(N, d) + c*rem(N, d)` into `c*N` (`N = d*(N/d) + N%d`, for both floor and C flavours).
    fn fuse_divmod(self) -> Poly {
        if !self.has_rem_atom() {
            return self;
        }
        let mut p = self;
        for _ in 0..MAX_DEPTH {
            let mut found = None;
            for (m, c) in &p.terms {
                let partner = match m.factors() {
                    [(Atom::FloorMod(n, d), 1)] => Atom::FloorDiv(n.clone(), d.clone()),
                    [(Atom::TruncRem(n, d), 1)] => Atom::TruncDiv(n.clone(), d.clone()),
                    _ => continue,
                };
                let want = c * rat(partner.div_parts().map(|x| x.1.clone()).unwrap_or_default());
                let pm = Monomial::atom(partner);
                if let Ok(k) = p.terms.binary_search_by(|t| t.0.cmp(&pm)) {
                    if p.terms[k].1 == want {
                        found = Some((m.clone(), pm, c.clone()));
                        break;
                    }
                }
            }
            let Some((rm, dm, c)) = found else { break };
            let n = match rm.factors() {
                [(a, _)] => a.div_parts().map(|x| x.0.clone()).unwrap_or_default(),
                _ => break,
            };
            let mut terms: Vec<_> = p
                .terms
                .into_iter()
                .filter(|t| t.0 != rm && t.0 != dm)
                .collect();
            terms.extend(n.scale(&c).terms);
            p = Poly::from_terms_raw(terms);
        }
        p
    }

    fn from_terms_raw(mut terms: Vec<(Monomial, BigRational)>) -> Poly {
        terms.sort_by(|x, y| x.0.cmp(&y.0));
        let mut out: Vec<(Monomial, BigRational)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some(last) if last.0 == m => coeff::add_assign(&mut last.1, &c),
                _ => out.push((m, c)),
            }
        }
        out.retain(|t| !t.1.is_zero());
        Poly { terms: out }
    }

    /// Integer content: gcd of the (integer) coefficients; zero for the zero polynomial.
    fn int_content(&self) -> BigInt {
        let mut g = BigInt::zero();
        for (_, c) in &self.terms {
            g = g.gcd(c.numer());
            if g.is_one() {
                break;
            }
        }
        g
    }

    /// `(numerator, denominator)` when some coefficient is fractional but every integer
    /// value of the atoms gives an integer (`i*i/2 + i/2`): the polynomial is the exact
    /// division `numerator / denominator`.
    pub fn as_exact_quotient(&self) -> Option<(Poly, BigInt)> {
        let (n, l) = self.integerize();
        (!l.is_one() && divisible_everywhere(&n, &l)).then_some((n, l))
    }

    /// Scales to integer coefficients: returns `(self * l, l)` with `l > 0` the lcm of denominators.
    fn integerize(&self) -> (Poly, BigInt) {
        let mut l = BigInt::one();
        for (_, c) in &self.terms {
            if !c.denom().is_one() {
                l = l.lcm(c.denom());
            }
        }
        if l.is_one() {
            (self.clone(), l)
        } else {
            (self.scale(&rat(l.clone())), l)
        }
    }

    /// Divides every (integer) coefficient by `g` (which must divide them all).
    fn div_exact_int(&self, g: &BigInt) -> Poly {
        if g.is_one() {
            return self.clone();
        }
        let gr = rat(g.clone());
        Poly {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), c / &gr))
                .collect(),
        }
    }
}

/// Whether a product is a single remainder atom to the first power.
fn is_rem_monomial(m: &Monomial) -> bool {
    matches!(
        m.factors(),
        [(Atom::FloorMod(..), 1)] | [(Atom::TruncRem(..), 1)]
    )
}

fn subst_atom(a: &Atom, f: &dyn Fn(&Var) -> Option<Poly>) -> Result<Option<Poly>, SymError> {
    match a {
        Atom::Var(v) => Ok(f(v)),
        _ => {
            let Some((p, _)) = a.div_parts() else {
                return Ok(None);
            };
            let np = p.subst(f)?;
            if &np == p {
                Ok(None)
            } else {
                a.rebuild(&np).map(Some)
            }
        }
    }
}

fn eval_atom(
    a: &Atom,
    ctx: &dyn Fn(&Var) -> Option<BigRational>,
) -> Result<BigRational, EvalError> {
    match a {
        Atom::Var(v) => ctx(v).ok_or_else(|| EvalError::UnboundVar(v.name().to_string())),
        Atom::TruncDiv(p, d) => Ok((p.eval(ctx)? / rat(d.clone())).trunc()),
        Atom::FloorDiv(p, d) => Ok((p.eval(ctx)? / rat(d.clone())).floor()),
        Atom::TruncRem(p, d) => {
            let x = p.eval(ctx)?;
            let dr = rat(d.clone());
            let q = (&x / &dr).trunc();
            Ok(x - dr * q)
        }
        Atom::FloorMod(p, d) => {
            let x = p.eval(ctx)?;
            let dr = rat(d.clone());
            let q = (&x / &dr).floor();
            Ok(x - dr * q)
        }
    }
}

fn check_depth(p: &Poly) -> Result<(), SymError> {
    if p.depth() >= MAX_DEPTH {
        Err(SymError::TooLarge("division nesting".into()))
    } else {
        Ok(())
    }
}

/// Most residue assignments [`divisible_everywhere`] evaluates before it gives up.
const MAX_RESIDUE_CASES: u64 = 4096;

/// Whether the integer polynomial `n` is a multiple of `d` for every integer value of its
/// atoms (`i*(2*n - i - 1)` of 2): then `n / d` is exact, and C's truncation and the floor
/// agree with the rational quotient. `n mod d` depends only on the atoms' residues mod `d`,
/// so trying every residue assignment decides it; past [`MAX_RESIDUE_CASES`] assignments
/// the answer is a conservative `false`.
pub(crate) fn divisible_everywhere(n: &Poly, d: &BigInt) -> bool {
    if n.terms.iter().any(|(_, c)| !c.is_integer()) {
        return false;
    }
    let Some(modulus) = d.to_u64().filter(|&m| m >= 2) else {
        return false;
    };
    let mut atoms: Vec<&Atom> = Vec::new();
    for (m, _) in &n.terms {
        for (a, _) in m.factors() {
            if !atoms.contains(&a) {
                atoms.push(a);
            }
        }
    }
    let Some(cases) = u32::try_from(atoms.len())
        .ok()
        .and_then(|k| modulus.checked_pow(k))
        .filter(|&c| c <= MAX_RESIDUE_CASES)
    else {
        return false;
    };
    let terms: Vec<(BigInt, Vec<(usize, u32)>)> = n
        .terms
        .iter()
        .map(|(m, c)| {
            let factors = m
                .factors()
                .iter()
                .map(|(a, e)| (atoms.iter().position(|x| *x == a).unwrap_or(0), *e))
                .collect();
            (c.to_integer().mod_floor(d), factors)
        })
        .collect();
    let mut residues = vec![0u64; atoms.len()];
    for case in 0..cases {
        let mut rest = case;
        for r in residues.iter_mut() {
            *r = rest % modulus;
            rest /= modulus;
        }
        let mut sum = BigInt::zero();
        for (c, factors) in &terms {
            let mut product = c.clone();
            for &(atom, e) in factors {
                product = (product * BigInt::from(residues[atom]).pow(e)).mod_floor(d);
            }
            sum += product;
        }
        if !sum.mod_floor(d).is_zero() {
            return false;
        }
    }
    true
}

/// `floor(p / k)`, simplified: common factors cancel, and multiples of `k` leave the atom
/// (`floor((e + k*m)/k) = floor(e/k) + m`), so dividend coefficients end up in `[0, k)`.
pub fn floor_div(p: &Poly, k: &BigInt) -> Result<Poly, SymError> {
    if k.is_zero() {
        return Err(SymError::DivisionByZero);
    }
    if k.is_negative() {
        // floor(p / -k) = floor(-p / k)
        return floor_div(&p.neg(), &-k);
    }
    check_depth(p)?;
    let (mut n, l) = p.integerize();
    let mut d = k * l;
    let mut quotient = Vec::new();
    loop {
        let g = n.int_content().gcd(&d);
        if !g.is_one() && !g.is_zero() {
            n = n.div_exact_int(&g);
            d /= &g;
        }
        if d.is_one() {
            quotient.extend(n.terms);
            return Ok(Poly::from_terms(quotient));
        }
        let mut rest = Vec::new();
        let mut changed = false;
        for (m, c) in n.terms {
            let (q, r) = c.numer().div_mod_floor(&d);
            if !q.is_zero() {
                changed = true;
                quotient.push((m.clone(), rat(q)));
            }
            if !r.is_zero() {
                rest.push((m, rat(r)));
            }
        }
        n = Poly { terms: rest };
        if n.is_constant() {
            // 0 <= constant < d, so its floor quotient is 0.
            return Ok(Poly::from_terms(quotient));
        }
        if !changed && n.int_content().gcd(&d).is_one() {
            break;
        }
    }
    if divisible_everywhere(&n, &d) {
        quotient.extend(n.scale(&BigRational::new(BigInt::one(), d)).terms);
        return Ok(Poly::from_terms(quotient));
    }
    quotient.push((
        Monomial::atom(Atom::FloorDiv(Arc::new(n), d)),
        BigRational::one(),
    ));
    Ok(Poly::from_terms(quotient))
}

/// `p mod k` with the floor convention (result in `[0, k)` for `k > 0`, in `(k, 0]` for `k < 0`).
pub fn floor_mod(p: &Poly, k: &BigInt) -> Result<Poly, SymError> {
    if k.is_zero() {
        return Err(SymError::DivisionByZero);
    }
    if k.is_negative() {
        // x mod -k = -((-x) mod k) under the floor convention.
        return Ok(floor_mod(&p.neg(), &-k)?.neg());
    }
    check_depth(p)?;
    let (mut n, l) = p.integerize();
    let mut d = k * &l;
    let mut factor = BigInt::one();
    loop {
        // (e + d*m) mod d = e mod d
        let mut rest = Vec::new();
        for (m, c) in n.terms {
            let r = c.numer().mod_floor(&d);
            if !r.is_zero() {
                rest.push((m, rat(r)));
            }
        }
        n = Poly { terms: rest };
        // (g*e) mod (g*d) = g * (e mod d)
        let g = n.int_content().gcd(&d);
        if g.is_zero() || n.is_zero() {
            return Ok(Poly::zero());
        }
        if g.is_one() {
            break;
        }
        n = n.div_exact_int(&g);
        d /= &g;
        factor *= &g;
        if d.is_one() {
            return Ok(Poly::zero());
        }
    }
    let scale = BigRational::new(factor, l);
    if let Some(c) = n.as_constant() {
        return Ok(Poly::constant(c * scale));
    }
    Ok(Poly::atom(Atom::FloorMod(Arc::new(n), d)).scale(&scale))
}

/// What [`Poly::map_divisions`] makes of a division or remainder atom, given its dividend
/// already converted: a replacement, or `None` to keep the atom.
type DivisionRewrite<'a> = dyn Fn(&Atom, &Poly) -> Option<Result<Poly, SymError>> + 'a;

/// C's `p / k` (truncation toward zero), simplified by cancelling common factors; exact
/// divisions disappear (`(k*e)/k = e`).
pub fn trunc_div(p: &Poly, k: &BigInt) -> Result<Poly, SymError> {
    if k.is_zero() {
        return Err(SymError::DivisionByZero);
    }
    if k.is_negative() {
        // C: a / -k == -(a / k) since truncation is symmetric.
        return Ok(trunc_div(p, &-k)?.neg());
    }
    check_depth(p)?;
    let (n, l) = p.integerize();
    let d = k * l;
    let g = n.int_content().gcd(&d);
    if g.is_zero() {
        return Ok(Poly::zero());
    }
    let n = n.div_exact_int(&g);
    let d = d / g;
    if d.is_one() {
        return Ok(n);
    }
    if let Some(c) = n.as_constant() {
        return Ok(Poly::constant((c / rat(d)).trunc()));
    }
    // An exact division (`i*(i + 1) / 2`) is the rational polynomial itself: no atom, so
    // the dependence and range tests see through it.
    if divisible_everywhere(&n, &d) {
        return Ok(n.scale(&BigRational::new(BigInt::one(), d)));
    }
    Ok(Poly::atom(Atom::TruncDiv(Arc::new(n), d)))
}

/// C's `p % k` (sign of `p`; the sign of `k` does not matter).
pub fn trunc_rem(p: &Poly, k: &BigInt) -> Result<Poly, SymError> {
    if k.is_zero() {
        return Err(SymError::DivisionByZero);
    }
    check_depth(p)?;
    let k = k.abs();
    let (n, l) = p.integerize();
    let d = k * &l;
    let g = n.int_content().gcd(&d);
    if g.is_zero() {
        return Ok(Poly::zero());
    }
    let n = n.div_exact_int(&g);
    let d = d / &g;
    if d.is_one() {
        return Ok(Poly::zero());
    }
    let scale = BigRational::new(g, l);
    if let Some(c) = n.as_constant() {
        let ci = c.to_integer();
        return Ok(Poly::constant(rat(ci % d) * scale));
    }
    Ok(Poly::atom(Atom::TruncRem(Arc::new(n), d)).scale(&scale))
}
