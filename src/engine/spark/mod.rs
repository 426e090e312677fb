//! [`SparkEngine`]: a landing's row work done by a Spark 4 cluster through Spark Connect,
//! with built-in functions only (nothing to install on the executors).
//!
//! - [`session`]: the connection, its settings, Spark errors as [`Error::Engine`](crate::Error::Engine).
//! - [`driver`]: the driver's one read of the bytes: SHA-256 and Wharf's own §1, every
//!   accepted record typed into the [`handoff`] Spark reads (never the text).
//! - [`ledger`]: §2's counts on the driver, in bounded memory; [`events`]: §2 over the
//!   handed-over rows, for a file with conflicts; [`winners`]: §3 and §4.
//! - [`census`]: the queries run, aggregates back; [`merge`]: §10 over the published
//!   files the batch touches, which [`published`] names; [`layout`]: which of them it
//!   rewrites, into which files; [`write`]: the stage; [`uri`]: the explicit,
//!   glob-escaped URIs Spark is given; [`union`]: many reads as one frame.
//!
//! Only the driver reads the input. A hive publish root and its staging folder must be on
//! a file system the driver and the executors both see (the same paths), and so must the
//! handoff beside a local root. A Delta table is written by the executors where it is
//! (`s3a://…` on a cluster set up for S3) and only committed by the driver; the handoff
//! of a table on S3 is uploaded into the table's staging folder.

pub mod census;
pub mod driver;
pub mod events;
pub mod handoff;
pub mod key_sketch;
pub mod layout;
pub mod ledger;
pub mod merge;
pub mod published;
pub mod recent;
pub mod session;
pub mod union;
pub mod uri;
pub mod winners;
pub mod write;

use std::collections::BTreeMap;
use std::path::Path;

use spark_connect::DataFrame;

use crate::config::{Config, EngineConfig, WriteMode};
use crate::engine::{Carried, Engine, Progress, Staged, TableFolder, WrittenFile};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::plan::{Census, Manifest, Plan};
use session::Session;

/// The Spark engine: one session, and the ranked keys of the last census, cached in Spark
/// (the view [`winners::KEYS`], and over it [`winners::WINNERS`], columns documented
/// there) until the stage.
pub struct SparkEngine {
    session: Session,
    winners: Option<census::Ranked>,
    /// Merge mode: the new rows of the files the batch reads (view [`write::MERGED`]),
    /// cached from the census to the stage, and each date's layout.
    merged: Option<DataFrame>,
    layouts: BTreeMap<crate::contract::Date, layout::Layout>,
    /// How every census ranks ([`SparkEngine::rank`], [`SparkEngine::remember_events`]).
    tuning: census::Tuning,
}

impl SparkEngine {
    /// Connects to the Spark Connect server `[engine] remote` names (the config check
    /// makes a Spark engine name one).
    pub fn connect(engine: &EngineConfig) -> Result<SparkEngine> {
        let remote = engine.remote.as_deref().ok_or_else(|| {
            Error::Usage(
                "engine kind = \"spark\" needs the Spark Connect server: set [engine] \
                 remote = \"sc://host:15002\" or pass --remote"
                    .to_owned(),
            )
        })?;
        Self::connect_to(remote)
    }

    /// Connects to the Spark Connect server at `remote` (`sc://host:port`, with the
    /// crate's `;token=…` parameters where the server needs them).
    pub fn connect_to(remote: &str) -> Result<SparkEngine> {
        Ok(SparkEngine {
            session: Session::connect(remote)?,
            winners: None,
            merged: None,
            layouts: BTreeMap::new(),
            tuning: census::Tuning::default(),
        })
    }

    /// Ranks every census the one way `how` where the file allows it (the exact way
    /// wherever the first occurrences are not known), not the way its events a key
    /// choose: the parity tests prove every way on every fixture.
    pub fn rank(&mut self, how: winners::Ranking) {
        self.tuning.ranking = Some(how);
    }

    /// Has the driver remember at least the last `events` events, not
    /// [`recent::GENERATION`]: tests make retries come later than that.
    pub fn remember_events(&mut self, events: usize) {
        self.tuning.remembered = events;
    }

    /// Sets a session setting (tests make splits small with it).
    pub fn set(&self, key: &str, value: &str) -> Result<()> {
        self.session.set(key, value)
    }

    /// The session: merge mode's queries over the published files, and tests.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Releases the cached rows, under the guard: a dead server must not hold the engine's
    /// drop (and so the process's exit) for the client's retries.
    fn forget_winners(&mut self) {
        let (keys, handoff) = match self.winners.take() {
            Some(ranked) => (Some(ranked.keys), Some(ranked.handoff)),
            None => (None, None),
        };
        let cached: Vec<DataFrame> = [keys, self.merged.take()]
            .into_iter()
            .flatten()
            .collect();
        if !cached.is_empty() {
            let _ = self.session.guarded("releasing the cached rows", move |_| {
                for rows in cached {
                    let _ = rows.unpersist(false);
                }
                Ok(())
            });
        }
        // Only once nothing cached can be read again from it.
        drop(handoff);
    }

    /// §10 on Spark: what the batch's `winners` do to the published files of `dataset`
    /// they touch. The census's dates become the dates the merge touches, its new rows
    /// are cached for the stage, and each date's layout is kept.
    fn merge(
        &mut self,
        config: &Config,
        dataset: &dyn crate::store::dataset::Dataset,
        winners: &DataFrame,
        census: &mut Census,
    ) -> Result<()> {
        let (schema, frame) = (config.schema.clone(), winners.clone());
        let batch = self.session.guarded("collecting the batch's keys", move |session| {
            published::BatchKeys::collect(session, &schema, &frame)
        })?;
        let source = published::Published::of(config, dataset, batch)?;
        let (job_config, job_source, winners) = (config.clone(), source.clone(), winners.clone());
        let (merged, rows) = self.session.guarded("merging", move |session| {
            let (spark, remote) = (session.spark(), session.describe());
            let merged = merge::merge_census(spark, remote, &job_config, &job_source, &winners)?;
            let rows = merged
                .rows
                .cache()
                .map_err(|e| session.error("cannot cache the merged rows", &e))?;
            rows.create_or_replace_temp_view(write::MERGED)
                .map_err(|e| session.error("cannot register the merged rows", &e))?;
            Ok((merged, rows))
        })?;
        self.merged = Some(rows);
        let schema = &config.schema;
        let (dates, layouts) = layout::lay_out(
            config.target_file_rows,
            &source,
            &merged,
            &mut |path| dataset.file_hours(path, schema),
        )?;
        census.counts.stale += merged.stale;
        census.counts.ties_by_arrival += merged.ties_by_arrival;
        census.dates = dates;
        self.layouts = layouts;
        Ok(())
    }
}

impl Engine for SparkEngine {
    fn describe(&self) -> String {
        self.session.describe().to_owned()
    }

    /// The resolved values of the session settings a landing relies on
    /// ([`session::SETTINGS`]), read on connect.
    fn settings(&self) -> BTreeMap<String, String> {
        self.session.settings().clone()
    }

    fn census(
        &mut self,
        config: &Config,
        input: &Input,
        _manifest: &Manifest,
        dataset: &dyn crate::store::dataset::Dataset,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Census> {
        self.forget_winners();
        self.layouts.clear();
        let (mut census, winners) = census::read(&self.session, config, input, self.tuning, progress)?;
        if let (WriteMode::Merge, Some(ranked)) = (config.write_mode, &winners) {
            self.merge(config, dataset, &ranked.winners, &mut census)?;
        }
        self.winners = winners;
        Ok(census)
    }

    fn stage(
        &mut self,
        config: &Config,
        plan: &Plan,
        staging: &Path,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Staged> {
        let job = self.to_stage(config, plan, progress)?;
        let (job_config, staging) = (config.clone(), staging.to_owned());
        let mut staged = self.session.guarded("staging", move |session| {
            write::stage(session, &job_config, &job, &staging)
        })?;
        for (date, files) in staged.files.iter_mut() {
            if let Some(layout) = self.layouts.get(date) {
                *files = layout.files;
                staged.carried.insert(*date, layout.carried.clone());
            }
        }
        Ok(staged)
    }

    /// The executors write into the table's storage, where they reach it (`s3a://` on a
    /// cluster set up for S3, `file://` here); Wharf's disk never holds the rows.
    fn stage_in_table(
        &mut self,
        config: &Config,
        plan: &Plan,
        folder: &dyn TableFolder,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Option<Result<(Vec<WrittenFile>, Carried)>> {
        Some(self.write_into(config, plan, folder, progress))
    }
}

impl SparkEngine {
    /// What the stage writes: in replace mode each date of the plan with rows whole; in
    /// merge mode only the runs each date's layout rewrites.
    fn to_stage(
        &self,
        config: &Config,
        plan: &Plan,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<write::Job> {
        if self.winners.is_none() {
            return Err(Error::internal(
                "the Spark engine was asked to stage before a census that reached Spark",
            ));
        }
        let dates: BTreeMap<_, _> = plan
            .dates_with_rows()
            .map(|d| (d.event_date, d.rows))
            .collect();
        let job = match self.merged {
            Some(_) => write::Job {
                source: write::MERGED,
                bucket: "_bucket",
                runs: dates
                    .keys()
                    .map(|date| {
                        let runs = self.layouts.get(date).map(|l| l.written.clone());
                        (*date, runs.unwrap_or_default())
                    })
                    .collect(),
            },
            None => write::Job::whole(winners::WINNERS, &dates, config.files_per_date),
        };
        for date in dates.keys() {
            if !progress(Progress::Staging { date: *date }) {
                return Err(Error::Cancelled);
            }
        }
        Ok(job)
    }

    fn write_into(
        &self,
        config: &Config,
        plan: &Plan,
        folder: &dyn TableFolder,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<(Vec<WrittenFile>, Carried)> {
        let job = self.to_stage(config, plan, progress)?;
        let location = uri::table_uri(config, folder.relative())?;
        let (job_config, spark_job) = (config.clone(), job.clone());
        self.session.guarded("staging", move |session| {
            write::stage_in_table(session, &job_config, &spark_job, &location)
        })?;
        let written = write::written_files(&folder.list()?, &job)?;
        let carried = job
            .runs
            .keys()
            .filter_map(|date| Some((*date, self.layouts.get(date)?.carried.clone())))
            .collect();
        Ok((written, carried))
    }
}

impl Drop for SparkEngine {
    fn drop(&mut self) {
        self.forget_winners();
        self.session.end();
    }
}
