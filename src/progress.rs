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

    /// One step of unknown length (building a program): a spinner with `message` on a
    /// terminal, the message as a line otherwise. Not for steps that let the user's program
    /// write to the terminal (the spinner would draw over its output).
    pub fn spinner(mode: Mode, message: &str) -> Progress {
        let bar = match mode {
            Mode::Bar => {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                let style =
                    ProgressStyle::with_template("warpwise: {spinner} {wide_msg} ({elapsed})")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner());
                bar.set_style(style);
                bar.set_message(message.to_string());
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                Some(bar)
            }
            Mode::Lines => {
                eprintln!("warpwise: {message}");
                None
            }
            Mode::Quiet => None,
        };
        Progress { mode, bar }
    }

    /// A line of progress in every mode but quiet (a step whose output is the user's).
    pub fn say(mode: Mode, text: &str) {
        if mode != Mode::Quiet {
            eprintln!("warpwise: {text}");
        }
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
