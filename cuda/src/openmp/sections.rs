//! The report's byte sections as OpenMP array sections: `a[lo:len]` in elements for flat
//! arrays, whole rows (`A[r0:rows]`) for arrays of arrays. The arithmetic is done
//! symbolically where it is exact (`8*ni*nk` bytes of rows of `8*nk` bytes are `ni` rows)
//! and left to C's integer division otherwise.

use crate::ctext::rewrite_expr;
use num_rational::BigRational;
use num_traits::{One, Zero};
use symbolic::{parse_expr, Atom, Expr, Var};

/// `[start:length]` of an array section, as C text in the program's variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub start: String,
    pub length: String,
}

impl Section {
    pub fn render(&self, name: &str) -> String {
        format!("{name}[{}:{}]", self.start, self.length)
    }
}

/// The elements `[lo/unit, hi/unit)` when both bounds are multiples of `unit` bytes (an
/// element or a row), else the units that cover `[lo, hi)`: `floor(lo/unit)` up to
/// `ceil(hi/unit)`. `unit` is C text (`8`, `8*nk`).
pub fn covering(lo: &str, hi: &str, unit: &str) -> Section {
    let u = constant(unit).filter(|u| *u > 0);
    let start = exact_div(lo, unit)
        .or_else(|| {
            let (l, u) = (constant(lo)?, u?);
            (l >= 0).then(|| (l / u).to_string())
        })
        .unwrap_or_else(|| format!("({}) / ({})", c(lo), c(unit)));
    let end = exact_div(hi, unit)
        .or_else(|| {
            let (h, u) = (constant(hi)?, u?);
            (h >= 0).then(|| ((h + u - 1) / u).to_string())
        })
        .unwrap_or_else(|| {
            // Simplified when it parses: `(8*n + 3 + 7) / 8` -> `(8*n + 10) / 8`.
            let text = format!("(({}) + ({}) - 1) / ({})", c(hi), c(unit), c(unit));
            match parse_expr(&text) {
                Ok(e) => c(&e.to_c()),
                Err(_) => text,
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

/// The byte range `[lo, hi)` holding both `[lo_a, hi_a)` and `[lo_b, hi_b)` (report
/// expressions, `min`/`max` allowed): the symbolic getMin/getMax where it decides, else
/// `min(..)`/`max(..)` left to run time.
pub fn union_bytes(a: (&str, &str), b: (&str, &str)) -> (String, String) {
    let pick = |x: &str, y: &str, max: bool| -> String {
        if x == y {
            return x.to_string();
        }
        // Decided only when the two differ by a constant: the variables' signs are not
        // known here (a size may be anything when the loop does not run).
        let difference = parse_expr(x)
            .ok()
            .zip(parse_expr(y).ok())
            .and_then(|(x, y)| x.checked_sub(&y).ok())
            .and_then(|d| d.as_constant());
        match difference {
            Some(d) if (d > BigRational::zero()) == max => x.to_string(),
            Some(_) => y.to_string(),
            None => format!("{}({x}, {y})", if max { "max" } else { "min" }),
        }
    };
    (pick(a.0, b.0, false), pick(a.1, b.1, true))
}

/// `a + b`, simplified when both parse.
fn sum(a: &str, b: &str) -> String {
    match (parse_expr(a), parse_expr(b)) {
        (Ok(x), Ok(y)) => match x.checked_add(&y) {
            Ok(s) => c(&s.to_c()),
            Err(_) => format!("({a}) + ({b})"),
        },
        _ => format!("({a}) + ({b})"),
    }
}

/// The larger (`max`) or smaller of two bounds: one of them when their difference is a
/// constant, else the helper macro.
fn extreme(a: &str, b: &str, max: bool) -> String {
    if a == b {
        return a.to_string();
    }
    let d = parse_expr(a)
        .ok()
        .zip(parse_expr(b).ok())
        .and_then(|(x, y)| x.checked_sub(&y).ok())
        .and_then(|d| d.as_constant());
    match d {
        Some(d) => {
            let a_larger = d > BigRational::zero();
            if a_larger == max {
                a.to_string()
            } else {
                b.to_string()
            }
        }
        None => format!("{}({a}, {b})", if max { "WW_MAX" } else { "WW_MIN" }),
    }
}

fn constant(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

/// `a - b`, simplified when both parse.
/// A section's length `a - b`. The sections hold when the loop runs; the clause is
/// evaluated when it does not as well, where `hi - lo` may be negative (`x[1:n - 1]` with
/// `n = 0`, an empty clamped window `MIN(hi, n) - MAX(lo, 0)`), which OpenMP rejects: a
/// length that may be negative is `WW_MAX(0, ...)`. One whose terms are all non-negative
/// (`n`, `ni*nk`) is left as it is: a negative size is no loop's.
fn difference(a: &str, b: &str) -> String {
    let guarded = |text: String| format!("WW_MAX(0, {text})");
    let no_negative_term =
        |p: &symbolic::Poly| p.terms().iter().all(|(_, k)| *k >= BigRational::zero());
    match (parse_expr(a), parse_expr(b)) {
        (Ok(x), Ok(y)) => match x.checked_sub(&y) {
            Ok(d) => {
                let non_negative = match &d {
                    Expr::Poly(p) => no_negative_term(p),
                    Expr::Min(ps) | Expr::Max(ps) => ps.iter().all(no_negative_term),
                };
                if non_negative {
                    c(&d.to_c())
                } else {
                    guarded(c(&d.to_c()))
                }
            }
            Err(_) => guarded(format!("({a}) - ({b})")),
        },
        // Text the parser does not take (`WW_MIN(...)`, a call, a division by a variable):
        // guarded unless nothing in it subtracts but the rounding up of `covering`.
        _ if b == "0" && !a.replace(") - 1) / (", "").contains('-') => a.to_string(),
        _ if b == "0" => guarded(a.to_string()),
        _ => guarded(format!("({a}) - ({b})")),
    }
}

/// `value / unit` when it divides exactly as polynomials: by a constant, or by
/// `k*v` for one variable `v` that `value` is linear in with no term free of `v`.
pub fn exact_div(value: &str, unit: &str) -> Option<String> {
    let value = parse_expr(value).ok()?;
    let unit = parse_expr(unit).ok()?;
    if let Some(k) = unit.as_constant() {
        return by_constant(&value, &k);
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
        return Some("0".into());
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

fn by_constant(value: &Expr, k: &BigRational) -> Option<String> {
    if k.is_zero() {
        return None;
    }
    if k.is_one() {
        return Some(c(&value.to_c()));
    }
    let q = value.div_const(k).ok()?;
    q.is_exact_integer().then(|| c(&q.to_c()))
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

    fn check(lo: &str, hi: &str, unit: &str, expected: &str) {
        assert_eq!(covering(lo, hi, unit).render("a"), expected);
    }

    #[test]
    fn unions_of_byte_ranges() {
        // Jacobi-1d's sweeps: all of A read, its inside written.
        let (lo, hi) = union_bytes(("0", "8*n"), ("8", "8*n - 8"));
        assert_eq!(covering(&lo, &hi, "8").render("A"), "A[0:n]");
        // Bounds that differ by a multiple of a variable: n may be anything (negative when
        // the loops do not run), so the choice is made at run time.
        let (lo, hi) = union_bytes(("8*n + 8", "8*n*n - 8*n - 8"), ("8", "8*n*n - 8"));
        assert_eq!(lo, "min(8*n + 8, 8)");
        assert_eq!(hi, "max(8*n*n - 8*n - 8, 8*n*n - 8)");
        let (lo, hi) = union_bytes(("0", "8*n"), ("0", "8*m"));
        assert_eq!((lo.as_str(), hi.as_str()), ("0", "max(8*n, 8*m)"));
    }

    #[test]
    fn unions_of_sections() {
        let s = |start: &str, length: &str| Section {
            start: start.into(),
            length: length.into(),
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
}
