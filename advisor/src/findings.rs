//! One finding per cause and loop: the analyses report every access pair, call and global
//! they cannot clear (a CFD loop carried 1,752 findings, sqlite3's interpreter loop 39,667
//! "may point into the same array" pairs); a reader needs each cause once, with its count,
//! and a program reading the report still gets every pair, under the finding.

use crate::model::Reason;

/// Past this many findings, a loop's findings of one code are merged into one.
pub const MAX_FINDINGS: usize = 12;

/// `reasons` with the findings of one code about one subject (the array, variable or
/// callee the message names first) merged into one; when more than [`MAX_FINDINGS`] remain,
/// every code's findings merged into one. A merged finding reads as its first member, says
/// how many it stands for, spans all their lines and keeps them all in `instances`.
/// Findings without a subject stay as they are; the order is that of the first members.
pub fn group(reasons: Vec<Reason>) -> Vec<Reason> {
    let by_subject = merge_by(reasons, |r| {
        subject(&r.message).map(|s| format!("{}\u{0}{s}", r.code))
    });
    if by_subject.len() <= MAX_FINDINGS {
        return by_subject;
    }
    merge_by(by_subject, |r| Some(r.code.to_string()))
}

/// Merges the reasons that `key` maps to the same key, in the order of first appearance.
fn merge_by(reasons: Vec<Reason>, key: impl Fn(&Reason) -> Option<String>) -> Vec<Reason> {
    let mut groups: Vec<(Option<String>, Vec<Reason>)> = Vec::new();
    for r in reasons {
        let k = key(&r);
        match groups
            .iter_mut()
            .find(|(g, _)| k.is_some() && g.as_ref() == k.as_ref())
        {
            Some((_, members)) => members.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups.into_iter().map(|(_, m)| merged(m)).collect()
}

/// One finding standing for `members` (a member that stands for others already gives
/// its own members).
fn merged(members: Vec<Reason>) -> Reason {
    let mut each: Vec<Reason> = Vec::new();
    for mut m in members {
        if m.instances.is_empty() {
            each.push(m);
        } else {
            each.append(&mut m.instances);
        }
    }
    if each.len() == 1 {
        return each.pop().expect("one member");
    }
    let first = &each[0];
    let mut lines: Vec<u32> = each.iter().flat_map(|r| r.lines.iter().copied()).collect();
    lines.sort_unstable();
    lines.dedup();
    let others = each.len() - 1;
    let message = format!(
        "{} ({others} more finding{} of this kind: {} in all, listed under `instances` in \
         YAML/JSON and with `--verbose`)",
        first.message,
        if others == 1 { "" } else { "s" },
        each.len()
    );
    Reason {
        code: first.code,
        message,
        lines,
        help: first.help.clone(),
        witness: first.witness.clone(),
        read_at: first.read_at,
        instances: each,
    }
}

/// What a finding is about: the array of "... the same element of `a`", else the first
/// name the message quotes (`a` of "dependence on `a`", the callee of "`f` calls ...", the
/// first pointer of "`p` and `q` may point ..."); `None` when it quotes nothing.
pub fn subject(message: &str) -> Option<&str> {
    const ELEMENT_OF: &str = "the same element of `";
    if let Some(at) = message.find(ELEMENT_OF) {
        let rest = &message[at + ELEMENT_OF.len()..];
        return rest.find('`').map(|end| &rest[..end]);
    }
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(code: &str, message: &str, line: u32) -> Reason {
        Reason {
            code: crate::rules::Code::parse(code).expect("a code"),
            message: message.into(),
            lines: vec![line],
            help: None,
            witness: None,
            instances: Vec::new(),
            read_at: None,
        }
    }

    /// `(code, message starts with, number of instances)` of each finding of `group(input)`.
    fn check(input: Vec<Reason>, expected: &[(&str, &str, usize)]) {
        let grouped = group(input);
        let got: Vec<(String, String, usize)> = grouped
            .iter()
            .map(|r| (r.code.to_string(), r.message.clone(), r.instances.len()))
            .collect();
        assert_eq!(got.len(), expected.len(), "{got:#?}");
        for ((code, message, n), (want_code, want_start, want_n)) in got.iter().zip(expected) {
            assert_eq!(code, want_code, "{got:#?}");
            assert!(message.starts_with(want_start), "{message} / {want_start}");
            assert_eq!(n, want_n, "{got:#?}");
        }
    }

    #[test]
    fn findings_about_one_array_become_one() {
        check(
            vec![
                reason("WW101", "write-after-read dependence on `c`: `c[j]` (line 3)", 3),
                reason("WW110", "`a` and `b` may point into the same array: x", 4),
                reason("WW101", "write-after-write dependence on `c`: `c[j]` (line 5)", 5),
                reason("WW101", "write-after-write dependence on `d`: `d[j]` (line 6)", 6),
                reason("WW107", "the loop has 2 exits", 7),
                reason("WW107", "no induction variable", 7),
            ],
            &[
                ("WW101", "write-after-read dependence on `c`: `c[j]` (line 3) (1 more finding of this kind: 2 in all", 2),
                ("WW110", "`a` and `b` may point", 0),
                ("WW101", "write-after-write dependence on `d`", 0),
                ("WW107", "the loop has 2 exits", 0),
                ("WW107", "no induction variable", 0),
            ],
        );
    }

    #[test]
    fn pairs_of_one_array_group_by_the_array_not_the_access() {
        check(
            vec![
                reason(
                    "WW111",
                    "`x[a[i]]` and `x[b[i]]` may touch the same element of `x`: d",
                    1,
                ),
                reason(
                    "WW111",
                    "`x[b[i]]` and `x[a[i]]` may touch the same element of `x`: d",
                    2,
                ),
            ],
            &[("WW111", "`x[a[i]]` and `x[b[i]]`", 2)],
        );
    }

    #[test]
    fn more_than_twelve_causes_merge_by_code() {
        let many: Vec<Reason> = (0..30)
            .map(|k| {
                reason(
                    "WW110",
                    &format!("`p{k}` and `q` may point into the same array"),
                    k,
                )
            })
            .chain([reason("WW105", "`f` calls `exit`", 40)])
            .collect();
        let grouped = group(many);
        assert_eq!(grouped.len(), 2);
        assert_eq!(grouped[0].instances.len(), 30);
        assert_eq!(grouped[0].lines, (0..30).collect::<Vec<u32>>());
        assert!(grouped[0]
            .message
            .contains("29 more findings of this kind: 30 in all"));
        assert_eq!(grouped[1].code, crate::rules::Code::WW105);
        assert!(grouped[1].instances.is_empty());
    }

    #[test]
    fn the_first_members_witness_and_help_stay() {
        let mut a = reason("WW101", "dependence on `c`: one", 1);
        a.help = Some("privatize".into());
        let b = reason("WW101", "dependence on `c`: two", 2);
        let grouped = group(vec![a.clone(), b.clone()]);
        assert_eq!(grouped[0].help.as_deref(), Some("privatize"));
        assert_eq!(grouped[0].instances, vec![a, b]);
    }

    #[test]
    fn subjects() {
        assert_eq!(subject("dependence on `mv`: `mv[i]`"), Some("mv"));
        assert_eq!(
            subject("`a[i] += 1` and `a[j]` may touch the same element of `a`: x"),
            Some("a")
        );
        assert_eq!(subject("the loop has 2 exits"), None);
    }
}
