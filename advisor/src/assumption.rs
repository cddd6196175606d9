//! An assumption a result relies on: the sentence the report prints and, where it states a
//! relation over the analyses' symbols (`n > 0 (the loop runs)`), that relation as a typed
//! value, made where the assumption is made.
//!
//! The witness search meets the relations the loop's results assume; it takes them from
//! [`Assumption::relation`], so no report text is read back as an expression. Two
//! assumptions are the same when their sentences are: the sentence is what the report lists
//! once, and the relation is what the sentence says.

use std::cmp::Ordering;
use symbolic::{Expr, SignSet};

/// A relation `expr op 0` the symbols must meet.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub expr: Expr,
    pub op: Relation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
}

impl Relation {
    pub fn holds(self, v: i128) -> bool {
        match self {
            Relation::Gt => v > 0,
            Relation::Ge => v >= 0,
            Relation::Lt => v < 0,
            Relation::Le => v <= 0,
            Relation::Eq => v == 0,
            Relation::Ne => v != 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Assumption {
    /// The sentence the report prints (in the analyses' names until the presentation
    /// renames the report).
    pub text: String,
    /// What the sentence states of the symbols, when it is a relation.
    pub relation: Option<Constraint>,
}

impl Assumption {
    /// An assumption that states no relation the search could meet (an aliasing policy, C's
    /// effective-type rule).
    pub fn plain(text: impl Into<String>) -> Assumption {
        Assumption {
            text: text.into(),
            relation: None,
        }
    }

    /// `expr op 0`, printed as `text`.
    pub fn relation(text: impl Into<String>, expr: Expr, op: Relation) -> Assumption {
        Assumption {
            text: text.into(),
            relation: Some(Constraint { expr, op }),
        }
    }

    /// A sign the monotonicity analysis assumed (`n >= 0`), as it prints it.
    pub fn sign(a: &symbolic::Assumption) -> Assumption {
        let op = match a.sign {
            SignSet::POS => Some(Relation::Gt),
            SignSet::NON_NEG => Some(Relation::Ge),
            SignSet::NEG => Some(Relation::Lt),
            SignSet::NON_POS => Some(Relation::Le),
            SignSet::ZERO => Some(Relation::Eq),
            SignSet::NON_ZERO => Some(Relation::Ne),
            _ => None,
        };
        Assumption {
            text: a.to_string(),
            relation: op.map(|op| Constraint {
                expr: Expr::var(a.var.name()),
                op,
            }),
        }
    }

    /// The sentences of `assumptions`, in order: what a report lists.
    pub fn texts(assumptions: &[Assumption]) -> Vec<String> {
        assumptions.iter().map(|a| a.text.clone()).collect()
    }
}

impl PartialEq for Assumption {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Assumption {}

impl PartialOrd for Assumption {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Assumption {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(&other.text)
    }
}

impl From<String> for Assumption {
    fn from(text: String) -> Assumption {
        Assumption::plain(text)
    }
}

impl From<&str> for Assumption {
    fn from(text: &str) -> Assumption {
        Assumption::plain(text)
    }
}
