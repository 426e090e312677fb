//! `wharf restore DATE`: brings back a date's newest trash generation. Its files are
//! copied into staging and swapped in like a landing's; the generation it replaces enters
//! the trash first (so a restore can be undone by another restore, and a failed one loses
//! nothing), and the manifest names the restored generation's owner, so the next rerun of
//! either input does the right thing (§5.4).

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::{lock, runlog, swap, timestamp_now, trash};
use crate::plan::{Counts, PartitionEntry};
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
            };
            manifest.dates.insert(key.clone(), entry);
        }
        None => {
            manifest.dates.remove(&key);
        }
    }
    state::write_manifest(config, &manifest)?;
    let owner = record.owner.map(|o| o.input_name);
    runlog::append(
        config,
        &runlog::RunRecord {
            time: now,
            product: config.product.clone(),
            input_name: owner.clone().unwrap_or_default(),
            input_sha256: String::new(),
            action: "restored".into(),
            reason: None,
            dates: vec![key],
            counts: Counts {
                keys: rows,
                ..Counts::default()
            },
            unranked: false,
            duration_ms: started.elapsed().as_millis() as u64,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            swaps: Vec::new(),
            // A restore renames published folders on this machine: no engine reads rows.
            engine: "local".to_owned(),
            engine_settings: Default::default(),
            table_version: None,
            parts: Vec::new(),
        },
    )?;
    Ok(Restored { date, owner, rows })
}
