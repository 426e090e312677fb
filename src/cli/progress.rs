//! [`Bar`]: the progress line of `wharf run` and `wharf plan` on a terminal — the phase
//! (reading, deciding, staging, swapping), and while reading the percentage, bytes, rate
//! and ETA. It draws only when stderr is a terminal and the output is a report, not
//! `--json`: a scheduler's log gets no progress bytes at all.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::report::inert;
use crate::engine::Progress;

/// How often the bar redraws between updates, so the spinner and elapsed time move
/// while a date is staged.
const TICK: Duration = Duration::from_millis(120);

/// Longest input name shown in front of the bar (a name is a file name; long ones would
/// push the numbers off a narrow terminal).
const NAME_CHARS: usize = 24;

/// One input's progress line on stderr; drawing nothing when there is no terminal.
pub struct Bar {
    bar: Option<ProgressBar>,
    /// Bytes the last reading update reported: a smaller figure starts a second pass.
    last_bytes: u64,
    /// 1 on the first read of the file, 2 once it is read again.
    pass: u8,
}

impl Bar {
    /// A bar for input `name`, drawn only when stderr is a terminal and `json` is off.
    pub fn new(name: &str, json: bool) -> Bar {
        let show = !json && std::io::stderr().is_terminal();
        Bar::with_target(name, show.then(ProgressDrawTarget::stderr))
    }

    fn with_target(name: &str, target: Option<ProgressDrawTarget>) -> Bar {
        let bar = target.map(|target| {
            let bar = ProgressBar::with_draw_target(None, target)
                .with_style(spinner_style())
                .with_prefix(short_name(name))
                .with_message("reading");
            bar.enable_steady_tick(TICK);
            bar
        });
        Bar {
            bar,
            last_bytes: 0,
            pass: 1,
        }
    }

    /// Shows `progress`; always `true` (the CLI never cancels a run half-way).
    pub fn update(&mut self, progress: Progress) -> bool {
        let Some(bar) = &self.bar else {
            return true;
        };
        match progress {
            Progress::Reading { bytes, total } => {
                if bytes < self.last_bytes {
                    // The file is read again only when its first pass found conflicts.
                    self.pass = 2;
                    bar.reset();
                }
                self.last_bytes = bytes;
                if bar.length() != Some(total) {
                    bar.set_style(bytes_style());
                    bar.set_length(total);
                }
                bar.set_position(bytes);
                bar.set_message(reading_phase(self.pass, bytes, total));
            }
            Progress::Staging { date } => {
                bar.set_style(spinner_style());
                bar.set_message(format!("staging event_date={date}"));
            }
            Progress::Swapping { date } => {
                bar.set_style(spinner_style());
                bar.set_message(format!("swapping event_date={date}"));
            }
        }
        true
    }

    /// Removes the bar from the terminal, before the report or an error is printed.
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The phase while reading: the second pass says why the file is read twice, and a read
/// that reached the end is the decision being made (retries, ranking, dates).
fn reading_phase(pass: u8, bytes: u64, total: u64) -> String {
    match (pass, bytes >= total) {
        (1, false) => "reading".to_owned(),
        (1, true) => "deciding".to_owned(),
        (_, false) => "re-reading (conflicts found)".to_owned(),
        (_, true) => "deciding (second pass)".to_owned(),
    }
}

fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix} {msg} {percent:>3}% [{bar:20}] {binary_bytes}/{binary_total_bytes} \
         {binary_bytes_per_sec} ETA {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix} {spinner} {msg} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// The input name made inert and cut to [`NAME_CHARS`], keeping its end (where the
/// distinguishing part of a producer's name usually is).
fn short_name(name: &str) -> String {
    let name = inert(name);
    let chars = name.chars().count();
    if chars <= NAME_CHARS {
        return name;
    }
    let tail: String = name.chars().skip(chars - (NAME_CHARS - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_the_bar_is_inert() {
        let mut bar = Bar::with_target("x.jsonl", None);
        assert!(bar.update(Progress::Reading {
            bytes: 5,
            total: 10
        }));
        assert!(bar.bar.is_none());
    }

    #[test]
    fn a_smaller_byte_count_is_the_second_pass() {
        let mut bar = Bar::with_target("x.jsonl", Some(ProgressDrawTarget::hidden()));
        bar.update(Progress::Reading {
            bytes: 10,
            total: 10,
        });
        assert_eq!(bar.pass, 1);
        bar.update(Progress::Reading {
            bytes: 3,
            total: 10,
        });
        assert_eq!(bar.pass, 2);
        let shown = bar.bar.as_ref().map(ProgressBar::message).unwrap();
        assert!(shown.contains("conflicts"), "{shown}");
    }

    #[test]
    fn phases_and_names() {
        assert_eq!(reading_phase(1, 1, 2), "reading");
        assert_eq!(reading_phase(1, 2, 2), "deciding");
        assert!(reading_phase(2, 0, 2).starts_with("re-reading"));
        let long = "a".repeat(40) + "-0042.jsonl";
        let short = short_name(&long);
        assert_eq!(short.chars().count(), NAME_CHARS);
        assert!(short.ends_with("-0042.jsonl"));
        assert_eq!(short_name("x\u{1b}\u{7}.jsonl"), "x␛\u{FFFD}.jsonl");
    }
}
