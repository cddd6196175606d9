//! The report's legend of values: each name the presentation qualifies by a place (`m@1052`,
//! `i@f:77@?1`, `x@?2`) is written as a C identifier (`m_1052`) that the loop's `names`
//! list defines, so that every expression of a written report reads as C.
//!
//! Within warpwise a value's name is its qualified form (the profile records it, the port
//! planners and `instantiate` read it); the legend is applied where a report is written
//! ([`name_values`]) and undone where a report file is read back ([`restore`]), so the two
//! meet in one name per value either way (docs/report-format.md, "Names").

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{Induction, LoopReport, NamedValue, Reason, ValuePlace};
use crate::present::{fields_mut, Field};
use crate::value_name::{names_in, ValueName};

/// Writes every place-qualified name of `report` as the identifier its legend entry
/// defines, and fills `report.names` with the entries, in order of first use.
pub fn name_values(report: &mut LoopReport) {
    let mut texts: Vec<String> = Vec::new();
    each_text(report, &mut |t| texts.push(t.to_string()));
    let callees: BTreeSet<&str> = report
        .calls
        .iter()
        .flat_map(|c| std::iter::once(&c.name).chain(&c.callees))
        .map(String::as_str)
        .collect();
    let mut legend = Legend::of(texts.iter().map(String::as_str), &|f| callees.contains(f));
    if legend.entries.is_empty() {
        return;
    }
    legend.type_entries(&report.value_types.0);
    rename_all(report, &|t| legend.rename(t));
    report.names = legend.entries;
}

/// The legend of a set of texts: an identifier for each place-qualified name they hold.
#[derive(Debug)]
pub struct Legend {
    by_token: HashMap<String, String>,
    /// The entries, in order of first use (a name used in another's variable first).
    pub entries: Vec<NamedValue>,
}

impl Legend {
    /// The legend of `texts`: each name no word of theirs, nor another entry's. `x@f` is a
    /// variable of the called function `f` where `is_callee(f)`, else, as `k@j`, the
    /// iteration number of the loop over `j`.
    pub fn of<'a>(
        texts: impl IntoIterator<Item = &'a str>,
        is_callee: &dyn Fn(&str) -> bool,
    ) -> Legend {
        let mut words = BTreeSet::new();
        let mut found: Vec<(String, ValueName)> = Vec::new();
        for t in texts {
            identifier_words(t, &mut words);
            collect(t, &mut found);
        }
        let mut legend = Legend {
            by_token: HashMap::new(),
            entries: Vec::new(),
        };
        for (token, q) in found {
            if legend.by_token.contains_key(&token) {
                continue;
            }
            let Some(q) = q.settle(is_callee) else {
                continue;
            };
            let name = fresh_name(&q, &words);
            words.insert(name.clone());
            legend.by_token.insert(token, name.clone());
            let variable = legend.rename(&q.variable);
            legend.entries.push(NamedValue {
                is: q.place.describe(&variable),
                name,
                variable,
                place: q.place,
                c_type: None,
            });
        }
        legend
    }

    /// Gives each entry the C type `types` holds for the qualified name it stands for.
    pub fn type_entries(&mut self, types: &BTreeMap<String, String>) {
        for (token, name) in &self.by_token {
            let Some(c_type) = types.get(token) else {
                continue;
            };
            if let Some(entry) = self.entries.iter_mut().find(|e| e.name == *name) {
                entry.c_type = Some(c_type.clone());
            }
        }
    }

    /// `text` with each place-qualified name written as its entry's identifier.
    pub fn rename(&self, text: &str) -> String {
        if !text.contains('@') {
            return text.to_string();
        }
        rewrite(text, &|token| self.by_token.get(token).cloned())
    }
}

/// What each entry of `names` that `text` uses stands for, in the legend's order:
/// `` `n_12` is the value of `n` from line 12 ``; a text shown apart from its report (a
/// recipe, a SARIF message) ends with these.
pub fn said_in<'a>(names: impl IntoIterator<Item = &'a NamedValue>, text: &str) -> Vec<String> {
    names
        .into_iter()
        .filter(|v| has_word(text, &v.name))
        .map(|v| format!("`{}` is {}", v.name, v.is))
        .collect()
}

/// Whether `text` holds `word` as a whole identifier.
pub(crate) fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// The identifier a legend writes for the qualified name `qualified` (`n@12`: `n_12`) where
/// no other word of its report takes it; `None` for a name without a place.
pub fn identifier(qualified: &str) -> Option<String> {
    let q = ValueName::parse(qualified)?.settle(&|_| true)?;
    Some(fresh_name(&q, &BTreeSet::new()))
}

/// Undoes [`name_values`] on a report read from a file: each legend name becomes the
/// qualified name it stands for, and the legend is emptied.
pub fn restore(report: &mut LoopReport) {
    if report.names.is_empty() {
        return;
    }
    let by_name = reading(&std::mem::take(&mut report.names));
    rename_all(report, &|t| replace_words(t, &by_name));
}

/// Undoes [`name_values`] on a loop's induction read apart from the rest of its report
/// (with the legend `names` of that report).
pub fn restore_induction(induction: &mut Induction, values: &[NamedValue]) {
    if values.is_empty() {
        return;
    }
    let by_name = reading(values);
    induction.var = replace_words(&induction.var, &by_name);
    let rename = |t: &str| replace_words(t, &by_name);
    for q in [
        &mut induction.lower,
        &mut induction.upper,
        &mut induction.step,
        &mut induction.trip_count,
    ] {
        q.rename(rename, rename);
    }
}

/// Each legend name with the qualified name it stands for. An entry's variable may name
/// an earlier entry (`a[i_12]`): the legend lists the names a variable holds before it.
fn reading(values: &[NamedValue]) -> HashMap<String, String> {
    let mut by_name: HashMap<String, String> = HashMap::new();
    for v in values {
        let variable = replace_words(&v.variable, &by_name);
        let name = ValueName {
            variable,
            place: v.place.clone(),
        };
        by_name.insert(v.name.clone(), name.to_string());
    }
    by_name
}

/// Calls `f` on every text of `report` that may name a value: its fields in the loop's
/// terms, the witnesses' variables, the callees' effects.
fn each_text(report: &mut LoopReport, f: &mut dyn FnMut(&str)) {
    for (_, field) in fields_mut(report) {
        match field {
            Field::Text(t) => f(t),
            Field::Quantity(q) => f(q.text()),
        }
    }
    for r in &report.reasons {
        each_witness_key(r, f);
    }
    for c in &report.calls {
        c.effects.iter().for_each(|e| f(e));
    }
}

fn each_witness_key(reason: &Reason, f: &mut dyn FnMut(&str)) {
    if let Some(w) = &reason.witness {
        for map in [&w.values, &w.first.iteration, &w.second.iteration] {
            map.keys().for_each(|k| f(k));
        }
    }
    for r in &reason.instances {
        each_witness_key(r, f);
    }
}

/// Rewrites every text `each_text` visits by `rename`, the quantities' expressions with
/// their texts.
fn rename_all(report: &mut LoopReport, rename: &dyn Fn(&str) -> String) {
    for (_, field) in fields_mut(report) {
        match field {
            Field::Text(t) => *t = rename(t),
            Field::Quantity(q) => q.rename(rename, rename),
        }
    }
    for r in report.reasons.iter_mut() {
        rename_witness_keys(r, rename);
    }
    for c in report.calls.iter_mut() {
        for e in c.effects.iter_mut() {
            *e = rename(e);
        }
    }
}

fn rename_witness_keys(reason: &mut Reason, rename: &dyn Fn(&str) -> String) {
    if let Some(w) = reason.witness.as_mut() {
        for map in [
            &mut w.values,
            &mut w.first.iteration,
            &mut w.second.iteration,
        ] {
            let renamed: BTreeMap<String, i64> = std::mem::take(map)
                .into_iter()
                .map(|(k, v)| (rename(&k), v))
                .collect();
            *map = renamed;
        }
    }
    for r in reason.instances.iter_mut() {
        rename_witness_keys(r, rename);
    }
}

/// The qualified names of `text`, outermost first where one holds another
/// (`a[i@12]@14`), appended to `out` with their token text.
fn collect(text: &str, out: &mut Vec<(String, ValueName)>) {
    for o in names_in(text) {
        // A qualified name inside the variable of another gets its own entry first.
        collect(&o.name.variable, out);
        out.push((text[o.start..o.end].to_string(), o.name));
    }
}

/// `text` with each outermost qualified name replaced by `name(token)` where it gives one.
fn rewrite(text: &str, name: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for o in names_in(text) {
        if let Some(n) = name(&text[o.start..o.end]) {
            out.push_str(&text[last..o.start]);
            out.push_str(&n);
            last = o.end;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A C identifier for a qualified name: the variable's characters (`c->n` as `c_n`) and
/// the place (`_1052`, `_1052_5`, `_v2`, `_l12`, `_g2`, `_f_77_v1`), made unique against
/// `taken` by a trailing count.
fn fresh_name(q: &ValueName, taken: &BTreeSet<String>) -> String {
    let mut stem = String::new();
    for c in q.variable.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            stem.push(c);
        } else if !stem.is_empty() && !stem.ends_with('_') {
            stem.push('_');
        }
    }
    let stem = stem.trim_end_matches('_');
    let place = match &q.place {
        ValuePlace::Iteration => return unique(format!("k_{stem}"), taken),
        ValuePlace::At {
            line,
            column,
            ordinal,
        } => {
            let column = column.map(|c| format!("_{c}")).unwrap_or_default();
            let ordinal = ordinal.map(|o| format!("_v{o}")).unwrap_or_default();
            format!("_{line}{column}{ordinal}")
        }
        ValuePlace::Unplaced { ordinal } => format!("_v{ordinal}"),
        ValuePlace::Before { line } => format!("_l{line}"),
        ValuePlace::Global { ordinal } => format!("_g{ordinal}"),
        ValuePlace::Callee {
            function,
            line,
            ordinal,
        } => {
            let line = line.map(|l| format!("_{l}")).unwrap_or_default();
            let ordinal = ordinal.map(|o| format!("_v{o}")).unwrap_or_default();
            format!("_{function}{line}{ordinal}")
        }
    };
    unique(format!("{stem}{place}"), taken)
}

/// `name`, or with the first count after it that makes it no member of `taken`.
fn unique(name: String, taken: &BTreeSet<String>) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (2..)
        .map(|k| format!("{name}_{k}"))
        .find(|n| !taken.contains(n))
        .unwrap_or(name)
}

impl ValuePlace {
    /// What the value of `variable` this place names is, in words.
    fn describe(&self, variable: &str) -> String {
        match self {
            ValuePlace::Iteration => format!(
                "the iteration number of the loop over `{variable}` inside each thread, the same in every thread"
            ),
            ValuePlace::At { line, column, ordinal } => {
                let column = column.map(|c| format!(", column {c}")).unwrap_or_default();
                let ordinal = ordinal
                    .map(|o| format!(" (the {} of the values computed there)", ordinal_word(o)))
                    .unwrap_or_default();
                format!("the value of `{variable}` from line {line}{column}{ordinal}")
            }
            ValuePlace::Unplaced { ordinal } => format!(
                "a value of `{variable}` whose place in the source is not known (the {} such)",
                ordinal_word(*ordinal)
            ),
            ValuePlace::Before { line } => format!(
                "the value `{variable}` had at line {line}, which it no longer holds where the loop starts"
            ),
            ValuePlace::Global { ordinal } => format!(
                "the file-scope `{variable}` of another file (the {} of that name)",
                ordinal_word(*ordinal)
            ),
            ValuePlace::Callee { function, line, ordinal } => {
                let call = line
                    .map(|l| format!(" in the call at line {l}"))
                    .unwrap_or_default();
                let ordinal = ordinal
                    .map(|o| format!(" (the {} of its values)", ordinal_word(o)))
                    .unwrap_or_default();
                format!("`{variable}` of the called function `{function}`{call}{ordinal}")
            }
        }
    }
}

fn ordinal_word(k: u32) -> String {
    let suffix = match (k % 10, k % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// The identifiers of `text` (words that start with a letter or `_`), added to `out`.
fn identifier_words(text: &str, out: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            out.insert(w.to_string());
        }
    }
}

/// `text` with each whole word that `by` names replaced (a legend name is no other word
/// of its report, so every occurrence is the value).
fn replace_words(text: &str, by: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(by.get(&word).map_or(word.as_str(), String::as_str));
        word.clear();
        out.push(c);
    }
    out.push_str(by.get(&word).map_or(word.as_str(), String::as_str));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identifiers `text`'s qualified names become, with what each stands for; and
    /// reading them back, as [`restore`] does, gives the text again.
    fn check(text: &str, written: &str, entries: &[(&str, &str)]) {
        let legend = Legend::of([text], &|f| ["f", "g", "h", "get_dm"].contains(&f));
        let out = legend.rename(text);
        assert_eq!(out, written, "{text}");
        let described: Vec<(&str, &str)> = legend
            .entries
            .iter()
            .map(|v| (v.name.as_str(), v.is.as_str()))
            .collect();
        assert_eq!(described, entries, "{text}");
        assert_eq!(
            replace_words(&out, &reading(&legend.entries)),
            text,
            "{out}"
        );
    }

    #[test]
    fn a_value_computed_at_a_line_is_named_by_the_line() {
        check(
            "4*i - 4*j@4913 + 4*j + 4",
            "4*i - 4*j_4913 + 4*j + 4",
            &[("j_4913", "the value of `j` from line 4913")],
        );
        check(
            "x@12:5 + x@12?2",
            "x_12_5 + x_12_v2",
            &[
                ("x_12_5", "the value of `x` from line 12, column 5"),
                (
                    "x_12_v2",
                    "the value of `x` from line 12 (the 2nd of the values computed there)",
                ),
            ],
        );
    }

    #[test]
    fn paths_and_members_make_identifiers() {
        check(
            "8*ma->g_rc_id@?1 + _fill_types[f_id]@860 + SD@684.max_num_nucs + (*im)@?2",
            "8*ma_g_rc_id_v1 + _fill_types_f_id_860 + SD_684.max_num_nucs + im_v2",
            &[
                (
                    "ma_g_rc_id_v1",
                    "a value of `ma->g_rc_id` whose place in the source is not known (the 1st such)",
                ),
                ("_fill_types_f_id_860", "the value of `_fill_types[f_id]` from line 860"),
                ("SD_684", "the value of `SD` from line 684"),
                (
                    "im_v2",
                    "a value of `(*im)` whose place in the source is not known (the 2nd such)",
                ),
            ],
        );
    }

    #[test]
    fn callee_globals_and_earlier_values() {
        check(
            "i@g:1077@?1 + k@get_dm:118 + j@h@?3 + n@L4 + t@global + t@global2",
            "i_g_1077_v1 + k_get_dm_118 + j_h_v3 + n_l4 + t_g1 + t_g2",
            &[
                ("i_g_1077_v1", "`i` of the called function `g` in the call at line 1077 (the 1st of its values)"),
                ("k_get_dm_118", "`k` of the called function `get_dm` in the call at line 118"),
                ("j_h_v3", "`j` of the called function `h` (the 3rd of its values)"),
                ("n_l4", "the value `n` had at line 4, which it no longer holds where the loop starts"),
                ("t_g1", "the file-scope `t` of another file (the 1st of that name)"),
                ("t_g2", "the file-scope `t` of another file (the 2nd of that name)"),
            ],
        );
    }

    #[test]
    fn nested_names_and_clashes() {
        check(
            "a[i@12]@14 + i@12",
            "a_i_12_14 + i_12",
            &[
                ("i_12", "the value of `i` from line 12"),
                ("a_i_12_14", "the value of `a[i_12]` from line 14"),
            ],
        );
        // A word of the text is never a legend name.
        check(
            "m_5 + m@5",
            "m_5 + m_5_2",
            &[("m_5_2", "the value of `m` from line 5")],
        );
    }

    #[test]
    fn a_loops_iteration_number_and_a_callees_variable() {
        check(
            "8*k@j + x@f",
            "8*k_j + x_f",
            &[
                (
                    "k_j",
                    "the iteration number of the loop over `j` inside each thread, the same in every thread",
                ),
                ("x_f", "`x` of the called function `f`"),
            ],
        );
    }

    #[test]
    fn one_name_alone_has_its_identifier() {
        assert_eq!(identifier("n@12").as_deref(), Some("n_12"));
        assert_eq!(identifier("c->n@?2").as_deref(), Some("c_n_v2"));
        assert_eq!(identifier("n"), None);
        assert_eq!(identifier("n@12 + 1"), None);
    }

    #[test]
    fn a_name_whose_head_starts_inside_another_is_text() {
        check(
            "_@global->@f:",
            "_g1->@f:",
            &[(
                "_g1",
                "the file-scope `_` of another file (the 1st of that name)",
            )],
        );
    }

    #[test]
    fn other_at_signs_are_text() {
        for text in [
            "profile@end",
            "n@j + 1",
            "1_@1?",
            "_@global1:",
            "x@012",
            "y@L07",
            "\"user@1\"",
            "@3 and x@",
            "a@12abc",
            "`p` (line 12)",
        ] {
            check(text, text, &[]);
        }
    }

    proptest::proptest! {
        /// Any text (qualifiers in every shape, brackets open or closed, literals, words
        /// that look like legend names): naming never panics, leaves no qualified name it
        /// settled, and reading the names back gives the text again.
        #[test]
        fn naming_and_reading_back_is_the_identity(
            text in "([a-c]|@|\\?|[1-2]|:|->|\\[|\\]|\\(|\\)|\"| |\\*|_|_v|f|L|global){0,32}"
        ) {
            let legend = Legend::of([text.as_str()], &|f| f == "f");
            let named = legend.rename(&text);
            for v in &legend.entries {
                proptest::prop_assert!(!v.name.is_empty() && !v.name.contains('@'));
            }
            proptest::prop_assert_eq!(replace_words(&named, &reading(&legend.entries)), text);
        }
    }

    proptest::proptest! {
        /// Qualified names beside words that read like their identifiers (`a@1` and `a_1`,
        /// `b@?2` and `b_v2`): every identifier is new, so reading back is the identity.
        #[test]
        fn identifiers_never_take_a_word_of_the_text(
            parts in proptest::collection::vec(("[ab]", 1u32..3, 0usize..4), 0..8)
        ) {
            let text: Vec<String> = parts
                .iter()
                .map(|(x, n, form)| match form {
                    0 => format!("{x}@{n}"),
                    1 => format!("{x}_{n}"),
                    2 => format!("{x}@?{n}"),
                    _ => format!("{x}_v{n}"),
                })
                .collect();
            let text = text.join(" + ");
            let legend = Legend::of([text.as_str()], &|_| false);
            let named = legend.rename(&text);
            proptest::prop_assert!(!named.contains('@'));
            proptest::prop_assert_eq!(replace_words(&named, &reading(&legend.entries)), text);
        }
    }
}
