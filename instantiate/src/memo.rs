//! Expression texts read once, and their values computed once per values of their
//! variables: the loops of a report repeat a few texts (`n`, `8*n`, `0`), and parsing them
//! and evaluating them in exact rationals again for every loop was most of instantiating
//! one. Both are pure functions of their inputs, so a remembered result is the result.

use crate::eval_types::{EvalFailure, Values};
use num_rational::BigRational;
use std::cell::RefCell;
use std::collections::HashMap;
use symbolic::{parse_expr, Expr, Var};

/// Texts remembered at most (then forgotten all at once): memory stays bounded on a report
/// of as many different texts as loops.
const MAX_TEXTS: usize = 4096;
/// Values remembered per text at most, likewise.
const MAX_VALUES: usize = 64;

/// One text as the symbolic engine read it.
struct Parsed {
    expr: Result<Expr, EvalFailure>,
    /// The expression's variables, in `Expr::vars` order (by name).
    vars: Vec<(Var, String)>,
    /// Values by the values of `vars`, in that order.
    values: HashMap<Vec<i64>, Result<BigRational, EvalFailure>>,
}

thread_local! {
    static MEMO: RefCell<HashMap<String, Parsed>> = RefCell::new(HashMap::new());
}

/// Runs `f` on the remembered reading of `text`.
fn with_parsed<R>(text: &str, f: impl FnOnce(&mut Parsed) -> R) -> R {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(parsed) = memo.get_mut(text) {
            return f(parsed);
        }
        if memo.len() >= MAX_TEXTS {
            memo.clear();
        }
        let expr = parse_expr(text).map_err(|e| EvalFailure::Unparsable(e.to_string()));
        let vars = match &expr {
            Ok(e) => e
                .vars()
                .into_iter()
                .map(|v| (v.clone(), v.name().to_string()))
                .collect(),
            Err(_) => Vec::new(),
        };
        let parsed = Parsed {
            expr,
            vars,
            values: HashMap::new(),
        };
        f(memo.entry(text.to_string()).or_insert(parsed))
    })
}

/// `text` read as an expression (`eval::parse`).
pub fn parse(text: &str) -> Result<Expr, EvalFailure> {
    with_parsed(text, |p| p.expr.clone())
}

/// Whether `text` reads as an expression; the error where it does not.
pub fn parse_error(text: &str) -> Option<EvalFailure> {
    with_parsed(text, |p| p.expr.as_ref().err().cloned())
}

/// The exact value of the expression `text` (which must read as one) under `values`:
/// the variables it lacks, else its value.
pub fn value(text: &str, values: &Values) -> Result<BigRational, EvalFailure> {
    with_parsed(text, |p| {
        let expr = match &p.expr {
            Ok(expr) => expr,
            Err(e) => return Err(e.clone()),
        };
        let missing: Vec<String> = p
            .vars
            .iter()
            .filter(|(_, n)| !values.contains_key(n))
            .map(|(_, n)| n.clone())
            .collect();
        if !missing.is_empty() {
            return Err(EvalFailure::Missing(missing));
        }
        let key: Vec<i64> = p.vars.iter().map(|(_, n)| values[n]).collect();
        if let Some(known) = p.values.get(&key) {
            return known.clone();
        }
        // Only the expression's own variables: evaluation looks up no other.
        let ctx: HashMap<Var, BigRational> = p
            .vars
            .iter()
            .zip(&key)
            .map(|((v, _), x)| (v.clone(), BigRational::from_integer((*x).into())))
            .collect();
        let result = expr
            .eval(&ctx)
            .map_err(|e| EvalFailure::Unparsable(e.to_string()));
        if p.values.len() >= MAX_VALUES {
            p.values.clear();
        }
        p.values.insert(key, result.clone());
        result
    })
}
