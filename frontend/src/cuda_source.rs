//! CUDA C prepared for lang-c: the few rewrites of preprocessed `.cu` text that make its C
//! subset parse, and the refusal, per top-level declaration, of what is C++.
//!
//! The qualifiers (`__global__`, `__shared__`, ...) are already GNU attributes by now
//! (`fake_headers/cuda/cuda_runtime.h`). What remains is syntax no macro can reach:
//!
//! * `k<<<grid, block[, shared[, stream]]>>>(args)` becomes
//!   `(__warpwise_launch(k, grid, block[, shared[, stream]]), k(args))`: the launch's
//!   configuration reaches the IR as the arguments of a call ([`LAUNCH_FUNCTION`]), and the
//!   kernel's own call stays a call with its arguments.
//! * `dim3 g(a, b);` (a C++ constructor) becomes `dim3 g = __warpwise_dim3(a, b, 1, 1);`,
//!   what the header's `dim3(...)` macro makes of the expression form.
//! * `const ww_rows<T> A = {base, pitch};`, the rows of a variable-length array as the
//!   kernels `warpwise emit` writes hold them (C++ cannot declare `T (*A)[pitch]`), becomes
//!   that C declaration, `T (*const A)[pitch] = (T (*)[pitch])(base);`, so that `check`
//!   reads `A[i][j]` in the emitted kernel as the report read it in the loop.
//! * `extern "C"` is erased, and the braces of an `extern "C" { ... }` block with it.
//! * A struct, union or enum defined at file scope gets `typedef struct X X;` after it: C++
//!   names the type without the keyword (`Node *nodes`).
//!
//! Text is inserted, so offsets after an insertion move; the source map is built from the
//! text this leaves and aligns its tokens with the user's lines, as it does for macro
//! expansions, so columns stay right. Refused declarations are blanked with spaces
//! (newlines kept), so lines never move.
//!
//! A top-level declaration that uses C++ (a template, a class with member functions, a
//! reference parameter, `::`, `new`, ...) is refused alone: a function whose signature is C
//! keeps it as a prototype (its body is left out, so callers see a function of unknown
//! effects), anything else is blanked whole. What this scan misses, lang-c finds:
//! [`refuse_at`] refuses the declaration that holds a syntax error, and the parse is
//! tried again (`unit`).

use std::path::{Path, PathBuf};

use crate::ctokens::{lex, matching_close, Tok, TokKind};
use crate::cuda_reference::{
    reference_arguments, reference_function, reference_parameters, References,
};
use crate::cuda_template::{
    blank_tokens, prepended, template_head, template_use, TemplateHead, Templates,
};

/// The function a launch `k<<<grid, block>>>(...)` is rewritten to call, before the kernel:
/// its arguments are the kernel, then the launch's configuration as written.
pub const LAUNCH_FUNCTION: &str = "__warpwise_launch";

/// The function `dim3(x[, y[, z]])` stands for: `(x, y, z, ...)`, missing sizes 1.
pub const DIM3_FUNCTION: &str = "__warpwise_dim3";

/// A top-level declaration of a CUDA file left out of the analysis because it is not C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Byte offset in the prepared text of what made it C++ (or of its first token).
    pub at: usize,
    /// The name it declares, when it could be read.
    pub name: Option<String>,
    pub reason: String,
}

/// Whether `path` names CUDA source (`.cu`, `.cuh`), which `preprocess` reads as CUDA C.
pub fn is_cuda_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "cu" | "cuh"))
}

/// Words C++ reserves and C code of a `.cu` file therefore cannot use as names: each one is
/// a C++ construct. (`auto` and `inline` are C too.)
const CXX_KEYWORDS: &[&str] = &[
    "template",
    "typename",
    "class",
    "namespace",
    "using",
    "new",
    "delete",
    "operator",
    "public",
    "private",
    "protected",
    "virtual",
    "friend",
    "explicit",
    "mutable",
    "this",
    "nullptr",
    "throw",
    "try",
    "catch",
    "static_cast",
    "dynamic_cast",
    "reinterpret_cast",
    "const_cast",
    "constexpr",
    "decltype",
];

/// CUDA's C++ templates used without the `template` keyword (`texture<float, 1> tex;`).
const CXX_TEMPLATES: &[&str] = &["texture", "surface"];

/// One top-level declaration or definition: token indices, inclusive.
#[derive(Clone, Copy, Debug)]
struct Item {
    first: usize,
    last: usize,
    /// A function definition's body: its `{` and `}`.
    body: Option<(usize, usize)>,
}

/// One text edit: the bytes `start..end` replaced by `with`.
type Edit = (usize, usize, String);

/// What [`prepare`] refused, and the byte ranges of the new text to blank once the source
/// map has been built from it (so that diagnostics still show the refused text).
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    pub refused: Vec<Refusal>,
    pub blank: Vec<(usize, usize)>,
}

/// Prepares preprocessed CUDA text for lang-c (see the module documentation): the rewrites
/// are made, what is refused is returned with offsets in the new text, left to blank.
pub(crate) fn prepare(text: &mut String, system_dirs: &[PathBuf]) -> Prepared {
    erase_extern_c(text, system_dirs);
    let toks = lex(text, system_dirs);
    let items = segment(&toks, text);
    let templates = value_templates(&toks, text, &items);
    let references = reference_functions(&toks, text, &items);
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut edits: Vec<Edit> = Vec::new();
    let mut refused = Vec::new();
    for whole in items {
        if toks[whole.first].system {
            continue;
        }
        // A value template is read as the C function after its head, which takes the
        // template's parameters first.
        let (item, head_edits, head_refusal) =
            match template_head(&toks, text, whole.first, whole.last) {
                Some(Ok(head)) => match template_function(&toks, text, whole, &head) {
                    Some(head_edits) => (
                        Item {
                            first: head.close + 1,
                            ..whole
                        },
                        head_edits,
                        None,
                    ),
                    None => (
                        whole,
                        Vec::new(),
                        Some((
                            whole.first,
                            "it uses C++ (`template`): a template that is not a function"
                                .to_string(),
                        )),
                    ),
                },
                Some(Err(refusal)) => (whole, Vec::new(), Some(refusal)),
                None => (whole, Vec::new(), None),
            };
        let cxx = head_refusal.or_else(|| cxx_construct(&toks, text, item));
        if let Some((at, reason)) = cxx {
            let name = item_name(&toks, text, item);
            refused.push(Refusal {
                at: toks[at].start(),
                name: name.clone(),
                reason,
            });
            blank_item(&toks, text, whole, &mut blank, &mut edits);
            // A class that is refused is still a type others point to.
            if let Some(tag) = record_tag(&toks, text, whole) {
                let end = toks[whole.last].end();
                edits.push((end, end, format!(" typedef struct {tag} {tag};")));
            }
            continue;
        }
        if let Some((keyword, tag)) = defined_tag(&toks, text, item) {
            let end = toks[item.last].end();
            edits.push((end, end, format!(" typedef {keyword} {tag} {tag};")));
        }
        let mut body_edits = match parameter_list(&toks, text, item) {
            Some((open, close)) => reference_parameters(&toks, text, open, close)
                .map(|params| reference_function(&toks, text, &params, item.body))
                .unwrap_or_default(),
            None => Vec::new(),
        };
        if let Some((open, close)) = item.body {
            let known = Known {
                templates: &templates,
                references: &references,
            };
            if let Err((at, reason)) =
                body_rewrites(&toks, text, (open, close), known, &mut body_edits)
            {
                refused.push(Refusal {
                    at: toks[at].start(),
                    name: item_name(&toks, text, item),
                    reason,
                });
                blank_item(&toks, text, whole, &mut blank, &mut edits);
                continue;
            }
        }
        edits.extend(head_edits);
        edits.extend(body_edits);
    }
    edits.sort_by_key(|e| (e.0, e.1));
    for r in &mut refused {
        r.at = moved(r.at, &edits);
    }
    let blank = blank
        .into_iter()
        .map(|(start, end)| (moved(start, &edits), moved_end(end, &edits)))
        .collect();
    apply(text, &edits);
    Prepared { refused, blank }
}

/// Blanks the ranges [`prepare`] left (sorted or not).
pub(crate) fn blank_refused(text: &mut String, ranges: &[(usize, usize)]) {
    for &(start, end) in ranges {
        blank_range(text, start, end);
    }
}

/// Refuses the top-level declaration of user code that holds the byte `offset` (where lang-c
/// found a syntax error), blanking it as [`prepare`] blanks C++; `None` when the offset is
/// in no such declaration (a system header's, or between declarations).
pub(crate) fn refuse_at(
    text: &mut String,
    offset: usize,
    system_dirs: &[PathBuf],
    message: &str,
) -> Option<Refusal> {
    let toks = lex(text, system_dirs);
    let items = segment(&toks, text);
    let item = *items.iter().find(|i| {
        toks[i.first].start() <= offset && offset <= toks[i.last].end() && !toks[i.first].system
    })?;
    let at = toks[item.first..=item.last]
        .iter()
        .position(|t| t.start() >= offset)
        .map_or(item.first, |k| item.first + k);
    let name = item_name(&toks, text, item);
    let mut blank = Vec::new();
    let mut edits = Vec::new();
    match item.body {
        // The error is in the signature: nothing of it can stay.
        Some((open, _)) if offset < toks[open].start() => {
            blank.push((toks[item.first].start(), toks[item.last].end()));
        }
        _ => blank_item(&toks, text, item, &mut blank, &mut edits),
    }
    for &(start, end) in &blank {
        blank_range(text, start, end);
    }
    apply(text, &edits);
    Some(Refusal {
        at: toks[at].start(),
        name,
        reason: format!("lang-c cannot parse it ({message}); warpwise reads the C subset of CUDA"),
    })
}

/// Blanks `extern "C"` (and `extern "C++"`), and the braces of the block one opens.
fn erase_extern_c(text: &mut String, system_dirs: &[PathBuf]) {
    let toks = lex(text, system_dirs);
    let mut ranges = Vec::new();
    for k in 0..toks.len().saturating_sub(1) {
        let linkage = !toks[k].system
            && toks[k].is(text, "extern")
            && matches!(toks[k + 1].text(text), "\"C\"" | "\"C++\"");
        if !linkage {
            continue;
        }
        ranges.push((toks[k].start(), toks[k + 1].end()));
        if toks.get(k + 2).is_some_and(|t| t.is(text, "{")) {
            if let Some(close) = matching_close(&toks, text, k + 2) {
                ranges.push((toks[k + 2].start(), toks[k + 2].end()));
                ranges.push((toks[close].start(), toks[close].end()));
            }
        }
    }
    for (start, end) in ranges {
        blank_range(text, start, end);
    }
}

/// The top-level declarations and definitions of the text, in order. A declaration ends at
/// a `;` outside brackets; a definition at the `}` closing a body whose `{` follows a `)`
/// (a function) or a namespace's name.
fn segment(toks: &[Tok], text: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let first = k;
        let namespace = toks[k].is(text, "namespace");
        let mut depth = 0usize;
        let mut body = None;
        let mut last = toks.len() - 1;
        let mut j = k;
        while j < toks.len() {
            let t = &toks[j];
            if t.kind == TokKind::Punct {
                match t.text(text) {
                    "(" | "[" => depth += 1,
                    "{" => {
                        if depth == 0
                            && body.is_none()
                            && (namespace || j > first && toks[j - 1].is(text, ")"))
                        {
                            body = Some(j);
                        }
                        depth += 1;
                    }
                    ")" | "]" => depth = depth.saturating_sub(1),
                    "}" => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 && body.is_some() {
                            last = j;
                            break;
                        }
                    }
                    ";" if depth == 0 => {
                        last = j;
                        break;
                    }
                    _ => {}
                }
            }
            j += 1;
        }
        items.push(Item {
            first,
            last,
            body: body.map(|open| (open, last)),
        });
        k = last + 1;
    }
    items
}

/// The first C++ construct of a declaration: its token and what it is.
fn cxx_construct(toks: &[Tok], text: &str, item: Item) -> Option<(usize, String)> {
    let range = item.first..=item.last;
    for k in range.clone() {
        let t = &toks[k];
        let word = t.text(text);
        if t.kind == TokKind::Ident && CXX_KEYWORDS.contains(&word) {
            return Some((k, format!("it uses C++ (`{word}`)")));
        }
        let next = toks
            .get(k + 1)
            .filter(|n| k < item.last && n.start() == t.end());
        if t.kind == TokKind::Ident
            && CXX_TEMPLATES.contains(&word)
            && toks.get(k + 1).is_some_and(|n| n.is(text, "<"))
        {
            return Some((k, format!("it uses a C++ template (`{word}<...>`)")));
        }
        if word == ":" && next.is_some_and(|n| n.is(text, ":")) {
            return Some((k, "it uses C++ (the scope operator `::`)".into()));
        }
    }
    if let Some((open, close)) = item.body {
        // The parameter list: the parenthesis group just before the body.
        if let Some(params) = opening(toks, text, open - 1) {
            // References `reference_parameters` reads are rewritten (`cuda_reference`).
            let readable_references = reference_parameters(toks, text, params, open - 1).is_some();
            let mut depth = 0usize;
            for (k, t) in toks.iter().enumerate().take(open - 1).skip(params + 1) {
                match t.text(text) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    "&" if !readable_references => {
                        return Some((k, "it takes a C++ reference parameter (`&`)".into()))
                    }
                    "=" if depth == 0 => {
                        return Some((k, "it gives a parameter a C++ default argument".into()))
                    }
                    _ => {}
                }
            }
        }
        for k in open + 1..close {
            if is_reference_declaration(toks, text, k) {
                return Some((k, "it declares a C++ reference (`&`)".into()));
            }
        }
    } else if let Some(k) = member_function(toks, text, item) {
        return Some((k, "it defines a C++ member function".into()));
    }
    None
}

/// Whether the `&` at `k` declares a reference: `T &name =` or `T &name;` at the start of a
/// statement (a C expression statement `a & b = c` assigns to a non-lvalue).
fn is_reference_declaration(toks: &[Tok], text: &str, k: usize) -> bool {
    if k < 2 || !toks[k].is(text, "&") {
        return false;
    }
    let statement_start = matches!(toks[k - 2].text(text), ";" | "{" | "}");
    statement_start
        && toks[k - 1].kind == TokKind::Ident
        && toks.get(k + 1).is_some_and(|t| t.kind == TokKind::Ident)
        && toks
            .get(k + 2)
            .is_some_and(|t| matches!(t.text(text), "=" | ";"))
}

/// A `)` followed by `{` inside a declaration that is not a function definition: a function
/// defined inside a struct.
fn member_function(toks: &[Tok], text: &str, item: Item) -> Option<usize> {
    (item.first + 1..=item.last).find(|&k| toks[k].is(text, "{") && toks[k - 1].is(text, ")"))
}

/// The index of the `(` that the `)` at `close` closes.
fn opening(toks: &[Tok], text: &str, close: usize) -> Option<usize> {
    if !toks.get(close)?.is(text, ")") {
        return None;
    }
    let mut depth = 0usize;
    for k in (0..=close).rev() {
        match toks[k].text(text) {
            ")" | "]" | "}" => depth += 1,
            "(" | "[" | "{" => {
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

/// The name a declaration declares: a definition's function name, else the last identifier
/// before its first `(`, `=`, `[`, `{`, `;` or `,`.
fn item_name(toks: &[Tok], text: &str, item: Item) -> Option<String> {
    if let Some((open, _)) = item.body {
        if let Some(params) = opening(toks, text, open.checked_sub(1)?) {
            let name = params.checked_sub(1).map(|k| &toks[k])?;
            return (name.kind == TokKind::Ident).then(|| name.text(text).to_string());
        }
    }
    let mut name = None;
    for t in &toks[item.first..=item.last] {
        if matches!(t.text(text), "(" | "=" | "[" | "{" | ";" | ",") {
            break;
        }
        if t.kind == TokKind::Ident && !CXX_KEYWORDS.contains(&t.text(text)) {
            name = Some(t.text(text).to_string());
        }
    }
    name
}

/// `(keyword, tag)` when the declaration defines or declares a struct, union or enum tag at
/// file scope without a typedef (`struct Node { ... };`, `struct Node;`).
fn defined_tag<'t>(toks: &[Tok], text: &'t str, item: Item) -> Option<(&'t str, &'t str)> {
    if item.body.is_some() {
        return None;
    }
    let words = &toks[item.first..=item.last];
    if words.iter().any(|t| t.is(text, "typedef")) {
        return None;
    }
    let k = words
        .iter()
        .position(|t| matches!(t.text(text), "struct" | "union" | "enum"))?;
    // Only specifiers before the keyword (`static struct ...`), no declarator.
    if words[..k].iter().any(|t| t.kind != TokKind::Ident) {
        return None;
    }
    let tag = words.get(k + 1).filter(|t| t.kind == TokKind::Ident)?;
    let after = words.get(k + 2)?;
    if !matches!(after.text(text), "{" | ";") {
        return None;
    }
    Some((words[k].text(text), tag.text(text)))
}

/// The tag of a refused `class X ...` or `struct X ...`, so pointers to it still parse.
fn record_tag<'t>(toks: &[Tok], text: &'t str, item: Item) -> Option<&'t str> {
    if item.body.is_some() {
        return None;
    }
    let first = &toks[item.first];
    if !matches!(first.text(text), "class" | "struct") {
        return None;
    }
    let tag = toks
        .get(item.first + 1)
        .filter(|t| t.kind == TokKind::Ident)?;
    let after = toks.get(item.first + 2)?;
    matches!(after.text(text), "{" | ";" | ":").then(|| tag.text(text))
}

/// Leaves a refused declaration out: a function definition whose signature is C keeps it
/// as a prototype (the body becomes `;` and spaces), anything else is blanked whole.
fn blank_item(
    toks: &[Tok],
    text: &str,
    item: Item,
    blank: &mut Vec<(usize, usize)>,
    edits: &mut Vec<Edit>,
) {
    let start = toks[item.first].start();
    let end = toks[item.last].end();
    if let Some((open, close)) = item.body {
        let signature = Item {
            first: item.first,
            last: open - 1,
            body: None,
        };
        let plain = open > item.first
            && cxx_construct(toks, text, signature).is_none()
            && cxx_parameters(toks, text, open).is_none();
        if plain {
            let (body_start, body_end) = (toks[open].start(), toks[close].end());
            blank.push((body_start + 1, body_end));
            edits.push((body_start, body_start + 1, ";".into()));
            return;
        }
    }
    blank.push((start, end));
}

/// A C++ parameter (reference, default argument) in the list before the body at `open`.
fn cxx_parameters(toks: &[Tok], text: &str, open: usize) -> Option<usize> {
    let params = opening(toks, text, open.checked_sub(1)?)?;
    (params + 1..open - 1).find(|&k| matches!(toks[k].text(text), "&" | "="))
}

/// The rewrites inside one function body: `dim3` constructors and kernel launches; the
/// token and reason of a construct it cannot rewrite.
fn body_rewrites(
    toks: &[Tok],
    text: &str,
    (open, close): (usize, usize),
    known: Known,
    edits: &mut Vec<Edit>,
) -> Result<(), (usize, String)> {
    let templates = known.templates;
    // The arguments of a call to a function that takes references: `&(x)` for a pointer.
    let pass_references = |name: usize, paren: usize, edits: &mut Vec<Edit>| {
        let callee = &toks[name];
        let member = toks[name - 1].is(text, ".")
            || (toks[name - 1].is(text, ">") && toks[name - 2].is(text, "-"));
        if let Some(passing) = known.references.get(callee.text(text)).filter(|_| !member) {
            reference_arguments(toks, text, paren, passing, edits);
        }
    };
    let mut k = open + 1;
    while k < close {
        if toks[k].kind == TokKind::Ident && toks.get(k + 1).is_some_and(|t| t.is(text, "(")) {
            pass_references(k, k + 1, edits);
        }
        if toks[k].is(text, "dim3") && !matches!(toks[k - 1].text(text), "(" | "," | "." | "-") {
            k = dim3_declarators(toks, text, k + 1, close, edits);
            continue;
        }
        if let Some((angle, args)) = template_use(toks, text, k, close, templates) {
            // `f<args>(...)` calls `f(args, ...)`; `k<args><<<...>>>(...)` launches it so.
            edits.extend(blank_tokens(toks, k + 1, angle));
            if chevrons(toks, text, angle + 1, "<") {
                k = launch(toks, text, (k, angle + 1), close, Some(&args), edits)?;
                continue;
            }
            if !toks.get(angle + 1).is_some_and(|t| t.is(text, "(")) {
                return Err((
                    k,
                    "a value template used other than by a call or launch".into(),
                ));
            }
            let empty = toks.get(angle + 2).is_some_and(|t| t.is(text, ")"));
            let at = toks[angle + 1].end();
            edits.push((at, at, prepended(&args, empty)));
            pass_references(k, angle + 1, edits);
            k = angle + 2;
            continue;
        }
        if chevrons(toks, text, k, "<") {
            k = launch(toks, text, (k - 1, k), close, None, edits)?;
            continue;
        }
        if toks[k].is(text, ROWS_TYPE) {
            if let Some(next) = rows_declaration(toks, text, k, close, edits) {
                k = next;
                continue;
            }
        }
        if is_functional_cast(toks, text, k) {
            // `float(x)` is C's `(float)(x)`.
            edits.push((toks[k].start(), toks[k].start(), "(".into()));
            edits.push((toks[k].end(), toks[k].end(), ")".into()));
        }
        k += 1;
    }
    Ok(())
}

/// The template `warpwise emit` declares the rows of a variable-length array with: a base
/// pointer and a pitch in elements, indexed `A[i][j]`.
const ROWS_TYPE: &str = "ww_rows";

/// `[const] ww_rows<T> NAME = {BASE, PITCH};` at `k` (the `ww_rows`), rewritten to the C
/// declaration it stands for, `T (*const NAME)[PITCH] = (T (*)[PITCH])(BASE);`; returns the
/// index after the `;`, or `None` (left to the parser) when it is not of that form.
fn rows_declaration(
    toks: &[Tok],
    text: &str,
    k: usize,
    close: usize,
    edits: &mut Vec<Edit>,
) -> Option<usize> {
    let is = |i: usize, what: &str| i < close && toks[i].is(text, what);
    let find = |from: usize, what: &str| (from..close).find(|&i| toks[i].is(text, what));
    if !is(k + 1, "<") {
        return None;
    }
    let gt = find(k + 2, ">")?;
    let name = gt + 1;
    if toks.get(name)?.kind != TokKind::Ident || !is(name + 1, "=") || !is(name + 2, "{") {
        return None;
    }
    let brace_close = matching_close(toks, text, name + 2).filter(|&c| c < close)?;
    let comma = find(name + 3, ",").filter(|&c| c < brace_close)?;
    if !is(brace_close + 1, ";") || comma == name + 3 || comma + 1 == brace_close {
        return None;
    }
    let span = |a: usize, b: usize| &text[toks[a].start()..toks[b].end()];
    let elem = span(k + 2, gt - 1);
    let base = span(name + 3, comma - 1);
    let pitch = span(comma + 1, brace_close - 1);
    let ident = toks[name].text(text);
    // The `const` of the object: it is the pointer that is constant, not the elements.
    let start = if k > 0 && toks[k - 1].is(text, "const") {
        toks[k - 1].start()
    } else {
        toks[k].start()
    };
    edits.push((
        start,
        toks[brace_close + 1].start(),
        format!("{elem} (*const {ident})[{pitch}] = ({elem} (*)[{pitch}])({base})"),
    ));
    Some(brace_close + 2)
}

/// One-word type names that C++ lets convert as a function does (`float(x)`).
const CAST_TYPES: &[&str] = &[
    "float", "double", "int", "unsigned", "signed", "char", "short", "long", "bool", "size_t",
];

/// Whether the type name at `k` is a C++ functional cast: followed by a parenthesis that
/// does not open a declarator (`float (*f)(int)`), and not the last word of a longer type
/// (`unsigned int(x)` is left to the parser, which refuses its function).
fn is_functional_cast(toks: &[Tok], text: &str, k: usize) -> bool {
    let named =
        |i: usize, words: &[&str]| toks.get(i).is_some_and(|t| words.contains(&t.text(text)));
    named(k, CAST_TYPES)
        && toks.get(k + 1).is_some_and(|t| t.is(text, "("))
        && !named(k + 2, &["*", ")", "^", "&"])
        && !named(
            k.wrapping_sub(1),
            &[
                "float", "double", "int", "unsigned", "signed", "char", "short", "long", "struct",
                "union", "enum", "const", "volatile", "sizeof",
            ],
        )
}

/// Whether three `c` tokens touching each other start at `k` (`<<<`, `>>>`).
fn chevrons(toks: &[Tok], text: &str, k: usize, c: &str) -> bool {
    k + 2 < toks.len()
        && toks[k].is(text, c)
        && toks[k + 1].is(text, c)
        && toks[k + 2].is(text, c)
        && toks[k].end() == toks[k + 1].start()
        && toks[k + 1].end() == toks[k + 2].start()
}

/// `NAME(args)` declarators after `dim3` at `k`, rewritten to `NAME = __warpwise_dim3(args,
/// 1, 1)`; returns where to go on.
fn dim3_declarators(
    toks: &[Tok],
    text: &str,
    mut k: usize,
    close: usize,
    edits: &mut Vec<Edit>,
) -> usize {
    while k + 1 < close && toks[k].kind == TokKind::Ident && toks[k + 1].is(text, "(") {
        let Some(end) = matching_close(toks, text, k + 1).filter(|&e| e < close) else {
            return k + 1;
        };
        if end == k + 2 {
            // `dim3 g();` declares a function in C++ as in C.
            return end + 1;
        }
        let paren = toks[k + 1].start();
        edits.push((paren, paren, format!(" = {DIM3_FUNCTION}")));
        let at = toks[end].start();
        edits.push((at, at, ", 1, 1".into()));
        if toks.get(end + 1).is_some_and(|t| t.is(text, ",")) {
            k = end + 2;
        } else {
            return end + 1;
        }
    }
    k
}

/// The launch whose kernel is named at `name` and whose `<<<` is at `k`: edits that make
/// it a call of [`LAUNCH_FUNCTION`] followed by the kernel's call, with a value template's
/// arguments `template_args` first; returns the index after the kernel's arguments.
fn launch(
    toks: &[Tok],
    text: &str,
    (name, k): (usize, usize),
    close: usize,
    template_args: Option<&str>,
    edits: &mut Vec<Edit>,
) -> Result<usize, (usize, String)> {
    let unreadable = |reason: &str| (k, format!("a kernel launch warpwise cannot read: {reason}"));
    let name = &toks[name];
    if name.kind != TokKind::Ident {
        let why = if name.is(text, ">") {
            "a template kernel whose parameters are not all values"
        } else {
            "the kernel is not named by an identifier"
        };
        return Err(unreadable(why));
    }
    if template_args.is_none() && matches!(toks[k - 2].text(text), "." | ">" | ":") {
        return Err(unreadable("the kernel is not named by an identifier"));
    }
    // The closing `>>>`: the first outside brackets.
    let mut depth = 0usize;
    let mut end = None;
    let mut j = k + 3;
    while j < close {
        match toks[j].text(text) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            ">" if depth == 0 && chevrons(toks, text, j, ">") => {
                end = Some(j);
                break;
            }
            _ => {}
        }
        j += 1;
    }
    let end = end.ok_or_else(|| unreadable("no `>>>`"))?;
    let args = end + 3;
    if !toks.get(args).is_some_and(|t| t.is(text, "(")) {
        return Err(unreadable("no arguments after `>>>`"));
    }
    let args_close = matching_close(toks, text, args)
        .filter(|&c| c < close)
        .ok_or_else(|| unreadable("its arguments are not closed"))?;
    let kernel = name.text(text);
    edits.push((name.start(), name.start(), format!("({LAUNCH_FUNCTION}(")));
    edits.push((toks[k].start(), toks[k + 2].end(), ", ".into()));
    edits.push((
        toks[end].start(),
        toks[end + 2].end(),
        format!("), {kernel}"),
    ));
    if let Some(first) = template_args {
        let at = toks[args].end();
        edits.push((at, at, prepended(first, args_close == args + 1)));
    }
    let after = toks[args_close].end();
    edits.push((after, after, ")".into()));
    Ok(args_close + 1)
}

/// What the rewrites of a body know of the file's other declarations.
#[derive(Clone, Copy)]
struct Known<'a> {
    templates: &'a Templates,
    references: &'a References,
}

/// The parentheses of a function declaration's parameter list (a definition's, or a
/// prototype's ending the declaration).
fn parameter_list(toks: &[Tok], text: &str, item: Item) -> Option<(usize, usize)> {
    let close = match item.body {
        Some((open, _)) => open.checked_sub(1)?,
        None if toks[item.last].is(text, ";") => item.last.checked_sub(1)?,
        None => return None,
    };
    let open = opening(toks, text, close)?;
    (open > item.first && toks[open - 1].kind == TokKind::Ident).then_some((open, close))
}

/// The functions among `items` that take references, by name (the C part of a value
/// template's declaration included).
fn reference_functions(toks: &[Tok], text: &str, items: &[Item]) -> References {
    let mut out = References::new();
    // A system header's declarations are not rewritten, so calls to them are not either.
    for &item in items.iter().filter(|i| !toks[i.first].system) {
        let item = match template_head(toks, text, item.first, item.last) {
            Some(Ok(head)) => Item {
                first: head.close + 1,
                ..item
            },
            Some(Err(_)) => continue,
            None => item,
        };
        let Some((open, close)) = parameter_list(toks, text, item) else {
            continue;
        };
        if let Some(params) = reference_parameters(toks, text, open, close) {
            let name = toks[open - 1].text(text).to_string();
            out.insert(name, params.iter().map(|p| p.passing).collect());
        }
    }
    out
}

/// The value templates among `items`: the functions whose template heads hold only values.
fn value_templates(toks: &[Tok], text: &str, items: &[Item]) -> Templates {
    let mut out = Templates::new();
    for &item in items.iter().filter(|i| !toks[i.first].system) {
        let Some(Ok(head)) = template_head(toks, text, item.first, item.last) else {
            continue;
        };
        let c_part = Item {
            first: head.close + 1,
            ..item
        };
        if let Some(name) = item_name(toks, text, c_part) {
            out.insert(name, head.params.len());
        }
    }
    out
}

/// The edits that make the value template `item` the C function after its head: the head
/// erased, its parameters put first in the function's parameter list; `None` when the
/// declaration is not a function.
fn template_function(
    toks: &[Tok],
    text: &str,
    item: Item,
    head: &TemplateHead,
) -> Option<Vec<Edit>> {
    let c_part = Item {
        first: head.close + 1,
        ..item
    };
    let (params_open, params_close) = parameter_list(toks, text, c_part)?;
    let first = head.params.join(", ");
    let only_void = params_close == params_open + 2 && toks[params_open + 1].is(text, "void");
    // The head's tokens become spaces: its lines (and any line marker among them) stay.
    let mut edits = blank_tokens(toks, head.keyword, head.close);
    if only_void {
        let void = &toks[params_open + 1];
        edits.push((void.start(), void.end(), first));
    } else {
        let at = toks[params_open].end();
        edits.push((at, at, prepended(&first, params_close == params_open + 1)));
    }
    Some(edits)
}

/// Spaces over `start..end`, newlines kept, byte for byte (a multi-byte character in a
/// literal keeps its length).
fn blank_range(text: &mut String, start: usize, end: usize) {
    let spaces: String = text.as_bytes()[start..end]
        .iter()
        .map(|&b| if b == b'\n' { '\n' } else { ' ' })
        .collect();
    text.replace_range(start..end, &spaces);
}

/// Applies sorted, non-overlapping edits.
fn apply(text: &mut String, edits: &[Edit]) {
    if edits.is_empty() {
        return;
    }
    let mut out = String::with_capacity(text.len() + edits.len() * 24);
    let mut from = 0;
    for (start, end, with) in edits {
        if *start < from {
            continue;
        }
        out.push_str(&text[from..*start]);
        out.push_str(with);
        from = *end;
    }
    out.push_str(&text[from..]);
    *text = out;
}

/// Where the byte at `offset` of the text before `edits` lands after them: every edit that
/// ends at or before it moves it (an insertion at the offset itself goes before it).
fn moved(offset: usize, edits: &[Edit]) -> usize {
    let mut out = offset as isize;
    for (start, end, with) in edits {
        if *end <= offset {
            out += with.len() as isize - (end - start) as isize;
        }
    }
    out.max(0) as usize
}

/// Where the end of a range ending at `offset` lands: like [`moved`], but an insertion at
/// the offset itself stays after it.
fn moved_end(offset: usize, edits: &[Edit]) -> usize {
    let at_offset: usize = edits
        .iter()
        .filter(|(start, end, _)| start == end && *start == offset)
        .map(|(_, _, with)| with.len())
        .sum();
    moved(offset, edits) - at_offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(src: &str) -> (String, Vec<Refusal>) {
        let mut text = src.to_string();
        let prepared = prepare(&mut text, &[]);
        blank_refused(&mut text, &prepared.blank);
        (text, prepared.refused)
    }

    #[test]
    fn a_launch_becomes_two_calls() {
        let (text, refused) = prepared("void h(float *a) { k<<<n / 256, 256>>>(a, n); }");
        assert!(refused.is_empty());
        assert_eq!(
            text,
            "void h(float *a) { (__warpwise_launch(k, n / 256, 256), k(a, n)); }"
        );
    }

    #[test]
    fn a_launch_over_lines_keeps_its_lines() {
        let src = "void h() {\n  k<<<g,\n    b, 0>>>(x,\n y);\n}";
        let (text, _) = prepared(src);
        assert_eq!(text.lines().count(), src.lines().count());
        assert!(
            text.contains("(__warpwise_launch(k, g,\n    b, 0), k(x,\n y));"),
            "{text}"
        );
    }

    #[test]
    fn emitted_rows_become_a_pointer_to_rows() {
        let (text, refused) = prepared(
            "void k(double *ww_A_rows, long long ww_A_pitch) {\n    \
             const ww_rows<double> A = {ww_A_rows, ww_A_pitch};\n    A[1][2] = 0;\n}",
        );
        assert!(refused.is_empty(), "{refused:?}");
        assert!(
            text.contains(
                "double (*const A)[ww_A_pitch] = (double (*)[ww_A_pitch])(ww_A_rows);\n    A[1][2]"
            ),
            "{text}"
        );
    }

    #[test]
    fn dim3_constructors_become_initializers() {
        let (text, _) = prepared("void h() { dim3 g(n / 16, 2), b(16); dim3 c; }");
        assert_eq!(
            text,
            "void h() { dim3 g = __warpwise_dim3(n / 16, 2, 1, 1), b = __warpwise_dim3(16, 1, 1); dim3 c; }"
        );
    }

    #[test]
    fn functional_casts_become_casts() {
        let (text, refused) = prepared(
            "void h(float *a) { a[0] = float(1.0 / 3); void (*f)(int); float (*g)(int); }",
        );
        assert!(refused.is_empty());
        assert_eq!(
            text,
            "void h(float *a) { a[0] = (float)(1.0 / 3); void (*f)(int); float (*g)(int); }"
        );
    }

    #[test]
    fn tags_become_type_names() {
        let (text, _) = prepared("struct Node { int a; };\ntypedef struct P { int b; } P;\n");
        assert_eq!(
            text,
            "struct Node { int a; }; typedef struct Node Node;\ntypedef struct P { int b; } P;\n"
        );
    }

    #[test]
    fn extern_c_is_erased() {
        let (text, _) = prepared("extern \"C\" {\nint f(int);\n}\nextern \"C\" int g;");
        assert_eq!(
            text,
            format!(
                "{}\nint f(int);\n \n{}int g;",
                " ".repeat(12),
                " ".repeat(11)
            )
        );
    }

    #[test]
    fn cxx_is_refused_one_declaration_at_a_time() {
        let src = "template <class T> void t(T *a) { a[0] = 0; }\n\
                   void ref(int x = 0) { x = 1; }\n\
                   void body(int *x) { std::sort(x, x); }\n\
                   void c(int *x) { x[0] = 1; }\n";
        let (text, refused) = prepared(src);
        let names: Vec<_> = refused.iter().map(|r| r.name.as_deref()).collect();
        assert_eq!(names, [Some("t"), Some("ref"), Some("body")]);
        assert!(refused[0].reason.contains("template"), "{refused:?}");
        assert!(
            refused[1].reason.contains("default argument"),
            "{refused:?}"
        );
        assert!(refused[2].reason.contains("::"), "{refused:?}");
        // The C signature stays as a prototype; the C function stays whole.
        assert!(text.contains("void body(int *x) ;"), "{text}");
        assert!(text.contains("void c(int *x) { x[0] = 1; }"), "{text}");
        assert!(!text.contains("template"), "{text}");
        assert_eq!(text.lines().count(), src.lines().count());
        // Offsets point at the construct.
        assert_eq!(&text[refused[1].at..refused[1].at + 1], " ");
    }

    #[test]
    fn refusal_offsets_follow_insertions() {
        let src =
            "struct A { int a; };\nvoid c(int *x) { k<<<1, 2>>>(x); }\nvoid d() { std::f(); }";
        let (text, refused) = prepared(src);
        assert_eq!(refused.len(), 1);
        // At the `::`, which the insertions on the lines before moved.
        let line_start = text.rfind("void d").unwrap();
        assert_eq!(refused[0].at, line_start + "void d() { std".len());
    }

    #[test]
    fn a_refused_class_stays_a_type() {
        let (text, refused) = prepared("class V { int f() { return 1; } };\nvoid g(V *v) {}\n");
        assert_eq!(refused.len(), 1);
        assert!(
            text.ends_with("  typedef struct V V;\nvoid g(V *v) {}\n"),
            "{text:?}"
        );
        assert!(!text.contains("class"), "{text:?}");
    }

    #[test]
    fn a_template_launch_is_refused() {
        let (_, refused) = prepared("void h() { k<float><<<1, 2>>>(x); }");
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].reason.contains("template"), "{refused:?}");
    }

    /// Whether `text` holds `what`, spaces aside (blanked tokens leave runs of them).
    fn has(text: &str, what: &str) -> bool {
        text.replace(' ', "").contains(&what.replace(' ', ""))
    }

    #[test]
    fn a_value_template_takes_its_parameters_first() {
        let src = "template <bool sum, int n> __device__ void f(int *a) { a[n] = sum; }
                   template <int n> __device__ void g(void);
                   template <bool sum> __global__ void k(int *a) { f<sum, 4>(a); g<(2 > 1)>(); }
                   void h(int *a) { k<true><<<1, 32>>>(a); }
";
        let (text, refused) = prepared(src);
        assert!(refused.is_empty(), "{refused:?}");
        assert!(!text.contains("template"), "{text}");
        assert!(
            has(
                &text,
                "__device__ void f(bool sum, int n, int *a) { a[n] = sum; }"
            ),
            "{text}"
        );
        assert!(has(&text, "__device__ void g(int n);"), "{text}");
        assert!(has(&text, "{ f(sum, 4, a); g((2 > 1)); }"), "{text}");
        assert!(
            has(&text, "(__warpwise_launch(k, 1, 32), k(true, a))"),
            "{text}"
        );
        assert_eq!(text.lines().count(), src.lines().count());
    }

    #[test]
    fn reference_parameters_become_pointers_or_copies() {
        let src = "__device__ void load(const float3 &v, int &ai, int *s) { ai = s[ai] + v.x; }\n\
                   template <bool b> __device__ void pick(int &x);\n\
                   __global__ void k(int *s, float3 v) { int a = 0, c[2]; load(v, a, s); \
                   load(v, c[s[0]], s); pick<true>(a); }\n";
        let (text, refused) = prepared(src);
        assert!(refused.is_empty(), "{refused:?}");
        assert!(
            has(
                &text,
                "__device__ void load(const float3 v, int *ai, int *s) { (*ai) = s[(*ai)] + v.x; }"
            ),
            "{text}"
        );
        assert!(
            has(&text, "__device__ void pick(bool b, int *x);"),
            "{text}"
        );
        assert!(has(&text, "load(v, &(a), s);"), "{text}");
        assert!(has(&text, "load(v, &(c[s[0]]), s);"), "{text}");
        assert!(has(&text, "pick(true, &(a));"), "{text}");
    }

    #[test]
    fn a_reference_not_read_as_a_parameter_stays_refused() {
        let (_, refused) =
            prepared("void f(int &&r) { r = 1; }\nvoid g(int (&a)[2]) { a[0] = 1; }\n");
        let names: Vec<_> = refused.iter().map(|r| r.name.as_deref()).collect();
        assert_eq!(names, [Some("f"), Some("g")], "{refused:?}");
        assert!(refused[0].reason.contains("reference"), "{refused:?}");
    }

    #[test]
    fn a_template_over_types_stays_refused_with_its_reason() {
        let src = "template <typename T, int n> __global__ void k(T *a) { a[n] = 0; }
                   template <int n> struct S { int a[n]; };
                   void c(int *x) { x[0] = 1; }
";
        let (text, refused) = prepared(src);
        let reasons: Vec<&str> = refused.iter().map(|r| r.reason.as_str()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(
            reasons[0].contains("`typename T` is not a value parameter"),
            "{reasons:?}"
        );
        assert!(reasons[1].contains("not a function"), "{reasons:?}");
        assert!(!text.contains("template"), "{text}");
        assert!(text.contains("void c(int *x) { x[0] = 1; }"), "{text}");
    }

    #[test]
    fn a_syntax_error_refuses_its_declaration() {
        let mut text = "int a;\nvoid f() { int x = float(3); }\nvoid g() {}\n".to_string();
        let at = text.find("float").unwrap();
        let r = refuse_at(&mut text, at, &[], "expected `)`").unwrap();
        assert_eq!(r.name.as_deref(), Some("f"));
        assert_eq!(r.at, at);
        assert_eq!(
            text,
            format!("int a;\nvoid f() ;{}\nvoid g() {{}}\n", " ".repeat(20))
        );
    }
}
