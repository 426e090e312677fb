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

/// What §10 does with one winner of a batch, against its key's published row. The one
/// definition: the local engine decides it here, and the Spark engine's SQL writes and
/// reads back these codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No published row for the key: it joins its date.
    Insert,
    /// Older than the published row under §3's order: dropped (§10.3).
    Stale,
    /// The very row published: nothing changes.
    Same,
    /// Newer, on the same date: replaces the row there.
    Update,
    /// Newer, on another date: leaves the old date and joins the new one.
    Move,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Insert,
        Outcome::Stale,
        Outcome::Same,
        Outcome::Update,
        Outcome::Move,
    ];

    /// Its code, as the Spark engine's queries carry it.
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Insert => "insert",
            Outcome::Stale => "stale",
            Outcome::Same => "same",
            Outcome::Update => "update",
            Outcome::Move => "move",
        }
    }

    /// The outcome of `code`, `None` for any other text.
    pub fn of_code(code: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.code() == code)
    }

    /// Whether the winner is written (it takes its key's row).
    pub fn writes(self) -> bool {
        self == Outcome::Insert || self.replaces()
    }

    /// Whether the key's published row is replaced or moved away.
    pub fn replaces(self) -> bool {
        matches!(self, Outcome::Update | Outcome::Move)
    }

    /// §10.2–3 for a winner dated `date`, against the key's published `row` on
    /// `old_date`, if any.
    pub fn decide(
        winner: &Record,
        date: Date,
        published: Option<(Date, &Record)>,
        schema: &Schema,
    ) -> Outcome {
        let Some((old_date, row)) = published else {
            return Outcome::Insert;
        };
        if Precedence::of(winner, schema) < Precedence::of(row, schema) {
            Outcome::Stale
        } else if winner == row {
            Outcome::Same
        } else if old_date == date {
            Outcome::Update
        } else {
            Outcome::Move
        }
    }
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
        let copies = live.get(key).map(Vec::as_slice).unwrap_or_default();
        // The published row is the best copy; any other copy is crash residue.
        let Some(&(old_date, row)) = copies
            .iter()
            .max_by_key(|(d, r)| (Precedence::of(r, schema), *d))
        else {
            entry(&mut merged, published, date).inserted += 1;
            incoming.entry(date).or_default().push(winner.clone());
            continue;
        };
        for (extra, _) in copies.iter().filter(|(d, _)| *d != old_date) {
            dropped.insert((key.clone(), *extra));
            entry(&mut merged, published, *extra).moved_out += 1;
        }
        let outcome = Outcome::decide(&winner.record, date, Some((old_date, row)), schema);
        if outcome == Outcome::Stale {
            merged.stale += 1;
            continue;
        }
        if !outcome.replaces() {
            continue;
        }
        if Precedence::of(&winner.record, schema) == Precedence::of(row, schema) {
            merged.ties_by_arrival += 1;
        }
        dropped.insert((key.clone(), old_date));
        if outcome == Outcome::Update {
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

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn every_outcome_reads_back_from_its_code_and_no_other_text_does() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::of_code(outcome.code()), Some(outcome));
        }
        assert_eq!(Outcome::of_code("moved"), None);
        assert_eq!(Outcome::of_code(""), None);
    }

    #[test]
    fn only_a_newer_different_row_replaces_and_only_those_and_inserts_write() {
        let replacing: Vec<Outcome> = Outcome::ALL.into_iter().filter(|o| o.replaces()).collect();
        assert_eq!(replacing, [Outcome::Update, Outcome::Move]);
        let writing: Vec<Outcome> = Outcome::ALL.into_iter().filter(|o| o.writes()).collect();
        assert_eq!(writing, [Outcome::Insert, Outcome::Update, Outcome::Move]);
    }
}
