//! One translation unit from file to CDFG: preprocess, parse, lower, and map spans back to
//! the user's files. This is the frontend's entry point for the rest of the tool.

use crate::diagnostic::{Diagnostic, Label};
use crate::ir::{Function, SourceLoop, Span};
use crate::loop_ref::LoopRef;
use crate::lower::{lower_translation_unit, LowerInput, Lowered, PragmaAnchor};
use crate::preprocess::{Preprocessed, TranslationUnitInput};
use std::path::{Path, PathBuf};

/// A lowered translation unit with its source map.
#[derive(Debug)]
pub struct Unit {
    /// The input file as the user named it.
    pub path: PathBuf,
    pub preprocessed: Preprocessed,
    pub lowered: Lowered,
    /// Whether the program follows C's effective-type rule (C99 6.5p7), so accesses of
    /// incompatible types never overlap: false when its flags say `-fno-strict-aliasing`
    /// (the last of `-f[no-]strict-aliasing` wins, as with gcc).
    pub strict_aliasing: bool,
    /// For each loop keyword sharing its `file:line:col` with an earlier loop of the unit
    /// (one macro expanding to several loops), its rank among them (2, 3, ...); made on
    /// first use.
    loop_ranks: std::sync::OnceLock<std::collections::HashMap<u32, u32>>,
}

/// A span resolved to the user's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub end_col: Option<u32>,
    pub in_system_header: bool,
}

impl std::fmt::Display for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
    }
}

/// Preprocesses, parses and lowers one file. Errors that stop the whole file (missing
/// header, syntax error) are returned; per-function lowering errors are in
/// [`Unit::diagnostics`].
// `Diagnostic` is large, but errors are the cold path (as in `preprocess` and `parse`).
#[allow(clippy::result_large_err)]
pub fn load_unit(input: &TranslationUnitInput) -> Result<Unit, Diagnostic> {
    let (preprocessed, tokens) = crate::preprocess::preprocess_with_tokens(input)?;
    let strict_aliasing = input
        .flags
        .extra
        .iter()
        .rev()
        .find_map(|f| match f.as_str() {
            "-fstrict-aliasing" => Some(true),
            "-fno-strict-aliasing" => Some(false),
            _ => None,
        })
        .unwrap_or(true);
    unit_from(input.file.clone(), preprocessed, tokens, strict_aliasing)
}

/// Parses and lowers `text`, taken as the C preprocessor's output for `path` (line markers
/// included), without running a preprocessor: for tools that already have that text, and
/// for the fuzz targets (fuzz/), which feed arbitrary text to everything after `cc -E`.
#[allow(clippy::result_large_err)]
pub fn load_preprocessed(path: &Path, text: String) -> Result<Unit, Diagnostic> {
    let cwd = path.parent().unwrap_or(Path::new("."));
    let cuda = crate::cuda_source::is_cuda_file(path);
    let (preprocessed, tokens) =
        crate::preprocess::from_compiler_output_with_tokens(text, cwd, &[], cuda);
    unit_from(path.to_path_buf(), preprocessed, tokens, true)
}

#[allow(clippy::result_large_err)]
fn unit_from(
    path: PathBuf,
    mut preprocessed: crate::preprocess::Preprocessed,
    tokens: Vec<crate::ctokens::Tok>,
    strict_aliasing: bool,
) -> Result<Unit, Diagnostic> {
    let parsed = if preprocessed.cuda {
        Some(parse_refusing(&mut preprocessed)?)
    } else {
        None
    };
    // Parse, lowering and the tree's drop share one deep thread (each would start its own).
    let tokens = std::sync::Mutex::new(Some(tokens));
    let parsed = std::sync::Mutex::new(parsed);
    let frontend = || -> Result<(crate::lower::Lowered, crate::parse::LeftOut), Diagnostic> {
        let tokens = tokens.lock().ok().and_then(|mut t| t.take());
        let (ast, left_out) = match parsed.lock().ok().and_then(|mut p| p.take()) {
            Some(done) => done,
            None => crate::parse::parse_bounded_with(&preprocessed, tokens)?,
        };
        let lowered = lower_translation_unit(&ast, &lower_input(&preprocessed));
        drop_deep(ast);
        Ok((lowered, left_out))
    };
    let (mut lowered, left_out) = match crate::deep_stack::run("frontend", FRONTEND_STACK, frontend)
    {
        Some(Ok(done)) => done?,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => frontend()?,
    };
    // lang-c's initializer span may begin at the `=`: the table's `{` lies within it.
    for global in &mut lowered.program.globals {
        let span = global.init.as_ref().map(|init| init.span);
        global.values_elided = span.is_some_and(|s| {
            let (start, end) = (s.start as usize, s.end as usize);
            let first = left_out.tables.partition_point(|&at| at < start);
            left_out.tables.get(first).is_some_and(|&at| at <= end)
        });
    }
    let oversized = left_out.oversized;
    // Bodies over the size budget were parsed empty: their functions are not analysed, and
    // are dropped, so that callers see a function no analysed file defines (unknown
    // effects), not one that does nothing.
    for body in oversized {
        let open = body.open as u32;
        let holds = |f: &crate::ir::Function| {
            f.span.start <= open && open <= f.span.end || body.name.as_deref() == Some(&f.name)
        };
        let name = lowered
            .program
            .functions
            .iter()
            .find(|f| holds(f))
            .map(|f| f.name.clone())
            .or(body.name.clone());
        lowered.program.functions.retain(|f| !holds(f));
        lowered.errors.push(crate::lower::LowerError {
            span: crate::ir::Span {
                start: body.open as u32,
                end: body.open as u32 + 1,
            },
            message: format!(
                "its body is {} bytes of preprocessed text, more than the {} analysed per function (the analysis budget): its loops are not analysed",
                body.close - body.open + 1,
                crate::parse::MAX_BODY_BYTES
            ),
            function: name,
        });
    }
    for refusal in &preprocessed.refused {
        lowered.errors.push(crate::lower::LowerError {
            span: crate::ir::Span::new(refusal.at, refusal.at + 1),
            message: refusal.reason.clone(),
            function: refusal.name.clone(),
        });
    }
    lowered.program.strict_aliasing = strict_aliasing;
    Ok(Unit {
        path,
        preprocessed,
        lowered,
        strict_aliasing,
        loop_ranks: std::sync::OnceLock::new(),
    })
}

/// The most declarations of one CUDA file refused for a syntax error before the file is
/// given up (each costs a parse).
const MAX_CUDA_REFUSALS: usize = 64;

/// Parses a CUDA file, refusing each top-level declaration of the user's code that holds a
/// syntax error (C++ the scan of `cuda_source` did not recognise) and parsing again, so
/// that one function is lost, not the file. Blanking keeps every offset, so the source map
/// still holds (and still shows the refused text in diagnostics).
#[allow(clippy::result_large_err)]
fn parse_refusing(
    pre: &mut crate::preprocess::Preprocessed,
) -> Result<(lang_c::ast::TranslationUnit, crate::parse::LeftOut), Diagnostic> {
    for _ in 0..MAX_CUDA_REFUSALS {
        let (diagnostic, offset) = match crate::parse::parse_located(pre, None) {
            Ok(done) => return Ok(done),
            Err(failed) => failed,
        };
        let map = &pre.source_map;
        let in_user_code = offset.filter(|&at| !map.is_system_header(map.locate(at).file));
        let refusal = in_user_code.and_then(|at| {
            crate::cuda_source::refuse_at(&mut pre.text, at, &[], &diagnostic.message)
        });
        match refusal {
            Some(r) => pre.refused.push(r),
            None => return Err(diagnostic),
        }
    }
    crate::parse::parse_located(pre, None).map_err(|(d, _)| d)
}

/// The stack of the thread a file's parse, lowering and drop share: room for the largest
/// of them (the lowering's) and what the others leave on it.
const FRONTEND_STACK: usize = (1 << 30) + (64 << 20);

/// Drops a syntax tree on a thread with a large stack: dropping recurses as deep as the
/// tree, and a chain like `x+x+...+x` of 100,000 terms would overflow the main thread's stack.
fn drop_deep(ast: lang_c::ast::TranslationUnit) {
    let _ = crate::deep_stack::run("drop-ast", 1 << 30, move || drop(ast));
}

/// What the lowering needs from the preprocessed text: system-header ranges and the main
/// file's pragmas with the statements they precede.
pub fn lower_input(pre: &Preprocessed) -> LowerInput {
    let map = &pre.source_map;
    let pragmas = pre
        .pragmas
        .iter()
        .filter(|p| !map.is_system_header(p.location.file))
        .map(|p| PragmaAnchor {
            text: p.text.clone(),
            anchor: next_token(&pre.text, p.offset),
        })
        .collect();
    LowerInput {
        system_ranges: map.system_ranges(),
        pragmas,
    }
}

/// Offset of the first token after the line at `offset`, skipping blank lines, blanked
/// pragma lines and line markers.
fn next_token(text: &str, offset: usize) -> usize {
    let mut position = text[offset.min(text.len())..]
        .find('\n')
        .map(|i| offset + i + 1)
        .unwrap_or(text.len());
    while position < text.len() {
        let rest = &text[position..];
        let line_end = rest
            .find('\n')
            .map(|i| position + i + 1)
            .unwrap_or(text.len());
        let line = &text[position..line_end];
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            position = line_end;
            continue;
        }
        return position + (line.len() - trimmed.len());
    }
    text.len()
}

impl Unit {
    /// Resolves a span to `file:line:col` in the user's files.
    pub fn resolve(&self, span: Span) -> Option<Resolved> {
        if span.is_none() {
            return None;
        }
        let map = &self.preprocessed.source_map;
        let (start, end) = (span.start as usize, span.end as usize);
        let (location, end_col) = match map.locate_span(start, end) {
            Some((loc, end_col)) => (loc, Some(end_col)),
            None => (map.locate(start), None),
        };
        let path = if map.is_main_file(location.file) {
            self.path.clone()
        } else {
            map.path(location.file).to_path_buf()
        };
        Some(Resolved {
            path,
            line: location.line,
            col: location.col,
            end_col,
            in_system_header: map.is_system_header(location.file),
        })
    }

    /// The source text of a span as the user wrote it (`A[i][k]`, `c->data[i*N+j]`).
    pub fn snippet(&self, span: Span) -> String {
        if span.is_none() {
            return String::new();
        }
        self.preprocessed
            .source_map
            .snippet(span.start as usize, span.end as usize)
    }

    /// The line of source a span starts on.
    pub fn line_text(&self, span: Span) -> Option<String> {
        let map = &self.preprocessed.source_map;
        let location = map.locate(span.start as usize);
        map.line_text(location.file, location.line)
            .map(str::to_string)
    }

    /// The loop id used everywhere: `file:line:col` of the loop keyword.
    pub fn loop_id(&self, source_loop: &SourceLoop) -> String {
        self.loop_id_at(source_loop.keyword_span)
    }

    /// [`Self::loop_ref_at`] as text; a keyword the source map cannot place gives
    /// `file:?`, which no selector or report id matches.
    pub fn loop_id_at(&self, keyword: Span) -> String {
        match self.loop_ref_at(keyword) {
            Some(id) => id.to_string(),
            None => format!("{}:?", self.path.display()),
        }
    }

    /// [`Self::loop_ref_at`] of a source loop's keyword.
    pub fn loop_ref(&self, source_loop: &SourceLoop) -> Option<LoopRef> {
        self.loop_ref_at(source_loop.keyword_span)
    }

    /// The id of the loop whose keyword is at `keyword`: `file:line:col`, and `#k` after it
    /// for the k-th loop of the unit at that place. A macro's expansion sits where the macro
    /// is named, so every loop it holds has that place (GraphicsMagick's
    /// `FindHistogramBounds`, two loops; kseq.h's functions); without the rank they would
    /// share an id, and a profile would add their counts together. `None` for a keyword
    /// with no place in the source.
    pub fn loop_ref_at(&self, keyword: Span) -> Option<LoopRef> {
        let at = self.resolve(keyword)?;
        Some(LoopRef {
            file: at.path.display().to_string(),
            line: at.line,
            col: at.col,
            rank: self.loop_ranks().get(&keyword.start).copied(),
        })
    }

    fn loop_ranks(&self) -> &std::collections::HashMap<u32, u32> {
        self.loop_ranks.get_or_init(|| {
            let mut at: std::collections::HashMap<String, Vec<u32>> = Default::default();
            for func in &self.lowered.program.functions {
                for l in &func.loops {
                    if let Some(place) = self.resolve(l.keyword_span) {
                        at.entry(place.to_string())
                            .or_default()
                            .push(l.keyword_span.start);
                    }
                }
            }
            let mut ranks = std::collections::HashMap::new();
            for mut starts in at.into_values().filter(|s| s.len() > 1) {
                starts.sort_unstable();
                starts.dedup();
                for (k, start) in starts.into_iter().enumerate().skip(1) {
                    ranks.insert(start, k as u32 + 1);
                }
            }
            ranks
        })
    }

    /// A label for a span, for diagnostics.
    pub fn label(&self, span: Span) -> Option<Label> {
        let resolved = self.resolve(span)?;
        let mut label = Label::new(resolved.path.clone(), resolved.line, resolved.col);
        if let Some(end) = resolved.end_col {
            label = label.with_end_col(end);
        }
        if let Some(text) = self.line_text(span) {
            label = label.with_line_text(text);
        }
        Some(label)
    }

    /// Functions defined in the user's files (not in system headers).
    pub fn user_functions(&self) -> impl Iterator<Item = &Function> {
        self.lowered.program.functions.iter()
    }

    /// Lowering errors and warnings as diagnostics.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (error, is_error) in self
            .lowered
            .errors
            .iter()
            .map(|e| (e, true))
            .chain(self.lowered.warnings.iter().map(|w| (w, false)))
        {
            let message = match &error.function {
                Some(f) if is_error => format!("cannot analyse function `{f}`: {}", error.message),
                _ => error.message.clone(),
            };
            let mut d = if is_error {
                Diagnostic::error(message)
            } else {
                Diagnostic::warning(message)
            };
            if let Some(label) = self.label(error.span) {
                if label_in_system(self, error.span) && !is_error {
                    continue;
                }
                d = d.with_primary(label);
            }
            out.push(d);
        }
        out
    }

    pub fn file_name(&self) -> &Path {
        &self.path
    }
}

fn label_in_system(unit: &Unit, span: Span) -> bool {
    unit.resolve(span).is_some_and(|r| r.in_system_header)
}
