//! What an engine learns from reading one input, and all [`super::decide()`] needs of
//! it: the hash, counts, findings and each date's rows. Never the rows themselves, which
//! stay with the engine that read them until it stages them.

use std::collections::BTreeMap;

use super::{Counts, LineFinding, MergeCounts, SpilledFindings};
use crate::contract::Date;

/// One input, read by an engine (§1–4, and §10 against the published rows in merge mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// The input's SHA-256, lowercase hex.
    pub sha256: String,
    /// A set's parts (§11.3), in order; empty for a single file.
    pub parts: Vec<crate::input::PartDigest>,
    /// Merge mode: `stale` and `ties_by_arrival` include the merge's (§10.3).
    pub counts: Counts,
    /// Rejects and breaches in line order (conflicts included), the first ones of a file
    /// with more than an engine holds.
    pub findings: Vec<LineFinding>,
    /// The findings after `findings`, written out.
    pub spilled: Option<SpilledFindings>,
    /// Replace mode: each date among the winners. Merge mode: each date the batch gains,
    /// changes or empties, with its whole new row count.
    pub dates: BTreeMap<Date, DateCensus>,
    /// The engine stopped before the row work (§2–4), because §1 alone already refuses:
    /// `retries`, `keys`, `ties_by_arrival`, `stale` and the dates are then unknown, not
    /// zero.
    pub unranked: bool,
}

impl Census {
    /// The breach on the earliest line, which names a refusal (§5.5).
    pub fn first_breach(&self) -> Option<&LineFinding> {
        let spilled = self.spilled.as_ref().and_then(|s| s.first_breach.as_ref());
        self.findings.iter().find(|f| f.breach).or(spilled)
    }
}

/// One date of a [`Census`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DateCensus {
    /// Rows the date holds after the run.
    pub rows: u64,
    /// Merge mode only (§10.6): how the date's keys change.
    pub merge: Option<MergeCounts>,
    /// Those rows by UTC hour of their `partition_by_date_of` instant, where the engine
    /// counted them (the console draws the day from it).
    pub by_hour: Option<[u64; 24]>,
}

/// `records` counted by UTC hour of their field `date_of` (an instant; others are not
/// counted): a date's picture, for an engine that has its rows at hand.
pub fn rows_by_hour<'a>(
    records: impl IntoIterator<Item = &'a crate::contract::Record>,
    date_of: usize,
) -> [u64; 24] {
    let mut hours = [0; 24];
    for record in records {
        if let Some(instant) = record[date_of].instant() {
            hours[instant.hour_of_day()] += 1;
        }
    }
    hours
}
