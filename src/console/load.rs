//! The reads the runtime does on a reader thread, never the UI thread: [`snapshot`] (inbox, checkpoints,
//! quarantine, run log, partitions and their trash) and [`rejects`]. All through the
//! core's own readers; a problem with one part is reported, the rest still shows.

use std::collections::BTreeMap;

use super::app::{PartitionRow, TableAt};
use super::msg::Snapshot;
use crate::config::{Config, Lake};
use crate::inbox;
use crate::land::delta::{commit, trash as delta_trash};
use crate::land::hive::trash;
use crate::land::{quarantine, runlog};
use crate::plan::Owner;
use crate::store::state;

/// How many of the newest runs the History view lists: the run log grows without bound
/// under `watch`, and only its end is read (`wharf history` shows all of it).
pub const RUNS_SHOWN: usize = 1000;

/// Everything the views list, read now.
pub fn snapshot(config: &Config) -> Snapshot {
    let mut out = Snapshot::default();
    match inbox::list(&config.inbox, &config.set_marker) {
        Ok(entries) => out.inbox = entries,
        Err(e) => out.problems.push(e.to_string()),
    }
    let published = state::read_manifest(config).and_then(|manifest| {
        crate::land::root::PublishRoot::open(config)?.published(config, None, &manifest)
    });
    for entry in out.inbox.iter().filter(|e| e.ignored.is_none()) {
        match state::read_checkpoint(config, &entry.name) {
            Ok(Some(checkpoint)) => {
                // What became of its dates (§5.4): from the checkpoint and the manifest.
                if let Ok(published) = &published {
                    let standing = crate::plan::landed(&checkpoint, published);
                    out.standing.push((entry.name.clone(), standing));
                }
                out.checkpoints
                    .push((entry.name.clone(), checkpoint.input_sha256));
            }
            Ok(None) => {}
            Err(e) => out.problems.push(e.to_string()),
        }
    }
    match quarantine::list(config) {
        Ok(entries) => out.quarantine = entries,
        Err(e) => out.problems.push(e.to_string()),
    }
    match runlog::newest(config, RUNS_SHOWN) {
        Ok(mut runs) => {
            runs.reverse();
            out.runs = runs;
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    let read = match config.lake {
        Lake::Hive(_) => partitions(config).map(|rows| (rows, None)),
        Lake::Delta { .. } => table_partitions(config).map(|(rows, table)| (rows, Some(table))),
    };
    match read {
        Ok((rows, table)) => {
            out.partitions = rows;
            out.table = table;
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    out
}

/// [`partitions`] of a Delta table: its current version's dates and its trash.
fn table_partitions(config: &Config) -> crate::Result<(Vec<PartitionRow>, TableAt)> {
    let manifest = state::read_manifest(config)?;
    let found = commit::find(config)?;
    let published = commit::published(&found, None, &manifest);
    let trash = delta_trash::read(config, &found)?;
    let mut rows = Vec::with_capacity(published.dates.len());
    let mut parts = OwnerParts::default();
    for (date, now) in published.dates {
        let key = date.to_string();
        let entry = manifest.dates.get(&key);
        let kept = trash.dates.get(&key).map(Vec::as_slice).unwrap_or_default();
        rows.push(PartitionRow {
            date: key.clone(),
            rows: now.rows,
            owner_parts: parts.of(config, now.owner.as_ref()),
            owner: now.owner.as_ref().map(|o| o.input_name.clone()),
            owner_sha256: now.owner.map(|o| o.input_sha256),
            published_at: entry.map(|e| e.published_at.clone()),
            previous: kept.last().map(|g| trash::Generation {
                event_date: key.clone(),
                owner: g.owner.clone(),
                rows: g.rows,
                replaced_at: g.replaced_at.clone(),
            }),
            generations: kept.len(),
        });
    }
    let version = found.snapshot.as_ref().map(|s| s.version());
    Ok((rows, (found.table.url().to_owned(), version)))
}

/// Every published date with its owner and its newest trash generation.
fn partitions(config: &Config) -> crate::Result<Vec<PartitionRow>> {
    let manifest = state::read_manifest(config)?;
    let published = state::published(config, None, &manifest)?;
    let mut rows = Vec::with_capacity(published.dates.len());
    let mut parts = OwnerParts::default();
    for (date, now) in published.dates {
        let entry = manifest.dates.get(&date.to_string());
        let generations = trash::generations(config, date)?;
        let previous = match generations.last() {
            Some(folder) => Some(trash::read_generation(folder)?),
            None => None,
        };
        rows.push(PartitionRow {
            date: date.to_string(),
            rows: now.rows,
            owner_parts: parts.of(config, now.owner.as_ref()),
            owner: now.owner.as_ref().map(|o| o.input_name.clone()),
            owner_sha256: now.owner.map(|o| o.input_sha256),
            published_at: entry.map(|e| e.published_at.clone()),
            previous,
            generations: generations.len(),
        });
    }
    Ok(rows)
}

/// Each owner's part names, its checkpoint read once however many dates it owns.
#[derive(Default)]
struct OwnerParts(BTreeMap<(String, String), Vec<String>>);

impl OwnerParts {
    fn of(&mut self, config: &Config, owner: Option<&Owner>) -> Vec<String> {
        let Some(owner) = owner else {
            return Vec::new();
        };
        let key = (owner.input_name.clone(), owner.input_sha256.clone());
        self.0
            .entry(key)
            .or_insert_with(|| {
                let parts = state::owner_parts(config, owner);
                parts.into_iter().map(|p| p.name).collect()
            })
            .clone()
    }
}

/// One quarantine entry's summary and rejects.
pub fn rejects(
    config: &Config,
    sha256: &str,
) -> Result<(quarantine::QuarantineSummary, Vec<quarantine::RejectRecord>), String> {
    quarantine::rejects(config, sha256).map_err(|e| e.to_string())
}
