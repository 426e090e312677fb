//! EFFECTS. The landing's steps that are the same for every engine: the lock, quarantine,
//! the staging folder, the swap, the trash, the manifest, the checkpoint and
//! the run log. An [`crate::engine::Engine`] does the row work in between: its census
//! feeds [`plan::decide()`], and it stages the dates the plan publishes.
//!
//! [`plan_input`] is the read-only half (what `wharf plan` and the console show);
//! [`run`] is the whole landing, top to bottom in the contract's order, publishing
//! through [`root::PublishRoot`] (hive folders or a Delta table, one interface).

pub mod columns;
pub mod delta;
pub mod hive;
pub mod hours;
pub mod lake;
pub mod lock;
pub mod owner;
pub mod preview;
pub mod quarantine;
pub mod restore;
pub mod root;
pub mod runlog;
#[cfg(test)]
mod seam;
mod started;

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::config::Config;
use crate::engine::Engine;
use crate::error::Result;
use crate::input;
use crate::plan::{self, Action, Checkpoint, DecideOptions, Manifest, Owner, Plan};
use crate::store::failpoint;
use root::PublishRoot;

pub use crate::engine::Progress;
pub use started::Started;

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
    /// When the landing began, and how long it took on the monotonic clock: the times
    /// of its lineage events.
    pub started: Started,
    pub took: Duration,
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
    let config = &config.at_start(std::time::SystemTime::now()); // §1.2's `now`
    let (config, added) = &columns::evolve(config, columns::history(config)?, path)?; // §1.1
    let (mut plan, _, _, _) = plan_with_manifest(config, engine, path, options, false, progress)?;
    plan.added_columns = announced(&plan, added);
    Ok(plan)
}

/// [`plan_input`], also returning the manifest the plan was decided against (a run holds
/// the lock, so it is still the manifest when the run publishes).
///
/// §5.4 comes first: when the input's checkpoint exists, one hashing pass over its bytes
/// tells whether it holds this identity, and a skip is decided from the checkpoint and
/// the manifest without the engine's census, so without reading a row of the lake.
///
/// On a Delta lake the state root first takes in what the table's log says landed since
/// it last looked (§12.5, [`PublishRoot::recall`]; written only when `persist`, under a run's
/// lock); what it took is returned for the run log.
fn plan_with_manifest(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    persist: bool,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Plan, Manifest, PublishRoot, Option<String>)> {
    owner::check(config)?;
    let input = input::open(path, &config.set_marker)?;
    let policy = plan::Policy::of(config);
    let root = match PublishRoot::open(config) {
        // §12.8: a table Wharf cannot write is this input's refusal, before any row work.
        Err(crate::error::Error::TableFeature { refusal, .. }) => {
            let plan = refused_for_table(&policy, &input, refusal, progress)?;
            // A refused plan publishes nothing: no caller reads this root.
            let manifest = crate::store::state::read_manifest(config)?;
            return Ok((plan, manifest, PublishRoot::Hive, None));
        }
        root => root?,
    };
    let recalled = root.recall(config, persist)?;
    let checkpoint = recalled.checkpoint(config, &input.name, options.reland)?; // §5.3
    let manifest = recalled.manifest;
    let note = recalled.note;
    if let Some(landed) = checkpoint.as_ref().filter(|_| !options.reland) {
        let sha256 = identity(&input, progress)?;
        if plan::decide::is_skip(Some(landed), &sha256, options) {
            if persist {
                restamp(config, landed, &input)?;
            }
            let published = root.published(config, checkpoint.clone(), &manifest)?;
            return Ok((
                plan::skip(&policy, landed, &published),
                manifest,
                root,
                note,
            ));
        }
    }
    if let Some(refusal) = root.feature_refusal() {
        let plan = refused_for_table(&policy, &input, refusal, progress)?;
        return Ok((plan, manifest, root, note));
    }
    let census = root.with_dataset(config, |dataset| {
        engine.census(config, &input, &manifest, dataset, progress)
    })?;
    let published = root.published(config, checkpoint, &manifest)?;
    let owner = Owner {
        input_name: input.name.clone(),
        input_sha256: census.sha256.clone(),
    };
    let mut plan = plan::decide(census, owner, &policy, &published, options);
    plan.object = input.object_stamp(); // §13.3
    if let Some(refusal) = root
        .plan_refusal(&plan)
        .filter(|_| plan.action == Action::Publish)
    {
        plan::feature::refuse_decided(&mut plan, refusal);
    }
    Ok((plan, manifest, root, note))
}

/// A skipped object's checkpoint takes the object's stamp (§13.3) when it has none (it
/// was rebuilt from a table's log) or another (the same bytes put again), so `watch`
/// tells it landed from the next listing instead of reading it at every reconcile.
fn restamp(config: &Config, landed: &Checkpoint, input: &input::Input) -> Result<()> {
    let stamp = input.object_stamp();
    if stamp.is_none() || landed.object == stamp {
        return Ok(());
    }
    let checkpoint = Checkpoint {
        object: stamp,
        ..landed.clone()
    };
    crate::store::state::write_checkpoint(config, &checkpoint)
}

/// The plan of `input` refused for its table's features (§12.8): its identity, read
/// once, and the refusal.
fn refused_for_table(
    policy: &plan::Policy,
    input: &input::Input,
    refusal: plan::TableFeatureRefusal,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Plan> {
    let owner = Owner {
        input_name: input.name.clone(),
        input_sha256: identity(input, progress)?,
    };
    Ok(plan::feature::refuse_for_table(
        &policy.product,
        owner,
        refusal,
    ))
}

/// The input's identity (§11.3 for a set) from its stored bytes, reporting progress.
fn identity(input: &input::Input, progress: &mut dyn FnMut(Progress) -> bool) -> Result<String> {
    let total = input.size;
    input::identity_of(input, &mut |bytes| {
        progress(Progress::Reading { bytes, total })
    })
}

/// Lands `path`: CONTRACT.md §5 then §6, in order, with `engine` doing the row work.
pub fn run(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutcome> {
    let started = Started::now();
    let config = &config.at_start(SystemTime::now()); // §1.2's `now`
    refuse_unclosed(path, &config.set_marker)?;
    let _lock = lock::acquire(config)?; // §5.2: busy touches nothing
    failpoint::hit("after_lock");
    owner::check(config)?; // before a rebuilt history is written from another's lake
    let history = columns::restore(config)?; // §1.1: a lost history, rebuilt from the lake
    let (config, added) = &columns::evolve(config, history, path)?; // §1.1: under the lock
    let (mut plan, manifest, root, recalled) =
        plan_with_manifest(config, engine, path, options, true, progress)?; // §5.3–5.10
    plan.added_columns = announced(&plan, added);
    plan.run_id = new_run_id();
    let now = timestamp_now();
    let (status, publication) = match plan.action {
        Action::Skip => (RunStatus::Skipped, None),
        Action::Refuse => {
            quarantine::write(config, &plan, RunStatus::Refused.code(), &now)?; // §6.1
            (RunStatus::Refused, None)
        }
        Action::Publish => {
            // With no run lock (state on S3, §13.4) the commit may be lost to another
            // machine: the quarantine then follows it, never naming a landing that failed.
            let unlocked = crate::store::state_store::is_s3(&config.state_root);
            if !unlocked {
                quarantine::write(config, &plan, RunStatus::Published.code(), &now)?; // §6.1
            }
            failpoint::hit("after_quarantine");
            owner::claim(config)?;
            columns::record(config, &plan, &now)?; // §1.1, before the lake carries them
            let published = root.publish(config, engine, &plan, manifest, &now, progress)?; // §6.2–6.4
            if unlocked {
                quarantine::write(config, &plan, RunStatus::Published.code(), &now)?;
            }
            (RunStatus::Published, Some(published))
        }
    };
    let took = started.elapsed();
    let duration_ms = took.as_millis() as u64;
    let mut record = run_record(config, &plan, status, &now, duration_ms);
    let (swaps, table_version) =
        publication.map_or((Vec::new(), None), |p| (p.swaps, p.table_version));
    record.swaps = swaps.iter().map(|m| m.code().to_owned()).collect();
    record.engine = engine.describe();
    record.engine_settings = engine.settings();
    record.table_version = table_version;
    record.memory = recalled;
    root.remember(config, table_version)?;
    runlog::append(config, &record)?; // §6.5
    Ok(RunOutcome {
        status,
        plan,
        duration_ms,
        started,
        took,
    })
}

/// The columns a plan announces it adds: none when it skips (nothing lands).
fn announced(
    plan: &Plan,
    added: &[(String, crate::contract::FieldType)],
) -> Vec<(String, crate::contract::FieldType)> {
    match plan.action {
        Action::Skip => Vec::new(),
        _ => added.to_vec(),
    }
}

/// Only closed inputs land: a temporary name means the producer may still be writing, and
/// a symbolic link is never followed (CONTRACT.md "input"). Planning one is allowed. A set
/// is looked at before the lock, so an open or badly laid out one writes nothing (§11.2).
fn refuse_unclosed(path: &Path, marker: &str) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        input::check_set(path, marker)?;
    }
    let name = path.file_name().map(input::name_of).unwrap_or_default();
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

/// A landing's generation: its time and input, sortable and unique per input.
pub(crate) fn generation_id(now: &str, plan: &Plan) -> String {
    hive::generations::generation_of(now, &plan.input_sha256)
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
            .dates_with_rows()
            .map(|d| d.event_date.to_string())
            .collect(),
        publish_root: config.lake.location(),
        published_at: now.to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        table_version: None,
        parts: plan.parts.clone(),
        object: plan.object.clone(),
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
        run_id: plan.run_id.clone(),
        memory: None,
    }
}

/// A fresh run id: a random UUID v4, one per landing.
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Now, UTC, RFC 3339 with microseconds.
pub fn timestamp_now() -> String {
    timestamp_of(SystemTime::now())
}

/// `time`, UTC, RFC 3339 with microseconds (truncated, so text order is time order).
pub fn timestamp_of(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time)
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

#[cfg(test)]
mod tests;
