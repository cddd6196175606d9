//! Reductions in generated kernels: which of a loop's reductions can be
//! generated, the body rewrites they need (an element's accumulator, a histogram's atomic
//! updates) and the device code that combines the threads' values: a private accumulator
//! per thread, warp shuffles within each warp, the warps' values through shared memory,
//! one atomic per block.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use super::ctext::{
    code_tokens, name_tokens, replace_sequences, skip_selectors, tok_text, Tok, TokKind,
};
use super::plan::{cxx_name, cxx_type, EmitError};
use advisor::model::{LoopReport, RedOp as ReportOp, Reduction, ReductionKind};
use std::fmt::Write;

/// A reduction operator that a kernel combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    Add,
    Mul,
    And,
    Or,
    Xor,
    LogAnd,
    LogOr,
    Min,
    Max,
    /// `=`: a flag every assigning iteration sets to the same constant; nothing combines.
    Assign,
}

/// The report's operator as the kernel combines it.
impl From<ReportOp> for RedOp {
    fn from(op: ReportOp) -> RedOp {
        match op {
            ReportOp::Sum => RedOp::Add,
            ReportOp::Product => RedOp::Mul,
            ReportOp::BitAnd => RedOp::And,
            ReportOp::BitOr => RedOp::Or,
            ReportOp::BitXor => RedOp::Xor,
            ReportOp::And => RedOp::LogAnd,
            ReportOp::Or => RedOp::LogOr,
            ReportOp::Min => RedOp::Min,
            ReportOp::Max => RedOp::Max,
            ReportOp::Assign => RedOp::Assign,
        }
    }
}

impl RedOp {
    /// The suffix of the device helper that combines with it: `ww_atomic_add`.
    pub fn helper(self) -> &'static str {
        match self {
            RedOp::Add => "add",
            RedOp::Mul => "mul",
            RedOp::And => "and",
            RedOp::Or => "or",
            RedOp::Xor => "xor",
            RedOp::LogAnd => "land",
            RedOp::LogOr => "lor",
            RedOp::Min => "min",
            RedOp::Max => "max",
            RedOp::Assign => "assign",
        }
    }

    /// `a OP b` as C: the tree's step.
    fn combine(self, a: &str, b: &str) -> String {
        match self {
            RedOp::Add => format!("{a} + {b}"),
            RedOp::Mul => format!("{a} * {b}"),
            RedOp::And => format!("{a} & {b}"),
            RedOp::Or => format!("{a} | {b}"),
            RedOp::Xor => format!("{a} ^ {b}"),
            RedOp::LogAnd => format!("{a} && {b}"),
            RedOp::LogOr => format!("{a} || {b}"),
            RedOp::Min => format!("{b} < {a} ? {b} : {a}"),
            RedOp::Max => format!("{b} > {a} ? {b} : {a}"),
            RedOp::Assign => b.to_string(),
        }
    }

    fn bitwise(self) -> bool {
        matches!(self, RedOp::And | RedOp::Or | RedOp::Xor)
    }
}

/// The accumulator types a kernel combines with atomics (LP64: `long` is 64 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumClass {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl NumClass {
    /// From a C type's spelling; `None` for what no atomic covers (`char`, `short`,
    /// `_Bool`, `long double`, structs, pointers).
    pub fn of(c_type: &str) -> Option<NumClass> {
        let words: Vec<&str> = c_type
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "signed"))
            .collect();
        Some(match words.as_slice() {
            [] | ["int"] | ["int32_t"] => NumClass::I32,
            ["unsigned"] | ["unsigned", "int"] | ["uint32_t"] => NumClass::U32,
            ["long"] | ["long", "int"] | ["long", "long"] | ["long", "long", "int"] => {
                NumClass::I64
            }
            ["int64_t"] | ["ssize_t"] | ["ptrdiff_t"] | ["intptr_t"] => NumClass::I64,
            ["unsigned", "long"]
            | ["unsigned", "long", "int"]
            | ["unsigned", "long", "long"]
            | ["unsigned", "long", "long", "int"] => NumClass::U64,
            ["uint64_t"] | ["size_t"] | ["uintptr_t"] => NumClass::U64,
            ["float"] => NumClass::F32,
            ["double"] => NumClass::F64,
            _ => return None,
        })
    }

    fn is_float(self) -> bool {
        matches!(self, NumClass::F32 | NumClass::F64)
    }

    fn largest(self) -> &'static str {
        match self {
            NumClass::I32 => "2147483647",
            NumClass::U32 => "4294967295u",
            NumClass::I64 => "9223372036854775807LL",
            NumClass::U64 => "18446744073709551615ULL",
            // +infinity: NVRTC has no <float.h>, and infinity is min's true identity.
            NumClass::F32 => "__int_as_float(0x7f800000)",
            NumClass::F64 => "__longlong_as_double(0x7ff0000000000000LL)",
        }
    }

    fn smallest(self) -> &'static str {
        match self {
            NumClass::I32 => "(-2147483647 - 1)",
            NumClass::U32 => "0u",
            NumClass::I64 => "(-9223372036854775807LL - 1)",
            NumClass::U64 => "0ULL",
            NumClass::F32 => "__int_as_float((int)0xff800000u)",
            NumClass::F64 => "__longlong_as_double((long long)0xfff0000000000000ULL)",
        }
    }
}

/// How a reduction is generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A variable of the function: the host function takes its address; the kernel gets a
    /// one-element device copy (`ident`) holding its value at the loop's entry.
    Scalar { ident: String },
    /// One element at an address the loop does not change (`C[i][j]` over `k`): `address`
    /// is the element in the kernel's names; the array is an inout parameter already.
    Element { address: String },
    /// Elements chosen per iteration: each update in the body became an atomic.
    Histogram,
    /// An arg-min/arg-max's extremum (`crate::argext`): a device copy like a scalar's, which
    /// the combine writes, with `state` (`long long` words: the combine's lock, 0 at the
    /// launch; the winning iteration, -1; then the entry values of the extremum and of each
    /// partner, a word each, which the threads start from and nothing writes) and its
    /// partners' entries (their targets).
    Arg {
        ident: String,
        state: String,
        max: bool,
        partners: Vec<String>,
    },
    /// A variable taken with the arg-min/arg-max of `of`: a device copy like a scalar's.
    Partner { ident: String, of: String },
    /// A `=` flag (`if (v[i] == 7) found = 1;`): the body stores into the device copy,
    /// which starts at the entry value; every storing thread stores the same value.
    Flag { ident: String },
}

/// One reduction the kernel generates.
#[derive(Clone, Debug)]
pub struct Planned {
    /// As in the report: `sum`, `C[i][j]`, `hist`.
    pub target: String,
    /// As in the report.
    pub operator: ReportOp,
    pub op: RedOp,
    /// The accumulator's C++ type.
    pub c_type: String,
    pub class: NumClass,
    pub shape: Shape,
    /// The thread's private accumulator (not for a histogram): the variable's own name for a
    /// scalar, so the body runs unchanged on it.
    pub private: String,
}

impl Planned {
    /// The accumulator's starting value: the operator's identity.
    pub fn identity(&self) -> String {
        let t = &self.c_type;
        match self.op {
            RedOp::Add | RedOp::Or | RedOp::Xor | RedOp::LogOr | RedOp::Assign => {
                format!("({t})0")
            }
            RedOp::Mul | RedOp::LogAnd => format!("({t})1"),
            RedOp::And => format!("({t})~0ULL"),
            RedOp::Min => format!("({t}){}", self.class.largest()),
            RedOp::Max => format!("({t}){}", self.class.smallest()),
        }
    }

    /// Float `+` and `*` come out in another order than the loop's.
    pub fn reassociated(&self) -> bool {
        self.class.is_float() && matches!(self.op, RedOp::Add | RedOp::Mul)
    }

    /// The scalar variable's device copy, if this is a scalar reduction (or an
    /// arg-min/arg-max's variable).
    pub fn scalar_ident(&self) -> Option<&str> {
        match &self.shape {
            Shape::Scalar { ident }
            | Shape::Arg { ident, .. }
            | Shape::Partner { ident, .. }
            | Shape::Flag { ident } => Some(ident),
            _ => None,
        }
    }

    /// An arg-min/arg-max's device state (lock and winning iteration), if this is one.
    pub fn arg_state(&self) -> Option<&str> {
        match &self.shape {
            Shape::Arg { state, .. } => Some(state),
            _ => None,
        }
    }
}

/// What a loop's reductions need before the body is known: the supported ones with their
/// operator and type, or the refusal naming the first that is not.
pub fn check(report: &LoopReport) -> Result<Vec<(Reduction, RedOp, NumClass)>, EmitError> {
    let refuse = |m: String| EmitError::refused(format!("loop {}: {m}", report.id));
    let mut out = Vec::new();
    for r in &report.reductions {
        let what = r.describe();
        if matches!(r.kind, ReductionKind::Argmin | ReductionKind::Argmax) {
            crate::argext::check(r, &|n: &str| n.to_string()).map_err(&refuse)?;
        }
        if r.operator == ReportOp::Assign && r.kind != ReductionKind::Scalar {
            return Err(refuse(format!(
                "reductions are not generated yet: {what} is a flag stored into an element"
            )));
        }
        let op = RedOp::from(r.operator);
        let c_type = cxx_type(&r.c_type);
        let Some(class) = NumClass::of(&c_type) else {
            return Err(refuse(format!(
                "the reduction {what} accumulates a `{}`: a kernel combines only int, unsigned, long, long long (signed or unsigned), float and double with atomics",
                r.c_type
            )));
        };
        if class.is_float() && op.bitwise() {
            return Err(refuse(format!(
                "the reduction {what} applies a bitwise operator to a `{}`",
                r.c_type
            )));
        }
        out.push((r.clone(), op, class));
    }
    Ok(out)
}

/// Plans the reductions on the kernel's body (nested names and C++ keywords already
/// rewritten): an element's occurrences become its private accumulator, a histogram's
/// updates atomics. `rename` maps a report expression to the kernel's names.
pub fn plan_body(
    loop_id: &frontend::loop_ref::LoopRef,
    checked: &[(Reduction, RedOp, NumClass)],
    body: &mut String,
    rename: &dyn Fn(&str) -> String,
    type_of: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Planned>, EmitError> {
    let refuse = |m: String| EmitError::refused(format!("{loop_id}: {m}"));
    let mut out = Vec::new();
    for (k, (r, op, class)) in checked.iter().enumerate() {
        let c_type = cxx_type(&r.c_type);
        // An arg-min/arg-max's partners, planned after it.
        let mut partners = Vec::new();
        let (shape, private) = match r.kind {
            // The body's stores go to the device copy itself: `found` becomes
            // `(*ww_red_found)` (the analysis saw no read of it in the loop).
            ReductionKind::Scalar if *op == RedOp::Assign => {
                let name = cxx_name(&r.target);
                let ident = format!("ww_red_{name}");
                let (text, hits) =
                    replace_sequences(body, &[(vec![name.clone()], format!("(*{ident})"))]);
                if hits.iter().sum::<usize>() == 0 {
                    return Err(refuse(format!(
                        "the flag {} is not spelled `{name}` in the body",
                        r.describe()
                    )));
                }
                *body = text;
                (Shape::Flag { ident }, String::new())
            }
            ReductionKind::Scalar => {
                let name = cxx_name(&r.target);
                (
                    Shape::Scalar {
                        ident: format!("ww_red_{name}"),
                    },
                    name,
                )
            }
            // The report lists one reduction per update site of an element (`bal[0] -= x`
            // in one branch, `bal[0] += y` in the other); the first rewrite took every
            // occurrence of it.
            ReductionKind::Element
                if out.iter().any(|p: &Planned| {
                    matches!(&p.shape, Shape::Element { address } if *address == rename(&r.target))
                }) =>
            {
                continue
            }
            ReductionKind::Element => {
                let address = rename(&r.target);
                let private = format!("ww_acc_{k}");
                let (text, hits) =
                    replace_sequences(body, &[(name_tokens(&address), private.clone())]);
                if hits.iter().sum::<usize>() == 0 {
                    return Err(refuse(format!(
                        "the reduction {} is not spelled `{address}` in the body (an update a function the loop calls makes is not rewritten into the kernel's accumulator)",
                        r.describe()
                    )));
                }
                *body = text;
                (Shape::Element { address }, private)
            }
            // The report lists one histogram per update line; the first rewrite took
            // every update of the array.
            ReductionKind::Histogram
                if out
                    .iter()
                    .any(|p: &Planned| p.shape == Shape::Histogram && p.target == r.target) =>
            {
                continue
            }
            ReductionKind::Histogram => {
                let min_max = matches!(op, RedOp::Min | RedOp::Max).then(|| op.helper());
                *body = atomic_updates(body, &rename(&r.target), &c_type, min_max)
                    .map_err(|why| refuse(format!("the reduction {}: {why}", r.describe())))?;
                (Shape::Histogram, String::new())
            }
            ReductionKind::Argmin | ReductionKind::Argmax => {
                let name = cxx_name(&r.target);
                for p in &r.index {
                    let ty = type_of(p).map(|t| cxx_type(&t)).ok_or_else(|| {
                        refuse(format!(
                            "the type of `{p}`, taken with {}, is not known",
                            r.describe()
                        ))
                    })?;
                    let class = NumClass::of(&ty).ok_or_else(|| {
                        refuse(format!(
                            "`{p}` ({ty}) is taken with {}: a warp exchanges only int, unsigned, long, long long (signed or unsigned), float and double by shuffles",
                            r.describe()
                        ))
                    })?;
                    partners.push(Planned {
                        target: p.clone(),
                        operator: r.operator,
                        op: *op,
                        c_type: ty,
                        class,
                        shape: Shape::Partner {
                            ident: format!("ww_red_{}", cxx_name(p)),
                            of: r.target.clone(),
                        },
                        private: cxx_name(p),
                    });
                }
                (
                    Shape::Arg {
                        ident: format!("ww_red_{name}"),
                        state: format!("ww_arg_{name}"),
                        max: r.kind == ReductionKind::Argmax,
                        partners: r.index.clone(),
                    },
                    name,
                )
            }
        };
        out.push(Planned {
            target: r.target.clone(),
            operator: r.operator,
            op: *op,
            c_type,
            class: *class,
            shape,
            private,
        });
        out.extend(partners);
    }
    Ok(out)
}

/// The helper that an update operator becomes, and whether its value is negated.
fn update_helper(op: &str) -> Option<(&'static str, bool)> {
    Some(match op {
        "+=" | "++" => ("add", false),
        "-=" | "--" => ("add", true),
        "*=" => ("mul", false),
        "&=" => ("and", false),
        "|=" => ("or", false),
        "^=" => ("xor", false),
        _ => return None,
    })
}

/// True when the tokens from `from` to the statement's `;` have, at their top level, no
/// operator binding looser than `+` (comparisons, bitwise, logical, `?:`, `,`,
/// assignments), so that `x + REST` is `x + (REST)`.
fn additive_rest(text: &str, toks: &[Tok], from: usize) -> bool {
    let mut depth = 0i32;
    for t in &toks[from.min(toks.len())..] {
        match tok_text(text, t) {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            ";" if depth == 0 => return true,
            "<" | ">" | "<=" | ">=" | "==" | "!=" | "&" | "|" | "^" | "&&" | "||" | "?" | ":"
            | "," | "<<" | ">>" | "="
                if depth == 0 =>
            {
                return false
            }
            _ => {}
        }
    }
    false
}

/// True when REST of `x - REST` has no top-level `+` or `-` (`x - a + b` is not
/// `x - (a + b)`).
fn negatable_rest(text: &str, toks: &[Tok], from: usize) -> bool {
    let mut depth = 0i32;
    let mut previous_is_operand = false;
    for t in &toks[from.min(toks.len())..] {
        let s = tok_text(text, t);
        match s {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            ";" if depth == 0 => return true,
            // A binary `+`/`-` follows an operand; a unary one does not.
            "+" | "-" if depth == 0 && previous_is_operand => return false,
            _ => {}
        }
        previous_is_operand = matches!(s, ")" | "]") || !matches!(t.kind, TokKind::Punct);
    }
    false
}

/// Why a histogram's updates cannot all become atomics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotAtomic {
    /// A use of the array that is not an update statement of its own (a read, an update
    /// inside an expression, an operator with no atomic).
    #[error(
        "`{statement}` is not an update `{array}[...] op= value;` or `{array}[...]++;` of its own; only those become atomics"
    )]
    NotAnUpdate { statement: String, array: String },
    /// An update whose value reads the array: that read would race with other updates.
    #[error("the update `{update}` reads `{array}` in its value")]
    ReadsItself { update: String, array: String },
    /// The body has no update of the array at all.
    #[error("no update of `{array}` was found in the body")]
    NoUpdate { array: String },
}

/// Rewrites every update of `array` in `body` (`hist[E] op= V;`, `hist[E]++;`, `++hist[E];`,
/// `hist[E] = hist[E] + V;`, statements of their own) into an atomic on that element. Any
/// other use of the array (a read) is refused: it would race with other threads' updates.
/// `min_max` (`"min"`, `"max"`) takes the updates of a min/max histogram instead:
/// `hist[E] = MAX(hist[E], V);` and the conditional spellings become
/// `ww_atomic_max(&hist[E], (T)(V))`.
pub fn atomic_updates(
    body: &str,
    array: &str,
    c_type: &str,
    min_max: Option<&str>,
) -> Result<String, NotAtomic> {
    let toks = code_tokens(body);
    let t = |k: usize| toks.get(k).map_or("", |x| tok_text(body, x));
    let statement_start = |k: usize| k == 0 || matches!(t(k - 1), ";" | "{" | "}" | ")" | "else");
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if t(k) != array || (k > 0 && matches!(t(k - 1), "." | "->")) {
            k += 1;
            continue;
        }
        // `(*B)[r][s]`: an array through a pointer to it (PolyBench's POLYBENCH_ARRAY).
        let through_pointer = k >= 2 && t(k - 1) == "*" && t(k - 2) == "(" && t(k + 1) == ")";
        let first = if through_pointer { k - 2 } else { k };
        let after_name = if through_pointer { k + 2 } else { k + 1 };
        let prefix = first > 0 && matches!(t(first - 1), "++" | "--");
        let begin = if prefix { first - 1 } else { first };
        let end = skip_selectors(body, &toks, after_name);
        let element = &body[toks[first].start..toks[end - 1].end];
        let unsupported = || {
            let line_end = toks[begin..]
                .iter()
                .position(|x| tok_text(body, x) == ";")
                .map_or(toks.len() - 1, |p| begin + p);
            NotAtomic::NotAnUpdate {
                statement: body[toks[begin].start..toks[line_end].end].to_string(),
                array: array.to_string(),
            }
        };
        if end == after_name || !statement_start(begin) {
            return Err(unsupported());
        }
        if let (Some(helper), "=", false) = (min_max, t(end), prefix) {
            let from = toks[begin].start;
            let update = crate::minmax::min_max_update(&body[from..]).map_err(|_| unsupported())?;
            let value = &body[from + update.value.start..from + update.value.end];
            if code_tokens(value)
                .iter()
                .any(|x| tok_text(value, x) == array)
            {
                return Err(NotAtomic::ReadsItself {
                    update: body[from..from + update.end].to_string(),
                    array: array.to_string(),
                });
            }
            // The `;` stays: the helper's call is the statement.
            edits.push((
                from,
                from + update.end - 1,
                format!("ww_atomic_{helper}(&{element}, ({c_type})({value}))"),
            ));
            let end_at = from + update.end;
            k = toks
                .iter()
                .position(|x| x.start >= end_at)
                .unwrap_or(toks.len());
            continue;
        }
        let (mut op, mut value_from) = if prefix {
            (t(begin), end)
        } else {
            (t(end), end + 1)
        };
        // `hist[E] = hist[E] + V;` (PolyBench's atax and bicg) is `hist[E] += V;` when V
        // has no operator that binds looser than `+` at its top level.
        if op == "=" {
            let len = end - first;
            let again = value_from + len;
            let same = again <= toks.len() && (0..len).all(|d| t(first + d) == t(value_from + d));
            if same && matches!(t(again), "+" | "-") && additive_rest(body, &toks, again + 1) {
                op = if t(again) == "+" { "+=" } else { "-=" };
                value_from = again + 1;
                if op == "-=" && !negatable_rest(body, &toks, value_from) {
                    return Err(unsupported());
                }
            }
        }
        let Some((helper, negate)) = update_helper(op) else {
            return Err(unsupported());
        };
        // The statement's end: the `;` at depth 0.
        let mut depth = 0i32;
        let mut semi = value_from;
        while semi < toks.len() {
            match t(semi) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                ";" if depth == 0 => break,
                _ => {}
            }
            if depth < 0 {
                break;
            }
            semi += 1;
        }
        if t(semi) != ";" {
            return Err(unsupported());
        }
        let value = match op {
            "++" | "--" => {
                if semi != value_from {
                    return Err(unsupported());
                }
                "1".to_string()
            }
            _ => {
                if semi == value_from {
                    return Err(unsupported());
                }
                body[toks[value_from].start..toks[semi - 1].end].to_string()
            }
        };
        if toks[value_from..semi]
            .iter()
            .any(|x| tok_text(body, x) == array)
        {
            return Err(NotAtomic::ReadsItself {
                update: body[toks[begin].start..toks[semi].end].to_string(),
                array: array.to_string(),
            });
        }
        let value = if negate {
            format!("-({value})")
        } else {
            format!("({value})")
        };
        edits.push((
            toks[begin].start,
            toks[semi - 1].end,
            format!("ww_atomic_{helper}(&{element}, ({c_type}){value})"),
        ));
        k = semi + 1;
    }
    if edits.is_empty() {
        return Err(NotAtomic::NoUpdate {
            array: array.to_string(),
        });
    }
    let mut out = body.to_string();
    for (a, b, with) in edits.into_iter().rev() {
        out.replace_range(a..b, &with);
    }
    Ok(out)
}

/// The device helpers: atomics for every operator and accumulator type, native where CUDA
/// has them, else a compare-and-swap loop on the value's 32- or 64-bit word.
pub const HELPERS: &str = r#"
// Reductions: ww_atomic_OP(p, v) does *p = *p OP v atomically. CUDA's atomics where they
// exist for the type, else a compare-and-swap loop on the value's 32- or 64-bit word.
struct ww_op_add { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct ww_op_mul { template <typename T> __device__ T operator()(T a, T b) const { return a * b; } };
struct ww_op_and { template <typename T> __device__ T operator()(T a, T b) const { return a & b; } };
struct ww_op_or { template <typename T> __device__ T operator()(T a, T b) const { return a | b; } };
struct ww_op_xor { template <typename T> __device__ T operator()(T a, T b) const { return a ^ b; } };
struct ww_op_land { template <typename T> __device__ T operator()(T a, T b) const { return (T)(a && b); } };
struct ww_op_lor { template <typename T> __device__ T operator()(T a, T b) const { return (T)(a || b); } };
struct ww_op_min { template <typename T> __device__ T operator()(T a, T b) const { return b < a ? b : a; } };
struct ww_op_max { template <typename T> __device__ T operator()(T a, T b) const { return b > a ? b : a; } };

template <typename T, typename Op> __device__ inline void ww_atomic_cas(T *p, T v, Op op)
{
    if (sizeof(T) == sizeof(unsigned int)) {
        unsigned int *w = (unsigned int *)p;
        unsigned int old = *w, assumed;
        do {
            assumed = old;
            T cur, next;
            memcpy(&cur, &assumed, sizeof cur);
            next = op(cur, v);
            unsigned int want;
            memcpy(&want, &next, sizeof want);
            old = atomicCAS(w, assumed, want);
        } while (old != assumed);
    } else {
        unsigned long long *w = (unsigned long long *)p;
        unsigned long long old = *w, assumed;
        do {
            assumed = old;
            T cur, next;
            memcpy(&cur, &assumed, sizeof cur);
            next = op(cur, v);
            unsigned long long want;
            memcpy(&want, &next, sizeof want);
            old = atomicCAS(w, assumed, want);
        } while (old != assumed);
    }
}

// Native atomics by type; the templates take what has none.
__device__ inline void ww_atomic_add_(int *p, int v) { atomicAdd(p, v); }
__device__ inline void ww_atomic_add_(unsigned int *p, unsigned int v) { atomicAdd(p, v); }
__device__ inline void ww_atomic_add_(unsigned long long *p, unsigned long long v) { atomicAdd(p, v); }
// Two's complement: a signed 64-bit sum is the unsigned one.
__device__ inline void ww_atomic_add_(long long *p, long long v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
__device__ inline void ww_atomic_add_(float *p, float v) { atomicAdd(p, v); }
__device__ inline void ww_atomic_add_(double *p, double v)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
    atomicAdd(p, v);
#else
    ww_atomic_cas(p, v, ww_op_add());
#endif
}
template <typename T> __device__ inline void ww_atomic_add_(T *p, T v) { ww_atomic_cas(p, v, ww_op_add()); }
__device__ inline void ww_atomic_min_(int *p, int v) { atomicMin(p, v); }
__device__ inline void ww_atomic_min_(unsigned int *p, unsigned int v) { atomicMin(p, v); }
__device__ inline void ww_atomic_min_(long long *p, long long v) { atomicMin(p, v); }
__device__ inline void ww_atomic_min_(unsigned long long *p, unsigned long long v) { atomicMin(p, v); }
template <typename T> __device__ inline void ww_atomic_min_(T *p, T v) { ww_atomic_cas(p, v, ww_op_min()); }
__device__ inline void ww_atomic_max_(int *p, int v) { atomicMax(p, v); }
__device__ inline void ww_atomic_max_(unsigned int *p, unsigned int v) { atomicMax(p, v); }
__device__ inline void ww_atomic_max_(long long *p, long long v) { atomicMax(p, v); }
__device__ inline void ww_atomic_max_(unsigned long long *p, unsigned long long v) { atomicMax(p, v); }
template <typename T> __device__ inline void ww_atomic_max_(T *p, T v) { ww_atomic_cas(p, v, ww_op_max()); }
// Bitwise operators act on the bits alike for signed and unsigned words.
__device__ inline void ww_atomic_and_(int *p, int v) { atomicAnd(p, v); }
__device__ inline void ww_atomic_and_(unsigned int *p, unsigned int v) { atomicAnd(p, v); }
__device__ inline void ww_atomic_and_(long long *p, long long v) { atomicAnd((unsigned long long *)p, (unsigned long long)v); }
__device__ inline void ww_atomic_and_(unsigned long long *p, unsigned long long v) { atomicAnd(p, v); }
template <typename T> __device__ inline void ww_atomic_and_(T *p, T v) { ww_atomic_cas(p, v, ww_op_and()); }
__device__ inline void ww_atomic_or_(int *p, int v) { atomicOr(p, v); }
__device__ inline void ww_atomic_or_(unsigned int *p, unsigned int v) { atomicOr(p, v); }
__device__ inline void ww_atomic_or_(long long *p, long long v) { atomicOr((unsigned long long *)p, (unsigned long long)v); }
__device__ inline void ww_atomic_or_(unsigned long long *p, unsigned long long v) { atomicOr(p, v); }
template <typename T> __device__ inline void ww_atomic_or_(T *p, T v) { ww_atomic_cas(p, v, ww_op_or()); }
__device__ inline void ww_atomic_xor_(int *p, int v) { atomicXor(p, v); }
__device__ inline void ww_atomic_xor_(unsigned int *p, unsigned int v) { atomicXor(p, v); }
__device__ inline void ww_atomic_xor_(long long *p, long long v) { atomicXor((unsigned long long *)p, (unsigned long long)v); }
__device__ inline void ww_atomic_xor_(unsigned long long *p, unsigned long long v) { atomicXor(p, v); }
template <typename T> __device__ inline void ww_atomic_xor_(T *p, T v) { ww_atomic_cas(p, v, ww_op_xor()); }
template <typename T> __device__ inline void ww_atomic_mul_(T *p, T v) { ww_atomic_cas(p, v, ww_op_mul()); }
template <typename T> __device__ inline void ww_atomic_land_(T *p, T v) { ww_atomic_cas(p, v, ww_op_land()); }
template <typename T> __device__ inline void ww_atomic_lor_(T *p, T v) { ww_atomic_cas(p, v, ww_op_lor()); }
// The value converted to the element's type first, as `*p OP= v` would.
template <typename T, typename V> __device__ inline void ww_atomic_add(T *p, V v) { ww_atomic_add_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_mul(T *p, V v) { ww_atomic_mul_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_and(T *p, V v) { ww_atomic_and_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_or(T *p, V v) { ww_atomic_or_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_xor(T *p, V v) { ww_atomic_xor_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_land(T *p, V v) { ww_atomic_land_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_lor(T *p, V v) { ww_atomic_lor_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_min(T *p, V v) { ww_atomic_min_(p, (T)v); }
template <typename T, typename V> __device__ inline void ww_atomic_max(T *p, V v) { ww_atomic_max_(p, (T)v); }
"#;

/// The private accumulators, declared before the bounds guard so that every thread of the
/// block, inside the loop's range or not, takes part in the tree with the identity.
pub fn private_decls(reductions: &[Planned]) -> String {
    let mut out = String::new();
    for r in reductions {
        match &r.shape {
            Shape::Histogram | Shape::Flag { .. } => {}
            Shape::Arg {
                ident,
                partners,
                state,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "    // `{}` ({}) with `{}`: this thread's candidate, from the values at the loop's\n    // entry (iteration -1: the entry's own).",
                    r.target,
                    r.operator,
                    partners.join("`, `")
                );
                let _ = ident;
                let _ = writeln!(
                    out,
                    "    {t} {v};\n    memcpy(&{v}, &{state}[2], sizeof {v});",
                    t = r.c_type,
                    v = r.private
                );
                let _ = writeln!(out, "    long long {state}_rank = -1;");
            }
            Shape::Partner { of, .. } => {
                let Some((state, k)) = reductions.iter().find_map(|a| match &a.shape {
                    Shape::Arg {
                        state, partners, ..
                    } if a.target == *of => partners
                        .iter()
                        .position(|p| *p == r.target)
                        .map(|k| (state, k)),
                    _ => None,
                }) else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "    {t} {v};\n    memcpy(&{v}, &{state}[{w}], sizeof {v});",
                    t = r.c_type,
                    v = r.private,
                    w = 3 + k
                );
            }
            Shape::Scalar { .. } | Shape::Element { .. } => {
                let _ = writeln!(
                    out,
                    "    // `{}` ({}): this thread's part, from the operator's identity.",
                    r.target, r.operator
                );
                let _ = writeln!(out, "    {} {} = {};", r.c_type, r.private, r.identity());
            }
        }
    }
    out
}

/// Inside the guard, after the body: an arg-min/arg-max's candidate is this iteration's,
/// `iteration` its number.
pub fn after_body(reductions: &[Planned], iteration: &str) -> String {
    let mut out = String::new();
    for state in reductions.iter().filter_map(Planned::arg_state) {
        let _ = writeln!(out, "        {state}_rank = {iteration};");
    }
    out
}

/// After the guard, which every thread reaches: each reduction's warps combine by shuffles,
/// then thread 0 combines the warps' values and the block's value into the device copy or
/// element.
pub fn combine_code(reductions: &[Planned]) -> String {
    let mut out = String::new();
    // Each reduction with a private accumulator and where its block's value goes.
    let trees: Vec<(usize, &Planned, String)> = reductions
        .iter()
        .filter_map(|r| match &r.shape {
            Shape::Scalar { ident } => Some((r, ident.clone())),
            Shape::Element { address } => Some((r, format!("&({address})"))),
            _ => None,
        })
        .enumerate()
        .map(|(k, (r, dest))| (k, r, dest))
        .collect();
    let args = reductions.iter().any(|r| r.arg_state().is_some());
    if trees.is_empty() && !args {
        return out;
    }
    out.push_str(
        "    // Each warp combines its threads' parts by shuffles (a partial last warp only its\n    \
         // own lanes), lane 0 leaves the warp's value in shared memory, and thread 0 combines\n    \
         // the warps' values and then the block's value atomically.\n",
    );
    out.push_str("    const unsigned ww_t = threadIdx.x + blockDim.x * threadIdx.y;\n");
    out.push_str("    const unsigned ww_n = blockDim.x * blockDim.y;\n");
    out.push_str("    const unsigned ww_lane = ww_t % 32u;\n");
    out.push_str(
        "    const unsigned ww_lanes = ww_n - (ww_t - ww_lane) < 32u ? ww_n - (ww_t - ww_lane) : 32u;\n",
    );
    out.push_str(
        "    const unsigned ww_mask = ww_lanes == 32u ? 0xffffffffu : (1u << ww_lanes) - 1u;\n",
    );
    for (k, r, dest) in trees {
        let (part, warps, other) = (
            format!("ww_part_{k}"),
            format!("ww_warps_{k}"),
            format!("ww_other_{k}"),
        );
        let _ = writeln!(out, "    {} {part} = {};", r.c_type, r.private);
        let _ = writeln!(
            out,
            "    for (unsigned ww_d = 16; ww_d > 0; ww_d /= 2) {{\n        const {ty} {other} = __shfl_down_sync(ww_mask, {part}, ww_d);\n        if (ww_lane + ww_d < ww_lanes)\n            {part} = {};\n    }}",
            r.op.combine(&part, &other),
            ty = r.c_type,
        );
        let _ = writeln!(out, "    static __shared__ {} {warps}[32];", r.c_type);
        let _ = writeln!(
            out,
            "    if (ww_lane == 0)\n        {warps}[ww_t / 32u] = {part};"
        );
        out.push_str("    __syncthreads();\n");
        let _ = writeln!(
            out,
            "    if (ww_t == 0) {{\n        for (unsigned ww_w = 1; ww_w < (ww_n + 31u) / 32u; ww_w++)\n            {part} = {};\n        ww_atomic_{}({dest}, {part});\n    }}",
            r.op.combine(&part, &format!("{warps}[ww_w]")),
            r.op.helper()
        );
    }
    for r in reductions {
        if let Shape::Arg {
            ident,
            state,
            max,
            partners,
        } = &r.shape
        {
            let partners: Vec<&Planned> = partners
                .iter()
                .filter_map(|p| {
                    reductions.iter().find(|q| {
                        matches!(&q.shape, Shape::Partner { of, .. } if *of == r.target)
                            && q.target == *p
                    })
                })
                .collect();
            out.push_str(&arg_combine(r, ident, state, *max, &partners));
        }
    }
    out
}

/// An arg-min/arg-max's combine, after the guard: each warp keeps its best candidate by
/// shuffles of the value, the iteration and the partners (of equal values the earliest
/// iteration), lane 0 leaves it in shared memory, thread 0 takes the block's best and
/// offers it to the device copies under a lock in `state`, whose second word holds the
/// winning iteration (-1: the entry's values). Blocks offer in any order: the rule picks
/// one candidate whatever the order.
fn arg_combine(r: &Planned, ident: &str, state: &str, max: bool, partners: &[&Planned]) -> String {
    let cmp = if max { ">" } else { "<" };
    let better = |v: &str, k: &str, kv: &str, kk: &str| {
        format!("({v} {cmp} {kv} || ({v} == {kv} && {k} < {kk}))")
    };
    // (type, this thread's part, the value it starts from)
    let mut fields: Vec<(String, String, String)> = vec![
        (r.c_type.clone(), format!("{state}_v"), r.private.clone()),
        (
            "long long".into(),
            format!("{state}_r"),
            format!("{state}_rank"),
        ),
    ];
    for (k, p) in partners.iter().enumerate() {
        fields.push((p.c_type.clone(), format!("{state}_p{k}"), p.private.clone()));
    }
    let (v, rk) = (&fields[0].1, &fields[1].1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "    // `{}` ({}): the warp's best candidate by shuffles, the block's through shared memory,\n    // then thread 0 offers it to the device copies under the lock in `{state}`.",
        r.target, r.operator
    );
    for (t, part, from) in &fields {
        let _ = writeln!(out, "    {t} {part} = {from};");
    }
    out.push_str("    for (unsigned ww_d = 16; ww_d > 0; ww_d /= 2) {\n");
    for (t, part, _) in &fields {
        let _ = writeln!(
            out,
            "        const {t} {part}_o = __shfl_down_sync(ww_mask, {part}, ww_d);"
        );
    }
    // One statement per field, joined: `ww_arg_best_v = ww_arg_best_v_o; ...`.
    let each = |statement: &dyn Fn(&str) -> String| {
        fields
            .iter()
            .map(|(_, part, _)| statement(part))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        out,
        "        if (ww_lane + ww_d < ww_lanes && {}) {{ {} }}\n    }}",
        better(&format!("{v}_o"), &format!("{rk}_o"), v, rk),
        each(&|part| format!("{part} = {part}_o;"))
    );
    for (t, part, _) in &fields {
        let _ = writeln!(out, "    static __shared__ {t} {part}_w[32];");
    }
    let _ = writeln!(
        out,
        "    if (ww_lane == 0) {{ {} }}",
        each(&|part| format!("{part}_w[ww_t / 32u] = {part};"))
    );
    out.push_str("    __syncthreads();\n    if (ww_t == 0) {\n");
    let _ = writeln!(
        out,
        "        for (unsigned ww_w = 1; ww_w < (ww_n + 31u) / 32u; ww_w++)\n            if ({}) {{ {} }}",
        better(&format!("{v}_w[ww_w]"), &format!("{rk}_w[ww_w]"), v, rk),
        each(&|part| format!("{part} = {part}_w[ww_w];"))
    );
    let _ = writeln!(
        out,
        "        while (atomicCAS((unsigned long long *)&{state}[0], 0ULL, 1ULL) != 0ULL) {{\n        }}\n        __threadfence();"
    );
    let _ = writeln!(
        out,
        "        volatile {t} *ww_kept_v = {ident};\n        volatile long long *ww_kept_r = &{state}[1];",
        t = r.c_type
    );
    let mut offer = vec![format!("*ww_kept_v = {v};"), format!("*ww_kept_r = {rk};")];
    for (k, p) in partners.iter().enumerate() {
        let Shape::Partner { ident, .. } = &p.shape else {
            continue;
        };
        offer.push(format!("*(volatile {} *){ident} = {state}_p{k};", p.c_type));
    }
    let _ = writeln!(
        out,
        "        if ({}) {{ {} }}",
        better(v, rk, "*ww_kept_v", "*ww_kept_r"),
        offer.join(" ")
    );
    let _ = writeln!(
        out,
        "        __threadfence();\n        atomicExch((unsigned long long *)&{state}[0], 0ULL);\n    }}"
    );
    out
}

/// What the note says about the reductions.
pub fn notes(reductions: &[Planned]) -> Vec<String> {
    let mut out = Vec::new();
    for r in reductions {
        let what = format!("`{}` ({})", r.target, r.operator);
        out.push(match &r.shape {
            Shape::Scalar { .. } => format!(
                "Reduction {what}: each thread accumulates from the operator's identity, each warp combines its threads' values by shuffles, thread 0 combines the warps' values and then the block's value atomically into a device copy of `{t}` that starts at its value at the loop's entry; the host function takes `&{t}` and writes the result back.",
                t = r.target
            ),
            Shape::Element { .. } => format!(
                "Reduction {what}: each thread accumulates from the operator's identity, each warp combines its threads' values by shuffles, thread 0 combines the warps' values and then the block's value atomically into the element."
            ),
            Shape::Histogram => format!(
                "Reduction {what}: each update of `{}` in the body is an atomic on its element.",
                r.target
            ),
            Shape::Arg { partners, .. } => format!(
                "Reduction {what} with `{p}` (arg-{op}): each thread runs its iteration on copies of `{t}` and `{p}` that start from their values at the loop's entry; each warp keeps its best (value, iteration) by shuffles, of equal values the earliest iteration, and thread 0 of each block offers the block's best to the device copies under a lock, beside the winning iteration (-1 for the entry's values): the sequential loop's answer, whose strict comparison keeps the earliest iteration. The host function takes `&{t}`, `&{a}` and writes the results back.",
                t = r.target,
                p = partners.join("`, `"),
                a = partners.join("`, `&"),
                op = r.op.helper(),
            ),
            Shape::Partner { .. } => continue,
            Shape::Flag { .. } => format!(
                "Reduction {what}: every thread that assigns `{t}` stores the same value into its device copy, which starts at the value at the loop's entry (a benign race, no combine); the host function takes `&{t}` and writes the result back.",
                t = r.target
            ),
        });
        if r.reassociated() {
            out.push(format!(
                "{what} is a floating-point {}: the kernel combines the values in another order than the loop, so the result may differ in the last bits.",
                if r.op == RedOp::Add { "sum" } else { "product" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_histogram_updates_become_atomics() {
        let body = "{ vmax[c1[f]] = MAX(vmax[c1[f]], v[f]); if (a) vmax[c2[f]] = -v[f] > vmax[c2[f]] ? -v[f] : vmax[c2[f]]; }";
        assert_eq!(
            atomic_updates(body, "vmax", "double", Some("max")).unwrap(),
            "{ ww_atomic_max(&vmax[c1[f]], (double)(v[f])); if (a) ww_atomic_max(&vmax[c2[f]], (double)(-v[f])); }"
        );
        // Without the operator an assignment is not an update; a value reading the
        // array races.
        assert!(atomic_updates(body, "vmax", "double", None).is_err());
        let e = atomic_updates("{ m[k] = MAX(m[k], m[j]); }", "m", "int", Some("max"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("reads `m`"), "{e}");
    }

    #[test]
    fn histogram_updates_become_atomics() {
        let body = "{ hist[data[i]]++; ++h2[a][b]; hist[k] -= w[i] * 2; }";
        let out = atomic_updates(body, "hist", "int", None).unwrap();
        assert_eq!(
            out,
            "{ ww_atomic_add(&hist[data[i]], (int)(1)); ++h2[a][b]; ww_atomic_add(&hist[k], (int)-(w[i] * 2)); }"
        );
        let out = atomic_updates("{ ++h2[a][b]; }", "h2", "long", None).unwrap();
        assert_eq!(out, "{ ww_atomic_add(&h2[a][b], (long)(1)); }");
        let out = atomic_updates("{ if (m[i]) f[k] |= 4u; }", "f", "unsigned", None).unwrap();
        assert_eq!(out, "{ if (m[i]) ww_atomic_or(&f[k], (unsigned)(4u)); }");
        // PolyBench's atax and bicg: `y[j] = y[j] + ...`.
        let out =
            atomic_updates("{ y[j] = y[j] + A[i][j] * tmp[i]; }", "y", "double", None).unwrap();
        assert_eq!(out, "{ ww_atomic_add(&y[j], (double)(A[i][j] * tmp[i])); }");
        let out = atomic_updates("{ s[j] = s[j] - r[i] * a; }", "s", "double", None).unwrap();
        assert_eq!(out, "{ ww_atomic_add(&s[j], (double)-(r[i] * a)); }");
        let out = atomic_updates("{ s[j] = s[j] + (a - b); }", "s", "int", None).unwrap();
        assert_eq!(out, "{ ww_atomic_add(&s[j], (int)((a - b))); }");
        // Through a pointer to the array (PolyBench's `(*B)[r][s]`).
        let out =
            atomic_updates("{ (*B)[r][s] += A[r][t] * A[s][t]; }", "B", "double", None).unwrap();
        assert_eq!(
            out,
            "{ ww_atomic_add(&(*B)[r][s], (double)(A[r][t] * A[s][t])); }"
        );
    }

    #[test]
    fn histogram_shapes_that_would_race_are_refused() {
        for (body, why) in [
            // Not `x = x + REST` with REST binding tighter than `+`, or not the same element.
            ("{ hist[k] = hist[k] + v > 0; }", "is not an update"),
            ("{ hist[k] = hist[k] - a + b; }", "is not an update"),
            ("{ hist[k] = hist[j] + v; }", "is not an update"),
            ("{ hist[k] = v + hist[k]; }", "is not an update"),
            ("{ hist[k] = hist[k] * v; }", "is not an update"),
            ("{ x = hist[k]; hist[k]++; }", "is not an update"),
            ("{ hist[k] += hist[j]; }", "reads `hist` in its value"),
            ("{ y = hist[k]++; }", "is not an update"),
            ("{ x[i] = 0; }", "no update of `hist`"),
        ] {
            let e = atomic_updates(body, "hist", "int", None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{body}: {e}");
        }
    }

    #[test]
    fn identities_and_classes() {
        let p = |op, c_type: &str| Planned {
            target: "s".into(),
            operator: ReportOp::Sum,
            op,
            c_type: c_type.into(),
            class: NumClass::of(c_type).unwrap(),
            shape: Shape::Histogram,
            private: String::new(),
        };
        assert_eq!(p(RedOp::Add, "long long").identity(), "(long long)0");
        assert_eq!(p(RedOp::Mul, "double").identity(), "(double)1");
        assert_eq!(
            p(RedOp::And, "unsigned int").identity(),
            "(unsigned int)~0ULL"
        );
        assert_eq!(p(RedOp::Min, "int").identity(), "(int)2147483647");
        assert_eq!(
            p(RedOp::Max, "float").identity(),
            "(float)__int_as_float((int)0xff800000u)"
        );
        assert!(p(RedOp::Add, "float").reassociated());
        assert!(!p(RedOp::Max, "double").reassociated());
        assert_eq!(NumClass::of("unsigned long"), Some(NumClass::U64));
        for t in [
            "char",
            "short",
            "bool",
            "long double",
            "struct acc",
            "int *",
        ] {
            assert_eq!(NumClass::of(t), None, "{t}");
        }
    }
}
