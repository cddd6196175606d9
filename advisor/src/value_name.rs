//! The syntax of a value's name within warpwise: a variable qualified by the place its
//! value comes from (`n@12`, `x@12:5`, `c->n@?2`, `n@L3`, `t@global2`, `i@f:77@?1`, `k@j`).
//! The one reader of that syntax: the legend, the report's prose, the port planners and
//! the profile all take a name apart here (docs/report-format.md, "Names").

use std::fmt;

use crate::model::ValuePlace;

/// One place-qualified name: the variable as the source writes it (`c->n`, `a[i@12]`) and
/// where its value is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueName {
    pub variable: String,
    pub place: ValuePlace,
}

/// A value name in a text: `text[start..end]` is `name` written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub start: usize,
    pub end: usize,
    pub name: ValueName,
}

impl ValueName {
    /// `text` read as one value name, the whole of it; `None` for any other text (a plain
    /// variable, an expression holding names).
    pub fn parse(text: &str) -> Option<ValueName> {
        match names_in(text).as_slice() {
            [o] if o.start == 0 && o.end == text.len() => Some(o.name.clone()),
            _ => None,
        }
    }

    /// The line of a name qualified by a line alone (`n@12`), the load of `n` there.
    pub fn line(&self) -> Option<u32> {
        match self.place {
            ValuePlace::At {
                line,
                column: None,
                ordinal: None,
            } => Some(line),
            _ => None,
        }
    }

    /// What a name qualified by a bare word (`x@f`) is: a callee's variable where `f` is a
    /// callee, the iteration number of the loop over `j` for `k@j`; `None` otherwise (a
    /// text with an `@`, not a name).
    pub fn settle(self, is_callee: &dyn Fn(&str) -> bool) -> Option<ValueName> {
        match &self.place {
            ValuePlace::Callee {
                function,
                line: None,
                ordinal: None,
            } if !is_callee(function) => (self.variable == "k").then(|| ValueName {
                variable: function.clone(),
                place: ValuePlace::Iteration,
            }),
            _ => Some(self),
        }
    }
}

/// The name as warpwise writes it: the inverse of [`ValueName::parse`].
impl fmt::Display for ValueName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match &self.place {
            ValuePlace::Iteration => return write!(f, "k@{}", self.variable),
            ValuePlace::At {
                line,
                column,
                ordinal,
            } => {
                let column = column.map(|c| format!(":{c}")).unwrap_or_default();
                let ordinal = ordinal.map(|o| format!("?{o}")).unwrap_or_default();
                format!("{line}{column}{ordinal}")
            }
            ValuePlace::Unplaced { ordinal } => format!("?{ordinal}"),
            ValuePlace::Before { line } => format!("L{line}"),
            ValuePlace::Global { ordinal: 1 } => "global".to_string(),
            ValuePlace::Global { ordinal } => format!("global{ordinal}"),
            ValuePlace::Callee {
                function,
                line,
                ordinal,
            } => {
                let line = line.map(|l| format!(":{l}")).unwrap_or_default();
                let ordinal = ordinal.map(|o| format!("@?{o}")).unwrap_or_default();
                format!("{function}{line}{ordinal}")
            }
        };
        write!(f, "{}@{suffix}", self.variable)
    }
}

/// Every value name of `text`, a name inside another's variable first (`i@12`, then
/// `a[i@12]@14`).
pub fn each_name(text: &str, f: &mut dyn FnMut(&Occurrence)) {
    for o in names_in(text) {
        each_name(&o.name.variable, f);
        f(&o);
    }
}

/// Whether `text` holds a value name.
pub fn has_place(text: &str) -> bool {
    text.contains('@') && !names_in(text).is_empty()
}

/// `text` with each value name written as its variable alone (`96*SD@684.max_num_nucs` is
/// `96*SD.max_num_nucs`, `a[i@12]@14` is `a[i]`): for a text that says the place otherwise,
/// or reads the variable where the value is the same.
pub fn without_places(text: &str) -> String {
    if !text.contains('@') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for o in names_in(text) {
        out.push_str(&text[last..o.start]);
        out.push_str(&without_places(&o.name.variable));
        last = o.end;
    }
    out.push_str(&text[last..]);
    out
}

// The outermost qualified names of `text` as `(start, end, what)`, in order; none inside
/// a string literal (a printed `"a@b"`).
pub fn names_in(text: &str) -> Vec<Occurrence> {
    let b = text.as_bytes();
    let literal = literal_spans(b);
    let mut out: Vec<Occurrence> = Vec::new();
    for (at, _) in text.match_indices('@') {
        if literal.iter().any(|(s, e)| (*s..*e).contains(&at)) {
            continue;
        }
        let start = head_start(b, at);
        if start == at || out.last().is_some_and(|o| at < o.end) {
            continue;
        }
        let Some((end, place)) = place_after(text, at + 1) else {
            continue;
        };
        // A name whose head starts inside an earlier one is no name (`_@global->@f`).
        if out.iter().any(|o| o.start < start && start < o.end) {
            continue;
        }
        // The ones a longer name holds give way to it (`i@12` in `a[i@12]@14`).
        out.retain(|o| o.start < start);
        let variable = text[start..at].to_string();
        out.push(Occurrence {
            start,
            end,
            name: ValueName { variable, place },
        });
    }
    out
}

/// The byte ranges of the string literals of `b` (a report prints a literal as the
/// source writes it).
fn literal_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] == b'"' {
            let start = k;
            k += 1;
            while k < b.len() && b[k] != b'"' {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            out.push((start, k.min(b.len())));
        }
        k += 1;
    }
    out
}

/// Where the variable whose qualifier starts at `at` begins: back over identifier
/// characters, `.`, `->` and balanced brackets (which may hold qualified names).
fn head_start(b: &[u8], at: usize) -> usize {
    let mut start = at;
    let mut depth = 0usize;
    while start > 0 {
        let c = b[start - 1];
        let ok = match c {
            b']' | b')' => {
                depth += 1;
                true
            }
            b'[' | b'(' if depth > 0 => {
                depth -= 1;
                true
            }
            _ if depth > 0 => true,
            b'>' => start >= 2 && b[start - 2] == b'-',
            b'-' => b.get(start) == Some(&b'>'),
            c => c.is_ascii_alphanumeric() || c == b'_' || c == b'.',
        };
        if !ok {
            break;
        }
        start -= 1;
    }
    // Brackets left open are not part of the name, nor is what precedes its first letter
    // (a value the program's text names may be parenthesized: `(*images)@?1`).
    while start < at
        && (depth > 0 || !(b[start].is_ascii_alphabetic() || b[start] == b'_' || b[start] == b'('))
    {
        if matches!(b[start], b']' | b')') {
            depth = depth.saturating_sub(1);
        }
        start += 1;
    }
    // A name starts a word: one whose first characters are digits (`1_@1`) is none.
    if start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
        return at;
    }
    start
}

/// The place a qualifier starting at `k` (just after `@`) names, and where it ends: `12`,
/// `12:5`, `12?2`, `?2`, `L12`, `global`, `global2`, `f:12`, `f@?2`, `f:12@?2`, or a bare word
/// (`f`, `j`: see [`ValueName::settle`]). `None` for any other text after an `@`.
pub(crate) fn place_after(text: &str, k: usize) -> Option<(usize, ValuePlace)> {
    let b = text.as_bytes();
    let digits = |from: usize| -> Option<(usize, u32)> {
        let end = from
            + b[from.min(b.len())..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
        number(&text[from..end]).map(|n| (end, n))
    };
    let ordinal = |from: usize, mark: &[u8]| -> Option<(usize, u32)> {
        b[from..]
            .starts_with(mark)
            .then(|| digits(from + mark.len()))
            .flatten()
    };
    let (end, place) = if let Some((end, line)) = digits(k) {
        let (end, column) = match ordinal(end, b":") {
            Some((e, c)) => (e, Some(c)),
            None => (end, None),
        };
        let (end, ordinal) = match ordinal(end, b"?") {
            Some((e, o)) => (e, Some(o)),
            None => (end, None),
        };
        (
            end,
            ValuePlace::At {
                line,
                column,
                ordinal,
            },
        )
    } else if let Some((end, ordinal)) = ordinal(k, b"?") {
        (end, ValuePlace::Unplaced { ordinal })
    } else {
        let word = b[k..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if word == 0 || !(b[k].is_ascii_alphabetic() || b[k] == b'_') {
            return None;
        }
        let function = &text[k..k + word];
        let after = k + word;
        let line = ordinal(after, b":");
        let end = line.map_or(after, |(e, _)| e);
        let called = ordinal(end, b"@?");
        if line.is_some() || called.is_some() {
            (
                called.map_or(end, |(e, _)| e),
                ValuePlace::Callee {
                    function: function.to_string(),
                    line: line.map(|(_, l)| l),
                    ordinal: called.map(|(_, o)| o),
                },
            )
        } else if let Some(line) = function.strip_prefix('L').and_then(number) {
            (after, ValuePlace::Before { line })
        } else if let Some(ordinal) = function.strip_prefix("global").and_then(|rest| {
            // The first is `global`; `global1` is no name the analyses write.
            if rest.is_empty() {
                Some(1)
            } else {
                number(rest).filter(|k| *k >= 2)
            }
        }) {
            (after, ValuePlace::Global { ordinal })
        } else {
            // A bare word: a callee's variable or a loop's iteration number, which the
            // legend tells apart (`Qualified::settle`).
            let place = ValuePlace::Callee {
                function: function.to_string(),
                line: None,
                ordinal: None,
            };
            (after, place)
        }
    };
    // A longer word is no qualifier (`x@12abc`).
    let part_of_word = b
        .get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'@');
    (!part_of_word).then_some((end, place))
}

/// The number `d` writes as the analyses write numbers (digits, no leading zero), so that
/// writing it back gives `d` again.
fn number(d: &str) -> Option<u32> {
    let canonical =
        !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && (d == "0" || !d.starts_with('0'));
    canonical.then(|| d.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read as one value name: its variable and place, written back as `text`.
    fn check(text: &str, expected: Option<(&str, ValuePlace)>) {
        let parsed = ValueName::parse(text);
        let got = parsed
            .as_ref()
            .map(|v| (v.variable.as_str(), v.place.clone()));
        assert_eq!(got, expected, "{text}");
        if let Some(v) = parsed {
            assert_eq!(v.to_string(), text);
        }
    }

    fn at(line: u32, column: Option<u32>, ordinal: Option<u32>) -> ValuePlace {
        ValuePlace::At {
            line,
            column,
            ordinal,
        }
    }

    #[test]
    fn every_place_reads_and_writes_back() {
        check("n@12", Some(("n", at(12, None, None))));
        check("x@12:5", Some(("x", at(12, Some(5), None))));
        check("x@12?2", Some(("x", at(12, None, Some(2)))));
        check(
            "c->n@?2",
            Some(("c->n", ValuePlace::Unplaced { ordinal: 2 })),
        );
        check("n@L3", Some(("n", ValuePlace::Before { line: 3 })));
        check("t@global", Some(("t", ValuePlace::Global { ordinal: 1 })));
        check("t@global2", Some(("t", ValuePlace::Global { ordinal: 2 })));
        check(
            "i@f:77@?1",
            Some((
                "i",
                ValuePlace::Callee {
                    function: "f".into(),
                    line: Some(77),
                    ordinal: Some(1),
                },
            )),
        );
        check("a[i@12]@14", Some(("a[i@12]", at(14, None, None))));
        check(
            "z[i3 - 1][i2 - 1]@753",
            Some(("z[i3 - 1][i2 - 1]", at(753, None, None))),
        );
        check(
            "(*im)@?2",
            Some(("(*im)", ValuePlace::Unplaced { ordinal: 2 })),
        );
    }

    #[test]
    fn other_texts_are_no_one_name() {
        // A bare word after `@` reads as a callee's variable (`y@L07`, `t@global1`); the
        // legend settles whether it is one (`ValueName::settle`).
        for text in [
            "n", "n@12 + 1", "x@012", "a@12abc", "@3", "\"u@1\"", "x@", "x@?",
        ] {
            check(text, None);
        }
    }

    #[test]
    fn a_line_alone_is_a_load_site() {
        let line = |t: &str| ValueName::parse(t).and_then(|v| v.line());
        assert_eq!(line("firstcol@161"), Some(161));
        assert_eq!(line("x@12:5"), None);
        assert_eq!(line("n@L3"), None);
        assert_eq!(line("x@?2"), None);
    }

    #[test]
    fn places_are_removed_and_member_paths_kept() {
        for (text, plain) in [
            ("96*SD@684.max_num_nucs", "96*SD.max_num_nucs"),
            ("n@L3 + i@12:5 + x@?2 + g@global2", "n + i + x + g"),
            ("a[i@12]@14 + i@f:3@?1", "a[i] + i"),
            ("8*d.length", "8*d.length"),
            ("\"user@1\" + x@1", "\"user@1\" + x"),
        ] {
            assert_eq!(without_places(text), plain, "{text}");
            assert_eq!(has_place(text), text != plain, "{text}");
        }
    }

    #[test]
    fn names_inside_a_variable_come_first() {
        let mut seen = Vec::new();
        each_name("a[i@12]@14 + b@L2", &mut |o| seen.push(o.name.to_string()));
        assert_eq!(seen, ["i@12", "a[i@12]@14", "b@L2"]);
    }

    proptest::proptest! {
        /// Any text: every name found in it is written back as the text it was read from,
        /// and a text read as one name is that name.
        #[test]
        fn names_write_back_as_read(
            text in "([a-c]|@|\\?|[0-2]|:|->|\\.|\\[|\\]|\\(|\\)|\"| |\\+|_|f|L|global){0,32}"
        ) {
            for o in names_in(&text) {
                proptest::prop_assert_eq!(o.name.to_string(), &text[o.start..o.end]);
            }
            if let Some(v) = ValueName::parse(&text) {
                proptest::prop_assert_eq!(v.to_string(), text);
            }
        }
    }
}
