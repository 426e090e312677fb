//! [`SparkEngine`]: a landing's row work done by a Spark 4 cluster through Spark Connect,
//! with built-in functions only (nothing to install on the executors).
//!
//! - [`session`]: the connection, its settings, Spark errors as [`Error::Engine`](crate::Error::Engine).
//! - [`driver`]: the driver's one read of the bytes: SHA-256 and Wharf's own §1.
//! - [`lines`]: Spark reads the text and numbers every line exactly.
//! - [`events`]: parsing, exact instants and §2; [`winners`]: §3 and §4.
//! - [`census`]: the queries run, aggregates back; [`write`]: the stage.
//!
//! The input, the staging folder and the publish root must be on a file system the
//! driver and the executors both see (the same paths).

pub mod census;
pub mod driver;
pub mod events;
pub mod lines;
pub mod session;
pub mod winners;
pub mod write;

use std::collections::BTreeMap;
use std::path::Path;

use spark_connect::DataFrame;

use crate::config::{Config, EngineConfig};
use crate::engine::{Engine, Progress, Staged};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::plan::{Census, Manifest, Plan};
use session::Session;

/// The Spark engine: one session, and the winners of the last census, cached in Spark
/// (the view [`winners::WINNERS`], columns documented there) until the stage.
pub struct SparkEngine {
    session: Session,
    winners: Option<DataFrame>,
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
        })
    }

    /// The resolved values of the session settings a landing relies on
    /// ([`session::SETTINGS`]), for the run log; empty if the server cannot be asked.
    pub fn settings(&self) -> BTreeMap<String, String> {
        self.session.settings().unwrap_or_default()
    }

    /// Sets a session setting (tests make splits small with it).
    pub fn set(&self, key: &str, value: &str) -> Result<()> {
        self.session.set(key, value)
    }

    /// The session: merge mode's queries over the published files, and tests.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The last census's winners, cached in Spark, if Spark ran (merge mode reads them).
    #[allow(dead_code)]
    pub(crate) fn winners(&self) -> Option<&DataFrame> {
        self.winners.as_ref()
    }

    fn forget_winners(&mut self) {
        if let Some(winners) = self.winners.take() {
            let _ = winners.unpersist(false);
        }
    }
}

impl Engine for SparkEngine {
    fn describe(&self) -> String {
        self.session.describe().to_owned()
    }

    fn census(
        &mut self,
        config: &Config,
        input: &Input,
        _manifest: &Manifest,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Census> {
        self.forget_winners();
        let (census, winners) = census::read(&self.session, config, input, progress)?;
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
        if self.winners.is_none() {
            return Err(Error::internal(
                "the Spark engine was asked to stage before a census that reached Spark",
            ));
        }
        let dates: BTreeMap<_, _> = plan
            .dates
            .iter()
            .filter(|d| d.rows > 0)
            .map(|d| (d.event_date, d.rows))
            .collect();
        write::stage(&self.session, config, &dates, staging, progress)
    }
}

impl Drop for SparkEngine {
    fn drop(&mut self) {
        self.forget_winners();
    }
}
