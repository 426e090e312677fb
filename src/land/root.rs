//! EFFECTS. [`PublishRoot`]: the lake a landing publishes into, hive folders
//! ([`super::hive`]) or a Delta table ([`super::delta`]) (CONTRACT.md §12), behind the one
//! interface the rest of the program calls; nothing outside `land/` asks which it is.
//!
//! A landing ([`super::run`]) calls it in the contract's order:
//!
//! - [`PublishRoot::open`]: a table's current version is read before the input, so an
//!   unreachable table fails fast;
//! - [`PublishRoot::recall`]: what the lake remembers of the landings (§12.5);
//! - [`PublishRoot::with_dataset`]: what an engine reads of it (merge mode's published
//!   rows, the Spark engine's files);
//! - [`PublishRoot::published`]: what the skip rule and the decision compare against
//!   (§5.3–5.10);
//! - [`PublishRoot::publish`]: §6.2–6.4, hive dates swapped in one by one or one Delta
//!   commit, then the manifest and, last, the checkpoint.
//!
//! What status, history and the console show comes from [`super::lake`]'s half of it:
//! the dates and their kept generations, a past landing's generations, restore.

use super::delta::commit::{self, Found};
use super::delta::memory::{self, Recalled};
use super::delta::read::TableVersion;
use super::{Progress, checkpoint, hive};
use crate::config::{Config, Lake};
use crate::engine::Engine;
use crate::error::Result;
use crate::plan::{self, Checkpoint, Manifest, Plan};
use crate::store::dataset::{Dataset, HiveFolders};
use crate::store::{failpoint, state};

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
    pub swaps: Vec<hive::swap::SwapMethod>,
    /// The table version the landing committed.
    pub table_version: Option<u64>,
}

impl PublishRoot {
    pub fn open(config: &Config) -> Result<PublishRoot> {
        Ok(match &config.lake {
            Lake::Hive(_) => PublishRoot::Hive,
            Lake::Delta { url, .. } => PublishRoot::Delta(Box::new(commit::find(config, url)?)),
        })
    }

    /// The table version found, on a Delta root.
    pub(crate) fn found(&self) -> Option<&Found> {
        match self {
            PublishRoot::Hive => None,
            PublishRoot::Delta(found) => Some(found),
        }
    }

    /// The format's name as status reports it (`table_format`).
    pub fn format(&self) -> &'static str {
        match self {
            PublishRoot::Hive => "hive",
            PublishRoot::Delta(_) => "delta",
        }
    }

    /// The table's URL and the version found (`None`: no commit yet); `None` for hive
    /// folders, which have neither.
    pub fn table(&self) -> Option<(String, Option<u64>)> {
        let found = self.found()?;
        let version = found.snapshot.as_ref().map(|s| s.version());
        Some((found.table.url().to_owned(), version))
    }

    /// §12.5: the state root brought up to what the table's log says landed (written
    /// only when `persist`, under a run's lock); a hive lake's memory is its state root.
    pub fn recall(&self, config: &Config, persist: bool) -> Result<Recalled> {
        memory::recall(config, self, persist)
    }

    /// After a landing committed `version` (none on hive), the memory notes it.
    pub fn remember(&self, config: &Config, version: Option<u64>) -> Result<()> {
        match (version, self.found()) {
            (Some(version), Some(found)) => memory::advance(config, found.table.url(), version),
            _ => Ok(()),
        }
    }

    /// `read` over the published dataset: the hive folders, or the version found.
    pub fn with_dataset<T>(&self, config: &Config, read: impl FnOnce(&dyn Dataset) -> T) -> T {
        match self {
            PublishRoot::Hive => read(&HiveFolders(config.lake.publish_root())),
            PublishRoot::Delta(found) => read(&TableVersion(found)),
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
                let swapped = hive::publish::swap_in(config, engine, plan, manifest, now, progress);
                if swapped.is_err() {
                    let _ = hive::swap::clean_staging(config); // the error is the one to report
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
