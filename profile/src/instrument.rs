//! Source-to-source instrumentation of one preprocessed translation unit.
//!
//! The output is the preprocessed text (line markers kept, so diagnostics and `__LINE__`
//! still name the user's files) with the runtime interface pasted in front, calls to the
//! runtime around and inside every loop, access wrappers when some loop of the unit is
//! tracked for dependences, and the unit's loop and site tables at the end. It is compiled
//! as a `.i` file: the compiler does not preprocess it again.
//!
//! Access wrappers take the address of the accessed object once, with GNU statement
//! expressions and `__auto_type`, so no user expression is evaluated twice:
//! a read `E` becomes `(*({ __auto_type p = &(E); __ww_rd(p, sizeof *p, site); p; }))`, and
//! `L = R` becomes `({ __auto_type p = &(L); __typeof__(*p) v = (R); __ww_wr(...); *p = v; })`
//! so the write is recorded after the right-hand side's reads.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use advisor::model::{LoopReport, ParamKind, Verdict};
use advisor::rules::Code;
use advisor::value_name::{has_place, ValueName};
use frontend::access_sites::{access_sites, AccessMode, AccessSite, LoopSite, Sites};
use frontend::diagnostic::Diagnostic;
use frontend::ir::{InstKind, Span};
use frontend::loop_ref::{LoopRef, LoopSelector};
use frontend::unit::Unit;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

pub const RUNTIME_H: &str = include_str!("runtime.h");
pub const RUNTIME_C: &str = include_str!("runtime.c");

/// Which loops get dependence tracking.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LoopSelection {
    /// Loops `analyze` reports as `needs-profile`.
    #[default]
    NeedsProfile,
    All,
    None,
    /// Loop selectors as given, `FILE:LINE` or `FILE:LINE:COL` (see [`LoopSelector`]),
    /// each with its parse, made once; one that does not parse selects nothing, which the
    /// caller reports with the text.
    Ids(Vec<(String, Option<LoopSelector>)>),
}

impl LoopSelection {
    pub fn parse(text: &str) -> LoopSelection {
        match text {
            "needs-profile" | "" => LoopSelection::NeedsProfile,
            "all" => LoopSelection::All,
            "none" => LoopSelection::None,
            ids => LoopSelection::Ids(
                ids.split(',')
                    .map(|s| (s.trim().to_string(), s.trim().parse().ok()))
                    .collect(),
            ),
        }
    }

    /// `id` is `None` for a loop with no place in the source, which no id selects.
    fn selects(&self, id: Option<&LoopRef>, report: Option<&LoopReport>) -> bool {
        match self {
            LoopSelection::NeedsProfile => {
                report.is_some_and(|r| r.verdict == Verdict::NeedsProfile)
            }
            LoopSelection::All => true,
            LoopSelection::None => false,
            LoopSelection::Ids(ids) => ids.iter().any(|(_, want)| {
                want.as_ref()
                    .zip(id)
                    .is_some_and(|(want, id)| want.matches(id))
            }),
        }
    }
}

/// Which accesses of the tracked loops are watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tracking {
    /// Only the accesses of the pairs the static analysis left undecided (`needs_evidence`),
    /// widened to every access of the same array in the loop; a loop with nothing undecided
    /// is only counted. Where the undecided pairs cannot be tied to accesses of the loop
    /// (a callee's memory, a macro expansion, a nest the analysis could not compare), every
    /// access is watched, as in `Full`.
    #[default]
    Undecided,
    /// Every access of every selected loop (the reference the filter is tested against).
    Full,
}

/// An instrumented unit.
#[derive(Clone, Debug)]
pub struct Instrumented {
    pub text: String,
    /// Ids of the loops instrumented, in table order.
    pub loops: Vec<String>,
    /// Ids of the loops with dependence tracking.
    pub tracked: Vec<String>,
    /// Number of instrumented memory accesses.
    pub accesses: usize,
}

enum Piece {
    Text(String),
    Src(usize, usize),
}

struct Node {
    start: usize,
    end: usize,
    pieces: Vec<Piece>,
}

/// Instruments `unit`; `reports` are `analyze`'s reports for it (verdicts, inbounds).
pub fn instrument(
    unit: &Unit,
    reports: &[LoopReport],
    selection: &LoopSelection,
) -> Result<Instrumented, Diagnostic> {
    instrument_with(unit, reports, selection, Tracking::default())
}

/// [`instrument`] with the choice of watched accesses.
pub fn instrument_with(
    unit: &Unit,
    reports: &[LoopReport],
    selection: &LoopSelection,
    tracking: Tracking,
) -> Result<Instrumented, Diagnostic> {
    let pre = &unit.preprocessed;
    // What the C compiler will see: the parser-only shims removed, offsets unchanged.
    let text = frontend::preprocess::blank_parser_shims(&pre.text);
    let sites = access_sites(pre)?;
    let system = pre.source_map.system_ranges();
    let in_system = |s: Span| {
        let o = s.start as usize;
        system.iter().any(|&(a, b)| a <= o && o < b)
    };
    let by_id: HashMap<&LoopRef, &LoopReport> = reports.iter().map(|r| (&r.id, r)).collect();

    // Memory accesses according to lowering: arrays that decay, SSA scalars and
    // bit-field-free checks come from here.
    let mut loads = HashSet::new();
    let mut stores = HashSet::new();
    for f in &unit.lowered.program.functions {
        for inst in &f.insts {
            let s = inst.origin.span;
            match inst.kind {
                InstKind::Load { .. } => loads.insert((s.start, s.end)),
                InstKind::Store { .. } => stores.insert((s.start, s.end)),
                _ => false,
            };
        }
    }
    let types = &unit.lowered.program.types;
    let bit_fields: HashSet<String> = types
        .records()
        .flat_map(|(_, r)| r.fields.iter())
        .filter(|f| f.bit_width.is_some())
        .filter_map(|f| f.name.clone())
        .collect();

    // Loops of user functions, in order; their table index.
    let user_fn: Vec<bool> = sites.functions.iter().map(|f| !in_system(f.span)).collect();
    let mut table: Vec<usize> = Vec::new();
    let mut index_of: HashMap<usize, usize> = HashMap::new();
    for (i, l) in sites.loops.iter().enumerate() {
        if user_fn[l.function] {
            index_of.insert(i, table.len());
            table.push(i);
        }
    }
    let ids: Vec<String> = table
        .iter()
        .map(|&i| unit.loop_id_at(sites.loops[i].keyword))
        .collect();
    let refs: Vec<Option<LoopRef>> = table
        .iter()
        .map(|&i| unit.loop_ref_at(sites.loops[i].keyword))
        .collect();
    let reports_of: Vec<Option<&LoopReport>> = refs
        .iter()
        .map(|id| id.as_ref().and_then(|id| by_id.get(id)).copied())
        .collect();
    // What each selected loop watches: nothing left undecided (counted only), the accesses
    // of its undecided pairs, or everything.
    let watch: Vec<Watch> = table
        .iter()
        .zip(&refs)
        .zip(&reports_of)
        .map(|((&i, id), r)| {
            if !selection.selects(id.as_ref(), *r) {
                return Watch::Nothing;
            }
            // A loop named explicitly, or without a report, is watched in full.
            let named = matches!(selection, LoopSelection::Ids(_));
            match (tracking, r) {
                (Tracking::Undecided, Some(r)) if !named => {
                    undecided_watch(r, &sites.loops[i], &sites, unit)
                }
                _ => Watch::Everything,
            }
        })
        .collect();
    let tracked: Vec<bool> = watch.iter().map(|w| *w != Watch::Nothing).collect();
    let any_tracked = tracked.iter().any(|&t| t);
    // Any loop watched in full needs every access of the unit (its callees' too); else only
    // the chosen ones.
    let chosen: Option<HashSet<usize>> = if watch.contains(&Watch::Everything) {
        None
    } else {
        Some(
            watch
                .iter()
                .flat_map(|w| match w {
                    Watch::Accesses(a) => a.clone(),
                    _ => Vec::new(),
                })
                .collect(),
        )
    };

    let mut nodes: Vec<Node> = allocation_calls(unit, &text, &in_system);
    let mut site_rows: Vec<String> = Vec::new();

    // Accesses.
    if any_tracked {
        let tracked_loops: Vec<&LoopSite> = table
            .iter()
            .zip(&tracked)
            .filter(|(_, &t)| t)
            .map(|(&i, _)| &sites.loops[i])
            .collect();
        for (ai, a) in sites.accesses.iter().enumerate() {
            if !user_fn[a.function] || in_system(a.span) {
                continue;
            }
            if chosen.as_ref().is_some_and(|c| !c.contains(&ai)) {
                continue;
            }
            if !should_wrap(
                a,
                &sites,
                &tracked_loops,
                &loads,
                &stores,
                &bit_fields,
                &by_id,
                unit,
            ) {
                continue;
            }
            let k = site_rows.len();
            site_rows.push(site_row(unit, a));
            nodes.push(access_node(a, k));
        }
    }

    // Functions with loops: a call id, an iteration counter per untracked loop (a local:
    // the loop's frame reads it when it closes, and the compiler keeps it in a register,
    // so counting costs an increment and the body still vectorizes), and returns that
    // close the call's loops; falling off the end closes them too.
    let mut counters: Vec<Vec<usize>> = vec![Vec::new(); sites.functions.len()];
    let mut has_loop = vec![false; sites.functions.len()];
    for (k, &i) in table.iter().enumerate() {
        has_loop[sites.loops[i].function] = true;
        if !tracked[k] {
            counters[sites.loops[i].function].push(k);
        }
    }
    for (fi, f) in sites.functions.iter().enumerate() {
        if !has_loop[fi] || !user_fn[fi] {
            continue;
        }
        let (s, e) = (f.body.start as usize, f.body.end as usize);
        let mut prologue = String::from(" unsigned long long __ww_fr = __ww_fn();");
        for k in &counters[fi] {
            let _ = write!(prologue, " unsigned long long __ww_n{k} = 0;");
        }
        nodes.push(Node {
            start: s,
            end: e,
            pieces: vec![
                Piece::Src(s, s + 1),
                Piece::Text(prologue),
                Piece::Src(s + 1, e - 1),
                Piece::Text(" __ww_leave(__ww_fr); ".into()),
                Piece::Src(e - 1, e),
            ],
        });
        for r in &f.returns {
            let (s, e) = (r.start as usize, r.end as usize);
            nodes.push(Node {
                start: s,
                end: e,
                pieces: vec![
                    Piece::Text("for (__ww_leave(__ww_fr);;) ".into()),
                    Piece::Src(s, e),
                ],
            });
        }
    }

    // Loops.
    let mut loop_rows = Vec::new();
    let mut value_tables = String::new();
    for (k, &i) in table.iter().enumerate() {
        let l = &sites.loops[i];
        let report = reports_of[k];
        // The outermost loop around this one in its function: a load site in its lines
        // (an enclosing loop's bound, `fftblock@627`) is read at this loop's entry too.
        let mut outermost = l;
        while let Some(p) = outermost.parent.map(|p| &sites.loops[p]) {
            outermost = p;
        }
        let lines = loop_lines(unit, outermost);
        let at_entry = EntryScope {
            visible: &l.visible,
            globals: &l.visible_globals,
            lines,
        };
        // Each recorded value: the name the report uses, and the lvalue that holds it.
        let inbounds: Vec<(String, String)> = report
            .filter(|r| r.verdict != Verdict::NotFriendly)
            .map(|r| {
                r.parameters
                    .iter()
                    .filter(|p| p.kind == ParamKind::Scalar && !p.nested)
                    .filter(|p| p.c_type.as_deref().is_some_and(is_integer_type))
                    .filter(|p| l.visible.contains(&p.name))
                    .map(|p| (p.name.clone(), p.name.clone()))
                    .chain(section_reads(r, &at_entry))
                    .fold(Vec::new(), |mut names, n| {
                        if !names.iter().any(|(label, _)| *label == n.0) {
                            names.push(n);
                        }
                        names
                    })
            })
            .unwrap_or_default();
        let bases: Vec<String> = report
            .filter(|r| r.verdict != Verdict::NotFriendly)
            .map(|r| observed_bases(r, &at_entry))
            .unwrap_or_default();
        let (counter, step) = if tracked[k] {
            (
                "0".to_string(),
                format!("{{ __ww_iter(&__ww_L[{k}], __ww_fr); "),
            )
        } else {
            (format!("&__ww_n{k}"), format!("{{ __ww_n{k}++; "))
        };
        let mut enter = format!("{{ __ww_enter(&__ww_L[{k}], __ww_fr, {counter}); ");
        for (slot, (_, lvalue)) in inbounds.iter().enumerate() {
            let _ = write!(
                enter,
                "{}__ww_val(&__ww_L[{k}], {slot}, (long long)({lvalue})); ",
                null_guard(lvalue)
            );
        }
        for (slot, name) in bases.iter().enumerate() {
            // An array (a global, a local) is the object itself, of `sizeof` bytes; a
            // pointer's block is looked up among the program's allocations.
            let _ = write!(
                enter,
                "{}__ww_base(&__ww_L[{k}], {slot}, (const void *)({name}), \
                 __builtin_types_compatible_p(__typeof__({name}), __typeof__(&({name})[0])) ? 0 : sizeof ({name})); ",
                null_guard(name)
            );
        }
        let (s, e) = (l.span.start as usize, l.span.end as usize);
        let (bs, be) = (l.body.start as usize, l.body.end as usize);
        nodes.push(Node {
            start: s,
            end: e,
            pieces: vec![
                Piece::Text(enter),
                Piece::Src(s, bs),
                Piece::Text(step),
                Piece::Src(bs, be),
                Piece::Text(" }".into()),
                Piece::Src(be, e),
                Piece::Text(format!(" __ww_exit(&__ww_L[{k}], __ww_fr); }}")),
            ],
        });
        let parent = l
            .parent
            .and_then(|p| index_of.get(&p))
            .map(|p| format!("&__ww_L[{p}]"))
            .unwrap_or_else(|| "0".into());
        let mut name_table = |prefix: &str, names: &[String]| {
            if names.is_empty() {
                return "0".to_string();
            }
            let names: Vec<String> = names.iter().map(|n| c_string(n)).collect();
            let _ = writeln!(
                value_tables,
                "static const char *const __ww_{prefix}{k}[] = {{{}}};",
                names.join(", ")
            );
            format!("__ww_{prefix}{k}")
        };
        let labels: Vec<String> = inbounds.iter().map(|(label, _)| label.clone()).collect();
        let values = name_table("V", &labels);
        let base_names = name_table("B", &bases);
        loop_rows.push(format!(
            "{{{}, {}, {parent}, {}, {}, {values}, {}, {base_names}}}",
            c_string(&ids[k]),
            c_string(&sites.functions[l.function].name),
            u8::from(tracked[k]),
            inbounds.len(),
            bases.len(),
        ));
    }

    if table.is_empty() {
        // No loop: only the allocation calls change, so that the loops of other units can
        // look up what these allocate.
        let text = if nodes.is_empty() {
            text
        } else {
            let body = render(&text, nodes);
            let mut out = String::with_capacity(body.len() + RUNTIME_H.len() + 64);
            out.push_str("# 1 \"<warpwise-runtime>\"\n");
            out.push_str(RUNTIME_H);
            out.push_str(&body);
            out
        };
        return Ok(Instrumented {
            text,
            loops: Vec::new(),
            tracked: Vec::new(),
            accesses: 0,
        });
    }

    let body = render(&text, nodes);
    let nsites = site_rows.len().max(1);
    let mut out = String::with_capacity(body.len() + 8192);
    out.push_str("# 1 \"<warpwise-runtime>\"\n");
    out.push_str(RUNTIME_H);
    let _ = writeln!(
        out,
        "static __ww_loop_t __ww_L[{}];\nstatic __ww_site_t __ww_S[{nsites}];",
        table.len()
    );
    out.push_str(&body);
    out.push_str("\n# 1 \"<warpwise-tables>\"\n");
    out.push_str(&value_tables);
    let _ = writeln!(
        out,
        "static __ww_loop_t __ww_L[{}] = {{\n  {}\n}};",
        table.len(),
        loop_rows.join(",\n  ")
    );
    let accesses = site_rows.len();
    if site_rows.is_empty() {
        site_rows.push("{\"\", \"\", 0, 0, 0}".into());
    }
    let _ = writeln!(
        out,
        "static __ww_site_t __ww_S[{nsites}] = {{\n  {}\n}};",
        site_rows.join(",\n  ")
    );
    let _ = writeln!(
        out,
        "static __ww_tu_t __ww_T = {{{}, {}, __ww_L, 0}};\n\
         static void __ww_ctor(void) __attribute__((constructor));\n\
         static void __ww_ctor(void) {{ __ww_register(&__ww_T);{} }}",
        c_string(&unit.path.display().to_string()),
        table.len(),
        global_arrays(unit, &in_system)
    );
    Ok(Instrumented {
        text: out,
        tracked: ids
            .iter()
            .zip(&tracked)
            .filter(|(_, &t)| t)
            .map(|(id, _)| id.clone())
            .collect(),
        loops: ids,
        accesses,
    })
}

/// ` __ww_object(g, sizeof (g));` for each file-scope array the unit defines: a pointer a
/// loop receives may point to one (NPB passes its global arrays to its solvers), and the
/// runtime then finds its size as it finds an allocated block's.
fn global_arrays(unit: &Unit, in_system: &dyn Fn(Span) -> bool) -> String {
    let types = &unit.lowered.program.types;
    let mut out = String::new();
    for g in &unit.lowered.program.globals {
        let complete_array = matches!(types.get(g.ty), frontend::types::Type::Array { .. })
            && types.size_of(g.ty).is_some_and(|n| n > 0);
        if complete_array && !g.is_extern && g.local_to.is_none() && !in_system(g.span) {
            let _ = write!(
                out,
                " __ww_object((const void *)({0}), sizeof ({0}));",
                g.name
            );
        }
    }
    out
}

/// The C library's allocation functions, each with the runtime's wrapper that records
/// what it allocates (the runtime keeps every live block's start and size, so that a loop
/// can name the object a parameter points to).
const ALLOCATORS: [(&str, &str); 5] = [
    ("malloc", "__ww_malloc"),
    ("calloc", "__ww_calloc"),
    ("realloc", "__ww_realloc"),
    ("aligned_alloc", "__ww_aligned_alloc"),
    ("free", "__ww_free"),
];

/// Direct calls of the allocation functions in the unit's own code, each renamed to the
/// runtime's wrapper. A unit that defines one of them itself keeps its calls as they are.
fn allocation_calls(unit: &Unit, text: &str, in_system: &dyn Fn(Span) -> bool) -> Vec<Node> {
    let program = &unit.lowered.program;
    let defined = |name: &str| program.functions.iter().any(|f| f.name == name);
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    for f in &program.functions {
        for inst in &f.insts {
            let InstKind::Call {
                callee: frontend::ir::Callee::Direct(name),
                ..
            } = &inst.kind
            else {
                continue;
            };
            let Some(&(_, wrapper)) = ALLOCATORS.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let span = inst.origin.span;
            let start = span.start as usize;
            let end = start + name.len();
            // The call as written starts with the function's name and an opening
            // parenthesis; anything else (a macro, a cast of the callee) stays as it is.
            let written = text.get(start..end) == Some(name.as_str())
                && text[end..].trim_start().starts_with('(')
                && !text[..start]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if !written || in_system(span) || defined(name) || !seen.insert(start) {
                continue;
            }
            nodes.push(Node {
                start,
                end,
                pieces: vec![Piece::Text(wrapper.to_string())],
            });
        }
    }
    nodes
}

/// What a tracked loop watches.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Watch {
    Nothing,
    /// These accesses (indices into `Sites::accesses`).
    Accesses(Vec<usize>),
    Everything,
}

/// The accesses a loop's undecided pairs need watched: the pair's two accesses, found in
/// the loop by line and text, and every access of the loop through the same base (a
/// may-alias pair names one access per pointer; the others through those pointers can
/// overlap just as well); a scalar pair, every access of the scalar in the loop. Any
/// undecided reason without a pair (a callee whose effects are unknown, a nest that could
/// not be compared), a needs-profile loop without pairs, or a pair access not found in the
/// loop (a callee's memory, a loop bound, an access printed from the IR), asks for
/// everything.
fn undecided_watch(r: &LoopReport, l: &LoopSite, sites: &Sites, unit: &Unit) -> Watch {
    // WW112 (a callee's effects unknown) has no pair: its accesses are somewhere in the
    // callees.
    // Findings of one cause are grouped, the pairs listed under `instances`.
    let undecided: usize = r
        .reasons
        .iter()
        .filter(|x| matches!(x.code, Code::WW110 | Code::WW111 | Code::WW112))
        .map(|x| x.instances.len().max(1))
        .sum();
    if r.needs_evidence.is_empty() {
        // A needs-profile loop always has something to settle, pairs or not.
        return if undecided == 0 && r.verdict != Verdict::NeedsProfile {
            Watch::Nothing
        } else {
            Watch::Everything
        };
    }
    if undecided != r.needs_evidence.len() {
        return Watch::Everything;
    }
    let within = |inner: Span| inner.start >= l.span.start && inner.end <= l.span.end;
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let in_loop: Vec<(usize, &AccessSite)> = sites
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| a.function == l.function && within(a.span))
        .collect();
    let mut bases: HashSet<String> = HashSet::new();
    let mut scalars: HashSet<&str> = HashSet::new();
    // Accesses of called functions, through the parameters a pair's array is passed as.
    let mut in_callees: Vec<usize> = Vec::new();
    for pair in &r.needs_evidence {
        for side in [&pair.first, &pair.second] {
            let text = squeeze(&side.text);
            let found: Vec<&AccessSite> = in_loop
                .iter()
                .filter(|(_, a)| {
                    unit.resolve(a.span).is_some_and(|at| at.line == side.line)
                        && squeeze(&unit.snippet(a.span)) == text
                })
                .map(|(_, a)| *a)
                .collect();
            if found.is_empty() {
                match callee_accesses(&side.text, &pair.array, sites, unit) {
                    Some(accesses) => {
                        in_callees.extend(accesses);
                        continue;
                    }
                    None => return Watch::Everything,
                }
            }
            for a in found {
                match &a.variable {
                    Some(v) => scalars.insert(v.name.as_str()),
                    None => bases.insert(squeeze(&unit.snippet(a.base))),
                };
            }
        }
    }
    let mut watched: Vec<usize> = in_loop
        .iter()
        .filter(|(_, a)| match &a.variable {
            Some(v) => scalars.contains(v.name.as_str()),
            None => bases.contains(&squeeze(&unit.snippet(a.base))),
        })
        .map(|(i, _)| *i)
        .collect();
    watched.extend(in_callees);
    watched.sort_unstable();
    watched.dedup();
    Watch::Accesses(watched)
}

/// For a pair side that is a call in the loop (`permute(N, idx, a, b)`, the undecided pair
/// being about `array` = `a`): the accesses of the called function through the parameters
/// `array` is passed as (`src`, when `a` is the third argument), which are the accesses
/// the pair stands for. `None` (watch everything) when the call is not one of this file's
/// functions, `array` is not an argument as written, or the function calls another
/// function of the program (which might reach the array too).
fn callee_accesses(call: &str, array: &str, sites: &Sites, unit: &Unit) -> Option<Vec<usize>> {
    let open = call.find('(')?;
    let name = call[..open].trim();
    let inner = call[open + 1..].trim_end().strip_suffix(')')?;
    let callee = sites.functions.iter().position(|f| f.name == name)?;
    let program = &unit.lowered.program;
    let function = program.functions.iter().find(|f| f.name == name)?;
    let calls_program_function = function.insts.iter().any(|i| {
        matches!(&i.kind, frontend::ir::InstKind::Call { callee: frontend::ir::Callee::Direct(f), .. }
            if program.functions.iter().any(|g| &g.name == f))
    }) || function.insts.iter().any(|i| {
        matches!(
            &i.kind,
            frontend::ir::InstKind::Call {
                callee: frontend::ir::Callee::Indirect(_),
                ..
            }
        )
    });
    if calls_program_function {
        return None;
    }
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    // A may-alias pair names both arrays (`p / q`): either may be the one passed.
    let arrays: Vec<String> = array.split(" / ").map(squeeze).collect();
    let params: Vec<String> = top_level_arguments(inner)
        .iter()
        .enumerate()
        .filter(|(_, arg)| arrays.contains(&squeeze(arg)))
        .filter_map(|(k, _)| function.params.get(k).and_then(|p| p.name.clone()))
        .collect();
    if params.is_empty() {
        return None;
    }
    Some(
        sites
            .accesses
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                a.function == callee
                    && a.variable.is_none()
                    && params.contains(&squeeze(&unit.snippet(a.base)))
            })
            .map(|(i, _)| i)
            .collect(),
    )
}

/// The arguments of a call's text, split at the commas outside parentheses, brackets and
/// braces.
fn top_level_arguments(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim());
    out
}

#[allow(clippy::too_many_arguments)]
fn should_wrap(
    a: &AccessSite,
    sites: &Sites,
    tracked_loops: &[&LoopSite],
    loads: &HashSet<(u32, u32)>,
    stores: &HashSet<(u32, u32)>,
    bit_fields: &HashSet<String>,
    reports: &HashMap<&LoopRef, &LoopReport>,
    unit: &Unit,
) -> bool {
    if a.member.as_ref().is_some_and(|m| bit_fields.contains(m)) {
        return false;
    }
    if a.variable.as_ref().is_some_and(|v| !v.addressable_scalar) {
        return false;
    }
    let key = (a.ir_span.start, a.ir_span.end);
    let memory = match a.mode {
        AccessMode::Read => loads.contains(&key),
        AccessMode::Write | AccessMode::Update => stores.contains(&key),
    };
    if memory {
        return true;
    }
    // A local scalar kept in a register: tracked only inside a tracked loop that writes it
    // and that it outlives, and never in loop headers (induction variables).
    let Some(v) = &a.variable else {
        return false;
    };
    let Some(decl) = v.local_decl else {
        return false;
    };
    let within = |inner: Span, outer: Span| inner.start >= outer.start && inner.end <= outer.end;
    if sites
        .loops
        .iter()
        .any(|l| l.function == a.function && l.header.iter().any(|h| within(a.span, *h)))
    {
        return false;
    }
    tracked_loops.iter().any(|l| {
        l.function == a.function
            && within(a.span, l.span)
            && !(decl >= l.span.start && decl < l.span.end)
            && !is_induction(l, &v.name, reports, unit)
            && sites.accesses.iter().any(|w| {
                w.mode != AccessMode::Read
                    && within(w.span, l.body)
                    && w.variable
                        .as_ref()
                        .is_some_and(|x| x.name == v.name && x.local_decl == Some(decl))
            })
    })
}

fn is_induction(
    l: &LoopSite,
    name: &str,
    reports: &HashMap<&LoopRef, &LoopReport>,
    unit: &Unit,
) -> bool {
    unit.loop_ref_at(l.keyword)
        .and_then(|id| reports.get(&id))
        .and_then(|r| r.induction.as_ref())
        .is_some_and(|i| i.var == name)
}

fn access_node(a: &AccessSite, k: usize) -> Node {
    let (s, e) = (a.span.start as usize, a.span.end as usize);
    let site = format!("&__ww_S[{k}]");
    match (a.mode, a.assign) {
        (AccessMode::Write, Some((whole, rhs))) => Node {
            start: whole.start as usize,
            end: whole.end as usize,
            pieces: vec![
                Piece::Text(format!("({{ __auto_type __ww_p{k} = &(")),
                Piece::Src(s, e),
                Piece::Text(format!("); __typeof__(*__ww_p{k}) __ww_v{k} = (")),
                Piece::Src(rhs.start as usize, rhs.end as usize),
                Piece::Text(format!(
                    "); __ww_wr(__ww_p{k}, sizeof *__ww_p{k}, {site}); *__ww_p{k} = __ww_v{k}; }})"
                )),
            ],
        },
        (mode, _) => {
            let hook = if mode == AccessMode::Read {
                "__ww_rd"
            } else {
                "__ww_rw"
            };
            Node {
                start: s,
                end: e,
                pieces: vec![
                    Piece::Text(format!("(*({{ __auto_type __ww_p{k} = &(")),
                    Piece::Src(s, e),
                    Piece::Text(format!(
                        "); {hook}(__ww_p{k}, sizeof *__ww_p{k}, {site}); __ww_p{k}; }}))"
                    )),
                ],
            }
        }
    }
}

fn site_row(unit: &Unit, a: &AccessSite) -> String {
    let line = unit.resolve(a.span).map(|r| r.line).unwrap_or(0);
    let op = a.op.map(|c| format!("'{c}'")).unwrap_or_else(|| "0".into());
    format!(
        "{{{}, {}, {line}, {}, {op}}}",
        c_string(&unit.snippet(a.span)),
        c_string(&unit.snippet(a.base)),
        u8::from(a.variable.is_some()),
    )
}

fn is_integer_type(c_type: &str) -> bool {
    let t = c_type.trim();
    !(t.contains('*')
        || t.contains('[')
        || t.contains("float")
        || t.contains("double")
        || t.contains("struct")
        || t.contains("union")
        || t.contains("void"))
}

/// A C string literal; `?` is escaped so no trigraph can form under `-std=c99`.
fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '?' => out.push_str("\\?"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Applies the nodes: each node's pieces replace its span; nodes nested in a piece's source
/// range are rendered there. A node that overlaps another without nesting is dropped.
fn render(text: &str, mut nodes: Vec<Node>) -> String {
    nodes.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let n = nodes.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let root = n;
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..n {
        while let Some(&top) = stack.last() {
            if nodes[top].end <= nodes[i].start {
                stack.pop();
            } else {
                break;
            }
        }
        match stack.last() {
            Some(&top) if nodes[i].end > nodes[top].end => continue,
            Some(&top) => children[top].push(i),
            None => children[root].push(i),
        }
        stack.push(i);
    }
    let mut out = String::with_capacity(text.len() * 2);
    copy_range(
        text,
        0,
        text.len(),
        &children[root],
        &nodes,
        &children,
        &mut out,
    );
    out
}

fn copy_range(
    text: &str,
    lo: usize,
    hi: usize,
    kids: &[usize],
    nodes: &[Node],
    children: &[Vec<usize>],
    out: &mut String,
) {
    let mut pos = lo;
    for &c in kids {
        let node = &nodes[c];
        if node.start < pos || node.end > hi || node.start < lo {
            continue;
        }
        out.push_str(&text[pos..node.start]);
        for piece in &node.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Src(a, b) => copy_range(text, *a, *b, &children[c], nodes, children, out),
            }
        }
        pos = node.end;
    }
    out.push_str(&text[pos..hi]);
}

/// What the instrumentation can read where a loop starts: the scalars in scope, and the
/// lines of the loop's outermost enclosing loop (a name the report gives as `NAME@LINE`,
/// the value a load on LINE found, is taken to be `NAME` itself when the load is in the
/// nest: the section reads it, so the loop does not change it; `instantiate` says where
/// this and the loop counts disagree).
struct EntryScope<'a> {
    visible: &'a [String],
    /// The file-scope scalars among them.
    globals: &'a [String],
    lines: Option<(u32, u32)>,
}

/// The first and last line of loop `l`'s statement.
fn loop_lines(unit: &Unit, l: &LoopSite) -> Option<(u32, u32)> {
    let first = unit.resolve(l.span)?.line;
    let end = l.span.end.saturating_sub(1);
    let last = unit
        .resolve(Span {
            start: end,
            end: l.span.end,
        })?
        .line;
    Some((first, last.max(first)))
}

/// The integers a section's bounds or a whole object's size read (`n`, `SD.length_concs`,
/// `firstcol@161`), recorded at the loop's entry so that `instantiate` can evaluate the
/// section, each once: the report's name and the lvalue read.
fn section_reads<'a>(
    report: &'a advisor::model::LoopReport,
    scope: &'a EntryScope<'a>,
) -> impl Iterator<Item = (String, String)> + 'a {
    let mut seen = std::collections::BTreeSet::new();
    report
        .parameters
        .iter()
        .flat_map(|p| {
            let whole = p.whole_object.iter().flat_map(|w| w.reads.iter());
            // A plain local of a section is left to the loop counts, which solve it
            // from the loop itself: its value at the entry may be a later one than the
            // section's. A global the report names plainly is the value at the entry:
            // where a store may come between the read the loop uses and the loop, the
            // report names the read `NAME@LINE` (advisor's stale names).
            let section = p.bytes.iter().flat_map(|b| b.reads.iter()).filter(|n| {
                n.contains('.') || n.contains("->") || has_place(n) || scope.globals.contains(n)
            });
            whole.chain(section)
        })
        .filter_map(move |name| {
            let lvalue = readable_at_entry(name, scope)?;
            seen.insert(name.clone()).then(|| (name.clone(), lvalue))
        })
}

/// The C lvalue that holds `name` where the loop starts: a visible scalar, a chain of
/// members (`in.n`, `c->dims.n`) from a named variable (in scope at the loop: `visible`
/// lists scalars only), or either with a load site `@LINE` inside the loop.
fn readable_at_entry(name: &str, scope: &EntryScope<'_>) -> Option<String> {
    let qualified = ValueName::parse(name);
    let lvalue = match &qualified {
        None if !has_place(name) => name,
        None => return None,
        Some(v) => {
            let line = v.line()?;
            let (first, last) = scope.lines?;
            if line < first || line > last {
                return None;
            }
            v.variable.as_str()
        }
    };
    let member = lvalue.contains('.') || lvalue.contains("->");
    (member_chain(lvalue) && (member || scope.visible.iter().any(|v| v == lvalue)))
        .then(|| lvalue.to_string())
}

/// `a`, `a.b`, `a->b.c`: identifiers joined by `.` and `->`, nothing else.
fn member_chain(name: &str) -> bool {
    name.split("->").flat_map(|part| part.split('.')).all(|id| {
        let mut chars = id.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `if (c && c->dims) ` before reading `c->dims->n`: a pointer the chain goes through may
/// be null at an entry where the loop does not run; such an entry records nothing.
fn null_guard(name: &str) -> String {
    let mut prefixes = Vec::new();
    let mut at = 0;
    while let Some(found) = name[at..].find("->") {
        prefixes.push(format!("({})", &name[..at + found]));
        at += found + 2;
    }
    if prefixes.is_empty() {
        String::new()
    } else {
        format!("if ({}) ", prefixes.join(" && "))
    }
}

/// The array parameters whose section the report cannot give a number for with the
/// values the profiler records: no section, or one that reads a name the loop cannot read
/// as C. The profiler records, at each entry, the object each one is (an array) or points
/// to (an allocated block), `__ww_base`, and `instantiate` sizes the section by it for the
/// profiled run.
fn observed_bases(report: &advisor::model::LoopReport, scope: &EntryScope<'_>) -> Vec<String> {
    report
        .parameters
        .iter()
        .filter(|p| p.kind != ParamKind::Scalar && member_chain(&p.name))
        .filter(|p| {
            p.c_type
                .as_deref()
                .is_some_and(|t| t.contains('*') || t.contains('['))
        })
        .filter(|p| match &p.bytes {
            None => true,
            Some(b) => !b
                .reads
                .iter()
                .all(|n| readable_at_entry(n, scope).is_some()),
        })
        .map(|p| p.name.clone())
        .collect()
}
