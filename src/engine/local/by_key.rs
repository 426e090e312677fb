//! A read of an input for the console, with the plan's own functions, whatever engine
//! plans it (the input is a file on this machine): [`repeats`], §2's retries and
//! conflicts with the line each repeats (the Raw tab), and [`events_by_key`], every key's
//! events as lines with its winner and tie (the Ranked tab, for a plan that kept none:
//! an input with conflicts, a Spark engine). Every line is classified by
//! `Batch::classify` on every core, every accepted event logged in an `EventLog`
//! (spilling to an unnamed temporary file, as a landing's does), then §2 resolved by
//! `EventLog::collapse`. While the input is read, each accepted event leaves 32 bytes
//! (its key's number, line and packed precedence); once §2 has named the retries and
//! conflicts, the events are put in key order, each key's winner and tie found with the
//! plan's [`rank::rank_by`], and only their lines kept.

use std::path::Path;

use super::events::BUCKET_RECORDS;
use super::scratch::FileScratch;
use super::tables::KeyTable;
use super::{Collapsed, EventLog};
use crate::config::Config;
use crate::contract::row;
use crate::error::Result;
use crate::input;
use crate::pipeline;
use crate::plan::batch::key_hash;
use crate::plan::keyed::EventsByKey;
use crate::plan::rank::{self, LostBecause, Packed, Standing};
use crate::plan::{Batch, EventFacts};

/// §2's retries and conflicts of `path`, each with the line it repeats.
/// `progress(bytes, total)` returns `false` to cancel.
pub fn repeats(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Collapsed> {
    read_events(config, path, progress, |_| {})
}

/// Every key of `path` in published order with its events' lines, its winner and tie,
/// and §2's repeats. `progress(bytes, total)` returns `false` to cancel.
pub fn events_by_key(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<EventsByKey> {
    // Order events run ~130 bytes a line, a third of them keys: rarely grown.
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut keys = Keys::with_capacity(((size / 140 / 3) as usize).min(4 << 20));
    let mut pending: Vec<Pending> = Vec::new();
    let collapsed = read_events(config, path, progress, |event| {
        pending.push(Pending {
            precedence: event.precedence,
            key: keys.intern(event.key, event.key_hash),
            line: event.line,
        });
    })?;
    mark_repeats(&mut pending, &collapsed.retries, &collapsed.conflicts);
    let order = keys.in_order();
    let mut position = vec![0u32; order.len()];
    for (at, &key) in order.iter().enumerate() {
        position[key as usize] = at as u32;
    }
    let mut names = String::new();
    let mut name_ends = Vec::with_capacity(order.len());
    for &key in &order {
        names.push_str(&keys.display(key));
        name_ends.push(names.len());
    }
    names.shrink_to_fit();
    drop((keys, order));
    for p in &mut pending {
        p.key = position[p.key as usize];
    }
    drop(position);
    // Key order; in each key, its ranked events by line, then its retries and conflicts.
    pending.sort_unstable_by_key(|p| (p.key, p.line & REPEAT, p.line & LINE));
    let (starts, entries, flags) = rank_groups(&pending, name_ends.len());
    Ok(EventsByKey {
        names,
        name_ends,
        starts,
        entries,
        flags,
        repeats: collapsed,
    })
}

/// Reads `path`, giving `each` every accepted event in line order, and returns what §2
/// made of them. `progress(bytes, total)` returns `false` to cancel.
fn read_events(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    mut each: impl FnMut(EventFacts<'_>),
) -> Result<Collapsed> {
    let opened = input::open(path, &config.set_marker)?;
    let total = opened.size;
    let scratch_dir = std::env::temp_dir();
    let mut log = EventLog::new(Box::new(FileScratch::in_dir(&scratch_dir)), BUCKET_RECORDS);
    let schema = &config.schema;
    let classify = |lines: pipeline::Lines<'_>| {
        let mut batch = Batch::default();
        for (line, bytes) in lines.iter() {
            batch.classify(line, bytes, schema);
        }
        batch
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    pipeline::scan_input(
        &opened,
        config.max_line_bytes,
        threads,
        &classify,
        &mut |bytes| progress(bytes, total),
        |batch: Batch| {
            log.push_batch(&batch);
            batch.accepted_events().for_each(&mut each);
        },
    )?;
    log.collapse(threads)
        .map_err(|e| FileScratch::error(&scratch_dir, e))
}

/// An accepted event while the input is read.
#[derive(Clone, Copy)]
struct Pending {
    precedence: Packed,
    /// The key's number: in order of first sight, then in key order.
    key: u32,
    /// The line, with [`REPEAT`] and [`CONFLICT`] set once §2 is resolved.
    line: u64,
}

/// [`Pending::line`]'s flags: a retry or conflict, not ranked.
const REPEAT: u64 = 1 << 63;
const CONFLICT: u64 = 1 << 62;
const LINE: u64 = (1 << 56) - 1;

impl Pending {
    fn standing(&self) -> Standing {
        Standing {
            precedence: self.precedence,
            line: self.line & LINE,
        }
    }
}

/// Every key seen, encoded ([`row`]) back to back, found by hash.
struct Keys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    table: KeyTable,
}

/// Key `i` of an arena.
fn key_at<'a>(bytes: &'a [u8], ends: &[usize], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &bytes[start..ends[i]]
}

impl Keys {
    fn with_capacity(keys: usize) -> Self {
        Keys {
            bytes: Vec::new(),
            ends: Vec::new(),
            table: KeyTable::with_capacity(keys),
        }
    }

    /// The key's number, given it on first sight.
    fn intern(&mut self, key: &[u8], hash: u64) -> u32 {
        let (bytes, ends) = (&self.bytes, &self.ends);
        if let Some(i) = self.table.find(hash, |i| key_at(bytes, ends, i) == key) {
            return i;
        }
        let i = self.ends.len() as u32;
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        let (bytes, ends) = (&self.bytes, &self.ends);
        self.table
            .insert(hash, i, |j| key_hash(key_at(bytes, ends, j)));
        i
    }

    /// The keys' numbers in key order, as the plan sorts its winners.
    fn in_order(&self) -> Vec<u32> {
        let key = |i: u32| key_at(&self.bytes, &self.ends, i);
        let n = self.ends.len() as u32;
        let ints: Option<Vec<(i64, u32)>> =
            (0..n).map(|i| row::int(key(i)).map(|k| (k, i))).collect();
        if let Some(mut ints) = ints {
            ints.sort_unstable();
            return ints.into_iter().map(|(_, i)| i).collect();
        }
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (key(a), key(b));
            match (row::str_bytes(a), row::str_bytes(b)) {
                // Strings order as their UTF-8 bytes do, as `Value`s do.
                (Some(a), Some(b)) => a.cmp(b),
                _ => row::decode_value(a).cmp(&row::decode_value(b)),
            }
        });
        order
    }

    /// Key `i` as the console shows it.
    fn display(&self, i: u32) -> String {
        (row::decode_value(key_at(&self.bytes, &self.ends, i))).display()
    }
}

/// Flags the events §2 found to be retries or conflicts (`pending` and both lists are in
/// line order).
fn mark_repeats(pending: &mut [Pending], retries: &[(u64, u64)], conflicts: &[(u64, u64)]) {
    let (mut r, mut c) = (0, 0);
    for p in pending {
        if retries.get(r).is_some_and(|&(line, _)| line == p.line) {
            p.line |= REPEAT;
            r += 1;
        } else if conflicts.get(c).is_some_and(|&(line, _)| line == p.line) {
            p.line |= REPEAT | CONFLICT;
            c += 1;
        }
    }
}

/// Finds each key's winner and tie (`pending` in key order, ranked events before
/// repeats, each by line) and lays them out as [`EventsByKey`] does: each key's first
/// entry, the entries, each key's flags.
fn rank_groups(pending: &[Pending], keys: usize) -> (Vec<u64>, Vec<u64>, Vec<u8>) {
    let mut starts = Vec::with_capacity(keys + 1);
    let mut entries = Vec::with_capacity(pending.len());
    let mut flags = vec![0u8; keys];
    let mut standings = Vec::new();
    let mut rest = pending;
    while let Some(first) = rest.first() {
        let key = first.key as usize;
        let len = rest.iter().take_while(|p| p.key == first.key).count();
        let (group, after) = rest.split_at(len);
        rest = after;
        while starts.len() <= key {
            starts.push(entries.len() as u64);
        }
        let ranked = group.iter().take_while(|p| p.line & REPEAT == 0).count();
        standings.clear();
        standings.extend(group[..ranked].iter().map(Pending::standing));
        rank::rank_by(&mut standings, |s| *s);
        if let [top, second, ..] = standings[..]
            && second.lost_to(&top) == LostBecause::EarlierArrival
        {
            flags[key] |= EventsByKey::TIE;
        }
        let kept = standings.first().map(|s| s.line);
        for p in &group[..ranked] {
            let line = p.line & LINE;
            let kept = if Some(line) == kept {
                EventsByKey::KEPT
            } else {
                0
            };
            entries.push(line | kept);
        }
        for p in &group[ranked..] {
            let conflict = if p.line & CONFLICT != 0 {
                flags[key] |= EventsByKey::HAS_CONFLICT;
                EventsByKey::CONFLICT
            } else {
                0
            };
            entries.push(p.line & LINE | EventsByKey::REPEAT | conflict);
        }
    }
    while starts.len() <= keys {
        starts.push(entries.len() as u64);
    }
    (starts, entries, flags)
}
