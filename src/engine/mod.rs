//! EXECUTING. An engine does the row work of one landing: [`Engine::census`] reads an
//! input into a [`Census`] (what `plan::decide` needs, no rows), and [`Engine::stage`]
//! writes the winners of each date the plan publishes into a staging folder. Deciding
//! stays in `plan/`; the lock, quarantine, swap, trash, manifest and checkpoint stay in
//! `land/`, the same for every engine.
//!
//! [`open`] gives the engine the config names: [`local::LocalEngine`] on this machine, or
//! (cargo feature `spark`) `spark::SparkEngine` through Spark Connect.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{Config, EngineKind};
use crate::contract::Date;
use crate::error::Result;
use crate::input::Input;
use crate::plan::keyed::{Collapsed, EventsByKey};
use crate::plan::{Census, Manifest, Plan};
use crate::store::dataset::Dataset;

pub mod local;
#[cfg(feature = "spark")]
// rustfmt resolves a module whatever its cfg, and this one's files come with the feature.
#[rustfmt::skip]
pub mod spark;

pub mod touched;

pub use local::LocalEngine;

/// What an engine reports while it works; returning `false` from the callback cancels
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

/// What [`Engine::stage`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Staged {
    /// Parquet files written per date, under the contract's names.
    pub files: BTreeMap<Date, u64>,
    /// Merge mode, for an engine that rewrites files, not dates (§10.4): per date, the
    /// published files (relative to the root) that carry over into its new generation,
    /// each with its place in the date's key order (the staged files take the others).
    /// A date without an entry was staged whole.
    pub carried: Carried,
}

/// Merge mode's published files that carry over, per date ([`Staged::carried`]).
pub type Carried = BTreeMap<Date, Vec<(String, u64)>>;

/// A folder inside a Delta table's storage, for an engine whose executors write where the
/// table is and not on Wharf's disk (a cluster): the publish step names it and lists it
/// through the table's store, and moves what the engine wrote there into the table's own
/// names (CONTRACT.md §12.1).
pub trait TableFolder {
    /// The folder, relative to the table root, ending in `/`.
    fn relative(&self) -> &str;
    /// Every object under the folder, relative to it, as the store lists them.
    fn list(&self) -> Result<Vec<String>>;
}

/// A data file an engine wrote into a [`TableFolder`]: the `n`th (in key order) of `date`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    pub date: Date,
    pub n: u64,
    /// Relative to the folder.
    pub path: String,
}

/// One way of executing a landing's row work.
pub trait Engine {
    /// What the console and the run log call it: `local`, or `spark sc://host:port`.
    fn describe(&self) -> String;

    /// The engine's resolved session settings, for the run log (none by default).
    fn settings(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    /// Reads `input` once: its SHA-256, every line classified (§1), retries and
    /// conflicts (§2), the winner of every key (§3), their dates (§4) and, in merge mode,
    /// what the winners do to the rows `dataset` publishes now, as `manifest` records
    /// them (§10). Writes nothing; keeps what [`Engine::stage`] needs.
    fn census(
        &mut self,
        config: &Config,
        input: &Input,
        manifest: &Manifest,
        dataset: &dyn Dataset,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Census>;

    /// Writes the whole new rows of every date of `plan.dates` with rows into
    /// `staging/event_date=D/`, sorted by key, `files_per_date` files named as the
    /// contract says, fsynced. Only after a [`Engine::census`] of the same input.
    fn stage(
        &mut self,
        config: &Config,
        plan: &Plan,
        staging: &Path,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Staged>;

    /// [`Engine::stage`] into `folder` of a Delta table, for an engine whose executors
    /// reach the table (the Spark engine): each written file exactly once, in key order
    /// within its date, and in merge mode the files that carry over. `None` for an engine
    /// that stages on Wharf's disk, from which the publish step uploads.
    fn stage_in_table(
        &mut self,
        _config: &Config,
        _plan: &Plan,
        _folder: &dyn TableFolder,
        _progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Option<Result<(Vec<WrittenFile>, Carried)>> {
        None
    }

    /// Every key's events by line as the last census read them, for an engine opened by
    /// [`open_for_ranked_plan`] that could keep them; `None` otherwise (the console then
    /// reads them with [`events_by_key`]).
    fn take_events_by_key(&mut self) -> Option<EventsByKey> {
        None
    }
}

/// Every key's events of the input `path` by line, with §2's repeats: a read on this
/// machine with the plan's own functions, whichever engine plans it (the Ranked tab's
/// data where the plan kept none). `progress(bytes, total)` returns `false` to cancel.
pub fn events_by_key(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<EventsByKey> {
    local::by_key::events_by_key(config, path, progress)
}

/// §2's retries and conflicts of the input `path`, each with the line it repeats, read
/// as [`events_by_key`] reads (the Raw tab's marks).
pub fn repeats(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Collapsed> {
    local::by_key::repeats(config, path, progress)
}

/// The engine `config` names (`[engine]`, or the `--engine`/`--remote` flags over it);
/// Spark's connects to its remote here.
pub fn open(config: &Config) -> Result<Box<dyn Engine>> {
    match config.engine.kind {
        EngineKind::Local => Ok(Box::new(LocalEngine::new())),
        #[cfg(feature = "spark")]
        EngineKind::Spark => Ok(Box::new(spark::SparkEngine::connect(&config.engine)?)),
        #[cfg(not(feature = "spark"))]
        EngineKind::Spark => Err(crate::Error::Config {
            path: config.path.clone(),
            message: "engine kind = \"spark\", but this wharf was built without Spark: \
                      cargo build --features spark (or set [engine] kind = \"local\")"
                .to_owned(),
        }),
    }
}

/// The engine for a plan that will not be staged and whose events by key the console
/// ranks: a local engine keeps them as it reads ([`Engine::take_events_by_key`]); others
/// are [`open`]'s.
pub fn open_for_ranked_plan(config: &Config) -> Result<Box<dyn Engine>> {
    match config.engine.kind {
        EngineKind::Local => Ok(Box::new(LocalEngine::planning(true))),
        _ => open(config),
    }
}

/// The engine for a plan that will not be staged: [`open`]'s, but a local engine keeps no
/// winners' rows ([`LocalEngine::planning`]).
pub fn open_for_plan(config: &Config) -> Result<Box<dyn Engine>> {
    match config.engine.kind {
        EngineKind::Local => Ok(Box::new(LocalEngine::planning(false))),
        _ => open(config),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn open_gives_the_engine_the_config_names() {
        let mut config = crate::config::fixtures::orders();
        let engine = open(&config).expect("local");
        assert_eq!(engine.describe(), "local");
        assert!(engine.settings().is_empty());
        config.engine = EngineConfig {
            kind: EngineKind::Spark,
            remote: Some("sc://127.0.0.1:1".to_owned()),
            s3_scheme: None,
        };
        if !cfg!(feature = "spark") {
            let err = open(&config)
                .err()
                .expect("no Spark in this build")
                .to_string();
            assert!(err.contains("cargo build --features spark"), "{err}");
            assert!(err.contains(&config.path.display().to_string()), "{err}");
        }
    }
}
