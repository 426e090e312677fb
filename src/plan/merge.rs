//! PURE. Merge mode (CONTRACT.md §10): a batch's winners meet the published rows.
//!
//! [`merge`] takes the batch's rank-1 events and the published rows of every date they
//! touch (with where each of their keys lives), and returns only the dates that gain,
//! change or lose a row, each rewritten whole and sorted by key, with the counts §10.6
//! asks for. A winner that loses to the published row under §3's order is `stale`; a full
//! tie goes to the batch (the later arrival) and is counted; an identical row changes
//! nothing. Moves only go forward in time (a winner must be newer), so swapping dates
//! newest first puts a moved key on its new date before it leaves the old one.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::rank::{Event, Precedence};
use crate::contract::{Date, Record, Schema, Value};

/// The published rows a merge reads: the partitions of the dates it touches.
#[derive(Clone, Debug, Default)]
pub struct PublishedRows {
    /// Rows of each date read, any order.
    pub by_date: BTreeMap<Date, Vec<Record>>,
}

/// One date a merge rewrites.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergedDate {
    pub rows_before: u64,
    pub inserted: u64,
    pub updated: u64,
    pub moved_in: u64,
    pub moved_out: u64,
    /// The whole new partition, sorted by key.
    pub rows: Vec<Event>,
}

/// What a batch does to the published dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// Only the dates that gain, change or lose a row.
    pub dates: BTreeMap<Date, MergedDate>,
    /// Winners older than the published row of their key.
    pub stale: u64,
    /// Winners that tie the published row on instant and tiebreak (the batch wins).
    pub ties_by_arrival: u64,
}

/// Merges `winners` (the batch's rank-1 events) into `published`.
pub fn merge(winners: &[Event], published: &PublishedRows, schema: &Schema) -> Merged {
    let date_of = |record: &Record| record[schema.date_of].instant().map(|i| i.utc_date());
    // Where each published key lives, and its row. A crash between two swaps can leave a
    // moved key on two dates; the batch that moved it repairs that on its rerun.
    let mut live: HashMap<&Value, Vec<(Date, &Record)>> = HashMap::new();
    for (date, rows) in &published.by_date {
        for row in rows {
            live.entry(&row[schema.key]).or_default().push((*date, row));
        }
    }
    let mut merged = Merged::default();
    let mut dropped: HashSet<(Value, Date)> = HashSet::new(); // (key, date it leaves)
    let mut incoming: BTreeMap<Date, Vec<Event>> = BTreeMap::new();
    for winner in winners {
        let Some(date) = date_of(&winner.record) else {
            continue;
        };
        let key = &winner.record[schema.key];
        let Some(copies) = live.get(key) else {
            entry(&mut merged, published, date).inserted += 1;
            incoming.entry(date).or_default().push(winner.clone());
            continue;
        };
        // The published row is the best copy; any other copy is crash residue.
        let Some(&(old_date, row)) = copies
            .iter()
            .max_by_key(|(d, r)| (Precedence::of(r, schema), *d))
        else {
            continue;
        };
        for (extra, _) in copies.iter().filter(|(d, _)| *d != old_date) {
            dropped.insert((key.clone(), *extra));
            entry(&mut merged, published, *extra).moved_out += 1;
        }
        let (new, old) = (
            Precedence::of(&winner.record, schema),
            Precedence::of(row, schema),
        );
        if new < old {
            merged.stale += 1;
            continue;
        }
        if winner.record == *row {
            continue;
        }
        if new == old {
            merged.ties_by_arrival += 1;
        }
        dropped.insert((key.clone(), old_date));
        if old_date == date {
            entry(&mut merged, published, date).updated += 1;
        } else {
            entry(&mut merged, published, old_date).moved_out += 1;
            entry(&mut merged, published, date).moved_in += 1;
        }
        incoming.entry(date).or_default().push(winner.clone());
    }
    for (date, plan) in merged.dates.iter_mut() {
        let kept = published
            .by_date
            .get(date)
            .into_iter()
            .flatten()
            .filter(|row| !dropped.contains(&(row[schema.key].clone(), *date)));
        let mut rows: Vec<Event> = kept
            .map(|record| Event {
                line: 0,
                record: record.clone(),
            })
            .collect();
        rows.extend(incoming.remove(date).unwrap_or_default());
        rows.sort_by(|a, b| a.record[schema.key].cmp(&b.record[schema.key]));
        plan.rows = rows;
    }
    merged
}

fn entry<'m>(merged: &'m mut Merged, published: &PublishedRows, date: Date) -> &'m mut MergedDate {
    merged.dates.entry(date).or_insert_with(|| MergedDate {
        rows_before: published
            .by_date
            .get(&date)
            .map_or(0, |rows| rows.len() as u64),
        ..MergedDate::default()
    })
}
