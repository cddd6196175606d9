//! Lowering of a lang-c translation unit to the CDFG ([`crate::ir`]).
//!
//! One [`Lowerer`] walks the unit in order, keeping C's scopes (ordinary identifiers and
//! tags), building types with x86-64 layout, and lowering each function body with a
//! [`builder::FunctionBuilder`] that constructs SSA on the fly. A construct that cannot be
//! lowered stops only its own function: the error is recorded and the next function is
//! lowered. Function bodies that come from system headers are not lowered; their functions
//! are external library functions as far as the analyses are concerned.

mod builder;
pub(crate) mod consteval;
mod decl;
mod expr;
mod kr;
mod noreturn;
mod stmt;
pub use decl::MAX_TYPE_DEPTH;
pub use stmt::MAX_LOOP_NESTING;
mod vector;

use crate::ir::{ExternalFunction, Function, Global, GlobalId, Program, Span};
use crate::types::TypeId;
use builder::{FunctionBuilder, VarId};
use lang_c::ast;
use lang_c::span::Node;
use std::collections::{HashMap, HashSet};

/// What the lowering needs to know about the text it came from.
#[derive(Debug, Default, Clone)]
pub struct LowerInput {
    /// Byte ranges of the preprocessed text that come from system headers.
    pub system_ranges: Vec<(usize, usize)>,
    /// `#pragma` lines of the main file, each with the statement it precedes.
    pub pragmas: Vec<PragmaAnchor>,
}

/// A `#pragma` and the offset of the first token after it (skipping whitespace, line
/// markers and further pragmas), which is where the statement it annotates starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PragmaAnchor {
    /// The text after `#pragma`, e.g. `omp parallel for`.
    pub text: String,
    pub anchor: usize,
}

/// A function (or declaration) that could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    pub span: Span,
    pub message: String,
    /// The function being lowered, if any.
    pub function: Option<String>,
}

/// The result of lowering one translation unit.
#[derive(Debug, Default)]
pub struct Lowered {
    pub program: Program,
    /// One entry per function or declaration that failed.
    pub errors: Vec<LowerError>,
    /// Non-fatal remarks (implicit declarations, ignored attributes).
    pub warnings: Vec<LowerError>,
    /// Number of function definitions outside system headers, lowered or not.
    pub functions_attempted: usize,
}

pub(crate) type LResult<T> = Result<T, LowerError>;

pub(crate) fn err<T>(span: impl Into<Span>, message: impl Into<String>) -> LResult<T> {
    Err(LowerError {
        span: span.into(),
        message: message.into(),
        function: None,
    })
}

impl From<lang_c::span::Span> for Span {
    fn from(s: lang_c::span::Span) -> Span {
        if s.is_none() {
            Span::NONE
        } else {
            Span::new(s.start, s.end)
        }
    }
}

/// Where a named local lives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LocalStorage {
    Ssa(VarId),
    Slot(crate::ir::Slot),
}

/// What an ordinary identifier means in the current scope.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// `decl`: where the declaration is, which tells whether a loop encloses it.
    Local {
        storage: LocalStorage,
        ty: TypeId,
        decl: Span,
    },
    Global {
        id: GlobalId,
        ty: TypeId,
    },
    Function {
        name: String,
        ty: TypeId,
    },
    EnumConst(i128),
    Typedef(TypeId),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Tag {
    Record(crate::types::RecordId),
    Enum,
}

#[derive(Debug)]
pub(crate) struct Scopes {
    ordinary: Vec<HashMap<String, Binding>>,
    tags: Vec<HashMap<String, Tag>>,
    /// A number per open scope, never reused within a unit: two declarations with the
    /// same number are in the same block (what `restrict` needs, C99 6.7.3.1p4).
    ids: Vec<u32>,
    next_id: u32,
    /// Where each open scope ends (a byte offset of the unit's text).
    ends: Vec<u32>,
}

impl Scopes {
    fn new() -> Self {
        Scopes {
            ordinary: vec![HashMap::new()],
            tags: vec![HashMap::new()],
            ids: vec![0],
            next_id: 1,
            ends: vec![u32::MAX],
        }
    }
    /// Opens a scope that ends at byte `end` (its block's closing brace).
    pub fn push(&mut self, end: u32) {
        self.ordinary.push(HashMap::new());
        self.tags.push(HashMap::new());
        self.ids.push(self.next_id);
        self.ends.push(end);
        self.next_id += 1;
    }
    pub fn pop(&mut self) {
        if self.ordinary.len() > 1 {
            self.ordinary.pop();
            self.tags.pop();
            self.ids.pop();
            self.ends.pop();
        }
    }
    /// Where the innermost open scope ends.
    pub fn end(&self) -> u32 {
        self.ends.last().copied().unwrap_or(u32::MAX)
    }
    /// The binding of `name` and the number of the scope that declares it.
    pub fn lookup_scoped(&self, name: &str) -> Option<(&Binding, u32)> {
        self.ordinary
            .iter()
            .zip(&self.ids)
            .rev()
            .find_map(|(s, id)| s.get(name).map(|b| (b, *id)))
    }
    pub fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(scope) = self.ordinary.last_mut() {
            scope.insert(name.to_string(), binding);
        }
    }
    pub fn bind_global(&mut self, name: &str, binding: Binding) {
        self.ordinary[0].insert(name.to_string(), binding);
    }
    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.ordinary.iter().rev().find_map(|s| s.get(name))
    }
    pub fn bind_tag(&mut self, name: &str, tag: Tag) {
        if let Some(scope) = self.tags.last_mut() {
            scope.insert(name.to_string(), tag);
        }
    }
    pub fn lookup_tag(&self, name: &str) -> Option<Tag> {
        self.tags.iter().rev().find_map(|s| s.get(name)).copied()
    }
    pub fn lookup_tag_innermost(&self, name: &str) -> Option<Tag> {
        self.tags.last().and_then(|s| s.get(name)).copied()
    }
}

/// Targets of `break` and `continue` in the innermost enclosing loop or switch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JumpTargets {
    pub break_to: Option<crate::ir::Block>,
    pub continue_to: Option<crate::ir::Block>,
}

pub(crate) struct Lowerer<'a> {
    pub program: Program,
    pub scopes: Scopes,
    pub input: &'a LowerInput,
    pub fb: FunctionBuilder,
    pub errors: Vec<LowerError>,
    pub warnings: Vec<LowerError>,
    /// Names of locals whose address is taken somewhere in the current function.
    pub address_taken: HashSet<String>,
    pub jumps: Vec<JumpTargets>,
    pub labels: HashMap<String, crate::ir::Block>,
    /// The labels of the current function that a statement defines, and the first `goto`
    /// of each label (a `goto` to a label never defined is an error, C99 6.8.6.1).
    pub defined_labels: HashSet<String>,
    pub gotos: Vec<(String, Span)>,
    /// Case blocks of the innermost switch, keyed by the label statement's span start.
    pub case_blocks: Vec<HashMap<usize, crate::ir::Block>>,
    /// Run-time lengths of VLA dimensions, by their type tag.
    pub vla_lengths: HashMap<u32, crate::ir::Value>,
    /// VLA size expressions waiting to be evaluated (tag, expression).
    pub pending_vla: Vec<(u32, Node<ast::Expression>)>,
    /// Defined function names (so calls resolve and prototypes are not external).
    pub defined: HashSet<String>,
    /// Where each function was first declared (its name in the declarator).
    pub declared_at: HashMap<String, Span>,
    pub in_function: Option<String>,
    /// The declaration being lowered carries `__attribute__((packed))`: the record its
    /// specifiers define is laid out without padding (taken by that record only).
    pub packed_record: bool,
    /// Loops enclosing the statement being lowered (see `stmt::MAX_LOOP_NESTING`).
    pub loop_depth: usize,
    pub functions_attempted: usize,
    /// `FieldAddr` values of the current function that address a bit-field's storage unit:
    /// (first bit, width). Loads and stores through them extract and insert the bits.
    pub bit_fields: HashMap<crate::ir::Value, (u32, u32)>,
    /// GCC vector types made so far, by (element, size, alignment): see [`vector`].
    pub vector_types: HashMap<(TypeId, u64, u64), TypeId>,
}

/// Stack for the lowering thread: lowering recurses along the syntax tree (and SSA
/// construction along chains of blocks); only touched pages cost memory.
const LOWER_STACK: usize = 1 << 30;
/// Stack use at which lowering gives up on a function ("nested too deeply") instead of
/// overflowing, which would abort the process.
const LOWER_STACK_BUDGET: usize = LOWER_STACK - (64 << 20);

thread_local! {
    /// (address near the base of this thread's stack, bytes the lowering may use below it)
    static STACK_LIMIT: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

fn stack_address() -> usize {
    crate::deep_stack::address()
}

/// True when the lowering has used up its stack budget; callers turn this into an error.
pub(crate) fn stack_exhausted() -> bool {
    let (base, budget) = STACK_LIMIT.with(|l| l.get());
    base != 0 && base.saturating_sub(stack_address()) > budget
}

/// The error for constructs nested beyond what the lowering's stack can hold.
pub(crate) fn too_deep<T>(span: impl Into<Span>) -> LResult<T> {
    err(
        span,
        "nested too deeply (expressions or statements); warpwise cannot analyse this",
    )
}

/// Lowers a parsed translation unit. Never panics on any input: a panic inside the lowering
/// of one function is caught and reported as an internal error for that function, and
/// nesting too deep for the stack is reported as an error instead of overflowing it. Runs on
/// a thread of its own with a large stack.
pub fn lower_translation_unit(unit: &ast::TranslationUnit, input: &LowerInput) -> Lowered {
    let on_thread = crate::deep_stack::run("lower", LOWER_STACK, || {
        // Measured from here: on a file's shared thread the parse has used some of it.
        let left = crate::deep_stack::remaining().unwrap_or(LOWER_STACK);
        let budget = left
            .min(LOWER_STACK)
            .saturating_sub(LOWER_STACK - LOWER_STACK_BUDGET);
        STACK_LIMIT.with(|l| l.set((stack_address(), budget)));
        let lowered = lower_translation_unit_here(unit, input);
        STACK_LIMIT.with(|l| l.set((0, 0)));
        lowered
    });
    match on_thread {
        Some(Ok(lowered)) => lowered,
        // A panic outside any function's guard (in a file-scope declaration).
        Some(Err(_)) => Lowered {
            errors: vec![LowerError {
                span: Span::NONE,
                message: "internal error while lowering this file (please report it)".into(),
                function: None,
            }],
            ..Lowered::default()
        },
        // No thread available: lower here with a budget that fits the smallest usual stack.
        None => {
            STACK_LIMIT.with(|l| l.set((stack_address(), 1 << 20)));
            let lowered = lower_translation_unit_here(unit, input);
            STACK_LIMIT.with(|l| l.set((0, 0)));
            lowered
        }
    }
}

fn lower_translation_unit_here(unit: &ast::TranslationUnit, input: &LowerInput) -> Lowered {
    let mut program = Program::default();
    let void = program.types.void();
    let placeholder = empty_function(&mut program, void);
    // GCC's predefined types, which no header declares.
    let void_ptr = program.types.pointer_to(void);
    let mut scopes = Scopes::new();
    for builtin in ["__builtin_va_list", "__gnuc_va_list", "va_list"] {
        scopes.bind(builtin, Binding::Typedef(void_ptr));
    }
    let mut lowerer = Lowerer {
        program,
        scopes,
        input,
        fb: FunctionBuilder::new(placeholder),
        errors: Vec::new(),
        warnings: Vec::new(),
        address_taken: HashSet::new(),
        jumps: Vec::new(),
        labels: HashMap::new(),
        defined_labels: HashSet::new(),
        gotos: Vec::new(),
        case_blocks: Vec::new(),
        vla_lengths: HashMap::new(),
        pending_vla: Vec::new(),
        defined: HashSet::new(),
        declared_at: HashMap::new(),
        in_function: None,
        packed_record: false,
        loop_depth: 0,
        functions_attempted: 0,
        bit_fields: HashMap::new(),
        vector_types: HashMap::new(),
    };
    for ext in &unit.0 {
        match &ext.node {
            ast::ExternalDeclaration::Declaration(decl) => {
                if let Err(e) = lowerer.global_declaration(decl) {
                    lowerer.record_error(e);
                }
            }
            ast::ExternalDeclaration::StaticAssert(_) => {}
            ast::ExternalDeclaration::FunctionDefinition(def) => {
                let in_system = lowerer.is_system(def.span.start);
                if in_system {
                    if let Err(e) = lowerer.declare_function_only(def) {
                        lowerer.warnings.push(e);
                    }
                    continue;
                }
                lowerer.functions_attempted += 1;
                lowerer.lower_function_guarded(def);
            }
        }
    }
    let mut externals: Vec<ExternalFunction> = Vec::new();
    let mut seen = HashSet::new();
    for scope in &lowerer.scopes.ordinary[..1] {
        let mut names: Vec<_> = scope.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        for (name, binding) in names {
            if let Binding::Function { ty, .. } = binding {
                if !lowerer.defined.contains(name) && seen.insert(name.clone()) {
                    externals.push(ExternalFunction {
                        name: name.clone(),
                        ty: *ty,
                        declared_at: lowerer.declared_at.get(name).copied(),
                    });
                }
            }
        }
    }
    lowerer.program.externals = externals;
    // Every arithmetic type exists in every unit: a callee's effects (memcpy's bytes are
    // chars; another file's `unsigned` enum element) are mapped into the caller's unit by
    // type, and the caller's file need not name the type itself (unused header
    // declarations are not parsed). Interned last, so no other type's id moves.
    lowerer.program.types.intern_arithmetic_types();
    Lowered {
        program: lowerer.program,
        errors: lowerer.errors,
        warnings: lowerer.warnings,
        functions_attempted: lowerer.functions_attempted,
    }
}

fn empty_function(program: &mut Program, void: TypeId) -> Function {
    let ty = program.types.intern(crate::types::Type::Function {
        ret: void,
        params: Vec::new(),
        variadic: false,
    });
    Function {
        name: String::new(),
        ty,
        ret: void,
        params: Vec::new(),
        is_static: false,
        span: Span::NONE,
        name_span: Span::NONE,
        insts: Vec::new(),
        blocks: Vec::new(),
        slots: Vec::new(),
        entry: crate::ir::Block(0),
        loops: Vec::new(),
        ifs: Vec::new(),
        local_statics: Vec::new(),
        restrict_pointers: Vec::new(),
        declarations: Vec::new(),
        truncations: Default::default(),
        float_promotions: Default::default(),
        execution: Default::default(),
    }
}

impl<'a> Lowerer<'a> {
    pub fn is_system(&self, offset: usize) -> bool {
        self.input
            .system_ranges
            .iter()
            .any(|&(s, e)| offset >= s && offset < e)
    }

    pub fn record_error(&mut self, mut e: LowerError) {
        if e.function.is_none() {
            e.function = self.in_function.clone();
        }
        self.errors.push(e);
    }

    pub fn warn(&mut self, span: impl Into<Span>, message: impl Into<String>) {
        self.warnings.push(LowerError {
            span: span.into(),
            message: message.into(),
            function: self.in_function.clone(),
        });
    }

    fn lower_function_guarded(&mut self, def: &Node<ast::FunctionDefinition>) {
        let scope_depth = self.scopes.ordinary.len();
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.lower_function(def)));
        // Restore scopes whatever happened inside.
        while self.scopes.ordinary.len() > scope_depth {
            self.scopes.pop();
        }
        self.jumps.clear();
        self.case_blocks.clear();
        match result {
            Ok(Ok(func)) => self.program.functions.push(func),
            Ok(Err(e)) => self.record_error(e),
            Err(_) => self.record_error(LowerError {
                span: def.span.into(),
                message: "internal error while lowering this function (please report it)".into(),
                function: None,
            }),
        }
        self.in_function = None;
    }

    pub fn global_id(&mut self, global: Global) -> GlobalId {
        self.program.globals.push(global);
        GlobalId(self.program.globals.len() as u32 - 1)
    }

    pub fn void_ty(&mut self) -> TypeId {
        self.program.types.void()
    }
}
