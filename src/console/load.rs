//! The reads the runtime does on a reader thread, never the UI thread: [`snapshot`] (inbox, checkpoints,
//! quarantine, run log, partitions and their trash) and [`rejects`]. All through the
//! core's own readers; a problem with one part is reported, the rest still shows.

use std::collections::BTreeMap;

use super::app::{PartitionRow, TableAt};
use super::msg::Snapshot;
use crate::config::Config;
use crate::inbox;
use crate::land::root::PublishRoot;
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
    // A new machine's state root is empty: what landed is the table's log's (§12.5), read
    // as `status` reads it, so its inputs are not listed as new until a run writes them.
    let recalled = PublishRoot::open(config).and_then(|root| {
        let recalled = root.recall(config, false)?;
        let published = root.published(config, None, &recalled.manifest)?;
        Ok((recalled, published))
    });
    let (recalled, published) = match recalled {
        Ok((recalled, published)) => (Some(recalled), Ok(published)),
        Err(e) => (None, Err(e)),
    };
    for entry in out.inbox.iter().filter(|e| e.ignored.is_none()) {
        let checkpoint = match &recalled {
            Some(recalled) => recalled.checkpoint(config, &entry.name, true),
            None => state::read_checkpoint(config, &entry.name),
        };
        match checkpoint {
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
    match partitions(config) {
        Ok((rows, table)) => {
            out.partitions = rows;
            out.table = table;
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    out
}

/// Every published date with its owner and its newest kept generation, and the table
/// and version they were read from (none for hive folders).
fn partitions(config: &Config) -> crate::Result<(Vec<PartitionRow>, Option<TableAt>)> {
    let root = PublishRoot::open(config)?;
    let mut parts = OwnerParts::default();
    let rows = root
        .partitions(config)?
        .into_iter()
        .map(|p| PartitionRow {
            date: p.date.to_string(),
            rows: p.rows,
            owner_parts: parts.of(config, p.owner.as_ref()),
            owner: p.owner.as_ref().map(|o| o.input_name.clone()),
            owner_sha256: p.owner.map(|o| o.input_sha256),
            published_at: p.published_at,
            previous: p.previous,
            generations: p.generations,
        })
        .collect();
    Ok((rows, root.table()))
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
