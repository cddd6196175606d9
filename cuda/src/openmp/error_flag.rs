//! Error paths in OpenMP ports (the report's `error_paths`: a branch that only leads to
//! `exit`, `abort`, `longjmp` or a function that never returns). In the kernel each such
//! branch records its iteration and skips the rest of it; after the target region the host
//! runs the first failing iteration again, from the original text of the loop's body, so
//! that its messages and its exit happen as in the sequential program:
//!
//! ```c
//! { /* warpwise: the first iteration that takes an error path */
//! long long ww_err_6 = 0x7fffffffffffffffLL;
//! #pragma omp target teams distribute parallel for ... map(tofrom: ww_err_6)
//! for (i = 0; i < n; i++) {
//!     if (w[i] < 0) { { long long ww_at = (long long)(i);
//! #pragma omp atomic compare
//! if (ww_at < ww_err_6) { ww_err_6 = ww_at; } }
//! goto ww_next_6;
//! #if 0
//! { fprintf(stderr, "negative weight at %d\n", i); exit(1); }
//! #endif
//! }
//!     y[i] = sqrt(w[i]) * x[i];
//! ww_next_6: ; }
//! if (ww_err_6 != 0x7fffffffffffffffLL) { i = (__typeof__(i))(ww_err_6);
//! do
//! #line 6
//! { if (w[i] < 0) { fprintf(stderr, "negative weight at %d\n", i); exit(1); } ... }
//! while (0);
//! __builtin_abort(); }
//! }
//! #line 9
//! ```
//!
//! The re-run is exact because the advisor called the path an error path only where the
//! failing iteration reads, the second time, what it read in the sequential loop (no other
//! iteration writes it, and the iteration did not overwrite it before its branch); by then
//! the iterations after it have run too, which the report's assumptions state. `#line`
//! gives the copy the original's line numbers (`assert` prints them) and the rest of the
//! file its own back.

use crate::counters::{prefix_token, suffix_token};
use crate::ctext::{code_tokens, tok_text, TokKind};
use crate::plan::Ctx;
use advisor::model::{Branch, ErrorPath, Induction, LoopReport};
use frontend::access_sites::LoopSite;
use frontend::ir::Span;
use frontend::unit::Unit;

/// The host code after a port's kernel: the test of the flag and the re-run of the failing
/// iteration, whose body `port_file` copies from the original text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerun {
    /// Right after the loop's last token (1-based line, and the column just past it).
    pub line: u32,
    pub col: u32,
    /// That token, checked before editing.
    pub token: String,
    /// The loop's body in the original file: its first line and column, its last line and
    /// the column just past its end.
    pub body: (u32, u32, u32, u32),
    /// Before the copy of the body (the test and the iteration's index) and after it.
    pub head: String,
    pub tail: String,
}

/// What a port needs for its loop's error paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagPort {
    /// Lines before the pragma: a block opened and the flag declared.
    pub preamble: String,
    /// `map(tofrom: ww_err_6)`.
    pub clause: String,
    /// Replacements of the loop statement's code tokens (see `crate::counters`).
    pub replaced: Vec<(usize, usize, String)>,
    pub rerun: Rerun,
    pub notes: Vec<String>,
}

/// The value no iteration records: the flag is unset.
const UNSET: &str = "0x7fffffffffffffffLL";

/// Plans the flag, the branches' replacements and the re-run for `report`'s error paths in
/// the loop at `site`; an error says why the loop cannot be ported so.
pub(crate) fn plan_flag(
    ctx: &Ctx<'_>,
    unit: &Unit,
    site: &LoopSite,
    report: &LoopReport,
    induction: &Induction,
) -> Result<FlagPort, String> {
    let var = &induction.var;
    // The first failing iteration is the least index for an increasing loop, the greatest
    // for a decreasing one: the flag keeps the least of `index` or `-index`.
    let negate = match induction.step.trim().parse::<i64>() {
        Ok(s) if s > 0 => false,
        Ok(s) if s < 0 => true,
        _ => {
            return Err(format!(
                "its step `{}` is not a constant: which failing iteration comes first is not known",
                induction.step
            ))
        }
    };
    let map = &unit.preprocessed.source_map;
    let stmt = ctx.slice(site.span);
    let base = site.span.start as usize;
    let toks = code_tokens(stmt);
    let text = |k: usize| toks.get(k).map_or("", |t| tok_text(stmt, t));
    let token_at = |offset: u32, end: bool| {
        toks.iter()
            .position(|t| (if end { base + t.end } else { base + t.start }) == offset as usize)
    };
    let line = map.locate(site.keyword.start as usize).line;
    let (flag, label) = (format!("ww_err_{line}"), format!("ww_next_{line}"));
    for name in [&flag, &label] {
        if crate::ctext::token_strings(&ctx.text).contains(&name.as_str()) {
            return Err(format!(
                "the name `{name}` the port would give its error flag is taken in the file"
            ));
        }
    }
    let rank = if negate {
        format!("-(long long)({var})")
    } else {
        format!("(long long)({var})")
    };
    let mut replaced = Vec::new();
    for path in &report.error_paths {
        let span = branch_span(ctx, unit, site, path).ok_or_else(|| {
            format!(
                "the branch of the `if` at line {} was not found in the loop's text",
                path.condition_line
            )
        })?;
        let (Some(first), Some(last)) = (token_at(span.start, false), token_at(span.end, true))
        else {
            return Err(format!(
                "the error branch at line {} does not start and end on tokens of the loop's text (a macro writes it?)",
                path.condition_line
            ));
        };
        let record = format!(
            "{{ /* warpwise: the error path ending in `{}`: record the iteration, skip the rest of it */\n{{ long long ww_at = {rank};\n#pragma omp atomic compare\nif (ww_at < {flag}) {{ {flag} = ww_at; }} }}\ngoto {label};\n#if 0\n",
            path.ends_with
        );
        prefix_token(&mut replaced, first, &record, text(first));
        suffix_token(&mut replaced, last, "\n#endif\n}", text(last));
    }
    // The label ends the body: a compound statement gets it before its `}`, another
    // statement is wrapped in a block that ends with it.
    let body_first = token_at(site.body.start, false)
        .ok_or("the loop's body does not start on a token of its text")?;
    let body_last = token_at(site.body.end, true)
        .ok_or("the loop's body does not end on a token of its text")?;
    if body_last + 1 != toks.len() {
        return Err("the loop's body is not the last thing in its statement".into());
    }
    if text(body_first) == "{" {
        prefix_token(
            &mut replaced,
            body_last,
            &format!("{label}: ; "),
            text(body_last),
        );
    } else {
        prefix_token(&mut replaced, body_first, "{ ", text(body_first));
        suffix_token(
            &mut replaced,
            body_last,
            &format!(" {label}: ; }}"),
            text(body_last),
        );
    }
    replaced.sort_by_key(|(first, _, _)| *first);

    // The re-run: a copy of the body from the original text for the recorded iteration.
    let body = ctx.slice(site.body);
    if code_tokens(body)
        .iter()
        .any(|t| t.kind == TokKind::Ident && matches!(tok_text(body, t), "static" | "goto"))
    {
        return Err("its body declares a `static` variable or jumps with `goto`: a copy of the body for the host's re-run would not be the same code".into());
    }
    let init = super::clauses::for_init(stmt).ok_or("the loop has no initialization")?;
    let declared = declared_type(init, var)?;
    let value = if negate {
        format!("-({flag})")
    } else {
        flag.clone()
    };
    let set = match &declared {
        Some(ty) => format!("{ty} {var} = ({ty})({value});"),
        None => format!("{var} = (__typeof__({var}))({value});"),
    };
    let start = map.locate(site.body.start as usize);
    let end = map.locate(site.body.end.saturating_sub(1) as usize);
    let last = map.locate(base + toks[body_last].start);
    let keyword = map.locate(site.keyword.start as usize);
    if start.file != keyword.file || end.file != keyword.file {
        return Err("the loop's body is written by a macro".into());
    }
    let token = text(body_last).to_string();
    let rerun = Rerun {
        line: last.line,
        col: last.col + token.len() as u32,
        token,
        body: (start.line, start.col, end.line, end.col + 1),
        head: format!(
            "\nif ({flag} != {UNSET}) {{ /* warpwise: run the first failing iteration again on the host, as the sequential loop ran it */\n{set}\ndo\n"
        ),
        tail: "\nwhile (0);\n__builtin_abort(); /* the iteration took its error path on the device */\n}\n}\n".into(),
    };
    let skipped: Vec<String> = report
        .error_paths
        .iter()
        .map(|p| format!("`{}` at line {}", p.ends_with, p.line))
        .collect();
    Ok(FlagPort {
        preamble: format!(
            "{{ /* warpwise: the first iteration that takes an error path */\nlong long {flag} = {UNSET};\n"
        ),
        clause: format!("map(tofrom: {flag})"),
        replaced,
        rerun,
        notes: vec![format!(
            "error path{} ({}): in the kernel the branch records its iteration in `{flag}` with `#pragma omp atomic compare` and skips the rest of the iteration; after the kernel the host runs the first failing iteration again from the body's original text, where its calls happen as in the sequential loop",
            if skipped.len() == 1 { "" } else { "s" },
            skipped.join(", ")
        )],
    })
}

/// The error branch `path` names: the branch of an `if` statement of the loop's function
/// whose keyword is at the path's line and column of the loop's file, inside the loop.
fn branch_span(ctx: &Ctx<'_>, unit: &Unit, site: &LoopSite, path: &ErrorPath) -> Option<Span> {
    let map = &unit.preprocessed.source_map;
    let file = map.locate(site.keyword.start as usize).file;
    ctx.func.ifs.iter().find_map(|r| {
        let at = map.locate(r.span.start as usize);
        let inside = site.span.start <= r.span.start && r.span.end <= site.span.end;
        (r.statement
            && inside
            && at.file == file
            && at.line == path.condition_line
            && at.col == path.condition_col)
            .then_some(match path.branch {
                Branch::Then => Some(r.then_span),
                Branch::Else => r.else_span,
            })
            .flatten()
    })
}

/// The type the loop's initialization declares its index with (`int` of `int i = 0`), or
/// `None` when it assigns a variable declared before (`i = 0`).
fn declared_type(init: &str, var: &str) -> Result<Option<String>, String> {
    let toks = code_tokens(init);
    let at = toks
        .iter()
        .position(|t| tok_text(init, t) == var)
        .filter(|k| toks.get(k + 1).is_some_and(|t| tok_text(init, t) == "="))
        .ok_or_else(|| {
            format!(
                "the initialization `{}` does not assign `{var}`",
                init.trim()
            )
        })?;
    if at == 0 {
        return Ok(None);
    }
    let ty = init[toks[0].start..toks[at].start].trim();
    Ok(Some(ty.to_string()))
}
