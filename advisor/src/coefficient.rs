//! A polynomial split by one variable, `coefficient*v + rest`: the linear form the
//! dependence tests read off an address difference (in the distance, in a renamed counter)
//! and the subscript test reads off an element index (`n*X + Y`, by the row length `n`).

use symbolic::Var;

/// `p = coefficient*v + rest` with `coefficient` and `rest` free of `v`; `None` when `v`
/// appears non-linearly.
pub(crate) fn symbolic_coefficient(
    p: &symbolic::Poly,
    v: &Var,
) -> Option<(symbolic::Poly, symbolic::Poly)> {
    use symbolic::{Atom, Monomial, Poly};
    let mut coefficient = Vec::new();
    let mut rest = Vec::new();
    for (monomial, c) in p.terms() {
        let mut has = false;
        let mut other = Monomial::one();
        for (atom, exponent) in monomial.factors() {
            match atom {
                Atom::Var(w) if w == v => {
                    if *exponent != 1 {
                        return None;
                    }
                    has = true;
                }
                _ => {
                    if atom.contains_var(v) {
                        return None;
                    }
                    for _ in 0..*exponent {
                        other = other.mul(&Monomial::atom(atom.clone()));
                    }
                }
            }
        }
        if has {
            coefficient.push((other, c.clone()));
        } else {
            rest.push((monomial.clone(), c.clone()));
        }
    }
    Some((Poly::from_terms(coefficient), Poly::from_terms(rest)))
}
