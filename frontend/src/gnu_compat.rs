//! Length-preserving rewrites of two GNU spellings that lang-c rejects, so that GCC's own
//! headers (the x86 intrinsics `xmmintrin.h` ... `immintrin.h`, `x86intrin.h`) parse as
//! they are. Offsets and line numbers do not move, so the source map needs no change, and
//! the rewritten text still means the same to a C compiler (the profiler compiles it).
//!
//! * `__extension__` is erased (spaces). lang-c takes it only before a *unary* expression,
//!   so GCC's `__extension__ (__m128)(__v4sf){ ... }` (a cast of a compound literal, all
//!   over the SSE headers) is a syntax error. To GCC it only silences `-pedantic`.
//! * `unsigned __int128` / `signed __int128` become `__uint128_t` / `__int128_t`, padded
//!   with spaces (GCC's own names for the same types; `bmi2intrin.h`, pulled in by
//!   `immintrin.h`, uses the first). `__int128` reaches lang-c as a typedef name (see
//!   `fake_headers/warpwise_builtins.h`), and a typedef name cannot take `unsigned`.
//!   Only when both words are on one line: a replacement must not swallow a newline.
//! * C23 attributes `[[deprecated("...")]]`, `[[nodiscard]]`, `[[maybe_unused]]`,
//!   `[[fallthrough]]` are erased (spaces; newlines inside them kept). GCC 12 reports
//!   `__has_c_attribute(deprecated)` even in `gnu17` mode, so headers that test it (spglib's)
//!   use the syntax, and lang-c does not know it. `[[` cannot start anything else in C.
//!   None of these attributes changes what the program computes.
//! * `struct __attribute__((packed)) P { ... }` (attributes between `struct`/`union` and
//!   the tag, as GCC allows) becomes `struct P { ... }__attribute__((packed))`: lang-c takes
//!   attributes only after the closing brace, and read the first form as a function `P`.
//!   The segment from the attribute to the closing brace is rotated, so its length, and
//!   every offset outside it, stays; the lines stay too (only a one-line attribute moves).
//!   Before a tag without a body (`struct __attribute__((packed)) P *p;`), where GCC ignores
//!   it, the attribute is erased.

use std::path::PathBuf;

use crate::ctokens::{lex, matching_close, Tok, TokKind};

/// Applies the rewrites to preprocessed text in place; returns the tokens of the new text
/// (those of the old one, less the erased and with each `unsigned __int128` one token, or
/// the text lexed again where a segment was rotated).
pub(crate) fn rewrite(text: &mut String, system_dirs: &[PathBuf]) -> Vec<Tok> {
    let toks = lex(text, system_dirs);
    let mut edits: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Ident {
            continue;
        }
        match t.text(text) {
            "__extension__" => edits.push((t.start(), t.end(), "")),
            sign @ ("unsigned" | "signed") => {
                let Some(next) = toks.get(k + 1) else {
                    continue;
                };
                let same_line = !text[t.end()..next.start()].contains('\n');
                if next.is(text, "__int128") && same_line {
                    let name = if sign == "unsigned" {
                        "__uint128_t"
                    } else {
                        "__int128_t"
                    };
                    edits.push((t.start(), next.end(), name));
                }
            }
            _ => {}
        }
    }
    // C23 attributes: `[[`, then a balanced list, then `]]`.
    let mut k = 0;
    while k + 1 < toks.len() {
        let is_open = toks[k].is(text, "[") && toks[k + 1].is(text, "[");
        let close = if is_open {
            matching_close(&toks, text, k)
        } else {
            None
        };
        match close {
            Some(c)
                if toks[c].is(text, "]")
                    && toks[c - 1].is(text, "]")
                    && matching_close(&toks, text, k + 1) == Some(c - 1) =>
            {
                blank.push((toks[k].start(), toks[c].end()));
                k = c + 1;
            }
            _ => k += 1,
        }
    }
    let rotations = record_attributes(&toks, text, &mut blank);
    if edits.is_empty() && blank.is_empty() && rotations.is_empty() {
        return toks;
    }
    for &(start, end) in &blank {
        // Byte by byte, so a multi-byte character in a string argument keeps its length.
        let spaces: String = text.as_bytes()[start..end]
            .iter()
            .map(|&b| if b == b'\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(start..end, &spaces);
    }
    for &(start, end, with) in &edits {
        // `with` is never longer than the range: `unsigned __int128` is 17 bytes or more.
        let padded = format!("{with:<width$}", width = end - start);
        text.replace_range(start..end, &padded);
    }
    // Last: the other rewrites kept every offset, so the tokens' positions still hold.
    for &(attribute_start, attribute_end, body_end) in &rotations {
        let rotated = format!(
            "{}{}",
            &text[attribute_end..body_end],
            &text[attribute_start..attribute_end]
        );
        text.replace_range(attribute_start..body_end, &rotated);
    }
    if !rotations.is_empty() {
        return lex(text, system_dirs);
    }
    match tokens_after(toks, &edits, blank) {
        Some(toks) if !opens_a_line_with_hash(text, &toks) => toks,
        _ => lex(text, system_dirs),
    }
}

/// Whether a `#` token of `toks` now starts its line of `text`: erasing what preceded it
/// (`__extension__#`) turned a stray `#` into a directive line, which lexing skips, so the
/// kept tokens would no longer be those of the text. Stray `#` tokens are rare in
/// preprocessed text, so this looks at few of them.
fn opens_a_line_with_hash(text: &str, toks: &[Tok]) -> bool {
    toks.iter().filter(|t| t.is(text, "#")).any(|t| {
        let line_start = text[..t.start()].rfind('\n').map_or(0, |n| n + 1);
        text[line_start..t.start()]
            .bytes()
            .all(|b| b.is_ascii_whitespace())
    })
}

/// The tokens after the erasures and replacements of `edits` and the blanking of `blank`,
/// made from `toks` in place; `None` when they overlap or cut a token (the text must be
/// lexed again).
fn tokens_after(
    mut toks: Vec<Tok>,
    edits: &[(usize, usize, &'static str)],
    mut blank: Vec<(usize, usize)>,
) -> Option<Vec<Tok>> {
    // Replacements become one identifier each; erasures join the blanked ranges.
    let mut replaced: Vec<(usize, usize, usize)> = Vec::new();
    for &(start, end, with) in edits {
        if with.is_empty() {
            blank.push((start, end));
        } else {
            replaced.push((start, end, with.len()));
        }
    }
    blank.sort_unstable();
    let overlaps = blank.windows(2).any(|w| w[0].1 > w[1].0)
        || replaced
            .iter()
            .any(|&(start, end, _)| blank.iter().any(|&(s, e)| s < end && start < e));
    if overlaps {
        return None;
    }
    // A replaced pair's first word becomes the new name; the words after it, up to the
    // replacement's end, go.
    let mut next = 0;
    let mut swallowing = None;
    toks.retain_mut(|t| {
        if let Some(end) = swallowing {
            if t.end() <= end {
                return false;
            }
            swallowing = None;
        }
        match replaced.get(next) {
            Some(&(start, end, len)) if t.start() == start => {
                *t = t.ending_at(start + len, TokKind::Ident);
                swallowing = Some(end);
                next += 1;
            }
            _ => {}
        }
        true
    });
    (next == replaced.len() && crate::ctokens::drop_within(&mut toks, &blank)).then_some(toks)
}

/// Attributes between `struct`/`union` and the tag: (attribute start, attribute end, end of
/// the closing brace) for those to move after the body; those before a tag without a body
/// are added to `blank`. Nested ones inside a moved body are left as they are.
fn record_attributes(
    toks: &[crate::ctokens::Tok],
    text: &str,
    blank: &mut Vec<(usize, usize)>,
) -> Vec<(usize, usize, usize)> {
    let mut rotations: Vec<(usize, usize, usize)> = Vec::new();
    let mut k = 0;
    while k + 1 < toks.len() {
        let record =
            toks[k].kind == TokKind::Ident && matches!(toks[k].text(text), "struct" | "union");
        if !record || !is_attribute(&toks[k + 1], text) {
            k += 1;
            continue;
        }
        // One or more `__attribute__((...))` in a row.
        let mut next = k + 1;
        while next < toks.len() && is_attribute(&toks[next], text) {
            match toks
                .get(next + 1)
                .filter(|t| t.is(text, "("))
                .and_then(|_| matching_close(toks, text, next + 1))
            {
                Some(close) => next = close + 1,
                None => return rotations,
            }
        }
        let (start, end) = (toks[k + 1].start(), toks[next - 1].end());
        let tag = usize::from(toks.get(next).is_some_and(|t| t.kind == TokKind::Ident));
        let body = toks.get(next + tag).filter(|t| t.is(text, "{"));
        let close = body.and_then(|_| matching_close(toks, text, next + tag));
        let inside_moved = rotations.last().is_some_and(|&(_, _, e)| start < e);
        match close {
            _ if inside_moved => {}
            Some(close) if !text[start..end].contains('\n') => {
                rotations.push((start, end, toks[close].end()));
            }
            Some(_) => {}
            None if body.is_none() => blank.push((start, end)),
            None => {}
        }
        k = next;
    }
    rotations
}

fn is_attribute(t: &crate::ctokens::Tok, text: &str) -> bool {
    t.kind == TokKind::Ident && matches!(t.text(text), "__attribute__" | "__attribute")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        let mut text = input.to_string();
        let toks = rewrite(&mut text, &[]);
        assert_eq!(text, expected);
        assert_eq!(text.len(), input.len(), "offsets stay put");
        assert!(
            crate::ctokens::same_tokens(&toks, &lex(&text, &[])),
            "the tokens handed on are those of the new text"
        );
    }

    #[test]
    fn extension_is_erased() {
        check(
            "return __extension__ (__m128)(__v4sf){ a };",
            "return               (__m128)(__v4sf){ a };",
        );
        check("my__extension__x;", "my__extension__x;");
        check("s = \"__extension__\";", "s = \"__extension__\";");
    }

    #[test]
    fn a_stray_hash_left_first_on_its_line_is_lexed_again() {
        // Erased, `__extension__` leaves `#` first on its line: a directive line to the
        // lexer, no longer a token (a fuzzer's input).
        check("__extension__#\n#1\"\"", "             #\n#1\"\"");
        check("  [[gnu::x]] # y;", "             # y;");
        check("x; __extension__ # y;", "x;               # y;");
    }

    #[test]
    fn signed_int128_becomes_gcc_names() {
        check(
            "unsigned __int128 r = (unsigned  __int128) x;",
            "__uint128_t       r = (__uint128_t       ) x;",
        );
        check("signed __int128 s;", "__int128_t      s;");
        // Split over two lines: left alone.
        check("unsigned\n__int128 r;", "unsigned\n__int128 r;");
        check("unsigned int x;", "unsigned int x;");
    }

    #[test]
    fn c23_attributes_are_erased() {
        check(
            "[[deprecated(\"gone é\")]]\nint f(void);",
            "                         \nint f(void);",
        );
        check(
            "[[maybe_unused, gnu::cold]] static int g;",
            "                            static int g;",
        );
        check(
            "switch (x) { case 1: [[fallthrough]]; }",
            "switch (x) { case 1:                ; }",
        );
        // Subscripts are not attributes.
        check("a[b[0]] = m[i][j];", "a[b[0]] = m[i][j];");
    }

    #[test]
    fn record_attributes_before_the_tag_move_after_the_body() {
        check(
            "struct __attribute__((packed)) P { char c; int x; } p;",
            "struct  P { char c; int x; }__attribute__((packed)) p;",
        );
        check(
            "typedef union __attribute__((aligned(8))) __attribute__((packed)) {\n int a;\n} U;",
            "typedef union  {\n int a;\n}__attribute__((aligned(8))) __attribute__((packed)) U;",
        );
        // Without a body GCC ignores it: erased.
        check(
            "struct __attribute__((packed)) P *p;",
            "struct                         P *p;",
        );
        // Already after the body, or not a record: left alone.
        check(
            "struct P { int a; } __attribute__((packed));",
            "struct P { int a; } __attribute__((packed));",
        );
        check(
            "int __attribute__((unused)) x;",
            "int __attribute__((unused)) x;",
        );
    }
}
