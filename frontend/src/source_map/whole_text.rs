//! A span's original text widened to a whole piece of C where a macro expansion cut it.
//!
//! A preprocessed span maps back onto its original line token by token. Inside a macro
//! invocation the expansion's brackets and commas match the invocation's own, so an access
//! `(Fout[k]).r` that `C_ADDTO(Fout[k], t)` expands to maps onto `(Fout[k], t)`, and a
//! call's first argument onto `BFT_MALLOC(name,`: text that is not C and that a reader
//! cannot find. Such a fragment is widened to the smallest bracket group of the line that
//! holds it, with the name that calls it: the invocation as written.

use super::tokenize;

/// The byte range of `line` to show for the mapped range `start..end`: itself when it reads
/// as a whole piece of C (balanced brackets, no comma at an edge, not an argument list cut
/// from its callee), else the smallest enclosing `name(...)`, `(...)`, `[...]` or `{...}` on
/// the line; `None` when the line holds none (an invocation spread over several lines).
pub(super) fn whole_range(line: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    // Most quotes are whole: told from the quote and the word before it alone, without
    // reading the line (a generated line of 10,000 statements has one quote each).
    if quote_is_whole(line, start, end) {
        return Some((start, end));
    }
    // A fragment: its group is looked for within a window of the line around it.
    let from = floor_boundary(line, start.saturating_sub(WINDOW));
    let to = ceil_boundary(line, end.saturating_add(WINDOW));
    let (s, e) = fragment_range(&line[from..to], start - from, end - from)?;
    Some((s + from, e + from))
}

/// How far around a fragment its enclosing group is looked for, in bytes.
const WINDOW: usize = 4096;

fn floor_boundary(line: &str, mut at: usize) -> usize {
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(line: &str, at: usize) -> usize {
    let mut at = at.min(line.len());
    while !line.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Whether `line[start..end]` reads as a whole piece of C: brackets balanced (literals
/// aside), no comma at either end, and not an argument list whose callee is left out.
fn quote_is_whole(line: &str, start: usize, end: usize) -> bool {
    let Some(text) = line.get(start..end) else {
        return false;
    };
    let text = text.trim();
    if text.is_empty() || text.starts_with(',') || text.ends_with(',') {
        return text.is_empty();
    }
    if !balanced(text) {
        return false;
    }
    if !text.starts_with('(') {
        return true;
    }
    // The word just before an opening parenthesis: a callee unless a keyword.
    let before = line[..start].trim_end();
    let word_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |k| k + 1);
    let word = &before[word_start..];
    !is_identifier(word) || KEYWORDS.contains(&word)
}

/// Whether `text`'s brackets nest, string and character literals aside (and closed).
pub fn balanced(text: &str) -> bool {
    let mut open = Vec::new();
    let mut literal: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(quote) = literal {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == quote => literal = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => literal = Some(c),
            '(' => open.push(')'),
            '[' => open.push(']'),
            '{' => open.push('}'),
            ')' | ']' | '}' if open.pop() != Some(c) => return false,
            _ => {}
        }
    }
    open.is_empty() && literal.is_none()
}

/// [`whole_range`] of a fragment, over the tokens of `line` (a window of the source line).
fn fragment_range(line: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let toks = tokenize(line);
    let text = |k: usize| &line[toks[k].0..toks[k].1];
    let first = toks.iter().position(|t| t.1 > start)?;
    let last = toks.iter().rposition(|t| t.0 < end)?;
    if last < first {
        return Some((start, end));
    }
    let called = |open: usize| {
        text(open) == "("
            && open > 0
            && is_identifier(text(open - 1))
            && !KEYWORDS.contains(&text(open - 1))
    };
    let whole = |a: usize, b: usize| {
        balanced(&line[toks[a].0..toks[b].1]) && text(a) != "," && text(b) != "," && !called(a)
    };
    if whole(first, last) {
        return Some((start, end));
    }
    let closes = matching_closes(&toks, line);
    // The innermost group that holds the range: the last opening bracket at or before its
    // start (or just after the callee it starts with) whose close is at or after its end.
    let callee_first = first < last && called(first + 1);
    let open = (0..=first + usize::from(callee_first))
        .rev()
        .find(|&k| closes[k].is_some_and(|close| close >= last))?;
    let close = closes[open]?;
    let open = if called(open) { open - 1 } else { open };
    Some((toks[open].0, toks[close].1))
}

/// The C keywords that can stand before a parenthesis without calling anything.
const KEYWORDS: &[&str] = &[
    "if", "while", "for", "switch", "return", "sizeof", "_Alignof", "case", "do", "else",
];

fn is_identifier(t: &str) -> bool {
    t.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
}

fn closing(open: &str) -> Option<&'static str> {
    match open {
        "(" => Some(")"),
        "[" => Some("]"),
        "{" => Some("}"),
        _ => None,
    }
}

/// For each token that opens a bracket, the index of the token that closes it on the line.
fn matching_closes(toks: &[(usize, usize)], line: &str) -> Vec<Option<usize>> {
    let mut closes = vec![None; toks.len()];
    let mut stack: Vec<(usize, &str)> = Vec::new();
    for (k, &(s, e)) in toks.iter().enumerate() {
        let t = &line[s..e];
        if let Some(c) = closing(t) {
            stack.push((k, c));
        } else if matches!(t, ")" | "]" | "}") {
            // A close that matches no open of the line (a statement spread over lines)
            // leaves the opens before it unmatched.
            match stack.pop() {
                Some((open, c)) if c == t => closes[open] = Some(k),
                _ => stack.clear(),
            }
        }
    }
    closes
}

#[cfg(test)]
mod tests {
    use super::whole_range;

    /// The text shown for the part of `line` that `part` names (its first occurrence).
    fn check(line: &str, part: &str, expected: Option<&str>) {
        let start = line.find(part).unwrap();
        let shown = whole_range(line, start, start + part.len()).map(|(s, e)| &line[s..e]);
        assert_eq!(shown, expected, "{part:?} of {line:?}");
    }

    #[test]
    fn whole_pieces_of_c_are_kept() {
        check("  A[IDX(i, j)] = 0;", "A[IDX(i, j)]", Some("A[IDX(i, j)]"));
        check("  x = (a)[i];", "(a)[i]", Some("(a)[i]"));
        check("  if (x > 0) y = 1;", "(x > 0)", Some("(x > 0)"));
        check(
            "  C_MUL(t, scratch[q], w);",
            "scratch[q]",
            Some("scratch[q]"),
        );
    }

    #[test]
    fn fragments_widen_to_the_invocation() {
        check(
            "C_ADDTO( Fout[ k ] ,t);",
            "( Fout[ k ] ,t)",
            Some("C_ADDTO( Fout[ k ] ,t)"),
        );
        check(
            "C_ADDTO( Fout[ k ] ,t);",
            ",",
            Some("C_ADDTO( Fout[ k ] ,t)"),
        );
        check(
            "  BFT_MALLOC(sec_name, n, char);",
            "BFT_MALLOC(sec_name,",
            Some("BFT_MALLOC(sec_name, n, char)"),
        );
        check("  y = f(g(a, b), c);", ", b)", Some("g(a, b)"));
        check("  a[i][j] = 0;", "j]", Some("[j]"));
    }

    #[test]
    fn a_fragment_with_no_group_on_its_line_has_none() {
        check("  f(a,", "f(a,", None);
        check("  b);", "b)", None);
    }
}
