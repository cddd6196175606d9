//! The loop id of reports and profiles (`FILE:LINE:COL`, `#K` after a macro's k-th loop)
//! and the `--loop` selector that picks loops by it: one parser, one printer, one matcher.
//!
//! Not to be confused with [`crate::loops::LoopId`] (an index into a function's loop
//! forest) or [`crate::ir::SourceLoopId`] (an index into a function's source loops).

use std::fmt;
use std::str::FromStr;

/// Where a loop keyword is in the user's source, as reports print it: `file:line:col`, and
/// `#k` after it for the k-th loop of a unit at that place (see
/// `Unit::loop_id_at` in the unit module: a macro expansion puts every loop it holds at the
/// place the macro is named).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LoopRef {
    /// The path as the file was given (relative or absolute); may itself hold `:`.
    pub file: String,
    /// From 1.
    pub line: u32,
    /// From 1.
    pub col: u32,
    /// `Some(k)`, k >= 2, for the k-th loop at this place; the first has none, so ids of
    /// files without such macros read as plain `file:line:col`.
    pub rank: Option<u32>,
}

/// Why a string is not a [`LoopRef`] or a [`LoopSelector`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not {expected}")]
pub struct ParseLoopError {
    text: String,
    expected: &'static str,
}

impl ParseLoopError {
    fn new(text: &str, expected: &'static str) -> ParseLoopError {
        ParseLoopError {
            text: text.to_string(),
            expected,
        }
    }
}

/// A line or column: digits only (`u32::from_str` would also take `+3`, which no id holds),
/// and not 0, since both count from 1.
fn position(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|n| *n > 0)
}

/// `col` or `col#k` with k >= 2 (the first loop at a place carries no rank, so `#1` would
/// be a second spelling of the same id).
fn column_and_rank(text: &str) -> Option<(u32, Option<u32>)> {
    match text.split_once('#') {
        Some((col, rank)) => Some((position(col)?, Some(position(rank).filter(|k| *k >= 2)?))),
        None => Some((position(text)?, None)),
    }
}

/// `file:line` and the rest after the last `:`; split from the right, so a file holding `:`
/// keeps it.
fn file_and_line(head: &str) -> Option<(&str, u32)> {
    let (file, line) = head.rsplit_once(':')?;
    let line = position(line)?;
    (!file.is_empty()).then_some((file, line))
}

impl FromStr for LoopRef {
    type Err = ParseLoopError;

    fn from_str(text: &str) -> Result<LoopRef, ParseLoopError> {
        let parsed = text.rsplit_once(':').and_then(|(head, last)| {
            let (col, rank) = column_and_rank(last)?;
            let (file, line) = file_and_line(head)?;
            Some(LoopRef {
                file: file.to_string(),
                line,
                col,
                rank,
            })
        });
        parsed.ok_or_else(|| ParseLoopError::new(text, "a loop id FILE:LINE:COL[#K]"))
    }
}

impl fmt::Display for LoopRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)?;
        match self.rank {
            Some(k) => write!(f, "#{k}"),
            None => Ok(()),
        }
    }
}

/// As the string reports have always held, so that no report or profile changes.
impl serde::Serialize for LoopRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for LoopRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LoopRef, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether `short` names the file `long`: equal, or a path suffix of it that starts after a
/// `/` (`b.c` names `a/b.c`, not `ab.c`), after dropping a leading `./` from `short`. Reports
/// name a file the way it was given on the command line (`samples/a.c`, `./a.c` or
/// `/abs/samples/a.c`), so a selector or another id may name it by any tail of components.
fn names_file(short: &str, long: &str) -> bool {
    let short = short.strip_prefix("./").unwrap_or(short);
    long == short
        || long
            .strip_suffix(short)
            .is_some_and(|head| head.ends_with('/'))
}

impl LoopRef {
    /// Whether `self` and `other` are the same loop as two reports or profiles name it: the
    /// same line, column and rank, and either file names the other by [`names_file`]'s rule.
    /// Unlike [`LoopSelector::matches`], which direction is the tail is not known: a profile
    /// may have been taken with absolute paths and the report with relative ones, or the
    /// other way round.
    pub fn same_loop(&self, other: &LoopRef) -> bool {
        (self.line, self.col, self.rank) == (other.line, other.col, other.rank)
            && (names_file(&self.file, &other.file) || names_file(&other.file, &self.file))
    }
}

/// A user's choice of loops (`--loop`): `FILE:LINE` (every loop starting on that line) or
/// `FILE:LINE:COL` (one loop; `COL#K` for the k-th loop at that place, as in its id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSelector {
    /// The file or a tail of its path, see [`LoopSelector::matches`].
    pub file: String,
    pub line: u32,
    pub col: Option<u32>,
    /// Only with `col`: the rank a loop's id must carry. `FILE:LINE:COL` without `#K` is the
    /// first loop there, as its id is.
    pub rank: Option<u32>,
}

impl FromStr for LoopSelector {
    type Err = ParseLoopError;

    /// `FILE:LINE:COL[#K]` when the part before the last is a number, else `FILE:LINE`, so
    /// `dir:a.c:12` is line 12 of the file `dir:a.c` and `a.c:12:x` a mistyped column.
    fn from_str(text: &str) -> Result<LoopSelector, ParseLoopError> {
        let error = || ParseLoopError::new(text, "FILE:LINE or FILE:LINE:COL");
        let (head, last) = text.rsplit_once(':').ok_or_else(error)?;
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if head.rsplit_once(':').is_some_and(|(_, line)| numeric(line)) {
            let id = text.parse::<LoopRef>().map_err(|_| error())?;
            return Ok(LoopSelector::from(&id));
        }
        match (position(last), head.is_empty()) {
            (Some(line), false) => Ok(LoopSelector {
                file: head.to_string(),
                line,
                col: None,
                rank: None,
            }),
            _ => Err(error()),
        }
    }
}

impl fmt::Display for LoopSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(col) = self.col {
            write!(f, ":{col}")?;
        }
        match self.rank {
            Some(k) => write!(f, "#{k}"),
            None => Ok(()),
        }
    }
}

/// The selector of exactly one loop.
impl From<&LoopRef> for LoopSelector {
    fn from(id: &LoopRef) -> LoopSelector {
        LoopSelector {
            file: id.file.clone(),
            line: id.line,
            col: Some(id.col),
            rank: id.rank,
        }
    }
}

impl LoopSelector {
    /// Whether the loop `id` is selected: the selector's file names the id's file (equal,
    /// or a tail of its path at a `/`, a leading `./` dropped), the lines are equal, and
    /// when the selector has a column, the column and rank are too.
    pub fn matches(&self, id: &LoopRef) -> bool {
        names_file(&self.file, &id.file)
            && self.line == id.line
            && match self.col {
                Some(col) => col == id.col && self.rank == id.rank,
                None => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(file: &str, line: u32, col: u32, rank: Option<u32>) -> LoopRef {
        LoopRef {
            file: file.to_string(),
            line,
            col,
            rank,
        }
    }

    /// `input` parses as `expected` (`None`: is refused), and a parsed id prints as `input`.
    fn check(input: &str, expected: Option<LoopRef>) {
        let parsed = input.parse::<LoopRef>().ok();
        assert_eq!(parsed, expected, "{input}");
        if let Some(parsed) = parsed {
            assert_eq!(parsed.to_string(), input);
        }
    }

    #[test]
    fn ids_parse_from_the_right() {
        check("a.c:12:5", Some(id("a.c", 12, 5, None)));
        check("dir/a.c:1:1#2", Some(id("dir/a.c", 1, 1, Some(2))));
        check("C:/src/a.c:3:4", Some(id("C:/src/a.c", 3, 4, None)));
        check("odd:12:5:7", Some(id("odd:12", 5, 7, None)));
    }

    #[test]
    fn malformed_ids_are_refused() {
        for bad in [
            "",
            "a.c",
            "a.c:12",
            ":12:5",
            "a.c:0:5",
            "a.c:12:0",
            "a.c:12:5#1",
            "a.c:12:5#0",
            "a.c:12:5#",
            "a.c:12:#2",
            "a.c:x:5",
            "a.c:12:x",
            "a.c:+12:5",
            "a.c:12:5 ",
            "a.c:?",
            "a.c:12:5#2#3",
        ] {
            check(bad, None);
        }
    }

    #[test]
    fn ids_serialize_as_their_text() {
        let l = id("dir/a.c", 7, 3, Some(2));
        assert_eq!(serde_json::to_string(&l).unwrap(), "\"dir/a.c:7:3#2\"");
        assert_eq!(
            serde_json::from_str::<LoopRef>("\"dir/a.c:7:3#2\"").unwrap(),
            l
        );
        assert!(serde_json::from_str::<LoopRef>("\"dir/a.c:7\"").is_err());
    }

    /// Reports and profiles hold ids as strings; a file holding `:` must come back whole,
    /// with its rank, from the text alone (the split is from the right).
    #[test]
    fn ids_with_a_colon_in_the_file_and_a_rank_round_trip_through_serde() {
        let l = id("C:/src/dir:a.c", 12, 5, Some(2));
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(text, "\"C:/src/dir:a.c:12:5#2\"");
        assert_eq!(serde_json::from_str::<LoopRef>(&text).unwrap(), l);
        let in_a_map = serde_json::to_string(
            &[(l.clone(), 1)]
                .into_iter()
                .collect::<std::collections::BTreeMap<_, _>>(),
        )
        .unwrap();
        assert_eq!(in_a_map, "{\"C:/src/dir:a.c:12:5#2\":1}");
        assert!(serde_json::from_str::<LoopRef>("\"C:/src/dir:a.c:12:5#1\"").is_err());
    }

    fn selector(file: &str, line: u32, col: Option<u32>, rank: Option<u32>) -> LoopSelector {
        LoopSelector {
            file: file.to_string(),
            line,
            col,
            rank,
        }
    }

    #[test]
    fn selectors_name_a_line_or_one_loop() {
        let parse = |s: &str| s.parse::<LoopSelector>().ok();
        assert_eq!(parse("a.c:12"), Some(selector("a.c", 12, None, None)));
        assert_eq!(parse("a.c:12:5"), Some(selector("a.c", 12, Some(5), None)));
        assert_eq!(
            parse("a.c:12:5#3"),
            Some(selector("a.c", 12, Some(5), Some(3)))
        );
        assert_eq!(
            parse("dir:a.c:12"),
            Some(selector("dir:a.c", 12, None, None))
        );
        for bad in [
            "garbage",
            "a.c:",
            "a.c:x",
            ":12",
            "a.c:0",
            "a.c:12:x",
            "a.c:12:5#1",
            "a.c:0:5",
            ":3:4",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        for text in ["a.c:12", "a.c:12:5", "a.c:12:5#3"] {
            assert_eq!(parse(text).unwrap().to_string(), text);
        }
    }

    /// Whether the selector `wanted` selects the loop `loop_id`.
    fn selects(wanted: &str, loop_id: &str) -> bool {
        let wanted: LoopSelector = wanted.parse().unwrap();
        wanted.matches(&loop_id.parse().unwrap())
    }

    #[test]
    fn a_selector_names_its_file_by_a_tail_of_whole_components() {
        assert!(selects("a/b.c:3", "a/b.c:3:1"));
        assert!(selects("b.c:3", "a/b.c:3:1"));
        assert!(selects("b.c:3", "/abs/a/b.c:3:1"));
        assert!(!selects("b.c:3", "ab.c:3:1"));
        assert!(
            !selects("a/b.c:3", "b.c:3:1"),
            "the selector is the tail, not the id"
        );
        assert!(selects("./b.c:3", "b.c:3:1"));
        assert!(selects("./b.c:3", "a/b.c:3:1"));
        assert!(selects("b.c:3", "./b.c:3:1"));
        assert!(selects("./b.c:3", "./b.c:3:1"));
    }

    #[test]
    fn a_selector_with_a_column_names_one_rank() {
        assert!(selects("b.c:3", "b.c:3:9"));
        assert!(
            selects("b.c:3", "b.c:3:9#2"),
            "a line selects every loop on it"
        );
        assert!(!selects("b.c:4", "b.c:3:9"));
        assert!(selects("b.c:3:9", "b.c:3:9"));
        assert!(!selects("b.c:3:8", "b.c:3:9"));
        assert!(
            !selects("b.c:3:9", "b.c:3:9#2"),
            "no rank is the first loop there"
        );
        assert!(selects("b.c:3:9#2", "b.c:3:9#2"));
        assert!(!selects("b.c:3:9#3", "b.c:3:9#2"));
        let with_colon = "dir:b.c:3".parse::<LoopSelector>().unwrap();
        assert!(with_colon.matches(&"x/dir:b.c:3:1".parse().unwrap()));
    }

    #[test]
    fn the_same_loop_may_be_named_by_either_tail() {
        let same = |a: &str, b: &str| {
            let (a, b) = (a.parse::<LoopRef>().unwrap(), b.parse::<LoopRef>().unwrap());
            assert_eq!(a.same_loop(&b), b.same_loop(&a), "{a} {b}");
            a.same_loop(&b)
        };
        assert!(same("samples/a.c:3:5", "/abs/samples/a.c:3:5"));
        assert!(same("./a.c:3:5", "a.c:3:5"));
        assert!(!same("ba.c:3:5", "a.c:3:5"));
        assert!(!same("a.c:3:5", "a.c:3:6"));
        assert!(!same("a.c:3:5", "a.c:3:5#2"));
        assert!(same("a.c:3:5#2", "x/a.c:3:5#2"));
    }

    proptest! {
        #[test]
        fn ids_round_trip(
            file in "[a-z:/._]{0,6}[a-z]",
            line in 1u32..,
            col in 1u32..,
            rank in proptest::option::of(2u32..),
        ) {
            let l = LoopRef { file, line, col, rank };
            prop_assert_eq!(l.to_string().parse::<LoopRef>(), Ok(l.clone()));
            prop_assert!(LoopSelector::from(&l).matches(&l));
            prop_assert!(l.same_loop(&l));
        }
    }
}
