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
    let text = pre.text.clone();
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
            parse_preprocessed(&Config::with_gcc(), pre.text.clone())
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
