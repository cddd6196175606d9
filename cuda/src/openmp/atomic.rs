//! Atomic statements of OpenMP ports: which directive an update statement of a reduction
//! takes (`atomic update`, `atomic write`, `atomic compare`), and the rewrite of a min/max
//! update (`x = MAX(x, e);`, `x = e > x ? e : x;`) into the one form `atomic compare`
//! accepts.

use crate::ctext::code_tokens;
use crate::minmax::{min_max_update, statement_end};

/// An update statement of a reduction that the port makes atomic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomicSite {
    /// Where the statement starts in the original file (1-based) and the text it starts
    /// with there, checked before editing.
    pub line: u32,
    pub col: u32,
    pub token: String,
    pub form: AtomicForm,
}

/// How a statement is made atomic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AtomicForm {
    /// `x op= e;`, `x++;`, `x = x + e;`: `#pragma omp atomic update` above it.
    Update,
    /// `flag = constant;` (a `=` reduction): `#pragma omp atomic write` above it, so the
    /// threads' stores of the same value are not a data race.
    Write,
    /// `x = max(x, e);` in any spelling the analysis recognised as a maximum (minimum): the
    /// statement becomes `{ T v = (e); #pragma omp atomic compare  if (v > x) { x = v; } }`,
    /// the conditional-update form of OpenMP 5.1.
    Compare { max: bool, c_type: String },
}

impl AtomicForm {
    /// The directive put above a statement that stays as it is.
    pub fn directive(&self) -> Option<&'static str> {
        match self {
            AtomicForm::Update => Some("#pragma omp atomic update"),
            AtomicForm::Write => Some("#pragma omp atomic write"),
            AtomicForm::Compare { .. } => None,
        }
    }
}

/// A min/max update statement found in the original text and its replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareRewrite {
    /// The 0-based line of the statement's `;`.
    pub last_line: usize,
    /// Lines `at..=last_line` as they become.
    pub replacement: String,
}

/// The temporary holding the compared value; the block it lives in keeps it from meeting
/// a name of the program's.
const VALUE: &str = "ww_atomic_value";

/// Rewrites the statement that starts at column `col0` of line `at` of `lines` (an
/// assignment of the reduction's target, whose right side the analysis recognised as a
/// maximum (minimum) of the target and another value) into the `atomic compare` form.
/// `Err` says why the statement's text has no shape that can be taken apart.
pub fn compare_rewrite(
    lines: &[String],
    at: usize,
    col0: usize,
    max: bool,
    c_type: &str,
) -> Result<CompareRewrite, String> {
    // The statement may continue over several lines (`x = CS_MAX(x,\n e);`).
    let first = lines.get(at).ok_or("no such line")?;
    let head = first.get(..col0).ok_or("no such column")?;
    let mut text = first[col0..].to_string();
    let mut last = at;
    let found_end = |t: &str| statement_end(t, &code_tokens(t)).is_some();
    while !found_end(&text) {
        last += 1;
        match lines.get(last) {
            Some(l) if last - at < 40 => text.push_str(l),
            _ => return Err("its `;` was not found".into()),
        }
    }
    let update = min_max_update(&text)?;
    let value_text = &text[update.value.clone()];
    let target = &text[update.target.clone()];
    let after = &text[update.end..];
    let indent: String = first
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let ordop = if max { ">" } else { "<" };
    let replacement = format!(
        "{head}{{ {c_type} {VALUE} = ({value_text});\n{indent}#pragma omp atomic compare\n{indent}if ({VALUE} {ordop} {target}) {{ {target} = {VALUE}; }} }}{after}"
    );
    let replacement = if replacement.ends_with('\n') || last + 1 == lines.len() {
        replacement
    } else {
        format!("{replacement}\n")
    };
    Ok(CompareRewrite {
        last_line: last,
        replacement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(text: &str, col0: usize, max: bool) -> Result<String, String> {
        let lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
        let r = compare_rewrite(&lines, 0, col0, max, "double")?;
        Ok(format!(
            "{}{}",
            r.replacement,
            lines[r.last_line + 1..].concat()
        ))
    }

    #[test]
    fn a_macro_of_two_arguments_gives_the_other_one() {
        assert_eq!(
            rewrite("    m[c[i]] = CS_MAX(m[c[i]],\n        v[i] * 2);\nnext;\n", 4, true).unwrap(),
            "    { double ww_atomic_value = (v[i] * 2);\n    #pragma omp atomic compare\n    if (ww_atomic_value > m[c[i]]) { m[c[i]] = ww_atomic_value; } }\nnext;\n"
        );
        // The target second, parenthesized, and code after the statement on its line.
        assert_eq!(
            rewrite("  if (k) x = fmin(e, (x)); y = 1;\n", 9, false).unwrap(),
            "  if (k) { double ww_atomic_value = (e);\n  #pragma omp atomic compare\n  if (ww_atomic_value < x) { x = ww_atomic_value; } } y = 1;\n"
        );
    }

    #[test]
    fn a_conditional_gives_the_operand_that_is_not_the_target() {
        for text in [
            "*r = c < *r ? c : *r;\n",
            "*r = (*r > c) ? *r : c;\n",
            "*r = ((c) <= *r ? (c) : *r);\n",
        ] {
            let out = rewrite(text, 0, false).unwrap();
            assert!(out.contains("ww_atomic_value = (c)"), "{text}: {out}");
            assert!(
                out.contains("if (ww_atomic_value < *r) { *r = ww_atomic_value; }"),
                "{out}"
            );
        }
    }

    #[test]
    fn other_shapes_are_refused_with_a_reason() {
        for (text, why) in [
            ("x = x + 1;\n", "is not written"),
            ("x = MAX3(x, a, b);\n", "is not written"),
            ("x = MAX(x, x * 2);\n", "reads `x` itself"),
            ("x = c < y ? c : x;\n", "is not written"),
            ("x += 1;\n", "not an assignment"),
            ("x = MAX(x, 1)\n", "`;` was not found"),
        ] {
            let err = rewrite(text, 0, true).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
