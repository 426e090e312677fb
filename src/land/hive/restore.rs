//! EFFECTS. `wharf restore DATE` on hive folders (§6.3): the date's newest trash
//! generation is copied into staging and swapped in like a landing's, the generation it
//! replaces entering the trash first.

use std::time::Instant;

use super::{swap, trash};
use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::restore::{Restored, log_restore};
use crate::land::timestamp_now;
use crate::plan::PartitionEntry;
use crate::store::{atomic, parquet_files, state};

/// Restores `date`'s newest trash generation (the caller holds the lock).
pub fn restore(config: &Config, date: Date, started: Instant) -> Result<Restored> {
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
    let live = state::partition_dir(config.lake.publish_root(), date);
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
