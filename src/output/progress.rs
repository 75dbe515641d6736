//! This module defines [`Progress`]: indicatif bars on stderr when it is a terminal, nothing otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::store::load::LoadProgress;

/// A progress display, hidden off a terminal or under `--quiet`.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A display that draws only when stderr is a terminal and `quiet` is off.
    pub fn new(quiet: bool) -> Self {
        let visible = !quiet && std::io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(
            None,
            if visible {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        Self { bar }
    }

    /// A spinner with a message, for a step without a measurable length (saving or opening a state).
    pub fn message(&self, text: &str) {
        if self.bar.is_hidden() {
            return;
        }
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            self.bar.set_style(style);
        }
        self.bar.set_message(text.to_owned());
        self.bar
            .enable_steady_tick(std::time::Duration::from_millis(100));
    }

    /// Clears the display.
    pub fn clear(&self) {
        self.bar.disable_steady_tick();
        self.bar.finish_and_clear();
    }
}

impl LoadProgress for Progress {
    fn begin(&self, name: &str, len: Option<u64>) {
        self.bar.reset();
        self.bar.set_position(0);
        let style = match len {
            Some(len) => {
                self.bar.set_length(len);
                ProgressStyle::with_template(
                    "{msg:.bold} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                )
            }
            None => {
                self.bar.unset_length();
                ProgressStyle::with_template("{msg:.bold} {spinner} {bytes} {bytes_per_sec}")
            }
        };
        if let Ok(style) = style {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_message(format!("loading {name}"));
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    fn end(&self) {
        self.bar.finish_and_clear();
    }
}

impl crate::datalog::FixpointProgress for Progress {
    fn pass(&self, stage: usize, stages: usize, pass: usize, derived: usize) {
        if self.bar.is_hidden() {
            return;
        }
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            self.bar.set_style(style);
        }
        self.bar.set_message(format!(
            "stage {}/{stages}, pass {pass}: {derived} facts derived",
            stage + 1
        ));
        self.bar.tick();
    }
}
