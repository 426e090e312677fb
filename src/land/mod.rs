//! EFFECTS. Everything that touches the disk: reading and hashing the input, the lock,
//! staging, Parquet, the swap, quarantine, manifest, checkpoint, run log.
//!
//! [`plan_input`] is the read-only half (what `wharf plan` and the console show);
//! [`run`] is the whole landing, top to bottom in the contract's order.

pub mod atomic;
pub mod failpoint;
mod folder;
pub mod keys;
pub mod lock;
pub mod parquet_files;
pub mod quarantine;
pub mod restore;
pub mod runlog;
pub mod scratch;
pub mod state;
pub mod swap;
pub mod trash;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use crate::config::{Config, WriteMode};
use crate::contract::Date;
use crate::error::Result;
use crate::plan::{
    self, Action, Batch, Checkpoint, DecideOptions, Event, EventLog, Finish, Manifest, Merged,
    Owner, PartitionEntry, Plan, PublishedRows, RowSet, Summary, Tally,
};
use crate::{input, pipeline};
use scratch::FileScratch;

/// How a landing reads its input. Every shipped path ([`run`], [`plan_input`]) uses
/// [`ReadOptions::default`]; tests set other values to reach paths a small input would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Records an event-log bucket holds in memory before it spills to the scratch file
    /// (1 spills from the first record, so §2 goes through the file and its buffer).
    pub log_bucket_records: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            log_bucket_records: plan::events::BUCKET_RECORDS,
        }
    }
}

/// What a run reports while it works; returning `false` from the callback cancels
/// (honoured while reading, before anything is written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Bytes of the input read so far, of `total`.
    Reading { bytes: u64, total: u64 },
    /// Writing the new partition of a date.
    Staging { date: Date },
    /// Swapping a date in.
    Swapping { date: Date },
}

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

/// Plans `path` without writing anything: read once (hash + classify + rank), then
/// decide against the published state (§5 steps 3–10).
pub fn plan_input(
    config: &Config,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Plan> {
    let read = ReadOptions::default();
    plan_with_manifest(config, path, options, read, progress).map(|(plan, _)| plan)
}

/// [`plan_input`], also returning the manifest the plan was decided against (a run holds
/// the lock, so it is still the manifest when the run publishes).
fn plan_with_manifest(
    config: &Config,
    path: &Path,
    options: DecideOptions,
    read: ReadOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Plan, Manifest)> {
    let input = input::open(path)?;
    let checkpoint = state::read_checkpoint(config, &input.name)?;
    let manifest = state::read_manifest(config)?;
    let (sha256, summary) = read_and_summarise(config, &input, path, read, progress)?;
    let published = state::published(config, checkpoint, &manifest)?;
    let owner = Owner {
        input_name: input.name,
        input_sha256: sha256,
    };
    let merged = match config.write_mode {
        WriteMode::Replace => None,
        WriteMode::Merge => Some(merge_batch(config, &manifest, &summary)?),
    };
    let plan = plan::decide(summary, owner, config, &published, merged, options);
    Ok((plan, manifest))
}

/// Reads `input` (its SHA-256, every line classified and tallied) into a summary. A file
/// with conflicts is read twice: §2 is resolved after the first pass, and the second
/// ranks without the conflicting lines (a refused file's counts stay exact).
fn read_and_summarise(
    config: &Config,
    input: &input::Input,
    path: &Path,
    read: ReadOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(String, Summary)> {
    let scratch_dir = std::env::temp_dir();
    let finish = |tally: Tally| {
        tally
            .finish()
            .map_err(|e| FileScratch::error(&scratch_dir, e))
    };
    let scratch = || FileScratch::in_dir(&scratch_dir);
    let (sha256, tally) =
        read_and_tally(config, input, path, read, progress, scratch(), Vec::new())?;
    let conflicts = match finish(tally)? {
        Finish::Done(summary) => return Ok((sha256, summary)),
        Finish::Rescan(conflicts) => conflicts,
    };
    let again = input::open(path)?;
    let (second, tally) =
        read_and_tally(config, &again, path, read, progress, scratch(), conflicts)?;
    match finish(tally)? {
        Finish::Done(summary) if second == sha256 => Ok((sha256, summary)),
        _ => Err(crate::Error::Input {
            path: path.to_owned(),
            message: "changed while it was read; land it once its producer has closed it"
                .to_owned(),
        }),
    }
}

/// Reads `input` once: its SHA-256, and every line classified (by every core, in chunks)
/// and tallied (two stages on two threads, one batch apart). The event log spills to
/// `scratch`; `conflicts`: lines a first pass found to be conflicts ([`Tally::rescan`]).
fn read_and_tally<'c>(
    config: &'c Config,
    input: &input::Input,
    path: &Path,
    read: ReadOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
    scratch: FileScratch,
    conflicts: Vec<u64>,
) -> Result<(String, Tally<'c>)> {
    let log = EventLog::new(Box::new(scratch), read.log_bucket_records);
    let mut tally = Tally::rescan(&config.schema, log, conflicts);
    // Order events run ~130 bytes a line: a key table sized for 140-byte lines rarely
    // grows (growing one doubles it, and its new pages fault in slowly).
    tally.reserve((input.size / 140) as usize);
    let schema = &config.schema;
    // Batches go back to the workers once merged: their buffers are reused, not faulted
    // in afresh for every chunk.
    let spare: Mutex<Vec<Batch>> = Mutex::new(Vec::new());
    let classify = |lines: pipeline::Lines<'_>| {
        let mut batch = spare
            .lock()
            .ok()
            .and_then(|mut s| s.pop())
            .unwrap_or_default();
        for (line, bytes) in lines.iter() {
            batch.classify(line, bytes, schema);
        }
        batch
    };
    let total = input.size;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The tally's two stages on two threads, one batch apart: this thread logs each
    // batch's events for §2 as batches arrive in order, the ranking thread keeps each
    // key's best.
    let (mut log, mut ranking) = tally.into_stages();
    let (sha256, ranking) = std::thread::scope(|scope| {
        let (to_rank, batches) = sync_channel::<Batch>(2);
        let spare = &spare;
        let ranker = scope.spawn(move || {
            for mut batch in batches {
                ranking.push(&batch);
                batch.clear();
                if let Ok(mut spare) = spare.lock() {
                    spare.push(batch);
                }
            }
            ranking
        });
        let sha256 = pipeline::scan_chunks(
            &input.file,
            path,
            config.max_line_bytes,
            threads,
            &classify,
            &mut |bytes| progress(Progress::Reading { bytes, total }),
            |batch| {
                log.push_batch(&batch);
                // Fails only if the ranking thread panicked; its join says so below.
                let _ = to_rank.send(batch);
            },
        );
        drop(to_rank);
        let ranking = ranker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (sha256, ranking)
    });
    Ok((sha256?, Tally::from_stages(log, ranking)))
}

/// §10: reads the published rows the batch's winners meet and merges them.
fn merge_batch(config: &Config, manifest: &Manifest, summary: &Summary) -> Result<Merged> {
    let schema = &config.schema;
    let live = keys::load(config, manifest)?;
    let winners: Vec<Event> = summary.winners.events().collect();
    let mut dates: BTreeSet<Date> = BTreeSet::new();
    for winner in &winners {
        dates.extend(
            winner.record[schema.date_of]
                .instant()
                .map(|i| i.utc_date()),
        );
        dates.extend(
            live.get(&winner.record[schema.key])
                .into_iter()
                .flatten()
                .copied(),
        );
    }
    let mut published = PublishedRows::default();
    for date in dates {
        let folder = state::partition_dir(&config.publish_root, date);
        if folder.is_dir() {
            published
                .by_date
                .insert(date, parquet_files::read_partition(&folder, schema)?);
        }
    }
    Ok(plan::merge::merge(&winners, &published, schema))
}

/// Lands `path`: CONTRACT.md §5 then §6, in order.
pub fn run(
    config: &Config,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutcome> {
    run_reading(config, path, options, ReadOptions::default(), progress)
}

/// [`run`], reading the input with `read`.
fn run_reading(
    config: &Config,
    path: &Path,
    options: DecideOptions,
    read: ReadOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutcome> {
    let started = Instant::now();
    refuse_unclosed(path)?;
    let _lock = lock::acquire(config)?; // §5.2: busy touches nothing
    failpoint::hit("after_lock");
    let (plan, manifest) = plan_with_manifest(config, path, options, read, progress)?; // §5.3–5.10
    let now = timestamp_now();
    let (status, swaps) = match plan.action {
        Action::Skip => (RunStatus::Skipped, Vec::new()),
        Action::Refuse => {
            quarantine::write(config, &plan, RunStatus::Refused.code(), &now)?; // §6.1
            (RunStatus::Refused, Vec::new())
        }
        Action::Publish => {
            quarantine::write(config, &plan, RunStatus::Published.code(), &now)?; // §6.1
            failpoint::hit("after_quarantine");
            let published = publish(config, &plan, manifest, &now, progress); // §6.2–6.4
            if published.is_err() {
                let _ = swap::clean_staging(config); // the error is the one to report
            }
            (RunStatus::Published, published?)
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let mut record = run_record(config, &plan, status, &now, duration_ms);
    record.swaps = swaps.iter().map(|m| m.code().to_owned()).collect();
    runlog::append(config, &record)?; // §6.5
    Ok(RunOutcome {
        status,
        plan,
        duration_ms,
    })
}

/// Only closed inputs land: a temporary name means the producer may still be writing, and
/// a symbolic link is never followed (CONTRACT.md "input"). Planning one is allowed.
fn refuse_unclosed(path: &Path) -> Result<()> {
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

/// Stages every date, swaps each in, then writes the manifest and last the checkpoint.
fn publish(
    config: &Config,
    plan: &Plan,
    mut manifest: Manifest,
    now: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<swap::SwapMethod>> {
    let generation = format!(
        "{}-{}",
        now.replace([':', '-'], ""),
        &plan.input_sha256[..12]
    );
    let staging = swap::fresh_staging(config, &generation)?;
    let by_date = &plan.partitions;
    let mut files = BTreeMap::new();
    for (date, rows) in by_date {
        if rows.is_empty() && config.write_mode == WriteMode::Merge {
            continue; // retired, not rewritten
        }
        progress(Progress::Staging { date: *date });
        let folder = state::partition_dir(&staging, *date);
        atomic::create_dir_all(&folder)?;
        let written =
            parquet_files::write_partition(&folder, &config.schema, rows, config.files_per_date)?;
        files.insert(*date, written.len() as u64);
        atomic::sync_dir(&folder)?;
    }
    atomic::sync_dir(&staging)?;
    failpoint::hit("after_stage");

    let mut methods = Vec::with_capacity(by_date.len());
    // Merge moves keys only to later dates: newest first puts a moved key on its new date
    // before it leaves the old one (§10.4), so a crash between swaps never loses it.
    let order: Vec<(&Date, &RowSet)> = match config.write_mode {
        WriteMode::Replace => by_date.iter().collect(),
        WriteMode::Merge => by_date.iter().rev().collect(),
    };
    for (index, (date, rows)) in order.into_iter().enumerate() {
        progress(Progress::Swapping { date: *date });
        let key = date.to_string();
        let before = plan
            .dates
            .iter()
            .find(|d| d.event_date == *date)
            .and_then(|d| {
                let owner = manifest.dates.get(&key).map(|e| e.owner.clone());
                d.rows_before.map(|rows| (owner, rows))
            });
        if rows.is_empty() && config.write_mode == WriteMode::Merge {
            // §10.3: every key of this date moved away; the date leaves the dataset.
            let (owner, rows_before) = before.unwrap_or((None, 0));
            swap::retire(config, *date, &generation, owner, rows_before)?;
            manifest.dates.remove(&key);
            failpoint::hit(&format!("after_swap_{}", index + 1));
            continue;
        }
        let staged = state::partition_dir(&staging, *date);
        methods.push(swap::swap_in(config, &staged, *date, &generation, before)?);
        failpoint::hit(&format!("after_swap_{}", index + 1));
        let entry = PartitionEntry {
            owner: Owner {
                input_name: plan.input_name.clone(),
                input_sha256: plan.input_sha256.clone(),
            },
            rows: rows.len() as u64,
            files: files.get(date).copied().unwrap_or(0),
            published_at: now.to_owned(),
        };
        manifest.dates.insert(key, entry);
    }
    swap::clean_staging(config)?;
    failpoint::hit("after_swaps");
    if config.write_mode == WriteMode::Merge {
        let written = by_date
            .iter()
            .map(|(date, rows)| {
                (
                    *date,
                    (0..rows.len())
                        .map(|i| rows.value(i, config.schema.key))
                        .collect(),
                )
            })
            .collect();
        keys::write(config, &manifest, &written, now)?;
    }
    state::write_manifest(config, &manifest)?;
    failpoint::hit("after_manifest");
    state::write_checkpoint(config, &checkpoint(config, plan, now))?;
    failpoint::hit("after_checkpoint");
    Ok(methods)
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
        publish_root: config.publish_root.display().to_string(),
        published_at: now.to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
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
        duration_ms,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        swaps: Vec::new(),
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
