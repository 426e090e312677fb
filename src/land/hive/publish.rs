//! EFFECTS. §6.2–6.4 on hive folders: the engine stages every date beside the publish
//! root, merge mode's untouched files are hard-linked into the staged generation
//! ([`carry_over`]), and each date is swapped in ([`super::swap`]); then the manifest and,
//! last, the checkpoint.

use super::{folder, swap};
use crate::config::{Config, WriteMode};
use crate::engine::{Engine, Staged};
use crate::error::Result;
use crate::land::{Progress, checkpoint, generation_id};
use crate::plan::{self, Manifest, Owner, PartitionEntry, Plan};
use crate::store::{atomic, failpoint, state};

/// Has `engine` stage every date, swaps each in, then writes the manifest and last the
/// checkpoint.
pub fn swap_in(
    config: &Config,
    engine: &mut dyn Engine,
    plan: &Plan,
    mut manifest: Manifest,
    now: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<swap::SwapMethod>> {
    let generation = generation_id(now, plan);
    let staging = swap::fresh_staging(config, &generation)?;
    let Staged { files, carried } = engine.stage(config, plan, &staging, progress)?;
    carry_over(config, &staging, &carried)?;
    atomic::sync_dir(&staging)?;
    failpoint::hit("after_stage");

    let mut methods = Vec::with_capacity(plan.dates.len());
    // Merge moves keys only to later dates: newest first puts a moved key on its new date
    // before it leaves the old one (§10.4), so a crash between swaps never loses it.
    let order: Vec<&plan::DatePlan> = match config.write_mode {
        WriteMode::Replace => plan.dates.iter().collect(),
        WriteMode::Merge => plan.dates.iter().rev().collect(),
    };
    for (index, date_plan) in order.into_iter().enumerate() {
        let date = date_plan.event_date;
        progress(Progress::Swapping { date });
        let key = date.to_string();
        let before = date_plan.rows_before.map(|rows| {
            let owner = manifest.dates.get(&key).map(|e| e.owner.clone());
            (owner, rows)
        });
        if date_plan.rows == 0 && config.write_mode == WriteMode::Merge {
            // §10.3: every key of this date moved away; the date leaves the dataset.
            let (owner, rows_before) = before.unwrap_or((None, 0));
            swap::retire(config, date, &generation, owner, rows_before)?;
            manifest.dates.remove(&key);
            failpoint::hit(&format!("after_swap_{}", index + 1));
            continue;
        }
        let staged = state::partition_dir(&staging, date);
        methods.push(swap::swap_in(config, &staged, date, &generation, before)?);
        failpoint::hit(&format!("after_swap_{}", index + 1));
        let entry = PartitionEntry {
            owner: Owner {
                input_name: plan.input_name.clone(),
                input_sha256: plan.input_sha256.clone(),
            },
            rows: date_plan.rows,
            files: files.get(&date).copied().unwrap_or(0),
            published_at: now.to_owned(),
            table_files: Vec::new(),
            run_id: Some(plan.run_id.clone()),
        };
        manifest.dates.insert(key, entry);
    }
    swap::clean_staging(config)?;
    failpoint::hit("after_swaps");
    state::write_manifest(config, &manifest)?;
    failpoint::hit("after_manifest");
    state::write_checkpoint(config, &checkpoint(config, plan, now))?;
    failpoint::hit("after_checkpoint");
    Ok(methods)
}

/// Merge mode (§10.4): links each date's files that carry over from its live generation
/// into its staged one, under their places in the date's key order, so the new
/// generation is whole before it is swapped in.
fn carry_over(
    config: &Config,
    staging: &std::path::Path,
    carried: &std::collections::BTreeMap<crate::contract::Date, Vec<(String, u64)>>,
) -> Result<()> {
    for (date, files) in carried {
        let folder = state::partition_dir(staging, *date);
        for (path, n) in files {
            let name = crate::engine::local::parquet::part_name(*n);
            folder::link_file(&config.lake.publish_root().join(path), &folder.join(name))?;
        }
        atomic::sync_dir(&folder)?;
    }
    Ok(())
}
