//! Writes OpenMP ports into a copy of the user's file: each loop's pragma above its `for`
//! (replacing the authors' `#pragma omp parallel for`, kept inside its `#ifdef`), `atomic`
//! above reduction updates, `target data` around loops that hold ports (with their
//! `target update`s), and the unified diff against the original.

use super::atomic::{compare_rewrite, AtomicForm, AtomicSite};
use super::clauses::LoopPort;
use super::counters::TextEdit;
use super::error::{PortError, RegionError};
use super::error_flag::Rerun;
use super::globals::DeviceGlobal;
use super::region::DataRegion;
use super::sections::helper_macros;
use frontend::loop_ref::LoopRef;
use std::path::{Path, PathBuf};

/// One ported file.
#[derive(Clone, Debug)]
pub struct PortedFile {
    /// The original file.
    pub path: PathBuf,
    pub ported: String,
    /// Unified diff from the original to `ported`.
    pub patch: String,
    /// The loops ported in it.
    pub loops: Vec<LoopRef>,
    /// The functions it compiles for the device (`declare target`).
    pub device_functions: Vec<String>,
    /// Loops whose edits could not be made here, and why (the others are ported).
    pub failed: Vec<(LoopRef, PortError)>,
    /// The data regions written (loop ids of the enclosing loops).
    pub regions: Vec<LoopRef>,
    /// Data regions not written, and why.
    pub failed_regions: Vec<(LoopRef, RegionError)>,
}

enum Edit<'a> {
    Loop(&'a LoopPort),
    Atomic(&'a AtomicSite),
    /// `#pragma omp end declare target` after this line.
    EndDeclareTarget,
    /// `#pragma omp declare target` before this line.
    DeclareTarget,
    /// `#pragma omp declare target(name)` after this line.
    DeclareGlobal(&'a DeviceGlobal),
    /// `#pragma omp target data` (and a comment saying what stays) before the loop.
    Region(&'a DataRegion),
    /// `target update` directives before this column (after a statement when the rest of
    /// the line is blank).
    Update(&'a str),
    /// Text of the loop replaced (its counters computed from the index).
    Text(&'a TextEdit),
    /// The host's re-run of the first failing iteration, after the loop's last token.
    Rerun(&'a Rerun),
}

/// A function definition (first and last line) compiled for the device from this file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFunction {
    pub name: String,
    pub first_line: u32,
    pub last_line: u32,
}

/// Applies `ports` and `regions` (all in `path`) to its text `original`; `strict` adds each
/// port's [`LoopPort::strict_clauses`]. A region is written only when all its ports are.
pub fn port_file(
    path: &Path,
    original: &str,
    ports: &[&LoopPort],
    regions: &[&DataRegion],
    device_functions: &[DeviceFunction],
    device_globals: &[DeviceGlobal],
    strict: bool,
) -> Result<PortedFile, PortError> {
    let mut lines: Vec<String> = original.split_inclusive('\n').map(str::to_string).collect();
    // The re-runs copy loop bodies as written, before any edit.
    let pristine = lines.clone();
    // Check every port against the original first: one loop written by a macro or under
    // an orphaned `omp for` must not keep the file's other loops from being ported.
    let (ports, failed) = checked_ports(path, &lines, ports);
    let (regions, failed_regions) = checked_regions(path, &lines, regions, &ports);
    let edits = planned_edits(&regions, &ports, device_functions, device_globals);
    for (line, col, edit) in &edits {
        apply_edit(&mut lines, &pristine, path, (*line, *col), edit, strict)?;
    }
    let ported = with_helper_macros(lines.concat());
    let patch = unified_patch(path, original, &ported);
    Ok(PortedFile {
        path: path.to_path_buf(),
        ported,
        patch,
        loops: ports.iter().map(|p| p.loop_id.clone()).collect(),
        device_functions: device_functions.iter().map(|f| f.name.clone()).collect(),
        failed,
        regions: regions.iter().map(|r| r.loop_id.clone()).collect(),
        failed_regions,
    })
}

/// The ports whose edits can be made in `lines`, and the others with why.
fn checked_ports<'p>(
    path: &Path,
    lines: &[String],
    ports: &[&'p LoopPort],
) -> (Vec<&'p LoopPort>, Vec<(LoopRef, PortError)>) {
    let mut failed = Vec::new();
    let ports: Vec<&LoopPort> = ports
        .iter()
        .copied()
        .filter(|p| match check_port(path, lines, p) {
            Ok(()) => true,
            Err(e) => {
                failed.push((p.loop_id.clone(), e));
                false
            }
        })
        .collect();
    (ports, failed)
}

/// The regions that can be written in `lines` around the checked `ports`, and the others
/// with why.
fn checked_regions<'r>(
    path: &Path,
    lines: &[String],
    regions: &[&'r DataRegion],
    ports: &[&LoopPort],
) -> (Vec<&'r DataRegion>, Vec<(LoopRef, RegionError)>) {
    let mut failed_regions = Vec::new();
    let regions: Vec<&DataRegion> = regions
        .iter()
        .copied()
        .filter(|r| match check_region(path, lines, r, ports) {
            Ok(()) => true,
            Err(e) => {
                failed_regions.push((r.loop_id.clone(), e));
                false
            }
        })
        .collect();
    (regions, failed_regions)
}

/// Every edit of the file by place, bottom-up, each made once.
fn planned_edits<'a>(
    regions: &[&'a DataRegion],
    ports: &[&'a LoopPort],
    device_functions: &[DeviceFunction],
    device_globals: &'a [DeviceGlobal],
) -> Vec<(u32, u32, Edit<'a>)> {
    let mut edits: Vec<(u32, u32, Edit)> = Vec::new();
    for &r in regions {
        edits.push((r.line, r.col, Edit::Region(r)));
        for (l, c, text) in &r.updates {
            edits.push((*l, *c, Edit::Update(text)));
        }
    }
    for f in device_functions {
        edits.push((f.first_line, 0, Edit::DeclareTarget));
        edits.push((f.last_line, u32::MAX, Edit::EndDeclareTarget));
    }
    for g in device_globals {
        edits.push((g.line, u32::MAX - 1, Edit::DeclareGlobal(g)));
    }
    for &p in ports {
        edits.push((p.line, p.col, Edit::Loop(p)));
        for a in &p.atomics {
            edits.push((a.line, a.col, Edit::Atomic(a)));
        }
        for t in &p.edits {
            edits.push((t.line, t.col, Edit::Text(t)));
        }
        if let Some(r) = &p.rerun {
            edits.push((r.line, r.col, Edit::Rerun(r)));
        }
    }
    // Bottom-up, so earlier line numbers stay valid.
    edits.sort_by_key(|e| std::cmp::Reverse((e.0, e.1)));
    // An edit of one kind at one place is made once; a text edit is never dropped for
    // another edit that starts where it does (the counters check they do not overlap),
    // unless it is the same edit: a macro that expands its argument twice (glibc's
    // `assert(stack_size < n)`) puts two uses of the counter at one place in the file.
    edits.dedup_by(|a, b| {
        a.0 == b.0
            && a.1 == b.1
            && std::mem::discriminant(&a.2) == std::mem::discriminant(&b.2)
            && match (&a.2, &b.2) {
                (Edit::Text(x), Edit::Text(y)) => x == y,
                (Edit::DeclareGlobal(x), Edit::DeclareGlobal(y)) => x == y,
                _ => true,
            }
    });
    edits
}

/// Makes one edit at `line`:`col` (1-based) of `lines`.
fn apply_edit(
    lines: &mut Vec<String>,
    pristine: &[String],
    path: &Path,
    (line, col): (u32, u32),
    edit: &Edit<'_>,
    strict: bool,
) -> Result<(), PortError> {
    let at = line as usize - 1;
    if lines.get(at).is_none() {
        return Err(PortError::NoSuchLine {
            path: path.to_path_buf(),
            line,
        });
    }
    if insert_declaration(lines, at, edit) {
        return Ok(());
    }
    let col0 = (col as usize).saturating_sub(1);
    if let Edit::Update(text) = edit {
        insert_update(lines, at, col0, text);
        return Ok(());
    }
    if let Edit::Rerun(r) = edit {
        return insert_rerun(lines, pristine, path, (line, col), r);
    }
    check_token(&lines[at], path, (line, col), edit)?;
    apply_token_edit(lines, at, path, (line, col), edit, strict)
}

/// Inserts a `declare target` line (for a function or a global) at or after line `at`;
/// false for any other edit.
fn insert_declaration(lines: &mut Vec<String>, at: usize, edit: &Edit<'_>) -> bool {
    match edit {
        Edit::DeclareTarget => {
            lines.insert(at, "#pragma omp declare target\n".into());
            true
        }
        Edit::EndDeclareTarget => {
            if !lines[at].ends_with('\n') {
                lines[at].push('\n');
            }
            lines.insert(at + 1, "#pragma omp end declare target\n".into());
            true
        }
        Edit::DeclareGlobal(g) => {
            if !lines[at].ends_with('\n') {
                lines[at].push('\n');
            }
            let clause = if g.link { "link" } else { "" };
            lines.insert(
                at + 1,
                format!("#pragma omp declare target {clause}({})\n", g.name),
            );
            true
        }
        _ => false,
    }
}

/// Inserts the host's re-run of the failing iteration after the loop's last token, which
/// ends at `col0` on line `at`: a copy of the loop body as written in `pristine`.
fn insert_rerun(
    lines: &mut [String],
    pristine: &[String],
    path: &Path,
    (line, col): (u32, u32),
    r: &Rerun,
) -> Result<(), PortError> {
    let at = line as usize - 1;
    let col0 = (col as usize).saturating_sub(1);
    let text = &lines[at];
    let after = text.get(..col0).is_some_and(|t| t.ends_with(&r.token));
    let copy = original_text(pristine, r.body);
    let (Some(copy), true) = (copy, after) else {
        return Err(PortError::EditNotAtToken {
            path: path.to_path_buf(),
            line,
            col,
            token: r.token.clone(),
        });
    };
    // The copy keeps the original's line numbers (`assert` prints them), and the
    // rest of the file gets its own back.
    let host = format!(
        "{}#line {}\n{copy}{}#line {}\n",
        r.head, r.body.0, r.tail, r.line
    );
    lines[at].insert_str(col0, &host);
    Ok(())
}

/// Checks that the token `edit` rewrites or goes above starts at column `col` of `text`.
fn check_token(
    text: &str,
    path: &Path,
    (line, col): (u32, u32),
    edit: &Edit<'_>,
) -> Result<(), PortError> {
    let col0 = (col as usize).saturating_sub(1);
    let expected = match edit {
        Edit::Loop(_) => "for",
        Edit::Atomic(a) => &a.token,
        Edit::Region(r) => &r.keyword,
        Edit::Text(t) => &t.original,
        Edit::DeclareTarget
        | Edit::EndDeclareTarget
        | Edit::DeclareGlobal(_)
        | Edit::Update(_)
        | Edit::Rerun(_) => {
            unreachable!("handled above")
        }
    };
    if !text
        .get(col0..)
        .is_some_and(|rest| rest.starts_with(expected))
    {
        return Err(PortError::EditNotAtToken {
            path: path.to_path_buf(),
            line,
            col,
            token: expected.to_string(),
        });
    }
    Ok(())
}

/// Makes an edit placed at a token (checked by [`check_token`]): an atomic, a data
/// region, a text replacement or a loop's pragma.
fn apply_token_edit(
    lines: &mut Vec<String>,
    at: usize,
    path: &Path,
    (line, col): (u32, u32),
    edit: &Edit<'_>,
    strict: bool,
) -> Result<(), PortError> {
    let col0 = (col as usize).saturating_sub(1);
    match edit {
        Edit::Atomic(a) => match &a.form {
            AtomicForm::Compare { max, c_type } => {
                let r = compare_rewrite(lines, at, col0, *max, c_type).map_err(|why| {
                    PortError::CompareShape {
                        path: path.to_path_buf(),
                        line,
                        col,
                        why,
                    }
                })?;
                lines.splice(at..=r.last_line, [r.replacement]);
            }
            form => {
                let directive = form.directive().unwrap_or("#pragma omp atomic update");
                insert_directive(lines, at, col0, directive)
            }
        },
        Edit::Region(r) => {
            let text = format!(
                "/* warpwise: {} stay{} on the device across this loop's iterations */\n{}",
                r.arrays.join(", "),
                if r.arrays.len() == 1 { "s" } else { "" },
                r.pragma
            );
            insert_directive(lines, at, col0, &text)
        }
        Edit::DeclareTarget
        | Edit::EndDeclareTarget
        | Edit::DeclareGlobal(_)
        | Edit::Update(_)
        | Edit::Rerun(_) => {}
        Edit::Text(t) => {
            let line = &mut lines[at];
            line.replace_range(col0..col0 + t.original.len(), &t.replacement);
        }
        Edit::Loop(p) => write_loop_pragma(lines, at, col0, p, strict)?,
    }
    Ok(())
}

/// Writes the port's pragma above its loop at `col0` of line `at`, in place of the
/// authors' pragma where there is one.
fn write_loop_pragma(
    lines: &mut Vec<String>,
    at: usize,
    col0: usize,
    p: &LoopPort,
    strict: bool,
) -> Result<(), PortError> {
    let pragma = if strict {
        let mut t = global_maps(p);
        for c in &p.strict_clauses {
            t.push_str(" \\\n    ");
            t.push_str(c);
        }
        t
    } else {
        global_maps(p)
    };
    match (existing_pragma(lines, at)?, &p.preamble) {
        (Some((first, last)), None) => {
            let indent = indentation(&lines[first]);
            let new = indent_block(&pragma, &indent);
            lines.splice(first..=last, [new]);
        }
        // The block the preamble opens holds the loop: the authors' pragma
        // (perhaps inside `#ifdef _OPENMP`) gives way to the port's, which
        // goes right above the loop.
        (Some((first, last)), Some(preamble)) => {
            insert_directive(lines, at, col0, &format!("{preamble}{pragma}"));
            let indent = indentation(&lines[first]);
            lines.splice(
                            first..=last,
                            [format!("{indent}/* warpwise: the target region below replaces this loop's OpenMP pragma */\n")],
                        );
        }
        (None, preamble) => insert_directive(
            lines,
            at,
            col0,
            &format!("{}{pragma}", preamble.as_deref().unwrap_or("")),
        ),
    }
    Ok(())
}

/// `ported` with the section-bound macros its map clauses use defined on top.
fn with_helper_macros(mut ported: String) -> String {
    let macros = helper_macros(&ported);
    if !macros.is_empty() {
        let mut head = String::from("/* warpwise: section bounds of the OpenMP map clauses */\n");
        for m in macros {
            head.push_str(m);
            head.push('\n');
        }
        ported.insert_str(0, &head);
    }
    ported
}

/// The unified diff from `original` to `ported`, both named after `path`'s file name.
fn unified_patch(path: &Path, original: &str, ported: &str) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut patch = similar::TextDiff::from_lines(original, ported)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string();
    if !patch.is_empty() && !patch.ends_with('\n') {
        patch.push('\n');
    }
    patch
}

/// The port's pragma with the maps of the device globals its helpers reach
/// ([`LoopPort::global_maps`]).
fn global_maps(p: &LoopPort) -> String {
    let mut t = p.pragma.clone();
    let (to, tofrom) = &p.global_maps;
    for (dir, names) in [("to", to), ("tofrom", tofrom)] {
        if !names.is_empty() {
            t.push_str(&format!(" \\\n    map({dir}: {})", names.join(", ")));
        }
    }
    t
}

/// Whether `region` can be written in `lines` (the original text) around `ports`, those of
/// the file that are written.
fn check_region(
    path: &Path,
    lines: &[String],
    region: &DataRegion,
    ports: &[&LoopPort],
) -> Result<(), RegionError> {
    // A kernel left on the host would touch the mapped arrays with no update around it.
    if let Some(id) = region
        .ports
        .iter()
        .find(|id| !ports.iter().any(|p| &p.loop_id == *id))
    {
        return Err(RegionError::PortNotWritten { port: id.clone() });
    }
    let at = region.line as usize - 1;
    let text = lines.get(at).ok_or_else(|| RegionError::NoSuchLine {
        path: path.to_path_buf(),
        line: region.line,
    })?;
    let col0 = (region.col as usize).saturating_sub(1);
    if !text
        .get(col0..)
        .is_some_and(|rest| rest.starts_with(&region.keyword))
    {
        return Err(RegionError::NotAtKeyword {
            path: path.to_path_buf(),
            line: region.line,
            col: region.col,
            keyword: region.keyword.clone(),
        });
    }
    // A pragma right above the loop applies to it; the region's would come between. The
    // polyhedral tools' `#pragma scop` only marks where a region starts.
    let above = lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty());
    let applies = |l: &str| {
        let words: Vec<&str> = l.trim_start_matches('#').split_whitespace().collect();
        words.first() == Some(&"pragma") && words.get(1) != Some(&"scop")
    };
    if text[..col0].trim().is_empty() && above.is_some_and(applies) {
        return Err(RegionError::PragmaAbove {
            line: region.line - 1,
        });
    }
    for (line, _, _) in &region.updates {
        if lines.get(*line as usize - 1).is_none() {
            return Err(RegionError::NoSuchLine {
                path: path.to_path_buf(),
                line: *line,
            });
        }
    }
    Ok(())
}

/// Puts `directive` right before column `col0` of line `at`, on lines of its own: after the
/// line when only blanks follow the column (the end of a statement), above it when only
/// blanks precede it, else the line is split there.
fn insert_update(lines: &mut Vec<String>, at: usize, col0: usize, directive: &str) {
    let text = lines[at].clone();
    let first_line_end = text.find('\n').unwrap_or(text.len());
    if text[col0.min(first_line_end)..first_line_end]
        .trim()
        .is_empty()
    {
        // After this line, before what earlier edits put below it in the same entry.
        let (head, tail) = text.split_at(first_line_end);
        let mut new = head.to_string();
        new.push('\n');
        new.push_str(&indent_block(directive, &indentation(&text)));
        new.push_str(tail.strip_prefix('\n').unwrap_or(tail));
        lines[at] = new;
        return;
    }
    // After a statement with more code on its line (`{ a[0] = 1; continue; }`): the code
    // after the directive starts its own line, without the blank that followed the `;`.
    let indent = indentation(&text);
    let (before, rest) = text.split_at(col0);
    if before.trim().is_empty() {
        insert_directive(lines, at, col0, directive);
        return;
    }
    let mut new = before.trim_end().to_string();
    new.push('\n');
    new.push_str(&indent_block(directive, &indent));
    new.push_str(&indent);
    new.push_str(rest.trim_start_matches([' ', '\t']));
    lines[at] = new;
}

/// Whether `port`'s edits can be made in `lines` (the original text).
fn check_port(path: &Path, lines: &[String], port: &LoopPort) -> Result<(), PortError> {
    let expect = |line: u32, col: u32, token: &str| -> Result<(), PortError> {
        let text =
            lines
                .get((line as usize).wrapping_sub(1))
                .ok_or_else(|| PortError::NoSuchLine {
                    path: path.to_path_buf(),
                    line,
                })?;
        let col0 = (col as usize).saturating_sub(1);
        if text.get(col0..).is_some_and(|rest| rest.starts_with(token)) {
            Ok(())
        } else {
            Err(PortError::NotAtToken {
                path: path.to_path_buf(),
                line,
                col,
                token: token.to_string(),
            })
        }
    };
    expect(port.line, port.col, "for")?;
    if let Some(r) = &port.rerun {
        let col0 = (r.col as usize).saturating_sub(1);
        let at = lines.get((r.line as usize).wrapping_sub(1));
        let after = at
            .and_then(|t| t.get(..col0))
            .is_some_and(|t| t.ends_with(&r.token));
        if !after || original_text(lines, r.body).is_none() {
            return Err(PortError::NotAtToken {
                path: path.to_path_buf(),
                line: r.line,
                col: r.col.saturating_sub(r.token.len() as u32),
                token: r.token.clone(),
            });
        }
    }
    // A counter or a body name replaced inside a macro's expansion (`assert(stack_size <
    // n)`) is not in the file's text: the loop is left out, not the file.
    for e in &port.edits {
        expect(e.line, e.col, &e.original)?;
    }
    for a in &port.atomics {
        expect(a.line, a.col, &a.token)?;
        if let AtomicForm::Compare { max, c_type } = &a.form {
            let col0 = (a.col as usize).saturating_sub(1);
            compare_rewrite(lines, a.line as usize - 1, col0, *max, c_type).map_err(|why| {
                PortError::CompareShape {
                    path: path.to_path_buf(),
                    line: a.line,
                    col: a.col,
                    why,
                }
            })?;
        }
    }
    existing_pragma(lines, port.line as usize - 1).map(|_| ())
}

/// The text of `lines` from (first line, column) to (last line, the column past the end),
/// 1-based; `None` when the file has no such text.
fn original_text(lines: &[String], (l0, c0, l1, c1): (u32, u32, u32, u32)) -> Option<String> {
    let (l0, l1) = (l0 as usize, l1 as usize);
    let (c0, c1) = ((c0 as usize).checked_sub(1)?, (c1 as usize).checked_sub(1)?);
    if l0 == 0 || l1 < l0 {
        return None;
    }
    if l0 == l1 {
        return lines.get(l0 - 1)?.get(c0..c1).map(str::to_string);
    }
    let mut out = lines.get(l0 - 1)?.get(c0..)?.to_string();
    for l in lines.get(l0..l1 - 1)? {
        out.push_str(l);
    }
    out.push_str(lines.get(l1 - 1)?.get(..c1)?);
    Some(out)
}

fn indentation(line: &str) -> String {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `text` (lines joined by `\n`) with `indent` before each line, ending in a newline.
fn indent_block(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        out.push_str(indent);
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Puts `directive` on its own line(s) right before column `col0` of line `at`: above it
/// when only blanks precede the column, else the line is split there.
fn insert_directive(lines: &mut Vec<String>, at: usize, col0: usize, directive: &str) {
    let text = lines[at].clone();
    let indent = indentation(&text);
    let (before, rest) = text.split_at(col0);
    if before.trim().is_empty() {
        lines.insert(at, indent_block(directive, &indent));
    } else {
        let mut new = before.trim_end().to_string();
        new.push('\n');
        new.push_str(&indent_block(directive, &indent));
        new.push_str(&indent);
        new.push_str(rest);
        lines[at] = new;
    }
}

/// The authors' `#pragma omp parallel for` right above line `at` (blank lines, comments
/// and other preprocessor lines such as `#ifdef _OPENMP` may sit between): its first and
/// last line (continuations included). `omp for` inside a `parallel` region, or a loop
/// already offloaded, cannot be replaced by a target region.
fn existing_pragma(lines: &[String], at: usize) -> Result<Option<(usize, usize)>, PortError> {
    let mut k = at;
    while k > 0 {
        k -= 1;
        let t = lines[k].trim();
        // A continuation line belongs to the directive that starts above it.
        let mut first = k;
        while first > 0 && lines[first - 1].trim_end().ends_with('\\') {
            first -= 1;
        }
        let head = lines[first].trim();
        if head.starts_with('#') {
            let directive: String = lines[first..=k]
                .iter()
                .map(|l| l.trim().trim_end_matches('\\'))
                .collect::<Vec<_>>()
                .join(" ");
            let words: Vec<&str> = directive
                .trim_start_matches('#')
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty())
                .collect();
            if words.first() == Some(&"pragma") && words.get(1) == Some(&"omp") {
                if words.contains(&"target") {
                    return Err(PortError::AlreadyOffloaded {
                        line: first + 1,
                        directive,
                    });
                }
                if words.contains(&"for") {
                    if !words.contains(&"parallel") {
                        return Err(PortError::Worksharing {
                            line: first + 1,
                            directive,
                        });
                    }
                    return Ok(Some((first, k)));
                }
                // `#pragma omp simd` on the loop: a target region inside a simd loop is
                // not allowed; the port's pragma takes its place.
                if words.contains(&"simd") {
                    return Ok(Some((first, k)));
                }
            }
            k = first;
            continue;
        }
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        break;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(line: u32, col: u32, pragma: &str) -> LoopPort {
        LoopPort {
            loop_id: format!("f.c:{line}:{col}").parse().unwrap(),
            function: "f".into(),
            file: "f.c".into(),
            line,
            col,
            last_line: line + 1,
            span: frontend::ir::Span::new(0, 0),
            pragma: pragma.into(),
            atomics: Vec::new(),
            edits: Vec::new(),
            preamble: None,
            strict_clauses: Vec::new(),
            device_functions: Vec::new(),
            arrays: Vec::new(),
            maps_structs: false,
            enclosing: None,
            global_maps: Default::default(),
            reduced: Vec::new(),
            rerun: None,
            notes: Vec::new(),
        }
    }

    fn check(original: &str, p: LoopPort, expected: &str) {
        let out = port_file(Path::new("f.c"), original, &[&p], &[], &[], &[], false).unwrap();
        assert_eq!(out.ported, expected);
        assert!(
            out.patch.starts_with("--- a/f.c\n+++ b/f.c\n"),
            "{}",
            out.patch
        );
    }

    #[test]
    fn inserts_above_the_loop_with_its_indentation() {
        check(
            "void f(void) {\n    for (i = 0; i < n; i++)\n        a[i] = 0;\n}\n",
            port(2, 5, "#pragma omp target teams distribute parallel for"),
            "void f(void) {\n    #pragma omp target teams distribute parallel for\n    for (i = 0; i < n; i++)\n        a[i] = 0;\n}\n",
        );
    }

    fn edit(line: u32, col: u32, original: &str, replacement: &str) -> TextEdit {
        TextEdit {
            line,
            col,
            original: original.into(),
            replacement: replacement.into(),
        }
    }

    #[test]
    fn text_edits_on_one_line_replace_their_checked_text_from_the_right() {
        let mut p = port(1, 1, "#pragma omp target");
        // `i++, p++` loses `, p++`; the body's `{` opens with the copy; `*p` reads it.
        p.edits = vec![
            edit(1, 23, ", p++", ""),
            edit(1, 30, "{", "{ T c = p + i;"),
            edit(1, 33, "p", "c"),
        ];
        check(
            "for (i = 0; i < n; i++, p++) { *p = 0; }\n",
            p.clone(),
            "#pragma omp target\nfor (i = 0; i < n; i++) { T c = p + i; *c = 0; }\n",
        );
        // Text that is not where the edit says (a macro wrote it) refuses the loop, found
        // before any edit: the file is written without it.
        p.edits = vec![edit(1, 33, "q", "c")];
        let out = port_file(
            Path::new("f.c"),
            "for (i = 0; i < n; i++, p++) { *p = 0; }\n",
            &[&p],
            &[],
            &[],
            &[],
            false,
        )
        .expect("the file is written");
        assert!(out.loops.is_empty(), "{:?}", out.loops);
        assert!(
            matches!(out.failed.as_slice(), [(_, PortError::NotAtToken { token, .. })] if token == "q"),
            "{:?}",
            out.failed
        );
    }

    #[test]
    fn replaces_the_authors_simd_pragma() {
        check(
            "void f(void) {\n# pragma omp simd\n  for (i = 0; i < n; i++)\n    a[i] = 0;\n}\n",
            port(3, 3, "#pragma omp target teams distribute parallel for"),
            "void f(void) {\n#pragma omp target teams distribute parallel for\n  for (i = 0; i < n; i++)\n    a[i] = 0;\n}\n",
        );
    }

    #[test]
    fn replaces_the_authors_pragma_inside_its_ifdef() {
        check(
            "#ifdef _OPENMP\n#pragma omp parallel for private(j, \\\n  k)\n#endif\n  for (i = 0; i < n; i++)\n",
            port(5, 3, "#pragma omp target teams distribute parallel for \\\n    private(j)"),
            "#ifdef _OPENMP\n#pragma omp target teams distribute parallel for \\\n    private(j)\n#endif\n  for (i = 0; i < n; i++)\n",
        );
    }

    #[test]
    fn splits_a_line_that_has_code_before_the_loop() {
        check(
            "  { for (i = 0; i < n; i++) a[i] = 0; }\n",
            port(1, 5, "#pragma omp target teams distribute parallel for"),
            "  {\n  #pragma omp target teams distribute parallel for\n  for (i = 0; i < n; i++) a[i] = 0; }\n",
        );
    }

    /// Why `port_file` left the one loop of `original` out (the file itself is written).
    fn refusal(original: &str, p: &LoopPort) -> String {
        let out = port_file(Path::new("f.c"), original, &[p], &[], &[], &[], false).unwrap();
        assert!(out.loops.is_empty(), "{:?}", out.loops);
        assert_eq!(out.ported, original, "nothing edited");
        let [(id, why)] = &out.failed[..] else {
            panic!("one refusal expected: {:?}", out.failed)
        };
        assert_eq!(id, &p.loop_id);
        why.to_string()
    }

    #[test]
    fn refuses_worksharing_inside_a_parallel_region_and_offloaded_loops() {
        let p = port(2, 1, "#pragma omp target teams distribute parallel for");
        let e = refusal("#pragma omp for\nfor (;;) ;\n", &p);
        assert!(e.contains("enclosing `parallel` region"), "{e}");
        let e = refusal("#pragma omp target teams loop\nfor (;;) ;\n", &p);
        assert!(e.contains("already offloaded"), "{e}");
        let e = refusal("x\nFOR_EACH(i) ;\n", &p);
        assert!(e.contains("expected `for`"), "{e}");
    }

    fn region(ports: &[&LoopPort], updates: Vec<(u32, u32, String)>) -> DataRegion {
        DataRegion {
            loop_id: "f.c:1:1".parse().unwrap(),
            function: "f".into(),
            file: "f.c".into(),
            line: 1,
            col: 1,
            keyword: "for".into(),
            pragma: "#pragma omp target data map(tofrom: a[0:n])".into(),
            updates,
            arrays: vec!["a".into()],
            ports: ports.iter().map(|p| p.loop_id.clone()).collect(),
        }
    }

    #[test]
    fn a_data_region_and_its_updates() {
        let k1 = port(2, 3, "#pragma omp target teams distribute parallel for");
        let k2 = port(4, 3, "#pragma omp target teams distribute parallel for");
        let original = "for (t = 0; t < 9; t++) {\n  for (i = 0; i < n; i++) a[i]++;\n  if (t) { a[0] = 1; continue; }\n  for (i = 0; i < n; i++) a[i]++;\n}\n";
        let updates = vec![
            (3, 3, "#pragma omp target update from(a[0:n])".to_string()),
            (3, 21, "#pragma omp target update to(a[0:n])".to_string()),
        ];
        let r = region(&[&k1, &k2], updates);
        let out = port_file(
            Path::new("f.c"),
            original,
            &[&k1, &k2],
            &[&r],
            &[],
            &[],
            false,
        )
        .unwrap();
        assert_eq!(out.regions, vec!["f.c:1:1".parse::<LoopRef>().unwrap()]);
        assert_eq!(
            out.ported,
            "/* warpwise: a stays on the device across this loop's iterations */\n#pragma omp target data map(tofrom: a[0:n])\nfor (t = 0; t < 9; t++) {\n  #pragma omp target teams distribute parallel for\n  for (i = 0; i < n; i++) a[i]++;\n  #pragma omp target update from(a[0:n])\n  if (t) { a[0] = 1;\n  #pragma omp target update to(a[0:n])\n  continue; }\n  #pragma omp target teams distribute parallel for\n  for (i = 0; i < n; i++) a[i]++;\n}\n"
        );
        // A region whose kernel is not ported is not written: the kernel's loop would run
        // on the host with the device's copy of `a` the newer one.
        let bad = port(4, 1, "#pragma omp target teams distribute parallel for");
        let r = region(&[&k1, &bad], Vec::new());
        let out = port_file(
            Path::new("f.c"),
            original,
            &[&k1, &bad],
            &[&r],
            &[],
            &[],
            false,
        )
        .unwrap();
        assert!(out.regions.is_empty());
        assert!(
            out.failed_regions[0]
                .1
                .to_string()
                .contains("is not ported"),
            "{:?}",
            out.failed_regions
        );
        assert!(!out.ported.contains("target data"));
    }

    #[test]
    fn a_loop_that_cannot_be_edited_does_not_stop_the_others() {
        let bad = port(1, 1, "#pragma omp target teams distribute parallel for");
        let good = port(3, 1, "#pragma omp target teams distribute parallel for");
        let original = "FOR_EACH(i) ;\nint x;\nfor (i = 0; i < n; i++) ;\n";
        let out = port_file(
            Path::new("f.c"),
            original,
            &[&bad, &good],
            &[],
            &[],
            &[],
            false,
        )
        .unwrap();
        assert_eq!(out.loops, vec!["f.c:3:1".parse::<LoopRef>().unwrap()]);
        assert_eq!(out.failed.len(), 1);
        assert!(
            out.failed[0].1.to_string().contains("expected `for`"),
            "{:?}",
            out.failed
        );
        assert!(out
            .ported
            .contains("#pragma omp target teams distribute parallel for\nfor (i"));
    }
}
