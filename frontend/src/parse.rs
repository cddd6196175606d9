//! Parses preprocessed C with lang-c and turns its syntax errors into located [`Diagnostic`]s.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use lang_c::ast::TranslationUnit;
use lang_c::driver::{parse_preprocessed, Config, SyntaxError};

use crate::diagnostic::{Diagnostic, Label};
use crate::preprocess::Preprocessed;
use crate::source_map::SourceMap;

/// lang-c is a recursive PEG parser: deep nesting recurses deeply. It runs on its own thread
/// with this much stack (only touched pages cost memory) ...
const PARSER_STACK: usize = 512 << 20;
/// ... and nesting beyond this is refused up front, because a stack overflow aborts the whole
/// process where a panic could be caught. Real code stays far below it.
const MAX_NESTING: usize = 1000;

/// Closers and separators: what a user most often forgot.
const PRIORITY: &[&str] = &[";", ")", "]", "}", ",", "=", "(", "{"];

/// Expected-token lists longer than this are cut short in the message.
const MAX_EXPECTED: usize = 8;

/// Parses `pre.text` as GNU C11. Never panics: parser panics become an internal-error
/// diagnostic.
pub fn parse(pre: &Preprocessed) -> Result<TranslationUnit, Diagnostic> {
    if let Some(offset) = too_deep(&pre.text) {
        return Err(located(
            Diagnostic::error(format!(
                "brackets nested more than {MAX_NESTING} deep; warpwise cannot parse this"
            )),
            &pre.source_map,
            offset,
            offset + 1,
        ));
    }
    let text = spell_universal_names(&pre.text);
    let worker = std::thread::Builder::new()
        .name("lang-c".into())
        .stack_size(PARSER_STACK)
        .spawn(move || {
            catch_unwind(AssertUnwindSafe(|| {
                parse_preprocessed(&Config::with_gcc(), text)
            }))
        });
    let outcome = match worker {
        Ok(handle) => handle.join().unwrap_or_else(Err),
        // No thread available: parse here, trusting the nesting limit.
        Err(_) => catch_unwind(AssertUnwindSafe(|| {
            parse_preprocessed(&Config::with_gcc(), spell_universal_names(&pre.text))
        })),
    };
    match outcome {
        Ok(Ok(parse)) => Ok(parse.unit),
        Ok(Err(err)) => Err(syntax_error(&err, &pre.source_map)),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(
                Diagnostic::error("internal error: the C parser (lang-c) crashed")
                    .with_note(format!("panic: {what}"))
                    .with_help("please report this with the input file"),
            )
        }
    }
}

/// `pre.text` with every universal character name outside literals (`\u00e9`,
/// `\U0001F600`) spelt `_u00e9`, `_U0001F600`: C99 allows them in identifiers, and gcc's
/// preprocessor writes every non-ASCII identifier (`größe`) that way, but lang-c's lexer
/// knows neither. The spelling has the same length, so every offset, and with it every
/// span and diagnostic column, stays where it was; the identifiers stay distinct.
pub fn spell_universal_names(text: &str) -> String {
    let b = text.as_bytes();
    if !b
        .windows(2)
        .any(|w| w[0] == b'\\' && (w[1] == b'u' || w[1] == b'U'))
    {
        return text.to_string();
    }
    let mut out = b.to_vec();
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
                        out[i] = b'_';
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
    // Only an ASCII backslash became an ASCII underscore: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Offset of the first bracket that opens one level too many.
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(i);
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
    if text.contains([';', '{', '}']) {
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
    use super::spell_universal_names;

    fn check(input: &str, expected: &str) {
        let got = spell_universal_names(input);
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
