//! Comparing a kernel's outbound sections with the program's: bit-exact for integers and
//! everything that is not `float`/`double`, within a relative tolerance for floating point.
//!
//! A floating-point element passes when `|got - want| <= rtol * max(|got|, |want|)` or
//! `|got - want| <= rtol * scale`, where `scale` is the largest magnitude in the reference
//! section: a GPU's fused multiply-adds and math functions differ in the last bits, and
//! values that cancel to nearly zero are judged against the array's own size. Default
//! `rtol`: 1e-5 for `float`, 1e-12 for `double`. NaN equals NaN.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemKind {
    F32,
    F64,
    /// Compared byte by byte.
    Bits,
}

impl ElemKind {
    /// From the element type's C spelling.
    pub fn of(elem_type: &str) -> ElemKind {
        let words: Vec<&str> = elem_type
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile"))
            .collect();
        match words.as_slice() {
            ["float"] => ElemKind::F32,
            ["double"] => ElemKind::F64,
            _ => ElemKind::Bits,
        }
    }

    pub fn default_rtol(self) -> f64 {
        match self {
            ElemKind::F32 => 1e-5,
            ElemKind::F64 => 1e-12,
            ElemKind::Bits => 0.0,
        }
    }
}

/// The verdict on one array.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayCompare {
    pub name: String,
    pub lo: i64,
    pub hi: i64,
    pub kind: ElemKind,
    pub elem_bytes: u64,
    /// Elements (or bytes for `Bits` arrays whose section is not whole elements) compared.
    pub compared: u64,
    pub differing: u64,
    /// Byte ranges `[lo, hi)` relative to the pointer where results differ, merged; at most 8.
    pub ranges: Vec<(i64, i64)>,
    pub more_ranges: bool,
    /// The first difference: byte offset, expected and actual bytes of the element.
    pub first: Option<(i64, Vec<u8>, Vec<u8>)>,
    /// The largest relative error among floating-point elements that passed.
    pub max_rel_error: f64,
    pub rtol: f64,
    /// Where the pointer was null (a loop that tests it): no bytes were compared.
    pub null: Option<NullPointer>,
}

/// Which side of a comparison held a null pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullPointer {
    /// The program and the replay: equal, nothing to compare.
    Both,
    /// Only the program: the replay returned bytes for a pointer that had none.
    Program,
    /// Only the replay: the kernel's side lost the program's array.
    Replay,
}

impl ArrayCompare {
    /// The comparison of array `name`'s bytes `[lo, hi)` before any element is compared.
    fn nothing_compared(
        name: &str,
        (lo, hi): (i64, i64),
        (kind, elem_bytes): (ElemKind, u64),
        rtol: f64,
    ) -> ArrayCompare {
        ArrayCompare {
            name: name.to_string(),
            lo,
            hi,
            kind,
            elem_bytes,
            compared: 0,
            differing: 0,
            ranges: Vec::new(),
            more_ranges: false,
            first: None,
            max_rel_error: 0.0,
            rtol,
            null: None,
        }
    }

    pub fn passed(&self) -> bool {
        self.differing == 0
    }
}

fn value_text(kind: ElemKind, elem_bytes: u64, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().rev().map(|b| format!("{b:02x}")).collect();
    let value = match (kind, bytes.len()) {
        (ElemKind::F32, 4) => format!("{}", f32::from_le_bytes(bytes.try_into().unwrap_or([0; 4]))),
        (ElemKind::F64, 8) => format!("{}", f64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))),
        (_, 1) => format!("{}", bytes[0] as i8),
        (_, 2) => format!("{}", i16::from_le_bytes([bytes[0], bytes[1]])),
        (_, 4) if elem_bytes == 4 => {
            format!("{}", i32::from_le_bytes(bytes.try_into().unwrap_or([0; 4])))
        }
        (_, 8) if elem_bytes == 8 => {
            format!("{}", i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])))
        }
        _ => String::new(),
    };
    if value.is_empty() {
        format!("0x{hex}")
    } else {
        format!("0x{hex} ({value})")
    }
}

impl std::fmt::Display for ArrayCompare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.kind {
            ElemKind::F32 => "floats",
            ElemKind::F64 => "doubles",
            ElemKind::Bits if self.elem_bytes > 1 => "elements",
            ElemKind::Bits => "bytes",
        };
        let (name, lo, hi) = (&self.name, self.lo, self.hi);
        match self.null {
            Some(NullPointer::Both) => {
                return write!(
                    f,
                    "`{name}` [{lo}, {hi}): pass (a null pointer in the program and in the replay: nothing to compare)"
                )
            }
            Some(NullPointer::Program) => {
                return write!(
                    f,
                    "`{name}` [{lo}, {hi}): FAIL: the pointer was null in the program, but the replay returned a section of it"
                )
            }
            Some(NullPointer::Replay) => {
                return write!(
                    f,
                    "`{name}` [{lo}, {hi}): FAIL: the replay's pointer was null, but the program's was not"
                )
            }
            None => {}
        }
        if self.passed() {
            match self.kind {
                ElemKind::Bits => write!(
                    f,
                    "`{}` [{}, {}): pass ({} {unit}, bit-exact)",
                    self.name, self.lo, self.hi, self.compared
                ),
                _ => write!(
                    f,
                    "`{}` [{}, {}): pass ({} {unit}, largest relative error {:.3e}, tolerance {:.0e})",
                    self.name, self.lo, self.hi, self.compared, self.max_rel_error, self.rtol
                ),
            }
        } else {
            let ranges: Vec<String> = self
                .ranges
                .iter()
                .map(|(a, b)| format!("[{a}, {b})"))
                .collect();
            write!(
                f,
                "`{}` [{}, {}): FAIL: {} of {} {unit} differ, in bytes {}{}",
                self.name,
                self.lo,
                self.hi,
                self.differing,
                self.compared,
                ranges.join(", "),
                if self.more_ranges { " and more" } else { "" }
            )?;
            if let Some((off, want, got)) = &self.first {
                write!(
                    f,
                    "; first at byte {off}: expected {}, got {}",
                    value_text(self.kind, self.elem_bytes, want),
                    value_text(self.kind, self.elem_bytes, got)
                )?;
                if got.iter().all(|&b| b == 0xA5) {
                    write!(
                        f,
                        " (poison: never written, or computed from bytes outside a section)"
                    )?;
                }
            }
            Ok(())
        }
    }
}

/// Compares `got` with `want`, both the bytes `[lo, hi)` of array `name` whose elements are
/// `(kind, bytes)`.
pub fn compare(
    name: &str,
    (lo, hi): (i64, i64),
    (kind, elem_bytes): (ElemKind, u64),
    want: &[u8],
    got: &[u8],
    rtol: Option<f64>,
) -> ArrayCompare {
    let rtol = rtol.unwrap_or(kind.default_rtol());
    let mut out = ArrayCompare::nothing_compared(name, (lo, hi), (kind, elem_bytes), rtol);
    let n = want.len().min(got.len());
    // Elements start at multiples of their size relative to the pointer.
    let eb = elem_bytes.max(1) as i64;
    let width = match kind {
        ElemKind::F32 if eb == 4 => 4,
        ElemKind::F64 if eb == 8 => 8,
        _ => eb,
    } as usize;
    let kind = if (kind == ElemKind::F32 && width != 4) || (kind == ElemKind::F64 && width != 8) {
        ElemKind::Bits
    } else {
        kind
    };
    out.kind = kind;
    let scale = match kind {
        ElemKind::F32 => want
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).abs() as f64)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
        ElemKind::F64 => want
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])).abs())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
        ElemKind::Bits => 0.0,
    };
    let mut pos = 0usize;
    // Leading bytes before the first element boundary, and a partial last element, are
    // compared byte by byte.
    let head = ((eb - lo.rem_euclid(eb)) % eb) as usize;
    let mark = |out: &mut ArrayCompare, at: usize, len: usize, w: &[u8], g: &[u8]| {
        out.differing += 1;
        let a = lo + at as i64;
        let b = a + len as i64;
        if out.first.is_none() {
            out.first = Some((a, w.to_vec(), g.to_vec()));
        }
        let full = out.ranges.len() >= 8;
        match out.ranges.last_mut() {
            Some(last) if last.1 == a => last.1 = b,
            _ if full => out.more_ranges = true,
            _ => out.ranges.push((a, b)),
        }
    };
    while pos < n {
        let len = if pos < head.min(n) {
            1
        } else if pos + width <= n {
            width
        } else {
            1
        };
        let (w, g) = (&want[pos..pos + len], &got[pos..pos + len]);
        out.compared += 1;
        let same = if len == width && kind != ElemKind::Bits {
            let (x, y) = match kind {
                ElemKind::F32 => (
                    f32::from_le_bytes(w.try_into().unwrap_or([0; 4])) as f64,
                    f32::from_le_bytes(g.try_into().unwrap_or([0; 4])) as f64,
                ),
                _ => (
                    f64::from_le_bytes(w.try_into().unwrap_or([0; 8])),
                    f64::from_le_bytes(g.try_into().unwrap_or([0; 8])),
                ),
            };
            if x.is_nan() || y.is_nan() {
                x.is_nan() && y.is_nan()
            } else if x == y {
                true
            } else {
                let diff = (x - y).abs();
                let big = x.abs().max(y.abs());
                let ok = diff <= rtol * big || diff <= rtol * scale;
                if ok && big > 0.0 {
                    out.max_rel_error = out.max_rel_error.max(diff / big);
                }
                ok
            }
        } else {
            w == g
        };
        if !same {
            mark(&mut out, pos, len, w, g);
        }
        pos += len;
    }
    if want.len() != got.len() {
        out.differing += 1;
        out.ranges
            .push((lo + n as i64, lo + want.len().max(got.len()) as i64));
    }
    out
}

/// The verdict on an outbound array whose pointer was null on at least one side
/// (`want_null`: the program's, `got_null`: the replay's; `[lo, hi)` the program's bounds):
/// null on both sides is equal, null on one side only is a difference.
pub fn compare_null(
    name: &str,
    (lo, hi): (i64, i64),
    (kind, elem_bytes): (ElemKind, u64),
    want_null: bool,
    got_null: bool,
) -> ArrayCompare {
    let null = match (want_null, got_null) {
        (true, false) => NullPointer::Program,
        (false, true) => NullPointer::Replay,
        _ => NullPointer::Both,
    };
    ArrayCompare {
        differing: u64::from(null != NullPointer::Both),
        null: Some(null),
        ..ArrayCompare::nothing_compared(name, (lo, hi), (kind, elem_bytes), kind.default_rtol())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn integers_are_bit_exact() {
        let r = compare(
            "c",
            (0, 16),
            (ElemKind::Bits, 4),
            &ints(&[1, 2, 3, 4]),
            &ints(&[1, 2, 3, 4]),
            None,
        );
        assert!(r.passed());
        let r = compare(
            "c",
            (8, 24),
            (ElemKind::Bits, 4),
            &ints(&[1, 2, 3, 4]),
            &ints(&[1, 9, 9, 4]),
            None,
        );
        assert_eq!(r.differing, 2);
        assert_eq!(r.ranges, vec![(12, 20)]);
        let text = r.to_string();
        assert!(
            text.contains("first at byte 12: expected 0x00000002 (2), got 0x00000009 (9)"),
            "{text}"
        );
    }

    #[test]
    fn floats_within_tolerance() {
        let f = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let r = compare(
            "x",
            (0, 8),
            (ElemKind::F32, 4),
            &f(&[1.0, 100.0]),
            &f(&[1.000001, 100.0]),
            None,
        );
        assert!(r.passed(), "{r}");
        let r = compare(
            "x",
            (0, 8),
            (ElemKind::F32, 4),
            &f(&[1.0, 100.0]),
            &f(&[1.01, 100.0]),
            None,
        );
        assert!(!r.passed());
        // Near zero, judged against the array's scale.
        let r = compare(
            "x",
            (0, 8),
            (ElemKind::F32, 4),
            &f(&[1e-9, 100.0]),
            &f(&[2e-9, 100.0]),
            None,
        );
        assert!(r.passed(), "{r}");
    }

    #[test]
    fn null_on_both_sides_is_equal_and_on_one_side_a_difference() {
        let both = compare_null("res", (0, 64), (ElemKind::F64, 8), true, true);
        assert!(both.passed());
        assert_eq!(
            both.to_string(),
            "`res` [0, 64): pass (a null pointer in the program and in the replay: nothing to compare)"
        );
        let program = compare_null("res", (0, 64), (ElemKind::F64, 8), true, false);
        assert!(!program.passed());
        assert_eq!(
            program.to_string(),
            "`res` [0, 64): FAIL: the pointer was null in the program, but the replay returned a section of it"
        );
        let replay = compare_null("res", (0, 64), (ElemKind::F64, 8), false, true);
        assert!(!replay.passed());
        assert_eq!(
            replay.to_string(),
            "`res` [0, 64): FAIL: the replay's pointer was null, but the program's was not"
        );
    }

    #[test]
    fn unaligned_sections_compare_leading_bytes() {
        let r = compare(
            "b",
            (1, 6),
            (ElemKind::Bits, 4),
            &[1, 2, 3, 4, 5],
            &[1, 2, 3, 4, 6],
            None,
        );
        assert_eq!(r.compared, 5);
        assert_eq!(r.ranges, vec![(5, 6)]);
    }
}
