//! Values of expressions computed once per values of their variables: the loops of a report
//! repeat a few expressions (`n`, `8*n`, `0`), and evaluating them in exact rationals again
//! for every loop was most of instantiating one. Evaluation is a pure function of the
//! expression and the values, so a remembered result is the result. Keyed by the
//! expression itself: nothing here reads text.

use crate::eval_types::{EvalFailure, Values};
use num_rational::BigRational;
use std::cell::RefCell;
use std::collections::HashMap;
use symbolic::{Expr, Var};

/// Expressions remembered at most (then forgotten all at once): memory stays bounded on a
/// report of as many different expressions as loops.
const MAX_EXPRS: usize = 4096;
/// Values remembered per expression at most, likewise.
const MAX_VALUES: usize = 64;

/// One expression's variables and the values it took.
struct Remembered {
    /// The expression's variables, in `Expr::vars` order (by name).
    vars: Vec<(Var, String)>,
    /// Values by the values of `vars`, in that order.
    values: HashMap<Vec<i64>, Result<BigRational, EvalFailure>>,
}

thread_local! {
    static MEMO: RefCell<HashMap<Expr, Remembered>> = RefCell::new(HashMap::new());
}

/// The exact value of `expr` under `values`: the variables it lacks, else its value.
pub fn value(expr: &Expr, values: &Values) -> Result<BigRational, EvalFailure> {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if !memo.contains_key(expr) {
            if memo.len() >= MAX_EXPRS {
                memo.clear();
            }
            let vars = expr
                .vars()
                .into_iter()
                .map(|v| {
                    let name = v.name().to_string();
                    (v, name)
                })
                .collect();
            let remembered = Remembered {
                vars,
                values: HashMap::new(),
            };
            memo.insert(expr.clone(), remembered);
        }
        let Some(p) = memo.get_mut(expr) else {
            unreachable!("inserted above")
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
