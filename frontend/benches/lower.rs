//! Benchmark of parsing and lowering a generated 50,000-line C file of numeric code (preprocessing excluded), reported in lines per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frontend::lower::lower_translation_unit;
use frontend::parse::parse;
use frontend::preprocess::{preprocess, Preprocessed};
use frontend::unit::lower_input;
use std::path::Path;
use std::time::{Duration, Instant};

/// Lines of C to generate (about; whole functions are added until it is reached).
const TARGET_LINES: usize = 50_000;

fn preprocessed() -> (Preprocessed, usize) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-lower");
    let (input, lines) = frontend::bench_input::write_input(&dir, TARGET_LINES);
    let pre = preprocess(&input).unwrap_or_else(|d| panic!("{}", d.render(false)));
    (pre, lines)
}

fn bench(c: &mut Criterion) {
    let (pre, lines) = preprocessed();
    let input = lower_input(&pre);

    // One timed pass first, for a plain lines/s figure and a sanity check.
    let start = Instant::now();
    let ast = parse(&pre).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let parsed = start.elapsed();
    let start = Instant::now();
    let lowered = lower_translation_unit(&ast, &input);
    let lowering = start.elapsed();
    assert!(lowered.errors.is_empty(), "{:?}", &lowered.errors[..1]);
    let per_sec = |d: Duration| lines as f64 / d.as_secs_f64();
    eprintln!(
        "{lines} lines, {} functions: parse {:.0} ms ({:.0} lines/s), lower {:.0} ms ({:.0} lines/s), both {:.0} lines/s",
        lowered.functions_attempted,
        parsed.as_secs_f64() * 1e3,
        per_sec(parsed),
        lowering.as_secs_f64() * 1e3,
        per_sec(lowering),
        per_sec(parsed + lowering),
    );

    let mut group = c.benchmark_group("frontend");
    group.sample_size(10);
    group.throughput(Throughput::Elements(lines as u64));
    group.bench_function("parse", |b| b.iter(|| parse(&pre).expect("parses")));
    group.bench_function("lower", |b| b.iter(|| lower_translation_unit(&ast, &input)));
    group.bench_function("parse+lower", |b| {
        b.iter(|| {
            let ast = parse(&pre).expect("parses");
            lower_translation_unit(&ast, &input)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
