//! Snapshots of a loop's inputs and outputs: the instrumented build of the user's program
//! that records them at run time, and the snapshot file.
//!
//! The loop statement is wrapped in a block that, at the chosen entry, records every
//! inbound scalar, every array's section `[lo, hi)` (the report's expressions evaluated by
//! the program itself) and the values a launch needs (trip counts, pitches, shared bytes),
//! runs the loop, records the outbound sections and stops the program. The rest of the
//! program is compiled as it is, from the same preprocessed text the analysis read. A
//! pointer that is null at the entry (one the loop tests, `if (p)`) is recorded as null,
//! with its bounds and no bytes, and replayed as null.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use super::error::{RecordError, RunError, SnapshotError};
use crate::ctext::to_wide;
use crate::plan::{snapshot_values, KernelPlan, Shape};
use advisor::model::Role;
use frontend::preprocess::TranslationUnitInput;
use frontend::unit::Unit;
use profile::driver::{code_flags, command as tool, kept_object, run_cc};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub const SNAPSHOT_RT: &str = include_str!("snapshot_rt.c");

const PRELUDE: &str = "\
int __ww_snap_enter(long long trip);\n\
void __ww_snap_bytes(int tag, const char *name, const void *base, long long lo, long long hi);\n\
void __ww_snap_value(const char *name, long long value);\n\
void __ww_snap_done(void);\n\
static long long __ww_min(long long a, long long b) __attribute__((unused));\n\
static long long __ww_min(long long a, long long b) { return a < b ? a : b; }\n\
static long long __ww_max(long long a, long long b) __attribute__((unused));\n\
static long long __ww_max(long long a, long long b) { return a > b ? a : b; }\n\
static long long __ww_round_up(long long n, long long m) __attribute__((unused));\n\
static long long __ww_round_up(long long n, long long m) { return (n + m - 1) / m * m; }\n";

/// A byte section `[lo, hi)` of an array, relative to its pointer, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub lo: i64,
    pub hi: i64,
    pub bytes: Vec<u8>,
    /// The pointer was null (a loop that tests it, `if (p)`): no bytes, and the replay
    /// hands the kernel null. `lo` and `hi` are the bounds as the program computed them.
    pub null: bool,
}

impl Section {
    /// A section of a pointer that is not null.
    pub fn of(lo: i64, hi: i64, bytes: Vec<u8>) -> Section {
        Section {
            lo,
            hi,
            bytes,
            null: false,
        }
    }

    /// The section `[lo, hi)` of a null pointer.
    pub fn null(lo: i64, hi: i64) -> Section {
        Section {
            lo,
            hi,
            bytes: Vec::new(),
            null: true,
        }
    }
}

/// What a snapshot file holds.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub scalars: BTreeMap<String, Vec<u8>>,
    /// Every array's section at the loop's entry.
    pub entry: BTreeMap<String, Section>,
    /// The outbound sections at the loop's exit: the reference.
    pub exit: BTreeMap<String, Section>,
    /// Values a launch needs: `trip:x`, `trip:y`, `shared`, pitches and struct fields.
    pub values: BTreeMap<String, i64>,
}

/// One record of a snapshot or result file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub tag: u8,
    pub name: String,
    pub lo: i64,
    pub hi: i64,
    pub bytes: Vec<u8>,
}

/// The record file format shared by the snapshot runtime and the replay harness.
pub fn read_records(path: &Path) -> Result<Vec<Record>, RecordError> {
    let data = std::fs::read(path).map_err(|source| RecordError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_records(&data, path)
}

/// The records of `data`, the contents of the file `path` (named in errors).
fn parse_records(data: &[u8], path: &Path) -> Result<Vec<Record>, RecordError> {
    if data.len() < 8 || &data[..7] != b"WWSNAP1" {
        return Err(RecordError::NotASnapshot(path.to_path_buf()));
    }
    let mut pos = 8;
    let mut out = Vec::new();
    let bad = || RecordError::Truncated(path.to_path_buf());
    let take = |pos: &mut usize, n: usize| -> Result<&[u8], RecordError> {
        let end = pos
            .checked_add(n)
            .filter(|&e| e <= data.len())
            .ok_or_else(bad)?;
        let s = &data[*pos..end];
        *pos = end;
        Ok(s)
    };
    loop {
        let tag = take(&mut pos, 1)?[0];
        let len = u32::from_le_bytes(take(&mut pos, 4)?.try_into().map_err(|_| bad())?) as usize;
        let name = String::from_utf8_lossy(take(&mut pos, len)?).into_owned();
        let lo = i64::from_le_bytes(take(&mut pos, 8)?.try_into().map_err(|_| bad())?);
        let hi = i64::from_le_bytes(take(&mut pos, 8)?.try_into().map_err(|_| bad())?);
        let n = u64::from_le_bytes(take(&mut pos, 8)?.try_into().map_err(|_| bad())?);
        let bytes = take(&mut pos, usize::try_from(n).map_err(|_| bad())?)?.to_vec();
        if tag == b'E' {
            return Ok(out);
        }
        out.push(Record {
            tag,
            name,
            lo,
            hi,
            bytes,
        });
    }
}

impl Snapshot {
    pub fn read(path: &Path) -> Result<Snapshot, RecordError> {
        Snapshot::from_records(read_records(path)?, path)
    }

    /// The snapshot the records of the file `path` (named in errors) hold.
    fn from_records(records: Vec<Record>, path: &Path) -> Result<Snapshot, RecordError> {
        let mut s = Snapshot::default();
        for Record {
            tag,
            name,
            lo,
            hi,
            bytes,
        } in records
        {
            match tag {
                b'S' => {
                    s.scalars.insert(name, bytes);
                }
                b'I' => {
                    s.entry.insert(name, Section::of(lo, hi, bytes));
                }
                b'O' => {
                    s.exit.insert(name, Section::of(lo, hi, bytes));
                }
                // A null pointer's section at the entry and the exit (`snapshot_rt.c`).
                b'i' => {
                    s.entry.insert(name, Section::null(lo, hi));
                }
                b'o' => {
                    s.exit.insert(name, Section::null(lo, hi));
                }
                b'D' => {
                    s.values.insert(name, lo);
                }
                other => {
                    return Err(RecordError::UnknownRecord {
                        path: path.to_path_buf(),
                        tag: other as char,
                    })
                }
            }
        }
        Ok(s)
    }
}

fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '?' => out.push_str("\\?"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A report expression evaluated by the program, in `long long`.
fn program_expr(e: &str) -> String {
    to_wide(e, ("__ww_min", "__ww_max"), &|_| None)
}

/// Whether the C expression `expr` names `name` (`p`, `c->data`) as a whole: not a longer
/// identifier, nor a member of something else (`s->p`, `s.p`).
fn mentions(expr: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    expr.match_indices(name).any(|(at, _)| {
        let before = expr[..at].chars().next_back();
        let after = expr[at + name.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == '.' || c == '>') && !after.is_some_and(ident)
    })
}

/// A bound the program evaluates at the loop's entry: when it reads through array
/// pointers (`8*ptr[n]`, `__ww_p[k]` holding each), it is evaluated only when they are not
/// null, else it is 0, as a loop that tests the pointer (`if (ptr)`) never reads through
/// it. Bounds from other parameters (`8*n`) are evaluated as they are, as the generated
/// host function does.
fn guarded_bound(expr: &str, pointers: &[(usize, &str)]) -> String {
    let tests: Vec<String> = pointers
        .iter()
        .filter(|(_, name)| mentions(expr, name))
        .map(|(k, _)| format!("__ww_p[{k}]"))
        .collect();
    if tests.is_empty() {
        expr.to_string()
    } else {
        format!("(({}) ? ({expr}) : 0LL)", tests.join(" && "))
    }
}

/// The shared bytes per block of the plan's staged areas, as the program computes them.
fn shared_expr(plan: &KernelPlan) -> Option<String> {
    if plan.staged.is_empty() {
        return None;
    }
    let (bx, by) = plan.launch_block();
    let rename = |chain: &str| -> Option<String> {
        match chain {
            "blockDim.x" => Some(bx.to_string()),
            "blockDim.y" => Some(by.to_string()),
            _ => None,
        }
    };
    let parts: Vec<String> = plan
        .staged
        .iter()
        .map(|s| {
            let elem = plan.array(&s.array).map(|a| a.elem_bytes).unwrap_or(1);
            format!(
                "__ww_round_up(__ww_round_up({}, {elem}) * ({}), 16)",
                to_wide(&s.row_bytes, ("__ww_min", "__ww_max"), &rename),
                to_wide(&s.rows, ("__ww_min", "__ww_max"), &rename)
            )
        })
        .collect();
    Some(parts.join(" + "))
}

/// Records a variable's bytes as a section `[0, sizeof)` of its address.
fn variable_bytes(tag: char, name: &str) -> String {
    format!(
        "__ww_snap_bytes('{tag}', {}, &({name}), 0, (long long)sizeof({name}));",
        c_string(name)
    )
}

/// The unit's preprocessed text with the loop wrapped in snapshot code.
pub fn instrument(unit: &Unit, plan: &KernelPlan) -> Result<String, SnapshotError> {
    let text = frontend::preprocess::blank_parser_shims(&unit.preprocessed.text);
    let (s, e) = (plan.loop_span.start as usize, plan.loop_span.end as usize);
    let Some(loop_text) = text.get(s..e) else {
        return Err(SnapshotError::LoopTextMissing {
            loop_id: plan.loop_id.clone(),
        });
    };
    let reduced = reduced_variables(plan);
    let enter = snapshot_entry(plan, &reduced);
    let leave = snapshot_exit(plan, &reduced);
    let mut out = String::with_capacity(text.len() + enter.len() + 4096);
    out.push_str("# 1 \"<warpwise-snapshot>\"\n");
    out.push_str(PRELUDE);
    out.push_str(&text[..s]);
    out.push_str(&enter);
    out.push_str(loop_text);
    out.push_str(&leave);
    out.push_str(&text[e..]);
    Ok(out)
}

/// A scalar reduction's variable: its value at the entry is the device copy's start, its
/// value at the exit the reference.
fn reduced_variables(plan: &KernelPlan) -> Vec<String> {
    plan.reductions
        .iter()
        .filter(|r| r.scalar_ident().is_some())
        .map(|r| r.target.clone())
        .collect()
}

/// The code before the loop: opens the block, and at the chosen entry records the inbound
/// scalars, the reduction variables, every array's section and the launch's values.
fn snapshot_entry(plan: &KernelPlan, reduced: &[String]) -> String {
    let n = plan.arrays.len().max(1);
    // The iterations the entry runs (at most; the least of the mapped loops' counts), so
    // that the runtime can take the first entry that runs one.
    let trip = match plan.y {
        Some(y) => format!(
            "__ww_min({}, {})",
            program_expr(&plan.nest[plan.x].trip),
            program_expr(&plan.nest[y].trip)
        ),
        None => program_expr(&plan.nest[plan.x].trip),
    };
    // One literal per line rather than one continued over the line break: the same bytes,
    // and tools that read the source line by line see each literal's braces.
    let mut enter = format!("{{ const void *__ww_p[{n}]; long long __ww_lo[{n}], __ww_hi[{n}]; ");
    let _ = write!(
        enter,
        "int __ww_on = __ww_snap_enter({trip}); if (__ww_on) {{ "
    );
    for sc in &plan.scalars {
        let _ = write!(
            enter,
            "{{ __typeof__({v}) __ww_v = ({v}); __ww_snap_bytes('S', {}, &__ww_v, 0, (long long)sizeof __ww_v); }} ",
            c_string(&sc.name),
            v = sc.name
        );
    }
    for v in reduced {
        let _ = write!(enter, "{} ", variable_bytes('I', v));
    }
    snapshot_sections(&mut enter, plan);
    for (name, expr) in launch_values(plan) {
        let _ = write!(enter, "__ww_snap_value({}, {expr}); ", c_string(&name));
    }
    enter.push_str("} ");
    enter
}

/// Records every array's pointer, then its section `[lo, hi)` and the bytes there.
fn snapshot_sections(enter: &mut String, plan: &KernelPlan) {
    // Every pointer first, so that a bound that reads through one (`8*ptr[n]`) can be
    // skipped when it is null, as the loop that tests it skips it.
    for (k, a) in plan.arrays.iter().enumerate() {
        let pointer = match a.shape {
            Shape::Object => format!("(const void *)&({})", a.name),
            _ => format!("(const void *)({})", a.name),
        };
        let _ = write!(enter, "__ww_p[{k}] = {pointer}; ");
    }
    let pointers: Vec<(usize, &str)> = plan
        .arrays
        .iter()
        .enumerate()
        .filter(|(_, a)| a.shape != Shape::Object)
        .map(|(k, a)| (k, a.name.as_str()))
        .collect();
    for (k, a) in plan.arrays.iter().enumerate() {
        // The report's section, not a debug-shrunk one: the reference is the program's.
        let hi = a.reported_hi.as_deref().unwrap_or(&a.hi);
        let _ = write!(
            enter,
            "__ww_lo[{k}] = {}; __ww_hi[{k}] = {}; \
             __ww_snap_bytes('I', {}, __ww_p[{k}], __ww_lo[{k}], __ww_hi[{k}]); ",
            guarded_bound(&program_expr(&a.lo), &pointers),
            guarded_bound(&program_expr(hi), &pointers),
            c_string(&a.name)
        );
    }
}

/// The values a launch needs, named, as the program computes them: trip counts, the plan's
/// snapshot values and the shared bytes per block.
fn launch_values(plan: &KernelPlan) -> Vec<(String, String)> {
    let mut values: Vec<(String, String)> = Vec::new();
    values.push(("trip:x".into(), program_expr(&plan.nest[plan.x].trip)));
    if let Some(y) = plan.y {
        values.push(("trip:y".into(), program_expr(&plan.nest[y].trip)));
    }
    for (name, expr) in snapshot_values(plan) {
        values.push((name, program_expr(&expr)));
    }
    if let Some(e) = shared_expr(plan) {
        values.push(("shared".into(), e));
    }
    values
}

/// The code after the loop: records the outbound sections and reduction variables and stops
/// the program, then closes the block `snapshot_entry` opened.
fn snapshot_exit(plan: &KernelPlan, reduced: &[String]) -> String {
    let mut leave = String::from(" if (__ww_on) { ");
    for (k, a) in plan.arrays.iter().enumerate() {
        if a.role != Role::In {
            let _ = write!(
                leave,
                "__ww_snap_bytes('O', {}, __ww_p[{k}], __ww_lo[{k}], __ww_hi[{k}]); ",
                c_string(&a.name)
            );
        }
    }
    for v in reduced {
        let _ = write!(leave, "{} ", variable_bytes('O', v));
    }
    leave.push_str("__ww_snap_done(); } }");
    leave
}

/// How to build and run the user's program.
#[derive(Clone, Debug)]
pub struct ProgramOptions {
    pub cc: String,
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    pub args: Vec<String>,
    /// Which entry of the loop to snapshot, from 1; 0: the first that runs an iteration.
    pub entry: u64,
    pub timeout: Duration,
}

/// Builds the program with the snapshot code in `inputs[target]` (the others as they are).
pub fn build(
    inputs: &[TranslationUnitInput],
    target: usize,
    instrumented: &str,
    opts: &ProgramOptions,
    dir: &Path,
) -> Result<PathBuf, SnapshotError> {
    std::fs::create_dir_all(dir).map_err(|source| SnapshotError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut objects = Vec::new();
    for (n, input) in inputs.iter().enumerate() {
        let text = if n == target {
            instrumented.to_string()
        } else {
            let pre = frontend::preprocess::preprocess(input)
                .map_err(|d| SnapshotError::Preprocess(Box::new(d)))?;
            frontend::preprocess::blank_parser_shims(&pre.text)
        };
        let source = dir.join(format!("unit{n}.i"));
        std::fs::write(&source, text).map_err(|e| SnapshotError::Write {
            path: source.clone(),
            source: e,
        })?;
        let object = dir.join(format!("unit{n}.o"));
        let mut cmd = tool(&opts.cc);
        cmd.args(&opts.cflags)
            .args(code_flags(&input.flags))
            .args(["-w", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object);
        if let Some(wd) = &input.working_dir {
            cmd.current_dir(wd);
        }
        run_cc(cmd)?;
        objects.push(object);
    }
    let rt = dir.join("warpwise_snapshot.c");
    std::fs::write(&rt, SNAPSHOT_RT).map_err(|source| SnapshotError::Write {
        path: rt.clone(),
        source,
    })?;
    // The same object for every program built with this compiler: kept between runs.
    const FLAGS: [&str; 3] = ["-O2", "-w", "-c"];
    let key = [FLAGS.join(" "), SNAPSHOT_RT.to_string()];
    let rt_object = kept_object(&opts.cc, "warpwise_snapshot.o", &key, || {
        let object = dir.join("warpwise_snapshot.o");
        let mut cmd = tool(&opts.cc);
        cmd.args(FLAGS).arg(&rt).arg("-o").arg(&object);
        run_cc(cmd)?;
        Ok::<_, SnapshotError>(object)
    })?;
    objects.push(rt_object);
    let exe = dir.join("program");
    let mut cmd = tool(&opts.cc);
    cmd.args(&opts.cflags)
        .args(&objects)
        .arg("-o")
        .arg(&exe)
        .args(&opts.ldflags)
        .arg("-lm");
    run_cc(cmd)?;
    Ok(exe)
}

/// The outcome of a run: its exit status and the tail of its output.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub status: Option<i32>,
    pub timed_out: bool,
    pub output_tail: String,
}

/// Runs `exe` with its output in `dir`, stopping it after `timeout`.
pub fn run_captured(
    mut cmd: Command,
    dir: &Path,
    name: &str,
    timeout: Duration,
) -> Result<RunOutcome, RunError> {
    let out_path = dir.join(format!("{name}.out"));
    let output_error = |source| RunError::Output {
        path: out_path.clone(),
        source,
    };
    let out = std::fs::File::create(&out_path).map_err(output_error)?;
    let err = out.try_clone().map_err(output_error)?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let shown = format!("{cmd:?}");
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(source) => {
            return Err(RunError::Spawn {
                command: shown,
                source,
            })
        }
    };
    let waited = frontend::files::wait_with_timeout(&mut child, timeout).map_err(|e| match e {
        frontend::files::WaitError::Wait(source) => RunError::Wait {
            command: shown,
            source,
        },
        frontend::files::WaitError::Reap(source) => RunError::Reap(source),
    })?;
    let (status, timed_out) = (waited.status, waited.timed_out);
    use std::os::unix::process::ExitStatusExt;
    let text = std::fs::read(&out_path).unwrap_or_default();
    let tail_start = text.len().saturating_sub(2000);
    Ok(RunOutcome {
        status: status.code().or(status.signal().map(|s| 128 + s)),
        timed_out,
        output_tail: String::from_utf8_lossy(&text[tail_start..]).into_owned(),
    })
}

/// Runs the instrumented program and reads the snapshot it leaves.
pub fn take(exe: &Path, opts: &ProgramOptions, dir: &Path) -> Result<Snapshot, SnapshotError> {
    let path = dir.join("snapshot.bin");
    let entries_path = dir.join("snapshot.bin.entries");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&entries_path);
    let mut cmd = Command::new(exe);
    cmd.args(&opts.args)
        .env("WARPWISE_SNAPSHOT", &path)
        .env("WARPWISE_SNAPSHOT_ENTRY", opts.entry.to_string());
    let outcome = run_captured(cmd, dir, "program", opts.timeout)?;
    let status = outcome.status.unwrap_or(-1);
    let output = outcome.output_tail;
    if outcome.timed_out {
        return Err(SnapshotError::TimedOut {
            seconds: opts.timeout.as_secs(),
            output,
        });
    }
    if !path.exists() {
        let entries = std::fs::read_to_string(&entries_path)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok());
        let entry = opts.entry;
        return Err(match entries {
            Some(entries) => SnapshotError::EntryNotReached {
                entries,
                status,
                entry,
                output,
            },
            None => SnapshotError::Stopped {
                status,
                entry,
                output,
            },
        });
    }
    if outcome.status != Some(0) {
        return Err(SnapshotError::Failed { status, output });
    }
    Ok(Snapshot::read(&path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record in the runtime's framing (`snapshot_rt.c`'s `ww_record`).
    fn record(out: &mut Vec<u8>, tag: u8, name: &str, lo: i64, hi: i64, bytes: &[u8]) {
        out.push(tag);
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&lo.to_le_bytes());
        out.extend_from_slice(&hi.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }

    #[test]
    fn a_null_pointers_records_read_as_null_sections_with_their_bounds() {
        let mut data = b"WWSNAP1\n".to_vec();
        record(&mut data, b'i', "dir", 0, 64, &[]);
        record(&mut data, b'I', "q", 0, 8, &[1; 8]);
        record(&mut data, b'O', "out", 0, 8, &[2; 8]);
        record(&mut data, b'o', "dir", 0, 64, &[]);
        record(&mut data, b'E', "", 0, 0, &[]);
        let path = Path::new("snapshot.bin");
        let s = Snapshot::from_records(parse_records(&data, path).unwrap(), path).unwrap();
        assert_eq!(s.entry["dir"], Section::null(0, 64));
        assert_eq!(s.exit["dir"], Section::null(0, 64));
        assert_eq!(s.entry["q"], Section::of(0, 8, vec![1; 8]));
        assert!(!s.entry["q"].null && !s.exit["out"].null);
    }

    #[test]
    fn bounds_that_read_through_an_array_pointer_are_skipped_when_it_is_null() {
        let pointers = [(0, "ptr"), (1, "c->data"), (2, "p")];
        assert_eq!(
            guarded_bound("8LL*((long long)(n))", &pointers),
            "8LL*((long long)(n))"
        );
        assert_eq!(
            guarded_bound("8LL*((long long)(ptr[n]))", &pointers),
            "((__ww_p[0]) ? (8LL*((long long)(ptr[n]))) : 0LL)"
        );
        assert_eq!(
            guarded_bound("c->data[0] + ptr[1]", &pointers),
            "((__ww_p[0] && __ww_p[1]) ? (c->data[0] + ptr[1]) : 0LL)"
        );
        // Other names that contain `p` or end in it are not the pointer.
        for e in ["8LL*np", "s->p[0]", "s.p", "pp[1]", "data[0]"] {
            assert_eq!(guarded_bound(e, &pointers), e);
        }
    }
}
