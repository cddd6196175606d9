//! The one diagnostic type of warpwise (frontend errors and analysis findings alike) and its rustc-style renderer.
//!
//! Rendering is hand-written rather than delegated to `annotate-snippets`/`codespan-reporting`:
//! we only ever show one line per label, and those crates want the whole file text up front,
//! which we do not have for headers the source map never read.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Help,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Help => "help",
        }
    }

    fn color(self) -> &'static str {
        match self {
            Severity::Error => "\x1b[1;31m",
            Severity::Warning => "\x1b[1;33m",
            Severity::Note => "\x1b[1;32m",
            Severity::Help => "\x1b[1;36m",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A position in a source file, optionally with the text of its line so the renderer never
/// has to go back to the file system.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub path: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
    /// 1-based byte column one past the end of the span on the same line (exclusive).
    pub end_col: Option<u32>,
    pub line_text: Option<String>,
    pub message: Option<String>,
}

impl Label {
    pub fn new(path: impl Into<PathBuf>, line: u32, col: u32) -> Self {
        Label {
            path: path.into(),
            line,
            col,
            end_col: None,
            line_text: None,
            message: None,
        }
    }

    pub fn with_end_col(mut self, end_col: u32) -> Self {
        self.end_col = Some(end_col);
        self
    }

    pub fn with_line_text(mut self, text: impl Into<String>) -> Self {
        self.line_text = Some(text.into());
        self
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
    }
}

/// A message for the user, with an optional source position and advice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable identifier such as `WW101`, so users can look the finding up or silence it.
    pub code: Option<String>,
    pub message: String,
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code: None,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
    }

    pub fn note(message: impl Into<String>) -> Self {
        Self::new(Severity::Note, message)
    }

    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    pub fn with_primary(mut self, label: Label) -> Self {
        self.primary = Some(label);
        self
    }

    pub fn with_secondary(mut self, label: Label) -> Self {
        self.secondary.push(label);
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Multi-line rustc-style rendering; `color` adds ANSI escapes (leave it off for tests and
    /// non-terminals).
    pub fn render(&self, color: bool) -> String {
        let paint = |style: &str, text: &str| -> String {
            if color {
                format!("{style}{text}\x1b[0m")
            } else {
                text.to_string()
            }
        };
        const BLUE: &str = "\x1b[1;34m";
        const BOLD: &str = "\x1b[1m";

        let mut out = String::new();
        let head = match &self.code {
            Some(code) => format!("{}[{}]", self.severity, code),
            None => self.severity.to_string(),
        };
        out.push_str(&paint(self.severity.color(), &head));
        out.push_str(&paint(BOLD, &format!(": {}", self.message)));
        out.push('\n');

        let labels: Vec<(&Label, bool)> = self
            .primary
            .iter()
            .map(|l| (l, true))
            .chain(self.secondary.iter().map(|l| (l, false)))
            .collect();
        let gutter = labels
            .iter()
            .map(|(l, _)| l.line.to_string().len())
            .max()
            .unwrap_or(1);
        let pad = " ".repeat(gutter);

        for (label, primary) in &labels {
            let arrow = if *primary { "-->" } else { ":::" };
            out.push_str(&format!("{pad}{} {label}\n", paint(BLUE, arrow)));
            let Some(text) = &label.line_text else {
                if let Some(msg) = &label.message {
                    out.push_str(&format!("{pad} {} {msg}\n", paint(BLUE, "=")));
                }
                continue;
            };
            let bar = paint(BLUE, "|");
            let start = display_width(text, label.col.saturating_sub(1) as usize);
            let end = label
                .end_col
                .map(|e| display_width(text, e.saturating_sub(1) as usize))
                .unwrap_or(start + 1)
                .max(start + 1);
            let (shown, start, end) = window(&expand_tabs(text), start, end);
            out.push_str(&format!("{pad} {bar}\n"));
            out.push_str(&format!(
                "{} {bar} {}\n",
                paint(BLUE, &format!("{:>gutter$}", label.line)),
                shown.trim_end()
            ));
            let mark = if *primary { "^" } else { "-" };
            let style = if *primary {
                self.severity.color()
            } else {
                BLUE
            };
            let mut underline = mark.repeat(end - start);
            if let Some(msg) = &label.message {
                underline.push(' ');
                underline.push_str(msg);
            }
            out.push_str(&format!(
                "{pad} {bar} {}{}\n",
                " ".repeat(start),
                paint(style, &underline)
            ));
        }

        if !labels.is_empty() && (!self.notes.is_empty() || self.help.is_some()) {
            out.push_str(&format!("{pad} {}\n", paint(BLUE, "|")));
        }
        for note in &self.notes {
            out.push_str(&format!("{pad} {} {note}\n", paint(BLUE, "= note:")));
        }
        if let Some(help) = &self.help {
            out.push_str(&format!("{pad} {} {help}\n", paint(BLUE, "= help:")));
        }
        out
    }
}

/// The most columns of a source line a diagnostic shows: a generated or minified file can
/// have a line of megabytes, and every diagnostic on it would print all of it.
const SHOWN_COLUMNS: usize = 120;

/// The part of `shown` (tabs expanded) around columns `start..end` that fits in
/// [`SHOWN_COLUMNS`], with `...` where it was cut, and the columns moved to match.
fn window(shown: &str, start: usize, end: usize) -> (String, usize, usize) {
    // Counted, not collected: a line of 20 MB was 80 MB of `char`s.
    let len = shown.chars().count();
    if len <= SHOWN_COLUMNS {
        return (shown.to_string(), start, end);
    }
    let from = start.saturating_sub(SHOWN_COLUMNS / 3).min(len);
    let to = (from + SHOWN_COLUMNS).min(len);
    let prefix = if from > 0 { "..." } else { "" };
    let suffix = if to < len { "..." } else { "" };
    let text: String = shown.chars().skip(from).take(to - from).collect();
    let moved = |c: usize| c.clamp(from, to) - from + prefix.len();
    let (start, end) = (moved(start), moved(end).max(moved(start) + 1));
    (format!("{prefix}{text}{suffix}"), start, end)
}

/// Tabs are shown as four spaces, as rustc does, so carets line up whatever the terminal's tab
/// stops are.
fn expand_tabs(text: &str) -> String {
    text.replace('\t', "    ")
}

/// Display width of the first `bytes` bytes of `text` after tab expansion, counting one column
/// per character (good enough for source code, which is nearly always ASCII).
fn display_width(text: &str, bytes: usize) -> usize {
    let mut width = 0;
    for (i, ch) in text.char_indices() {
        if i >= bytes {
            return width;
        }
        width += if ch == '\t' { 4 } else { 1 };
    }
    // Spans may point one past the end of the line (e.g. "expected `;`").
    width + bytes.saturating_sub(text.len())
}

impl fmt::Display for Diagnostic {
    /// One line: `file:line:col: error[CODE]: message`, the form editors and CI logs pick up.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(label) = &self.primary {
            write!(f, "{label}: ")?;
        }
        match &self.code {
            Some(code) => write!(f, "{}[{}]: {}", self.severity, code, self.message),
            None => write!(f, "{}: {}", self.severity, self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rustc_style() {
        let d = Diagnostic::error("cannot find `foo.h`")
            .with_code("WW001")
            .with_primary(
                Label::new("a.c", 3, 10)
                    .with_end_col(17)
                    .with_line_text("#include \"foo.h\"")
                    .with_message("not found"),
            )
            .with_note("searched: inc")
            .with_help("add -I");
        let text = d.render(false);
        assert_eq!(
            text,
            "error[WW001]: cannot find `foo.h`\n --> a.c:3:10\n  |\n3 | #include \"foo.h\"\n  |          ^^^^^^^ not found\n  |\n  = note: searched: inc\n  = help: add -I\n"
        );
        assert_eq!(d.to_string(), "a.c:3:10: error[WW001]: cannot find `foo.h`");
    }

    #[test]
    fn tabs_keep_carets_aligned() {
        let d = Diagnostic::warning("w").with_primary(
            Label::new("a.c", 1, 2)
                .with_end_col(5)
                .with_line_text("\tfor"),
        );
        assert!(d.render(false).contains("|     for\n  |     ^^^\n"));
    }

    #[test]
    fn a_huge_line_is_shown_around_the_column_only() {
        let line = format!("{}int bad = ;{}", "x".repeat(100_000), "y".repeat(100_000));
        let col = 100_000 + 11;
        let d = Diagnostic::error("expected an expression")
            .with_primary(Label::new("gen.c", 1, col).with_line_text(line));
        let text = d.render(false);
        assert!(text.len() < 600, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        let source = lines.iter().find(|l| l.contains("int bad")).unwrap();
        let caret = lines.iter().find(|l| l.contains('^')).unwrap();
        // The caret still points at the `;`.
        let at = caret.find('^').unwrap();
        assert_eq!(&source[at..at + 1], ";", "{source}\n{caret}");
        assert!(
            source.contains("...xxx") && source.ends_with("yyy..."),
            "{source}"
        );
    }
}
