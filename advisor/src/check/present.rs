//! The names a kernel's report reads by: the source's. The analyses number each value of a
//! variable (`i#2`, `array_offset#3`); every text of the report (offsets, strides, counts,
//! conditions, reasons, findings) is read beside one access or branch of the source, so a
//! numbered name is written as the variable it is a value of. Where one text holds two
//! values of one variable, the later ones are primed (`i`, `i'`), as the pair findings of
//! `analyze` write them.

use super::model::{AccessReport, BranchReport, Count, KernelReport, SharedAccessReport};
use crate::model::Reason;
use crate::present::{numbered_tokens, without_numbers};
use std::collections::{BTreeMap, HashMap};
use symbolic::{Expr, Var};

/// Every text of `kernel` with its numbered names written as the source's, and each count's
/// expressions renamed as its texts are (before the texts, whose names decide the primes).
pub(crate) fn present(kernel: &mut KernelReport) {
    for a in kernel.accesses.iter_mut() {
        count_exprs(&mut a.requests);
        count_exprs(&mut a.sectors);
    }
    for s in kernel.shared_accesses.iter_mut() {
        count_exprs(&mut s.bank_conflicts);
    }
    for t in kernel_texts(kernel) {
        if t.contains('#') {
            *t = shown(t);
        }
    }
}

/// How the numbered names of one text are written: plainly where each name has one value
/// in it, else a later value of a name primed once for each value before it.
struct Shown {
    /// The values of each name in the text, in order of their numbers.
    values: BTreeMap<String, Vec<u64>>,
}

impl Shown {
    fn of(text: &str) -> Shown {
        let mut values: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (start, end) in numbered_tokens(text) {
            let (stem, number) = split(&text[start..end]);
            let list = values.entry(without_numbers(stem)).or_default();
            if !list.contains(&number) {
                list.push(number);
            }
        }
        for list in values.values_mut() {
            list.sort_unstable();
        }
        Shown { values }
    }

    fn plain(&self) -> bool {
        self.values.values().all(|v| v.len() == 1)
    }

    /// How the numbered name `token` of the text is written.
    fn name(&self, token: &str) -> String {
        if self.plain() {
            return without_numbers(token);
        }
        let (stem, number) = split(token);
        let plain = without_numbers(stem);
        let rank = self
            .values
            .get(&plain)
            .and_then(|list| list.iter().position(|n| *n == number))
            .unwrap_or(0);
        format!("{plain}{}", "'".repeat(rank))
    }
}

/// `text` with each numbered name written as [`Shown`] says.
fn shown(text: &str) -> String {
    let names = Shown::of(text);
    if names.plain() {
        return without_numbers(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in numbered_tokens(text) {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&names.name(&text[start..end]));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Each expression of `c` with its numbered variables named as its text writes them, so
/// that `--dynamic` looks a launch's values up by the names the report shows.
fn count_exprs(c: &mut Count) {
    let texts = [Some(&c.max), c.min.as_ref(), c.unaligned.as_ref()];
    let exprs = [&mut c.exprs.max, &mut c.exprs.min, &mut c.exprs.unaligned];
    for (text, expr) in texts.into_iter().zip(exprs) {
        let (Some(text), Some(e)) = (text, expr.as_ref()) else {
            continue;
        };
        if text.contains('#') {
            *expr = renamed(e, &Shown::of(text));
        }
    }
}

/// `e` with each numbered variable renamed by `names`; `None` (no expression beside a text
/// it no longer matches) where the substitution fails.
fn renamed(e: &Expr, names: &Shown) -> Option<Expr> {
    let map: HashMap<Var, Expr> = e
        .vars()
        .into_iter()
        .filter(|v| v.name().contains('#'))
        .map(|v| {
            let shown = names.name(v.name());
            (v, Expr::var(&shown))
        })
        .collect();
    e.substitute(&map).ok()
}

/// A numbered token's stem and number (`i#12` is `i`, 12).
fn split(token: &str) -> (&str, u64) {
    match token.rsplit_once('#') {
        Some((stem, n)) => (stem, n.parse().unwrap_or(0)),
        None => (token, 0),
    }
}

/// Every text of a kernel's report a reader reads beside the source.
fn kernel_texts(k: &mut KernelReport) -> Vec<&mut String> {
    let mut out: Vec<&mut String> = Vec::new();
    out.extend(k.assumptions.iter_mut());
    out.extend(k.not_analysed.iter_mut());
    for a in k.accesses.iter_mut() {
        access_texts(a, &mut out);
    }
    for s in k.shared_accesses.iter_mut() {
        shared_texts(s, &mut out);
    }
    for b in k.branches.iter_mut() {
        branch_texts(b, &mut out);
    }
    out
}

fn access_texts<'a>(a: &'a mut AccessReport, out: &mut Vec<&'a mut String>) {
    out.extend(a.array.iter_mut());
    out.extend(a.offset.iter_mut());
    out.extend(a.stride.iter_mut());
    count_texts(&mut a.requests, out);
    count_texts(&mut a.sectors, out);
    out.extend(a.when.iter_mut());
    out.extend(a.reason.iter_mut());
    out.extend(a.assumptions.iter_mut());
    out.extend(a.active.iter_mut());
    if let Some(f) = a.finding.as_mut() {
        reason_texts(f, out);
    }
}

fn shared_texts<'a>(s: &'a mut SharedAccessReport, out: &mut Vec<&'a mut String>) {
    out.extend(s.array.iter_mut());
    out.extend(s.offset.iter_mut());
    out.extend(s.stride.iter_mut());
    count_texts(&mut s.bank_conflicts, out);
    out.extend(s.reason.iter_mut());
    out.extend(s.assumptions.iter_mut());
    out.extend(s.active.iter_mut());
    if let Some(f) = s.finding.as_mut() {
        reason_texts(f, out);
    }
}

fn branch_texts<'a>(b: &'a mut BranchReport, out: &mut Vec<&'a mut String>) {
    out.push(&mut b.why);
    if let Some(f) = b.finding.as_mut() {
        reason_texts(f, out);
    }
}

fn count_texts<'a>(c: &'a mut Count, out: &mut Vec<&'a mut String>) {
    out.push(&mut c.max);
    out.extend(c.min.iter_mut());
    out.extend(c.unaligned.iter_mut());
}

fn reason_texts<'a>(r: &'a mut Reason, out: &mut Vec<&'a mut String>) {
    out.push(&mut r.message);
    out.extend(r.help.iter_mut());
    for i in r.instances.iter_mut() {
        reason_texts(i, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A count's expression is renamed with its text, primes included: `--dynamic`
    /// evaluates it by the names the report shows.
    #[test]
    fn a_counts_expression_is_renamed_with_its_text() {
        let (s2, s5) = (Expr::var("s#2"), Expr::var("s#5"));
        let e = s5.checked_sub(&s2).unwrap();
        let mut c = Count {
            max: e.to_string(),
            exprs: Box::new(crate::check::model::CountExprs {
                max: Some(e),
                min: Some(s2.clone()),
                ..Default::default()
            }),
            min: Some(s2.to_string()),
            ..Default::default()
        };
        count_exprs(&mut c);
        let names = |e: &Option<Expr>| -> Vec<String> {
            let mut v: Vec<String> = e
                .as_ref()
                .unwrap()
                .vars()
                .iter()
                .map(|v| v.name().to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&c.exprs.max), ["s", "s'"]);
        assert_eq!(names(&c.exprs.min), ["s"]);
    }

    #[test]
    fn a_name_with_one_value_in_a_text_is_written_plainly() {
        assert_eq!(shown("4*i#2 + 64*threadIdx.x"), "4*i + 64*threadIdx.x");
        assert_eq!(shown("-i#2 + threadIdx.x"), "-i + threadIdx.x");
        assert_eq!(shown("4*array_offset#3 + 4*i#5"), "4*array_offset + 4*i");
    }

    #[test]
    fn later_values_of_one_name_in_a_text_are_primed() {
        assert_eq!(shown("4*i#5 - 4*i#2 + j#3"), "4*i' - 4*i + j");
        assert_eq!(shown("no numbered name"), "no numbered name");
    }
}
