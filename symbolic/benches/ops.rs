//! Criterion benchmarks of the core operations on expressions of typical size (up to 10 products, 6 variables).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symbolic::*;

fn e(s: &str) -> Expr {
    parse_expr(s).expect("benchmark expression parses")
}

fn bench(c: &mut Criterion) {
    let a = e("8800*i + 8*j + 4*k*n + 3*m*n + 2*i*j + 7*p - 5*n + 11*k + 2*m*p + 1");
    let b = e("3*i - 8*j + 4*k*n + 6*n*p + i*m + 9*p + 2*j*k + 5*m - k + 7");
    let env = parse_signs("i >= 0, j >= 0, k >= 0, n > 0, m > 0, p >= 0").unwrap();
    let small = e("8800*i + 8*j + 4*k + 1");
    let (x, y) = (
        e("i + 2*j + 3*k + n + m + p"),
        e("2*i + 2*j + 4*k + n + m + p + 1"),
    );
    c.bench_function("add (10+10 products, 6 vars)", |bn| {
        bn.iter(|| black_box(&a).checked_add(black_box(&b)))
    });
    c.bench_function("mul (4x6 products)", |bn| {
        let p = e("i + 2*j + 3*k + 4");
        let q = e("n + m + p + 2*i + j + 1");
        bn.iter(|| black_box(&p).checked_mul(black_box(&q)))
    });
    c.bench_function("compare decided (6 vars)", |bn| {
        bn.iter(|| compare(black_box(&x), black_box(&y), &env))
    });
    c.bench_function("compare undecided (10 products)", |bn| {
        bn.iter(|| compare(black_box(&a), black_box(&b), &env))
    });
    let i = Var::new("i");
    c.bench_function("monotonicity (10 products, 6 vars)", |bn| {
        bn.iter(|| monotonicity(black_box(&a), &i, &env))
    });
    c.bench_function("monotonicity (4 products)", |bn| {
        bn.iter(|| monotonicity(black_box(&small), &i, &env))
    });
    c.bench_function("sign_of a-1 by substitution", |bn| {
        let f = e("i*n - 1");
        bn.iter(|| sign_of(black_box(&f), &env))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
