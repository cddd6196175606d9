//! Benchmark of all static analyses (loop forest, reconstruction, sign, range, loop
//! invariance of every loop) on the generated 50,000-line C file of the frontend benchmark,
//! and of the whole advisor on it; parsing and lowering are excluded.

use analyses::invariant::{loop_invariants, AliasPolicy};
use analyses::range::{range_analysis, RangeConfig};
use analyses::reconstruct::{reconstruct, ReconstructConfig};
use analyses::sign::sign_analysis;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frontend::ir::Program;
use frontend::loops::analyze_loops;
use frontend::unit::{load_unit, Unit};
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

const TARGET_LINES: usize = 50_000;

fn unit() -> (Unit, usize) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-analyses");
    let (input, lines) = frontend::bench_input::write_input(&dir, TARGET_LINES);
    let unit = load_unit(&input).unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert!(
        unit.lowered.errors.is_empty(),
        "{:?}",
        &unit.lowered.errors[..1]
    );
    (unit, lines)
}

/// Every analysis on every function (loop forest, reconstruction, signs, ranges, invariance
/// of every loop); returns the time spent in each, printed as the breakdown.
fn breakdown(program: &Program) -> [f64; 5] {
    let mut t = [0f64; 5];
    for func in &program.functions {
        let s = Instant::now();
        let forest = analyze_loops(func);
        t[0] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let rec = reconstruct(program, func, &forest, &ReconstructConfig::default());
        t[1] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let signs = sign_analysis(program, func, &forest, &rec, &HashMap::new());
        let env = signs.env_for(func.entry, &rec);
        t[2] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let _ranges = range_analysis(program, func, &forest, &rec, &env, &RangeConfig::default());
        t[3] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        for id in forest.ids() {
            let _ = loop_invariants(
                program,
                func,
                &forest,
                id,
                &rec,
                AliasPolicy::DistinctParameters,
            );
        }
        t[4] += s.elapsed().as_secs_f64();
    }
    t
}

fn bench(c: &mut Criterion) {
    let (unit, lines) = unit();
    let program = &unit.lowered.program;
    let [loops_t, rec_t, sign_t, range_t, inv_t] = breakdown(program);
    eprintln!(
        "loop forest {loops_t:.2} s, reconstruction {rec_t:.2} s, signs {sign_t:.2} s, ranges {range_t:.2} s, invariance {inv_t:.2} s"
    );
    let loops: usize = program
        .functions
        .iter()
        .map(|f| analyze_loops(f).loops.len())
        .sum();
    eprintln!(
        "{lines} lines, {} functions, {loops} loops: all analyses {:.2} s",
        program.functions.len(),
        loops_t + rec_t + sign_t + range_t + inv_t
    );
    let mut group = c.benchmark_group("analyses");
    group.sample_size(10);
    group.throughput(Throughput::Elements(lines as u64));
    group.bench_function("all analyses, 50k lines", |b| b.iter(|| breakdown(program)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
