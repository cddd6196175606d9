//! The report's byte sections as OpenMP array sections: `a[lo:len]` in elements for flat
//! arrays, whole rows (`A[r0:rows]`) for arrays of arrays. The arithmetic is done
//! symbolically where it is exact (`8*ni*nk` bytes of rows of `8*nk` bytes are `ni` rows)
//! and left to C's integer division otherwise.

use crate::ctext::rewrite_expr;
use advisor::model::Quantity;
use num_rational::BigRational;
use num_traits::{One, Zero};
use symbolic::{Atom, Expr, Var};

/// `[start:length]` of an array section, in the program's variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub start: Quantity,
    pub length: Quantity,
}

impl Section {
    pub fn render(&self, name: &str) -> String {
        format!("{name}[{}:{}]", c(&self.start), c(&self.length))
    }
}

/// The elements `[lo/unit, hi/unit)` when both bounds are multiples of `unit` bytes (an
/// element or a row), else the units that cover `[lo, hi)`: `floor(lo/unit)` up to
/// `ceil(hi/unit)`.
pub fn covering(lo: &Quantity, hi: &Quantity, unit: &Quantity) -> Section {
    let u = constant(unit).filter(|u| *u > 0);
    let start = exact_div(lo, unit)
        .or_else(|| {
            let (l, u) = (constant(lo)?, u?);
            (l >= 0).then(|| Quantity::constant(l / u))
        })
        .unwrap_or_else(|| Quantity::c_text(format!("({}) / ({})", c(lo), c(unit))));
    let end = exact_div(hi, unit)
        .or_else(|| {
            let (h, u) = (constant(hi)?, u?);
            (h >= 0).then(|| Quantity::constant((h + u - 1) / u))
        })
        .unwrap_or_else(|| {
            // Rounded up: `(8*n + 3 + 7) / 8` is `(8*n + 10) / 8`; C's division by a value
            // the engine does not hold as a constant stays C text.
            let rounded = hi.expr().zip(unit.expr()).and_then(|(h, u)| {
                let k = u.as_integer().filter(|k| *k > 0.into())?;
                let s = h
                    .checked_add(u)
                    .ok()?
                    .checked_sub(&Expr::constant(1))
                    .ok()?;
                s.c_div(&k).ok()
            });
            match rounded {
                Some(e) => Quantity::of(&e),
                None => {
                    Quantity::c_text(format!("(({}) + ({}) - 1) / ({})", c(hi), c(unit), c(unit)))
                }
            }
        });
    Section {
        length: difference(&end, &start),
        start,
    }
}

/// The smallest section holding both `a` and `b` (of the same array, in the same unit):
/// from the lower start to the higher end, chosen symbolically when the two differ by a
/// constant, else by `WW_MIN`/`WW_MAX` at run time.
pub fn union(a: &Section, b: &Section) -> Section {
    if a == b {
        return a.clone();
    }
    let end = |s: &Section| sum(&s.start, &s.length);
    let (end_a, end_b) = (end(a), end(b));
    let start = extreme(&a.start, &b.start, false);
    let end = extreme(&end_a, &end_b, true);
    Section {
        length: difference(&end, &start),
        start,
    }
}

/// The byte range `[lo, hi)` holding both `[lo_a, hi_a)` and `[lo_b, hi_b)` (`min`/`max`
/// allowed): the symbolic getMin/getMax where it decides, else `min(..)`/`max(..)` left to
/// run time.
pub fn union_bytes(a: (&Quantity, &Quantity), b: (&Quantity, &Quantity)) -> (Quantity, Quantity) {
    let pick = |x: &Quantity, y: &Quantity, max: bool| -> Quantity {
        if x == y {
            return x.clone();
        }
        let word = if max { "max" } else { "min" };
        match constant_difference(x, y) {
            Some(d) if (d > BigRational::zero()) == max => x.clone(),
            Some(_) => y.clone(),
            // Decided only when the two differ by a constant: the variables' signs are not
            // known here (a size may be anything when the loop does not run).
            None => match (x.expr(), y.expr()) {
                (Some(ex), Some(ey)) => {
                    let parts = ex.parts().iter().chain(ey.parts()).cloned().collect();
                    let both = if max {
                        Expr::Max(parts)
                    } else {
                        Expr::Min(parts)
                    };
                    Quantity::of(&both)
                }
                _ => Quantity::c_text(format!("{word}({x}, {y})")),
            },
        }
    };
    (pick(a.0, b.0, false), pick(a.1, b.1, true))
}

/// `x - y` when it is a constant.
fn constant_difference(x: &Quantity, y: &Quantity) -> Option<BigRational> {
    let (x, y) = (x.expr()?, y.expr()?);
    x.checked_sub(y).ok()?.as_constant()
}

/// `a + b`, simplified when both are expressions.
fn sum(a: &Quantity, b: &Quantity) -> Quantity {
    match (a.expr(), b.expr()) {
        (Some(x), Some(y)) => match x.checked_add(y) {
            Ok(s) => Quantity::of(&s),
            Err(_) => Quantity::c_text(format!("({}) + ({})", c(a), c(b))),
        },
        _ => Quantity::c_text(format!("({}) + ({})", c(a), c(b))),
    }
}

/// The larger (`max`) or smaller of two bounds: one of them when their difference is a
/// constant, else the helper macro.
fn extreme(a: &Quantity, b: &Quantity, max: bool) -> Quantity {
    if a == b {
        return a.clone();
    }
    match constant_difference(a, b) {
        Some(d) => {
            let a_larger = d > BigRational::zero();
            if a_larger == max {
                a.clone()
            } else {
                b.clone()
            }
        }
        None => Quantity::c_text(format!(
            "{}({}, {})",
            if max { "WW_MAX" } else { "WW_MIN" },
            c(a),
            c(b)
        )),
    }
}

fn constant(q: &Quantity) -> Option<i64> {
    q.expr()?.as_integer()?.try_into().ok()
}

/// Whether no product of `p` is negative for non-negative variables: every coefficient is
/// non-negative, and every division or remainder by a positive constant `d` is not negative
/// either: C's division of such a polynomial plus a constant above `-d` (`(480*n - 1) /
/// 480` truncates to 0 at `n = 0`; `(n - 20000) / 16384` is `-1`), a floor division or a
/// C remainder of such a polynomial, any floor modulo.
fn no_negative_term(p: &symbolic::Poly) -> bool {
    let positive = |d: &num_bigint::BigInt| *d > 0.into();
    p.terms().iter().all(|(m, k)| {
        *k >= BigRational::zero()
            && m.factors().iter().all(|(a, _)| match a {
                Atom::Var(_) => true,
                Atom::TruncDiv(inner, d) => positive(d) && above(inner, d),
                Atom::TruncRem(inner, d) | Atom::FloorDiv(inner, d) => {
                    positive(d) && no_negative_term(inner)
                }
                Atom::FloorMod(_, d) => positive(d),
            })
    })
}

/// Whether `p` is a polynomial with no negative product plus a constant above `-d`.
fn above(p: &symbolic::Poly, d: &num_bigint::BigInt) -> bool {
    let floor = BigRational::from_integer(-d.clone());
    p.terms().iter().all(|(m, k)| {
        if m.factors().is_empty() {
            *k > floor
        } else {
            no_negative_term(&symbolic::Poly::from_terms(vec![(m.clone(), k.clone())]))
        }
    })
}

/// A section's length `a - b`. The sections hold when the loop runs; the clause is
/// evaluated when it does not as well, where `hi - lo` may be negative (`x[1:n - 1]` with
/// `n = 0`, an empty clamped window `MIN(hi, n) - MAX(lo, 0)`), which OpenMP rejects: a
/// length that may be negative is `WW_MAX(0, ...)`. One whose terms are all non-negative
/// (`n`, `ni*nk`) is left as it is: a negative size is no loop's.
fn difference(a: &Quantity, b: &Quantity) -> Quantity {
    let guarded = |text: String| Quantity::c_text(format!("WW_MAX(0, {text})"));
    match (a.expr(), b.expr()) {
        (Some(x), Some(y)) => match x.checked_sub(y) {
            // A difference of a min and a max is a min of every pairwise difference
            // (`min(hi, n) - max(0, lo)` has four): the two as written read better.
            Ok(d) if d.parts().len() > x.parts().len().max(y.parts().len()) => {
                guarded(format!("({}) - ({})", c(a), c(b)))
            }
            Ok(d) => {
                let non_negative = match &d {
                    Expr::Poly(p) => no_negative_term(p),
                    Expr::Min(ps) | Expr::Max(ps) => ps.iter().all(no_negative_term),
                };
                if non_negative {
                    Quantity::of(&d)
                } else {
                    guarded(c(&d.to_c()))
                }
            }
            Err(_) => guarded(format!("({}) - ({})", c(a), c(b))),
        },
        // C text the engine does not hold (`WW_MIN(...)`, a call, a division by a
        // variable): guarded unless nothing in it subtracts but the rounding up of
        // `covering`.
        _ if b == &"0" && !a.replace(") - 1) / (", "").contains('-') => a.clone(),
        _ if b == &"0" => guarded(c(a)),
        _ => guarded(format!("({}) - ({})", c(a), c(b))),
    }
}

/// `value / unit` when it divides exactly as polynomials: by a constant, or by
/// `k*v` for one variable `v` that `value` is linear in with no term free of `v`.
pub fn exact_div(value: &Quantity, unit: &Quantity) -> Option<Quantity> {
    let (value, unit) = (value.expr()?, unit.expr()?);
    if let Some(k) = unit.as_constant() {
        return by_constant(value, &k);
    }
    // unit = k*v
    let vars = unit.vars();
    let [v] = vars.iter().collect::<Vec<&Var>>()[..] else {
        return None;
    };
    let at = |x: i64| -> Option<Expr> {
        let map = [(v.clone(), Expr::constant(x))].into_iter().collect();
        unit.substitute(&map).ok()
    };
    // unit linear and homogeneous in v: unit(0) = 0, k = unit(1).
    if !unit.is_linear_in(v) || !at(0)?.as_constant()?.is_zero() {
        return None;
    }
    let k = at(1)?.as_constant()?;
    if value.as_constant().is_some_and(|c| c.is_zero()) {
        return Some(Quantity::constant(0));
    }
    // Every product of value holds v exactly once: value = v * value(v = 1).
    let poly = value.as_poly()?;
    let once = poly.terms().iter().all(|(m, _)| {
        m.factors()
            .iter()
            .filter(|(a, _)| a_mentions(a, v))
            .map(|(a, e)| matches!(a, Atom::Var(x) if x == v).then_some(*e))
            .collect::<Option<Vec<u32>>>()
            .is_some_and(|es| es == [1])
    });
    if !once {
        return None;
    }
    let map1 = [(v.clone(), Expr::constant(1))].into_iter().collect();
    let q = value.substitute(&map1).ok()?;
    by_constant(&q, &k)
}

/// Whether an atom reads `v` (itself, or inside a division or remainder).
fn a_mentions(a: &Atom, v: &Var) -> bool {
    match a {
        Atom::Var(x) => x == v,
        Atom::TruncDiv(p, _)
        | Atom::TruncRem(p, _)
        | Atom::FloorDiv(p, _)
        | Atom::FloorMod(p, _) => {
            let mut vars = std::collections::BTreeSet::new();
            p.collect_vars(&mut vars);
            vars.contains(v)
        }
    }
}

fn by_constant(value: &Expr, k: &BigRational) -> Option<Quantity> {
    if k.is_zero() {
        return None;
    }
    if k.is_one() {
        return Some(Quantity::of(value));
    }
    let q = value.div_const(k).ok()?;
    q.is_exact_integer().then(|| Quantity::of(&q))
}

/// Report text as C: `min`/`max` become the `WW_MIN`/`WW_MAX` macros the port defines.
pub fn c(expr: &str) -> String {
    rewrite_expr(expr, ("WW_MIN", "WW_MAX"), &|_| None, false)
}

/// The macros a port's clauses use, when they use them.
pub fn helper_macros(text: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if text.contains("WW_MIN(") {
        out.push("#define WW_MIN(a, b) ((a) < (b) ? (a) : (b))");
    }
    if text.contains("WW_MAX(") {
        out.push("#define WW_MAX(a, b) ((a) > (b) ? (a) : (b))");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report's quantity, as a report file gives it.
    fn q(text: &str) -> Quantity {
        Quantity::read(text)
    }

    fn check(lo: &str, hi: &str, unit: &str, expected: &str) {
        assert_eq!(covering(&q(lo), &q(hi), &q(unit)).render("a"), expected);
    }

    fn union_of(a: (&str, &str), b: (&str, &str)) -> (Quantity, Quantity) {
        union_bytes((&q(a.0), &q(a.1)), (&q(b.0), &q(b.1)))
    }

    #[test]
    fn unions_of_byte_ranges() {
        // Jacobi-1d's sweeps: all of A read, its inside written.
        let (lo, hi) = union_of(("0", "8*n"), ("8", "8*n - 8"));
        assert_eq!(covering(&lo, &hi, &q("8")).render("A"), "A[0:n]");
        // Bounds that differ by a multiple of a variable: n may be anything (negative when
        // the loops do not run), so the choice is made at run time.
        let (lo, hi) = union_of(("8*n + 8", "8*n*n - 8*n - 8"), ("8", "8*n*n - 8"));
        assert_eq!(lo, "min(8*n + 8, 8)");
        assert_eq!(hi, "max(-8*n + 8*n*n - 8, 8*n*n - 8)");
        let (lo, hi) = union_of(("0", "8*n"), ("0", "8*m"));
        assert_eq!((lo.text(), hi.text()), ("0", "max(8*n, 8*m)"));
    }

    #[test]
    fn unions_of_sections() {
        let s = |start: &str, length: &str| Section {
            start: q(start),
            length: q(length),
        };
        // Jacobi's two sweeps: all of A read by one, its inside written by the other.
        assert_eq!(union(&s("0", "n"), &s("1", "n - 2")).render("A"), "A[0:n]");
        assert_eq!(union(&s("1", "n - 2"), &s("0", "n")).render("A"), "A[0:n]");
        assert_eq!(union(&s("2", "n"), &s("0", "n")).render("A"), "A[0:n + 2]");
        assert_eq!(
            union(&s("0", "n"), &s("0", "m")).render("A"),
            "A[0:WW_MAX(n, m)]"
        );
        assert_eq!(union(&s("k", "n"), &s("k", "n")).render("A"), "A[k:n]");
    }

    #[test]
    fn sections_in_elements_and_rows() {
        check("0", "8*n", "8", "a[0:n]");
        check("8", "16", "16", "a[0:1]");
        check("4", "15", "4", "a[1:3]");
        check("8", "8*n", "8", "a[1:WW_MAX(0, n - 1)]");
        check("0", "8*ni*nk", "8*nk", "a[0:ni]");
        check("8*nk", "8*ni*nk", "8*nk", "a[1:WW_MAX(0, ni - 1)]");
        check("0", "4*n + 2", "4", "a[0:(4*n + 5) / 4]");
        check("0", "8*min(n, m)", "8", "a[0:WW_MIN(m, n)]");
        check(
            "0",
            "40*n + 8*m",
            "8*nk",
            "a[0:((40*n + 8*m) + (8*nk) - 1) / (8*nk)]",
        );
    }

    /// A variable the parser does not read (`d[0]`, a value loaded through a subscript)
    /// is one variable of the report's expression: its sections divide exactly as any.
    #[test]
    fn names_with_subscripts_divide_exactly() {
        let d0 = Expr::var("d[0]");
        let hi = d0.checked_mul(&Expr::constant(16)).unwrap();
        let hi = Quantity::of(&hi.checked_add(&Expr::constant(16)).unwrap());
        assert_eq!(
            covering(&Quantity::constant(0), &hi, &q("16")).render("a"),
            "a[0:d[0] + 1]"
        );
    }

    /// A length is clamped at 0 unless no product of it can be negative; C's division of a
    /// non-negative sum plus a constant above minus the divisor is not.
    #[test]
    fn lengths_that_may_be_negative_are_clamped() {
        check("0", "480*n - 1", "480", "a[0:(240*n + 239) / 240]");
        check(
            "0",
            "4*n - 40000",
            "16384",
            "a[0:WW_MAX(0, (4*n - 23617) / 16384)]",
        );
        check("0", "4*n - 20000", "16384", "a[0:(4*n - 3617) / 16384]");
        check("0", "n*n - 2*n + 5", "1", "a[0:WW_MAX(0, -2*n + n*n + 5)]");
    }

    /// A min less a max is written as the two are, not as the min of the four differences.
    #[test]
    fn a_min_less_a_max_reads_as_written() {
        check(
            "max(0, 8*lo)",
            "min(8*hi, 8*n)",
            "8",
            "a[WW_MAX(0, lo):WW_MAX(0, (WW_MIN(hi, n)) - (WW_MAX(0, lo)))]",
        );
    }
}
