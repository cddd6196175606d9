//! Implicit `int` (C89 3.5.2, still accepted by GCC): inserts `int ` into the preprocessed
//! text where a declaration has no type specifier, because lang-c's grammar requires one.
//! `bar() { ... }`, `static foo(a, b) double *a; { ... }`, `main(argc, argv) ...`,
//! `register i;`, `static *p;` and `const n = 3;` become what C89 says they mean. The
//! inserted text is what the compiler would have assumed, so the text still compiles to the
//! same program (the profiler compiles it), and the source map's token alignment maps the
//! inserted `int` onto the declarator that follows it, so columns stay right.
//!
//! Only user code is touched (system headers always have their types). A declaration is
//! recognised by its position, without a full parse:
//!
//! * **with a storage class or qualifier** (`static`, `extern`, `register`, `auto`, `const`,
//!   `volatile`, `inline`, ...) at the start of a declaration (after `;`, `{`, `}`, a
//!   top-level `)` closing a K&R identifier list, or `for (`) and then, with no type
//!   specifier and no typedef name, `*`s and an identifier followed by `(`, `;`, `,`, `=`
//!   or `[`;
//! * **with nothing before the name**, at file scope only (where no statement can start):
//!   an identifier that is not a typedef name, followed by a parenthesised list and then by
//!   `{` (a definition), `;`/`,` (a declaration) or the first word of a K&R parameter
//!   declaration.
//!
//! Typedef names are collected from every `typedef` in the text first (scopes ignored: a
//! larger set only means fewer insertions). Where the scan is unsure, it inserts nothing,
//! and lang-c reports the syntax error as before.

use std::collections::HashSet;

use crate::ctokens::{matching_close, Tok, TokKind};

const STORAGE: &[&str] = &[
    "extern",
    "static",
    "auto",
    "register",
    "_Thread_local",
    "__thread",
];

const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "__const",
    "__const__",
    "__volatile",
    "__volatile__",
    "inline",
    "__inline",
    "__inline__",
    "_Noreturn",
    "__extension__",
];

/// Words followed by a parenthesised argument that belong to the specifiers.
const ATTRIBUTES: &[&str] = &["__attribute__", "__attribute", "_Alignas", "__declspec"];

/// Type specifiers: a declaration that has one of these (or a typedef name) has its type.
const TYPES: &[&str] = &[
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "__signed",
    "__signed__",
    "_Bool",
    "_Complex",
    "__complex",
    "__complex__",
    "_Imaginary",
    "struct",
    "union",
    "enum",
    "typeof",
    "__typeof",
    "__typeof__",
    "_Atomic",
    "__auto_type",
    "__int128",
    "__builtin_va_list",
    "_Float16",
    "_Float32",
    "_Float64",
    "_Float128",
    "_Float32x",
    "_Float64x",
    "_Float128x",
    "__float128",
    "_Decimal32",
    "_Decimal64",
    "_Decimal128",
];

/// The other keywords: never the name a declaration declares.
const OTHER_KEYWORDS: &[&str] = &[
    "typedef",
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "goto",
    "sizeof",
    "_Alignof",
    "__alignof",
    "__alignof__",
    "_Generic",
    "_Static_assert",
    "asm",
    "__asm",
    "__asm__",
    "__builtin_offsetof",
    "__builtin_va_arg",
    "__builtin_types_compatible_p",
    "__label__",
    "__real__",
    "__imag__",
];

fn is_keyword(word: &str) -> bool {
    [STORAGE, QUALIFIERS, ATTRIBUTES, TYPES, OTHER_KEYWORDS]
        .iter()
        .any(|set| set.contains(&word))
}

/// Inserts `int ` at every implicit-int declaration of user code; returns how many.
/// `toks` are the tokens of `text` and the tokens of the new text are returned with the
/// count.
pub(crate) fn insert(text: &mut String, toks: Vec<Tok>) -> (usize, Vec<Tok>) {
    let sites = find_sites(text, &toks);
    if sites.is_empty() {
        return (0, toks);
    }
    *text = crate::ctokens::text_with_insertions(text, &sites, "int");
    (
        sites.len(),
        crate::ctokens::with_insertions(toks, &sites, "int"),
    )
}

/// Where a declaration may start, as far as the scan can tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    No,
    /// Only a declaration that begins with a storage class or qualifier.
    WithKeyword,
    /// At file scope after `;` or a function body: a bare `name(...)` is a declaration too.
    FileScope,
}

/// Offsets (ascending) at which `int ` goes.
fn find_sites(text: &str, toks: &[Tok]) -> Vec<usize> {
    let typedefs = typedef_names(toks, text);
    let records = record_bodies(toks, text);
    let mut sites = Vec::new();
    // Open brackets; for `{`, whether it opens a function body at file scope.
    let mut stack: Vec<(char, bool)> = Vec::new();
    let mut start = Start::FileScope;
    for (k, t) in toks.iter().enumerate() {
        if start != Start::No && !t.system {
            if let Some(offset) = site(toks, text, k, start == Start::FileScope, &typedefs) {
                sites.push(offset);
            }
        }
        start = Start::No;
        if t.kind != TokKind::Punct {
            continue;
        }
        match t.text(text) {
            "(" => {
                stack.push(('(', false));
                if k > 0 && toks[k - 1].is(text, "for") {
                    start = Start::WithKeyword;
                }
            }
            "[" => stack.push(('[', false)),
            "{" => {
                let body = stack.is_empty()
                    && !records.contains(&k)
                    && k > 0
                    && matches!(toks[k - 1].text(text), ")" | ";");
                stack.push(('{', body));
                start = Start::WithKeyword;
            }
            ")" | "]" => {
                stack.pop();
                if stack.is_empty() && t.is(text, ")") {
                    // After a K&R identifier list: `register a;` declares a parameter.
                    start = Start::WithKeyword;
                }
            }
            "}" => {
                let (_, body) = stack.pop().unwrap_or(('{', false));
                start = match (stack.is_empty(), body) {
                    (true, true) => Start::FileScope,
                    // The end of a struct body or initializer at file scope: the
                    // declaration goes on.
                    (true, false) => Start::No,
                    (false, _) => Start::WithKeyword,
                };
            }
            ";" => {
                start = if stack.is_empty() {
                    Start::FileScope
                } else {
                    Start::WithKeyword
                };
            }
            _ => {}
        }
    }
    sites
}

/// The offset for `int ` if a declaration without a type starts at token `k`.
fn site(
    toks: &[Tok],
    text: &str,
    k: usize,
    file_scope: bool,
    typedefs: &HashSet<&str>,
) -> Option<usize> {
    let mut j = k;
    let mut has_keyword = false;
    loop {
        let t = toks.get(j)?;
        if t.kind != TokKind::Ident {
            break;
        }
        let word = t.text(text);
        if STORAGE.contains(&word) || QUALIFIERS.contains(&word) {
            has_keyword |= word != "__extension__";
            j += 1;
        } else if ATTRIBUTES.contains(&word) && toks.get(j + 1).is_some_and(|n| n.is(text, "(")) {
            j = matching_close(toks, text, j + 1)? + 1;
        } else {
            break;
        }
    }
    let first = toks.get(j)?;
    let word = first.text(text);
    if first.kind == TokKind::Ident && (TYPES.contains(&word) || typedefs.contains(word)) {
        return None;
    }
    let mut m = j;
    if has_keyword {
        while toks.get(m).is_some_and(|t| {
            t.is(text, "*") || (t.kind == TokKind::Ident && QUALIFIERS.contains(&t.text(text)))
        }) {
            m += 1;
        }
    }
    let name = toks.get(m)?;
    let name_text = name.text(text);
    if name.kind != TokKind::Ident
        || name.system
        || is_keyword(name_text)
        || typedefs.contains(name_text)
    {
        return None;
    }
    let follow = toks.get(m + 1)?.text(text);
    if has_keyword {
        return matches!(follow, "(" | ";" | "," | "=" | "[").then_some(first.start());
    }
    if !file_scope || m != j || follow != "(" {
        return None;
    }
    let close = matching_close(toks, text, m + 1)?;
    let after = toks.get(close + 1)?;
    let after_text = after.text(text);
    let declaration_follows = matches!(after_text, "{" | ";" | ",")
        || (after.kind == TokKind::Ident
            && (TYPES.contains(&after_text)
                || STORAGE.contains(&after_text)
                || QUALIFIERS.contains(&after_text)
                || ATTRIBUTES.contains(&after_text)
                || matches!(after_text, "asm" | "__asm" | "__asm__")
                || typedefs.contains(after_text)));
    declaration_follows.then_some(first.start())
}

/// Indices of the `{` tokens that open a struct, union or enum body.
fn record_bodies(toks: &[Tok], text: &str) -> HashSet<usize> {
    let mut out = HashSet::new();
    for (k, t) in toks.iter().enumerate() {
        if !(t.is(text, "struct") || t.is(text, "union") || t.is(text, "enum")) {
            continue;
        }
        let mut j = skip_attributes(toks, text, k + 1);
        if toks
            .get(j)
            .is_some_and(|n| n.kind == TokKind::Ident && !is_keyword(n.text(text)))
        {
            j = skip_attributes(toks, text, j + 1);
        }
        if toks.get(j).is_some_and(|n| n.is(text, "{")) {
            out.insert(j);
        }
    }
    out
}

fn skip_attributes(toks: &[Tok], text: &str, mut j: usize) -> usize {
    while toks
        .get(j)
        .is_some_and(|t| ATTRIBUTES.contains(&t.text(text)))
        && toks.get(j + 1).is_some_and(|t| t.is(text, "("))
    {
        match matching_close(toks, text, j + 1) {
            Some(close) => j = close + 1,
            None => return toks.len(),
        }
    }
    j
}

/// Every name some `typedef` declares, in system headers and user code alike.
fn typedef_names<'t>(toks: &[Tok], text: &'t str) -> HashSet<&'t str> {
    let mut names: HashSet<&str> = HashSet::new();
    let mut k = 0;
    while k < toks.len() {
        if !toks[k].is(text, "typedef") {
            k += 1;
            continue;
        }
        // The specifiers: keywords, a struct/union/enum (with its body), typeof(...),
        // attributes, or one typedef name while no type has been seen.
        let mut i = k + 1;
        let mut has_type = false;
        while let Some(t) = toks.get(i) {
            let word = t.text(text);
            if t.kind != TokKind::Ident {
                break;
            }
            if matches!(word, "struct" | "union" | "enum") {
                has_type = true;
                i = skip_attributes(toks, text, i + 1);
                if toks
                    .get(i)
                    .is_some_and(|n| n.kind == TokKind::Ident && !is_keyword(n.text(text)))
                {
                    i = skip_attributes(toks, text, i + 1);
                }
                if toks.get(i).is_some_and(|n| n.is(text, "{")) {
                    i = matching_close(toks, text, i).map_or(toks.len(), |c| c + 1);
                }
            } else if (ATTRIBUTES.contains(&word)
                || matches!(word, "typeof" | "__typeof" | "__typeof__" | "_Atomic"))
                && toks.get(i + 1).is_some_and(|n| n.is(text, "("))
            {
                has_type |= !ATTRIBUTES.contains(&word);
                i = matching_close(toks, text, i + 1).map_or(toks.len(), |c| c + 1);
            } else if is_keyword(word) {
                has_type |= TYPES.contains(&word);
                i += 1;
            } else if !has_type && names.contains(word) {
                has_type = true;
                i += 1;
            } else {
                break;
            }
        }
        // The declarators, separated by top-level commas: the first identifier of each.
        let mut depth = 0usize;
        let mut named = false;
        while let Some(t) = toks.get(i) {
            let word = t.text(text);
            match (t.kind, word) {
                (TokKind::Punct, "(" | "[" | "{") => depth += 1,
                (TokKind::Punct, ")" | "]" | "}") => depth = depth.saturating_sub(1),
                (TokKind::Punct, ",") if depth == 0 => named = false,
                (TokKind::Punct, ";") if depth == 0 => break,
                (TokKind::Ident, _)
                    if ATTRIBUTES.contains(&word)
                        && toks.get(i + 1).is_some_and(|n| n.is(text, "(")) =>
                {
                    i = matching_close(toks, text, i + 1).unwrap_or(toks.len());
                }
                // An attribute word without its parentheses is nothing to name either.
                (TokKind::Ident, _) if ATTRIBUTES.contains(&word) => {}
                (TokKind::Ident, _) if !named && !is_keyword(word) => {
                    names.insert(word);
                    named = true;
                }
                _ => {}
            }
            i += 1;
        }
        k = i.max(k + 1);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctokens::lex;

    fn check(input: &str, expected: &str) {
        let mut text = input.to_string();
        let toks = lex(&text, &[]);
        let (_, after) = insert(&mut text, toks);
        assert_eq!(text, expected);
        assert!(crate::ctokens::same_tokens(&after, &lex(&text, &[])));
    }

    #[test]
    fn file_scope_definitions_and_declarations() {
        check("bar() { return 1; }", "int bar() { return 1; }");
        check(
            "main(argc, argv) int argc; char **argv; { return 0; }",
            "int main(argc, argv) int argc; char **argv; { return 0; }",
        );
        check(
            "static foo(a, b) double *a; { return b; }",
            "static int foo(a, b) double *a; { return b; }",
        );
        check(
            "extern g(); static *p, q = 3;",
            "extern int g(); static int *p, q = 3;",
        );
        check(
            "int x; f(a) register a; { } g() { }",
            "int x; int f(a) register int a; { } int g() { }",
        );
    }

    #[test]
    fn block_scope_needs_a_storage_class_or_qualifier() {
        check(
            "void f(void) { register i; const n = 3; for (register j = 0; j < n; j++) g(i); }",
            "void f(void) { register int i; const int n = 3; for (register int j = 0; j < n; j++) g(i); }",
        );
        // Statements that start with a name are never touched.
        check(
            "void f(void) { g(1); x = 2; }",
            "void f(void) { g(1); x = 2; }",
        );
    }

    #[test]
    fn declarations_with_types_are_left_alone() {
        for src in [
            "typedef unsigned long size_t; size_t f(size_t n); static size_t g;",
            "typedef struct S { int a; } S; S make(void); static const S s;",
            "struct point { int x; } origin(void);",
            "typedef int (*fp_t)(int); fp_t table[3]; static fp_t h(void);",
            "int a = (int) 3; static __attribute__((unused)) int b;",
            "void f(void) { static const char *s = \"x\"; register unsigned r; }",
            "T x; void g(void) { const T y = 1; }",
        ] {
            check(src, src);
        }
    }

    #[test]
    fn system_headers_are_left_alone() {
        let src = "# 1 \"/usr/include/x.h\" 1 3\nfoo() { }\n# 2 \"a.c\" 2\nbar() { }\n";
        check(
            src,
            "# 1 \"/usr/include/x.h\" 1 3\nfoo() { }\n# 2 \"a.c\" 2\nint bar() { }\n",
        );
    }
}
