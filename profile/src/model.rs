//! The profile file (`warpwise/profile/v1`, see `docs/profile-format.md`): serde types,
//! merging runs, and classifying observed dependences.
//!
//! A profile file is a stream of YAML documents of the same shape: every run of an
//! instrumented program appends one, and `warpwise profile` rewrites the file as one merged
//! document. Readers merge whatever they find, plus the `FILE.<pid>.part` snapshots left
//! by runs that were killed before they could append.

use crate::error::{ParseError, ProfileError};
use frontend::loop_ref::LoopRef;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const PROFILE_SCHEMA: &str = "warpwise/profile/v1";

/// The default profile file name, in the directory the program runs in.
pub const DEFAULT_PROFILE: &str = "warpwise-profile.yaml";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub schema: String,
    pub runs: u64,
    /// Runs that crashed, timed out or were still running at the last snapshot.
    #[serde(default)]
    pub incomplete_runs: u64,
    /// How each run ended: `exit`, `signal N`, `timeout`, `running`.
    #[serde(default)]
    pub ends: Vec<String>,
    #[serde(default)]
    pub loops: BTreeMap<String, LoopProfile>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopProfile {
    #[serde(default)]
    pub function: String,
    pub entries: u64,
    pub iterations: u64,
    pub min_trip: u64,
    pub max_trip: u64,
    #[serde(default)]
    pub mean_trip: f64,
    /// Inclusive wall time, nanoseconds.
    pub time_ns: u64,
    /// Dependences were tracked for this loop.
    #[serde(default)]
    pub tracked: bool,
    /// How many times the shadow memory reached its limit (`WARPWISE_SHADOW_MB`) and was
    /// cleared while this loop was tracked: a dependence whose two accesses lie on both
    /// sides of such a point was not observed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shadow_resets: u64,
    /// How many times tracking was paused while this loop was tracked: past the tracking
    /// budget (`WARPWISE_TRACK_BUDGET` watched accesses) an instance of a tracked loop runs
    /// untracked unless it is that loop's 1st, 2nd, 4th, 8th... instance. A dependence
    /// within such a stretch, or between accesses on both sides of it, was not observed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sampled_out: u64,
    /// Integer scalar inbounds at loop entry, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inbounds: BTreeMap<String, ValueStats>,
    /// The object each array parameter whose section the report cannot size pointed to at
    /// the loop's entries, by the parameter's name: the blocks the program allocated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocations: BTreeMap<String, AllocationStats>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependences: Vec<Dependence>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<Reduction>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub privatizable: Vec<String>,
}

/// What an array parameter pointed to at a loop's entries (entries where it was null are
/// not counted: the loop cannot have touched it there).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationStats {
    /// Entries where it was the start of a live block the program's own code allocated
    /// (`malloc`, `calloc`, `realloc`, `aligned_alloc`).
    pub found: u64,
    /// Entries where it was not: a global or local array, a pointer into a block, a block
    /// allocated by a library or through a function pointer.
    pub unknown: u64,
    /// The smallest and largest block, and the sum over the `found` entries, in bytes.
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub total_bytes: u64,
}

impl AllocationStats {
    /// The block's mean size in bytes over the entries, rounded up; `None` unless every
    /// entry found its block (a section sized by some entries only would undercount).
    pub fn mean_bytes(&self) -> Option<u64> {
        (self.found > 0 && self.unknown == 0).then(|| self.total_bytes.div_ceil(self.found))
    }

    fn add(&mut self, o: &AllocationStats) {
        if o.found > 0 {
            self.min_bytes = if self.found == 0 {
                o.min_bytes
            } else {
                self.min_bytes.min(o.min_bytes)
            };
            self.max_bytes = self.max_bytes.max(o.max_bytes);
        }
        self.found += o.found;
        self.unknown += o.unknown;
        self.total_bytes = self.total_bytes.saturating_add(o.total_bytes);
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueStats {
    pub count: u64,
    pub min: i64,
    pub max: i64,
    /// The most frequent values (exact while at most 8 distinct values occur per run).
    #[serde(default)]
    pub frequent: Vec<Frequent>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frequent {
    pub value: i64,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependence {
    /// `raw` (flow), `war` (anti) or `waw` (output).
    pub kind: String,
    pub array: String,
    /// The earlier access (in an earlier iteration) ...
    pub first: SiteRef,
    /// ... and the later one.
    pub second: SiteRef,
    /// In iterations of this loop, when it was the same every time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<i64>,
    pub distance_min: i64,
    pub distance_max: i64,
    /// Accesses that saw the dependence.
    pub count: u64,
    /// `blocking`, `reduction` or `private`.
    #[serde(default)]
    pub class: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteRef {
    pub line: u32,
    pub text: String,
    #[serde(default)]
    pub array: String,
    /// A named scalar variable, not an element of an array or struct.
    #[serde(default)]
    pub scalar: bool,
    /// The operator when the access is part of a reduction-shaped update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    pub var: String,
    pub op: String,
}

impl Profile {
    pub fn empty() -> Profile {
        Profile {
            schema: PROFILE_SCHEMA.to_string(),
            ..Default::default()
        }
    }

    /// The loop with this id. Reports and profiles name a file the way it was given on the
    /// command line (`samples/a.c` or `/abs/samples/a.c`), so after an exact lookup the
    /// file part matches by path suffix on a component boundary, line and column exactly.
    /// The keys stay text, parsed here: the file keeps the order of the text, and a key no
    /// report can name (`f.c:?`) is no reason to refuse the rest of the profile.
    pub fn find_loop(&self, id: &LoopRef) -> Option<&LoopProfile> {
        if let Some(l) = self.loops.get(&id.to_string()) {
            return Some(l);
        }
        let mut found = self
            .loops
            .iter()
            .filter(|(key, _)| key.parse::<LoopRef>().is_ok_and(|key| key.same_loop(id)))
            .map(|(_, l)| l);
        let first = found.next()?;
        // Two files with the same tail are ambiguous: better no data than the wrong loop's.
        found.next().is_none().then_some(first)
    }

    /// Adds another profile: counts add, extremes combine, dependences union.
    pub fn merge(&mut self, other: Profile) {
        self.runs += other.runs;
        self.incomplete_runs += other.incomplete_runs;
        self.ends.extend(other.ends);
        for (id, l) in other.loops {
            match self.loops.get_mut(&id) {
                Some(mine) => mine.merge(l),
                None => {
                    self.loops.insert(id, l);
                }
            }
        }
    }

    /// Derived fields: mean trip counts, constant distances, dependence classes.
    pub fn finish(&mut self) {
        self.schema = PROFILE_SCHEMA.to_string();
        for l in self.loops.values_mut() {
            l.finish();
        }
    }

    pub fn is_complete(&self) -> bool {
        self.incomplete_runs == 0
    }
}

impl LoopProfile {
    fn merge(&mut self, o: LoopProfile) {
        if o.entries > 0 {
            self.min_trip = if self.entries == 0 {
                o.min_trip
            } else {
                self.min_trip.min(o.min_trip)
            };
        }
        self.max_trip = self.max_trip.max(o.max_trip);
        self.entries += o.entries;
        self.iterations += o.iterations;
        self.time_ns += o.time_ns;
        self.tracked |= o.tracked;
        self.shadow_resets += o.shadow_resets;
        self.sampled_out += o.sampled_out;
        if self.function.is_empty() {
            self.function = o.function;
        }
        for (name, v) in o.inbounds {
            let mine = self.inbounds.entry(name).or_default();
            if mine.count == 0 {
                *mine = v;
                continue;
            }
            if v.count > 0 {
                mine.min = mine.min.min(v.min);
                mine.max = mine.max.max(v.max);
            }
            mine.count += v.count;
            for f in v.frequent {
                match mine.frequent.iter_mut().find(|m| m.value == f.value) {
                    Some(m) => m.count += f.count,
                    None => mine.frequent.push(f),
                }
            }
        }
        for (name, a) in &o.allocations {
            self.allocations.entry(name.clone()).or_default().add(a);
        }
        for d in o.dependences {
            let same = self.dependences.iter_mut().find(|m| {
                m.kind == d.kind
                    && m.first.line == d.first.line
                    && m.first.text == d.first.text
                    && m.second.line == d.second.line
                    && m.second.text == d.second.text
            });
            match same {
                Some(m) => {
                    m.count += d.count;
                    m.distance_min = m.distance_min.min(d.distance_min);
                    m.distance_max = m.distance_max.max(d.distance_max);
                }
                None => self.dependences.push(d),
            }
        }
    }

    fn finish(&mut self) {
        self.mean_trip = if self.entries == 0 {
            0.0
        } else {
            // Two decimals are plenty and keep the file stable.
            (self.iterations as f64 / self.entries as f64 * 100.0).round() / 100.0
        };
        for v in self.inbounds.values_mut() {
            v.frequent
                .sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
            v.frequent.truncate(8);
        }
        self.dependences.sort_by(|a, b| {
            (
                a.first.line,
                a.second.line,
                &a.kind,
                &a.first.text,
                &a.second.text,
            )
                .cmp(&(
                    b.first.line,
                    b.second.line,
                    &b.kind,
                    &b.first.text,
                    &b.second.text,
                ))
        });
        // Scalars: a reduction when every access is the same reduction-shaped update,
        // privatizable when no value flows from one iteration to another.
        let mut by_var: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, d) in self.dependences.iter_mut().enumerate() {
            d.distance = (d.distance_min == d.distance_max).then_some(d.distance_min);
            if d.first.scalar && d.second.scalar {
                by_var.entry(d.array.clone()).or_default().push(i);
            } else {
                d.class = "blocking".into();
            }
        }
        self.reductions.clear();
        self.privatizable.clear();
        for (var, idx) in by_var {
            let deps: Vec<&Dependence> = idx.iter().map(|&i| &self.dependences[i]).collect();
            let raw = deps.iter().any(|d| d.kind == "raw");
            let ops: Vec<Option<&String>> = deps
                .iter()
                .flat_map(|d| [d.first.op.as_ref(), d.second.op.as_ref()])
                .collect();
            let op = ops[0].filter(|o| ops.iter().all(|x| *x == Some(*o)));
            let class = match (raw, op) {
                (false, _) => {
                    self.privatizable.push(var.clone());
                    "private"
                }
                (true, Some(op)) => {
                    self.reductions.push(Reduction {
                        var: var.clone(),
                        op: op.clone(),
                    });
                    "reduction"
                }
                (true, None) => "blocking",
            };
            for i in idx {
                self.dependences[i].class = class.into();
            }
        }
    }

    /// The dependences that would make a parallel version wrong.
    pub fn blocking(&self) -> impl Iterator<Item = &Dependence> {
        self.dependences.iter().filter(|d| d.class == "blocking")
    }
}

/// Snapshot files `PROFILE.<pid>.part` next to `path`.
pub fn part_files(path: &Path) -> Vec<(PathBuf, u32)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let prefix = format!("{name}.");
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let file = e.file_name();
            let Some(file) = file.to_str() else { continue };
            let pid = file
                .strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".part"))
                .and_then(|pid| pid.parse::<u32>().ok());
            if let Some(pid) = pid {
                out.push((dir.join(file), pid));
            }
        }
    }
    out.sort();
    out
}

/// Parses a stream of profile documents and merges them.
pub fn parse_profile(text: &str) -> Result<Profile, ParseError> {
    if let Some((line, col)) = crate::yaml_guard::too_deep(text, crate::yaml_guard::MAX_NESTING) {
        return Err(ParseError::TooDeep {
            line,
            col,
            max: crate::yaml_guard::MAX_NESTING,
        });
    }
    let mut total = Profile::empty();
    for (first_line, doc) in documents(text) {
        // Each document on its own, so that an error names its line in the file.
        let located = |e: serde_yaml::Error| match e.location() {
            Some(l) => {
                // serde_yaml's own position is within the document: replace it.
                let message = e.to_string();
                let own = format!(" at line {} column {}", l.line(), l.column());
                let message = message.strip_suffix(&own).unwrap_or(&message).to_string();
                ParseError::Syntax {
                    line: first_line + l.line() - 1,
                    col: l.column(),
                    message,
                    source: e,
                }
            }
            None => ParseError::Document {
                line: first_line,
                source: e,
            },
        };
        let parsed: Option<Profile> = serde_yaml::from_str(doc).map_err(located)?;
        let Some(p) = parsed else { continue };
        if p.schema != PROFILE_SCHEMA {
            return Err(ParseError::Schema {
                line: first_line,
                schema: p.schema,
                expected: PROFILE_SCHEMA,
            });
        }
        if p.incomplete_runs > p.runs {
            return Err(ParseError::IncompleteRuns {
                line: first_line,
                incomplete: p.incomplete_runs,
                runs: p.runs,
            });
        }
        total.merge(p);
    }
    total.finish();
    Ok(total)
}

/// The YAML documents of `text` (separated by `---` lines) with the line each starts on.
fn documents(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut start_line = 1usize;
    let mut offset = 0usize;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare.starts_with("--- ") {
            out.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = n + 2;
        }
        offset += line.len();
    }
    out.push((start_line, &text[start..]));
    out
}

/// Reads a profile file and the snapshots of killed runs next to it.
pub fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let mut total = Profile::empty();
    let mut found = false;
    if path.exists() {
        let text = frontend::files::read_input_text(path).map_err(|source| ProfileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        total.merge(parse_profile(&text).map_err(|source| ProfileError::Parse {
            path: path.to_path_buf(),
            source,
        })?);
        found = true;
    }
    for (part, _) in part_files(path) {
        if let Ok(text) = frontend::files::read_input_text(&part) {
            // A snapshot may be cut short by the kill; skip what does not parse.
            if let Ok(p) = parse_profile(&text) {
                total.merge(p);
                found = true;
            }
        }
    }
    if !found {
        return Err(ProfileError::Missing {
            path: path.to_path_buf(),
        });
    }
    total.finish();
    Ok(total)
}

/// Rewrites `path` as one merged document, consuming the snapshots of processes that are
/// gone.
///
/// The rewrite holds the lock the runtime appends under (`flock` on the profile), and the
/// runtime checks after locking that the file it holds is still the one at the path, so a
/// run that ends while the profile is rewritten appends to the new file, not the replaced
/// one. Without a file there is nothing to lock (the snapshots are read as they are).
pub fn normalize(path: &Path) -> Result<Profile, ProfileError> {
    let held = std::fs::File::open(path).ok();
    if let Some(file) = &held {
        // Advisory: where locks are not supported the rewrite goes on without one.
        let _ = file.lock();
    }
    let profile = read_profile(path)?;
    write_profile(path, &profile)?;
    drop(held);
    for (part, pid) in part_files(path) {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(part);
        }
    }
    Ok(profile)
}

pub fn write_profile(path: &Path, profile: &Profile) -> Result<(), ProfileError> {
    let text = crate::yaml_out::to_string(profile).map_err(ProfileError::Serialize)?;
    frontend::files::write_output_synced(path, format!("---\n{text}").as_bytes()).map_err(
        |source| ProfileError::Write {
            path: path.to_path_buf(),
            source,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::parse_profile;

    const HEADER: &str = "schema: warpwise/profile/v1\nruns: 1\nincomplete_runs: 0\nends: [exit]\n";

    /// `text` must fail with a message that starts with `expected_at` and contains `says`.
    fn check(text: &str, expected_at: &str, says: &str) {
        let e = parse_profile(text).unwrap_err().to_string();
        assert!(
            e.starts_with(expected_at),
            "`{e}` does not start with `{expected_at}`"
        );
        assert!(e.contains(says), "`{e}` does not say `{says}`");
    }

    #[test]
    fn documents_merge_and_empty_ones_are_skipped() {
        let text = format!("---\n{HEADER}loops: {{}}\n---\n---\n{HEADER}loops: {{}}\n");
        let p = parse_profile(&text).unwrap();
        assert_eq!(p.runs, 2);
    }

    #[test]
    fn errors_name_the_line_in_the_file() {
        // The second document's `runs` is not a number: line 9 of the file.
        let text =
            format!("---\n{HEADER}loops: {{}}\n---\nschema: warpwise/profile/v1\nruns: many\n");
        check(&text, "9:7: ", "runs");
        check("---\nschema: [\n", "2:9: schema: invalid type", "");
        let wrong = HEADER.replace("runs: 1\nincomplete_runs: 0", "runs: 1\nincomplete_runs: 3");
        check(
            &format!("{wrong}loops: {{}}\n"),
            "1: ",
            "3 incomplete runs of 1",
        );
    }
}
