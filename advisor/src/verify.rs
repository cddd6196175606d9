//! The report verifier: what every report must satisfy before a user reads it (no internal
//! names, expressions that parse back, mapping labels a reader can tell apart). Run on every
//! report in debug builds (`analyze`), and by the tests over the samples and PolyBench.

use std::collections::HashSet;

use crate::model::{LoopReport, ParamKind, Report};
use crate::present::{numbered_tokens, quantities_mut, texts_mut, witness_keys, Kind};

/// One broken rule, with the loop it was found in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub loop_id: frontend::loop_ref::LoopRef,
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.loop_id, self.what)
    }
}

/// Every problem of `report` (empty when it is well formed).
pub fn verify(report: &Report) -> Vec<Problem> {
    report.loops.iter().flat_map(verify_loop).collect()
}

/// Every problem of one loop's report.
pub fn verify_loop(report: &LoopReport) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut problem = |what: String| {
        out.push(Problem {
            loop_id: report.id.clone(),
            what,
        })
    };
    let mut copy = report.clone();
    for (_, text) in texts_mut(&mut copy) {
        if let Some(&(start, end)) = numbered_tokens(text).first() {
            problem(format!("internal name `{}` in `{text}`", &text[start..end]));
        }
    }
    for effect in report.calls.iter().flat_map(|c| &c.effects) {
        if let Some(&(start, end)) = numbered_tokens(effect).first() {
            problem(format!(
                "internal name `{}` in `{effect}`",
                &effect[start..end]
            ));
        }
    }
    for key in witness_keys(&report.reasons) {
        if !numbered_tokens(&key).is_empty() {
            problem(format!("internal name `{key}` in a witness"));
        }
    }
    // Every quantity reads back. Each distinct text is parsed once (a mapping table repeats
    // `1`, `32` and the same offsets per access: parsing every copy was 4% of phono3py's
    // `fc3.c`), and a plain number needs no parse.
    let mut seen: HashSet<&str> = HashSet::new();
    for text in quantities_mut(&mut copy).into_iter().map(|q| q.text()) {
        let number = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        if number || !seen.insert(text) {
            continue;
        }
        if let Err(e) = parses_back(text) {
            problem(format!("`{text}` does not parse back: {e}"));
        }
    }
    for quote in source_quotes(report) {
        if !whole_quote(quote) {
            problem(format!(
                "the source quote `{quote}` is not a whole piece of C"
            ));
        }
    }
    let mut parameters = HashSet::new();
    for p in &report.parameters {
        if !parameters.insert(&p.name) {
            problem(format!("two parameters named `{}`", p.name));
        }
        // A type is C or absent: no placeholder, no unbalanced declarator.
        if let Some(t) = &p.c_type {
            if t.contains('?') || !frontend::source_map::balanced(t) {
                problem(format!("`{}` has the type `{t}`, which is not C", p.name));
            }
        }
    }
    // A pointer holds an array the report lists as memory.
    for p in &report.parameters {
        let Some(h) = &p.holds else { continue };
        let array = report
            .parameters
            .iter()
            .any(|a| &a.name == h && a.kind != ParamKind::Scalar);
        if p.kind != ParamKind::Scalar || !array {
            problem(format!(
                "`{}` holds `{h}`, which is no array parameter of the loop",
                p.name
            ));
        }
    }
    let mut labels = HashSet::new();
    let mut texts = HashSet::new();
    for m in &report.mappings {
        let g = &m.mapping;
        if !labels.insert((&g.x, &g.x_loop, &g.y, &g.y_loop)) {
            problem(format!("two mappings labelled {g:?}"));
        }
        if !texts.insert((g.x_text(), g.y_text())) {
            problem(format!(
                "two mappings read as {} / {:?}",
                g.x_text(),
                g.y_text()
            ));
        }
    }
    out
}

/// The texts of `report` that quote the program (accesses, conditions): what a reader
/// looks for on the line the report gives.
fn source_quotes(report: &LoopReport) -> impl Iterator<Item = &str> {
    let reasons = report
        .reasons
        .iter()
        .flat_map(|r| std::iter::once(r).chain(&r.instances));
    let witnesses = reasons
        .filter_map(|r| r.witness.as_ref())
        .flat_map(|w| [w.first.access.as_str(), w.second.access.as_str()]);
    let evidence = report
        .needs_evidence
        .iter()
        .flat_map(|d| [d.first.text.as_str(), d.second.text.as_str()]);
    let branches = report.divergence.iter().map(|d| d.condition.as_str());
    witnesses.chain(evidence).chain(branches)
}

/// Whether a quote reads as C on its own: brackets balanced and no comma at either end (a
/// piece of a macro invocation's argument list is neither).
fn whole_quote(text: &str) -> bool {
    let text = text.trim();
    frontend::source_map::balanced(text) && !text.starts_with(',') && !text.ends_with(',')
}

/// The identifiers of `report`'s expressions that `is_source` does not know and that are
/// not documented builtins: what a report must not name (its names are the program's).
pub fn unknown_identifiers(report: &LoopReport, is_source: &dyn Fn(&str) -> bool) -> Vec<String> {
    // `or` separates the offsets of an access with several possible bases.
    const BUILTINS: [&str; 9] = [
        "or",
        "min",
        "max",
        "floor_div",
        "floor_mod",
        "block",
        "blockDim",
        "x",
        "y",
    ];
    let mut copy = report.clone();
    let mut unknown = Vec::new();
    for (kind, text) in texts_mut(&mut copy) {
        if kind == Kind::Prose {
            continue;
        }
        for name in roots(text) {
            if !BUILTINS.contains(&name) && !is_source(name) && !unknown.iter().any(|u| u == name) {
                unknown.push(name.to_string());
            }
        }
    }
    unknown
}

/// The first identifier of each name in `text` (`c` of `c->data[i]@12`), skipping members
/// after `.`/`->` and qualifiers after `@`.
fn roots(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        let after_member = k > 0 && (b[k - 1] == b'.' || b[k - 1] == b'@' || b[k - 1] == b'>');
        if (c.is_ascii_alphabetic() || c == b'_')
            && (k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_'))
        {
            let start = k;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            if !after_member {
                out.push(&text[start..k]);
            }
        } else {
            k += 1;
        }
    }
    out
}

/// Whether `text` is an expression the symbolic engine reads, once each name (a path such as
/// `c->data[i]`, a qualified `i@63`) stands for one variable.
/// An expression the engine cannot read (C's division by a variable, `n / factor`; a value
/// the analyses name by the program's own text, `(*factors)`, `8*(f(i, s))`) must still be
/// one C expression over names the report defines.
fn parses_back(text: &str) -> Result<(), String> {
    // A truncating conversion is written with its type (`(unsigned long)(x / d)`, see
    // `Function::truncations`): one word is enough for the cast to read as C.
    let text = text
        .replace("(unsigned ", "(")
        .replace("(signed ", "(")
        .replace("(long long)", "(long)");
    let masked = mask_names(&text);
    symbolic::parse_expr(&masked).map(|_| ()).or_else(|e| {
        if frontend::parse::is_c_expression(&masked) {
            Ok(())
        } else {
            Err(e.to_string())
        }
    })
}

/// `text` with each name replaced by `v`; function calls (`min(`) stay.
fn mask_names(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        // A qualifier after a parenthesized name (`(*factors)@L246`, see `stale`).
        if c == b'@' {
            k += 1;
            while k < b.len()
                && (b[k].is_ascii_alphanumeric() || matches!(b[k], b'_' | b'?' | b':'))
            {
                k += 1;
            }
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            let ch = text[k..].chars().next().unwrap_or(' ');
            out.push(ch);
            k += ch.len_utf8();
            continue;
        }
        let start = k;
        while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
            k += 1;
        }
        if b.get(k) == Some(&b'(') {
            out.push_str(&text[start..k]);
            continue;
        }
        // Members, subscripts and qualifiers continue the name.
        loop {
            match b.get(k) {
                Some(b'.') | Some(b'@') => {
                    k += 1;
                    while k < b.len()
                        && (b[k].is_ascii_alphanumeric() || matches!(b[k], b'_' | b'?' | b':'))
                    {
                        k += 1;
                    }
                }
                Some(b'-') if b.get(k + 1) == Some(&b'>') => {
                    k += 2;
                    while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                        k += 1;
                    }
                }
                Some(b'[') => {
                    let mut depth = 0;
                    while k < b.len() {
                        match b[k] {
                            b'[' => depth += 1,
                            b']' => depth -= 1,
                            _ => {}
                        }
                        k += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                }
                _ => break,
            }
        }
        out.push('v');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_holds_an_array_parameter() {
        let (_dir, unit) = crate::test_unit::unit(
            "typedef struct { int n; double *vol; } mesh_t;\n\
             void f(const mesh_t *m, double *out) {\n\
               const double *vol = m->vol;\n\
               for (int i = 0; i < m->n; i++) out[i] = vol[i];\n\
             }\n",
        );
        let mut report = crate::analyze::analyze_unit(&unit, &Default::default())
            .into_iter()
            .next()
            .expect("one loop");
        assert!(verify_loop(&report).is_empty(), "{report:#?}");
        let vol = report
            .parameters
            .iter_mut()
            .find(|p| p.name == "vol")
            .unwrap();
        assert_eq!(vol.holds.as_deref(), Some("m->vol"));
        vol.holds = Some("out_of_sight".into());
        let what: Vec<String> = verify_loop(&report).into_iter().map(|p| p.what).collect();
        assert_eq!(
            what,
            ["`vol` holds `out_of_sight`, which is no array parameter of the loop"]
        );
    }

    #[test]
    fn masked_names_parse() {
        assert_eq!(
            mask_names("8*c->data[i + 1]@12 - min(n@?1, 3)"),
            "8*v - min(v, 3)"
        );
        assert!(parses_back("4*row_index[i + 1] - 4*i@63:18 + floor_div(n, 2)").is_ok());
        assert!(parses_back("8*i#2").is_err());
        assert!(parses_back("32*#k_ii").is_err());
        // C the engine does not read, over names of the program.
        assert!(parses_back("(n - 1) / factor + i@12:4 - k@j").is_ok());
        assert!(parses_back("8*(getNucleotide(i - 1, seq)) + (*factors)").is_ok());
        assert!(parses_back("4*(a +").is_err());
        assert!(parses_back("4*S->diag->j[j]@815 - 4*(A->n / t)*k").is_ok());
        assert!(parses_back("(*factors)@L246 - 1").is_ok());
        assert!(parses_back("2568*((unsigned long)((max_tau - min_tau) / delta_tau)) + 2").is_ok());
    }

    #[test]
    fn a_quote_is_whole_when_balanced_and_not_cut_at_a_comma() {
        for whole in [
            "a[i]",
            "C_ADDTO( Fout[ k ] ,t)",
            "printf(\"(%d\", x)",
            "c == ')'",
        ] {
            assert!(whole_quote(whole), "{whole}");
        }
        for cut in [
            "( Fout[ k ] ,",
            ",",
            "BFT_MALLOC(sec_name,",
            ", n_vals, cs_gnum_t)",
            "j]",
        ] {
            assert!(!whole_quote(cut), "{cut}");
        }
    }

    #[test]
    fn each_distinct_text_is_checked_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.c");
        std::fs::write(
            &file,
            "void k(double *a, const double *b, int n)\n\
             { for (int i = 0; i < n; i++) a[i] = b[i]; }\n",
        )
        .unwrap();
        let input = frontend::preprocess::TranslationUnitInput::new(file);
        let unit = frontend::unit::load_unit(&input).unwrap();
        let mut reports = crate::analyze::analyze_unit(&unit, &crate::analyze::Filter::default());
        let report = &mut reports[0];
        assert!(verify_loop(report).is_empty(), "{report:#?}");
        // The same broken text in two fields: one problem, naming it.
        let induction = report.induction.as_mut().unwrap();
        induction.upper = crate::model::Quantity::c_text("4*(n +");
        induction.trip_count = crate::model::Quantity::c_text("4*(n +");
        let problems: Vec<String> = verify_loop(report).into_iter().map(|p| p.what).collect();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(problems[0].contains("`4*(n +` does not parse back"));
    }

    #[test]
    fn roots_skip_members_and_qualifiers() {
        assert_eq!(
            roots("8*c->data[k] + s.n@12 + i@set_g"),
            vec!["c", "k", "s", "i"]
        );
    }
}
