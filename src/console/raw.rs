//! The Raw tab's data: [`read_window`] reads and classifies only the lines on screen,
//! through the input's [`LineIndex`] (a file or a set's parts, plain or compressed), so a
//! 1 GB input scrolls without being loaded.
//!
//! Lines follow CONTRACT.md §1 exactly as `input::scan` splits them (on `\n`, one
//! trailing `\r` stripped, a BOM skipped at each part's start, no empty last line). A line's
//! text is cut to [`SHOW_BYTES`] for display and prohibited values are masked
//! ([`super::mask`]); its outcome comes from [`crate::contract::classify`] when the line
//! is short enough to read whole, and the plan's findings override it where a plan exists
//! (they also know conflicts, which need the whole file): its held ones in the view, its
//! spilled ones as the window is read ([`spilled_outcomes`]); [`next_finding`] walks both.

use super::lines::ReadLine;
pub use super::lines::{LineIndex, Repeat};
use super::mask;
use crate::contract::{self, LineBytes, LineReason, Outcome, Schema};
use crate::error::Result;
use crate::plan::{LineFinding, Plan, SpilledFindings};
use crate::store::findings;

/// Bytes of a line read for display.
pub const SHOW_BYTES: usize = 4096;
/// Lines up to this long are read whole and classified on the spot.
pub const CLASSIFY_BYTES: usize = 64 * 1024;
/// Lines read around the cursor at a time (more than any screen is tall).
pub const WINDOW: usize = 256;

/// Lines read around the cursor in a compressed input: each read decodes its part from
/// the start, so a wider window makes them rarer (at most 8 MiB of lines cut for display).
pub const COMPRESSED_WINDOW: usize = 2048;

/// The lines a window read of `index` takes.
pub fn window_lines(index: &LineIndex) -> usize {
    if index.compressed() {
        COMPRESSED_WINDOW
    } else {
        WINDOW
    }
}

/// A line's outcome as the Raw tab shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineOutcome {
    Accepted,
    Blank,
    Rejected {
        reason: LineReason,
        field: Option<String>,
    },
    Breach {
        reason: LineReason,
        field: Option<String>,
    },
    /// Too long to classify here; the plan will tell.
    Unknown,
    /// Accepted, and an identical retry of the event on line `of` (§2).
    Retry {
        of: u64,
    },
    /// The id of the event on line `of` with other values: a breach (§2).
    Conflict {
        of: u64,
    },
}

/// One line on screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLine {
    /// 1-based.
    pub number: u64,
    /// Masked, cut to [`SHOW_BYTES`]; not yet sanitized.
    pub text: String,
    pub bytes: u64,
    pub outcome: LineOutcome,
}

/// Reads lines `first..first + count` (1-based) of the input `index` indexed.
pub fn read_window(
    index: &LineIndex,
    first: u64,
    count: usize,
    schema: &Schema,
    max_line_bytes: usize,
) -> Result<Vec<RawLine>> {
    let from = first.max(1);
    let to = (from + count as u64).min(index.lines() + 1);
    let numbers: Vec<u64> = (from..to).collect();
    let mut out = Vec::with_capacity(numbers.len());
    index.read(&numbers, CLASSIFY_BYTES, &mut |line| {
        out.push(raw_line(&line, schema, max_line_bytes))
    })?;
    Ok(out)
}

/// One line read back, classified (when read whole) and masked for the screen.
fn raw_line(line: &ReadLine, schema: &Schema, max_line_bytes: usize) -> RawLine {
    let complete = line.complete();
    let mut bytes = &line.bytes[..];
    if !complete {
        bytes = &bytes[..bytes.len().min(SHOW_BYTES)];
    } else {
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    }
    // input::scan's rule: more than max + 1 bytes (room for a `\r`), or more than max
    // once the `\r` is stripped.
    let too_long =
        line.len > max_line_bytes as u64 + 1 || (complete && bytes.len() > max_line_bytes);
    let outcome = if too_long {
        LineOutcome::Rejected {
            reason: LineReason::LineTooLong,
            field: None,
        }
    } else if complete {
        outcome_of(contract::classify(LineBytes::Kept(bytes), schema))
    } else {
        LineOutcome::Unknown
    };
    let mut text = mask::masked_line(bytes, complete, &schema.prohibited);
    if text.len() > SHOW_BYTES {
        let mut cut = SHOW_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    RawLine {
        number: line.number,
        text,
        bytes: line.len,
        outcome,
    }
}

/// Sets the outcome of each of `lines` (in line order) that has a finding in `spilled`:
/// the findings past those a plan holds, read from the spill for the lines on screen.
pub fn spilled_outcomes(lines: &mut [RawLine], spilled: &SpilledFindings) -> Result<()> {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return Ok(());
    };
    let (first, last) = (first.number, last.number);
    let mut lines = lines.iter_mut().peekable();
    for finding in findings::from_line(spilled, first)? {
        let finding = finding?;
        if finding.line > last {
            break;
        }
        while lines.next_if(|l| l.number < finding.line).is_some() {}
        if let Some(line) = lines.next_if(|l| l.number == finding.line) {
            line.outcome = finding_outcome(&finding);
        }
    }
    Ok(())
}

/// The line of the nearest finding after `cursor` (`forward`) or before it, among the
/// `plan`'s held findings and its spilled ones, which all come after the held.
pub fn next_finding(plan: &Plan, cursor: u64, forward: bool) -> Result<Option<u64>> {
    let held = &plan.findings;
    let spilled = plan.spilled.as_ref();
    if forward {
        if let Some(f) = held.iter().find(|f| f.line > cursor) {
            return Ok(Some(f.line));
        }
        // A few seeks into a local file: quick enough for the UI thread.
        let Some(spilled) = spilled else {
            return Ok(None);
        };
        return Ok(findings::from_line(spilled, cursor + 1)?
            .next()
            .transpose()?
            .map(|f| f.line));
    }
    if let Some(spilled) = spilled
        && let Some(f) = findings::before(spilled, cursor)?
    {
        return Ok(Some(f.line));
    }
    Ok(held.iter().rev().find(|f| f.line < cursor).map(|f| f.line))
}

/// A finding as the Raw tab shows it.
pub fn finding_outcome(finding: &LineFinding) -> LineOutcome {
    let (reason, field) = (finding.issue.reason, finding.issue.field.clone());
    match finding.breach {
        true => LineOutcome::Breach { reason, field },
        false => LineOutcome::Rejected { reason, field },
    }
}

/// The Raw tab's view of a classifier outcome.
pub fn outcome_of(outcome: Outcome) -> LineOutcome {
    match outcome {
        Outcome::Blank => LineOutcome::Blank,
        Outcome::Accepted(_) => LineOutcome::Accepted,
        Outcome::Rejected(issue) => LineOutcome::Rejected {
            reason: issue.reason,
            field: issue.field,
        },
        Outcome::Breach(issue) => LineOutcome::Breach {
            reason: issue.reason,
            field: issue.field,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::input::SET_MARKER;

    fn index_of(data: &[u8]) -> (tempfile::NamedTempFile, LineIndex) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, data).unwrap();
        let index = LineIndex::build(file.path(), SET_MARKER, &mut |_, _| true).unwrap();
        (file, index)
    }

    fn config() -> Config {
        Config::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/wharf.toml"
        )))
        .unwrap()
    }

    /// The console's read names the line each retry or conflict repeats, for the Raw tab.
    #[test]
    fn repeats_name_the_line_they_repeat() {
        let config = config();
        let line = |id: &str, status: &str, at: &str| {
            format!(
                "{{\"event_id\":\"{id}\",\"order_id\":1,\"status\":\"{status}\",\"updated_at\":\"{at}\"}}\n"
            )
        };
        let data = [
            line("a", "P", "2024-03-01T10:00:00Z"),
            line("b", "P", "2024-03-01T11:00:00Z"),
            // The same instant at another offset: an identical retry of line 1.
            line("a", "P", "2024-03-01T15:30:00+05:30"),
            line("b", "Q", "2024-03-01T11:00:00Z"),
        ]
        .concat();
        let (file, mut index) = index_of(data.as_bytes());
        index.repeats = crate::engine::repeats(&config, file.path(), &mut |_, _| true).unwrap();
        assert_eq!(index.repeat(1), None);
        assert_eq!(index.repeat(2), None);
        assert_eq!(index.repeat(3), Some(Repeat::Retry { of: 1 }));
        assert_eq!(index.repeat(4), Some(Repeat::Conflict { of: 2 }));
    }

    /// Past the findings a plan holds, the Raw tab takes the rest from the plan's spill:
    /// each reject on screen far into the file shows its finding, and n / N reach every
    /// reject, held or spilled, in order.
    #[test]
    fn rejects_past_the_held_findings_come_from_the_spill() {
        let config = config();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.jsonl");
        let rejects = findings::HELD + 500;
        let lines = 3 * rejects as u64;
        let mut data = String::new();
        for i in 1..=lines {
            match i % 3 {
                0 => data.push_str("nope\n"),
                _ => data.push_str(&format!(
                    "{{\"event_id\":\"e{i}\",\"order_id\":{i},\"status\":\"P\",\"updated_at\":\"2024-03-01T00:00:00Z\"}}\n"
                )),
            }
        }
        std::fs::write(&path, data).unwrap();
        let mut engine = crate::engine::open(&config).unwrap();
        let options = crate::plan::DecideOptions::default();
        let plan = crate::land::plan_input(&config, engine.as_mut(), &path, options, &mut |_| true)
            .unwrap();
        assert_eq!(plan.findings.len(), findings::HELD);
        let spilled = plan.spilled.as_ref().expect("the rest spilled");
        assert_eq!(spilled.count, 500);

        // A window at the end: its rejects' outcomes read from the spill (the classifier's
        // are wiped first, so only the spill can set them).
        let index = LineIndex::build(&path, SET_MARKER, &mut |_, _| true).unwrap();
        let mut window = read_window(&index, lines - 299, 300, &config.schema, 1 << 20).unwrap();
        for line in &mut window {
            line.outcome = LineOutcome::Unknown;
        }
        spilled_outcomes(&mut window, spilled).unwrap();
        for line in &window {
            let want = match line.number % 3 {
                0 => LineOutcome::Rejected {
                    reason: LineReason::MalformedJson,
                    field: None,
                },
                _ => LineOutcome::Unknown,
            };
            assert_eq!(line.outcome, want, "line {}", line.number);
        }

        let every: Vec<u64> = (1..=rejects as u64).map(|i| 3 * i).collect();
        let mut forward = Vec::new();
        let mut at = 0;
        while let Some(line) = next_finding(&plan, at, true).unwrap() {
            forward.push(line);
            at = line;
        }
        assert_eq!(forward, every);
        let mut backward = Vec::new();
        let mut at = lines + 1;
        while let Some(line) = next_finding(&plan, at, false).unwrap() {
            backward.push(line);
            at = line;
        }
        backward.reverse();
        assert_eq!(backward, every);
    }

    #[test]
    fn a_window_reads_classifies_and_masks() {
        let config = config();
        let data = "\u{feff}{\"event_id\":\"x\"}\r\n\n{\"event_id\":\"e\",\"order_id\":1,\"status\":\"P\",\"updated_at\":\"2024-03-01T00:00:00Z\",\"email\":\"a@b\"}\nnope";
        let (_file, index) = index_of(data.as_bytes());
        let window = read_window(&index, 2, 10, &config.schema, 100).unwrap();
        assert_eq!(window.len(), 3);
        assert_eq!(
            (window[0].number, &window[0].outcome),
            (2, &LineOutcome::Blank)
        );
        assert!(matches!(
            window[1].outcome,
            LineOutcome::Breach {
                reason: LineReason::ProhibitedField,
                ..
            }
        ));
        assert!(
            window[1].text.ends_with("\"email\":‹hidden›}"),
            "{}",
            window[1].text
        );
        assert!(matches!(
            window[2].outcome,
            LineOutcome::Rejected {
                reason: LineReason::MalformedJson,
                ..
            }
        ));
        let first = read_window(&index, 1, 1, &config.schema, 100).unwrap();
        assert_eq!(first[0].text, "{\"event_id\":\"x\"}", "BOM and CR stripped");
        let long = read_window(&index, 3, 1, &config.schema, 20).unwrap();
        assert!(matches!(
            long[0].outcome,
            LineOutcome::Rejected {
                reason: LineReason::LineTooLong,
                ..
            }
        ));
    }
}
