//! The Ranked tab's data: [`Ranked`], every key of an input (sorted as published) with
//! its events' lines, its winner and whether its top two tie, then its retries and
//! conflicts: the engine's [`EventsByKey`], kept by the plan's own read where the engine
//! can ([`crate::engine::Engine::take_events_by_key`]), or read by
//! [`crate::engine::events_by_key`] where the plan kept none (an input with conflicts, a
//! Spark engine). At 8 bytes an event and ~20 a key, it holds lines, not events: the rows
//! on screen are read back from the input ([`Ranked::read_rows`]) and their keys ranked
//! there, by the plan's §3 order (`plan::rank`), as the Raw tab reads its lines. The console adds nothing to the
//! contract here; it keeps what the plan discards.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::raw::{LineIndex, Repeat};
use crate::config::Config;
use crate::contract::{self, Instant, LineBytes, Outcome, Record, Value};
use crate::error::Result;
use crate::plan::keyed::EventsByKey;
use crate::plan::rank::{LostBecause, Packed, Precedence, Standing, rank_by};

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

/// Every key of an input, sorted by key as published, with its events' lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranked {
    /// The events; their `starts` are in [`Ranked::starts`], shared with [`Rows`].
    events: EventsByKey,
    starts: Arc<[u64]>,
    /// Where to read the lines back, and §2's retries and conflicts.
    index: LineIndex,
    /// The tiebreak field's name, for the column header.
    pub tiebreak: Option<String>,
    pub order_by: String,
}

/// A key's rows in the tab's order, each with its line's record (`None`: the line no
/// longer reads as an accepted event).
type KeyRows = Vec<(Entry, Option<Record>)>;

/// One entry of a key: its rank (none for retries and conflicts), line and note.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub rank: Option<u32>,
    pub line: u64,
    pub note: Note,
}

impl Ranked {
    /// The tab's data from `events` (their repeats move into the index), read back from
    /// `path` through a sparse line index; `progress(bytes, total)` returns `false` to
    /// cancel.
    pub fn new(
        config: &Config,
        path: &Path,
        mut events: EventsByKey,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Ranked> {
        let mut index = LineIndex::sparse(path, &config.set_marker, progress)?;
        index.repeats = std::mem::take(&mut events.repeats);
        Ok(Self::with_index(config, events, index))
    }

    /// The tab's data from `events` and an `index` holding their repeats.
    fn with_index(config: &Config, mut events: EventsByKey, index: LineIndex) -> Ranked {
        let schema = &config.schema;
        Ranked {
            starts: std::mem::take(&mut events.starts).into(),
            events,
            index,
            tiebreak: schema.tiebreak.map(|i| schema.name(i).to_owned()),
            order_by: schema.name(schema.order_by).to_owned(),
        }
    }

    /// Keys in the input (a key seen only on conflicting lines too).
    pub fn keys(&self) -> usize {
        self.events.name_ends.len()
    }

    /// Key `k` as shown (not yet sanitized).
    pub fn key(&self, k: usize) -> &str {
        let ends = &self.events.name_ends;
        let start = if k == 0 { 0 } else { ends[k - 1] };
        &self.events.names[start..ends[k]]
    }

    /// Entries of key `k`.
    pub fn len_of(&self, k: usize) -> usize {
        (self.starts[k + 1] - self.starts[k]) as usize
    }

    /// Whether key `k`'s top two tie by arrival, or it has a conflict.
    pub fn notable(&self, k: usize) -> bool {
        self.events.flags[k] & (EventsByKey::TIE | EventsByKey::HAS_CONFLICT) != 0
    }

    pub fn tie(&self, k: usize) -> bool {
        self.events.flags[k] & EventsByKey::TIE != 0
    }

    /// Key `k`'s entries: its ranked events by line, then its retries and conflicts.
    fn entries(&self, k: usize) -> &[u64] {
        &self.events.entries[self.starts[k] as usize..self.starts[k + 1] as usize]
    }

    /// The line of key `k`'s rank-1 event, the one a run publishes.
    pub fn winner(&self, k: usize) -> Option<u64> {
        self.entries(k)
            .iter()
            .find(|&&e| e & EventsByKey::KEPT != 0)
            .map(|e| e & EventsByKey::LINE)
    }

    /// The index the rows are read back with, which knows §2's repeats.
    pub fn index(&self) -> &LineIndex {
        &self.index
    }
    /// The rows whose key contains `filter` (every row when it is empty). One search
    /// runs over all the keys' text at once: a search per key costs its setup each time.
    pub fn filter(&self, filter: &str) -> Rows {
        if filter.is_empty() {
            // Every key: its rows end where the next key's start, already at hand.
            return Rows {
                keys: None,
                ends: Ends::Starts(self.starts.clone()),
            };
        }
        // Room for every key up front: room never used costs no memory, and a list
        // grown by doubling would copy itself on the way.
        let mut keys = Vec::with_capacity(self.keys());
        let mut ends = Vec::with_capacity(self.keys());
        let mut total = 0u64;
        let mut keep = |k: usize| {
            total += self.len_of(k) as u64;
            keys.push(k as u32);
            ends.push(total);
        };
        let names = self.events.names.as_bytes();
        let finder = memchr::memmem::Finder::new(filter.as_bytes());
        let (mut from, mut k) = (0, 0);
        while let Some(found) = finder.find(&names[from..]) {
            let at = from + found;
            // Matches come in order: the key holding this one is at or after the last.
            while self.events.name_ends[k] <= at {
                k += 1;
            }
            if at + filter.len() <= self.events.name_ends[k] {
                keep(k);
            }
            // Either way no later match in this key can lie inside it.
            from = self.events.name_ends[k];
        }
        Rows {
            keys: Some(keys),
            ends: Ends::Own(ends),
        }
    }

    /// Reads rows `range` of `rows` back from the input: each key's lines on it, in one
    /// read (a compressed part is decoded once), ranked by §3 there, classified again.
    pub fn read_rows(
        &self,
        config: &Config,
        rows: &Rows,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<RankedRow>> {
        let at: Vec<(usize, usize)> = range.filter_map(|i| rows.at(i)).collect();
        let mut keys: Vec<usize> = at.iter().map(|&(k, _)| k).collect();
        keys.dedup();
        let mut numbers: Vec<u64> = keys
            .iter()
            .flat_map(|&k| self.entries(k).iter().map(|e| e & EventsByKey::LINE))
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        let limit = config.max_line_bytes + 1; // room for a `\r`
        let mut records = HashMap::with_capacity(numbers.len());
        self.index.read(&numbers, limit, &mut |line| {
            records.insert(line.number, accepted(config, &line.bytes));
        })?;
        let mut key: Option<(usize, KeyRows)> = None;
        let mut read = Vec::with_capacity(at.len());
        for (k, r) in at {
            if key.as_ref().is_none_or(|(at, _)| *at != k) {
                key = Some((k, self.rank_key(config, &mut records, k)));
            }
            if let Some((entry, record)) = key.as_ref().and_then(|(_, rows)| rows.get(r)) {
                read.push(row(config, *entry, record.as_ref()));
            }
        }
        Ok(read)
    }

    /// Key `k`'s events, their records taken from `records`, in the tab's order: ranked
    /// by §3 (the plan's `rank_by`), then its retries and conflicts by line.
    fn rank_key(
        &self,
        config: &Config,
        records: &mut HashMap<u64, Option<Record>>,
        k: usize,
    ) -> KeyRows {
        let mut ranked = Vec::new();
        let mut repeats = Vec::new();
        for &e in self.entries(k) {
            let line = e & EventsByKey::LINE;
            let record = records.remove(&line).flatten();
            if e & EventsByKey::REPEAT != 0 {
                let note = match self.index.repeat(line) {
                    Some(Repeat::Conflict { of }) => Note::Conflict { of },
                    Some(Repeat::Retry { of }) => Note::Retry { of },
                    None => Note::Retry { of: 0 },
                };
                repeats.push((
                    Entry {
                        rank: None,
                        line,
                        note,
                    },
                    record,
                ));
            } else {
                ranked.push((standing(config, line, record.as_ref()), record));
            }
        }
        rank_by(&mut ranked, |(standing, _)| *standing);
        let mut above: Option<Standing> = None;
        let mut rows = Vec::with_capacity(ranked.len() + repeats.len());
        for (r, (standing, record)) in ranked.into_iter().enumerate() {
            let note = above.map_or(Note::Kept, |a| Note::Lost(standing.lost_to(&a)));
            above = Some(standing);
            let entry = Entry {
                rank: Some(r as u32 + 1),
                line: standing.line,
                note,
            };
            rows.push((entry, record));
        }
        rows.extend(repeats);
        rows
    }
}

/// A line's record, its bytes (a part's BOM already left out) classified again; `None`
/// when it no longer reads as an accepted event (the file changed after it was ranked).
fn accepted(config: &Config, bytes: &[u8]) -> Option<Record> {
    let text = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    match contract::classify(LineBytes::Kept(text), &config.schema) {
        Outcome::Accepted(record) => Some(record),
        _ => None,
    }
}

/// Line `line`'s place in its key's §3 order (a line that no longer reads as an accepted
/// event ranks last: its row says the file changed).
fn standing(config: &Config, line: u64, record: Option<&Record>) -> Standing {
    let precedence = record.map_or(Packed::default(), |record| {
        Packed::from(Precedence::of(record, &config.schema))
    });
    Standing { precedence, line }
}

/// The rows a filter lets through: keys in order, with the rows up to each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rows {
    /// The keys let through; `None`: every key.
    keys: Option<Vec<u32>>,
    ends: Ends,
}

/// Rows of the keys up to each key let through.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ends {
    Own(Vec<u64>),
    /// Every key's: the [`Ranked`]'s starts, after their leading 0.
    Starts(Arc<[u64]>),
}

impl Default for Rows {
    fn default() -> Self {
        Rows {
            keys: Some(Vec::new()),
            ends: Ends::Own(Vec::new()),
        }
    }
}

impl Rows {
    /// Rows of the keys up to each key let through.
    fn ends(&self) -> &[u64] {
        match &self.ends {
            Ends::Own(ends) => ends,
            Ends::Starts(starts) => starts.get(1..).unwrap_or_default(),
        }
    }

    /// The key let through `i`th.
    fn key(&self, i: usize) -> Option<usize> {
        match &self.keys {
            Some(keys) => keys.get(i).map(|&k| k as usize),
            None => (i < self.ends().len()).then_some(i),
        }
    }

    pub fn len(&self) -> usize {
        self.ends().last().copied().unwrap_or(0) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as `(key, entry of the key)`.
    pub fn at(&self, i: usize) -> Option<(usize, usize)> {
        let i = i as u64;
        let ends = self.ends();
        let at = ends.partition_point(|&end| end <= i);
        let before = if at == 0 { 0 } else { ends[at - 1] };
        let key = self.key(at)?;
        Some((key, (i - before) as usize))
    }

    /// The first row of the nearest key after (or before) row `from` that `pick`
    /// accepts (`n` / `N` jump between ties and conflicts).
    pub fn next_key(
        &self,
        from: usize,
        forward: bool,
        pick: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let ends = self.ends();
        let last = ends.len().checked_sub(1)?;
        let first_row = |i: usize| if i == 0 { 0 } else { ends[i - 1] as usize };
        let current = ends.partition_point(|&end| end <= from as u64);
        let picked = |i: usize| self.key(i).is_some_and(&pick);
        let found = if forward {
            (current + 1..=last).find(|&i| picked(i))
        } else {
            (0..=current.min(last))
                .rev()
                .find(|&i| first_row(i) < from && picked(i))
        };
        found.map(first_row)
    }
}

/// A row from its line's record (a line that no longer reads as an accepted event says
/// so: the file changed after it was ranked).
fn row(config: &Config, entry: Entry, record: Option<&Record>) -> RankedRow {
    let schema = &config.schema;
    let mut shown = RankedRow {
        rank: entry.rank,
        line: entry.line,
        event_id: String::new(),
        instant: String::new(),
        tiebreak: None,
        fields: "‹the line changed since it was ranked; open the tab again›".into(),
        note: entry.note,
    };
    let Some(record) = record else {
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
    shown.event_id = record[schema.event_id].display();
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
        other => other.display(),
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

/// What an input's rank-1 rows come to, for the words the table gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Not landed yet, and the plan (if any) publishes.
    WouldPublish,
    /// The input's checkpoint says it landed.
    Published,
    /// The plan refuses the whole input: no row of it publishes.
    Refused,
}

impl Note {
    /// Short words for the table; rank 1 says "published" only once the input's
    /// checkpoint says so, and never "would publish" for an input the plan refuses. The
    /// line a retry or conflict repeats is named by `at` (`line 3`, or a set's `part:3`).
    pub fn describe(self, fate: Fate, at: &dyn Fn(u64) -> String) -> String {
        match self {
            Note::Kept => match fate {
                Fate::Published => "kept (published)".into(),
                Fate::WouldPublish => "rank 1 (would publish)".into(),
                Fate::Refused => "rank 1 (refused: nothing publishes)".into(),
            },
            Note::Lost(why) => why.describe().into(),
            Note::Retry { of } => format!("identical retry of {}", at(of)),
            Note::Conflict { of } => format!("conflict with {} (breach)", at(of)),
        }
    }
}

#[cfg(test)]
mod tests;
