//! WW110 pointers may alias: two pointers may point into one array, and if they do the
//! loop carries a dependence; a `restrict` or a profile settles it.

use super::{Code, Example, Finding, Rule};
use crate::model::{Access, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW110,
    name: "pointers may alias",
    explanation:
        "two pointers may point into the same array; a `restrict` or a profile settles it",
    gpu: "if the two pointers overlap, iterations writing through one change what others read through the other, and the threads race",
    fix: "declare the parameters `restrict` when they never overlap, or run `warpwise profile` to observe whether the program's runs make them overlap",
    example: Example {
        source: include_str!("examples/ww110.c"),
        verdict: Verdict::NeedsProfile,
        subject: super::Subject::Loop,
    },
};

/// `store` writes through `first` what `other` may access through `second`. `copied`: the
/// program assigns one pointer from the other (see `copies`), so `restrict` would be a false
/// promise and the help says so.
pub fn pointers(
    first: &str,
    second: &str,
    store: &Access,
    other: &Access,
    copied: bool,
) -> Finding {
    let (why, help) = if copied {
        (
            ", as the program copies one of these pointers into the other (an assignment, or a value carried around an enclosing loop)",
            "the loop is parallel only in the runs where they differ: keep separate arrays (or swap the two pointers instead of copying one), or run `warpwise profile`",
        )
    } else {
        (
            "",
            "declare the pointer parameters `restrict` if they never overlap, or run `warpwise profile`",
        )
    };
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        format!(
            "{first} and {second} may point into the same array{why}: `{}` (line {}) writes what `{}` (line {}) may access",
            store.text, store.line, other.text, other.line
        ),
        vec![store.line, other.line],
        Some(help.into()),
    )
}

/// A store that changes the loop's bound (read at the keyword's `line`) if its pointer
/// points into the object the bound reads: `escaped` when that object is a local or an allocation of the function whose
/// address was taken before the loop (the pointer may hold it), else a pointer pair the
/// aliasing policy leaves undecided.
pub fn bound(bound: &str, line: u32, store: &Access, pointer: &str, escaped: bool) -> Finding {
    let why = if escaped {
        "its address was taken before the loop, and the pointer, read from memory or returned by a call, may hold it"
    } else {
        "the aliasing policy does not assume they are distinct"
    };
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        format!(
            "the loop bound reads `{bound}`, which `{}` (line {}) writes if `{pointer}` points into the same object; {why}",
            store.text, store.line
        ),
        vec![line, store.line],
        Some("copy the bound into a local variable before the loop, declare the pointers `restrict`, or run `warpwise profile`".into()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
