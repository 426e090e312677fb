//! The Spark engine (feature `spark`): the row work of a landing done by a Spark cluster
//! through Spark Connect. [`merge`] is merge mode (CONTRACT.md §10) on Spark.
//!
//! This branch carries merge mode only: [`SparkEngine`] has no value, so
//! [`SparkEngine::connect`] refuses with a config error until the census and stage of
//! the Spark engine join it.

pub mod merge;

use std::path::Path;

use crate::config::{Config, EngineConfig};
use crate::engine::{Engine, Progress, Staged};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::plan::{Census, Manifest, Plan};

/// The Spark engine; uninhabited in a build without its census and stage.
pub enum SparkEngine {}

impl SparkEngine {
    /// Refuses: this build has no Spark census or stage.
    pub fn connect(config: &EngineConfig) -> Result<SparkEngine> {
        Err(Error::Usage(format!(
            "engine kind = \"spark\" ({}): this build has Spark's merge only, not its \
             census and stage; use [engine] kind = \"local\"",
            config.remote.as_deref().map_or("no remote", |_| "remote set")
        )))
    }
}

impl Engine for SparkEngine {
    fn describe(&self) -> String {
        match *self {}
    }

    fn census(
        &mut self,
        _: &Config,
        _: &Input,
        _: &Manifest,
        _: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Census> {
        match *self {}
    }

    fn stage(
        &mut self,
        _: &Config,
        _: &Plan,
        _: &Path,
        _: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<Staged> {
        match *self {}
    }
}
