//! `check --dynamic`'s count of what a run really touched, and its comparison with the
//! static count. The run's global-memory accesses arrive one by one ([`Tally::note`]), each
//! with the place it was made from (a `site`: one instruction of the program), its launch,
//! block, linear thread id, address and size. Per site and per warp execution (a lane's
//! n-th execution of the site pairs with the other lanes' n-th, so an access in a loop
//! counts each iteration apart; an access the report marks `unpaired`, whose lanes may
//! skip different iterations, is counted but not compared) the distinct 128-byte
//! segments and 32-byte sectors are
//! counted. The shim runs a launch's blocks one after another, so a block's executions are
//! complete when the next block starts: they are folded into per-site minima and maxima
//! then, and an execution all of whose lanes have made it is counted at once. Memory is the
//! executions of one block that a lane has still to make, plus a few numbers per site,
//! whatever the number of accesses. [`attach`] then gives each access of the report the
//! sites made at its place, and says whether the static count agrees.

use super::model::{
    AccessKind, AccessReport, Agreement, CheckReport, Count, CountExprs, Dynamic, PartialWarps,
    PerLaunch, Range, RunSummary, UnmatchedSite,
};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use symbolic::Expr;

const LINE: u64 = 128;
const SECTOR: u64 = 32;
const WARP: u32 = 32;

/// One global-memory access of a kernel thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The place it was made from, numbered by the caller (one per instruction).
    pub site: u32,
    /// Launches and blocks only need to differ from the previous access's when they are
    /// new ones.
    pub launch: u64,
    pub block: u64,
    /// The linear thread id in the block (`x + blockDim.x*(y + blockDim.y*z)`).
    pub thread: u32,
    /// The threads of the block: a block of fewer than 32 is one warp of that many lanes.
    pub block_threads: u32,
    pub addr: u64,
    pub bytes: u32,
}

/// Per-warp counts over the executions of one site: how many, and the fewest and most
/// requests and sectors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub warps: u64,
    pub requests: Option<Range>,
    pub sectors: Option<Range>,
}

impl Stats {
    fn add(&mut self, requests: u64, sectors: u64) {
        self.warps += 1;
        self.requests = Some(widen(self.requests, requests, requests));
        self.sectors = Some(widen(self.sectors, sectors, sectors));
    }

    /// Both `self`'s executions and `other`'s.
    pub fn merge(&mut self, other: &Stats) {
        self.warps += other.warps;
        for (mine, theirs) in [
            (&mut self.requests, other.requests),
            (&mut self.sectors, other.sectors),
        ] {
            if let Some(t) = theirs {
                *mine = Some(widen(*mine, t.min, t.max));
            }
        }
    }
}

fn widen(r: Option<Range>, min: u64, max: u64) -> Range {
    match r {
        None => Range { min, max },
        Some(r) => Range {
            min: r.min.min(min),
            max: r.max.max(max),
        },
    }
}

/// A site's executions by full warps (32 active lanes, or every thread of a block of
/// fewer) and by partial ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteTally {
    pub full: Stats,
    pub partial: Stats,
}

impl SiteTally {
    pub fn merge(&mut self, other: &SiteTally) {
        self.full.merge(&other.full);
        self.partial.merge(&other.partial);
    }
}

/// The granules one warp execution of a site touched so far.
#[derive(Default)]
struct Execution {
    lanes: u32,
    /// The lanes of a full warp: all 32, or all the threads of a smaller block.
    whole: u32,
    segments: Vec<u64>,
    sectors: Vec<u64>,
}

/// The running count: per site, the finished executions; the running block's others as
/// they are.
#[derive(Default)]
pub struct Tally {
    sites: Vec<SiteTally>,
    block: Option<(u64, u64)>,
    nth: HashMap<(u32, u32), u32>,
    open: HashMap<(u32, u32, u32), Execution>,
    events: u64,
    /// Per site and launch, the same counts: what a count written in a launch's sizes is
    /// compared with.
    by_launch: HashMap<(u32, u64), SiteTally>,
}

impl std::fmt::Debug for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tally")
            .field("sites", &self.sites.len())
            .field("events", &self.events)
            .finish()
    }
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    pub fn note(&mut self, a: Access) {
        if self.block != Some((a.launch, a.block)) {
            self.close_block();
            self.block = Some((a.launch, a.block));
        }
        self.events += 1;
        let n = self.nth.entry((a.site, a.thread)).or_default();
        let key = (a.site, a.thread / WARP, *n);
        *n += 1;
        let e = self.open.entry(key).or_default();
        e.lanes |= 1 << (a.thread % WARP);
        e.whole = match a.block_threads {
            n @ 1..=31 => (1u32 << n) - 1,
            _ => u32::MAX,
        };
        let last = a.addr + u64::from(a.bytes.max(1)) - 1;
        e.segments.extend(a.addr / LINE..=last / LINE);
        e.sectors.extend(a.addr / SECTOR..=last / SECTOR);
        // Every lane has made it: no other access joins this execution, so it is counted
        // now, and what stays open is only the executions some lane has still to make.
        if e.lanes == e.whole {
            if let Some(done) = self.open.remove(&key) {
                self.fold(a.site, done);
            }
        }
    }

    /// Accesses noted so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    fn close_block(&mut self) {
        self.nth.clear();
        let open: Vec<((u32, u32, u32), Execution)> = self.open.drain().collect();
        for ((site, _, _), e) in open {
            self.fold(site, e);
        }
    }

    /// One finished execution into its site's counts.
    fn fold(&mut self, site: u32, mut e: Execution) {
        let site = site as usize;
        if self.sites.len() <= site {
            self.sites.resize(site + 1, SiteTally::default());
        }
        for g in [&mut e.segments, &mut e.sectors] {
            g.sort_unstable();
            g.dedup();
        }
        let (r, s) = (e.segments.len() as u64, e.sectors.len() as u64);
        let launch = self.block.map_or(0, |(launch, _)| launch);
        let per_launch = self.by_launch.entry((site as u32, launch)).or_default();
        for tally in [&mut self.sites[site], per_launch] {
            if e.lanes == e.whole {
                tally.full.add(r, s);
            } else {
                tally.partial.add(r, s);
            }
        }
    }

    /// Per site (by its number), its executions.
    pub fn finish(self) -> Vec<SiteTally> {
        self.finish_by_launch().0
    }

    /// Per site (by its number), its executions, and per site its executions in each
    /// launch.
    pub fn finish_by_launch(mut self) -> (Vec<SiteTally>, Vec<BTreeMap<u64, SiteTally>>) {
        self.close_block();
        let mut launches = vec![BTreeMap::new(); self.sites.len()];
        for ((site, launch), tally) in self.by_launch {
            if let Some(l) = launches.get_mut(site as usize) {
                l.insert(launch, tally);
            }
        }
        (self.sites, launches)
    }
}

/// What one launch ran with: its grid and block, and its arguments in order, each its
/// value where it is an integer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchValues {
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub args: Vec<Option<i64>>,
}

/// A site of the run placed in the source: the innermost frame of its instruction that is
/// the user's code, and whether it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    pub write: bool,
    /// The calls it was inlined through, innermost first (`file`, `line`, `col`): they pick
    /// the instance of a device function's access that one call made (the report's `via`).
    pub calls: Vec<(PathBuf, u32, u32)>,
    pub tally: SiteTally,
    /// Its executions in each launch (by the launch's number in the log).
    pub launches: BTreeMap<u64, SiteTally>,
}

/// `file:line:col` split, the file made absolute (relative to the working directory) so
/// that it compares with the run's places.
fn place(at: &str) -> Option<(PathBuf, u32, u32)> {
    let mut parts = at.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = Path::new(parts.next()?);
    Some((canonical(file), line, col))
}

/// The path with symbolic links and `..` resolved where it exists, as given otherwise.
pub fn canonical(file: &Path) -> PathBuf {
    std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf())
}

/// Whether an access of `kind` is made by a read (`write` false) or a write: an atomic is
/// both.
fn direction_fits(kind: AccessKind, write: bool) -> bool {
    match kind {
        AccessKind::Load => !write,
        AccessKind::Store => write,
        AccessKind::Atomic => true,
    }
}

/// An access of the report on a line: its kernel's index, its own, and the first and last
/// columns of its text.
type Placed = (usize, usize, u32, u32);

/// Gives each access of `report` what the run's `sites` did at its place, and puts the
/// run's summary (with the sites no access of the report is at) into `report.run`.
///
/// Compilers place an access's instruction at a column of its own choosing (GCC: the `]`
/// of a load, the `=` of a store), so a site goes to the access on its line, of its
/// direction, whose text spans the column (the innermost), else the nearest one that
/// starts before it, else the nearest.
pub fn attach(
    report: &mut CheckReport,
    sites: &[Site],
    launches: &HashMap<u64, LaunchValues>,
    mut run: RunSummary,
) {
    let mut places: HashMap<(PathBuf, u32), Vec<Placed>> = HashMap::new();
    for (k, kernel) in report.kernels.iter().enumerate() {
        for (i, a) in kernel.accesses.iter().enumerate() {
            if let Some((file, line, col)) = place(&a.at) {
                let width = a.access.lines().next().map_or(1, |l| l.len()) as u32;
                places
                    .entry((file, line))
                    .or_default()
                    // From the column before: GCC places `*(p + i)` at its `*`, which the
                    // report's text (the operand) starts after.
                    .push((k, i, col.saturating_sub(1).max(1), col + width.max(1) - 1));
            }
        }
    }
    let mut found: BTreeMap<(usize, usize), SiteTally> = BTreeMap::new();
    let mut found_by_launch: BTreeMap<(usize, usize), BTreeMap<u64, SiteTally>> = BTreeMap::new();
    let mut unmatched: BTreeMap<(String, bool), u64> = BTreeMap::new();
    for site in sites {
        let fits = places
            .get(&(site.file.clone(), site.line))
            .map(|all| {
                all.iter()
                    .filter(|(k, i, _, _)| {
                        direction_fits(report.kernels[*k].accesses[*i].kind, site.write)
                    })
                    .copied()
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        // The instances whose calls (innermost first) agree longest with the site's.
        let agreeing = |p: &Placed| {
            let via = &report.kernels[p.0].accesses[p.1].via;
            via.iter()
                .rev()
                .zip(&site.calls)
                .take_while(|(call, (file, line, _))| {
                    place(&call.at).is_some_and(|(f, l, _)| &f == file && l == *line)
                })
                .count()
        };
        let best = fits.iter().map(agreeing).max().unwrap_or(0);
        let fits: Vec<Placed> = fits.into_iter().filter(|p| agreeing(p) == best).collect();
        // Two calls on one line: the compiler's column of the call against each call's.
        let call_distance = |p: &Placed| {
            let via = &report.kernels[p.0].accesses[p.1].via;
            match (via.last().and_then(|c| place(&c.at)), site.calls.first()) {
                (Some((_, _, col)), Some((_, _, seen))) => col.abs_diff(*seen),
                _ => 0,
            }
        };
        let nearest = fits.iter().map(call_distance).min().unwrap_or(0);
        let fits: Vec<Placed> = fits
            .into_iter()
            .filter(|p| call_distance(p) == nearest)
            .collect();
        let c = site.col;
        let chosen = fits
            .iter()
            .filter(|p| p.2 <= c && c <= p.3)
            .min_by_key(|p| p.3 - p.2)
            .or_else(|| fits.iter().filter(|p| p.2 <= c).max_by_key(|p| p.2))
            .or_else(|| fits.iter().min_by_key(|p| p.2.abs_diff(c)));
        match chosen {
            Some(&(k, i, _, _)) => {
                found.entry((k, i)).or_default().merge(&site.tally);
                let mine = found_by_launch.entry((k, i)).or_default();
                for (launch, tally) in &site.launches {
                    mine.entry(*launch).or_default().merge(tally);
                }
            }
            None => {
                let at = format!("{}:{}:{}", site.file.display(), site.line, site.col);
                *unmatched.entry((at, site.write)).or_default() +=
                    site.tally.full.warps + site.tally.partial.warps;
            }
        }
    }
    for ((k, i), tally) in found {
        let kernel = &mut report.kernels[k];
        let a = &kernel.accesses[i];
        let mut d = summarise(a, &tally);
        if matches!(d.agreement, Agreement::NotComparable(_)) {
            let each = found_by_launch.remove(&(k, i)).unwrap_or_default();
            if let Some((per, agreement)) = per_launch(a, &kernel.parameters, &each, launches) {
                d.per_launch = Some(per);
                d.agreement = agreement;
            }
        }
        kernel.accesses[i].dynamic = Some(Box::new(d));
    }
    run.unmatched = unmatched
        .into_iter()
        .map(|((at, write), warps)| UnmatchedSite {
            at,
            kind: if write {
                AccessKind::Store
            } else {
                AccessKind::Load
            },
            warps,
        })
        .collect();
    report.run = Some(run);
}

/// An access's executions and whether its static count agrees with them.
pub fn summarise(a: &AccessReport, tally: &SiteTally) -> Dynamic {
    let partial = (tally.partial.warps > 0).then(|| PartialWarps {
        warps: tally.partial.warps,
        requests: tally.partial.requests.unwrap_or(Range { min: 0, max: 0 }),
        sectors: tally.partial.sectors.unwrap_or(Range { min: 0, max: 0 }),
    });
    let (compared, most_only) = compared(a, tally);
    Dynamic {
        warps: tally.full.warps,
        requests: tally.full.requests,
        sectors: tally.full.sectors,
        partial,
        per_launch: None,
        agreement: agreement(a, &compared, most_only),
    }
}

/// The executions the static count is held to, and whether only as the most. Where no
/// warp ran it whole, the warps with fewer lanes are compared: under a guard decided lane
/// by lane the count is for the lanes it lets through; under one that is not (`a full
/// warp: ...`), a full warp's count is the most any of them takes.
fn compared(a: &AccessReport, tally: &SiteTally) -> (Stats, bool) {
    match a.active.as_deref() {
        Some(active) if tally.full.warps == 0 => (tally.partial, active.starts_with("a full warp")),
        _ => (tally.full, false),
    }
}

/// The values a launch gives the names of a count: `blockDim.*`, `gridDim.*` and the
/// kernel's integer parameters. The arguments are the last parameters': a value template's
/// parameters come first in `parameters` and are no argument.
fn launch_names(parameters: &[String], values: &LaunchValues) -> HashMap<String, i64> {
    let mut names = HashMap::new();
    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
        for (prefix, dims) in [("blockDim", values.block), ("gridDim", values.grid)] {
            if let Ok(v) = i64::try_from(dims[axis]) {
                names.insert(format!("{prefix}.{name}"), v);
            }
        }
    }
    let skip = parameters.len().saturating_sub(values.args.len());
    for (name, arg) in parameters[skip..].iter().zip(&values.args) {
        if let (false, Some(v)) = (name.is_empty(), arg) {
            names.insert(name.clone(), *v);
        }
    }
    names
}

/// `e` (a count's expression, in the names the report shows) with `names`' values: a
/// number, or `None` where the count holds no expression, names something else, or is not a
/// non-negative integer.
fn evaluated(e: Option<&Expr>, names: &HashMap<String, i64>) -> Option<u64> {
    let e = e?;
    let ctx: HashMap<symbolic::Var, num_rational::BigRational> = e
        .vars()
        .into_iter()
        .map(|v| {
            let value = *names.get(v.name())?;
            Some((v, num_rational::BigRational::from_integer(value.into())))
        })
        .collect::<Option<_>>()?;
    let r = e.eval(&ctx).ok()?;
    r.is_integer().then(|| u64::try_from(r.to_integer()).ok())?
}

/// `count` with its expressions evaluated: `None` where the most or the fewest is not a
/// number (the count without aligned rows is left out where it is not).
fn count_with(count: &Count, names: &HashMap<String, i64>) -> Option<Count> {
    let most = count
        .value
        .or_else(|| evaluated(count.exprs.max.as_ref(), names))?;
    let at = |text: &Option<String>, e: &Option<Expr>| match text {
        None => Some(None),
        Some(_) => evaluated(e.as_ref(), names).map(Some),
    };
    let min = at(&count.min, &count.exprs.min)?;
    // Without it an unaligned run reads as a disagreement, never as agreeing.
    let unaligned = at(&count.unaligned, &count.exprs.unaligned).flatten();
    let number = |v: u64| Expr::integer(v.into());
    Some(Count {
        max: most.to_string(),
        value: Some(most),
        min: min.map(|v| v.to_string()),
        unaligned: unaligned.map(|v| v.to_string()),
        exact: count.exact,
        exprs: Box::new(CountExprs {
            max: Some(number(most)),
            min: min.map(number),
            unaligned: unaligned.map(number),
        }),
    })
}

/// A symbolic count compared launch by launch: evaluated with each launch's values, held
/// to that launch's warps as [`summarise`] holds them. The verdict is the worst launch's
/// (disagrees, then unaligned rows), with the launch named; `None` where a launch compared
/// leaves a name of the count unknown, or no launch ran the access as the count is for.
fn per_launch(
    a: &AccessReport,
    parameters: &[String],
    each: &BTreeMap<u64, SiteTally>,
    launches: &HashMap<u64, LaunchValues>,
) -> Option<(PerLaunch, Agreement)> {
    let mut launches_compared = 0u64;
    let mut requests: Option<Range> = None;
    let mut sectors: Option<Range> = None;
    let mut worst: Option<(u8, Agreement)> = None;
    for (number, tally) in each {
        let (seen, most_only) = compared(a, tally);
        if seen.warps == 0 {
            continue;
        }
        let names = launch_names(parameters, launches.get(number)?);
        let mut at = a.clone();
        at.requests = count_with(&a.requests, &names)?;
        at.sectors = count_with(&a.sectors, &names)?;
        let (r, s) = (at.requests.value?, at.sectors.value?);
        requests = Some(widen(requests, r, r));
        sectors = Some(widen(sectors, s, s));
        launches_compared += 1;
        let rank = |g: &Agreement| match g {
            Agreement::Agrees => 0,
            Agreement::Unaligned(_) => 1,
            Agreement::Disagrees(_) => 2,
            Agreement::NotComparable(_) => 3,
        };
        let got = match agreement(&at, &seen, most_only) {
            Agreement::Unaligned(why) => {
                Agreement::Unaligned(format!("launch {}: {why}", number & LAUNCH_MASK))
            }
            Agreement::Disagrees(why) => {
                Agreement::Disagrees(format!("launch {}: {why}", number & LAUNCH_MASK))
            }
            other => other,
        };
        if rank(&got) == 3 {
            return None;
        }
        if worst.as_ref().is_none_or(|(w, _)| rank(&got) > *w) {
            worst = Some((rank(&got), got));
        }
    }
    let (_, agreement) = worst?;
    Some((
        PerLaunch {
            launches: launches_compared,
            requests: requests?,
            sectors: sectors?,
        },
        agreement,
    ))
}

/// The launch's own number within the log's launch id (whose top bits name the unit).
const LAUNCH_MASK: u64 = (1 << 48) - 1;

fn agreement(a: &AccessReport, seen: &Stats, most_only: bool) -> Agreement {
    if let Some(why) = &a.unpaired {
        return Agreement::NotComparable(format!("the run cannot line up its lanes: {why}"));
    }
    if seen.warps == 0 {
        return Agreement::NotComparable(
            "no full warp ran it, and the static count is a full warp's".into(),
        );
    }
    let mut wrong = Vec::new();
    let mut unaligned = true;
    let aligned_rows = a.aligned_rows;
    for (name, count, range) in [
        ("requests", &a.requests, seen.requests),
        ("sectors", &a.sectors, seen.sectors),
    ] {
        let Some(range) = range else { continue };
        let Some((fewest, most)) = bounds(count) else {
            return Agreement::NotComparable(format!(
                "the static {name} are symbolic ({})",
                count.max
            ));
        };
        let fits = if most_only {
            range.max <= most
        } else if count.exact {
            range.min == most && range.max == most
        } else {
            fewest <= range.min && range.max <= most
        };
        if fits {
            continue;
        }
        let stat = if most_only {
            format!("at most {most}")
        } else if count.exact || fewest == most {
            format!("{most}")
        } else {
            format!("{fewest} to {most}")
        };
        // Rows that do not start on a boundary move a warp's bytes across one: up to the
        // count without the assumption, and down to fewer where a row happens to fit.
        let without = count.unaligned_number().map_or(most, |u| u.max(most));
        let shown_without = if without > most {
            format!(" ({without} unaligned)")
        } else {
            String::new()
        };
        unaligned &= aligned_rows && range.max <= without;
        wrong.push(format!(
            "{name} {} in the run, {stat}{shown_without} counted",
            shown(range)
        ));
    }
    match (wrong.is_empty(), unaligned) {
        (true, _) => Agreement::Agrees,
        (false, true) => Agreement::Unaligned(wrong.join("; ")),
        (false, false) => Agreement::Disagrees(wrong.join("; ")),
    }
}

/// The static count as numbers: the fewest (its `min`, else its value) and the most.
fn bounds(count: &Count) -> Option<(u64, u64)> {
    let most = count.value?;
    let fewest = match &count.exprs.min {
        Some(_) => count.min_number()?,
        None => most,
    };
    Some((fewest, most))
}

/// `3`, or `1 to 3`.
pub fn shown(r: Range) -> String {
    if r.min == r.max {
        r.min.to_string()
    } else {
        format!("{} to {}", r.min, r.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(site: u32, block: u64, thread: u32, addr: u64) -> Access {
        Access {
            site,
            launch: 0,
            block,
            thread,
            block_threads: 40,
            addr,
            bytes: 4,
        }
    }

    #[test]
    fn warps_are_counted_per_execution_and_partial_warps_apart() {
        let mut t = Tally::new();
        // Block 0: 40 threads read consecutive floats twice (a loop of 2), the second
        // time 4 KiB further; the second warp has 8 lanes.
        for thread in (0..40).rev() {
            for iter in 0..2u64 {
                t.note(access(0, 0, thread, 4096 * iter + 4 * u64::from(thread)));
            }
        }
        // Block 1: a column walk, 32 lanes 512 bytes apart.
        for thread in 0..32 {
            t.note(access(0, 1, thread, (1 << 20) | (512 * u64::from(thread))));
        }
        let sites = t.finish();
        assert_eq!(sites.len(), 1);
        let s = sites[0];
        assert_eq!(s.full.warps, 3);
        assert_eq!(s.full.requests, Some(Range { min: 1, max: 32 }));
        assert_eq!(s.full.sectors, Some(Range { min: 4, max: 32 }));
        assert_eq!(s.partial.warps, 2);
        assert_eq!(s.partial.requests, Some(Range { min: 1, max: 1 }));
    }

    /// A 4-byte load at `k.cu:1:1` with the given counts and class, 4 sectors at best.
    fn load(
        access: &str,
        requests: Count,
        sectors: Count,
        coalescing: super::super::model::Coalescing,
    ) -> AccessReport {
        AccessReport {
            at: "k.cu:1:1".into(),
            via: vec![],
            access: access.into(),
            kind: AccessKind::Load,
            bytes: 4,
            array: None,
            offset: None,
            stride: None,
            requests,
            sectors,
            warp_bytes: 128,
            ideal_sectors: 4,
            coalescing,
            when: None,
            reason: None,
            assumptions: vec![],
            aligned_rows: false,
            finding: None,
            active: None,
            unpaired: None,
            dynamic: None,
        }
    }

    #[test]
    fn an_exact_count_must_equal_every_full_warp_and_a_bound_hold_each() {
        let count = |value: u64, min: Option<i64>, exact: bool| Count {
            max: value.to_string(),
            value: Some(value),
            min: min.map(|m| m.to_string()),
            unaligned: None,
            exact,
            exprs: Box::new(CountExprs {
                max: Some(Expr::constant(value as i64)),
                min: min.map(Expr::constant),
                unaligned: None,
            }),
        };
        let mut a = load(
            "a[i]",
            count(1, None, true),
            count(4, None, true),
            super::super::model::Coalescing::Coalesced,
        );
        let stats = |r: (u64, u64), s: (u64, u64)| SiteTally {
            full: Stats {
                warps: 2,
                requests: Some(Range { min: r.0, max: r.1 }),
                sectors: Some(Range { min: s.0, max: s.1 }),
            },
            partial: Stats::default(),
        };
        assert_eq!(
            summarise(&a, &stats((1, 1), (4, 4))).agreement,
            Agreement::Agrees
        );
        assert_eq!(
            summarise(&a, &stats((1, 2), (4, 5))).agreement,
            Agreement::Disagrees(
                "requests 1 to 2 in the run, 1 counted; sectors 4 to 5 in the run, 4 counted"
                    .into()
            )
        );
        a.requests = count(32, Some(1), false);
        a.sectors = count(32, Some(1), false);
        assert_eq!(
            summarise(&a, &stats((3, 9), (5, 20))).agreement,
            Agreement::Agrees
        );
        a.requests.value = None;
        assert!(matches!(
            summarise(&a, &stats((3, 9), (5, 20))).agreement,
            Agreement::NotComparable(_)
        ));
        let partial_only = SiteTally {
            full: Stats::default(),
            partial: stats((1, 1), (1, 1)).full,
        };
        assert!(matches!(
            summarise(&a, &partial_only).agreement,
            Agreement::NotComparable(_)
        ));
    }

    #[test]
    fn a_run_off_the_aligned_rows_agrees_only_where_the_count_assumed_them() {
        // 1 request and 4 sectors with rows on segments, 2 and 5 without (pathfinder's
        // `-4*border`): a run at 2 and 5 breaks the assumption, which is no disagreement
        // where the count made it, and is one where it did not.
        let count = |value: u64, unaligned: i64| Count {
            max: value.to_string(),
            value: Some(value),
            min: None,
            unaligned: Some(unaligned.to_string()),
            exact: true,
            exprs: Box::new(CountExprs {
                max: Some(Expr::constant(value as i64)),
                min: None,
                unaligned: Some(Expr::constant(unaligned)),
            }),
        };
        let mut a = load(
            "in[x]",
            count(1, 2),
            count(4, 5),
            super::super::model::Coalescing::Coalesced,
        );
        let ran = SiteTally {
            full: Stats {
                warps: 3,
                requests: Some(Range { min: 2, max: 2 }),
                sectors: Some(Range { min: 5, max: 5 }),
            },
            partial: Stats::default(),
        };
        let why = "requests 2 in the run, 1 (2 unaligned) counted; sectors 5 in the run, \
                   4 (5 unaligned) counted";
        a.aligned_rows = true;
        assert_eq!(
            summarise(&a, &ran).agreement,
            Agreement::Unaligned(why.into())
        );
        a.aligned_rows = false;
        assert_eq!(
            summarise(&a, &ran).agreement,
            Agreement::Disagrees(why.into())
        );
    }

    #[test]
    fn a_symbolic_count_is_held_to_each_launchs_warps_with_its_values() {
        // `min(32, s)` and `min(32, 4*s)`, as the analysis builds them.
        let s = Expr::var("s");
        let symbolic = |k: i64| {
            let e = symbolic::min_of(
                &[
                    Expr::constant(32),
                    s.checked_mul(&Expr::constant(k)).unwrap(),
                ],
                &symbolic::SignEnv::new(),
            )
            .unwrap();
            Count {
                max: e.to_string(),
                value: None,
                min: None,
                unaligned: None,
                exact: true,
                exprs: Box::new(CountExprs {
                    max: Some(e),
                    ..Default::default()
                }),
            }
        };
        let a = load(
            "a[i * s]",
            symbolic(1),
            symbolic(4),
            super::super::model::Coalescing::Uncoalesced,
        );
        let ran = |r: u64, s: u64| SiteTally {
            full: Stats {
                warps: 4,
                requests: Some(Range { min: r, max: r }),
                sectors: Some(Range { min: s, max: s }),
            },
            partial: Stats::default(),
        };
        // `N` a value template's parameter (no argument), then `a` a pointer, then `s`.
        let params: Vec<String> = ["N", "a", "s"].map(String::from).to_vec();
        let values = |s: i64| LaunchValues {
            grid: [2, 1, 1],
            block: [128, 1, 1],
            args: vec![None, Some(s)],
        };
        let launches = HashMap::from([(1, values(1)), (2, values(4))]);
        let each = BTreeMap::from([(1, ran(1, 4)), (2, ran(4, 16))]);
        let (per, agreement) = per_launch(&a, &params, &each, &launches).unwrap();
        assert_eq!(agreement, Agreement::Agrees);
        assert_eq!(per.launches, 2);
        assert_eq!(per.sectors, Range { min: 4, max: 16 });
        // Launch 2's warps against launch 1's values: the launch is named.
        let each = BTreeMap::from([(1, ran(1, 4)), (2, ran(1, 4))]);
        let (_, agreement) = per_launch(&a, &params, &each, &launches).unwrap();
        assert_eq!(
            agreement,
            Agreement::Disagrees(
                "launch 2: requests 1 in the run, 4 counted; sectors 4 in the run, 16 counted"
                    .into()
            )
        );
        // A launch the log gives no values for: not evaluated.
        let each = BTreeMap::from([(3, ran(1, 4))]);
        assert!(per_launch(&a, &params, &each, &launches).is_none());
    }

    /// A count is evaluated from the expression beside its text; the text is not read.
    #[test]
    fn a_count_is_evaluated_from_its_expression_never_its_text() {
        let twice = Expr::var("s").checked_mul(&Expr::constant(2)).unwrap();
        let count = Count {
            max: "a text that is no expression".into(),
            exprs: Box::new(CountExprs {
                max: Some(twice),
                ..Default::default()
            }),
            ..Default::default()
        };
        let names = HashMap::from([("s".to_string(), 3)]);
        let at = count_with(&count, &names).expect("evaluated");
        assert_eq!((at.value, at.max.as_str()), (Some(6), "6"));
    }
}
