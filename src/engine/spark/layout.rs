//! Merge mode's files on Spark (CONTRACT.md §10.4), by the local engine's rules: a new key
//! of a date joins the bucket [`DateFiles::bucket`](crate::engine::touched::DateFiles::bucket)
//! names (rendered by [`bucket_sql`] as SQL over the batch's own keys); a read file whose
//! bucket gains or loses a row is rewritten, split by [`Split::by_target`]; every other file
//! of the date is carried over. [`lay_out`] turns Spark's counts per bucket into the plan's
//! counts and the [`Run`]s the stage writes.

use std::collections::BTreeMap;

use super::merge::{Bucket, MergeCensus};
use super::published::Published;
use super::write::Run;
use crate::contract::{Date, Value};
use crate::error::Result;
use crate::plan::split::Split;
use crate::plan::DateCensus;

/// What the stage does with one date a merge rewrites.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The buckets rewritten, each with its files' places in the date's key order.
    pub written: Vec<Run>,
    /// The published files carried over unchanged, each with its place.
    pub carried: Vec<(String, u64)>,
    /// The date's files after the batch.
    pub files: u64,
}

/// The SQL expression of the bucket a winner of `source`'s batch joins, over its `key`
/// and `event_date`: each date's runs of the batch's keys (in key order) that share a
/// bucket, so its size follows the date's files, not the batch. `-1` for a key the batch
/// did not hold, which the merge refuses.
pub fn bucket_sql(source: &Published, key: &str, target_file_rows: u64) -> String {
    let mut dates = Vec::new();
    for (date, keys) in source.own() {
        let files = source.dates.get(date).cloned().unwrap_or_default();
        let mut runs: Vec<(&Value, &Value, usize)> = Vec::new();
        for k in keys {
            let at = files.bucket(k, target_file_rows);
            match runs.last_mut() {
                Some((_, high, b)) if *b == at => *high = k,
                _ => runs.push((k, k, at)),
            }
        }
        let cases: Vec<String> = runs
            .iter()
            .map(|(low, high, at)| {
                let (low, high) = (literal(low), literal(high));
                format!("WHEN {key} BETWEEN {low} AND {high} THEN {at} ")
            })
            .collect();
        dates.push(format!(
            "WHEN DATE'{date}' THEN (CASE {}ELSE -1 END) ",
            cases.concat()
        ));
    }
    format!("(CASE event_date {}ELSE -1 END)", dates.concat())
}

/// A key as a SQL literal of the key column's type (a string by its bytes).
fn literal(key: &Value) -> String {
    match key {
        Value::Str(s) => {
            let hex: String = s.bytes().map(|b| format!("{b:02X}")).collect();
            format!("CAST(X'{hex}' AS STRING)")
        }
        Value::Int(n) => format!("CAST({n} AS BIGINT)"),
        // A key is an int or a string (the config check).
        other => other.display(),
    }
}

/// Each date of `census`: its plan census (rows after, counts with the files read and
/// rewritten, rows by hour) and its layout. `hours(path)` counts a carried file's rows by
/// hour, as the local engine counts them (its rows are not in Spark's frame).
pub fn lay_out(
    target_file_rows: u64,
    source: &Published,
    census: &MergeCensus,
    hours: &mut dyn FnMut(&str) -> Result<[u64; 24]>,
) -> Result<(BTreeMap<Date, DateCensus>, BTreeMap<Date, Layout>)> {
    let (mut dates, mut layouts) = (BTreeMap::new(), BTreeMap::new());
    for (date, counts) in &census.dates {
        let files = source.dates.get(date).cloned().unwrap_or_default();
        let mut counts = *counts;
        let (mut layout, mut rows, mut by_hour) = (Layout::default(), 0, [0u64; 24]);
        for at in 0..=files.files.len() {
            let file = files.files.get(at);
            if let Some(file) = file.filter(|_| !files.read[at]) {
                layout.carried.push((file.path.clone(), layout.files));
                layout.files += 1;
                rows += file.rows;
                add(&mut by_hour, hours(&file.path)?);
                continue;
            }
            let bucket: Bucket = census.buckets.get(&(*date, at)).copied().unwrap_or_default();
            rows += bucket.rows;
            add(&mut by_hour, bucket.by_hour);
            let lost = file.is_some_and(|f| bucket.rows.saturating_sub(bucket.arrived) < f.rows);
            if bucket.arrived == 0 && !lost {
                if let Some(file) = file {
                    layout.carried.push((file.path.clone(), layout.files));
                    layout.files += 1;
                }
                continue;
            }
            counts.files_rewritten += u64::from(file.is_some());
            counts.rows_rewritten += bucket.rows;
            let split = Split::by_target(bucket.rows, target_file_rows);
            layout.written.push(Run {
                bucket: at,
                first: layout.files,
                split,
            });
            layout.files += split.files;
        }
        counts.files_read = files.read.iter().filter(|r| **r).count() as u64;
        let day = DateCensus {
            rows,
            merge: Some(counts),
            by_hour: Some(by_hour),
        };
        dates.insert(*date, day);
        layouts.insert(*date, layout);
    }
    Ok((dates, layouts))
}

fn add(sum: &mut [u64; 24], hours: [u64; 24]) {
    crate::store::dataset::add_hours(sum, hours);
}
