//! EFFECTS. `wharf restore DATE` on a Delta table (§12.6): one commit removes the date's
//! current files and re-adds those of its newest removed generation, which stayed in the
//! table's storage ([`super::trash`]).

use std::collections::BTreeSet;
use std::time::Instant;

use super::commit::Found;
use super::trash as delta_trash;
use super::{AddFile, CommitNote};
use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::restore::{Restored, log_restore};
use crate::land::timestamp_now;
use crate::plan::{Owner, PartitionEntry};
use crate::store::state;

/// §12.6: one commit removing `date`'s current files and re-adding its newest removed
/// generation's; the generation it replaces enters the trash first, so a restore can be
/// undone by another and a failed one loses nothing.
pub fn restore(config: &Config, found: &Found, date: Date, started: Instant) -> Result<Restored> {
    let mut manifest = state::read_manifest(config)?;
    let mut trash = delta_trash::read(config, found)?;
    let key = date.to_string();
    let Some(newest) = trash.dates.get(&key).and_then(|g| g.last()).cloned() else {
        return Err(Error::Usage(format!(
            "no earlier generation of {date} in the trash of {} ({}); nothing to restore",
            found.table.url(),
            crate::store::state_store::StateStore::state(config)?
                .shown(delta_trash::FILE)
                .display()
        )));
    };
    // §12.6, §12.8: nothing is committed over a file another writer deleted or gave a
    // deletion vector, nor on an append-only table.
    found.check_restorable(date, &newest)?;
    let now = timestamp_now();
    let remove: BTreeSet<String> = found
        .files
        .iter()
        .filter(|f| f.date == date)
        .map(|f| f.path.clone())
        .collect();
    delta_trash::keep(&mut trash, found, &manifest, [date], &now);
    delta_trash::write(config, &trash)?;
    let add: Vec<AddFile> = newest
        .files
        .iter()
        .map(|f| AddFile {
            path: f.path.clone(),
            date,
            rows: f.rows,
            size: f.size,
        })
        .collect();
    let owner_name = newest.owner.as_ref().map(|o| o.input_name.as_str());
    let note = CommitNote {
        product: &config.product,
        input_name: owner_name.unwrap_or(""),
        input_sha256: newest
            .owner
            .as_ref()
            .map_or("", |o| o.input_sha256.as_str()),
        run_id: &crate::land::new_run_id(),
        metrics: vec![
            ("numAddedFiles", add.len() as u64),
            ("numRemovedFiles", remove.len() as u64),
        ],
        landing: None,
    };
    // A merge rewrites files, not dates (§10.4): the generations share the files it kept,
    // which stay in the table (one commit never removes and adds one path).
    let back: BTreeSet<&str> = add.iter().map(|f| f.path.as_str()).collect();
    let remove: BTreeSet<String> = remove
        .into_iter()
        .filter(|p| !back.contains(p.as_str()))
        .collect();
    let readd: Vec<AddFile> = add
        .iter()
        .filter(|f| !found.files.iter().any(|l| l.path == f.path))
        .cloned()
        .collect();
    let version = found
        .table
        .commit(config, found.snapshot.as_ref(), &remove, &readd, &note)?;
    let _ = found.table.checkpoint_if_due(config, version);
    restore_entry(&mut manifest, &key, newest.owner.clone(), &add, &now);
    state::write_manifest(config, &manifest)?;
    // The restored generation is live now: it leaves the record.
    if let Some(generations) = trash.dates.get_mut(&key) {
        generations.retain(|g| g != &newest);
    }
    let _ = delta_trash::settle(config, found, &mut trash, (&remove, &add)); // housekeeping only
    let owner = newest.owner.map(|o| o.input_name);
    log_restore(
        config,
        date,
        &owner,
        newest.rows,
        now,
        started,
        Some(version),
    )?;
    Ok(Restored {
        date,
        owner,
        rows: newest.rows,
    })
}

/// The manifest's entry for a restored Delta date: its owner and the files it re-added.
fn restore_entry(
    manifest: &mut crate::plan::Manifest,
    key: &str,
    owner: Option<Owner>,
    add: &[AddFile],
    now: &str,
) {
    match owner {
        Some(owner) => {
            let entry = PartitionEntry {
                owner,
                rows: add.iter().map(|f| f.rows).sum(),
                files: add.len() as u64,
                published_at: now.to_owned(),
                table_files: add.iter().map(|f| f.path.clone()).collect(),
                run_id: None,
            };
            manifest.dates.insert(key.to_owned(), entry);
        }
        None => {
            manifest.dates.remove(key);
        }
    }
}
