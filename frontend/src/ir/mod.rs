//! The SSA control/data-flow graph (CDFG) of thesis §8.2, Table 8.2.
//!
//! A [`Function`] is a list of basic blocks; a block holds instructions (phis first) and ends
//! in a [`Terminator`]. Every instruction that produces a result *is* that result: a [`Value`]
//! is the index of its defining instruction, so use-def chains are free. Scalar locals whose
//! address is never taken live in SSA values; everything else (arrays, structs, address-taken
//! scalars, globals) lives in memory reached through `SlotAddr`/`GlobalAddr`, `PtrAdd`,
//! `FieldAddr`, `Load` and `Store`.
//!
//! Control structure is kept explicit alongside the CFG: [`IfRegion`]s for every `if`/`?:`
//! lowered as control flow and [`SourceLoop`]s for every `for`/`while`/`do`, both pointing at
//! blocks; the loop forest itself is computed from the CFG by `loops` (named, not linked: the
//! IR does not depend on it).

pub mod cuda;
pub mod dominators;
pub mod inline;
pub mod print;
pub mod verify;

pub use cuda::{thread_coordinate, Axis, CudaVariable, ExecutionSpace, ThreadBuiltin};

use crate::types::{TypeId, TypeTable};
use std::fmt;

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// A basic block of one function.
    Block, "bb"
);
entity!(
    /// An SSA value: the index of the instruction that defines it.
    Value, "v"
);
entity!(
    /// A memory-resident local variable (array, struct, or address-taken scalar).
    Slot, "slot"
);
entity!(
    /// A global or file-static variable of the program.
    GlobalId, "g"
);
entity!(
    /// A loop written in the source (`for`, `while`, `do`), in source order.
    SourceLoopId, "loop"
);

/// A byte range in the preprocessed text of the translation unit. Resolve it to the original
/// `file:line:col` with the unit's source map; `Span::NONE` marks synthesized code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const NONE: Span = Span {
        start: u32::MAX,
        end: u32::MAX,
    };

    pub fn new(start: usize, end: usize) -> Span {
        if start == usize::MAX {
            return Span::NONE;
        }
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    pub fn is_none(self) -> bool {
        self.start == u32::MAX
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// C division: truncating for integers.
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// The comparison with its operands swapped: `a < b` iff `b > a`.
    pub fn swapped(self) -> BinOp {
        match self {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            other => other,
        }
    }

    /// The negated comparison: `!(a < b)` iff `a >= b`.
    pub fn negated(self) -> Option<BinOp> {
        Some(match self {
            BinOp::Eq => BinOp::Ne,
            BinOp::Ne => BinOp::Eq,
            BinOp::Lt => BinOp::Ge,
            BinOp::Le => BinOp::Gt,
            BinOp::Gt => BinOp::Le,
            BinOp::Ge => BinOp::Lt,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    /// Logical `!`: 1 if the operand is zero, else 0.
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Constant {
    Int(i128),
    Float(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    /// A call by name: a function defined in the program or an external one.
    Direct(String),
    /// A call through a function pointer.
    Indirect(Value),
}

/// The operation of an instruction. Result types are in [`InstData::ty`].
#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// The `index`-th parameter of the function, as it arrives.
    Param(u32),
    Const(Constant),
    /// A read of an uninitialized local.
    Undef,
    /// SSA merge: one incoming value per predecessor edge.
    Phi(Vec<(Block, Value)>),
    Binary(BinOp, Value, Value),
    Unary(UnOp, Value),
    /// Conversion to the instruction's type.
    Cast(Value),
    /// `cond ? a : b` with side-effect-free arms (thesis: ternary expression).
    Select {
        cond: Value,
        then_value: Value,
        else_value: Value,
    },
    Load {
        addr: Value,
    },
    /// Stores `value` (of the instruction's type) at `addr`; has no result.
    Store {
        addr: Value,
        value: Value,
    },
    /// `base + index * scale` bytes (thesis `ptr_add`, byte-scaled by the pointee size).
    PtrAdd {
        base: Value,
        index: Value,
        scale: u64,
    },
    /// Address of field `field` of the record at `base` (thesis `field_sel`), at `offset` bytes.
    FieldAddr {
        base: Value,
        field: String,
        offset: u64,
    },
    SlotAddr(Slot),
    GlobalAddr(GlobalId),
    /// The address of a function used as a value.
    FuncAddr(String),
    /// Address of a string literal (its text, escapes kept as written).
    StringAddr(String),
    Call {
        callee: Callee,
        args: Vec<Value>,
    },
}

impl InstKind {
    /// The SSA operands, in order.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            InstKind::Param(_)
            | InstKind::Const(_)
            | InstKind::Undef
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => Vec::new(),
            InstKind::Phi(args) => args.iter().map(|(_, v)| *v).collect(),
            InstKind::Binary(_, a, b) => vec![*a, *b],
            InstKind::Unary(_, a) | InstKind::Cast(a) => vec![*a],
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => vec![*cond, *then_value, *else_value],
            InstKind::Load { addr } => vec![*addr],
            InstKind::Store { addr, value } => vec![*addr, *value],
            InstKind::PtrAdd { base, index, .. } => vec![*base, *index],
            InstKind::FieldAddr { base, .. } => vec![*base],
            InstKind::Call { callee, args } => {
                let mut ops = Vec::with_capacity(args.len() + 1);
                if let Callee::Indirect(f) = callee {
                    ops.push(*f);
                }
                ops.extend(args.iter().copied());
                ops
            }
        }
    }

    /// Rewrites every SSA operand with `f`.
    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            InstKind::Param(_)
            | InstKind::Const(_)
            | InstKind::Undef
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FuncAddr(_)
            | InstKind::StringAddr(_) => {}
            InstKind::Phi(args) => args.iter_mut().for_each(|(_, v)| *v = f(*v)),
            InstKind::Binary(_, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            InstKind::Unary(_, a) | InstKind::Cast(a) => *a = f(*a),
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                *cond = f(*cond);
                *then_value = f(*then_value);
                *else_value = f(*else_value);
            }
            InstKind::Load { addr } => *addr = f(*addr),
            InstKind::Store { addr, value } => {
                *addr = f(*addr);
                *value = f(*value);
            }
            InstKind::PtrAdd { base, index, .. } => {
                *base = f(*base);
                *index = f(*index);
            }
            InstKind::FieldAddr { base, .. } => *base = f(*base),
            InstKind::Call { callee, args } => {
                if let Callee::Indirect(v) = callee {
                    *v = f(*v);
                }
                args.iter_mut().for_each(|a| *a = f(*a));
            }
        }
    }

    /// Whether the instruction writes memory or has other effects (calls).
    pub fn has_side_effects(&self) -> bool {
        matches!(self, InstKind::Store { .. } | InstKind::Call { .. })
    }

    pub fn is_phi(&self) -> bool {
        matches!(self, InstKind::Phi(_))
    }
}

/// Where an instruction came from in the source, for reports.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Origin {
    /// The source expression or statement that produced it.
    pub span: Span,
    /// For SSA values of named locals: the variable name (`i`, `sum`), for printing.
    pub var_name: Option<String>,
    /// For an address computed from a `restrict`-qualified local pointer (`p[i]`,
    /// `p->x`): that pointer, as an index into [`Function::restrict_pointers`].
    pub restrict: Option<u32>,
}

/// A `restrict`-qualified pointer variable that some access of the function goes through.
/// C99 6.7.3.1: while the block declaring it runs, an object modified through it is
/// accessed only through it; two such pointers declared in one block are never based on
/// each other (6.7.3.1p4), so what one of them modifies the other does not touch.
#[derive(Clone, Debug, PartialEq)]
pub struct RestrictPointer {
    pub name: String,
    /// The block that declares it (a number per scope of the unit).
    pub scope: u32,
    /// The declaration: a loop whose body contains it gets a new pointer per iteration,
    /// and the promise then holds within one iteration only.
    pub decl: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstData {
    pub kind: InstKind,
    /// Result type (the stored type for `Store`, the return type for calls).
    pub ty: TypeId,
    pub block: Block,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Terminator {
    Return(Option<Value>),
    Jump(Block),
    Branch {
        cond: Value,
        then_block: Block,
        else_block: Block,
    },
    /// After a call that does not return, or a block never reached.
    Unreachable,
}

impl Terminator {
    pub fn successors(&self) -> Vec<Block> {
        match self {
            Terminator::Return(_) | Terminator::Unreachable => Vec::new(),
            Terminator::Jump(b) => vec![*b],
            Terminator::Branch {
                then_block,
                else_block,
                ..
            } => vec![*then_block, *else_block],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BlockData {
    /// Instructions in order; phis come first.
    pub insts: Vec<Value>,
    pub terminator: Terminator,
    pub terminator_span: Span,
    pub preds: Vec<Block>,
}

/// A memory-resident local.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotData {
    pub name: String,
    pub ty: TypeId,
    /// The SSA value holding its byte size when it is a VLA.
    pub vla_size: Option<Value>,
    pub span: Span,
    /// Declared `__shared__` (CUDA): one object per thread block, not per thread.
    pub shared: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Option<String>,
    pub ty: TypeId,
    /// The `Param` instruction.
    pub value: Value,
    /// Set when the parameter's address is taken and it was spilled to a slot.
    pub slot: Option<Slot>,
    /// For VLA parameters `double A[ni][nk]`: the SSA values of the dimensions after the
    /// first, outermost first (`[nk]`), as evaluated at function entry.
    pub vla_dims: Vec<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    For,
    While,
    DoWhile,
}

/// A loop as written in the source, with the blocks lowering created for it.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceLoop {
    pub kind: LoopKind,
    /// Span of the `for`/`while`/`do` keyword: the loop id is its `file:line:col`.
    pub keyword_span: Span,
    /// Span of the whole statement.
    pub span: Span,
    /// Where the condition is tested (for `do`, the block after the body).
    pub cond_block: Block,
    /// First block of the body.
    pub body_block: Block,
    /// Where `continue` jumps (the step of a `for`).
    pub continue_block: Block,
    /// The block after the loop; `None` when the loop never exits normally.
    pub exit_block: Option<Block>,
    /// `#pragma` texts written right before the loop, e.g. `omp parallel for`.
    pub pragmas: Vec<String>,
    /// Span of the body statement: objects declared inside it are new in every iteration
    /// (C99 6.2.4p5), unlike those of a `for`'s init clause.
    pub body_span: Span,
}

/// An `if`/`else` (or a ternary lowered as control flow), kept explicit as the thesis asks.
#[derive(Clone, Debug, PartialEq)]
pub struct IfRegion {
    pub span: Span,
    /// An `if` statement (its span starts at the keyword); `false` for a conditional
    /// expression `c ? a : b`.
    pub statement: bool,
    /// The then-branch (statement or expression) and the else-branch when there is one.
    pub then_span: Span,
    pub else_span: Option<Span>,
    pub cond_block: Block,
    pub then_block: Block,
    pub else_block: Option<Block>,
    /// `None` when neither branch falls through.
    pub join_block: Option<Block>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub ty: TypeId,
    pub ret: TypeId,
    pub params: Vec<Param>,
    pub is_static: bool,
    pub span: Span,
    pub name_span: Span,
    pub insts: Vec<InstData>,
    pub blocks: Vec<BlockData>,
    pub slots: Vec<SlotData>,
    pub entry: Block,
    pub loops: Vec<SourceLoop>,
    pub ifs: Vec<IfRegion>,
    /// Local `static` variables: written-to static storage inside a kernel matters (§4.1).
    pub local_statics: Vec<GlobalId>,
    /// The `restrict` pointers that [`Origin::restrict`] refers to.
    pub restrict_pointers: Vec<RestrictPointer>,
    /// The casts that convert a floating-point value to an integer type (they truncate),
    /// with the integer type's C name: what sees through casts without the type table (a
    /// loop's bound, the printer) must stop there.
    pub truncations: std::collections::BTreeMap<Value, String>,
    /// The casts that convert an integer to a floating type: a loop whose exit test compares
    /// its counter through one (`i < x` with `double x`) runs `ceil(x)` times, not `x`, so
    /// what finds a loop's bound must stop there too.
    pub float_promotions: std::collections::BTreeSet<Value>,
    /// Where the function runs (CUDA's `__global__`, `__device__`); `Host` for plain C.
    pub execution: ExecutionSpace,
    /// Every automatic variable the body declares, in source order: what a port needs of a
    /// variable SSA keeps no value of (a copy, `const cs_lnum_t n = m;`).
    pub declarations: Vec<LocalDeclaration>,
}

/// An automatic variable's declaration: its name, declared type (typedefs resolved), the
/// declarator's name and where its scope ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalDeclaration {
    pub name: String,
    pub ty: TypeId,
    pub span: Span,
    /// The byte offset where the enclosing block ends: the declaration is visible from
    /// `span` to here.
    pub scope_end: u32,
}

impl LocalDeclaration {
    /// Whether the declaration is visible at `at` (a span after it, within its block).
    pub fn visible_at(&self, at: Span) -> bool {
        self.span.end <= at.start && at.end <= self.scope_end
    }
}

impl Function {
    /// The declaration of the automatic variable `name` that the text at `at` reads: the
    /// innermost one before `at` whose block holds it.
    pub fn declaration_at(&self, name: &str, at: Span) -> Option<&LocalDeclaration> {
        self.declarations
            .iter()
            .filter(|d| d.name == name && d.visible_at(at))
            .max_by_key(|d| d.span.start)
    }

    pub fn inst(&self, v: Value) -> &InstData {
        &self.insts[v.index()]
    }
    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.index()]
    }
    pub fn blocks(&self) -> impl Iterator<Item = Block> {
        (0..self.blocks.len() as u32).map(Block)
    }
    pub fn values(&self) -> impl Iterator<Item = Value> {
        (0..self.insts.len() as u32).map(Value)
    }
    pub fn slot(&self, s: Slot) -> &SlotData {
        &self.slots[s.index()]
    }
    pub fn source_loop(&self, id: SourceLoopId) -> &SourceLoop {
        &self.loops[id.index()]
    }
    pub fn source_loops(&self) -> impl Iterator<Item = (SourceLoopId, &SourceLoop)> {
        self.loops
            .iter()
            .enumerate()
            .map(|(i, l)| (SourceLoopId(i as u32), l))
    }
    /// The integer value of a constant instruction.
    pub fn const_int(&self, v: Value) -> Option<i128> {
        match self.inst(v).kind {
            InstKind::Const(Constant::Int(c)) => Some(c),
            _ => None,
        }
    }
    /// Instructions that use each value (computed on demand; the IR does not keep use lists).
    pub fn users(&self) -> Vec<Vec<Value>> {
        let mut users = vec![Vec::new(); self.insts.len()];
        for b in self.blocks() {
            for &v in &self.block(b).insts {
                for op in self.inst(v).kind.operands() {
                    users[op.index()].push(v);
                }
            }
        }
        users
    }
    /// Values used by each block's terminator.
    pub fn terminator_uses(&self, b: Block) -> Vec<Value> {
        match &self.block(b).terminator {
            Terminator::Return(Some(v)) => vec![*v],
            Terminator::Branch { cond, .. } => vec![*cond],
            _ => Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub ty: TypeId,
    pub is_static: bool,
    pub is_extern: bool,
    pub is_const: bool,
    /// Declared `volatile`: it may change behind the program's back (a GPU copy cannot).
    pub is_volatile: bool,
    /// Declared `_Thread_local` (`__thread`): one object per host thread.
    pub is_thread_local: bool,
    /// For function-local statics: the function that declares it.
    pub local_to: Option<String>,
    pub span: Span,
    /// The static initializer, lowered as a parameterless function that stores the initial
    /// value through `GlobalAddr` of this global (constant computations only). `None`: zero.
    pub init: Option<Box<Function>>,
    /// A large numeric table whose values the parse left out (`frontend::tables`): `init`
    /// gives it its length only, and stores one zero.
    pub values_elided: bool,
    /// CUDA's memory space (`__device__`, `__shared__`, `__constant__`) or built-in
    /// coordinate; `None` for a plain C global.
    pub cuda: Option<CudaVariable>,
}

/// A function that is declared (e.g. in a header) but not defined in this unit.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalFunction {
    pub name: String,
    pub ty: TypeId,
    /// The name in its first declaration (resolve with the unit's source map: a system
    /// header's library function, or a function of the program not among the files).
    pub declared_at: Option<Span>,
}

/// A lowered translation unit.
#[derive(Debug, Default)]
pub struct Program {
    pub types: TypeTable,
    pub functions: Vec<Function>,
    pub globals: Vec<Global>,
    pub externals: Vec<ExternalFunction>,
    /// Functions some declaration or definition of this unit marks as never returning
    /// (`_Noreturn`, `__attribute__((noreturn))`).
    pub noreturn: std::collections::BTreeSet<String>,
    /// Whether the unit follows C's effective-type rule (`Unit::strict_aliasing`), so an
    /// access of one type never touches an object of an incompatible one
    /// ([`crate::types::TypeTable::may_alias`]); false until the unit says so.
    pub strict_aliasing: bool,
}

impl Program {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
    pub fn global(&self, g: GlobalId) -> &Global {
        &self.globals[g.index()]
    }
}
