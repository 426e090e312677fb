//! EFFECTS. [`PublishRoot`]: the root a landing publishes into, hive folders or a Delta
//! table (CONTRACT.md §12), behind the one interface [`super::run`] calls in the
//! contract's order:
//!
//! - [`PublishRoot::open`]: a table's current version is read before the input, so an
//!   unreachable table fails fast;
//! - [`PublishRoot::with_dataset`]: what an engine reads of it (merge mode's published
//!   rows, the Spark engine's files);
//! - [`PublishRoot::published`]: what the skip rule and the decision compare against
//!   (§5.3–5.10);
//! - [`PublishRoot::publish`]: §6.2–6.4, hive dates swapped in one by one or one Delta
//!   commit, then the manifest and, last, the checkpoint.

use super::delta::commit::{self, Found};
use super::delta::read as delta_read;
use super::hive::swap;
use super::{Progress, checkpoint, generation_id};
use crate::config::{Config, Lake, WriteMode};
use crate::engine::{Engine, Staged};
use crate::error::Result;
use crate::plan::{self, Checkpoint, Manifest, Owner, PartitionEntry, Plan};
use crate::store::dataset::{Dataset, HiveFolders};
use crate::store::{atomic, failpoint, state};

/// The publish root of a config, as found before a landing.
pub enum PublishRoot {
    /// `event_date=D` folders under a local path, each swapped in whole.
    Hive,
    /// A Delta table's version as found: a landing commits the next one.
    Delta(Box<Found>),
}

/// What a publish did, for the run log.
pub struct Publication {
    /// How each hive date was swapped in; none on a table.
    pub swaps: Vec<swap::SwapMethod>,
    /// The table version the landing committed.
    pub table_version: Option<u64>,
}

impl PublishRoot {
    pub fn open(config: &Config) -> Result<PublishRoot> {
        Ok(match config.lake {
            Lake::Hive(_) => PublishRoot::Hive,
            Lake::Delta { .. } => PublishRoot::Delta(Box::new(commit::find(config)?)),
        })
    }

    /// The table version found, on a Delta root.
    pub fn found(&self) -> Option<&Found> {
        match self {
            PublishRoot::Hive => None,
            PublishRoot::Delta(found) => Some(found),
        }
    }

    /// `read` over the published dataset: the hive folders, or the version found.
    pub fn with_dataset<T>(&self, config: &Config, read: impl FnOnce(&dyn Dataset) -> T) -> T {
        match self {
            PublishRoot::Hive => read(&HiveFolders(config.lake.publish_root())),
            PublishRoot::Delta(found) => read(&delta_read::TableVersion(found)),
        }
    }

    /// What is published now, with `checkpoint`, the input's, for the skip rule.
    pub fn published(
        &self,
        config: &Config,
        checkpoint: Option<Checkpoint>,
        manifest: &Manifest,
    ) -> Result<plan::Published> {
        match self {
            PublishRoot::Hive => state::published(config, checkpoint, manifest),
            PublishRoot::Delta(found) => Ok(commit::published(found, checkpoint, manifest)),
        }
    }

    /// Publishes `plan` (§6.2–6.4): `engine` stages or writes its dates, they become
    /// visible, then the manifest and the checkpoint are written. A failed publish
    /// leaves what was published as it was.
    pub fn publish(
        &self,
        config: &Config,
        engine: &mut dyn Engine,
        plan: &Plan,
        manifest: Manifest,
        now: &str,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Publication> {
        match self {
            PublishRoot::Hive => {
                let swapped = swap_in(config, engine, plan, manifest, now, progress);
                if swapped.is_err() {
                    let _ = swap::clean_staging(config); // the error is the one to report
                }
                Ok(Publication {
                    swaps: swapped?,
                    table_version: None,
                })
            }
            PublishRoot::Delta(found) => {
                // §12: one commit, then the manifest and the checkpoint naming it.
                let version =
                    commit::publish(config, engine, plan, manifest, found, now, progress)?;
                let mut written = checkpoint(config, plan, now);
                written.table_version = Some(version);
                state::write_checkpoint(config, &written)?;
                failpoint::hit("after_checkpoint");
                Ok(Publication {
                    swaps: Vec::new(),
                    table_version: Some(version),
                })
            }
        }
    }
}

/// Has `engine` stage every date, swaps each in, then writes the manifest and last the
/// checkpoint.
fn swap_in(
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
            super::hive::folder::link_file(
                &config.lake.publish_root().join(path),
                &folder.join(name),
            )?;
        }
        atomic::sync_dir(&folder)?;
    }
    Ok(())
}
