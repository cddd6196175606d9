//! A JSON kernel report read a loop at a time from its file: memory for one loop, not for
//! the document (a report of 770,000 loops is 770 MB of text and was 10 GB as values).

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::io::Read;
use std::marker::PhantomData;

/// Reads through to `inner`, checking the text as `read_input_text` and `too_deep` check a
/// whole report: at most `cap` bytes, UTF-8, nested no deeper than `limit`. Past a problem
/// it reads nothing more; the caller reads the report whole for the message.
#[derive(Debug)]
pub struct Checked<R> {
    inner: R,
    read: u64,
    cap: u64,
    line: Vec<u8>,
    nesting: profile::yaml_guard::Nesting,
    pub problem: bool,
}

impl<R: Read> Checked<R> {
    pub fn new(inner: R, cap: u64, limit: usize) -> Checked<R> {
        Checked {
            inner,
            read: 0,
            cap,
            line: Vec::new(),
            nesting: profile::yaml_guard::Nesting::new(limit),
            problem: false,
        }
    }

    /// Checks one line (its break left off); false at a problem.
    fn check_line(nesting: &mut profile::yaml_guard::Nesting, line: &[u8]) -> bool {
        match std::str::from_utf8(line) {
            Ok(text) => {
                // `str::lines` leaves a `\r` before the `\n` out.
                let text = text.strip_suffix('\r').unwrap_or(text);
                nesting.line(text).is_none()
            }
            Err(_) => false,
        }
    }

    fn refuse(&mut self) -> std::io::Error {
        self.problem = true;
        std::io::Error::other("the report needs reading whole")
    }
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.problem {
            return Err(self.refuse());
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.cap {
            return Err(self.refuse());
        }
        if n == 0 {
            // The last line, without a break.
            if !self.line.is_empty() {
                let line = std::mem::take(&mut self.line);
                if !Self::check_line(&mut self.nesting, &line) {
                    return Err(self.refuse());
                }
            }
            return Ok(0);
        }
        let mut rest = &buf[..n];
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let ok = if self.line.is_empty() {
                Self::check_line(&mut self.nesting, &rest[..end])
            } else {
                self.line.extend_from_slice(&rest[..end]);
                let line = std::mem::take(&mut self.line);
                Self::check_line(&mut self.nesting, &line)
            };
            if !ok {
                return Err(self.refuse());
            }
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(n)
    }
}

/// Reads the report object of `de`, handing each element of `loops` to `each` as it is
/// read (an error of `each` stops the reading), and gives the report's schema. Whatever
/// the kernel report's own reading refuses is refused (an error here, not the same
/// message: the caller reads the report whole for that).
pub fn each_loop<'de, D, T, F>(de: D, each: F) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
{
    de.deserialize_map(Report {
        each,
        item: PhantomData,
    })
}

struct Report<T, F> {
    each: F,
    item: PhantomData<T>,
}

impl<'de, T, F> Visitor<'de> for Report<T, F>
where
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
{
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a kernel report")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<String, A::Error> {
        let mut schema: Option<String> = None;
        let (mut loops, mut skipped) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema" if schema.is_some() => return Err(de::Error::duplicate_field("schema")),
                "schema" => schema = Some(map.next_value()?),
                "loops" if loops => return Err(de::Error::duplicate_field("loops")),
                "loops" => {
                    loops = true;
                    map.next_value_seed(Loops {
                        each: &mut self.each,
                        item: PhantomData,
                    })?;
                }
                "skipped" if skipped => return Err(de::Error::duplicate_field("skipped")),
                "skipped" => {
                    skipped = true;
                    map.next_value::<Vec<String>>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !loops {
            return Err(de::Error::missing_field("loops"));
        }
        schema.ok_or_else(|| de::Error::missing_field("schema"))
    }
}

struct Loops<'f, T, F> {
    each: &'f mut F,
    item: PhantomData<T>,
}

impl<'de, T, F> DeserializeSeed<'de> for Loops<'_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de, T, F> Visitor<'de> for Loops<'_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
{
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the loops of a kernel report")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<T>()? {
            (self.each)(item).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}
