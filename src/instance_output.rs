//! An instantiated report written a loop at a time: the pieces that, put together, are
//! the bytes `output::serialize` (YAML, JSON) or `render` (text) makes of the whole report.

use crate::output::Format;
use instantiate::model::InstanceLoop;
use instantiate::render;
use instantiate::Inputs;
use serde::Serialize;

/// The fields of the report above its loops, in its order.
#[derive(Serialize)]
struct Head<'a> {
    schema: &'a str,
    inputs: &'a Inputs,
}

/// The pieces of one format (text, YAML or JSON).
#[derive(Clone, Copy, Debug)]
pub struct Pieces {
    format: Format,
}

impl Pieces {
    /// `None` for the formats of `analyze` alone (SARIF, HTML).
    pub fn new(format: Format) -> Option<Pieces> {
        matches!(format, Format::Text | Format::Yaml | Format::Json).then_some(Pieces { format })
    }

    /// Everything before the first loop.
    pub fn head(&self, schema: &str, inputs: &Inputs) -> String {
        let head = Head { schema, inputs };
        match self.format {
            Format::Yaml => profile::yaml_out::to_string(&head)
                .unwrap_or_else(|e| format!("# cannot serialize: {e}\n")),
            Format::Json => {
                let text = serde_json::to_string_pretty(&head).unwrap_or_default();
                // The object stays open for the loops.
                let open = text.strip_suffix("\n}").unwrap_or(&text);
                format!("{open},\n  \"loops\": [")
            }
            _ => render::head(inputs),
        }
    }

    /// One loop as it follows another.
    pub fn item(&self, l: &InstanceLoop) -> String {
        match self.format {
            Format::Yaml => profile::yaml_out::to_string(&[l])
                .unwrap_or_else(|e| format!("# cannot serialize: {e}\n")),
            Format::Json => {
                // Two levels in: JSON strings hold no line breaks, so every line is indented.
                let text = serde_json::to_string_pretty(l).unwrap_or_default();
                let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
                out.push_str(",\n    ");
                out.push_str(&text.replace('\n', "\n    "));
                out
            }
            _ => {
                let mut out = String::from("\n");
                render::render_loop(&mut out, l);
                out
            }
        }
    }

    /// What the first loop's item has before it instead of what separates it from a loop
    /// before it: the bytes of [`Self::item`] to leave out, and the text to put first.
    pub fn first(&self) -> (usize, &'static str) {
        match self.format {
            Format::Yaml => (0, "loops:\n"),
            Format::Json => (1, ""),
            _ => (0, ""),
        }
    }

    /// Everything after the last loop (`any`: there were loops).
    pub fn tail(&self, any: bool) -> &'static str {
        match (self.format, any) {
            (Format::Yaml, true) => "",
            (Format::Yaml, false) => "loops: []\n",
            (Format::Json, true) => "\n  ]\n}\n",
            (Format::Json, false) => "]\n}\n",
            _ => "",
        }
    }
}
