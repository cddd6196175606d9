//! Reports written a loop at a time (a report of many loops, each written as it is made):
//! the pieces that, put together, are the bytes `output::serialize` (YAML, JSON) or
//! `render` (text) makes of the whole report.

use crate::output::Format;
use instantiate::model::{InstanceLoop, InstanceReport};
use instantiate::render;
use serde::Serialize;
use std::io::Write;

/// The pieces of one document in one format: what comes before its loops, each loop, and
/// what comes after them.
#[derive(Debug)]
pub struct Pieces {
    format: Format,
    head: String,
    /// After the loops, where there were some.
    tail: String,
    /// In place of the loops and after them, where there were none.
    tail_none: String,
    /// Whether a loop has been written.
    any: bool,
}

impl Pieces {
    /// The pieces around the loops of `empty`, a report without loops whose `loops` field
    /// serializes as `loops`; `None` for a format the report is not written in so.
    pub fn around<T: Serialize>(empty: &T, format: Format) -> Option<Pieces> {
        let (text, key) = match format {
            Format::Yaml => (profile::yaml_out::to_string(empty).ok()?, "loops: []\n"),
            Format::Json => (
                serde_json::to_string_pretty(empty).ok()? + "\n",
                "\"loops\": []",
            ),
            _ => return None,
        };
        let at = text
            .match_indices(key)
            .map(|(at, _)| at)
            .find(|&at| format == Format::Json || at == 0 || text[..at].ends_with('\n'))?;
        let (head, tail, tail_none) = match format {
            Format::Yaml => {
                let after = &text[at + key.len()..];
                (
                    text[..at].to_string(),
                    after.to_string(),
                    format!("{key}{after}"),
                )
            }
            _ => {
                // The array stays open for the loops; `]` and the rest close it.
                let open = at + key.len() - 1;
                let after = &text[open..];
                (
                    text[..open].to_string(),
                    format!("\n  {after}"),
                    after.to_string(),
                )
            }
        };
        Some(Pieces {
            format,
            head,
            tail,
            tail_none,
            any: false,
        })
    }

    /// The pieces of an instantiated report with `head` above its loops (text, YAML or
    /// JSON; `None` for the others).
    pub fn instance(head: &InstanceReport, format: Format) -> Option<Pieces> {
        match format {
            Format::Text => Some(Pieces {
                format,
                head: render::head(&head.inputs),
                tail: String::new(),
                tail_none: String::new(),
                any: false,
            }),
            _ => Pieces::around(head, format),
        }
    }

    pub fn head(&self) -> &str {
        &self.head
    }

    /// One loop as it follows another.
    pub fn item<T: Serialize>(&self, l: &T) -> String {
        match self.format {
            Format::Yaml => profile::yaml_out::to_string(&[l])
                .unwrap_or_else(|e| format!("# cannot serialize: {e}\n")),
            _ => {
                // Two levels in: JSON strings hold no line breaks, so every line is indented.
                let text = serde_json::to_string_pretty(l).unwrap_or_default();
                let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
                out.push_str(",\n    ");
                out.push_str(&text.replace('\n', "\n    "));
                out
            }
        }
    }

    /// One instantiated loop as it follows another.
    pub fn instance_item(&self, l: &InstanceLoop) -> String {
        match self.format {
            Format::Text => {
                let mut out = String::from("\n");
                render::render_loop(&mut out, l);
                out
            }
            _ => self.item(l),
        }
    }

    /// What the first loop's item has before it instead of what separates it from a loop
    /// before it: the bytes of an item to leave out, and the text to put first.
    fn first(&self) -> (usize, &'static str) {
        match self.format {
            Format::Yaml => (0, "loops:\n"),
            Format::Json => (1, ""),
            _ => (0, ""),
        }
    }

    /// Writes `item` (from [`Self::item`]) to `out`, the first one as the first.
    pub fn put(&mut self, out: &mut impl Write, item: &str) -> std::io::Result<()> {
        if self.any {
            return out.write_all(item.as_bytes());
        }
        self.any = true;
        let (skip, first) = self.first();
        out.write_all(first.as_bytes())?;
        out.write_all(&item.as_bytes()[skip..])
    }

    /// Copies items written one after another (by [`Self::item`]) from `items` to `out`.
    pub fn put_all(
        &mut self,
        out: &mut impl Write,
        items: &mut impl std::io::Read,
    ) -> std::io::Result<()> {
        if !self.any {
            let mut start = [0u8; 1];
            let (skip, first) = self.first();
            // Nothing there, nothing written.
            let n = items.read(&mut start)?;
            if n == 0 {
                return Ok(());
            }
            self.any = true;
            out.write_all(first.as_bytes())?;
            out.write_all(&start[skip.min(1)..n])?;
        }
        std::io::copy(items, out).map(|_| ())
    }

    /// Everything after the last loop.
    pub fn tail(&self) -> &str {
        if self.any {
            &self.tail
        } else {
            &self.tail_none
        }
    }
}
