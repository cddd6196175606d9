//! Qualified names in a report's prose read as words: `` `ma@1031` `` becomes
//! `` `ma` (line 1031) ``, and a bare `face_id@f:682` in a stated condition leaves a note at
//! its end. Expressions keep their qualified names (they must name one value each); a
//! sentence does not need them, as the place is said in words.

use crate::model::{LoopReport, ValuePlace};
use crate::present::{name_start, texts_mut, Kind};
use crate::value_name::place_after;

/// `report`'s prose (messages, notes, assumptions) and its calls' effects with their
/// qualified names said in words; run once the names are decided (`present::present`).
pub(crate) fn say_places(report: &mut LoopReport) {
    for (kind, t) in texts_mut(report) {
        if kind == Kind::Prose && t.contains('@') {
            *t = in_words(t);
        }
    }
    for c in report.calls.iter_mut() {
        for e in c.effects.iter_mut().filter(|e| e.contains('@')) {
            *e = in_words(e);
        }
    }
}

/// A place in words: `line 63`, `line 63, column 18`, `value 2`, `in `f` called at line 118`.
fn words(place: &ValuePlace) -> String {
    match place {
        ValuePlace::At {
            line,
            column,
            ordinal,
        } => {
            let mut words = format!("line {line}");
            if let Some(c) = column {
                words.push_str(&format!(", column {c}"));
            }
            if let Some(k) = ordinal {
                words.push_str(&format!(", value {k}"));
            }
            words
        }
        ValuePlace::Before { line } => format!("line {line}"),
        ValuePlace::Unplaced { ordinal } => format!("value {ordinal}"),
        ValuePlace::Global { .. } | ValuePlace::Iteration => the_value(place),
        ValuePlace::Callee {
            function,
            line,
            ordinal,
        } => {
            let mut words = format!("in `{function}`");
            if let Some(line) = line {
                words.push_str(&format!(" called at line {line}"));
            }
            if let Some(k) = ordinal {
                words.push_str(&format!(", value {k}"));
            }
            words
        }
    }
}

/// One qualified name of a text: `text[start..at]` is the name, `text[at..end]` its
/// qualifier.
#[derive(Debug)]
struct Qualified {
    start: usize,
    at: usize,
    end: usize,
    place: ValuePlace,
}

/// `text` with the qualified names of its code spans and of its bare expressions said in
/// words (see the module documentation). A name that reads two places within one span, or
/// within the bare text, keeps its qualifiers: there they tell the values apart.
pub(crate) fn in_words(text: &str) -> String {
    if !text.contains('@') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut bare_notes: Vec<String> = Vec::new();
    let code = spans(text);
    let bare = qualified_names(text, &code, false);
    // A bare name also conflicts with its plain name in code (`8*i@f:12` beside "iterations
    // of `i`", the loop's own `i`).
    let bare_kept = conflicting(text, &bare);
    let mut last = 0;
    let mut code_spans = code.iter().copied().peekable();
    // Walk the text once: bare names are stripped in place, each code span rewritten whole.
    let mut bare_iter = bare.iter().peekable();
    loop {
        let next_span = code_spans.peek().copied();
        let next_bare = bare_iter.peek().map(|q| q.start);
        match (next_span, next_bare) {
            // A span or a name that starts inside one already written (a name's head
            // running into a quote, `(``)@a`) is part of it.
            (Some((s, _)), _) if s < last => {
                code_spans.next();
            }
            (_, Some(b)) if b < last => {
                bare_iter.next();
            }
            (Some((s, e)), b) if b.is_none_or(|b| s < b) => {
                out.push_str(&text[last..s]);
                out.push_str(&span_in_words(&text[s..e]));
                last = e;
                code_spans.next();
            }
            (_, Some(_)) => {
                let q = bare_iter.next().expect("peeked");
                let name = &text[q.start..q.at];
                out.push_str(&text[last..q.at]);
                if bare_kept.contains(&name) {
                    out.push_str(&text[q.at..q.end]);
                } else {
                    let note = format!("`{name}` is {}", the_value(&q.place));
                    if !bare_notes.contains(&note) {
                        bare_notes.push(note);
                    }
                }
                last = q.end;
            }
            (None, None) => break,
            (Some(_), _) => unreachable!("matched above"),
        }
    }
    out.push_str(&text[last..]);
    if !bare_notes.is_empty() {
        out.push_str(&format!(" (where {})", bare_notes.join("; ")));
    }
    out
}

/// How a note at a text's end says which value a bare name is.
fn the_value(place: &ValuePlace) -> String {
    match place {
        ValuePlace::At { .. } | ValuePlace::Before { .. } => {
            format!("its value at {}", words(place))
        }
        ValuePlace::Unplaced { ordinal } => format!("value {ordinal} of several"),
        ValuePlace::Global { ordinal: 1 } => "a file-scope variable of another file".into(),
        ValuePlace::Global { ordinal } => {
            format!("a file-scope variable of another file, number {ordinal} of that name")
        }
        ValuePlace::Iteration => "the iteration number of its loop".into(),
        ValuePlace::Callee {
            function,
            line,
            ordinal,
        } => {
            let mut words = format!("the variable of `{function}`");
            if let Some(line) = line {
                words.push_str(&format!(" in the call at line {line}"));
            }
            if let Some(k) = ordinal {
                words.push_str(&format!(", value {k} of several"));
            }
            words
        }
    }
}

/// A code span (with its backquotes) with its qualified names said after it:
/// `` `ma@1031` `` is `` `ma` (line 1031) ``, `` `_elt_ids@183[j]` `` is
/// `` `_elt_ids[j]` (`_elt_ids`: line 183) ``.
fn span_in_words(span: &str) -> String {
    let inner = &span[1..span.len() - 1];
    let names = qualified_names(inner, &[], true);
    if names.is_empty() || !conflicting(inner, &names).is_empty() {
        return span.to_string();
    }
    let mut stripped = String::with_capacity(inner.len());
    let mut last = 0;
    let mut said: Vec<String> = Vec::new();
    for q in &names {
        stripped.push_str(&inner[last..q.at]);
        last = q.end;
        let name = &inner[q.start..q.at];
        let words = if q.start == 0 && q.end == inner.len() {
            words(&q.place)
        } else {
            format!("`{name}`: {}", words(&q.place))
        };
        if !said.contains(&words) {
            said.push(words);
        }
    }
    stripped.push_str(&inner[last..]);
    format!("`{stripped}` ({})", said.join("; "))
}

/// The names of `names` that read more than one place in `text`: two qualifiers, or a
/// qualifier and the plain name (`i = 2 ...; i@76 = 1`, the `i`s of two loops).
fn conflicting<'t>(text: &'t str, names: &[Qualified]) -> Vec<&'t str> {
    let mut out = Vec::new();
    for (k, q) in names.iter().enumerate() {
        let name = &text[q.start..q.at];
        let other = names[..k]
            .iter()
            .any(|p| &text[p.start..p.at] == name && p.place != q.place);
        if (other || appears_plain(text, name)) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Whether `name` occurs in `text` as a name of its own, unqualified.
fn appears_plain(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let part_of_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    text.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        let before_ok = at == 0
            || !(part_of_name(b[at - 1]) || (b[at - 1] == b'>' && at >= 2 && b[at - 2] == b'-'));
        let after_ok = b
            .get(end)
            .is_none_or(|c| !(part_of_name(*c) || *c == b'@' || *c == b'['));
        before_ok && after_ok
    })
}

/// The code spans of `text`, backquote to backquote, each with its quotes.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let quotes: Vec<usize> = text.match_indices('`').map(|(k, _)| k).collect();
    quotes.chunks_exact(2).map(|p| (p[0], p[1] + 1)).collect()
}

/// The qualified names of `text` outside `skip` (ranges of code spans), in order; with
/// `whole`, a text that is all code.
fn qualified_names(text: &str, skip: &[(usize, usize)], whole: bool) -> Vec<Qualified> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'@' || skip.iter().any(|(s, e)| (*s..*e).contains(&k)) {
            k += 1;
            continue;
        }
        let before = k.checked_sub(1).map(|p| b[p]);
        let follows_name = before
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b']' || c == b')');
        let parsed = follows_name.then(|| qualifier(text, k + 1)).flatten();
        let Some((place, end)) = parsed else {
            k += 1;
            continue;
        };
        let start = name_start(&b[..k], k);
        // Outside code, a name is an expression's variable: it starts a word.
        let starts_word = whole || start == 0 || !b[start - 1].is_ascii_alphanumeric();
        if start < k && starts_word {
            out.push(Qualified {
                start,
                at: k,
                end,
                place,
            });
        }
        k = end;
    }
    out
}

/// The place a qualifier starting at `text[k]` (just after `@`) names, and where it ends,
/// as [`place_after`] reads it; a bare word followed by `.` is a mail address or a file
/// name (`user@example.org`), not a callee's variable.
fn qualifier(text: &str, k: usize) -> Option<(ValuePlace, usize)> {
    let (end, place) = place_after(text, k)?;
    let mail = matches!(
        place,
        ValuePlace::Callee {
            line: None,
            ordinal: None,
            ..
        }
    ) && text.as_bytes().get(end) == Some(&b'.');
    (!mail).then_some((place, end))
}

#[cfg(test)]
mod tests {
    use super::in_words;

    fn check(text: &str, expected: &str) {
        assert_eq!(in_words(text), expected, "for {text}");
    }

    #[test]
    fn a_quoted_value_says_its_line() {
        check(
            "`ma@988` and `ma@1028` may point into the same array: `f(ma)` (line 988) writes",
            "`ma` (line 988) and `ma` (line 1028) may point into the same array: `f(ma)` (line 988) writes",
        );
        check(
            "the offset depends on `_elt_ids@183[j]`, a value that differs",
            "the offset depends on `_elt_ids[j]` (`_elt_ids`: line 183), a value that differs",
        );
        check("`a@12:7` is read", "`a` (line 12, column 7) is read");
        check("`p@?2` and `p@?3`", "`p` (value 2) and `p` (value 3)");
        check("`x@L146` moves", "`x` (line 146) moves");
    }

    #[test]
    fn a_callee_variable_says_its_function_and_call() {
        check(
            "min(-face_id@_mat_vec:682 + n_faces - 1, 507) > 0 (a loop in `_mat_vec` runs)",
            "min(-face_id + n_faces - 1, 507) > 0 (a loop in `_mat_vec` runs) (where `face_id` is the variable of `_mat_vec` in the call at line 682)",
        );
        check(
            "-l@tqli + nCodes > 0 (a loop in `tqli` runs)",
            "-l + nCodes > 0 (a loop in `tqli` runs) (where `l` is the variable of `tqli`)",
        );
        check(
            "`i@f:1077@?1` is read",
            "`i` (in `f` called at line 1077, value 1) is read",
        );
    }

    #[test]
    fn file_scope_values_and_second_loads_say_so() {
        check(
            "`t@global2` is read",
            "`t` (a file-scope variable of another file, number 2 of that name) is read",
        );
        check(
            "assuming t@global > 0",
            "assuming t > 0 (where `t` is a file-scope variable of another file)",
        );
        check("`x@12?2` is read", "`x` (line 12, value 2) is read");
    }

    #[test]
    fn bare_names_are_noted_once_at_the_end() {
        check(
            "assuming n@12 > 0 and n@12 < m",
            "assuming n > 0 and n < m (where `n` is its value at line 12)",
        );
    }

    #[test]
    fn two_values_of_one_name_together_keep_their_qualifiers() {
        let span = "`4*i - 4*j@4913 + 4*j@4916 + 4`";
        check(&format!("reads {span} here"), &format!("reads {span} here"));
        let bare = "istep = 1, i@3119 = 0; istep = 2, i@3171 = 0 (nz@3121 = 3)";
        check(
            bare,
            "istep = 1, i@3119 = 0; istep = 2, i@3171 = 0 (nz = 3) (where `nz` is its value at line 3121)",
        );
    }

    #[test]
    fn a_qualified_name_beside_its_plain_name_keeps_its_qualifier() {
        let witness = "t = 0, i = 2 reads A[1]; t = 1, i@76 = 1 writes A[1] (n = 4)";
        check(witness, witness);
        check("`x[i] + i@7`", "`x[i] + i@7`");
        check("`i'` and `i@7`", "`i'` and `i` (line 7)");
        check("`k` and k@4 > 0", "`k` and k@4 > 0");
        check(
            "difference 8*i@f:12 - 8*i@f:12' (iterations of `i`)",
            "difference 8*i@f:12 - 8*i@f:12' (iterations of `i`)",
        );
        check(
            "-4*N*x@f:78' + 4*N*x@g:79 + 4*y@g:79",
            "-4*N*x@f:78' + 4*N*x@g:79 + 4*y (where `y` is the variable of `g` in the call at line 79)",
        );
    }

    #[test]
    fn text_without_qualified_names_is_unchanged() {
        for text in [
            "`a[i]` and `a[j]` may touch the same element of `a`",
            "mail user@example.org",
            "`x` @ 3",
            "`@3` and `f(a)@`",
        ] {
            check(text, text);
        }
    }

    #[test]
    fn an_unclosed_quote_leaves_the_rest_bare() {
        check(
            "unbalanced `a@3",
            "unbalanced `a (where `a` is its value at line 3)",
        );
    }

    #[test]
    fn a_name_running_into_a_quote_is_read_once() {
        // The head of `@a` reaches back over a quote: written as it is, not twice.
        assert_eq!(
            in_words("(````)@a"),
            "(````) (where `(````)` is the variable of `a`)"
        );
    }

    proptest::proptest! {
        /// Any text (quotes left open, `@` anywhere, non-ASCII letters) is rewritten
        /// without a panic, and a text with no `@` is left as it is.
        #[test]
        fn any_text_is_rewritten_without_a_panic(
            text in "(`|[a-z_]{1,3}|@|[0-9]{1,3}|:|\\?|\\[|\\]|\\(|\\)|->|'| |é|\\.){0,24}"
        ) {
            let out = in_words(&text);
            if !text.contains('@') {
                proptest::prop_assert_eq!(out, text);
            }
        }
    }
}
