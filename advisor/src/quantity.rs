//! A quantity of a report (a bound, a trip count, a section's bytes): the expression the
//! analyses computed, carried as a typed value to every consumer, and the C text it prints as.
//!
//! The two are kept in step: a quantity is made from an expression (its text is the
//! expression's C), renamed as a whole by the presentation, and read from a report file in
//! one place ([`Quantity::read`]). A consumer (a port planner, `instantiate`) takes
//! [`Quantity::expr`]; nothing parses the text back. Where the engine cannot hold a value
//! (C's division by a variable, a difference it could not take), the quantity is C text
//! only, and `expr` says so by being `None`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use symbolic::{Expr, SignEnv, Var};

#[derive(Clone, Debug)]
pub struct Quantity {
    text: String,
    expr: Option<Expr>,
}

impl Quantity {
    /// The quantity `e`, printed as C.
    pub fn of(e: &Expr) -> Quantity {
        Quantity {
            text: e.to_c(),
            expr: Some(e.clone()),
        }
    }

    /// The quantity `e`, whose floors the signs in `env` make C's `/` and `%` (a floor
    /// division of a dividend known `>= 0` is C's division: `(n + 31) / 32` for the warps of
    /// `n` threads), so that its text is C wherever the engine can tell.
    pub fn of_c(e: &Expr, env: &SignEnv) -> Quantity {
        Quantity::of(&in_c(e, env))
    }

    /// The quantity `e` written as `text`, another C writing of the same value that reads
    /// better than the normal form (a sum of request counts with equal terms counted,
    /// `3 + 2*min(32, N)`); `text` must read back as `e`'s value.
    pub fn written(e: &Expr, text: impl Into<String>) -> Quantity {
        Quantity {
            text: text.into(),
            expr: Some(e.clone()),
        }
    }

    /// The constant `k`.
    pub fn constant(k: i64) -> Quantity {
        Quantity::of(&Expr::constant(k))
    }

    /// C text the engine's expressions do not hold.
    pub fn c_text(text: impl Into<String>) -> Quantity {
        Quantity {
            text: text.into(),
            expr: None,
        }
    }

    /// A quantity as a report file writes it: the expression when the text is one the engine
    /// reads, else C text. The one place a report's quantity is parsed.
    pub fn read(text: &str) -> Quantity {
        Quantity {
            text: text.to_string(),
            expr: symbolic::parse_expr(text).ok(),
        }
    }

    /// The C text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The C text (as [`Quantity::text`]).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The expression; `None` where the quantity is C text the engine does not hold.
    pub fn expr(&self) -> Option<&Expr> {
        self.expr.as_ref()
    }

    /// Renames each variable by `name` (an internal name to the one a reader sees), in the
    /// expression and in the text alike; `rename_text` renames the text as the rest of the
    /// report's texts are, so that a quantity reads as they do.
    pub(crate) fn rename(
        &mut self,
        name: impl Fn(&str) -> String,
        rename_text: impl Fn(&str) -> String,
    ) {
        self.text = rename_text(&self.text);
        if let Some(renamed) = self.expr.as_ref().and_then(|e| renamed_vars(e, &name)) {
            // A substitution of variables for variables cannot fail; were it to, the text
            // stands alone rather than beside an expression it no longer matches.
            self.expr = renamed.ok();
        }
    }

    /// The quantity with its names rewritten by `f`, a rewriting of C text that renames
    /// names only (an alias for a parameter, a member path for the local holding it): the
    /// expression's variables are renamed by `f` one by one, and the text is the renamed
    /// expression's C (two names `f` makes one are then one variable: `n - n@5` is `0`);
    /// C text the engine does not hold is rewritten as text.
    pub fn map_names(&self, f: impl Fn(&str) -> String) -> Quantity {
        let Some(e) = self.expr.as_ref() else {
            return Quantity::c_text(f(&self.text));
        };
        match renamed_vars(e, &f) {
            None => self.clone(),
            Some(Ok(renamed)) => Quantity::of(&renamed),
            Some(Err(_)) => Quantity::c_text(f(&self.text)),
        }
    }

    /// The expression where reading the text back gives it: each of its variables is a name
    /// the reader reads as one variable (`n`, `c->n`, `s.len`). `None` where the engine holds
    /// no expression, and where a variable is C text the analyses hold as one unknown
    /// (`((n - 1) / factor)`), a load site (`n@12`) or an element (`d[0]`): a consumer that
    /// must give a quantity the same value whether it came from the analyses or from a report
    /// file (instantiation) takes the text's way for those, as it must for a file's.
    pub fn expr_as_read(&self) -> Option<&Expr> {
        self.expr
            .as_ref()
            .filter(|e| e.vars().iter().all(|v| is_reader_name(v.name())))
    }

    /// Why the engine holds no expression for the text, in the reader's words (what
    /// [`Quantity::read`] met); `None` where it holds one. For a consumer that says why a
    /// quantity has no value.
    pub fn unread(&self) -> Option<String> {
        if self.expr.is_some() {
            return None;
        }
        Some(match symbolic::parse_expr(&self.text) {
            Err(e) => e.to_string(),
            Ok(_) => "the engine holds no expression for it".to_string(),
        })
    }

    /// A quantity the program's own text writes (an array's declared dimension, the index
    /// a loop's start reads): the expression when the engine reads it, else C text.
    pub fn from_source(text: &str) -> Quantity {
        Quantity::read(text)
    }

    /// Mutable access to the text alone, for the presentation's scans that rewrite every
    /// text of a report the same way; [`Quantity::rename`] keeps the expression in step.
    pub(crate) fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }
}

/// `e` with the floors the signs in `env` make C's `/` and `%` written as those.
pub fn in_c(e: &Expr, env: &SignEnv) -> Expr {
    e.floors_to_truncs(env).unwrap_or_else(|_| e.clone())
}

/// Whether the reader ([`Quantity::read`]) reads `name` as one variable: a C identifier,
/// with members through `.` and `->` (`symbolic::parse_expr`'s names).
fn is_reader_name(name: &str) -> bool {
    let b = name.as_bytes();
    let starts = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    };
    if !starts(0) {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' {
            i += 1;
        } else if b[i] == b'-' && b.get(i + 1) == Some(&b'>') && starts(i + 2) {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// `e` with each variable renamed by `name`; `None` when `name` renames none.
fn renamed_vars(
    e: &Expr,
    name: &impl Fn(&str) -> String,
) -> Option<Result<Expr, symbolic::SymError>> {
    let map: HashMap<Var, Expr> = e
        .vars()
        .into_iter()
        .filter_map(|v| {
            let shown = name(v.name());
            (shown != v.name()).then(|| (v, Expr::var(&shown)))
        })
        .collect();
    (!map.is_empty()).then(|| e.substitute(&map))
}

impl Default for Quantity {
    fn default() -> Quantity {
        Quantity::constant(0)
    }
}

/// Two quantities are equal when their texts are: the expression follows from the text.
impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.text == other.text
    }
}

impl Eq for Quantity {}

impl PartialEq<&str> for Quantity {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

/// A quantity reads as its text wherever text is wanted (a message, a recipe's line).
impl std::ops::Deref for Quantity {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Quantity, D::Error> {
        // Numbers are quantities too (`step: 1` as a YAML integer).
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Text(String),
            Integer(i64),
        }
        Ok(match Written::deserialize(d)? {
            Written::Text(t) => Quantity::read(&t),
            Written::Integer(k) => Quantity::constant(k),
        })
    }
}

/// One quantity, or the forms a value takes at run time (an access whose index a branch
/// sets one way or the other, a pointer chosen between arrays): each form a quantity of its
/// own. A report writes one form as its text and several as a list of texts, so that every
/// text a report gives as an expression is one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forms(Vec<Quantity>);

impl Forms {
    /// The forms `forms`, in order (two alike stay two: the same offset on two bases).
    pub fn of(forms: impl IntoIterator<Item = Quantity>) -> Forms {
        Forms(forms.into_iter().collect())
    }

    /// The forms, at least one in a report.
    pub fn forms(&self) -> &[Quantity] {
        &self.0
    }

    /// The one form, when there is one.
    pub fn single(&self) -> Option<&Quantity> {
        match self.0.as_slice() {
            [q] => Some(q),
            _ => None,
        }
    }

    /// Mutable access to every form, for the presentation's renaming.
    pub(crate) fn forms_mut(&mut self) -> impl Iterator<Item = &mut Quantity> {
        self.0.iter_mut()
    }
}

/// Comparing with one text: the one form's.
impl PartialEq<&str> for Forms {
    fn eq(&self, other: &&str) -> bool {
        self.single().is_some_and(|q| q == other)
    }
}

/// The forms as one line of prose: `A or B`.
impl fmt::Display for Forms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, q) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str(" or ")?;
            }
            f.write_str(q.text())?;
        }
        Ok(())
    }
}

impl Serialize for Forms {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.single() {
            Some(q) => q.serialize(s),
            None => self.0.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Forms {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Forms, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Several(Vec<Quantity>),
            One(Quantity),
        }
        Ok(match Written::deserialize(d)? {
            Written::Several(forms) => Forms(forms),
            Written::One(q) => Forms(vec![q]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_quantity_keeps_its_expression_in_step_with_its_text() {
        // Internal names are not the parser's (`#`): built, as the analyses build them.
        let (n, m) = (Expr::var("n#2"), Expr::var("m#1"));
        let e = n
            .checked_mul(&m)
            .unwrap()
            .checked_mul(&Expr::constant(8))
            .unwrap();
        let e = e.checked_add(&Expr::constant(8)).unwrap();
        let mut q = Quantity::of(&e);
        let strip = |t: &str| t.replace("#2", "").replace("#1", "");
        q.rename(strip, strip);
        assert_eq!(q.text(), "8*m*n + 8");
        assert_eq!(q.expr(), Some(&symbolic::parse_expr("8*m*n + 8").unwrap()));
    }

    #[test]
    fn a_report_file_s_text_is_read_once_into_its_expression() {
        let q: Quantity = serde_yaml::from_str("\"n - 1\"").unwrap();
        assert_eq!(q.expr(), Some(&symbolic::parse_expr("n - 1").unwrap()));
        let k: Quantity = serde_yaml::from_str("4").unwrap();
        assert_eq!(k.text(), "4");
        let c: Quantity = serde_yaml::from_str("\"(n - 1) / factor\"").unwrap();
        assert!(c.expr().is_none(), "{c:?}");
        assert_eq!(
            serde_yaml::to_string(&c).unwrap().trim(),
            "(n - 1) / factor"
        );
    }
}
