//! A linear pre-scan of YAML input for nesting deeper than any report or profile has, so a
//! hostile document (100,000 nested `[`) is refused at once instead of after a long parse.

/// Nesting deeper than this is refused. Reports and profiles nest about six levels; the
/// YAML parser itself gives up at 128.
pub const MAX_NESTING: usize = 64;

/// Where `text` first nests deeper than `limit` (1-based line and column), counting flow
/// collections (`[`, `{`) outside quoted scalars and comments, and block nesting estimated
/// from indentation plus the `- ` sequence markers that open a line.
pub fn too_deep(text: &str, limit: usize) -> Option<(usize, usize)> {
    let mut guard = Nesting::new(limit);
    text.lines().find_map(|line| guard.line(line))
}

/// [`too_deep`] a line at a time, for text read a piece at a time: the open flow
/// collections are all it carries from one line to the next.
#[derive(Debug)]
pub struct Nesting {
    limit: usize,
    flow: usize,
    line_no: usize,
}

impl Nesting {
    pub fn new(limit: usize) -> Nesting {
        Nesting {
            limit,
            flow: 0,
            line_no: 0,
        }
    }

    /// Where the next line of the text (without its line break) nests deeper than the
    /// limit, as [`too_deep`] gives it.
    pub fn line(&mut self, line: &str) -> Option<(usize, usize)> {
        self.line_no += 1;
        let (limit, line_no) = (self.limit, self.line_no);
        if self.flow == 0 {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let mut rest = &line[indent..];
            let mut markers = 0;
            while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
                markers += 1;
                rest = after.trim_start_matches(' ');
            }
            if indent / 2 + markers > limit {
                return Some((line_no, indent + 1));
            }
        }
        // Bytes, not chars: every character that matters is ASCII, and a multi-byte
        // character's bytes are none of them (decoding chars was most of a line's cost).
        let bytes = line.as_bytes();
        let mut quote: Option<u8> = None;
        let mut previous = b' ';
        let mut at = 0;
        while at < bytes.len() {
            let c = bytes[at];
            at += 1;
            match quote {
                Some(b'"') if c == b'\\' => {
                    at += 1;
                }
                Some(q) if c == q => {
                    // `''` inside a single-quoted scalar is an escaped quote.
                    if q == b'\'' && bytes.get(at) == Some(&b'\'') {
                        at += 1;
                    } else {
                        quote = None;
                    }
                }
                Some(_) => {}
                None => match c {
                    b'#' if previous == b' ' || at == 1 => break,
                    b'"' | b'\'' => quote = Some(c),
                    b'[' | b'{' => {
                        self.flow += 1;
                        if self.flow > limit {
                            return Some((line_no, line[..at - 1].chars().count() + 1));
                        }
                    }
                    b']' | b'}' => self.flow = self.flow.saturating_sub(1),
                    _ => {}
                },
            }
            previous = c;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: Option<(usize, usize)>) {
        assert_eq!(too_deep(text, 4), expected, "{text}");
    }

    #[test]
    fn nesting_within_the_limit_passes() {
        check("a:\n  b:\n    - [1, [2, {c: 3}]]\n", None);
        check("s: '[[[[[[[['\nt: \"{{{{{{\"\n# [[[[[[[[[\n", None);
        check("u: 'it''s [[[[[['\n", None);
    }

    #[test]
    fn deep_flow_collections_are_found_where_they_pass_the_limit() {
        check("loops: [[[[[1]]]]]\n", Some((1, 12)));
        check("a:\n  b: {c: {d: {e: {f: {g: 1}}}}}\n", Some((2, 22)));
    }

    #[test]
    fn deep_blocks_are_found_by_indentation_and_sequence_markers() {
        check("- - - - - 1\n", Some((1, 1)));
        check(
            "a:\n  b:\n    c:\n      d:\n        e:\n          f: 1\n",
            Some((6, 11)),
        );
    }
}
