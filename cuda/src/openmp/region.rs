//! `#pragma omp target data` around a sequential loop (a time-step or sweep loop) that holds
//! ported loops of one function, so their arrays stay on the device for all its iterations
//! instead of crossing at every target region; `target update` directives where
//! the host code between the kernels reads or writes a mapped array.
//!
//! The kernels keep their own `map` clauses: inside the region the data is present and
//! OpenMP's reference counting transfers nothing at their entry or exit, so correctness
//! never depends on editing them. A region is only made where every host access to a mapped
//! array inside the loop is seen (an element access through the array's own name); a call
//! that may touch memory, a pointer use of a mapped array, or an access through another
//! pointer leaves the loop without a region, with why.
//!
//! An array a kernel writes is mapped `tofrom`, never `from`: a written section is the
//! envelope of the stores (holes of a strided section, the border a stencil leaves), and a
//! `from` region would copy back device memory nobody initialized there.

use super::clauses::{ArrayMap, LoopPort};
use super::error::RegionError;
use super::sections::{covering, union, union_bytes, Section};
use crate::ctext::expr_roots;
use crate::plan::Ctx;
use advisor::model::{Induction, LoopReport, Quantity};
use frontend::access_sites::{AccessMode, AccessSite, LoopSite, Sites};
use frontend::ir::Span;
use frontend::loop_ref::LoopRef;
use frontend::types::Type;
use frontend::unit::Unit;
use num_rational::BigRational;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use symbolic::{Expr, Var};

/// A data region to write around one loop.
#[derive(Clone, Debug)]
pub struct DataRegion {
    /// The enclosing loop.
    pub loop_id: LoopRef,
    pub function: String,
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    /// `for`, `while` or `do`: what the rewrite expects at `line:col`.
    pub keyword: String,
    /// `#pragma omp target data map(...)`, continued on further lines when long.
    pub pragma: String,
    /// `target update` directives: where each goes (before line:col), in the order to write.
    pub updates: Vec<(u32, u32, String)>,
    /// The arrays that stay on the device.
    pub arrays: Vec<String>,
    /// The ported loops inside.
    pub ports: Vec<LoopRef>,
}

impl DataRegion {
    /// What emit says about it.
    pub fn describe(&self) -> String {
        let updates = self.updates.len();
        format!(
            "data region around the loop at {}: {} stay{} on the device across its iterations ({} ported loops inside{})",
            self.loop_id,
            self.arrays.join(", "),
            if self.arrays.len() == 1 { "s" } else { "" },
            self.ports.len(),
            if updates == 0 {
                String::new()
            } else {
                format!(
                    ", {updates} `target update` for the host code between them"
                )
            }
        )
    }
}

/// The regions of one unit's ports, and why loops around ports got none.
#[derive(Debug, Default)]
pub struct Regions {
    pub regions: Vec<DataRegion>,
    pub declined: Vec<String>,
}

/// For each loop of `unit` that no port is and that holds one or more of `ports` of its
/// function, outermost first: a data region when one is valid there, else the same question
/// for the loops inside it.
pub fn plan_regions(unit: &Unit, reports: &[LoopReport], ports: &[LoopPort]) -> Regions {
    let mut out = Regions::default();
    if ports.is_empty() {
        return out;
    }
    let Ok(sites) = frontend::access_sites::access_sites(&unit.preprocessed) else {
        return out;
    };
    let text = frontend::preprocess::blank_parser_shims(&unit.preprocessed.text);
    // Each port's loop site.
    let placed: Vec<(usize, &LoopPort)> = ports
        .iter()
        .filter_map(|p| {
            sites
                .loops
                .iter()
                .position(|l| l.span == p.span)
                .map(|k| (k, p))
        })
        .collect();
    let planner = Planner {
        unit,
        reports,
        sites: &sites,
        text: &text,
        placed: &placed,
    };
    let roots: Vec<usize> = (0..sites.loops.len())
        .filter(|&k| sites.loops[k].parent.is_none())
        .collect();
    for k in roots {
        planner.visit(k, &mut out);
    }
    out
}

struct Planner<'a> {
    unit: &'a Unit,
    reports: &'a [LoopReport],
    sites: &'a Sites,
    text: &'a str,
    placed: &'a [(usize, &'a LoopPort)],
}

/// What the host code needs around one statement inside the region.
#[derive(Default)]
struct Around {
    /// Arrays to bring back before it (it reads or writes them, a kernel writes them).
    from: BTreeSet<String>,
    /// Arrays to send after it (it writes them).
    to: BTreeSet<String>,
}

impl Planner<'_> {
    fn inside(&self, outer: usize, inner: usize) -> bool {
        let mut p = self.sites.loops[inner].parent;
        while let Some(k) = p {
            if k == outer {
                return true;
            }
            p = self.sites.loops[k].parent;
        }
        false
    }

    fn id(&self, span: Span) -> String {
        self.unit.loop_id_at(span)
    }

    fn line(&self, offset: u32) -> u32 {
        self.unit
            .preprocessed
            .source_map
            .locate(offset as usize)
            .line
    }

    fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    fn visit(&self, k: usize, out: &mut Regions) {
        if self.placed.iter().any(|(s, _)| *s == k) {
            return; // a port: its inner loops are in its target region
        }
        let inner: Vec<&LoopPort> = self
            .placed
            .iter()
            .filter(|(s, _)| self.inside(k, *s))
            .map(|(_, p)| *p)
            .collect();
        // No port inside maps an array (scalars and reductions only): nothing to keep on
        // the device, and `target data` needs a map clause.
        if inner.iter().all(|p| p.arrays.is_empty() && !p.maps_structs) {
            return;
        }
        match self.region(k, &inner) {
            Ok(r) => {
                out.regions.push(r);
                return;
            }
            Err(why) => out.declined.push(format!(
                "no data region around the loop at {} ({} ported loops inside): {why}; each ported loop maps its own data",
                self.id(self.sites.loops[k].keyword),
                inner.len()
            )),
        }
        let children: Vec<usize> = (0..self.sites.loops.len())
            .filter(|&c| self.sites.loops[c].parent == Some(k))
            .collect();
        for c in children {
            self.visit(c, out);
        }
    }

    /// `port` with each array's section taken over the values of the counters of the
    /// loops around it up to `k` (innermost first), where they are affine in them. Only
    /// the loops around the port: after a loop its counter holds a value outside them.
    fn over_counters(&self, k: usize, port: &LoopPort) -> LoopPort {
        let mut out = port.clone();
        let Some(&(mut at, _)) = self.placed.iter().find(|(_, p)| p.loop_id == port.loop_id) else {
            return out;
        };
        while at != k {
            let Some(parent) = self.sites.loops[at].parent else {
                break;
            };
            at = parent;
            let id = self.unit.loop_ref_at(self.sites.loops[at].keyword);
            let Some(induction) = self
                .reports
                .iter()
                .find(|r| Some(&r.id) == id.as_ref())
                .and_then(|r| r.induction.as_ref())
            else {
                continue;
            };
            for a in out.arrays.iter_mut() {
                let follows = a.bytes.as_ref().is_some_and(|(lo, hi, _)| {
                    expr_roots(lo)
                        .into_iter()
                        .chain(expr_roots(hi))
                        .any(|r| r == induction.var)
                });
                if let Some(w) = follows.then(|| over_counter(a, induction)).flatten() {
                    *a = w;
                }
            }
        }
        out
    }

    /// The region around loop `k` holding `ports`, or why there is none.
    fn region(&self, k: usize, ports: &[&LoopPort]) -> Result<DataRegion, RegionError> {
        let site = &self.sites.loops[k];
        let function = &ports[0].function;
        self.check_shape(site, ports)?;
        // Sections that follow the counters of the loops between a port and this one are
        // taken over all the values those counters take.
        let widened: Vec<LoopPort> = ports.iter().map(|p| self.over_counters(k, p)).collect();
        let mut arrays = merge(&widened.iter().collect::<Vec<_>>())?;
        let ctx = Ctx::for_function(self.unit, function).map_err(RegionError::Context)?;

        let (accesses, assigned) = self.assigned_inside(site);
        let loop_id = self
            .unit
            .loop_ref_at(site.keyword)
            .ok_or(RegionError::Unplaced)?;
        settle_changing_sections(&mut arrays, &assigned, ports, &loop_id)?;

        let mut around = self.host_updates(site, ports, &accesses, &arrays, &ctx)?;

        self.drop_repeated_updates(site, ports, &mut around);

        let map = &self.unit.preprocessed.source_map;
        let start = map.locate(site.keyword.start as usize);
        let end = map.locate(site.span.end.saturating_sub(1) as usize);
        if map.is_system_header(start.file) || start.file != end.file {
            return Err(RegionError::LoopInMacro);
        }
        let file = map.path(start.file).to_path_buf();
        let updates = self.placed_updates(start.file, &around, &arrays)?;

        let clauses = data_clauses(&arrays);
        Ok(DataRegion {
            loop_id,
            function: function.clone(),
            file,
            line: start.line,
            col: start.col,
            keyword: self.slice(site.keyword).to_string(),
            pragma: super::clauses::pragma_text("#pragma omp target data", &clauses),
            updates,
            arrays: arrays.keys().cloned().collect(),
            ports: ports.iter().map(|p| p.loop_id.clone()).collect(),
        })
    }

    /// Refuses a loop whose ports map structs or re-run a failing iteration, or that
    /// control can leave early (`return`, `goto`).
    fn check_shape(&self, site: &LoopSite, ports: &[&LoopPort]) -> Result<(), RegionError> {
        if let Some(p) = ports.iter().find(|p| p.maps_structs) {
            return Err(RegionError::MapsStructs {
                port: p.loop_id.clone(),
            });
        }
        if let Some(p) = ports.iter().find(|p| p.rerun.is_some()) {
            return Err(RegionError::ErrorPath {
                port: p.loop_id.clone(),
            });
        }
        if self.sites.functions[site.function]
            .returns
            .iter()
            .any(|r| within(*r, site.span))
        {
            return Err(RegionError::Return);
        }
        if crate::ctext::token_strings(self.slice(site.span)).contains(&"goto") {
            return Err(RegionError::Goto);
        }
        Ok(())
    }

    /// The accesses inside the loop, and the names it assigns or declares (not known
    /// before it) with the line of the first such access.
    fn assigned_inside(&self, site: &LoopSite) -> (Vec<&AccessSite>, BTreeMap<String, u32>) {
        // Names the loop assigns or declares: not known before it.
        let accesses: Vec<&AccessSite> = self
            .sites
            .accesses
            .iter()
            .filter(|a| within(a.span, site.span))
            .collect();
        let mut assigned: BTreeMap<String, u32> = BTreeMap::new();
        for a in &accesses {
            let Some(v) = &a.variable else { continue };
            let declared_inside = v
                .local_decl
                .is_some_and(|d| site.span.start <= d && d < site.span.end);
            if a.mode != AccessMode::Read || declared_inside {
                assigned
                    .entry(v.name.clone())
                    .or_insert_with(|| self.line(a.span.start));
            }
        }
        (accesses, assigned)
    }

    /// The `target update`s the host code inside the loop, outside the kernels, needs
    /// around its statements; an access the region cannot follow refuses it.
    fn host_updates(
        &self,
        site: &LoopSite,
        ports: &[&LoopPort],
        accesses: &[&AccessSite],
        arrays: &BTreeMap<String, ArrayMap>,
        ctx: &Ctx<'_>,
    ) -> Result<BTreeMap<(u32, u32), Around>, RegionError> {
        // The host code inside the loop, outside the kernels.
        let host: Vec<&AccessSite> = accesses
            .iter()
            .copied()
            .filter(|a| !ports.iter().any(|p| within(a.span, p.span)))
            .collect();
        let element_bases: BTreeSet<(u32, u32)> = self
            .sites
            .accesses
            .iter()
            .filter(|a| a.variable.is_none())
            .map(|a| (a.base.start, a.base.end))
            .collect();
        let mut around: BTreeMap<(u32, u32), Around> = BTreeMap::new();
        for a in &host {
            let line = self.line(a.span.start);
            let after = self.text[a.span.end as usize..].trim_start();
            if check_variable_access(a, after, line, arrays, ctx, &element_bases)? {
                continue;
            }
            if after.starts_with('(') {
                return Err(RegionError::CallThroughPointer { line });
            }
            let base = self.slice(a.base).trim();
            let root = base
                .trim_start_matches(['(', '*', ' '])
                .trim_end_matches([')', ' ']);
            if !is_identifier(root) {
                return Err(RegionError::UnknownArray {
                    access: self.slice(a.span).to_string(),
                    line,
                });
            }
            let Some(m) = arrays.get(root) else {
                if distinct_object(ctx, self.sites, site.function, root, &element_bases) {
                    continue;
                }
                return Err(RegionError::MayAlias {
                    access: self.slice(a.span).to_string(),
                    line,
                    root: root.to_string(),
                });
            };
            let what = self.slice(a.span);
            let item = self.statement(a.span, site, ports, false).ok_or_else(|| {
                RegionError::NoUpdatePlace {
                    access: what.to_string(),
                    line,
                }
            })?;
            // Before a read of what a kernel wrote, and before a write too: the `update to`
            // after it sends the whole section, which must hold the kernels' values.
            if m.written {
                self.check_unlabeled(item, line)?;
                around
                    .entry((item.start, item.end))
                    .or_default()
                    .from
                    .insert(root.to_string());
            }
            if a.mode != AccessMode::Read {
                // After a statement that control cannot leave sideways: a `break` or
                // `continue` would skip the update.
                let item = self.statement(a.span, site, ports, true).ok_or_else(|| {
                    RegionError::JumpsPastUpdate {
                        access: what.to_string(),
                        line,
                    }
                })?;
                self.check_unlabeled(item, line)?;
                around
                    .entry((item.start, item.end))
                    .or_default()
                    .to
                    .insert(root.to_string());
            }
        }
        Ok(around)
    }

    /// The `target update` directives by place (line, column in the loop's file `file`),
    /// in the order to write them.
    fn placed_updates(
        &self,
        file: frontend::source_map::FileId,
        around: &BTreeMap<(u32, u32), Around>,
        arrays: &BTreeMap<String, ArrayMap>,
    ) -> Result<Vec<(u32, u32, String)>, RegionError> {
        let map = &self.unit.preprocessed.source_map;
        // Directives by position; at one position the `to` after a statement comes before
        // the `from` before the next one (the host's write must reach the device first).
        let mut placed: BTreeMap<(u32, u32), Vec<(u8, String)>> = BTreeMap::new();
        let item_text = |names: &BTreeSet<String>| -> String {
            names
                .iter()
                .map(|n| render(n, &arrays[n]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for ((s, e), what) in around {
            for (offset, order, dir, names) in
                [(*s, 1u8, "from", &what.from), (*e, 0u8, "to", &what.to)]
            {
                if names.is_empty() {
                    continue;
                }
                let loc = if dir == "from" {
                    map.locate(offset as usize)
                } else {
                    // lang-c's span of an `if` whose body has no braces runs into the next
                    // statement's first character: end at the item's last `;` or `}`.
                    let text = self.slice(Span::new(*s as usize, *e as usize));
                    let offset = text.rfind([';', '}']).map_or(offset, |k| *s + k as u32 + 1);
                    let last = map.locate(offset.saturating_sub(1) as usize);
                    frontend::source_map::Location {
                        col: last.col + 1,
                        ..last
                    }
                };
                if loc.file != file {
                    return Err(RegionError::HostCodeInMacro);
                }
                placed.entry((loc.line, loc.col)).or_default().push((
                    order,
                    format!("#pragma omp target update {dir}({})", item_text(names)),
                ));
            }
        }
        let updates: Vec<(u32, u32, String)> = placed
            .into_iter()
            .map(|((l, c), mut v)| {
                v.sort();
                let text = v.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join("\n");
                (l, c, text)
            })
            .collect();
        Ok(updates)
    }

    /// Leaves out a `target update from` of an array that an earlier statement of the same
    /// run already brought back: statements that follow one another in one block with no
    /// ported loop, label or other text between them run in that order, and only a kernel
    /// makes the host's copy stale again (a host write makes it newer, and is sent after).
    fn drop_repeated_updates(
        &self,
        site: &LoopSite,
        ports: &[&LoopPort],
        around: &mut BTreeMap<(u32, u32), Around>,
    ) {
        let items: Vec<Span> = self
            .sites
            .block_items
            .iter()
            .copied()
            .filter(|b| within(*b, site.body))
            .collect();
        // The innermost item strictly around each item: siblings share it.
        let parent = |b: Span| {
            items
                .iter()
                .filter(|o| **o != b && within(b, **o))
                .max_by_key(|o| o.start)
                .map(|o| (o.start, o.end))
        };
        let mut groups: BTreeMap<Option<(u32, u32)>, Vec<Span>> = BTreeMap::new();
        for b in &items {
            groups.entry(parent(*b)).or_default().push(*b);
        }
        for siblings in groups.values_mut() {
            siblings.sort_by_key(|b| b.start);
            let mut fresh: BTreeSet<String> = BTreeSet::new();
            let mut previous_end: Option<u32> = None;
            for b in siblings.iter() {
                let gap = previous_end.map_or("", |e| &self.text[e as usize..b.start as usize]);
                let toks = crate::ctext::token_strings(self.slice(*b));
                let labeled =
                    matches!(toks.first(), Some(&"case" | &"default")) || toks.get(1) == Some(&":");
                let joined = previous_end.is_some() && crate::ctext::code_tokens(gap).is_empty();
                if !joined || labeled || ports.iter().any(|p| overlaps(p.span, *b)) {
                    fresh.clear();
                }
                previous_end = Some(b.end);
                if ports.iter().any(|p| overlaps(p.span, *b)) {
                    continue;
                }
                if let Some(a) = around.get_mut(&(b.start, b.end)) {
                    let wanted = std::mem::take(&mut a.from);
                    a.from = wanted.difference(&fresh).cloned().collect();
                    fresh.extend(wanted);
                }
            }
        }
        around.retain(|_, a| !a.from.is_empty() || !a.to.is_empty());
    }

    /// An update before a labeled statement would be skipped by a jump to the label.
    fn check_unlabeled(&self, item: Span, line: u32) -> Result<(), RegionError> {
        let toks = crate::ctext::token_strings(self.slice(item));
        if matches!(toks.first(), Some(&"case" | &"default")) || toks.get(1) == Some(&":") {
            return Err(RegionError::Labeled { line });
        }
        Ok(())
    }

    /// The outermost statement inside `site`'s body that holds `span` and no ported loop
    /// (nor, with `no_jumps`, a `break` or `continue`): where a `target update` for the
    /// access goes.
    fn statement(
        &self,
        span: Span,
        site: &LoopSite,
        ports: &[&LoopPort],
        no_jumps: bool,
    ) -> Option<Span> {
        self.sites
            .block_items
            .iter()
            .filter(|b| within(**b, site.body) && within(span, **b))
            .filter(|b| !ports.iter().any(|p| overlaps(p.span, **b)))
            .filter(|b| {
                !no_jumps
                    || !crate::ctext::token_strings(self.slice(**b))
                        .iter()
                        .any(|t| matches!(*t, "break" | "continue"))
            })
            .min_by_key(|b| (b.start, std::cmp::Reverse(b.end)))
            .copied()
    }
}
/// Checks a host access `a` to a variable itself (not an element; `after` is the text
/// after it, on `line`): a call only of a function safe on the host, a pointer or array
/// only as the base of an element access. False for an element access.
fn check_variable_access(
    a: &AccessSite,
    after: &str,
    line: u32,
    arrays: &BTreeMap<String, ArrayMap>,
    ctx: &Ctx<'_>,
    element_bases: &BTreeSet<(u32, u32)>,
) -> Result<bool, RegionError> {
    let Some(v) = &a.variable else {
        return Ok(false);
    };
    if after.starts_with('(') && !v.name.is_empty() {
        if !host_safe_call(&v.name) {
            return Err(RegionError::UnsafeCall {
                function: v.name.clone(),
                line,
            });
        }
        return Ok(true);
    }
    // A pointer or array used as a value (passed to a call, copied, offset) and
    // not as the base of an element access: what it reaches is not followed.
    let pointer = arrays.contains_key(&v.name)
        || ctx
            .type_of(&v.name)
            .is_some_and(|t| matches!(ctx.types.get(t), Type::Pointer { .. } | Type::Array { .. }));
    if pointer && !element_bases.contains(&(a.span.start, a.span.end)) {
        return Err(RegionError::PointerUsed {
            name: v.name.clone(),
            line,
        });
    }
    Ok(true)
}

/// Keeps a section that changes inside the loop (it names a variable the loop assigns) only
/// where the loop's own port maps it over a section that does not: then that section.
fn settle_changing_sections(
    arrays: &mut BTreeMap<String, ArrayMap>,
    assigned: &BTreeMap<String, u32>,
    ports: &[&LoopPort],
    loop_id: &LoopRef,
) -> Result<(), RegionError> {
    for (name, m) in arrays.iter_mut() {
        if let Some(line) = assigned.get(name) {
            return Err(RegionError::AssignedInside {
                name: name.clone(),
                line: *line,
            });
        }
        if let Some((variable, line)) = changing_name(m, assigned) {
            // The section the loop itself would map, where its port gave way to these.
            match envelope(ports, loop_id, name) {
                Some(e) if changing_name(e, assigned).is_none() => {
                    let e = e.clone();
                    let (read, written) = (m.read || e.read, m.written || e.written);
                    *m = e;
                    m.read = read;
                    m.written = written;
                }
                _ => {
                    return Err(RegionError::SectionChanges {
                        section: render(name, m),
                        variable,
                        line,
                    })
                }
            }
        }
    }
    Ok(())
}

/// The region's `map` clauses: `to` for the arrays only read, `tofrom` for the written.
fn data_clauses(arrays: &BTreeMap<String, ArrayMap>) -> Vec<String> {
    let mut to = Vec::new();
    let mut tofrom = Vec::new();
    for (name, m) in arrays {
        if m.written {
            tofrom.push(render(name, m));
        } else {
            to.push(render(name, m));
        }
    }
    let mut clauses = Vec::new();
    if !to.is_empty() {
        clauses.push(format!("map(to: {})", to.join(", ")));
    }
    if !tofrom.is_empty() {
        clauses.push(format!("map(tofrom: {})", tofrom.join(", ")));
    }
    clauses
}

/// The arrays of `ports` with their sections united and their directions joined; refused
/// when a port maps something other than a plain variable.
fn merge(ports: &[&LoopPort]) -> Result<BTreeMap<String, ArrayMap>, RegionError> {
    let mut out: BTreeMap<String, ArrayMap> = BTreeMap::new();
    for p in ports {
        for a in &p.arrays {
            if !is_identifier(&a.name) {
                return Err(RegionError::NotPlainVariable {
                    port: p.loop_id.clone(),
                    name: a.name.clone(),
                });
            }
            match out.get_mut(&a.name) {
                None => {
                    out.insert(a.name.clone(), a.clone());
                }
                Some(m) => {
                    m.read |= a.read;
                    m.written |= a.written;
                    m.section = match (&m.section, &a.section) {
                        (Some(x), Some(y)) => Some(union(x, y)),
                        _ => None,
                    };
                    // The same union in bytes, where bounds compare better than after the
                    // division into rows.
                    m.bytes = match (&m.bytes, &a.bytes) {
                        (Some((lo_m, hi_m, unit)), Some((lo_a, hi_a, unit_a)))
                            if unit == unit_a && m.section.is_some() =>
                        {
                            let (lo, hi) = union_bytes((lo_m, hi_m), (lo_a, hi_a));
                            m.section = Some(covering(&lo, &hi, unit));
                            Some((lo, hi, unit.clone()))
                        }
                        _ => None,
                    };
                }
            }
        }
    }
    Ok(out)
}

/// A name the section of `m` reads that the loop assigns, with the line where it does.
fn changing_name(m: &ArrayMap, assigned: &BTreeMap<String, u32>) -> Option<(String, u32)> {
    let s = m.section.as_ref()?;
    let roots = expr_roots(&s.start)
        .into_iter()
        .chain(expr_roots(&s.length));
    let mut found = roots
        .filter(|r| r != "WW_MIN" && r != "WW_MAX")
        .filter_map(|r| assigned.get(&r).map(|line| (r, *line)));
    found.next()
}

/// The map of `name` that the port of the loop `loop_id` would have made, carried by the
/// ports chosen inside it instead (`LoopPort::enclosing`): it covers their sections over
/// all of that loop's iterations.
fn envelope<'p>(ports: &[&'p LoopPort], loop_id: &LoopRef, name: &str) -> Option<&'p ArrayMap> {
    ports
        .iter()
        .filter_map(|p| p.enclosing.as_ref())
        .filter(|(id, _)| id == loop_id)
        .find_map(|(_, maps)| maps.iter().find(|m| m.name == name))
}

/// The map of `m` over every value of the counter `i` of the loop around it, when the
/// section's bytes `[lo, hi)` are affine in the counter (so the union over the iterations
/// is `[lo` at the end that makes it least, `hi` at the end that makes it greatest`)`) and
/// the counter steps by one. `None` otherwise.
fn over_counter(m: &ArrayMap, i: &Induction) -> Option<ArrayMap> {
    let (lo, hi, unit) = m.bytes.as_ref()?;
    let var = Var::new(&i.var);
    // The last value from the trip count, not from `upper`: that is the bound as the loop
    // writes it, inclusive for `i <= iend` (taking it as exclusive left out the kernels of
    // the last iteration, which then extended the region's section at run time).
    let (lower, trips) = (i.lower.expr()?, i.trip_count.expr()?);
    let one = Expr::constant(1);
    let (least, greatest) = match i.step.expr()?.as_integer()?.try_into().ok()? {
        1i64 => (
            lower.clone(),
            lower.checked_add(trips).ok()?.checked_sub(&one).ok()?,
        ),
        -1 => (
            lower.checked_sub(trips).ok()?.checked_add(&one).ok()?,
            lower.clone(),
        ),
        _ => return None,
    };
    let at = |e: &Expr, value: &Expr| -> Option<Expr> {
        let map = [(var.clone(), value.clone())].into_iter().collect();
        e.substitute(&map).ok()
    };
    // The end of the range that makes the affine `p` least (or greatest).
    let piece = |p: &symbolic::Poly, greatest_wanted: bool| -> Option<symbolic::Poly> {
        let e = Expr::Poly(p.clone());
        if !e.contains_var(&var) {
            return Some(p.clone());
        }
        if !e.is_linear_in(&var) {
            return None;
        }
        let slope = at(&e, &Expr::constant(1))?
            .checked_sub(&at(&e, &Expr::constant(0))?)
            .ok()?
            .as_constant()?;
        let rising = slope >= BigRational::from_integer(0.into());
        let pick = if rising == greatest_wanted {
            &greatest
        } else {
            &least
        };
        at(&e, pick)?.as_poly().cloned()
    };
    // Of a min or max of affine pieces, each piece at its own extreme: for the least
    // value `min(p(t), q(t)) >= min(least p, least q)` and `max(p(t), q(t)) >= max(least
    // p, least q)`, and the same with the greatest, so the result bounds every iteration.
    let extreme = |q: &Quantity, greatest_wanted: bool| -> Option<Quantity> {
        let e = q.expr()?;
        let pieces = e
            .parts()
            .iter()
            .map(|p| piece(p, greatest_wanted))
            .collect::<Option<Vec<symbolic::Poly>>>()?;
        let env = symbolic::SignEnv::new();
        let pieces: Vec<Expr> = pieces.into_iter().map(Expr::Poly).collect();
        let joined = match e {
            Expr::Poly(_) => pieces.into_iter().next()?,
            Expr::Min(_) => symbolic::min_of(&pieces, &env).ok()?,
            Expr::Max(_) => symbolic::max_of(&pieces, &env).ok()?,
        };
        Some(Quantity::of(&joined))
    };
    let (lo, hi) = (extreme(lo, false)?, extreme(hi, true)?);
    Some(ArrayMap {
        name: m.name.clone(),
        section: Some(covering(&lo, &hi, unit)),
        bytes: Some((lo, hi, unit.clone())),
        read: m.read,
        written: m.written,
    })
}

fn render(name: &str, m: &ArrayMap) -> String {
    m.section
        .as_ref()
        .map_or_else(|| name.to_string(), |s: &Section| s.render(name))
}

/// Whether `root` is an array object of its own (declared as an array, never used as a
/// pointer in the function): no mapped pointer can reach it.
fn distinct_object(
    ctx: &Ctx<'_>,
    sites: &Sites,
    function: usize,
    root: &str,
    element_bases: &BTreeSet<(u32, u32)>,
) -> bool {
    let array = ctx
        .type_of(root)
        .is_some_and(|t| matches!(ctx.types.get(t), Type::Array { .. }));
    let decays = sites.accesses.iter().any(|a| {
        a.function == function
            && a.variable.as_ref().is_some_and(|v| v.name == root)
            && !element_bases.contains(&(a.span.start, a.span.end))
    });
    array && !decays
}

/// Library functions a host statement may call without touching the program's arrays
/// (other than through arguments, which are accesses of their own).
fn host_safe_call(name: &str) -> bool {
    const OUTPUT: [&str; 6] = ["printf", "fprintf", "puts", "putchar", "fputs", "fflush"];
    const MATH: [&str; 22] = [
        "sqrt", "fabs", "abs", "labs", "exp", "log", "log10", "pow", "sin", "cos", "tan", "atan",
        "atan2", "floor", "ceil", "fmin", "fmax", "fmod", "sqrtf", "fabsf", "expf", "round",
    ];
    OUTPUT.contains(&name) || MATH.contains(&name)
}

fn within(inner: Span, outer: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

fn overlaps(a: Span, b: Span) -> bool {
    a.start < b.end && b.start < a.end
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `over_counter` of the bytes `[lo, hi)` (unit 8) over a counter `t` from `lower` by
    /// `step` while short of `upper`: the widened bytes, or `None`.
    /// A quantity as a report file gives it.
    fn q(text: &str) -> Quantity {
        Quantity::read(text)
    }

    fn check(
        lo: &str,
        hi: &str,
        lower: &str,
        upper: &str,
        step: &str,
        expected: Option<(&str, &str)>,
    ) {
        let m = ArrayMap {
            name: "a".into(),
            section: None,
            bytes: Some((q(lo), q(hi), q("8"))),
            read: true,
            written: false,
        };
        // The trip count of an exclusive `upper`, as the report gives it.
        let trip_count = match step {
            "1" => format!("({upper}) - ({lower})"),
            "-1" => format!("({lower}) - ({upper})"),
            _ => "1".into(),
        };
        let i = Induction {
            var: "t".into(),
            lower: q(lower),
            upper: q(upper),
            step: q(step),
            trip_count: q(&trip_count),
            last_value: false,
        };
        let got = over_counter(&m, &i).map(|w| w.bytes.unwrap());
        let expected = expected.map(|(l, h)| (q(l), q(h), q("8")));
        assert_eq!(
            got, expected,
            "[{lo}, {hi}) over t = {lower}..{upper} by {step}"
        );
    }

    /// `for (t = 1; t <= n; t++)`: the report's `upper` is the bound as written, `n`, and
    /// the last value `n` comes from the trip count; the section reaches `fict[n]`.
    #[test]
    fn an_inclusive_bound_widens_to_its_last_value() {
        let m = ArrayMap {
            name: "a".into(),
            section: None,
            bytes: Some((q("8*t - 8"), q("8*t + 8"), q("8"))),
            read: true,
            written: true,
        };
        let i = Induction {
            var: "t".into(),
            lower: q("1"),
            upper: q("n"),
            step: q("1"),
            trip_count: q("n"),
            last_value: false,
        };
        let got = over_counter(&m, &i).and_then(|w| w.bytes);
        assert_eq!(got, Some((q("0"), q("8*n + 8"), q("8"))));
    }

    #[test]
    fn sections_are_widened_over_the_values_of_the_counter() {
        // `fict[t]`: from the first value's start to the last value's end.
        check("8*t", "8*t + 8", "0", "tmax", "1", Some(("0", "8*tmax")));
        // Falling with the counter: the ends swap.
        check(
            "8*n - 8*t",
            "8*n - 8*t + 8",
            "0",
            "m",
            "1",
            Some(("-8*m + 8*n + 8", "8*n + 8")),
        );
        // Counting down from `n - 1` to 0 (`t > -1`).
        check("8*t", "8*t + 8", "n - 1", "-1", "-1", Some(("0", "8*n")));
        // A union of a rising and a constant piece: each piece at its own end.
        check(
            "min(8*t, 8*k)",
            "max(8*t + 8, 8*k + 8)",
            "k + 1",
            "n",
            "1",
            Some(("8*k", "max(8*k + 8, 8*n)")),
        );
        // Not affine in the counter, or another step: not widened.
        check("8*t*t", "8*t*t + 8", "0", "n", "1", None);
        check("8*t", "8*t + 8", "0", "n", "2", None);
    }
}
