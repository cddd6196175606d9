//! Parses preprocessed C with lang-c and turns its syntax errors into located [`Diagnostic`]s.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use lang_c::ast::TranslationUnit;
use lang_c::driver::{parse_preprocessed, Config, SyntaxError};

use crate::ctokens::{lex, Tok, TokKind};
use crate::diagnostic::{Diagnostic, Label};
use crate::preprocess::Preprocessed;
use crate::source_map::SourceMap;

/// lang-c is a recursive PEG parser: deep nesting recurses deeply. It runs on its own thread
/// with this much stack (only touched pages cost memory) ...
const PARSER_STACK: usize = 512 << 20;
/// ... and nesting beyond this is refused up front, because a stack overflow aborts the whole
/// process where a panic could be caught. Real code stays far below it.
const MAX_NESTING: usize = 1000;

/// Brackets nested deeper than this in one expression of a report are not taken for C
/// ([`is_c_expression`] runs lang-c on the caller's stack).
const MAX_EXPRESSION_NESTING: usize = 200;

/// A run of more `+` or `-` signs than this is refused before parsing. lang-c's lexer is
/// part of its PEG grammar, and when a statement fails it retries every way of splitting
/// the run into `++`/`+` (`--`/`-`) tokens: a run of 32 took 2.4 s, of 78 hours (found by
/// fuzzing). No C program has one: maximal munch makes any run of four or more an operator
/// applied to something that is not an lvalue (`++ ++x`), which C forbids.
const MAX_SIGN_RUN: usize = 16;

/// Function bodies longer than this (bytes of preprocessed text) are not parsed: their text
/// is blanked before lang-c sees it, and the function is reported as not analysed. Work and
/// memory after parsing grow with a function's size (a one-line body of 400,000 statements
/// took 26 s and 1.8 GB to parse and lower alone); real functions stay far below it
/// (sqlite3.c's largest, `sqlite3VdbeExec`, is about 400 KB).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// A function body left out by [`MAX_BODY_BYTES`]: its braces' offsets and the function's
/// name when it could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oversized {
    pub open: usize,
    pub close: usize,
    pub name: Option<String>,
}

/// What the parse left out of the text: function bodies over [`MAX_BODY_BYTES`], and the
/// values of large numeric tables (`tables`: the offsets of their initializers' `{`, in
/// order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    pub oversized: Vec<Oversized>,
    pub tables: Vec<crate::tables::ElidedTable>,
}

/// Closers and separators: what a user most often forgot.
const PRIORITY: &[&str] = &[";", ")", "]", "}", ",", "=", "(", "{"];

/// Expected-token lists longer than this are cut short in the message.
const MAX_EXPECTED: usize = 8;

/// Parses `pre.text` as GNU C11. Never panics: parser panics become an internal-error
/// diagnostic. Function bodies over [`MAX_BODY_BYTES`] are parsed empty, and large numeric
/// tables keep their lengths, not their values (`tables`).
pub fn parse(pre: &Preprocessed) -> Result<TranslationUnit, Diagnostic> {
    parse_bounded(pre).map(|(unit, _)| unit)
}

/// [`parse`], with what it left out.
pub fn parse_bounded(pre: &Preprocessed) -> Result<(TranslationUnit, LeftOut), Diagnostic> {
    parse_bounded_with(pre, None)
}

/// [`parse_bounded`]; `tokens`, when given, are those of `pre.text`, which the pruning of
/// header declarations then need not lex again.
pub(crate) fn parse_bounded_with(
    pre: &Preprocessed,
    tokens: Option<Vec<crate::ctokens::Tok>>,
) -> Result<(TranslationUnit, LeftOut), Diagnostic> {
    parse_located(pre, tokens).map_err(|(d, _)| d)
}

/// [`parse_bounded_with`], with the byte offset of a syntax error next to its diagnostic
/// (what a CUDA file's C++ declarations are refused by, see `unit`).
pub(crate) fn parse_located(
    pre: &Preprocessed,
    tokens: Option<Vec<crate::ctokens::Tok>>,
) -> Result<(TranslationUnit, LeftOut), (Diagnostic, Option<usize>)> {
    let unlocated = |d: Diagnostic| (d, None);
    let toks = tokens.unwrap_or_else(|| lex(&pre.text, &[]));
    if let Some(offset) = too_deep(&toks, &pre.text, MAX_NESTING) {
        return Err(unlocated(located(
            Diagnostic::error(format!(
                "brackets nested more than {MAX_NESTING} deep; warpwise cannot parse this"
            )),
            &pre.source_map,
            offset,
            offset + 1,
        )));
    }
    if let Some((offset, len, sign)) = long_sign_run(&toks, &pre.text, MAX_SIGN_RUN) {
        return Err(unlocated(located(
            Diagnostic::error(format!(
                "syntax error: {len} `{sign}` signs in a row are not C (at most three can \
                 form tokens that apply to an operand)"
            )),
            &pre.source_map,
            offset,
            offset + len,
        )));
    }
    let oversized = oversized_bodies(&pre.text, MAX_BODY_BYTES);
    let whole = blank_bodies(&pre.text, &oversized);
    let (whole, tables, tokens) = match crate::tables::without_table_values(&whole) {
        Some((shorter, tables)) => (std::borrow::Cow::Owned(shorter), tables, None),
        None if oversized.is_empty() => (whole, Vec::new(), Some(toks)),
        // Blanked bodies: their tokens are gone (the text is lexed again; this is rare).
        None => (whole, Vec::new(), None),
    };
    if let Some((start, _)) = oversized_declaration(&whole, MAX_BODY_BYTES) {
        return Err(unlocated(located(
            Diagnostic::error(format!(
                "a declaration outside any function longer than the {MAX_BODY_BYTES} bytes \
                 parsed (the analysis budget); warpwise cannot parse this"
            )),
            &pre.source_map,
            start,
            start + 1,
        )));
    }
    let left_out = LeftOut { oversized, tables };
    let pruned = crate::prune::without_unused_header_declarations(
        &whole,
        &pre.source_map.header_ranges(),
        tokens,
    );
    // The pruned text parses unless the pruning misread a header; then the whole one is
    // parsed, so a doubt costs time, never a result.
    let unpruned = pruned == whole;
    match run_parser(spell_universal_names(pruned)) {
        Ok(Ok(parse)) => return Ok((parse.unit, left_out)),
        outcome if unpruned => return finish(outcome, left_out, pre),
        _ => {}
    }
    finish(
        run_parser(spell_universal_names(whole.into_owned())),
        left_out,
        pre,
    )
}

type ParserOutcome =
    std::thread::Result<Result<lang_c::driver::Parse, lang_c::driver::SyntaxError>>;

/// Runs lang-c on `text` on a thread with a large stack, catching its panics.
fn run_parser(text: String) -> ParserOutcome {
    // The text goes to whichever runs the parse: the deep thread, or this one when no
    // thread can be had (not a copy for the second case: a copy of a large file's text is
    // megabytes of fresh pages).
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(text)));
    let take = |slot: &std::sync::Mutex<Option<String>>| {
        slot.lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default()
    };
    let inside = slot.clone();
    let parse = move || parse_preprocessed(&Config::with_gcc(), take(&inside));
    crate::deep_stack::run("lang-c", PARSER_STACK, parse).unwrap_or_else(|| {
        // No thread available: parse here, trusting the nesting limit.
        catch_unwind(AssertUnwindSafe(|| {
            parse_preprocessed(&Config::with_gcc(), take(&slot))
        }))
    })
}

/// The parse, or the diagnostic for its syntax error or its crash.
fn finish(
    outcome: ParserOutcome,
    left_out: LeftOut,
    pre: &Preprocessed,
) -> Result<(TranslationUnit, LeftOut), (Diagnostic, Option<usize>)> {
    match outcome {
        Ok(Ok(parse)) => Ok((parse.unit, left_out)),
        Ok(Err(err)) => Err((syntax_error(&err, &pre.source_map), Some(err.offset))),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err((
                Diagnostic::error("internal error: the C parser (lang-c) crashed")
                    .with_note(format!("panic: {what}"))
                    .with_help("please report this with the input file"),
                None,
            ))
        }
    }
}

/// `pre.text` with every universal character name outside literals (`\u00e9`,
/// `\U0001F600`) spelt `_u00e9`, `_U0001F600`: C99 allows them in identifiers, and gcc's
/// preprocessor writes every non-ASCII identifier (`größe`) that way, but lang-c's lexer
/// knows neither. The spelling has the same length, so every offset, and with it every
/// span and diagnostic column, stays where it was; the identifiers stay distinct.
pub fn spell_universal_names(text: String) -> String {
    if !text
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && (w[1] == b'u' || w[1] == b'U'))
    {
        return text;
    }
    // The backslashes to respell, found first; then the text is changed in place.
    let b = text.as_bytes();
    let mut backslashes = Vec::new();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 2;
                    continue;
                }
                if c == q || c == b'\n' {
                    quote = None;
                }
            }
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                // Line markers (`# 12 "file.c"`) hold a file name, not code.
                b'#' if line_start => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\\' if i + 1 < b.len() && (b[i + 1] == b'u' || b[i + 1] == b'U') => {
                    let digits = if b[i + 1] == b'u' { 4 } else { 8 };
                    let hex = b.get(i + 2..i + 2 + digits);
                    if hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                        backslashes.push(i);
                        i += 2 + digits;
                        line_start = false;
                        continue;
                    }
                }
                _ => {}
            },
        }
        if c == b'\n' {
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        i += 1;
    }
    let mut out = text.into_bytes();
    for i in backslashes {
        out[i] = b'_';
    }
    // Only an ASCII backslash became an ASCII underscore: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The top-level brace blocks longer than `limit` bytes that are function bodies: the last
/// character before the `{` is the `)` of a declarator, or the `;` of a K&R parameter
/// declaration (an initializer follows `=`, a struct its tag). String and character
/// literals are skipped; the text is preprocessed, so there are no comments.
fn oversized_bodies(text: &str, limit: usize) -> Vec<Oversized> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    if bytes.len() <= limit {
        return out;
    }
    let mut depth = 0usize;
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => {
                if depth == 0 {
                    let before = bytes[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
                    open = matches!(before, Some(b')' | b';')).then_some(i);
                }
                depth += 1;
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    if let Some(o) = open.take() {
                        if i - o > limit {
                            out.push(Oversized {
                                open: o,
                                close: i,
                                name: declarator_name(&text[..o]),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The first declaration outside function bodies (up to a top-level `;`) that holds more
/// than `limit` bytes other than whitespace: its first byte and that count. lang-c's syntax
/// tree of an initializer costs some 600 bytes a term (`int x = 1 + 1 + ...;` of 5 million
/// terms took 3 GB), and no function body bounds it; function bodies (blanked ones
/// included) are skipped, as are literals and directive lines.
fn oversized_declaration(text: &str, limit: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    if bytes.len() <= limit {
        return None;
    }
    let mut depth = 0usize;
    let mut body_depth = None;
    let mut start = None;
    let mut count = 0usize;
    let mut line_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if line_start && c == b'#' {
            // A line marker or pragma: to the end of the line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        line_start = c == b'\n' || (line_start && c.is_ascii_whitespace());
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let in_body = body_depth.is_some();
        if !in_body {
            start.get_or_insert(i);
            count += 1;
        }
        match c {
            quote @ (b'"' | b'\'') => {
                let from = i;
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if !in_body {
                    count += i.min(bytes.len()) - from;
                }
            }
            b'{' | b'(' | b'[' => {
                if c == b'{' && depth == 0 {
                    let before = bytes[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
                    if matches!(before, Some(b')' | b';')) {
                        body_depth = Some(depth);
                    }
                }
                depth += 1;
            }
            b'}' | b')' | b']' => {
                depth = depth.saturating_sub(1);
                if c == b'}' && body_depth == Some(depth) {
                    body_depth = None;
                    if depth == 0 {
                        // A function definition ends its declaration.
                        start = None;
                        count = 0;
                    }
                }
            }
            b';' if depth == 0 => {
                if count > limit {
                    return start.map(|s| (s, count));
                }
                start = None;
                count = 0;
            }
            _ => {}
        }
        if count > limit {
            return start.map(|s| (s, count));
        }
        i += 1;
    }
    None
}

/// The name declared by the function declarator that ends `head` (`int f(int n)`, or a K&R
/// head `f(a) int a;`): the identifier before the first `(` of its last line of tokens.
fn declarator_name(head: &str) -> Option<String> {
    let start = head.rfind(['}', ';', '\n']).map_or(0, |k| k + 1);
    let mut tail = &head[start..];
    if tail.trim().is_empty() {
        // A K&R head or a declarator alone on its line: look at the line before.
        let earlier = &head[..start.saturating_sub(1)];
        tail = &earlier[earlier.rfind(['}', '\n']).map_or(0, |k| k + 1)..];
    }
    let paren = tail.find('(')?;
    let name: String = tail[..paren]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `text` with the inside of each oversized body blanked (newlines kept, so every offset and
/// line stays where it was).
fn blank_bodies<'t>(text: &'t str, bodies: &[Oversized]) -> std::borrow::Cow<'t, str> {
    if bodies.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.as_bytes().to_vec();
    for b in bodies {
        for c in &mut out[b.open + 1..b.close] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    // Only whole UTF-8 sequences inside the braces became spaces: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// The first run of more than `limit` `+` or `-` signs outside literals and directive
/// lines (adjacent one-character tokens of `toks`, the tokens of `text`): its offset,
/// length and sign.
fn long_sign_run(toks: &[Tok], text: &str, limit: usize) -> Option<(usize, usize, char)> {
    let bytes = text.as_bytes();
    let sign = |t: &Tok| {
        (t.kind == TokKind::Punct && matches!(bytes[t.start()], b'+' | b'-'))
            .then(|| bytes[t.start()])
    };
    let mut k = 0;
    while k < toks.len() {
        let Some(c) = sign(&toks[k]) else {
            k += 1;
            continue;
        };
        let mut run = 1;
        while toks
            .get(k + run)
            .is_some_and(|t| t.start() == toks[k + run - 1].end() && sign(t) == Some(c))
        {
            run += 1;
        }
        if run > limit {
            return Some((toks[k].start(), run, c as char));
        }
        k += run;
    }
    None
}

/// Offset of the first bracket of `toks` (the tokens of `text`: literals and directive
/// lines hold none) that opens more than `limit` levels.
fn too_deep(toks: &[Tok], text: &str, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for t in toks.iter().filter(|t| t.kind == TokKind::Punct) {
        match bytes[t.start()] {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(t.start());
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn syntax_error(err: &SyntaxError, map: &SourceMap) -> Diagnostic {
    let text = map.text();
    let offset = err.offset.min(text.len());
    let found = offending_token(text, offset);
    let mut expected: Vec<&str> = err.expected.iter().copied().collect();
    // The tokens that usually fix the error first, then the rest alphabetically.
    expected.sort_unstable_by_key(|t| {
        (
            PRIORITY.iter().position(|p| p == t).unwrap_or(usize::MAX),
            *t,
        )
    });
    let summary = if expected.len() > MAX_EXPECTED {
        format!(
            "{} and {} more",
            quoted(&expected[..MAX_EXPECTED]),
            expected.len() - MAX_EXPECTED
        )
    } else {
        quoted(&expected)
    };
    let message = match &found {
        Some(tok) => format!("syntax error: unexpected `{tok}`"),
        None => "syntax error: unexpected end of file".to_string(),
    };
    let end = offset + found.as_ref().map_or(1, |t| t.len());
    let mut d = located(Diagnostic::error(message), map, offset, end);
    if !expected.is_empty() {
        d = d.with_note(format!("expected {summary}"));
    }
    let loc = map.locate(offset);
    if map.is_system_header(loc.file) {
        d = d.with_note(
            "the error is inside a system header: lang-c does not understand some compiler extension used there",
        );
    }
    d
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Attaches the original location of `start..end` (with line text) as primary label.
fn located(d: Diagnostic, map: &SourceMap, start: usize, end: usize) -> Diagnostic {
    let loc = map.locate(start);
    let mut label = Label::new(map.path(loc.file), loc.line, loc.col);
    if let Some((span_loc, end_col)) = map.locate_span(start, end) {
        if span_loc == loc {
            label = label.with_end_col(end_col);
        }
    }
    if let Some(t) = map.line_text(loc.file, loc.line) {
        label = label.with_line_text(t);
    }
    d.with_primary(label)
}

/// The token at `offset`, for the message; `None` at end of input.
fn offending_token(text: &str, offset: usize) -> Option<String> {
    let rest = text.get(offset..)?.trim_start();
    let first = rest.chars().next()?;
    let len = if first.is_alphanumeric() || first == '_' {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())
    } else {
        first.len_utf8()
    };
    Some(rest[..len].chars().take(40).collect())
}

/// Whether `text` is one C expression (GNU dialect), as lang-c reads it: what a report's
/// expressions that quote the program (`8*(getNucleotide(i - 1, seq))`, `(*factors)`)
/// must be.
pub fn is_c_expression(text: &str) -> bool {
    // lang-c parses translation units only: the expression becomes a statement's.
    // Nor does an expression of a report hold a directive (`#` ... a line the checks below
    // would skip).
    if text.contains([';', '{', '}', '#']) {
        return false;
    }
    // The text comes from a report a user hands back (`instantiate`), so lang-c's two worst
    // cases are refused before it sees them: a long run of signs (its backtracking is
    // exponential in it; found by the fuzz target `report_profile`) and deep nesting (it
    // recurses on this thread's stack, not the parser thread's). Neither is a C expression
    // a report holds.
    let toks = lex(text, &[]);
    if long_sign_run(&toks, text, MAX_SIGN_RUN).is_some()
        || too_deep(&toks, text, MAX_EXPRESSION_NESTING).is_some()
    {
        return false;
    }
    let unit = format!("void warpwise_expression(void) {{ (void)({text}); }}\n");
    let config = Config {
        flavor: lang_c::driver::Flavor::GnuC11,
        ..Config::default()
    };
    parse_preprocessed(&config, unit).is_ok()
}

#[cfg(test)]
mod tests {
    use super::{blank_bodies, oversized_bodies, oversized_declaration, spell_universal_names};
    use crate::ctokens::lex;

    /// The bodies over `limit` bytes, as (function name, body text).
    fn oversized(text: &str, limit: usize) -> Vec<(Option<String>, String)> {
        oversized_bodies(text, limit)
            .into_iter()
            .map(|b| (b.name, text[b.open..=b.close].to_string()))
            .collect()
    }

    #[test]
    fn only_declarations_over_the_limit_outside_bodies_are_found() {
        let sum = |n: usize| vec!["1"; n].join(" + ");
        let body = format!("void f(void) {{ int y = {}; }}\n", sum(100));
        // Function bodies (the budget of bodies is MAX_BODY_BYTES) and directives do not count.
        let text = format!(
            "# 1 \"a.c\"\nint a = {};\n{body}{body}int b = 2;\n",
            sum(10)
        );
        assert_eq!(oversized_declaration(&text, 200), None);
        let text = format!("int a = 1;\n{body}int x = {};\nint c;\n", sum(120));
        let start = text.find("int x").unwrap();
        assert_eq!(oversized_declaration(&text, 200), Some((start, 201)));
        // A string literal counts whole, spaces included.
        let text = format!("{body}char *s = \"{}\";\n", " ".repeat(300));
        assert!(oversized_declaration(&text, 200).is_some());
    }

    #[test]
    fn only_function_bodies_over_the_limit_are_left_out() {
        let text = "int t[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };\n\
                    struct s { int a; int b; int c; int d; int e; int f; };\n\
                    static int big(int n)\n{ int s = 0; for (int i = 0; i < n; i++) s += i; return s; }\n\
                    int small(void) { return 0; }\n\
                    old(a) int a; { return a + a + a + a + a + a + a + a + a + a + a + a; }\n\
                    char *quoted(void) { return \"}}}{{{ a brace in a string }\"; }\n";
        let got = oversized(text, 40);
        let names: Vec<_> = got.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(
            names,
            [
                Some("big".to_string()),
                Some("old".to_string()),
                Some("quoted".to_string())
            ]
        );
        assert!(got[2].1.ends_with("string }\"; }"), "{:?}", got[2].1);
        // The whole file under the limit: nothing is left out.
        assert!(oversized(text, text.len()).is_empty());
    }

    #[test]
    fn expressions_lang_c_cannot_take_quickly_are_not_c_expressions() {
        assert!(super::is_c_expression("(a + b) * c[i - 1]"));
        assert!(super::is_c_expression("a---b"));
        // The fuzzer's report field: lang-c ran for minutes on it.
        assert!(!super::is_c_expression(&format!("{}0", "+".repeat(80))));
        // Within the limit, on a test thread's 2 MiB stack.
        let nested = format!("{}x{}", "(".repeat(200), ")".repeat(200));
        assert!(super::is_c_expression(&nested));
        let deep = format!("{}x{}", "(".repeat(5000), ")".repeat(5000));
        assert!(!super::is_c_expression(&deep));
    }

    #[test]
    fn long_runs_of_signs_are_found_outside_literals_and_directives() {
        let long_sign_run = |text: &str, limit| super::long_sign_run(&lex(text, &[]), text, limit);
        assert_eq!(long_sign_run("x = a+++b - --c;", 3), None);
        let run = format!("int f(void) {{ return 0; {}}}", "+".repeat(20));
        assert_eq!(long_sign_run(&run, 16), Some((24, 20, '+')));
        let quoted = format!(
            "char *s = \"{0}\"; char c = '-';\n# 1 \"{0}\"\n",
            "-".repeat(40)
        );
        assert_eq!(long_sign_run(&quoted, 16), None);
        let escaped = format!("char *s = \"\\\"\"; int x = 1 {};", "-".repeat(17));
        assert_eq!(
            long_sign_run(&escaped, 16).map(|(_, n, c)| (n, c)),
            Some((17, '-'))
        );
    }

    #[test]
    fn blanking_keeps_every_offset_and_line() {
        let text = "int f(int n)\n{\n  return n;\n}\nint g(void) { return 1; }\n";
        let bodies = oversized_bodies(text, 5);
        let blank = blank_bodies(text, &bodies[..1]);
        assert_eq!(blank.len(), text.len());
        assert_eq!(
            blank,
            "int f(int n)\n{\n           \n}\nint g(void) { return 1; }\n"
        );
    }

    fn check(input: &str, expected: &str) {
        let got = spell_universal_names(input.to_string());
        assert_eq!(got, expected);
        assert_eq!(got.len(), input.len(), "offsets must not move");
    }

    #[test]
    fn universal_names_are_spelt_in_place() {
        check(r"int \u00e9t\u00e9 = 1;", r"int _u00e9t_u00e9 = 1;");
        check(
            r"gr\U000000f6\U000000dfe += i;",
            r"gr_U000000f6_U000000dfe += i;",
        );
        // Literals and line markers keep theirs; a malformed name is left to the parser.
        check(
            r#"s = "\u00e9"; c = '\u00e9';"#,
            r#"s = "\u00e9"; c = '\u00e9';"#,
        );
        check(
            "# 1 \"d\\u00e9.c\"\nx\\u00e9;",
            "# 1 \"d\\u00e9.c\"\nx_u00e9;",
        );
        check(r"a\u00g;", r"a\u00g;");
        check("plain C", "plain C");
    }
}
