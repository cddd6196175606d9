//! Min/max update statements taken apart: `x = MAX(x, e);`, `x = fmin(e, x);`,
//! `x = e > x ? e : x;` give the target `x` and the compared value `e`, for the atomic
//! forms OpenMP (`atomic compare`) and CUDA (`ww_atomic_max`) write them in.

use crate::ctext::{code_tokens, tok_text, Tok};
use std::ops::Range;

/// A min/max update statement's parts, as byte ranges of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinMaxUpdate {
    /// `x`, the element updated.
    pub target: Range<usize>,
    /// `e`, the value compared with it.
    pub value: Range<usize>,
    /// Just past the statement's `;`.
    pub end: usize,
}

/// Takes apart the statement `text` starts with: an assignment whose right side is a call
/// (or function-like macro) of the target and one other value, or a conditional choosing
/// between them. Whether it is a minimum or a maximum is the analysis' finding, not read
/// here. `Err` says why the text has no such shape.
pub fn min_max_update(text: &str) -> Result<MinMaxUpdate, String> {
    let toks = code_tokens(text);
    let semi = statement_end(text, &toks).ok_or("its `;` was not found")?;
    let assign = (0..semi)
        .find(|&k| depth_at(text, &toks, k) == 0 && tok_text(text, &toks[k]) == "=")
        .ok_or("it is not an assignment `x = ...;`")?;
    if assign == 0 || assign + 1 >= semi {
        return Err("it is not an assignment `x = ...;`".into());
    }
    let lhs: Vec<&str> = toks[..assign].iter().map(|t| tok_text(text, t)).collect();
    let rhs = &toks[assign + 1..semi];
    let value = other_operand(text, rhs, &lhs).ok_or_else(|| {
        format!(
            "its value is not written `{0} = F({0}, e)` or `{0} = e > {0} ? e : {0}`",
            lhs.join(" ")
        )
    })?;
    let value_text = &text[value.0..value.1];
    if contains_sequence(&code_tokens(value_text), value_text, &lhs) {
        return Err(format!(
            "the compared value reads `{}` itself",
            lhs.join(" ")
        ));
    }
    Ok(MinMaxUpdate {
        target: toks[0].start..toks[assign - 1].end,
        value: value.0..value.1,
        end: toks[semi].end,
    })
}

/// The index of the statement's `;`: the first at bracket depth 0.
pub fn statement_end(text: &str, toks: &[Tok]) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        match tok_text(text, t) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            ";" if depth == 0 => return Some(k),
            _ => {}
        }
    }
    None
}

/// The bracket depth before token `k`.
fn depth_at(text: &str, toks: &[Tok], k: usize) -> i32 {
    toks[..k]
        .iter()
        .map(|t| match tok_text(text, t) {
            "(" | "[" | "{" => 1,
            ")" | "]" | "}" => -1,
            _ => 0,
        })
        .sum()
}

fn contains_sequence(toks: &[Tok], text: &str, seq: &[&str]) -> bool {
    !seq.is_empty()
        && toks
            .windows(seq.len())
            .any(|w| w.iter().zip(seq).all(|(t, s)| tok_text(text, t) == *s))
}

/// The index of the bracket closing the one at `open`.
fn closing(text: &str, toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match tok_text(text, t) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// `toks` without parentheses around all of them.
fn unparenthesized<'a>(text: &str, mut toks: &'a [Tok]) -> &'a [Tok] {
    while toks.len() >= 2
        && tok_text(text, &toks[0]) == "("
        && closing(text, toks, 0) == Some(toks.len() - 1)
    {
        toks = &toks[1..toks.len() - 1];
    }
    toks
}

/// Whether `toks` spell `seq`, parentheses around them aside.
fn spells(text: &str, toks: &[Tok], seq: &[&str]) -> bool {
    let toks = unparenthesized(text, toks);
    toks.len() == seq.len() && toks.iter().zip(seq).all(|(t, s)| tok_text(text, t) == *s)
}

/// The top-level pieces of `toks` split at `sep`.
fn split_top<'a>(text: &str, toks: &'a [Tok], sep: &[&str]) -> Vec<(&'a [Tok], Option<usize>)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    for (k, t) in toks.iter().enumerate() {
        let s = tok_text(text, t);
        match s {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ if depth == 0 && sep.contains(&s) => {
                out.push((&toks[from..k], Some(k)));
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push((&toks[from..], None));
    out
}

/// The byte range of the operand that is not the target, in `F(x, e)` / `F(e, x)` or a
/// conditional `P op Q ? R : S` whose operands are the target and one other expression.
fn other_operand(text: &str, rhs: &[Tok], target: &[&str]) -> Option<(usize, usize)> {
    let rhs = unparenthesized(text, rhs);
    let span = |t: &[Tok]| Some((t.first()?.start, t.last()?.end));
    // `F(x, e)`: a call (or a function-like macro) of two arguments.
    if rhs.len() >= 4
        && matches!(rhs[0].kind, crate::ctext::TokKind::Ident)
        && tok_text(text, &rhs[1]) == "("
        && closing(text, rhs, 1) == Some(rhs.len() - 1)
    {
        let args = split_top(text, &rhs[2..rhs.len() - 1], &[","]);
        if let [(a, _), (b, _)] = args.as_slice() {
            if spells(text, a, target) && !b.is_empty() {
                return span(b);
            }
            if spells(text, b, target) && !a.is_empty() {
                return span(a);
            }
        }
        return None;
    }
    // `P op Q ? R : S` with {P, Q} = {R, S} = {x, e}.
    let parts = split_top(text, rhs, &["?", ":"]);
    let [(cond, _), (r, _), (s, _)] = parts.as_slice() else {
        return None;
    };
    let cmp = split_top(text, unparenthesized(text, cond), &["<", ">", "<=", ">="]);
    let [(p, _), (q, _)] = cmp.as_slice() else {
        return None;
    };
    let same = |a: &[Tok], b: &[Tok]| {
        let (a, b) = (unparenthesized(text, a), unparenthesized(text, b));
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| tok_text(text, x) == tok_text(text, y))
    };
    let other = if spells(text, p, target) {
        q
    } else if spells(text, q, target) {
        p
    } else {
        return None;
    };
    let matches_pair = (same(r, p) && same(s, q)) || (same(r, q) && same(s, p));
    if !matches_pair || other.is_empty() {
        return None;
    }
    span(unparenthesized(text, other))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> (String, String) {
        let u = min_max_update(text).unwrap();
        (text[u.target].to_string(), text[u.value].to_string())
    }

    #[test]
    fn target_and_value_of_each_spelling() {
        assert_eq!(
            parts("m[k] = CS_MAX(m[k], v * 2); rest"),
            ("m[k]".into(), "v * 2".into())
        );
        assert_eq!(parts("x = fmin(e, (x));"), ("x".into(), "e".into()));
        assert_eq!(parts("*r = c < *r ? c : *r;"), ("*r".into(), "c".into()));
        assert_eq!(
            parts("*r = ((c) <= *r ? (c) : *r);"),
            ("*r".into(), "c".into())
        );
    }
}
