//! [`LineIndex`]: where the lines of one input are, a file or a set of parts (CONTRACT.md
//! §11), plain or compressed, built once on a worker thread; and [`LineIndex::read`],
//! which reads back only the lines asked for, so a 1 GB input scrolls without being
//! loaded.
//!
//! Lines are numbered as the plan numbers them: on through the parts in order (§11.4),
//! each part split on its own (its BOM, its last line without `\n`), 1-based. A plain part
//! keeps the byte start of every line (or of every [`LineIndex::SPARSE`]th) and is read by
//! seeking; a `.gz` or `.zst` part cannot seek, so it keeps only its line count and is
//! decoded from its first byte up to the lines asked for, through the same streaming
//! decoder a landing reads with ([`crate::input::PartReader`]): memory is the decoder's
//! window and one buffer whatever the ratio, and time is one decode of the part.

mod forward;
mod part;

use std::path::Path;

use crate::error::{Error, Result};
use crate::input::{self, Codec};
use crate::plan::keyed::Collapsed;
pub use part::{PartLines, ReadLine};

/// Where the lines of one input are, and once §2 has run over them which lines repeat an
/// earlier event ([`LineIndex::repeat`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    /// A single file is its one part.
    parts: Vec<PartLines>,
    /// Whether the input is a set, whose lines read `part:line`.
    set: bool,
    lines: u64,
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
    /// Lines between two starts a sparse index keeps in a plain part: a line is found by
    /// reading on from the start before it, ~8 KiB of order events.
    pub const SPARSE: u64 = 64;

    /// Indexes every line of the input at `path` (a set closed by `marker`);
    /// `progress(bytes, total)`, over stored bytes, returns `false` to cancel.
    pub fn build(
        path: &Path,
        marker: &str,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<LineIndex> {
        Self::every(path, marker, 1, progress)
    }

    /// Indexes every [`Self::SPARSE`]th line of the input at `path`.
    pub fn sparse(
        path: &Path,
        marker: &str,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<LineIndex> {
        Self::every(path, marker, Self::SPARSE, progress)
    }

    fn every(
        path: &Path,
        marker: &str,
        stride: u64,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<LineIndex> {
        let opened = input::open(path, marker)?;
        let mut index = LineIndex {
            set: opened.set,
            ..LineIndex::default()
        };
        let mut done = 0;
        for part in &opened.parts {
            let lines = PartLines::index(part, index.lines, stride, &mut |bytes| {
                progress(done + bytes, opened.size)
            })?;
            done += part.size;
            index.lines += lines.lines;
            index.parts.push(lines);
        }
        Ok(index)
    }

    /// Lines in the input.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Whether the input is a set of parts.
    pub fn is_set(&self) -> bool {
        self.set
    }

    /// The parts, in order (a single file's one).
    pub fn parts(&self) -> &[PartLines] {
        &self.parts
    }

    /// Whether any part is read through a decoder.
    pub fn compressed(&self) -> bool {
        self.parts.iter().any(|p| p.codec != Codec::Plain)
    }

    /// The part holding line `line` (1-based), by its place among the parts.
    pub fn part_of(&self, line: u64) -> Option<usize> {
        // An empty part ends where it starts and is passed over.
        let at = self
            .parts
            .partition_point(|p| p.first_line + p.lines < line);
        (at < self.parts.len() && line > 0).then_some(at)
    }

    /// Line `line` as its part sees it: the part's name (a set's only) and the line there.
    pub fn locate(&self, line: u64) -> (Option<&str>, u64) {
        match self.part_of(line).map(|i| &self.parts[i]) {
            Some(p) if self.set => (Some(&p.name), line - p.first_line),
            _ => (None, line),
        }
    }

    /// Line `line` as an operator reads it: `part:line` in a set, the number in a file.
    pub fn line_ref(&self, line: u64) -> String {
        match self.locate(line) {
            (Some(part), at) => format!("{part}:{at}"),
            (None, at) => at.to_string(),
        }
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

    /// Reads back `numbers` (1-based, ascending), each cut to `keep` bytes, handing each
    /// to `each` in order. A compressed part is decoded once for all its lines asked for.
    pub fn read(&self, numbers: &[u64], keep: usize, each: &mut dyn FnMut(ReadLine)) -> Result<()> {
        let mut rest = numbers;
        while let Some(&first) = rest.first() {
            let Some(p) = self.part_of(first) else {
                return Err(no_line(first));
            };
            let part = &self.parts[p];
            let end = part.first_line + part.lines;
            let here = rest.partition_point(|&n| n <= end);
            part.read(&rest[..here], keep, each)?;
            rest = &rest[here..];
        }
        Ok(())
    }

    /// Line `number`'s first `keep` bytes, as [`Self::read`] gives them.
    pub fn read_line(&self, number: u64, keep: usize) -> Result<ReadLine> {
        let mut found = None;
        self.read(&[number], keep, &mut |line| found = Some(line))?;
        found.ok_or_else(|| no_line(number))
    }
}

/// The error for a line the input no longer has (it changed since it was indexed).
fn no_line(number: u64) -> Error {
    Error::Usage(format!(
        "the input has no line {number} any more; it changed since its lines were indexed: \
         open the tab again"
    ))
}

#[cfg(test)]
mod tests;
