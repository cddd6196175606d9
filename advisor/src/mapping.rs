//! What-if mappings (thesis §5.1, "Improving coalescing"): the coalescing factor of every
//! access under each way of mapping the nest's parallel loops to the grid, and the mapping
//! with the fewest requests per warp.
//!
//! Candidates: for a 2D nest (a loop and its only child, both parallel) both assignments of
//! the two loops to x and y; otherwise every loop of the nest that can be the parallel one,
//! as a 1D grid. The natural mapping is the first candidate: x = the outermost loop, as a
//! straightforward port (and the thesis' report) does.

use crate::access::MemAccess;
use crate::coalescing::{coalescing_factor, combine, sector_factor, thread_var, Factor};
use crate::gpus::Gpu;
use crate::model::{AccessCoalescing, Forms, GridMapping, MappingGain, MappingReport, Quantity};
use crate::quantity;
use crate::space::{IvRange, Space};
use analyses::reconstruct::Reconstruction;
use frontend::ir::Function;
use frontend::loop_ref::LoopRef;
use frontend::loops::{LoopForest, LoopId};
use frontend::unit::Unit;
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::HashMap;
use symbolic::{compare, Cmp, Expr, SignEnv, Var};

/// The target of the advice: GPU architecture and block shape.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub gpu: &'static Gpu,
    pub block: (u64, u64),
}

impl Default for Target {
    fn default() -> Target {
        Target {
            gpu: crate::gpus::gpu(crate::gpus::DEFAULT_GPU).unwrap_or(&crate::gpus::GPUS[0]),
            block: (32, 8),
        }
    }
}

/// Parses `32x8` (or `256` for a 1D block).
pub fn parse_block(text: &str) -> Option<(u64, u64)> {
    let mut parts = text.split(['x', 'X', '*']);
    let x: u64 = parts.next()?.trim().parse().ok()?;
    let y: u64 = match parts.next() {
        Some(y) => y.trim().parse().ok()?,
        None => 1,
    };
    // CUDA's limit: at most 1024 threads in a block (and so in each dimension).
    let threads = x.checked_mul(y)?;
    (parts.next().is_none() && x > 0 && y > 0 && threads <= MAX_THREADS_PER_BLOCK).then_some((x, y))
}

/// The most threads a CUDA block may have (every architecture since sm_20).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Which loops run along the grid's x and y.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub x: LoopId,
    pub y: Option<LoopId>,
    /// Whether one kernel of this mapping runs the whole loop: its axes are the loop and
    /// the one loop nested directly in it. A deeper loop mapped alone (`j` of
    /// `for i { for j ...; for k ... }`) is a what-if: it leaves the loops around it and
    /// their other statements to the host, so it is never the recommendation.
    pub whole: bool,
}

/// A loop nest with everything the performance analyses need.
pub struct Nest<'a> {
    pub unit: &'a Unit,
    pub func: &'a Function,
    pub forest: &'a LoopForest,
    pub rec: &'a Reconstruction,
    pub outer: LoopId,
    pub space: Space,
    pub accesses: Vec<MemAccess>,
    /// How far each base variable has moved, where the loop starts, past the value the
    /// accesses' offsets are expressed from (`crate::rebase`). Counts use the offsets as
    /// they are, so that a start the move leaves unaligned still counts as one; what the
    /// report shows ([`Nest::shown_offset`]) is from where the variable points.
    pub moved: HashMap<Var, Expr>,
    /// Factors already computed, by per-thread offset, element size and granule: the
    /// candidates of a nest share most offsets (`a[i]` is the same for every mapping that
    /// gives `i` to `threadIdx.x`), and loads and stores of one element share theirs.
    factor_memo: std::cell::RefCell<HashMap<(Expr, u64, Granule), Factor>>,
}

/// The unit [`Nest::evaluate`] counts in: 128-byte requests or 32-byte sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granule {
    Line,
    Sector,
}

/// An alternative address of an access as a warp's threads compute it (see
/// [`Nest::per_thread`]), with its base.
type PerThread = (Option<Var>, Result<Expr, Box<Factor>>);

impl<'a> Nest<'a> {
    pub fn new(
        unit: &'a Unit,
        func: &'a Function,
        forest: &'a LoopForest,
        rec: &'a Reconstruction,
        outer: LoopId,
        space: Space,
        accesses: Vec<MemAccess>,
    ) -> Nest<'a> {
        Nest {
            unit,
            func,
            forest,
            rec,
            outer,
            space,
            accesses,
            moved: HashMap::new(),
            factor_memo: Default::default(),
        }
    }

    /// `offset` from `base` as the report shows it: from where the base variable points
    /// when the loop starts.
    pub fn shown_offset(&self, base: Option<&Var>, offset: &Expr) -> Expr {
        base.and_then(|b| self.moved.get(b))
            .and_then(|m| offset.checked_sub(m).ok())
            .unwrap_or_else(|| offset.clone())
    }
}

impl std::fmt::Debug for Nest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nest")
            .field("function", &self.func.name)
            .field("outer", &self.outer)
            .field("accesses", &self.accesses.len())
            .finish()
    }
}

/// One candidate mapping, evaluated.
#[derive(Clone, Debug)]
pub struct Evaluated {
    pub candidate: Candidate,
    pub factors: Vec<Factor>,
    /// The same counts in 32-byte sectors, per access.
    pub sector_factors: Vec<Factor>,
    pub total: Option<Expr>,
    pub report: MappingReport,
}

/// The candidates of a nest: `parallel` says whether a loop may be the parallel one.
pub fn candidates(
    forest: &LoopForest,
    outer: LoopId,
    parallel: &dyn Fn(LoopId) -> bool,
) -> Vec<Candidate> {
    let l = forest.loop_(outer);
    if let [child] = l.children.as_slice() {
        if parallel(*child) && forest.loop_(*child).parent == Some(outer) {
            return vec![
                Candidate {
                    x: outer,
                    y: Some(*child),
                    whole: true,
                },
                Candidate {
                    x: *child,
                    y: Some(outer),
                    whole: true,
                },
            ];
        }
    }
    let mut out = vec![Candidate {
        x: outer,
        y: None,
        whole: true,
    }];
    let mut stack = l.children.clone();
    stack.sort();
    while let Some(d) = stack.pop() {
        if parallel(d) {
            out.push(Candidate {
                x: d,
                y: None,
                whole: false,
            });
        }
        let mut children = forest.loop_(d).children.clone();
        children.sort();
        stack.extend(children);
    }
    out
}

impl<'a> Nest<'a> {
    pub fn iv(&self, id: LoopId) -> Option<&IvRange> {
        self.space.of_loop(id)
    }

    pub fn var_name(&self, id: LoopId) -> String {
        self.iv(id)
            .map(|r| r.var.name().to_string())
            .unwrap_or_else(|| "?".into())
    }

    pub fn grid(&self, c: &Candidate) -> GridMapping {
        GridMapping {
            x: self.var_name(c.x),
            y: c.y.map(|y| self.var_name(y)),
            x_loop: self.loop_id(c.x),
            y_loop: c.y.and_then(|y| self.loop_id(y)),
        }
    }

    /// The id of loop `id` (`None` for a loop without a placed source loop).
    fn loop_id(&self, id: LoopId) -> Option<LoopRef> {
        let source = self.forest.loop_(id).source?;
        self.unit.loop_ref(self.func.source_loop(source))
    }

    /// Substitution that writes an offset in terms of the thread index `#tx`: the x loop's
    /// variable is `init + step*#tx`, and an inner loop whose start depends on it (a
    /// triangular loop) is `init(#tx) + step*k@v`, `k@v` (its iteration number, docs/report-format.md) being the same in every thread.
    pub fn thread_substitution(&self, c: &Candidate) -> Option<HashMap<Var, Expr>> {
        let x = self.iv(c.x)?;
        let tx = Expr::from(thread_var())
            .checked_mul(&Expr::integer(BigInt::from(x.step)))
            .ok()?;
        let x_expr = x.init.checked_add(&tx).ok()?;
        let mut map = HashMap::from([(x.var.clone(), x_expr)]);
        for r in &self.space.ivs {
            if r.var == x.var || !r.init.contains_var(&x.var) {
                continue;
            }
            let init = r.init.substitute(&map).ok()?;
            let k = Expr::var(&format!("k@{}", r.var.name()))
                .checked_mul(&Expr::integer(BigInt::from(r.step)))
                .ok()?;
            map.insert(r.var.clone(), init.checked_add(&k).ok()?);
        }
        Some(map)
    }

    pub fn access_text(&self, a: &MemAccess) -> (u32, String) {
        (
            self.unit.resolve(a.span).map(|r| r.line).unwrap_or(0),
            self.unit.snippet(a.span),
        )
    }

    /// Whether `var` may take a different value in each iteration of the nest: a value
    /// loaded, merged or computed (opaquely) inside the nest whose reconstruction mentions
    /// an induction variable of the nest or cannot be written down. Such a symbol is not
    /// fixed for a warp: `in[idx[i]]` differs between threads.
    fn varies_per_iteration(&self, var: &Var) -> bool {
        let Some(info) = self.rec.symbols.info(var) else {
            return false;
        };
        let (value, address) = match &info.origin {
            analyses::symbols::SymbolOrigin::Load { load, address } => (*load, Some(*address)),
            analyses::symbols::SymbolOrigin::Phi(v)
            | analyses::symbols::SymbolOrigin::Opaque(v) => (*v, None),
            _ => return false,
        };
        let block = self.func.inst(value).block;
        if !self.forest.loop_(self.outer).contains(block) {
            return false;
        }
        let Some(address) = address else {
            return true;
        };
        match self.rec.single(address) {
            Some(e) => e
                .vars()
                .iter()
                .any(|v| self.space.iv(v).is_some() || (v != var && self.varies_per_iteration(v))),
            None => true,
        }
    }

    /// The id of the loop inside the thread that repeats `a`, if any (see the model).
    fn inner_loop(&self, a: &MemAccess, c: &Candidate) -> Option<LoopRef> {
        let block = self.func.inst(a.inst).block;
        let innermost = self.forest.innermost(block)?;
        if innermost == c.x || Some(innermost) == c.y || innermost == self.outer {
            return None;
        }
        let source = self.forest.loop_(innermost).source?;
        self.unit.loop_ref(self.func.source_loop(source))
    }

    /// One alternative address of `a` as the threads of a warp compute it: the offset with
    /// the candidate's thread substitution, or the factor that holds whatever the granule
    /// (a value that differs between threads, an offset that cannot be written per thread).
    fn per_thread(
        &self,
        offset: &Expr,
        map: Option<&HashMap<Var, Expr>>,
    ) -> Result<Expr, Box<Factor>> {
        if let Some(v) = offset.vars().iter().find(|v| self.varies_per_iteration(v)) {
            return Err(Box::new(Factor::worst(&format!(
                "the offset depends on `{}`, a value that differs between threads: up to 32 requests",
                v.name()
            ))));
        }
        match map.and_then(|m| offset.substitute(m).ok()) {
            Some(o) => Ok(o),
            None => Err(Box::new(Factor {
                requests: Expr::constant(32),
                min_requests: None,
                unaligned: None,
                stride: None,
                exact: false,
                assumptions: vec!["the offset could not be written per thread".into()],
            })),
        }
    }

    /// [`coalescing_factor`] or [`sector_factor`] of a per-thread offset, computed once per
    /// nest.
    fn granule_factor(&self, offset: &Expr, elem: u64, granule: Granule) -> Factor {
        let key = (offset.clone(), elem, granule);
        if let Some(known) = self.factor_memo.borrow().get(&key) {
            return known.clone();
        }
        let factor = match granule {
            Granule::Line => coalescing_factor(offset, elem, &self.space.env),
            Granule::Sector => sector_factor(offset, elem, &self.space.env),
        };
        self.factor_memo.borrow_mut().insert(key, factor.clone());
        factor
    }

    /// The factors of every access under `c`.
    pub fn evaluate(&self, c: &Candidate) -> Evaluated {
        let map = self.thread_substitution(c);
        let env = &self.space.env;
        // Counts are written as C: a floor of a dividend the signs make `>= 0` is `/`.
        let in_c = |e: &Expr| Quantity::of_c(e, env);
        let mut factors = Vec::new();
        let mut sector_factors = Vec::new();
        let mut rows = Vec::new();
        for a in &self.accesses {
            let per_thread: Vec<PerThread> = a
                .alternatives
                .iter()
                .map(|(base, offset)| (base.clone(), self.per_thread(offset, map.as_ref())))
                .collect();
            // Offsets that differ are addresses a warp's lanes may mix (the branch that
            // picks one may split the warp), not one address written several ways.
            let distinct = per_thread
                .iter()
                .any(|(_, o)| o.as_ref().ok() != per_thread[0].1.as_ref().ok());
            let per_granule = |granule: Granule| {
                let alternatives: Vec<(Option<Var>, Factor)> = per_thread
                    .iter()
                    .map(|(base, offset)| {
                        let factor = match offset {
                            Ok(o) => self.granule_factor(o, a.elem_bytes, granule),
                            Err(f) => (**f).clone(),
                        };
                        (base.clone(), factor)
                    })
                    .collect();
                combine(&alternatives, distinct, &self.space.env)
            };
            let f = per_granule(Granule::Line);
            let sectors = per_granule(Granule::Sector);
            let (line, text) = self.access_text(a);
            rows.push(AccessCoalescing {
                line,
                text,
                kind: if a.is_store { "store" } else { "load" }.into(),
                base: a.base().map(|b| b.name().to_string()),
                // An access through a pointer chosen at run time has one offset per
                // possible base.
                offset_bytes: Forms::of(
                    a.alternatives
                        .iter()
                        .map(|(b, o)| Quantity::of(&self.shown_offset(b.as_ref(), o))),
                ),
                inner_loop: self.inner_loop(a, c),
                stride_bytes: f.stride.as_ref().map(in_c),
                requests_per_warp: in_c(&f.requests),
                sectors_per_warp: in_c(&sectors.requests),
                min_requests_per_warp: f.min_requests.as_ref().map(in_c),
                unaligned_requests_per_warp: f.unaligned.as_ref().map(in_c),
                exact: f.exact,
                assumptions: f.assumptions.clone(),
            });
            factors.push(f);
            sector_factors.push(sectors);
        }
        let total = factors.iter().try_fold(Expr::constant(0), |acc, f| {
            acc.checked_add(&f.requests).ok()
        });
        let total_requests = sum(&factors, env);
        let total_sectors = sum(&sector_factors, env);
        Evaluated {
            candidate: *c,
            factors,
            total,
            sector_factors,
            report: MappingReport {
                mapping: self.grid(c),
                total_requests_per_warp: total_requests,
                total_sectors_per_warp: total_sectors,
                accesses: rows,
            },
        }
    }
}

/// The factors' requests added up, written as a readable sum: constants added up, equal
/// terms counted (`3 + 2*min(32, N)`), rather than the distributed normal form of a sum of
/// `min`s. C text only where the engine cannot add them.
fn sum(factors: &[Factor], env: &SignEnv) -> Quantity {
    let requests: Vec<Expr> = factors
        .iter()
        .map(|f| quantity::in_c(&f.requests, env))
        .collect();
    let text = sum_text(&requests);
    let total = requests
        .iter()
        .try_fold(Expr::constant(0), |acc, r| acc.checked_add(r).ok());
    match total {
        Some(e) => Quantity::written(&e, text),
        None => Quantity::c_text(text),
    }
}

fn sum_text(requests: &[Expr]) -> String {
    let mut constant = BigInt::from(0);
    let mut terms: Vec<(String, usize)> = Vec::new();
    for r in requests {
        match r.as_integer() {
            Some(c) => constant += c,
            None => {
                let t = r.to_c();
                match terms.iter_mut().find(|(x, _)| *x == t) {
                    Some((_, n)) => *n += 1,
                    None => terms.push((t, 1)),
                }
            }
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if constant != BigInt::from(0) || terms.is_empty() {
        parts.push(constant.to_string());
    }
    for (t, n) in terms {
        parts.push(if n == 1 { t } else { format!("{n}*{t}") });
    }
    parts.join(" + ")
}

/// Sizes used when two totals cannot be compared symbolically: every size 1024.
pub const TYPICAL_SIZE: i64 = 1024;

fn typical_value(e: &Expr) -> Option<BigRational> {
    let ctx: HashMap<Var, BigRational> = e
        .vars()
        .into_iter()
        .map(|v| (v, BigRational::from_integer(BigInt::from(TYPICAL_SIZE))))
        .collect();
    e.eval(&ctx).ok()
}

/// The index of the candidate with the fewest requests per warp among those that run the
/// whole loop (the natural one, index 0, on ties), and how the comparison was decided.
pub fn recommend(evals: &[Evaluated], env: &SignEnv) -> Option<(usize, String)> {
    let mut best = 0;
    let mut how = "symbolic".to_string();
    for (i, e) in evals.iter().enumerate().skip(1) {
        if !e.candidate.whole {
            continue;
        }
        let (Some(a), Some(b)) = (&e.total, &evals[best].total) else {
            continue;
        };
        let small = a.size() + b.size() <= 16;
        match if small {
            compare(a, b, env)
        } else {
            Cmp::Unknown
        } {
            Cmp::Less => best = i,
            Cmp::Equal | Cmp::Greater | Cmp::GreaterEq => {}
            // Never more, and fewer unless the sizes are tiny: decide at typical sizes.
            Cmp::LessEq => {
                if let (Some(x), Some(y)) = (typical_value(a), typical_value(b)) {
                    if x < y {
                        best = i;
                    }
                }
            }
            Cmp::Unknown => {
                if let (Some(x), Some(y)) = (typical_value(a), typical_value(b)) {
                    if x < y {
                        best = i;
                    }
                    how = format!("numerically, every size = {TYPICAL_SIZE}");
                }
            }
        }
    }
    (!evals.is_empty()).then_some((best, how))
}

/// The gain of the recommended mapping over the natural one, when they differ.
pub fn gain(evals: &[Evaluated], best: usize, how: &str) -> Option<MappingGain> {
    if best == 0 {
        return None;
    }
    Some(MappingGain {
        natural: evals[0].report.mapping.clone(),
        natural_requests_per_warp: evals[0].report.total_requests_per_warp.clone(),
        recommended_requests_per_warp: evals[best].report.total_requests_per_warp.clone(),
        compared: how.to_string(),
    })
}
