//! YAML that YAML 1.1 readers load to the same values as YAML 1.2 readers: serde_yaml
//! leaves plain the scalars the 1.2 core schema reads as strings, but PyYAML, the most used
//! YAML reader, follows 1.1, where `=` is the "value" tag (a load error), `<<` a merge key,
//! `on`/`off`/`yes`/`no` booleans, `1:20` a sexagesimal 80 and `1_000` an integer. Every
//! report and profile warpwise writes goes through [`to_string`], which quotes exactly
//! those scalars.

use serde::Serialize;

/// `value` as YAML whose plain scalars mean the same under YAML 1.1 and 1.2.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(value).map(|text| quote_yaml11_scalars(&text))
}

/// Single-quotes the plain scalars of serde_yaml's block output that YAML 1.1 reads as
/// another type. Lines of block scalars (`|`, `>`) are content and stay as they are.
pub fn quote_yaml11_scalars(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    // Indentation of the line that opened a block scalar: deeper lines are its content.
    let mut block_parent: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        if let Some(parent) = block_parent {
            if body.trim().is_empty() || indent > parent {
                out.push_str(line);
                continue;
            }
            block_parent = None;
        }
        let (start, value) = value_of_line(body, indent);
        if value.starts_with('|') || value.starts_with('>') {
            block_parent = Some(indent);
        }
        if is_plain(value) && retyped_by_yaml11(value) {
            out.push_str(&body[..start]);
            out.push('\'');
            out.push_str(&value.replace('\'', "''"));
            out.push('\'');
            out.push_str(&line[body.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The byte offset and text of the value a block-style line holds: after any `- `
/// sequence markers and a `key: `, or the whole rest for a sequence item.
fn value_of_line(body: &str, indent: usize) -> (usize, &str) {
    let mut at = indent;
    while body[at..].starts_with("- ") {
        at += 2;
    }
    if body[at..] == *"-" {
        return (body.len(), "");
    }
    let rest = &body[at..];
    let key_end = match rest.as_bytes().first() {
        Some(b'\'') => quoted_end(rest, '\''),
        Some(b'"') => quoted_end(rest, '"'),
        _ => colon_space(rest).or_else(|| rest.strip_suffix(':').map(str::len)),
    };
    match key_end {
        Some(end) if rest[end..].starts_with(": ") => (at + end + 2, &body[at + end + 2..]),
        Some(end) if rest[end..] == *":" => (body.len(), ""),
        // A quoted scalar item, or a plain one without a key.
        _ => (at, rest),
    }
}

/// Where `text` first has `": "`, as `str::find` gives it, without the setup of a
/// substring search for every line (a line's `: ` is near its start).
fn colon_space(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(p) = bytes[from..].iter().position(|&b| b == b':') {
        let at = from + p;
        if bytes.get(at + 1) == Some(&b' ') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The byte offset just past the closing quote of the scalar that `text` starts with.
fn quoted_end(text: &str, quote: char) -> Option<usize> {
    let mut chars = text.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                chars.next();
            } else {
                return Some(i + 1);
            }
        }
    }
    None
}

/// A plain (unquoted, not a collection or a block scalar header) scalar.
fn is_plain(value: &str) -> bool {
    !value.is_empty()
        && !matches!(
            value.as_bytes()[0],
            b'\'' | b'"' | b'|' | b'>' | b'[' | b'{' | b'&' | b'*' | b'!' | b'#'
        )
}

/// Whether YAML 1.1's resolver reads `s` as something other than the string `s`, where the
/// 1.2 core schema reads it as a string (serde_yaml quotes the rest itself).
fn retyped_by_yaml11(s: &str) -> bool {
    const BOOLS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF",
    ];
    // Compared with the booleans only where it is as short as they are: every line's
    // value is tested.
    if s == "=" || s == "<<" || (s.len() <= 3 && BOOLS.contains(&s)) {
        return true;
    }
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    let digits_ = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    // Integers and floats with `_` separators, and base-60 numbers (`1:20`, `1:20.5`).
    let underscored = s.contains('_')
        && (digits_(unsigned)
            || unsigned.strip_prefix("0b").is_some_and(|t| {
                !t.is_empty() && t.bytes().all(|b| matches!(b, b'0' | b'1' | b'_'))
            })
            || unsigned.strip_prefix("0x").is_some_and(|t| {
                !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_')
            })
            || unsigned.split_once('.').is_some_and(|(a, b)| {
                (a.is_empty() || digits_(a))
                    && (b.is_empty() || digits_(b.split(['e', 'E']).next().unwrap_or(b)))
            }));
    let sexagesimal = unsigned.contains(':') && {
        let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let mut parts = whole.split(':');
        let first = parts.next().unwrap_or("");
        digits_(first)
            && first.as_bytes()[0] != b'_'
            && parts.all(|p| {
                !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()) && {
                    let v: u32 = p.parse().unwrap_or(60);
                    v < 60
                }
            })
            && fraction.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    };
    underscored || sexagesimal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        assert_eq!(quote_yaml11_scalars(input), expected, "{input}");
        // The quoting changes no value for a YAML 1.2 reader.
        let before: serde_yaml::Value = serde_yaml::from_str(input).unwrap();
        let after: serde_yaml::Value = serde_yaml::from_str(expected).unwrap();
        assert_eq!(before, after, "{input}");
    }

    #[test]
    fn scalars_yaml_1_1_retypes_are_quoted() {
        check("operator: =\n", "operator: '='\n");
        check("- var: on\n  x: y\n", "- var: 'on'\n  x: 'y'\n");
        // `n` and `y` are booleans to YAML 1.1 readers that follow the spec (go-yaml v2).
        check("upper: n\n", "upper: 'n'\n");
        check("- =\n- <<\n- NO\n", "- '='\n- '<<'\n- 'NO'\n");
        check(
            "a: 1:20\nb: 1_000\nc: 1:75\n",
            "a: '1:20'\nb: '1_000'\nc: 1:75\n",
        );
        check("'a: b': off\n", "'a: b': 'off'\n");
    }

    #[test]
    fn everything_else_is_left_as_it_is() {
        for text in [
            "lower: '0'\nupper: m\ntrip_count: n - 1\n",
            "text: |-\n  x: on\n  =\nnext: 3\n",
            "items: []\nmap: {}\n- - a\n",
            "key: 'it''s = on'\n",
            "id: a.c:12:5\nv: -1\n",
        ] {
            assert_eq!(quote_yaml11_scalars(text), text);
        }
    }

    #[test]
    fn serialized_values_round_trip() {
        let values = vec!["=", "on", "y", "1:20", "x", "a: b", "multi\nline = on"];
        let text = to_string(&values).unwrap();
        let back: Vec<String> = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back, values);
        assert!(text.contains("- '='\n"), "{text}");
    }
}
