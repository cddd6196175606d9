//! The parts of a kernel launch `k<<<grid, block[, shared[, stream]]>>>(args)` in the
//! user's own source text, as byte ranges: what `check --dynamic` rewrites into a call of
//! the CPU shim. The launch is found where the frontend placed it (the kernel's name at a
//! `file:line:col`); from there the text is lexed (`ctokens`) only as far as the launch's
//! closing parenthesis, so comments elsewhere in the file never confuse it. The launches
//! the frontend could not read (inside a declaration it refused) are found by
//! [`launch_starts`], which lexes the whole file with its comments blanked. nvcc also
//! reads the chevrons with blanks between them (`k << < g, b >> > (x)`), and so does this.

use crate::ctokens::{lex, matching_close, Tok, TokKind};

/// Byte ranges (`start..end`) into the text given to [`launch_at`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSyntax {
    /// The kernel as named, a value template's arguments included (`k<4>`).
    pub kernel: (usize, usize),
    /// Each expression between `<<<` and `>>>`: grid, block, shared bytes, stream.
    pub config: Vec<(usize, usize)>,
    /// The kernel's arguments, inside the parentheses (empty range for none).
    pub args: (usize, usize),
    /// Just after the closing parenthesis of the arguments.
    pub end: usize,
}

/// The byte offset of 1-based `line` and `col` (bytes) in `text`.
pub fn offset_of(text: &str, line: u32, col: u32) -> Option<usize> {
    let mut start = 0usize;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let at = start + usize::try_from(col.checked_sub(1)?).ok()?;
    (at <= text.len() && text.is_char_boundary(at)).then_some(at)
}

/// The launch whose kernel's name starts at byte `at` of `text`, if one does.
pub fn launch_at(text: &str, at: usize) -> Option<LaunchSyntax> {
    let rest = text.get(at..)?;
    let toks = lex(rest, &[]);
    let tok = |k: usize| toks.get(k);
    let is = |k: usize, s: &str| tok(k).is_some_and(|t| t.is(rest, s));
    if tok(0)?.kind != TokKind::Ident {
        return None;
    }
    // A value template's arguments, `k<4><<<`: the `<` ... `>` before the chevrons.
    let mut k = 1;
    if is(1, "<") && !chevrons(&toks, rest, 1, "<") {
        let mut depth = 0usize;
        while let Some(t) = tok(k) {
            match t.text(rest) {
                "<" => depth += 1,
                ">" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ";" | "{" | "}" => return None,
                _ => {}
            }
            k += 1;
        }
        k += 1;
    }
    if !chevrons(&toks, rest, k, "<") {
        return None;
    }
    let kernel = (at, at + toks[k - 1].end());
    let mut config = Vec::new();
    let mut depth = 0usize;
    let mut from = k + 3;
    let mut j = from;
    let close = loop {
        let t = tok(j)?;
        match t.text(rest) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.checked_sub(1)?,
            ";" => return None,
            "," if depth == 0 => {
                config.push((at + toks.get(from)?.start(), at + toks[j - 1].end()));
                from = j + 1;
            }
            ">" if depth == 0 && chevrons(&toks, rest, j, ">") => {
                if j > from {
                    config.push((at + toks[from].start(), at + toks[j - 1].end()));
                }
                break j;
            }
            _ => {}
        }
        j += 1;
    };
    let open = close + 3;
    if !is(open, "(") {
        return None;
    }
    let shut = matching_close(&toks, rest, open)?;
    let args = if shut == open + 1 {
        (at + toks[shut].start(), at + toks[shut].start())
    } else {
        (at + toks[open + 1].start(), at + toks[shut - 1].end())
    };
    Some(LaunchSyntax {
        kernel,
        config,
        args,
        end: at + toks[shut].end(),
    })
}

/// Three `c` tokens in a row from token `k` (`<<<`, `>>>`, or with blanks between, which
/// no other C++ has).
fn chevrons(toks: &[Tok], text: &str, k: usize, c: &str) -> bool {
    k + 2 < toks.len() && toks[k].is(text, c) && toks[k + 1].is(text, c) && toks[k + 2].is(text, c)
}

/// `text` with its comments made blanks (newlines kept), so offsets stay.
pub fn without_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), b'\\') => i += 1,
            (Some(_), _) => {}
            (None, c @ (b'"' | b'\'')) => quote = Some(c),
            (None, b'/') if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (None, b'/') if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                for o in &mut out[i..end] {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII blanks, inside comments whole.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// The byte offsets of the kernel names of every launch in `text`, found by lexing it.
pub fn launch_starts(text: &str) -> Vec<usize> {
    let blank = without_comments(text);
    let toks = lex(&blank, &[]);
    let mut out = Vec::new();
    for k in 1..toks.len() {
        if !chevrons(&toks, &blank, k, "<") || (k >= 1 && toks[k - 1].is(&blank, "<")) {
            continue;
        }
        // The name before the chevrons, past a value template's `<...>`.
        let mut j = k - 1;
        if toks[j].is(&blank, ">") {
            let mut depth = 0usize;
            loop {
                match toks[j].text(&blank) {
                    ">" => depth += 1,
                    "<" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ";" | "{" | "}" => break,
                    _ => {}
                }
                if j == 0 {
                    break;
                }
                j -= 1;
            }
            j = j.saturating_sub(1);
        }
        if toks[j].kind == TokKind::Ident && launch_at(&blank, toks[j].start()).is_some() {
            out.push(toks[j].start());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str, at: usize) -> Option<(String, Vec<String>, String)> {
        let l = launch_at(text, at)?;
        let s = |(a, b): (usize, usize)| text[a..b].to_string();
        Some((
            s(l.kernel),
            l.config.iter().map(|&r| s(r)).collect(),
            s(l.args),
        ))
    }

    #[test]
    fn a_launch_is_cut_into_its_parts() {
        let text = "  k<<<dim3(n / 16, 2), b, 4 * (m + 1)>>>(a, f(x, y)); // it's\n";
        assert_eq!(
            parts(text, 2),
            Some((
                "k".into(),
                vec!["dim3(n / 16, 2)".into(), "b".into(), "4 * (m + 1)".into()],
                "a, f(x, y)".into()
            ))
        );
        let l = launch_at(text, 2).unwrap();
        assert_eq!(&text[l.end - 1..l.end], ")");
    }

    #[test]
    fn template_kernels_and_empty_arguments() {
        assert_eq!(
            parts("k<4, true><<<g,\n b>>>();", 0),
            Some(("k<4, true>".into(), vec!["g".into(), "b".into()], "".into()))
        );
        assert_eq!(parts("x = a < b;", 0), None);
        assert_eq!(parts("f(a);", 0), None);
    }

    #[test]
    fn launches_are_found_by_lexing_with_comments_blanked() {
        let text = "// it's k<<<1, 2>>>(x)\nvoid h() {\n  k << < g, b >> > (x); /* j<<<1,1>>>() */\n  t<4><<<1, 2>>>(y);\n}\n";
        let starts = launch_starts(text);
        let names: Vec<&str> = starts.iter().map(|&s| &text[s..s + 1]).collect();
        assert_eq!(names, ["k", "t"]);
        assert_eq!(
            parts(text, starts[0]),
            Some(("k".into(), vec!["g".into(), "b".into()], "x".into()))
        );
    }

    #[test]
    fn offsets_count_lines_and_bytes_from_one() {
        let text = "ab\ncd\n";
        assert_eq!(offset_of(text, 2, 2), Some(4));
        assert_eq!(offset_of(text, 1, 1), Some(0));
        assert_eq!(offset_of(text, 4, 1), None);
        assert_eq!(offset_of(text, 1, 0), None);
    }
}
