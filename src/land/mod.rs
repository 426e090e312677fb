//! EFFECTS. The landing's steps that are the same for every engine: the lock, quarantine,
//! the staging folder, the swap, the trash, the manifest, `keys.json`, the checkpoint and
//! the run log. An [`crate::engine::Engine`] does the row work in between: its census
//! feeds [`plan::decide()`], and it stages the dates the plan publishes.
//!
//! [`plan_input`] is the read-only half (what `wharf plan` and the console show);
//! [`run`] is the whole landing, top to bottom in the contract's order.

pub mod commit;
pub mod delta;
pub mod delta_pending;
pub mod delta_read;
pub mod delta_trash;
mod folder;
pub mod generations;
pub mod hours;
pub mod lock;
pub mod preview;
pub mod quarantine;
pub mod restore;
pub mod runlog;
pub mod swap;
pub mod trash;

use std::path::Path;
use std::time::Instant;

use crate::config::{Config, TableFormat, WriteMode};
use crate::engine::{Engine, Staged};
use crate::error::Result;
use crate::input;
use crate::plan::{self, Action, Checkpoint, DecideOptions, Manifest, Owner, PartitionEntry, Plan};
use crate::store::dataset::HiveFolders;
use crate::store::{atomic, failpoint, keys, state};

pub use crate::engine::Progress;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    Published,
    Skipped,
    Refused,
}

impl RunStatus {
    pub fn code(self) -> &'static str {
        match self {
            RunStatus::Published => "published",
            RunStatus::Skipped => "skipped",
            RunStatus::Refused => "refused",
        }
    }
}

/// A finished run: its status and the plan it executed.
#[derive(Debug)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub plan: Plan,
    pub duration_ms: u64,
}

/// Plans `path` without writing anything: `engine` reads it once (hash, classify, rank,
/// and in merge mode the merge), then the plan is decided against the published state
/// (§5 steps 3–10).
pub fn plan_input(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Plan> {
    plan_with_manifest(config, engine, path, options, progress).map(|(plan, _, _)| plan)
}

/// [`plan_input`], also returning the manifest the plan was decided against (a run holds
/// the lock, so it is still the manifest when the run publishes).
fn plan_with_manifest(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Plan, Manifest, Option<commit::Found>)> {
    let input = input::open(path, &config.set_marker)?;
    let checkpoint = state::read_checkpoint(config, &input.name)?;
    let manifest = state::read_manifest(config)?;
    // A Delta table is read before the input: an unreachable one fails fast.
    let found = match config.table_format {
        TableFormat::Hive => None,
        TableFormat::Delta => Some(commit::find(config)?),
    };
    let census = match &found {
        None => {
            let folders = HiveFolders(&config.publish_root);
            engine.census(config, &input, &manifest, &folders, progress)?
        }
        Some(found) => {
            let version = delta_read::TableVersion(found);
            engine.census(config, &input, &manifest, &version, progress)?
        }
    };
    let published = match &found {
        None => state::published(config, checkpoint, &manifest)?,
        Some(found) => commit::published(found, checkpoint, &manifest),
    };
    let owner = Owner {
        input_name: input.name,
        input_sha256: census.sha256.clone(),
    };
    let plan = plan::decide(
        census,
        owner,
        &plan::Policy::of(config),
        &published,
        options,
    );
    Ok((plan, manifest, found))
}

/// Lands `path`: CONTRACT.md §5 then §6, in order, with `engine` doing the row work.
pub fn run(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutcome> {
    let started = Instant::now();
    refuse_unclosed(path, &config.set_marker)?;
    let _lock = lock::acquire(config)?; // §5.2: busy touches nothing
    failpoint::hit("after_lock");
    let (plan, manifest, found) = plan_with_manifest(config, engine, path, options, progress)?; // §5.3–5.10
    let now = timestamp_now();
    let mut table_version = None;
    let (status, swaps) = match plan.action {
        Action::Skip => (RunStatus::Skipped, Vec::new()),
        Action::Refuse => {
            quarantine::write(config, &plan, RunStatus::Refused.code(), &now)?; // §6.1
            (RunStatus::Refused, Vec::new())
        }
        Action::Publish => {
            quarantine::write(config, &plan, RunStatus::Published.code(), &now)?; // §6.1
            failpoint::hit("after_quarantine");
            match &found {
                None => {
                    let published = publish(config, engine, &plan, manifest, &now, progress); // §6.2–6.4
                    if published.is_err() {
                        let _ = swap::clean_staging(config); // the error is the one to report
                    }
                    (RunStatus::Published, published?)
                }
                Some(found) => {
                    // §12: one commit, then the manifest and the checkpoint naming it.
                    let version =
                        commit::publish(config, engine, &plan, manifest, found, &now, progress)?;
                    let mut written = checkpoint(config, &plan, &now);
                    written.table_version = Some(version);
                    state::write_checkpoint(config, &written)?;
                    failpoint::hit("after_checkpoint");
                    table_version = Some(version);
                    (RunStatus::Published, Vec::new())
                }
            }
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let mut record = run_record(config, &plan, status, &now, duration_ms);
    record.swaps = swaps.iter().map(|m| m.code().to_owned()).collect();
    record.engine = engine.describe();
    record.engine_settings = engine.settings();
    record.table_version = table_version;
    runlog::append(config, &record)?; // §6.5
    Ok(RunOutcome {
        status,
        plan,
        duration_ms,
    })
}

/// Only closed inputs land: a temporary name means the producer may still be writing, and
/// a symbolic link is never followed (CONTRACT.md "input"). Planning one is allowed. A set
/// is looked at before the lock, so an open or badly laid out one writes nothing (§11.2).
fn refuse_unclosed(path: &Path, marker: &str) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        input::check_set(path, marker)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let why = if link {
        Some("is a symbolic link, which Wharf never follows; land the file it points to")
    } else {
        crate::inbox::temporary_name(&name)
            .map(|_| "has a temporary name, so its producer may still be writing it; land it once it is renamed")
    };
    match why {
        Some(message) => Err(crate::Error::Input {
            path: path.to_owned(),
            message: message.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Has `engine` stage every date, swaps each in, then writes the manifest and last the
/// checkpoint.
fn publish(
    config: &Config,
    engine: &mut dyn Engine,
    plan: &Plan,
    mut manifest: Manifest,
    now: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<swap::SwapMethod>> {
    let generation = generation_id(now, plan);
    let staging = swap::fresh_staging(config, &generation)?;
    let Staged { files, keys } = engine.stage(config, plan, &staging, progress)?;
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
        };
        manifest.dates.insert(key, entry);
    }
    swap::clean_staging(config)?;
    failpoint::hit("after_swaps");
    if let Some(written) = keys.filter(|_| config.write_mode == WriteMode::Merge) {
        keys::write(
            config,
            &manifest,
            &HiveFolders(&config.publish_root),
            &written,
            now,
        )?;
    }
    state::write_manifest(config, &manifest)?;
    failpoint::hit("after_manifest");
    state::write_checkpoint(config, &checkpoint(config, plan, now))?;
    failpoint::hit("after_checkpoint");
    Ok(methods)
}

/// A landing's generation: its time and input, sortable and unique per input.
pub(crate) fn generation_id(now: &str, plan: &Plan) -> String {
    generations::generation_of(now, &plan.input_sha256)
}

fn checkpoint(config: &Config, plan: &Plan, now: &str) -> Checkpoint {
    Checkpoint {
        product: config.product.clone(),
        input_name: plan.input_name.clone(),
        input_sha256: plan.input_sha256.clone(),
        accepted_rows: plan.counts.accepted,
        rejected_rows: plan.counts.rejected,
        retries: plan.counts.retries,
        keys: plan.counts.keys,
        // The dates the input left published: a merge that emptied a date retired it.
        event_dates: plan
            .dates
            .iter()
            .filter(|d| d.rows > 0)
            .map(|d| d.event_date.to_string())
            .collect(),
        publish_root: config
            .table_url
            .clone()
            .unwrap_or_else(|| config.publish_root.display().to_string()),
        published_at: now.to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        table_version: None,
        parts: plan.parts.clone(),
    }
}

fn run_record(
    config: &Config,
    plan: &Plan,
    status: RunStatus,
    now: &str,
    duration_ms: u64,
) -> runlog::RunRecord {
    runlog::RunRecord {
        time: now.to_owned(),
        product: config.product.clone(),
        input_name: plan.input_name.clone(),
        input_sha256: plan.input_sha256.clone(),
        action: status.code().to_owned(),
        reason: plan.reason().map(str::to_owned),
        dates: plan
            .dates
            .iter()
            .map(|d| d.event_date.to_string())
            .collect(),
        counts: plan.counts.clone(),
        unranked: plan.unranked,
        duration_ms,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        swaps: Vec::new(),
        engine: String::new(),
        engine_settings: Default::default(),
        table_version: None,
        parts: plan.parts.iter().map(|p| p.name.clone()).collect(),
    }
}

/// Now, UTC, RFC 3339 with microseconds.
pub fn timestamp_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

#[cfg(test)]
mod tests;
