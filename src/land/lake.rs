//! EFFECTS. The half of [`PublishRoot`] that status, history, the console and
//! `wharf restore` call: the published dates with their kept generations, a past
//! landing's two generations of each date, restore, the rows a date holds now and the
//! columns the lake carries. Each asks [`super::hive`] or [`super::delta`]; the callers
//! never know which.

use std::collections::BTreeSet;
use std::time::Instant;

use super::columns::AddedColumn;
use super::delta::{self, commit::Found};
use super::hive::{self, generations::Sides};
use super::restore::Restored;
use super::root::PublishRoot;
use super::runlog::RunRecord;
use crate::config::{Config, Lake};
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::plan::Owner;
use crate::store::rows::Source;

pub use super::hive::trash::Generation;

/// One published date as status and the console show it.
#[derive(Clone, Debug)]
pub struct DatePartition {
    pub date: Date,
    pub rows: u64,
    pub owner: Option<Owner>,
    pub published_at: Option<String>,
    /// The newest kept generation (what a restore brings back) and how many are kept.
    pub previous: Option<Generation>,
    pub generations: usize,
}

/// One date of a past landing as its diff reads it: the generation it replaced and the
/// one it published; `None` where one is no longer kept.
pub struct LandedSides {
    pub date: Date,
    pub replaced: Option<Vec<Source>>,
    /// The landing created the date: nothing replaced.
    pub new_date: bool,
    pub published: Option<Vec<Source>>,
}

/// A past landing's generations, each date's read only when asked for.
pub enum PastLanding {
    /// Why its generations cannot be found.
    Unavailable(&'static str),
    /// The folders of each date it swapped.
    Hive(Vec<Sides>),
    /// The table's versions before and at its commit, and the dates it published.
    Delta {
        dates: Vec<Date>,
        before: Option<Box<Found>>,
        after: Box<Found>,
    },
}

impl PastLanding {
    /// How many dates it published.
    pub fn len(&self) -> usize {
        match self {
            PastLanding::Unavailable(_) => 0,
            PastLanding::Hive(sides) => sides.len(),
            PastLanding::Delta { dates, .. } => dates.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Why its generations cannot be found, when they cannot.
    pub fn unavailable(&self) -> Option<&'static str> {
        match self {
            PastLanding::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// The `i`th date's two generations, read now.
    pub fn sides(&self, i: usize) -> Result<LandedSides> {
        match self {
            PastLanding::Unavailable(why) => Err(Error::internal(*why)),
            PastLanding::Hive(sides) => hive::describe::landed_sides(&sides[i]),
            PastLanding::Delta {
                dates,
                before,
                after,
            } => delta::describe::landed_sides(dates[i], before.as_deref(), after),
        }
    }
}

impl PublishRoot {
    /// The columns the lake carries beyond `config`'s declared ones (§1.1), rebuilt from
    /// the lake alone, oldest landing first: for when `columns.json` is gone.
    pub fn added_columns(config: &Config) -> Result<Vec<AddedColumn>> {
        match &config.lake {
            Lake::Hive(_) => hive::columns::from_folders(config),
            Lake::Delta { url, .. } => delta::columns::from_lake(config, url),
        }
    }

    /// Every published date with its owner and its kept generations.
    pub fn partitions(&self, config: &Config) -> Result<Vec<DatePartition>> {
        match self {
            PublishRoot::Hive => hive::describe::partitions(config),
            PublishRoot::Delta(found) => delta::describe::partitions(config, found),
        }
    }

    /// `wharf restore DATE`, under the product's lock: `date`'s newest kept generation
    /// becomes its live one (§6.3, §12.6); the run log's line says how long since `started`.
    pub fn restore(&self, config: &Config, date: Date, started: Instant) -> Result<Restored> {
        match self {
            PublishRoot::Hive => hive::restore::restore(config, date, started),
            PublishRoot::Delta(found) => delta::restore::restore(config, found, date, started),
        }
    }

    /// `date`'s files as published now, but those `kept` names (a merge's carried files),
    /// as a diff reads them.
    pub fn sources_except(
        &self,
        config: &Config,
        date: Date,
        kept: &BTreeSet<String>,
    ) -> Result<Vec<Source>> {
        match self {
            PublishRoot::Hive => hive::describe::sources_except(config, date, kept),
            PublishRoot::Delta(found) => delta::describe::sources_except(config, found, date, kept),
        }
    }

    /// The generations of each date the landing `run` published.
    pub fn past_landing(config: &Config, run: &RunRecord) -> Result<PastLanding> {
        match &config.lake {
            Lake::Hive(_) => Ok(PastLanding::Hive(hive::generations::sides(config, run)?)),
            Lake::Delta { url, .. } => delta::describe::past_landing(config, url, run),
        }
    }

    /// What `wharf history` heads the run log with, from the state root alone (no
    /// storage is read): a table's URL and where the state root's memory of it came from
    /// (§12.5); `None` for hive folders.
    pub fn logged_table(config: &Config) -> Result<Option<(String, Option<String>)>> {
        match &config.lake {
            Lake::Hive(_) => Ok(None),
            Lake::Delta { url, .. } => {
                let memory = delta::memory::read(config)?.map(|m| m.describe());
                Ok(Some((url.clone(), memory)))
            }
        }
    }
}
