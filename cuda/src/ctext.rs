//! A small C tokenizer and the token-level rewrites CUDA generation needs: renaming nested
//! pointers (`c->data` to `c_data`) in a loop body, finding the identifiers an expression or
//! a body uses, and turning the report's C expressions into 64-bit host/device expressions.
//!
//! Rewrites work on tokens rather than on the syntax tree because the text they change is
//! the user's own (comments and layout kept); only `frontend` knows lang-c.

use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
    Comment,
    /// A preprocessor line (`# 12 "file.c"` markers in preprocessed text, `#define` in source).
    Directive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
}

const PUNCTS: [&str; 22] = [
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "&=", "^=", "|=",
];

/// Tokens of `text`; whitespace is skipped, everything else (even a stray byte) is a token,
/// so spans cover the text's non-blank parts exactly.
pub fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c == b'#' && line_start {
            // To the end of the line, with backslash continuations.
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                i += 1;
            }
            TokKind::Directive
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            TokKind::Comment
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
            TokKind::Comment
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            TokKind::Literal
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            TokKind::Ident
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // pp-number: digits, letters, dots, and signs after an exponent letter.
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
            TokKind::Number
        } else {
            let rest = &text[i..];
            let len = PUNCTS
                .iter()
                .find(|p| rest.starts_with(*p))
                .map(|p| p.len())
                .unwrap_or_else(|| rest.chars().next().map(char::len_utf8).unwrap_or(1));
            i += len;
            TokKind::Punct
        };
        // Keep spans on character boundaries for multi-byte text.
        while i < b.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        line_start = false;
        out.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    out
}

/// The code tokens of `text` (comments and preprocessor lines dropped).
pub fn code_tokens(text: &str) -> Vec<Tok> {
    tokenize(text)
        .into_iter()
        .filter(|t| !matches!(t.kind, TokKind::Comment | TokKind::Directive))
        .collect()
}

pub fn tok_text<'a>(text: &'a str, t: &Tok) -> &'a str {
    &text[t.start..t.end]
}

/// The code tokens as strings: what two texts are compared by.
pub fn token_strings(text: &str) -> Vec<&str> {
    code_tokens(text)
        .iter()
        .map(|t| tok_text(text, t))
        .collect()
}

/// Removes line markers (`# 12 "file.c"`) of preprocessed text, keeping the line breaks.
pub fn strip_line_markers(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A name of the report split into tokens: `c->data` is `c`, `->`, `data`.
pub fn name_tokens(name: &str) -> Vec<String> {
    code_tokens(name)
        .iter()
        .map(|t| tok_text(name, t).to_string())
        .collect()
}

/// True when the token before index `k` makes token `k` a member name (`x.k`, `p->k`).
fn is_member(text: &str, toks: &[Tok], k: usize) -> bool {
    k > 0 && matches!(tok_text(text, &toks[k - 1]), "." | "->")
}

/// Replaces each occurrence of a token sequence (`c`, `->`, `data`) that is not itself a
/// member of something else with `replacement`. Longer patterns win. Returns the new text
/// and how many replacements were made per pattern.
pub fn replace_sequences(text: &str, patterns: &[(Vec<String>, String)]) -> (String, Vec<usize>) {
    let toks = code_tokens(text);
    let mut order: Vec<usize> = (0..patterns.len()).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(patterns[p].0.len()));
    let mut counts = vec![0; patterns.len()];
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    let mut k = 0;
    while k < toks.len() {
        let found = order.iter().copied().find(|&p| {
            let pat = &patterns[p].0;
            !pat.is_empty()
                && k + pat.len() <= toks.len()
                && !is_member(text, &toks, k)
                && pat
                    .iter()
                    .enumerate()
                    .all(|(j, s)| tok_text(text, &toks[k + j]) == s)
        });
        match found {
            Some(p) => {
                let n = patterns[p].0.len();
                out.push_str(&text[pos..toks[k].start]);
                out.push_str(&patterns[p].1);
                pos = toks[k + n - 1].end;
                counts[p] += 1;
                k += n;
            }
            None => k += 1,
        }
    }
    out.push_str(&text[pos..]);
    (out, counts)
}

/// Identifiers used as names (not member names, not keywords) in `text`.
pub fn identifiers(text: &str) -> BTreeSet<String> {
    let toks = code_tokens(text);
    toks.iter()
        .enumerate()
        .filter(|(k, t)| t.kind == TokKind::Ident && !is_member(text, &toks, *k))
        .map(|(_, t)| tok_text(text, t).to_string())
        .filter(|s| !is_keyword(s))
        .collect()
}

/// How each occurrence of `name` (as a name, not a member) in `text` is used: the tokens
/// right before and after it.
pub fn uses_of<'a>(text: &'a str, name: &str) -> Vec<(Option<&'a str>, Option<&'a str>)> {
    let toks = code_tokens(text);
    toks.iter()
        .enumerate()
        .filter(|(k, t)| tok_text(text, t) == name && !is_member(text, &toks, *k))
        .map(|(k, _)| {
            (
                k.checked_sub(1).map(|p| tok_text(text, &toks[p])),
                toks.get(k + 1).map(|t| tok_text(text, t)),
            )
        })
        .collect()
}

/// True when `body` may change `name`: assigns it (`name = `, `name += `, `name.f = `,
/// `name[k] = ` for an array), increments or decrements it, or takes its address.
pub fn written_in(body: &str, name: &str) -> bool {
    let toks = code_tokens(body);
    let text = |k: usize| toks.get(k).map_or("", |t| tok_text(body, t));
    for k in 0..toks.len() {
        if text(k) != name || (k > 0 && matches!(text(k - 1), "." | "->")) {
            continue;
        }
        if k > 0 && matches!(text(k - 1), "++" | "--") {
            return true;
        }
        // `&name`, unless the `&` is a binary and (`mask & name`).
        let operand_before = k >= 2
            && match toks[k - 2].kind {
                TokKind::Punct => matches!(text(k - 2), ")" | "]"),
                TokKind::Ident => !is_keyword(text(k - 2)),
                _ => true,
            };
        if k > 0 && text(k - 1) == "&" && !operand_before {
            return true;
        }
        // Skip member and subscript chains: `name.f[2] = ...` writes `name`.
        let j = skip_selectors(body, &toks, k + 1);
        if matches!(
            text(j),
            "=" | "+="
                | "-="
                | "*="
                | "/="
                | "%="
                | "&="
                | "|="
                | "^="
                | "<<="
                | ">>="
                | "++"
                | "--"
        ) {
            return true;
        }
    }
    false
}

pub fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "auto"
            | "break"
            | "case"
            | "char"
            | "const"
            | "continue"
            | "default"
            | "do"
            | "double"
            | "else"
            | "enum"
            | "extern"
            | "float"
            | "for"
            | "goto"
            | "if"
            | "inline"
            | "int"
            | "long"
            | "register"
            | "restrict"
            | "return"
            | "short"
            | "signed"
            | "sizeof"
            | "static"
            | "struct"
            | "switch"
            | "typedef"
            | "union"
            | "unsigned"
            | "void"
            | "volatile"
            | "while"
            | "_Bool"
            | "_Complex"
            | "_Alignof"
            | "_Alignas"
            | "_Static_assert"
            | "_Thread_local"
            | "__restrict"
            | "__restrict__"
            | "__inline"
            | "__inline__"
            | "__attribute__"
            | "__extension__"
            | "__typeof__"
            | "__typeof"
            | "typeof"
            | "__asm__"
            | "asm"
            | "__builtin_offsetof"
            | "__builtin_va_arg"
    )
}

/// Functions the report's expressions may use besides C operators.
const EXPR_FUNCTIONS: [&str; 2] = ["min", "max"];

/// The variables a report expression reads: the root identifier of each reference
/// (`in_image` for `in_image->height`), without `min`/`max`.
pub fn expr_roots(expr: &str) -> BTreeSet<String> {
    let toks = code_tokens(expr);
    let mut out = BTreeSet::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Ident || is_member(expr, &toks, k) {
            continue;
        }
        let s = tok_text(expr, t);
        let call = toks.get(k + 1).is_some_and(|n| tok_text(expr, n) == "(");
        if call && EXPR_FUNCTIONS.contains(&s) {
            continue;
        }
        if !is_keyword(s) {
            out.insert(s.to_string());
        }
    }
    out
}

/// A report expression as a 64-bit C expression: every variable reference (with its member
/// chain, `in_image->height`) is converted to `long long` before any arithmetic, so
/// `4*N*N` cannot overflow `int`, and `min`/`max` call the given two-argument helpers
/// (nested for more arguments). `rename` maps a reference (`block.x`) to the text that
/// replaces it.
pub fn to_wide(
    expr: &str,
    helpers: (&str, &str),
    rename: &dyn Fn(&str) -> Option<String>,
) -> String {
    rewrite_expr(expr, helpers, rename, true)
}

/// [`to_wide`], or with `wide` false only the renaming and the helpers.
pub fn rewrite_expr(
    expr: &str,
    helpers: (&str, &str),
    rename: &dyn Fn(&str) -> Option<String>,
    wide: bool,
) -> String {
    let toks = code_tokens(expr);
    let r = Rewrite {
        expr,
        toks: &toks,
        helpers,
        rename,
        wide,
    };
    r.range(0, toks.len())
}

struct Rewrite<'a> {
    expr: &'a str,
    toks: &'a [Tok],
    helpers: (&'a str, &'a str),
    rename: &'a dyn Fn(&str) -> Option<String>,
    wide: bool,
}

impl Rewrite<'_> {
    fn text(&self, k: usize) -> &str {
        tok_text(self.expr, &self.toks[k])
    }

    /// Index of the `)` matching the `(` at `open`.
    fn close(&self, open: usize, end: usize) -> usize {
        let mut depth = 0;
        for k in open..end {
            match self.text(k) {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        return k;
                    }
                }
                _ => {}
            }
        }
        end
    }

    fn range(&self, from: usize, to: usize) -> String {
        let (expr, toks) = (self.expr, self.toks);
        let mut out = String::new();
        let mut k = from;
        while k < to {
            let t = toks[k];
            if k > from {
                out.push_str(&expr[toks[k - 1].end..t.start]);
            }
            let s = self.text(k);
            if t.kind == TokKind::Ident && !is_keyword(s) {
                let call = k + 1 < to && self.text(k + 1) == "(";
                if call && (s == "min" || s == "max") {
                    let close = self.close(k + 1, to);
                    let mut args = Vec::new();
                    let mut depth = 0;
                    let mut start = k + 2;
                    for j in k + 2..close {
                        match self.text(j) {
                            "(" => depth += 1,
                            ")" => depth -= 1,
                            "," if depth == 0 => {
                                args.push(self.range(start, j));
                                start = j + 1;
                            }
                            _ => {}
                        }
                    }
                    args.push(self.range(start, close));
                    let f = if s == "min" {
                        self.helpers.0
                    } else {
                        self.helpers.1
                    };
                    let mut acc = args.pop().unwrap_or_default();
                    while let Some(a) = args.pop() {
                        acc = format!("{f}({}, {})", a.trim(), acc.trim());
                    }
                    out.push_str(&acc);
                    k = close + 1;
                    continue;
                }
                // The reference: the identifier and its `.f` / `->f` / `[2]` chain (a
                // constant subscript names one element, as a member does: `mesh[0]`).
                let mut end = k + 1;
                loop {
                    if end + 1 < to
                        && matches!(self.text(end), "." | "->")
                        && toks[end + 1].kind == TokKind::Ident
                    {
                        end += 2;
                    } else if end + 2 < to
                        && self.text(end) == "["
                        && toks[end + 1].kind == TokKind::Number
                        && self.text(end + 2) == "]"
                    {
                        end += 3;
                    } else {
                        break;
                    }
                }
                let chain = &expr[t.start..toks[end - 1].end];
                let text = (self.rename)(chain).unwrap_or_else(|| chain.to_string());
                if self.wide {
                    out.push_str(&format!("((long long)({text}))"));
                } else {
                    out.push_str(&text);
                }
                k = end;
                continue;
            }
            if self.wide && t.kind == TokKind::Number && !s.contains(['.', 'e', 'E', 'x', 'X']) {
                // Integer constants stay integers, but wide ones.
                out.push_str(s);
                out.push_str("LL");
                k += 1;
                continue;
            }
            out.push_str(s);
            k += 1;
        }
        out
    }
}

/// A C identifier made from a report name: `c->data` becomes `c_data`, `in.pixmap`
/// becomes `in_pixmap`.
pub fn flat_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_string();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v_{out}")
    } else {
        out
    }
}

/// The index of the `]` that closes the `[` at token `open` (`toks.len()` when none does).
pub fn closing_bracket(text: &str, toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match tok_text(text, t) {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Skips the subscripts and members from token `j` on (`[E][F]`, `.f`, `->g`): the index
/// past them.
pub fn skip_selectors(text: &str, toks: &[Tok], mut j: usize) -> usize {
    loop {
        match toks.get(j).map(|t| tok_text(text, t)) {
            Some("." | "->") => j += 2,
            Some("[") => j = closing_bracket(text, toks, j) + 1,
            _ => return j,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_names_are_replaced_but_not_members() {
        let body = "c->data[i] = a[i] + x.c->data[1]; /* c->data */";
        let (out, n) = replace_sequences(body, &[(name_tokens("c->data"), "c_data".into())]);
        assert_eq!(out, "c_data[i] = a[i] + x.c->data[1]; /* c->data */");
        assert_eq!(n, vec![1]);
    }

    #[test]
    fn wide_expressions() {
        let e = to_wide("4*N*N + min(a->w, 3) / 4", ("ww_min", "ww_max"), &|_| None);
        assert_eq!(
            e,
            "4LL*((long long)(N))*((long long)(N)) + ww_min(((long long)(a->w)), 3LL) / 4LL"
        );
        let e = to_wide("min(a, b + 1, 8*c)", ("m", "M"), &|_| None);
        assert_eq!(
            e,
            "m(((long long)(a)), m(((long long)(b)) + 1LL, 8LL*((long long)(c))))"
        );
        // A constant subscript belongs to the reference (`mesh[0]` is one value); a
        // variable one does not.
        let e = to_wide("mesh[0]*s->dims[2] + a[i]", ("m", "M"), &|c| {
            Some(format!("<{c}>"))
        });
        assert_eq!(
            e,
            "((long long)(<mesh[0]>))*((long long)(<s->dims[2]>)) + ((long long)(<a>))[((long long)(<i>))]"
        );
        let roots = expr_roots("8*block.x + max(in_image->width, n)");
        assert_eq!(
            roots.into_iter().collect::<Vec<_>>(),
            vec!["block", "in_image", "n"]
        );
    }

    #[test]
    fn tokens_skip_comments_and_markers() {
        let t = token_strings("# 3 \"x.c\"\nx->y /* c */ += 1.5e-3; // end");
        assert_eq!(t, vec!["x", "->", "y", "+=", "1.5e-3", ";"]);
    }
}
