//! C++ reference parameters read as C: `int &ai` is the pointer `int *ai`, each use of `ai`
//! in the body `(*ai)` and each argument passed for it `&(x)`; `const float3 &v` is the
//! copy `const float3 v`, which reads the same values. Only calls to functions of the same
//! file are rewritten: the table of who takes references is built from their declarations
//! first. A local declaration that shadows a reference parameter's name inside the body
//! is not told apart (the uses are rewritten all the same); device helpers written for
//! kernels rarely do that.

use std::collections::HashMap;

use crate::ctokens::{matching_close, Tok, TokKind};

/// How a parameter is passed once read as C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Passing {
    /// As written: not a reference.
    Value,
    /// `T &x`: a pointer, the argument's address passed.
    Pointer,
    /// `const T &x`: a copy, the argument passed as it is.
    Copy,
}

/// The functions of a file that take references: per parameter, how it is passed.
pub(crate) type References = HashMap<String, Vec<Passing>>;

/// One parameter of a list: its `&`, when it is a reference, the token of its name, and how
/// it is passed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parameter {
    pub amp: Option<usize>,
    pub name: Option<usize>,
    pub passing: Passing,
}

/// The parameters of the list whose parentheses are at `open` and `close`, when at least one
/// is a reference and each reference is of a form this reads (`T &name`, `T &` in a
/// prototype; not `&&`, not a reference to an array or function).
pub(crate) fn reference_parameters(
    toks: &[Tok],
    text: &str,
    open: usize,
    close: usize,
) -> Option<Vec<Parameter>> {
    let mut params = Vec::new();
    let mut start = open + 1;
    let mut any = false;
    while start < close {
        let end = top_level_comma(toks, text, start, close).unwrap_or(close);
        let amps: Vec<usize> = (start..end).filter(|&k| toks[k].is(text, "&")).collect();
        let param = match amps.as_slice() {
            [] => Parameter {
                amp: None,
                name: None,
                passing: Passing::Value,
            },
            [amp] => {
                let name = match end - amp {
                    1 => None,
                    2 if toks[amp + 1].kind == TokKind::Ident => Some(amp + 1),
                    _ => return None,
                };
                let before = &toks[start..*amp];
                let constant = before.iter().any(|t| t.is(text, "const"))
                    && !before.iter().any(|t| t.is(text, "*"));
                any = true;
                Parameter {
                    amp: Some(*amp),
                    name,
                    passing: if constant {
                        Passing::Copy
                    } else {
                        Passing::Pointer
                    },
                }
            }
            _ => return None,
        };
        params.push(param);
        start = end + 1;
    }
    any.then_some(params)
}

/// The first `,` outside brackets in `from..until`.
pub(crate) fn top_level_comma(
    toks: &[Tok],
    text: &str,
    from: usize,
    until: usize,
) -> Option<usize> {
    let mut k = from;
    while k < until {
        match toks[k].text(text) {
            "(" | "[" | "{" => k = matching_close(toks, text, k)?,
            "," => return Some(k),
            _ => {}
        }
        k += 1;
    }
    None
}

/// One text edit: the bytes `start..end` replaced by `with`.
type Edit = (usize, usize, String);

/// The edits that make a function with reference parameters C: each `&` a `*` (pointer) or
/// nothing (copy), and in the body `(open, close)`, when there is one, each use of a pointer
/// parameter `(*name)`.
pub(crate) fn reference_function(
    toks: &[Tok],
    text: &str,
    params: &[Parameter],
    body: Option<(usize, usize)>,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut pointers: Vec<&str> = Vec::new();
    for p in params {
        let Some(amp) = p.amp else { continue };
        let with = match p.passing {
            Passing::Pointer => "*",
            _ => "",
        };
        edits.push((toks[amp].start(), toks[amp].end(), with.to_string()));
        if p.passing == Passing::Pointer {
            if let Some(name) = p.name {
                pointers.push(toks[name].text(text));
            }
        }
    }
    let Some((open, close)) = body else {
        return edits;
    };
    for k in open + 1..close {
        let t = &toks[k];
        if t.kind != TokKind::Ident || !pointers.contains(&t.text(text)) {
            continue;
        }
        // A member `s.ai` or `p->ai` is another name.
        let member = matches!(toks[k - 1].text(text), ".")
            || (toks[k - 1].is(text, ">") && toks[k - 2].is(text, "-"));
        if member {
            continue;
        }
        edits.push((t.start(), t.start(), "(*".into()));
        edits.push((t.end(), t.end(), ")".into()));
    }
    edits
}

/// The edits that pass the address of each argument a call's pointer parameters take: the
/// call's arguments are in the parentheses at `open`.
pub(crate) fn reference_arguments(
    toks: &[Tok],
    text: &str,
    open: usize,
    passing: &[Passing],
    edits: &mut Vec<Edit>,
) {
    let Some(close) = matching_close(toks, text, open) else {
        return;
    };
    let mut start = open + 1;
    for how in passing {
        if start >= close {
            return;
        }
        let end = top_level_comma(toks, text, start, close).unwrap_or(close);
        if *how == Passing::Pointer && end > start {
            edits.push((toks[start].start(), toks[start].start(), "&(".into()));
            edits.push((toks[end - 1].end(), toks[end - 1].end(), ")".into()));
        }
        start = end + 1;
    }
}
