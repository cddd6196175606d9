//! What the analyses written on top of the program view find once per program and the view
//! keeps for them (`ProgramView::allocators`, `ProgramView::param_flow`): the types live
//! here, below both, so that the view needs none of those analyses (`fresh`, `escape`).

/// A function of the program that returns new memory or null on every path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramAllocator {
    /// Where it also lets the new address go besides returning it (`passed to
    /// \`_mem_block_add\``, `stored to memory`): a tracking table or a log, assumed never used
    /// to reach the memory. Empty when the address goes nowhere else.
    pub keeps_copy: Vec<String>,
}

/// What a function does with the address it receives as parameter `position`, leaving
/// its callees aside: whether it keeps it itself, and the callees' parameters it passes it
/// to (by name, resolved in the function's unit).
#[derive(Clone, Debug, Default)]
pub struct ParamFlow {
    pub keeps: bool,
    pub passes: Vec<(String, usize)>,
}

/// Where the program keeps a pointer: what `whole` looks up program-wide to find the
/// allocations a pointer can hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Keeper {
    /// Field `field` of every struct of type `record` (its C name).
    Field { record: String, field: String },
    /// The global variable of this name.
    Global(String),
}

/// The size of an allocation over values a loop can read: constants, other fields of the
/// struct the pointer is kept in, and globals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeTerm {
    Const(i128),
    /// Another field of the struct the pointer is stored into (`length_concs` of `SD`).
    Sibling(String),
    Global(String),
    /// `+`, `-` or `*` of two sizes.
    Op(char, Box<SizeTerm>, Box<SizeTerm>),
}

/// Every allocation a kept pointer can hold, all of one size (see `whole::allocations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocations {
    pub size: SizeTerm,
    /// Each allocating call, `file:line`, in program order.
    pub sites: Vec<String>,
}
