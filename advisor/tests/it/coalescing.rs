//! Coalescing factors, mappings, shared memory and divergence on the samples, and a
//! brute-force check of every factor: the addresses of the 32 threads of several warps are
//! enumerated at concrete sizes, once from the symbolic offset and once from an
//! instrumented run of the sample in the IR interpreter, and their distinct 128-byte
//! segments are counted. Where the analysis claims an exact count (and the concrete rows
//! are aligned as assumed) the counts must be equal; everywhere else the count must lie in
//! the reported range.

use advisor::analyze::{analyze_unit, Filter};
use advisor::coalescing::{
    granules, thread_var, warp_var, ALIGNED_ROWS, ALIGNED_SECTOR_ROWS, LINE, SECTOR,
};
use advisor::mapping::{candidates, Candidate, Nest};
use advisor::model::{GridMapping, LoopReport};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use analyses::symbols::SymbolOrigin;
use frontend::interp::{Access, Interpreter, Observer, Val};
use frontend::ir::{Block, Value};
use frontend::loop_ref::LoopRef;
use frontend::loops::analyze_loops;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::{load_unit, Unit};
use num_rational::BigRational;
use num_traits::ToPrimitive;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use symbolic::{parse_expr, Expr, Var};

fn unit(file: &str) -> Unit {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(file);
    load_unit(&TranslationUnitInput::new(path)).expect("sample loads")
}

fn find<'a>(reports: &'a [LoopReport], function: &str, line: u32) -> &'a LoopReport {
    reports
        .iter()
        .find(|r| r.function == function && r.line == line)
        .expect("loop")
}

fn eval(text: &str, values: &[(&str, i64)]) -> i64 {
    let e = parse_expr(text).unwrap_or_else(|err| panic!("cannot parse `{text}`: {err}"));
    let ctx: HashMap<Var, BigRational> = values
        .iter()
        .map(|(n, v)| (Var::new(n), BigRational::from_integer((*v).into())))
        .collect();
    e.eval(&ctx)
        .unwrap_or_else(|err| panic!("cannot evaluate `{text}`: {err:?}"))
        .to_integer()
        .to_i64()
        .expect("small")
}

/// The variables of a mapping, to compare with `mapping(...)` (the loop ids are checked in
/// `every_mapping_names_its_loops`).
fn mapping(x: &str, y: Option<&str>) -> (String, Option<String>) {
    (x.into(), y.map(Into::into))
}

fn vars(m: &GridMapping) -> (String, Option<String>) {
    (m.x.clone(), m.y.clone())
}

#[test]
fn matrix_add_natural_n_over_4_clamped_reversed_1() {
    let reports = analyze_unit(&unit("matrix_add.c"), &Filter::default());
    let l = find(&reports, "add", 38);
    let natural = &l.mappings[0];
    assert_eq!(vars(&natural.mapping), mapping("i", Some("j")));
    for a in &natural.accesses {
        assert_eq!(a.requests_per_warp, "min(32, N)", "{a:?}");
        // In 32-byte sectors the warp spans `32 * 4*N` bytes: `4*N` sectors up to 32.
        assert_eq!(a.sectors_per_warp, "min(32, 4*N)", "{a:?}");
        // The default size: 32 requests, every thread its own line.
        assert_eq!(eval(&a.requests_per_warp, &[("N", 256)]), 32);
        assert_eq!(a.stride_bytes.as_deref(), Some("4*N"));
    }
    let reversed = &l.mappings[1];
    assert_eq!(vars(&reversed.mapping), mapping("j", Some("i")));
    // Coalesced: one 128-byte request, moved as four sectors.
    assert!(reversed
        .accesses
        .iter()
        .all(|a| a.requests_per_warp == "1" && a.sectors_per_warp == "4" && a.exact));
    assert_eq!(reversed.total_requests_per_warp, "3");
    assert_eq!(reversed.total_sectors_per_warp, "12");
    assert_eq!(
        l.recommended_mapping.as_ref().map(vars),
        Some(mapping("j", Some("i")))
    );
    let gain = l.mapping_gain.as_ref().expect("gain");
    assert_eq!(gain.natural_requests_per_warp, "3*min(32, N)");
}

#[test]
fn convolution_reproduces_table_9_1() {
    let reports = analyze_unit(&unit("conv2d_rgb.c"), &Filter::default());
    let l = find(&reports, "convolve", 63);
    // Coalescing: the thesis' mapping (Grid.x = y) is uncoalesced, reversing fixes it.
    let natural = &l.mappings[0];
    assert_eq!(vars(&natural.mapping), mapping("y", Some("x")));
    let row = |m: &advisor::model::MappingReport, text: &str| {
        m.accesses
            .iter()
            .find(|a| a.text == text)
            .cloned()
            .expect("access")
    };
    for text in ["in_row[px + 0]", "out_row[x + 0]"] {
        let a = row(natural, text);
        assert_eq!(a.stride_bytes.as_deref(), Some("3*in_image->width"));
        let n = a.requests_per_warp.replace("in_image->width", "w");
        // 3/4*w in the thesis (48 for w = 64), clamped to 32.
        assert_eq!(eval(&n, &[("w", 64)]), 32);
        assert_eq!(eval(&n, &[("w", 16)]), 12);
    }
    assert_eq!(
        l.recommended_mapping.as_ref().map(vars),
        Some(mapping("x", Some("y")))
    );
    let best = &l.mappings[1];
    for text in ["in_row[px + 0]", "out_row[x + 2]"] {
        let a = row(best, text);
        assert_eq!(a.requests_per_warp, "2");
        assert_eq!(a.min_requests_per_warp.as_deref(), Some("1"));
    }
    assert_eq!(
        row(best, "filter->pixmap[fx + fy * filter->width]").requests_per_warp,
        "1"
    );
    // Shared memory: the filter wholly shared, the image as a 2D tile with its halo.
    let filter = l
        .shared_memory
        .iter()
        .find(|s| s.array == "filter->pixmap")
        .expect("filter");
    assert_eq!(filter.kind, "broadcast");
    assert_eq!(filter.bytes_per_block, "4*filter->height*filter->width");
    let image = l
        .shared_memory
        .iter()
        .find(|s| s.array == "in_image->pixmap")
        .expect("image");
    assert_eq!(image.accesses.len(), 3);
    let tile = image.tile.as_ref().expect("2D tile");
    assert_eq!(tile.rows, "blockDim.y + filter->height - 1");
    assert_eq!(tile.row_bytes, "3*blockDim.x + 3*filter->width - 3");
    assert_eq!(tile.row_pitch_bytes, "3*in_image->width");
    // fw*fh - fh pixels shared by x-neighbours, fw*fh - fw by y-neighbours (3 bytes each).
    assert_eq!(
        image.overlap_x_bytes.as_deref(),
        Some("-3*filter->height + 3*filter->height*filter->width")
    );
    assert_eq!(
        image.overlap_y_bytes.as_deref(),
        Some("-3*filter->width + 3*filter->height*filter->width")
    );
    assert_eq!(
        image.bank_conflicts.as_ref().map(|b| b.degree.as_str()),
        Some("1")
    );
    assert!(l.occupancy.is_some());
    // Boundary checks on px may split one warp per row; those on py are uniform.
    let px = l
        .divergence
        .iter()
        .find(|d| d.condition == "px < 0")
        .expect("px < 0");
    assert_eq!(px.diverging_warps_per_row, ["0", "1"]);
    let py = l
        .divergence
        .iter()
        .find(|d| d.condition == "py < 0")
        .expect("py < 0");
    assert_eq!(py.ratio, ["0".to_string(), "0".to_string()]);
}

#[test]
fn srad_clamp_is_divergent_with_min_max_advice() {
    let reports = analyze_unit(&unit("srad_clamp.c"), &Filter::default());
    let l = find(&reports, "diffusion_coeff", 39);
    assert_eq!(
        l.recommended_mapping.as_ref().map(vars),
        Some(mapping("j", Some("i")))
    );
    let first = l.divergence.iter().find(|d| d.line == 43).expect("line 43");
    assert_eq!(first.ratio[1], "1");
    assert!(!first.exact);
    let help = first.help.as_deref().expect("help");
    assert!(help.contains("c = fminf(fmaxf(c, 0), 1)"), "{help}");
    // The rewritten version has no branch left.
    let fixed = find(&reports, "diffusion_coeff_minmax", 56);
    assert!(fixed.divergence.is_empty());
}

fn nest_for<'a>(
    unit: &'a Unit,
    function: &str,
    forest: &'a frontend::loops::LoopForest,
    rec: &'a analyses::reconstruct::Reconstruction,
    outer: frontend::loops::LoopId,
) -> Nest<'a> {
    let program = &unit.lowered.program;
    let func = program.function(function).expect("function");
    let space = advisor::space::iteration_space(func, forest, outer, rec).expect("space");
    let accesses = advisor::access::collect_accesses(func, forest, outer, rec, &program.types);
    Nest::new(unit, func, forest, rec, outer, space, accesses)
}

#[test]
fn fan2_recommends_threads_over_columns() {
    let u = unit("gaussian_fan2.c");
    let func = u.lowered.program.function("fan2").expect("fan2");
    let forest = analyze_loops(func);
    let rec = reconstruct(
        &u.lowered.program,
        func,
        &forest,
        &ReconstructConfig::default(),
    );
    let outer = forest
        .ids()
        .find(|id| forest.loop_(*id).parent.is_none())
        .expect("outer");
    let nest = nest_for(&u, "fan2", &forest, &rec, outer);
    // Both loops as parallel ones (the sample's header: the 2D nest is GPU-friendly).
    let cands = candidates(&forest, outer, &|_| true);
    assert_eq!(cands.len(), 2);
    let evals: Vec<_> = cands.iter().map(|c| nest.evaluate(c)).collect();
    let (best, _) = advisor::mapping::recommend(&evals, &nest.space.env).expect("best");
    assert_eq!(vars(&evals[best].report.mapping), mapping("y", Some("x")));
    let natural = &evals[0].report;
    let axy = natural
        .accesses
        .iter()
        .find(|a| a.offset_bytes == "4*y + 4*N*x" && a.kind == "load")
        .expect("A[xy]");
    assert_eq!(axy.requests_per_warp, "min(32, N)");
    let fixed = &evals[best].report;
    assert!(fixed
        .accesses
        .iter()
        .filter(|a| a.offset_bytes.forms().iter().any(|q| q.contains("4*N*x")))
        .all(|a| a.requests_per_warp == "1"));
    // `if (y == t)`: only thread 0 of each row takes the branch.
    let div = advisor::divergence::analyze(
        &nest,
        &evals[best].candidate,
        &advisor::mapping::Target::default(),
    );
    let yt = div
        .iter()
        .find(|d| d.condition == "y == t")
        .expect("y == t");
    assert!(yt.exact);
    assert_eq!(yt.diverging_warps_per_row, ["1", "1"]);
    assert_eq!(yt.warps_per_row, "(N - t + 31) / 32");
}

#[test]
fn transpose_stages_a_tile_and_pads_it() {
    let reports = analyze_unit(&unit("transpose.c"), &Filter::default());
    let l = find(&reports, "transpose", 37);
    let staged = l.shared_memory.first().expect("a staged tile");
    assert_eq!(staged.kind, "uncoalesced");
    let banks = staged.bank_conflicts.as_ref().expect("banks");
    // The default 32x8 block: a tile of 32 rows of 8 ints, read down a column 32 bytes
    // apart, is 8-way; one int of padding per row removes the conflicts.
    assert_eq!(banks.degree, "8");
    assert!(banks
        .padding
        .as_deref()
        .is_some_and(|p| p.contains("4 bytes")));
}

// ---- brute force --------------------------------------------------------------------

/// One execution of an access: the tracked SSA values then, the allocation and offset.
type Execution = (BTreeMap<Value, i64>, u32, i64);
/// Executions grouped by (other induction variables' values, warp index): (x index, offset).
type Warps = BTreeMap<(Vec<(Value, i64)>, i64), Vec<(i64, i64)>>;

#[derive(Default)]
struct Trace {
    /// The function observed (first call only).
    function: String,
    calls: u32,
    tracked: HashSet<Value>,
    current: HashMap<Value, Val>,
    /// Per access instruction: (values of the tracked SSA values, alloc, offset).
    accesses: HashMap<Value, Vec<Execution>>,
    first_values: HashMap<Value, Val>,
}

struct Recorder(Rc<RefCell<Trace>>);

impl Observer for Recorder {
    fn on_block(&mut self, function: &str, block: Block) {
        let mut t = self.0.borrow_mut();
        if function == t.function && block == Block(0) {
            t.calls += 1;
        }
    }
    fn on_value(&mut self, function: &str, value: Value, val: &Val) {
        let mut t = self.0.borrow_mut();
        if function != t.function || t.calls != 1 {
            return;
        }
        t.first_values.entry(value).or_insert_with(|| val.clone());
        if t.tracked.contains(&value) {
            t.current.insert(value, val.clone());
        }
    }
    fn on_access(&mut self, a: &Access) {
        let mut t = self.0.borrow_mut();
        if a.function != t.function || t.calls != 1 {
            return;
        }
        let key: BTreeMap<Value, i64> = t
            .current
            .iter()
            .filter_map(|(v, val)| match val {
                Val::Int(i) => Some((*v, *i as i64)),
                _ => None,
            })
            .collect();
        t.accesses
            .entry(a.inst)
            .or_default()
            .push((key, a.alloc, a.offset));
    }
}

#[derive(Default, Debug)]
struct Tally {
    warps: usize,
    exact_agreements: usize,
    in_range: usize,
    /// The same for the 32-byte sector counts.
    exact_sectors: usize,
    sectors_in_range: usize,
}

fn q(i: i64) -> BigRational {
    BigRational::from_integer(i.into())
}

fn value_of(e: &Expr, ctx: &HashMap<Var, BigRational>) -> Option<i64> {
    e.eval(ctx).ok()?.to_integer().to_i64()
}

fn brute_force(file: &str, function: &str, tally: &mut Tally) {
    let u = unit(file);
    let program = &u.lowered.program;
    let func = program.function(function).expect("function");
    let forest = analyze_loops(func);
    let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
    let trace = Rc::new(RefCell::new(Trace {
        function: function.to_string(),
        ..Trace::default()
    }));
    // Track every induction variable and every symbol's SSA value.
    {
        let mut t = trace.borrow_mut();
        for s in rec.symbols.iter() {
            if let Some(v) = rec.symbols.value_of(&s.var) {
                t.tracked.insert(v);
            }
        }
    }
    let mut interp = Interpreter::new(program)
        .with_fuel(100_000_000)
        .with_observer(Box::new(Recorder(trace.clone())));
    let result = interp.run_main(&[]).expect("runs");
    assert_eq!(result.exit_code, 0);
    let trace = trace.borrow();
    for outer in forest.ids().filter(|id| forest.loop_(*id).parent.is_none()) {
        let Ok(space) = advisor::space::iteration_space(func, &forest, outer, &rec) else {
            continue;
        };
        let accesses =
            advisor::access::collect_accesses(func, &forest, outer, &rec, &program.types);
        let nest = Nest::new(&u, func, &forest, &rec, outer, space, accesses);
        for c in candidates(&forest, outer, &|_| true) {
            check_candidate(&nest, &c, &trace, &rec, tally, file);
        }
    }
}

fn check_candidate(
    nest: &Nest,
    c: &Candidate,
    trace: &Trace,
    rec: &analyses::reconstruct::Reconstruction,
    tally: &mut Tally,
    file: &str,
) {
    let Some(x) = nest.iv(c.x) else { return };
    let eval = nest.evaluate(c);
    let Some(map) = nest.thread_substitution(c) else {
        return;
    };
    // Values of the symbols in the first call.
    let mut base_ctx: HashMap<Var, BigRational> = HashMap::new();
    let mut pointers: HashMap<Var, (u32, i64)> = HashMap::new();
    for s in rec.symbols.iter() {
        if matches!(s.origin, SymbolOrigin::Induction(_)) {
            continue;
        }
        let Some(v) = rec.symbols.value_of(&s.var) else {
            continue;
        };
        match trace.first_values.get(&v) {
            Some(Val::Int(i)) => {
                base_ctx.insert(s.var.clone(), q(*i as i64));
            }
            Some(Val::Ptr { alloc, offset }) => {
                pointers.insert(s.var.clone(), (*alloc, *offset));
            }
            _ => {}
        }
    }
    let ivs: Vec<(Var, Value)> = nest
        .space
        .ivs
        .iter()
        .filter_map(|r| rec.symbols.value_of(&r.var).map(|v| (r.var.clone(), v)))
        .collect();
    let x_phi = rec.symbols.value_of(&x.var);
    for ((access, sectors), (factor, row)) in nest
        .accesses
        .iter()
        .zip(&eval.sector_factors)
        .zip(eval.factors.iter().zip(&eval.report.accesses))
    {
        let ([(Some(base), offset)], Some(&(alloc, base_off))) = (
            access.alternatives.as_slice(),
            access.base().and_then(|b| pointers.get(b)),
        ) else {
            continue;
        };
        let Some(runs) = trace.accesses.get(&access.inst) else {
            continue;
        };
        let _ = base;
        let Ok(per_thread) = offset.substitute(&map) else {
            continue;
        };
        // Group the run's executions into warps: same values of every other induction
        // variable, normalized x index in [32w, 32w + 32).
        let mut warps: Warps = BTreeMap::new();
        let Some(init) = value_of(&x.init, &base_ctx) else {
            continue;
        };
        for (key, a, off) in runs {
            if *a != alloc {
                continue;
            }
            let Some(xv) = x_phi.and_then(|p| key.get(&p)) else {
                continue;
            };
            let k = (xv - init) / x.step as i64;
            let others: Vec<(Value, i64)> = key
                .iter()
                .filter(|(v, _)| Some(**v) != x_phi && ivs.iter().any(|(_, p)| p == *v))
                .map(|(v, i)| (*v, *i))
                .collect();
            warps
                .entry((others, k.div_euclid(32)))
                .or_default()
                .push((k, off - base_off));
        }
        for ((others, w), threads) in warps.iter().take(64) {
            let distinct: HashSet<i64> = threads.iter().map(|(k, _)| *k).collect();
            if distinct.len() != 32 {
                continue;
            }
            // One execution per thread: the first of each.
            let mut seen = HashSet::new();
            let observed: Vec<i64> = threads
                .iter()
                .filter(|(k, _)| seen.insert(*k))
                .map(|(_, o)| *o)
                .collect();
            // The same from the symbolic offset.
            let mut ctx = base_ctx.clone();
            for (v, phi) in &ivs {
                if let Some((_, i)) = others.iter().find(|(p, _)| p == phi) {
                    ctx.insert(v.clone(), q(*i));
                }
            }
            for r in &nest.space.ivs {
                if let Some(i) = ctx.get(&r.var).cloned() {
                    if let Some(init) = value_of(&r.init.substitute(&map).unwrap_or_default(), &ctx)
                    {
                        let k = (i.to_integer().to_i64().unwrap_or(0) - init) / r.step as i64;
                        ctx.insert(Var::new(&format!("k@{}", r.var.name())), q(k));
                    }
                }
            }
            ctx.insert(warp_var(), q(*w));
            let symbolic_offsets: Option<Vec<i64>> = (0..32)
                .map(|t| {
                    let mut c2 = ctx.clone();
                    c2.insert(thread_var(), q(32 * w + t));
                    value_of(&per_thread, &c2)
                })
                .collect();
            let Some(symbolic_offsets) = symbolic_offsets else {
                continue;
            };
            tally.warps += 1;
            // Requests (128-byte lines), then sectors (32 bytes), each against the run.
            for (f, line, aligned_text, shown) in [
                (factor, LINE, ALIGNED_ROWS, &row.requests_per_warp),
                (sectors, SECTOR, ALIGNED_SECTOR_ROWS, &row.sectors_per_warp),
            ] {
                let observed_count = granules(&observed, access.elem_bytes, line) as i64;
                let symbolic_count = granules(&symbolic_offsets, access.elem_bytes, line) as i64;
                assert_eq!(
                    symbolic_count, observed_count,
                    "{file}: `{}` under {:?}: the symbolic offset and the run disagree",
                    row.text, eval.report.mapping
                );
                let count = value_of(&f.requests, &ctx).expect("counts evaluate");
                let lo = f
                    .min_requests
                    .as_ref()
                    .and_then(|m| value_of(m, &ctx))
                    .unwrap_or(count);
                let hi = f
                    .unaligned
                    .as_ref()
                    .and_then(|m| value_of(m, &ctx))
                    .unwrap_or(count);
                let aligned_rows = !f.assumptions.iter().any(|a| a == aligned_text) || {
                    // The part of the warp's first address that does not depend on the
                    // thread.
                    let mut c0 = ctx.clone();
                    c0.insert(thread_var(), q(0));
                    let constant = per_thread
                        .as_poly()
                        .map(|p| p.constant_term().to_integer().to_i64().unwrap_or(0))
                        .unwrap_or(0);
                    value_of(&per_thread, &c0).is_some_and(|v| (v - constant).rem_euclid(line) == 0)
                };
                if f.exact && aligned_rows {
                    assert_eq!(
                        observed_count, count,
                        "{file}: `{}` under {:?}, warp {w}: exact count {shown} but {observed_count} granules of {line} bytes",
                        row.text, eval.report.mapping
                    );
                    if line == LINE {
                        tally.exact_agreements += 1;
                    } else {
                        tally.exact_sectors += 1;
                    }
                } else if !f
                    .assumptions
                    .iter()
                    .any(|a| a.contains("unknown") || a.contains("different base"))
                {
                    assert!(
                        lo <= observed_count && observed_count <= hi.max(count),
                        "{file}: `{}` under {:?}, warp {w}: {observed_count} granules of {line} bytes outside [{lo}, {}]",
                        row.text,
                        eval.report.mapping,
                        hi.max(count)
                    );
                    if line == LINE {
                        tally.in_range += 1;
                    } else {
                        tally.sectors_in_range += 1;
                    }
                }
            }
        }
    }
}

#[test]
fn every_factor_agrees_with_a_brute_force_count() {
    let mut tally = Tally::default();
    for (file, function) in [
        ("matrix_add.c", "add"),
        ("vector_add.c", "vadd"),
        ("matmul.c", "matmul"),
        ("transpose.c", "transpose"),
        ("jacobi2d.c", "jacobi2d"),
        ("srad_clamp.c", "diffusion_coeff"),
        ("gaussian_fan2.c", "fan2"),
        ("gaussian_fan2.c", "fan1"),
        ("conv2d_rgb.c", "convolve"),
        ("char_cast.c", "cast_copy"),
        ("every_fourth_add.c", "every_fourth"),
    ] {
        let before = tally.warps;
        brute_force(file, function, &mut tally);
        eprintln!("{file}/{function}: {} warps", tally.warps - before);
    }
    eprintln!("{tally:?}");
    assert!(tally.exact_agreements > 500, "{tally:?}");
    assert!(tally.exact_sectors > 500, "{tally:?}");
}

/// Two inner loops over variables both called `j`: their candidates differ by the loop
/// they map (`x_loop`), and the text says which line each is on.
#[test]
fn every_mapping_names_its_loops() {
    // A fresh, private directory, removed when `dir` drops at the end of the test.
    let dir = tempfile::Builder::new()
        .prefix("warpwise-mappings-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("two_js.c");
    std::fs::write(
        &file,
        "void f(int n, double *a, double *b) {\n\
         \x20 for (int i = 0; i < n; i++) {\n\
         \x20   for (int j = 0; j < n; j++) a[i * n + j] = 1.0;\n\
         \x20   for (int j = 0; j < n; j++) b[i * n + j] = 2.0;\n\
         \x20 }\n\
         }\n",
    )
    .unwrap();
    let unit = load_unit(&TranslationUnitInput::new(&file)).expect("loads");
    let reports = analyze_unit(&unit, &Filter::default());
    let outer = find(&reports, "f", 2);
    let labels: Vec<(String, Option<LoopRef>)> = outer
        .mappings
        .iter()
        .map(|m| (m.mapping.x.clone(), m.mapping.x_loop.clone()))
        .collect();
    let js: Vec<&(String, Option<LoopRef>)> =
        labels.iter().filter(|(x, _)| x.starts_with('j')).collect();
    assert_eq!(js.len(), 2, "{labels:?}");
    let mut lines: Vec<u32> = js
        .iter()
        .map(|(_, l)| l.as_ref().expect("the x loop's id").line)
        .collect();
    lines.sort();
    assert_eq!(lines, [3, 4], "{labels:?}");
    let unique: std::collections::HashSet<_> = outer.mappings.iter().map(|m| &m.mapping).collect();
    assert_eq!(unique.len(), outer.mappings.len(), "{labels:?}");
    let texts: Vec<String> = outer.mappings.iter().map(|m| m.mapping.x_text()).collect();
    assert!(texts.iter().any(|t| t.ends_with("(line 3)")), "{texts:?}");
    assert!(texts.iter().any(|t| t.ends_with("(line 4)")), "{texts:?}");
}

/// `in[idx]` with `idx = slice + k` on one path and `size + k` on the other has two forms:
/// one offset each, each an expression (no `A or B` text), and the count covers both. A
/// mapping's totals are the sum of its accesses' counts as expressions, whatever the text.
#[test]
fn an_access_with_two_forms_has_an_offset_per_form_and_totals_are_sums() {
    let reports = analyze_unit(&unit("signal_conv1d.c"), &Filter::default());
    let l = find(&reports, "conv1d", 44);
    for m in &l.mappings {
        let gather = m
            .accesses
            .iter()
            .find(|a| a.text == "in[idx]")
            .expect("in[idx]");
        let forms: Vec<Expr> = gather
            .offset_bytes
            .forms()
            .iter()
            .map(|q| q.expr().cloned().expect("each form is an expression"))
            .collect();
        assert_eq!(
            forms,
            [
                parse_expr("4*k + 4*slice").unwrap(),
                parse_expr("4*k + 4*size").unwrap()
            ],
            "{:?}",
            m.mapping
        );
        assert!(gather.offset_bytes.single().is_none());
        let requests = m
            .accesses
            .iter()
            .map(|a| a.requests_per_warp.expr().expect("a count").clone())
            .fold(Expr::constant(0), |s, e| s.checked_add(&e).expect("adds"));
        assert_eq!(m.total_requests_per_warp.expr(), Some(&requests));
        let sectors = m
            .accesses
            .iter()
            .map(|a| a.sectors_per_warp.expr().expect("a count").clone())
            .fold(Expr::constant(0), |s, e| s.checked_add(&e).expect("adds"));
        assert_eq!(m.total_sectors_per_warp.expr(), Some(&sectors));
    }
    // Written as a list, read back as the same forms.
    let yaml = serde_yaml::to_string(&l.mappings[0]).expect("writes");
    assert!(
        yaml.contains("offset_bytes:\n  - 4*k + 4*slice\n  - 4*k + 4*size\n"),
        "{yaml}"
    );
    let back: advisor::model::MappingReport = serde_yaml::from_str(&yaml).expect("reads");
    assert_eq!(back, l.mappings[0]);
}
