//! The memory accesses of a loop nest, their base pointers and byte offsets, and the byte
//! section each base pointer needs (thesis §4.2).

use crate::assumption::Assumption;
use crate::space::{extreme, Space};
use analyses::reconstruct::Reconstruction;
use analyses::symbols::Symbols;
use frontend::ir::{Function, InstKind, Span, Value};
use frontend::loops::{LoopForest, LoopId};
use frontend::types::TypeTable;
use num_bigint::BigInt;
use symbolic::{get_max, get_min, Expr, SignEnv, Var};

/// One load or store inside the nest.
#[derive(Clone, Debug)]
pub struct MemAccess {
    pub inst: Value,
    /// The address operand.
    pub addr: Value,
    pub is_store: bool,
    pub elem_bytes: u64,
    /// The C type read or written.
    pub ty: frontend::types::TypeId,
    /// Whether some iterations of the loop may skip it (it is under a condition or in an
    /// inner loop): a dependence through it is then not certain.
    pub conditional: bool,
    pub span: Span,
    /// Possible `(base, offset in bytes)` pairs; `base` is `None` when no single base
    /// pointer could be identified.
    pub alternatives: Vec<(Option<Var>, Expr)>,
    /// For an access made inside a called function (see `callsites`): that
    /// function's name; `inst`, `addr` and `span` are then the call's.
    pub callee: Option<String>,
    /// The `restrict`-qualified local pointer the address is based on (`p[i]`, `p[i][j]`,
    /// `p->x`), as an index into the function's `restrict_pointers`.
    pub restrict: Option<u32>,
    /// C's in-bounds rule (C99 6.5.6p8, J.2): each subscript into a fixed-size row and the
    /// row's extent, `0 <= index < extent` whenever the access runs (see
    /// [`subscript_extents`]). Empty for an access made inside a called function.
    pub extents: Vec<(Expr, u64)>,
}

/// Subscripts into fixed-size rows with the rows' extents (see [`MemAccess::extents`]).
pub type Extents = [(Expr, u64)];

impl MemAccess {
    /// The base pointer when every alternative agrees on it.
    pub fn base(&self) -> Option<&Var> {
        let first = self.alternatives.first()?.0.as_ref()?;
        self.alternatives
            .iter()
            .all(|(b, _)| b.as_ref() == Some(first))
            .then_some(first)
    }
}

/// Loads and stores in the blocks of `loop_id` (inner loops included), in block order.
pub fn collect_accesses(
    func: &Function,
    forest: &LoopForest,
    loop_id: LoopId,
    rec: &Reconstruction,
    types: &TypeTable,
) -> Vec<MemAccess> {
    let mut out = Vec::new();
    for &block in &forest.loop_(loop_id).blocks {
        for &v in &func.block(block).insts {
            let inst = func.inst(v);
            let (addr, is_store) = match inst.kind {
                InstKind::Load { addr } => (addr, false),
                InstKind::Store { addr, .. } => (addr, true),
                _ => continue,
            };
            let elem_bytes = types.size_of(inst.ty).unwrap_or(1);
            let mut alternatives: Vec<(Option<Var>, Expr)> = rec
                .of(addr)
                .iter()
                .map(|e| split_base(e, &rec.symbols))
                .collect();
            // A pointer that is NULL on some path (`indexes = NULL; if (pseudo) indexes =
            // get();`) is not dereferenced there: that would be undefined. Its null path's
            // forms (an address with no base pointer) are no access.
            if may_be_null(func, addr) && alternatives.iter().any(|(b, _)| b.is_some()) {
                alternatives.retain(|(b, _)| b.is_some());
            }
            let conditional = is_conditional(forest, loop_id, block);
            out.push(MemAccess {
                inst: v,
                addr,
                is_store,
                elem_bytes,
                ty: inst.ty,
                conditional,
                span: inst.origin.span,
                alternatives,
                callee: None,
                restrict: restrict_root(func, addr),
                extents: subscript_extents(func, rec, types, addr),
            });
        }
    }
    out
}

/// The subscripts of `addr` into fixed-size rows, with each row's extent: `j` of `A[i][j]`
/// with `double A[N][64]` (`0 <= j < 64`), and the subscripts into arrays that are struct
/// members (`dmat->distances[i][j]` with `float distances[20][20]`: `0 <= i < 20` too; an
/// index past the member would land in the next member, which C does not allow). The
/// outermost subscript of a pointer (`p[i]` with `double (*p)[64]`) steps over whole rows
/// and has no extent. A subscript whose value the reconstruction does not know as one
/// expression is left out, which only weakens what the rule says.
pub fn subscript_extents(
    func: &Function,
    rec: &Reconstruction,
    types: &TypeTable,
    addr: Value,
) -> Vec<(Expr, u64)> {
    let mut out = Vec::new();
    let mut addr = addr;
    for _ in 0..32 {
        let InstKind::PtrAdd { base, index, scale } = func.inst(addr).kind else {
            break;
        };
        let array = types
            .pointee(func.inst(base).ty)
            .and_then(|p| match types.get(p) {
                frontend::types::Type::Array {
                    elem,
                    len: frontend::types::ArrayLen::Fixed(n),
                } => Some((*n, types.size_of(*elem))),
                _ => None,
            });
        // The index steps through the array's own elements (a member's rows), not over
        // whole arrays (`double (*p)[64]`, whose `p[i]` may go past the first).
        let into_array = |element: Option<u64>| {
            matches!(func.inst(base).kind, InstKind::PtrAdd { .. })
                || (element == Some(scale)
                    && matches!(func.inst(base).kind, InstKind::FieldAddr { .. }))
        };
        if let (Some((n, element)), [e]) = (array, rec.of(index)) {
            if into_array(element) {
                out.push((e.clone(), n));
            }
        }
        addr = base;
    }
    out
}

/// The `restrict` pointer an address is based on: the one the lowering noted on the
/// address, or on the address it offsets (`p[i][j]` offsets `p[i]`).
pub fn restrict_root(func: &Function, addr: frontend::ir::Value) -> Option<u32> {
    address_chain(func, addr).find_map(|v| func.inst(v).origin.restrict)
}

/// Whether the pointer `addr` offsets is, on some path, the null pointer constant: the
/// root of its address chain is a phi (through phis and casts) with a `0` among its inputs.
pub fn may_be_null(func: &Function, addr: frontend::ir::Value) -> bool {
    let Some(root) = address_chain(func, addr).last() else {
        return false;
    };
    let mut work = vec![root];
    let mut seen = std::collections::HashSet::new();
    let mut through_phi = false;
    while let Some(v) = work.pop() {
        if !seen.insert(v) || seen.len() > 64 {
            continue;
        }
        match &func.inst(v).kind {
            InstKind::Phi(args) => {
                through_phi = true;
                work.extend(args.iter().map(|(_, a)| *a));
            }
            InstKind::Cast(inner) => work.push(*inner),
            _ if through_phi && func.const_int(v) == Some(0) => return true,
            _ => {}
        }
    }
    false
}

/// `addr` and the addresses it offsets, innermost first (`p[i][j]`, `p[i]`, `p`): the
/// `PtrAdd`/`FieldAddr` chain down to the first value that is neither. Bounded: the chain
/// is as deep as the subscripts of one expression.
pub fn address_chain(
    func: &Function,
    addr: frontend::ir::Value,
) -> impl Iterator<Item = frontend::ir::Value> + '_ {
    std::iter::successors(Some(addr), move |&v| match func.inst(v).kind {
        InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => Some(base),
        _ => None,
    })
    .take(32)
}

/// Splits an address into its base pointer symbol and the byte offset from it. A min or
/// max of addresses that all have the same base (`_aux + 8*max(k, n)`, distributed as
/// `max(_aux + 8*k, _aux + 8*n)`) has that base and the min or max of the offsets.
pub fn split_base(address: &Expr, symbols: &Symbols) -> (Option<Var>, Expr) {
    let polys: Vec<&symbolic::Poly> = match address {
        Expr::Poly(p) => vec![p],
        Expr::Min(ps) | Expr::Max(ps) => ps.iter().collect(),
    };
    let bases_of = |poly: &symbolic::Poly| {
        let mut bases = Vec::new();
        for (monomial, coefficient) in poly.terms() {
            if let [(symbolic::Atom::Var(var), 1)] = monomial.factors() {
                if symbols.is_pointer(var)
                    && coefficient == &num_rational::BigRational::from_integer(BigInt::from(1))
                {
                    bases.push(var.clone());
                }
            }
        }
        bases
    };
    let Some((first, rest)) = polys.split_first() else {
        return (None, address.clone());
    };
    let bases = bases_of(first);
    if rest.iter().any(|p| bases_of(p) != bases) {
        return (None, address.clone());
    }
    match bases.as_slice() {
        [base] => {
            let base_expr = Expr::var(base.name());
            match address.checked_sub(&base_expr) {
                Ok(offset) => (Some(base.clone()), offset),
                Err(_) => (None, address.clone()),
            }
        }
        _ => (None, address.clone()),
    }
}

/// The half-open byte section `[lo, hi)` the accesses through `base` touch over the
/// iteration space; `Err` says why it cannot be computed statically.
pub fn section(
    base: &Var,
    accesses: &[MemAccess],
    space: &Space,
    variant: &std::collections::HashSet<Var>,
    assumptions: &mut Vec<Assumption>,
) -> Result<(Expr, Expr), String> {
    let mut lo: Option<Expr> = None;
    let mut hi: Option<Expr> = None;
    let env: &SignEnv = &space.env;
    for access in accesses {
        for (b, offset) in &access.alternatives {
            if b.as_ref() != Some(base) {
                continue;
            }
            if let Some(v) = offset.vars().into_iter().find(|v| variant.contains(v)) {
                return Err(format!(
                    "the offset depends on `{v}`, a value read inside the loop"
                ));
            }
            let min = extreme(offset, space, false, assumptions).ok_or_else(|| {
                format!(
                    "the offset {} is not monotonic in the loop variables",
                    offset.to_c()
                )
            })?;
            let max = extreme(offset, space, true, assumptions).ok_or_else(|| {
                format!(
                    "the offset {} is not monotonic in the loop variables",
                    offset.to_c()
                )
            })?;
            // A bound read from memory at an inner loop's subscript (`gi[(t*ng + g)*2]`
            // bounds the `k` loop inside `t`): its value changes inside the loop too, and
            // no extreme over the space removes it.
            for bound in [&min, &max] {
                if let Some(v) = reads_with_loop_variable(bound, space, base) {
                    return Err(format!(
                        "the offset depends on `{v}`, a value read inside the loop"
                    ));
                }
            }
            let end = max
                .checked_add(&Expr::integer(BigInt::from(access.elem_bytes)))
                .map_err(|e| e.to_string())?;
            lo = Some(match lo {
                None => min,
                Some(current) => get_min(&current, &min, env).map_err(|e| e.to_string())?,
            });
            hi = Some(match hi {
                None => end,
                Some(current) => get_max(&current, &end, env).map_err(|e| e.to_string())?,
            });
        }
    }
    match (lo, hi) {
        (Some(lo), Some(hi)) => Ok((lo, hi)),
        _ => Err("no access through this pointer".into()),
    }
}

/// A memory read in `e` whose subscript or member path names one of the space's loop
/// variables (`gi[(t * ng + g) * 2]`): its name. Variables the array's own name indexes
/// by (`trans[i]->vec`, whose section is a row's, for each `i`) are not counted.
fn reads_with_loop_variable(e: &Expr, space: &Space, base: &Var) -> Option<String> {
    // A plain variable is a value at the loop's entry, never a read inside it; most
    // bounds have no read at all, and then nothing below is spelled out.
    let is_read = |name: &str| name.contains(['[', '.', '(']) || name.contains("->");
    let vars = e.vars();
    let mut reads = vars
        .iter()
        .map(|v| v.name())
        .filter(|n| is_read(n))
        .peekable();
    reads.peek()?;
    // A read's name spells its subscripts with display names (`t_id`) while the loop
    // variable may be numbered (`t_id#2`): compared by stem, erring toward "variant".
    let stem = |n: &str| n.split('#').next().unwrap_or(n).to_string();
    let tokens = |n: &str| -> Vec<String> {
        n.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '#'))
            .filter(|t| !t.is_empty())
            .map(stem)
            .collect()
    };
    let per_row = tokens(base.name());
    let stems: Vec<String> = space
        .ivs
        .iter()
        .map(|r| stem(r.var.name()))
        .filter(|s| !per_row.contains(s))
        .collect();
    reads
        .find(|name| tokens(name).iter().any(|t| stems.contains(t)))
        .map(str::to_string)
}

/// C99 6.5p7 (strict aliasing): an object is only accessed through its own type (ignoring
/// signedness) or a character type, so accesses of incompatible types never overlap. Not
/// for a unit built with `-fno-strict-aliasing` (`Unit::strict_aliasing`): any two may.
pub fn types_may_alias(
    unit: &frontend::unit::Unit,
    a: frontend::types::TypeId,
    b: frontend::types::TypeId,
) -> bool {
    !unit.strict_aliasing || unit.lowered.program.types.may_alias(a, b)
}

/// The section of `base` from the symbolic range analysis (thesis §8.3): the union of the
/// ranges of the accesses' addresses minus the base. Ranges use the branch conditions the
/// reconstruction ignores (`if (k >= 0 && k < size)`), so this can be tighter; `None` when
/// some address range is not of the form `[base + lo, base + hi]`.
pub fn range_section(
    base: &Var,
    accesses: &[MemAccess],
    ranges: &analyses::range::RangeFacts,
    env: &SignEnv,
) -> Option<(Expr, Expr)> {
    use analyses::range::Bound;
    let base_expr = Expr::var(base.name());
    let mut lo: Option<Expr> = None;
    let mut hi: Option<Expr> = None;
    for access in accesses.iter().filter(|a| a.base() == Some(base)) {
        // The range analysis knows nothing of the addresses a callee computes.
        if access.callee.is_some() {
            return None;
        }
        let range = ranges.of(access.addr);
        let (Bound::Finite(a), Bound::Finite(b)) = (&range.lo, &range.hi) else {
            return None;
        };
        let a = a.checked_sub(&base_expr).ok()?;
        let b = b
            .checked_sub(&base_expr)
            .ok()?
            .checked_add(&Expr::integer(BigInt::from(access.elem_bytes)))
            .ok()?;
        if a.contains_var(base) || b.contains_var(base) {
            return None;
        }
        lo = Some(match lo {
            None => a,
            Some(current) => get_min(&current, &a, env).ok()?,
        });
        hi = Some(match hi {
            None => b,
            Some(current) => get_max(&current, &b, env).ok()?,
        });
    }
    Some((lo?, hi?))
}

/// The tighter of two sound bounds when the engine can order them, else the first. For
/// an upper bound (`upper`) the smaller, for a lower bound the larger.
pub fn tighter(first: Expr, second: Option<Expr>, upper: bool, env: &SignEnv) -> Expr {
    let Some(second) = second else { return first };
    // Reports are C expressions: floor forms (`floor_div`) have no C spelling.
    let c_text = second.to_c();
    if c_text.contains("floor_div") || c_text.contains("floor_mod") {
        return first;
    }
    // Strictly tighter only: between equal bounds the first (from the reconstruction) reads
    // better.
    let second_is_tighter = if upper {
        le(&second, &first, env) && !le(&first, &second, env)
    } else {
        le(&first, &second, env) && !le(&second, &first, env)
    };
    if second_is_tighter {
        second
    } else {
        first
    }
}

/// `a <= b`, also through top-level `min`/`max` operands (`min(0, x) <= min(4*s, x)` when
/// `s >= 0`), which the engine's comparison of whole expressions does not decompose.
fn le(a: &Expr, b: &Expr, env: &SignEnv) -> bool {
    if symbolic::compare(a, b, env).is_le() {
        return true;
    }
    let parts = |e: &Expr| -> Vec<Expr> { e.parts().iter().cloned().map(Expr::Poly).collect() };
    match (a, b) {
        (_, Expr::Min(_)) => parts(b).iter().all(|p| le(a, p, env)),
        (Expr::Max(_), _) => parts(a).iter().all(|q| le(q, b, env)),
        (Expr::Min(_), _) => parts(a).iter().any(|q| le(q, b, env)),
        (_, Expr::Max(_)) => parts(b).iter().any(|p| le(a, p, env)),
        _ => false,
    }
}

/// Whether an access in `block` may be skipped by some iteration of `outer`: it is under a
/// condition in its own loop body, or in a loop that is itself under a condition. Inner
/// loops are assumed to run at least once, as everywhere in the reports.
pub(crate) fn is_conditional(
    forest: &LoopForest,
    outer: LoopId,
    block: frontend::ir::Block,
) -> bool {
    let mut current = block;
    let mut level = forest.innermost(block);
    while let Some(id) = level {
        let l = forest.loop_(id);
        if !l
            .latches
            .iter()
            .all(|latch| forest.dominates(current, *latch))
        {
            return true;
        }
        if id == outer {
            return false;
        }
        current = l.header;
        level = l.parent;
    }
    false
}
