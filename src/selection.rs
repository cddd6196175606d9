//! `--function` and `--loop` must name something: a selection that matches nothing is a
//! usage error (exit 2) that names the closest candidates, never a silent "0 loops".

use frontend::loop_ref::{LoopRef, LoopSelector};
use frontend::unit::Unit;

/// `--loop`'s selector, or the usage error for a text of another shape.
pub fn parse_loop(wanted: &str) -> Result<LoopSelector, String> {
    wanted.parse().map_err(|_| {
        format!("`--loop {wanted}`: expected FILE:LINE or FILE:LINE:COL (e.g. `kernel.c:42`)")
    })
}

/// The error for a `--function` that names no function of the analysed units, with the
/// closest names; `None` when the function exists.
pub fn unknown_function(wanted: &str, units: &[Unit]) -> Option<String> {
    let names: Vec<&str> = units
        .iter()
        .flat_map(|u| u.lowered.program.functions.iter().map(|f| f.name.as_str()))
        .collect();
    if names.contains(&wanted) {
        return None;
    }
    if let Some(at) = units
        .iter()
        .find_map(|u| uncalled_header_definition(u, wanted))
    {
        return Some(format!(
            "`--function {wanted}`: `{wanted}` is a `static` function of {at} that no analysed file calls, so it is not compiled with them (gcc leaves it out too); analyse a file that calls it, or the header itself"
        ));
    }
    let mut ranked: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (edit_distance(wanted, n), *n))
        .collect();
    ranked.sort();
    ranked.dedup();
    let close: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|(_, n)| format!("`{n}`"))
        .collect();
    Some(if close.is_empty() {
        format!("`--function {wanted}`: the analysed files define no function")
    } else {
        format!(
            "`--function {wanted}`: no function of that name in the analysed files (closest: {})",
            close.join(", ")
        )
    })
}

/// Where `name` is defined in a header of `unit` (`file:line`) when the unit has no function
/// of that name: a `static` function of another header that the file never calls, left out
/// of the parse as gcc leaves it out of the object (see `frontend::prune`).
fn uncalled_header_definition(unit: &Unit, name: &str) -> Option<String> {
    let text = &unit.preprocessed.text;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut from = 0;
    while let Some(found) = text[from..].find(name) {
        let start = from + found;
        let end = start + name.len();
        from = end;
        let b = text.as_bytes();
        if start > 0 && ident(b[start - 1]) || b.get(end).copied().is_some_and(ident) {
            continue;
        }
        let rest = text[end..].trim_start();
        // A definition: `name(...)` then its body's `{` before any `;`.
        if !rest.starts_with('(') {
            continue;
        }
        let header_end = rest.find([';', '{']).unwrap_or(0);
        if !rest[header_end..].starts_with('{') {
            continue;
        }
        let span = frontend::ir::Span {
            start: start as u32,
            end: end as u32,
        };
        let at = unit.resolve(span)?;
        if at.path == unit.path {
            return None;
        }
        return Some(format!("`{}:{}`", at.path.display(), at.line));
    }
    None
}

/// The error for a `--loop` that matched none of `ids` (every loop id of the selection
/// without `--loop`), naming the loops nearest to it: same file first, then by line.
pub fn unknown_loop(wanted: &str, ids: &[LoopRef]) -> String {
    let selector = wanted.parse::<LoopSelector>().ok();
    let (want_file, want_line) = split_selector(wanted);
    // Ties are broken by the id's text, which keeps the order the message has always had.
    let mut ranked: Vec<(bool, u64, String)> = ids
        .iter()
        .filter(|id| !selector.as_ref().is_some_and(|s| s.matches(id)))
        .map(|id| {
            let file = &id.file;
            let same_file = file.ends_with(&want_file) || want_file.ends_with(file.as_str());
            (
                !same_file,
                u64::from(id.line).abs_diff(want_line),
                id.to_string(),
            )
        })
        .collect();
    ranked.sort();
    let close: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|(_, _, id)| format!("`{id}`"))
        .collect();
    if close.is_empty() {
        format!("`--loop {wanted}`: the analysed files have no loops")
    } else {
        format!(
            "`--loop {wanted}`: no loop starts there (nearest: {})",
            close.join(", ")
        )
    }
}

/// `(file, line)` of a selector, for ranking; the whole text and line 0 for another text.
fn split_selector(wanted: &str) -> (String, u64) {
    wanted
        .parse::<LoopSelector>()
        .map_or((wanted.to_string(), 0), |s| (s.file, u64::from(s.line)))
}

/// The names among `candidates` nearest to `wanted` (at most three, within an edit
/// distance of a third of its length, at least 2), nearest first.
pub fn nearest_names<'a>(wanted: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    let limit = (wanted.chars().count() / 3).max(2);
    let mut ranked: Vec<(usize, &'a str)> = candidates
        .iter()
        .map(|c| (edit_distance(wanted, c), *c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    ranked.sort();
    ranked.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Levenshtein distance, for suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_ids_are_checked_for_shape() {
        for ok in ["a.c:12", "dir/a.c:12:5", "a.c:1:1"] {
            assert!(parse_loop(ok).is_ok(), "{ok}");
        }
        for bad in ["garbage", "a.c:", "a.c:x", ":12", "a.c:0", "a.c:12:x"] {
            assert!(parse_loop(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_nearest_loops_of_the_same_file_come_first() {
        let ids: Vec<LoopRef> = ["b.c:998:3", "a.c:10:3", "a.c:40:5", "a.c:12:9"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let e = unknown_loop("a.c:999", &ids);
        assert!(
            e.contains("nearest: `a.c:40:5`, `a.c:12:9`, `a.c:10:3`, `b.c:998:3`"),
            "{e}"
        );
    }

    #[test]
    fn close_function_names_are_suggested() {
        assert_eq!(edit_distance("kernal", "kernel"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
