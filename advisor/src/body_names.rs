//! What a kernel's body writes for each array it reaches: the loop's own names for them
//! (`volume`, `mq->bad_cell_flag`, `c->data`), read off the report's access texts, each
//! standing for the device pointer of the array parameter the access reaches
//! (`d_cs_glob_mesh_quantities_cell_vol` where `volume = mq->cell_vol`).
//!
//! A recipe says these so that a person turns the loop's body into the kernel's body by
//! renaming alone, and so that a pointer the loop copied from a field is not passed to the
//! kernel as a host address.

use crate::model::{LoopReport, ParamKind, Parameter};

/// A name the loop's body writes (`text`) for the memory of the array parameter `array`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BodyName {
    pub text: String,
    pub array: String,
}

/// The names the loop's accesses write for the parameters of `arrays`, paths before the
/// names they start with (`mq->flag` before `mq`: renaming `mq` first would leave the
/// device copy of the structure holding a host pointer), else in order of first use. A
/// name the accesses use for two different arrays is none of them.
pub(crate) fn body_names(l: &LoopReport, arrays: &[&Parameter]) -> Vec<BodyName> {
    let Some(mapping) = l.mappings.first() else {
        return Vec::new();
    };
    // Each access's name for its array, with the whole reference it writes.
    let mut uses: Vec<(BodyName, String)> = Vec::new();
    for a in &mapping.accesses {
        // A variable's own storage (`&g`) is no pointer the body indexes.
        let Some(param) = a
            .base
            .as_deref()
            .and_then(|b| arrays.iter().find(|p| p.name == b && !p.by_address))
        else {
            continue;
        };
        let Some(levels) = param.c_type.as_deref().map(pointer_levels) else {
            continue;
        };
        let Some((text, whole)) =
            local_reference(l, &a.text).or_else(|| array_reference(&a.text, levels))
        else {
            continue;
        };
        let array = param.name.clone();
        uses.push((BodyName { text, array }, whole));
    }
    // The load of a pointer the body renames as a whole (`c->data` in `c->data[i]`) is no
    // use of what it is loaded from (`c`): renamed, it is gone.
    let renamed: Vec<&str> = uses.iter().map(|(n, _)| n.text.as_str()).collect();
    let kept: Vec<&BodyName> = uses
        .iter()
        .filter(|(n, whole)| *whole == n.text || !renamed.contains(&whole.as_str()))
        .map(|(n, _)| n)
        .collect();
    let mut names: Vec<BodyName> = Vec::new();
    for n in &kept {
        if names.iter().any(|m| m.text == n.text) {
            continue;
        }
        // A name the accesses use for two arrays is neither's.
        if kept.iter().all(|m| m.text != n.text || m.array == n.array) {
            names.push((*n).clone());
        }
    }
    // A pointer the loop holds a copy of stands for its array wherever the body uses it,
    // also where no access of the loop's own shows it (handed to a callee: `f(diipb[i])`).
    for p in &l.parameters {
        let Some(array) = p
            .holds
            .as_ref()
            .filter(|h| arrays.iter().any(|a| &&a.name == h && !a.by_address))
        else {
            continue;
        };
        if p.kind == ParamKind::Scalar && !uses.iter().any(|(n, _)| n.text == p.name) {
            names.push(BodyName {
                text: p.name.clone(),
                array: array.clone(),
            });
        }
    }
    names.sort_by_key(|n| std::cmp::Reverse(selectors(&n.text).map_or(0, |s| s.len())));
    names
}

/// How many subscripts (or `->`) an element of a value of C type `ty` is reached by from
/// the value: `double *` 1, `double (*)[3]` 2, `int [128]` 1, `char **` 2.
fn pointer_levels(ty: &str) -> usize {
    ty.matches('*').count() + ty.matches('[').count()
}

/// The pointer (or array) an access text indexes, where the access reaches an array whose
/// values are `levels` subscripts deep, and the whole reference the text writes:
/// `volume[c]` is `volume`, `i_face_cells[f][0]` (`int (*)[2]`) is `i_face_cells`,
/// `mq->flag` (`mq` a structure pointer) is `mq`, `s[i].x` is `s`. `None` where the text is
/// no reference that deep (a macro's name), or `levels` is 0 (no pointer).
fn array_reference(text: &str, levels: usize) -> Option<(String, String)> {
    // Macro expansions parenthesize: `(xd[i])`.
    let text = text.trim().trim_start_matches(['(', ' ']);
    let mut parts = selectors(text)?;
    let whole = parts.concat();
    if levels == 0 {
        return None;
    }
    let mut left = levels;
    while left > 0 {
        let last = parts.pop()?;
        if parts.is_empty() {
            return None;
        }
        if last.starts_with('[') || last.starts_with("->") {
            left -= 1;
        }
    }
    Some((parts.concat(), whole))
}

/// The pointer a loop indexes by its own name and type, where that pointer is a scalar
/// the loop reads (a local copy of a field): `cell_cen[c][0]` with `cell_cen` a `double
/// (*)[3]` copied from a `double *` field is `cell_cen`, which the field's type alone would
/// read as `cell_cen[c]`. Only subscripts (and then members) follow the name.
fn local_reference(l: &LoopReport, text: &str) -> Option<(String, String)> {
    let text = text.trim().trim_start_matches(['(', ' ']);
    let parts = selectors(text)?;
    let (root, rest) = parts.split_first()?;
    let local = l
        .parameters
        .iter()
        .find(|p| p.kind == ParamKind::Scalar && p.name == *root)?;
    let levels = pointer_levels(local.c_type.as_deref()?);
    let subscripts = rest.iter().take_while(|p| p.starts_with('[')).count();
    let members_after = rest[subscripts..].iter().all(|p| p.starts_with('.'));
    (levels > 0 && subscripts >= levels && members_after)
        .then(|| (root.to_string(), parts.concat()))
}

/// A reference's parts: its identifier, then each `.f`, `->f` and `[...]` (brackets
/// balanced), up to the first text that is none of them; `None` unless it starts with an
/// identifier.
fn selectors(text: &str) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let ident_end = |from: usize| {
        from + b[from..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count()
    };
    if !b.first()?.is_ascii_alphabetic() && b[0] != b'_' {
        return None;
    }
    let mut parts = Vec::new();
    let mut start = 0;
    let mut k = ident_end(0);
    loop {
        parts.push(&text[start..k]);
        start = k;
        let rest = &text[k..];
        if rest.starts_with("->") || rest.starts_with('.') {
            let from = k + if rest.starts_with('.') { 1 } else { 2 };
            let end = ident_end(from);
            if end == from || b[from].is_ascii_digit() {
                break;
            }
            k = end;
        } else if rest.starts_with('[') {
            let mut depth = 0usize;
            let close = rest.char_indices().find_map(|(i, c)| {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => {}
                }
                None
            })?;
            k += close + 1;
        } else {
            break;
        }
    }
    Some(parts)
}

/// `text` with each reference to the memory of an array of `arrays` (`A->i[i]`, by the
/// report's name of it) written with the array's device pointer `device(name)`
/// (`d_A_i[i]`): for what the kernel evaluates, such as a bound that differs per thread.
pub(crate) fn on_device(
    text: &str,
    arrays: &[&Parameter],
    device: &dyn Fn(&str) -> String,
) -> String {
    let mut names: Vec<&str> = arrays.iter().map(|p| p.name.as_str()).collect();
    // The longer path first: `A->i` is no `A`.
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut k = 0;
    while k < b.len() {
        let starts_reference =
            k == 0 || !(b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b'_' | b'.' | b'>'));
        let found = starts_reference
            .then(|| {
                names.iter().find(|n| {
                    text[k..].starts_with(**n) && text[k + n.len()..].trim_start().starts_with('[')
                })
            })
            .flatten();
        match found {
            Some(n) => {
                out.push_str(&device(n));
                k += n.len();
            }
            None => {
                let c = text[k..].chars().next().unwrap_or(' ');
                out.push(c);
                k += c.len_utf8();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pointer each access text indexes for an array `levels` subscripts deep.
    fn check(text: &str, levels: usize, expected: Option<&str>) {
        let found = array_reference(text, levels).map(|(name, _)| name);
        assert_eq!(found.as_deref(), expected, "{text}");
    }

    #[test]
    fn the_indexed_pointer_of_an_access() {
        check("volume[cell_id1]", 1, Some("volume"));
        check("i_face_cells[face_id][0]", 2, Some("i_face_cells"));
        check("mq->bad_cell_flag[cell_id1]", 1, Some("mq->bad_cell_flag"));
        check("mq->bad_cell_flag", 1, Some("mq"));
        check("img->pixels[i].red", 1, Some("img->pixels"));
        check("(xd[i])", 1, Some("xd"));
        check("dam[cell_id1] += ssd", 1, Some("dam"));
        check("a[b[i]][j]", 1, Some("a[b[i]]"));
        // A macro's name, a call, a number: no reference that deep.
        check("CS_MAX", 1, None);
        check("f(x)[i]", 1, None);
        check("3[a]", 1, None);
        check("p", 1, None);
        check("c.data", 0, None);
    }

    #[test]
    fn device_references_take_the_longest_path() {
        let p = |name: &str| Parameter {
            name: name.into(),
            nested: false,
            role: crate::model::Role::In,
            kind: crate::model::ParamKind::Array,
            c_type: Some("int *".into()),
            elem_bytes: Some(4),
            bytes: None,
            notes: Vec::new(),
            whole_object: None,
            storage: None,
            by_address: false,
            holds: None,
        };
        let (a, ai) = (p("A"), p("A->i"));
        let device = |n: &str| format!("d_{}", n.replace("->", "_"));
        assert_eq!(
            on_device(
                "A->i[i + 1] - A->i[i] + A[0] + BA[1] + s.A[2]",
                &[&a, &ai],
                &device
            ),
            "d_A_i[i + 1] - d_A_i[i] + d_A[0] + BA[1] + s.A[2]"
        );
    }
}
