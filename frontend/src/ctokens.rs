//! A small lexer over preprocessed C, for the textual fixes `gnu_compat` and `implicit_int`
//! make before lang-c parses it (named, not linked: the lexer depends on neither): tokens
//! with their byte ranges and whether they come from a system header.
//!
//! Preprocessed text has no comments or macros; what remains are identifiers, numbers,
//! string and character literals, punctuators, and directive lines (line markers, pragmas),
//! which are skipped whole. Punctuators are single characters: the fixes only look at
//! `( ) [ ] { } ; , * =`, and a `==` read as two `=` never sits where they look.

use std::path::{Path, PathBuf};

use crate::source_map::parse_line_marker;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokKind {
    /// Identifiers and keywords.
    Ident,
    /// Numbers, string and character literals.
    Literal,
    /// One punctuation character.
    Punct,
}

/// Offsets are 32-bit (12 bytes a token instead of 24): a large file's token list is
/// megabytes of fresh pages, and `preprocess` refuses text past 64 MiB (spans are 32-bit
/// too).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    from: u32,
    to: u32,
    pub kind: TokKind,
    /// The token comes from a system header (line-marker flag 3, or one of warpwise's own
    /// header directories).
    pub system: bool,
}

impl Tok {
    pub fn new(start: usize, end: usize, kind: TokKind, system: bool) -> Tok {
        Tok {
            from: offset(start),
            to: offset(end),
            kind,
            system,
        }
    }

    /// Byte offset of the token's first byte.
    pub fn start(&self) -> usize {
        self.from as usize
    }

    /// Byte offset just past the token.
    pub fn end(&self) -> usize {
        self.to as usize
    }

    /// The same token moved `by` bytes later.
    pub fn moved(self, by: usize) -> Tok {
        Tok::new(self.start() + by, self.end() + by, self.kind, self.system)
    }

    /// The token cut or grown to end at `end`, as a `kind` token.
    pub fn ending_at(self, end: usize, kind: TokKind) -> Tok {
        Tok::new(self.start(), end, kind, self.system)
    }

    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start()..self.end()]
    }

    pub fn is(&self, text: &str, what: &str) -> bool {
        self.text(text) == what
    }
}

/// A byte offset as the 32 bits a token holds (saturating, for text that did not come
/// through `preprocess`, which refuses more).
fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// The tokens of `text`, in order.
pub(crate) fn lex(text: &str, system_dirs: &[PathBuf]) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4);
    let mut system = false;
    let mut i = 0;
    let mut at_line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            at_line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if at_line_start && c == b'#' {
            let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
            if let Some((_, Some(name), flags)) = parse_line_marker(&text[i..end]) {
                system = flags.contains(&3)
                    || system_dirs.iter().any(|d| Path::new(&name).starts_with(d));
            }
            i = end;
            continue;
        }
        at_line_start = false;
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
            {
                i += 1;
            }
            // A prefixed literal (`L"x"`, `u8'c'`) is one token.
            if i < b.len()
                && (b[i] == b'"' || b[i] == b'\'')
                && matches!(&text[start..i], "L" | "u" | "U" | "u8")
            {
                i = skip_quoted(b, i);
                TokKind::Literal
            } else {
                TokKind::Ident
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign =
                    (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            TokKind::Literal
        } else if c == b'"' || c == b'\'' {
            i = skip_quoted(b, i);
            TokKind::Literal
        } else {
            // One character (a whole UTF-8 sequence never starts here: >= 0x80 is an identifier).
            i += 1;
            TokKind::Punct
        };
        out.push(Tok::new(start, i, kind, system));
    }
    out
}

/// Drops the tokens inside the byte ranges of `blanked` (made spaces), which must be sorted
/// and disjoint, so that `toks` are the tokens of the blanked text. False, with `toks`
/// unchanged, when a token straddles a range's edge (part of it blanked): only lexing the
/// new text tells what it became.
pub(crate) fn drop_within(toks: &mut Vec<Tok>, blanked: &[(usize, usize)]) -> bool {
    if blanked.is_empty() {
        return true;
    }
    let straddles = |t: &Tok, (start, end): (usize, usize)| {
        (t.start() < start && start < t.end()) || (t.start() < end && end < t.end())
    };
    let mut next = 0;
    if toks
        .iter()
        .any(|t| first_not_before(blanked, &mut next, t).is_some_and(|r| straddles(t, r)))
    {
        return false;
    }
    // In place: the token list of a large file is megabytes, and a copy is fresh pages.
    next = 0;
    toks.retain(|t| {
        !first_not_before(blanked, &mut next, t)
            .is_some_and(|(start, end)| start <= t.start() && t.end() <= end)
    });
    true
}

/// The first of the sorted `ranges` from `*next` on that does not end before `t` starts;
/// `*next` advances to it (tokens come in order).
fn first_not_before(
    ranges: &[(usize, usize)],
    next: &mut usize,
    t: &Tok,
) -> Option<(usize, usize)> {
    while *next < ranges.len() && ranges[*next].1 <= t.start() {
        *next += 1;
    }
    ranges.get(*next).copied()
}

/// The tokens of the text after the identifier `word` and a space were inserted at each
/// offset of `sites` (ascending, each at a token's start or at the end): the inserted words
/// are tokens of user code, and every token moves by the insertions at or before it.
pub(crate) fn with_insertions(toks: Vec<Tok>, sites: &[usize], word: &str) -> Vec<Tok> {
    if sites.is_empty() {
        return toks;
    }
    let step = word.len() + 1;
    let mut out = Vec::with_capacity(toks.len() + sites.len());
    let mut done = 0;
    let insert_upto = |out: &mut Vec<Tok>, done: &mut usize, limit: Option<usize>| {
        while *done < sites.len() && limit.is_none_or(|at| sites[*done] <= at) {
            let start = sites[*done] + *done * step;
            out.push(Tok::new(start, start + word.len(), TokKind::Ident, false));
            *done += 1;
        }
    };
    for t in toks {
        insert_upto(&mut out, &mut done, Some(t.start()));
        out.push(t.moved(done * step));
    }
    insert_upto(&mut out, &mut done, None);
    out
}

/// `text` with `word` and a space inserted at each offset of `sites` (ascending): the text
/// whose tokens [`with_insertions`] gives.
pub(crate) fn text_with_insertions(text: &str, sites: &[usize], word: &str) -> String {
    let mut out = String::with_capacity(text.len() + (word.len() + 1) * sites.len());
    let mut from = 0;
    for &at in sites {
        out.push_str(&text[from..at]);
        out.push_str(word);
        out.push(' ');
        from = at;
    }
    out.push_str(&text[from..]);
    out
}

/// The same tokens (offsets and kinds; the system flag aside): what a pass that kept the
/// tokens of a text it changed checks, in debug builds, against lexing the text again.
pub(crate) fn same_tokens(a: &[Tok], b: &[Tok]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.start(), x.end(), x.kind) == (y.start(), y.end(), y.kind))
}

/// End of the quoted literal starting at `i` (its quote character), escapes included; a
/// literal left open ends at the line's end.
fn skip_quoted(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() && b[j] != quote && b[j] != b'\n' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// Index of the token that closes the bracket opened at `open` (`(`, `[` or `{`), counting
/// all three kinds; `None` when it is never closed.
pub(crate) fn matching_close(toks: &[Tok], text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.kind != TokKind::Punct {
            continue;
        }
        match t.text(text) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        lex(src, &[]).iter().map(|t| t.text(src)).collect()
    }

    #[test]
    fn literals_numbers_and_directives() {
        let src = "# 1 \"a.c\"\nx = L\"a\\\"b\" + 1.5e-3f+'\\'';\n#pragma omp for\ny";
        assert_eq!(
            texts(src),
            vec![
                "x",
                "=",
                "L\"a\\\"b\"",
                "+",
                "1.5e-3f",
                "+",
                "'\\''",
                ";",
                "y"
            ]
        );
    }

    #[test]
    fn system_flag_follows_line_markers() {
        let src = "# 1 \"a.c\"\na\n# 1 \"/usr/include/x.h\" 1 3 4\nb\n# 2 \"a.c\" 2\nc\n";
        let toks = lex(src, &[]);
        let system: Vec<bool> = toks.iter().map(|t| t.system).collect();
        assert_eq!(system, vec![false, true, false]);
    }

    /// `text` with the byte ranges `blanked` made spaces.
    fn blank(text: &str, blanked: &[(usize, usize)]) -> String {
        let mut out = text.as_bytes().to_vec();
        for &(s, e) in blanked {
            out[s..e].fill(b' ');
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tokens_follow_blanking_and_insertions_or_say_they_cannot() {
        let src = "static x = f(a, \"s t\") + 1.5e-3;\nint y;";
        for (s, e) in [(0, 6), (13, 14), (16, 23), (0, src.len()), (7, 8)] {
            let mut toks = lex(src, &[]);
            assert!(drop_within(&mut toks, &[(s, e)]));
            assert!(
                same_tokens(&toks, &lex(&blank(src, &[(s, e)]), &[])),
                "{s}..{e}"
            );
        }
        // Part of `static` or of the string: only lexing again tells.
        for range in [(2, 4), (18, 30)] {
            let mut toks = lex(src, &[]);
            let before = toks.len();
            assert!(!drop_within(&mut toks, &[range]));
            assert_eq!(toks.len(), before);
        }
        let starts: Vec<usize> = lex(src, &[]).iter().map(Tok::start).collect();
        for sites in [
            vec![0],
            vec![starts[2], starts[2]],
            vec![starts[1], src.len()],
        ] {
            let text = text_with_insertions(src, &sites, "int");
            let moved = with_insertions(lex(src, &[]), &sites, "int");
            assert!(same_tokens(&moved, &lex(&text, &[])), "{sites:?}");
        }
    }

    #[test]
    fn brackets_match_across_kinds() {
        let src = "f(a[1], {b}) ;";
        let toks = lex(src, &[]);
        assert_eq!(matching_close(&toks, src, 1), Some(10));
        assert_eq!(toks[10].text(src), ")");
    }
}
