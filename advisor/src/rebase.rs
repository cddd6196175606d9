//! Sections named by a variable the function moved before the loop: the reconstruction
//! builds every address from the value a base had where it was made (a parameter at the
//! function's entry, the pointer a call returned), so after `q += off;`, or in the second
//! of two loops that each advance `q`, the section of `q` is `[8*off, ...)` from that value.
//! A reader and a port take `q` to be the variable as the loop finds it, so the section is
//! given relative to that value instead (`[0, 8*n)`), or withheld when the variable holds
//! something the base does not express.

use analyses::reconstruct::Reconstruction;
use frontend::ir::dominators::Dominators;
use frontend::ir::{Function, Value};
use frontend::loops::Loop;
use std::cell::OnceCell;
use std::collections::HashMap;
use symbolic::{Expr, Var};

/// A function's definitions of each named variable (the values the IR names after it), and
/// its dominator tree on first use (only a variable assigned more than once needs it): made
/// once for all of the function's loops.
#[derive(Debug)]
pub struct Definitions {
    by_name: HashMap<String, Vec<Value>>,
    dominators: OnceCell<Dominators>,
}

impl Definitions {
    pub fn of(func: &Function) -> Definitions {
        let mut by_name: HashMap<String, Vec<Value>> = HashMap::new();
        for v in func.values() {
            if let Some(name) = &func.inst(v).origin.var_name {
                by_name.entry(name.clone()).or_default().push(v);
            }
        }
        Definitions {
            by_name,
            dominators: OnceCell::new(),
        }
    }
}

impl Definitions {
    /// Whether the function assigns `name` in more than one place: only then can the
    /// variable hold at a loop another value than one its name stands for.
    pub fn assigned_again(&self, name: &str) -> bool {
        self.by_name.get(name).is_some_and(|defs| defs.len() > 1)
    }
}

/// Where the variable a section is named after points when the loop starts, against the
/// base value the section is expressed from.
#[derive(Clone, Debug, PartialEq)]
pub enum EntryOffset {
    /// At the base itself (or the name is not a variable of the function).
    Same,
    /// This many bytes past it.
    Moved(Expr),
    /// Somewhere the base does not express, and why.
    Unknown(String),
}

/// How far the variable `name`, as loop `l` finds it, is from `base`, the value the
/// reconstruction expresses the loop's accesses through it from.
pub fn entry_offset(
    func: &Function,
    rec: &Reconstruction,
    definitions: &Definitions,
    l: &Loop,
    name: &str,
    base: &Var,
) -> EntryOffset {
    // A base that is the variable's second value (`q#2`, the pointer the loop around this
    // one advances) is still the variable `q`.
    let name = variable_name(name)
        .filter(|variable| {
            rec.symbols
                .value_of(base)
                .is_some_and(|v| func.inst(v).origin.var_name.as_deref() == Some(*variable))
        })
        .unwrap_or(name);
    let Some(value) = value_at_entry(func, rec, definitions, l, name, base) else {
        return EntryOffset::Same;
    };
    // The base is the variable's value in each iteration: no offset relates it to the
    // loop's start.
    if rec
        .symbols
        .value_of(base)
        .is_some_and(|v| func.inst(v).block == l.header)
    {
        return EntryOffset::Unknown(format!(
            "`{name}` changes from iteration to iteration in a way the index does not express, so its accesses are known only relative to each iteration's value"
        ));
    }
    let Some(expr) = rec.single(value) else {
        return EntryOffset::Unknown(format!(
            "`{name}` holds one of several values where the loop starts, and the section is expressed from another"
        ));
    };
    match expr.checked_sub(&Expr::var(base.name())) {
        Ok(offset) if !offset.contains_var(base) => match offset.as_constant() {
            Some(c) if c == num_rational::BigRational::from_integer(0.into()) => {
                EntryOffset::Same
            }
            _ => EntryOffset::Moved(offset),
        },
        _ => EntryOffset::Unknown(format!(
            "where `{name}` points when the loop starts is not the pointer its accesses are expressed from"
        )),
    }
}

/// The name a numbered symbol is numbered from: `q` for `q#2`.
fn variable_name(symbol: &str) -> Option<&str> {
    match symbol.rsplit_once('#') {
        Some((name, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => Some(name),
        _ => None,
    }
}

/// The value the variable `name` holds when `l` starts, when it may differ from `base`'s:
/// the entry value of a counter of `l`, else the definition of `name` outside `l` that
/// dominates its header most closely. `None` when `name` is defined once (by `base`).
pub fn value_at_entry(
    func: &Function,
    rec: &Reconstruction,
    definitions: &Definitions,
    l: &Loop,
    name: &str,
    base: &Var,
) -> Option<Value> {
    if let Some(iv) = l
        .induction_variables
        .iter()
        .find(|iv| iv.name.as_deref() == Some(name))
    {
        return Some(iv.init);
    }
    let defs: Vec<Value> = definitions
        .by_name
        .get(name)?
        .iter()
        .copied()
        .filter(|&v| !l.blocks.contains(&func.inst(v).block))
        .collect();
    if defs.iter().all(|&v| rec.symbol(v) == Some(base)) {
        return None;
    }
    let dominators = definitions.dominators.get_or_init(|| Dominators::of(func));
    let mut best: Option<Value> = None;
    for &v in &defs {
        let block = func.inst(v).block;
        if !dominators.dominates(block, l.header) {
            continue;
        }
        best = match best {
            None => Some(v),
            Some(b) => {
                let other = func.inst(b).block;
                let later = if block == other {
                    position(func, v) > position(func, b)
                } else {
                    dominators.dominates(other, block)
                };
                Some(if later { v } else { b })
            }
        };
    }
    best
}

fn position(func: &Function, v: Value) -> usize {
    let block = func.inst(v).block;
    func.block(block)
        .insts
        .iter()
        .position(|&x| x == v)
        .unwrap_or(0)
}
