//! Symbolic range analysis (thesis §8.3): for every SSA value, an interval `[lo, hi]` whose
//! bounds are symbolic expressions over the function's inbound symbols (parameters,
//! loop-invariant loads such as `image->width`, object base addresses), with explicit
//! infinities.
//!
//! The analysis runs on the monotone framework ([`crate::framework`]): a state maps values
//! to ranges at a program point, joins are interval unions, loop headers widen and then
//! narrow (Table 8.3), instructions follow interval arithmetic (Table 8.4, corrected), and
//! CFG edges refine ranges with the branch condition (Fig. 8.7 h). Beyond the thesis:
//!
//! * the primary induction variable of a normalizable loop gets its exact range from the
//!   trip count (`i in [0, n - 1]`, `[-n, -n + 4*((2*n + 3)/4 - 1)]` for a step of 4), and
//!   the loop's other basic induction variables are expressed through it (Fig. 8.8's
//!   substitution: `k1 in [10, n + 9]` instead of `[10, +inf]`);
//! * ternaries are evaluated per arm under the refined ranges of their condition;
//! * branch constraints reach values known to be equal (identical phis in one block,
//!   value-preserving casts) and go back through `x + c`;
//! * a provably empty refinement marks the edge unreachable;
//! * injected values (thesis §6.2) replace inbound symbols, for re-analysis with profiled
//!   values.

mod bound;
mod interval;
mod transfer;

pub use bound::{Bound, Side, MAX_BOUND_SIZE};
pub use interval::Range;
pub use transfer::RangeState;

use crate::framework::{solve, SolverConfig};
use crate::reconstruct::Reconstruction;
use crate::symbols::SymbolOrigin;
use frontend::ir::{Block, Function, Program, Value};
use frontend::loops::LoopForest;
use std::collections::HashMap;
use symbolic::{Expr, SignEnv, SignSet};

#[derive(Clone, Debug, Default)]
pub struct RangeConfig {
    /// Widening, narrowing and the iteration cap.
    pub solver: SolverConfig,
    /// Values by symbol name (`n`, `image->width`) that take precedence over the flow.
    pub injected: HashMap<String, Expr>,
}

impl RangeConfig {
    /// Injects a value for a symbol (builder style).
    pub fn inject(mut self, name: &str, value: impl Into<InjectedValue>) -> RangeConfig {
        self.injected.insert(name.to_string(), value.into().0);
        self
    }
}

/// A value to inject: a number or an expression.
#[derive(Clone, Debug)]
pub struct InjectedValue(pub Expr);

impl From<i64> for InjectedValue {
    fn from(c: i64) -> Self {
        InjectedValue(Expr::constant(c))
    }
}

impl From<Expr> for InjectedValue {
    fn from(e: Expr) -> Self {
        InjectedValue(e)
    }
}

/// The ranges of one function.
#[derive(Clone, Debug)]
pub struct RangeFacts {
    entry: Vec<RangeState>,
    exit: Vec<RangeState>,
    /// Defining block of each value and whether it is a phi (defined at block entry).
    defs: Vec<(Block, bool)>,
    gave_up: Option<String>,
    visits: usize,
    /// Values that stand for a symbol, for deriving symbol signs.
    symbol_values: Vec<(Value, symbolic::Var)>,
}

impl RangeFacts {
    /// The range of `value` at the entry of `block`, after the phis and the refinements of
    /// the incoming edges. Values defined inside `block` are given at their definition;
    /// values not available there (not dominating, or an unreachable block) are top.
    pub fn at(&self, block: Block, value: Value) -> Range {
        if self.gave_up.is_some() {
            return Range::top();
        }
        if let Some(r) = self.entry.get(block.index()).and_then(|s| s.get(value)) {
            return r.clone();
        }
        match self.defs.get(value.index()) {
            Some((b, _)) if *b == block => self.of(value),
            _ => Range::top(),
        }
    }

    /// The integer `value` holds on every path to the entry of `block`: its range, or the
    /// constraint the branches on the way put on it (`dim` under `if (dim == 3)`, whose
    /// range stays the symbolic point `[dim, dim]`).
    pub fn integer_at(&self, block: Block, value: Value) -> Option<num_bigint::BigInt> {
        if let Some(c) = self.at(block, value).as_integer() {
            return Some(c);
        }
        if self.gave_up.is_some() {
            return None;
        }
        self.entry
            .get(block.index())
            .and_then(|s| s.fact(value))
            .and_then(|r| r.as_integer())
    }

    /// The range of `value` where it is defined.
    pub fn of(&self, value: Value) -> Range {
        if self.gave_up.is_some() {
            return Range::top();
        }
        let Some(&(block, is_phi)) = self.defs.get(value.index()) else {
            return Range::top();
        };
        let states = if is_phi { &self.entry } else { &self.exit };
        states
            .get(block.index())
            .and_then(|s| s.get(value))
            .cloned()
            .unwrap_or_else(Range::top)
    }

    /// Whether the analysis found a way to reach `block`.
    pub fn is_reachable(&self, block: Block) -> bool {
        self.gave_up.is_some() || self.entry.get(block.index()).is_some_and(|s| s.reached())
    }

    /// Why the analysis returned top everywhere, if it did.
    pub fn gave_up(&self) -> Option<&str> {
        self.gave_up.as_deref()
    }

    /// Block visits of the ascending phase.
    pub fn visits(&self) -> usize {
        self.visits
    }

    /// Signs of the function's symbols (parameters, induction variables, invariant loads)
    /// implied by their ranges at the entry of `block`, e.g. `i >= 0` in a loop body.
    pub fn signs_at(&self, block: Block) -> SignEnv {
        let mut env = SignEnv::new();
        let base = SignEnv::new();
        for (v, var) in &self.symbol_values {
            let r = self.at(block, *v);
            let s = r.sign(&base);
            if !s.is_top() && s != SignSet::EMPTY {
                env.set(var.clone(), s);
            }
        }
        env
    }
}

/// Runs the symbolic range analysis on `func`. `signs` holds what is known about the signs
/// of symbols (from the sign analysis or the user); the analysis adds the signs implied by
/// its own refined ranges at each point.
pub fn range_analysis(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    rec: &Reconstruction,
    signs: &SignEnv,
    config: &RangeConfig,
) -> RangeFacts {
    let defs = func
        .insts
        .iter()
        .map(|i| (i.block, i.kind.is_phi()))
        .collect();
    let mut symbol_values: Vec<(Value, symbolic::Var)> = Vec::new();
    for sym in rec.symbols.iter() {
        let v = match sym.origin {
            SymbolOrigin::Param(i) => func.params.get(i as usize).map(|p| p.value),
            SymbolOrigin::Induction(v) | SymbolOrigin::Object(v) => Some(v),
            SymbolOrigin::Load { load, .. } => Some(load),
            _ => None,
        };
        if let Some(v) = v {
            symbol_values.push((v, sym.var.clone()));
        }
    }
    symbol_values.sort();
    if let Some(reason) = &forest.irreducible {
        return RangeFacts {
            entry: Vec::new(),
            exit: Vec::new(),
            defs,
            gave_up: Some(format!("{reason}; ranges are top")),
            visits: 0,
            symbol_values,
        };
    }
    let analysis = transfer::RangeAnalysis::new(program, func, forest, rec, signs, config);
    let solution = solve(&analysis, func, forest, config.solver);
    RangeFacts {
        entry: solution.entry,
        exit: solution.exit,
        defs,
        gave_up: solution.gave_up,
        visits: solution.visits,
        symbol_values,
    }
}
