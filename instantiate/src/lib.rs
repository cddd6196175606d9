//! Instantiation (thesis §6): the program's variables solved from profiled loop counts and
//! recorded entry values, every expression of a kernel report evaluated to a number,
//! re-analysis with the values injected where a static result is missing (§6.2), and an
//! offload estimate per loop.

pub mod equations;
pub mod eval;
mod eval_types;
pub mod evaluate;
pub mod loop_texts;
mod memo;
pub mod model;
pub mod offload;
pub mod render;
pub mod values;

use advisor::gpus::Gpu;
use advisor::model::{LoopReport, ParamKind, Report, Verdict};
use equations::{solve_counts, CountStatistic, CountedLoop};
use eval::Values;
use frontend::loop_ref::LoopRef;
pub use model::Inputs;
use model::{InstanceLoop, INSTANCE_SCHEMA};
use offload::{estimate, Link, OffloadInputs};
use profile::model::{LoopProfile, Profile};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub use model::InstanceReport;
pub use offload::EstimateError;

/// What instantiation needs besides the report and the profile.
#[derive(Clone, Debug)]
pub struct Options {
    /// Values given by the user (`--set n=200`); they take precedence.
    pub set: Values,
    pub block: (u64, u64),
    pub gpu: &'static Gpu,
    pub link: Link,
    pub statistic: CountStatistic,
}

/// Analyses one loop again with values injected (§6.2); `None` when the sources are not at
/// hand. Supplied by the caller, which knows how to load the translation unit; its error
/// type is the caller's too (reading files, parsing them), since instantiation only prints
/// it in the loop's notes.
pub type Reanalyze<'a, E> = dyn Fn(&LoopReport, &Values) -> Result<LoopReport, E> + 'a;

/// Instantiates every loop of `report`.
pub fn instantiate<E: std::fmt::Display>(
    report: &Report,
    profile: Option<&Profile>,
    options: &Options,
    reanalyze: Option<&Reanalyze<'_, E>>,
) -> InstanceReport {
    // A report written without the profile: let the profile settle `needs-profile` loops
    // first, as `analyze --profile` would.
    let applied;
    let report = match profile {
        Some(p) if report.loops.iter().all(|l| l.observed.is_none()) => {
            let mut r = report.clone();
            profile::apply::apply(&mut r.loops, p);
            applied = r;
            &applied
        }
        _ => report,
    };
    let sketches: Vec<LoopSketch> = report.loops.iter().map(LoopSketch::of).collect();
    let index = LoopIndex::new(&sketches);
    let mut loops: Vec<InstanceLoop> = report
        .loops
        .iter()
        .map(|l| instantiate_loop(l, &index, profile, options, reanalyze))
        .collect();
    sort_by_saved(&mut loops);
    InstanceReport {
        schema: INSTANCE_SCHEMA.to_string(),
        inputs: inputs(profile, options),
        loops,
    }
}

/// Most time saved first; loops without an estimate keep their order after them.
fn sort_by_saved(loops: &mut [InstanceLoop]) {
    loops.sort_by(|a, b| {
        let saved = |l: &InstanceLoop| l.offload.as_ref().map(|o| o.saved_ns);
        match (saved(a), saved(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    });
}

/// Where the numbers of an instantiated report come from.
pub fn inputs(profile: Option<&Profile>, options: &Options) -> Inputs {
    Inputs {
        profile_runs: profile.map_or(0, |p| p.runs),
        incomplete_runs: profile.map_or(0, |p| p.incomplete_runs),
        count_statistic: options.statistic.as_str().to_string(),
        gpu: format!("{} ({})", options.gpu.name, options.gpu.example),
        block: format!("{}x{}", options.block.0, options.block.1),
        link_bytes_per_s: options.link.bytes_per_s,
        link_latency_ns: options.link.latency_ns,
        launch_overhead_ns: options.link.launch_ns,
        set: options
            .set
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
    }
}

/// What instantiating a loop reads of the other loops of its function: a report read a
/// loop at a time keeps these of every loop (a few hundred bytes) instead of the loops.
#[derive(Clone, Debug)]
pub struct LoopSketch {
    pub id: LoopRef,
    pub function: String,
    pub line: u32,
    pub nest: Vec<LoopRef>,
    pub induction: Option<InductionSketch>,
}

/// The induction variable of a [`LoopSketch`] and its trip count.
#[derive(Clone, Debug)]
pub struct InductionSketch {
    pub var: String,
    pub trip_count: advisor::model::Quantity,
}

impl LoopSketch {
    pub fn of(l: &LoopReport) -> LoopSketch {
        LoopSketch {
            id: l.id.clone(),
            function: l.function.clone(),
            line: l.line,
            nest: l.nest.clone(),
            induction: l.induction.as_ref().map(|i| InductionSketch {
                var: i.var.clone(),
                trip_count: i.trip_count.clone(),
            }),
        }
    }
}

/// The loops of a report read a loop at a time, in the order [`instantiate`] reads them:
/// `sketches` in report order, `apply` when the profile is applied to the loops first (a
/// report written without one), which puts the profiled loops first, longest first.
pub fn order_sketches(sketches: &mut [LoopSketch], profile: Option<&Profile>, apply: bool) {
    if let (Some(p), true) = (profile, apply) {
        let time = |s: &LoopSketch| p.find_loop(&s.id).map(|l| l.time_ns);
        sketches.sort_by(|a, b| match (time(a), time(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
    }
}

/// Instantiates one loop of a report read a loop at a time (the profile applied to it
/// when `apply`, see [`order_sketches`]); `index` holds the sketches of every loop.
pub fn instantiate_one<E: std::fmt::Display>(
    l: LoopReport,
    index: &LoopIndex<'_>,
    profile: Option<&Profile>,
    options: &Options,
    reanalyze: Option<&Reanalyze<'_, E>>,
    apply: bool,
) -> InstanceLoop {
    let mut l = l;
    if let (Some(p), true) = (profile, apply) {
        profile::apply::apply(std::slice::from_mut(&mut l), p);
    }
    instantiate_loop(&l, index, profile, options, reanalyze)
}

/// Puts the loops of a report read a loop at a time in [`instantiate`]'s order: loops that
/// may move ahead (profiled ones) are held, at most as many as the profile has loops; the
/// others keep report order after them and can be written as they come.
#[derive(Debug, Default)]
pub struct Order {
    held: Vec<(Option<u64>, InstanceLoop)>,
}

impl Order {
    /// `l`, instantiated from a report loop, back when it can be written now (after the
    /// held loops, in the order given); `None` when it is held.
    pub fn place(
        &mut self,
        l: InstanceLoop,
        profile: Option<&Profile>,
        apply: bool,
    ) -> Option<InstanceLoop> {
        if Self::holds(&l, profile, apply) {
            let profiled = profile.and_then(|p| p.find_loop(&l.id));
            // Held loops start in report order, and then in the applied profile's.
            let time = profiled.filter(|_| apply).map(|p| p.time_ns);
            self.held.push((time, l));
            None
        } else {
            Some(l)
        }
    }

    /// Whether [`Self::place`] holds `l`: known before it is placed, so that a loop written
    /// at once need not be kept until then.
    pub fn holds(l: &InstanceLoop, profile: Option<&Profile>, apply: bool) -> bool {
        // Applied, the profile moves its loops ahead, longest first; else only an
        // estimate (which needs the loop profiled) moves a loop.
        if apply {
            profile.and_then(|p| p.find_loop(&l.id)).is_some()
        } else {
            l.offload.is_some()
        }
    }

    /// The held loops in order, to be written before those handed back by [`Self::place`].
    pub fn held(mut self) -> Vec<InstanceLoop> {
        self.held.sort_by(|a, b| match (a.0, b.0) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let mut loops: Vec<InstanceLoop> = self.held.into_iter().map(|(_, l)| l).collect();
        sort_by_saved(&mut loops);
        loops
    }
}

/// The report's loops by id and by (file, function), built once: looking them up by a scan
/// per loop made a report of many loops quadratic.
#[derive(Debug)]
pub struct LoopIndex<'a> {
    by_id: HashMap<&'a LoopRef, &'a LoopSketch>,
    by_function: HashMap<(&'a str, &'a str), Vec<&'a LoopSketch>>,
}

impl<'a> LoopIndex<'a> {
    pub fn new(all: &'a [LoopSketch]) -> LoopIndex<'a> {
        let mut by_id = HashMap::with_capacity(all.len());
        let mut by_function: HashMap<(&str, &str), Vec<&LoopSketch>> = HashMap::new();
        for l in all {
            // The first loop of an id wins, as a scan in report order found it.
            by_id.entry(&l.id).or_insert(l);
            by_function
                .entry((l.id.file.as_str(), l.function.as_str()))
                .or_default()
                .push(l);
        }
        LoopIndex { by_id, by_function }
    }

    /// The loops of the same function and file as `l`, `l` and its nest first.
    fn related<'b>(&'b self, l: &'b LoopSketch) -> Vec<&'b LoopSketch> {
        let mut out: Vec<&LoopSketch> = Vec::new();
        let mut seen: std::collections::HashSet<&LoopRef> = std::collections::HashSet::new();
        for id in &l.nest {
            if let Some(x) = self.by_id.get(id) {
                if seen.insert(&x.id) {
                    out.push(x);
                }
            }
        }
        if !seen.contains(&l.id) {
            let me = self.by_id.get(&l.id).copied().unwrap_or(l);
            seen.insert(&me.id);
            out.insert(0, me);
        }
        for x in self
            .by_function
            .get(&(l.id.file.as_str(), l.function.as_str()))
            .into_iter()
            .flatten()
        {
            if seen.insert(&x.id) {
                out.push(x);
            }
        }
        out
    }
}

/// Every variable the evaluated expressions of `l` mention, minus induction variables.
fn needed_variables(
    l: &LoopReport,
    related: &[&LoopSketch],
    ivs: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut exprs: Vec<&str> = Vec::new();
    for x in related
        .iter()
        .filter(|x| l.nest.contains(&x.id) || x.id == l.id)
    {
        if let Some(ind) = &x.induction {
            exprs.push(&ind.trip_count);
        }
    }
    for p in &l.parameters {
        if let Some(b) = &p.bytes {
            exprs.extend([b.lo.text(), b.hi.text()]);
        }
    }
    if let Some(m) = evaluate::chosen_mapping(l) {
        exprs.extend(m.accesses.iter().map(|a| a.requests_per_warp.as_str()));
    }
    for s in &l.shared_memory {
        exprs.push(&s.bytes_per_block);
    }
    for d in &l.divergence {
        exprs.extend([
            d.warps_per_row.as_str(),
            d.diverging_warps_per_row[0].as_str(),
            d.diverging_warps_per_row[1].as_str(),
        ]);
    }
    exprs
        .iter()
        .flat_map(|e| eval::variables(e))
        .filter(|v| !is_loop_var(v, ivs) && !v.starts_with("blockDim.") && !v.starts_with("block."))
        .collect()
}

/// `report` with the request counts of `again` (the re-analysis) where the static count is
/// a bound and the re-analysed one is exact; `None` when nothing improves.
fn refine_factors(report: &LoopReport, again: &LoopReport) -> Option<LoopReport> {
    let mut out = report.clone();
    let mut improved = false;
    for m in &mut out.mappings {
        let Some(m2) = again.mappings.iter().find(|x| x.mapping == m.mapping) else {
            continue;
        };
        for a in &mut m.accesses {
            let better = m2
                .accesses
                .iter()
                .find(|b| b.line == a.line && b.text == a.text && b.kind == a.kind && b.exact);
            if let (false, Some(b)) = (a.exact, better) {
                *a = b.clone();
                a.assumptions
                    .push("re-analysis: valid for the profiled run".into());
                improved = true;
            }
        }
    }
    improved.then_some(out)
}

/// Whether `name` is an induction variable, also as the report prints a name shared by
/// several variables of the function (`i_2` for the second `i`).
fn is_loop_var(name: &str, ivs: &BTreeSet<String>) -> bool {
    ivs.contains(name)
        || name.rsplit_once('_').is_some_and(|(base, n)| {
            ivs.contains(base) && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

/// One loop of the report with the profile: its variables' values, then every quantity
/// evaluated with them, then the offload estimate.
fn instantiate_loop<'a, E: std::fmt::Display>(
    l: &'a LoopReport,
    index: &LoopIndex<'a>,
    profile: Option<&Profile>,
    options: &Options,
    reanalyze: Option<&Reanalyze<'_, E>>,
) -> InstanceLoop {
    let sketch = LoopSketch::of(l);
    let related = index.related(&sketch);
    let ivs = induction_variables(&related);
    let find = |id: &LoopRef| -> Option<&LoopProfile> { profile.and_then(|p| p.find_loop(id)) };
    let counted = counted_loops(&related, profile);
    let (solved, conflicts) = solve_loop_counts(l, &counted, &ivs, options.statistic);
    let recorded = recorded_inbounds(l, &related, profile);
    // Kept for the sections whose size varies with a value recorded at each entry.
    let recorded_at_entry: BTreeMap<String, profile::model::ValueStats> = recorded
        .iter()
        .map(|(name, stats)| (name.clone(), (*stats).clone()))
        .collect();
    let unprofiled: Vec<(LoopRef, BTreeSet<String>)> = counted
        .iter()
        .filter(|c| c.profile.is_none())
        .map(|c| (c.id.clone(), eval::variables(&c.trip_count)))
        .collect();
    let profiled: Vec<CountedLoop> = counted
        .iter()
        .filter(|c| c.profile.is_some())
        .cloned()
        .collect();
    let names = variables_to_resolve(l, &related, &ivs, &recorded, options);
    let (values, value_lines) = values::resolve(
        &names,
        &values::Sources {
            solved: &solved,
            recorded,
            set: &options.set,
            loops: &profiled,
            unprofiled: &unprofiled,
        },
    );
    let (values, value_lines) =
        solve_given_values(values, value_lines, &counted, &ivs, options.statistic);
    let context = evaluation_context(&values, &value_lines);
    let mut notes = Vec::new();
    let mut parameters = evaluate::parameters(&l.parameters, &context, "static");
    // The re-analysis replaces what the static analysis could not settle: missing sections,
    // and request counts that were bounds where the re-analysed ones are exact.
    let mut refined: Option<LoopReport> = None;
    let missing_section = parameters.iter().any(|p| p.size.is_none());
    if missing_section && !values.is_empty() {
        refined = reanalyse(l, &values, &context, &mut parameters, &mut notes, reanalyze);
    }
    evaluate::sections_averaged_over_entries(&mut parameters, &context, &recorded_at_entry);
    if let Some(p) = find(&l.id) {
        sections_from_profile(l, &mut parameters, p);
    }
    let source = refined.as_ref().unwrap_or(l);
    let trip_count = l
        .induction
        .as_ref()
        .map(|i| evaluate::quantity(&i.trip_count, &context));
    let mapping = evaluate::chosen_mapping(source);
    let grid = mapping.map(|m| evaluate::grid(l, &related, m, &context, options.block, profile));
    let memory = match (mapping, &grid) {
        (Some(m), Some(g)) => Some(evaluate::memory(l, &related, m, &context, g, profile)),
        _ => None,
    };
    let shared_memory = evaluate::shared(
        source,
        &context,
        options.block,
        grid.as_ref().map(|g| &g.grid),
    );
    let divergence = evaluate::divergence(source, &context);
    let valid_for = valid_for(&names, &value_lines, &parameters);
    let offload = offload_estimate(
        l,
        find(&l.id),
        &parameters,
        memory.as_ref(),
        options,
        &mut notes,
    );
    InstanceLoop {
        id: l.id.clone(),
        function: l.function.clone(),
        line: l.line,
        verdict: l.verdict.as_str().to_string(),
        valid_for: valid_for.to_string(),
        values: value_lines,
        equations: solved.equations,
        conflicts,
        trip_count,
        grid: grid.map(|g| g.grid),
        parameters,
        memory,
        shared_memory,
        divergence,
        offload,
        notes,
        names: Vec::new(),
    }
}

/// The related loops that have a trip count, with their profile data where there is some.
fn counted_loops<'p>(
    related: &[&LoopSketch],
    profile: Option<&'p Profile>,
) -> Vec<CountedLoop<'p>> {
    related
        .iter()
        .filter_map(|x| {
            x.induction.as_ref().map(|i| CountedLoop {
                id: x.id.clone(),
                trip_count: i.trip_count.clone(),
                profile: profile.and_then(|p| p.find_loop(&x.id)),
            })
        })
        .collect()
}

/// The values the expressions are evaluated with, and the candidates of the ambiguous
/// variables (an expression that needs one gives each candidate's result).
fn evaluation_context(values: &Values, value_lines: &[model::VariableValue]) -> eval::Context {
    eval::Context {
        values: values.clone(),
        ambiguous: value_lines
            .iter()
            .filter(|v| v.source == "ambiguous")
            .map(|v| (v.name.clone(), v.from_counts.clone()))
            .collect(),
    }
}

/// The sections the profile settles where the expressions could not: from the loop's
/// recorded trip counts, and from the blocks its pointers pointed to at entry.
fn sections_from_profile(
    l: &LoopReport,
    parameters: &mut [model::InstanceParameter],
    profiled: &LoopProfile,
) {
    if let Some(i) = &l.induction {
        evaluate::sections_from_trip_counts(parameters, &i.trip_count, profiled);
    }
    evaluate::sections_from_allocations(parameters, profiled);
}

/// The induction variables of the related loops, with the numbered names the report gives
/// a name shared by several of them (`i_2`) where a trip count mentions one.
fn induction_variables(related: &[&LoopSketch]) -> BTreeSet<String> {
    let mut ivs: BTreeSet<String> = related
        .iter()
        .filter_map(|x| x.induction.as_ref().map(|i| i.var.clone()))
        .collect();
    let numbered: Vec<String> = related
        .iter()
        .filter_map(|x| x.induction.as_ref())
        .flat_map(|i| eval::variables(&i.trip_count))
        .filter(|v| is_loop_var(v, &ivs))
        .collect();
    ivs.extend(numbered);
    ivs
}

/// The counts solved over the whole function; where they disagree, over the loop's own
/// nest, with the disagreement kept in the conflicts returned beside.
fn solve_loop_counts(
    l: &LoopReport,
    counted: &[CountedLoop<'_>],
    ivs: &BTreeSet<String>,
    statistic: CountStatistic,
) -> (equations::Solved, Vec<String>) {
    let mut solved = solve_counts(counted, ivs, statistic);
    let mut conflicts = Vec::new();
    if !solved.conflicts.is_empty() {
        // The whole function's counts disagree (a variable changes between loops): fall
        // back to the loop's own nest and keep the disagreement visible.
        let own: Vec<CountedLoop> = counted
            .iter()
            .filter(|c| l.nest.contains(&c.id) || c.id == l.id)
            .cloned()
            .collect();
        conflicts = solved.conflicts.clone();
        solved = solve_counts(&own, ivs, statistic);
        // Sorted as text (not by line), as the note has always listed them.
        let used_by_own: BTreeSet<String> = solved
            .equations
            .iter()
            .map(|e| e.loop_id.to_string())
            .collect();
        conflicts.push(format!(
            "solved from the loop's own nest ({}) instead",
            used_by_own.into_iter().collect::<Vec<_>>().join(", ")
        ));
        conflicts.extend(solved.conflicts.iter().cloned());
    }
    (solved, conflicts)
}

/// The values recorded at the entry of the loop and of the loops of its nest, by name; the
/// first loop that recorded a name wins.
fn recorded_inbounds<'p>(
    l: &LoopReport,
    related: &[&LoopSketch],
    profile: Option<&'p Profile>,
) -> BTreeMap<String, &'p profile::model::ValueStats> {
    let mut recorded = BTreeMap::new();
    for x in related
        .iter()
        .filter(|x| l.nest.contains(&x.id) || x.id == l.id)
    {
        if let Some(p) = profile.and_then(|p| p.find_loop(&x.id)) {
            for (name, stats) in &p.inbounds {
                recorded.entry(name.clone()).or_insert(stats);
            }
        }
    }
    recorded
}

/// The variables the loop's expressions need, and, where a section is unknown statically,
/// the inbound scalars that have a value.
fn variables_to_resolve(
    l: &LoopReport,
    related: &[&LoopSketch],
    ivs: &BTreeSet<String>,
    recorded: &BTreeMap<String, &profile::model::ValueStats>,
    options: &Options,
) -> BTreeSet<String> {
    let mut names = needed_variables(l, related, ivs);
    if l.parameters
        .iter()
        .any(|p| p.kind != ParamKind::Scalar && p.bytes.is_none())
    {
        // Re-analysis (§6.2) injects the inbound scalars: resolve those with a value.
        for p in l.parameters.iter().filter(|p| p.kind == ParamKind::Scalar) {
            if recorded.contains_key(&p.name) || values::given(&options.set, &p.name).is_some() {
                names.insert(p.name.clone());
            }
        }
    }
    names
}

/// Second pass: with the values known so far substituted, the counts may determine
/// variables they could not alone (`N - t = 128` with `N = 128` recorded gives `t = 0`).
fn solve_given_values(
    values: Values,
    value_lines: Vec<model::VariableValue>,
    counted: &[CountedLoop<'_>],
    ivs: &BTreeSet<String>,
    statistic: CountStatistic,
) -> (Values, Vec<model::VariableValue>) {
    let undetermined: Vec<String> = value_lines
        .iter()
        .filter(|v| v.value.is_none() && v.source == "undetermined")
        .map(|v| v.name.clone())
        .collect();
    if undetermined.is_empty() || values.is_empty() {
        return (values, value_lines);
    }
    let second = equations::solve_counts_given(counted, ivs, statistic, &values);
    let mut values = values;
    let mut lines = value_lines;
    for line in lines.iter_mut().filter(|v| undetermined.contains(&v.name)) {
        if let Some(equations::Determined::Values(vs)) = second.determined.get(&line.name) {
            if let [v] = vs.as_slice() {
                let given: Vec<String> = values.iter().map(|(k, x)| format!("{k} = {x}")).collect();
                line.value = Some(*v);
                line.source = "counts".into();
                line.from_counts = vec![*v];
                line.message = format!(
                    "{} = {v}: solved from the loop counts given {}{}",
                    line.name,
                    given.join(", "),
                    match line.at_entry {
                        Some([lo, hi]) if lo != hi => format!(
                            " (it took {lo}..{hi} at entry: this is the entry with the {} count)",
                            statistic.as_str()
                        ),
                        _ => String::new(),
                    }
                );
                values.insert(line.name.clone(), *v);
            }
        }
    }
    (values, lines)
}

/// Analyses the loop again with `values` injected (§6.2): fills the sections the static
/// analysis left unknown and returns the report with refined request counts, if any.
fn reanalyse<E: std::fmt::Display>(
    l: &LoopReport,
    values: &Values,
    context: &eval::Context,
    parameters: &mut [model::InstanceParameter],
    notes: &mut Vec<String>,
    reanalyze: Option<&Reanalyze<'_, E>>,
) -> Option<LoopReport> {
    let mut refined = None;
    match reanalyze.map(|f| f(l, values)) {
        Some(Ok(again)) => {
            for p in parameters.iter_mut().filter(|p| p.size.is_none()) {
                if let Some(q) = again.parameters.iter().find(|q| q.name == p.name) {
                    let redone =
                        evaluate::parameters(std::slice::from_ref(q), context, "re-analysis");
                    if let Some(r) = redone.into_iter().next().filter(|r| r.size.is_some()) {
                        *p = r;
                        p.notes.push(
                            "valid for the profiled run: analysed again with the values injected (§6.2)"
                                .into(),
                        );
                    }
                }
            }
            refined = refine_factors(l, &again);
            if refined.is_some() {
                notes.push(
                    "request counts marked `re-analysis` come from the analysis with the values \
                     injected: valid for the profiled run"
                        .into(),
                );
            }
        }
        Some(Err(e)) => notes.push(format!("re-analysis with the values injected failed: {e}")),
        None => notes.push(
            "a section is unknown statically; re-analysis with the profiled values needs the \
             sources (run `warpwise instantiate` where the report's files are readable)"
                .into(),
        ),
    }
    refined
}

/// For which runs the numbers hold: all, the given values', the profiled run's, or none
/// when a variable has no value.
fn valid_for(
    names: &BTreeSet<String>,
    value_lines: &[model::VariableValue],
    parameters: &[model::InstanceParameter],
) -> &'static str {
    let used_profile = value_lines.iter().any(|v| {
        matches!(
            v.source.as_str(),
            "counts" | "counts+entry" | "entry" | "ambiguous"
        )
    }) || parameters
        .iter()
        .any(|p| matches!(p.section_from.as_deref(), Some("re-analysis" | "profile")));
    if names.is_empty() {
        "all runs"
    } else if value_lines
        .iter()
        .any(|v| v.value.is_none() && v.source != "ambiguous")
    {
        "incomplete: some variables have no value"
    } else if used_profile {
        "profiled run"
    } else {
        "given values"
    }
}

/// The offload estimate of a friendly loop with profile data; otherwise why there is none,
/// in `notes`.
fn offload_estimate(
    l: &LoopReport,
    profiled: Option<&LoopProfile>,
    parameters: &[model::InstanceParameter],
    memory: Option<&model::MemoryTraffic>,
    options: &Options,
    notes: &mut Vec<String>,
) -> Option<model::Offload> {
    if l.verdict != Verdict::Friendly {
        notes.push(format!(
            "no offload estimate: the loop is {}",
            l.verdict.as_str()
        ));
        None
    } else {
        match profiled {
            None => {
                notes.push("no offload estimate: the loop has no profile data".into());
                None
            }
            Some(p) => match estimate(&OffloadInputs {
                parameters,
                memory,
                profile: p,
                link: options.link,
                dram_bytes_per_s: options.gpu.dram_bytes_per_s,
                resident_warps: options.gpu.sms * options.gpu.max_threads_per_sm / 32,
                gpu: options.gpu.example,
            }) {
                Ok(o) => Some(o),
                Err(e) => {
                    notes.push(format!("no offload estimate: {e}"));
                    None
                }
            },
        }
    }
}
