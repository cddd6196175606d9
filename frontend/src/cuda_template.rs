//! Function templates whose parameters are values (`template <bool storeSum, int N>`), read
//! as the C functions that take those values first: `f<true, 4>(a, b)` calls `f(true, 4, a,
//! b)`. A kernel analysed this way holds for every instantiation, its template parameters
//! symbols like its other parameters; a launch whose arguments are constants settles them
//! as it settles the kernel's other parameters. A template with a type or template
//! parameter, a default argument or a pack is refused, as C++ it is.

use std::collections::HashMap;

use crate::ctokens::{matching_close, Tok, TokKind};

/// Words a template's value parameter may be declared with.
const VALUE_TYPE_WORDS: &[&str] = &[
    "bool", "_Bool", "char", "short", "int", "long", "unsigned", "signed", "size_t", "const",
];

/// The `template <...>` that opens a declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TemplateHead {
    /// The token `template`.
    pub keyword: usize,
    /// The `>` that closes the parameter list.
    pub close: usize,
    /// The parameters as C declarations (`bool storeSum`), in order.
    pub params: Vec<String>,
}

/// The template head at token `first`, if the declaration starts with one: `Ok` when every
/// parameter is a value, else the token and reason that refuse it.
pub(crate) fn template_head(
    toks: &[Tok],
    text: &str,
    first: usize,
    last: usize,
) -> Option<Result<TemplateHead, (usize, String)>> {
    if !toks[first].is(text, "template") {
        return None;
    }
    let refuse = |k: usize, why: &str| Some(Err((k, format!("it uses C++ (`template`): {why}"))));
    if !toks.get(first + 1).is_some_and(|t| t.is(text, "<")) {
        return refuse(first, "an explicit instantiation or specialization");
    }
    let Some(close) = angle_close(toks, text, first + 1, last) else {
        return refuse(first, "its parameter list is not closed");
    };
    let mut params = Vec::new();
    let mut start = first + 2;
    while start < close {
        let end = (start..close)
            .find(|&k| toks[k].is(text, ","))
            .unwrap_or(close);
        let words = &toks[start..end];
        let Some((name, kind)) = words.split_last() else {
            return refuse(start, "an empty parameter");
        };
        let value = !kind.is_empty()
            && name.kind == TokKind::Ident
            && kind
                .iter()
                .all(|t| VALUE_TYPE_WORDS.contains(&t.text(text)));
        if !value {
            let why = format!(
                "`{}` is not a value parameter; warpwise reads templates whose parameters are \
                 values (`template <int N>`)",
                &text[words[0].start()..words[words.len() - 1].end()]
            );
            return refuse(start, &why);
        }
        params.push(token_text(words, text));
        start = end + 1;
    }
    if params.is_empty() {
        return refuse(first, "an explicit specialization (`template <>`)");
    }
    Some(Ok(TemplateHead {
        keyword: first,
        close,
        params,
    }))
}

/// The `>` that closes the `<` at `open`, within `..=last`: angle brackets nest, and a `>`
/// inside parentheses is a comparison.
pub(crate) fn angle_close(toks: &[Tok], text: &str, open: usize, last: usize) -> Option<usize> {
    let mut angles = 0usize;
    let mut k = open;
    while k <= last {
        match toks[k].text(text) {
            "<" => angles += 1,
            ">" => {
                angles = angles.checked_sub(1)?;
                if angles == 0 {
                    return Some(k);
                }
            }
            "(" | "[" => k = matching_close(toks, text, k)?,
            ";" | "{" | "}" => return None,
            _ => {}
        }
        k += 1;
    }
    None
}

/// The value templates of a file, by name: how many template parameters each takes.
pub(crate) type Templates = HashMap<String, usize>;

/// At token `k`, a use `NAME<args>` of a value template of `templates`: the index of its
/// closing `>` and the arguments' text. `within` bounds the search (the function's body).
pub(crate) fn template_use(
    toks: &[Tok],
    text: &str,
    k: usize,
    within: usize,
    templates: &Templates,
) -> Option<(usize, String)> {
    let name = &toks[k];
    if name.kind != TokKind::Ident || !templates.contains_key(name.text(text)) {
        return None;
    }
    if !toks.get(k + 1).is_some_and(|t| t.is(text, "<")) {
        return None;
    }
    let close = angle_close(toks, text, k + 1, within)?;
    if close == k + 2 {
        return None;
    }
    Some((close, token_text(&toks[k + 2..close], text)))
}

/// Tokens as one line of text, a space between each two: what lies between them in the
/// preprocessed text may hold line markers (`bool` expanded from a system header's macro),
/// which must not be copied elsewhere.
pub(crate) fn token_text(toks: &[Tok], text: &str) -> String {
    let words: Vec<&str> = toks.iter().map(|t| t.text(text)).collect();
    words.join(" ")
}

/// Edits that turn tokens `first..=last` into spaces, leaving what lies between them (line
/// markers, newlines) in place, so lines keep their numbers.
pub(crate) fn blank_tokens(toks: &[Tok], first: usize, last: usize) -> Vec<(usize, usize, String)> {
    toks[first..=last]
        .iter()
        .map(|t| (t.start(), t.end(), " ".repeat(t.end() - t.start())))
        .collect()
}

/// The text inserted after the `(` of a call or parameter list to put `first` before what
/// it holds: `first` alone when the list is empty, else `first, `.
pub(crate) fn prepended(first: &str, empty: bool) -> String {
    if empty {
        first.to_string()
    } else {
        format!("{first}, ")
    }
}
