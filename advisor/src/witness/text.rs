//! Source-level text for witnesses: the accessed lvalue of a statement, its subscripts
//! evaluated at concrete values (`a[i + 1]` at `i = 3` is `a[4]`), and variable names.

use num_traits::ToPrimitive;
use std::collections::HashMap;
use symbolic::Var;

/// The lvalue an access's source text names: `B[i]` of `B[i] += A[j]`, `h[k]` of `h[k]++`.
pub fn lvalue(snippet: &str) -> &str {
    let mut depth = 0i32;
    let bytes = snippet.as_bytes();
    for (k, &c) in bytes.iter().enumerate() {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'=' if depth == 0 => {
                let next = bytes.get(k + 1).copied();
                let prev = k.checked_sub(1).map(|p| bytes[p]);
                let prev2 = k.checked_sub(2).map(|p| bytes[p]);
                // `==`, `!=`, `<=`, `>=` compare; `<<=` and `>>=` assign.
                let comparison = next == Some(b'=')
                    || match prev {
                        Some(b'=') | Some(b'!') => true,
                        Some(b'<') | Some(b'>') => prev2 != prev,
                        _ => false,
                    };
                if comparison {
                    continue;
                }
                let mut end = k;
                // Compound assignment: drop the operator (`+=`, `<<=`).
                while end > 0 && b"+-*/%&|^<>".contains(&bytes[end - 1]) {
                    end -= 1;
                }
                return snippet[..end].trim();
            }
            _ => {}
        }
    }
    let t = snippet.trim();
    let t = t
        .strip_prefix("++")
        .or_else(|| t.strip_prefix("--"))
        .unwrap_or(t);
    let t = t
        .strip_suffix("++")
        .or_else(|| t.strip_suffix("--"))
        .unwrap_or(t);
    t.trim()
}

/// `name[s1][s2]...` split into the name and the subscript texts; `None` for anything else
/// (a field after the subscripts, a dereference, a call).
pub fn subscripts(lvalue: &str) -> Option<(&str, Vec<&str>)> {
    let open = lvalue.find('[')?;
    let name = lvalue[..open].trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '>')
    {
        return None;
    }
    let mut parts = Vec::new();
    let mut rest = &lvalue[open..];
    while !rest.is_empty() {
        let body = rest.strip_prefix('[')?;
        let mut depth = 1;
        let mut close = None;
        for (k, c) in body.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        parts.push(body[..close].trim());
        rest = body[close + 1..].trim_start();
    }
    Some((name, parts))
}

/// Replaces whole identifiers found in `values` by their values (parenthesized when
/// negative); identifiers after `.` or `->` (fields) are kept.
pub fn substitute(text: &str, values: &HashMap<String, i64>) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = k;
            while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                k += 1;
            }
            let word: String = chars[start..k].iter().collect();
            let after_field = out.ends_with('.') || out.ends_with("->");
            match values.get(&word) {
                Some(v) if !after_field => {
                    if *v < 0 {
                        out.push_str(&format!("({v})"));
                    } else {
                        out.push_str(&v.to_string());
                    }
                }
                _ => out.push_str(&word),
            }
        } else {
            out.push(c);
            k += 1;
        }
    }
    out
}

/// The value of a C integer expression over the variables in `values`; `None` when some
/// name has no value or the text is not an expression the engine reads.
pub fn eval(text: &str, values: &HashMap<String, i64>) -> Option<i64> {
    let concrete = substitute(text, values);
    if concrete
        .chars()
        .any(|c| c.is_ascii_alphabetic() || c == '_' || c == '[' || c == '.')
    {
        return None;
    }
    let e = symbolic::parse_expr(&concrete).ok()?;
    let v = e.eval(&HashMap::new()).ok()?;
    if !v.is_integer() {
        return None;
    }
    v.to_integer().to_i64()
}

/// The names a witness's text and data give its variables: the analyses' own (`i#2`), which
/// the report's presentation (`crate::present`) renames with the rest of the loop's text.
pub fn display_names(vars: &[&Var]) -> HashMap<Var, String> {
    vars.iter()
        .map(|v| ((*v).clone(), v.name().to_string()))
        .collect()
}

/// The names the source text uses for `vars`, to evaluate its subscripts: `i#2` is `i`
/// unless another of `vars` has that name too (then it has none: the text is ambiguous).
pub fn source_names(vars: &[&Var]) -> HashMap<Var, String> {
    let base = |v: &Var| v.name().split('#').next().unwrap_or(v.name()).to_string();
    let mut count: HashMap<String, usize> = HashMap::new();
    for v in vars {
        *count.entry(base(v)).or_default() += 1;
    }
    vars.iter()
        .filter(|v| count[&base(v)] == 1)
        .map(|v| ((*v).clone(), base(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_lvalue(snippet: &str, expected: &str) {
        assert_eq!(lvalue(snippet), expected, "{snippet}");
    }

    #[test]
    fn lvalues_of_statements() {
        check_lvalue("B[i] += A[N * i + j]", "B[i]");
        check_lvalue("out[i] = out[i - 1] + in[i]", "out[i]");
        check_lvalue("hist[data[i]]++", "hist[data[i]]");
        check_lvalue("a[i <= 3]", "a[i <= 3]");
        check_lvalue("a[i] <<= 2", "a[i]");
        check_lvalue("x == y", "x == y");
        check_lvalue("out[i - 1]", "out[i - 1]");
    }

    #[test]
    fn subscripts_evaluate() {
        let values: HashMap<String, i64> = [("i".to_string(), 3), ("n".to_string(), -2)]
            .into_iter()
            .collect();
        let (name, parts) = subscripts("C[i][i + 1]").expect("subscripts");
        assert_eq!(name, "C");
        let evaluated: Vec<Option<i64>> = parts.iter().map(|p| eval(p, &values)).collect();
        assert_eq!(evaluated, vec![Some(3), Some(4)]);
        assert_eq!(eval("n * i", &values), Some(-6));
        assert_eq!(eval("k + 1", &values), None);
        assert_eq!(subscripts("p[i].x"), None);
        assert_eq!(substitute("data[i] + s.i", &values), "data[3] + s.i");
    }
}
