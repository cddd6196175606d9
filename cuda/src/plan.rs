//! The kernel plan: everything CUDA generation decides about one loop before printing it.
//! Which loops of the nest go to the grid's x and y, the kernel's and the host function's
//! parameters (nested pointers flattened, variable-length arrays as a pointer and a pitch),
//! the loop body as C text with its accesses rewritten, the locals it needs declared, the
//! device functions and types it uses, and the shared-memory areas to stage.
//!
//! Everything here comes from the kernel report (`advisor::model`), the lowered IR (types
//! of locals) and the unit's text (spans from `frontend::access_sites`); nothing is guessed
//! from names.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

pub(crate) use super::ctext::written_in;
use super::ctext::{
    code_tokens, expr_roots, flat_name, identifiers, is_keyword, name_tokens, replace_sequences,
    rewrite_expr, strip_line_markers, to_wide, tok_text, token_strings, uses_of, Tok, TokKind,
};
use super::reduce;
use advisor::model::{Device, LoopReport, ParamKind, ReductionKind, Role, SharedArea, Verdict};
use frontend::access_sites::{access_sites, FunctionSite, LoopSite, Sites};
use frontend::ir::{Function, Span};
use frontend::loop_ref::LoopRef;
use frontend::types::{ArrayLen, Type, TypeId, TypeTable};
use frontend::unit::Unit;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

/// Why a loop cannot be emitted; `kind` decides the command's exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitError {
    pub kind: EmitErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitErrorKind {
    /// The loop is not friendly, or uses something generation does not support: exit 1.
    Refused,
    /// Bad options or a loop id that names no loop: exit 2.
    Usage,
}

impl EmitError {
    pub fn refused(message: impl Into<String>) -> EmitError {
        EmitError {
            kind: EmitErrorKind::Refused,
            message: message.into(),
        }
    }
    pub fn usage(message: impl Into<String>) -> EmitError {
        EmitError {
            kind: EmitErrorKind::Usage,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EmitError {}

/// Options of `warpwise emit` (and of `validate`, which emits first).
#[derive(Clone, Debug, Default)]
pub struct EmitOptions {
    /// `x=j,y=i`; `None`: the report's recommended mapping.
    pub mapping: Option<String>,
    /// Threads per block along x and y (a 1D mapping uses `x*y` threads along x).
    pub block: (u32, u32),
    pub shared: bool,
    /// Test-only breakages (hidden options).
    pub debug: DebugOptions,
}

#[derive(Clone, Debug, Default)]
pub struct DebugOptions {
    /// Emit a loop whatever its verdict.
    pub force: bool,
    /// Arrays whose copied section loses its last element.
    pub shrink: Vec<String>,
    /// Swap the trip counts of the grid's x and y (guard and grid).
    pub swap_bounds: bool,
}

#[derive(Clone, Debug)]
pub struct NestLoop {
    pub id: LoopRef,
    pub var: String,
    /// The variable's C type (`int`, `size_t`).
    pub var_type: String,
    pub lower: String,
    pub upper: String,
    pub step: String,
    pub trip: String,
}

/// How a pointer parameter looks on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `T *p` (also a local array passed by its first element).
    Pointer,
    /// A pointer to rows of a variable-length array `T (*p)[pitch]`: passed as `T *` and a
    /// pitch in elements, indexed through `ww_rows<T>`.
    Rows { pitch: String },
    /// A pointer to rows of fixed extents, `int (*p)[128]` or `double (*u)[64][5]` (the
    /// extents after the first, outermost first): a C++ type as it is.
    FixedRows { dims: Vec<u64> },
    /// A struct object (not a pointer), reached as `s.field`: passed by value.
    Object,
}

#[derive(Clone, Debug)]
pub struct ArrayParam {
    /// As in the report: `a`, `c->data`, `in.pixmap`; a C expression in the program.
    pub name: String,
    /// The identifier the kernel uses (`c_data` for `c->data`).
    pub ident: String,
    pub role: Role,
    pub kind: ParamKind,
    pub nested: bool,
    /// The element type (`int`, `double`, `matrix_t`).
    pub elem_type: String,
    /// The declared type for the host function's parameter (`int *`, `image_t`).
    pub host_type: String,
    pub elem_bytes: u64,
    pub shape: Shape,
    /// The copied section `[lo, hi)` in bytes relative to the pointer: the report's, or
    /// shrunk by `--debug-shrink`.
    pub lo: String,
    pub hi: String,
    /// The report's `hi` when the copy was shrunk.
    pub reported_hi: Option<String>,
    /// The kernel reads or writes it (a struct whose only use was a nested pointer is not).
    pub in_kernel: bool,
    /// For a struct object: its size in bytes.
    pub object_bytes: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct ScalarParam {
    pub name: String,
    pub ident: String,
    pub c_type: String,
    /// Not in the report's parameters: a variable the bounds or sections need.
    pub extra: bool,
    pub in_kernel: bool,
}

/// A value the host computes from the program's variables and passes to the kernel as a
/// `long long` (a struct field used in a bound: `in_image->height`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    pub ident: String,
    /// The C expression in the program's variables.
    pub expr: String,
}

/// One shared-memory area staged by `--shared`.
#[derive(Clone, Debug)]
pub struct Staged {
    /// The array's report name and kernel identifier.
    pub array: String,
    pub ident: String,
    pub elem_type: String,
    pub kind: String,
    pub area: StagedArea,
    /// Kernel-side expressions of the area's size in bytes (in `blockDim`).
    pub bytes: String,
    /// The same for the host (blockDim replaced by the launch's block).
    pub host_bytes: String,
    /// Row pitch for 2D indexing through the proxy (`Rows`/`FixedRows` arrays).
    pub rows_pitch: Option<String>,
    /// The report's expressions of the area's rows and bytes per row (a linear area is one
    /// row), in the program's variables and `blockDim`.
    pub rows: String,
    pub row_bytes: String,
}

#[derive(Clone, Debug)]
pub enum StagedArea {
    /// Bytes `[lo, hi)` of the array (kernel expressions).
    Linear { lo: String, hi: String },
    /// Rows `row_lo .. row_lo + rows` of `pitch` bytes, bytes `[col_lo, col_lo + row_bytes)`
    /// of each (kernel expressions).
    Tile {
        pitch: String,
        row_lo: String,
        rows: String,
        col_lo: String,
        row_bytes: String,
    },
}

/// What a kernel argument is, in order: how a launcher fills it from a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// A device buffer holding the array's section: the pointer passed is the buffer's
    /// start minus the section's `lo` (so the body's indices stay the program's).
    Buffer { array: String },
    /// A struct passed by value: the object's bytes.
    Object { array: String, c_type: String },
    /// An inbound scalar of the program, its bytes as they are.
    Scalar { name: String, c_type: String },
    /// A `long long` the host computes (pitches, struct fields in bounds).
    Derived { ident: String, expr: String },
    /// The `lo` or `hi` of an array's section (`long long`), for staging.
    SectionBound { array: String, hi: bool },
    /// A scalar reduction's device copy: a one-element buffer holding the variable's value
    /// at the loop's entry, read back after the launch.
    Reduction { name: String, c_type: String },
    /// An arg-min/arg-max's state (`long long` words: the combine's lock, 0; the winning
    /// iteration, -1 for the entry's values; the entry values of `target` and of each of
    /// `partners`, a word each), not read back.
    ArgState {
        target: String,
        partners: Vec<String>,
    },
}

#[derive(Clone, Debug)]
pub struct KernelPlan {
    pub loop_id: LoopRef,
    /// The loop statement in the unit's preprocessed text (where a snapshot is taken).
    pub loop_span: Span,
    pub function: String,
    /// The user's file and the lines the loop occupies there.
    pub file: PathBuf,
    pub first_line: u32,
    pub last_line: u32,
    pub verdict: Verdict,
    /// The loop's findings when `--debug-force` let a loop through.
    pub forced_reasons: Vec<String>,
    pub nest: Vec<NestLoop>,
    /// Index into `nest` of the loop on the grid's x, and on y.
    pub x: usize,
    pub y: Option<usize>,
    pub block: (u32, u32),
    /// `--debug-swap-bounds`: the grid and guard of x use y's trip count and vice versa.
    pub swap_bounds: bool,
    pub arrays: Vec<ArrayParam>,
    pub scalars: Vec<ScalarParam>,
    pub derived: Vec<Derived>,
    /// Locals of the function the body uses without declaring them: `(type, name)`.
    pub locals: Vec<(String, String)>,
    /// The body (the mapped loop's body statement), rewritten for the kernel.
    pub body: String,
    pub body_from_source: bool,
    /// Indentation of the line the body starts on: what its other lines are relative to.
    pub body_indent: usize,
    /// Loop variables of the nest declared before the loop: they outlive it.
    pub outliving: Vec<String>,
    /// `__device__` prototypes and definitions of functions the body calls.
    pub device_prototypes: Vec<String>,
    pub device_functions: Vec<String>,
    /// Type definitions (typedefs, structs, enums) of the user's files.
    pub type_decls: Vec<String>,
    /// Type items of system headers that `type_decls` or the body name, for NVRTC only.
    pub system_type_decls: Vec<String>,
    pub staged: Vec<Staged>,
    pub notes: Vec<String>,
    pub kernel_name: String,
    pub host_name: String,
    /// The host function's parameters in order: `(type declaration, name in program)`.
    pub host_params: Vec<(String, String)>,
    pub kernel_args: Vec<KernelArg>,
    /// The original lines of the loop (for the patch note).
    pub original_lines: Vec<String>,
    /// The reductions the kernel combines.
    pub reductions: Vec<reduce::Planned>,
}

impl KernelPlan {
    pub fn axis_loop(&self, y: bool) -> Option<&NestLoop> {
        if y {
            self.y.map(|i| &self.nest[i])
        } else {
            Some(&self.nest[self.x])
        }
    }

    pub fn mapping_text(&self) -> String {
        match self.y {
            Some(y) => format!("{{x: {}, y: {}}}", self.nest[self.x].var, self.nest[y].var),
            None => format!("{{x: {}}}", self.nest[self.x].var),
        }
    }

    /// Threads per block actually launched.
    pub fn launch_block(&self) -> (u32, u32) {
        match self.y {
            Some(_) => self.block,
            None => (self.block.0.saturating_mul(self.block.1), 1),
        }
    }

    pub fn array(&self, name: &str) -> Option<&ArrayParam> {
        self.arrays.iter().find(|a| a.name == name)
    }
}

/// Finds the report of `wanted` (`FILE:LINE[:COL]`) among `reports`.
pub fn find_report<'a>(
    reports: &'a [LoopReport],
    wanted: &str,
) -> Result<&'a LoopReport, EmitError> {
    let selector = wanted.parse::<frontend::loop_ref::LoopSelector>().ok();
    let found: Vec<&LoopReport> = reports
        .iter()
        .filter(|r| selector.as_ref().is_some_and(|s| s.matches(&r.id)))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => {
            let ids: Vec<String> = reports.iter().map(|r| r.id.to_string()).collect();
            Err(EmitError::usage(format!(
                "no loop at `{wanted}`; loops: {}",
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            )))
        }
        many => Err(EmitError::usage(format!(
            "`{wanted}` names {} loops ({}); add the column",
            many.len(),
            many.iter()
                .map(|r| r.id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Describes why a report is not friendly, line numbers included.
/// `` `sum` (+), `best`, `idx` (min) ``.
pub(crate) fn reduction_list(report: &LoopReport) -> String {
    report
        .reductions
        .iter()
        .map(|r| r.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn verdict_reasons(report: &LoopReport) -> Vec<String> {
    report
        .reasons
        .iter()
        .map(|r| {
            let lines: Vec<String> = r.lines.iter().map(u32::to_string).collect();
            format!(
                "{} {} (line{} {})",
                r.code,
                r.message,
                if r.lines.len() == 1 { "" } else { "s" },
                lines.join(", ")
            )
        })
        .collect()
}

pub(crate) struct Ctx<'a> {
    pub(crate) unit: &'a Unit,
    pub(crate) text: String,
    pub(crate) sites: Sites,
    pub(crate) func: &'a Function,
    pub(crate) types: &'a TypeTable,
    pub(crate) locals: HashMap<String, TypeId>,
    pub(crate) globals: HashMap<String, TypeId>,
    /// The loop being ported: a name's type is the one its declaration visible there gives.
    pub(crate) at: Option<Span>,
}

impl<'a> Ctx<'a> {
    /// The function of `report` in `unit` and the unit's source sites.
    pub(crate) fn new(unit: &'a Unit, report: &LoopReport) -> Result<Ctx<'a>, EmitError> {
        let mut ctx = Ctx::for_function(unit, &report.function)
            .map_err(|e| EmitError::refused(format!("{}: {}", report.id, e.message)))?;
        ctx.at = ctx.loop_site(&report.id).map(|site| site.span);
        Ok(ctx)
    }

    /// Function `name` of `unit` and the unit's source sites.
    pub(crate) fn for_function(unit: &'a Unit, name: &str) -> Result<Ctx<'a>, EmitError> {
        let program = &unit.lowered.program;
        let func = program
            .function(name)
            .ok_or_else(|| EmitError::refused(format!("function `{name}` was not lowered")))?;
        let pre = &unit.preprocessed;
        let sites = access_sites(pre).map_err(|d| EmitError::refused(d.to_string()))?;
        Ok(Ctx {
            unit,
            text: frontend::preprocess::blank_parser_shims(&pre.text),
            sites,
            func,
            types: &program.types,
            locals: locals_of(func),
            globals: globals_of(func, &program.globals),
            at: None,
        })
    }
}

impl Ctx<'_> {
    pub(crate) fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    pub(crate) fn loop_site(&self, id: &LoopRef) -> Option<&LoopSite> {
        self.sites
            .loops
            .iter()
            .find(|l| self.unit.loop_ref_at(l.keyword).as_ref() == Some(id))
    }

    pub(crate) fn function_site(&self, name: &str) -> Option<&FunctionSite> {
        let system = self.unit.preprocessed.source_map.system_ranges();
        self.sites.functions.iter().find(|f| {
            f.name == name
                && !system
                    .iter()
                    .any(|&(a, b)| a <= f.span.start as usize && (f.span.start as usize) < b)
        })
    }

    /// The type of variable `name`: its declaration's visible at the loop being ported,
    /// else the function's parameter, local or global of that name.
    pub(crate) fn type_of(&self, name: &str) -> Option<TypeId> {
        if let Some(t) = self.at.and_then(|at| self.declared_at(name, at)) {
            return Some(t);
        }
        self.locals
            .get(name)
            .or_else(|| self.globals.get(name))
            .copied()
    }

    /// The return type of a function the unit defines or declares, by name.
    pub(crate) fn return_type(&self, name: &str) -> Option<TypeId> {
        let program = &self.unit.lowered.program;
        if let Some(f) = program.function(name) {
            return Some(f.ret);
        }
        let external = program.externals.iter().find(|e| e.name == name)?;
        match self.types.get(external.ty) {
            frontend::types::Type::Function { ret, .. } => Some(*ret),
            _ => None,
        }
    }

    pub(crate) fn display(&self, ty: TypeId) -> String {
        self.types.display(ty)
    }

    /// Whether variable `name` ([`Ctx::type_of`]) is a pointer or an array.
    pub(crate) fn is_pointer(&self, name: &str) -> bool {
        self.type_of(name).is_some_and(|t| {
            matches!(
                self.types.get(t),
                frontend::types::Type::Pointer { .. } | frontend::types::Type::Array { .. }
            )
        })
    }

    /// The declared type of the automatic variable `name` the function's text reads at
    /// `at`: the innermost declaration before `at` whose block holds it. What lowering
    /// records for a variable SSA keeps no value of (a copy, `const cs_lnum_t n = m;`).
    pub(crate) fn declared_at(&self, name: &str, at: Span) -> Option<TypeId> {
        self.func.declaration_at(name, at).map(|d| d.ty)
    }
}

fn locals_of(func: &Function) -> HashMap<String, TypeId> {
    let mut map = HashMap::new();
    for p in &func.params {
        if let Some(n) = &p.name {
            map.insert(n.clone(), p.ty);
        }
    }
    for s in &func.slots {
        map.entry(s.name.clone()).or_insert(s.ty);
    }
    for inst in &func.insts {
        if let Some(n) = &inst.origin.var_name {
            if !n.starts_with('&') && !n.is_empty() {
                map.entry(n.clone()).or_insert(inst.ty);
            }
        }
    }
    map
}

fn globals_of(func: &Function, globals: &[frontend::ir::Global]) -> HashMap<String, TypeId> {
    globals
        .iter()
        .filter(|g| g.local_to.is_none() || g.local_to.as_deref() == Some(func.name.as_str()))
        .map(|g| (g.name.clone(), g.ty))
        .collect()
}

/// A C type for C++: `restrict` has another spelling there, `_Bool` is `bool`.
pub fn cxx_type(c_type: &str) -> String {
    let (out, _) = replace_sequences(
        c_type,
        &[
            (vec!["restrict".into()], "__restrict__".into()),
            (vec!["_Bool".into()], "bool".into()),
        ],
    );
    out
}

/// The whole of an array object of fixed size (a global table, a local array), for when the
/// report has no section: every byte the loop can reach through it.
pub(crate) fn whole_object(
    ctx: &Ctx<'_>,
    p: &advisor::model::Parameter,
) -> Option<advisor::model::Bytes> {
    if p.nested {
        return None;
    }
    let t = ctx.type_of(&p.name)?;
    if !matches!(ctx.types.get(t), Type::Array { .. }) {
        return None;
    }
    let size = advisor::model::Quantity::of(&symbolic::Expr::integer(ctx.types.size_of(t)?.into()));
    Some(advisor::model::Bytes {
        lo: advisor::model::Quantity::constant(0),
        hi: size.clone(),
        size,
        reads: Vec::new(),
    })
}

/// The unqualified type a pointer type points to: `float` for `const float *restrict`.
fn pointee(c_type: &str) -> String {
    let qualifier = |w: &str| {
        matches!(
            w,
            "const" | "volatile" | "restrict" | "__restrict" | "__restrict__"
        )
    };
    let mut t = c_type.trim();
    while let Some(w) = t.rsplit(|c: char| c.is_whitespace() || c == '*').next() {
        if !w.is_empty() && qualifier(w) {
            t = t[..t.len() - w.len()].trim_end();
        } else {
            break;
        }
    }
    let t = t.strip_suffix('*').unwrap_or(t);
    t.split_whitespace()
        .filter(|w| !qualifier(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `T *` and a name: `T *name`; a declarator with `(*)` gets the name inside.
/// The position of the `)` that closes a pointer declarator group with qualifiers, as in
/// `double (*restrict)[6]` or `int (* const)[4]`.
fn qualified_pointer_group(t: &str) -> Option<usize> {
    let open = t.find("(*")?;
    let close = open + t[open..].find(')')?;
    let inner = &t[open + 2..close];
    let qualifiers = inner.split_whitespace().all(|w| {
        matches!(
            w,
            "restrict" | "__restrict" | "__restrict__" | "const" | "volatile"
        )
    });
    (qualifiers && !inner.trim().is_empty()).then_some(close)
}

pub fn declare(c_type: &str, name: &str) -> String {
    let t = c_type.trim();
    if let Some(i) = t.find("(*)") {
        format!("{}(*{name}){}", &t[..i], &t[i + 3..])
    } else if let Some(close) = qualified_pointer_group(t) {
        // `double (*restrict)[6]`: the name goes after the pointer's qualifiers.
        format!("{} {name}{}", &t[..close], &t[close..])
    } else if let Some(i) = t.find('[') {
        // An array (a private copy declared in the kernel): `double tmp[3]`.
        let elem = t[..i].trim_end();
        let sep = if elem.ends_with('*') { "" } else { " " };
        format!("{elem}{sep}{name}{}", &t[i..])
    } else if t.ends_with('*') {
        format!("{t}{name}")
    } else {
        format!("{t} {name}")
    }
}

/// Identifiers that are keywords in C++ but may name variables in C.
fn cxx_keyword(s: &str) -> bool {
    matches!(
        s,
        "alignas"
            | "alignof"
            | "and"
            | "and_eq"
            | "bitand"
            | "bitor"
            | "bool"
            | "catch"
            | "char16_t"
            | "char32_t"
            | "class"
            | "compl"
            | "concept"
            | "consteval"
            | "constexpr"
            | "constinit"
            | "const_cast"
            | "co_await"
            | "co_return"
            | "co_yield"
            | "decltype"
            | "delete"
            | "dynamic_cast"
            | "explicit"
            | "export"
            | "false"
            | "friend"
            | "mutable"
            | "namespace"
            | "new"
            | "noexcept"
            | "not"
            | "not_eq"
            | "nullptr"
            | "operator"
            | "or"
            | "or_eq"
            | "private"
            | "protected"
            | "public"
            | "reinterpret_cast"
            | "requires"
            | "static_assert"
            | "static_cast"
            | "template"
            | "this"
            | "thread_local"
            | "throw"
            | "true"
            | "try"
            | "typeid"
            | "typename"
            | "using"
            | "virtual"
            | "wchar_t"
            | "xor"
            | "xor_eq"
    )
}

/// Renames identifiers that C++ reserves (`new` becomes `new_`) in C text.
pub fn cxx_safe(text: &str) -> String {
    let ids = identifiers(text);
    let patterns: Vec<(Vec<String>, String)> = ids
        .iter()
        .filter(|s| cxx_keyword(s))
        .map(|s| (vec![s.clone()], format!("{s}_")))
        .collect();
    if patterns.is_empty() {
        return text.to_string();
    }
    replace_sequences(text, &patterns).0
}

pub fn cxx_name(s: &str) -> String {
    if cxx_keyword(s) {
        format!("{s}_")
    } else {
        s.to_string()
    }
}

/// The report with each arithmetic variable in memory that the loop only reads (a global
/// `static double dt`, a local whose address is taken elsewhere; reports list them as
/// memory) turned into a scalar parameter: the kernel takes its value, as for any local.
/// `None` when there is none.
fn globals_by_value(ctx: &Ctx, report: &LoopReport) -> Option<LoopReport> {
    // Address-taken locals (`sscanf(arg, "%lf", &gamma)`) are memory to the analysis too.
    let scalar_global = |p: &advisor::model::Parameter| {
        !p.nested
            && p.kind != ParamKind::Scalar
            && p.role == Role::In
            && ctx
                .type_of(&p.name)
                .is_some_and(|t| ctx.types.is_arithmetic(t))
    };
    if !report.parameters.iter().any(scalar_global) {
        return None;
    }
    let mut out = report.clone();
    for p in out.parameters.iter_mut().filter(|p| scalar_global(p)) {
        p.kind = ParamKind::Scalar;
        if let Some(t) = ctx.type_of(&p.name) {
            p.c_type = Some(ctx.display(t));
        }
        p.bytes = None;
    }
    Some(out)
}

/// The report with each nested array that a local pointer holds (`xd = NV_DATA_OMP(x)`,
/// which reports name by its path `x->content->data`) named by that local, and the local
/// no longer listed as a pointer scalar: the loop's text indexes `xd`, so the kernel's
/// buffer must be `xd`, with the path's section. Only where [`loaded_locals`] shows the
/// local holds that path's one load everywhere. `None` when there is none.
fn arrays_by_local(ctx: &Ctx, report: &LoopReport) -> Option<LoopReport> {
    let locals = loaded_locals_with(ctx.func, true);
    let holder = |p: &advisor::model::Parameter| -> Option<String> {
        if p.kind == ParamKind::Scalar || !p.nested {
            return None;
        }
        let tokens: Vec<String> = token_strings(&p.name)
            .into_iter()
            .map(str::to_string)
            .collect();
        let local = &locals.iter().find(|(path, _)| *path == tokens)?.1;
        // The report lists the local as a pointer the loop reads: the body uses it.
        report
            .parameters
            .iter()
            .any(|q| {
                q.kind == ParamKind::Scalar
                    && &q.name == local
                    && q.c_type.as_deref().is_some_and(|t| t.contains('*'))
            })
            .then(|| local.clone())
    };
    let renamed: Vec<(usize, String)> = report
        .parameters
        .iter()
        .enumerate()
        .filter_map(|(k, p)| holder(p).map(|l| (k, l)))
        .collect();
    if renamed.is_empty() {
        return None;
    }
    let mut out = report.clone();
    for (k, local) in &renamed {
        out.parameters[*k].name = local.clone();
        out.parameters[*k].nested = false;
    }
    out.parameters
        .retain(|q| !(q.kind == ParamKind::Scalar && renamed.iter().any(|(_, l)| *l == q.name)));
    Some(out)
}

/// A pointer to one struct through which nested arrays are reached (`image` of
/// `image->pixels`) gets the whole struct as its section: the host function reads the
/// fields the bounds and sections name (`image->columns`), not only those the loop's
/// accesses touch, and a replay must hold them. Only when the reported section lies inside
/// one struct.
fn widen_struct_roots(ctx: &Ctx, arrays: &mut [ArrayParam]) {
    let roots: BTreeSet<String> = arrays
        .iter()
        .filter(|a| a.nested)
        .filter_map(|a| expr_roots(&a.name).into_iter().next())
        .collect();
    for a in arrays
        .iter_mut()
        .filter(|a| !a.nested && roots.contains(&a.name))
    {
        let Some(t) = ctx.type_of(&a.name) else {
            continue;
        };
        let Type::Pointer { pointee, .. } = ctx.types.get(t) else {
            continue;
        };
        if !matches!(ctx.types.get(*pointee), Type::Record(_)) {
            continue;
        }
        let Some(size) = ctx.types.size_of(*pointee) else {
            continue;
        };
        let inside = |e: &str| e.trim().parse::<u64>().is_ok_and(|v| v <= size);
        if inside(&a.lo) && inside(&a.hi) && a.reported_hi.is_none() {
            a.lo = "0".into();
            a.hi = size.to_string();
        }
    }
}

/// A whole array of fixed size as a host-only parameter (not a kernel buffer): what the
/// host function needs to evaluate bounds that index it.
fn host_only_array(ctx: &Ctx, name: &str, t: TypeId) -> Option<ArrayParam> {
    let Type::Array { elem, .. } = ctx.types.get(t) else {
        return None;
    };
    let size = ctx.types.size_of(t)?;
    let elem_type = cxx_type(&ctx.display(*elem));
    Some(ArrayParam {
        name: name.to_string(),
        ident: cxx_name(name),
        role: Role::In,
        kind: ParamKind::Array,
        nested: false,
        host_type: format!("{elem_type} *"),
        elem_type,
        elem_bytes: ctx.types.size_of(*elem).unwrap_or(1).max(1),
        shape: Shape::Pointer,
        lo: "0".into(),
        hi: size.to_string(),
        reported_hi: None,
        in_kernel: false,
        object_bytes: None,
    })
}

/// For an array type of fixed extents, its innermost element type and the extents after
/// the first (`double [8][64][5]` -> `double`, `[64, 5]`); `None` when an extent is
/// variable or missing after the first.
fn fixed_rows(ctx: &Ctx, t: TypeId) -> Option<(String, Vec<u64>)> {
    let Type::Array { elem, .. } = ctx.types.get(t) else {
        return None;
    };
    let mut dims = Vec::new();
    let mut at = *elem;
    while let Type::Array { elem, len } = ctx.types.get(at) {
        match len {
            ArrayLen::Fixed(n) => dims.push(*n),
            _ => return None,
        }
        at = *elem;
    }
    Some((ctx.display(at), dims))
}

/// `[64][5]` for `[64, 5]`.
fn extents(dims: &[u64]) -> String {
    dims.iter().map(|d| format!("[{d}]")).collect()
}

/// Parses `x=j,y=i` (also `x:j y:i`).
fn parse_mapping(text: &str) -> Result<(String, Option<String>), EmitError> {
    let mut x = None;
    let mut y = None;
    for part in text.split([',', ' ']).filter(|p| !p.trim().is_empty()) {
        let Some((axis, var)) = part.split_once(['=', ':']) else {
            return Err(EmitError::usage(format!(
                "`--mapping {text}`: expected `x=VAR[,y=VAR]`"
            )));
        };
        let var = var.trim().to_string();
        match axis.trim() {
            "x" => x = Some(var),
            "y" => y = Some(var),
            other => {
                return Err(EmitError::usage(format!(
                    "`--mapping {text}`: unknown axis `{other}` (x or y)"
                )))
            }
        }
    }
    match x {
        Some(x) => Ok((x, y)),
        None => Err(EmitError::usage(format!(
            "`--mapping {text}`: the x axis is required"
        ))),
    }
}

/// Plans the kernel for `report` (one of `reports`, all of `unit`).
pub fn plan(
    unit: &Unit,
    reports: &[LoopReport],
    report: &LoopReport,
    opts: &EmitOptions,
) -> Result<KernelPlan, EmitError> {
    let mut notes = Vec::new();
    let mut forced_reasons = friendly_or_forced(report, opts)?;
    let checked = checked_reductions(report, opts, &mut forced_reasons)?;
    let ctx = Ctx::new(unit, report)?;
    refuse_error_path(report)?;
    let passed = passed_report(&ctx, report);
    let report = passed.as_ref().unwrap_or(report);
    let scope = Scope {
        unit,
        reports,
        report,
        opts,
        ctx: &ctx,
        checked: &checked,
    };
    check_loop_uses(&scope)?;

    // The nest and the mapping.
    let outer_site = ctx
        .loop_site(&report.id)
        .ok_or_else(|| scope.refuse("the loop's text was not found".into()))?;
    refuse_complex(&scope, outer_site)?;
    let mapping = map_nest(&scope, outer_site, &mut notes)?;
    let body = kernel_body(&scope, outer_site, &mapping, &mut notes)?;
    let fsite = &ctx.sites.functions[outer_site.function];
    let mut arrays = plan_arrays(&scope, fsite, &mut notes)?;
    let (kernel_text, reductions) = kernel_names_and_reductions(&scope, &mut arrays, body.text)?;
    let scalars = plan_scalars(&scope, &mapping.nest, &mut arrays)?;

    let mut plan = KernelPlan {
        loop_id: report.id.clone(),
        loop_span: outer_site.span,
        function: report.function.clone(),
        file: PathBuf::new(),
        first_line: 0,
        last_line: 0,
        verdict: report.verdict,
        forced_reasons,
        nest: mapping.nest,
        x: mapping.x,
        y: mapping.y,
        block: opts.block,
        swap_bounds: opts.debug.swap_bounds,
        arrays,
        scalars,
        derived: Vec::new(),
        locals: Vec::new(),
        body: kernel_text,
        body_from_source: body.from_source,
        body_indent: body.indent,
        outliving: body.outliving,
        device_prototypes: Vec::new(),
        device_functions: Vec::new(),
        type_decls: Vec::new(),
        system_type_decls: Vec::new(),
        staged: Vec::new(),
        notes,
        kernel_name: String::new(),
        host_name: String::new(),
        host_params: Vec::new(),
        kernel_args: Vec::new(),
        original_lines: Vec::new(),
        reductions,
    };
    let line = report.line;
    plan.kernel_name = format!("{}_L{line}_kernel", report.function);
    plan.host_name = format!("{}_L{line}_gpu", report.function);
    locate(unit, outer_site, &mut plan);
    finish_plan(&scope, fsite, outer_site, &mut plan)?;
    Ok(plan)
}

/// A reduction the kernel generates, as [`reduce::check`] accepts it.
type CheckedReduction = (advisor::model::Reduction, reduce::RedOp, reduce::NumClass);

/// What every phase of a kernel's plan reads: the program, the loop's report (its globals
/// passed by value, its nested arrays named by their locals), the options and the
/// reductions the kernel generates.
struct Scope<'s, 'u> {
    unit: &'u Unit,
    reports: &'u [LoopReport],
    report: &'s LoopReport,
    opts: &'s EmitOptions,
    ctx: &'s Ctx<'u>,
    checked: &'s [CheckedReduction],
}

impl Scope<'_, '_> {
    /// The refusal of this loop's kernel: `message` after the loop's id.
    fn refuse(&self, message: String) -> EmitError {
        refusal(self.report, message)
    }

    /// Whether `name` is a scalar reduction's variable, or an arg-min/arg-max's (the
    /// extremum or a partner).
    fn is_scalar_reduction(&self, name: &str) -> bool {
        self.checked.iter().any(|(r, _, _)| match r.kind {
            ReductionKind::Scalar => r.target == name,
            ReductionKind::Argmin | ReductionKind::Argmax => {
                r.target == name || r.index.iter().any(|p| p == name)
            }
            _ => false,
        })
    }
}

/// The refusal of `report`'s kernel: `message` after the loop's id.
fn refusal(report: &LoopReport, message: String) -> EmitError {
    EmitError::refused(format!("{}: {message}", report.id))
}

/// Decides whether the loop's verdict lets a kernel be emitted: a loop that is not
/// friendly is refused with its reasons, unless `--debug-force` keeps them as the
/// reasons the kernel was forced.
fn friendly_or_forced(report: &LoopReport, opts: &EmitOptions) -> Result<Vec<String>, EmitError> {
    if report.verdict == Verdict::Friendly {
        return Ok(Vec::new());
    }
    let reasons = verdict_reasons(report);
    if opts.debug.force {
        return Ok(reasons);
    }
    let mut msg = format!(
        "loop {} is not friendly (verdict: {}); warpwise only emits kernels for friendly loops",
        report.id,
        report.verdict.as_str()
    );
    for r in &reasons {
        msg.push_str(&format!("\n  {r}"));
    }
    if report.verdict == Verdict::NeedsProfile {
        msg.push_str("\n  help: run `warpwise profile` and pass the profile with `--profile FILE`");
    }
    if !report.reductions.is_empty() {
        msg.push_str(&format!(
            "\n  note: its reductions ({}) are not what stops it: emit generates them in a friendly loop",
            reduction_list(report)
        ));
    }
    Err(EmitError::refused(msg))
}

/// Decides which reductions the kernel generates.
fn checked_reductions(
    report: &LoopReport,
    opts: &EmitOptions,
    forced_reasons: &mut Vec<String>,
) -> Result<Vec<CheckedReduction>, EmitError> {
    // A friendly loop with reductions needs a reduction kernel; a plain kernel
    // would race on the accumulators. `--debug-force` lets unsupported ones through as
    // plain code, which races.
    match reduce::check(report) {
        Ok(c) => Ok(c),
        Err(e) if !opts.debug.force => Err(e),
        Err(e) => {
            forced_reasons.push(e.message);
            Ok(Vec::new())
        }
    }
}

/// Refuses a loop with an error path.
fn refuse_error_path(report: &LoopReport) -> Result<(), EmitError> {
    // The flag and the host's re-run of the failing iteration are written for OpenMP only.
    if let Some(e) = report.error_paths.first() {
        return Err(refusal(report, format!(
            "the loop has an error path (`{}` at line {}, in the branch of the `if` at line {}): CUDA emission does not write the device error flag and the host's re-run of the failing iteration; port it with `--target openmp`, which does, or by hand as the recipe's error path step says",
            e.ends_with, e.line, e.condition_line
        )));
    }
    Ok(())
}

/// The report the kernel is planned from: its arithmetic globals passed by value, then
/// its nested arrays named by the locals that hold them; `None` when neither changes it.
fn passed_report(ctx: &Ctx<'_>, report: &LoopReport) -> Option<LoopReport> {
    let by_value = globals_by_value(ctx, report);
    let by_local = arrays_by_local(ctx, by_value.as_ref().unwrap_or(report));
    let so_far = by_local.or(by_value);
    let by_copy = arrays_by_copy(ctx, so_far.as_ref().unwrap_or(report));
    by_copy.or(so_far)
}

/// The report with each array the loop's text reaches through a copy of its pointer
/// (`const float *xs = x;` before the loop, which the IR drops: the report names `x`, the
/// text `xs[i]`) named by that copy, as the OpenMP port maps it: the kernel's buffer is
/// what the body indexes. `None` when there is none.
fn arrays_by_copy(ctx: &Ctx<'_>, report: &LoopReport) -> Option<LoopReport> {
    let site = ctx.loop_site(&report.id)?;
    let aliases =
        crate::text_aliases::text_aliases(&ctx.sites, site, report, &|n| ctx.is_pointer(n));
    let mut out = report.clone();
    let mut renamed = false;
    for p in out.parameters.iter_mut() {
        if p.kind == ParamKind::Scalar || p.nested {
            continue;
        }
        if let Some(alias) = aliases.get(&p.name) {
            if !report.parameters.iter().any(|q| &q.name == alias) {
                p.name = alias.clone();
                renamed = true;
            }
        }
    }
    renamed.then_some(out)
}

/// Refuses what the loop uses that a kernel cannot take: globals other than fixed arrays
/// and read scalars, scalars it computes for after the loop, pointers or arrays without a
/// known section, lastprivate variables and calls with no device version.
fn check_loop_uses(scope: &Scope<'_, '_>) -> Result<(), EmitError> {
    let (ctx, report) = (scope.ctx, scope.report);
    // A global array is copied like an array argument: the host function names the global
    // where the loop was, and the kernel takes a pointer to its first element (to its
    // first row for arrays of arrays of fixed extents). Other globals (structs, scalars the
    // loop writes) are not generated yet; scalars it only reads are passed by value.
    for p in report.parameters.iter().filter(|p| p.storage.is_some()) {
        let global = ctx.globals.get(&p.name).copied();
        let supported = global.is_some_and(|t| match ctx.types.get(t) {
            Type::Array { .. } => fixed_rows(ctx, t).is_some(),
            _ => p.kind == ParamKind::Scalar && p.role == Role::In,
        });
        if !supported {
            return Err(scope.refuse(format!(
                "the loop uses the global `{}` ({}): globals other than arrays of fixed extents and scalars it only reads are not generated yet",
                p.name,
                global
                    .map(|t| ctx.display(t))
                    .unwrap_or_else(|| p.type_text().to_string())
            )));
        }
    }
    for p in &report.parameters {
        if p.kind == ParamKind::Scalar && p.role != Role::In && !scope.is_scalar_reduction(&p.name)
        {
            return Err(scope.refuse(format!(
                "`{}` is computed in the loop and used after it; a kernel does not return it",
                p.name
            )));
        }
        let pointer = p
            .c_type
            .as_deref()
            .is_some_and(|t| t.contains('*') || t.contains('['));
        if p.kind == ParamKind::Scalar && pointer {
            let calls: Vec<&str> = report.calls.iter().map(|c| c.name.as_str()).collect();
            return Err(scope.refuse(format!(
                "pointer `{}` ({}) is used without a known section{}; warpwise cannot tell which bytes to copy",
                p.name,
                p.type_text(),
                if calls.is_empty() {
                    String::new()
                } else {
                    format!(" (passed to `{}`)", calls.join("`, `"))
                }
            )));
        }
        if p.kind == ParamKind::Reached {
            return Err(scope.refuse(format!(
                "{} is not one array but every object reached by following pointers: it needs a deep copy or memory the device shares (`cudaMallocManaged`), which warpwise does not generate",
                p.name
            )));
        }
        if p.kind != ParamKind::Scalar && p.bytes.is_none() && whole_object(ctx, p).is_none() {
            return Err(scope.refuse(format!(
                "the section of `{}` is unknown statically{}",
                p.name,
                p.notes
                    .first()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )));
        }
    }
    if let Some(p) = report.private.iter().find(|p| p.last_value) {
        return Err(scope.refuse(format!(
            "`{}` is lastprivate (its last value is read after the loop): copying it out is not generated yet",
            p.name
        )));
    }
    for c in &report.calls {
        if !matches!(c.device, Device::Builtin | Device::Port) {
            return Err(scope.refuse(format!(
                "calls `{}` ({}), which has no device version",
                c.name, c.device
            )));
        }
    }
    Ok(())
}

/// Refuses a loop that calls C99 complex functions.
fn refuse_complex(scope: &Scope<'_, '_>, outer_site: &LoopSite) -> Result<(), EmitError> {
    // C99 complex numbers: the analysis reads their parts exactly, but CUDA C++ has no
    // `_Complex` nor `creal`; the kernel needs `cuDoubleComplex` or `cuda::std::complex`.
    let loop_text = &scope.ctx.text[outer_site.span.start as usize..outer_site.span.end as usize];
    if let Some(name) = identifiers(loop_text)
        .into_iter()
        .find(|n| is_complex_function(n))
    {
        return Err(scope.refuse(format!(
            "the loop calls `{name}` on a C99 `_Complex` value: CUDA has no `_Complex`; port the values to `cuDoubleComplex` (`cuCreal`, `cuCimag`) or `cuda::std::complex` by hand"
        )));
    }
    Ok(())
}

/// The loops the grid maps, outer first, and which of them are its axes.
struct Mapping<'s> {
    nest: Vec<NestLoop>,
    x: usize,
    y: Option<usize>,
    /// The loop directly inside the outer one, if any (mapped or not).
    inner_site: Option<&'s LoopSite>,
}

/// The loop variables a mapping puts on the grid's axes.
struct WantedAxes {
    /// Whether `--mapping` asked for them (else the report recommended them).
    requested: bool,
    x: String,
    y: Option<String>,
    /// Whether they name a variable other than the outer loop's.
    needs_inner: bool,
}

/// Decides the nest the grid maps and its axes: the loop alone, or with the loop directly
/// inside when the mapping (asked for or recommended) names it.
fn map_nest<'s>(
    scope: &Scope<'s, '_>,
    outer_site: &'s LoopSite,
    notes: &mut Vec<String>,
) -> Result<Mapping<'s>, EmitError> {
    let mut nest = vec![nest_loop(scope.ctx, scope.report)?];
    // The inner loop of a 2D nest: the report's, or the only loop directly inside when a
    // mapping asks for it and a profile made it friendly.
    let inner_site = perfectly_nested_child(scope.ctx, outer_site);
    let inner_report = inner_site.and_then(|site| {
        let id = scope.unit.loop_ref_at(site.keyword)?;
        scope.reports.iter().find(|r| r.id == id)
    });
    let wanted = wanted_axes(scope, &nest[0].var)?;
    let use_inner =
        wanted.needs_inner && add_inner_loop(scope, inner_report, &wanted, &mut nest, notes)?;
    let (x, y) = grid_axes(scope, &wanted, use_inner, &mut nest)?;
    Ok(Mapping {
        nest,
        x,
        y,
        inner_site,
    })
}

/// Decides the loop `r` as one level of the nest: its variable, its type and its bounds
/// in the host function's terms.
fn nest_loop(ctx: &Ctx<'_>, r: &LoopReport) -> Result<NestLoop, EmitError> {
    let ind = r
        .induction
        .as_ref()
        .ok_or_else(|| EmitError::refused(format!("{}: the loop is not normalizable", r.id)))?;
    let var_type = ctx
        .type_of(&ind.var)
        .map(|t| ctx.display(t))
        .unwrap_or_else(|| "long long".into());
    Ok(NestLoop {
        id: r.id.clone(),
        var: ind.var.clone(),
        var_type,
        lower: dealias(ctx, r, &ind.lower),
        upper: dealias(ctx, r, &ind.upper),
        step: dealias(ctx, r, &ind.step),
        trip: dealias(ctx, r, &ind.trip_count),
    })
}

/// Decides which loop variables the mapping puts on x and y: `--mapping`'s, else the
/// report's recommended mapping, else the outer loop's variable alone.
fn wanted_axes(scope: &Scope<'_, '_>, outer_var: &str) -> Result<WantedAxes, EmitError> {
    let requested = match &scope.opts.mapping {
        Some(m) => Some(parse_mapping(m)?),
        None => None,
    };
    let recommended = scope
        .report
        .recommended_mapping
        .as_ref()
        .map(|m| (m.x.clone(), m.y.clone()));
    let (x, y) = match (&requested, &recommended) {
        (Some(r), _) => r.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => (outer_var.to_string(), None),
    };
    let wants_inner = |v: &str| v != outer_var;
    let needs_inner = wants_inner(&x) || y.as_deref().is_some_and(wants_inner);
    Ok(WantedAxes {
        requested: requested.is_some(),
        x,
        y,
        needs_inner,
    })
}

/// Decides whether the inner loop the mapping wants joins the nest (it is pushed onto
/// `nest`): not when it is missing, unfriendly or triangular, which a requested mapping
/// refuses and a recommended one notes.
fn add_inner_loop(
    scope: &Scope<'_, '_>,
    inner_report: Option<&LoopReport>,
    wanted: &WantedAxes,
    nest: &mut Vec<NestLoop>,
    notes: &mut Vec<String>,
) -> Result<bool, EmitError> {
    let outer_var = nest[0].var.clone();
    let wants_inner = |v: &str| v != outer_var;
    match inner_report {
        Some(inner)
            if (scope.report.nest.len() == 2 || inner.verdict == Verdict::Friendly)
                && inner.induction.is_some() =>
        {
            let l = nest_loop(scope.ctx, inner)?;
            let depends = [&l.lower, &l.upper, &l.step, &l.trip]
                .iter()
                .any(|e| expr_roots(e).contains(&outer_var));
            if depends {
                let why = format!(
                    "the bounds of loop {} depend on `{}` (a triangular nest)",
                    l.id, outer_var
                );
                if wanted.requested {
                    return Err(scope.refuse(format!("cannot map both loops: {why}")));
                }
                notes.push(format!("mapping the outer loop only: {why}"));
                Ok(false)
            } else {
                nest.push(l);
                Ok(true)
            }
        }
        _ => {
            let why = match inner_report {
                Some(inner) => format!("loop {} is {}", inner.id, inner.verdict.as_str()),
                None => "there is no loop directly inside".to_string(),
            };
            if wanted.requested {
                return Err(EmitError::usage(format!(
                    "`--mapping {}`: {} cannot be mapped to the grid: {why}",
                    scope.opts.mapping.as_deref().unwrap_or(""),
                    if wants_inner(&wanted.x) {
                        &wanted.x
                    } else {
                        wanted.y.as_deref().unwrap_or("")
                    }
                )));
            }
            notes.push(format!(
                "the recommended mapping {{x: {}{}}} needs the inner loop, but {why}; mapping {{x: {}}}",
                wanted.x,
                wanted.y.as_ref().map(|y| format!(", y: {y}")).unwrap_or_default(),
                outer_var
            ));
            Ok(false)
        }
    }
}

/// Decides the grid's axes as positions in the nest, and drops an inner loop that a 1D
/// mapping leaves out.
fn grid_axes(
    scope: &Scope<'_, '_>,
    wanted: &WantedAxes,
    use_inner: bool,
    nest: &mut Vec<NestLoop>,
) -> Result<(usize, Option<usize>), EmitError> {
    let index_of = |v: &str| nest.iter().position(|l| l.var == v);
    let (x, y) = if use_inner || !wanted.needs_inner {
        let want_x = &wanted.x;
        let x = index_of(want_x)
            .ok_or_else(|| EmitError::usage(format!("`{want_x}` is not a variable of the nest")))?;
        let y =
            match &wanted.y {
                Some(v) => Some(index_of(v).ok_or_else(|| {
                    EmitError::usage(format!("`{v}` is not a variable of the nest"))
                })?),
                None => None,
            };
        if y == Some(x) {
            return Err(EmitError::usage("x and y name the same loop".to_string()));
        }
        (x, y)
    } else {
        (0, None)
    };
    if nest.len() == 2 && y.is_none() {
        if x == 1 {
            return Err(EmitError::usage(format!(
                "mapping only the inner loop `{}` to the grid is not supported; map the outer loop or both",
                nest[1].var
            )));
        }
        nest.truncate(1);
    }
    if scope.opts.debug.swap_bounds && y.is_none() {
        return Err(EmitError::usage(
            "--debug-swap-bounds needs a 2D mapping".to_string(),
        ));
    }
    Ok((x, y))
}

/// The kernel's body as taken from the program, and the loop variables that live on
/// after the loop.
struct KernelBody {
    text: String,
    from_source: bool,
    indent: usize,
    outliving: Vec<String>,
}

/// Decides the kernel's body: the mapped loop's text with its counters computed from the
/// index, and which loop variables outlive the loop.
fn kernel_body(
    scope: &Scope<'_, '_>,
    outer_site: &LoopSite,
    mapping: &Mapping<'_>,
    notes: &mut Vec<String>,
) -> Result<KernelBody, EmitError> {
    let ctx = scope.ctx;
    let nest = &mapping.nest;
    let inner_site = mapping.inner_site;
    // The body: the inner loop's for a 2D mapping.
    let body_site = if nest.len() == 2 {
        inner_site.ok_or_else(|| scope.refuse("the inner loop's text was not found".into()))?
    } else {
        outer_site
    };
    let (body, from_source, indent) = source_text(ctx, body_site.body);
    let text = counters_from_index(scope, outer_site, nest.len(), body, notes)?;
    // Loop variables declared outside their `for` live on after the loop.
    let mut outliving = Vec::new();
    for (l, site) in nest.iter().zip([Some(outer_site), inner_site]) {
        let declared_here = site
            .and_then(|s| s.header.first())
            .is_some_and(|h| declared_in(ctx.slice(*h), &l.var));
        if !declared_here {
            outliving.push(l.var.clone());
        }
    }
    // The outer loop's variable, read after the loop: the statement that gives it the
    // sequential loop's last value, for the caller to run after the host function.
    if let Some(induction) = scope.report.induction.as_ref().filter(|i| i.last_value) {
        let v = &induction.var;
        outliving.retain(|o| o != v);
        let text = counter_text(ctx, outer_site, scope.report);
        notes.push(match crate::counters::index_final(&text, induction) {
            Ok(set) => format!(
                "the program reads `{v}` after the loop, and the host function leaves it as it was: after the call, `{set}` gives the value the sequential loop leaves"
            ),
            Err(why) => format!(
                "the program reads `{v}` after the loop, and the host function leaves it as it was; its final value is not written because {why}: set it after the call"
            ),
        });
    }
    Ok(KernelBody {
        text,
        from_source,
        indent,
        outliving,
    })
}

/// Decides the body's counters: each computed from the index at the top of `body`, or
/// the loop refused where the kernel cannot.
fn counters_from_index(
    scope: &Scope<'_, '_>,
    outer_site: &LoopSite,
    nest_len: usize,
    body: String,
    notes: &mut Vec<String>,
) -> Result<String, EmitError> {
    let report = scope.report;
    // A thread runs one iteration: a counter advanced beside the index is computed from it
    // at the top of the body (`auto ww_k = k + 2 * (i - (0));`) and its update dropped.
    let Some(c) = report.counters.first() else {
        return Ok(body);
    };
    let induction = report
        .induction
        .as_ref()
        .ok_or_else(|| scope.refuse(c.refusal(report, "generate again")))?;
    if nest_len == 2 {
        return Err(scope.refuse(format!(
            "{} (the kernel's body is the inner loop's, which does not see it)",
            c.refusal(report, "generate again")
        )));
    }
    let rewrite = crate::counters::rewrite_counters(
        &counter_text(scope.ctx, outer_site, report),
        report,
        induction,
        crate::counters::Dialect::Cxx,
    )
    .map_err(|why| scope.refuse(format!("{why}; or {}", c.refusal(report, "generate again"))))?;
    if let Some(c) = report.counters.iter().find(|c| c.last_value) {
        return Err(scope.refuse(format!(
            "`{}` is read after the loop: the host function does not give it its final value yet (the OpenMP target does); {}",
            c.name,
            c.refusal(report, "generate again")
        )));
    }
    if let Some((p, _)) = rewrite.pointers.first() {
        return Err(scope.refuse(format!(
            "pointer `{p}` is advanced beside the index: the kernel does not compute its device address yet (the OpenMP target does); index the array it walks with `{}` instead",
            induction.var
        )));
    }
    let body = crate::counters::rewrite_body(&body, &rewrite).map_err(|m| scope.refuse(m))?;
    notes.push(crate::counters::note(report, induction));
    Ok(body)
}

/// Decides the kernel's arrays: one per array parameter of the report, with its section,
/// its shape and its types, widened to whole structs where nested arrays are reached.
fn plan_arrays(
    scope: &Scope<'_, '_>,
    fsite: &FunctionSite,
    notes: &mut Vec<String>,
) -> Result<Vec<ArrayParam>, EmitError> {
    let mut arrays = Vec::new();
    for p in scope
        .report
        .parameters
        .iter()
        .filter(|p| p.kind != ParamKind::Scalar)
    {
        arrays.push(array_param(scope, fsite, p, notes)?);
    }
    widen_struct_roots(scope.ctx, &mut arrays);
    for s in &scope.opts.debug.shrink {
        if !arrays.iter().any(|a| &a.name == s) {
            let names: Vec<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
            return Err(EmitError::usage(format!(
                "--debug-shrink {s}: no such array (arrays: {})",
                names.join(", ")
            )));
        }
    }
    for a in arrays.iter().filter(|a| a.nested) {
        let root = expr_roots(&a.name).into_iter().next().unwrap_or_default();
        if !arrays.iter().any(|p| !p.nested && p.name == root) {
            return Err(scope.refuse(format!(
                "`{}` is reached through `{root}`, which is not a parameter of the loop",
                a.name
            )));
        }
    }
    Ok(arrays)
}

/// Decides one array parameter: its section (the whole object when the report has
/// none), its kernel name, its shape and its element and host types.
fn array_param(
    scope: &Scope<'_, '_>,
    fsite: &FunctionSite,
    p: &advisor::model::Parameter,
    notes: &mut Vec<String>,
) -> Result<ArrayParam, EmitError> {
    let (ctx, report, opts) = (scope.ctx, scope.report, scope.opts);
    let whole;
    let bytes = match &p.bytes {
        Some(b) => b,
        None => {
            whole = whole_object(ctx, p).expect("checked above");
            notes.push(format!(
                "the section of `{}` is unknown statically; the whole array, {} bytes, is copied",
                p.name, whole.size
            ));
            &whole
        }
    };
    let ir_type = if p.nested { None } else { ctx.type_of(&p.name) };
    let is_object = ir_type.is_some_and(|t| matches!(ctx.types.get(t), Type::Record(_)));
    let c_type = match (&p.c_type, ir_type) {
        (Some(t), _) => t.clone(),
        (None, Some(t)) => ctx.display(t),
        (None, None) => return Err(scope.refuse(format!("the type of `{}` is unknown", p.name))),
    };
    let (shape, elem_type, host_type) = array_shape(scope, fsite, p, &c_type, ir_type, is_object)?;
    let shrink = opts.debug.shrink.iter().any(|s| s == &p.name);
    let elem_bytes = p.elem_bytes.unwrap_or(1).max(1);
    Ok(ArrayParam {
        name: p.name.clone(),
        ident: if p.nested || p.name.contains(['.', '-']) {
            flat_name(&p.name)
        } else {
            cxx_name(&p.name)
        },
        role: p.role,
        kind: p.kind,
        nested: p.nested,
        elem_type: cxx_type(&elem_type),
        host_type: cxx_type(&host_type),
        elem_bytes,
        shape,
        lo: dealias(ctx, report, &bytes.lo),
        hi: if shrink {
            format!("({}) - {elem_bytes}", dealias(ctx, report, &bytes.hi))
        } else {
            dealias(ctx, report, &bytes.hi)
        },
        reported_hi: shrink.then(|| dealias(ctx, report, &bytes.hi)),
        in_kernel: true,
        object_bytes: if is_object {
            ir_type.and_then(|t| ctx.types.size_of(t))
        } else {
            None
        },
    })
}

/// Decides an array's shape (an object, rows of fixed or variable length, or a
/// pointer), its element type and the type the host function takes it as.
fn array_shape(
    scope: &Scope<'_, '_>,
    fsite: &FunctionSite,
    p: &advisor::model::Parameter,
    c_type: &str,
    ir_type: Option<TypeId>,
    is_object: bool,
) -> Result<(Shape, String, String), EmitError> {
    let ctx = scope.ctx;
    // A global or local array of arrays (`int hist[8][2]`): its declared extents, not
    // the report's text; the host function takes a pointer to its rows.
    let global_rows = p
        .storage
        .as_ref()
        .and_then(|_| ctx.globals.get(&p.name))
        .or(ir_type.as_ref())
        .and_then(|t| fixed_rows(ctx, *t))
        .filter(|(_, dims)| !dims.is_empty());
    Ok(if is_object {
        let t = c_type.trim().trim_end_matches('*').trim().to_string();
        (Shape::Object, t.clone(), t)
    } else if let Some((elem, dims)) = global_rows {
        let host = format!("{elem} (*){}", extents(&dims));
        (Shape::FixedRows { dims }, elem, host)
    } else if let Some(i) = c_type.find("(*)") {
        let elem = c_type[..i].trim().to_string();
        let dims = &c_type[i + 3..];
        let groups: Vec<&str> = dims
            .split(']')
            .filter_map(|g| g.trim().strip_prefix('['))
            .collect();
        let fixed: Option<Vec<u64>> = groups.iter().map(|g| g.trim().parse().ok()).collect();
        match fixed {
            Some(dims) if !dims.is_empty() => (Shape::FixedRows { dims }, elem, c_type.to_string()),
            _ if groups.len() == 1 => {
                let pitch = vla_pitch(ctx, fsite, &p.name).ok_or_else(|| {
                    scope.refuse(format!(
                        "cannot find the declaration of the variable-length array `{}`",
                        p.name
                    ))
                })?;
                (Shape::Rows { pitch }, elem, "void *".into())
            }
            _ => {
                return Err(scope.refuse(format!(
                    "`{}` has type `{c_type}`; a variable-length array with more than one extent after the first is not generated yet",
                    p.name
                )))
            }
        }
    } else {
        let t = c_type.trim();
        let elem = match ir_type.map(|t| ctx.types.get(t)) {
            Some(Type::Array { elem, .. }) => ctx.display(*elem),
            _ => pointee(t),
        };
        let host = if t.contains('*') {
            t.to_string()
        } else {
            format!("{elem} *")
        };
        (Shape::Pointer, elem, host)
    })
}

/// Decides the kernel's spelling of the body (nested pointers flattened, C++-safe names)
/// and its reductions; marks the arrays the body uses.
fn kernel_names_and_reductions(
    scope: &Scope<'_, '_>,
    arrays: &mut [ArrayParam],
    mut body: String,
) -> Result<(String, Vec<reduce::Planned>), EmitError> {
    let ctx = scope.ctx;
    // Nested pointers become kernel parameters of their own.
    let patterns: Vec<(Vec<String>, String)> = arrays
        .iter()
        .filter(|a| a.name.contains(['.', '-']))
        .map(|a| (name_tokens(&a.name), a.ident.clone()))
        .collect();
    if !patterns.is_empty() {
        body = replace_sequences(&body, &patterns).0;
    }
    body = cxx_safe(&body);
    // The kernel's spelling of a report expression: nested pointers flattened as in the body.
    let kernel_names = |e: &str| {
        let e = if patterns.is_empty() {
            e.to_string()
        } else {
            replace_sequences(e, &patterns).0
        };
        cxx_safe(&e)
    };
    let variable_type = |name: &str| ctx.type_of(name).map(|t| ctx.display(t));
    let reductions = reduce::plan_body(
        &scope.report.id,
        scope.checked,
        &mut body,
        &kernel_names,
        &variable_type,
    )?;
    let body_ids = identifiers(&body);
    for a in arrays.iter_mut() {
        a.in_kernel = body_ids.contains(&a.ident);
    }
    Ok((body, reductions))
}

/// Decides the kernel's scalars: the report's inbound ones, then the variables the
/// bounds and sections name (arrays they index join `arrays`, host side only).
fn plan_scalars(
    scope: &Scope<'_, '_>,
    nest: &[NestLoop],
    arrays: &mut Vec<ArrayParam>,
) -> Result<Vec<ScalarParam>, EmitError> {
    let (ctx, report) = (scope.ctx, scope.report);
    if let Some(p) = report
        .parameters
        .iter()
        .find(|p| p.kind == ParamKind::Scalar && p.c_type.is_none())
    {
        return Err(scope.refuse(format!("the type of `{}` is unknown", p.name)));
    }
    // Scalars: the report's inbound ones, then variables the bounds and sections need.
    let array_roots: BTreeSet<String> = arrays
        .iter()
        .filter(|a| !a.nested)
        .map(|a| a.name.clone())
        .collect();
    let mut scalars: Vec<ScalarParam> = report
        .parameters
        .iter()
        .filter(|p| p.kind == ParamKind::Scalar && !scope.is_scalar_reduction(&p.name))
        .map(|p| ScalarParam {
            name: p.name.clone(),
            ident: cxx_name(&p.name),
            c_type: cxx_type(p.type_text()),
            extra: false,
            in_kernel: false,
        })
        .collect();
    let mut needed: Vec<String> = Vec::new();
    for l in nest {
        needed.extend([l.lower.clone(), l.step.clone(), l.trip.clone()]);
    }
    for a in arrays.iter() {
        needed.extend([a.lo.clone(), a.hi.clone()]);
        if let Shape::Rows { pitch } = &a.shape {
            needed.push(pitch.clone());
        }
    }
    let nest_vars: BTreeSet<String> = nest.iter().map(|l| l.var.clone()).collect();
    for e in &needed {
        for root in expr_roots(e) {
            if array_roots.contains(&root)
                || scalars.iter().any(|s| s.name == root)
                || root == "block"
                || root == "blockDim"
            {
                continue;
            }
            let Some(t) = ctx.type_of(&root) else {
                // The host function computes trip counts and sections from its parameters
                // alone; the program's functions are not in the generated file.
                if ctx.return_type(&root).is_some() {
                    return Err(scope.refuse(format!(
                        "the expression `{e}` calls `{root}`, which the generated host function cannot: copy the value into a local before the loop"
                    )));
                }
                return Err(scope.refuse(format!(
                    "the expression `{e}` names `{root}`, which is not a variable of `{}`",
                    report.function
                )));
            };
            // An array the expressions index (`mesh[0] * mesh[1]` of a local `int mesh[3]`)
            // is not a value: the host function takes it as a pointer (the replay gets
            // its bytes), and the kernel gets the elements as values (`ww_mesh_0`).
            if let Some(host_only) = host_only_array(ctx, &root, t) {
                if !arrays.iter().any(|a| a.name == root) {
                    arrays.push(host_only);
                }
                continue;
            }
            scalars.push(ScalarParam {
                name: root.clone(),
                ident: cxx_name(&root),
                c_type: cxx_type(&ctx.display(t)),
                extra: true,
                in_kernel: false,
            });
        }
    }
    if let Some(v) = scalars.iter().find(|s| nest_vars.contains(&s.name)) {
        return Err(scope.refuse(format!(
            "the loop's bounds or sections use its own variable `{}`",
            v.name
        )));
    }
    Ok(scalars)
}

/// Decides where the loop is in the user's file: its file, its lines and their text.
fn locate(unit: &Unit, outer_site: &LoopSite, plan: &mut KernelPlan) {
    let start = unit.resolve(outer_site.span);
    let end = unit.resolve(Span::new(
        outer_site.span.end.saturating_sub(1) as usize,
        outer_site.span.end as usize,
    ));
    if let (Some(s), Some(e)) = (start, end) {
        plan.file = s.path.clone();
        plan.first_line = s.line;
        plan.last_line = e.line.max(s.line);
        let map = &unit.preprocessed.source_map;
        let loc = map.locate(outer_site.span.start as usize);
        plan.original_lines = (s.line..=plan.last_line)
            .filter_map(|l| map.line_text(loc.file, l).map(str::to_string))
            .collect();
    }
}

/// Decides what the kernel needs beyond its parameters: staged shared memory, the
/// scalars its expressions read, its locals, device functions and type declarations, and
/// the host function's parameters and the kernel's arguments.
fn finish_plan(
    scope: &Scope<'_, '_>,
    fsite: &FunctionSite,
    outer_site: &LoopSite,
    plan: &mut KernelPlan,
) -> Result<(), EmitError> {
    let ctx = scope.ctx;
    if scope.opts.shared {
        stage(scope.report, plan);
    }
    // Kernel-side expressions decide which scalars the kernel needs.
    finish_kernel_params(plan);
    let locals = body_locals(ctx, plan, outer_site.span)?;
    plan.locals = locals.declared;
    plan.scalars.extend(locals.read_only);
    element_addresses_are_fixed(plan)?;
    arg_reductions_number_the_outer_loop(plan)?;
    device_code(ctx, scope.report, plan)?;
    plan.type_decls = type_decls(ctx, fsite, outer_site.span.start);
    let device_text = format!("{}\n{}", plan.device_functions.join("\n"), plan.body);
    plan.system_type_decls = system_type_decls(ctx, &plan.type_decls, &device_text);
    plan.host_params = host_params(plan);
    plan.kernel_args = kernel_args(plan);
    Ok(())
}

/// The loop at `site` as the counters' rewrite reads it: its text, and which of `report`'s
/// counters are pointers or shadowed by a declaration inside the loop.
pub(crate) fn counter_text<'a>(
    ctx: &'a Ctx<'_>,
    site: &LoopSite,
    report: &LoopReport,
) -> crate::counters::LoopText<'a> {
    let names = || report.counters.iter().map(|c| c.name.clone());
    let pointer = |name: &str| {
        ctx.type_of(name)
            .is_some_and(|t| matches!(ctx.types.get(t), Type::Pointer { .. }))
    };
    let shadowed = |name: &str| {
        ctx.sites.accesses.iter().any(|a| {
            a.span.start >= site.span.start
                && a.span.end <= site.span.end
                && a.variable.as_ref().is_some_and(|v| {
                    v.name == name && v.local_decl.is_some_and(|d| d >= site.span.start)
                })
        })
    };
    crate::counters::LoopText {
        stmt: ctx.slice(site.span),
        body: ctx.slice(site.body),
        pointers: names().filter(|n| pointer(n)).collect(),
        shadowed: names().filter(|n| shadowed(n)).collect(),
        start: None,
    }
}

/// The report names a variable that two declarations share `i_2` when it is ambiguous in
/// the function; at the loop only one `i` is in scope, the loop's inbound scalar.
pub(crate) fn dealias(ctx: &Ctx<'_>, report: &LoopReport, expr: &str) -> String {
    let mut patterns = Vec::new();
    for root in expr_roots(expr) {
        if ctx.type_of(&root).is_some() {
            continue;
        }
        let Some((base, n)) = root.rsplit_once('_') else {
            continue;
        };
        let inbound = report
            .parameters
            .iter()
            .any(|p| p.kind == ParamKind::Scalar && p.name == base);
        if inbound && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            patterns.push((vec![root.clone()], base.to_string()));
        }
    }
    patterns.extend(loaded_locals(ctx.func));
    if patterns.is_empty() {
        expr.to_string()
    } else {
        replace_sequences(expr, &patterns).0
    }
}

/// Member paths a local holds: `N = NV_LENGTH_OMP(x)` makes `N` the value of the only load
/// of `((N_VectorContent_OpenMP)(x->content))->length`, which reports name by its path
/// (`x->content->length`, without the cast the printer drops, so not valid C by itself).
/// Used only when that load is the function's only one of the path and `N` is assigned
/// nowhere else (its other SSA values are merges of that one), so `N` has that value
/// wherever the report's expression is evaluated.
fn loaded_locals(func: &Function) -> Vec<(Vec<String>, String)> {
    loaded_locals_with(func, false)
}

/// [`loaded_locals`], or with `ignore_constants` also locals given a constant elsewhere
/// (`xd = yd = zd = NULL;` at the top of the function, the load later): only for
/// [`arrays_by_local`], where the report itself shows that the loop's accesses go through
/// the load (it names the array by the load's path; through a merge with NULL it would
/// name something else).
fn loaded_locals_with(func: &Function, ignore_constants: bool) -> Vec<(Vec<String>, String)> {
    use frontend::ir::InstKind;
    // A constant, or a constant cast to the local's type (`NULL`: `(double *)(void *)0`).
    let constant = |mut v: frontend::ir::Value| {
        if !ignore_constants {
            return false;
        }
        for _ in 0..4 {
            match func.inst(v).kind {
                InstKind::Const(_) => return true,
                InstKind::Cast(c) => v = c,
                _ => return false,
            }
        }
        false
    };
    let mut by_path: HashMap<String, Vec<frontend::ir::Value>> = HashMap::new();
    for v in func.values() {
        if matches!(func.inst(v).kind, InstKind::Load { .. }) {
            let path = frontend::ir::print::render_value(func, v);
            if path.contains("->") || path.contains('.') {
                by_path.entry(path).or_default().push(v);
            }
        }
    }
    let mut out = Vec::new();
    for (path, loads) in by_path {
        let [load] = loads.as_slice() else { continue };
        let Some(local) = func.inst(*load).origin.var_name.clone() else {
            continue;
        };
        // Every SSA value of `local` is the load or a merge of such values.
        let mut values: HashSet<frontend::ir::Value> = HashSet::from([*load]);
        let named: Vec<frontend::ir::Value> = func
            .values()
            .filter(|v| func.inst(*v).origin.var_name.as_deref() == Some(local.as_str()))
            .filter(|v| !constant(*v))
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for v in &named {
                if values.contains(v) {
                    continue;
                }
                if let InstKind::Phi(args) = &func.inst(*v).kind {
                    if args
                        .iter()
                        .all(|(_, a)| values.contains(a) || a == v || constant(*a))
                    {
                        values.insert(*v);
                        changed = true;
                    }
                }
            }
        }
        if named.iter().all(|v| values.contains(v)) {
            let tokens = super::ctext::code_tokens(&path)
                .iter()
                .map(|t| super::ctext::tok_text(&path, t).to_string())
                .collect();
            out.push((tokens, local));
        }
    }
    out.sort();
    out
}

/// The loop directly and solely inside `outer`: `for (...) { for (...) ... }`.
pub(crate) fn perfectly_nested_child<'a>(
    ctx: &'a Ctx<'_>,
    outer: &LoopSite,
) -> Option<&'a LoopSite> {
    let outer_index = ctx
        .sites
        .loops
        .iter()
        .position(|l| l.keyword == outer.keyword)?;
    let children: Vec<&LoopSite> = ctx
        .sites
        .loops
        .iter()
        .filter(|l| l.parent == Some(outer_index))
        .collect();
    let [child] = children.as_slice() else {
        return None;
    };
    let body = token_strings(ctx.slice(outer.body));
    let inner = token_strings(ctx.slice(child.span));
    let braced = body.len() == inner.len() + 2
        && body.first() == Some(&"{")
        && body.last() == Some(&"}")
        && body[1..body.len() - 1] == inner[..];
    (body == inner || braced).then_some(*child)
}

/// The text of a span: the user's source when it has the same tokens as the preprocessed
/// text (comments and layout kept), else the preprocessed text (macros expanded).
fn source_text(ctx: &Ctx<'_>, span: Span) -> (String, bool, usize) {
    let pre = strip_line_markers(ctx.slice(span));
    let map = &ctx.unit.preprocessed.source_map;
    let start = map.locate(span.start as usize);
    let end = map.locate(span.end.saturating_sub(1) as usize);
    if start.file == end.file && end.line >= start.line {
        let mut lines: Vec<String> = Vec::new();
        for l in start.line..=end.line {
            match map.line_text(start.file, l) {
                Some(t) => lines.push(t.to_string()),
                None => return (pre, false, 0),
            }
        }
        if let Some(last) = lines.last_mut() {
            let cut = (end.col as usize).min(last.len());
            if last.is_char_boundary(cut) {
                last.truncate(cut);
            }
        }
        let mut indent = 0;
        if let Some(first) = lines.first_mut() {
            indent = first.len() - first.trim_start().len();
            let cut = (start.col as usize).saturating_sub(1).min(first.len());
            if first.is_char_boundary(cut) {
                *first = first[cut..].to_string();
            }
        }
        let user = lines.join("\n");
        if token_strings(&user) == token_strings(&pre) {
            return (user, true, indent);
        }
    }
    let indent = ctx.text[..span.start as usize]
        .rsplit('\n')
        .next()
        .map(|l| l.len() - l.trim_start().len())
        .unwrap_or(0);
    (pre, false, indent)
}

/// The row pitch (elements) of a variable-length array `name` of the function `fsite`: the
/// length of its rows as its declaration writes it (`n + 1` of `double A[n][n + 1]` or of
/// `double (*A)[n + 1]`), from the type lowering gave it. `None` unless its rows are one
/// dimension deep.
pub(crate) fn vla_pitch(ctx: &Ctx<'_>, fsite: &FunctionSite, name: &str) -> Option<String> {
    let ty = ctx.type_of(name)?;
    let types = ctx.types;
    let row = match types.get(ty) {
        Type::Pointer { pointee, .. } => *pointee,
        Type::Array { elem, .. } => *elem,
        _ => return None,
    };
    let Type::Array { elem, len } = types.get(row) else {
        return None;
    };
    if matches!(types.get(*elem), Type::Array { .. }) {
        return None;
    }
    let written = match len {
        ArrayLen::Fixed(n) => return Some(n.to_string()),
        ArrayLen::Variable(tag) => types.vla_length_bytes(*tag)?,
        ArrayLen::Incomplete => return None,
    };
    // The length is read where the function is, from its parameters and locals.
    let (start, end) = (fsite.span.start as usize, fsite.span.end as usize);
    let inside = start <= written.start && written.end <= end;
    inside
        .then(|| ctx.text.get(written))
        .flatten()
        .map(|t| t.trim().to_string())
}

/// Rewrites a report expression for the kernel: `block.x` is the block's first normalized
/// index, scalars the kernel gets stay, anything else (a struct field) becomes a value the
/// host computes. `wide`: every reference converted to `long long`.
pub(crate) fn kernel_expr(plan: &mut KernelPlan, expr: &str, wide: bool) -> String {
    let derived = std::cell::RefCell::new(std::mem::take(&mut plan.derived));
    let scalars: BTreeSet<String> = plan.scalars.iter().map(|s| s.name.clone()).collect();
    let rename = |chain: &str| -> Option<String> {
        let root = chain.split(['.', '-']).next().unwrap_or(chain).trim();
        if chain == "block.x" {
            return Some("ww_first_x".into());
        }
        if chain == "block.y" {
            return Some("ww_first_y".into());
        }
        if root == "blockDim" || (scalars.contains(chain) && chain == root) {
            return Some(cxx_name(chain));
        }
        let ident = format!("ww_{}", flat_name(chain));
        let mut derived = derived.borrow_mut();
        if !derived.iter().any(|d: &Derived| d.ident == ident) {
            derived.push(Derived {
                ident: ident.clone(),
                expr: chain.to_string(),
            });
        }
        Some(ident)
    };
    let out = if wide {
        to_wide(expr, ("ww_min", "ww_max"), &rename)
    } else {
        narrow(expr, &rename)
    };
    plan.derived = derived.into_inner();
    out
}

/// A report expression with references renamed but no conversions (for readable
/// induction-variable formulas).
fn narrow(expr: &str, rename: &dyn Fn(&str) -> Option<String>) -> String {
    rewrite_expr(expr, ("ww_min", "ww_max"), rename, false)
}

/// Which scalars and arrays the kernel takes, from the body and the kernel's expressions.
fn finish_kernel_params(plan: &mut KernelPlan) {
    let mut used = identifiers(&plan.body);
    let mut exprs: Vec<String> = Vec::new();
    let mapped: Vec<usize> = std::iter::once(plan.x).chain(plan.y).collect();
    for &i in &mapped {
        let l = plan.nest[i].clone();
        exprs.push(kernel_expr(plan, &l.lower, false));
        exprs.push(kernel_expr(plan, &l.step, false));
        exprs.push(kernel_expr(plan, &l.trip, true));
    }
    for s in plan.staged.clone() {
        match &s.area {
            StagedArea::Linear { lo, hi } => exprs.extend([lo.clone(), hi.clone()]),
            StagedArea::Tile {
                pitch,
                row_lo,
                rows,
                col_lo,
                row_bytes,
            } => exprs.extend([
                pitch.clone(),
                row_lo.clone(),
                rows.clone(),
                col_lo.clone(),
                row_bytes.clone(),
            ]),
        }
        exprs.push(s.bytes.clone());
        if let Some(p) = &s.rows_pitch {
            exprs.push(p.clone());
        }
    }
    // Thread 0 combines into an element after the guard: its address needs its names.
    for r in &plan.reductions {
        if let reduce::Shape::Element { address } = &r.shape {
            exprs.push(address.clone());
        }
    }
    for e in &exprs {
        used.extend(identifiers(e));
    }
    for s in &mut plan.scalars {
        s.in_kernel = used.contains(&s.ident);
    }
    for a in &mut plan.arrays {
        if used.contains(&a.ident) {
            a.in_kernel = true;
        }
    }
}

/// Locals of the function the body uses but does not declare: those it writes (a variable
/// declared before the loop and assigned in each iteration, an inner loop's counter) are
/// declared in the kernel; arithmetic scalars it only reads are returned apart, to be
/// passed by value. The report may not list the latter: a constant (`beta = 1.2` before
/// the loop) is folded into its expressions, but the body's text still names it.
fn body_locals(
    ctx: &Ctx<'_>,
    plan: &KernelPlan,
    outer_loop: Span,
) -> Result<BodyLocals, EmitError> {
    let mut taken: BTreeSet<String> = plan
        .arrays
        .iter()
        .filter(|a| a.in_kernel)
        .map(|a| a.ident.clone())
        .collect();
    taken.extend(
        plan.scalars
            .iter()
            .filter(|s| s.in_kernel)
            .map(|s| s.ident.clone()),
    );
    let mapped: BTreeSet<&str> = std::iter::once(plan.x)
        .chain(plan.y)
        .map(|i| plan.nest[i].var.as_str())
        .collect();
    // A scalar reduction's private accumulator is declared before the guard.
    taken.extend(
        plan.reductions
            .iter()
            .filter(|r| r.scalar_ident().is_some())
            .map(|r| r.private.clone()),
    );
    let mut out = BodyLocals::default();
    for id in identifiers(&plan.body) {
        if taken.contains(&id) || mapped.contains(id.as_str()) {
            continue;
        }
        // The declaration visible at the loop, else the function's variable of that name.
        let local = ctx
            .declared_at(&id, outer_loop)
            .or_else(|| ctx.locals.get(&id).copied());
        let Some(t) = local else {
            if ctx.globals.contains_key(&id) {
                return Err(EmitError::refused(format!(
                    "{}: the body uses the global variable `{id}`, which the kernel report does not list as a parameter",
                    plan.loop_id
                )));
            }
            continue;
        };
        if matches!(ctx.types.get(t), Type::Function { .. }) {
            continue;
        }
        if declared_in(&plan.body, &id) {
            continue;
        }
        // A scalar the body only reads gets its value at the loop's entry; one it writes
        // is private (the analysis called the loop friendly), so declaring it in the
        // kernel is enough.
        if ctx.types.is_arithmetic(t) && !written_in(&plan.body, &id) {
            out.read_only.push(ScalarParam {
                name: id.clone(),
                ident: cxx_name(&id),
                c_type: cxx_type(&ctx.display(t)),
                extra: true,
                in_kernel: true,
            });
            continue;
        }
        out.declared.push((cxx_type(&ctx.display(t)), id));
    }
    Ok(out)
}

/// What [`body_locals`] found.
#[derive(Default)]
struct BodyLocals {
    /// `(type, name)` declared at the kernel's top.
    declared: Vec<(String, String)>,
    /// Scalars the body only reads, passed by value.
    read_only: Vec<ScalarParam>,
}

/// True when the first use of `name` in `body` declares it (`int idx = ...`,
/// `int fx, fy;`, `unsigned char *row = ...`).
pub(crate) fn declared_in(body: &str, name: &str) -> bool {
    let toks = code_tokens(body);
    let text = |k: usize| tok_text(body, &toks[k]);
    let Some(k) = (0..toks.len())
        .find(|&k| text(k) == name && (k == 0 || !matches!(text(k - 1), "." | "->")))
    else {
        return false;
    };
    if !matches!(
        toks.get(k + 1).map(|_| text(k + 1)),
        Some("=" | ";" | "," | "[" | ")")
    ) {
        return false;
    }
    // The statement it is in starts with a type: a word followed by a word or `*`. A `(`
    // starts one only as the `for (` of a declaration in the loop's header; otherwise the
    // name is inside an expression (`(scale * u[i] + shift)`).
    let opening = (0..k)
        .rev()
        .find(|&j| matches!(text(j), ";" | "{" | "}" | "("));
    if let Some(j) = opening {
        if text(j) == "(" && (j == 0 || text(j - 1) != "for") {
            return false;
        }
    }
    let start = opening.map(|j| j + 1).unwrap_or(0);
    // Between the type and the name only declarator tokens: more names, `*`, extents and
    // earlier declarators' initializers (`int a = 1, b;`), never an operator of an
    // expression (`x + shift`).
    let declarator = |j: usize| {
        matches!(
            toks[j].kind,
            TokKind::Ident | TokKind::Number | TokKind::Literal
        ) || matches!(text(j), "*" | "," | "[" | "]" | "=")
    };
    if !(start..k).all(declarator) {
        return false;
    }
    let word = |j: usize| {
        toks[j].kind == TokKind::Ident
            && !matches!(
                text(j),
                "return" | "else" | "do" | "case" | "goto" | "sizeof"
            )
    };
    start < k && word(start) && (word(start + 1) || text(start + 1) == "*")
}

/// The C99 `<complex.h>` functions (`creal`, `cimagf`, `cabsl`, `conj`, `cexp`, ...).
fn is_complex_function(name: &str) -> bool {
    let stem = name
        .strip_suffix('f')
        .or_else(|| name.strip_suffix('l'))
        .filter(|s| COMPLEX_FUNCTIONS.contains(s))
        .unwrap_or(name);
    COMPLEX_FUNCTIONS.contains(&stem)
}

const COMPLEX_FUNCTIONS: &[&str] = &[
    "creal", "cimag", "cabs", "carg", "conj", "cproj", "cexp", "clog", "cpow", "csqrt", "csin",
    "ccos", "ctan", "casin", "cacos", "catan", "csinh", "ccosh", "ctanh", "casinh", "cacosh",
    "catanh",
];

/// `__device__` versions of the functions the loop calls (with their callees).
fn device_code(ctx: &Ctx<'_>, report: &LoopReport, plan: &mut KernelPlan) -> Result<(), EmitError> {
    let mut names: Vec<String> = Vec::new();
    for c in report.calls.iter().filter(|c| c.device == Device::Port) {
        for n in std::iter::once(&c.name).chain(c.callees.iter()) {
            // What device code already has (`sqrt`, `printf`) needs no port.
            if !names.contains(n) && !advisor::calls::is_device_available(n) {
                names.push(n.clone());
            }
        }
    }
    let program = &ctx.unit.lowered.program;
    for n in &names {
        // The kernel file declares no global on the device: a copied function naming one
        // would not compile (and a reduction it makes would bypass the kernel's accumulator).
        if let Some(g) = program.function(n).and_then(|f| {
            f.insts.iter().find_map(|i| match i.kind {
                frontend::ir::InstKind::GlobalAddr(g) => Some(program.global(g).name.clone()),
                _ => None,
            })
        }) {
            return Err(EmitError::refused(format!(
                "{}: `{n}` uses the global `{g}`: globals that a called function reaches are not generated for CUDA yet (`emit --target openmp` declares them on the device)",
                report.id
            )));
        }
        let f = ctx.function_site(n).ok_or_else(|| {
            EmitError::refused(format!(
                "{}: `{n}` needs a device version but its definition is not in this file",
                report.id
            ))
        })?;
        let header = strip_line_markers(
            ctx.text
                .get(f.span.start as usize..f.body.start as usize)
                .unwrap_or(""),
        );
        let body = strip_line_markers(ctx.slice(f.body));
        let header = cxx_safe(header.trim());
        plan.device_prototypes.push(format!("__device__ {header};"));
        plan.device_functions
            .push(format!("__device__ {header}\n{}", cxx_safe(&body)));
    }
    Ok(())
}

/// Top-level type definitions of the user's files before `before`, and the function's own
/// local ones (a local `enum { W = 64 }` the body uses).
fn type_decls(ctx: &Ctx<'_>, fsite: &FunctionSite, before: u32) -> Vec<String> {
    let system = ctx.unit.preprocessed.source_map.system_ranges();
    let in_system = |o: usize| system.iter().any(|&(a, b)| a <= o && o < b);
    let text = &ctx.text;
    let toks = code_tokens(text);
    let mut out = Vec::new();
    for (st, k) in top_level_items(text, &toks) {
        if toks[k].start >= fsite.span.start as usize {
            break;
        }
        let first = tok_text(text, &toks[st]);
        let offset = toks[st].start;
        if !in_system(offset) && is_type_item(text, &toks[st..=k], first) {
            out.push(
                strip_line_markers(&text[offset..toks[k].end])
                    .trim()
                    .to_string(),
            );
        }
    }
    // Local type definitions of the function before the loop.
    let body_toks: Vec<_> = toks
        .iter()
        .filter(|t| t.start > fsite.body.start as usize && t.end <= before as usize)
        .copied()
        .collect();
    let mut k = 0;
    while k < body_toks.len() {
        let s = tok_text(text, &body_toks[k]);
        let starts_item = k == 0 || matches!(tok_text(text, &body_toks[k - 1]), ";" | "{" | "}");
        if starts_item && matches!(s, "typedef" | "enum" | "struct" | "union") {
            let mut depth = 0;
            let mut j = k;
            while j < body_toks.len() {
                match tok_text(text, &body_toks[j]) {
                    "{" => depth += 1,
                    "}" => depth -= 1,
                    ";" if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            if j < body_toks.len() && is_type_item(text, &body_toks[k..=j], s) {
                out.push(
                    strip_line_markers(&text[body_toks[k].start..body_toks[j].end])
                        .trim()
                        .to_string(),
                );
            }
            k = j + 1;
            continue;
        }
        k += 1;
    }
    out.into_iter()
        .map(|d| cxx_safe(&sized_flexible_members(&d)))
        .collect()
}

/// A struct's flexible array member (`cs_field_t *p[];`, C99 6.7.2.1p16) as a one-element
/// array: C++, which NVRTC compiles, has no flexible members. The members before it keep
/// their offsets, which is what device code that reaches them through a pointer needs.
fn sized_flexible_members(declaration: &str) -> String {
    if !declaration.contains('{') {
        return declaration.to_string();
    }
    let mut out = String::with_capacity(declaration.len());
    let mut rest = declaration;
    while let Some(at) = rest.find("[]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        if after.trim_start().starts_with(';') {
            out.push_str("[1]");
        } else {
            out.push_str("[]");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Type items of system headers that the program's type declarations or the device code
/// (the loop's body, ported callees) name, with what they name in turn, in the headers' order: NVRTC has no C library
/// headers, so a program struct holding a `FILE *` or a body using `uint8_t` needs them
/// spelled out. At most 200 items.
fn system_type_decls(ctx: &Ctx<'_>, program: &[String], body: &str) -> Vec<String> {
    let system = ctx.unit.preprocessed.source_map.system_ranges();
    let in_system = |o: usize| system.iter().any(|&(a, b)| a <= o && o < b);
    let text = &ctx.text;
    let toks = code_tokens(text);
    // Top-level type items of system headers and the names each declares.
    let mut items: Vec<(String, BTreeSet<String>)> = Vec::new();
    for (st, k) in top_level_items(text, &toks) {
        let item = &toks[st..=k];
        let first = tok_text(text, &toks[st]);
        if in_system(toks[st].start) && is_type_item(text, item, first) {
            let names = declared_type_names(text, item);
            if !names.is_empty() {
                let source = strip_line_markers(&text[toks[st].start..toks[k].end]);
                items.push((source.trim().to_string(), names));
            }
        }
    }
    let mut wanted: Vec<String> = program
        .iter()
        .flat_map(|d| identifiers(d))
        .chain(identifiers(body))
        .collect();
    let mut taken = vec![false; items.len()];
    let mut count = 0;
    while let Some(name) = wanted.pop() {
        for (k, (source, names)) in items.iter().enumerate() {
            if !taken[k] && names.contains(&name) && count < 200 {
                taken[k] = true;
                count += 1;
                wanted.extend(identifiers(source));
            }
        }
    }
    items
        .into_iter()
        .zip(taken)
        .filter(|(_, t)| *t)
        .filter_map(|((source, names), _)| nvrtc_variant(&source, &names))
        .collect()
}

/// A system header's type item as NVRTC takes it: `va_list` is built in there, and
/// glibc's `typedef __builtin_va_list __gnuc_va_list;` names a GCC builtin NVRTC lacks, so
/// `__gnuc_va_list` becomes NVRTC's own `va_list` and `va_list` is not declared again.
fn nvrtc_variant(source: &str, names: &BTreeSet<String>) -> Option<String> {
    if names.contains("va_list") {
        return None;
    }
    if names.contains("__gnuc_va_list") {
        return Some("typedef va_list __gnuc_va_list;".to_string());
    }
    Some(cxx_safe(source))
}

/// The top-level items of a unit's text as `(first token, last token)`: declarations ending
/// in `;` and function definitions ending in their body's `}`.
fn top_level_items(text: &str, toks: &[Tok]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut item_start: Option<usize> = None;
    for (k, t) in toks.iter().enumerate() {
        let s = tok_text(text, t);
        if depth == 0 && item_start.is_none() {
            item_start = Some(k);
        }
        match s {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => depth -= 1,
            _ => {}
        }
        let ends = depth == 0 && (s == ";" || (s == "}" && is_function_body_end(text, toks, k)));
        if ends {
            if let Some(st) = item_start.take() {
                out.push((st, k));
            }
        }
    }
    out
}

/// The names a type item declares: a typedef's names (`FILE`, `uint8_t`, `handler` of
/// `typedef void (*handler)(int);`) and a struct, union or enum tag it defines.
fn declared_type_names(text: &str, item: &[Tok]) -> BTreeSet<String> {
    let word = |k: usize| item.get(k).map_or("", |t| tok_text(text, t));
    let mut names = BTreeSet::new();
    let typedef = word(0) == "typedef";
    let mut braces = 0;
    for (k, tok) in item.iter().enumerate() {
        match word(k) {
            "{" => braces += 1,
            "}" => braces -= 1,
            _ => {}
        }
        if tok.kind != TokKind::Ident || is_keyword(word(k)) || braces != 0 {
            continue;
        }
        let tag = k > 0 && matches!(word(k - 1), "struct" | "union" | "enum");
        let defines_tag = tag && word(k + 1) == "{";
        let typedef_name = typedef && !tag && matches!(word(k + 1), ";" | "," | "[" | ")");
        if defines_tag || typedef_name {
            names.insert(word(k).to_string());
        }
    }
    names
}

fn is_function_body_end(text: &str, toks: &[Tok], k: usize) -> bool {
    // A `}` at depth 0 closes a function body unless a declarator or `;` follows
    // (`struct s {...} x;`, `enum {...};`, `typedef struct v {...} *V;`, `} (*f)(void);`,
    // `} __attribute__((packed)) p;`): no top-level item starts with `*` or `(`.
    !matches!(
        toks.get(k + 1).map(|t| tok_text(text, t)),
        Some(";" | "," | "*" | "(" | "__attribute__" | "__attribute")
    ) && !toks.get(k + 1).is_some_and(|t| {
        t.kind == TokKind::Ident
            && toks
                .get(k + 2)
                .is_some_and(|n| matches!(tok_text(text, n), ";" | "," | "[" | "="))
    })
}

/// A typedef, or a struct/union/enum definition without a variable.
fn is_type_item(text: &str, toks: &[Tok], first: &str) -> bool {
    let words: Vec<&str> = toks.iter().map(|t| tok_text(text, t)).collect();
    if words.contains(&"typedef") && words.first() == Some(&"typedef") {
        return true;
    }
    if !matches!(first, "struct" | "union" | "enum") || !words.contains(&"{") {
        return false;
    }
    // Nothing but `;` after the closing brace.
    let mut depth = 0;
    let mut close = None;
    for (i, w) in words.iter().enumerate() {
        match *w {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                }
            }
            _ => {}
        }
    }
    close.is_some_and(|c| words[c + 1..] == [";"])
}

fn host_params(plan: &KernelPlan) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in plan.arrays.iter().filter(|a| !a.nested) {
        let ident = cxx_name(&a.name);
        out.push((declare(&a.host_type, &ident), a.name.clone()));
    }
    for s in &plan.scalars {
        out.push((declare(&s.c_type, &s.ident), s.name.clone()));
    }
    // A scalar reduction's variable by address: the host function writes the result back.
    for r in &plan.reductions {
        if let Some(ident) = r.scalar_ident() {
            out.push((
                declare(&format!("{} *", r.c_type), ident),
                format!("&{}", r.target),
            ));
        }
    }
    out
}

/// Thread 0 of each block combines an element reduction after the guard, so the element's
/// address must be the same for every thread: only the kernel's parameters, not the grid's
/// indices nor the body's locals.
fn element_addresses_are_fixed(plan: &KernelPlan) -> Result<(), EmitError> {
    let mapped: Vec<&str> = std::iter::once(plan.x)
        .chain(plan.y)
        .map(|i| plan.nest[i].var.as_str())
        .collect();
    for r in &plan.reductions {
        let reduce::Shape::Element { address } = &r.shape else {
            continue;
        };
        for id in identifiers(address) {
            let param = plan.arrays.iter().any(|a| a.in_kernel && a.ident == id)
                || plan.scalars.iter().any(|s| s.in_kernel && s.ident == id);
            if mapped.contains(&id.as_str()) || !param {
                return Err(EmitError::refused(format!(
                    "{}: the reduction `{}` ({}): its address uses `{id}`, which {}; one thread per block combines into it after the loop's body",
                    plan.loop_id,
                    r.target,
                    r.operator,
                    if mapped.contains(&id.as_str()) {
                        "changes with the thread"
                    } else {
                        "is not a parameter of the kernel"
                    }
                )));
            }
        }
    }
    Ok(())
}

/// An arg-min/arg-max numbers its candidates by the grid's x index, which counts the
/// reported loop's iterations only when that loop is on x and nothing is on y.
fn arg_reductions_number_the_outer_loop(plan: &KernelPlan) -> Result<(), EmitError> {
    let Some(r) = plan.reductions.iter().find(|r| r.arg_state().is_some()) else {
        return Ok(());
    };
    if plan.x != 0 || plan.y.is_some() {
        return Err(EmitError::refused(format!(
            "{}: the arg-{} of `{}` numbers its candidates by the loop's iterations: map the loop `{}` alone to the grid (`--mapping x={}`)",
            plan.loop_id,
            r.op.helper(),
            r.target,
            plan.nest[0].var,
            plan.nest[0].var
        )));
    }
    Ok(())
}

fn kernel_args(plan: &KernelPlan) -> Vec<KernelArg> {
    let mut out = Vec::new();
    for a in plan.arrays.iter().filter(|a| a.in_kernel) {
        match &a.shape {
            Shape::Object => out.push(KernelArg::Object {
                array: a.name.clone(),
                c_type: a.host_type.clone(),
            }),
            Shape::Rows { pitch } => {
                out.push(KernelArg::Buffer {
                    array: a.name.clone(),
                });
                out.push(KernelArg::Derived {
                    ident: format!("ww_{}_pitch", a.ident),
                    expr: pitch.clone(),
                });
            }
            _ => out.push(KernelArg::Buffer {
                array: a.name.clone(),
            }),
        }
    }
    for r in &plan.reductions {
        if r.scalar_ident().is_some() {
            out.push(KernelArg::Reduction {
                name: r.target.clone(),
                c_type: r.c_type.clone(),
            });
        }
    }
    for r in &plan.reductions {
        if let reduce::Shape::Arg { partners, .. } = &r.shape {
            out.push(KernelArg::ArgState {
                target: r.target.clone(),
                partners: partners.clone(),
            });
        }
    }
    for s in plan.staged.iter() {
        out.push(KernelArg::SectionBound {
            array: s.array.clone(),
            hi: false,
        });
        out.push(KernelArg::SectionBound {
            array: s.array.clone(),
            hi: true,
        });
    }
    for s in plan.scalars.iter().filter(|s| s.in_kernel) {
        out.push(KernelArg::Scalar {
            name: s.name.clone(),
            c_type: s.c_type.clone(),
        });
    }
    for d in &plan.derived {
        out.push(KernelArg::Derived {
            ident: d.ident.clone(),
            expr: d.expr.clone(),
        });
    }
    out
}

/// Picks the report's shared-memory areas that can be staged and read back through a proxy.
fn stage(report: &LoopReport, plan: &mut KernelPlan) {
    if report.shared_memory.is_empty() {
        plan.notes
            .push("--shared: the report advises no shared memory for this loop".into());
        return;
    }
    let recommended = report.recommended_mapping.as_ref();
    let matches_mapping = recommended.is_some_and(|m| {
        m.x == plan.nest[plan.x].var && m.y.as_deref() == plan.y.map(|y| plan.nest[y].var.as_str())
    });
    if !matches_mapping {
        plan.notes.push(format!(
            "--shared: the report's shared-memory advice is for the recommended mapping {}, not {}; nothing staged",
            recommended
                .map(|m| format!(
                    "{{x: {}{}}}",
                    m.x,
                    m.y.as_ref().map(|y| format!(", y: {y}")).unwrap_or_default()
                ))
                .unwrap_or_else(|| "(none)".into()),
            plan.mapping_text()
        ));
        return;
    }
    for area in &report.shared_memory {
        match stageable(plan, area) {
            Ok(s) => plan.staged.push(s),
            Err(why) => plan
                .notes
                .push(format!("--shared: `{}` is not staged: {why}", area.array)),
        }
    }
}

/// Why `--shared` does not stage an area the report advises.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum NotStaged {
    /// The array is not among the kernel's parameters.
    #[error("it is not a parameter of the kernel")]
    NotAParameter,
    /// The loop writes the array.
    #[error("the loop writes it, so a staged copy would go stale")]
    Written,
    /// A struct passed by value.
    #[error("it is a struct object")]
    StructObject,
    /// The body never names the array; `accesses` are the report's texts of its accesses.
    #[error(
        "the body reaches it through another pointer ({})",
        accesses.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
    )]
    OtherPointer { accesses: Vec<String> },
    /// The body takes the array's address or uses it other than by a subscript.
    #[error("the body uses it other than by subscripts")]
    NotSubscripted,
    /// The tile's rows or row bytes depend on `blockIdx`.
    #[error("the tile's size depends on the block's position")]
    TileMoves,
    /// The section's size depends on `blockIdx`.
    #[error("the area's size depends on the block's position")]
    AreaMoves,
    /// The report's area has neither shape.
    #[error("the report gives neither a tile nor a section")]
    NoArea,
    /// Staging handles one or two dimensions.
    #[error("it has more than two dimensions")]
    TooManyDimensions,
}

fn stageable(plan: &mut KernelPlan, area: &SharedArea) -> Result<Staged, NotStaged> {
    let Some(a) = plan.arrays.iter().find(|a| a.name == area.array).cloned() else {
        return Err(NotStaged::NotAParameter);
    };
    if a.role != Role::In {
        return Err(NotStaged::Written);
    }
    if matches!(a.shape, Shape::Object) {
        return Err(NotStaged::StructObject);
    }
    let uses = uses_of(&plan.body, &a.ident);
    if uses.is_empty() {
        return Err(NotStaged::OtherPointer {
            accesses: area.accesses.iter().map(|x| x.text.clone()).collect(),
        });
    }
    if uses
        .iter()
        .any(|(before, after)| *after != Some("[") || matches!(before, Some("&")))
    {
        return Err(NotStaged::NotSubscripted);
    }
    let mentions_block = |e: &str| {
        let r = expr_roots(e);
        r.contains("block")
    };
    let (area_kind, size) = match (&area.tile, &area.block_section) {
        (Some(t), _) => {
            if mentions_block(&t.rows) || mentions_block(&t.row_bytes) {
                return Err(NotStaged::TileMoves);
            }
            let rb = kernel_expr(plan, &t.row_bytes, true);
            let rows = kernel_expr(plan, &t.rows, true);
            (
                StagedArea::Tile {
                    pitch: kernel_expr(plan, &t.row_pitch_bytes, true),
                    row_lo: kernel_expr(plan, &t.row_lo, true),
                    rows: rows.clone(),
                    col_lo: kernel_expr(plan, &t.col_lo, true),
                    row_bytes: rb.clone(),
                },
                (t.rows.to_string(), t.row_bytes.to_string()),
            )
        }
        (None, Some(s)) => {
            if mentions_block(&s.size) {
                return Err(NotStaged::AreaMoves);
            }
            (
                StagedArea::Linear {
                    lo: kernel_expr(plan, &s.lo, true),
                    hi: kernel_expr(plan, &s.hi, true),
                },
                ("1".to_string(), s.size.to_string()),
            )
        }
        (None, None) => return Err(NotStaged::NoArea),
    };
    let elem = a.elem_bytes.max(1);
    // Rows are padded to the element size so every staged element stays aligned.
    let kernel_bytes = format!(
        "ww_round_up({}, {elem}) * ({})",
        kernel_expr(plan, &size.1, true),
        kernel_expr(plan, &size.0, true)
    );
    let host_rename = |chain: &str| -> Option<String> {
        match chain {
            "blockDim.x" => Some("ww_block.x".into()),
            "blockDim.y" => Some("ww_block.y".into()),
            _ => None,
        }
    };
    let host_bytes = format!(
        "ww_round_up({}, {elem}) * ({})",
        to_wide(&size.1, ("ww_min", "ww_max"), &host_rename),
        to_wide(&size.0, ("ww_min", "ww_max"), &host_rename)
    );
    let rows_pitch = match &a.shape {
        Shape::Rows { .. } => Some(format!("ww_{}_pitch", a.ident)),
        Shape::FixedRows { dims } => match dims[..] {
            [pitch] => Some(pitch.to_string()),
            _ => return Err(NotStaged::TooManyDimensions),
        },
        _ => None,
    };
    Ok(Staged {
        array: a.name.clone(),
        ident: a.ident.clone(),
        elem_type: a.elem_type.clone(),
        kind: area.kind.clone(),
        area: area_kind,
        bytes: kernel_bytes,
        host_bytes,
        rows_pitch,
        rows: size.0,
        row_bytes: size.1,
    })
}

/// Every array's section and scalar for the snapshot, as expressions in the program.
pub fn snapshot_values(plan: &KernelPlan) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in &plan.derived {
        out.insert(d.ident.clone(), d.expr.clone());
    }
    for a in &plan.arrays {
        if let Shape::Rows { pitch } = &a.shape {
            out.insert(format!("ww_{}_pitch", a.ident), pitch.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointees_are_unqualified() {
        assert_eq!(pointee("const float *restrict"), "float");
        assert_eq!(pointee("unsigned char *"), "unsigned char");
        assert_eq!(pointee("point_t * const"), "point_t");
    }

    #[test]
    fn flexible_members_get_one_element() {
        assert_eq!(
            sized_flexible_members("typedef struct { int n; cs_field_t *p[]; } arr_t;"),
            "typedef struct { int n; cs_field_t *p[1]; } arr_t;"
        );
        assert_eq!(
            sized_flexible_members("struct s { int (*f)(int a[]); double v[] ; };"),
            "struct s { int (*f)(int a[]); double v[1] ; };"
        );
        assert_eq!(sized_flexible_members("extern int t[];"), "extern int t[];");
    }

    #[test]
    fn declarators_take_the_name_inside() {
        assert_eq!(declare("int (*)[128]", "A"), "int (*A)[128]");
        assert_eq!(
            declare("double (*__restrict__)[6]", "rhs"),
            "double (*__restrict__ rhs)[6]"
        );
        assert_eq!(declare("float *", "a"), "float *a");
        assert_eq!(declare("int", "n"), "int n");
    }

    #[test]
    fn writes_in_bodies() {
        let body =
            "{ t = a[i] * beta; s.x += 1; ++n; m--; q[k][2] = 0; f(&r); u = v & w; return &z; }";
        for w in ["t", "s", "n", "m", "q", "r", "u", "z"] {
            assert!(written_in(body, w), "{w}");
        }
        for r in ["a", "beta", "i", "k", "f", "v", "w", "x"] {
            assert!(!written_in(body, r), "{r}");
        }
    }

    #[test]
    fn declarations_in_bodies() {
        let body = "{ int fx, fy; unsigned char *row = p; x = 0; a = b, c = d; }";
        assert!(declared_in(body, "fy"));
        assert!(declared_in(body, "row"));
        assert!(!declared_in(body, "x"));
        assert!(!declared_in(body, "c"));
        // Names inside an expression in parentheses are uses, not declarations.
        let body = "{ for (int c = 0; c < 5; c++) r[c] = dt * (scale * u[c] + shift) - g; }";
        assert!(declared_in(body, "c"));
        assert!(!declared_in(body, "shift"));
        assert!(!declared_in(body, "u"));
        assert!(!declared_in(body, "scale"));
    }
}
