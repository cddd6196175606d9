//! WW201 uncoalesced global access (`warpwise check`): the threads of a warp touch more
//! 32-byte sectors than their bytes fill.

use super::{Code, Example, Finding, Rule, Subject};
use crate::model::{Reason, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW201,
    name: "uncoalesced global access",
    explanation: "in a CUDA kernel, the 32 threads of a warp load or store addresses so far apart that the access moves more 32-byte sectors than the warp's bytes fill, or, where each thread's address comes from data it reads (a gather `in[idx[i]]`, a scatter), may do so as the data falls: then the finding gives the range, 1 sector per warp when the data keeps neighbouring threads together up to one per thread (`warpwise check`)",
    gpu: "a warp's access is served in 32-byte sectors of 128-byte lines: when neighbouring threads are a stride apart, each sector carries little more than one thread's element, and the memory traffic grows with the stride up to 8 times for 4-byte elements",
    fix: "give consecutive threads consecutive addresses: for an array of structures, keep each field in an array of its own (structure of arrays); for a walk down a column, let threadIdx.x index the last, contiguous subscript, or stage the data through shared memory; for a gather, order the data so that neighbouring threads get neighbouring elements",
    example: Example {
        source: include_str!("examples/ww201.cu"),
        verdict: Verdict::NotFriendly,
        subject: Subject::Kernel,
    },
};

/// Why neighbouring threads are far apart, which decides the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A field of an array of structures of `bytes` bytes.
    StructField { field: String, bytes: u64 },
    /// A symbolic stride: the thread index steps along a column of rows.
    ColumnWalk,
    /// Some other constant stride.
    Strided,
    /// A copy of a whole structure of `bytes` bytes per lane, which compiles to one load
    /// (store) per field, each with the lanes `bytes` apart.
    StructCopy { fields: usize, bytes: u64 },
    /// The lanes' addresses come from `value`, data each lane reads at an address of its
    /// own (a gather or scatter): `sectors` is then a range, from 1 (all alike) up.
    DataDependent { value: String, chunk: bool },
}

/// What a finding says about one access.
#[derive(Debug)]
pub struct Uncoalesced<'a> {
    /// The access as written (`p[i].x`).
    pub access: &'a str,
    /// Sectors per warp (an expression).
    pub sectors: &'a str,
    /// The sectors the warp's bytes need.
    pub ideal: u64,
    /// The bytes the warp's threads access (distinct addresses times the element size).
    pub warp_bytes: u64,
    /// Bytes between neighbouring threads.
    pub stride: Option<&'a str>,
    /// The condition a symbolic stride makes it uncoalesced under (`n > 1`).
    pub when: Option<&'a str>,
    pub cause: Cause,
}

/// The finding for an access at `line`.
pub fn finding(u: &Uncoalesced, line: u32) -> Reason {
    let apart = match u.stride {
        Some(s) => format!(" (neighbouring threads are {s} bytes apart)"),
        None => String::new(),
    };
    let when = match u.when {
        Some(w) => format!(" when {w}"),
        None => String::new(),
    };
    let message = match &u.cause {
        Cause::DataDependent { value, .. } => format!(
            "`{}`: may take {} sectors per warp, as the data falls (the address depends on \
             `{value}`, read per lane), where its {} bytes need {}",
            u.access, u.sectors, u.warp_bytes, u.ideal
        ),
        _ => format!(
            "`{}`: {} sectors per warp{when} where its {} bytes need {}{apart}",
            u.access, u.sectors, u.warp_bytes, u.ideal
        ),
    };
    let help = match &u.cause {
        Cause::StructField { field, bytes } => format!(
            "`{field}` is one field of a {bytes}-byte structure: keep each field in an array of \
             its own (structure of arrays), so that a warp's values of `{field}` lie side by side"
        ),
        Cause::ColumnWalk => "threadIdx.x walks down a column: let it index the last, contiguous \
             subscript (swap the roles of the indices), or transpose the array"
            .to_string(),
        Cause::Strided => "give consecutive threads consecutive elements, or load the block's \
             data into shared memory with consecutive threads and read it from there"
            .to_string(),
        Cause::StructCopy { fields, bytes } => format!(
            "the copy of a {bytes}-byte structure is {fields} field accesses, each with \
             neighbouring threads {bytes} bytes apart: copy it as consecutive words with \
             consecutive threads (through shared memory), or keep each field in an array of its \
             own (structure of arrays)"
        ),
        Cause::DataDependent { chunk: true, .. } => "each thread walks a chunk of its own \
             that the data places: interleave the chunks (element `k` of every thread's chunk \
             side by side), or stage the chunks through shared memory and write them with \
             consecutive threads"
            .to_string(),
        Cause::DataDependent { chunk: false, .. } => "the data chooses each lane's element: \
             order the data (sort or renumber the indices) so that neighbouring threads get \
             neighbouring elements, or stage what a block reads through shared memory"
            .to_string(),
    };
    Finding::new(&RULE, Verdict::NotFriendly, message, vec![line], Some(help)).reason
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
