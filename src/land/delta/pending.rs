//! EFFECTS. `<state_root>/delta-pending.json`: the objects under a Delta table that a step
//! is about to write (a landing's uploads, a cluster's staging folder, named ending in
//! `/`) or to delete (the vacuum's pruned generations), recorded before the step, so a
//! crash in it leaves them named here. The next landing deletes those that neither the
//! current version nor the trash holds ([`commit`](super::commit)'s clean-up): a crash
//! leaves unreferenced files only for as long as no landing follows (CONTRACT.md §12.4).

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::{atomic, state};

fn path(config: &Config) -> PathBuf {
    config.state_root.join("delta-pending.json")
}

/// The recorded paths, none when there is no record.
pub fn read(config: &Config) -> Result<Vec<String>> {
    let path = path(config);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::CorruptState {
            path: path.clone(),
            detail: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io(&path, "read", "check the state root", e)),
    }
}

/// Replaces the record with `paths`.
pub fn record(config: &Config, paths: &[String]) -> Result<()> {
    atomic::write_atomic(
        &path(config),
        &state::pretty(&paths, "pending uploads")?,
        0o600,
    )
}

/// Adds `paths` to the record, keeping what it already names (a crashed landing's).
pub fn add(config: &Config, paths: &[String]) -> Result<()> {
    let mut all = read(config)?;
    let known: BTreeSet<String> = all.iter().cloned().collect();
    all.extend(paths.iter().filter(|p| !known.contains(*p)).cloned());
    record(config, &all)
}

/// Takes `paths` out of the record; an emptied record is removed.
pub fn forget(config: &Config, paths: &[String]) -> Result<()> {
    let gone: BTreeSet<&String> = paths.iter().collect();
    let left: Vec<String> = read(config)?
        .into_iter()
        .filter(|p| !gone.contains(p))
        .collect();
    if left.is_empty() {
        clear(config)
    } else {
        record(config, &left)
    }
}

/// Removes the record.
pub fn clear(config: &Config) -> Result<()> {
    let path = path(config);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&path, "remove", "check the state root", e)),
    }
}
