//! The IR verifier: the invariants every pass may rely on, checked by tests after lowering.
//!
//! - every value is listed in exactly the block its `block` field names;
//! - phis come first in their block and have one argument per predecessor, in any order;
//! - no phi is trivial (all its arguments one value, or itself): SSA construction removes
//!   them, and a phi standing for a plain copy hides induction variables from the analyses;
//! - predecessor lists agree with terminator successors;
//! - a value's definition dominates each use (for phi arguments: the end of the incoming
//!   predecessor).

use super::dominators::Dominators;
use super::{Function, InstKind, Terminator, Value};

/// Checks the function; returns one message per violation.
pub fn verify_function(func: &Function) -> Vec<String> {
    let mut errors = Vec::new();
    let mut position = vec![None; func.insts.len()];
    for b in func.blocks() {
        let mut seen_non_phi = false;
        for (i, &v) in func.block(b).insts.iter().enumerate() {
            if v.index() >= func.insts.len() {
                errors.push(format!("{b}: lists unknown value {v}"));
                continue;
            }
            if position[v.index()].is_some() {
                errors.push(format!("{v} is listed twice"));
            }
            position[v.index()] = Some((b, i));
            let inst = func.inst(v);
            if inst.block != b {
                errors.push(format!("{v} is in {b} but records block {}", inst.block));
            }
            match &inst.kind {
                InstKind::Phi(args) => {
                    if seen_non_phi {
                        errors.push(format!("{b}: phi {v} after a non-phi instruction"));
                    }
                    let mut arg_blocks: Vec<_> = args.iter().map(|(p, _)| *p).collect();
                    let mut preds = func.block(b).preds.clone();
                    arg_blocks.sort();
                    preds.sort();
                    if arg_blocks != preds {
                        errors.push(format!("{b}: phi {v} has arguments from {arg_blocks:?} but predecessors {preds:?}"));
                    }
                    let mut others = args.iter().map(|(_, a)| *a).filter(|a| *a != v);
                    if let Some(first) = others.next() {
                        if others.all(|a| a == first) {
                            errors.push(format!(
                                "{b}: phi {v} is trivial: every argument is {first}"
                            ));
                        }
                    }
                }
                InstKind::Undef => {}
                _ => seen_non_phi = true,
            }
        }
    }
    for v in func.values() {
        if position[v.index()].is_none() {
            errors.push(format!("{v} is not listed in any block"));
        }
    }
    for b in func.blocks() {
        for s in func.block(b).terminator.successors() {
            if s.index() >= func.blocks.len() {
                errors.push(format!("{b} jumps to unknown block {s}"));
            } else if !func.block(s).preds.contains(&b) {
                errors.push(format!(
                    "{b} -> {s} is missing from the predecessors of {s}"
                ));
            }
        }
        for p in &func.block(b).preds {
            if !func.block(*p).terminator.successors().contains(&b) {
                errors.push(format!(
                    "{b} lists predecessor {p} which does not jump to it"
                ));
            }
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    let dominators = Dominators::of(func);
    let dominates_use = |def: Value, use_block: super::Block, use_index: Option<usize>| -> bool {
        let Some((def_block, def_index)) = position[def.index()] else {
            return false;
        };
        if def_block == use_block {
            return use_index.is_none_or(|u| def_index < u);
        }
        dominators.dominates(def_block, use_block)
    };
    for b in func.blocks() {
        for (i, &v) in func.block(b).insts.iter().enumerate() {
            match &func.inst(v).kind {
                InstKind::Phi(args) => {
                    for (pred, arg) in args {
                        if !dominates_use(*arg, *pred, None) {
                            errors.push(format!(
                                "phi {v}: argument {arg} does not dominate the end of {pred}"
                            ));
                        }
                    }
                }
                kind => {
                    for op in kind.operands() {
                        if !dominates_use(op, b, Some(i)) {
                            errors.push(format!("{v}: operand {op} does not dominate its use"));
                        }
                    }
                }
            }
        }
        let uses = match &func.block(b).terminator {
            Terminator::Return(Some(v)) => vec![*v],
            Terminator::Branch { cond, .. } => vec![*cond],
            _ => Vec::new(),
        };
        for u in uses {
            if !dominates_use(u, b, None) {
                errors.push(format!("{b}: terminator operand {u} does not dominate it"));
            }
        }
    }
    errors
}
