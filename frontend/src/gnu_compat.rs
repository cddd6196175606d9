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

use std::path::PathBuf;

use crate::ctokens::{lex, TokKind};

/// Applies the rewrites to preprocessed text in place.
pub(crate) fn rewrite(text: &mut String, system_dirs: &[PathBuf]) {
    let toks = lex(text, system_dirs);
    let mut edits: Vec<(usize, usize, &'static str)> = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Ident {
            continue;
        }
        match t.text(text) {
            "__extension__" => edits.push((t.start, t.end, "")),
            sign @ ("unsigned" | "signed") => {
                let Some(next) = toks.get(k + 1) else {
                    continue;
                };
                let same_line = !text[t.end..next.start].contains('\n');
                if next.is(text, "__int128") && same_line {
                    let name = if sign == "unsigned" {
                        "__uint128_t"
                    } else {
                        "__int128_t"
                    };
                    edits.push((t.start, next.end, name));
                }
            }
            _ => {}
        }
    }
    for (start, end, with) in edits {
        // `with` is never longer than the range: `unsigned __int128` is 17 bytes or more.
        let padded = format!("{with:<width$}", width = end - start);
        text.replace_range(start..end, &padded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        let mut text = input.to_string();
        rewrite(&mut text, &[]);
        assert_eq!(text, expected);
        assert_eq!(text.len(), input.len(), "offsets stay put");
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
}
