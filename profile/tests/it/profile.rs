//! The profiler on the samples with known answers: instrumented builds in temporary
//! directories, real runs, and the profile they leave (counts, dependences, robustness).

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::Verdict;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::load_unit;
use profile::apply::apply;
use profile::driver::{build, run, BuildOptions, RunOptions};
use profile::model::{normalize, LoopProfile, Profile};
use profile::{LoopSelection, Tracking};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples")
}

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "profile-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Run {
    profile: Profile,
    status: i32,
}

/// Builds `files` (relative to the samples or absolute), runs them with `args`, and returns
/// the merged profile. `loops` is `--loops`'s value, or `every`: every loop with every
/// access watched (`--loops all --full-tracking`, the reference mode), which the tests of
/// the runtime's own detection use.
fn profile_files(files: &[PathBuf], loops: &str, runs: &[&[&str]], timeout: Option<u64>) -> Run {
    let dir = scratch(&files[0].file_stem().unwrap().to_string_lossy());
    let inputs: Vec<TranslationUnitInput> = files.iter().map(TranslationUnitInput::new).collect();
    let built = build(
        &inputs,
        &BuildOptions {
            cc: "cc".into(),
            cflags: vec!["-O2".into()],
            ldflags: Vec::new(),
            selection: LoopSelection::parse(if loops == "every" { "all" } else { loops }),
            tracking: if loops == "every" {
                Tracking::Full
            } else {
                Tracking::Undecided
            },
            work_dir: dir.join("work"),
        },
    )
    .unwrap_or_else(|e| panic!("build failed: {e}"));
    let path = dir.join("profile.yaml");
    let mut status = 0;
    for args in runs {
        status = run(
            &built.exe,
            &RunOptions {
                args: args.iter().map(|a| a.to_string()).collect(),
                profile: path.clone(),
                timeout,
            },
        )
        .unwrap();
    }
    let profile = normalize(&path).unwrap();
    Run { profile, status }
}

fn sample(name: &str, loops: &str, args: &[&str]) -> Profile {
    let r = profile_files(&[samples().join(name)], loops, &[args], None);
    assert_eq!(r.status, 0, "{name} exits with 0");
    r.profile
}

fn at<'a>(p: &'a Profile, suffix: &str) -> &'a LoopProfile {
    p.loops
        .iter()
        .find(|(id, _)| id.ends_with(suffix))
        .map(|(_, l)| l)
        .unwrap_or_else(|| panic!("no loop {suffix} in {:?}", p.loops.keys()))
}

fn check_counts(p: &LoopProfile, entries: u64, trip: u64) {
    assert_eq!(p.entries, entries);
    assert_eq!(p.iterations, entries * trip);
    assert_eq!((p.min_trip, p.max_trip), (trip, trip));
}

fn check_no_blocking(p: &LoopProfile) {
    assert!(p.tracked);
    let blocking: Vec<_> = p.blocking().collect();
    assert!(blocking.is_empty(), "unexpected dependences {blocking:#?}");
}

#[test]
fn trip_counts_and_inbounds() {
    let p = sample("every_fourth_add.c", "none", &[]);
    let l = at(&p, "every_fourth_add.c:43:5");
    check_counts(l, 1, 100);
    assert_eq!(l.mean_trip, 100.0);
    let n = &l.inbounds["n"];
    assert_eq!((n.min, n.max, n.count), (200, 200, 1));
    assert_eq!(n.frequent[0].value, 200);
    assert!(!l.tracked && l.dependences.is_empty());
    // A different input: trip count (2n + 3) / 4.
    let p = sample("every_fourth_add.c", "none", &["201"]);
    check_counts(at(&p, ":43:5"), 1, 101);
    assert!(p.is_complete() && p.runs == 1);
}

#[test]
fn prefix_sum_has_distance_one_flow_dependence() {
    let p = sample("prefix_sum.c", "every", &[]);
    let l = at(&p, "prefix_sum.c:28:5");
    check_counts(l, 1, 99_999);
    let blocking: Vec<_> = l.blocking().collect();
    assert_eq!(blocking.len(), 1, "{blocking:#?}");
    let d = blocking[0];
    assert_eq!((d.kind.as_str(), d.array.as_str()), ("raw", "out"));
    assert_eq!((d.first.line, d.second.line), (29, 29));
    assert_eq!(
        (d.first.text.as_str(), d.second.text.as_str()),
        ("out[i]", "out[i - 1]")
    );
    assert_eq!(d.distance, Some(1));
    assert_eq!(d.count, 99_998);
}

#[test]
fn histogram_dependence_through_hist() {
    let p = sample("histogram.c", "every", &[]);
    let l = at(&p, "histogram.c:34:5");
    check_counts(l, 1, 65_536);
    let kinds: Vec<&str> = l
        .blocking()
        .filter(|d| d.array == "hist" && d.first.line == 35 && d.second.line == 35)
        .map(|d| d.kind.as_str())
        .collect();
    assert!(
        kinds.contains(&"raw") && kinds.contains(&"waw"),
        "{kinds:?}"
    );
    assert!(l
        .blocking()
        .all(|d| d.distance.is_none() && d.distance_min >= 1));
}

#[test]
fn independent_loops_show_none() {
    let p = sample("matrix_add.c", "every", &[]);
    check_counts(at(&p, "matrix_add.c:38:5"), 1, 256);
    check_counts(at(&p, "matrix_add.c:39:9"), 256, 256);
    check_no_blocking(at(&p, "matrix_add.c:38:5"));
    check_no_blocking(at(&p, "matrix_add.c:39:9"));
    let p = sample("conv2d_rgb.c", "every", &[]);
    for id in [":63:5", ":64:9", ":68:13", ":71:17"] {
        check_no_blocking(at(&p, id));
    }
    check_counts(at(&p, ":71:17"), 15_360, 5);
    let p = sample("signal_conv1d.c", "every", &[]);
    check_no_blocking(at(&p, "signal_conv1d.c:44:5"));
}

#[test]
fn dot_product_is_a_reduction() {
    let p = sample("dot_product.c", "every", &[]);
    let l = at(&p, "dot_product.c:27:5");
    check_counts(l, 1, 100_000);
    check_no_blocking(l);
    assert_eq!(l.reductions.len(), 1);
    assert_eq!(
        (l.reductions[0].var.as_str(), l.reductions[0].op.as_str()),
        ("sum", "+")
    );
    assert!(l.dependences.iter().all(|d| d.class == "reduction"));
}

#[test]
fn aliasing_settled_both_ways() {
    let file = samples().join("aliasing.c");
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
    let reports = analyze_unit(&unit, &Filter::default());
    let id = reports.iter().find(|r| r.line == 39).unwrap().id.clone();
    assert_eq!(
        reports.iter().find(|r| r.id == id).unwrap().verdict,
        Verdict::NeedsProfile
    );
    for (arg, want) in [
        ("disjoint", Verdict::Friendly),
        ("overlap", Verdict::NotFriendly),
        ("both", Verdict::NotFriendly),
    ] {
        // Default selection: exactly the needs-profile loop is tracked.
        let r = profile_files(
            std::slice::from_ref(&file),
            "needs-profile",
            &[&[arg]],
            None,
        );
        let l = &r.profile.loops[&id.to_string()];
        assert!(l.tracked, "{arg}");
        let mut loops = reports.clone();
        apply(&mut loops, &r.profile);
        let report = loops.iter().find(|x| x.id == id).unwrap();
        assert_eq!(report.verdict, want, "{arg}: {report:#?}");
        assert_eq!(report.observed.as_ref().unwrap().evidence, "dynamic");
        if want == Verdict::NotFriendly {
            let d = l.blocking().next().unwrap();
            assert_eq!((d.kind.as_str(), d.distance), ("raw", Some(1)));
            assert_eq!(
                (d.first.text.as_str(), d.second.text.as_str()),
                ("dst[i]", "src[i]")
            );
            assert!(report
                .reasons
                .iter()
                .any(|r| r.code == advisor::rules::Code::WW130
                    && r.message.contains("observed dependence at lines 40")));
        }
    }
}

#[test]
fn an_element_reduction_is_not_an_observed_dependence() {
    // `B[i] += A[N * i + j]` over `j` in `main`: `A` and `B` are separate `malloc` results,
    // so the loop is friendly statically with its element reduction; the profile sees `B[i]`
    // carried from one `j` to the next, which is that reduction, not an observed dependence:
    // the loop stays friendly, the reduction kept.
    let file = samples().join("gaussian_fan2.c");
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
    let mut reports = analyze_unit(&unit, &Filter::default());
    let id = reports.iter().find(|r| r.line == 72).unwrap().id.clone();
    let before = reports.iter().find(|r| r.id == id).unwrap().clone();
    assert_eq!(before.verdict, Verdict::Friendly, "{before:#?}");
    assert_eq!(before.reductions[0].target, "B[i]");
    let r = profile_files(&[file], "every", &[&["16"]], None);
    let l = &r.profile.loops[&id.to_string()];
    assert!(l.blocking().any(|d| d.first.text == "B[i]"), "{l:#?}");
    apply(&mut reports, &r.profile);
    let report = reports.iter().find(|x| x.id == id).unwrap();
    assert_eq!(report.verdict, Verdict::Friendly, "{report:#?}");
    assert_eq!(report.reductions, before.reductions);
    assert!(
        report
            .reasons
            .iter()
            .all(|r| r.code == advisor::rules::Code::WW102),
        "{report:#?}"
    );
}

#[test]
fn runs_merge() {
    let file = samples().join("every_fourth_add.c");
    let r = profile_files(&[file], "all", &[&["200"], &["8"]], None);
    assert_eq!(r.profile.runs, 2);
    let l = at(&r.profile, ":43:5");
    assert_eq!(
        (l.entries, l.iterations, l.min_trip, l.max_trip),
        (2, 104, 4, 100)
    );
    let n = &l.inbounds["n"];
    assert_eq!((n.min, n.max, n.count, n.frequent.len()), (8, 200, 2, 2));
}

fn write_program(name: &str, text: &str) -> PathBuf {
    let dir = scratch(name);
    let path = dir.join(format!("{name}.c"));
    std::fs::write(&path, text).unwrap();
    path
}

const ROBUST: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
int data[100];
void work(int mode)
{
    for (int i = 0; i < 100; i++) {
        data[i] = i;
        if (i == 41 && mode == 1)
            raise(SIGSEGV);
        if (i == 41 && mode == 2)
            exit(3);
        if (i == 41 && mode == 3)
            for (volatile int k = 0; ; k++)
                ;
    }
}
int find(int v)
{
    for (int i = 0; i < 100; i++)
        if (data[i] == v)
            return i;
    return -1;
}
int main(int argc, char **argv)
{
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    printf("start\n");
    fflush(stdout);
    work(mode);
    int s = 0;
    for (int k = 0; k < 10; k++)
        s += find(k * 7);
    printf("%d\n", s);
    return 0;
}
"#;

#[test]
fn crash_exit_and_timeout_leave_profiles() {
    let file = write_program("robust", ROBUST);
    // Normal run: `return` from inside a loop still closes it.
    let r = profile_files(std::slice::from_ref(&file), "none", &[&["0"]], None);
    assert_eq!(r.status, 0);
    let find = at(&r.profile, "robust.c:21:5");
    assert_eq!(find.entries, 10);
    assert_eq!(find.iterations, (0..10).map(|k| k * 7 + 1).sum::<u64>());
    check_counts(at(&r.profile, "robust.c:33:5"), 1, 10);
    // A crash: the status is the signal's, the loop so far is recorded.
    let r = profile_files(std::slice::from_ref(&file), "none", &[&["1"]], None);
    assert_eq!(r.status, 128 + 11);
    assert!(!r.profile.is_complete());
    assert_eq!(r.profile.ends, vec!["signal 11".to_string()]);
    check_counts(at(&r.profile, "robust.c:8:5"), 1, 42);
    // exit() inside a loop.
    let r = profile_files(std::slice::from_ref(&file), "none", &[&["2"]], None);
    assert_eq!(r.status, 3);
    assert!(r.profile.is_complete());
    check_counts(at(&r.profile, "robust.c:8:5"), 1, 42);
    // A timeout.
    let r = profile_files(std::slice::from_ref(&file), "all", &[&["3"]], Some(1));
    assert_eq!(r.status, 124);
    assert_eq!(r.profile.ends, vec!["timeout".to_string()]);
    assert_eq!(at(&r.profile, "robust.c:8:5").iterations, 42);
}

const WAYS_OUT: &str = r#"
#include <setjmp.h>
#include <stdio.h>
int a[64];
static jmp_buf env;
int nested_return(int stop)
{
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i * 8 + j == stop)
                return i;
    return -1;
}
void goto_out(int stop)
{
    for (int i = 0; i < 10; i++) {
        if (i == stop)
            goto done;
        a[i] = i;
    }
done:
    a[0]++;
}
void goto_within(void)
{
    for (int i = 0; i < 6; i++) {
        if (i % 2)
            goto next;
        a[i] = i;
    next:;
    }
}
void jump_away(int stop)
{
    for (int i = 0; i < 10; i++)
        if (i == stop)
            longjmp(env, 1);
}
int depth(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += depth(i);
    return s + 1;
}
int main(void)
{
    int s = 0;
    for (int k = 0; k < 3; k++)
        s += nested_return(9 * k + 1);
    goto_out(4);
    goto_out(20);
    goto_within();
    if (!setjmp(env))
        jump_away(5);
    for (int w = 0; w < 5; w++) {
        if (w == 3)
            break;
        if (w == 1)
            continue;
        s += w;
    }
    printf("%d %d\n", s, depth(4));
    return 0;
}
"#;

/// Iteration counts stay exact whatever way a loop is left (return from a nest, goto out
/// and within, break, continue, recursion, falling off the end), counted in a local
/// (untracked loops) or by the runtime (tracked ones) alike.
#[test]
fn counts_survive_every_way_out_of_a_loop() {
    let file = write_program("ways_out", WAYS_OUT);
    for loops in ["none", "all", "every"] {
        let r = profile_files(std::slice::from_ref(&file), loops, &[&[]], None);
        assert_eq!(r.status, 0);
        let p = &r.profile;
        let trips = |suffix: &str| {
            let l = at(p, suffix);
            (l.entries, l.iterations, l.min_trip, l.max_trip)
        };
        // stops at 1 (i 0, j 0..1), 10 (i 0..1, j 0..2), 19 (i 0..2, j 0..3)
        assert_eq!(trips("ways_out.c:8:5"), (3, 1 + 2 + 3, 1, 3), "{loops}");
        assert_eq!(
            trips("ways_out.c:9:9"),
            (6, 2 + 8 + 3 + 8 + 8 + 4, 2, 8),
            "{loops}"
        );
        assert_eq!(trips("ways_out.c:16:5"), (2, 5 + 10, 5, 10), "{loops}");
        assert_eq!(trips("ways_out.c:26:5"), (1, 6, 6, 6), "{loops}");
        // longjmp out: the instance is closed; its count is what the runtime was told.
        assert_eq!(at(p, "ways_out.c:35:5").entries, 1, "{loops}");
        // depth(4) makes 16 calls; each runs n iterations: 1*4 + 1*3 + 2*2 + 4*1 + 8*0.
        assert_eq!(trips("ways_out.c:42:5"), (16, 15, 0, 4), "{loops}");
        assert_eq!(trips("ways_out.c:49:5"), (1, 3, 3, 3), "{loops}");
        assert_eq!(trips("ways_out.c:56:5"), (1, 4, 4, 4), "{loops}");
    }
}

/// Builds `file` into `dir/work` with the loops `loops` tracked, every access watched.
fn build_watching_in_full(file: &Path, loops: &str, dir: &Path) -> profile::driver::Built {
    build(
        &[TranslationUnitInput::new(file)],
        &BuildOptions {
            cc: "cc".into(),
            cflags: vec!["-O1".into()],
            ldflags: Vec::new(),
            selection: LoopSelection::parse(loops),
            tracking: Tracking::Full,
            work_dir: dir.join("work"),
        },
    )
    .unwrap()
}

const REBASE: &str = r#"
#include <stdio.h>
int a[64];
int main(void)
{
    for (int r = 0; r < 200; r++)
        for (int i = 1; i < 40; i++)
            a[i] = a[i - 1] + r;
    printf("%d\n", a[39]);
    return 0;
}
"#;

/// The runtime renumbers its clock ticks when they run out (`rebase`): built with a limit
/// of 1,000 ticks it renumbers every few instances of the tracked loop, and must observe
/// exactly what the full 40-bit clock observes: the same dependence, count and distance.
#[test]
fn renumbered_ticks_observe_the_same_dependences() {
    let file = write_program("rebase", REBASE);
    let dir = scratch("rebase-build");
    let built = build_watching_in_full(&file, "rebase.c:7", &dir);
    assert_eq!(built.tracked.len(), 1, "{:?}", built.tracked);
    // The same objects linked with a runtime whose clock wraps at 1,000 ticks.
    let runtime = dir.join("work/runtime/warpwise_rt.c");
    let small = dir.join("small");
    let objects: Vec<PathBuf> = std::fs::read_dir(dir.join("work"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    let status = std::process::Command::new("cc")
        .args(["-O1", "-std=gnu99", "-w", "-DWW_TICK_LIMIT=1000"])
        .arg(&runtime)
        .args(&objects)
        .arg("-o")
        .arg(&small)
        .status()
        .unwrap();
    assert!(status.success());
    let observe = |exe: &Path, name: &str| {
        let path = dir.join(name);
        let status = run(
            exe,
            &RunOptions {
                args: Vec::new(),
                profile: path.clone(),
                timeout: None,
            },
        )
        .unwrap();
        assert_eq!(status, 0);
        let p = normalize(&path).unwrap();
        let l = at(&p, "rebase.c:7:9").clone();
        l
    };
    let full = observe(&built.exe, "full.yaml");
    let wrapped = observe(&small, "small.yaml");
    check_counts(&full, 200, 39);
    let deps = |l: &LoopProfile| {
        l.blocking()
            .map(|d| {
                (
                    d.kind.clone(),
                    d.first.text.clone(),
                    d.second.text.clone(),
                    d.count,
                    d.distance,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        deps(&full),
        vec![(
            "raw".to_string(),
            "a[i]".to_string(),
            "a[i - 1]".to_string(),
            200 * 38,
            Some(1)
        )]
    );
    assert_eq!(deps(&wrapped), deps(&full));
}

const BIG: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void smooth(double *a, long n)
{
    for (long i = 1; i < n; i++)
        a[i] = 0.5 * (a[i] + a[i - 1]);
}
int main(void)
{
    long n = 1L << 21; /* 16 MiB of doubles: 32 MiB of shadow */
    double *a = malloc(n * sizeof *a);
    if (!a)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = (double)(i % 7);
    smooth(a, n);
    printf("%.3f\n", a[n - 1]);
    free(a);
    return 0;
}
"#;

/// `WARPWISE_SHADOW_MB` bounds the shadow: at the limit it is cleared and tracking goes on;
/// the profile says how many times (`shadow_resets`), a distance-1 dependence is still seen
/// on both sides of every reset, and a loop settled friendly by such a run says so.
#[test]
fn shadow_limit_clears_and_says_so() {
    let file = write_program("big", BIG);
    let dir = scratch("big-build");
    let built = build_watching_in_full(&file, "big.c:6", &dir);
    let observe = |limit: Option<&str>, name: &str| {
        let path = dir.join(name);
        let mut cmd = std::process::Command::new(&built.exe);
        cmd.env("WARPWISE_PROFILE", &path)
            .env_remove("WARPWISE_SHADOW_MB")
            .stdout(std::process::Stdio::null());
        if let Some(mb) = limit {
            cmd.env("WARPWISE_SHADOW_MB", mb);
        }
        assert!(cmd.status().unwrap().success());
        at(&normalize(&path).unwrap(), "big.c:6:5").clone()
    };
    let free = observe(None, "free.yaml");
    let bounded = observe(Some("4"), "bounded.yaml");
    assert_eq!(free.shadow_resets, 0);
    // 32 MiB of shadow through a 4 MiB limit: at least 7 resets.
    assert!(bounded.shadow_resets >= 7, "{}", bounded.shadow_resets);
    let raw = |l: &LoopProfile| {
        l.blocking()
            .filter(|d| d.kind == "raw" && d.distance == Some(1))
            .map(|d| d.count)
            .sum::<u64>()
    };
    assert_eq!(raw(&free), (1 << 21) - 2);
    // Only the pairs straddling a reset are lost: one per reset at most.
    assert!(
        raw(&bounded) >= raw(&free) - bounded.shadow_resets,
        "{}",
        raw(&bounded)
    );
    assert!(raw(&bounded) < raw(&free));
}

const SAMPLED: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void step(double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] * 0.5 + 1.0;
}
int main(void)
{
    int n = 1000;
    double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    if (!x || !y)
        return 1;
    for (int r = 0; r < 64; r++) {
        step(y, x, n);
        step(x, y, n);
    }
    printf("%f\n", x[0]);
    free(x);
    free(y);
    return 0;
}
"#;

/// Past the tracking budget (`WARPWISE_TRACK_BUDGET` watched accesses) a tracked loop's
/// instances are sampled: its 1st, 2nd, 4th, 8th... run watched, the others untracked.
/// The profile says so (`sampled_out`) for the loop and the loops tracked around it, what
/// ran untracked leaves no stale stamps (every dependence still observed is one the full
/// run observes, at its true distance), and a loop settled friendly says it was sampled.
#[test]
fn a_tracking_budget_samples_instances_and_says_so() {
    let file = write_program("sampled", SAMPLED);
    let dir = scratch("sampled-build");
    let built = build_watching_in_full(&file, "sampled.c:6,sampled.c:15", &dir);
    let observe = |budget: &str, name: &str| {
        let path = dir.join(name);
        let status = std::process::Command::new(&built.exe)
            .env("WARPWISE_PROFILE", &path)
            .env("WARPWISE_TRACK_BUDGET", budget)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        normalize(&path).unwrap()
    };
    let full = observe("0", "full.yaml");
    let sampled = observe("20000", "sampled.yaml");
    let (inner, outer) = ("sampled.c:6:5", "sampled.c:15:5");
    assert_eq!(at(&full, inner).sampled_out, 0);
    assert_eq!(at(&full, outer).sampled_out, 0);
    // 128 instances of the inner loop, 2,000 watched accesses each: past 20,000 only the
    // 16th, 32nd, 64th and 128th are watched.
    let skipped = at(&sampled, inner).sampled_out;
    assert!((100..=120).contains(&skipped), "{skipped}");
    assert_eq!(at(&sampled, outer).sampled_out, skipped);
    assert_eq!(at(&sampled, inner).entries, 128);
    // The outer loop's dependences: the same pairs, fewer occurrences, true distances.
    let pairs = |l: &LoopProfile| -> Vec<(String, String, String, Option<i64>)> {
        l.blocking()
            .map(|d| {
                (
                    d.kind.clone(),
                    d.first.text.clone(),
                    d.second.text.clone(),
                    d.distance,
                )
            })
            .collect()
    };
    assert!(!pairs(at(&full, outer)).is_empty());
    for p in pairs(at(&sampled, outer)) {
        assert!(
            pairs(at(&full, outer)).contains(&p),
            "{p:?} not in the full run"
        );
    }
    check_no_blocking(at(&sampled, inner));
    // Settled friendly, with the caveat.
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
    let mut reports: Vec<_> = analyze_unit(&unit, &Filter::default())
        .into_iter()
        .filter(|r| r.id.same_loop(&inner.parse().unwrap()))
        .collect();
    assert_eq!(reports.len(), 1);
    // As if the static analysis had left it to the profile.
    reports[0].verdict = Verdict::NeedsProfile;
    apply(&mut reports, &sampled);
    assert!(
        reports[0]
            .assumptions
            .iter()
            .any(|a| a.contains("sampled:")),
        "{:#?}",
        reports[0]
    );
}

/// A loop whose undecided pairs are inside a called function (`permute(N, idx, a, b)` and
/// `permute(N, idx, b, a)` on `a`) watches that function's accesses through the parameters
/// the pair's arrays are passed as (`src`, `dst`), not everything: the index array, which
/// nothing writes, costs no shadow.
#[test]
fn pairs_inside_a_callee_watch_the_parameters_they_are_passed_as() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/kernels/scatter.c");
    let dir = scratch("scatter-build");
    let watched = |tracking: Tracking, loops: &str, tag: &str| {
        let input = TranslationUnitInput {
            flags: frontend::preprocess::CompileFlags::from_args(&["-DMINI".to_string()]).0,
            ..TranslationUnitInput::new(&file)
        };
        build(
            &[input],
            &BuildOptions {
                cc: "cc".into(),
                cflags: vec!["-O1".into(), "-DMINI".into()],
                ldflags: Vec::new(),
                selection: LoopSelection::parse(loops),
                tracking,
                work_dir: dir.join(tag),
            },
        )
        .unwrap()
    };
    let filtered = watched(Tracking::Undecided, "needs-profile", "filtered");
    let full = watched(Tracking::Full, "needs-profile", "full");
    assert!(filtered
        .tracked
        .iter()
        .any(|id| id.ends_with("scatter.c:30:5")));
    // `dst[idx[i]]` and `src[i]`; not `idx[i]`, nor `main`'s own accesses.
    assert_eq!(filtered.accesses, 2, "{filtered:?}");
    assert!(full.accesses > filtered.accesses);
}

const STRIDED: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void bump(long n, double *a, const int *step)
{
    for (long p = 0; p < n; p++)
        a[p * 512 + step[p & 7]] += 1.0;
}
static long peak_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atol(line + 6);
    fclose(f);
    return kib;
}
int main(void)
{
    long pages = 16384;
    double *a = calloc((size_t)pages * 512, sizeof(double));
    int step[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (!a)
        return 1;
    for (int r = 0; r < 4; r++)
        bump(pages, a, step);
    printf("%ld %.1f\n", peak_kib(), a[512]);
    free(a);
    return 0;
}
"#;

/// One double touched in every 4 KiB page of a 64 MiB array: the shadow follows the memory
/// the tracked accesses touch (1 KiB blocks made when touched), not the address range
/// spanned, so the watched run's peak memory stays within 3x the plain run's.
/// The program reports its own peak (`VmHWM`), shadow included.
#[test]
fn a_page_strided_loop_stays_within_three_times_the_memory() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc/self/status to read the peak memory from");
        return;
    }
    let file = write_program("strided", STRIDED);
    let dir = scratch("strided-build");
    let plain = dir.join("plain");
    let compiled = std::process::Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&plain)
        .arg(&file)
        .status()
        .unwrap();
    assert!(compiled.success());
    let watched = build_watching_in_full(&file, "strided.c:7", &dir);
    let peak = |exe: &Path| -> u64 {
        let out = std::process::Command::new(exe)
            .env("WARPWISE_PROFILE", dir.join("strided.yaml"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.ends_with(" 4.0\n"), "{text}");
        text.split_whitespace().next().unwrap().parse().unwrap()
    };
    let (plain_kib, watched_kib) = (peak(&plain), peak(&watched.exe));
    assert!(
        plain_kib > 60 * 1024,
        "{plain_kib} KiB: the pages were not touched"
    );
    assert!(
        watched_kib <= 3 * plain_kib,
        "{watched_kib} KiB watched against {plain_kib} KiB plain"
    );
    let profile = normalize(&dir.join("strided.yaml")).unwrap();
    assert!(at(&profile, "strided.c:7:5").tracked);
}

#[test]
fn the_observed_dependence_rules_example_is_observed() {
    // WW130's example in `warpwise explain`: statically undecided (WW111), and its run
    // repeats an index, which the profile sees and reports as WW130.
    let rule = &advisor::rules::ww130_observed_dependence::RULE;
    let file = scratch("ww130").join("ww130.c");
    std::fs::write(&file, rule.example.source).unwrap();
    let line = rule
        .example
        .source
        .lines()
        .position(|l| l.contains("/* LOOP */"))
        .unwrap() as u32
        + 1;
    let unit = load_unit(&TranslationUnitInput::new(&file)).unwrap();
    let mut reports = analyze_unit(&unit, &Filter::default());
    let r = profile_files(std::slice::from_ref(&file), "needs-profile", &[&[]], None);
    assert_eq!(r.status, 0);
    apply(&mut reports, &r.profile);
    let report = reports.iter().find(|x| x.line == line).unwrap();
    assert_eq!(report.verdict, rule.example.verdict, "{report:#?}");
    let finding = report.reasons.iter().find(|x| x.code == rule.code);
    let finding = finding.unwrap_or_else(|| panic!("no {}: {report:#?}", rule.code));
    assert!(
        finding.message.contains("waw out: line 8 `out[perm[i]]`"),
        "{}",
        finding.message
    );
}
