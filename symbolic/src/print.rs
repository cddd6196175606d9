//! Printing: C syntax (parseable back, for reports and generated code) and a readable math syntax (`Display`).
//!
//! C syntax choices: C's `/` and `%` atoms print as `(n / 4)` and `(n % 4)`; floor division and
//! modulo print as calls `floor_div(n, 4)` and `floor_mod(n, 4)` (not C operators, so they cannot
//! be misread); a non-integer rational coefficient prints as `rat(3, 2)*a`, never as `3*a/2`,
//! because in C that would truncate, unless the polynomial is integer-valued (`(i*i + i) / 2`,
//! an exact division). Powers print as repeated products (`a*a`).

use crate::expr::Expr;
use crate::poly::{Atom, Monomial, Poly};
use crate::term::{BinOp, Term};
use num_rational::BigRational;
use num_traits::{One, Signed};
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    C,
    Math,
}

fn atom_str(a: &Atom, st: Style) -> String {
    let inner = |p: &Poly| poly_str(p, st);
    match (a, st) {
        (Atom::Var(v), _) => v.name().to_string(),
        (Atom::TruncDiv(p, d), Style::C) => format!("({} / {d})", paren(p, st)),
        (Atom::TruncRem(p, d), Style::C) => format!("({} % {d})", paren(p, st)),
        (Atom::FloorDiv(p, d), Style::C) => format!("floor_div({}, {d})", inner(p)),
        (Atom::FloorMod(p, d), Style::C) => format!("floor_mod({}, {d})", inner(p)),
        (Atom::TruncDiv(p, d), Style::Math) => format!("trunc({}/{d})", paren(p, st)),
        (Atom::TruncRem(p, d), Style::Math) => format!("rem({}, {d})", inner(p)),
        (Atom::FloorDiv(p, d), Style::Math) => format!("floor({}/{d})", paren(p, st)),
        (Atom::FloorMod(p, d), Style::Math) => format!("({} mod {d})", paren(p, st)),
    }
}

/// Parenthesised unless a single variable or a non-negative integer.
fn paren(p: &Poly, st: Style) -> String {
    let s = poly_str(p, st);
    if p.as_var().is_some()
        || p.as_constant()
            .is_some_and(|c| c.is_integer() && !c.is_negative())
    {
        s
    } else {
        format!("({s})")
    }
}

fn monomial_str(m: &Monomial, st: Style) -> String {
    let mut parts = Vec::new();
    for (a, e) in m.factors() {
        let s = atom_str(a, st);
        if st == Style::Math && *e > 1 {
            parts.push(format!("{s}^{e}"));
        } else {
            for _ in 0..*e {
                parts.push(s.clone());
            }
        }
    }
    parts.join("*")
}

fn coef_str(c: &BigRational, st: Style) -> String {
    if c.is_integer() {
        c.to_integer().to_string()
    } else if st == Style::C {
        format!("rat({}, {})", c.numer(), c.denom())
    } else {
        format!("{}/{}", c.numer(), c.denom())
    }
}

fn poly_str(p: &Poly, st: Style) -> String {
    if p.is_zero() {
        return "0".into();
    }
    // An integer-valued polynomial with fractional coefficients (`i*i/2 + i/2`, from an
    // exact division) prints as that division, `(i*i + i) / 2`: valid C with the same value,
    // which parses back to the same polynomial.
    if st == Style::C {
        if let Some((numerator, denominator)) = p.as_exact_quotient() {
            return format!("({}) / {denominator}", poly_str(&numerator, st));
        }
    }
    // Non-constant products first, constant last: `8800*i + 8*j + 3`.
    let mut terms: Vec<&(Monomial, BigRational)> =
        p.terms().iter().filter(|t| !t.0.is_one()).collect();
    terms.extend(p.terms().iter().filter(|t| t.0.is_one()));
    let mut out = String::new();
    for (i, (m, c)) in terms.into_iter().enumerate() {
        let neg = c.is_negative();
        let a = c.abs();
        let body = if m.is_one() {
            coef_str(&a, st)
        } else if a.is_one() {
            monomial_str(m, st)
        } else {
            format!("{}*{}", coef_str(&a, st), monomial_str(m, st))
        };
        match (i, neg) {
            (0, false) => out.push_str(&body),
            (0, true) => {
                out.push('-');
                out.push_str(&body);
            }
            (_, false) => {
                out.push_str(" + ");
                out.push_str(&body);
            }
            (_, true) => {
                out.push_str(" - ");
                out.push_str(&body);
            }
        }
    }
    out
}

fn top_poly_str(p: &Poly, st: Style) -> String {
    // A lone C division reads better without its protective parentheses: `(2*n + 3) / 4`.
    if let [(m, c)] = p.terms() {
        if c.is_one() {
            if let [(a @ (Atom::TruncDiv(..) | Atom::TruncRem(..)), 1)] = m.factors() {
                let s = atom_str(a, st);
                if st == Style::C {
                    return s[1..s.len() - 1].to_string();
                }
            }
        }
    }
    poly_str(p, st)
}

fn expr_str(e: &Expr, st: Style) -> String {
    match e {
        Expr::Poly(p) => top_poly_str(p, st),
        Expr::Min(ps) | Expr::Max(ps) => {
            let name = if matches!(e, Expr::Min(_)) {
                "min"
            } else {
                "max"
            };
            let args: Vec<String> = ps.iter().map(|p| poly_str(p, st)).collect();
            format!("{name}({})", args.join(", "))
        }
    }
}

impl Expr {
    /// C syntax, parseable by [`crate::parse_expr`] back to the same expression.
    pub fn to_c(&self) -> String {
        expr_str(self, Style::C)
    }
}

impl Poly {
    /// C syntax of a polynomial.
    pub fn to_c(&self) -> String {
        poly_str(self, Style::C)
    }
}

/// Readable math syntax: `3/2*a + b^2`, `floor(x/4)`, `trunc((2*n + 3)/4)`, `(x mod 8)`, `max(a, b)`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&expr_str(self, Style::Math))
    }
}

impl fmt::Display for Poly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&poly_str(self, Style::Math))
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&atom_str(self, Style::Math))
    }
}

/// C syntax, fully parenthesised.
impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Num(n) => write!(f, "{n}"),
            Term::Rat(p, q) => write!(f, "rat({p}, {q})"),
            Term::Var(v) => write!(f, "{v}"),
            Term::Neg(a) => write!(f, "(-{a})"),
            Term::BitNot(a) => write!(f, "(~{a})"),
            Term::Bin(op, a, b) => {
                let o = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::Rem => "%",
                    BinOp::Shl => "<<",
                    BinOp::Shr => ">>",
                    BinOp::BitAnd => "&",
                };
                write!(f, "({a} {o} {b})")
            }
            Term::Min(ts) | Term::Max(ts) => {
                let name = if matches!(self, Term::Min(_)) {
                    "min"
                } else {
                    "max"
                };
                let args: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
                write!(f, "{name}({})", args.join(", "))
            }
            Term::FloorDiv(a, k) => write!(f, "floor_div({a}, {k})"),
            Term::FloorMod(a, k) => write!(f, "floor_mod({a}, {k})"),
        }
    }
}
