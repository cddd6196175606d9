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
    use symbolic::{Atom, Poly};
    let mut coefficient = Vec::new();
    let mut with_v = vec![false; p.terms().len()];
    for (term, (monomial, c)) in p.terms().iter().enumerate() {
        // Factors are distinct atoms: `v` is at most one of them, and the term's coefficient
        // is the monomial without it (no product rebuilt atom by atom).
        let mut at = None;
        for (k, (atom, exponent)) in monomial.factors().iter().enumerate() {
            match atom {
                Atom::Var(w) if w == v => {
                    if *exponent != 1 {
                        return None;
                    }
                    at = Some(k);
                }
                Atom::Var(_) => {}
                _ if atom.contains_var(v) => return None,
                _ => {}
            }
        }
        if let Some(k) = at {
            coefficient.push((monomial.without_factor(k), c.clone()));
            with_v[term] = true;
        }
    }
    // The terms without `v` are a part of `p`'s normal form as they stand.
    let rest = p.retain_terms(|term| !with_v[term]);
    Some((Poly::from_terms(coefficient), rest))
}
