//! What a landing changes, key by key: [`diff_date`] merge-joins a date's published rows
//! with the rows a plan would write (both sorted by key, as the contract writes them), so
//! the diff streams and holds one row of each side at a time.
//!
//! - [`Change`] is one changed key (`inserted`, `removed`, `updated`), with the rows of
//!   both sides as published; [`DateDiff`] a date's counts.
//! - [`Rows`](crate::store::rows::Rows) reads a partition's Parquet files row by row, in key order.
//! - [`json`] renders a [`Change`] as the `wharf diff --json` line.
//!
//! The rows a plan would write come from its engine's staging (`land::preview`), written
//! outside the publish root; reading both sides as Parquet compares them exactly as
//! published (timestamps at microseconds).

pub mod json;

use std::cmp::Ordering;

use serde::Serialize;

use crate::contract::{Date, Record, Schema, Value};
use crate::error::Result;

/// How one key changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Inserted,
    Removed,
    Updated,
}

impl Kind {
    pub fn code(self) -> &'static str {
        match self {
            Kind::Inserted => "inserted",
            Kind::Removed => "removed",
            Kind::Updated => "updated",
        }
    }
}

/// One changed key of one date: the row published now (`before`) and the row the landing
/// would publish (`after`); `None` for the side that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub event_date: Date,
    pub kind: Kind,
    pub key: Value,
    pub before: Option<Record>,
    pub after: Option<Record>,
}

impl Change {
    /// The indexes of the fields whose values differ (every field for an insert or removal).
    pub fn changed_fields(&self) -> Vec<usize> {
        match (&self.before, &self.after) {
            (Some(b), Some(a)) => (0..b.len().min(a.len()))
                .filter(|&i| b[i] != a[i])
                .collect(),
            (Some(r), None) | (None, Some(r)) => (0..r.len()).collect(),
            (None, None) => Vec::new(),
        }
    }
}

/// One date's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DateDiff {
    pub event_date: Date,
    pub inserted: u64,
    pub removed: u64,
    pub updated: u64,
    pub unchanged: u64,
}

impl DateDiff {
    pub fn changes(&self) -> u64 {
        self.inserted + self.removed + self.updated
    }

    fn count(&mut self, kind: Kind) {
        match kind {
            Kind::Inserted => self.inserted += 1,
            Kind::Removed => self.removed += 1,
            Kind::Updated => self.updated += 1,
        }
    }
}

/// Merge-joins `before` (the date's published rows) with `after` (the rows the landing
/// writes), both in key order, handing each changed key to `sink`; `sink` returning
/// `false` stops handing them over, the counting goes on. Rows that are equal field for
/// field are `unchanged`.
pub fn diff_date(
    event_date: Date,
    schema: &Schema,
    before: impl Iterator<Item = Result<Record>>,
    after: impl Iterator<Item = Result<Record>>,
    sink: &mut dyn FnMut(Change) -> bool,
) -> Result<DateDiff> {
    let key = schema.key;
    let mut counts = DateDiff {
        event_date,
        inserted: 0,
        removed: 0,
        updated: 0,
        unchanged: 0,
    };
    let mut listening = true;
    let mut emit = |counts: &mut DateDiff, kind, before: Option<Record>, after: Option<Record>| {
        counts.count(kind);
        if listening {
            let row = before.as_ref().or(after.as_ref());
            let key = row.map_or(Value::Null, |r| r[key].clone());
            listening = sink(Change {
                event_date,
                kind,
                key,
                before,
                after,
            });
        }
    };
    let mut before = before.peekable();
    let mut after = after.peekable();
    loop {
        let order = match (before.peek(), after.peek()) {
            (None, None) => break,
            (Some(Err(_)), _) | (_, Some(Err(_))) => {
                let failed = before.next().filter(Result::is_err);
                let failed = failed.or_else(|| after.next().filter(Result::is_err));
                return Err(failed.and_then(Result::err).unwrap_or_else(|| {
                    crate::Error::internal("a diff side failed without an error")
                }));
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(Ok(b)), Some(Ok(a))) => b[key].cmp(&a[key]),
        };
        match order {
            Ordering::Less => {
                let row = before.next().and_then(Result::ok);
                emit(&mut counts, Kind::Removed, row, None);
            }
            Ordering::Greater => {
                let row = after.next().and_then(Result::ok);
                emit(&mut counts, Kind::Inserted, None, row);
            }
            Ordering::Equal => {
                let (b, a) = (
                    before.next().and_then(Result::ok),
                    after.next().and_then(Result::ok),
                );
                if b == a {
                    counts.unchanged += 1;
                } else {
                    emit(&mut counts, Kind::Updated, b, a);
                }
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Instant;

    fn row(schema: &Schema, key: i64, status: &str) -> Record {
        let mut record = vec![Value::Null; schema.fields.len()];
        record[schema.event_id] = Value::Str(format!("e{key}").into());
        record[schema.key] = Value::Int(key);
        record[schema.index_of("status").expect("status")] = Value::Str(status.into());
        record[schema.order_by] = Value::Ts(Instant::from_parts(1_709_287_200, 0));
        record.into()
    }

    /// Keys on one side only are removed or inserted, on both with other fields updated,
    /// equal rows unchanged; a sink that stops still leaves every count exact.
    #[test]
    fn a_merge_join_names_every_change_and_counts_the_rest() {
        let config = crate::config::fixtures::orders();
        let s = &config.schema;
        let before = vec![row(s, 1, "PAID"), row(s, 2, "PAID"), row(s, 4, "PENDING")];
        let after = vec![
            row(s, 2, "PAID"),
            row(s, 3, "NEW"),
            row(s, 4, "SHIPPED"),
            row(s, 5, "NEW"),
        ];
        let date = Date(19_783);
        let mut seen = Vec::new();
        let counts = diff_date(
            date,
            s,
            before.clone().into_iter().map(Ok),
            after.clone().into_iter().map(Ok),
            &mut |c| {
                seen.push((c.kind, c.key.clone()));
                true
            },
        )
        .expect("diff");
        assert_eq!(
            seen,
            vec![
                (Kind::Removed, Value::Int(1)),
                (Kind::Inserted, Value::Int(3)),
                (Kind::Updated, Value::Int(4)),
                (Kind::Inserted, Value::Int(5)),
            ]
        );
        assert_eq!(
            (
                counts.inserted,
                counts.removed,
                counts.updated,
                counts.unchanged
            ),
            (2, 1, 1, 1)
        );
        let mut first = 0;
        let again = diff_date(
            date,
            s,
            before.into_iter().map(Ok),
            after.into_iter().map(Ok),
            &mut |_| {
                first += 1;
                false
            },
        )
        .expect("diff");
        assert_eq!((first, again), (1, counts));
    }

    /// A side that fails to read fails the diff; nothing is counted as removed for it.
    #[test]
    fn a_failed_read_is_an_error() {
        let config = crate::config::fixtures::orders();
        let s = &config.schema;
        let failing = vec![
            Ok(row(s, 1, "PAID")),
            Err(crate::Error::internal("bad file")),
        ];
        let result = diff_date(
            Date(0),
            s,
            failing.into_iter(),
            std::iter::empty(),
            &mut |_| true,
        );
        assert!(result.is_err());
    }
}
