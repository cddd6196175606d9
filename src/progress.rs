//! Progress on stderr for long runs: an indicatif bar when stderr is a terminal, one plain
//! line per step when it is not (logs, pipes, CI), nothing with `--quiet`. Results go to
//! stdout and are never mixed with it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Bar,
    Lines,
    Quiet,
}

impl Mode {
    /// A bar on a terminal, lines otherwise; `quiet` silences both.
    pub fn detect(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// One phase of work over `len` items (files, steps).
#[derive(Debug)]
pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts a phase: `verb` names what is done to each item ("loading", "analysing").
    pub fn start(mode: Mode, verb: &str, len: usize) -> Progress {
        let bar = (mode == Mode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "warpwise: {prefix} [{bar:30}] {pos}/{len} {wide_msg} ({elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(verb.to_string());
            bar.tick();
            bar
        });
        Progress { mode, bar }
    }

    /// An item is done; `item` names it (a file).
    pub fn done(&self, item: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(item.to_string());
            bar.inc(1);
        }
    }

    /// A line of plain progress (`warpwise: analysing FILE`), printed only without a bar, in
    /// the order the caller chooses (items done in parallel finish in any order).
    pub fn line(&self, text: &str) {
        if self.mode == Mode::Lines {
            eprintln!("warpwise: {text}");
        }
    }

    /// A message that must stay visible (a diagnostic) printed above the bar.
    pub fn print(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprint!("{text}")),
            None => eprint!("{text}"),
        }
    }

    /// Ends the phase and removes the bar from the terminal.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
