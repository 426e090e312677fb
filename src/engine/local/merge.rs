//! Merge mode's row work (CONTRACT.md §10.4–5): [`merge_batch`] finds the published files
//! the batch's keys may live in by their footers and bloom filters, reads those, and
//! merges; [`stage_layout`] writes a merged date's new files in their places.
//!
//! A read file's rows stay encoded as they were decoded, a column at a time, in one
//! buffer: only the rows of the batch's keys become records, and the files written read
//! the kept rows where they lie ([`RowSet`] over the read files' buffers), not copies.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::parquet;
use super::rowset::{RowSet, Spot};
use super::tally::Summary;
use crate::config::Config;
use crate::contract::{Date, Schema, Value, row};
use crate::error::Result;
use crate::plan::merge::{MergedDate, Row};
use crate::plan::{self, Event, FileOut, PublishedFile, PublishedFiles};
use crate::store::dataset::Dataset;
use crate::store::rows::Encoded;

/// What a batch does ([`Merged`]), each date with the rows of the files it writes.
pub(super) struct MergedRows {
    pub dates: BTreeMap<Date, (MergedDate<()>, RowSet)>,
    pub stale: u64,
    pub ties_by_arrival: u64,
}

/// §10: finds the published files the batch's winners meet by their footers and bloom
/// filters (§10.5), reads those, and merges.
pub(super) fn merge_batch(
    config: &Config,
    dataset: &dyn Dataset,
    summary: &Summary,
) -> Result<MergedRows> {
    let schema = &config.schema;
    let winners: Vec<Event> = summary.winners.events().collect();
    let mut keys: Vec<Value> = winners
        .iter()
        .map(|w| w.record[schema.key].clone())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut own: BTreeMap<Date, Vec<&Value>> = BTreeMap::new();
    for winner in &winners {
        if let Some(date) = winner.record[schema.date_of]
            .instant()
            .map(|i| i.utc_date())
        {
            own.entry(date)
                .or_default()
                .push(&winner.record[schema.key]);
        }
    }
    let mut published: PublishedFiles<Encoded> = PublishedFiles::default();
    for (date, touched) in
        crate::engine::touched::touched(config, dataset, &keys, &own, &|_| Ok(()))?
    {
        let mut files: Vec<PublishedFile<Encoded>> = touched
            .files
            .into_iter()
            .map(PublishedFile::unread)
            .collect();
        for (file, _) in files.iter_mut().zip(&touched.read).filter(|(_, r)| **r) {
            let source = dataset.file_source(&file.path)?;
            file.read = Some(crate::store::rows::encoded(source, schema)?);
        }
        published.by_date.insert(date, files);
    }
    let merged = plan::merge::merge_read(&winners, &published, schema, config.target_file_rows);
    let fields = schema.fields.len();
    let dates = merged
        .dates
        .into_iter()
        .map(|(date, plan)| {
            let files = published.by_date.remove(&date).unwrap_or_default();
            let (plan, rows) = plan.with_rows(Vec::new());
            (date, (plan, written_rows(fields, files, rows)))
        })
        .collect();
    Ok(MergedRows {
        dates,
        stale: merged.stale,
        ties_by_arrival: merged.ties_by_arrival,
    })
}

/// The rows a merged date writes, in order: a read file's row where its file's buffer
/// holds it, a winner encoded after them.
fn written_rows(fields: usize, files: Vec<PublishedFile<Encoded>>, rows: Vec<Row>) -> RowSet {
    let read: Vec<Encoded> = files
        .into_iter()
        .map(|f| f.read.unwrap_or_default())
        .collect();
    let winners = read.len();
    let mut won = Vec::new();
    let mut spots = Vec::with_capacity(rows.len());
    let mut lines = Vec::with_capacity(rows.len());
    for written in rows {
        let (block, start, end, line) = match written {
            Row::Read { file, row } => (file, read[file].start(row), read[file].ends[row], 0),
            Row::Winner(event) => {
                let start = won.len();
                row::push_record(&mut won, &event.record);
                (winners, start, won.len(), event.line)
            }
        };
        spots.push((block, start, end));
        lines.push(line);
    }
    let mut blocks: Vec<Vec<u8>> = read.into_iter().map(|r| r.bytes).collect();
    blocks.push(won);
    // A spot holds 32-bit offsets: a buffer past 4 GiB is copied out instead.
    let small = |n: usize| u32::try_from(n).is_ok();
    if blocks.iter().all(|b| small(b.len())) {
        let spots = spots
            .into_iter()
            .map(|(block, start, end)| Spot {
                block: block as u32,
                offset: start as u32,
                room: (end - start) as u32,
            })
            .collect();
        return RowSet::placed(fields, Arc::from(blocks), spots, lines);
    }
    let mut set = RowSet::new(fields);
    for ((block, start, end), line) in spots.into_iter().zip(lines) {
        set.push_encoded(line, &blocks[block][start..end]);
    }
    set
}

/// A merged date's rows by hour: its kept files' (their hour column read) and its
/// written `rows`'.
pub(super) fn merged_hours(
    dataset: &dyn Dataset,
    config: &Config,
    merged: &MergedDate<()>,
    rows: &RowSet,
) -> Result<[u64; 24]> {
    let schema = &config.schema;
    let mut hours = [0; 24];
    for i in 0..rows.len() {
        if let Some(instant) = rows.instant(i, schema.date_of) {
            hours[instant.hour_of_day()] += 1;
        }
    }
    for file in &merged.files {
        if let FileOut::Kept(path) = file {
            crate::store::dataset::add_hours(&mut hours, dataset.file_hours(path, schema)?);
        }
    }
    Ok(hours)
}

/// Writes the new files of a merged date's `layout` into `folder`, each under its place
/// in the date's key order; returns the kept files with theirs.
pub(super) fn stage_layout(
    folder: &Path,
    schema: &Schema,
    rows: &RowSet,
    layout: &[FileOut],
) -> Result<Vec<(String, u64)>> {
    let mut kept = Vec::new();
    for (n, file) in layout.iter().enumerate() {
        match file {
            FileOut::Kept(path) => kept.push((path.clone(), n as u64)),
            FileOut::Written(range) => {
                let path = folder.join(parquet::part_name(n as u64));
                parquet::write_file(&path, schema, rows, range.clone())?;
            }
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Instant, Record};
    use crate::store::rows::Source;

    /// A date merged from its file's rows kept encoded writes the very rows, lines and
    /// layout the merge of the same rows as records writes: kept rows in place, updated
    /// ones replaced, new keys in key order among them and past them, split by
    /// `target_file_rows`.
    #[test]
    fn a_merge_of_encoded_rows_writes_what_the_merge_of_records_writes() {
        let schema = crate::config::fixtures::orders().schema.clone();
        let row = |key: i64, secs: i64, line: u64| {
            let mut r = vec![Value::Null; schema.fields.len()];
            r[schema.event_id] = Value::Str(format!("e{key}-{secs}").into());
            r[schema.key] = Value::Int(key);
            r[schema.order_by] = Value::Ts(Instant::from_parts(1_709_251_200 + secs, 0));
            Event {
                line,
                record: r.into_boxed_slice(),
            }
        };
        let published: Vec<Event> = (0..1000).map(|k| row(k * 2, 10, 0)).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-00000.parquet");
        let set = RowSet::from_events(schema.fields.len(), &published);
        parquet::write_file(&path, &schema, &set, 0..set.len()).unwrap();
        // Updates (newer), a stale one (older), new keys inside the range and past it.
        let winners: Vec<Event> = [(4, 20), (998, 30), (6, 5), (5, 20), (2001, 20), (3001, 20)]
            .iter()
            .enumerate()
            .map(|(line, &(k, secs))| row(k, secs, line as u64 + 1))
            .collect();
        let date = Instant::from_parts(1_709_251_200, 0).utc_date();
        fn file<R>(read: R) -> PublishedFile<R> {
            PublishedFile {
                path: "event_date=2024-03-01/part-00000.parquet".into(),
                rows: 1000,
                min: Some(Value::Int(0)),
                max: Some(Value::Int(1998)),
                read: Some(read),
            }
        }
        let records: Vec<Record> = published.iter().map(|e| e.record.clone()).collect();
        let mut as_records = PublishedFiles::default();
        as_records.by_date.insert(date, vec![file(records)]);
        let encoded = crate::store::rows::encoded(Source::Path(path), &schema).unwrap();
        let mut as_encoded = PublishedFiles::default();
        as_encoded.by_date.insert(date, vec![file(encoded)]);
        for target in [400, 1_000_000] {
            let want = plan::merge::merge_files(&winners, as_records.clone(), &schema, target);
            let got = plan::merge::merge_read(&winners, &as_encoded, &schema, target);
            let (want_date, got_date) = (&want.dates[&date], got.dates[&date].clone());
            let (got_plan, got_rows) = got_date.with_rows(Vec::<()>::new());
            let files = as_encoded.by_date[&date].clone();
            let rows = written_rows(schema.fields.len(), files, got_rows);
            assert_eq!(
                rows,
                RowSet::from_events(schema.fields.len(), &want_date.rows)
            );
            assert_eq!(got_plan.files, want_date.files, "target {target}");
            assert_eq!((got.stale, want.stale), (1, 1));
            assert_eq!(
                (got_plan.inserted, got_plan.updated, got_plan.rows_after),
                (3, 2, 1003)
            );
        }
    }
}
