//! `wharf restore DATE`: brings back a date's newest trash generation. Its files are
//! copied into staging and swapped in like a landing's; the generation it replaces enters
//! the trash first (so a restore can be undone by another restore, and a failed one loses
//! nothing), and the manifest names the restored generation's owner, so the next rerun of
//! either input does the right thing (§5.4).
//!
//! On a Delta table (§12.6) a restore is one commit: it removes the date's current files
//! and re-adds those of its newest removed generation, which stayed in the table's storage
//! ([`crate::land::delta_trash`]).

use std::collections::BTreeSet;

use crate::config::{Config, TableFormat};
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::delta::{AddFile, CommitNote};
use crate::land::{commit, delta_trash, lock, runlog, swap, timestamp_now, trash};
use crate::plan::{Counts, Owner, PartitionEntry};
use crate::store::{atomic, parquet_files, state};

/// What a restore brought back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    pub date: Date,
    pub owner: Option<String>,
    pub rows: u64,
}

/// Restores `date`'s newest trash generation.
pub fn restore(config: &Config, date: Date) -> Result<Restored> {
    let started = std::time::Instant::now();
    let _lock = lock::acquire(config)?;
    if config.table_format == TableFormat::Delta {
        return restore_delta(config, date, started);
    }
    let generations = trash::generations(config, date)?;
    let Some(newest) = generations.last() else {
        return Err(Error::Usage(format!(
            "no earlier generation of {date} in {}; nothing to restore",
            trash::trash_dir(config, date).display()
        )));
    };
    let record = trash::read_generation(newest)?;
    let now = timestamp_now();
    let generation = format!("{}-restore", now.replace([':', '-'], ""));
    let staging = swap::fresh_staging(config, &generation)?;
    let staged = state::partition_dir(&staging, date);
    atomic::create_dir_all(&staged)?;
    for file in parquet_files::parquet_paths(newest)? {
        let target = staged.join(file.file_name().unwrap_or_default());
        std::fs::copy(&file, &target)
            .and_then(|_| std::fs::File::open(&target)?.sync_all())
            .map_err(|e| Error::io(&target, "copy the generation", "check free space", e))?;
    }
    atomic::sync_dir(&staged)?;
    let rows = parquet_files::count_rows(&staged)?;
    let files = parquet_files::parquet_paths(&staged)?.len() as u64;

    let mut manifest = state::read_manifest(config)?;
    let key = date.to_string();
    let live = state::partition_dir(&config.publish_root, date);
    let before = if live.exists() {
        let owner = manifest.dates.get(&key).map(|e| e.owner.clone());
        Some((owner, parquet_files::count_rows(&live)?))
    } else {
        None
    };
    let restored_from = newest.clone();
    swap::swap_in(config, &staged, date, &generation, before)?;
    if restored_from.exists() {
        std::fs::remove_dir_all(&restored_from).map_err(|e| {
            Error::io(
                &restored_from,
                "remove the restored generation from the trash",
                "remove it by hand",
                e,
            )
        })?;
    }
    swap::clean_staging(config)?;
    match &record.owner {
        Some(owner) => {
            let entry = PartitionEntry {
                owner: owner.clone(),
                rows,
                files,
                published_at: now.clone(),
                table_files: Vec::new(),
                run_id: None,
            };
            manifest.dates.insert(key.clone(), entry);
        }
        None => {
            manifest.dates.remove(&key);
        }
    }
    state::write_manifest(config, &manifest)?;
    let owner = record.owner.map(|o| o.input_name);
    log_restore(config, date, &owner, rows, now, started, None)?;
    Ok(Restored { date, owner, rows })
}

/// §12.6: one commit removing `date`'s current files and re-adding its newest removed
/// generation's; the generation it replaces enters the trash first, so a restore can be
/// undone by another and a failed one loses nothing.
fn restore_delta(config: &Config, date: Date, started: std::time::Instant) -> Result<Restored> {
    let found = commit::find(config)?;
    let mut manifest = state::read_manifest(config)?;
    let mut trash = delta_trash::read(config, &found)?;
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
    delta_trash::keep(&mut trash, &found, &manifest, [date], &now);
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
    let live: BTreeSet<String> = found
        .files
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| !remove.contains(p))
        .chain(add.iter().map(|f| f.path.clone()))
        .collect();
    let _ = delta_trash::settle(config, &found, &mut trash, &live); // housekeeping only
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

fn log_restore(
    config: &Config,
    date: Date,
    owner: &Option<String>,
    rows: u64,
    now: String,
    started: std::time::Instant,
    table_version: Option<u64>,
) -> Result<()> {
    runlog::append(
        config,
        &runlog::RunRecord {
            time: now,
            product: config.product.clone(),
            input_name: owner.clone().unwrap_or_default(),
            input_sha256: String::new(),
            action: "restored".into(),
            reason: None,
            dates: vec![date.to_string()],
            counts: Counts {
                keys: rows,
                ..Counts::default()
            },
            unranked: false,
            duration_ms: started.elapsed().as_millis() as u64,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            swaps: Vec::new(),
            // A restore moves published files: no engine reads rows.
            engine: "local".to_owned(),
            engine_settings: Default::default(),
            table_version,
            parts: Vec::new(),
            run_id: crate::land::new_run_id(),
            memory: None,
        },
    )
}
