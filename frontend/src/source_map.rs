//! Maps byte offsets in preprocessed text back to the original `file:line:col`.
//!
//! Lines come from the preprocessor's line markers (`# 12 "a.c" 2`, or `#line 12 "a.c"`).
//! Columns cannot: `cc -E` collapses whitespace, re-indents, and expands macros. So each
//! preprocessed line is aligned, token by token (longest common subsequence over token
//! texts), with the original source line; a preprocessed token with no counterpart comes
//! from a macro expansion and maps to the original tokens it replaced (starting at the macro
//! name). Alignments are computed lazily, once per line, and cached in `OnceLock`s so the map
//! stays `Send + Sync`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod whole_text;

pub use whole_text::balanced;

/// A file known to a [`SourceMap`] (main file, header, or pseudo-file like `<built-in>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(u32);

impl FileId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An original source position; `line` and `col` are 1-based, `col` counts bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub file: FileId,
    pub line: u32,
    pub col: u32,
}

/// A `#pragma` (or `_Pragma`) seen by the preprocessor, kept as evidence of the author's intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pragma {
    pub location: Location,
    /// Text after `pragma`, e.g. `omp parallel for`.
    pub text: String,
    /// Offset in `Preprocessed::text` of the start of the (blanked) pragma line.
    pub offset: usize,
}

#[derive(Clone)]
struct FileEntry {
    /// As the user wrote it (main file) or as the preprocessor printed it (headers).
    path: PathBuf,
    /// Where to read it from: `path` resolved against the compiler's working directory.
    resolved: PathBuf,
    system: bool,
    contents: OnceLock<Option<FileText>>,
}

#[derive(Clone)]
struct FileText {
    text: String,
    line_starts: Vec<usize>,
}

impl FileText {
    fn new(text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        FileText { text, line_starts }
    }

    fn line(&self, line: u32) -> Option<&str> {
        let idx = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(idx)?;
        let end = self
            .line_starts
            .get(idx + 1)
            .map(|e| e - 1)
            .unwrap_or(self.text.len());
        let s = self.text.get(start..end)?;
        Some(s.strip_suffix('\r').unwrap_or(s))
    }
}

#[derive(Clone, Copy)]
struct PpLine {
    start: usize,
    file: FileId,
    line: u32,
}

/// One preprocessed token and the original byte range (within the original line) it maps to.
#[derive(Clone, Copy, Debug)]
struct MappedToken {
    pp_start: usize,
    pp_end: usize,
    orig_start: usize,
    orig_end: usize,
    /// Same text as the original token, so offsets inside it map one to one.
    exact: bool,
}

#[derive(Clone)]
enum LineAlign {
    /// A line that macro expansion changed: each preprocessed token and where it maps.
    Mapped(Vec<MappedToken>),
    /// A line the preprocessor left as it was (most lines): its tokens' byte ranges,
    /// each mapping to itself. Aligning a line of 10 million tokens took a gigabyte the
    /// general way (both sides' tokens, the match of each, the mapped tokens); this is 8
    /// bytes a token.
    Same(Vec<(u32, u32)>),
    /// An unchanged line without literals or comments, whose tokens no long run of
    /// whitespace separates: every byte other than whitespace is in a token, so an offset
    /// maps by looking at the bytes around it, and nothing is kept.
    Plain,
}

/// The longest run of whitespace a [`LineAlign::Plain`] line may have: an offset in it
/// looks along the run to the next token.
const PLAIN_GAP: usize = 64;

/// Whether an unchanged line can be [`LineAlign::Plain`].
fn is_plain(line: &[u8]) -> bool {
    let mut gap = 0;
    for (k, &c) in line.iter().enumerate() {
        if c.is_ascii_whitespace() {
            gap += 1;
            if gap > PLAIN_GAP {
                return false;
            }
            continue;
        }
        gap = 0;
        if c == b'"' || c == b'\'' || (c == b'/' && matches!(line.get(k + 1), Some(b'/' | b'*'))) {
            return false;
        }
    }
    true
}

/// What a header is to the file being analysed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderKind {
    /// A system header (line-marker flag 3) or one of warpwise's replacement headers.
    System,
    /// A header of the project.
    Project,
    /// The file's own module header: a project header with the file's stem (`grid.h` for
    /// `grid.c`), or a CUDA source it includes (`kernels.cu`), whose `static` functions
    /// are the file's own.
    Own,
}

/// Offset → original location, for one preprocessed translation unit.
#[derive(Clone)]
pub struct SourceMap {
    text: String,
    files: Vec<FileEntry>,
    main: Option<FileId>,
    lines: Vec<PpLine>,
    align: Vec<OnceLock<Option<LineAlign>>>,
}

impl fmt::Debug for SourceMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceMap")
            .field(
                "files",
                &self.files.iter().map(|f| &f.path).collect::<Vec<_>>(),
            )
            .field("lines", &self.lines.len())
            .finish()
    }
}

impl SourceMap {
    /// Builds the map of `text` (preprocessor output with line markers). Relative paths in the
    /// markers are resolved against `base_dir`, the directory the preprocessor ran in.
    /// `system_dirs` lists extra directories whose files count as system headers (our own
    /// replacement headers, which reach the compiler through `-I`).
    pub fn new(text: String, base_dir: Option<&Path>, system_dirs: &[PathBuf]) -> Self {
        let mut map = SourceMap {
            text: String::new(),
            files: Vec::new(),
            main: None,
            lines: Vec::new(),
            align: Vec::new(),
        };
        let mut current = None;
        let mut next_line: u32 = 1;
        let mut start = 0;
        for raw in text.split_inclusive('\n') {
            let line_text = raw.trim_end_matches(['\n', '\r']);
            if let Some((num, name, flags)) = parse_line_marker(line_text) {
                let id = match name {
                    Some(name) => {
                        let system = flags.contains(&3)
                            || system_dirs.iter().any(|d| Path::new(&name).starts_with(d));
                        Some(map.intern(&name, base_dir, system))
                    }
                    None => current,
                };
                let id = id.unwrap_or_else(|| map.intern("<unknown>", None, false));
                if map.main.is_none() {
                    map.main = Some(id);
                }
                current = Some(id);
                // The marker line itself reports where the next line comes from.
                map.lines.push(PpLine {
                    start,
                    file: id,
                    line: num,
                });
                next_line = num;
            } else {
                let file = match current {
                    Some(f) => f,
                    None => {
                        // Text without markers (e.g. `-P`): a single anonymous file.
                        let id = map.intern("<input>", None, false);
                        map.main = Some(id);
                        current = Some(id);
                        id
                    }
                };
                map.lines.push(PpLine {
                    start,
                    file,
                    line: next_line,
                });
                next_line = next_line.saturating_add(1);
            }
            start += raw.len();
        }
        if map.lines.is_empty() {
            let id = map.intern("<input>", None, false);
            map.main = Some(id);
            map.lines.push(PpLine {
                start: 0,
                file: id,
                line: 1,
            });
        }
        map.align = (0..map.lines.len()).map(|_| OnceLock::new()).collect();
        map.text = text;
        map
    }

    fn intern(&mut self, name: &str, base_dir: Option<&Path>, system: bool) -> FileId {
        if let Some(i) = self.files.iter().position(|f| f.path.as_os_str() == name) {
            return FileId(i as u32);
        }
        let path = PathBuf::from(name);
        let resolved = match base_dir {
            Some(dir) if path.is_relative() => dir.join(&path),
            _ => path.clone(),
        };
        self.files.push(FileEntry {
            path,
            resolved,
            system,
            contents: OnceLock::new(),
        });
        FileId((self.files.len() - 1) as u32)
    }

    /// The text the map was built from (what lang-c parses).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn files(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.files.len() as u32).map(FileId)
    }

    /// The main file, as named by the preprocessor's first line marker.
    pub fn main_file(&self) -> FileId {
        self.main.unwrap_or(FileId(0))
    }

    pub fn path(&self, file: FileId) -> &Path {
        &self.files[file.index()].path
    }

    /// True for headers the preprocessor flagged as system headers (line-marker flag 3) and for
    /// warpwise's own replacement headers.
    pub fn is_system_header(&self, file: FileId) -> bool {
        self.files[file.index()].system
    }

    pub fn is_main_file(&self, file: FileId) -> bool {
        self.main == Some(file)
    }

    /// Original text of a 1-based line, without its newline; `None` for pseudo-files and
    /// unreadable files.
    pub fn line_text(&self, file: FileId, line: u32) -> Option<&str> {
        self.file_text(file)?.line(line)
    }

    fn file_text(&self, file: FileId) -> Option<&FileText> {
        let entry = self.files.get(file.index())?;
        entry
            .contents
            .get_or_init(|| {
                let name = entry.path.to_string_lossy();
                if name.starts_with('<') && name.ends_with('>') {
                    return None;
                }
                let bytes = std::fs::read(&entry.resolved).ok()?;
                Some(FileText::new(String::from_utf8_lossy(&bytes).into_owned()))
            })
            .as_ref()
    }

    fn line_index(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|l| l.start <= offset)
            .saturating_sub(1)
    }

    fn line_bounds(&self, idx: usize) -> (usize, usize) {
        let start = self.lines[idx].start;
        let end = self
            .lines
            .get(idx + 1)
            .map(|l| l.start)
            .unwrap_or(self.text.len());
        let s = &self.text[start..end];
        let trimmed = s.trim_end_matches(['\n', '\r']);
        (start, start + trimmed.len())
    }

    fn alignment(&self, idx: usize) -> Option<&LineAlign> {
        self.align[idx]
            .get_or_init(|| {
                let pl = self.lines[idx];
                let orig = self.line_text(pl.file, pl.line)?;
                let (s, e) = self.line_bounds(idx);
                Some(align_line(&self.text[s..e], orig))
            })
            .as_ref()
    }

    /// Byte ranges of the preprocessed text that come from system headers, merged.
    pub fn system_ranges(&self) -> Vec<(usize, usize)> {
        self.header_ranges()
            .into_iter()
            .filter(|&(_, _, kind)| kind == HeaderKind::System)
            .map(|(start, end, _)| (start, end))
            .collect()
    }

    /// Which kind of header `file` is (`None` for the main file).
    pub fn header_kind(&self, file: FileId) -> Option<HeaderKind> {
        if self.is_main_file(file) {
            return None;
        }
        if self.is_system_header(file) {
            return Some(HeaderKind::System);
        }
        let stem = |f: FileId| self.files[f.index()].path.file_stem().map(|s| s.to_owned());
        // A CUDA source included into another (`#include "kernels.cu"`, the single
        // translation unit of Rodinia's benchmarks) is compiled there whole: its `static`
        // kernels are launched from it or from nowhere, and `check` reads them either way.
        let cuda_source = self.files[file.index()]
            .path
            .extension()
            .is_some_and(|e| e == "cu");
        let own = cuda_source || self.main.is_some_and(|main| stem(main) == stem(file));
        Some(if own {
            HeaderKind::Own
        } else {
            HeaderKind::Project
        })
    }

    /// Byte ranges of the preprocessed text that come from headers (every file but the
    /// main one), merged, each with its kind.
    pub fn header_ranges(&self) -> Vec<(usize, usize, HeaderKind)> {
        // Per file once, not per line: a kind compares file stems.
        let kinds: Vec<Option<HeaderKind>> = self.files().map(|f| self.header_kind(f)).collect();
        let mut ranges: Vec<(usize, usize, HeaderKind)> = Vec::new();
        for (idx, line) in self.lines.iter().enumerate() {
            let Some(kind) = kinds[line.file.index()] else {
                continue;
            };
            let end = self
                .lines
                .get(idx + 1)
                .map(|l| l.start)
                .unwrap_or(self.text.len());
            match ranges.last_mut() {
                Some(last) if last.1 == line.start && last.2 == kind => last.1 = end,
                _ => ranges.push((line.start, end, kind)),
            }
        }
        ranges
    }

    /// Original location of a byte offset in the preprocessed text. Offsets in whitespace map
    /// to the next token on the line.
    pub fn locate(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let idx = self.line_index(offset);
        let pl = self.lines[idx];
        let (start, end) = self.line_bounds(idx);
        let rel = offset - start;
        let line = &self.text.as_bytes()[start..end];
        let col = match self.alignment(idx) {
            Some(al) => map_start(al, line, rel).unwrap_or(rel),
            None => rel,
        };
        Location {
            file: pl.file,
            line: pl.line,
            col: col as u32 + 1,
        }
    }

    /// Original `[col, end_col)` (1-based) of the span `start..end` if it lies on one
    /// preprocessed line that maps onto one original line.
    pub fn locate_span(&self, start: usize, end: usize) -> Option<(Location, u32)> {
        let end = end.min(self.text.len());
        if end <= start {
            return None;
        }
        let idx = self.line_index(start);
        if self.line_index(end - 1) != idx {
            return None;
        }
        let pl = self.lines[idx];
        let (ls, le) = self.line_bounds(idx);
        let line = &self.text.as_bytes()[ls..le];
        let al = self.alignment(idx)?;
        let os = map_start(al, line, start - ls)?;
        let oe = map_end(al, line, end - ls)?;
        if oe <= os {
            return None;
        }
        Some((
            Location {
                file: pl.file,
                line: pl.line,
                col: os as u32 + 1,
            },
            oe as u32 + 1,
        ))
    }

    /// Source text of a span: as written in the original file when it maps onto one original
    /// line (macros unexpanded), else the preprocessed text with whitespace collapsed.
    pub fn snippet(&self, start: usize, end: usize) -> String {
        if let Some((loc, end_col)) = self.locate_span(start, end) {
            let (from, to) = (loc.col as usize - 1, end_col as usize - 1);
            if let Some(line) = self.line_text(loc.file, loc.line) {
                // A fragment of a macro invocation widens to the invocation; one that
                // spreads over lines reads as its expansion below.
                if let Some(s) = whole_text::whole_range(line, from, to)
                    .and_then(|(from, to)| line.get(from..to))
                {
                    return s.to_string();
                }
            }
        }
        let end = end.min(self.text.len());
        let start = start.min(end);
        let Some(raw) = self.text.get(start..end) else {
            return String::new();
        };
        let mut out = String::new();
        for line in raw.split('\n') {
            if parse_line_marker(line.trim_end_matches('\r')).is_some() {
                continue;
            }
            for word in line.split_whitespace() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(word);
            }
        }
        out
    }
}

/// Parses `# 12 "file" 1 3` / `#line 12 "file"`: (line, file name if given, flags).
pub(crate) fn parse_line_marker(line: &str) -> Option<(u32, Option<String>, Vec<u8>)> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let num: u32 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].trim_start();
    if rest.is_empty() {
        return Some((num, None, Vec::new()));
    }
    let body = rest.strip_prefix('"')?;
    let mut name = String::new();
    let mut chars = body.char_indices();
    let mut after = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    name.push(n);
                }
            }
            '"' => {
                after = Some(i + 1);
                break;
            }
            c => name.push(c),
        }
    }
    let flags = body[after?..]
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    Some((num, Some(name), flags))
}

/// Splits a line into C-ish tokens (identifiers/pp-numbers, literals, single punctuators),
/// skipping whitespace and comments. Both sides of an alignment use it, so punctuators need no
/// maximal munch.
fn tokenize(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    tokens(line, |s, e| out.push((s, e)));
    out
}

/// [`tokenize`], each token's `(start, end)` given to `out`.
fn tokens(line: &str, mut out: impl FnMut(usize, usize)) {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = match line[i + 2..].find("*/") {
                Some(p) => i + 2 + p + 2,
                None => b.len(),
            };
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            let s = i;
            let number = c.is_ascii_digit();
            while i < b.len() {
                let d = b[i];
                let continues = d.is_ascii_alphanumeric()
                    || d == b'_'
                    || d == b'$'
                    || d >= 0x80
                    || (number && d == b'.')
                    || (number
                        && (d == b'+' || d == b'-')
                        && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P'));
                if continues {
                    i += 1;
                } else {
                    break;
                }
            }
            out(s, i);
        } else if c == b'"' || c == b'\'' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out(s, i);
        } else if c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            out(s, i);
        } else {
            out(i, i + 1);
            i += 1;
        }
    }
}

/// Above this many DP cells a line is aligned greedily (generated code with huge lines).
const LCS_LIMIT: usize = 1 << 20;

fn align_line(pp: &str, orig: &str) -> LineAlign {
    if pp == orig && is_plain(pp.as_bytes()) {
        return LineAlign::Plain;
    }
    if pp == orig && u32::try_from(pp.len()).is_ok() {
        let mut same = Vec::new();
        tokens(pp, |s, e| same.push((s as u32, e as u32)));
        return LineAlign::Same(same);
    }
    align_mapped(pp, orig)
}

/// The alignment of a preprocessed line with its original: the longest common subsequence
/// of their tokens (greedy on huge lines), unmatched tokens standing for the gap between
/// the matched ones around them.
fn align_mapped(pp: &str, orig: &str) -> LineAlign {
    let pt = tokenize(pp);
    let ot = tokenize(orig);
    let ptxt = |i: usize| &pp[pt[i].0..pt[i].1];
    let otxt = |j: usize| &orig[ot[j].0..ot[j].1];
    let (n, m) = (pt.len(), ot.len());

    // pairs[i] = matched original token of preprocessed token i.
    let mut pairs: Vec<Option<usize>> = vec![None; n];
    if n.saturating_mul(m) <= LCS_LIMIT {
        // Suffix LCS table so the walk below goes forward and prefers the earliest match.
        let w = m + 1;
        let mut dp = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                dp[i * w + j] = if ptxt(i) == otxt(j) {
                    dp[(i + 1) * w + j + 1] + 1
                } else {
                    dp[(i + 1) * w + j].max(dp[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if ptxt(i) == otxt(j) && dp[i * w + j] == dp[(i + 1) * w + j + 1] + 1 {
                pairs[i] = Some(j);
                i += 1;
                j += 1;
            } else if dp[(i + 1) * w + j] >= dp[i * w + j + 1] {
                i += 1;
            } else {
                j += 1;
            }
        }
    } else {
        let mut j = 0;
        for (i, p) in pairs.iter_mut().enumerate() {
            if let Some(k) = (j..m.min(j + 8)).find(|&k| ptxt(i) == otxt(k)) {
                *p = Some(k);
                j = k + 1;
            }
        }
    }

    // next_match[i]: the original token of the first matched token at or after i, filled
    // from the end in one pass (a search per unmatched token was quadratic in a macro
    // expansion of half a million tokens).
    let mut next_match: Vec<Option<usize>> = vec![None; n + 1];
    for i in (0..n).rev() {
        next_match[i] = pairs[i].or(next_match[i + 1]);
    }
    let mut tokens = Vec::with_capacity(n);
    let mut prev_orig: Option<usize> = None;
    for i in 0..n {
        let (ps, pe) = pt[i];
        let t = match pairs[i] {
            Some(j) => {
                prev_orig = Some(j);
                MappedToken {
                    pp_start: ps,
                    pp_end: pe,
                    orig_start: ot[j].0,
                    orig_end: ot[j].1,
                    exact: true,
                }
            }
            None => {
                // Unmatched: part of a macro expansion. It stands for the original tokens
                // between the surrounding matched ones.
                let gap_lo = prev_orig.map_or(0, |j| j + 1);
                let gap_hi = next_match[i + 1].unwrap_or(m);
                let (os, oe) = if gap_lo < gap_hi {
                    (ot[gap_lo].0, ot[gap_hi - 1].1)
                } else if let Some(j) = prev_orig {
                    (ot[j].0, ot[j].1)
                } else if gap_hi < m {
                    (ot[gap_hi].0, ot[gap_hi].0)
                } else {
                    (ps.min(orig.len()), pe.min(orig.len()))
                };
                MappedToken {
                    pp_start: ps,
                    pp_end: pe,
                    orig_start: os,
                    orig_end: oe,
                    exact: false,
                }
            }
        };
        tokens.push(t);
    }
    LineAlign::Mapped(tokens)
}

/// Original start of the token containing (or following) `rel`.
fn map_start(al: &LineAlign, line: &[u8], rel: usize) -> Option<usize> {
    let tokens = match al {
        LineAlign::Mapped(tokens) => tokens,
        LineAlign::Plain => {
            let token = |k: usize| line.get(k).is_some_and(|c| !c.is_ascii_whitespace());
            return match (rel..line.len()).find(|&k| token(k)) {
                Some(k) => Some(k),
                None => (0..line.len().min(rel))
                    .rev()
                    .find(|&k| token(k))
                    .map(|k| k + 1),
            };
        }
        LineAlign::Same(same) => {
            let k = same.partition_point(|t| t.1 as usize <= rel);
            return match same.get(k) {
                Some(t) if rel > t.0 as usize => Some(rel),
                Some(t) => Some(t.0 as usize),
                None => same.last().map(|t| t.1 as usize),
            };
        }
    };
    let k = tokens.partition_point(|t| t.pp_end <= rel);
    match tokens.get(k) {
        Some(t) if t.exact && rel > t.pp_start => Some(t.orig_start + (rel - t.pp_start)),
        Some(t) => Some(t.orig_start),
        None => tokens.last().map(|t| t.orig_end),
    }
}

/// Original end of the token containing `rel - 1` (the last byte of an exclusive span).
fn map_end(al: &LineAlign, line: &[u8], rel: usize) -> Option<usize> {
    let rel = rel.checked_sub(1)?;
    let tokens = match al {
        LineAlign::Mapped(tokens) => tokens,
        LineAlign::Plain => {
            let token = |k: usize| line.get(k).is_some_and(|c| !c.is_ascii_whitespace());
            return (0..=rel.min(line.len()))
                .rev()
                .find(|&k| token(k))
                .map(|k| k + 1);
        }
        LineAlign::Same(same) => {
            let k = same.partition_point(|t| t.1 as usize <= rel);
            let t = same
                .get(k)
                .filter(|t| t.0 as usize <= rel)
                .or_else(|| k.checked_sub(1).and_then(|k| same.get(k)))?;
            return Some(if rel < t.1 as usize {
                rel + 1
            } else {
                t.1 as usize
            });
        }
    };
    let k = tokens.partition_point(|t| t.pp_end <= rel);
    let t = tokens
        .get(k)
        .filter(|t| t.pp_start <= rel)
        .or_else(|| k.checked_sub(1).and_then(|k| tokens.get(k)))?;
    if t.exact && rel < t.pp_end {
        Some(t.orig_start + (rel + 1 - t.pp_start))
    } else {
        Some(t.orig_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_line_maps_every_offset_as_the_general_alignment_does() {
        let gap = " ".repeat(PLAIN_GAP + 1);
        let plain = [
            "  x = a + a * f(b[i], c) ;  ",
            "for (int i = 0; i < n; i++) { y += 1.5e+3 - .25; }",
            "\ta  ==  d  / e ",
            "",
            "   ",
        ];
        let gapped = format!("a{gap}b");
        let same = [
            "  x = a + a * f(b[i], \"s p\") ;  ",
            "\t'c' ==  d  ",
            "a /* b c */ d // e f",
            gapped.as_str(),
        ];
        for (lines, want_plain) in [(&plain[..], true), (&same[..], false)] {
            for line in lines {
                let fast = align_line(line, line);
                assert_eq!(matches!(fast, LineAlign::Plain), want_plain, "{line:?}");
                assert!(
                    matches!(fast, LineAlign::Plain | LineAlign::Same(_)),
                    "{line:?}"
                );
                let mapped = align_mapped(line, line);
                let b = line.as_bytes();
                for rel in 0..=line.len() + 1 {
                    let at = format!("{line:?} at {rel}");
                    assert_eq!(map_start(&fast, b, rel), map_start(&mapped, b, rel), "{at}");
                    assert_eq!(map_end(&fast, b, rel), map_end(&mapped, b, rel), "{at}");
                }
            }
        }
    }

    #[test]
    fn markers_parse() {
        assert_eq!(
            parse_line_marker("# 12 \"a\\\\b.c\" 1 3 4"),
            Some((12, Some("a\\b.c".into()), vec![1, 3, 4]))
        );
        assert_eq!(
            parse_line_marker("#line 7 \"x.c\""),
            Some((7, Some("x.c".into()), vec![]))
        );
        assert_eq!(parse_line_marker("#pragma omp for"), None);
    }

    #[test]
    fn macro_expansion_maps_to_macro_name() {
        let orig = "\tfor (i = 0; i < _PB_N; i++)";
        let pp = " for (i = 0; i < 100; i++)";
        let al = align_line(pp, orig);
        let at = |s: &str| map_start(&al, pp.as_bytes(), pp.find(s).unwrap()).unwrap() + 1;
        assert_eq!(at("for"), 2);
        assert_eq!(at("100"), orig.find("_PB_N").unwrap() + 1);
        assert_eq!(at("i++"), orig.find("i++").unwrap() + 1);
    }
}
