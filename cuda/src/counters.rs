//! Second counters in ports: a variable the loop advances beside its index (`p++` next to
//! `i++`, `k += 2`, `*q++ = v`) is computed from the index at the top of the body,
//! `ww_p = p + 1 * (i - 0);`, the body's uses read `ww_p` (the advanced value after the
//! update) and the update is dropped. The variable itself then only holds its value at the
//! loop's entry, which every thread reads. This plans the rewrite on the loop statement's
//! tokens; the OpenMP target turns it into edits of the original file, the CUDA one applies
//! it to the kernel's body.

use crate::ctext::{code_tokens, tok_text, written_in, Tok, TokKind};
use advisor::model::{Counter, Induction, LoopReport};

/// What the rewrite reads of a loop: its text and two facts about its counters' names.
#[derive(Clone, Debug)]
pub(crate) struct LoopText<'a> {
    /// The loop statement and its body statement, in the unit's preprocessed text.
    pub stmt: &'a str,
    pub body: &'a str,
    /// The counters the source declares as pointers.
    pub pointers: Vec<String>,
    /// The counters a declaration inside the loop shadows.
    pub shadowed: Vec<String>,
    /// The start a port writes into a header without an initialization (`for (;`): the
    /// index's start as the loop finds it; `None` for a header that has one.
    pub start: Option<String>,
}

/// The rewrite of a loop's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CounterRewrite {
    /// Replacements of the loop statement's tokens `first..=last`, in order, disjoint.
    pub replaced: Vec<(usize, usize, String)>,
    /// The index of the body's first token.
    pub body_start: usize,
    /// The loop's increment once the counters' updates are dropped from it (`i++` of
    /// `i++, p++`).
    pub increment: String,
    /// Integer counters.
    pub integers: Vec<String>,
    /// Pointer counters, and whether the first iteration dereferences each at its entry
    /// value (which is then inside the section of the array it walks).
    pub pointers: Vec<(String, bool)>,
    /// For counters read after the loop: the statements that give them their final value
    /// there (`q += 1 * (n > 0 ? n - 0 : 0);`), from the loop's bounds as written.
    pub finals: Vec<String>,
}

/// The prefix of the per-iteration copy of counter `name`.
const PREFIX: &str = "ww_";

/// Plans the rewrite of `report`'s counters in the `for` loop `source` (which has some); an
/// error says why the loop cannot be rewritten (the port is then refused with it).
pub(crate) fn rewrite_counters(
    source: &LoopText<'_>,
    report: &LoopReport,
    induction: &Induction,
    dialect: Dialect,
) -> Result<CounterRewrite, String> {
    let stmt = source.stmt;
    let toks = code_tokens(stmt);
    let text = |k: usize| toks.get(k).map_or("", |t| tok_text(stmt, t));
    let shape = LoopShape::of(stmt, &toks).ok_or("the loop's header was not found")?;
    let index = Index::of(source, &toks, &shape, induction)?;
    let iteration = index.iteration();
    let mut finals = Vec::new();
    // Token index -> its replacement; merged with the body's opening below.
    let mut replaced: Vec<(usize, usize, String)> = Vec::new();
    let mut declarations = Vec::new();
    let (mut integers, mut pointers) = (Vec::new(), Vec::new());
    for c in &report.counters {
        let name = c.name.as_str();
        if c.last_value {
            let trip = trip_count(source.body, stmt, &toks, &shape, &index).map_err(|why| {
                format!(
                    "`{name}` (advanced by {} per iteration beside `{}`) is read after the loop and {why}: a port would have to compute its final value there",
                    c.step, induction.var
                )
            })?;
            finals.push(format!("{name} += {} * {trip};", c.step));
        }
        if source.shadowed.iter().any(|s| s == name) {
            return Err(format!(
                "a variable declared in the loop is also named `{name}`"
            ));
        }
        let uses: Vec<usize> = (1..toks.len())
            .filter(|&k| text(k) == name && !matches!(text(k - 1), "." | "->"))
            .collect();
        if uses.iter().any(|&k| k <= shape.cond_end) {
            return Err(format!(
                "`{name}` is used in the loop's initialization or condition: rewrite the loop over `{}` alone",
                induction.var
            ));
        }
        // The uses in the order they run: the body's, then the increment's.
        let ordered: Vec<usize> = uses
            .iter()
            .copied()
            .filter(|&k| k > shape.close)
            .chain(uses.iter().copied().filter(|&k| shape.in_increment(k)))
            .collect();
        let copy = format!("{PREFIX}{name}");
        // The copy plus the elements the updates before have advanced it by.
        let at = |advanced: i64| match advanced {
            0 => copy.clone(),
            a => format!("({copy} + {a})"),
        };
        let entry = shape.close + 1;
        let (mut advanced, mut updates, mut dereferenced) = (0i64, 0usize, false);
        for &k in &ordered {
            let Some(update) = Update::at(&toks, stmt, k, &shape) else {
                if shape.in_increment(k) {
                    return Err(format!(
                        "`{name}` is used in the loop's increment beside its update"
                    ));
                }
                dereferenced |= advanced == 0
                    && dereference(&toks, stmt, entry, k)
                    && unconditional(&toks, stmt, entry, k);
                replaced.push((k, k, at(advanced)));
                continue;
            };
            updates += 1;
            let step = update.step(&toks, stmt, k).ok_or_else(|| {
                format!("`{name}` is advanced by an amount that is not a constant")
            })?;
            let (mut first, mut last) = (update.first_token(k), update.last_token(k));
            let replacement = match update {
                Update::Postfix { statement: false } => {
                    dereferenced |= advanced == 0
                        && dereference(&toks, stmt, entry, k)
                        && unconditional(&toks, stmt, entry, k);
                    at(advanced)
                }
                Update::Prefix { statement: false } => at(advanced + step),
                _ => String::new(),
            };
            advanced += step;
            // `i++, p++` loses `, p++`; `p++, i++` loses `p++, `; `p++;` in the body goes.
            if replacement.is_empty() {
                if !shape.in_increment(k) || text(first - 1) != "," {
                    last += 1;
                } else {
                    first -= 1;
                }
            }
            replaced.push((first, last, replacement));
        }
        // The updates the analysis counted are the ones in the text (none through a macro).
        if updates == 0 || advanced != c.step {
            return Err(format!(
                "`{name}` is advanced by {} per iteration, but its updates in the loop's text add up to {advanced}: rewrite them by hand",
                c.step
            ));
        }
        declarations.push(dialect.declaration(c, &copy, &iteration));
        if source.pointers.iter().any(|p| p == name) {
            // Whether the first iteration dereferences the pointer at its entry value,
            // which is then inside the array's section.
            pointers.push((name.to_string(), dereferenced));
        } else {
            integers.push(name.to_string());
        }
    }
    // The copies are declared first in the body: after its `{`, or in a block made around
    // a body that is one statement.
    let open = shape.close + 1;
    let declared = declarations.join(" ");
    let last = toks.len() - 1;
    if text(open) == "{" {
        replaced.push((open, open, format!("{{ {declared}")));
    } else {
        prefix_token(&mut replaced, open, &format!("{{ {declared} "), text(open));
        suffix_token(&mut replaced, last, " }", text(last));
    }
    replaced.sort_by_key(|(first, _, _)| *first);
    if replaced.windows(2).any(|w| w[0].1 >= w[1].0) {
        return Err("two rewrites of the counters overlap in the loop's text".into());
    }
    let kept: Vec<&str> = (shape.cond_end + 1..shape.close)
        .filter(|&k| {
            !replaced
                .iter()
                .any(|(first, last, _)| (*first..=*last).contains(&k))
        })
        .map(text)
        .collect();
    Ok(CounterRewrite {
        replaced,
        body_start: open,
        increment: kept.join(" "),
        integers,
        pointers,
        finals,
    })
}

/// The statement that gives the loop's own variable, read after the loop, the value the
/// sequential loop leaves in it: `i = (lo) + step * trips;`, the start and the trip count
/// as the loop's text writes them (both checked to be expressions the iterations leave
/// alone), so that it holds however many times the loop runs, none included.
pub(crate) fn index_final(source: &LoopText<'_>, induction: &Induction) -> Result<String, String> {
    let stmt = source.stmt;
    let toks = code_tokens(stmt);
    let shape = LoopShape::of(stmt, &toks).ok_or("the loop's header was not found")?;
    let index = Index::of(source, &toks, &shape, induction)?;
    let trip = trip_count(source.body, stmt, &toks, &shape, &index)?;
    Ok(format!(
        "{} = ({}) + {} * {trip};",
        index.var, index.lower, index.step
    ))
}

/// The `for` loop `source`'s body and its iteration number: the index of the body's first
/// token in the statement's code tokens, and the number as C over the index and the start
/// as written (`i - (lo)`), evaluated in the body. An error says why there is none.
pub(crate) fn body_and_iteration(
    source: &LoopText<'_>,
    induction: &Induction,
) -> Result<(usize, String), String> {
    let stmt = source.stmt;
    let toks = code_tokens(stmt);
    let shape = LoopShape::of(stmt, &toks).ok_or("the loop's header was not found")?;
    let index = Index::of(source, &toks, &shape, induction)?;
    Ok((shape.close + 1, index.iteration()))
}

/// Says what the rewrite of `report`'s counters did.
pub(crate) fn note(report: &LoopReport, induction: &Induction) -> String {
    let names: Vec<String> = report
        .counters
        .iter()
        .map(|c| format!("`{}`", c.name))
        .collect();
    format!(
        "{} {} computed from `{}` at the top of the body (`{PREFIX}` copies) and {} update dropped: the iterations no longer carry {}",
        names.join(", "),
        if names.len() == 1 { "is" } else { "are" },
        induction.var,
        if names.len() == 1 { "its" } else { "their" },
        if names.len() == 1 { "it" } else { "them" },
    )
}

/// `body` (the text of the loop's body statement, whose tokens are those of the loop
/// statement from `rewrite.body_start` on) with the rewrite applied.
pub(crate) fn rewrite_body(body: &str, rewrite: &CounterRewrite) -> Result<String, String> {
    let toks = code_tokens(body);
    let mut out = String::with_capacity(body.len() + 200);
    let mut at = 0;
    for (first, last, replacement) in &rewrite.replaced {
        let (Some(first), Some(last)) = (
            first.checked_sub(rewrite.body_start),
            last.checked_sub(rewrite.body_start),
        ) else {
            continue; // in the loop's header
        };
        let (Some(a), Some(b)) = (toks.get(first), toks.get(last)) else {
            return Err("the body's text does not match the loop's".into());
        };
        out.push_str(&body[at..a.start]);
        out.push_str(replacement);
        at = b.end;
    }
    out.push_str(&body[at..]);
    Ok(out)
}
/// The language a counter's per-iteration copy is declared in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `__typeof__(p) ww_p = p + step * (iteration);` (GNU C, which clang compiles).
    C,
    /// `auto ww_p = p + step * (iteration);` (CUDA C++).
    Cxx,
}

impl Dialect {
    fn declaration(self, c: &Counter, copy: &str, iteration: &str) -> String {
        let name = &c.name;
        let ty = match self {
            Dialect::C => format!("__typeof__({name})"),
            Dialect::Cxx => "auto".to_string(),
        };
        format!("{ty} {copy} = {name} + {} * ({iteration});", c.step)
    }
}

/// Where the parts of a `for` statement's tokens are.
struct LoopShape {
    /// The `;` after the condition (the increment follows it).
    cond_end: usize,
    /// The `)` closing the header.
    close: usize,
}

impl LoopShape {
    fn of(stmt: &str, toks: &[Tok]) -> Option<LoopShape> {
        if toks.first().map(|t| tok_text(stmt, t)) != Some("for") {
            return None;
        }
        let mut depth = 0i32;
        let mut semis = Vec::new();
        for (k, t) in toks.iter().enumerate().skip(1) {
            match tok_text(stmt, t) {
                "(" | "[" | "{" => depth += 1,
                ")" if depth == 1 => {
                    return Some(LoopShape {
                        cond_end: *semis.get(1)?,
                        close: k,
                    })
                }
                ")" | "]" | "}" => depth -= 1,
                ";" if depth == 1 => semis.push(k),
                _ => {}
            }
        }
        None
    }

    fn in_increment(&self, k: usize) -> bool {
        k > self.cond_end && k < self.close
    }
}

/// How an occurrence of a counter updates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Update {
    /// `p++` or `p--`; `statement`: nothing else is done with the value.
    Postfix { statement: bool },
    /// `++p` or `--p`.
    Prefix { statement: bool },
    /// `p += e` or `p -= e` as a statement of its own (or a part of the increment), up to
    /// token `end` (exclusive).
    Compound { end: usize },
}

impl Update {
    /// The update made by the occurrence of the counter at token `k`, if any.
    fn at(toks: &[Tok], stmt: &str, k: usize, shape: &LoopShape) -> Option<Update> {
        let text = |i: usize| toks.get(i).map_or("", |t| tok_text(stmt, t));
        let in_header = shape.in_increment(k);
        // Whether the expression at tokens `from..=to` is all of its statement (or of one
        // comma-separated part of the increment).
        let alone = |from: usize, to: usize| {
            let before = text(from.wrapping_sub(1));
            let after = text(to + 1);
            if in_header {
                matches!(before, ";" | ",") && matches!(after, ")" | ",")
            } else {
                matches!(before, ";" | "{" | "}") && after == ";"
            }
        };
        match text(k + 1) {
            "++" | "--" => {
                return Some(Update::Postfix {
                    statement: alone(k, k + 1),
                })
            }
            "+=" | "-=" => {
                let mut depth = 0i32;
                let mut end = k + 2;
                while end < toks.len() {
                    match text(end) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" if depth > 0 => depth -= 1,
                        ")" | "]" | "}" | ";" | "," if depth == 0 => break,
                        _ => {}
                    }
                    end += 1;
                }
                // An embedded `x = (p += 3)` is not rewritten: `end` is then not the end
                // of a statement, and `at` reports no update, so the counter has none.
                return alone(k, end - 1).then_some(Update::Compound { end });
            }
            _ => {}
        }
        if matches!(text(k.wrapping_sub(1)), "++" | "--") {
            return Some(Update::Prefix {
                statement: alone(k - 1, k),
            });
        }
        None
    }

    /// How many elements (or units) the update at token `k` advances the counter by.
    fn step(self, toks: &[Tok], stmt: &str, k: usize) -> Option<i64> {
        let text = |i: usize| toks.get(i).map_or("", |t| tok_text(stmt, t));
        let op = match self {
            Update::Postfix { .. } => text(k + 1),
            Update::Prefix { .. } => text(k - 1),
            Update::Compound { end } => {
                let amount: i64 = match &toks[k + 2..end] {
                    [n] => parse_integer(tok_text(stmt, n))?,
                    _ => return None,
                };
                return Some(if text(k + 1) == "-=" { -amount } else { amount });
            }
        };
        Some(if op == "--" { -1 } else { 1 })
    }

    fn first_token(self, k: usize) -> usize {
        match self {
            Update::Prefix { .. } => k - 1,
            _ => k,
        }
    }

    fn last_token(self, k: usize) -> usize {
        match self {
            Update::Postfix { .. } => k + 1,
            Update::Prefix { .. } => k,
            Update::Compound { end } => end - 1,
        }
    }
}

/// A C integer literal's value (decimal, hex or octal, with any suffix).
fn parse_integer(literal: &str) -> Option<i64> {
    let digits = literal.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse().ok()
    }
}

/// The loop's index as the source writes it: its name, the start its initialization gives
/// it and its constant step.
struct Index {
    var: String,
    lower: String,
    step: i64,
    /// The token after the initialization's `;`.
    cond_start: usize,
}

impl Index {
    fn of(
        source: &LoopText<'_>,
        toks: &[Tok],
        shape: &LoopShape,
        induction: &Induction,
    ) -> Result<Index, String> {
        let (body, stmt) = (source.body, source.stmt);
        let text = |i: usize| toks.get(i).map_or("", |t| tok_text(stmt, t));
        // `for (i = lo;` or `for (T i = lo;`: the start as written.
        let init_end = (2..shape.cond_end)
            .find(|&k| text(k) == ";")
            .ok_or("the loop has no initialization")?;
        // `for (;`, given its start by the port.
        if let (2, Some(start)) = (init_end, source.start.as_deref()) {
            if !plain(body, start, &code_tokens(start)) {
                return Err(format!(
                    "the loop's start `{start}` is not a plain expression the iterations leave alone"
                ));
            }
            return Index::stepping(induction, start, init_end);
        }
        let eq = (2..init_end)
            .find(|&k| text(k) == "=")
            .filter(|&k| text(k - 1) == induction.var)
            .ok_or_else(|| format!("the loop's initialization does not set `{}`", induction.var))?;
        let lower = stmt[toks[eq + 1].start..toks[init_end - 1].end].trim();
        // The start is evaluated again in every thread, and after the loop.
        if !plain(body, stmt, &toks[eq + 1..init_end]) {
            return Err(format!(
                "the loop's start `{lower}` is not a plain expression the iterations leave alone: compute the counters from `{}` by hand",
                induction.var
            ));
        }
        Index::stepping(induction, lower, init_end)
    }

    /// The index of `induction` from `lower`, its condition after the token `init_end`.
    fn stepping(induction: &Induction, lower: &str, init_end: usize) -> Result<Index, String> {
        let step: i64 = induction
            .step
            .parse()
            .map_err(|_| format!("the index steps by `{}`, not a constant", induction.step))?;
        Ok(Index {
            var: induction.var.clone(),
            lower: lower.to_string(),
            step,
            cond_start: init_end + 1,
        })
    }

    /// The number of the iteration: `i - (lo)`, `(lo) - i`, `(i - (lo)) / 2`.
    fn iteration(&self) -> String {
        let (var, lower) = (&self.var, &self.lower);
        match self.step {
            1 => format!("{var} - ({lower})"),
            -1 => format!("({lower}) - {var}"),
            s => format!("({var} - ({lower})) / {s}"),
        }
    }
}

/// Whether `toks` (an expression of the loop's header) assign nothing, call nothing and
/// read no variable the loop's body writes: it has the same value before, in and after the
/// loop.
fn plain(body: &str, stmt: &str, toks: &[Tok]) -> bool {
    toks.iter().enumerate().all(|(k, t)| {
        let s = tok_text(stmt, t);
        let call = t.kind == TokKind::Ident
            && s != "sizeof"
            && toks.get(k + 1).is_some_and(|n| tok_text(stmt, n) == "(")
            && !crate::ctext::is_keyword(s);
        let assigns = matches!(s, "=" | "++" | "--" | "+=" | "-=" | ",");
        let written = t.kind == TokKind::Ident && written_in(body, s);
        !(assigns || call || written)
    })
}

/// How many times the loop runs, as C over the header's bounds as written (0 when it does
/// not): `(n > (0) ? n - (0) : 0)`; an error says why there is no such expression.
fn trip_count(
    body: &str,
    stmt: &str,
    toks: &[Tok],
    shape: &LoopShape,
    index: &Index,
) -> Result<String, String> {
    let cond = &toks[index.cond_start..shape.cond_end];
    let text = |t: &Tok| tok_text(stmt, t);
    let flip = |op: &str| {
        match op {
            "<" => ">",
            ">" => "<",
            "<=" => ">=",
            ">=" => "<=",
            other => other,
        }
        .to_string()
    };
    // `i < hi` or `hi > i`.
    let (op, bound) = match cond {
        [v, op, rest @ ..] if text(v) == index.var && !rest.is_empty() => {
            (text(op).to_string(), rest)
        }
        [rest @ .., op, v] if text(v) == index.var && !rest.is_empty() => (flip(text(op)), rest),
        _ => return Err("its condition is not `index < bound`".into()),
    };
    if !plain(body, stmt, bound) {
        return Err("its bound is not a plain expression".into());
    }
    let hi = format!(
        "({})",
        stmt[bound[0].start..bound[bound.len() - 1].end].trim()
    );
    let lo = format!("({})", index.lower);
    let (s, abs) = (index.step, index.step.unsigned_abs());
    let (first, second, inclusive) = match op.as_str() {
        "<" if s > 0 => (&hi, &lo, false),
        "<=" if s > 0 => (&hi, &lo, true),
        ">" if s < 0 => (&lo, &hi, false),
        ">=" if s < 0 => (&lo, &hi, true),
        _ => return Err(format!("its condition `{op}` does not bound a step of {s}")),
    };
    Ok(match (inclusive, abs) {
        (false, 1) => format!("({first} > {second} ? {first} - {second} : 0)"),
        (false, a) => format!(
            "({first} > {second} ? ({first} - {second} + {}) / {a} : 0)",
            a - 1
        ),
        (true, 1) => format!("({first} >= {second} ? {first} - {second} + 1 : 0)"),
        (true, a) => format!("({first} >= {second} ? ({first} - {second}) / {a} + 1 : 0)"),
    })
}

/// Whether the occurrence of a pointer at token `k` is dereferenced at offset zero: `*p`,
/// `p->f`, `p[0]` (`entry`: the body's first token, where a `*` is unary).
fn dereference(toks: &[Tok], stmt: &str, entry: usize, k: usize) -> bool {
    let text = |i: usize| toks.get(i).map_or("", |t| tok_text(stmt, t));
    let unary_star = text(k - 1) == "*"
        && (k - 1 == entry
            || (matches!(toks[k - 2].kind, TokKind::Punct) && !matches!(text(k - 2), ")" | "]")));
    unary_star
        || text(k + 1) == "->"
        || (text(k + 1) == "[" && text(k + 2) == "0" && text(k + 3) == "]")
}

/// Whether token `k` is in a statement of the body's top level (from token `entry`) that
/// runs in every iteration: no enclosing block, no condition or short circuit before it in
/// its statement.
fn unconditional(toks: &[Tok], stmt: &str, entry: usize, k: usize) -> bool {
    let text = |i: usize| toks.get(i).map_or("", |t| tok_text(stmt, t));
    let top = usize::from(text(entry) == "{");
    let mut depth = 0usize;
    let mut start = entry + top;
    for i in entry..k {
        match text(i) {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == top {
                    start = i + 1;
                }
            }
            ";" if depth == top => start = i + 1,
            _ => {}
        }
    }
    depth == top
        && !(start..k).any(|i| {
            matches!(
                text(i),
                "if" | "while"
                    | "for"
                    | "switch"
                    | "do"
                    | "else"
                    | "case"
                    | "?"
                    | "&&"
                    | "||"
                    | "goto"
                    | "return"
                    | "break"
                    | "continue"
            )
        })
        && !(entry..k).any(|i| matches!(text(i), "continue" | "break" | "return" | "goto"))
}

/// Puts `prefix` before token `k`, merged with a replacement of it already planned.
pub(crate) fn prefix_token(
    replaced: &mut Vec<(usize, usize, String)>,
    k: usize,
    prefix: &str,
    token: &str,
) {
    match replaced.iter_mut().find(|(first, _, _)| *first == k) {
        Some((_, _, r)) => r.insert_str(0, prefix),
        None => replaced.push((k, k, format!("{prefix}{token}"))),
    }
}

/// Puts `suffix` after token `k`, merged with a replacement ending there.
pub(crate) fn suffix_token(
    replaced: &mut Vec<(usize, usize, String)>,
    k: usize,
    suffix: &str,
    token: &str,
) {
    match replaced.iter_mut().find(|(_, last, _)| *last == k) {
        Some((_, _, r)) => r.push_str(suffix),
        None => replaced.push((k, k, format!("{token}{suffix}"))),
    }
}
