//! The names a loop's text uses for what its report names by value: the local a loop
//! indexes (`xd`, `xs`) for an array the report names by its path or by the pointer the
//! local copies (`x->content->data`, `x`). Both ports (CUDA's `plan`, OpenMP's `clauses`)
//! must write what the text writes.

use advisor::model::LoopReport;
use advisor::value_name::ValueName;
use frontend::access_sites::{AccessMode, LoopSite, Sites};
use std::collections::{BTreeMap, BTreeSet};

/// For each array the report names by its value (`x->content->data`, `x` copied into
/// `xs`), the one variable declared before the loop and not written in it that the loop's
/// accesses reach it through (`xd`, `xs`): the name a port must use, as the loop's text
/// does. `pointer` says whether a name's declared type at the loop is a pointer or an array.
pub(crate) fn text_aliases(
    sites: &Sites,
    site: &LoopSite,
    report: &LoopReport,
    pointer: &dyn Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    let written = scalars_written_inside(sites, site);
    source_bases(report, pointer)
        .into_iter()
        .filter(|(_, alias)| !written.contains(alias) && declared_outside(sites, site, alias))
        .collect()
}

/// For each array the report names by its value (`x->content->data`), the one variable
/// the loop's accesses reach it through (`xd`), from the report's access texts.
fn source_bases(report: &LoopReport, pointer: &dyn Fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut seen: BTreeMap<String, Option<String>> = BTreeMap::new();
    let Some(mapping) = report.mappings.first() else {
        return BTreeMap::new();
    };
    // A name the report gives its own array is no other array's copy (`v[i] = zero;`
    // copies a struct: the read of `zero` has the text `v[i]`).
    let bases: BTreeSet<&str> = mapping
        .accesses
        .iter()
        .filter_map(|a| a.base.as_deref())
        .collect();
    for a in &mapping.accesses {
        let Some(base) = &a.base else {
            continue;
        };
        // Macro expansions parenthesize: `(xd[i])`.
        let text = a.text.trim().trim_start_matches(['(', ' ']);
        let root: String = text
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let rest = text[root.len()..].trim_start();
        // A copy the IR drops (`const cs_real_t *_c_var = c_var;`) has its type from its
        // declaration.
        let is_pointer = pointer(&root);
        // `r->axis[i]` with `r = _glob_rotation_0` reaches the global through its copy (a
        // member array, `m->b_face_cells` of `cs_glob_mesh->b_face_cells`, is no copy).
        // `in[i][j]` reaches the base `in[i]` through its own name, not through a copy;
        // `Fmatrix[i]` reaches `Fmatrix@601`, the report's qualified name of it.
        let base_root: String = base
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let qualified_self = ValueName::parse(base).is_some_and(|v| v.variable == root);
        let copy = !bases.contains(root.as_str()) && root != base_root;
        let candidate = (is_identifier(&root)
            && &root != base
            && (qualified_self || copy)
            && is_pointer
            && (rest.starts_with('[') || rest.starts_with("->") && is_identifier(base)))
        .then_some(root);
        let e = seen.entry(base.clone()).or_insert(candidate.clone());
        if *e != candidate {
            *e = None;
        }
    }
    seen.into_iter()
        .filter_map(|(base, alias)| Some((base, alias?)))
        .collect()
}

/// Scalar variables declared outside the loop (parameters and globals included) that its
/// body assigns: the analysis found no value flowing between iterations through them (the
/// loop is friendly), so each thread gets its own; in a `parallel for` they would be
/// shared. SSA-promoted scalars (`x = 0; ... x += ...`) are not in the report's `private`
/// list, which names memory objects.
pub(crate) fn scalars_written_inside(sites: &Sites, site: &LoopSite) -> Vec<String> {
    variables_inside(sites, site, true)
}

/// The variables declared outside the loop (parameters and globals included) that it
/// accesses, or only those it writes, each once in order of first access.
pub(crate) fn variables_inside(sites: &Sites, site: &LoopSite, written: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &sites.accesses {
        if (written && a.mode == AccessMode::Read)
            || a.span.start < site.span.start
            || a.span.end > site.span.end
        {
            continue;
        }
        let Some(v) = &a.variable else {
            continue;
        };
        let outside = v.local_decl.is_none_or(|d| d < site.span.start);
        if outside && !out.contains(&v.name) {
            out.push(v.name.clone());
        }
    }
    out
}

/// Whether every variable named `name` that the loop touches is declared before it
/// (a parameter, a global or a local of the function): a name declared in the loop's body
/// (`char *aux = (char *)in;`) is not in scope at the pragma.
fn declared_outside(sites: &Sites, site: &LoopSite, name: &str) -> bool {
    let mut seen = false;
    for a in &sites.accesses {
        if a.span.start < site.span.start || a.span.end > site.span.end {
            continue;
        }
        let Some(v) = a.variable.as_ref().filter(|v| v.name == name) else {
            continue;
        };
        if v.local_decl.is_some_and(|d| d >= site.span.start) {
            return false;
        }
        seen = true;
    }
    seen
}

pub(crate) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
