//! What the analyses written on top of the program view find once per program and the view
//! keeps for them (`ProgramView::allocators`, `ProgramView::param_flow`,
//! `ProgramView::global_copies`): the types live
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
    /// A field of a struct the storing function received by value (`input.n_nuclides`),
    /// which the loop cannot name: a sibling length the storing function sets to it
    /// (`SD.length_n_windows = input.n_nuclides`) stands for it.
    Read(String),
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

/// A pointer-holding place: a global (or static) at a constant offset (`u1`, `SD.concs`,
/// `grid[1]`), or a member of a struct reached through a pointer (`g->cur`), which stands
/// for that member of every object of the struct's type. Statics are told apart by their
/// unit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Home {
    /// The unit of a `static` object; `None` for an object of external linkage.
    pub unit: Option<usize>,
    /// The global's name, or the struct's (`struct grid`) for a member.
    pub name: String,
    pub offset: u64,
    /// A member of any object of a struct type: two values loaded from it may come from
    /// two objects, so only a copy between members relates them.
    pub member: bool,
}

/// Which homes the program copies into one another: the components of the graph whose
/// edges are stores `G = ...H...` (G receives H's value), and whether each component is a
/// permutation: its homes that receive values (its ring) each receive exactly one other
/// and give to exactly one other (a swap or a rotation of distinct objects), and its
/// sources (homes that receive from no home: `g.cur = u1; g.next = u2;` before the swaps)
/// each give to one ring home, no two to the same one.
#[derive(Debug, Default)]
pub struct GlobalCopies {
    pub component: std::collections::HashMap<Home, usize>,
    pub permutation: Vec<bool>,
    /// The sources of the permutation components.
    pub sources: std::collections::HashSet<Home>,
    /// Per home, the homes it receives values from (the graph's edges, reversed).
    pub givers: std::collections::HashMap<Home, Vec<Home>>,
}

/// Homes followed per [`GlobalCopies::related`] question; past it, two homes of one
/// component count as related.
const ANCESTOR_LIMIT: usize = 4096;

impl GlobalCopies {
    /// Whether the program may make `a` and `b` hold one object: two ring homes of a
    /// permutation never do; a source and the ring home it starts may.
    pub fn related(&self, a: &Home, b: &Home) -> bool {
        if a == b {
            return !a.member;
        }
        match (self.component.get(a), self.component.get(b)) {
            (Some(x), Some(y)) if x == y => {
                if self.permutation[*x] {
                    return self.sources.contains(a) || self.sources.contains(b);
                }
                // One value reaches both only from a home both receive from, directly or
                // not (one may be that home): `g->xa = g->_xa; g->xa0 = g->_xa0;` relates
                // `xa` to `_xa`, never `_xa` to `_xa0`.
                match (self.ancestors(a), self.ancestors(b)) {
                    (Some(x), Some(y)) => x.intersection(&y).next().is_some(),
                    _ => true,
                }
            }
            _ => false,
        }
    }

    /// `home` and every home whose value may reach it; `None` past [`ANCESTOR_LIMIT`].
    fn ancestors<'h>(&'h self, home: &'h Home) -> Option<std::collections::HashSet<&'h Home>> {
        let mut seen = std::collections::HashSet::from([home]);
        let mut stack = vec![home];
        while let Some(h) = stack.pop() {
            for g in self.givers.get(h).into_iter().flatten() {
                if seen.insert(g) {
                    if seen.len() > ANCESTOR_LIMIT {
                        return None;
                    }
                    stack.push(g);
                }
            }
        }
        Some(seen)
    }
}

/// The statics of each unit whose address the unit never takes, by unit index (found by
/// `sealed`).
pub type SealedStatics = Vec<std::collections::HashSet<frontend::ir::GlobalId>>;
