//! Report text as the user reads it: the analyses' numbered symbols (`i#3`,
//! `A->rownnz[i]#12`) become source names, decided once per loop over every text of its
//! report (docs/report-format.md, "Names").
//!
//! The analyses give each value of a source variable its own symbol; a report names the
//! variable. Within one loop's report a value is shown by its source name when it is the
//! only value of that name there, and qualified by where the program computes it otherwise:
//! `i@63` (line 63), `i@63:18` (line and column, when two values share a line). A value the
//! analyses cannot place gets an ordinal, `i@?2`: never SSA numbering, never a name that
//! collides with another value's.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{LoopReport, Quantity, Reason};

/// Where the program computes the value a symbol stands for, `(line, column)`; `None` when
/// the symbol is not one of the loop's function (a callee's variable) or has no position.
pub type Locate<'a> = dyn Fn(&str) -> Option<(u32, u32)> + 'a;

/// Whether a name the report prints unnumbered is a memory object's symbol (a global, a
/// local whose address is taken): the variable's storage, not a value it holds.
pub type IsObject<'a> = dyn Fn(&str) -> bool + 'a;

/// Whether, at a line of the loop's file, the source name of a numbered symbol means just
/// that value: a loop's variable read inside its loop, which nothing else there names.
pub type InScope<'a> = dyn Fn(&str, u32) -> bool + 'a;

/// For a numbered symbol that is a load reading what its memory holds where the loop
/// starts, a key equal for two such loads exactly when they read one address: one value,
/// shown by one name. `None` for every other symbol.
pub type EntryValue<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Whether a numbered symbol is the value its source name holds where the loop starts
/// (`jj@6549`, the value a previous loop leaves in the counter this one continues).
pub type AtStart<'a> = dyn Fn(&str) -> bool + 'a;

/// The C type of the value a numbered symbol stands for (`int` for `n#2`), where the
/// analyses know it and it is one C names in a declaration (a scalar or a pointer).
pub type TypeOf<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// How a loop's symbols are placed in its source (see [`present`]).
pub struct Places<'a> {
    pub locate: &'a Locate<'a>,
    pub is_object: &'a IsObject<'a>,
    pub in_scope: &'a InScope<'a>,
    pub entry_value: &'a EntryValue<'a>,
    pub at_start: &'a AtStart<'a>,
    pub type_of: &'a TypeOf<'a>,
}

/// Renames every numbered symbol in `report`'s texts (see the module documentation).
pub fn present(report: &mut LoopReport, places: &Places) {
    let (locate, is_object) = (places.locate, places.is_object);
    let mut seen: Vec<String> = texts_mut(report)
        .into_iter()
        .filter(|(_, t)| t.contains('#'))
        .map(|(_, t)| t.clone())
        .collect();
    let keys = witness_keys(&report.reasons);
    if seen.is_empty() && !keys.iter().any(|k| k.contains('#')) {
        forget_read_at(&mut report.reasons);
        present_effects(report);
        return;
    }
    // The plain identifiers of the expressions: a value shown unqualified (`n`) makes
    // another value of that variable (`n#2`) need a qualifier. Prose is left out: it quotes
    // the source (`x[i]`), whose names are not values. Nor is the storage a base names: the
    // object `n` (a global read in the loop, an access's base) and the value `n#2` loaded
    // from it are one variable to a reader, and the port reads the value where the loop
    // starts. Unless that value is a parameter too (the memory a global pointer points
    // to): then two parameters would read the same, and the value keeps its qualifier.
    let mut plain_params: HashMap<String, usize> = HashMap::new();
    for p in &report.parameters {
        *plain_params.entry(without_numbers(&p.name)).or_default() += 1;
    }
    let mut plain = BTreeSet::new();
    for (kind, t) in texts_mut(report) {
        let storage = kind == Kind::Storage
            && is_object(t)
            && plain_params.get(t.as_str()).is_none_or(|n| *n <= 1);
        if matches!(kind, Kind::Expression | Kind::Storage) && !storage {
            // A pointer held in memory heading a path (`glob->data`, `glob[k]`: a value
            // loaded through the global pointer `glob`) names the value the pointer holds,
            // not the object: it is no plain value of its own beside the loads of it the
            // report numbers.
            // A path's head is no plain value either: the path is one symbol, loaded
            // through the value the source reads there (`cpl->vect` through the `cpl` of
            // line 12), whatever the other texts call `cpl`.
            for (start, end) in plain_identifier_spans(t) {
                let name = &t[start..end];
                let heads_path = t[end..].starts_with("->") || t[end..].starts_with('[');
                if !heads_path {
                    plain.insert(name.to_string());
                }
            }
        }
    }
    for key in &keys {
        plain_identifiers(key, &mut plain);
    }
    seen.extend(keys);
    // Two parameters stay two names: loads of one value that are each a parameter are
    // merged where the parameters are decided, not here.
    let parameters: BTreeSet<&str> = report.parameters.iter().map(|p| p.name.as_str()).collect();
    let entry_value = |token: &str| {
        (!parameters.contains(token))
            .then(|| (places.entry_value)(token))
            .flatten()
    };
    let names = Names::decide(&seen, &plain, locate, &entry_value);
    record_types(report, &names, places);
    // Names a port writes as C identifiers (the loop's variable, parameters, private
    // variables, reduction targets, counters) are the source's, never qualified, except
    // where two parameters would then read the same (a global pointer and the value
    // loaded from it): those keep their qualifiers, and a port refuses them by name.
    if let Some(i) = report.induction.as_mut() {
        i.var = without_numbers(&i.var);
    }
    let clashing = |p: &crate::model::Parameter| {
        p.name.contains('#') && plain_params[&without_numbers(&p.name)] > 1
    };
    let mut qualified_count: HashMap<String, usize> = HashMap::new();
    for p in report.parameters.iter().filter(|p| clashing(p)) {
        *qualified_count.entry(names.qualify(&p.name)).or_default() += 1;
    }
    let mut taken: HashMap<String, usize> = HashMap::new();
    for p in report.parameters.iter_mut() {
        if clashing(p) {
            let qualified = names.qualify(&p.name);
            // A value the analyses cannot place, or two values one place computes (the
            // loads of one macro expansion), are told apart by an ordinal.
            let n = taken.entry(qualified.clone()).or_default();
            *n += 1;
            p.name = if qualified.contains('@') && qualified_count[&qualified] == 1 {
                qualified
            } else if qualified.contains('@') {
                format!("{qualified}?{n}")
            } else {
                format!("{qualified}@?{n}")
            };
        }
    }
    present_at_places(report, &names, places);
    present_pair_messages(&mut report.reasons, &names, places);
    // Quantities first, each renamed whole (its expression with its text); their texts then
    // hold no numbered name, and the loop below passes them by.
    let rewrite = |t: &str| {
        if t.contains('#') {
            names.rewrite(t)
        } else {
            t.to_string()
        }
    };
    for q in quantities_mut(report) {
        q.rename(rewrite, rewrite);
    }
    for (kind, t) in texts_mut(report) {
        if t.contains('#') {
            *t = match kind {
                Kind::Source => without_numbers(t),
                _ => names.rewrite(t),
            };
        }
    }
    for r in report.reasons.iter_mut() {
        rename_witness_keys(r, &names);
    }
    present_effects(report);
}

/// Records the C type of each value the report names by a place (`n@11`: `int`), for the
/// legend to say ([`crate::model::NamedValue::c_type`]).
fn record_types(report: &mut LoopReport, names: &Names, places: &Places) {
    for (token, name) in names.qualified.iter().chain(&names.shown) {
        if !name.contains('@') || report.value_types.0.contains_key(name) {
            continue;
        }
        if let Some(c_type) = (places.type_of)(token) {
            report.value_types.0.insert(name.clone(), c_type);
        }
    }
}

/// The texts read at one place of the source, an access's line or a mapping's loop, name a
/// loop's variable there as the source does: `8*i` beside `rhs[c][i]` (line 290) for the `i`
/// of the loop at line 289, though the loop's other texts tell apart the `i`s of four loops
/// (`i@289`, `i@295`).
fn present_at_places(report: &mut LoopReport, names: &Names, places: &Places) {
    let at_loop = |m: &mut crate::model::GridMapping| {
        let x_line = m.x_loop.as_ref().map_or(0, |l| l.line);
        rename_at(vec![&mut m.x], Vec::new(), x_line, names, places);
        if let (Some(y), Some(y_loop)) = (m.y.as_mut(), m.y_loop.as_ref()) {
            rename_at(vec![y], Vec::new(), y_loop.line, names, places);
        }
    };
    // What holds for the whole loop (its bounds, trip count and sections) is read where it
    // starts, where no iteration's values exist: a name there is the variable as the loop
    // finds it (`lower: jj`, `8*jj + ...` for the counter a previous loop left in `jj`).
    let mut at_start: Vec<&mut Quantity> = Vec::new();
    if let Some(i) = report.induction.as_mut() {
        at_start.extend([&mut i.lower, &mut i.upper, &mut i.trip_count]);
    }
    for p in report.parameters.iter_mut() {
        if let Some(b) = p.bytes.as_mut() {
            at_start.extend([&mut b.lo, &mut b.hi, &mut b.size]);
        }
    }
    // Plain names keep what the whole report decided (the start of a path, `r->size`, is
    // the value the path was read through, whatever the variable holds at the start).
    rename_where(Vec::new(), at_start, places.at_start, false, names, places);
    for m in report.mappings.iter_mut() {
        at_loop(&mut m.mapping);
        for a in m.accesses.iter_mut() {
            let texts = a.assumptions.iter_mut().collect();
            let mut counts: Vec<&mut Quantity> = a.offset_bytes.forms_mut().collect();
            counts.extend(a.stride_bytes.iter_mut());
            counts.extend([&mut a.requests_per_warp, &mut a.sectors_per_warp]);
            counts.extend(a.min_requests_per_warp.iter_mut());
            counts.extend(a.unaligned_requests_per_warp.iter_mut());
            rename_at(texts, counts, a.line, names, places);
        }
    }
    if let Some(m) = report.recommended_mapping.as_mut() {
        at_loop(m);
    }
    if let Some(g) = report.mapping_gain.as_mut() {
        at_loop(&mut g.natural);
    }
}

/// A finding about two accesses reads its names at them: unprimed ones at the first
/// access's line, primed ones at the second's (`-16*ii' + 16*ii + 16*kk` for the `ii`s of
/// two loops, each the one its access's line sees). Every finding's lines are cleared.
fn present_pair_messages(reasons: &mut [Reason], names: &Names, places: &Places) {
    for r in reasons {
        if let Some((first, second)) = r.read_at.take() {
            if r.message.contains('#') && first != 0 && second != 0 {
                r.message = rename_pair(&r.message, (first, second), names, places);
            }
        }
        present_pair_messages(&mut r.instances, names, places);
    }
}

/// `text` renamed as [`present_pair_messages`] says; a name neither access's line means
/// by itself reads as in the whole report.
fn rename_pair(text: &str, lines: (u32, u32), names: &Names, places: &Places) -> String {
    let outer = outermost(numbered_tokens(text));
    let is_primed = |end: usize| text[end..].starts_with('\'');
    // A symbol inside a primed name (`row[i#3 + 1]#5'`) is its value at the second access too.
    let primed_at = |start: usize| {
        outer
            .iter()
            .find(|(s, e)| *s <= start && start < *e)
            .is_some_and(|(_, e)| is_primed(*e))
    };
    // A name inside a quoted phrase (`i#4 in f#2`) is the callee's, not a value here.
    let in_phrase = |start: usize, end: usize| {
        outer.iter().any(|(s, e)| {
            *s <= start && end <= *e && (*s, *e) != (start, end) && text[*s..*e].contains(' ')
        })
    };
    let mut versions: [BTreeMap<String, BTreeSet<String>>; 2] = Default::default();
    for (start, end) in numbered_tokens(text) {
        if in_phrase(start, end) {
            continue;
        }
        let token = names.value(&text[start..end]);
        let stem = names.rewrite(without_number(token));
        versions[usize::from(primed_at(start))]
            .entry(stem)
            .or_default()
            .insert(token.to_string());
    }
    // A plain name is a value too, read at the access its prime says.
    let mut plain: [BTreeSet<&str>; 2] = Default::default();
    for (start, end) in plain_identifier_spans(text) {
        plain[usize::from(is_primed(end))].insert(&text[start..end]);
    }
    let local: Vec<HashMap<String, String>> = versions
        .iter()
        .zip(&plain)
        .zip([lines.0, lines.1])
        .map(|((versions, plain), line)| {
            versions
                .iter()
                .filter(|(stem, tokens)| {
                    tokens.len() == 1 && is_identifier(stem) && !plain.contains(stem.as_str())
                })
                .filter_map(|(stem, tokens)| {
                    let token = tokens.first()?;
                    let qualified = names.shown.get(token).is_some_and(|s| s != stem);
                    (qualified && (places.in_scope)(token, line))
                        .then(|| (token.clone(), stem.clone()))
                })
                .collect()
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in outer {
        out.push_str(&text[at..start]);
        let local = &local[usize::from(is_primed(end))];
        // By the token itself: cut out of the text, a quoted phrase would read as a name.
        out.push_str(&names.show_with(&text[start..end], local));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Clears what only the presentation reads ([`Reason::read_at`]).
fn forget_read_at(reasons: &mut [Reason]) {
    for r in reasons {
        r.read_at = None;
        forget_read_at(&mut r.instances);
    }
}

/// Renames `texts` and `quantities`, all read at `line`: a symbol that is the only value of
/// its name among them, and that the name means at `line`, is shown plainly; a value shown
/// plainly in the whole report (its name's first value) is qualified where the name means
/// another value; every other symbol reads as in the whole report. A quantity is renamed
/// whole, its expression's variables as its text's names, so that the two stay in step.
fn rename_at(
    texts: Vec<&mut String>,
    quantities: Vec<&mut Quantity>,
    line: u32,
    names: &Names,
    places: &Places,
) {
    if line == 0 {
        return;
    }
    rename_where(
        texts,
        quantities,
        &|token| (places.in_scope)(token, line),
        true,
        names,
        places,
    );
}

/// Renames `texts` and `quantities` as [`rename_at`] says, with `means` saying which
/// numbered symbols their source names mean where they are read; a plain name is qualified
/// where it means another value only when `requalify`.
fn rename_where(
    mut texts: Vec<&mut String>,
    mut quantities: Vec<&mut Quantity>,
    means: &dyn Fn(&str) -> bool,
    requalify: bool,
    names: &Names,
    places: &Places,
) {
    let mut plain = BTreeSet::new();
    let mut versions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let read: Vec<&str> = texts
        .iter()
        .map(|t| t.as_str())
        .chain(quantities.iter().map(|q| q.text()))
        .collect();
    for t in read {
        plain_identifiers(t, &mut plain);
        for (start, end) in numbered_tokens(t) {
            let token = names.value(&t[start..end]);
            let stem = names.rewrite(without_number(token));
            versions.entry(stem).or_default().insert(token.to_string());
        }
    }
    let local: HashMap<String, String> = versions
        .iter()
        .filter(|(stem, tokens)| tokens.len() == 1 && is_identifier(stem) && !plain.contains(*stem))
        .filter_map(|(stem, tokens)| {
            let token = tokens.first()?;
            let qualified = names.shown.get(token).is_some_and(|s| s != stem);
            (qualified && means(token)).then(|| (token.clone(), stem.clone()))
        })
        .collect();
    let shadowed: HashMap<String, String> = plain
        .iter()
        .filter(|p| requalify && !versions.contains_key(*p) && !(places.is_object)(p))
        .filter_map(|p| {
            let place = (places.locate)(p).filter(|(l, _)| *l != 0)?;
            let other_meaning = names
                .shown
                .keys()
                .any(|t| without_number(t) == p && means(t));
            let qualified = format!("{p}@{}", place.0);
            let taken = names.shown.values().any(|s| *s == qualified);
            other_meaning.then(|| {
                let name = if taken {
                    format!("{p}@{}:{}", place.0, place.1)
                } else {
                    qualified
                };
                (p.clone(), name)
            })
        })
        .collect();
    // One rewriting of names, the same for a whole text and for one variable's name: it
    // replaces names one by one, each by what it reads as at `line`.
    let rename = |t: &str| {
        let mut t = if !local.is_empty() && t.contains('#') {
            names.rewrite_with(t, &local)
        } else {
            t.to_string()
        };
        for (p, name) in &shadowed {
            t = replace_plain(&t, p, name);
        }
        t
    };
    for t in texts.iter_mut() {
        **t = rename(t);
    }
    for q in quantities.iter_mut() {
        q.rename(rename, rename);
    }
}

/// `text` with the plain identifier `name` (as [`plain_identifiers`] finds it: not a member,
/// not in a subscript, not numbered) replaced by `by`.
fn replace_plain(text: &str, name: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in plain_identifier_spans(text) {
        if &text[start..end] == name {
            out.push_str(&text[at..start]);
            out.push_str(by);
            at = end;
        }
    }
    out.push_str(&text[at..]);
    out
}

fn is_identifier(text: &str) -> bool {
    text.bytes().next().is_some_and(is_name_start)
        && text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A callee's effects are in its own terms: each names the callee's variable as the callee
/// writes it, and a variable the callee reassigns (`q = q->next`) is one name: effects that
/// then read the same are listed once.
fn present_effects(report: &mut LoopReport) {
    for c in report.calls.iter_mut() {
        if c.effects.iter().any(|e| e.contains('#')) {
            let mut seen = BTreeSet::new();
            c.effects = std::mem::take(&mut c.effects)
                .into_iter()
                .map(|e| without_numbers(&e))
                .filter(|e| seen.insert(e.clone()))
                .collect();
        }
    }
}

/// The display name of each numbered symbol of one loop's report, and its name qualified
/// by place whatever the other names (for two parameters that would read the same).
struct Names {
    shown: HashMap<String, String>,
    qualified: HashMap<String, String>,
    /// Symbols that are loads of the value another symbol loads, by that symbol.
    same: HashMap<String, String>,
}

impl Names {
    fn decide(
        texts: &[String],
        plain: &BTreeSet<String>,
        locate: &Locate,
        entry_value: &EntryValue,
    ) -> Names {
        let mut tokens: BTreeSet<String> = BTreeSet::new();
        for t in texts {
            for (start, end) in numbered_tokens(t) {
                tokens.insert(t[start..end].to_string());
            }
        }
        // Inner symbols first (`i#3` of `row_index[i#3 + 1]#2`): a stem reads with its
        // inner names already shown.
        let mut ordered: Vec<String> = tokens.into_iter().collect();
        ordered.sort_by_key(|t| t.len());
        let mut names = Names {
            shown: HashMap::new(),
            qualified: HashMap::new(),
            same: HashMap::new(),
        };
        let mut by_stem: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for token in ordered {
            let stem = names.rewrite(without_number(&token));
            by_stem.entry(stem).or_default().push(token);
        }
        for (stem, tokens) in by_stem {
            // Loads of one value (`Places::entry_value`) are one version, named as the
            // first of them; the others are shown as it is.
            let mut versions: Vec<String> = Vec::new();
            let mut first_by_key: HashMap<String, String> = HashMap::new();
            for token in tokens {
                match entry_value(&token) {
                    Some(key) => match first_by_key.get(&key) {
                        Some(first) => {
                            names.same.insert(token, first.clone());
                        }
                        None => {
                            first_by_key.insert(key, token.clone());
                            versions.push(token);
                        }
                    },
                    None => versions.push(token),
                }
            }
            // A phrase describes an unknown value; it has no variable to tell apart.
            let phrase = stem.contains(' ');
            if phrase || (versions.len() == 1 && !plain.contains(&stem)) {
                for v in versions {
                    if let Some((line, _)) = locate(&v).filter(|(line, _)| *line != 0) {
                        names.qualified.insert(v.clone(), format!("{stem}@{line}"));
                    }
                    names.shown.insert(v, stem.clone());
                }
                continue;
            }
            let places: Vec<Option<(u32, u32)>> = versions
                .iter()
                .map(|v| locate(v).filter(|(line, _)| *line != 0))
                .collect();
            // How many versions share a line, or a line and column.
            let on_line = |line: u32| places.iter().flatten().filter(|p| p.0 == line).count();
            let at = |place: (u32, u32)| places.iter().flatten().filter(|p| **p == place).count();
            let mut unplaced = 0;
            for (version, place) in versions.iter().zip(&places) {
                let qualifier = match place {
                    Some(p) if on_line(p.0) == 1 => format!("{}", p.0),
                    Some(p) if at(*p) == 1 => format!("{}:{}", p.0, p.1),
                    _ => {
                        unplaced += 1;
                        format!("?{unplaced}")
                    }
                };
                let name = format!("{stem}@{qualifier}");
                names.qualified.insert(version.clone(), name.clone());
                names.shown.insert(version.clone(), name);
            }
        }
        for (token, first) in &names.same {
            if let Some(shown) = names.shown.get(first).cloned() {
                names.shown.insert(token.clone(), shown);
            }
            if let Some(qualified) = names.qualified.get(first).cloned() {
                names.qualified.insert(token.clone(), qualified);
            }
        }
        names
    }

    /// The symbol that stands for `token`'s value: the first load of the same value, or
    /// `token` itself.
    fn value<'t>(&'t self, token: &'t str) -> &'t str {
        self.same.get(token).map_or(token, String::as_str)
    }

    /// `text` with each numbered symbol qualified by its place where it has one.
    fn qualify(&self, text: &str) -> String {
        replace_tokens(text, &|token| match self
            .qualified
            .get(token)
            .or_else(|| self.shown.get(token))
        {
            Some(name) => name.clone(),
            None => self.rewrite(token),
        })
    }

    /// `text` with each numbered symbol replaced by its display name (outermost first: the
    /// display name of `row_index[i#3 + 1]#2` already shows its inner `i`).
    fn rewrite(&self, text: &str) -> String {
        replace_tokens(text, &|token| match self.shown.get(token) {
            Some(shown) => shown.clone(),
            // Not decided (a text outside the loop's): drop the number all the same.
            None => self.rewrite(without_number(token)),
        })
    }

    /// [`Self::rewrite`], with the symbols of `local` shown as it says, in the names that
    /// hold them too (`row_index[i#3 + 1]#2`) unless those are qualified themselves.
    fn rewrite_with(&self, text: &str, local: &HashMap<String, String>) -> String {
        replace_tokens(text, &|token| self.show_with(token, local))
    }

    /// The display name of one numbered symbol under [`Self::rewrite_with`].
    fn show_with(&self, token: &str, local: &HashMap<String, String>) -> String {
        if let Some(name) = local.get(self.value(token)) {
            return name.clone();
        }
        let inner = without_number(token);
        match self.shown.get(token) {
            Some(shown) if *shown != self.rewrite(inner) => shown.clone(),
            _ => self.rewrite_with(inner, local),
        }
    }
}

/// `text` with every numbered symbol replaced by its source name, unqualified: how a callee's
/// variables read to its callers (see `present_effects`).
pub(crate) fn without_numbers(text: &str) -> String {
    if !text.contains('#') {
        return text.to_string();
    }
    replace_tokens(text, &|token| without_numbers(without_number(token)))
}

/// `text` with each outermost numbered symbol replaced by `by(symbol)`.
fn replace_tokens(text: &str, by: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in outermost(numbered_tokens(text)) {
        out.push_str(&text[at..start]);
        out.push_str(&by(&text[start..end]));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// A numbered symbol's name without its number: `row_index[i#3 + 1]` of
/// `row_index[i#3 + 1]#2`.
fn without_number(token: &str) -> &str {
    &token[..token.rfind('#').unwrap_or(token.len())]
}

/// Byte ranges of the numbered symbols of `text`: a name (identifier characters, `.`, `->`,
/// balanced brackets, a callee qualifier `@f`) followed by `#` and digits, inner ones too.
pub(crate) fn numbered_tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'#' || !b.get(k + 1).is_some_and(u8::is_ascii_digit) {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        let start = phrase_start(b, k, end).unwrap_or_else(|| name_start(b, k));
        if start < k && (is_name_start(b[start]) || b[start] == b'(') {
            out.push((start, end));
        }
        k = end;
    }
    out
}

/// Where a quoted phrase that the analyses numbered (`` `an offset in f#3` ``: an unknown
/// value they describe rather than name) begins, when the number ends a quotation.
fn phrase_start(b: &[u8], hash: usize, end: usize) -> Option<usize> {
    if b.get(end) != Some(&b'`') {
        return None;
    }
    let open = b[..hash].iter().rposition(|c| *c == b'`')?;
    let inner = std::str::from_utf8(&b[open + 1..hash]).ok()?;
    // The forms `callsites` names unknown values by (`summaries::Fresh::named`).
    let phrase =
        inner.contains(" in ") || inner.starts_with("an ") || inner.starts_with("the pointer ");
    phrase.then_some(open + 1)
}

/// Where the name that ends at `end` begins: back over identifier characters, `.`, `->`,
/// `@` and balanced brackets.
pub(crate) fn name_start(b: &[u8], end: usize) -> usize {
    let mut start = end;
    let mut depth = 0usize;
    while start > 0 {
        let c = b[start - 1];
        let ok = match c {
            b']' | b')' => {
                depth += 1;
                true
            }
            b'[' | b'(' if depth > 0 => {
                depth -= 1;
                true
            }
            _ if depth > 0 => true,
            b'>' => start >= 2 && b[start - 2] == b'-',
            b'-' => b.get(start) == Some(&b'>'),
            // A callee's variable as one call sees it: `k@get_dm:118`.
            b':' => b.get(start).is_some_and(u8::is_ascii_digit),
            c => c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'@',
        };
        if !ok {
            break;
        }
        start -= 1;
    }
    // Brackets left open (`a[i#2` inside a longer text) are not part of the name.
    while depth > 0 && start < end {
        if matches!(b[start], b']' | b')') {
            depth -= 1;
        }
        start += 1;
    }
    // A value named by the program's text may be parenthesized: `(strlen(&line))#2`.
    while start < end && !is_name_start(b[start]) && b[start] != b'(' {
        start += 1;
    }
    start
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The ranges not inside another one.
fn outermost(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
    let mut out: Vec<(usize, usize)> = Vec::new();
    for r in ranges {
        match out.last() {
            Some(last) if r.0 < last.1 => {}
            _ => out.push(r),
        }
    }
    out
}

/// The identifiers of `text` not followed by a number (`n` in `8*n + n#2`), outside
/// subscripts and member names: `i` in `start[i + 1]` is part of that value's name.
fn plain_identifiers(text: &str, out: &mut BTreeSet<String>) {
    out.extend(
        plain_identifier_spans(text)
            .into_iter()
            .map(|(start, end)| text[start..end].to_string()),
    );
}

/// Where [`plain_identifiers`] finds each identifier, as byte ranges.
fn plain_identifier_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        let starts_word = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
        if !(is_name_start(c) && starts_word) {
            match c {
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            k += 1;
            continue;
        }
        let member = k > 0 && matches!(b[k - 1], b'.' | b'>' | b'@');
        let start = k;
        while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
            k += 1;
        }
        if depth == 0 && !member && b.get(k) != Some(&b'#') {
            out.push((start, k));
        }
    }
    out
}

/// The names a loop's witnesses give values, instances included (their variables are the
/// analyses' symbols).
pub(crate) fn witness_keys(reasons: &[Reason]) -> Vec<String> {
    let mut out = Vec::new();
    for r in reasons {
        if let Some(w) = &r.witness {
            out.extend(
                w.values
                    .keys()
                    .chain(w.first.iteration.keys())
                    .chain(w.second.iteration.keys())
                    .cloned(),
            );
        }
        out.extend(witness_keys(&r.instances));
    }
    out
}

fn rename_witness_keys(reason: &mut Reason, names: &Names) {
    if let Some(w) = reason.witness.as_mut() {
        for map in [
            &mut w.values,
            &mut w.first.iteration,
            &mut w.second.iteration,
        ] {
            if map.keys().any(|k| k.contains('#')) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (names.rewrite(&k), v))
                    .collect();
            }
        }
    }
    for r in reason.instances.iter_mut() {
        rename_witness_keys(r, names);
    }
}

/// What a text of a report is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An expression over the analyses' symbols (a section, a count, a loop variable).
    Expression,
    /// The name of a source variable or object (a parameter, a private variable): it names
    /// the variable, not one of its values.
    Source,
    /// Prose, which may quote the source (`x[i]`), and C types.
    Prose,
    /// What an access's address is relative to (a base, the array of a pair of accesses):
    /// a pointer value, or the storage of a variable itself when it is a memory object.
    Storage,
}

/// One field of a report the presentation rewrites: a text, or a quantity (an expression
/// with its text, renamed whole).
pub(crate) enum Field<'a> {
    Text(&'a mut String),
    Quantity(&'a mut Quantity),
}

impl<'a> From<&'a mut String> for Field<'a> {
    fn from(t: &'a mut String) -> Field<'a> {
        Field::Text(t)
    }
}

impl<'a> From<&'a mut Quantity> for Field<'a> {
    fn from(q: &'a mut Quantity) -> Field<'a> {
        Field::Quantity(q)
    }
}

/// Every quantity of `report` (bounds, trip counts, sections, request counts and their
/// totals, offsets and strides, shared bytes and tiles, bank-conflict degrees, diverging
/// warps), each an expression with its text ([`crate::model::Quantity`]).
pub fn quantities_mut(report: &mut LoopReport) -> Vec<&mut Quantity> {
    fields_mut(report)
        .into_iter()
        .filter_map(|(_, f)| match f {
            Field::Quantity(q) => Some(q),
            Field::Text(_) => None,
        })
        .collect()
}

/// Every text of `report` the analyses wrote in the loop's terms (names, expressions,
/// messages, the quantities' texts); not the source's own text (accesses as written,
/// pragmas, loop ids), nor the callees' effects, which are in each callee's terms.
pub fn texts_mut(report: &mut LoopReport) -> Vec<(Kind, &mut String)> {
    fields_mut(report)
        .into_iter()
        .map(|(kind, f)| match f {
            Field::Text(t) => (kind, t),
            Field::Quantity(q) => (kind, q.text_mut()),
        })
        .collect()
}

/// The one list of a report's fields in the loop's terms, in the order names are first
/// seen (the ordinals of unplaced values follow it): a field the model adds is listed here
/// once, as a text of its kind or as a quantity.
pub(crate) fn fields_mut(report: &mut LoopReport) -> Vec<(Kind, Field<'_>)> {
    let mut e: Vec<Field> = Vec::new();
    let mut n: Vec<&mut String> = Vec::new();
    let mut p: Vec<&mut String> = Vec::new();
    let mut bases: Vec<&mut String> = Vec::new();
    if let Some(i) = report.induction.as_mut() {
        e.push((&mut i.var).into());
        e.extend([&mut i.lower, &mut i.upper, &mut i.step, &mut i.trip_count].map(Field::from));
    }
    reason_texts(&mut report.reasons, &mut p);
    for x in report.parameters.iter_mut() {
        n.push(&mut x.name);
        n.extend(x.holds.iter_mut());
        if let Some(t) = x.c_type.as_mut() {
            p.push(t);
        }
        if let Some(b) = x.bytes.as_mut() {
            e.extend([&mut b.lo, &mut b.hi, &mut b.size].map(Field::from));
            e.extend(b.reads.iter_mut().map(Field::from));
        }
        if let Some(w) = x.whole_object.as_mut() {
            e.push((&mut w.size).into());
            e.extend(w.reads.iter_mut().map(Field::from));
        }
        p.extend(x.notes.iter_mut());
    }
    for r in report.reductions.iter_mut() {
        n.push(&mut r.target);
        p.push(&mut r.c_type);
        n.extend(r.index.iter_mut());
        p.push(&mut r.strategy);
    }
    for x in report.private.iter_mut() {
        n.push(&mut x.name);
        p.push(&mut x.why);
    }
    for c in report.counters.iter_mut() {
        n.push(&mut c.name);
    }
    for d in report.needs_evidence.iter_mut() {
        // A pair names the variables it is about as the source does: a scalar carried from
        // one iteration to the next (`pos`), or the pointers two accesses go through (`ma /
        // ma` for two values of `ma`, told apart by the accesses' lines), which a profile
        // matches against a call's arguments and a fix against the parameters.
        n.push(&mut d.array);
        e.extend(d.distance.iter_mut().map(Field::from));
    }
    p.extend(report.assumptions.iter_mut());
    for m in report.mappings.iter_mut() {
        e.push((&mut m.mapping.x).into());
        e.extend(m.mapping.y.iter_mut().map(Field::from));
        e.extend(
            [
                &mut m.total_requests_per_warp,
                &mut m.total_sectors_per_warp,
            ]
            .map(Field::from),
        );
        for a in m.accesses.iter_mut() {
            bases.extend(a.base.iter_mut());
            e.extend(a.offset_bytes.forms_mut().map(Field::from));
            e.extend([&mut a.requests_per_warp, &mut a.sectors_per_warp].map(Field::from));
            e.extend(a.stride_bytes.iter_mut().map(Field::from));
            e.extend(a.min_requests_per_warp.iter_mut().map(Field::from));
            e.extend(a.unaligned_requests_per_warp.iter_mut().map(Field::from));
            p.extend(a.assumptions.iter_mut());
        }
    }
    if let Some(m) = report.recommended_mapping.as_mut() {
        e.push((&mut m.x).into());
        e.extend(m.y.iter_mut().map(Field::from));
    }
    if let Some(g) = report.mapping_gain.as_mut() {
        e.push((&mut g.natural.x).into());
        e.extend(g.natural.y.iter_mut().map(Field::from));
        e.extend(
            [
                &mut g.natural_requests_per_warp,
                &mut g.recommended_requests_per_warp,
            ]
            .map(Field::from),
        );
        p.push(&mut g.compared);
    }
    for s in report.shared_memory.iter_mut() {
        bases.push(&mut s.array);
        e.extend([&mut s.bytes_per_block, &mut s.bytes_for_block].map(Field::from));
        p.push(&mut s.message);
        e.extend(s.overlap_x_bytes.iter_mut().map(Field::from));
        e.extend(s.overlap_y_bytes.iter_mut().map(Field::from));
        p.extend(s.grouping.iter_mut());
        if let Some(b) = s.block_section.as_mut() {
            e.extend([&mut b.lo, &mut b.hi, &mut b.size].map(Field::from));
        }
        if let Some(t) = s.tile.as_mut() {
            e.extend(
                [
                    &mut t.row_pitch_bytes,
                    &mut t.row_lo,
                    &mut t.row_hi,
                    &mut t.rows,
                    &mut t.col_lo,
                    &mut t.col_hi,
                    &mut t.row_bytes,
                ]
                .map(Field::from),
            );
        }
        if let Some(b) = s.bank_conflicts.as_mut() {
            e.push((&mut b.degree).into());
            p.push(&mut b.pattern);
            p.extend(b.padding.iter_mut());
        }
    }
    if let Some(o) = report.occupancy.as_mut() {
        e.push((&mut o.shared_bytes_per_block).into());
        p.push(&mut o.message);
        p.extend(o.limited_by.iter_mut());
    }
    for d in report.divergence.iter_mut() {
        let [lo, hi] = &mut d.ratio;
        let [dlo, dhi] = &mut d.diverging_warps_per_row;
        e.extend([lo, hi].map(Field::from));
        e.extend([dlo, dhi, &mut d.warps_per_row].map(Field::from));
        p.push(&mut d.message);
        p.extend(d.help.iter_mut());
    }
    e.into_iter()
        .map(|f| (Kind::Expression, f))
        .chain(n.into_iter().map(|t| (Kind::Source, t.into())))
        .chain(p.into_iter().map(|t| (Kind::Prose, t.into())))
        .chain(bases.into_iter().map(|t| (Kind::Storage, t.into())))
        .collect()
}

fn reason_texts<'a>(reasons: &'a mut [Reason], t: &mut Vec<&'a mut String>) {
    for r in reasons {
        t.push(&mut r.message);
        t.extend(r.help.iter_mut());
        if let Some(w) = r.witness.as_mut() {
            t.extend(w.condition.iter_mut());
            t.extend([&mut w.first.element, &mut w.second.element]);
        }
        reason_texts(&mut r.instances, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `texts` renamed together, with symbols placed by `places`.
    fn check(texts: &[&str], places: &[(&str, (u32, u32))], expected: &[&str]) {
        check_with_entry_values(texts, places, &[], expected);
    }

    /// [`check`], with the loads `entry_values` keys read what memory holds where the
    /// loop starts (equal keys: one value).
    fn check_with_entry_values(
        texts: &[&str],
        places: &[(&str, (u32, u32))],
        entry_values: &[(&str, &str)],
        expected: &[&str],
    ) {
        let places: HashMap<String, (u32, u32)> =
            places.iter().map(|(n, p)| (n.to_string(), *p)).collect();
        let locate = |name: &str| places.get(name).copied();
        let entry_value = |name: &str| {
            entry_values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, key)| key.to_string())
        };
        let owned: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let mut plain = BTreeSet::new();
        for t in &owned {
            plain_identifiers(t, &mut plain);
        }
        let names = Names::decide(&owned, &plain, &locate, &entry_value);
        let got: Vec<String> = owned.iter().map(|t| names.rewrite(t)).collect();
        assert_eq!(got, expected, "{texts:?}");
    }

    #[test]
    fn loads_of_one_value_read_as_one_name() {
        let texts = ["8*p#2", "p#5 + n#3", "`p#2` and `p#5`"];
        let places = [("p#2", (10, 5)), ("p#5", (20, 5)), ("p#7", (30, 5))];
        check_with_entry_values(
            &texts,
            &places,
            &[("p#2", "k"), ("p#5", "k")],
            &["8*p", "p + n", "`p` and `p`"],
        );
        // A third value of `p` (a load the loop may change) is told apart from them.
        check_with_entry_values(
            &["8*p#2", "p#5 + p#7"],
            &places,
            &[("p#2", "k"), ("p#5", "k")],
            &["8*p@10", "p@10 + p@30"],
        );
        // Two addresses: two values.
        check_with_entry_values(
            &["8*p#2", "p#5"],
            &places,
            &[("p#2", "k"), ("p#5", "other")],
            &["8*p@10", "p@20"],
        );
    }

    #[test]
    fn a_lone_value_reads_as_its_variable() {
        check(
            &["8*n#2 + 8", "`x#3`: reads"],
            &[],
            &["8*n + 8", "`x`: reads"],
        );
    }

    #[test]
    fn two_values_of_one_variable_are_qualified_by_line() {
        check(
            &["8*j + 8*j#2", "i#6 - i#7"],
            &[("j#2", (93, 9)), ("i#6", (10, 3)), ("i#7", (12, 3))],
            &["8*j + 8*j@93", "i@10 - i@12"],
        );
    }

    #[test]
    fn values_on_one_line_are_qualified_by_column() {
        check(
            &["k#2 + k#3"],
            &[("k#2", (5, 8)), ("k#3", (5, 20))],
            &["k@5:8 + k@5:20"],
        );
    }

    #[test]
    fn values_without_a_place_get_an_ordinal() {
        check(&["k#2 + k#3"], &[], &["k@?1 + k@?2"]);
    }

    #[test]
    fn paths_and_inner_symbols() {
        check(
            &[
                "max(4, -4*j#2 + 4*row_index[i#3 + 1]#2 - 4*row_index[i#3]#2)",
                "`A->rownnz[i]#12`",
                "4*c_count[ma->g_rc_id[i * 2] - &ma->l_range[0]]#3 + 1",
                "`s[t ? 0 : -1]#2`",
                "(strlen(&line))#2 - 1",
                "`(*p) in f#3` and `p[1] in f#4`",
            ],
            &[],
            &[
                "max(4, -4*j + 4*row_index[i + 1] - 4*row_index[i])",
                "`A->rownnz[i]`",
                "4*c_count[ma->g_rc_id[i * 2] - &ma->l_range[0]] + 1",
                "`s[t ? 0 : -1]`",
                "(strlen(&line)) - 1",
                "`(*p) in f` and `p[1] in f`",
            ],
        );
    }

    #[test]
    fn callee_qualifiers_stay() {
        check(
            &["the index depends on `ii@set_g#4`, `an offset in cs_field_by_id#1`"],
            &[],
            &["the index depends on `ii@set_g`, `an offset in cs_field_by_id`"],
        );
        check(&["ii@f:12#1 + ii@f:14#2"], &[], &["ii@f:12 + ii@f:14"]);
    }

    #[test]
    fn text_without_symbols_is_unchanged() {
        check(
            &["printf(\"#1\")", "a # 2", "x#"],
            &[],
            &["printf(\"#1\")", "a # 2", "x#"],
        );
    }

    #[test]
    fn names_inside_subscripts_are_not_values() {
        check(
            &["start[i + 1]#3 - start[i]#4", "i#2"],
            &[],
            &["start[i + 1] - start[i]", "i"],
        );
    }

    /// `texts`, all read at `line`, renamed with the loop-wide names of `report_texts` and
    /// `in_scope` saying which symbol each line's name means.
    fn check_at(
        report_texts: &[&str],
        places: &[(&str, (u32, u32))],
        in_scope: &[(&str, u32)],
        texts: &[&str],
        line: u32,
        expected: &[&str],
    ) {
        let mut got: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let names = renamed_at(
            report_texts,
            places,
            in_scope,
            line,
            got.iter_mut().collect(),
            Vec::new(),
        );
        // What the place leaves is renamed as in the whole report, as `present` does.
        let got: Vec<String> = got.iter().map(|t| names.rewrite(t)).collect();
        assert_eq!(got, expected, "{texts:?} at line {line}");
    }

    /// `texts` and `quantities` renamed by [`rename_at`] at `line`, with the names a report
    /// of `report_texts` decides, symbols placed by `places` and `in_scope` saying which
    /// symbol each line's name means; the names, for what the place leaves.
    fn renamed_at(
        report_texts: &[&str],
        places: &[(&str, (u32, u32))],
        in_scope: &[(&str, u32)],
        line: u32,
        texts: Vec<&mut String>,
        quantities: Vec<&mut Quantity>,
    ) -> Names {
        let places: HashMap<String, (u32, u32)> =
            places.iter().map(|(n, p)| (n.to_string(), *p)).collect();
        let locate = |name: &str| places.get(name).copied();
        let owned: Vec<String> = report_texts.iter().map(|t| t.to_string()).collect();
        let names = Names::decide(&owned, &BTreeSet::new(), &locate, &|_| None);
        let scope = |name: &str, at: u32| in_scope.contains(&(name, at));
        let no_object = |_: &str| false;
        let places = Places {
            locate: &locate,
            is_object: &no_object,
            in_scope: &scope,
            entry_value: &|_| None,
            at_start: &|_| false,
            type_of: &|_| None,
        };
        rename_at(texts, quantities, line, &names, &places);
        names
    }

    #[test]
    fn a_loop_variable_reads_plainly_inside_its_loop() {
        // Two loops over `i` (lines 10 and 20) in one report: at line 11, inside the first,
        // its `i` is the name's only value; the report elsewhere tells them apart.
        let report = ["8*i#2 + 8*c#4", "8*i#3", "i#2 + i#3"];
        let places = [("i#2", (10, 5)), ("i#3", (20, 5))];
        check_at(
            &report,
            &places,
            &[("i#2", 11)],
            &[
                "8*i#2 + 8*c#4",
                "min(32, 4*i#2)",
                "`row[i#2 + 1]#5` differs",
            ],
            11,
            &["8*i + 8*c", "min(32, 4*i)", "`row[i + 1]` differs"],
        );
    }

    /// A count read at `line` (an access's requests), renamed as [`check_at`] renames a
    /// text, then as in the whole report: its text is `expected` and its expression the
    /// one `expected` writes, variable for variable.
    fn check_quantity_at(
        report_texts: &[&str],
        places: &[(&str, (u32, u32))],
        in_scope: &[(&str, u32)],
        count: &symbolic::Expr,
        line: u32,
        expected: &str,
    ) {
        let mut q = Quantity::of(count);
        let names = renamed_at(
            report_texts,
            places,
            in_scope,
            line,
            Vec::new(),
            vec![&mut q],
        );
        let rewrite = |t: &str| names.rewrite(t);
        q.rename(rewrite, rewrite);
        assert_eq!(q.text(), expected);
        let e = q.expr().expect("an expression");
        assert_eq!(e.to_c(), expected, "the expression follows the text");
    }

    #[test]
    fn a_count_read_at_its_access_is_renamed_with_its_expression() {
        let four_times = |name: &str| {
            symbolic::Expr::var(name)
                .checked_mul(&symbolic::Expr::constant(4))
                .unwrap()
        };
        // Inside the first of two loops over `i`, its value reads plainly.
        let report = ["8*i#2", "8*i#3", "n#4"];
        let places = [("i#2", (10, 5)), ("i#3", (20, 5))];
        let count = four_times("i#2")
            .checked_add(&symbolic::Expr::var("n#4"))
            .unwrap();
        check_quantity_at(&report, &places, &[("i#2", 11)], &count, 11, "4*i + n");
        // Outside it, as in the whole report.
        check_quantity_at(&report, &places, &[], &count, 11, "4*i@10 + n");
        // A plain name the place gives another meaning is qualified in both.
        let report = ["8*i", "8*i#2"];
        let places = [("i", (4, 5)), ("i#2", (6, 7))];
        check_quantity_at(
            &report,
            &places,
            &[("i#2", 7)],
            &four_times("i"),
            7,
            "4*i@4",
        );
    }

    #[test]
    fn a_loop_variable_keeps_its_qualifier_where_its_name_means_another_value() {
        let report = ["8*i#2", "8*i#3"];
        let places = [("i#2", (10, 5)), ("i#3", (20, 5))];
        // Outside its loop (or shadowed there): as in the whole report.
        check_at(&report, &places, &[], &["8*i#2"], 11, &["8*i@10"]);
        // Both values at one place: still told apart.
        check_at(
            &report,
            &places,
            &[("i#2", 11), ("i#3", 11)],
            &["8*i#2 + 8*i#3"],
            11,
            &["8*i@10 + 8*i@20"],
        );
        // A plain `i` (a global) beside it: the value keeps its qualifier.
        check_at(
            &report,
            &places,
            &[("i#2", 11)],
            &["8*i#2 + i"],
            11,
            &["8*i@10 + i"],
        );
    }

    #[test]
    fn a_name_s_first_value_is_qualified_where_the_name_means_another() {
        // `i` (line 4, shown plainly in the whole report) read inside the loop of `i#2`
        // (line 6), where `i` is that loop's variable.
        let report = ["8*i", "8*i#2"];
        let places = [("i", (4, 5)), ("i#2", (6, 7))];
        let scope = [("i#2", 7)];
        check_at(
            &report,
            &places,
            &scope,
            &["8*i + 8", "`a[i]` and i"],
            7,
            &["8*i@4 + 8", "`a[i]` and i@4"],
        );
        // Where the name means no other value, it stays.
        check_at(&report, &places, &scope, &["8*i + 8"], 5, &["8*i + 8"]);
    }

    #[test]
    fn a_pair_message_reads_names_at_each_access_and_keeps_phrases_whole() {
        let text = "`a[i]` and `a[j]`: difference 8*i#2 - 8*j#3' and `i#4 in f#2`";
        let owned = vec![text.to_string(), "i#5 + j#6".to_string()];
        let places: HashMap<&str, (u32, u32)> = [
            ("i#2", (10, 3)),
            ("j#3", (20, 3)),
            ("i#4", (30, 3)),
            ("i#5", (40, 3)),
            ("j#6", (50, 3)),
        ]
        .into_iter()
        .collect();
        let locate = |name: &str| places.get(name).copied();
        let names = Names::decide(&owned, &BTreeSet::new(), &locate, &|_| None);
        let no_object = |_: &str| false;
        // `i#2` is what `i` means at the first access (line 11), `j#3` at the second (21).
        let scope = |name: &str, line: u32| matches!((name, line), ("i#2", 11) | ("j#3", 21));
        let places = Places {
            locate: &locate,
            is_object: &no_object,
            in_scope: &scope,
            entry_value: &|_| None,
            at_start: &|_| false,
            type_of: &|_| None,
        };
        assert_eq!(
            rename_pair(text, (11, 21), &names, &places),
            "`a[i]` and `a[j]`: difference 8*i - 8*j' and `i in f`"
        );
        // Read at the wrong lines, both keep their qualifiers.
        assert_eq!(
            rename_pair(text, (21, 11), &names, &places),
            "`a[i]` and `a[j]`: difference 8*i@10 - 8*j@20' and `i in f`"
        );
    }

    #[test]
    fn primes_follow_the_name() {
        check(&["j#5' - j#5"], &[], &["j' - j"]);
    }
}
