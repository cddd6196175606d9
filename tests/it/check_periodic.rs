//! `warpwise check` on branches on a remainder tested against zero (`(tid + 1) % n == 0`):
//! each class as the period along the threads decides it, `periodic` where the divisor is
//! a size the analysis does not know, and each settled class against the warps a CPU run of
//! the kernel splits (`check_kernels::Run`: the threads that wrote the branch's buffer).

use crate::check_kernels::{analysed, Fixture, Run};
use advisor::check::model::{CheckReport, Divergence};
use advisor::rules::Code;

/// One kernel, a branch per class, each writing a buffer of its own; heartwall's shape last
/// (a loop stepping by a constant over a `__constant__` structure's size).
const KERNEL: &str = r#"struct sizes { int rows; int elems; };
__constant__ struct sizes d_common;

__global__ void periodic(const int *data, int *shifted, int *four, int *wide, int *one,
                         int *doubled, int *other, int *walked, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if ((tid + 1) % n == 0)
        shifted[tid] = 1;
    if (tid % 4 == 0)
        four[tid] = 1;
    if (tid % 64 == 0)
        wide[tid] = 1;
    if (tid % 1 == 0)
        one[tid] = 1;
    if (tid * 2 % n == 0)
        doubled[tid] = 1;
    if (tid % data[tid] == 0)
        other[tid] = 1;
    if (tid % (threadIdx.x + 1) == 0)
        other[tid] = 2;
    if ((2 * tid + 1) % n == 0)
        other[tid] = 3;
    if ((threadIdx.x - 1) % n == 0)
        other[tid] = 4;
    if (threadIdx.x % -4 == 0)
        other[tid] = 5;
    int ei = threadIdx.x;
    while (ei < d_common.elems) {
        if ((ei + 1) % d_common.rows == 0)
            walked[ei] = 1;
        ei = ei + 128;
    }
}
"#;

/// The same kernel with a host launch that passes `n` = 51.
const LAUNCH: &str = r#"
#ifdef __CUDACC__
void host(const int *data, int *s, int *f, int *w, int *o, int *d, int *x, int *k)
{
    periodic<<<2, 128>>>(data, s, f, w, o, d, x, k, 51);
}
#endif
"#;

const THREADS: usize = 256;
const WARPS: usize = THREADS / 32;

/// The kernel launched on 2 blocks of 128 threads with `n` (and `d_common.rows`) = `n`,
/// checked with `set`.
fn fixture(source: &'static str, set: &'static [(&'static str, i64)], n: i64) -> Fixture {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    Fixture {
        name: "periodic",
        source,
        set,
        kernel: "periodic",
        grid: [2, 1, 1],
        block: [128, 1, 1],
        buffers: &[
            ("data", "int", THREADS),
            ("shifted", "int", THREADS),
            ("four", "int", THREADS),
            ("wide", "int", THREADS),
            ("one", "int", THREADS),
            ("doubled", "int", THREADS),
            ("other", "int", THREADS),
            ("walked", "int", THREADS),
        ],
        init: leak(format!(
            "for (int k = 0; k < {THREADS}; k++) data[k] = k % 3 + 1; \
             d_common.rows = {n}; d_common.elems = 128;"
        )),
        args: leak(format!(
            "data, shifted, four, wide, one, doubled, other, walked, {n}"
        )),
    }
}

/// Checks the class of each branch (by its condition) and, for each that names a buffer,
/// that the run splits warps as the class says: `never` none, `every warp` all of them,
/// `some warps` some but not all (a `periodic` or `data-dependent` class claims no count;
/// the settled fixtures run the same kernel).
fn check(fixture: &Fixture, expected: &[(&str, Option<&str>, Divergence)]) -> CheckReport {
    let report = analysed(fixture);
    let branches = &report.kernels[0].branches;
    let run = Run::of(fixture);
    for (condition, buffer, class) in expected {
        let b = branches
            .iter()
            .find(|b| b.condition == *condition)
            .unwrap_or_else(|| panic!("no branch `{condition}` in {branches:#?}"));
        assert_eq!(b.divergence, *class, "`{condition}`: {b:#?}");
        let Some(buffer) = buffer else { continue };
        let (split, written) = run.split_warps(buffer);
        let what = format!("`{condition}` ({class:?}): {split} of {WARPS} warps split");
        match class {
            Divergence::Never => assert_eq!(split, 0, "{what}"),
            Divergence::EveryWarp => assert_eq!((split, written), (WARPS, WARPS), "{what}"),
            Divergence::SomeWarps => assert!(split > 0 && split < WARPS, "{what}"),
            _ => {}
        }
    }
    report
}

/// The classes that hold whatever `n`: a constant divisor's, data's, a divisor that differs
/// between threads, and an unsigned remainder by a negative constant: a divisor of
/// 2^32 - 4, not 4, so some warps.
const FIXED: [(&str, Option<&str>, Divergence); 6] = [
    ("tid % 4 == 0", Some("four"), Divergence::EveryWarp),
    ("tid % 64 == 0", Some("wide"), Divergence::SomeWarps),
    ("tid % 1 == 0", Some("one"), Divergence::Never),
    ("tid % data[tid] == 0", None, Divergence::DataDependent),
    ("tid % (threadIdx.x + 1) == 0", None, Divergence::Unknown),
    ("threadIdx.x % -4 == 0", None, Divergence::SomeWarps),
];

/// The classes of the branches on `n` and `d_common.rows`, with the two the period alone
/// does not settle: `odd` (`2*tid + 1`, where no lane need hold a multiple of an even `n`)
/// and `wrapped` (unsigned `threadIdx.x - 1`, which wraps around below zero: kept only for
/// a divisor that divides the wrap, a power of two).
struct Classes {
    shifted: Divergence,
    doubled: Divergence,
    walked: Divergence,
    odd: Divergence,
    wrapped: Divergence,
}

fn expected(c: Classes) -> Vec<(&'static str, Option<&'static str>, Divergence)> {
    let mut all = FIXED.to_vec();
    all.extend([
        ("(tid + 1) % n == 0", Some("shifted"), c.shifted),
        ("tid * 2 % n == 0", Some("doubled"), c.doubled),
        ("(ei + 1) % d_common.rows == 0", Some("walked"), c.walked),
        ("(2 * tid + 1) % n == 0", None, c.odd),
        ("(threadIdx.x - 1) % n == 0", None, c.wrapped),
    ]);
    all
}

#[test]
fn a_remainder_by_a_size_not_known_is_periodic_with_its_period_and_thresholds() {
    let report = check(
        &fixture(KERNEL, &[], 16),
        &expected(Classes {
            shifted: Divergence::Periodic,
            doubled: Divergence::Periodic,
            walked: Divergence::Periodic,
            odd: Divergence::Unknown,
            wrapped: Divergence::Unknown,
        }),
    );
    let branches = &report.kernels[0].branches;
    let why = |condition: &str| {
        let b = branches.iter().find(|b| b.condition == condition).unwrap();
        let f = b.finding.as_ref().expect("WW203");
        assert_eq!(f.code, Code::WW203);
        assert!(
            f.message.contains("periodic") && f.message.contains(&b.why),
            "{f:?}"
        );
        b.why.clone()
    };
    let walked = why("(ei + 1) % d_common.rows == 0");
    assert!(
        walked.contains("every P = |d_common.rows|")
            && walked.contains("every warp diverges when P is 2 to 32")
            && walked.contains("when P is above 32")
            && walked.contains("none when P is 1"),
        "{walked}"
    );
    let doubled = why("tid * 2 % n == 0");
    assert!(doubled.contains("P = |n| / gcd(2, n)"), "{doubled}");
}

#[test]
fn a_known_period_of_at_most_thirty_two_splits_every_warp() {
    check(
        &fixture(KERNEL, &[("n", 16), ("d_common.rows", 16)], 16),
        &expected(Classes {
            shifted: Divergence::EveryWarp,
            doubled: Divergence::EveryWarp,
            walked: Divergence::EveryWarp,
            odd: Divergence::Unknown,
            wrapped: Divergence::EveryWarp,
        }),
    );
}

#[test]
fn a_known_period_above_thirty_two_splits_some_warps() {
    let report = check(
        &fixture(KERNEL, &[("n", 51), ("d_common.rows", 51)], 51),
        &expected(Classes {
            shifted: Divergence::SomeWarps,
            doubled: Divergence::SomeWarps,
            walked: Divergence::SomeWarps,
            odd: Divergence::SomeWarps,
            wrapped: Divergence::Unknown,
        }),
    );
    let b = &report.kernels[0].branches;
    let shifted = b.iter().find(|b| b.condition == "(tid + 1) % n == 0");
    assert!(
        shifted
            .unwrap()
            .why
            .contains("every 51 along the thread index (n = 51)"),
        "{shifted:#?}"
    );
}

#[test]
fn a_period_of_one_splits_no_warp() {
    check(
        &fixture(KERNEL, &[("n", 1), ("d_common.rows", 1)], 1),
        &expected(Classes {
            shifted: Divergence::Never,
            doubled: Divergence::Never,
            walked: Divergence::Never,
            odd: Divergence::Never,
            wrapped: Divergence::Never,
        }),
    );
}

#[test]
fn a_launch_that_passes_the_divisor_settles_the_period() {
    let source: &'static str = Box::leak(format!("{KERNEL}{LAUNCH}").into_boxed_str());
    // `n` comes from the launch; `d_common.rows` from no launch, so it stays periodic.
    check(
        &fixture(source, &[], 51),
        &expected(Classes {
            shifted: Divergence::SomeWarps,
            doubled: Divergence::SomeWarps,
            walked: Divergence::Periodic,
            odd: Divergence::SomeWarps,
            wrapped: Divergence::Unknown,
        }),
    );
}
