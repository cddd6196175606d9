//! The names a kernel's report reads by: the source's. The analyses number each value of a
//! variable (`i#2`, `array_offset#3`); every text of the report (offsets, strides, counts,
//! conditions, reasons, findings) is read beside one access or branch of the source, so a
//! numbered name is written as the variable it is a value of. Where one text holds two
//! values of one variable, the later ones are primed (`i`, `i'`), as the pair findings of
//! `analyze` write them.

use super::model::{AccessReport, BranchReport, Count, KernelReport, SharedAccessReport};
use crate::model::Reason;
use crate::present::{numbered_tokens, without_numbers};
use std::collections::BTreeMap;

/// Every text of `kernel` with its numbered names written as the source's.
pub(crate) fn present(kernel: &mut KernelReport) {
    for t in kernel_texts(kernel) {
        if t.contains('#') {
            *t = shown(t);
        }
    }
}

/// `text` with each numbered name written plainly, a later value of a name already written
/// in it primed once for each value before it.
fn shown(text: &str) -> String {
    let tokens = numbered_tokens(text);
    // The values of each name in the text, in order of their numbers.
    let mut values: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for &(start, end) in &tokens {
        let token = &text[start..end];
        let (stem, number) = split(token);
        let list = values.entry(without_numbers(stem)).or_default();
        if !list.contains(&number) {
            list.push(number);
        }
    }
    if values.values().all(|v| v.len() == 1) {
        return without_numbers(text);
    }
    for list in values.values_mut() {
        list.sort_unstable();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(start, end) in &tokens {
        if start < at {
            continue;
        }
        let (stem, number) = split(&text[start..end]);
        let plain = without_numbers(stem);
        let rank = values[&plain]
            .iter()
            .position(|n| *n == number)
            .unwrap_or(0);
        out.push_str(&text[at..start]);
        out.push_str(&plain);
        out.push_str(&"'".repeat(rank));
        at = end;
    }
    out.push_str(&text[at..]);
    out
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
    use super::shown;

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
