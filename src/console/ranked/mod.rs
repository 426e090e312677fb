//! The Ranked tab's data: [`Ranked`], every key of an input (sorted as published) with
//! its events' lines in rank order and why each lost, then its retries and conflicts.
//! [`build::build`] makes it with the plan's own classifier, event log (§2) and order (§3,
//! `plan::rank`), keeping 8 bytes an event and ~20 a key, not the events: the rows on
//! screen are read back from the input ([`Ranked::read_rows`]), as the Raw tab reads its
//! lines. The console adds nothing to the contract here; it keeps what the plan discards.

pub mod build;
pub mod read;

use std::fs::File;
use std::path::Path;

use super::raw::{LineIndex, Repeat};
use crate::config::Config;
use crate::contract::{self, Instant, LineBytes, Outcome, Value};
use crate::engine::local::tally::display_value;
use crate::error::{Error, Result};
use crate::plan::rank::LostBecause;

/// Why a row is where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// Rank 1: the row a run publishes.
    Kept,
    /// Ranked below the event above it.
    Lost(LostBecause),
    /// An identical retry of the event on line `of` (collapsed onto it).
    Retry { of: u64 },
    /// Same event id as line `of` with different values: a breach.
    Conflict { of: u64 },
}

/// One event of a key, read back for the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankedRow {
    /// 1-based; `None` for retries and conflicts, which are not ranked.
    pub rank: Option<u32>,
    pub line: u64,
    pub event_id: String,
    pub instant: String,
    pub tiebreak: Option<i64>,
    /// The other declared fields as `name=value`, for telling events apart.
    pub fields: String,
    pub note: Note,
}

/// An entry's kind, in its top byte ([`Tag::with_line`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Kept,
    Lost(LostBecause),
    Retry,
    Conflict,
}

const TAG_SHIFT: u32 = 56;

impl Tag {
    fn with_line(self, line: u64) -> u64 {
        let code: u64 = match self {
            Tag::Kept => 0,
            Tag::Lost(LostBecause::Older) => 1,
            Tag::Lost(LostBecause::LowerTiebreak) => 2,
            Tag::Lost(LostBecause::EarlierArrival) => 3,
            Tag::Retry => 4,
            Tag::Conflict => 5,
        };
        line | code << TAG_SHIFT
    }

    fn of(entry: u64) -> (Tag, u64) {
        let tag = match entry >> TAG_SHIFT {
            0 => Tag::Kept,
            1 => Tag::Lost(LostBecause::Older),
            2 => Tag::Lost(LostBecause::LowerTiebreak),
            3 => Tag::Lost(LostBecause::EarlierArrival),
            4 => Tag::Retry,
            _ => Tag::Conflict,
        };
        (tag, entry & ((1 << TAG_SHIFT) - 1))
    }
}

/// A key's flags.
struct Flags;

impl Flags {
    /// Rank 1 and rank 2 tie on instant and tiebreak (decided by arrival).
    const TIE: u8 = 1;
    /// A line reuses one of its events' ids with other values.
    const CONFLICT: u8 = 2;
}

/// Every key of an input, sorted by key as published, with its events' lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranked {
    /// Each key as shown, back to back; key `k` ends at `name_ends[k]`.
    names: String,
    name_ends: Vec<usize>,
    /// Key `k`'s entries are `entries[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    /// A line and its [`Tag`]: rank 1 first, then the ranks below, then retries and
    /// conflicts by line.
    entries: Vec<u64>,
    flags: Vec<u8>,
    /// Where to read the lines back, and §2's retries and conflicts.
    index: LineIndex,
    /// The tiebreak field's name, for the column header.
    pub tiebreak: Option<String>,
    pub order_by: String,
}

/// One entry of a key: its rank (none for retries and conflicts), line and note.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub rank: Option<u32>,
    pub line: u64,
    pub note: Note,
}

impl Ranked {
    /// Keys in the input (a key seen only on conflicting lines too).
    pub fn keys(&self) -> usize {
        self.name_ends.len()
    }

    /// Key `k` as shown (not yet sanitized).
    pub fn key(&self, k: usize) -> &str {
        let start = if k == 0 { 0 } else { self.name_ends[k - 1] };
        &self.names[start..self.name_ends[k]]
    }

    /// Entries of key `k`.
    pub fn len_of(&self, k: usize) -> usize {
        self.starts[k + 1] - self.starts[k]
    }

    /// Whether key `k`'s top two tie by arrival, or it has a conflict.
    pub fn notable(&self, k: usize) -> bool {
        self.flags[k] & (Flags::TIE | Flags::CONFLICT) != 0
    }

    pub fn tie(&self, k: usize) -> bool {
        self.flags[k] & Flags::TIE != 0
    }

    /// Entry `r` of key `k`.
    pub fn entry(&self, k: usize, r: usize) -> Entry {
        let (tag, line) = Tag::of(self.entries[self.starts[k] + r]);
        let of = |line| self.index.repeat(line);
        let (rank, note) = match tag {
            Tag::Kept => (Some(1), Note::Kept),
            Tag::Lost(why) => (Some(r as u32 + 1), Note::Lost(why)),
            Tag::Retry | Tag::Conflict => match of(line) {
                Some(Repeat::Retry { of }) => (None, Note::Retry { of }),
                Some(Repeat::Conflict { of }) => (None, Note::Conflict { of }),
                None => (None, Note::Retry { of: 0 }),
            },
        };
        Entry { rank, line, note }
    }

    /// The index the rows are read back with, which knows §2's repeats.
    pub fn index(&self) -> &LineIndex {
        &self.index
    }

    /// The rows whose key contains `filter` (every row when it is empty). One search
    /// runs over all the keys' text at once: a search per key costs its setup each time.
    pub fn filter(&self, filter: &str) -> Rows {
        let mut rows = Rows::default();
        let mut total = 0u64;
        let mut keep = |k: usize| {
            total += self.len_of(k) as u64;
            rows.keys.push(k as u32);
            rows.ends.push(total);
        };
        if filter.is_empty() {
            (0..self.keys()).for_each(&mut keep);
            return rows;
        }
        let names = self.names.as_bytes();
        let finder = memchr::memmem::Finder::new(filter.as_bytes());
        let (mut from, mut k) = (0, 0);
        while let Some(found) = finder.find(&names[from..]) {
            let at = from + found;
            // Matches come in order: the key holding this one is at or after the last.
            while self.name_ends[k] <= at {
                k += 1;
            }
            if at + filter.len() <= self.name_ends[k] {
                keep(k);
            }
            // Either way no later match in this key can lie inside it.
            from = self.name_ends[k];
        }
        rows
    }

    /// Reads rows `range` of `rows` back from `path`: their lines, classified again.
    pub fn read_rows(
        &self,
        config: &Config,
        path: &Path,
        rows: &Rows,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<RankedRow>> {
        let io = |e| Error::io(path, "read the input", "is it still in the inbox?", e);
        let file = File::open(path).map_err(io)?;
        let limit = config.max_line_bytes + 4; // room for a BOM and a `\r`
        range
            .filter_map(|i| rows.at(i))
            .map(|(k, r)| {
                let entry = self.entry(k, r);
                let bytes = self.index.read_line(&file, entry.line, limit).map_err(io)?;
                Ok(row(config, entry, &bytes))
            })
            .collect()
    }
}

/// The rows a filter lets through: keys in order, with the rows up to each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    keys: Vec<u32>,
    /// Rows of `keys[..=i]`.
    ends: Vec<u64>,
}

impl Rows {
    pub fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as `(key, entry of the key)`.
    pub fn at(&self, i: usize) -> Option<(usize, usize)> {
        let i = i as u64;
        let at = self.ends.partition_point(|&end| end <= i);
        let before = if at == 0 { 0 } else { self.ends[at - 1] };
        let key = *self.keys.get(at)?;
        Some((key as usize, (i - before) as usize))
    }

    /// The first row of the nearest key after (or before) row `from` that `pick`
    /// accepts (`n` / `N` jump between ties and conflicts).
    pub fn next_key(
        &self,
        from: usize,
        forward: bool,
        pick: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let last = self.keys.len().checked_sub(1)?;
        let first_row = |i: usize| if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let current = self.ends.partition_point(|&end| end <= from as u64);
        let found = if forward {
            (current + 1..=last).find(|&i| pick(self.keys[i] as usize))
        } else {
            (0..=current.min(last))
                .rev()
                .find(|&i| first_row(i) < from && pick(self.keys[i] as usize))
        };
        found.map(first_row)
    }
}

/// A row from its line's bytes, classified again (a line that no longer reads as an
/// accepted event says so: the file changed after it was ranked).
fn row(config: &Config, entry: Entry, bytes: &[u8]) -> RankedRow {
    let schema = &config.schema;
    let mut text = bytes;
    if entry.line == 1 {
        text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    }
    text = text.strip_suffix(b"\r").unwrap_or(text);
    let mut shown = RankedRow {
        rank: entry.rank,
        line: entry.line,
        event_id: String::new(),
        instant: String::new(),
        tiebreak: None,
        fields: "‹the line changed since it was ranked; open the tab again›".into(),
        note: entry.note,
    };
    let Outcome::Accepted(record) = contract::classify(LineBytes::Kept(text), schema) else {
        return shown;
    };
    let roles = [
        Some(schema.key),
        Some(schema.order_by),
        schema.tiebreak,
        Some(schema.event_id),
    ];
    shown.fields = schema
        .fields
        .iter()
        .enumerate()
        .filter(|(i, _)| !roles.contains(&Some(*i)) && record[*i] != Value::Null)
        .map(|(i, f)| format!("{}={}", f.name, short_value(&record[i])))
        .collect::<Vec<_>>()
        .join(" ");
    shown.event_id = display_value(&record[schema.event_id]);
    shown.instant = record[schema.order_by]
        .instant()
        .map(short_instant)
        .unwrap_or_default();
    shown.tiebreak = schema.tiebreak.and_then(|i| record[i].int());
    shown
}

fn short_value(value: &Value) -> String {
    match value {
        Value::Ts(instant) => short_instant(*instant),
        other => display_value(other),
    }
}

/// `2024-03-01T10:15:00Z`, with a fraction only when there is one.
pub fn short_instant(instant: Instant) -> String {
    let full = instant.to_string();
    let Some((head, fraction)) = full.trim_end_matches('Z').split_once('.') else {
        return full;
    };
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        format!("{head}Z")
    } else {
        format!("{head}.{fraction}Z")
    }
}

impl Note {
    /// Short words for the table; rank 1 says "published" only once the input's
    /// checkpoint says so.
    pub fn describe(self, published: bool) -> String {
        match self {
            Note::Kept if published => "kept (published)".into(),
            Note::Kept => "rank 1 (would publish)".into(),
            Note::Lost(why) => why.describe().into(),
            Note::Retry { of } => format!("identical retry of line {of}"),
            Note::Conflict { of } => format!("conflict with line {of} (breach)"),
        }
    }
}

#[cfg(test)]
mod tests;
