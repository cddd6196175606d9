//! Witnesses for dependence claims: two concrete iterations of a loop and the element both
//! touch, under stated values of the program's variables ("i = 3 writes a[4]; i = 4 reads
//! a[4] (n = 10)").
//!
//! A claim that a loop carries a dependence is only made with a witness: the static tests
//! of [`crate::dependence`] say where to look, [`search`] finds small values of the symbols
//! (meeting the signs, the report's assumptions and the ranges the program's own tests
//! imply) and two iterations inside the iteration space whose accesses overlap, and the
//! result is checked once more with the engine's exact evaluation before it is stated.
//! A pair for which no witness is found is left to a profile (`needs-profile`), or dropped
//! when the search covered the whole space and found the accesses never meet.

pub mod counter;
mod search;
mod solve;
pub mod text;

use crate::access::MemAccess;
use crate::assumption::Assumption;
use crate::model::{Witness, WitnessAccess};
use crate::space::{IvRange, Space};
use analyses::range::{Bound, RangeFacts};
use analyses::reconstruct::Reconstruction;
use frontend::ir::{Block, Function, InstKind, Value};
use frontend::loops::{LoopForest, LoopId};
use frontend::unit::Unit;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
pub use search::Constraint;
use search::{Found, Outcome, Problem, Relation, SideInput};
use std::collections::{BTreeMap, HashMap, HashSet};
use symbolic::{Expr, Var};

/// What the witness builders need from the function being analysed.
#[derive(Debug)]
pub struct Context<'a> {
    pub unit: &'a Unit,
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub rec: &'a Reconstruction,
    pub ranges: &'a RangeFacts,
    /// The constraints of the last loop asked for, with the number of assumptions they were
    /// read from (every pair of a loop needs the same).
    pub cache: std::cell::RefCell<Option<(LoopId, usize, Vec<Constraint>)>>,
    /// The searches done, by the problem's full text: a loop body that repeats the same
    /// pair of accesses in many statements (phonopy's symmetrization writes `fc[m]` and
    /// `fc[n]` in eight) asks the same bounded search once, not once per pair of
    /// statements. The text holds everything the search reads, so equal texts are equal
    /// problems.
    pub searches: std::cell::RefCell<HashMap<String, Outcome>>,
}

impl Context<'_> {
    /// [`search::search`], once per distinct problem.
    fn search(&self, problem: &search::Problem) -> Outcome {
        let key = format!("{problem:?}");
        if let Some(known) = self.searches.borrow().get(&key) {
            return known.clone();
        }
        let outcome = search::search(problem);
        self.searches.borrow_mut().insert(key, outcome.clone());
        outcome
    }
}

/// How far up the dominator tree [`Context::dominating_conditions`] looks for branches.
const DOMINATORS_READ: usize = 64;

/// A witness and its one-line text for the reason message.
#[derive(Clone, Debug)]
pub struct Built {
    pub witness: Witness,
    pub text: String,
}

/// Why there is no witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The whole iteration space was enumerated (no symbol to choose) and the two accesses
    /// never touch a common byte in different iterations: there is no dependence.
    Independent,
    /// None was found; the text says what was tried.
    NotShown(String),
}

impl<'a> Context<'a> {
    fn line(&self, v: Value) -> u32 {
        self.unit
            .resolve(self.func.inst(v).origin.span)
            .map(|r| r.line)
            .unwrap_or(0)
    }

    fn snippet(&self, v: Value) -> String {
        self.unit.snippet(self.func.inst(v).origin.span)
    }

    /// Whether an iteration-space entry is a loop of this function (not a callee's range
    /// variable, see `summaries::synthetic_loop`).
    fn is_loop(&self, id: LoopId) -> bool {
        (id.0 as usize) < self.forest.loops.len()
    }

    /// The loops of `space` around `block`, outermost first.
    fn levels<'s>(&self, space: &'s Space, block: Block) -> Vec<&'s IvRange> {
        let mut levels: Vec<&IvRange> = space
            .ivs
            .iter()
            .filter(|r| self.is_loop(r.loop_id) && self.forest.loop_(r.loop_id).contains(block))
            .collect();
        levels.sort_by_key(|r| self.forest.loop_(r.loop_id).depth);
        levels
    }

    /// Whether a base pointer is the same in every iteration of loop `id`: not loaded in
    /// the loop, or loaded from an address that does not change between its iterations
    /// and that nothing the loop stores can overwrite (C99 6.5p7: a store of a `double`
    /// does not change a `double *`; a call might change anything).
    fn base_is_fixed(&self, id: LoopId, base: &Var, variant: &HashSet<Var>) -> bool {
        if !variant.contains(base) {
            return true;
        }
        let Some(analyses::symbols::SymbolOrigin::Load { load, address }) =
            self.rec.symbols.info(base).map(|s| &s.origin)
        else {
            return false;
        };
        let [at] = self.rec.of(*address) else {
            return false;
        };
        let l = self.forest.loop_(id);
        let inside: HashSet<Var> = self
            .forest
            .ids()
            .filter(|c| l.contains(self.forest.loop_(*c).header))
            .filter_map(|c| self.forest.loop_(c).primary_iv())
            .filter_map(|iv| self.rec.symbol(iv.phi).cloned())
            .collect();
        if at
            .vars()
            .iter()
            .any(|v| inside.contains(v) || variant.contains(v))
        {
            return false;
        }
        let loaded = self.func.inst(*load).ty;
        l.blocks.iter().all(|b| {
            self.func.block(*b).insts.iter().all(|v| {
                let inst = self.func.inst(*v);
                match inst.kind {
                    InstKind::Store { .. } => {
                        !crate::access::types_may_alias(self.unit, inst.ty, loaded)
                    }
                    InstKind::Call { .. } => false,
                    _ => true,
                }
            })
        })
    }

    /// The conditions under which loop `id` is reached from the loops around it that are
    /// part of `space`: every branch in those loops (not in `id`) with a successor that only
    /// it leads to and that dominates `id`'s header (`if (k != j) for (m ...)`). `Err` when
    /// one is not a comparison of values the engine can evaluate: a witness could name
    /// iterations of the enclosing loops that never reach the loop.
    fn guards(&self, id: LoopId, space: &Space) -> Result<Vec<Constraint>, String> {
        let l = self.forest.loop_(id);
        let mut out = Vec::new();
        for r in space.ivs.iter().filter(|r| self.is_loop(r.loop_id)) {
            let c = self.forest.loop_(r.loop_id);
            if r.loop_id == id || !c.contains(l.header) {
                continue;
            }
            for &b in &c.blocks {
                if l.contains(b) || self.forest.innermost(b) != Some(r.loop_id) {
                    continue;
                }
                let frontend::ir::Terminator::Branch {
                    cond,
                    then_block,
                    else_block,
                } = self.func.block(b).terminator
                else {
                    continue;
                };
                for (succ, holds) in [(then_block, true), (else_block, false)] {
                    let only_from_here = self.func.block(succ).preds.as_slice() == [b];
                    if only_from_here && self.forest.dominates(succ, l.header) {
                        let relation = self.relation(cond, holds, 0).ok_or_else(|| {
                            let line = self
                                .unit
                                .resolve(self.func.block(b).terminator_span)
                                .map(|r| r.line)
                                .unwrap_or(0);
                            format!("the loop is reached only under the condition at line {line}, which the search cannot evaluate")
                        })?;
                        out.push(relation);
                    }
                }
            }
        }
        Ok(out)
    }

    /// `cond` (true when `holds`, else false) as `e OP 0` over the reconstructed operands.
    fn relation(&self, cond: Value, holds: bool, depth: usize) -> Option<Constraint> {
        let v = frontend::loops::strip_casts(self.func, cond);
        let InstKind::Binary(op, a, b) = self.func.inst(v).kind else {
            return None;
        };
        if !op.is_comparison() || depth > 4 {
            return None;
        }
        let (Some(ea), Some(eb)) = (self.single(a), self.single(b)) else {
            return None;
        };
        // `c != 0` / `c == 0` on a comparison `c`: the comparison itself.
        let inner = frontend::loops::strip_casts(self.func, a);
        let is_cmp =
            matches!(self.func.inst(inner).kind, InstKind::Binary(o, ..) if o.is_comparison());
        if is_cmp && eb == Expr::constant(0) {
            match op {
                frontend::ir::BinOp::Ne => return self.relation(inner, holds, depth + 1),
                frontend::ir::BinOp::Eq => return self.relation(inner, !holds, depth + 1),
                _ => {}
            }
        }
        use frontend::ir::BinOp as B;
        let op = match (op, holds) {
            (B::Lt, true) | (B::Ge, false) => Relation::Lt,
            (B::Le, true) | (B::Gt, false) => Relation::Le,
            (B::Gt, true) | (B::Le, false) => Relation::Gt,
            (B::Ge, true) | (B::Lt, false) => Relation::Ge,
            (B::Eq, true) | (B::Ne, false) => Relation::Eq,
            (B::Ne, true) | (B::Eq, false) => Relation::Ne,
            _ => return None,
        };
        Some(Constraint {
            expr: ea.checked_sub(&eb).ok()?,
            op,
        })
    }

    fn single(&self, v: Value) -> Option<Expr> {
        match self.rec.of(v) {
            [e] => Some(e.clone()),
            _ => None,
        }
    }

    /// The size of the memory object a base symbol names, when it is a local or a global.
    fn object_bytes(&self, base: &Var) -> Option<u64> {
        let types = &self.unit.lowered.program.types;
        match self.rec.symbols.info(base).map(|s| &s.origin) {
            Some(analyses::symbols::SymbolOrigin::Object(v)) => {
                let pointee = types.pointee(self.func.inst(*v).ty)?;
                types.size_of(pointee)
            }
            _ => None,
        }
    }

    /// What the symbols must meet: the relations the loop's assumptions carry (`n > 0`,
    /// `m >= 0`, typed where they are assumed), and the range of each symbol at the loop's header (the
    /// program's own tests, `if (n < 2) return;`).
    fn constraints(&self, id: LoopId, assumptions: &[Assumption]) -> Vec<Constraint> {
        if let Some((l, n, c)) = &*self.cache.borrow() {
            if *l == id && *n == assumptions.len() {
                return c.clone();
            }
        }
        let out = self.read_constraints(id, assumptions);
        *self.cache.borrow_mut() = Some((id, assumptions.len(), out.clone()));
        out
    }

    fn read_constraints(&self, id: LoopId, assumptions: &[Assumption]) -> Vec<Constraint> {
        let mut out: Vec<Constraint> = assumptions
            .iter()
            .filter_map(|a| a.relation.clone())
            .collect();
        let header = self.forest.loop_(id).header;
        for symbol in self.rec.symbols.iter() {
            let Some(v) = self.rec.symbols.value_of(&symbol.var) else {
                continue;
            };
            if symbol.is_pointer {
                continue;
            }
            let range = self.ranges.at(header, v);
            let me = Expr::var(symbol.var.name());
            if let Bound::Finite(lo) = &range.lo {
                if let Ok(e) = me.checked_sub(lo) {
                    out.push(Constraint {
                        expr: e,
                        op: Relation::Ge,
                    });
                }
            }
            if let Bound::Finite(hi) = &range.hi {
                if let Ok(e) = hi.checked_sub(&me) {
                    out.push(Constraint {
                        expr: e,
                        op: Relation::Ge,
                    });
                }
            }
        }
        out.extend(self.dominating_conditions(id));
        out
    }

    /// The conditions of the branches outside loop `id` that every path to its header
    /// takes (`if (adrs != adrs_t)` around phono3py's in-place transposes): each holds
    /// whenever the loop starts, over values the loop does not change. The search keeps
    /// those over its symbols; the box proofs use `e != 0` to exclude a zero difference.
    /// At most [`DOMINATORS_READ`] dominators are read per loop, so that a function of
    /// thousands of loops in a row stays linear.
    fn dominating_conditions(&self, id: LoopId) -> Vec<Constraint> {
        let l = self.forest.loop_(id);
        let mut out = Vec::new();
        let mut at = l.header;
        for _ in 0..DOMINATORS_READ {
            let Some(up) = self.forest.idom.get(at.index()).copied().flatten() else {
                break;
            };
            if let [b] = self.func.block(at).preds.as_slice() {
                if let frontend::ir::Terminator::Branch {
                    cond,
                    then_block,
                    else_block,
                } = self.func.block(*b).terminator
                {
                    // Both edges to one block (`if (c) ;`) say nothing.
                    if !l.contains(*b) && then_block != else_block {
                        if let Some(c) = self.relation(cond, at == then_block, 0) {
                            out.push(c);
                        }
                    }
                }
            }
            at = up;
        }
        out
    }
}

/// The exact value of `e` at the given values.
fn exact(e: &Expr, values: &[(Var, i128)]) -> Option<i128> {
    let ctx: HashMap<Var, BigRational> = values
        .iter()
        .map(|(v, x)| (v.clone(), BigRational::from_integer(BigInt::from(*x))))
        .collect();
    let r = e.eval(&ctx).ok()?;
    r.is_integer().then(|| r.to_integer().to_i128())?
}

/// Checks a found witness with the engine's exact arithmetic: every induction variable at
/// an iteration of its loop, the enclosing loops at the same iteration on both sides, a
/// later iteration of the carrier on the second, and overlapping bytes.
fn verify(found: &Found, problem: &Problem) -> bool {
    let side_ok = |side: &SideInput, ivs: &[(Var, i128)], offset: i128| -> Option<()> {
        let mut ctx: Vec<(Var, i128)> = found.values.clone();
        for (level, (var, v)) in side.levels.iter().zip(ivs) {
            if &level.var != var {
                return None;
            }
            let init = exact(&level.init, &ctx)?;
            let trips = exact(&level.trips, &ctx)?;
            let k = (v - init).checked_div(level.step)?;
            if init + k * level.step != *v || k < 0 || k >= trips {
                return None;
            }
            ctx.push((var.clone(), *v));
        }
        (exact(side.offset, &ctx)? == offset).then_some(())
    };
    if side_ok(&problem.first, &found.first, found.first_offset).is_none()
        || side_ok(&problem.second, &found.second, found.second_offset).is_none()
    {
        return false;
    }
    let carrier_at = |ivs: &[(Var, i128)]| ivs.iter().position(|(v, _)| v == problem.carrier);
    let (Some(a), Some(b)) = (carrier_at(&found.first), carrier_at(&found.second)) else {
        return false;
    };
    // The enclosing loops' iteration reaches the loop.
    let mut ctx = found.values.clone();
    ctx.extend(found.first[..a].iter().cloned());
    let reached = problem
        .guards
        .iter()
        .all(|g| exact(&g.expr, &ctx).is_some_and(|v| g.op.holds(v)));
    if !reached {
        return false;
    }
    let step = problem.first.levels[a].step;
    let later = (found.second[b].1 - found.first[a].1) * step.signum() > 0;
    let same_context = a == b && found.first[..a] == found.second[..b];
    let (o1, s1) = (found.first_offset, i128::from(problem.first.bytes));
    let (o2, s2) = (found.second_offset, i128::from(problem.second.bytes));
    later && same_context && o1 < o2 + s2 && o2 < o1 + s1
}

/// `i = 3, j = 0`
fn iteration_text(ivs: &[(Var, i128)], names: &HashMap<Var, String>) -> String {
    ivs.iter()
        .map(|(v, x)| format!("{} = {x}", names[v]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn values_text(values: &BTreeMap<String, i64>) -> String {
    if values.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(" ({})", parts.join(", "))
}

fn to_map(ivs: &[(Var, i128)], names: &HashMap<Var, String>) -> BTreeMap<String, i64> {
    ivs.iter()
        .filter_map(|(v, x)| Some((names[v].clone(), i64::try_from(*x).ok()?)))
        .collect()
}

fn kind_word(is_store: bool) -> (&'static str, &'static str) {
    if is_store {
        ("write", "writes")
    } else {
        ("read", "reads")
    }
}

impl<'a> Context<'a> {
    /// The element an access touches, as the source writes it (`C[0][1]`), when the
    /// subscripts evaluate and agree with the address; else `a[k]` for a one-level index,
    /// else the bytes.
    fn element(
        &self,
        access: &MemAccess,
        base: &Var,
        base_name: &str,
        ctx: &[(Var, i128)],
        offset: i128,
    ) -> String {
        let vars: Vec<&Var> = ctx.iter().map(|(v, _)| v).collect();
        let source = text::source_names(&vars);
        let by_name: HashMap<String, i64> = ctx
            .iter()
            .filter_map(|(v, x)| Some((source.get(v)?.clone(), i64::try_from(*x).ok()?)))
            .collect();
        // The address as a chain of `ptr_add`s from the base, outermost first.
        let mut chain = Vec::new();
        let mut addr = access.addr;
        while let InstKind::PtrAdd { base, index, scale } = self.func.inst(addr).kind {
            chain.push((index, scale));
            addr = base;
        }
        chain.reverse();
        let root_is_base = matches!(self.rec.of(addr), [e] if *e == Expr::var(base.name()));
        let contributions: Option<Vec<i128>> = root_is_base
            .then(|| {
                chain
                    .iter()
                    .map(|(index, scale)| match self.rec.of(*index) {
                        [e] => exact(e, ctx)?.checked_mul(i128::from(*scale)),
                        _ => None,
                    })
                    .collect()
            })
            .flatten();
        let lvalue = text::lvalue(&self.snippet(access.inst)).to_string();
        if let (Some(contributions), Some((name, parts))) =
            (&contributions, text::subscripts(&lvalue))
        {
            let values: Option<Vec<i64>> = parts.iter().map(|p| text::eval(p, &by_name)).collect();
            if let Some(values) = values {
                let agrees = values.len() == contributions.len()
                    && contributions.iter().sum::<i128>() == offset
                    && values
                        .iter()
                        .zip(contributions)
                        .enumerate()
                        .all(|(k, (t, c))| {
                            let t = i128::from(*t);
                            if k + 1 == contributions.len() {
                                *c == t * i128::from(access.elem_bytes)
                            } else if t == 0 {
                                *c == 0
                            } else {
                                c % t == 0 && c / t > 0
                            }
                        });
                if agrees {
                    let subs: String = values.iter().map(|v| format!("[{v}]")).collect();
                    return format!("{name}{subs}");
                }
            }
        }
        // The subscripts of the address itself, when each `ptr_add` steps by its element
        // (not a variable-length row, whose index is premultiplied).
        let types = &self.unit.lowered.program.types;
        let plain = chain.iter().all(|(_, scale)| *scale > 0)
            && chain_steps_by_element(self.func, types, access.addr);
        // A base named after an expression (`F[i]`, a row loaded through a row pointer)
        // reads with the witness's values (`F[1]`).
        let base_name = text::substitute(base_name, &by_name);
        if let (Some(contributions), true, false) = (&contributions, plain, chain.is_empty()) {
            if contributions.iter().sum::<i128>() == offset {
                // Pointer arithmetic on one element type (`q = aux + ii + 1; q[0]`) is one
                // subscript, `aux[1]`; a new one starts where the step changes (a row).
                let mut levels: Vec<(i128, i128)> = Vec::new();
                for (c, (_, scale)) in contributions.iter().zip(&chain) {
                    let scale = i128::from(*scale);
                    match levels.last_mut() {
                        Some((sum, s)) if *s == scale => *sum += c,
                        _ => levels.push((*c, scale)),
                    }
                }
                let subs: String = levels
                    .iter()
                    .map(|(c, scale)| format!("[{}]", c / scale))
                    .collect();
                return format!("{base_name}{subs}");
            }
        }
        let size = i128::from(access.elem_bytes);
        if contributions.is_some_and(|c| c.len() == 1) && size > 0 && offset % size == 0 {
            return format!("{base_name}[{}]", offset / size);
        }
        format!("bytes [{offset}, {}) of `{base_name}`", offset + size)
    }
}

/// Whether every `ptr_add` from `addr` down to its root steps by the size of the type its
/// result points to: then its index is a C subscript.
fn chain_steps_by_element(
    func: &Function,
    types: &frontend::types::TypeTable,
    mut addr: Value,
) -> bool {
    while let InstKind::PtrAdd { base, scale, .. } = func.inst(addr).kind {
        let element = types
            .pointee(func.inst(addr).ty)
            .and_then(|t| types.size_of(t));
        if element != Some(scale) {
            return false;
        }
        addr = base;
    }
    true
}

/// A witness for a memory dependence between `first` (in an earlier iteration of loop `id`)
/// and `second` (in a later one), which the static tests found dependent (`undecided`: or
/// could not decide; the search is then smaller).
#[allow(clippy::too_many_arguments)]
pub fn memory(
    cx: &Context,
    id: LoopId,
    space: &Space,
    first: &MemAccess,
    second: &MemAccess,
    distance: Option<i64>,
    undecided: bool,
    variant: &HashSet<Var>,
    assumptions: &[Assumption],
) -> Result<Built, Missing> {
    let not_shown = |s: &str| Err(Missing::NotShown(s.to_string()));
    let (base_f, f, g) = common_base(cx, id, space, first, second, variant)?;
    let Some(carrier) = space.of_loop(id) else {
        return not_shown("the loop has no iteration space");
    };
    let object_bytes = cx.object_bytes(base_f);
    let problem = Problem {
        carrier: &carrier.var,
        first: SideInput {
            offset: f,
            bytes: first.elem_bytes,
            levels: cx.levels(space, cx.func.inst(first.inst).block),
            subscripts: first.extents.clone(),
            object_bytes,
        },
        second: SideInput {
            offset: g,
            bytes: second.elem_bytes,
            levels: cx.levels(space, cx.func.inst(second.inst).block),
            subscripts: second.extents.clone(),
            object_bytes,
        },
        signs: &space.env,
        constraints: cx.constraints(id, assumptions),
        distance,
        guards: cx.guards(id, space).map_err(Missing::NotShown)?,
        extra: Vec::new(),
        // A pair the static tests could not decide gets a smaller search.
        budget: if undecided {
            search::POINT_BUDGET / 10
        } else {
            search::POINT_BUDGET
        },
    };
    if [f, g]
        .iter()
        .flat_map(|e| e.vars())
        .any(|v| cx.rec.symbols.is_pointer(&v))
    {
        return not_shown("the offset depends on a pointer value");
    }
    let found = match cx.search(&problem) {
        Outcome::Found(found) => found,
        Outcome::NotFound {
            exhaustive: true, ..
        } => return Err(Missing::Independent),
        Outcome::NotFound { what, .. } => return Err(Missing::NotShown(what)),
    };
    if !verify(&found, &problem) {
        return not_shown("the witness found did not verify");
    }
    found_again_at_generic_layout(cx, &problem, &found)?;
    Ok(memory_witness(cx, first, second, base_f, &found))
}

/// The base both accesses share and their offsets from it, when a witness can be about
/// one element of one object.
fn common_base<'m>(
    cx: &Context,
    id: LoopId,
    space: &Space,
    first: &'m MemAccess,
    second: &'m MemAccess,
    variant: &HashSet<Var>,
) -> Result<(&'m Var, &'m Expr, &'m Expr), Missing> {
    let not_shown = |s: &str| Err(Missing::NotShown(s.to_string()));
    // A called function's access is the call's, at an offset over the loop's own
    // variables (`h[0]`, `g[i]`): the call makes it whenever it runs (an access under a
    // condition has no witness). One over a callee's loop (a range variable) or an offset
    // the summary could not express is no claim.
    let callee_ranged = |a: &MemAccess| {
        a.callee.is_some()
            && a.alternatives.iter().any(|(_, offset)| {
                offset.vars().iter().any(|v| {
                    variant.contains(v)
                        || space
                            .ivs
                            .iter()
                            .any(|r| &r.var == v && !cx.is_loop(r.loop_id))
                })
            })
    };
    if callee_ranged(first) || callee_ranged(second) {
        return not_shown("an access is inside a called function");
    }
    let ([(Some(base_f), f)], [(Some(base_g), g)]) = (
        first.alternatives.as_slice(),
        second.alternatives.as_slice(),
    ) else {
        return not_shown("an access has several possible addresses");
    };
    if base_f != base_g {
        return not_shown("the accesses have different base pointers");
    }
    // A base loaded anew in every iteration (`rows[i]`) may point elsewhere each time: the
    // same offset from it is not the same element.
    if !cx.base_is_fixed(id, base_f, variant) {
        return Err(Missing::NotShown(format!(
            "the base pointer `{base_f}` is loaded in every iteration and may differ between them"
        )));
    }
    Ok((base_f, f, g))
}

/// Strides and offsets that no loop bound involves: the dependence must not hinge on the
/// small values the search chose (`y[i*s]` and `y[i*s + v]` meet only when `v` is a
/// multiple of `s` below the row count). Pinned to other values, the search must find it
/// again, or the claim depends on the program's data.
fn found_again_at_generic_layout(
    cx: &Context,
    problem: &Problem,
    found: &search::Found,
) -> Result<(), Missing> {
    let layout = layout_symbols(problem, found);
    if layout.is_empty() {
        return Ok(());
    }
    let mut generic = problem.clone();
    let pinned: Vec<(Var, i128)> = layout
        .iter()
        .zip(GENERIC_VALUES.iter().cycle())
        .map(|(v, x)| ((*v).clone(), *x))
        .collect();
    for (v, x) in &pinned {
        generic.constraints.push(search::Constraint {
            expr: Expr::var(v.name())
                .checked_sub(&Expr::constant(*x as i64))
                .unwrap_or_else(|_| Expr::var(v.name())),
            op: search::Relation::Eq,
        });
    }
    if matches!(cx.search(&generic), Outcome::Found(_)) {
        return Ok(());
    }
    let shown = |values: &mut dyn Iterator<Item = (&Var, i128)>| {
        values
            .map(|(v, x)| format!("{} = {x}", v.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<(&Var, i128)> = found
        .values
        .iter()
        .filter(|(v, _)| layout.contains(&v))
        .map(|(v, x)| (v, *x))
        .collect();
    Err(Missing::NotShown(format!(
        "the accesses meet when {} but not when {}: whether they do depends on the values the program passes",
        shown(&mut chosen.into_iter()),
        shown(&mut pinned.iter().map(|(v, x)| (v, *x)))
    )))
}

/// The witness the search found, in the program's names: each side's iteration and
/// element, and the values chosen for the other symbols.
fn memory_witness(
    cx: &Context,
    first: &MemAccess,
    second: &MemAccess,
    base_f: &Var,
    found: &search::Found,
) -> Built {
    let all: Vec<&Var> = found
        .values
        .iter()
        .chain(&found.first)
        .chain(&found.second)
        .map(|(v, _)| v)
        .chain(std::iter::once(base_f))
        .collect();
    let names = text::display_names(&all);
    let base_name = names[base_f].clone();
    let side_of = |access: &MemAccess, ivs: &[(Var, i128)], offset: i128| {
        let mut ctx = found.values.clone();
        ctx.extend(ivs.iter().cloned());
        let element = cx.element(access, base_f, &base_name, &ctx, offset);
        let (kind, verb) = kind_word(access.is_store);
        let side = WitnessAccess {
            iteration: to_map(ivs, &names),
            access: text::lvalue(&cx.snippet(access.inst)).to_string(),
            line: cx.line(access.inst),
            kind: kind.into(),
            byte_offset: i64::try_from(offset).ok(),
            bytes: Some(access.elem_bytes),
            element: element.clone(),
        };
        let text = format!("{} {verb} {element}", iteration_text(ivs, &names));
        (side, text)
    };
    let (a, a_text) = side_of(first, &found.first, found.first_offset);
    let (b, b_text) = side_of(second, &found.second, found.second_offset);
    let values: BTreeMap<String, i64> = found
        .values
        .iter()
        .filter_map(|(v, x)| Some((names[v].clone(), i64::try_from(*x).ok()?)))
        .collect();
    let text = format!("{a_text}; {b_text}{}", values_text(&values));
    Built {
        witness: Witness {
            values,
            first: a,
            second: b,
            condition: None,
        },
        text,
    }
}

/// Values a layout symbol is pinned to when a witness is checked for not hinging on the
/// small values the search chose: distinct primes, so no stride divides another offset.
const GENERIC_VALUES: [i128; 4] = [37, 41, 43, 47];

/// The symbols a witness chose values for that appear in an access's offset but in no loop
/// bound: strides and offsets of the layout, as opposed to the sizes that decide how many
/// iterations run. (Constraints and guards over them stay in force when they are pinned.)
fn layout_symbols<'p>(problem: &Problem, found: &'p search::Found) -> Vec<&'p Var> {
    let mut bound: HashSet<Var> = HashSet::new();
    for level in problem.first.levels.iter().chain(&problem.second.levels) {
        for e in [
            &level.init,
            &level.lo,
            &level.hi,
            &level.trips,
            &level.bound,
        ] {
            bound.extend(e.vars());
        }
    }
    for e in &problem.extra {
        bound.extend(e.vars());
    }
    let in_offsets: HashSet<Var> = problem
        .first
        .offset
        .vars()
        .into_iter()
        .chain(problem.second.offset.vars())
        .collect();
    found
        .values
        .iter()
        .map(|(v, _)| v)
        .filter(|v| in_offsets.contains(*v) && !bound.contains(*v))
        .collect()
}

/// A witness for an indirect update (`hist[key[i]] += w`): two iterations that touch the
/// same element when the data they index by are equal, the condition stated.
pub fn indirect(
    cx: &Context,
    id: LoopId,
    space: &Space,
    first: &MemAccess,
    second: &MemAccess,
    variant: &HashSet<Var>,
    assumptions: &[Assumption],
) -> Option<Built> {
    let ([(Some(base), f)], [(Some(base_g), g)]) = (
        first.alternatives.as_slice(),
        second.alternatives.as_slice(),
    ) else {
        return None;
    };
    if base != base_g
        || !cx.base_is_fixed(id, base, variant)
        || first.conditional
        || second.conditional
    {
        return None;
    }
    let carrier = space.of_loop(id)?;
    let data: Vec<Var> = f
        .vars()
        .into_iter()
        .chain(g.vars())
        .filter(|v| variant.contains(v))
        .collect();
    // Equal data on both sides: every loaded index the same (zero) value.
    let mut constraints = cx.constraints(id, assumptions);
    for v in &data {
        constraints.push(Constraint {
            expr: Expr::var(v.name()),
            op: Relation::Eq,
        });
    }
    let problem = Problem {
        carrier: &carrier.var,
        first: SideInput {
            offset: f,
            bytes: first.elem_bytes,
            levels: cx.levels(space, cx.func.inst(first.inst).block),
            subscripts: Vec::new(),
            object_bytes: None,
        },
        second: SideInput {
            offset: g,
            bytes: second.elem_bytes,
            levels: cx.levels(space, cx.func.inst(second.inst).block),
            subscripts: Vec::new(),
            object_bytes: None,
        },
        signs: &space.env,
        constraints,
        distance: Some(1),
        guards: cx.guards(id, space).ok()?,
        extra: Vec::new(),
        budget: search::POINT_BUDGET,
    };
    let Outcome::Found(found) = cx.search(&problem) else {
        return None;
    };
    if !verify(&found, &problem) {
        return None;
    }
    let all: Vec<&Var> = found
        .values
        .iter()
        .chain(&found.first)
        .chain(&found.second)
        .map(|(v, _)| v)
        .collect();
    let names = text::display_names(&all);
    let by_name = |ivs: &[(Var, i128)]| -> HashMap<String, i64> {
        ivs.iter()
            .filter_map(|(v, x)| Some((names[v].clone(), i64::try_from(*x).ok()?)))
            .collect()
    };
    let (at_first, at_second) = (by_name(&found.first), by_name(&found.second));
    let mut conditions = Vec::new();
    for v in &data {
        let (x, y) = (
            text::substitute(v.name(), &at_first),
            text::substitute(v.name(), &at_second),
        );
        conditions.push(if x == y {
            format!("`{x}` reads the same value in both iterations")
        } else {
            format!("{x} == {y}")
        });
    }
    conditions.dedup();
    let side_of = |access: &MemAccess, ivs: &[(Var, i128)], at: &HashMap<String, i64>| {
        let lvalue = text::lvalue(&cx.snippet(access.inst)).to_string();
        let element = text::substitute(&lvalue, at);
        let (kind, verb) = kind_word(access.is_store);
        let text = format!("{} {verb} {element}", iteration_text(ivs, &names));
        (
            WitnessAccess {
                iteration: to_map(ivs, &names),
                access: lvalue,
                line: cx.line(access.inst),
                kind: kind.into(),
                element,
                byte_offset: None,
                bytes: Some(access.elem_bytes),
            },
            text,
        )
    };
    let (a, a_text) = side_of(first, &found.first, &at_first);
    let (b, b_text) = side_of(second, &found.second, &at_second);
    let values: BTreeMap<String, i64> = found
        .values
        .iter()
        .filter(|(v, _)| !data.contains(v))
        .filter_map(|(v, x)| Some((names[v].clone(), i64::try_from(*x).ok()?)))
        .collect();
    let condition = conditions.join(" && ");
    let text = format!("{a_text}; {b_text} if {condition}{}", values_text(&values));
    Some(Built {
        witness: Witness {
            values,
            first: a,
            second: b,
            condition: Some(condition),
        },
        text,
    })
}

/// Where a carried scalar is written or read: the instruction and the loops nested in the
/// carrier that contain it, outermost first (run to their last iteration for a write, at
/// their first for a read).
struct Site {
    inst: Value,
    inner: Vec<LoopId>,
}

impl Context<'_> {
    /// `v` runs in every iteration of `lp`: in its own body, on every path to a back edge.
    fn every_iteration(&self, v: Value, lp: LoopId) -> bool {
        let block = self.func.inst(v).block;
        self.forest.innermost(block) == Some(lp)
            && self
                .forest
                .loop_(lp)
                .latches
                .iter()
                .all(|latch| self.forest.dominates(block, *latch))
    }

    /// `v` is the header phi of a loop directly inside `lp` that every iteration of `lp`
    /// enters.
    fn child_header_phi(&self, v: Value, lp: LoopId) -> Option<LoopId> {
        let block = self.func.inst(v).block;
        let child = self.forest.innermost(block)?;
        let c = self.forest.loop_(child);
        let enters = self
            .forest
            .loop_(lp)
            .latches
            .iter()
            .all(|latch| self.forest.dominates(c.header, *latch));
        (c.parent == Some(lp) && c.header == block && enters).then_some(child)
    }

    /// The instruction that writes the value `v` reaching the back edge of `lp` in every
    /// iteration, through inner loops' last iterations.
    fn writer(&self, v: Value, lp: LoopId, depth: usize) -> Option<Site> {
        match &self.func.inst(v).kind {
            InstKind::Phi(args) => {
                let child = self.child_header_phi(v, lp)?;
                let c = self.forest.loop_(child);
                let back: Vec<Value> = args
                    .iter()
                    .filter(|(b, _)| c.contains(*b))
                    .map(|(_, a)| *a)
                    .collect();
                let [u] = back.as_slice() else { return None };
                if depth > 8 {
                    return None;
                }
                let mut site = self.writer(*u, child, depth + 1)?;
                site.inner.insert(0, child);
                Some(site)
            }
            _ => self.every_iteration(v, lp).then_some(Site {
                inst: v,
                inner: Vec::new(),
            }),
        }
    }

    /// The first instruction that reads the header phi `phi` of `lp` in every iteration,
    /// through inner loops' first iterations. `Err` when it is read, but not in every
    /// iteration; `Ok(None)` when nothing in the loop reads it.
    fn reader(&self, phi: Value, lp: LoopId, depth: usize) -> Result<Option<Site>, ()> {
        let users = self.func.users();
        let l = self.forest.loop_(lp);
        let mut best: Option<Site> = None;
        let mut uncertain = false;
        for &u in &users[phi.index()] {
            if !l.contains(self.func.inst(u).block) {
                continue;
            }
            let site = match &self.func.inst(u).kind {
                InstKind::Phi(args) => {
                    // The value entering an inner loop, read in its first iteration.
                    let child = self.child_header_phi(u, lp);
                    let enters = child.is_some_and(|c| {
                        args.iter()
                            .any(|(b, a)| *a == phi && !self.forest.loop_(c).contains(*b))
                    });
                    match (child, enters, depth < 8) {
                        (Some(c), true, true) => match self.reader(u, c, depth + 1) {
                            Ok(Some(mut site)) => {
                                site.inner.insert(0, c);
                                Some(site)
                            }
                            _ => None,
                        },
                        _ => None,
                    }
                }
                _ => self.every_iteration(u, lp).then_some(Site {
                    inst: u,
                    inner: Vec::new(),
                }),
            };
            match site {
                Some(site) => {
                    if best
                        .as_ref()
                        .is_none_or(|b| site.inst.index() < b.inst.index())
                    {
                        best = Some(site);
                    }
                }
                None => uncertain = true,
            }
        }
        match best {
            Some(site) => Ok(Some(site)),
            None if uncertain => Err(()),
            None => Ok(None),
        }
    }

    /// The values of the inner loops' variables at their last (`last`) or first iteration,
    /// after `ctx`; `None` when one of them does not run.
    fn inner_iteration(
        &self,
        space: &Space,
        inner: &[LoopId],
        ctx: &[(Var, i128)],
        last: bool,
    ) -> Option<Vec<(Var, i128)>> {
        let mut ctx = ctx.to_vec();
        let mut out = Vec::new();
        for id in inner {
            let r = space.of_loop(*id)?;
            let init = exact(&r.init, &ctx)?;
            let trips = exact(&r.trips, &ctx)?;
            if trips < 1 {
                return None;
            }
            let v = if last {
                init + r.step * (trips - 1)
            } else {
                init
            };
            let (lo, hi) = (exact(&r.lo, &ctx)?, exact(&r.hi, &ctx)?);
            if v < lo || v > hi {
                return None;
            }
            ctx.push((r.var.clone(), v));
            out.push((r.var.clone(), v));
        }
        Some(out)
    }
}

/// Why a conditional counter carries a dependence, and how such a loop is ported.
fn counter_text(name: &str, step: i128, indexes: bool) -> String {
    let advance = match step {
        1 => format!("`{name}++`"),
        -1 => format!("`{name}--`"),
        s if s > 0 => format!("`{name} += {s}`"),
        s => format!("`{name} -= {}`", -s),
    };
    let port = if indexes {
        format!("this is stream compaction, which a port computes with a prefix sum (scan) over the test, or with an atomic counter where the order of what `{name}` indexes does not matter")
    } else {
        "a port computes each iteration's value with a prefix sum (scan) over the test, or takes it from an atomic counter where their order does not matter".to_string()
    };
    format!(
        "`{name}` is a conditional counter ({advance} only in the iterations that pass a test): each iteration's value counts the earlier iterations that passed, so two that pass depend on each other; {port}"
    )
}

/// A witness for a scalar carried from one iteration to the next: the header phi `phi` of
/// loop `id`, `back` its values from the latches. Iteration `k` writes it and iteration
/// `k + 1` reads it (or writes it again, when nothing in the loop reads it).
pub fn scalar(
    cx: &Context,
    id: LoopId,
    space: &Space,
    phi: Value,
    back: &[Value],
    assumptions: &[Assumption],
) -> Result<Built, String> {
    let l = cx.forest.loop_(id);
    let name = cx
        .func
        .inst(phi)
        .origin
        .var_name
        .clone()
        .unwrap_or_else(|| format!("{phi}"));
    let [update] = back else {
        return Err(format!("`{name}` is assigned on several paths"));
    };
    let Some(write) = cx.writer(*update, id, 0) else {
        if let Some(step) = counter::conditional_step(cx.func, phi, *update) {
            let indexes = counter::indexes_memory(cx.func, phi);
            return Err(counter_text(&name, step, indexes));
        }
        return Err(format!("`{name}` is assigned only in some iterations"));
    };
    let Ok(read) = cx.reader(phi, id, 0) else {
        return Err(format!("`{name}` is read only in some iterations"));
    };
    let carrier = space
        .of_loop(id)
        .ok_or_else(|| "the loop has no iteration space".to_string())?;
    let zero = Expr::constant(0);
    let levels = cx.levels(space, l.header);
    // The inner loops around the write and the read must run: their bounds' symbols get
    // values too, and a trip count over symbols alone must be at least 1.
    let mut constraints = cx.constraints(id, assumptions);
    let mut extra = Vec::new();
    for inner in write.inner.iter().chain(read.iter().flat_map(|r| &r.inner)) {
        let Some(r) = space.of_loop(*inner) else {
            continue;
        };
        extra.extend([r.init.clone(), r.trips.clone(), r.lo.clone(), r.hi.clone()]);
        if let Ok(e) = r.trips.checked_sub(&Expr::constant(1)) {
            constraints.push(Constraint {
                expr: e,
                op: Relation::Ge,
            });
        }
    }
    let problem = Problem {
        carrier: &carrier.var,
        first: SideInput {
            offset: &zero,
            bytes: 1,
            levels: levels.clone(),
            subscripts: Vec::new(),
            object_bytes: None,
        },
        second: SideInput {
            offset: &zero,
            bytes: 1,
            levels,
            subscripts: Vec::new(),
            object_bytes: None,
        },
        signs: &space.env,
        constraints,
        distance: Some(1),
        guards: cx.guards(id, space)?,
        extra,
        budget: search::POINT_BUDGET,
    };
    let found = match cx.search(&problem) {
        Outcome::Found(found) if verify(&found, &problem) => found,
        _ => return Err("no values were found for which the loop runs twice".into()),
    };
    let rereads = read.is_none();
    let second = read.unwrap_or(Site {
        inst: write.inst,
        inner: write.inner.clone(),
    });
    let at = |ivs: &[(Var, i128)], site: &Site, last: bool| -> Option<Vec<(Var, i128)>> {
        let mut ctx = found.values.clone();
        ctx.extend(ivs.iter().cloned());
        let mut all = ivs.to_vec();
        all.extend(cx.inner_iteration(space, &site.inner, &ctx, last)?);
        Some(all)
    };
    let (Some(first_ivs), Some(second_ivs)) = (
        at(&found.first, &write, true),
        at(&found.second, &second, rereads),
    ) else {
        return Err(format!(
            "an inner loop around the accesses to `{name}` does not run for the values found"
        ));
    };
    let all: Vec<&Var> = found
        .values
        .iter()
        .chain(&first_ivs)
        .chain(&second_ivs)
        .map(|(v, _)| v)
        .collect();
    let names = text::display_names(&all);
    let side = |v: Value, ivs: &[(Var, i128)], is_store: bool| {
        let (kind, verb) = kind_word(is_store);
        let line = cx.line(v);
        (
            WitnessAccess {
                iteration: to_map(ivs, &names),
                access: cx.snippet(v),
                line,
                kind: kind.into(),
                element: name.clone(),
                byte_offset: None,
                bytes: None,
            },
            format!(
                "{} {verb} `{name}` (line {line})",
                iteration_text(ivs, &names)
            ),
        )
    };
    let (a, a_text) = side(write.inst, &first_ivs, true);
    let (b, b_text) = side(second.inst, &second_ivs, rereads);
    let values: BTreeMap<String, i64> = found
        .values
        .iter()
        .filter_map(|(v, x)| Some((names[v].clone(), i64::try_from(*x).ok()?)))
        .collect();
    let text = format!("{a_text}; {b_text}{}", values_text(&values));
    Ok(Built {
        witness: Witness {
            values,
            first: a,
            second: b,
            condition: None,
        },
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assumption::Relation;
    use analyses::range::{range_analysis, RangeConfig};
    use analyses::reconstruct::{reconstruct, ReconstructConfig};
    use analyses::sign::sign_analysis;

    /// The search meets the relations the assumptions carry and reads nothing from their
    /// sentences: a relation under any text is a constraint, and a sentence that reads as
    /// one but carries none is no constraint.
    #[test]
    fn constraints_are_the_assumptions_typed_relations_never_their_texts() {
        let (_dir, unit) = crate::test_unit::unit(
            "void f(int *a, int n) { for (int i = 0; i < n; i++) a[i + 1] = a[i]; }\n",
        );
        let program = &unit.lowered.program;
        let func = program.function("f").expect("f");
        let forest = frontend::loops::analyze_loops(func);
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        let signs = sign_analysis(program, func, &forest, &rec, &HashMap::new());
        let entry = signs.env_for(func.entry, &rec);
        let ranges = range_analysis(
            program,
            func,
            &forest,
            &rec,
            &entry,
            &RangeConfig::default(),
        );
        let cx = Context {
            unit: &unit,
            func,
            forest: &forest,
            rec: &rec,
            ranges: &ranges,
            cache: Default::default(),
            searches: Default::default(),
        };
        let id = forest.ids().next().expect("a loop");
        let n = rec
            .symbols
            .iter()
            .find(|s| s.var.name().starts_with('n'))
            .map(|s| s.var.clone())
            .expect("a symbol for `n`");
        let below = Expr::constant(7).checked_sub(&Expr::var(n.name())).unwrap();
        let typed = Assumption::relation("a sentence of no relation", below.clone(), Relation::Gt);
        let found = cx.read_constraints(id, &[typed]);
        assert!(
            found
                .iter()
                .any(|c| c.expr == below && c.op == Relation::Gt),
            "{found:?}"
        );
        let without = cx.read_constraints(id, &[]).len();
        let text_only = Assumption::plain(format!("{} > 0 (the loop runs)", n.name()));
        assert_eq!(cx.read_constraints(id, &[text_only]).len(), without);
    }
}
