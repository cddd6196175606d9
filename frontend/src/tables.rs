//! Leaves the values of large numeric tables out of lang-c's input.
//!
//! spglib's `msg_database.c` is 7 MB, nearly all of it `static const int` tables of
//! numbers: lang-c's packrat parse and the lowering of their initializers (one store per
//! number) took four times gcc's whole compile. No analysis reads a table's values (the
//! loops index tables; their sections, types and lengths come from the declaration), so a
//! top-level initializer of at least [`MIN_TABLE_BYTES`] that holds nothing but numbers,
//! signs, commas and braces is replaced by one that keeps the array's length and sets one
//! element to zero: `{[N-1]=0}`, or `{[N-1]={0}}` when each element is braced, written
//! over its first bytes (newlines too: a token must not break); the rest of it is blanked,
//! so every offset after it stays put (spans map through the unmodified text). The globals
//! whose values were left out are marked ([`crate::ir::Global::values_elided`]): the
//! interpreter refuses to start with them rather than read zeros.
//!
//! The length must not change, and with brace elision (`int a[][2] = {1, 2, 3, 4}` has two
//! rows) a count of numbers is not a count of elements: an initializer of bare numbers is
//! rewritten only for a one-dimensional array of an arithmetic type named by keywords
//! (`static const unsigned int t[] = {...}`), or when the declarator gives the length.

/// Initializers shorter than this stay whole: a small table costs little, and a program the
/// tests interpret has all its values. At 64 KiB, spglib's `sitesym_database.c` (numeric
/// tables of 48 KB and 18 KB) took 1.14x gcc's compile, most of it lang-c on numbers; at 8 KiB 0.70x, with
/// every report of the thirteen applications byte-identical.
pub const MIN_TABLE_BYTES: usize = 8 * 1024;

/// Specifier words of an arithmetic element type: a declaration made only of these and one
/// name has scalar elements (a typedef name might be a struct or an array).
const ARITHMETIC_WORDS: &[&str] = &[
    "static",
    "const",
    "volatile",
    "extern",
    "signed",
    "unsigned",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "_Bool",
    "__signed__",
    "__const",
    "__const__",
];

/// One table whose values were left out: the byte offset of its initializer's `{`.
pub type ElidedTable = usize;

/// `text` with the values of large numeric tables left out, and where; `None` when there
/// is none.
pub(crate) fn without_table_values(text: &str) -> Option<(String, Vec<ElidedTable>)> {
    if text.len() < MIN_TABLE_BYTES {
        return None;
    }
    let b = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut elided = Vec::new();
    let mut scan = Scanner::new(b);
    while let Some(eq) = scan.next_top_level_assignment() {
        let Some(open) = scan.skip_blank(eq + 1).filter(|&k| b.get(k) == Some(&b'{')) else {
            continue;
        };
        let Some(table) = numeric_initializer(b, open) else {
            continue;
        };
        scan.resume_at(table.close + 1);
        if table.close + 1 - open < MIN_TABLE_BYTES || table.elements == 0 {
            continue;
        }
        let replacement = match declarator_shape(b, eq) {
            Some(Shape::SizedArray) => "{0}".to_string(),
            Some(Shape::UnsizedArray { .. }) if table.braced => {
                format!("{{[{}]={{0}}}}", table.elements - 1)
            }
            Some(Shape::UnsizedArray { scalar: true }) => {
                format!("{{[{}]=0}}", table.elements - 1)
            }
            _ => continue,
        };
        let bytes = out.get_or_insert_with(|| b.to_vec());
        for byte in &mut bytes[open..=table.close] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        bytes[open..open + replacement.len()].copy_from_slice(replacement.as_bytes());
        elided.push(open);
    }
    // Only ASCII bytes were written over whole tokens: the text is still UTF-8.
    let out = String::from_utf8(out?).ok()?;
    Some((out, elided))
}

/// A walk over preprocessed text that finds `=` at file scope (outside braces, brackets
/// and parentheses), skipping literals and directive lines.
struct Scanner<'b> {
    b: &'b [u8],
    i: usize,
    depth: usize,
    at_line_start: bool,
}

impl<'b> Scanner<'b> {
    fn new(b: &'b [u8]) -> Self {
        Scanner {
            b,
            i: 0,
            depth: 0,
            at_line_start: true,
        }
    }

    fn resume_at(&mut self, i: usize) {
        self.i = i;
        self.at_line_start = false;
    }

    fn next_top_level_assignment(&mut self) -> Option<usize> {
        let b = self.b;
        while self.i < b.len() {
            let k = self.i;
            let c = b[k];
            self.i += 1;
            match c {
                b'\n' => {
                    self.at_line_start = true;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => continue,
                b'#' if self.at_line_start => {
                    self.i = line_end(b, k);
                    continue;
                }
                _ => {}
            }
            self.at_line_start = false;
            match c {
                b'"' | b'\'' => self.i = literal_end(b, k),
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b'=' if self.depth == 0 => {
                    let before = k.checked_sub(1).map(|p| b[p]);
                    let after = b.get(k + 1).copied();
                    let compound = matches!(
                        before,
                        Some(b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%')
                            | Some(b'&' | b'|' | b'^')
                    );
                    if after == Some(b'=') {
                        self.i += 1;
                    } else if !compound {
                        return Some(k);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The first byte from `k` on that is not white space or part of a directive line.
    fn skip_blank(&self, mut k: usize) -> Option<usize> {
        let b = self.b;
        let mut line_start = false;
        while k < b.len() {
            match b[k] {
                b'\n' => line_start = true,
                b' ' | b'\t' | b'\r' => {}
                b'#' if line_start => {
                    k = line_end(b, k);
                    continue;
                }
                _ => return Some(k),
            }
            k += 1;
        }
        None
    }
}

/// The offset of the newline ending the line that holds `k` (or the end).
fn line_end(b: &[u8], k: usize) -> usize {
    b[k..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |n| k + n)
}

/// The offset just past the string or character literal opening at `k`.
fn literal_end(b: &[u8], k: usize) -> usize {
    let quote = b[k];
    let mut i = k + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// A brace initializer of numbers only.
struct Table {
    /// The offset of the matching `}`.
    close: usize,
    /// Its elements at the outermost level.
    elements: usize,
    /// Whether every one of them is itself in braces.
    braced: bool,
}

/// The initializer opening at `open` if it holds nothing but numbers, signs, commas,
/// braces, white space and directive lines.
fn numeric_initializer(b: &[u8], open: usize) -> Option<Table> {
    let mut depth = 0usize;
    let mut elements = 0usize;
    let mut braced = true;
    // Whether the current outermost element has begun (a trailing comma adds none).
    let mut in_element = false;
    let mut line_start = false;
    let mut i = open;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' if line_start => {
                i = line_end(b, i);
                continue;
            }
            _ => line_start = false,
        }
        if depth == 1 && !in_element && c != b',' && c != b'}' {
            in_element = true;
            elements += 1;
            braced &= c == b'{';
        }
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(Table {
                        close: i,
                        elements,
                        braced,
                    });
                }
            }
            b',' => {
                if depth == 1 {
                    in_element = false;
                }
            }
            b'+' | b'-' => {}
            b'0'..=b'9' | b'.' => {
                // A preprocessing number: digits, letters (hex digits, exponents,
                // suffixes), dots, and a sign after an exponent letter.
                let start = i;
                i += 1;
                while i < b.len() {
                    let d = b[i];
                    // C99 6.4.8: `e+`, `E-`, `p+`, `P-` continue a preprocessing number.
                    let signed_exponent =
                        matches!(d, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                    if d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || signed_exponent {
                        i += 1;
                    } else {
                        break;
                    }
                }
                if !b[start].is_ascii_digit() && !b.get(start + 1).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                continue;
            }
            _ => return None,
        }
        i += 1;
    }
    None
}

/// What the declarator before the `=` at `eq` declares, as far as the rewrite needs.
enum Shape {
    /// An array whose outermost length is written (`t[256]`, `t[4][8]`).
    SizedArray,
    /// An array of `[]` length, with whether its elements are of an arithmetic type named
    /// by keywords only and it has one dimension.
    UnsizedArray { scalar: bool },
}

/// The shape of the declaration ending at `eq`: back to the previous `;`, `}` or the
/// start of the text; `None` for anything but `SPECIFIERS NAME[...]...` (attributes,
/// pointers, parentheses, several declarators).
fn declarator_shape(b: &[u8], eq: usize) -> Option<Shape> {
    let start = b[..eq]
        .iter()
        .rposition(|&c| c == b';' || c == b'}')
        .map_or(0, |p| p + 1);
    let text = std::str::from_utf8(&b[start..eq]).ok()?;
    // Directive lines between the declarations go.
    let words: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    let open = words.find('[')?;
    let (head, dims) = words.split_at(open);
    let dims = dims.trim_end();
    if !dims.ends_with(']') || head.contains(['(', ')', '*', ',', '=']) {
        return None;
    }
    let mut names = head.split_whitespace();
    let name = names.next_back()?;
    let specifiers: Vec<&str> = names.collect();
    let identifier = |w: &str| {
        w.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    if specifiers.is_empty() || !identifier(name) || !specifiers.iter().all(|w| identifier(w)) {
        return None;
    }
    // `[]`, `[N]`, `[][18][2]`: the brackets alone, nothing between pairs.
    let mut pairs = Vec::new();
    let mut rest = dims;
    while let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        pairs.push(inner[..close].trim());
        rest = inner[close + 1..].trim_start();
    }
    if !rest.is_empty() || pairs.iter().any(|p| p.contains(['[', ']'])) {
        return None;
    }
    if !pairs[0].is_empty() {
        return Some(Shape::SizedArray);
    }
    let scalar = pairs.len() == 1 && specifiers.iter().all(|w| ARITHMETIC_WORDS.contains(w));
    Some(Shape::UnsizedArray { scalar })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `head` with a numeric initializer of `n` elements (each `element`) and `tail`.
    fn table(head: &str, element: &str, n: usize, tail: &str) -> String {
        let body: Vec<&str> = std::iter::repeat_n(element, n).collect();
        format!("{head} = {{\n{}\n}};\n{tail}", body.join(",\n"))
    }

    fn rewritten(text: &str) -> Option<String> {
        let (out, elided) = without_table_values(text)?;
        assert_eq!(out.len(), text.len(), "offsets stay put");
        assert_eq!(elided.len(), 1);
        Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn a_large_table_keeps_its_length_and_loses_its_values() {
        let text = table(
            "static const int ops[]",
            "-12345",
            20_000,
            "int f(void) { return ops[3]; }\n",
        );
        assert_eq!(
            rewritten(&text).as_deref(),
            Some("static const int ops[] = {[19999]=0} ; int f(void) { return ops[3]; }")
        );
        let text = table(
            "static const int idx[][2][2]",
            "{ {1, 2}, {3, 0x1F} }",
            5_000,
            "",
        );
        assert_eq!(
            rewritten(&text).as_deref(),
            Some("static const int idx[][2][2] = {[4999]={0}} ;")
        );
        let text = table("const double w[9000]", "1.5e-3", 9_000, "");
        assert_eq!(
            rewritten(&text).as_deref(),
            Some("const double w[9000] = {0} ;")
        );
    }

    #[test]
    fn what_could_change_the_length_or_the_meaning_stays() {
        // Brace elision: 4 numbers are 2 rows of `int [][2]`; a typedef may be a struct.
        for head in ["static const int rows[][2]", "static const pair_t pairs[]"] {
            let text = table(head, "7", 20_000, "");
            assert!(without_table_values(&text).is_none(), "{head}");
        }
        // Names, strings and designators are not numbers.
        for element in ["A_CONSTANT", "\"s\"", "[3] = 1", "sizeof(int)"] {
            let text = table("static const int t[]", element, 20_000, "");
            assert!(without_table_values(&text).is_none(), "{element}");
        }
        // Small tables, and initializers inside functions, stay whole.
        let text = table("static const int small[]", "1", 100, "");
        assert!(without_table_values(&format!("{text}{}", " ".repeat(MIN_TABLE_BYTES))).is_none());
        let inside = format!(
            "void f(void) {{ {} }}",
            table("static const int t[]", "1", 30_000, "")
        );
        assert!(without_table_values(&inside).is_none());
    }
}
