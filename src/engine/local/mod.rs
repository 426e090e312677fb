//! [`LocalEngine`]: the row work on this machine. Its census reads the input once on every
//! core (the driver-side scan of [`crate::pipeline`], classified into
//! [`crate::plan::Batch`]es), tallies it (§2 event log, §3 ranking), groups the winners by
//! date and, in merge mode, merges them with the touched published partitions (§10); it
//! keeps the rows for [`Engine::stage`], which writes them as Parquet.
//!
//! - [`tally::Tally`] accumulates classified batches into a [`Summary`]: every event
//!   logged for retries and conflicts ([`events`], spilling to a [`scratch`] file), the
//!   best event per key, over the flat [`tables`]; the winners leave as a [`RowSet`] of
//!   encoded records ([`rowset`]).
//! - [`parquet`] writes a date's rows as the contract's Parquet files.

pub mod by_key;
pub mod events;
mod key_index;
mod merge;
pub mod parquet;
mod rows;
pub mod rowset;
pub mod scratch;
pub mod tables;
pub mod tally;
pub mod trail;

pub use crate::plan::keyed::{Collapsed, EventsByKey};
pub use events::{EventLog, MemoryScratch, Resolved, Scratch, Verdicts};
pub use rowset::RowSet;
pub use tally::{Finish, Ranking, Summary, Tally};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::sync_channel;

use super::{Engine, Progress, Staged};
use crate::config::{Config, WriteMode};
use crate::contract::Date;
use crate::error::Result;
use crate::input::{self, Input, PartDigest};
use crate::pipeline;
use crate::plan::{Batch, Census, DateCensus, FileOut, Manifest, MergeCounts, Plan};
use crate::store::dataset::Dataset;
use crate::store::{atomic, state};
use scratch::FileScratch;

/// How the local engine reads its input. Every shipped path uses [`ReadOptions::default`];
/// tests set other values to reach paths a small input would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Records an event-log bucket holds in memory before it spills to the scratch file
    /// (1 spills from the first record, so §2 goes through the file and its buffer).
    pub log_bucket_records: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            log_bucket_records: events::BUCKET_RECORDS,
        }
    }
}

/// The row work in this process: the rows of the last census stay here until staged.
#[derive(Default)]
pub struct LocalEngine {
    read: ReadOptions,
    /// Each date's whole new rows, sorted by key (empty: a merge retires the date); in
    /// merge mode, the rows of the files it writes.
    partitions: BTreeMap<Date, RowSet>,
    /// Merge mode: each date's files after the batch, kept or written (§10.4).
    layouts: BTreeMap<Date, Vec<FileOut>>,
    /// What its censuses are for.
    purpose: Purpose,
    /// The last census's events by key, when [`LocalEngine::planning`] asked for them.
    events_by_key: Option<EventsByKey>,
}

/// What a [`LocalEngine`]'s censuses are for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Purpose {
    /// A landing: the winners' rows are kept for [`Engine::stage`].
    #[default]
    Land,
    /// A plan: nothing is staged, so a replace-mode census keeps no rows; `trail` also
    /// keeps every key's events for the console's Ranked tab.
    Plan { trail: bool },
}

impl LocalEngine {
    pub fn new() -> Self {
        LocalEngine::default()
    }

    /// A local engine reading with `read`.
    pub fn reading(read: ReadOptions) -> Self {
        LocalEngine {
            read,
            ..LocalEngine::default()
        }
    }

    /// A local engine that only plans: its census keeps no winners' rows (a fraction of
    /// the memory on an input of many keys) and cannot be staged. With `trail`, it also
    /// keeps every key's events ([`LocalEngine::take_events_by_key`]).
    pub fn planning(trail: bool) -> Self {
        LocalEngine {
            purpose: Purpose::Plan { trail },
            ..LocalEngine::default()
        }
    }
}

impl Engine for LocalEngine {
    /// Kept by [`LocalEngine::planning`]`(true)` for an input without conflicts whose
    /// lines number below 2³¹, else `None`.
    fn take_events_by_key(&mut self) -> Option<EventsByKey> {
        self.events_by_key.take()
    }

    fn describe(&self) -> String {
        "local".to_owned()
    }

    fn census(
        &mut self,
        config: &Config,
        input: &Input,
        _manifest: &Manifest,
        dataset: &dyn Dataset,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Census> {
        self.partitions.clear();
        self.layouts.clear();
        self.events_by_key = None;
        let (parts, mut summary) =
            read_and_summarise(config, input, self.read, self.purpose, progress)?;
        let sha256 = input.identity(&parts);
        self.events_by_key = summary.events_by_key.take().map(|events| *events);
        let fields = config.schema.fields.len();
        let mut counts = summary.counts.clone();
        let dates = match config.write_mode {
            WriteMode::Replace => {
                if self.purpose == Purpose::Land {
                    let winners = std::mem::replace(&mut summary.winners, RowSet::new(fields));
                    self.partitions = by_date(winners, &summary.dates, config);
                }
                if summary.dates.len() > config.max_dates {
                    // Refused whatever else it holds: no hours to show, 200 bytes a date.
                    summary.hours.clear();
                }
                summary
                    .dates
                    .iter()
                    .map(|(&d, &rows)| {
                        let by_hour = summary.hours.get(&d).copied();
                        let merge = None;
                        (
                            d,
                            DateCensus {
                                rows,
                                merge,
                                by_hour,
                            },
                        )
                    })
                    .collect()
            }
            WriteMode::Merge => {
                let merged = merge::merge_batch(config, dataset, &summary)?;
                counts.stale = merged.stale;
                counts.ties_by_arrival += merged.ties_by_arrival;
                let mut dates = BTreeMap::new();
                for (d, (m, rows)) in merged.dates {
                    let merge = MergeCounts {
                        inserted: m.inserted,
                        updated: m.updated,
                        moved_in: m.moved_in,
                        moved_out: m.moved_out,
                        files_read: m.files_read,
                        files_rewritten: m.files_rewritten,
                        rows_rewritten: rows.len() as u64,
                    };
                    let by_hour = merge::merged_hours(dataset, config, &m, &rows)?;
                    let census = DateCensus {
                        rows: m.rows_after,
                        merge: Some(merge),
                        by_hour: Some(by_hour),
                    };
                    dates.insert(d, census);
                    self.partitions.insert(d, rows);
                    self.layouts.insert(d, m.files);
                }
                dates
            }
        };
        Ok(Census {
            sha256,
            parts: if input.set { parts } else { Vec::new() },
            counts,
            findings: summary.findings,
            spilled: summary.spilled,
            dates,
            unranked: false,
        })
    }

    fn stage(
        &mut self,
        config: &Config,
        plan: &Plan,
        staging: &Path,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Staged> {
        if self.purpose != Purpose::Land {
            return Err(crate::Error::internal(
                "a planning local engine keeps no rows to stage: land with LocalEngine::new",
            ));
        }
        // Taken: the rows are freed once staged, not held until the next census.
        let partitions = std::mem::take(&mut self.partitions);
        let layouts = std::mem::take(&mut self.layouts);
        let mut staged = Staged::default();
        for date in plan.dates_with_rows().map(|d| d.event_date) {
            let Some(rows) = partitions.get(&date) else {
                return Err(crate::Error::internal(format!(
                    "the local engine holds no rows for {date}: stage follows a census of the same input"
                )));
            };
            progress(Progress::Staging { date });
            let folder = state::partition_dir(staging, date);
            atomic::create_dir_all(&folder)?;
            let files = match layouts.get(&date) {
                Some(layout) => {
                    let kept = merge::stage_layout(&folder, &config.schema, rows, layout)?;
                    staged.carried.insert(date, kept);
                    layout.len()
                }
                None => {
                    parquet::write_partition(&folder, &config.schema, rows, config.files_per_date)?
                        .len()
                }
            };
            staged.files.insert(date, files as u64);
            atomic::sync_dir(&folder)?;
        }
        Ok(staged)
    }
}

/// Reads `input` (its SHA-256, every line classified and tallied) into a summary. A file
/// with conflicts is read twice: §2 is resolved after the first pass, and the second
/// ranks without the conflicting lines (a refused file's counts stay exact).
fn read_and_summarise(
    config: &Config,
    input: &Input,
    read: ReadOptions,
    purpose: Purpose,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Vec<PartDigest>, Summary)> {
    let scratch_dir = std::env::temp_dir();
    let finish = |tally: Tally| {
        tally
            .finish()
            .map_err(|e| FileScratch::error(&scratch_dir, e))
    };
    let scratch = || FileScratch::in_dir(&scratch_dir);
    let (sha256, tally) = read_and_tally(
        config,
        input,
        (read, purpose),
        progress,
        scratch(),
        Vec::new(),
    )?;
    let conflicts = match finish(tally)? {
        Finish::Done(summary) => return Ok((sha256, *summary)),
        Finish::Rescan(conflicts) => conflicts,
    };
    let again = input::open(&input.path, &config.set_marker)?;
    let (second, tally) = read_and_tally(
        config,
        &again,
        (read, purpose),
        progress,
        scratch(),
        conflicts,
    )?;
    match finish(tally)? {
        Finish::Done(summary) if second == sha256 => Ok((sha256, *summary)),
        _ => Err(crate::Error::Input {
            path: input.path.clone(),
            message: "changed while it was read; land it once its producer has closed it"
                .to_owned(),
        }),
    }
}

/// Reads `input` once: each part's digest, and every line classified (by every core, in
/// chunks) and tallied (two stages on two threads, one batch apart). The event log spills to
/// `scratch`; `conflicts`: lines a first pass found to be conflicts ([`Tally::rescan`]).
fn read_and_tally<'c>(
    config: &'c Config,
    input: &Input,
    (read, purpose): (ReadOptions, Purpose),
    progress: &mut dyn FnMut(Progress) -> bool,
    scratch: FileScratch,
    conflicts: Vec<u64>,
) -> Result<(Vec<PartDigest>, Tally<'c>)> {
    let log = EventLog::new(Box::new(scratch), read.log_bucket_records);
    // A trail is for an input without conflicts: a rescan keeps none.
    let trail = purpose == Purpose::Plan { trail: true } && conflicts.is_empty();
    let mut tally = Tally::rescan(&config.schema, log, conflicts);
    tally.spill_findings(&std::env::temp_dir());
    // Merge mode merges the winners' rows even in a plan.
    if matches!(purpose, Purpose::Plan { .. }) && config.write_mode == WriteMode::Replace {
        tally.plan_only();
    }
    if trail {
        tally.keep_trail();
    }
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
    let (digests, ranking) = std::thread::scope(|scope| {
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
        let digests = pipeline::scan_input(
            input,
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
        (digests, ranking)
    });
    Ok((digests?, Tally::from_stages(log, ranking)))
}

/// The winners grouped by `event_date`, each group still sorted by key; `counted` is
/// their rows per date (the tally's census). A file whose winners are all counted on one
/// date (the common case) keeps its set as it is, without a pass over them.
fn by_date(
    winners: RowSet,
    counted: &BTreeMap<Date, u64>,
    config: &Config,
) -> BTreeMap<Date, RowSet> {
    if let Some((&only, &rows)) = counted.first_key_value()
        && counted.len() == 1
        && rows == winners.len() as u64
    {
        return BTreeMap::from([(only, winners)]);
    }
    let mut picked: BTreeMap<Date, Vec<usize>> = BTreeMap::new();
    for i in 0..winners.len() {
        if let Some(date) = winners
            .instant(i, config.schema.date_of)
            .map(|t| t.utc_date())
        {
            picked.entry(date).or_default().push(i);
        }
    }
    picked
        .into_iter()
        .map(|(date, rows)| (date, winners.select(&rows)))
        .collect()
}
