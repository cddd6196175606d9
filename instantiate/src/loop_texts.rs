//! The loops of a JSON report as texts, found by a scan of the bytes rather than a parse:
//! each can then be parsed apart from the others, on any core.

/// What a loop that is not an object is called.
const ELEMENT: &str = "an element that is not an object";

/// Hands `each` the text of every element of the `loops` array of a JSON report, in
/// order, found by a scan of the bytes (strings and nesting) instead of a parse: for a
/// report read through once already, a loop's text can then be parsed apart from the
/// others, on any core. An error where the text is not as such a report would have it
/// (a top-level string with an escape, no `loops` array, unbalanced brackets: the file
/// changed since), or where `each` gives one; the caller reads the report otherwise.
pub fn each_loop_text<R: std::io::BufRead>(
    reader: R,
    each: impl FnMut(Vec<u8>) -> Result<(), String>,
) -> Result<(), String> {
    scan(reader, each, None)
}

/// [`each_loop_text`], also giving the report with every loop's text replaced by `{}`:
/// the rest of the report, to be parsed apart from the loops (a JSON text is valid where
/// its outline and the texts put in place of `{}` are).
pub fn each_loop_text_and_outline<R: std::io::BufRead>(
    reader: R,
    each: impl FnMut(Vec<u8>) -> Result<(), String>,
) -> Result<Vec<u8>, String> {
    let mut outline = Vec::new();
    scan(reader, each, Some(&mut outline))?;
    Ok(outline)
}

fn scan<R: std::io::BufRead>(
    mut reader: R,
    mut each: impl FnMut(Vec<u8>) -> Result<(), String>,
    mut outline: Option<&mut Vec<u8>>,
) -> Result<(), String> {
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    // The last string at the top level, while it is read and once it is.
    let (mut top_string, mut key) = (false, Vec::new());
    // Whether the top-level value about to start is that of `loops`; whether it is open;
    // whether it has been read.
    let (mut loops_next, mut in_loops, mut loops_read) = (false, false, false);
    let mut element: Vec<u8> = Vec::new();
    loop {
        let buf = reader.fill_buf().map_err(|e| e.to_string())?;
        let n = buf.len();
        if n == 0 {
            break;
        }
        // Where the element being read starts in this buffer.
        let mut start = (!element.is_empty()).then_some(0);
        // Where the bytes of this buffer outside the elements, not yet in the outline, start.
        let mut outside = 0;
        let mut i = 0;
        while i < n {
            if in_string {
                if escaped {
                    escaped = false;
                    i += 1;
                    continue;
                }
                // Straight to the end of the string or its next escape.
                let Some(p) = buf[i..].iter().position(|&b| b == b'"' || b == b'\\') else {
                    if top_string {
                        key.extend_from_slice(&buf[i..]);
                    }
                    i = n;
                    continue;
                };
                if top_string {
                    key.extend_from_slice(&buf[i..i + p]);
                }
                i += p;
                if buf[i] == b'\\' {
                    if top_string {
                        return Err("a top-level string with an escape".into());
                    }
                    escaped = true;
                } else {
                    in_string = false;
                    top_string = false;
                }
                i += 1;
                continue;
            }
            match buf[i] {
                b'"' if depth == 2 && in_loops => return Err(ELEMENT.into()),
                b'"' => {
                    in_string = true;
                    if depth == 1 {
                        top_string = true;
                        key.clear();
                    }
                }
                c @ (b'{' | b'[') => {
                    if depth == 1 {
                        in_loops = loops_next && c == b'[';
                        loops_next = false;
                    } else if depth == 2 && in_loops {
                        start = Some(i);
                        if let Some(outline) = outline.as_deref_mut() {
                            outline.extend_from_slice(&buf[outside..i]);
                            outline.extend_from_slice(b"{}");
                        }
                    }
                    depth += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or("unbalanced brackets")?;
                    if depth == 2 && in_loops {
                        let from = start.take().ok_or(ELEMENT)?;
                        element.extend_from_slice(&buf[from..=i]);
                        each(std::mem::take(&mut element))?;
                        outside = i + 1;
                    } else if depth == 1 && in_loops {
                        if loops_read {
                            return Err("two `loops`".into());
                        }
                        in_loops = false;
                        loops_read = true;
                    }
                }
                b':' if depth == 1 => loops_next = key == b"loops",
                b',' if depth == 1 => loops_next = false,
                c if depth == 2 && in_loops && !(c == b',' || c.is_ascii_whitespace()) => {
                    return Err(ELEMENT.into())
                }
                _ => {}
            }
            i += 1;
        }
        match start {
            Some(from) => element.extend_from_slice(&buf[from..]),
            None => {
                if let Some(outline) = outline.as_deref_mut() {
                    outline.extend_from_slice(&buf[outside..]);
                }
            }
        }
        reader.consume(n);
    }
    if depth != 0 || in_string || !loops_read {
        return Err("not a complete report".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(report: &str, chunk: usize) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        // Small buffers: elements, strings and escapes split between reads.
        let reader = std::io::BufReader::with_capacity(chunk, report.as_bytes());
        each_loop_text(reader, |t| {
            out.push(String::from_utf8(t).unwrap());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn elements_of_loops_are_found_whatever_the_layout() {
        let report = r#"{"skipped": [{"a": 1}], "schema": "s", "note": {"loops": [{"x": 0}]},
  "loops": [
    {"id": "a}]\"{[", "n": [1, {"b": "\\"}], "e": {}},
    {"id": "b:,", "loops": [{"c": 2}]}
  ],
  "after": [{"d": 3}]
}"#;
        let expected = vec![
            r#"{"id": "a}]\"{[", "n": [1, {"b": "\\"}], "e": {}}"#.to_string(),
            r#"{"id": "b:,", "loops": [{"c": 2}]}"#.to_string(),
        ];
        for chunk in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(texts(report, chunk), Ok(expected.clone()), "{chunk}");
        }
        assert_eq!(texts(r#"{"schema": "s", "loops": []}"#, 5), Ok(Vec::new()));
    }

    #[test]
    fn the_outline_is_the_report_without_its_loops() {
        let report = r#"{"schema": "s", "loops": [ {"id": "}", "n": [{}]},
  {"b": 1} ], "after": [{"d": 3}]}"#;
        for chunk in [1, 2, 3, 7, 4096] {
            let reader = std::io::BufReader::with_capacity(chunk, report.as_bytes());
            let outline = each_loop_text_and_outline(reader, |_| Ok(()));
            let expected = r#"{"schema": "s", "loops": [ {},
  {} ], "after": [{"d": 3}]}"#;
            assert_eq!(outline, Ok(expected.as_bytes().to_vec()), "{chunk}");
        }
    }

    #[test]
    fn what_is_not_such_a_report_is_an_error() {
        for report in [
            r#"{"schema": "s"}"#,
            r#"{"schema": "s", "loops": [{"a": 1}"#,
            r#"{"schema": "s", "loops": [{"a": "1}]}"#,
            r#"{"schema": "s", "loops": [1]}"#,
            r#"{"schema": "s", "loops": ["a"]}"#,
            r#"{"lo\u006fps": [{"a": 1}]}"#,
            r#"{"loops": [], "loops": []}"#,
            r#"{"loops": []}]"#,
        ] {
            assert!(texts(report, 3).is_err(), "{report}");
        }
    }

    #[test]
    fn an_error_of_each_stops_the_scan() {
        let mut seen = 0;
        let got = each_loop_text(r#"{"loops": [{}, {}, {}]}"#.as_bytes(), |_| {
            seen += 1;
            Err("stop".into())
        });
        assert_eq!((got, seen), (Err("stop".to_string()), 1));
    }
}
