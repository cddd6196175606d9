//! Leaves out of lang-c's input the header declarations the file never needs.
//!
//! A file including `<stdio.h>`, `<stdlib.h>` and `<math.h>` hands lang-c about a
//! thousand declarations, of which it uses a dozen, and a project's own headers add
//! hundreds of prototypes (hypre's `_hypre_utilities.h`); parsing and lowering the rest
//! was most of the time spent on small files. A top-level declaration of a header is kept
//! when some kept text names what it declares, starting from the main file, the external
//! function definitions of the project's headers and the `static` ones of the file's own
//! header (lowered, their loops analysed); the others are blanked (newlines kept, so
//! offsets and lines stay put). A `static` function of another header is compiled only
//! where it is called (hypre's `_hypre_utilities.h` defines 32 loops that most files never
//! call), and function definitions of system headers are never lowered, so they go too
//! when nothing names them.
//!
//! What a declaration declares is over-approximated: every identifier of it except C's
//! keywords, the typedef names declared before it (they are what it uses, unless they
//! follow `struct`, `union` or `enum`, a tag of its own), attribute contents and the
//! parameter names of its prototypes. Keeping too much costs time only; keeping too little
//! would change the analysis, so every doubt keeps. What a kept declaration names is
//! every identifier in it except those parameter names and attribute names (`__nonnull__`).
//! Function bodies of system headers (never lowered) name, but declare only their
//! function.

use crate::ctokens::{lex, Tok, TokKind};
use crate::source_map::HeaderKind;
use std::collections::HashMap;

/// C99/C11 keywords and GCC's alternate spellings of them: never declared by a header. A
/// `(` after one (`sizeof`, `__typeof__`, `_Static_assert`, `if`) never opens a parameter
/// list.
const KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "__alignof",
    "__alignof__",
    "__asm",
    "__asm__",
    "__attribute",
    "__attribute__",
    "__const",
    "__const__",
    "__extension__",
    "__inline",
    "__inline__",
    "__restrict",
    "__restrict__",
    "__signed",
    "__signed__",
    "__thread",
    "__typeof",
    "__typeof__",
    "__volatile",
    "__volatile__",
    "asm",
    "typeof",
];

/// Words whose parenthesized argument is an attribute or assembler text, not a declarator.
const ATTRIBUTE_WORDS: &[&str] = &["__attribute__", "__attribute", "__asm__", "__asm", "asm"];

/// `text` with the top-level declarations of headers that nothing kept names blanked;
/// `headers` holds the byte ranges of headers, sorted, each with its kind.
/// `tokens`, when given, are those of `text` (the system flag aside), else it is lexed.
pub(crate) fn without_unused_header_declarations(
    text: &str,
    headers: &[(usize, usize, HeaderKind)],
    tokens: Option<Vec<Tok>>,
) -> String {
    if headers.is_empty() {
        return text.to_string();
    }
    let toks = tokens.unwrap_or_else(|| lex(text, &[]));
    debug_assert!(
        crate::ctokens::same_tokens(&toks, &lex(text, &[])),
        "the tokens handed to the pruning are those of its text"
    );
    let ranges = |keep: &dyn Fn(HeaderKind) -> bool| -> Vec<bool> {
        let chosen: Vec<(usize, usize)> = headers
            .iter()
            .filter(|h| keep(h.2))
            .map(|&(s, e, _)| (s, e))
            .collect();
        within(&toks, &chosen)
    };
    let in_header = ranges(&|_| true);
    let in_system = ranges(&|kind| kind == HeaderKind::System);
    let in_others = ranges(&|kind| kind != HeaderKind::Own);
    let chunks = chunks(&toks, text);
    let mut names = Names::default();
    let mut typedefs: Vec<bool> = Vec::new();
    let mut facts: Vec<ChunkFacts> = Vec::with_capacity(chunks.len());
    for chunk in &chunks {
        // An external definition in a project header is compiled into this file: it is
        // lowered and analysed, so it stays. A `static` one nothing here calls is not
        // compiled (gcc drops it) and its loops belong to the files that call it, unless
        // it is in the file's own header (`grid.h` for `grid.c`).
        let inside = match chunk.body {
            Some(body) if is_static(&toks, text, chunk.first, body) => &in_others,
            Some(_) => &in_system,
            None => &in_header,
        };
        let droppable = chunk.well_formed && (chunk.first..=chunk.last).all(|k| inside[k]);
        let f = chunk_facts(&toks, text, chunk, droppable, &mut names, &mut typedefs);
        facts.push(f);
    }
    let kept = keep(&facts, names.count());
    let mut out = text.as_bytes().to_vec();
    let mut blanked = false;
    for (chunk, keep) in chunks.iter().zip(&kept) {
        if *keep {
            continue;
        }
        for byte in &mut out[toks[chunk.first].start()..toks[chunk.last].end()] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        blanked = true;
    }
    if !blanked {
        return text.to_string();
    }
    // Whole tokens became spaces: the text is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Whether the definition whose body opens at token `body` has storage class `static`:
/// the word outside every bracket before the body (a `static` in an array parameter,
/// `a[static 4]`, is inside one).
fn is_static(toks: &[Tok], text: &str, first: usize, body: usize) -> bool {
    let mut depth = 0usize;
    for t in &toks[first..body] {
        match t.kind {
            TokKind::Punct if t.is(text, "(") || t.is(text, "[") => depth += 1,
            TokKind::Punct if t.is(text, ")") || t.is(text, "]") => depth = depth.saturating_sub(1),
            TokKind::Ident if depth == 0 && t.is(text, "static") => return true,
            _ => {}
        }
    }
    false
}

/// Whether each token lies in one of `ranges` (sorted, disjoint).
fn within(toks: &[Tok], ranges: &[(usize, usize)]) -> Vec<bool> {
    let mut out = Vec::with_capacity(toks.len());
    let mut r = 0;
    for t in toks {
        while r < ranges.len() && ranges[r].1 <= t.start() {
            r += 1;
        }
        out.push(r < ranges.len() && ranges[r].0 <= t.start() && t.end() <= ranges[r].1);
    }
    out
}

/// One top-level declaration or function definition: tokens `first..=last`.
#[derive(Debug)]
struct Chunk {
    first: usize,
    last: usize,
    /// Ends with a `;` or a function body at depth 0, brackets balanced: a piece that can
    /// go without breaking its neighbours.
    well_formed: bool,
    /// The token index of the function body's `{`, if it is a definition.
    body: Option<usize>,
}

fn chunks(toks: &[Tok], text: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut first = 0;
    let mut depth = 0usize;
    let mut balanced = true;
    let mut body: Option<usize> = None;
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        let mut end = false;
        if t.kind == TokKind::Punct {
            match t.text(text) {
                "(" | "[" => depth += 1,
                "{" => {
                    if depth == 0 && k > first && toks[k - 1].is(text, ")") {
                        body = Some(k);
                    }
                    depth += 1;
                }
                ")" | "]" => {
                    if depth == 0 {
                        balanced = false;
                    }
                    depth = depth.saturating_sub(1);
                }
                "}" => {
                    if depth == 0 {
                        balanced = false;
                        end = true;
                    }
                    depth = depth.saturating_sub(1);
                    // A body ends the definition; a `;` after the braces (a compound
                    // literal's initializer) belongs to it.
                    let semicolon = toks.get(k + 1).is_some_and(|n| n.is(text, ";"));
                    end |= depth == 0 && body.is_some() && !semicolon;
                }
                ";" => end = depth == 0,
                _ => {}
            }
        }
        if end {
            out.push(Chunk {
                first,
                last: k,
                well_formed: balanced,
                body,
            });
            first = k + 1;
            balanced = true;
            body = None;
        }
        k += 1;
    }
    if first < toks.len() {
        out.push(Chunk {
            first,
            last: toks.len() - 1,
            well_formed: false,
            body: None,
        });
    }
    out
}

/// Identifiers interned as small numbers, the [`KEYWORDS`] first: an id below their count
/// is a keyword, so one lookup both interns a word and tells whether it is one.
struct Names<'t> {
    ids: HashMap<&'t str, u32>,
}

impl Default for Names<'_> {
    fn default() -> Self {
        let mut names = Names {
            ids: HashMap::new(),
        };
        for keyword in KEYWORDS {
            names.id(keyword);
        }
        // Distinct keywords, so that the ids below their count are exactly theirs.
        debug_assert_eq!(names.count(), KEYWORDS.len());
        names
    }
}

impl<'t> Names<'t> {
    fn id(&mut self, name: &'t str) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(name).or_insert(next)
    }

    fn is_keyword(&self, word: &str) -> bool {
        self.ids
            .get(word)
            .is_some_and(|&id| (id as usize) < KEYWORDS.len())
    }

    fn count(&self) -> usize {
        self.ids.len()
    }
}

/// What one chunk may declare and what it names.
struct ChunkFacts {
    droppable: bool,
    declares: Vec<u32>,
    names: Vec<u32>,
}

/// The kind of an open bracket while walking a chunk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Parameters,
    Attribute,
    Other,
}

fn chunk_facts<'t>(
    toks: &[Tok],
    text: &'t str,
    chunk: &Chunk,
    droppable: bool,
    names: &mut Names<'t>,
    typedefs: &mut Vec<bool>,
) -> ChunkFacts {
    let mut declares = Vec::new();
    let mut named = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let is_typedef_name = |typedefs: &Vec<bool>, id: u32| typedefs.get(id as usize) == Some(&true);
    let word = |k: usize| -> Option<&'t str> {
        let t = toks.get(k)?;
        (t.kind == TokKind::Ident).then(|| t.text(text))
    };
    let punct = |k: usize, p: &str| {
        toks.get(k)
            .is_some_and(|t| t.kind == TokKind::Punct && t.is(text, p))
    };
    let mut in_body = false;
    for (k, t) in toks
        .iter()
        .enumerate()
        .take(chunk.last + 1)
        .skip(chunk.first)
    {
        if Some(k) == chunk.body {
            in_body = true;
        }
        if t.kind == TokKind::Punct {
            match t.text(text) {
                "(" => {
                    let before = if k > chunk.first { word(k - 1) } else { None };
                    let group = if groups.last() == Some(&Group::Attribute)
                        || before.is_some_and(|w| ATTRIBUTE_WORDS.contains(&w))
                    {
                        Group::Attribute
                    } else if !in_body
                        && k > chunk.first
                        && (before.is_some_and(|w| !names.is_keyword(w)) || punct(k - 1, ")"))
                    {
                        Group::Parameters
                    } else {
                        Group::Other
                    };
                    groups.push(group);
                }
                "[" | "{" => groups.push(if groups.last() == Some(&Group::Attribute) {
                    Group::Attribute
                } else {
                    Group::Other
                }),
                ")" | "]" | "}" => {
                    groups.pop();
                }
                _ => {}
            }
            continue;
        }
        if t.kind != TokKind::Ident {
            continue;
        }
        let w = t.text(text);
        let id = names.id(w);
        if (id as usize) < KEYWORDS.len() {
            continue;
        }
        if groups.last() == Some(&Group::Attribute) {
            // Attribute names (`__nonnull__`) name nothing a header declares; an argument
            // may (`cleanup(f)`, `format(printf, 1, 2)`).
            if !(w.len() > 4 && w.starts_with("__") && w.ends_with("__")) {
                named.push(id);
            }
            continue;
        }
        let tag = k > chunk.first && matches!(word(k - 1), Some("struct" | "union" | "enum"));
        if in_body {
            named.push(id);
            continue;
        }
        if !tag && is_typedef_name(typedefs, id) {
            named.push(id);
            continue;
        }
        let parameter_name = groups.last() == Some(&Group::Parameters)
            && !tag
            && k > chunk.first
            && (word(k - 1).is_some_and(|p| !matches!(p, "struct" | "union" | "enum"))
                || punct(k - 1, "*"))
            && (punct(k + 1, ",") || punct(k + 1, ")") || punct(k + 1, "["));
        if parameter_name {
            continue;
        }
        declares.push(id);
        named.push(id);
    }
    // Typedef names it declares (an under-approximation: a missed one only keeps more).
    let first_word = (chunk.first..=chunk.last)
        .map(|k| toks[k].text(text))
        .find(|w| *w != "__extension__");
    if first_word == Some("typedef") {
        let mut depth = 0usize;
        for (k, t) in toks
            .iter()
            .enumerate()
            .take(chunk.last + 1)
            .skip(chunk.first)
        {
            if t.kind == TokKind::Punct {
                match t.text(text) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                continue;
            }
            if t.kind != TokKind::Ident || names.is_keyword(t.text(text)) {
                continue;
            }
            let plain = depth == 0 && (punct(k + 1, ";") || punct(k + 1, ",") || punct(k + 1, "["));
            let pointer =
                depth == 1 && k >= 2 && punct(k - 1, "*") && punct(k - 2, "(") && punct(k + 1, ")");
            if plain || pointer {
                let id = names.id(t.text(text));
                if typedefs.len() <= id as usize {
                    typedefs.resize(id as usize + 1, false);
                }
                typedefs[id as usize] = true;
            }
        }
    }
    ChunkFacts {
        droppable,
        declares,
        names: named,
    }
}

/// Which chunks to keep: every one that is not droppable, and every droppable one that
/// declares something a kept one names, to a fixpoint (linear: each name is taken once).
fn keep(facts: &[ChunkFacts], count: usize) -> Vec<bool> {
    let mut declared_by: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (c, f) in facts.iter().enumerate() {
        if f.droppable {
            for &id in &f.declares {
                if declared_by[id as usize].last() != Some(&(c as u32)) {
                    declared_by[id as usize].push(c as u32);
                }
            }
        }
    }
    let mut kept: Vec<bool> = facts.iter().map(|f| !f.droppable).collect();
    let mut named = vec![false; count];
    let mut work: Vec<u32> = Vec::new();
    let take = |f: &ChunkFacts, named: &mut Vec<bool>, work: &mut Vec<u32>| {
        for &id in &f.names {
            if !std::mem::replace(&mut named[id as usize], true) {
                work.push(id);
            }
        }
    };
    for f in facts.iter().filter(|f| !f.droppable) {
        take(f, &mut named, &mut work);
    }
    while let Some(id) = work.pop() {
        for &c in &declared_by[id as usize] {
            if !std::mem::replace(&mut kept[c as usize], true) {
                take(&facts[c as usize], &mut named, &mut work);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `system` (a system header's text) followed by the file's own text, pruned.
    fn pruned(system: &str, own: &str) -> String {
        let text = format!("{system}{own}");
        without_unused_header_declarations(&text, &[(0, system.len(), HeaderKind::System)], None)
    }

    fn kept(out: &str, what: &str) -> bool {
        out.contains(what)
    }

    #[test]
    fn a_compound_literal_initializer_is_one_declaration() {
        let system = "static const struct { int a; } unused = (struct { int a; }){ 1 };\n";
        let out = pruned(system, "int z;\n");
        assert!(!out.contains(';') || out.trim() == "int z;", "{out}");
    }

    #[test]
    fn unused_declarations_go_and_used_ones_stay_with_what_they_name() {
        let system = "typedef unsigned long size_t;\ntypedef struct _IO_FILE FILE;\nstruct _IO_FILE { int _flags; };\nextern size_t strlen(const char *__s) __attribute__((__nonnull__(1)));\nextern int puts(const char *__s);\nextern FILE *stdin;\nenum { A_ONE = 1, A_TWO };\n";
        let own = "int f(const char *s) { return strlen(s) + A_TWO; }\n";
        let out = pruned(system, own);
        assert!(kept(&out, "typedef unsigned long size_t;"), "{out}");
        assert!(kept(&out, "extern size_t strlen"), "{out}");
        assert!(kept(&out, "enum { A_ONE = 1, A_TWO };"), "{out}");
        assert!(!kept(&out, "puts"), "{out}");
        assert!(!kept(&out, "stdin"), "{out}");
        assert!(!kept(&out, "_IO_FILE"), "{out}");
        assert_eq!(out.len(), system.len() + own.len());
        assert_eq!(out.matches('\n').count(), 8);
        assert!(out.ends_with(own));
    }

    #[test]
    fn a_tag_stays_when_only_its_typedef_is_named() {
        let system = "typedef struct foo foo_t;\nstruct foo { int a; };\ntypedef struct foo foo;\n";
        let out = pruned(system, "unsigned long n = sizeof(foo);\n");
        assert!(kept(&out, "struct foo { int a; };"), "{out}");
        assert!(kept(&out, "typedef struct foo foo;"), "{out}");
    }

    #[test]
    fn parameter_names_and_attribute_names_name_nothing() {
        // `__n` is a parameter name of the kept prototype and a global of the header.
        let system = "extern int __n;\nextern void *memset(void *__s, int __c, unsigned long __n) __attribute__((__nonnull__(1)));\nextern int __nonnull__;\n";
        let out = pruned(system, "void g(char *p) { memset(p, 0, 4); }\n");
        assert!(kept(&out, "memset"), "{out}");
        assert!(!kept(&out, "extern int __n;"), "{out}");
        assert!(!kept(&out, "extern int __nonnull__;"), "{out}");
    }

    #[test]
    fn a_function_pointer_typedef_is_a_typedef_name() {
        let system = "typedef void (*handler_t)(int);\nextern handler_t signal_like(int __sig, handler_t __h);\nextern int other(handler_t __h);\n";
        let out = pruned(system, "void h(void) { signal_like(1, 0); }\n");
        assert!(kept(&out, "typedef void (*handler_t)(int);"), "{out}");
        assert!(!kept(&out, "other"), "{out}");
    }

    #[test]
    fn a_piece_that_is_not_a_whole_declaration_stays() {
        // An unbalanced piece at the end of the header text: never cut.
        let system = "extern int used;\nextern int (unused;\n";
        let out = pruned(system, "int k(void) { return used; }\n");
        assert!(kept(&out, "extern int (unused;"), "{out}");
    }

    #[test]
    fn without_system_headers_the_text_is_unchanged() {
        let text = "int x; int f(void) { return x; }\n";
        assert_eq!(without_unused_header_declarations(text, &[], None), text);
    }

    #[test]
    fn a_project_header_keeps_its_external_definitions_and_drops_unused_prototypes() {
        // The project's header: an unused external function (compiled into every file
        // that includes it: its loop is analysed), an unused prototype, and a prototype
        // the file calls.
        let header = "void fill(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\nint unused_proto(int x);\nint used_proto(int y);\n";
        let own = "int main(void) { return used_proto(1); }\n";
        let text = format!("{header}{own}");
        let out = without_unused_header_declarations(
            &text,
            &[(0, header.len(), HeaderKind::Project)],
            None,
        );
        assert!(out.contains("void fill"), "{out}");
        assert!(out.contains("int used_proto(int y);"), "{out}");
        assert!(!out.contains("unused_proto"), "{out}");
        // The same function in a system header goes: its body is never lowered.
        let out = without_unused_header_declarations(
            &text,
            &[(0, header.len(), HeaderKind::System)],
            None,
        );
        assert!(!out.contains("fill"), "{out}");
    }

    #[test]
    fn a_static_function_of_a_project_header_stays_where_it_is_called_or_its_own() {
        let header = "static inline void fill(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n__attribute__((unused)) static void zero(double *a) { a[0] = 0; }\nstatic inline int pick(int a[static 2]) { return a[1]; }\n";
        let calls = "void g(double *a) { fill(a, 4); }\n";
        let ranges = |kind| [(0, header.len(), kind)];
        // Called: compiled here, it stays.
        let text = format!("{header}{calls}");
        let out = without_unused_header_declarations(&text, &ranges(HeaderKind::Project), None);
        assert!(out.contains("static inline void fill"), "{out}");
        assert!(!out.contains("zero") && !out.contains("pick"), "{out}");
        // Not called: not compiled here (gcc drops it), it goes; in the file's own header
        // it is the file's own and stays.
        let text = format!("{header}int main(void) {{ return 0; }}\n");
        let out = without_unused_header_declarations(&text, &ranges(HeaderKind::Project), None);
        assert!(!out.contains("fill") && !out.contains("zero"), "{out}");
        let out = without_unused_header_declarations(&text, &ranges(HeaderKind::Own), None);
        assert_eq!(out, text);
        // `static` inside a parameter's brackets is not a storage class.
        assert!(!is_static(
            &lex("int f(int a[static 2]) {", &[]),
            "int f(int a[static 2]) {",
            0,
            10
        ));
    }

    #[test]
    fn an_unused_inline_function_of_a_system_header_goes_and_a_used_one_stays() {
        let system = "static inline int twice(int __x) { return 2 * __x; }\nstatic inline int thrice(int __x) { return 3 * __x; }\n";
        let out = pruned(system, "int k(int v) { return twice(v); }\n");
        assert!(out.contains("static inline int twice"), "{out}");
        assert!(!out.contains("thrice"), "{out}");
    }
}
