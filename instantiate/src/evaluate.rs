//! Evaluating one loop's report with a context of values: sections, grid, requests per
//! launch, shared memory and divergence.

use super::eval::{eval_in, eval_rational, read_text, Context};
use super::model::{
    AccessInstance, DivergenceInstance, Grid, InstanceParameter, MemoryTraffic, Quantity,
    SharedInstance,
};
use super::LoopSketch;
use advisor::model::{LoopReport, MappingReport, ParamKind, Parameter, Role};
use advisor::quantity::Quantity as ReportQuantity;
use num_traits::ToPrimitive;
use profile::model::{LoopProfile, Profile, ValueStats};
use std::collections::BTreeMap;

/// The bytes one global-memory request moves.
pub const SEGMENT_BYTES: i64 = 128;

/// The report's quantity `q` evaluated under `values`, printed as its text.
pub fn quantity(q: &ReportQuantity, values: &Context) -> Quantity {
    match eval_in(q, values) {
        Ok(v) => Quantity {
            expr: q.text().to_string(),
            value: Some(v),
            why: None,
            candidates: Vec::new(),
            source: Some(q.clone()),
        },
        Err((e, candidates)) => Quantity {
            expr: q.text().to_string(),
            value: None,
            why: Some(e.to_string()),
            candidates,
            source: Some(q.clone()),
        },
    }
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::In => "in",
        Role::Out => "out",
        Role::Inout => "inout",
    }
}

/// Array parameters with their sections evaluated.
pub fn parameters(params: &[Parameter], values: &Context, from: &str) -> Vec<InstanceParameter> {
    params
        .iter()
        .filter(|p| p.kind != ParamKind::Scalar)
        .map(|p| {
            let mut param = InstanceParameter {
                name: p.name.clone(),
                role: role_name(p.role).to_string(),
                lo: p.bytes.as_ref().map(|b| quantity(&b.lo, values)),
                hi: p.bytes.as_ref().map(|b| quantity(&b.hi, values)),
                size: p.bytes.as_ref().map(|b| quantity(&b.size, values)),
                // A whole object's section comes from its allocation, not the accesses.
                section_from: p.bytes.as_ref().map(|_| match &p.whole_object {
                    Some(_) => "allocation".to_string(),
                    None => from.to_string(),
                }),
                notes: p.notes.clone(),
            };
            check_section(&mut param);
            param
        })
        .collect()
}

/// Sections whose size has no number because one variable took several values at the
/// loop's entries (`max(8*m - 512, 40, -8*m + 560)` in a loop nested in one over `m`): the
/// size averaged over the entries, each value weighted by how often it was recorded, when
/// the profile counted every value exactly (at most 8 distinct ones per run). This is the
/// bytes one launch copies on average, valid for the profiled run; `lo` and `hi` keep no
/// number, since they differ from entry to entry.
pub fn sections_averaged_over_entries(
    params: &mut [InstanceParameter],
    values: &Context,
    recorded: &BTreeMap<String, ValueStats>,
) {
    for p in params.iter_mut() {
        let Some(size) = p.size.as_mut().filter(|q| q.value.is_none()) else {
            continue;
        };
        let Some(source) = size.source.clone() else {
            continue;
        };
        let missing: Vec<String> = super::eval::variables(&size.expr)
            .into_iter()
            .filter(|n| !values.values.contains_key(n))
            .collect();
        let [name] = missing.as_slice() else {
            continue;
        };
        let Some(stats) = recorded.get(name) else {
            continue;
        };
        let counted: u64 = stats.frequent.iter().map(|f| f.count).sum();
        if stats.count == 0 || counted != stats.count {
            continue;
        }
        let mut total = 0i128;
        let (mut least, mut most) = (i64::MAX, i64::MIN);
        for f in &stats.frequent {
            let mut at = values.clone();
            at.values.insert(name.clone(), f.value);
            let Ok(bytes) = eval_in(&source, &at) else {
                total = -1;
                break;
            };
            let bytes = bytes.max(0);
            least = least.min(bytes);
            most = most.max(bytes);
            total += i128::from(bytes) * i128::from(f.count);
        }
        if total < 0 {
            continue;
        }
        let mean = (total + i128::from(stats.count) - 1) / i128::from(stats.count);
        let Ok(mean) = i64::try_from(mean) else {
            continue;
        };
        size.value = Some(mean);
        size.why = None;
        p.section_from = Some("profile".into());
        p.notes.push(format!(
            "valid for the profiled run: `{name}` took {} values at the loop's {} entries; the size averaged over them is {mean} bytes ({least}..{most})",
            stats.frequent.len(),
            stats.count
        ));
    }
}

/// Sections whose size has no number but is a linear function of the loop's own trip count
/// (`48*w.end - 48*w.start` for a loop over `w.start..w.end`, `16*d[0]` for one over
/// `i < d[0]`): per entry the size is `c * trips + d`, so on average it is `c` times the
/// profile's mean trip count plus `d`, valid for the profiled run. The relation is shown
/// on the expressions themselves: `size - c * trip_count` has no variable left (with the
/// trip count's text read as one name where the engine cannot parse it).
pub fn sections_from_trip_counts(
    params: &mut [InstanceParameter],
    trip_count: &ReportQuantity,
    profile: &LoopProfile,
) {
    if profile.entries == 0 || trip_count.trim().is_empty() {
        return;
    }
    for p in params.iter_mut() {
        let Some(size) = p.size.as_mut().filter(|q| q.value.is_none()) else {
            continue;
        };
        let Some((c, d)) = size.source.as_ref().and_then(|s| linear_in(s, trip_count)) else {
            continue;
        };
        let mean = c * profile.mean_trip + d;
        if !mean.is_finite() || mean < 0.0 || mean > i64::MAX as f64 {
            continue;
        }
        let bytes = mean.ceil() as i64;
        size.value = Some(bytes);
        size.why = None;
        p.section_from = Some("profile".into());
        p.notes.push(format!(
            "valid for the profiled run: the size is {c} bytes per iteration{}; the loop ran {} iterations per entry on average over {} entries, so {bytes} bytes",
            if d == 0.0 {
                String::new()
            } else if d < 0.0 {
                format!(" minus {}", -d)
            } else {
                format!(" plus {d}")
            },
            profile.mean_trip,
            profile.entries
        ));
    }
}

/// `(c, d)` with `size = c * trip + d` identically, when there are such numbers.
fn linear_in(size: &ReportQuantity, trip: &ReportQuantity) -> Option<(f64, f64)> {
    use num_traits::ToPrimitive;
    // Where the engine holds both: the ratio from two points, checked on the expressions.
    if let (Some(s), Some(t)) = (size.expr_as_read(), trip.expr_as_read()) {
        let names: Vec<symbolic::Var> = s.vars().union(&t.vars()).cloned().collect();
        if names.is_empty() {
            return None;
        }
        let at = |k: i64| -> std::collections::HashMap<symbolic::Var, symbolic::Expr> {
            names
                .iter()
                .enumerate()
                .map(|(j, v)| (v.clone(), symbolic::Expr::constant(k * (j as i64 + 3) + 11)))
                .collect()
        };
        let value = |e: &symbolic::Expr, k: i64| e.substitute(&at(k)).ok()?.as_constant();
        let (s0, s1, t0, t1) = (value(s, 1)?, value(s, 2)?, value(t, 1)?, value(t, 2)?);
        if t1 == t0 {
            return None;
        }
        let c = (s1 - s0) / (t1 - t0);
        let rest = s
            .checked_sub(&t.checked_mul(&symbolic::Expr::rational(c.clone())).ok()?)
            .ok()?;
        let d = rest.as_constant()?;
        return Some((c.to_f64()?, d.to_f64()?));
    }
    // Otherwise the trip count's text as one name (`d[0]`).
    let placeholder = "ww_trip_count";
    let (size, trip) = (size.text(), trip.text());
    if !size.contains(trip) {
        return None;
    }
    let s = read_text(&size.replace(trip, placeholder)).ok()?;
    let var = symbolic::Var::new(placeholder);
    if s.vars().iter().any(|v| *v != var) {
        return None;
    }
    let value = |k: i64| {
        s.substitute(&std::collections::HashMap::from([(
            var.clone(),
            symbolic::Expr::constant(k),
        )]))
        .ok()?
        .as_constant()
    };
    let (d, s1) = (value(0)?, value(1)?);
    let c = s1 - d.clone();
    // Linear: the value at 2 is d + 2c.
    if value(2)? != d.clone() + c.clone() + c.clone() {
        return None;
    }
    Some((c.to_f64()?, d.to_f64()?))
}

/// Sections that have no number yet, sized by the block each parameter pointed to at the
/// loop's entries in the profiled runs (the profile's `allocations`): the whole block, as
/// a port that maps the object would copy it. Only where every entry found its block: a
/// pointer that was sometimes a global, an interior pointer or a library's block gives no
/// size, and the note says so.
pub fn sections_from_allocations(params: &mut [InstanceParameter], profile: &LoopProfile) {
    for p in params.iter_mut() {
        if p.size.as_ref().is_some_and(|q| q.value.is_some()) {
            continue;
        }
        let Some(seen) = profile.allocations.get(&p.name) else {
            continue;
        };
        let Some(mean) = seen.mean_bytes().and_then(|m| i64::try_from(m).ok()) else {
            if seen.unknown > 0 {
                p.notes.push(format!(
                    "the profile cannot size it: at {} of {} entries `{}` did not point to the start of a block the program's own code allocated",
                    seen.unknown,
                    seen.unknown + seen.found,
                    p.name
                ));
            }
            continue;
        };
        let number = |v: i64| Quantity {
            expr: v.to_string(),
            value: Some(v),
            why: None,
            candidates: Vec::new(),
            source: None,
        };
        p.lo = Some(number(0));
        p.hi = Some(number(mean));
        p.size = Some(number(mean));
        p.section_from = Some("profile".into());
        let spread = if seen.min_bytes == seen.max_bytes {
            format!("{} bytes at each of {} entries", seen.min_bytes, seen.found)
        } else {
            format!(
                "{mean} bytes on average over {} entries, {}..{}",
                seen.found, seen.min_bytes, seen.max_bytes
            )
        };
        p.notes.push(format!(
            "valid for the profiled run: the whole block `{}` points to at the loop's entry, as the program allocated it ({spread})",
            p.name
        ));
    }
}

/// A section is `[lo, hi)` of `size = hi - lo` bytes, never negative. A size that is not
/// `hi - lo` comes from an edited or corrupt report: the size gets no value (and says why),
/// so nothing is estimated from it. A negative one means the values given make the loop run
/// no iteration (the report assumes it runs): counted as empty, and said so.
fn check_section(param: &mut InstanceParameter) {
    let value = |q: &Option<Quantity>| q.as_ref().and_then(|q| q.value);
    let (lo, hi, size) = (value(&param.lo), value(&param.hi), value(&param.size));
    let Some(size_value) = size else { return };
    if let (Some(lo), Some(hi)) = (lo, hi) {
        if hi.checked_sub(lo) != Some(size_value) {
            if let Some(q) = param.size.as_mut() {
                q.why = Some(format!(
                    "the report's size ({size_value}) is not hi - lo ({hi} - {lo}): the report was edited or is corrupt"
                ));
                q.value = None;
            }
            return;
        }
    }
    if size_value < 0 {
        param.notes.push(format!(
            "the section evaluates to {size_value} bytes: with these values the loop runs no iteration (the report assumes it runs); counted as empty"
        ));
        if let Some(q) = param.size.as_mut() {
            q.value = Some(0);
        }
    }
}

/// The mapping the estimate uses: the recommended one, else the natural one.
pub fn chosen_mapping(report: &LoopReport) -> Option<&MappingReport> {
    report
        .recommended_mapping
        .as_ref()
        .and_then(|m| report.mappings.iter().find(|r| &r.mapping == m))
        .or_else(|| report.mappings.first())
}

pub fn mapping_text(m: &MappingReport) -> String {
    match m.mapping.y_text() {
        Some(y) => format!("x={}, y={y}", m.mapping.x_text()),
        None => format!("x={}", m.mapping.x_text()),
    }
}

/// The grid and the number of threads one launch runs.
#[derive(Debug)]
pub struct GridFacts {
    pub grid: Grid,
    pub threads: Option<i64>,
}

/// Threads along x and y from the trip counts of the mapped loops; the profile's counts
/// stand in where an expression has no value.
pub fn grid(
    report: &LoopReport,
    all: &[&LoopSketch],
    mapping: &MappingReport,
    values: &Context,
    block: (u64, u64),
    profile: Option<&Profile>,
) -> GridFacts {
    // The nest's loops first; a mapping may also name a child loop the nest left out
    // (it maps the child when both loops are parallel).
    let loop_of = |var: &str| -> Option<&LoopSketch> {
        let has_var = |l: &&LoopSketch| l.induction.as_ref().is_some_and(|i| i.var == var);
        report
            .nest
            .iter()
            .filter_map(|id| all.iter().copied().find(|l| &l.id == id))
            .find(has_var)
            .or_else(|| {
                all.iter()
                    .copied()
                    .filter(|l| l.function == report.function && l.line >= report.line)
                    .find(has_var)
            })
    };
    let threads_along = |var: &str| -> Quantity {
        match loop_of(var).and_then(|l| l.induction.as_ref()) {
            Some(ind) => quantity(&ind.trip_count, values),
            None => Quantity {
                expr: var.to_string(),
                value: None,
                why: Some(format!("no loop of the nest runs `{var}`")),
                candidates: Vec::new(),
                source: None,
            },
        }
    };
    let threads_x = threads_along(&mapping.mapping.x);
    let threads_y = mapping.mapping.y.as_deref().map(threads_along);
    let static_threads = match (&threads_x.value, threads_y.as_ref().map(|q| q.value)) {
        (Some(x), None) => Some((*x).max(0)),
        // An overflowing product is no count at all (`--set n=9223372036854775807`).
        (Some(x), Some(Some(y))) => (*x).max(0).checked_mul(y.max(0)),
        _ => None,
    };
    // The profile: iterations of the innermost mapped loop per entry of this loop.
    let profiled_threads = || -> Option<i64> {
        let p = profile?;
        let me = p.find_loop(&report.id)?;
        let innermost = report.nest.last()?;
        let inner = p.find_loop(innermost)?;
        (me.entries > 0).then(|| (inner.iterations / me.entries) as i64)
    };
    let threads = static_threads.or_else(profiled_threads);
    let (bx, by) = (block.0 as i64, block.1 as i64);
    // Warps with at least one thread in the iteration space issue requests; the others
    // exit at the bounds guard. A row of a block is whole warps when `bx` is a multiple of
    // 32; otherwise a warp spans rows and every warp of a touched block counts.
    let (blocks, warps) = match (mapping.mapping.y.is_some(), threads_x.value, threads) {
        (true, Some(x), Some(total)) if x > 0 => {
            let y = total / x;
            let blocks = div_ceil(x, bx).checked_mul(div_ceil(y, by));
            let warps = if bx % 32 == 0 {
                div_ceil(x, 32).checked_mul(y)
            } else {
                blocks.and_then(|b| b.checked_mul(div_ceil(bx * by, 32)))
            };
            (blocks, warps)
        }
        (false, _, Some(total)) => {
            let per_block = bx * by;
            (Some(div_ceil(total, per_block)), Some(div_ceil(total, 32)))
        }
        _ => (None, None),
    };
    GridFacts {
        grid: Grid {
            mapping: mapping_text(mapping),
            threads_x,
            threads_y,
            threads,
            block: if mapping.mapping.y.is_some() {
                format!("{bx}x{by}")
            } else {
                format!("{}", bx * by)
            },
            blocks,
            warps,
        },
        threads,
    }
}

fn div_ceil(a: i64, b: i64) -> i64 {
    if b <= 0 {
        return 0;
    }
    // Without `a + b - 1`, which overflows for the largest counts.
    let a = a.max(0);
    a / b + i64::from(a % b != 0)
}

/// Requests of every access per launch: requests per warp times the warps times how often
/// each warp executes the access.
pub fn memory(
    report: &LoopReport,
    all: &[&LoopSketch],
    mapping: &MappingReport,
    values: &Context,
    facts: &GridFacts,
    profile: Option<&Profile>,
) -> MemoryTraffic {
    let me = profile.and_then(|p| p.find_loop(&report.id));
    let mut accesses = Vec::new();
    // The most executions per thread of any access; unknown when one is.
    let mut steps: Option<f64> = Some(1.0);
    for a in &mapping.accesses {
        let requests = quantity(&a.requests_per_warp, values);
        let mut why = requests.why.clone();
        let executions: Option<(f64, String)> = match &a.inner_loop {
            None => Some((1.0, "1".to_string())),
            Some(inner) => {
                let profiled = profile.and_then(|p| p.find_loop(inner)).and_then(|ip| {
                    let entries = me?.entries;
                    let threads = facts.threads?;
                    (entries > 0 && threads > 0).then(|| {
                        let per_thread = ip.iterations as f64 / entries as f64 / threads as f64;
                        (
                            per_thread,
                            format!("{per_thread:.3} (profiled iterations of {inner})"),
                        )
                    })
                });
                let statics = || {
                    let l = all.iter().find(|l| &l.id == inner)?;
                    let ind = l.induction.as_ref()?;
                    let v = eval_in(&ind.trip_count, values).ok()?;
                    Some((v.max(0) as f64, format!("{} = {v}", ind.trip_count)))
                };
                // The profile counts every iteration of the inner loop, of all its entries:
                // exact for loops nested deeper than one level, where the static trip
                // count of the innermost loop alone undercounts (gemm's j inside k inside
                // the mapped i: 1100 instead of 1,320,000 a thread).
                let found = profiled.or_else(statics);
                if found.is_none() {
                    why = Some(format!(
                        "inside loop {inner}, whose count per thread is not known"
                    ));
                }
                found
            }
        };
        steps = match (&executions, steps) {
            (Some((e, _)), Some(s)) => Some(s.max(*e)),
            _ => None,
        };
        let per_launch = match (requests.value, facts.grid.warps, &executions) {
            (Some(r), Some(w), Some((e, _))) => Some((r as f64 * w as f64 * e).round() as i64),
            _ => None,
        };
        if per_launch.is_none() && why.is_none() {
            why = Some("the number of warps is not known".into());
        }
        accesses.push(AccessInstance {
            line: a.line,
            text: a.text.clone(),
            kind: a.kind.clone(),
            requests_per_warp: requests,
            executions_per_warp: executions.map(|(_, t)| t),
            requests_per_launch: per_launch,
            why,
        });
    }
    // Checked: values given with `--set` may be as large as an i64 holds; a total that
    // overflows has no value rather than a wrapped one.
    let total: Option<i64> = accesses
        .iter()
        .try_fold(0i64, |sum, a| sum.checked_add(a.requests_per_launch?));
    MemoryTraffic {
        mapping: mapping_text(mapping),
        accesses,
        requests_per_launch: total,
        bytes_per_launch: total.and_then(|t| t.checked_mul(SEGMENT_BYTES)),
        steps_per_thread: steps.filter(|s| s.is_finite()),
        warps: facts.grid.warps,
        stores_in_steps: mapping
            .accesses
            .iter()
            .any(|a| a.kind == "store" && a.inner_loop.is_some()),
    }
}

/// Shared bytes per block for the chosen block shape. A size that depends on the block's
/// position (`block.x`, `block.y`: the grid coordinates of its first thread) is evaluated
/// for the first and the last block along each axis and the largest is kept: the sizes are
/// affine in the position, so that is the largest block.
pub fn shared(
    report: &LoopReport,
    values: &Context,
    block: (u64, u64),
    grid: Option<&Grid>,
) -> Vec<SharedInstance> {
    let mut with_block = values.clone();
    with_block
        .values
        .insert("blockDim.x".into(), block.0 as i64);
    with_block
        .values
        .insert("blockDim.y".into(), block.1 as i64);
    let last_origin = |threads: Option<&Quantity>, dim: u64| -> Vec<i64> {
        match threads.and_then(|q| q.value) {
            Some(t) if t > 0 => vec![0, (t - 1) / dim as i64 * dim as i64],
            _ => vec![],
        }
    };
    let xs = last_origin(grid.map(|g| &g.threads_x), block.0);
    let ys = last_origin(grid.and_then(|g| g.threads_y.as_ref()), block.1);
    report
        .shared_memory
        .iter()
        .map(|s| {
            let mut q = quantity(&s.bytes_per_block, &with_block);
            let positional = ["block.x", "block.y"]
                .iter()
                .any(|v| super::eval::variables(&s.bytes_per_block).contains(*v));
            if q.value.is_none() && positional {
                let mut best: Option<i64> = None;
                for x in if xs.is_empty() { vec![0] } else { xs.clone() } {
                    for y in if ys.is_empty() { vec![0] } else { ys.clone() } {
                        let mut at = with_block.clone();
                        at.values.insert("block.x".into(), x);
                        at.values.insert("block.y".into(), y);
                        if let Ok(v) = eval_in(&s.bytes_per_block, &at) {
                            best = Some(best.map_or(v, |b: i64| b.max(v)));
                        }
                    }
                }
                if let Some(v) = best {
                    q.value = Some(v);
                    q.why =
                        Some("the largest block (the size depends on the block's position)".into());
                    q.candidates.clear();
                }
            }
            SharedInstance {
                array: s.array.clone(),
                bytes_per_block: q,
            }
        })
        .collect()
}

pub fn divergence(report: &LoopReport, values: &Context) -> Vec<DivergenceInstance> {
    report
        .divergence
        .iter()
        .map(|d| {
            let warps = quantity(&d.warps_per_row, values);
            let diverging = [
                quantity(&d.diverging_warps_per_row[0], values),
                quantity(&d.diverging_warps_per_row[1], values),
            ];
            let ratio = match (warps.value, diverging[0].value, diverging[1].value) {
                (Some(w), Some(lo), Some(hi)) if w > 0 => {
                    Some([lo as f64 / w as f64, hi as f64 / w as f64])
                }
                _ => None,
            };
            DivergenceInstance {
                line: d.line,
                condition: d.condition.clone(),
                warps_per_row: warps,
                diverging_warps_per_row: diverging,
                ratio,
            }
        })
        .collect()
}

/// Whether a quantity has a value under `values` (for choosing what to re-analyse).
pub fn evaluates(q: &ReportQuantity, values: &Context) -> bool {
    eval_rational(q, &values.values)
        .ok()
        .and_then(|v| v.to_integer().to_i64())
        .is_some()
}
