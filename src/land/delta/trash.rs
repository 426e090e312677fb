//! The trash of a Delta table (CONTRACT.md §12.6): the generations a landing or a restore
//! removed from the table, per date, at `<state_root>/delta-trash.json`. Their files stay
//! in the table's storage (a Delta `remove` deletes nothing), so `wharf restore DATE` is a
//! commit that re-adds them; the newest `keep_generations` of each date are kept and the
//! files of older ones are deleted (Wharf's own vacuum), named in the pending record
//! ([`delta_pending`](super::pending)) until they are gone.
//!
//! The record is written *before* the commit that removes a generation, so a crash at any
//! step leaves the generation in the table, in the record, or both. [`read`] drops the
//! generations whose files the current version holds: a commit that failed, or a restore
//! that brought one back, never leaves a second, live copy in the trash.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::delta::commit::{self, Found};
use crate::land::delta::pending as delta_pending;
use crate::land::delta::{AddFile, TableFile};
use crate::plan::{Manifest, Owner};
use crate::store::state_store::StateStore;
use crate::store::{failpoint, state};

/// One data file of a removed generation, as a commit re-adds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptFile {
    pub path: String,
    pub rows: u64,
    pub size: u64,
}

/// A generation a commit removed from one date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    pub owner: Option<Owner>,
    pub rows: u64,
    pub files: Vec<KeptFile>,
    pub replaced_at: String,
}

/// Every date's removed generations, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaTrash {
    pub dates: BTreeMap<String, Vec<Kept>>,
}

/// The record's name under the state root.
pub const FILE: &str = "delta-trash.json";

/// The trash as recorded, less the generations the table's current version holds.
pub fn read(config: &Config, found: &Found) -> Result<DeltaTrash> {
    let store = StateStore::state(config)?;
    let mut trash: DeltaTrash = match store.read(FILE, "read", "check the state root")? {
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::CorruptState {
            path: store.shown(FILE),
            detail: e.to_string(),
        })?,
        None => DeltaTrash::default(),
    };
    // A generation is live when it is its date's current files exactly: a merge's
    // successor shares the files it kept with the generation it replaced (§10.4).
    let mut live: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for file in &found.files {
        live.entry(file.date.to_string())
            .or_default()
            .insert(file.path.as_str());
    }
    for (date, generations) in trash.dates.iter_mut() {
        let current = live.get(date);
        generations.retain(|g| {
            let paths: BTreeSet<&str> = g.files.iter().map(|f| f.path.as_str()).collect();
            current != Some(&paths)
        });
    }
    trash.dates.retain(|_, g| !g.is_empty());
    Ok(trash)
}

pub fn write(config: &Config, trash: &DeltaTrash) -> Result<()> {
    StateStore::state(config)?.write(FILE, &state::pretty(trash, "the Delta trash")?)
}

/// The current generation of `date`: its files in the table's current version, and its
/// owner when the manifest's entry still names exactly those files (§12.5).
pub fn current(found: &Found, manifest: &Manifest, date: Date, now: &str) -> Option<Kept> {
    let files: Vec<&TableFile> = found.files.iter().filter(|f| f.date == date).collect();
    if files.is_empty() {
        return None;
    }
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let owner = commit::owner_of(manifest, date, &paths);
    Some(Kept {
        owner,
        rows: files.iter().map(|f| f.rows).sum(),
        files: files
            .iter()
            .map(|f| KeptFile {
                path: f.path.clone(),
                rows: f.rows,
                size: f.size,
            })
            .collect(),
        replaced_at: now.to_owned(),
    })
}

/// Puts the current generation of each of `dates` in the trash (before the commit that
/// removes them).
pub fn keep(
    trash: &mut DeltaTrash,
    found: &Found,
    manifest: &Manifest,
    dates: impl IntoIterator<Item = Date>,
    now: &str,
) {
    for date in dates {
        if let Some(kept) = current(found, manifest, date, now) {
            trash.dates.entry(date.to_string()).or_default().push(kept);
        }
    }
}

/// Drops every date's generations beyond the newest `keep`; returns their files, for the
/// caller to delete once the shortened record is written (a crash in between leaves
/// unreferenced files, never a record naming deleted ones). A file `live` holds is never
/// returned.
pub fn prune(trash: &mut DeltaTrash, keep: usize, live: &BTreeSet<String>) -> Vec<String> {
    let mut doomed = Vec::new();
    for generations in trash.dates.values_mut() {
        let extra = generations.len().saturating_sub(keep);
        for old in generations.drain(..extra) {
            doomed.extend(old.files.into_iter().map(|f| f.path));
        }
    }
    let kept: BTreeSet<&str> = trash
        .dates
        .values()
        .flatten()
        .flat_map(|g| g.files.iter().map(|f| f.path.as_str()))
        .collect();
    doomed.retain(|p| !live.contains(p) && !kept.contains(p.as_str()));
    doomed
}

/// After a commit: prunes, writes the record, then deletes the pruned files. They are
/// named in the pending record first, so a crash or a failed delete before they are gone
/// leaves them to the next landing's clean-up, not stored and named nowhere.
/// The version after the commit holds `found`'s files but those it removed, and those it
/// `added`.
pub fn settle(
    config: &Config,
    found: &Found,
    trash: &mut DeltaTrash,
    (removed, added): (&BTreeSet<String>, &[AddFile]),
) -> Result<()> {
    let live: BTreeSet<String> = found
        .files
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| !removed.contains(p))
        .chain(added.iter().map(|f| f.path.clone()))
        .collect();
    let doomed = prune(trash, config.keep_generations, &live);
    if doomed.is_empty() {
        return write(config, trash);
    }
    delta_pending::add(config, &doomed)?;
    write(config, trash)?;
    failpoint::hit("before_vacuum");
    found.table.delete(&doomed)?;
    delta_pending::forget(config, &doomed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(paths: &[&str]) -> Kept {
        Kept {
            owner: None,
            rows: 1,
            files: paths
                .iter()
                .map(|p| KeptFile {
                    path: (*p).to_owned(),
                    rows: 1,
                    size: 10,
                })
                .collect(),
            replaced_at: String::new(),
        }
    }

    #[test]
    fn prune_keeps_the_newest_and_never_returns_a_live_or_kept_file() {
        let mut trash = DeltaTrash::default();
        trash.dates.insert(
            "2024-03-01".into(),
            vec![kept(&["a", "shared"]), kept(&["b"]), kept(&["c", "shared"])],
        );
        let live: BTreeSet<String> = ["b".to_owned()].into();
        let doomed = prune(&mut trash, 1, &live);
        assert_eq!(doomed, vec!["a".to_owned()]);
        assert_eq!(trash.dates["2024-03-01"], vec![kept(&["c", "shared"])]);
    }
}
