//! Expression reconstruction (thesis §8.4): the set of possible symbolic expressions of
//! every SSA value, expanded up to induction variables, parameters, loop-carried phis and
//! unknown loads, with pointers as `base + byte offset` (`ptr_add` scaled by the element
//! size, `field_sel` by the field offset).
//!
//! Because the IR is in SSA form one global map suffices and no fixpoint is needed: values
//! are visited in reverse postorder, so every operand except a loop-header phi's back-edge
//! argument is computed before its use. Header phis are kept as symbols (`i`, `sum`), which
//! is the thesis' "expand only the first recursive step": the phi itself then gets the set
//! `{init, update}`, e.g. `sum = {0, sum + α}`.
//!
//! Calls to functions defined in the program are reconstructed per call site: the callee's
//! return expressions over its parameters, with the actual arguments substituted (§8.7's
//! `getIndex`), for non-recursive callees up to a depth; other calls are opaque symbols.
//!
//! Operations the engine cannot represent (bit masks with variables, divisions by
//! variables, float-to-int conversions) become fresh symbols, never "top", as in the
//! thesis. `exact` records whether C's wrap-around and truncation were ignored anywhere.

use crate::symbols::{SymbolOrigin, Symbols};
use frontend::ir::{BinOp, Callee, Constant, Function, InstKind, Program, Terminator, UnOp, Value};
use frontend::loops::LoopForest;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::collections::{BTreeSet, HashMap, HashSet};
use symbolic::{Expr, Var};

mod callees;
mod frozen;
mod versions;
pub use callees::CalleeMemo;

#[derive(Clone, Debug)]
pub struct ReconstructConfig {
    /// Most alternatives kept per value; past it the value becomes a fresh symbol.
    pub max_alternatives: usize,
    /// Call depth for per-call-site reconstruction of callees.
    pub max_call_depth: u32,
    /// Values injected by name (thesis §6.2): a symbol with this name is replaced.
    pub injected: HashMap<String, Expr>,
}

impl Default for ReconstructConfig {
    fn default() -> Self {
        ReconstructConfig {
            max_alternatives: 8,
            max_call_depth: 3,
            injected: HashMap::new(),
        }
    }
}

/// The reconstruction of one function.
#[derive(Clone, Debug)]
pub struct Reconstruction {
    pub symbols: Symbols,
    exprs: Vec<Vec<Expr>>,
    /// Loop-header phis (kept as symbols) and their `{init, update}` alternatives, in
    /// which the phi's own symbol stands for the previous iteration's value.
    recurrences: HashMap<Value, Vec<Expr>>,
    /// Values whose reconstruction ignored C integer wrap-around or truncation.
    pub inexact: HashSet<Value>,
    /// Loads of a variable held in memory whose value is one across a store through a
    /// pointer only by C's effective-type rule (the store's type cannot modify the
    /// variable's): what a result reading them assumes.
    pub loads_by_type_rule: HashSet<Value>,
}

impl Reconstruction {
    /// Possible expressions of a value (empty for values with no numeric meaning, such as
    /// stores and void calls).
    pub fn of(&self, v: Value) -> &[Expr] {
        self.exprs.get(v.index()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The expression of a value when it has exactly one.
    pub fn single(&self, v: Value) -> Option<&Expr> {
        match self.of(v) {
            [e] => Some(e),
            _ => None,
        }
    }

    /// For a loop-header phi: its possible values `{init, update}` (thesis Fig. 8.10's
    /// `sum = {0, sum + α}`).
    pub fn recurrence(&self, phi: Value) -> Option<&[Expr]> {
        self.recurrences.get(&phi).map(Vec::as_slice)
    }

    /// The symbol of a value, if it is one (parameters, induction variables, loads).
    pub fn symbol(&self, v: Value) -> Option<&Var> {
        self.symbols.var_of(v)
    }
}

/// Reconstructs every value of `func`.
pub fn reconstruct(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    config: &ReconstructConfig,
) -> Reconstruction {
    reconstruct_sharing(program, func, forest, config, &CalleeMemo::new())
}

/// [`reconstruct`], taking the callees' reconstructions from `memo` and adding those it
/// makes: `memo` must have been used only with `program` and `config`.
pub fn reconstruct_sharing(
    program: &Program,
    func: &Function,
    forest: &LoopForest,
    config: &ReconstructConfig,
    memo: &CalleeMemo,
) -> Reconstruction {
    let mut builder = Builder::new(program, func, config, memo, 0, Vec::new());
    builder.run(forest);
    Reconstruction {
        symbols: builder.symbols,
        exprs: builder.exprs,
        recurrences: builder.recurrences,
        inexact: builder.inexact,
        loads_by_type_rule: builder.loads_by_type_rule,
    }
}

/// A loop's second counter and what expresses it: its entry value and step, and the loop's
/// primary induction variable with its entry value and step.
#[derive(Clone, Debug)]
struct Counter {
    init: Value,
    step: i128,
    primary: Value,
    primary_init: Value,
    primary_step: i128,
}

/// The induction variables of `l` other than the one its exit tests, integers or pointers
/// (`p++` beside `i++`, a byte step), whose step is a multiple of the tested one's: after `k`
/// iterations the counter is `init + k*step` and the primary `primary_init + k*primary_step`,
/// so one is a polynomial of the other. The reconstruction expresses these through the
/// primary, so a pointer walked beside the index addresses the array it started in
/// (`kernel + 8*i`), not an 8-byte object of its own; reports list them as counters.
pub fn expressed_counters<'l>(
    program: &Program,
    func: &Function,
    l: &'l frontend::loops::Loop,
) -> Vec<&'l frontend::loops::InductionVariable> {
    let types = &program.types;
    let Some(primary) = l.primary_iv() else {
        return Vec::new();
    };
    if primary.step == 0 || !types.is_integer(func.inst(primary.phi).ty) {
        return Vec::new();
    }
    l.induction_variables
        .iter()
        .filter(|iv| {
            let ty = func.inst(iv.phi).ty;
            iv.phi != primary.phi && (types.is_integer(ty) || types.is_pointer(ty))
        })
        .filter(|iv| iv.step % primary.step == 0)
        .collect()
}

/// [`expressed_counters`] of `l` with what the reconstruction needs to express each.
fn second_counters(
    program: &Program,
    func: &Function,
    l: &frontend::loops::Loop,
) -> Vec<(Value, Counter)> {
    let Some(primary) = l.primary_iv() else {
        return Vec::new();
    };
    expressed_counters(program, func, l)
        .into_iter()
        .map(|iv| {
            let counter = Counter {
                init: iv.init,
                step: iv.step,
                primary: primary.phi,
                primary_init: primary.init,
                primary_step: primary.step,
            };
            (iv.phi, counter)
        })
        .collect()
}

fn push_unique(set: &mut Vec<Expr>, e: Expr) {
    if !set.contains(&e) {
        set.push(e);
    }
}

struct Builder<'a> {
    program: &'a Program,
    func: &'a Function,
    config: &'a ReconstructConfig,
    symbols: Symbols,
    exprs: Vec<Vec<Expr>>,
    header_phis: HashSet<Value>,
    induction_phis: HashSet<Value>,
    /// Second counters of a loop (`distpos += 1` next to `j++`), by phi: expressed through
    /// the loop's primary induction variable.
    counters: HashMap<Value, Counter>,
    /// Blocks that belong to some loop.
    loop_blocks: HashSet<frontend::ir::Block>,
    recurrences: HashMap<Value, Vec<Expr>>,
    inexact: HashSet<Value>,
    loads_by_type_rule: HashSet<Value>,
    /// Two-way phis of integers whose choice is decided by comparing two values
    /// (`a < b ? a : b`, `MIN(a, b)`): the comparison and the arguments each side takes.
    choices: HashMap<Value, Choice>,
    /// Function names on the current inlining stack (recursion guard).
    call_stack: Vec<String>,
    call_depth: u32,
    /// Callees already reconstructed (shared with the nested builders and, through
    /// [`reconstruct_sharing`], with other functions' reconstructions).
    memo: &'a CalleeMemo,
    /// The names this reconstruction, or one nested in it, tested against `call_stack`:
    /// all it depends on of the stack (see [`callees`]).
    tested: BTreeSet<String>,
    /// Loads of local array elements written once before them (see [`frozen`]).
    frozen: HashMap<Value, frozen::Frozen>,
    /// Loads of a variable that read another value than its first (see [`versions`]).
    versions: HashMap<Value, String>,
}

/// A callee's return expressions over its parameters, and each parameter's symbol and
/// position.
#[derive(Debug)]
struct CalleeReturns {
    returns: Vec<Expr>,
    params: HashMap<Var, usize>,
}

impl<'a> Builder<'a> {
    fn new(
        program: &'a Program,
        func: &'a Function,
        config: &'a ReconstructConfig,
        memo: &'a CalleeMemo,
        call_depth: u32,
        call_stack: Vec<String>,
    ) -> Self {
        Builder {
            program,
            func,
            config,
            symbols: Symbols::new(),
            exprs: vec![Vec::new(); func.insts.len()],
            header_phis: HashSet::new(),
            induction_phis: HashSet::new(),
            counters: HashMap::new(),
            loop_blocks: HashSet::new(),
            recurrences: HashMap::new(),
            inexact: HashSet::new(),
            loads_by_type_rule: HashSet::new(),
            choices: HashMap::new(),
            call_stack,
            call_depth,
            memo,
            tested: BTreeSet::new(),
            frozen: HashMap::new(),
            versions: HashMap::new(),
        }
    }

    fn run(&mut self, forest: &LoopForest) {
        let func = self.func;
        for l in &forest.loops {
            for &v in &func.block(l.header).insts {
                if func.inst(v).kind.is_phi() {
                    self.header_phis.insert(v);
                }
            }
            self.induction_phis
                .extend(l.induction_variables.iter().map(|iv| iv.phi));
            self.loop_blocks.extend(l.blocks.iter().copied());
            self.counters.extend(second_counters(self.program, func, l));
        }
        self.choices = choices(self.program, func, forest);
        let order = crate::framework::reverse_postorder(func);
        self.frozen = frozen::frozen_loads(self.program, func, forest, &order);
        (self.versions, self.loads_by_type_rule) = versions::load_versions(self.program, func);
        for &block in &order {
            for &v in &func.block(block).insts {
                let set = self.compute(v);
                self.exprs[v.index()] = set;
            }
        }
        let mut phis: Vec<Value> = self.header_phis.iter().copied().collect();
        phis.sort();
        for phi in phis {
            let InstKind::Phi(args) = &func.inst(phi).kind else {
                continue;
            };
            let mut set = Vec::new();
            for (_, arg) in args {
                for e in self.exprs[arg.index()].clone() {
                    push_unique(&mut set, e);
                }
            }
            if set.len() <= self.config.max_alternatives {
                self.recurrences.insert(phi, set);
            }
        }
    }

    /// A second counter's value in terms of its loop's primary induction variable `p`:
    /// `init + (step / primary_step) * (p - primary_init)`, exact because both advance once
    /// per iteration and `primary_step` divides `step`.
    fn counter_value(&mut self, c: &Counter) -> Option<Expr> {
        let [init] = <[Expr; 1]>::try_from(self.operand(c.init)).ok()?;
        let [primary_init] = <[Expr; 1]>::try_from(self.operand(c.primary_init)).ok()?;
        let primary = self.symbol(c.primary, SymbolOrigin::Induction(c.primary));
        let ratio = Expr::integer(BigInt::from(c.step / c.primary_step));
        let advanced = primary.checked_sub(&primary_init).ok()?;
        init.checked_add(&advanced.checked_mul(&ratio).ok()?).ok()
    }

    /// A named local chosen by a condition outside every loop (`n = argc > 1 ? .. : 100`)
    /// is an inbound of every loop: loops are reported over it, not over its alternatives.
    /// The phi `v` as `min(a, b)` or `max(a, b)` when it is a [`Choice`] whose arguments
    /// are the compared values (as expressions: a value loaded again for the arm is the
    /// same expression): `a < b ? a : b` is the minimum whichever way ties go.
    fn min_max(&mut self, v: Value) -> Option<Expr> {
        let c = self.choices.get(&v).cloned()?;
        self.min_max_of(&c)
    }

    /// `min(t, e)` or `max(t, e)` for `c`, taking `t` when `x OP y` holds and `e` otherwise,
    /// when the arms differ by what the comparison compares: `t - e` is `x - y` or `y - x`.
    /// `a < b ? a : b` is one (the minimum whichever way ties go), and so is code_saturne's
    /// `b_size = GROUP; if (i + GROUP > n) b_size = n - i;`, whose `t - e = n - i - GROUP` is
    /// `y - x`: when `x > y` it is negative and `t` the smaller, otherwise `e` is.
    fn min_max_of(&mut self, c: &Choice) -> Option<Expr> {
        let one = |b: &mut Self, x: Value| <[Expr; 1]>::try_from(b.operand(x)).ok().map(|[e]| e);
        let (x, y) = (one(self, c.x)?, one(self, c.y)?);
        let (taken, other) = (one(self, c.when_true)?, one(self, c.when_false)?);
        let smaller_first = matches!(c.op, BinOp::Lt | BinOp::Le);
        let min = if taken == x && other == y {
            smaller_first
        } else if taken == y && other == x {
            !smaller_first
        } else {
            let d = taken.checked_sub(&other).ok()?;
            if d == x.checked_sub(&y).ok()? {
                // `t = e + (x - y)`: under `x < y` the taken arm is the smaller.
                smaller_first
            } else if d == y.checked_sub(&x).ok()? {
                !smaller_first
            } else {
                return self.rounded_quotient(c, &x, &y, &taken, &other);
            }
        };
        let env = symbolic::sign::SignEnv::new();
        if min {
            symbolic::get_min(&taken, &other, &env).ok()
        } else {
            symbolic::get_max(&taken, &other, &env).ok()
        }
    }

    /// `floor(v / d)` or `ceil(v / d)` for `c` when it is `floord(v, d)` or `ceild(v, d)` as
    /// polyhedral code generators define them (Pluto, CLooG, PolyBench's tiled variants):
    /// `v < 0 ? -((-v + d - 1)/d) : v/d` and `v < 0 ? -((-v)/d) : (v + d - 1)/d`, with C's
    /// truncating `/` by a constant `d > 0`. Each arm is exactly the rounded quotient on its
    /// side of zero (for `v < 0`, `-v + d - 1 > 0` truncates as a floor, and
    /// `-floor((-v + d - 1)/d) = floor(v/d)`), so the choice is that one expression for every
    /// integer `v`; the arms are compared with the expressions built here, never assumed.
    fn rounded_quotient(
        &mut self,
        c: &Choice,
        x: &Expr,
        y: &Expr,
        taken: &Expr,
        other: &Expr,
    ) -> Option<Expr> {
        let zero = |e: &Expr| e.as_integer().is_some_and(|k| k.is_zero());
        // (the compared value, whether the taken arm is its negative side)
        let (v, negative_taken) = match c.op {
            BinOp::Lt if zero(y) => (x, true),
            BinOp::Ge if zero(y) => (x, false),
            BinOp::Gt if zero(x) => (y, true),
            BinOp::Le if zero(x) => (y, false),
            _ => return None,
        };
        let (negative, nonnegative, nonnegative_value) = if negative_taken {
            (taken, other, c.when_false)
        } else {
            (other, taken, c.when_true)
        };
        let d = self.constant_divisor(nonnegative_value)?;
        if d <= BigInt::zero() {
            return None;
        }
        let d_minus_one = Expr::integer(&d - BigInt::one());
        let floor_arms = (
            v.neg()
                .checked_add(&d_minus_one)
                .ok()?
                .c_div(&d)
                .ok()?
                .neg(),
            v.c_div(&d).ok()?,
        );
        let ceil_arms = (
            v.neg().c_div(&d).ok()?.neg(),
            v.checked_add(&d_minus_one).ok()?.c_div(&d).ok()?,
        );
        let arms = (negative.clone(), nonnegative.clone());
        if arms == floor_arms {
            v.floor_div(&d).ok()
        } else if arms == ceil_arms {
            v.checked_add(&d_minus_one).ok()?.floor_div(&d).ok()
        } else {
            None
        }
    }

    /// The constant `d` of `a / d`, the division `v` computes (through integer casts).
    fn constant_divisor(&mut self, v: Value) -> Option<BigInt> {
        let mut v = v;
        for _ in 0..4 {
            match self.func.inst(v).kind {
                InstKind::Binary(BinOp::Div, _, b) => return constant_of(&self.operand(b)),
                InstKind::Cast(a) => v = a,
                _ => return None,
            }
        }
        None
    }

    /// Whether `v` is the initial value of a loop-header phi of the same name: the
    /// initializer of `for (int i = MAX(lo, 0); ...)`, named `i` by the lowering.
    fn starts_its_namesake(&self, v: Value) -> bool {
        let name = &self.func.inst(v).origin.var_name;
        name.is_some() && self.header_phis.iter().any(|&phi| {
            let inst = self.func.inst(phi);
            inst.origin.var_name == *name
                && matches!(&inst.kind, InstKind::Phi(args) if args.iter().any(|(_, a)| *a == v))
        })
    }

    fn is_named_outside_loops(&self, v: Value) -> bool {
        let inst = self.func.inst(v);
        inst.origin
            .var_name
            .as_deref()
            .is_some_and(|n| !n.starts_with('&'))
            && !self.loop_blocks.contains(&inst.block)
    }

    /// A named integer local chosen by a condition inside a loop, from values that are not
    /// induction variables (`stride = blocked ? db[1] : 1` in the body of a sweep over
    /// fill types): the loops it encloses are reported over it, so their bounds, addresses
    /// and sections all read one symbol (`ii*sd + kk` with `kk < sd`) instead of one
    /// alternative each, which no test could relate. Choices between induction variables
    /// (`i` or `i + 1`) stay alternatives, as do pointers, whose alternatives name the
    /// objects they may point into.
    fn is_named_integer_choice(&self, v: Value, alternatives: &[Expr]) -> bool {
        let inst = self.func.inst(v);
        inst.origin
            .var_name
            .as_deref()
            .is_some_and(|n| !n.starts_with('&'))
            && self.program.types.is_integer(inst.ty)
            && alternatives.iter().all(|e| {
                e.vars().iter().all(|var| {
                    !matches!(
                        self.symbols.info(var).map(|s| &s.origin),
                        Some(SymbolOrigin::Induction(_))
                    )
                })
            })
    }

    fn symbol(&mut self, v: Value, origin: SymbolOrigin) -> Expr {
        let var = self
            .symbols
            .symbol_for(self.func, &self.program.types, v, origin);
        self.injected_or_var(var)
    }

    fn injected_or_var(&self, var: Var) -> Expr {
        match self.config.injected.get(var.name()) {
            Some(e) => e.clone(),
            None => Expr::Poly(symbolic::Poly::var(var)),
        }
    }

    fn operand(&mut self, v: Value) -> Vec<Expr> {
        let set = &self.exprs[v.index()];
        if set.is_empty() {
            // Not computed (a value from an unreachable block) or not numeric: opaque.
            return vec![self.symbol(v, SymbolOrigin::Opaque(v))];
        }
        set.clone()
    }

    /// Applies `f` to every combination of the operands' alternatives.
    fn combine(
        &mut self,
        v: Value,
        a: Value,
        b: Value,
        f: impl Fn(&Expr, &Expr) -> Option<Expr>,
    ) -> Vec<Expr> {
        let (xs, ys) = (self.operand(a), self.operand(b));
        let mut out = Vec::new();
        for x in &xs {
            for y in &ys {
                match f(x, y) {
                    Some(e) => push_unique(&mut out, e),
                    None => return vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                }
                if out.len() > self.config.max_alternatives {
                    return vec![self.symbol(v, SymbolOrigin::Opaque(v))];
                }
            }
        }
        out
    }

    /// The quotient `a / b` as one expression, when the function computes that very
    /// division (same operands, or operands with the same single reconstruction, as two
    /// loads of one struct field are) with a divisor that is not a constant.
    fn matching_division(&mut self, a: Value, b: Value) -> Option<Expr> {
        let func = self.func;
        let same = |this: &Self, x: Value, y: Value| {
            x == y || {
                let (ex, ey) = (&this.exprs[x.index()], &this.exprs[y.index()]);
                ex.len() == 1 && ex == ey
            }
        };
        let division = func.values().find(|&d| {
            matches!(func.inst(d).kind,
                InstKind::Binary(BinOp::Div, da, db) if same(self, da, a) && same(self, db, b))
        })?;
        match self.operand(division).as_slice() {
            [q] => Some(q.clone()),
            _ => None,
        }
    }

    fn map(&mut self, v: Value, a: Value, f: impl Fn(&Expr) -> Option<Expr>) -> Vec<Expr> {
        let xs = self.operand(a);
        let mut out = Vec::new();
        for x in &xs {
            match f(x) {
                Some(e) => push_unique(&mut out, e),
                None => return vec![self.symbol(v, SymbolOrigin::Opaque(v))],
            }
        }
        out
    }

    fn compute(&mut self, v: Value) -> Vec<Expr> {
        let func = self.func;
        let inst = func.inst(v);
        let types = &self.program.types;
        match &inst.kind {
            InstKind::Param(i) => vec![self.symbol(v, SymbolOrigin::Param(*i))],
            InstKind::Const(Constant::Int(c)) => vec![Expr::integer(BigInt::from(*c))],
            InstKind::Const(Constant::Float(f)) => match BigRational::from_float(*f) {
                Some(r) => vec![Expr::rational(r)],
                None => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
            },
            InstKind::Undef => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
            InstKind::Phi(args) => {
                if let Some(counter) = self.counters.get(&v).cloned() {
                    if let Some(e) = self.counter_value(&counter) {
                        return vec![e];
                    }
                }
                if self.header_phis.contains(&v) {
                    let origin = if self.induction_phis.contains(&v) {
                        SymbolOrigin::Induction(v)
                    } else {
                        SymbolOrigin::Phi(v)
                    };
                    return vec![self.symbol(v, origin)];
                }
                let mut out = Vec::new();
                for (_, arg) in args.clone() {
                    for e in self.operand(arg) {
                        push_unique(&mut out, e);
                    }
                }
                // The start of the loop it names (`int k = ceild(lo, 4)`) is its one
                // expression when it has one; otherwise a named choice is its own symbol.
                if out.len() == 2 && self.starts_its_namesake(v) {
                    if let Some(e) = self.min_max(v) {
                        return vec![e];
                    }
                }
                if out.len() > self.config.max_alternatives
                    || (out.len() > 1
                        && (self.is_named_outside_loops(v)
                            || self.is_named_integer_choice(v, &out)))
                {
                    return vec![self.symbol(v, SymbolOrigin::Phi(v))];
                }
                if out.len() == 2 {
                    if let Some(e) = self.min_max(v) {
                        return vec![e];
                    }
                }
                out
            }
            InstKind::Binary(op, a, b) => {
                let (a, b) = (*a, *b);
                let is_int = types.is_integer(inst.ty);
                match op {
                    BinOp::Add => self.combine(v, a, b, |x, y| x.checked_add(y).ok()),
                    BinOp::Sub => self.combine(v, a, b, |x, y| x.checked_sub(y).ok()),
                    BinOp::Mul => self.combine(v, a, b, |x, y| x.checked_mul(y).ok()),
                    BinOp::Div => match constant_of(&self.operand(b)) {
                        Some(k) if k != BigInt::from(0) && is_int => {
                            self.map(v, a, |x| x.c_div(&k).ok())
                        }
                        Some(k) if k != BigInt::from(0) => {
                            let k = BigRational::from_integer(k);
                            self.map(v, a, |x| x.div_const(&k).ok())
                        }
                        _ => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                    },
                    BinOp::Rem => match constant_of(&self.operand(b)) {
                        Some(k) if k != BigInt::from(0) && is_int => {
                            self.map(v, a, |x| x.c_mod(&k).ok())
                        }
                        _ if is_int => match self.matching_division(a, b) {
                            // C99 6.5.5p6: `a % b == a - (a / b) * b` whenever `a / b` is
                            // defined, so with the quotient a symbol of its own, a loop
                            // linearized as `i = ij / n; j = ij % n` indexes `i * n + j`
                            // as plain `ij`.
                            Some(q) => self.combine(v, a, b, |x, y| {
                                x.checked_sub(&y.checked_mul(&q).ok()?).ok()
                            }),
                            None => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                        },
                        _ => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                    },
                    BinOp::Shl => {
                        match constant_of(&self.operand(b)).and_then(|k| u32::try_from(k).ok()) {
                            Some(k) if k < 64 => self.map(v, a, |x| x.shl(k).ok()),
                            _ => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                        }
                    }
                    BinOp::Shr => {
                        match constant_of(&self.operand(b)).and_then(|k| u32::try_from(k).ok()) {
                            Some(k) if k < 64 => self.map(v, a, |x| x.shr(k).ok()),
                            _ => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                        }
                    }
                    BinOp::BitXor => {
                        // Thesis Table 8.5 b): `x ^ -1` is `-x - 1`.
                        let (xa, xb) = (self.operand(a), self.operand(b));
                        let minus_one = Expr::constant(-1);
                        if xb == [minus_one.clone()] {
                            self.map(v, a, |x| x.neg().checked_sub(&Expr::constant(1)).ok())
                        } else if xa == [minus_one] {
                            self.map(v, b, |x| x.neg().checked_sub(&Expr::constant(1)).ok())
                        } else {
                            vec![self.symbol(v, SymbolOrigin::Opaque(v))]
                        }
                    }
                    _ => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
                }
            }
            InstKind::Unary(UnOp::Neg, a) => self.map(v, *a, |x| Some(x.neg())),
            InstKind::Unary(UnOp::BitNot, a) => {
                self.map(v, *a, |x| x.neg().checked_sub(&Expr::constant(1)).ok())
            }
            InstKind::Unary(UnOp::Not, _) => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
            InstKind::Cast(a) => {
                let from = func.inst(*a).ty;
                let to = inst.ty;
                if types.is_float(from) && types.is_integer(to) {
                    return vec![self.symbol(v, SymbolOrigin::Opaque(v))];
                }
                if types.is_integer(from)
                    && types.is_integer(to)
                    && types.size_of(to) < types.size_of(from)
                {
                    // Narrowing may wrap; the expression is kept but marked inexact.
                    self.inexact.insert(v);
                }
                self.operand(*a)
            }
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let mut out = self.operand(*then_value);
                for e in self.operand(*else_value) {
                    push_unique(&mut out, e);
                }
                if out.len() > 1
                    && (self.is_named_outside_loops(v) || self.is_named_integer_choice(v, &out))
                    && !self.starts_its_namesake(v)
                {
                    return vec![self.symbol(v, SymbolOrigin::Phi(v))];
                }
                // `a < b ? a : b` (MIN, MAX) over integers is one expression; a named
                // variable keeps its symbol (`length` reads better than its min, and
                // cancels), except the start of the loop it names (`int i = MAX(lo, 0)`).
                if let InstKind::Binary(op, x, y) = func.inst(*cond).kind {
                    let comparison = matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge);
                    if comparison && types.is_integer(inst.ty) {
                        let choice = Choice {
                            op,
                            x,
                            y,
                            when_true: *then_value,
                            when_false: *else_value,
                        };
                        if let Some(e) = self.min_max_of(&choice) {
                            return vec![e];
                        }
                    }
                }
                out
            }
            InstKind::Load { addr } => {
                match self.frozen.get(&v) {
                    Some(frozen::Frozen::Stored(stored)) => {
                        let stored = *stored;
                        if self.inexact.contains(&stored) {
                            self.inexact.insert(v);
                        }
                        return self.operand(stored);
                    }
                    Some(frozen::Frozen::Zero) => return vec![Expr::constant(0)],
                    None => {}
                }
                let addresses = self.operand(*addr);
                let mut key = addresses
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" | ");
                // A variable written between two loads of it holds two values there.
                if let Some(version) = self.versions.get(&v) {
                    key = format!("{key} {version}");
                }
                let var = self
                    .symbols
                    .load_symbol(func, &self.program.types, v, *addr, key);
                vec![self.injected_or_var(var)]
            }
            InstKind::Store { .. } => Vec::new(),
            InstKind::PtrAdd { base, index, scale } => {
                let k = Expr::integer(BigInt::from(*scale));
                self.combine(v, *base, *index, |b, i| {
                    b.checked_add(&i.checked_mul(&k).ok()?).ok()
                })
            }
            InstKind::FieldAddr { base, offset, .. } => {
                let k = Expr::integer(BigInt::from(*offset));
                self.map(v, *base, |b| b.checked_add(&k).ok())
            }
            InstKind::SlotAddr(slot) => {
                let var = self.symbols.object_symbol(
                    func,
                    &self.program.types,
                    v,
                    format!("slot {}", slot.0),
                );
                vec![self.injected_or_var(var)]
            }
            InstKind::GlobalAddr(global) => {
                let var = self.symbols.object_symbol(
                    func,
                    &self.program.types,
                    v,
                    format!("global {}", global.0),
                );
                vec![self.injected_or_var(var)]
            }
            InstKind::FuncAddr(_) | InstKind::StringAddr(_) => {
                vec![self.symbol(v, SymbolOrigin::Object(v))]
            }
            InstKind::Call {
                callee: Callee::Direct(name),
                args,
            } => {
                let name = name.clone();
                let args = args.clone();
                match self.inline_call(&name, &args) {
                    Some(set) => set,
                    None => {
                        if matches!(self.program.types.get(inst.ty), frontend::types::Type::Void) {
                            Vec::new()
                        } else {
                            vec![self.symbol(v, SymbolOrigin::Opaque(v))]
                        }
                    }
                }
            }
            InstKind::Call { .. } => vec![self.symbol(v, SymbolOrigin::Opaque(v))],
        }
    }

    /// The return expressions of a defined, non-recursive callee over its parameters, with
    /// the call's arguments substituted. `None` when the callee is external, recursive, too
    /// deep, or returns something that depends on more than its parameters.
    fn inline_call(&mut self, name: &str, args: &[Value]) -> Option<Vec<Expr>> {
        if self.call_depth >= self.config.max_call_depth {
            return None;
        }
        // Whatever the answer, this reconstruction depends on it.
        self.tested.insert(name.to_string());
        if self.call_stack.iter().any(|n| n == name) {
            return None;
        }
        let mut stack = self.call_stack.clone();
        stack.push(self.func.name.clone());
        let depth = self.call_depth + 1;
        let made = match self.memo.get(name, depth, &stack) {
            Some(made) => made,
            None => {
                let made = self.callee_returns(name, depth, &stack);
                self.memo.insert(name, depth, &stack, made.clone());
                made
            }
        };
        // The callee's tests for this function are settled (it is on the callee's stack);
        // its others are tests of this function's stack.
        let own = &self.func.name;
        self.tested
            .extend(made.tested.iter().filter(|t| *t != own).cloned());
        let callee = made.returns?;
        let (returns, params) = (&callee.returns, &callee.params);
        let mut out = Vec::new();
        let alternatives: Vec<Vec<Expr>> = args.iter().map(|a| self.operand(*a)).collect();
        // One substitution per combination of argument alternatives (bounded).
        let mut combos: Vec<HashMap<Var, Expr>> = vec![HashMap::new()];
        for (var, i) in params {
            let choices = alternatives.get(*i)?;
            let mut next = Vec::new();
            for combo in &combos {
                for choice in choices {
                    let mut c = combo.clone();
                    c.insert(var.clone(), choice.clone());
                    next.push(c);
                }
            }
            combos = next;
            if combos.len() > self.config.max_alternatives {
                return None;
            }
        }
        for combo in &combos {
            for e in returns {
                push_unique(&mut out, e.substitute(combo).ok()?);
            }
        }
        (out.len() <= self.config.max_alternatives).then_some(out)
    }

    /// The reconstruction of `name` at `depth` below `stack`, with the stack tests it made.
    fn callee_returns(&self, name: &str, depth: u32, stack: &[String]) -> callees::Made {
        let Some(callee) = self.program.function(name) else {
            return callees::Made {
                returns: None,
                tested: BTreeSet::new(),
            };
        };
        let forest = frontend::loops::analyze_loops(callee);
        let mut inner = Builder::new(
            self.program,
            callee,
            self.config,
            self.memo,
            depth,
            stack.to_vec(),
        );
        inner.run(&forest);
        let returns = Self::returns_over_params(callee, &inner).map(std::sync::Arc::new);
        callees::Made {
            returns,
            tested: std::mem::take(&mut inner.tested),
        }
    }

    /// [`CalleeReturns`] of `callee` from its reconstruction `inner`; `None` when it
    /// returns nothing, or returns what depends on more than its parameters.
    fn returns_over_params(callee: &Function, inner: &Builder) -> Option<CalleeReturns> {
        let mut returns = Vec::new();
        for b in callee.blocks() {
            if let Terminator::Return(Some(r)) = callee.block(b).terminator {
                for e in inner.exprs[r.index()].clone() {
                    push_unique(&mut returns, e);
                }
            }
        }
        if returns.is_empty() {
            return None;
        }
        // Every symbol in the result must be a parameter of the callee.
        let mut params: HashMap<Var, usize> = HashMap::new();
        for (i, p) in callee.params.iter().enumerate() {
            if let Some(var) = inner.symbols.var_of(p.value) {
                params.insert(var.clone(), i);
            }
        }
        if returns
            .iter()
            .any(|e| e.vars().iter().any(|var| !params.contains_key(var)))
        {
            return None;
        }
        Some(CalleeReturns { returns, params })
    }
}

fn constant_of(set: &[Expr]) -> Option<BigInt> {
    match set {
        [e] => e.as_integer(),
        _ => None,
    }
}

/// A two-way phi decided by a comparison (see [`choices`]).
#[derive(Clone, Debug)]
struct Choice {
    op: BinOp,
    x: Value,
    y: Value,
    when_true: Value,
    when_false: Value,
}

/// The integer phis of `func` with two arguments at the join of a branch on `x OP y` (`OP`
/// one of `< <= > >=`) that dominates it, each argument arriving from one side.
fn choices(program: &Program, func: &Function, forest: &LoopForest) -> HashMap<Value, Choice> {
    let mut out = HashMap::new();
    for join in func.blocks() {
        let Some(decision) = forest.idom.get(join.index()).copied().flatten() else {
            continue;
        };
        let Terminator::Branch {
            cond,
            then_block,
            else_block,
        } = func.block(decision).terminator
        else {
            continue;
        };
        let InstKind::Binary(op, x, y) = func.inst(cond).kind else {
            continue;
        };
        if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            continue;
        }
        // Which side a predecessor of the join is on: the decision itself when a side goes
        // straight to the join, else the side's first block must dominate it.
        let side = |pred: frontend::ir::Block| {
            let on = |start: frontend::ir::Block| {
                if start == join {
                    pred == decision
                } else {
                    forest.dominates(start, pred)
                }
            };
            match (on(then_block), on(else_block)) {
                (true, false) => Some(true),
                (false, true) => Some(false),
                _ => None,
            }
        };
        for &v in &func.block(join).insts {
            let InstKind::Phi(args) = &func.inst(v).kind else {
                continue;
            };
            if !program.types.is_integer(func.inst(v).ty) {
                continue;
            }
            let [(p0, a0), (p1, a1)] = args.as_slice() else {
                continue;
            };
            let (when_true, when_false) = match (side(*p0), side(*p1)) {
                (Some(true), Some(false)) => (*a0, *a1),
                (Some(false), Some(true)) => (*a1, *a0),
                _ => continue,
            };
            out.insert(
                v,
                Choice {
                    op,
                    x,
                    y,
                    when_true,
                    when_false,
                },
            );
        }
    }
    out
}
