//! Arrays of rows (`double ***u`, each row its own allocation) mapped around one kernel as
//! a tree: `target enter data` of the pointer array, then of each row it points to (the
//! runtime attaches each row's device copy to its slot), level by level, in plain host
//! loops; the kernel finds them present; `target exit data` copies written rows back and
//! releases every entry, so nothing stays mapped after the kernel. A later kernel that
//! maps another section of the same rows then starts from an empty device environment:
//! clang 16's runtime refuses to extend an entry that an earlier kernel left behind
//! ("explicit extension not allowed").

use super::sections::{c, covering, union_bytes, Section};
use crate::ctext::{closing_bracket, code_tokens, expr_roots, tok_text, written_in};
use crate::plan::{Ctx, EmitError};
use advisor::model::{LoopReport, ParamKind, Parameter, Quantity, Role};
use advisor::value_name::ValueName;
use frontend::access_sites::LoopSite;
use std::collections::{BTreeMap, BTreeSet};

/// The trees of one kernel.
#[derive(Debug, Default)]
pub(super) struct RowTrees {
    /// The report's parameters the trees map (the roots and every row name).
    pub covered: BTreeSet<String>,
    /// Opens a block before the kernel's pragma: the sections' bounds, then the
    /// `target enter data` loops.
    pub enter: String,
    /// After the kernel's last token: the `target exit data` loops, then the block's end.
    pub exit: String,
    /// `u[s:n]` of each root, which the kernel maps `alloc` (present: no copy).
    pub kernel_maps: Vec<String>,
    pub notes: Vec<String>,
}

/// One name of a tree: the report's parameter and its subscripts (`u[i3][i2 + 1]`:
/// `i3`, `i2 + 1`).
struct Row<'a> {
    param: &'a Parameter,
    subscripts: Vec<String>,
}

/// The C text of a report's name: `z[i3 - 1][i2 - 1]@753` tells apart the same text over
/// different loops (two loops over `i2`) by a line; the text is its variable.
fn c_text(name: &str) -> std::borrow::Cow<'_, str> {
    match ValueName::parse(name) {
        Some(v) if v.line().is_some() => v.variable.into(),
        _ => name.into(),
    }
}

/// `u[a][b]` -> (`u`, [`a`, `b`]); `None` unless the name is an identifier followed by
/// subscripts only.
pub(super) fn subscripted(name: &str) -> Option<(String, Vec<String>)> {
    let name = c_text(name);
    let name = name.as_ref();
    let toks = code_tokens(name);
    let first = toks.first()?;
    let root = tok_text(name, first);
    if !super::clauses::is_identifier(root) {
        return None;
    }
    let mut subs = Vec::new();
    let mut k = 1;
    while k < toks.len() {
        if tok_text(name, &toks[k]) != "[" {
            return None;
        }
        let close = closing_bracket(name, &toks, k);
        let last = toks.get(close)?;
        subs.push(name[toks[k].end..last.start].trim().to_string());
        k = close + 1;
    }
    Some((root.to_string(), subs))
}

/// Whether `name` is a row of an array of pointers, which the tree mapping takes: named by
/// a variable and subscripts. A row held still (`in[k][0:n]`) too: mapped by the kernel's
/// own clauses, it would leave its slot `in[k]` mapped after the kernel (clang 16 counts
/// the slot twice on entry, once on exit), and a later kernel mapping more of `in` fails.
pub(super) fn wants_tree(name: &str) -> bool {
    subscripted(name).is_some_and(|(_, subs)| !subs.is_empty())
}

/// Plans the trees for the kernel of `report` (its statement `site`, lines
/// `first_line..=last_line`): every array of rows among `parameters`. `Err` refuses the
/// loop with why.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_trees(
    ctx: &Ctx<'_>,
    reports: &[LoopReport],
    report: &LoopReport,
    site: &LoopSite,
    lines: (u32, u32),
    parameters: &[Parameter],
    loop_vars: &[String],
    options: &super::PortOptions,
    refuse: &dyn Fn(String) -> EmitError,
) -> Result<Option<RowTrees>, EmitError> {
    let loop_text = ctx.slice(site.span);
    let groups = row_groups(parameters);
    if groups.is_empty() {
        return Ok(None);
    }
    // Variables that take several values in the kernel: its loops' counters and whatever
    // it assigns.
    let moving = |v: &str| loop_vars.iter().any(|l| l == v) || written_in(loop_text, v);
    let mut trees = RowTrees::default();
    let mut declarations = Vec::new();
    let mut enter = String::new();
    let mut exit = String::new();
    let mut updates = String::new();
    let text_tokens: BTreeSet<&str> = crate::ctext::token_strings(&ctx.text).into_iter().collect();
    for (root, rows) in &groups {
        let root_param = parameters
            .iter()
            .find(|p| &p.name == root && p.kind == ParamKind::Array)
            .ok_or_else(|| {
                refuse(format!(
                    "`{}` is a row of `{root}`, whose own section is not in the report: the rows cannot be mapped",
                    rows[0].param.name
                ))
            })?;
        let depth = check_rows(root, root_param, rows, refuse)?;
        // One section per level, taken by every row the level's names reach: right where
        // the rows are accessed alike. Rows accessed over ranges that follow the row (a
        // triangle `a[i][0..i]`, a diagonal `a[i][i]`, a guard `if (j < i)`) would each
        // need their own, and may be shorter than the others: refused.
        let row_vars: BTreeSet<String> = rows
            .iter()
            .flat_map(|r| r.subscripts.iter().flat_map(|s| expr_roots(s)))
            .filter(|v| moving(v))
            .collect();
        check_rectangular(
            ctx, reports, report, site, lines, root, rows, &row_vars, refuse,
        )?;
        let (sections, notes) = level_sections(ctx, report, root, root_param, rows, depth, refuse)?;
        trees.notes.extend(notes);
        let tree = TreeText {
            root,
            prefix: fresh_prefix(&text_tokens, root),
            depth,
        };
        let shrink = options.shrink.contains(root);
        let keep_on_device = options.drop.contains(root);
        declarations.extend(tree.declarations(&sections, shrink));
        enter.push_str(&tree.enter());
        // Written data rows come back with `target update`, which copies whatever the
        // entry's count: two trees of one kernel may hold the same rows (`resid(u, r, r)`,
        // in place), each entry then counted once per tree. All trees' rows come back
        // before any is deleted.
        if sections[depth].1 && !keep_on_device {
            updates.push_str(&tree.update());
        }
        // Every entry is deleted, whatever its count: clang 16 counts each map through a
        // slot twice on the entry holding the slot (the pointer and its attachment) and
        // once on exit, and a shared row is counted by each tree; `release` would leave
        // them mapped after the kernel.
        exit.push_str(&tree.exit());
        trees.kernel_maps.push(tree.item(0));
        trees.covered.insert(root.clone());
        trees
            .covered
            .extend(rows.iter().map(|r| r.param.name.clone()));
        trees.notes.push(format!(
            "`{root}` is an array of rows {depth} deep: each level is mapped row by row before the kernel (`target enter data`, which attaches every row to its slot) and deleted after it, the rows it writes copied back first (`target update from`); every row of a level is mapped over the same section"
        ));
    }
    trees.enter = format!(
        "{{ /* warpwise: arrays of rows mapped row by row for the kernel below */\n{}\n{enter}",
        declarations.join("\n")
    );
    trees.exit = format!("{updates}{exit}}}");
    Ok(Some(trees))
}

/// The arrays of rows among the `parameters`, by root: each with every name of it that
/// has subscripts.
fn row_groups(parameters: &[Parameter]) -> BTreeMap<String, Vec<Row<'_>>> {
    let mut groups: BTreeMap<String, Vec<Row<'_>>> = BTreeMap::new();
    for p in parameters.iter().filter(|p| p.kind == ParamKind::Array) {
        if !wants_tree(&p.name) {
            continue;
        }
        if let Some((root, subscripts)) = subscripted(&p.name) {
            groups.entry(root).or_default().push(Row {
                param: p,
                subscripts,
            });
        }
    }
    // Every name of a root joins its tree, a fixed row (`u[0]`) as well as moving ones.
    for (root, rows) in groups.iter_mut() {
        for p in parameters.iter().filter(|p| p.kind == ParamKind::Array) {
            match subscripted(&p.name) {
                Some((r, subscripts))
                    if &r == root
                        && !subscripts.is_empty()
                        && !rows.iter().any(|x| x.param.name == p.name) =>
                {
                    rows.push(Row {
                        param: p,
                        subscripts,
                    })
                }
                _ => {}
            }
        }
    }
    groups
}

/// Checks the rows of `root` (its parameter `root_param`) for a tree: subscripts that do
/// not read memory, one depth for all, row pointers the loop leaves as they are. The
/// tree's depth (levels below the root).
fn check_rows(
    root: &str,
    root_param: &Parameter,
    rows: &[Row<'_>],
    refuse: &dyn Fn(String) -> EmitError,
) -> Result<usize, EmitError> {
    // The rows a level reaches are those its subscripts give over the kernel's
    // iterations; a subscript read from memory (`a[idx[i]]`) reaches rows known only
    // at run time, perhaps null ones that the root's section holds.
    for r in rows {
        for s in &r.subscripts {
            let toks = crate::ctext::token_strings(s);
            let reads = toks.iter().enumerate().any(|(k, t)| {
                matches!(*t, "[" | "." | "->")
                    || (*t == "(" && k > 0 && super::clauses::is_identifier(toks[k - 1]))
            });
            if reads {
                return Err(refuse(format!(
                    "`{}` picks its row with `{s}`, which reads memory: the rows of `{root}` it reaches are known only at run time",
                    r.param.name
                )));
            }
        }
    }
    let depth = rows.iter().map(|r| r.subscripts.len()).max().unwrap_or(0);
    // Levels of a type: its pointers and its array dimensions (`double *in[3]`).
    let stars = |t: &str| t.matches('*').count() + t.matches('[').count();
    if stars(root_param.c_type.as_deref().unwrap_or_default()) != depth + 1 {
        return Err(refuse(format!(
            "`{root}` ({}) is used as an array of rows {depth} deep: rows of mixed depths are not mapped",
            root_param.type_text()
        )));
    }
    if root_param.role != Role::In {
        return Err(refuse(format!(
            "the loop writes the row pointers of `{root}`: the port maps an array of rows whose pointers stay as they are"
        )));
    }
    for r in rows {
        let level = r.subscripts.len();
        if stars(r.param.c_type.as_deref().unwrap_or_default()) != depth + 1 - level {
            return Err(refuse(format!(
                "`{}` ({}) is used as a row {level} deep of `{root}` ({}): rows of mixed depths are not mapped",
                r.param.name,
                r.param.type_text(),
                root_param.type_text()
            )));
        }
        if level < depth && r.param.role != Role::In {
            return Err(refuse(format!(
                "the loop writes the row pointers of `{}`: the port maps an array of rows whose pointers stay as they are",
                r.param.name
            )));
        }
    }
    Ok(depth)
}

/// A level's section and whether the loop writes it.
type LevelSection = (Section, bool);

/// The section of each level of the tree of `root` (0: the root itself) and whether the
/// loop writes it, with the notes the sections leave.
fn level_sections(
    ctx: &Ctx<'_>,
    report: &LoopReport,
    root: &str,
    root_param: &Parameter,
    rows: &[Row<'_>],
    depth: usize,
    refuse: &dyn Fn(String) -> EmitError,
) -> Result<(Vec<LevelSection>, Vec<String>), EmitError> {
    let mut all_notes = Vec::new();
    let mut sections = Vec::new();
    for level in 0..=depth {
        let names: Vec<&Parameter> = if level == 0 {
            vec![root_param]
        } else {
            rows.iter()
                .filter(|r| r.subscripts.len() == level)
                .map(|r| r.param)
                .collect()
        };
        let Some(first) = names.first() else {
            return Err(refuse(format!(
                "no row {level} deep of `{root}` is in the report: its section is unknown"
            )));
        };
        let mut bytes: Option<(Quantity, Quantity)> = None;
        let mut notes = Vec::new();
        for p in &names {
            let (l, h) = super::clauses::byte_section(ctx, report, p, refuse, &mut notes)?;
            bytes = Some(match bytes {
                Some((x, y)) => union_bytes((&x, &y), (&l, &h)),
                None => (l, h),
            });
        }
        all_notes.extend(notes);
        let unit = super::clauses::map_unit(ctx, report, &c_text(&first.name))
            .map_err(|e| refuse(e.to_string()))?;
        let (lo, hi) = bytes.unwrap_or_default();
        let section = covering(&lo, &hi, &unit);
        let written = names.iter().any(|p| p.role != Role::In);
        sections.push((section, written));
    }
    Ok((sections, all_notes))
}

/// The prefix of the tree's variables (`ww_u`): one no name in the unit starts with.
fn fresh_prefix(text_tokens: &BTreeSet<&str>, root: &str) -> String {
    let mut prefix = format!("ww_{root}");
    let mut k = 2;
    while text_tokens.iter().any(|t| t.starts_with(&prefix)) {
        prefix = format!("ww{k}_{root}");
        k += 1;
    }
    prefix
}

/// The variables one tree's loops use, and the directives that map it: `{prefix}_s{l}` and
/// `{prefix}_n{l}` the start and length of level `l`'s section, `{prefix}_r{l}` the row of
/// level `l` a loop is at, `{prefix}_p{l}` the copy of a row of level `l - 1`.
struct TreeText<'r> {
    root: &'r str,
    prefix: String,
    depth: usize,
}

impl TreeText<'_> {
    fn start(&self, l: usize) -> String {
        format!("{}_s{l}", self.prefix)
    }

    fn count(&self, l: usize) -> String {
        format!("{}_n{l}", self.prefix)
    }

    fn index(&self, l: usize) -> String {
        format!("{}_r{l}", self.prefix)
    }

    /// The declarations of the sections' bounds and the row indices; `shrink` maps the
    /// data rows one element shorter.
    fn declarations(&self, sections: &[LevelSection], shrink: bool) -> Vec<String> {
        let depth = self.depth;
        let mut declarations = Vec::new();
        for (level, (section, _)) in sections.iter().enumerate() {
            let mut length = c(&section.length);
            if shrink && level == depth {
                length = format!("{length} - 1");
            }
            declarations.push(format!(
                "long {} = {};",
                self.start(level),
                c(&section.start)
            ));
            // Not negative where the loop runs no iteration.
            let length = if length.parse::<u64>().is_ok() || length.starts_with("WW_MAX(0, ") {
                length
            } else {
                format!("WW_MAX(0, {length})")
            };
            declarations.push(format!("long {} = {length};", self.count(level)));
        }
        declarations.push(format!(
            "long {};",
            (0..depth)
                .map(|l| self.index(l))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        declarations
    }

    /// What the maps of level `level + 1` subscript: the root, or the copy `p{level}` of
    /// a row of the level above.
    fn base(&self, level: usize) -> String {
        if level == 0 {
            self.root.to_string()
        } else {
            format!("{}_p{level}", self.prefix)
        }
    }

    /// `u[r0][r1]` for the rows of level `level`.
    /// Each map names at most two subscripts: `u[r0][s:n]`, then `p1[r1][s:n]` with
    /// `p1 = u[r0]`, and so on. Named in full (`u[r0][r1][s:n]`), a map makes clang 16
    /// also map the middle pointer `u[r0][r1]` on its own (8 bytes), an entry the exit
    /// does not remove: a later kernel mapping more of that row fails ("explicit
    /// extension not allowed"). Through the copy, the slot the runtime attaches the
    /// row to is the same (`&p1[r1]` is `&u[r0][r1]`, inside the level above's map).
    fn item(&self, level: usize) -> String {
        if level == 0 {
            format!("{}[{}:{}]", self.root, self.start(0), self.count(0))
        } else {
            format!(
                "{}[{}][{}:{}]",
                self.base(level - 1),
                self.index(level - 1),
                self.start(level),
                self.count(level)
            )
        }
    }

    /// The loop over the rows of `level`; `declare` deeper than that: the copy of the
    /// row `p{level + 1}` that the maps below it name.
    fn head(&self, level: usize, declare: usize) -> String {
        let mut h = format!(
            "for ({i} = {s}; {i} < {s} + {n}; {i}++) {{\n",
            i = self.index(level),
            s = self.start(level),
            n = self.count(level)
        );
        if level < declare {
            h.push_str(&format!(
                "__typeof__({b}[0]) {next} = {b}[{i}];\n",
                b = self.base(level),
                next = self.base(level + 1),
                i = self.index(level)
            ));
        }
        h
    }

    /// An exit names each row through its copy, one subscript deep: clang 16 puts the
    /// map type of `u[r0][s:n]` on the slot `u[r0]` and only decrements the row.
    fn exit_item(&self, level: usize) -> String {
        format!(
            "{}[{}:{}]",
            self.base(level),
            self.start(level),
            self.count(level)
        )
    }

    /// The `target enter data` of every level, row by row.
    fn enter(&self) -> String {
        let depth = self.depth;
        let mut enter = String::new();
        for level in 0..=depth {
            if level > 0 {
                enter.push_str(&self.head(level - 1, depth - 1));
            }
            enter.push_str(&format!(
                "#pragma omp target enter data map(to: {})\n",
                self.item(level)
            ));
        }
        enter.push_str(&"}\n".repeat(depth));
        enter
    }

    /// The `target update from` of the data rows.
    fn update(&self) -> String {
        let depth = self.depth;
        let mut updates = String::new();
        for level in 0..depth {
            updates.push_str(&self.head(level, depth));
        }
        updates.push_str(&format!(
            "#pragma omp target update from({})\n",
            self.exit_item(depth)
        ));
        updates.push_str(&"}\n".repeat(depth));
        updates
    }

    /// The `target exit data` of every level, deepest first.
    fn exit(&self) -> String {
        let depth = self.depth;
        let mut exit = String::new();
        for level in 0..depth {
            exit.push_str(&self.head(level, depth));
        }
        for level in (0..=depth).rev() {
            exit.push_str(&format!(
                "#pragma omp target exit data map(delete: {})\n",
                self.exit_item(level)
            ));
            if level > 0 {
                exit.push_str("}\n");
            }
        }
        exit
    }
}

/// Refuses rows whose accessed range follows the row: a loop of the kernel whose bounds
/// read a row's subscript variable (`for (j = 0; j <= i; j++) a[i][j]`), a subscript of a
/// row that reads one (`a[i][i]`), or a condition that does (`if (j < i) a[i][j]`).
#[allow(clippy::too_many_arguments)]
fn check_rectangular(
    ctx: &Ctx<'_>,
    reports: &[LoopReport],
    report: &LoopReport,
    site: &LoopSite,
    (first, last): (u32, u32),
    root: &str,
    rows: &[Row<'_>],
    row_vars: &BTreeSet<String>,
    refuse: &dyn Fn(String) -> EmitError,
) -> Result<(), EmitError> {
    let reads_row_var = |e: &str| expr_roots(e).into_iter().find(|v| row_vars.contains(v));
    for r in reports.iter().filter(|r| {
        r.function == report.function && r.id != report.id && first <= r.line && r.line <= last
    }) {
        let Some(ind) = &r.induction else { continue };
        if let Some(v) = reads_row_var(&ind.lower).or_else(|| reads_row_var(&ind.upper)) {
            return Err(refuse(format!(
                "the loop at line {} runs over bounds that read `{v}`, which picks a row of `{root}`: rows accessed over different ranges (a triangle) would each need their own section",
                r.line
            )));
        }
    }
    let text = ctx.slice(site.span);
    let toks = code_tokens(text);
    let t = |k: usize| toks.get(k).map_or("", |x| tok_text(text, x));
    for (k, _) in toks.iter().enumerate() {
        if matches!(t(k), "if" | "while" | "?") {
            // The condition: the parenthesized one after `if`/`while`, or the rest of the
            // statement before `?`.
            let cond = if t(k) == "?" {
                let from = (0..k)
                    .rev()
                    .find(|&j| matches!(t(j), ";" | "{" | "}"))
                    .map_or(0, |j| j + 1);
                (from..k).map(t).collect::<Vec<_>>().join(" ")
            } else {
                let mut depth = 0i32;
                let mut out = Vec::new();
                for j in k + 1..toks.len() {
                    match t(j) {
                        "(" => depth += 1,
                        ")" => depth -= 1,
                        _ => {}
                    }
                    out.push(t(j));
                    if depth == 0 {
                        break;
                    }
                }
                out.join(" ")
            };
            if let Some(v) = reads_row_var(&cond) {
                return Err(refuse(format!(
                    "a condition of the loop reads `{v}`, which picks a row of `{root}`: rows accessed over different ranges would each need their own section"
                )));
            }
        }
    }
    // `a[i][i]`: each name's accesses, the subscript after it.
    for r in rows {
        let own: BTreeSet<String> = r
            .subscripts
            .iter()
            .flat_map(|s| expr_roots(s))
            .filter(|v| row_vars.contains(v))
            .collect();
        // A row the kernel does not move (`r[i3][i2]` with both set outside it) is one row
        // whatever the kernel reads in it.
        if own.is_empty() {
            continue;
        }
        let param_text = c_text(&r.param.name);
        let name = crate::ctext::token_strings(&param_text);
        let mut found = false;
        for k in 0..toks.len() {
            if k + name.len() >= toks.len()
                || (0..name.len()).any(|j| t(k + j) != name[j])
                || (k > 0 && matches!(t(k - 1), "." | "->"))
            {
                continue;
            }
            found = true;
            let open = k + name.len();
            if t(open) != "[" {
                continue;
            }
            let close = closing_bracket(text, &toks, open);
            let sub = (open + 1..close.min(toks.len()))
                .map(t)
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(v) = expr_roots(&sub).into_iter().find(|v| own.contains(v)) {
                return Err(refuse(format!(
                    "`{}[{sub}]` reads `{v}`, which also picks the row: rows accessed over different ranges would each need their own section",
                    r.param.name
                )));
            }
        }
        if !found {
            return Err(refuse(format!(
                "`{}`, a row of `{root}`, is not written as such in the loop's text: its accesses cannot be checked to cover the same range in every row",
                r.param.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_their_subscripts() {
        assert_eq!(
            subscripted("u[2 * i3 + 1][a[k]]"),
            Some(("u".to_string(), vec!["2 * i3 + 1".into(), "a[k]".into()]))
        );
        assert_eq!(subscripted("u"), Some(("u".to_string(), vec![])));
        assert_eq!(subscripted("s.u[1]"), None);
        assert_eq!(subscripted("u[1].x"), None);
        assert_eq!(
            subscripted("z[i - 1][j]@753"),
            Some(("z".to_string(), vec!["i - 1".into(), "j".into()]))
        );
    }

    #[test]
    fn rows_named_by_a_variable_take_a_tree() {
        assert!(wants_tree("u[k][j]"));
        assert!(wants_tree("u[i]"));
        assert!(wants_tree("z[i - 1][j]@12"));
        assert!(!wants_tree("u"));
        assert!(!wants_tree("s->u[i]"));
    }
}
