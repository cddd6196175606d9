//! The filtered profiler against the reference mode: watching only the accesses
//! of the pairs the static analysis left undecided must settle every loop as watching every
//! access does, on every sample and on the PolyBench-style kernels at their MINI size.
//!
//! Each program is profiled three times: `--loops all --full-tracking` (the reference),
//! `--loops all` and `--loops needs-profile` (both filtered). Then, per loop:
//! - the verdict after applying the profile is the same in the three;
//! - the blocking dependences a filtered run observes in a needs-profile loop are exactly
//!   the reference's for that loop;
//! - in the reference, no loop the static analysis calls friendly shows a blocking
//!   dependence (other than its own recognised reductions): a dependence the runtime sees
//!   and the analysis denied would be a soundness bug.

use advisor::analyze::{analyze_unit, Filter};
use advisor::model::{LoopReport, Verdict};
use frontend::preprocess::{CompileFlags, TranslationUnitInput};
use frontend::unit::load_unit;
use profile::apply::apply;
use profile::driver::{build, run, BuildOptions, RunOptions};
use profile::model::{normalize, Dependence, Profile};
use profile::{LoopSelection, Tracking};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A program under test: its file, its `-D` flags and the arguments of its run.
struct Program {
    file: PathBuf,
    defines: Vec<&'static str>,
    args: Vec<&'static str>,
}

fn input(p: &Program) -> TranslationUnitInput {
    let flags: Vec<String> = p.defines.iter().map(|d| format!("-D{d}")).collect();
    let (flags, _) = CompileFlags::from_args(&flags);
    TranslationUnitInput {
        flags,
        ..TranslationUnitInput::new(&p.file)
    }
}

fn profile_of(p: &Program, loops: &str, tracking: Tracking, tag: &str) -> Profile {
    let stem = p.file.file_stem().unwrap().to_string_lossy().into_owned();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("differential-{}-{stem}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cflags = vec!["-O1".to_string()];
    cflags.extend(p.defines.iter().map(|d| format!("-D{d}")));
    let built = build(
        &[input(p)],
        &BuildOptions {
            cc: "cc".into(),
            cflags,
            ldflags: Vec::new(),
            selection: LoopSelection::parse(loops),
            tracking,
            work_dir: dir.join("work"),
        },
    )
    .unwrap_or_else(|e| panic!("{stem}: build failed: {e}"));
    let path = dir.join("profile.yaml");
    let status = run(
        &built.exe,
        &RunOptions {
            args: p.args.iter().map(|a| a.to_string()).collect(),
            profile: path.clone(),
            timeout: Some(120),
        },
    )
    .unwrap();
    assert_eq!(status, 0, "{stem} ({tag}) exits with 0");
    let profile = normalize(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    profile
}

fn settled(reports: &[LoopReport], profile: &Profile) -> Vec<LoopReport> {
    let mut loops = reports.to_vec();
    apply(&mut loops, profile);
    loops.sort_by(|a, b| a.id.cmp(&b.id));
    loops
}

/// A blocking dependence as the comparison sees it.
fn key(d: &Dependence) -> (String, u32, String, u32, String) {
    (
        d.kind.clone(),
        d.first.line,
        d.first.text.clone(),
        d.second.line,
        d.second.text.clone(),
    )
}

fn blocking(
    profile: &Profile,
    id: &frontend::loop_ref::LoopRef,
) -> BTreeSet<(String, u32, String, u32, String)> {
    profile
        .loops
        .get(&id.to_string())
        .map(|l| l.blocking().map(key).collect())
        .unwrap_or_default()
}

fn check(p: &Program) {
    let name = p.file.display().to_string();
    let unit = load_unit(&input(p)).unwrap();
    let reports = analyze_unit(&unit, &Filter::default());
    let reference = profile_of(p, "all", Tracking::Full, "full");
    let all = profile_of(p, "all", Tracking::Undecided, "all");
    let default = profile_of(p, "needs-profile", Tracking::Undecided, "default");
    let want = settled(&reports, &reference);
    for (mode, got) in [("all", &all), ("needs-profile", &default)] {
        let got_loops = settled(&reports, got);
        for (w, g) in want.iter().zip(&got_loops) {
            assert_eq!(w.id, g.id);
            assert_eq!(
                w.verdict, g.verdict,
                "{name} {}: verdict with --loops {mode} differs from the reference",
                w.id
            );
        }
        for r in reports
            .iter()
            .filter(|r| r.verdict == Verdict::NeedsProfile)
        {
            assert_eq!(
                blocking(&reference, &r.id),
                blocking(got, &r.id),
                "{name} {}: observed dependences with --loops {mode} differ from the reference",
                r.id
            );
        }
    }
    // The reference sees no dependence in a loop the static analysis calls friendly.
    let applied = settled(&reports, &reference);
    for (r, after) in reports.iter().zip(&applied) {
        if r.verdict != Verdict::Friendly {
            continue;
        }
        let after = applied.iter().find(|a| a.id == r.id).unwrap_or(after);
        let seen = after
            .observed
            .as_ref()
            .map(|o| o.dependences.clone())
            .unwrap_or_default();
        assert!(
            seen.is_empty(),
            "{name} {}: friendly statically, yet the reference run observed {seen:#?}",
            r.id
        );
    }
}

/// The `.c` files of `dir`, by name, sorted.
fn c_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    names.sort();
    names
}

fn sample(name: &str, args: &[&'static str]) -> Program {
    Program {
        file: root().join("samples").join(name),
        defines: Vec::new(),
        args: args.to_vec(),
    }
}

fn kernel(name: &str) -> Program {
    Program {
        file: root().join("profile/benches/kernels").join(name),
        defines: vec!["MINI"],
        args: Vec::new(),
    }
}

#[test]
fn samples_settle_as_the_reference() {
    let names = c_files(&root().join("samples"));
    assert!(names.len() >= 20, "{names:?}");
    for name in &names {
        // Smaller inputs than the defaults where the default run is long under the
        // reference mode; every loop still runs.
        let args: &[&'static str] = match name.as_str() {
            "prefix_sum.c" | "dot_product.c" => &["3000"],
            "histogram.c" => &["4096"],
            _ => &[],
        };
        check(&sample(name, args));
    }
    // Both ways of the aliasing sample: pointers that overlap and that do not.
    check(&sample("aliasing.c", &["overlap"]));
    check(&sample("aliasing.c", &["disjoint"]));
}

/// A loop whose callees' effects are unknown (mutual recursion, WW112) has no pair to
/// watch: it is watched in full, and settled both ways.
#[test]
fn unknown_callee_effects_are_watched() {
    for args in [&[][..], &["one"][..]] {
        check(&Program {
            file: root().join("profile/tests/fixtures/unknown_callee.c"),
            defines: Vec::new(),
            args: args.to_vec(),
        });
    }
}

#[test]
fn kernels_settle_as_the_reference() {
    let names = c_files(&root().join("profile/benches/kernels"));
    assert!(names.len() >= 5, "{names:?}");
    for name in &names {
        check(&kernel(name));
    }
}
