//! WW111 dependence not decidable statically: whether two iterations touch one element
//! depends on data or on an expression the analysis cannot bound; a profile settles it.

use super::{Code, Example, Finding, Rule};
use crate::model::{Access, Verdict};

pub const RULE: Rule = Rule {
    code: Code::WW111,
    name: "dependence not decidable statically",
    explanation:
        "an index depends on data (e.g. `a[idx[i]]`) or is not affine; a profile settles it",
    gpu: "whether two iterations touch the same element depends on data (an index read from memory) or on an expression the analysis cannot bound; a wrong guess races",
    fix: "run `warpwise profile` (it records the accesses and reports observed dependences), or make the index a function of the loop variable",
    example: Example {
        source: include_str!("examples/ww111.c"),
        verdict: Verdict::NeedsProfile,
        subject: super::Subject::Loop,
    },
};

const HELP: &str = "run `warpwise profile` to observe whether they do";

/// The loop's accesses cannot be put in one iteration space (`why`), at the keyword's
/// `line`.
pub fn incomparable(why: &str, line: u32) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        format!("the accesses cannot be compared statically: {why}"),
        vec![line],
        None,
    )
}

/// `a` and `b` may touch the same element of `array`, for the reason `why`.
pub fn may_touch(array: &str, a: &Access, b: &Access, why: &str) -> Finding {
    pair(
        format!(
            "`{}` and `{}` may touch the same element of `{array}`: {why}",
            a.text, b.text
        ),
        a,
        b,
    )
}

/// A dependence of `kind` between `a` and `b` on `array` is likely (`why`), but no two
/// iterations showing it were found.
pub fn likely(kind: &str, array: &str, a: &Access, b: &Access, why: &str) -> Finding {
    pair(format!(
        "a dependence is likely but could not be shown with two iterations: {kind} on `{array}` between `{}` (line {}) and `{}` (line {}): {why}",
        a.text, a.line, b.text, b.line
    ), a, b)
}

/// Two iterations show a dependence of `kind` between `a` and `b` on `array` only if
/// data the loop reads take the values of `shown`: the `chosen` variables, which differ
/// from iteration to iteration.
pub fn if_data(
    kind: &str,
    array: &str,
    a: &Access,
    b: &Access,
    shown: &str,
    chosen: &[&str],
) -> Finding {
    pair(format!(
        "{kind} on `{array}` between `{}` (line {}) and `{}` (line {}) if the data the loop reads take these values: {shown} (`{}` differ from iteration to iteration)",
        a.text, a.line, b.text, b.line, chosen.join("`, `")
    ), a, b)
}

/// Scalar `name`, updated at `line`, may carry a value between iterations (`why`), but no
/// two iterations showing it were found.
pub fn likely_scalar(name: &str, line: u32, why: &str) -> Finding {
    Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        format!("a dependence is likely but could not be shown with two iterations: `{name}` may carry a value from one iteration to the next: {why}"),
        vec![line],
        Some(HELP.into()),
    )
}

fn pair(message: String, a: &Access, b: &Access) -> Finding {
    let mut finding = Finding::new(
        &RULE,
        Verdict::NeedsProfile,
        message,
        vec![a.line, b.line],
        Some(HELP.into()),
    );
    finding.reason.read_at = Some((a.line, b.line));
    finding
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_shows_the_finding() {
        super::super::example_check::shows(&super::RULE);
    }
}
