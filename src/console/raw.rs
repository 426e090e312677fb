//! The Raw tab's data: [`LineIndex`] (where each line of an input starts, built once on a
//! worker thread) and [`read_window`], which reads and classifies only the lines on
//! screen, so a 1 GB input scrolls without being loaded.
//!
//! Lines follow CONTRACT.md §1 exactly as `input::scan` splits them (on `\n`, one
//! trailing `\r` stripped, a BOM skipped at the very start, no empty last line). A line's
//! text is cut to [`SHOW_BYTES`] for display and prohibited values are masked
//! ([`super::mask`]); its outcome comes from [`crate::contract::classify`] when the line
//! is short enough to read whole, and the plan's findings override it where a plan exists
//! (they also know conflicts, which need the whole file).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::mask;
use crate::contract::{self, LineBytes, LineReason, Outcome, Schema};
use crate::error::{Error, Result};
use crate::plan::keyed::Collapsed;

/// Bytes of a line read for display.
pub const SHOW_BYTES: usize = 4096;
/// Lines up to this long are read whole and classified on the spot.
pub const CLASSIFY_BYTES: usize = 64 * 1024;
/// Lines read around the cursor at a time (more than any screen is tall).
pub const WINDOW: usize = 256;

/// Where the lines of one input start: every line's start ([`LineIndex::build`], for the
/// Raw tab's windows), or every [`LineIndex::SPARSE`]th line's ([`LineIndex::sparse`], for
/// reading scattered lines back, at a few bytes per thousand lines); and, once §2 has run
/// over them, which lines repeat an earlier event ([`LineIndex::repeat`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    /// The start of lines `0, stride, 2 * stride, …` (0-based).
    starts: Vec<u64>,
    stride: u64,
    lines: u64,
    len: u64,
    ends_with_newline: bool,
    /// §2's retries and conflicts, each with the line it repeats (empty until read).
    pub repeats: Collapsed,
}

/// A line that repeats an earlier event's id (CONTRACT.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// An identical retry of the event on line `of`, collapsed onto it.
    Retry { of: u64 },
    /// The id of line `of` with other values: a breach.
    Conflict { of: u64 },
}

impl LineIndex {
    /// Lines between two starts a sparse index keeps: a line is found by reading on from
    /// the start before it, ~8 KiB of order events.
    pub const SPARSE: u64 = 64;

    /// Indexes every line of `path`; `progress(bytes, total)` returns `false` to cancel.
    pub fn build(path: &Path, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<LineIndex> {
        Self::every(path, 1, progress)
    }

    /// Indexes every [`Self::SPARSE`]th line of `path`.
    pub fn sparse(path: &Path, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<LineIndex> {
        Self::every(path, Self::SPARSE, progress)
    }

    fn every(
        path: &Path,
        stride: u64,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<LineIndex> {
        let io = |e| Error::io(path, "index the input's lines", "check the file", e);
        // Lines are found by byte offset in the stored file, which a set (many files) or a
        // compressed file does not have.
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        if path.is_dir() || crate::input::Codec::of(&name) != crate::input::Codec::Plain {
            return Err(Error::Usage(format!(
                "{name}: the Raw tab browses plain files only; this set's or compressed \
                 file's findings are in its plan and quarantine, by file and line"
            )));
        }
        let mut file = File::open(path).map_err(io)?;
        let total = file.metadata().map_err(io)?.len();
        let mut index = LineIndex {
            stride,
            ..LineIndex::default()
        };
        let mut buf = vec![0u8; 1 << 20];
        let mut last = 0u8;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            if index.len == 0 {
                index.line_at(0);
            }
            for at in memchr::memchr_iter(b'\n', &buf[..n]) {
                index.line_at(index.len + at as u64 + 1);
            }
            index.len += n as u64;
            last = buf[n - 1];
            if !progress(index.len, total) {
                return Err(Error::Cancelled);
            }
        }
        index.ends_with_newline = last == b'\n';
        if index.ends_with_newline {
            // The start after the last `\n` begins no line.
            index.lines -= 1;
            if index.lines.is_multiple_of(stride) {
                index.starts.pop();
            }
        }
        Ok(index)
    }

    /// A line starts at `at`.
    fn line_at(&mut self, at: u64) {
        if self.lines.is_multiple_of(self.stride) {
            self.starts.push(at);
        }
        self.lines += 1;
    }

    /// Lines in the file.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Whether line `line` (1-based) repeats an earlier event, and which.
    pub fn repeat(&self, line: u64) -> Option<Repeat> {
        let find = |list: &[(u64, u64)]| {
            list.binary_search_by_key(&line, |&(l, _)| l)
                .ok()
                .map(|i| list[i].1)
        };
        find(&self.repeats.retries)
            .map(|of| Repeat::Retry { of })
            .or_else(|| find(&self.repeats.conflicts).map(|of| Repeat::Conflict { of }))
    }

    /// The byte range of line `i` (0-based) without its `\n`, in a full index.
    fn span(&self, i: usize) -> (u64, u64) {
        debug_assert_eq!(
            self.stride, 1,
            "a sparse index knows only some lines' spans"
        );
        let start = self.starts[i];
        let end = match self.starts.get(i + 1) {
            Some(next) => next - 1,
            None if self.ends_with_newline => self.len - 1,
            None => self.len,
        };
        (start, end)
    }

    /// Line `number`'s bytes (1-based; without its `\n`; a BOM and a `\r` left in), at
    /// most `limit + 1` of them, so that a longer line shows as longer than `limit`.
    pub fn read_line(&self, file: &File, number: u64, limit: usize) -> std::io::Result<Vec<u8>> {
        let i = number.saturating_sub(1);
        if i >= self.lines {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the input has no line {number}"),
            ));
        }
        let mut at = self.starts[(i / self.stride) as usize];
        let mut skip = i % self.stride;
        let mut buf = vec![0u8; 16 * 1024];
        while skip > 0 {
            let n = read_some(file, &mut buf, at, self.len)?;
            let mut read = n as u64;
            for end in memchr::memchr_iter(b'\n', &buf[..n]) {
                skip -= 1;
                if skip == 0 {
                    read = end as u64 + 1;
                    break;
                }
            }
            at += read;
        }
        let mut line = Vec::new();
        while line.len() <= limit && at < self.len {
            let want = buf.len().min(limit + 1 - line.len());
            let n = read_some(file, &mut buf[..want], at, self.len)?;
            match memchr::memchr(b'\n', &buf[..n]) {
                Some(end) => {
                    line.extend_from_slice(&buf[..end]);
                    break;
                }
                None => {
                    line.extend_from_slice(&buf[..n]);
                    at += n as u64;
                }
            }
        }
        Ok(line)
    }
}

/// Reads from `at` into `buf`, up to the file's indexed length: at least one byte, or
/// an error (the file is shorter than when it was indexed).
fn read_some(file: &File, buf: &mut [u8], at: u64, len: u64) -> std::io::Result<usize> {
    let want = buf.len().min(len.saturating_sub(at) as usize);
    if want == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the input is shorter than when its lines were indexed",
        ));
    }
    file.read_exact_at(&mut buf[..want], at)?;
    Ok(want)
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

/// Reads lines `first..first + count` (1-based) of `path`.
pub fn read_window(
    path: &Path,
    index: &LineIndex,
    first: u64,
    count: usize,
    schema: &Schema,
    max_line_bytes: usize,
) -> Result<Vec<RawLine>> {
    let file = File::open(path)
        .map_err(|e| Error::io(path, "read the input", "is it still in the inbox?", e))?;
    let from = first.max(1) as usize - 1;
    let to = (from + count).min(index.lines() as usize);
    let mut out = Vec::with_capacity(to.saturating_sub(from));
    for i in from..to {
        let (start, end) = index.span(i);
        let len = (end - start) as usize;
        let want = if len <= CLASSIFY_BYTES {
            len
        } else {
            SHOW_BYTES
        };
        let mut buf = vec![0u8; want];
        file.read_exact_at(&mut buf, start)
            .map_err(|e| Error::io(path, "read the input", "is it still in the inbox?", e))?;
        let complete = want == len;
        let mut bytes = buf.as_slice();
        if i == 0 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        if complete {
            bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        }
        // input::scan's rule: more than max + 1 raw bytes (room for a `\r`), or more than
        // max once the BOM and `\r` are stripped.
        let too_long = len > max_line_bytes + 1 || (complete && bytes.len() > max_line_bytes);
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
        out.push(RawLine {
            number: i as u64 + 1,
            text,
            bytes: len as u64,
            outcome,
        });
    }
    Ok(out)
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
    use super::*;
    use crate::config::Config;

    fn index_of(data: &[u8]) -> (tempfile::NamedTempFile, LineIndex) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, data).unwrap();
        let index = LineIndex::build(file.path(), &mut |_, _| true).unwrap();
        (file, index)
    }

    #[test]
    fn lines_are_numbered_as_the_contract_splits_them() {
        for (data, lines) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\n\nb", 3),
            (b"a\r\nb\r\n", 2),
        ] {
            assert_eq!(index_of(data).1.lines(), lines, "{data:?}");
        }
    }

    /// The console's read names the line each retry or conflict repeats, for the Raw tab.
    #[test]
    fn repeats_name_the_line_they_repeat() {
        let config = Config::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/wharf.toml"
        )))
        .unwrap();
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

    /// A sparse index finds every line as a full one does, whatever the line lengths
    /// around the starts it keeps, and cuts long lines at the limit.
    #[test]
    fn a_sparse_index_reads_each_line_back() {
        let mut data = Vec::new();
        let mut want = Vec::new();
        for i in 0..300u64 {
            let line = "x".repeat((i * 37 % 300) as usize) + &i.to_string();
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
            want.push(line);
        }
        data.extend_from_slice(b"last, no newline");
        want.push("last, no newline".into());
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &data).unwrap();
        let sparse = LineIndex::sparse(file.path(), &mut |_, _| true).unwrap();
        assert_eq!(sparse.lines(), 301);
        let opened = File::open(file.path()).unwrap();
        for (i, line) in want.iter().enumerate() {
            let read = sparse.read_line(&opened, i as u64 + 1, 1000).unwrap();
            assert_eq!(read, line.as_bytes(), "line {}", i + 1);
        }
        assert_eq!(
            sparse.read_line(&opened, 300, 3).unwrap(),
            b"xxxx",
            "limit + 1 bytes"
        );
        assert!(sparse.read_line(&opened, 302, 10).is_err());
        let (_f, ends) = index_of(b"a\nb\n");
        assert_eq!(ends.lines(), 2);
    }

    #[test]
    fn a_window_reads_classifies_and_masks() {
        let config = Config::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/wharf.toml"
        )))
        .unwrap();
        let data = "\u{feff}{\"event_id\":\"x\"}\r\n\n{\"event_id\":\"e\",\"order_id\":1,\"status\":\"P\",\"updated_at\":\"2024-03-01T00:00:00Z\",\"email\":\"a@b\"}\nnope";
        let (file, index) = index_of(data.as_bytes());
        let window = read_window(file.path(), &index, 2, 10, &config.schema, 100).unwrap();
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
        let first = read_window(file.path(), &index, 1, 1, &config.schema, 100).unwrap();
        assert_eq!(first[0].text, "{\"event_id\":\"x\"}", "BOM and CR stripped");
        let long = read_window(file.path(), &index, 3, 1, &config.schema, 20).unwrap();
        assert!(matches!(
            long[0].outcome,
            LineOutcome::Rejected {
                reason: LineReason::LineTooLong,
                ..
            }
        ));
    }
}
