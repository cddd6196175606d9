//! Second counters in OpenMP ports (`crate::counters` plans the rewrite): its
//! replacements become edits of the original file. An integer counter is `firstprivate`;
//! a pointer counter is translated to the device address of the array it points into
//! (`map(to: p[0:0])`, a zero-length section), which is found only inside a mapped section:
//! a pointer the first iteration does not dereference at its entry value (`*--q` from one
//! past the end) is refused. OpenMP has no form for such a loop otherwise: clang 16 takes
//! neither `linear` on the combined construct nor a comma in the canonical loop's
//! increment.

use crate::counters::{note, rewrite_counters, suffix_token, Dialect};
use crate::plan::Ctx;
use advisor::model::{Induction, LoopReport};
use frontend::access_sites::LoopSite;
use frontend::unit::Unit;

/// A replacement of text that stands on one line of the original file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// Where the text starts (1-based line and column of the original file).
    pub line: u32,
    pub col: u32,
    /// The text there, checked before editing.
    pub original: String,
    pub replacement: String,
}

/// What a port needs for its loop's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterPort {
    pub edits: Vec<TextEdit>,
    /// Integer counters: each thread reads their entry value.
    pub integers: Vec<String>,
    /// Pointer counters: translated to the device address of what they point into.
    pub pointers: Vec<String>,
    /// The loop's increment once the counters' updates are dropped from it (`i++` of
    /// `i++, p++`); `None` when the loop has no counter.
    pub increment: Option<String>,
    /// The replacements of the loop statement's code tokens that `edits` make, for another
    /// rewrite of the body to merge with (an arg-min's).
    pub replaced: Vec<(usize, usize, String)>,
    /// Whether statements after the loop give counters their final values.
    pub finals: bool,
    pub notes: Vec<String>,
}

/// Plans the rewrite of `report`'s counters in the loop at `site`; an error says why the
/// loop cannot be rewritten (the port is then refused with it).
pub(crate) fn plan_counters(
    ctx: &Ctx<'_>,
    unit: &Unit,
    site: &LoopSite,
    report: &LoopReport,
    induction: &Induction,
    start: Option<&str>,
) -> Result<CounterPort, String> {
    if report.counters.is_empty() && !induction.last_value {
        return Ok(CounterPort::default());
    }
    let source = crate::counters::LoopText {
        start: start.map(str::to_string),
        ..crate::plan::counter_text(ctx, site, report)
    };
    // The construct's loop variable is its own (private, OpenMP 5.0 §2.19.1.1): the host's
    // keeps the value it had before the loop, so one read after the loop is given the
    // sequential loop's last value there.
    let index_final = induction
        .last_value
        .then(|| crate::counters::index_final(&source, induction))
        .transpose()
        .map_err(|why| {
            format!(
                "`{v}` is read after the loop, and OpenMP leaves the host's `{v}` as it was before the construct (the loop's variable is private to it); its final value is not generated because {why}: set `{v}` after the loop yourself",
                v = induction.var
            )
        })?;
    let mut port = CounterPort::default();
    let mut finals = Vec::new();
    if !report.counters.is_empty() {
        let rewrite = rewrite_counters(&source, report, induction, Dialect::C)?;
        if let Some((name, _)) = rewrite.pointers.iter().find(|(_, entry)| !entry) {
            return Err(format!(
                "pointer `{name}` is not dereferenced at its entry value in every iteration before its update (`*--{name}`, `{name}[-1]` or a guarded access): the device address of where it starts is not known"
            ));
        }
        port.replaced = rewrite.replaced;
        port.integers = rewrite.integers;
        port.pointers = rewrite.pointers.into_iter().map(|(p, _)| p).collect();
        port.increment = Some(rewrite.increment);
        port.notes.push(note(report, induction));
        finals = rewrite.finals;
    }
    finals.extend(index_final);
    // Counters and the index read after the loop get their final values right after it,
    // on the host.
    if !finals.is_empty() {
        if !statement_of_a_block(ctx, site) {
            return Err(format!(
                "{} read after the loop, which is the body of another statement: the statement that sets {} final value has no place",
                finals.len(),
                if finals.len() == 1 { "its" } else { "their" }
            ));
        }
        let stmt = ctx.slice(site.span);
        let toks = crate::ctext::code_tokens(stmt);
        let last = toks.len() - 1;
        let token = crate::ctext::tok_text(stmt, &toks[last]);
        suffix_token(
            &mut port.replaced,
            last,
            &format!(" {}", finals.join(" ")),
            token,
        );
        port.finals = true;
        port.notes.push(format!(
            "after the loop, `{}` gives the value the sequential loop leaves",
            finals.join(" ")
        ));
    }
    port.edits = text_edits(ctx, unit, site, &port.replaced)
        .map_err(|original| format!("{original}: rewrite the counters by hand"))?;
    Ok(port)
}

/// Replacements of the loop statement's code tokens `first..=last` as edits of the original
/// file; an error quotes the text that is written by a macro or over several lines there
/// (`` `p++` is written by a macro or over several lines ``).
pub(crate) fn text_edits(
    ctx: &Ctx<'_>,
    unit: &Unit,
    site: &LoopSite,
    replaced: &[(usize, usize, String)],
) -> Result<Vec<TextEdit>, String> {
    let stmt = ctx.slice(site.span);
    let base = site.span.start as usize;
    let toks = crate::ctext::code_tokens(stmt);
    let map = &unit.preprocessed.source_map;
    let file = map.locate(site.keyword.start as usize).file;
    let mut edits = Vec::new();
    for (first, last, replacement) in replaced {
        let (from, to) = (base + toks[*first].start, base + toks[*last].end);
        let original = &ctx.text[from..to];
        let loc = map.locate(from);
        if loc.file != file || original.contains('\n') {
            return Err(format!(
                "`{original}` is written by a macro or over several lines"
            ));
        }
        edits.push(TextEdit {
            line: loc.line,
            col: loc.col,
            original: original.to_string(),
            replacement: replacement.clone(),
        });
    }
    Ok(edits)
}

/// Whether the loop statement stands in a block of its own (after `;`, `{` or `}`), where a
/// statement after it runs exactly when the loop does.
pub(crate) fn statement_of_a_block(ctx: &Ctx<'_>, site: &LoopSite) -> bool {
    let function = &ctx.sites.functions[site.function];
    let before = &ctx.text[function.body.start as usize..site.span.start as usize];
    let toks = crate::ctext::code_tokens(before);
    toks.last()
        .is_some_and(|t| matches!(crate::ctext::tok_text(before, t), ";" | "{" | "}"))
}
