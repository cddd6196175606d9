//! Evaluating the report's quantities (sections, factors, trip counts) with integer values
//! for their variables: each on the expression it carries ([`Quantity::expr_as_read`]),
//! never on a reading of its text. A quantity whose text the engine holds no expression for
//! (C's division by a variable), or whose expression names what a report file's text would
//! not read as one variable (the analyses' unknown `((n - 1) / factor)`, a load site `n@12`),
//! has one way to a value, [`read_text`] after its names are replaced by their values: the
//! same whether the report came from the analyses or from a file.

use advisor::model::Quantity;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use symbolic::{Expr, Var};

pub use crate::eval_types::{EvalFailure, Values};

/// The one place this crate reads C text: a quantity's text with values (or a name) put in
/// for some of its names, read as a report file's quantity is read ([`Quantity::read`]).
/// Only for quantities the engine holds no expression for, whose text with values put in
/// may read (`(n - 1) / factor` with `factor` known); every other quantity is evaluated
/// on its expression.
pub fn read_text(text: &str) -> Result<Expr, EvalFailure> {
    let q = Quantity::read(text);
    match q.expr() {
        Some(e) => Ok(e.clone()),
        None => Err(unreadable(&q)),
    }
}

/// Why `q` has no expression, as evaluation reports it.
fn unreadable(q: &Quantity) -> EvalFailure {
    EvalFailure::Unparsable(q.unread().unwrap_or_default())
}

/// `q` with the variables that have a value in `known` replaced by it: its expression with
/// those variables substituted, or, for a quantity without one as read
/// ([`Quantity::expr_as_read`]), [`read_text`] of its text with the values put in.
pub fn with_values(q: &Quantity, known: &Values) -> Result<Expr, EvalFailure> {
    let Some(e) = q.expr_as_read() else {
        return read_text(&substitute(q.text(), known));
    };
    let map: HashMap<Var, Expr> = e
        .vars()
        .into_iter()
        .filter_map(|v| known.get(v.name()).map(|k| (v, Expr::constant(*k))))
        .collect();
    if map.is_empty() {
        return Ok(e.clone());
    }
    e.substitute(&map)
        .map_err(|err| EvalFailure::Unparsable(err.to_string()))
}

/// The names in a C expression, as the symbolic engine's lexer reads them (`n`, `s.len`,
/// `c->n`, `n@12`), with their byte ranges; `min`/`max` calls are not names.
fn names(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
        } else if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            loop {
                if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                    i += 1;
                } else if b.get(i) == Some(&b'-')
                    && b.get(i + 1) == Some(&b'>')
                    && b.get(i + 2)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                {
                    i += 2;
                } else {
                    break;
                }
            }
            // A load site, `firstcol@161`: one name, which the profile records as such.
            if b.get(i) == Some(&b'@') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let is_call = text[i..].trim_start().starts_with('(');
            if !is_call {
                out.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The variables an expression mentions (also when the symbolic engine cannot read it,
/// e.g. a division by a variable).
pub fn variables(text: &str) -> BTreeSet<String> {
    names(text)
        .into_iter()
        .map(|(s, e)| text[s..e].to_string())
        .collect()
}

/// `text` with every variable that has a value replaced by it: the engine then reads
/// expressions it cannot represent symbolically, such as `(n - 1) / factor`.
pub fn substitute(text: &str, values: &Values) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (s, e) in names(text) {
        if let Some(v) = values.get(&text[s..e]) {
            out.push_str(&text[last..s]);
            out.push_str(&format!("({v})"));
            last = e;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The exact rational value of `q` under `values`: its expression's, else the value
/// [`read_text`] finds once every name of its text has a value.
pub fn eval_rational(q: &Quantity, values: &Values) -> Result<BigRational, EvalFailure> {
    if let Some(e) = q.expr_as_read() {
        return crate::memo::value(e, values);
    }
    let missing: Vec<String> = variables(q.text())
        .into_iter()
        .filter(|n| !values.contains_key(n))
        .collect();
    if !missing.is_empty() {
        return Err(EvalFailure::Missing(missing));
    }
    // With the values in, the text reads where the engine divides only by constants; what
    // still does not read fails as the quantity's own text does.
    match read_text(&substitute(q.text(), values)) {
        Ok(e) => crate::memo::value(&e, values),
        Err(_) => Err(unreadable(q)),
    }
}

/// The value of `q` under `values` as a 64-bit integer.
pub fn eval_int(q: &Quantity, values: &Values) -> Result<i64, EvalFailure> {
    let v = eval_rational(q, values)?;
    if !v.is_integer() {
        return Err(EvalFailure::NotInteger(v.to_string()));
    }
    v.to_integer()
        .to_i64()
        .ok_or_else(|| EvalFailure::NotInteger(v.to_string()))
}

/// Values plus the candidates of variables the counts left ambiguous.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub values: Values,
    pub ambiguous: BTreeMap<String, Vec<i64>>,
}

/// The most candidate combinations tried for one expression.
const MAX_COMBINATIONS: usize = 64;

/// The value of `q`; when only ambiguous variables are missing, the value it takes under
/// every combination of their candidates: `Ok` when they all agree, else the list.
pub fn eval_in(q: &Quantity, ctx: &Context) -> Result<i64, (EvalFailure, Vec<String>)> {
    let failure = match eval_int(q, &ctx.values) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let EvalFailure::Missing(missing) = &failure else {
        return Err((failure, Vec::new()));
    };
    if !missing.iter().all(|m| ctx.ambiguous.contains_key(m)) {
        return Err((failure, Vec::new()));
    }
    let mut combos: Vec<Values> = vec![ctx.values.clone()];
    for m in missing {
        let mut next = Vec::new();
        for c in &combos {
            for v in &ctx.ambiguous[m] {
                let mut c = c.clone();
                c.insert(m.clone(), *v);
                next.push(c);
            }
        }
        if next.len() > MAX_COMBINATIONS {
            return Err((failure, Vec::new()));
        }
        combos = next;
    }
    let mut results = Vec::new();
    for c in &combos {
        match eval_int(q, c) {
            Ok(v) => {
                let at: Vec<String> = missing.iter().map(|m| format!("{m}={}", c[m])).collect();
                results.push((v, at.join(", ")));
            }
            Err(e) => return Err((e, Vec::new())),
        }
    }
    if results.windows(2).all(|w| w[0].0 == w[1].0) {
        return Ok(results[0].0);
    }
    let listed = results
        .iter()
        .map(|(v, at)| format!("{v} ({at})"))
        .collect();
    Err((failure, listed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report file's quantity, as the reader makes it.
    fn q(text: &str) -> Quantity {
        Quantity::read(text)
    }

    fn check(text: &str, values: &[(&str, i64)], expected: Result<i64, EvalFailure>) {
        let values: Values = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        assert_eq!(eval_int(&q(text), &values), expected, "{text}");
    }

    #[test]
    fn c_division_truncates_and_min_max_evaluate() {
        check("16*((2*n + 3) / 4) - 12", &[("n", 200)], Ok(1588));
        check("(2*n + 3) / 4", &[("n", -3)], Ok(0));
        check(
            "min(4*size - 4*slice, 4*slice)",
            &[("size", 4096), ("slice", 16)],
            Ok(64),
        );
        check("4*c->n", &[("c->n", 5)], Ok(20));
        // The engine divides by constants only; with values it reads the expression.
        // C reads `4*(n - 1) / factor` as `(4*(n - 1)) / factor`.
        check(
            "4*(n - 1) / factor + 4",
            &[("n", 1000), ("factor", 4)],
            Ok(1003),
        );
        check(
            "4*((n - 1) / factor) + 4",
            &[("n", 1000), ("factor", 4)],
            Ok(1000),
        );
        check("(n - 1) / factor", &[("n", -7), ("factor", 2)], Ok(-4));
    }

    #[test]
    fn a_quantity_is_evaluated_on_its_expression_not_its_text() {
        // 250 terms `c*v*v*v*v*v*v*v*v`: more operators than the reader takes, so the
        // text alone has no value; the expression the analyses computed has one.
        let mut e = Expr::constant(0);
        let mut values = Values::new();
        for k in 0..250 {
            let name = format!("v{k}");
            let v = Expr::var(&name);
            let mut term = Expr::constant(k + 2);
            for _ in 0..8 {
                term = term.checked_mul(&v).unwrap();
            }
            e = e.checked_add(&term).unwrap();
            values.insert(name, 1);
        }
        let q = Quantity::of(&e);
        assert!(
            read_text(q.text()).is_err(),
            "the text reads: the test shows nothing"
        );
        let sum: i64 = (0..250).map(|k| k + 2).sum();
        assert_eq!(eval_int(&q, &values), Ok(sum));
    }

    #[test]
    fn an_unknown_the_analyses_hold_as_one_variable_is_evaluated_through_its_text() {
        // A division by a variable, held by the analyses as one unknown: a report file's
        // text gives no expression for it, and the analyses' quantity the same value.
        let atom = Expr::var("((n - 1) / factor)");
        let e = atom
            .checked_mul(&Expr::constant(4))
            .unwrap()
            .checked_add(&Expr::constant(4))
            .unwrap();
        let values: Values = [("n".to_string(), 1000), ("factor".to_string(), 4)].into();
        let in_process = Quantity::of(&e);
        assert_eq!(in_process.text(), "4*((n - 1) / factor) + 4");
        assert_eq!(eval_int(&in_process, &values), Ok(1000));
        assert_eq!(eval_int(&q(in_process.text()), &values), Ok(1000));
    }

    #[test]
    fn ambiguous_variables_give_a_value_when_every_candidate_agrees() {
        let ctx = Context {
            values: Values::new(),
            ambiguous: [("n".to_string(), vec![199, 200])].into(),
        };
        assert_eq!(eval_in(&q("16*((2*n + 3) / 4) - 12"), &ctx), Ok(1588));
        let Err((_, listed)) = eval_in(&q("4*n"), &ctx) else {
            panic!("4*n differs between the candidates")
        };
        assert_eq!(listed, vec!["796 (n=199)", "800 (n=200)"]);
    }

    #[test]
    fn missing_values_are_named() {
        check(
            "4*n*m",
            &[("n", 2)],
            Err(EvalFailure::Missing(vec!["m".to_string()])),
        );
        assert!(matches!(
            eval_int(&q("4*/n"), &[("n".to_string(), 1)].into()),
            Err(EvalFailure::Unparsable(_))
        ));
    }
}
