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

#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    pub start: usize,
    pub end: usize,
    pub kind: TokKind,
    /// The token comes from a system header (line-marker flag 3, or one of warpwise's own
    /// header directories).
    pub system: bool,
}

impl Tok {
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }

    pub fn is(&self, text: &str, what: &str) -> bool {
        self.text(text) == what
    }
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
        out.push(Tok {
            start,
            end: i,
            kind,
            system,
        });
    }
    out
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

    #[test]
    fn brackets_match_across_kinds() {
        let src = "f(a[1], {b}) ;";
        let toks = lex(src, &[]);
        assert_eq!(matching_close(&toks, src, 1), Some(10));
        assert_eq!(toks[10].text(src), ")");
    }
}
