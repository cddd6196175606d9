//! One kernel: its global-memory accesses with requests and sectors per warp, and its
//! branches with their divergence (WW203 where they split warps).
//!
//! An access's address is reconstructed as `base + offset` ([`analyses::reconstruct`]); the
//! base says which memory it is (a kernel's pointer parameters and `__device__` variables
//! are global memory, `__shared__` and locals are not counted here). In the offset,
//! `threadIdx.x` (and `threadIdx.y` when a warp spans rows) varies along the warp and every
//! other name must be the same for the warp's 32 threads ([`super::variance`]); a loop
//! variable that starts at a thread-dependent value and steps by a uniform one
//! (`for (i = tid; i < n; i += stride)`) is written `init + iter(i)*step`, with `iter(i)` the
//! iteration the warp is in. Anything else that differs between threads (an index read from
//! memory) leaves the count bounded, with the reason.

mod aggregate;
mod gather;
mod period;

use super::mask::{Guard, Masked};
use super::model::{
    AccessKind, AccessReport, BranchReport, Call, Coalescing, Count, CountExprs, Divergence,
    SharedAccessReport,
};
use super::variance::{PostDominators, Variance};
use super::warp::{count, count_lanes, Coordinates, WarpCount};
use crate::access::split_base;
use crate::coalescing::{Factor, ALIGNED_ROWS, ALIGNED_SECTOR_ROWS, LINE, SECTOR, WARP};
use analyses::reconstruct::{reconstruct, ReconstructConfig, Reconstruction};
use analyses::symbols::SymbolOrigin;
use frontend::ir::inline::{CallSite, Inlined};
use frontend::ir::{
    thread_coordinate, Axis, Block, Callee, CudaVariable, Function, InstKind, Terminator,
    ThreadBuiltin, Value,
};
use frontend::loops::{analyze_loops, LoopForest};
use frontend::unit::Unit;
use std::collections::{BTreeMap, HashMap};
use symbolic::{Atom, Expr, SignEnv, SignSet, Var};

/// What a kernel is checked under.
pub struct Setting<'a> {
    pub unit: &'a Unit,
    pub func: &'a Function,
    /// `blockDim` per axis where known.
    pub block: [Option<u64>; 3],
    /// Values by name: `blockDim.x`, `gridDim.y`, a parameter `n` (from `--set` and launches).
    pub known: &'a BTreeMap<String, i64>,
    /// The calls each value and block of `func` that a device function's body brought in
    /// came through (`func` is the kernel with its calls inlined).
    pub calls: &'a Inlined,
}

/// The analysis of one kernel.
pub struct Checked {
    pub accesses: Vec<AccessReport>,
    pub shared: Vec<SharedAccessReport>,
    pub branches: Vec<BranchReport>,
    pub not_analysed: Vec<String>,
}

/// An offset whose varying name is a choice between forms (a clamp).
struct Clamp {
    /// The offset under each form, known values substituted.
    offsets: Vec<Expr>,
    /// Every lane of a warp takes the same form.
    uniform: bool,
    note: String,
}

/// The report of an access at `at` before it is counted: every lane its own, from 1.
/// A branch deciding whether a block runs ([`Kernel::deciding`]): where it is, its
/// condition, its two sides, and whether the block is on its `then` side.
struct Deciding {
    at: Block,
    cond: Value,
    sides: [Block; 2],
    taken: bool,
}

fn unknown(at: String, access: String, kind: AccessKind, elem: u64) -> AccessReport {
    AccessReport {
        at,
        via: Vec::new(),
        access,
        kind,
        bytes: elem,
        array: None,
        offset: None,
        stride: None,
        requests: bounded(elem, LINE),
        sectors: bounded(elem, SECTOR),
        warp_bytes: WARP as u64 * elem,
        ideal_sectors: ideal_sectors(elem, WARP as u64),
        coalescing: Coalescing::Unknown,
        when: None,
        reason: None,
        assumptions: Vec::new(),
        aligned_rows: false,
        finding: None,
        active: None,
        unpaired: None,
        dynamic: None,
    }
}

/// A counted access: global memory's requests and sectors, or shared memory's banks.
enum Counted {
    Global(AccessReport),
    Shared(SharedAccessReport),
}

/// Which memory an access's base pointer addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    Global,
    Shared,
    Local,
    Constant,
}

/// The kernel's names and facts, shared by its accesses and branches.
struct Kernel<'a> {
    setting: &'a Setting<'a>,
    rec: Reconstruction,
    forest: LoopForest,
    variance: Variance,
    coordinates: Coordinates,
    /// The built-in coordinate each of the kernel's coordinate symbols reads.
    builtins: HashMap<Var, (ThreadBuiltin, Option<Axis>)>,
    /// Known values, by the symbols the offsets use.
    known: HashMap<Var, Expr>,
    /// Which thread coordinates vary along a warp (x always; y when a warp spans rows).
    varying_axes: [bool; 3],
    env: SignEnv,
    /// Predecessors of each block, by index: a guard's edge must be its target's only one.
    preds: Vec<usize>,
    pdom: PostDominators,
}

pub fn check(setting: &Setting) -> Checked {
    let program = &setting.unit.lowered.program;
    let func = setting.func;
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let [x, y, _] = setting.block;
    let varying_axes = [
        true,
        x.is_some_and(|x| x % WARP as u64 != 0),
        matches!((x, y), (Some(x), Some(y)) if (x * y) % WARP as u64 != 0),
    ];
    let variance = Variance::of(program, func, &forest, varying_axes);
    let mut coordinates = Coordinates::default();
    let mut builtins = HashMap::new();
    let mut known = HashMap::new();
    let mut env = SignEnv::new();
    for symbol in rec.symbols.iter() {
        let var = symbol.var.clone();
        if let SymbolOrigin::Load { load, .. } = symbol.origin {
            if let Some((builtin, axis)) = thread_coordinate(program, func, load) {
                builtins.insert(var.clone(), (builtin, axis));
                let axis_index = axis.map(|a| a as usize);
                match (builtin, axis_index) {
                    (ThreadBuiltin::ThreadIdx, Some(a)) => {
                        coordinates.thread[a] = Some(var.clone())
                    }
                    (ThreadBuiltin::BlockDim, Some(0)) => {
                        coordinates.block_dim_x = Some(var.clone())
                    }
                    _ => {}
                }
                let sign = match builtin {
                    ThreadBuiltin::ThreadIdx | ThreadBuiltin::BlockIdx => SignSet::NON_NEG,
                    _ => SignSet::POS,
                };
                env.set(var.clone(), sign);
                let name = match axis {
                    Some(a) => format!("{}.{}", builtin.name(), a.name()),
                    None => builtin.name().to_string(),
                };
                if let Some(v) = setting.known.get(&name) {
                    known.insert(var, Expr::constant(*v));
                }
                continue;
            }
        }
        // An unknown scalar parameter added to the index alone (`in[i + t]`) is taken, as a
        // row offset is, to keep the warp on a segment: programs pass multiples of the
        // block (huffman's `baseIndex`, cfd's `nelr`), and the report's `unaligned` figure
        // says what a value off a segment costs (gaussian's `t`).
        if let Some(v) = setting.known.get(var.name()) {
            known.insert(var, Expr::constant(*v));
        }
    }
    if let (Some(x), Some(_)) = (x, &coordinates.thread[1]) {
        // A warp spanning rows starts on row `32*w / x` when `x` divides 32, any row
        // otherwise; a block of one warp has only row 0.
        let threads = setting.block.iter().try_fold(1, |n, d| d.map(|d| n * d));
        if x % WARP as u64 != 0 && threads.is_none_or(|n| n > WARP as u64) {
            let step = if (WARP as u64).is_multiple_of(x) {
                WARP as u64 / x
            } else {
                1
            };
            coordinates
                .free
                .push((super::lanes::first_row(), step as i64));
        }
    }
    let kernel = Kernel {
        setting,
        rec,
        forest,
        variance,
        coordinates,
        builtins,
        known,
        varying_axes,
        env,
        preds: predecessors(func),
        pdom: PostDominators::of(func),
    };
    let mut accesses = Vec::new();
    let mut shared = Vec::new();
    let mut skipped: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut branches = Vec::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            match kernel.access(v, b) {
                Some(Ok(Counted::Global(report))) => accesses.push(report),
                Some(Ok(Counted::Shared(report))) => shared.push(report),
                Some(Err(space)) => *skipped.entry(space).or_default() += 1,
                None => {}
            }
        }
        if let Some(branch) = kernel.branch(b) {
            branches.push(branch);
        }
    }
    let mut not_analysed: Vec<String> = skipped
        .into_iter()
        .map(|(what, n)| format!("{n} {what} access{}", if n == 1 { "" } else { "es" }))
        .collect();
    not_analysed.extend(device_calls(program, func, &setting.calls.left));
    Checked {
        accesses,
        shared,
        branches,
        not_analysed,
    }
}

/// How many edges enter each block, by index.
fn predecessors(func: &Function) -> Vec<usize> {
    let mut preds = vec![0; func.blocks.len()];
    for b in func.blocks() {
        for s in func.block(b).terminator.successors() {
            preds[s.index()] += 1;
        }
    }
    preds
}

/// An access that data decides which lanes run, counted for a full warp. A misaligned
/// full warp costs one segment more than its bytes need, which the lanes the data lets
/// through may not (one lane never does): that verdict is left unknown, the counts the
/// most (one lane the least). A stride that gives each lane bytes of its own wastes them
/// for any lanes that run together, so an uncoalesced verdict and its counts stand.
fn decided_by_data(report: &mut AccessReport) {
    if report.coalescing != Coalescing::Misaligned {
        return;
    }
    for c in [&mut report.requests, &mut report.sectors] {
        c.min = Some("1".into());
        c.exprs.min = Some(Expr::constant(1));
        c.exact = false;
        c.value = None;
    }
    report.coalescing = Coalescing::Unknown;
    report.reason = Some(
        "which lanes run it depends on data: misaligned when the whole warp does, not when \
         one lane does"
            .into(),
    );
}

/// Calls of the program's device functions left calls by the inlining (recursion, size):
/// their own accesses are not counted.
fn device_calls(
    program: &frontend::ir::Program,
    func: &Function,
    left: &[(String, &'static str)],
) -> Vec<String> {
    let mut names: Vec<&str> = func
        .values()
        .filter_map(|v| match &func.inst(v).kind {
            InstKind::Call {
                callee: Callee::Direct(name),
                ..
            } if program.function(name).is_some() => Some(name.as_str()),
            _ => None,
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|n| {
            let why = left
                .iter()
                .find(|(name, _)| name == n)
                .map_or(String::new(), |(_, why)| format!(", not inlined: {why}"));
            format!("the accesses inside `{n}` (a called device function{why})")
        })
        .collect()
}

/// The thread-dependent loop variable `var` (a header phi) as `init + iter(var)*step`.
struct Unrolled {
    var: Var,
    by: Expr,
    note: String,
}

impl Kernel<'_> {
    fn program(&self) -> &frontend::ir::Program {
        &self.setting.unit.lowered.program
    }

    fn func(&self) -> &Function {
        self.setting.func
    }

    /// The calls of `chain`, outermost first.
    fn via(&self, chain: Option<&Vec<CallSite>>) -> Vec<Call> {
        let unit = self.setting.unit;
        chain
            .into_iter()
            .flatten()
            .map(|call| Call {
                callee: call.callee.clone(),
                at: unit
                    .resolve(call.span)
                    .map(|r| r.to_string())
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// The report of a load, store or atomic at `v` in block `b`; `Err` names the memory of
    /// an access not counted here; `None` when `v` is no access.
    fn access(&self, v: Value, b: Block) -> Option<Result<Counted, &'static str>> {
        let func = self.func();
        let program = self.program();
        let inst = func.inst(v);
        let (addr, kind, elem) = self.access_parts(v)?;
        let alternatives: Vec<(Option<Var>, Expr)> = self
            .rec
            .of(addr)
            .iter()
            .map(|e| split_base(e, &self.rec.symbols))
            .collect();
        // The address's own place, unless it has none or is a parameter (`*over = true`
        // stores through `over` as declared): then the access's.
        let span = func.inst(addr).origin.span;
        let span = if span.is_none() || matches!(func.inst(addr).kind, InstKind::Param(_)) {
            inst.origin.span
        } else {
            span
        };
        let unit = self.setting.unit;
        let at = unit
            .resolve(span)
            .map(|r| r.to_string())
            .unwrap_or_default();
        let text = match kind {
            AccessKind::Atomic => unit.snippet(inst.origin.span),
            _ => unit.snippet(span),
        };
        let mut report = unknown(at, text, kind, elem);
        report.via = self.via(self.setting.calls.values.get(&v));
        report.unpaired = self.unpaired(b);
        let forms = alternatives.len();
        let many = self.one_base(&alternatives, addr, b);
        let alternatives = match &many {
            Some((base, clamp)) => vec![(Some(base.clone()), clamp.offsets[0].clone())],
            None => alternatives,
        };
        let [(Some(base), offset)] = alternatives.as_slice() else {
            report.reason = Some(if forms > 1 {
                format!("the address has {forms} possible forms")
            } else {
                "no single base pointer is known for the address".into()
            });
            return Some(Ok(Counted::Global(report)));
        };
        match self.space(base) {
            (Space::Global, note) => report.assumptions.extend(note),
            (Space::Shared, _) if many.is_some() => {
                report.reason = Some(format!("the address has {forms} possible forms"));
                return Some(Ok(Counted::Global(report)));
            }
            (Space::Shared, _) => {
                return Some(Ok(Counted::Shared(self.shared(report, base, offset, b))))
            }
            (Space::Local, _) => return Some(Err("local-memory")),
            (Space::Constant, _) => return Some(Err("constant-memory")),
        }
        report.array = Some(base.name().to_string());
        if let Some((_, clamp)) = many {
            return Some(Ok(Counted::Global(self.clamped(report, clamp, elem, b))));
        }
        // A structure copied whole is counted as the field accesses it compiles to.
        let copy = match kind {
            AccessKind::Atomic => None,
            _ => aggregate::split(&program.types, inst.ty),
        };
        let (elem, offset) = match &copy {
            Some(c) => {
                report.bytes = c.bytes;
                report.assumptions.push(c.note.clone());
                let at = Expr::constant(i64::try_from(c.at).unwrap_or(0));
                (
                    c.bytes,
                    offset.checked_add(&at).unwrap_or_else(|_| offset.clone()),
                )
            }
            None => (elem, offset.clone()),
        };
        let offset = &offset;
        let (offset, unrolled) = self.unrolled(offset, b);
        report.assumptions.extend(unrolled);
        report.offset = Some(offset.to_string());
        if let Some(var) = self.varying_name(&offset, b) {
            if let Some(clamp) = self.clamp(&var, &offset, b) {
                return Some(Ok(Counted::Global(self.clamped(report, clamp, elem, b))));
            }
            if self.per_lane_data(&offset, b, 0) {
                return Some(Ok(Counted::Global(self.gathered(report, &offset, &var, b))));
            }
            let why = if self.reads_data(&var) {
                "data read per thread"
            } else {
                "through the thread index in a way the analysis does not model"
            };
            report.reason = Some(format!(
                "the address depends on `{var}`, which differs between the threads of a warp \
                 ({why}): anywhere from 1 request to every thread its own"
            ));
            return Some(Ok(Counted::Global(report)));
        }
        let layout = || match &copy {
            Some(c) => Layout::StructCopy(c.fields, c.size),
            None => layout(func, addr, elem),
        };
        self.count_global(&mut report, &offset, elem, b, layout);
        Some(Ok(Counted::Global(report)))
    }

    /// The address, kind and element size of a load, store or atomic at `v`; `None` when
    /// `v` is none, or reads a thread coordinate (a load of CUDA's own variables).
    fn access_parts(&self, v: Value) -> Option<(Value, AccessKind, u64)> {
        let func = self.func();
        let program = self.program();
        let inst = func.inst(v);
        let (addr, kind, elem) = match &inst.kind {
            InstKind::Load { addr } => (*addr, AccessKind::Load, program.types.size_of(inst.ty)),
            InstKind::Store { addr, .. } => {
                (*addr, AccessKind::Store, program.types.size_of(inst.ty))
            }
            InstKind::Call {
                callee: Callee::Direct(name),
                args,
            } if name.starts_with("atomic") && !args.is_empty() => {
                let pointee = program.types.pointee(func.inst(args[0]).ty)?;
                (args[0], AccessKind::Atomic, program.types.size_of(pointee))
            }
            _ => return None,
        };
        if thread_coordinate(program, func, v).is_some() {
            return None;
        }
        Some((addr, kind, elem.unwrap_or(1).max(1)))
    }

    /// Counts a global access whose offset along the warp the analysis follows: requests
    /// and sectors over the lanes its guards let through, the verdict, and the finding of
    /// an uncoalesced one, worded by the data's `layout`.
    fn count_global(
        &self,
        report: &mut AccessReport,
        offset: &Expr,
        elem: u64,
        b: Block,
        layout: impl FnOnce() -> Layout,
    ) {
        let settled = offset
            .substitute(&self.known)
            .unwrap_or_else(|_| offset.clone());
        let [x, y, z] = self.setting.block;
        let threads = match (x, y, z) {
            (Some(x), Some(y), Some(z)) => Some(x * y * z),
            _ => None,
        };
        let (masked, note) = self.active_lanes(b);
        report.active = note;
        let counted = if masked.restricted {
            match count_lanes(
                std::slice::from_ref(&settled),
                elem,
                &masked.warps,
                masked.exact,
                &self.coordinates.free,
            ) {
                Some(mut c) => {
                    c.stride = super::warp::stride_along_x(&settled, &self.coordinates);
                    c
                }
                None => {
                    report.active = Some(
                        "a full warp: the lanes the guard lets through are not a constant \
                         apart, so they could not be counted alone"
                            .into(),
                    );
                    count(&settled, elem, x, threads, &self.coordinates, &self.env)
                }
            }
        } else {
            count(&settled, elem, x, threads, &self.coordinates, &self.env)
        };
        report.warp_bytes = counted.distinct * elem;
        report.ideal_sectors = ideal_sectors(elem, counted.distinct);
        self.judge(report, &settled, &counted, elem);
        if !masked.restricted && self.guards(b).iter().any(|g| g.by_data) {
            decided_by_data(report);
        }
        if report.coalescing == Coalescing::Uncoalesced {
            // The stride before known values: `4*n` walks a column whatever `n` is set to.
            let written = super::warp::stride_along_x(offset, &self.coordinates);
            let column = written.is_some_and(|s| s.as_integer().is_none());
            let stride = counted
                .stride
                .as_ref()
                .and_then(|s| s.as_integer())
                .and_then(|s| u64::try_from(s).ok());
            report.finding = Some(finding(report, layout(), stride, column));
        }
    }

    /// Several forms of an address on one base pointer (`in[idx]` where branches set `idx`
    /// to `slice + k` or to `size + k`): the base, and the forms as a clamp whose choice may
    /// differ between lanes, so that the count covers every lane's every form, as a choice
    /// made by `?:` is. `None` for one form, several bases, or a form that varies otherwise.
    fn one_base(
        &self,
        alternatives: &[(Option<Var>, Expr)],
        addr: Value,
        b: Block,
    ) -> Option<(Var, Clamp)> {
        let [(Some(base), _), rest @ ..] = alternatives else {
            return None;
        };
        if rest.is_empty() || rest.iter().any(|(other, _)| other.as_ref() != Some(base)) {
            return None;
        }
        let mut offsets = Vec::new();
        for (_, offset) in alternatives {
            let (o, _) = self.unrolled(offset, b);
            if self.varying_name(&o, b).is_some() {
                return None;
            }
            offsets.push(o.substitute(&self.known).unwrap_or(o));
        }
        let forms: Vec<String> = offsets.iter().map(|o| format!("`{o}`")).collect();
        // Branches every lane of a warp takes alike choose one form per warp.
        let uniform = !self.variance.mixes_at(addr, b);
        let note = if uniform {
            format!(
                "the address is one of {} forms on `{base}` chosen by branches every lane of \
                 a warp takes alike: {}; the count is the most of one form",
                forms.len(),
                forms.join(", ")
            )
        } else {
            format!(
                "the address is one of {} forms on `{base}` chosen by the branches before it: \
                 {}; the count covers every lane's choice, from 1 to the most",
                forms.len(),
                forms.join(", ")
            )
        };
        Some((
            base.clone(),
            Clamp {
                offsets,
                uniform,
                note,
            },
        ))
    }

    /// `offset` with `var` written as each of its forms, when `var` is a choice between
    /// forms in the thread coordinates and uniform names (`W = i == 0 ? c : c - 1`, a
    /// `min`/`max`), and whether the choice is the same for every lane of a warp.
    fn clamp(&self, var: &Var, offset: &Expr, b: Block) -> Option<Clamp> {
        let func = self.func();
        let value = self.rec.symbols.value_of(var)?;
        let (cond, forms): (Option<Value>, Vec<Value>) = match &func.inst(value).kind {
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => (Some(*cond), vec![*then_value, *else_value]),
            InstKind::Phi(incoming) if self.rec.recurrence(value).is_none() => {
                (None, incoming.iter().map(|(_, v)| *v).collect())
            }
            _ => return None,
        };
        let mut offsets = Vec::new();
        for form in forms {
            let e = self.rec.single(form)?;
            let (e, _) = self.unrolled(e, b);
            if self.varying_name(&e, b).is_some() {
                return None;
            }
            let map = HashMap::from([(var.clone(), e.clone())]);
            let o = offset.substitute(&map).ok()?;
            if self.varying_name(&o, b).is_some() {
                return None;
            }
            offsets.push(o.substitute(&self.known).unwrap_or(o));
        }
        if offsets.is_empty() {
            return None;
        }
        let uniform = cond.is_some_and(|c| !self.variance.varies_at(c, b));
        let forms: Vec<String> = offsets.iter().map(|o| format!("`{o}`")).collect();
        Some(Clamp {
            offsets,
            uniform,
            note: format!(
                "`{var}` is chosen per lane between forms (a clamp): the offset is one of {}{}",
                forms.join(", "),
                if uniform {
                    ", the same for every lane of a warp"
                } else {
                    ": the count covers every lane's choice, from 1 to the most"
                }
            ),
        })
    }

    /// The counts of a clamped access: where every lane takes the same form, the most and
    /// the fewest over the forms counted as usual; else the granules of every form of every
    /// lane together (the most), from 1.
    fn clamped(&self, mut report: AccessReport, clamp: Clamp, elem: u64, b: Block) -> AccessReport {
        report.offset = Some(clamp.offsets[0].to_string());
        report.assumptions.push(clamp.note);
        let [x, ..] = self.setting.block;
        let (masked, note) = self.active_lanes(b);
        report.active = note;
        let counted = if clamp.uniform && !masked.restricted {
            let each: Vec<WarpCount> = clamp
                .offsets
                .iter()
                .map(|o| count(o, elem, x, self.threads(), &self.coordinates, &self.env))
                .collect();
            super::warp::over_forms(each)
        } else {
            count_lanes(
                &clamp.offsets,
                elem,
                &masked.warps,
                false,
                &self.coordinates.free,
            )
            .or_else(|| {
                // Forms a symbolic distance apart: each counted alone, then together.
                let each = clamp
                    .offsets
                    .iter()
                    .map(|o| count(o, elem, x, self.threads(), &self.coordinates, &self.env));
                (!masked.restricted).then(|| super::warp::together(each.collect(), &self.env))
            })
        };
        let Some(mut counted) = counted else {
            report.reason = Some(
                "the address is one of several forms (a clamp) whose counts could not be \
                 combined: anywhere from 1 request to every thread its own"
                    .into(),
            );
            return report;
        };
        let strides: Vec<Option<Expr>> = clamp
            .offsets
            .iter()
            .map(|o| super::warp::stride_along_x(o, &self.coordinates))
            .collect();
        counted.stride = strides
            .iter()
            .all(|s| *s == strides[0])
            .then(|| strides[0].clone())
            .flatten();
        report.warp_bytes = counted.distinct * elem;
        report.ideal_sectors = ideal_sectors(elem, counted.distinct);
        self.judge(&mut report, &clamp.offsets[0], &counted, elem);
        report
    }

    /// The bank conflicts of an access to the `__shared__` array `base` at `offset` bytes,
    /// from the start of its report as a global access.
    fn shared(
        &self,
        start: AccessReport,
        base: &Var,
        offset: &Expr,
        b: Block,
    ) -> SharedAccessReport {
        let (offset, unrolled) = self.unrolled(offset, b);
        let mut report = SharedAccessReport {
            at: start.at,
            via: start.via,
            access: start.access,
            kind: start.kind,
            bytes: start.bytes,
            array: Some(base.name().to_string()),
            offset: Some(offset.to_string()),
            stride: None,
            bank_conflicts: Count::default(),
            reason: None,
            assumptions: unrolled,
            finding: None,
            active: None,
        };
        let degree = match self.varying_name(&offset, b) {
            Some(var) => {
                let why = if self.reads_data(&var) {
                    "data read per thread"
                } else {
                    "through the thread index in a way the analysis does not model"
                };
                report.reason = Some(format!(
                    "the address depends on `{var}`, which differs between the threads of a \
                     warp ({why}): anywhere from no conflict to every lane its own pass"
                ));
                super::banks::Degree::unknown("the lanes' offsets are not known")
            }
            None => {
                let settled = offset
                    .substitute(&self.known)
                    .unwrap_or_else(|_| offset.clone());
                report.stride =
                    super::warp::stride_along_x(&settled, &self.coordinates).map(|s| s.to_string());
                let (masked, note) = self.active_lanes(b);
                report.active = note;
                let mut d = super::banks::degree(&settled, report.bytes, &masked.warps);
                if masked.restricted && !masked.exact && d.value.is_some() {
                    d.min = Some(1);
                    d.exact = false;
                }
                d
            }
        };
        if report.reason.is_none() {
            report
                .assumptions
                .extend(degree.assumptions.iter().cloned());
        }
        report.bank_conflicts = Count {
            max: degree.max.clone(),
            value: degree.value,
            min: degree.min.map(|m| m.to_string()),
            unaligned: None,
            exact: degree.exact,
            exprs: Box::default(),
        };
        if degree.min.or(degree.value).is_some_and(|d| d > 1) {
            report.finding = Some(crate::rules::ww202_bank_conflict::finding(
                &report.access,
                &report.bank_conflicts.max,
                report.stride.as_deref(),
                line_of(&report.at),
            ));
            if let (Some(f), Some(lanes)) = (&mut report.finding, &report.active) {
                if lanes.starts_with("a full warp") {
                    f.message
                        .push_str(" (for a full warp: its guard is not decided lane by lane)");
                }
            }
        }
        report
    }

    /// The lanes of each warp that may run an access in block `b`, and what the report says
    /// of them: how many of the 32 where a guard drops some, that the count is for a full
    /// warp where a guard differs between lanes but is not decided lane by lane.
    fn active_lanes(&self, b: Block) -> (Masked, Option<String>) {
        let warps = super::lanes::warps(self.setting.block[0], self.threads(), &self.coordinates);
        let guards = self.guards(b);
        let env = crate::coalescing::warp_env(&self.env)
            .with(super::lanes::first_row(), SignSet::NON_NEG)
            .with(super::warp::block_dim_warps(), SignSet::POS);
        let masked = super::mask::active(&warps, &guards, &env);
        let conditions: Vec<String> = guards.iter().map(|g| format!("`{}`", g.text)).collect();
        let conditions = conditions.join(", ");
        let full = warps.iter().map(Vec::len).max().unwrap_or(0);
        let note = if guards.is_empty() {
            None
        } else if masked.restricted {
            let lanes = if masked.exact { "" } else { "at most " };
            Some(format!(
                "{lanes}{} of a warp's {full} lanes: those {conditions} lets through",
                masked.most
            ))
        } else if masked.exact && masked.most == full {
            None
        } else {
            Some(format!(
                "a full warp: {conditions} differs between lanes in a way not decided lane by lane"
            ))
        };
        (masked, note)
    }

    /// The branches deciding whether block `b` runs that differ between a warp's threads
    /// (a uniform one runs the whole warp or none of it): each edge into a block with no
    /// other way in that dominates `b`, with the side it takes.
    fn deciding(&self, b: Block) -> Vec<Deciding> {
        self.varying_sides(|_, target| {
            self.preds[target.index()] == 1 && self.forest.dominates(target, b)
        })
    }

    /// Each side of a two-way branch whose condition differs between a warp's threads,
    /// kept where `keep(branch, side)` holds, as the side the branch takes.
    fn varying_sides(&self, keep: impl Fn(Block, Block) -> bool) -> Vec<Deciding> {
        let func = self.func();
        let mut out = Vec::new();
        for g in func.blocks() {
            let Terminator::Branch {
                cond,
                then_block,
                else_block,
            } = func.block(g).terminator
            else {
                continue;
            };
            if then_block == else_block || !self.variance.varies_at(cond, g) {
                continue;
            }
            for (target, taken) in [(then_block, true), (else_block, false)] {
                if keep(g, target) {
                    out.push(Deciding {
                        at: g,
                        cond,
                        sides: [then_block, else_block],
                        taken,
                    });
                }
            }
        }
        out
    }

    /// The branches differing between a warp's threads that decide whether block `b` runs,
    /// by control dependence: `b` post-dominates one side and not the branch. These include
    /// what [`Kernel::deciding`] misses, the else of `if (a && b)`, which each failed test
    /// reaches (no single edge leads there). Enough to tell lanes out of step; not a mask
    /// (the sides join by "or", where guards are a conjunction).
    fn controlling(&self, b: Block) -> Vec<Deciding> {
        self.varying_sides(|g, target| {
            !self.pdom.post_dominates(b, g) && self.pdom.post_dominates(b, target)
        })
    }

    /// The comparisons of the branches guarding block `b` that differ between a warp's
    /// threads ([`Kernel::deciding`]).
    fn guards(&self, b: Block) -> Vec<Guard> {
        let func = self.func();
        let mut guards = Vec::new();
        for Deciding {
            at: g, cond, taken, ..
        } in self.deciding(b)
        {
            let text = self.setting.unit.snippet(func.inst(cond).origin.span);
            let by_data = self.divergence(cond, g).0 == Divergence::DataDependent;
            let compared = match &func.inst(cond).kind {
                // Operands whose reconstruction ignored wrap-around (unsigned
                // `threadIdx.x - 1`) are not decided by their sign.
                InstKind::Binary(op, l, r)
                    if op.is_comparison()
                        && !self.rec.inexact.contains(l)
                        && !self.rec.inexact.contains(r) =>
                {
                    self.rec
                        .single(*l)
                        .zip(self.rec.single(*r))
                        .and_then(|(l, r)| l.checked_sub(r).ok())
                        .map(|d| (*op, d.substitute(&self.known).unwrap_or(d)))
                }
                _ => None,
            };
            guards.push(match compared {
                Some((op, difference)) => Guard {
                    op: Some(op),
                    difference,
                    taken,
                    text,
                    by_data,
                },
                None => Guard {
                    op: None,
                    difference: Expr::constant(0),
                    taken,
                    text,
                    by_data,
                },
            });
        }
        guards
    }

    /// Why lanes' executions of an access in block `b` may not line up by their number:
    /// a branch inside a loop around `b` that decides whether `b` runs, on a condition
    /// that differs between lanes and changes from one iteration to the next (b+tree's
    /// `keys[thid] <= start && keys[thid+1] > start` over the tree's levels). A lane that
    /// skips an iteration makes its n-th execution in a later one than the others.
    fn unpaired(&self, b: Block) -> Option<String> {
        let func = self.func();
        let mut deciding = self.deciding(b);
        for d in self.controlling(b) {
            if !deciding.iter().any(|x| x.at == d.at) {
                deciding.push(d);
            }
        }
        let mut around = self.forest.innermost(b);
        while let Some(id) = around {
            let l = self.forest.loop_(id);
            for d in &deciding {
                let [then_block, else_block] = d.sides;
                if !l.contains(d.at) || !l.contains(then_block) || !l.contains(else_block) {
                    continue;
                }
                // A test that leaves the loop keeps the lanes that stay in step: their
                // n-th executions are still one iteration's. A test that leaves a loop
                // inside it gives each lane its own number of inner iterations, which
                // keeps them in step too while that number is the same in every iteration
                // of the loop (lavaMD's `while (wtx < NUMBER_PAR_PER_BOX)`, `wtx` from
                // `threadIdx.x`).
                let inner = self
                    .forest
                    .innermost(d.at)
                    .map(|i| self.forest.loop_(i))
                    .filter(|i| i.header != l.header)
                    .filter(|i| !i.contains(then_block) || !i.contains(else_block));
                if !self.changes_in(d.cond, l, inner, 32) {
                    continue;
                }
                let unit = self.setting.unit;
                let text = unit.snippet(func.inst(d.cond).origin.span);
                let line = l
                    .source
                    .and_then(|s| unit.resolve(func.source_loop(s).span))
                    .map_or(0, |r| r.line);
                return Some(format!(
                    "it runs under `{text}`, which differs between the lanes and changes \
                     from one iteration to the next of the loop at line {line}: a lane's \
                     n-th execution may be another lane's later iteration"
                ));
            }
            around = l.parent;
        }
        None
    }

    /// Whether `v` may change from one iteration of loop `l` to the next: it is computed
    /// in the loop from a phi, a load or a call made there (`depth` bounds the search; at
    /// 0 it may). For the exit test of a loop `inner` inside `l`, whether it may give a
    /// lane another number of inner iterations: the inner loop's own variables count by
    /// the values they start from.
    fn changes_in(
        &self,
        v: Value,
        l: &frontend::loops::Loop,
        inner: Option<&frontend::loops::Loop>,
        depth: u32,
    ) -> bool {
        let inst = self.func().inst(v);
        if !l.contains(inst.block) {
            return false;
        }
        if depth == 0 {
            return true;
        }
        match &inst.kind {
            InstKind::Phi(args) if inner.is_some_and(|i| inst.block == i.header) => args
                .iter()
                .filter(|(from, _)| inner.is_some_and(|i| !i.contains(*from)))
                .any(|(_, a)| self.changes_in(*a, l, None, depth - 1)),
            InstKind::Phi(_) | InstKind::Load { .. } | InstKind::Call { .. } => true,
            kind => kind
                .operands()
                .into_iter()
                .any(|op| self.changes_in(op, l, inner, depth - 1)),
        }
    }

    /// The block's threads, when every axis is known.
    fn threads(&self) -> Option<u64> {
        match self.setting.block {
            [Some(x), Some(y), Some(z)] => Some(x * y * z),
            _ => None,
        }
    }

    /// The memory a base pointer addresses, and the assumption that says so when it is not
    /// visible (a pointer the kernel loads or computes).
    fn space(&self, base: &Var) -> (Space, Option<String>) {
        let func = self.func();
        let Some(symbol) = self.rec.symbols.info(base) else {
            return (Space::Global, None);
        };
        match symbol.origin {
            SymbolOrigin::Param(_) => (Space::Global, None),
            SymbolOrigin::Object(v) => match &func.inst(v).kind {
                InstKind::SlotAddr(s) if func.slot(*s).shared => (Space::Shared, None),
                InstKind::SlotAddr(_) => (Space::Local, None),
                InstKind::GlobalAddr(g) => match self.program().global(*g).cuda {
                    Some(CudaVariable::Shared) => (Space::Shared, None),
                    Some(CudaVariable::Constant) => (Space::Constant, None),
                    _ => (Space::Global, None),
                },
                _ => (Space::Global, None),
            },
            _ => (
                Space::Global,
                Some(format!(
                    "`{}` (a pointer the kernel loads or computes) points to global memory",
                    base.name()
                )),
            ),
        }
    }

    /// `offset` with each thread-dependent loop variable written through the loop's
    /// iteration (see the module documentation), and a note for each.
    fn unrolled(&self, offset: &Expr, at: Block) -> (Expr, Vec<String>) {
        let mut offset = offset.clone();
        let mut notes = Vec::new();
        for _ in 0..4 {
            let found: Vec<Unrolled> = offset
                .vars()
                .into_iter()
                .filter_map(|var| self.unroll(&var, at))
                .collect();
            if found.is_empty() {
                break;
            }
            let map: HashMap<Var, Expr> = found
                .iter()
                .map(|u| (u.var.clone(), u.by.clone()))
                .collect();
            match offset.substitute(&map) {
                Ok(e) => offset = e,
                Err(_) => break,
            }
            notes.extend(found.into_iter().map(|u| u.note));
        }
        (offset, notes)
    }

    fn unroll(&self, var: &Var, at: Block) -> Option<Unrolled> {
        let value = self.rec.symbols.value_of(var)?;
        if !matches!(self.func().inst(value).kind, InstKind::Phi(_)) {
            return None;
        }
        let header = self.func().inst(value).block;
        let l = self.forest.innermost(header)?;
        if self.forest.loop_(l).header != header || !self.variance.varies_at(value, at) {
            return None;
        }
        let alternatives = self.rec.recurrence(value)?;
        let [a, b] = alternatives else {
            return None;
        };
        let (init, update) = if a.contains_var(var) { (b, a) } else { (a, b) };
        if init.contains_var(var) {
            return None;
        }
        let step = update.checked_sub(&Expr::from(var.clone())).ok()?;
        if step.contains_var(var) || step.vars().iter().any(|s| self.varies_name(s, at)) {
            return None;
        }
        let iteration = Var::new(&format!("iter({})", var.name()));
        let by = init
            .checked_add(&Expr::from(iteration.clone()).checked_mul(&step).ok()?)
            .ok()?;
        Some(Unrolled {
            var: var.clone(),
            by,
            note: format!(
                "`{name}` = {init} + iter({name})*({step}): iter({name}) is the iteration of \
                 its loop, the same for the warp's threads",
                name = var.name()
            ),
        })
    }

    /// The first name in `e` that differs between a warp's threads other than a thread
    /// coordinate.
    fn varying_name(&self, e: &Expr, at: Block) -> Option<Var> {
        e.vars().into_iter().find(|v| self.varies_name(v, at))
    }

    fn varies_name(&self, var: &Var, at: Block) -> bool {
        if self.builtins.contains_key(var) || var.name().starts_with("iter(") {
            return false;
        }
        match self.rec.symbols.value_of(var) {
            Some(value) => self.variance.varies_at(value, at),
            None => true,
        }
    }

    /// Whether the value a symbol stands for comes from memory or a call (data), not from
    /// the thread coordinates alone: a load or call other than a coordinate among the
    /// instructions it is computed from.
    fn reads_data(&self, var: &Var) -> bool {
        let func = self.func();
        let program = self.program();
        let Some(start) = self.rec.symbols.value_of(var) else {
            return true;
        };
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![start];
        while let Some(v) = work.pop() {
            if !seen.insert(v) || seen.len() > 4096 {
                continue;
            }
            if thread_coordinate(program, func, v).is_some() {
                continue;
            }
            match &func.inst(v).kind {
                // A load or call every thread of the warp gets alike (a `__constant__`
                // size, a parameter's field) is no data read per thread.
                InstKind::Load { .. } | InstKind::Call { .. } if !self.variance.varies(v) => {}
                InstKind::Load { .. } | InstKind::Call { .. } => return true,
                kind => work.extend(kind.operands()),
            }
        }
        false
    }

    /// The counts' assumptions as the report lists them. The engine words the aligned-rows
    /// assumption alike for every access; here the offset says which of its terms it takes
    /// to be whole segments for the requests and whole sectors for the sectors (once, where
    /// both name the same terms).
    fn assumptions_of(&self, counted: &WarpCount, offset: &Expr) -> Vec<String> {
        let rows = |line| super::warp::unaligned_rows(offset, line, &self.coordinates);
        let in_segments = rows(LINE);
        let in_sectors = rows(SECTOR);
        let both = counted.requests.assumes_aligned_rows()
            && counted.sectors.assumes_aligned_rows()
            && in_segments.is_some()
            && in_segments == in_sectors;
        let mut out = Vec::new();
        for a in counted
            .requests
            .assumptions
            .iter()
            .chain(&counted.sectors.assumptions)
        {
            let named = match a.as_str() {
                ALIGNED_ROWS => in_segments.as_ref().map(|r| {
                    let sectors = if both {
                        ", and of 32 for the sectors"
                    } else {
                        ""
                    };
                    format!("`{r}` is a multiple of 128 bytes{sectors} (aligned rows)")
                }),
                ALIGNED_SECTOR_ROWS if both => continue,
                ALIGNED_SECTOR_ROWS => in_sectors
                    .as_ref()
                    .map(|r| format!("`{r}` is a multiple of 32 bytes (aligned rows)")),
                _ => None,
            };
            // The engine words some as "assuming ...": the report lists assumptions as such.
            out.push(named.unwrap_or_else(|| a.strip_prefix("assuming ").unwrap_or(a).to_string()));
        }
        out
    }

    /// The verdict of a counted access.
    fn judge(&self, report: &mut AccessReport, offset: &Expr, counted: &WarpCount, elem: u64) {
        report.requests = count_of(&counted.requests);
        report.sectors = count_of(&counted.sectors);
        report.stride = counted.stride.as_ref().map(|s| s.to_string());
        for a in self.assumptions_of(counted, offset) {
            if !report.assumptions.contains(&a) {
                report.assumptions.push(a);
            }
        }
        report.aligned_rows =
            counted.requests.assumes_aligned_rows() || counted.sectors.assumes_aligned_rows();
        let threads_vary = self
            .coordinates
            .thread
            .iter()
            .zip(self.varying_axes)
            .any(|(v, varying)| varying && v.as_ref().is_some_and(|v| offset.contains_var(v)));
        let ideal = report.ideal_sectors;
        let most = report.sectors.value;
        let fewest = report
            .sectors
            .min_number()
            .or(if report.sectors.exact { most } else { None });
        let stride = counted.stride.as_ref();
        let stride_value = stride
            .and_then(|s| s.as_integer())
            .and_then(|i| i64::try_from(i).ok());
        report.coalescing = if !threads_vary {
            Coalescing::Broadcast
        } else if stride_value == Some(0) && most.is_some_and(|m| m > ideal) {
            // Neighbouring lanes read one address: each row of threads a warp spans (a
            // 16-wide block's two) broadcasts its own, a sector per row, nothing to fix
            // by reordering the threads.
            report.reason = Some(
                "each row of threads the warp spans reads one address: a sector per row".into(),
            );
            Coalescing::Broadcast
        } else if most.is_some_and(|m| m <= ideal) {
            Coalescing::Coalesced
        } else if stride_value.is_some_and(|s| s.unsigned_abs() == elem) {
            Coalescing::Misaligned
        } else if fewest.is_some_and(|f| f > ideal) {
            Coalescing::Uncoalesced
        } else if let Some(s) = stride.filter(|s| s.as_integer().is_none()) {
            report.when = Some(stride_condition(s, elem));
            Coalescing::Uncoalesced
        } else {
            report.reason = Some("the count depends on values the analysis does not know".into());
            Coalescing::Unknown
        };
    }

    /// The report of block `b`'s branch, if it ends in one.
    fn branch(&self, b: Block) -> Option<BranchReport> {
        let func = self.func();
        let Terminator::Branch {
            cond,
            then_block,
            else_block,
        } = func.block(b).terminator
        else {
            return None;
        };
        let unit = self.setting.unit;
        let span = func.inst(cond).origin.span;
        let at = unit
            .resolve(span)
            .or_else(|| unit.resolve(func.block(b).terminator_span))
            .map(|r| r.to_string())
            .unwrap_or_default();
        let loop_exit = self.forest.innermost(b).is_some_and(|l| {
            let l = self.forest.loop_(l);
            !l.contains(then_block) || !l.contains(else_block)
        });
        let (divergence, why) = self.divergence(cond, b);
        let condition = unit.snippet(span);
        use crate::rules::ww203_divergent_branch::{self as ww203, Split};
        let split = match divergence {
            Divergence::SomeWarps => Some(Split::SomeWarps),
            Divergence::EveryWarp => Some(Split::EveryWarp),
            Divergence::Periodic => Some(Split::Periodic),
            Divergence::DataDependent => Some(Split::ByData),
            Divergence::Never | Divergence::Unknown => None,
        };
        let finding = split.map(|split| {
            ww203::finding(
                &ww203::Divergent {
                    condition: &condition,
                    loop_exit,
                    split,
                    why: &why,
                    choice: super::choice::of(func, &self.preds, cond, [then_block, else_block]),
                },
                line_of(&at),
            )
        });
        Some(BranchReport {
            at,
            via: self.via(self.setting.calls.blocks.get(&b)),
            condition,
            loop_exit,
            divergence,
            why,
            finding,
        })
    }

    /// The class of the branch on `cond` at the end of `b`, and why.
    fn divergence(&self, cond: Value, b: Block) -> (Divergence, String) {
        match self.difference_class(cond, b) {
            // A remainder by a size the reconstruction keeps opaque (`% rows`), or by a
            // constant above the warp, is classified by its period along the threads.
            (Divergence::Unknown, why) => {
                self.periodic(cond, b).unwrap_or((Divergence::Unknown, why))
            }
            classified => classified,
        }
    }

    /// The class from the comparison's difference along the threads: affine, a short
    /// remainder of the thread index, or data.
    fn difference_class(&self, cond: Value, b: Block) -> (Divergence, String) {
        if !self.variance.varies_at(cond, b) {
            return (
                Divergence::Never,
                "the condition is the same for every thread of a warp".into(),
            );
        }
        let func = self.func();
        let difference = match &func.inst(cond).kind {
            InstKind::Binary(op, l, r) if op.is_comparison() => self
                .rec
                .single(*l)
                .zip(self.rec.single(*r))
                .and_then(|(l, r)| l.checked_sub(r).ok()),
            _ => self.rec.single(cond).cloned(),
        };
        let Some(difference) = difference else {
            return (
                Divergence::Unknown,
                "the condition differs between threads in a way not expressed".into(),
            );
        };
        let (difference, _) = self.unrolled(&difference, b);
        if let Some(var) = self.varying_name(&difference, b) {
            if !self.reads_data(&var) {
                return (
                    Divergence::Unknown,
                    format!(
                        "it depends on the thread index through `{var}`, which the analysis \
                         does not model"
                    ),
                );
            }
            return (
                Divergence::DataDependent,
                format!("it depends on `{var}`, read per thread: any warp may split"),
            );
        }
        let difference = difference.substitute(&self.known).unwrap_or(difference);
        let varying: Vec<&Var> = self
            .coordinates
            .thread
            .iter()
            .zip(self.varying_axes)
            .filter_map(|(v, on)| v.as_ref().filter(|_| on))
            .filter(|v| difference.contains_var(v))
            .collect();
        if varying.is_empty() {
            return (
                Divergence::Never,
                "with the known sizes the condition is the same for every thread of a warp".into(),
            );
        }
        let affine = difference
            .as_poly()
            .is_some_and(|p| varying.iter().all(|v| p.is_linear_in(v)));
        if affine {
            return (
                Divergence::SomeWarps,
                format!(
                    "`{difference}` is affine in the thread index, so the condition changes at most \
                     once along the threads: only the warp where it changes diverges"
                ),
            );
        }
        if let Some(period) = short_period(&difference, &varying) {
            return (
                Divergence::EveryWarp,
                format!(
                    "the condition repeats every {period} threads, so it changes inside every warp"
                ),
            );
        }
        (
            Divergence::Unknown,
            format!("the condition depends on the thread index through `{difference}`"),
        )
    }
}

/// The period below 32 of a remainder of the thread index in `e`, if there is one.
fn short_period(e: &Expr, varying: &[&Var]) -> Option<i64> {
    let p = e.as_poly()?;
    p.terms().iter().find_map(|(m, _)| {
        m.factors().iter().find_map(|(a, _)| match a {
            Atom::TruncRem(n, d) | Atom::FloorMod(n, d)
                if varying.iter().any(|v| n.contains_var(v)) =>
            {
                i64::try_from(d.clone())
                    .ok()
                    .filter(|d| *d > 1 && *d < WARP)
            }
            _ => None,
        })
    })
}

/// The condition on a symbolic stride for the access to be uncoalesced: the threads are
/// further apart than one element.
fn stride_condition(stride: &Expr, elem: u64) -> String {
    let per_element = stride
        .div_const(&num_rational::BigRational::from_integer(
            (elem as i64).into(),
        ))
        .ok()
        .filter(|e| e.is_exact_integer());
    match per_element {
        Some(e) => format!("{e} > 1"),
        None => format!("{stride} > {elem}"),
    }
}

/// The sectors `distinct` addresses of `elem` bytes each, side by side and aligned, need:
/// what a warp's bytes need at best.
pub fn ideal_sectors(elem: u64, distinct: u64) -> u64 {
    (distinct.max(1) * elem).div_ceil(SECTOR as u64)
}

/// The bounds of an access the analysis cannot count: one granule to every thread its own.
fn bounded(elem: u64, line: i64) -> Count {
    let per_element = if (line as u64).is_multiple_of(elem) {
        1
    } else {
        (elem - 1) / line as u64 + 2
    };
    let most = WARP as u64 * per_element;
    Count {
        max: most.to_string(),
        value: Some(most),
        min: Some("1".into()),
        unaligned: None,
        exact: false,
        exprs: Box::new(CountExprs {
            max: Some(Expr::integer(most.into())),
            min: Some(Expr::constant(1)),
            unaligned: None,
        }),
    }
}

fn count_of(f: &Factor) -> Count {
    let number = |e: &Expr| e.as_integer().and_then(|i| u64::try_from(i).ok());
    Count {
        max: f.requests.to_string(),
        value: number(&f.requests),
        min: f.min_requests.as_ref().map(|e| e.to_string()),
        unaligned: f.unaligned.as_ref().map(|e| e.to_string()),
        exact: f.exact,
        exprs: Box::new(CountExprs {
            max: Some(f.requests.clone()),
            min: f.min_requests.clone(),
            unaligned: f.unaligned.clone(),
        }),
    }
}

/// The WW201 finding of an uncoalesced access, with the fix its layout calls for.
/// `column`: the stride, as written, is symbolic (a row length).
fn finding(
    report: &AccessReport,
    layout: Layout,
    stride_bytes: Option<u64>,
    column: bool,
) -> crate::model::Reason {
    use crate::rules::ww201_uncoalesced::Cause;
    let cause = match (&layout, stride_bytes) {
        (Layout::StructField(field, bytes), Some(s)) if s == *bytes => Cause::StructField {
            field: field.clone(),
            bytes: *bytes,
        },
        (Layout::StructCopy(fields, bytes), _) => Cause::StructCopy {
            fields: *fields,
            bytes: *bytes,
        },
        _ if column => Cause::ColumnWalk,
        _ => Cause::Strided,
    };
    finding_for(report, cause)
}

/// The WW201 finding of `report` for `cause`.
fn finding_for(
    report: &AccessReport,
    cause: crate::rules::ww201_uncoalesced::Cause,
) -> crate::model::Reason {
    use crate::rules::ww201_uncoalesced::{finding, Cause, Uncoalesced};
    let stride = report.stride.as_deref();
    let sectors = match (&cause, &report.sectors.min) {
        (Cause::DataDependent { .. }, Some(fewest)) => {
            format!("{fewest} to {}", report.sectors.max)
        }
        _ => report.sectors.max.clone(),
    };
    finding(
        &Uncoalesced {
            access: &report.access,
            sectors: &sectors,
            ideal: report.ideal_sectors,
            warp_bytes: report.warp_bytes,
            stride,
            when: report.when.as_deref(),
            cause,
        },
        line_of(&report.at),
    )
}

/// The line of `file:line:col`.
fn line_of(at: &str) -> u32 {
    at.rsplit(':')
        .nth(1)
        .and_then(|l| l.parse().ok())
        .unwrap_or(0)
}

/// How the accessed element sits in memory, for the fix a finding suggests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A field of an element of an array of structures: (field, the structure's bytes).
    StructField(String, u64),
    /// A whole structure copied per lane: (its fields, its bytes).
    StructCopy(usize, u64),
    Plain,
}

fn layout(func: &Function, addr: Value, elem: u64) -> Layout {
    let strip = |mut v: Value| {
        while let InstKind::Cast(inner) = func.inst(v).kind {
            v = inner;
        }
        v
    };
    let InstKind::FieldAddr { base, field, .. } = &func.inst(strip(addr)).kind else {
        return Layout::Plain;
    };
    let base = strip(*base);
    match func.inst(base).kind {
        InstKind::PtrAdd { scale, .. } if scale > elem => Layout::StructField(field.clone(), scale),
        _ => Layout::Plain,
    }
}
