//! [`SparkEngine`]: a landing's row work done by a Spark 4 cluster through Spark Connect,
//! with built-in functions only (nothing to install on the executors).
//!
//! - [`session`]: the connection, its settings, Spark errors as [`Error::Engine`](crate::Error::Engine).
//! - [`driver`]: the driver's one read of the bytes: SHA-256 and Wharf's own §1, every
//!   accepted record typed into the [`handoff`] Spark reads (never the text).
//! - [`ledger`]: §2's counts on the driver, in bounded memory; [`events`]: §2 over the
//!   handed-over rows, for a file with conflicts; [`winners`]: §3 and §4.
//! - [`census`]: the queries run, aggregates back; [`merge`]: §10 over the published
//!   files, which [`published`] names; [`write`]: the stage; [`uri`]: the explicit,
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
use crate::engine::{Engine, Progress, Staged, TableFolder, WrittenFile};
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
    /// Merge mode: the whole new rows of the dates the batch touches (view
    /// [`write::MERGED`]), cached from the census to the stage.
    merged: Option<DataFrame>,
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

    /// §10 on Spark: what the batch's `winners` do to the published dates. The census's
    /// dates become the dates the merge touches, and its new rows are cached for the stage.
    fn merge(
        &mut self,
        config: &Config,
        source: published::Published,
        winners: &DataFrame,
        census: &mut Census,
    ) -> Result<()> {
        let (config, winners) = (config.clone(), winners.clone());
        let (merged, rows) = self.session.guarded("merging", move |session| {
            let (spark, remote) = (session.spark(), session.describe());
            let merged = merge::merge_census(spark, remote, &config, &source, &winners)?;
            let rows = merged
                .rows
                .cache()
                .map_err(|e| session.error("cannot cache the merged rows", &e))?;
            rows.create_or_replace_temp_view(write::MERGED)
                .map_err(|e| session.error("cannot register the merged rows", &e))?;
            Ok((merged, rows))
        })?;
        census.counts.stale += merged.stale;
        census.counts.ties_by_arrival += merged.ties_by_arrival;
        census.dates = merged.dates;
        self.merged = Some(rows);
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
        let (mut census, winners) = census::read(&self.session, config, input, self.tuning, progress)?;
        if let (WriteMode::Merge, Some(ranked)) = (config.write_mode, &winners) {
            let source = published::Published::of(config, dataset)?;
            self.merge(config, source, &ranked.winners, &mut census)?;
            whole_dates(config, dataset, &mut census)?;
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
        let (source, dates) = self.to_stage(plan, progress)?;
        let (config, staging) = (config.clone(), staging.to_owned());
        self.session.guarded("staging", move |session| {
            write::stage(session, &config, source, &dates, &staging)
        })
    }

    /// The executors write into the table's storage, where they reach it (`s3a://` on a
    /// cluster set up for S3, `file://` here); Wharf's disk never holds the rows.
    fn stage_in_table(
        &mut self,
        config: &Config,
        plan: &Plan,
        folder: &dyn TableFolder,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Option<Result<Vec<WrittenFile>>> {
        Some(self.write_into(config, plan, folder, progress))
    }
}

impl SparkEngine {
    /// The view the stage writes from, and the dates with rows (each with its count).
    fn to_stage(
        &self,
        plan: &Plan,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<(&'static str, BTreeMap<crate::contract::Date, u64>)> {
        if self.winners.is_none() {
            return Err(Error::internal(
                "the Spark engine was asked to stage before a census that reached Spark",
            ));
        }
        let dates: BTreeMap<_, _> = plan
            .dates_with_rows()
            .map(|d| (d.event_date, d.rows))
            .collect();
        let source = match self.merged {
            Some(_) => write::MERGED,
            None => winners::WINNERS,
        };
        for date in dates.keys() {
            if !progress(Progress::Staging { date: *date }) {
                return Err(Error::Cancelled);
            }
        }
        Ok((source, dates))
    }

    fn write_into(
        &self,
        config: &Config,
        plan: &Plan,
        folder: &dyn TableFolder,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Vec<WrittenFile>> {
        let (source, dates) = self.to_stage(plan, progress)?;
        let location = uri::table_uri(config, folder.relative())?;
        let (job_config, job_dates) = (config.clone(), dates.clone());
        self.session.guarded("staging", move |session| {
            write::stage_in_table(session, &job_config, source, &job_dates, &location)
        })?;
        write::written_files(&folder.list()?, config.files_per_date, &dates)
    }
}

impl Drop for SparkEngine {
    fn drop(&mut self) {
        self.forget_winners();
        self.session.end();
    }
}

/// What a Spark merge reads and writes: each date it touches, whole (every file of it
/// read and rewritten); the local engine rewrites only the files that change (§10.4).
fn whole_dates(
    config: &Config,
    dataset: &dyn crate::store::dataset::Dataset,
    census: &mut Census,
) -> Result<()> {
    let present: std::collections::BTreeSet<crate::contract::Date> =
        dataset.dates()?.into_iter().collect();
    for (date, day) in census.dates.iter_mut() {
        let files = if present.contains(date) {
            dataset.footers(*date, &config.schema)?.len() as u64
        } else {
            0
        };
        if let Some(merge) = day.merge.as_mut() {
            merge.files_read = files;
            merge.files_rewritten = files;
            merge.rows_rewritten = day.rows;
        }
    }
    Ok(())
}
