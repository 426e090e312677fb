//! Merge mode's row work (CONTRACT.md §10.4–5): [`merge_batch`] finds the published files
//! the batch's keys may live in by their footers and bloom filters, reads those, and
//! merges; [`stage_layout`] writes a merged date's new files in their places.

use std::collections::BTreeMap;
use std::path::Path;

use super::parquet;
use super::rowset::RowSet;
use super::tally::Summary;
use crate::config::Config;
use crate::contract::{Date, Schema, Value};
use crate::error::Result;
use crate::plan::{self, Event, FileOut, Merged, PublishedFile, PublishedFiles};
use crate::store::dataset::Dataset;

/// §10: finds the published files the batch's winners meet by their footers and bloom
/// filters (§10.5), reads those, and merges.
pub(super) fn merge_batch(
    config: &Config,
    dataset: &dyn Dataset,
    summary: &Summary,
) -> Result<Merged> {
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
    let mut published = PublishedFiles::default();
    for date in dataset.dates()? {
        let footers = dataset.footers(date, schema)?;
        let mut files: Vec<PublishedFile> = footers
            .iter()
            .map(|f| PublishedFile {
                path: f.path.clone(),
                rows: f.rows,
                min: f.min().cloned(),
                max: f.max().cloned(),
                read: None,
            })
            .collect();
        // A new key of the date rewrites the file its range falls in: read it too.
        let mut wanted = vec![false; files.len()];
        for key in own.get(&date).into_iter().flatten() {
            if let Some(at) = plan::merge::file_for(&files, key, config.target_file_rows) {
                wanted[at] = true;
            }
        }
        for (at, footer) in footers.iter().enumerate() {
            if !wanted[at] && dataset.may_hold(footer, &keys)? {
                wanted[at] = true;
            }
        }
        for (file, _) in files.iter_mut().zip(&wanted).filter(|(_, w)| **w) {
            file.read = Some(dataset.file_rows(&file.path, schema)?);
        }
        published.by_date.insert(date, files);
    }
    Ok(plan::merge::merge_files(
        &winners,
        published,
        schema,
        config.target_file_rows,
    ))
}

/// A merged date's rows by hour: its kept files' (their hour column read) and its
/// written rows'.
pub(super) fn merged_hours(
    dataset: &dyn Dataset,
    config: &Config,
    merged: &plan::merge::MergedDate,
) -> Result<[u64; 24]> {
    let schema = &config.schema;
    let mut hours = plan::rows_by_hour(merged.rows.iter().map(|e| &e.record), schema.date_of);
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
