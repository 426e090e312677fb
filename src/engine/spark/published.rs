//! Where merge mode (CONTRACT.md §10) reads the published rows from, as Spark reads
//! them: a hive root's `event_date=D` folders, by partition discovery, or exactly the files
//! of the Delta version the landing found, each read by name with its date from the log.
//! A table's folders are never listed: they also hold removed generations (kept for
//! restore) and other writers' uncommitted files.

use std::collections::{BTreeMap, BTreeSet};

use spark_connect::functions::expr;
use spark_connect::{DataFrame, SparkSession};

use super::uri;
use crate::config::Config;
use crate::contract::Date;
use crate::error::Result;
use crate::store::dataset::Dataset;
use crate::store::state;

/// The published dataset, as Spark is to read it.
pub enum Published {
    /// A hive root (its URI, glob-escaped) and the dates it holds.
    Folders { root: String, dates: BTreeSet<Date> },
    /// A Delta version's files by date, as glob-escaped URIs the executors reach.
    Table(BTreeMap<Date, Vec<String>>),
}

impl Published {
    /// What `dataset` publishes under `config`'s root.
    pub fn of(config: &Config, dataset: &dyn Dataset) -> Result<Published> {
        let Some(files) = dataset.files_by_date() else {
            let dates = state::list_partitions(config.lake.publish_root())?
                .into_iter()
                .map(|(date, _)| date)
                .collect();
            let root = uri::read_uri(config.lake.publish_root(), "the publish root")?;
            return Ok(Published::Folders { root, dates });
        };
        let mut by_date = BTreeMap::new();
        for (date, paths) in files {
            let uris: Result<Vec<String>> = paths
                .iter()
                .map(|path| uri::table_read_uri(config, path))
                .collect();
            by_date.insert(date, uris?);
        }
        Ok(Published::Table(by_date))
    }

    /// The dates it holds.
    pub fn dates(&self) -> BTreeSet<Date> {
        match self {
            Published::Folders { dates, .. } => dates.clone(),
            Published::Table(files) => files.keys().copied().collect(),
        }
    }

    /// The rows of `dates` (every date it holds when `None`): the columns of `ddl` (the
    /// published files' fields, as `name TYPE, …`) and `event_date`. `None` when there is
    /// nothing to read.
    pub fn read(
        &self,
        spark: &SparkSession,
        ddl: &str,
        dates: Option<&BTreeSet<Date>>,
    ) -> Option<DataFrame> {
        let wanted = |date: &Date| dates.is_none_or(|dates| dates.contains(date));
        match self {
            Published::Folders { root, dates: held } => {
                if !held.iter().any(wanted) {
                    return None;
                }
                let frame = spark
                    .read()
                    .schema(format!("{ddl}, event_date DATE"))
                    .parquet(root);
                Some(match dates {
                    Some(dates) => frame.filter(expr(&format!(
                        "event_date IN ({})",
                        super::merge::date_list(dates)
                    ))),
                    None => frame,
                })
            }
            Published::Table(files) => {
                let frames: Vec<DataFrame> = files
                    .iter()
                    .filter(|(date, _)| wanted(date))
                    .flat_map(|(date, uris)| {
                        uris.iter().map(move |uri| {
                            spark
                                .read()
                                .schema(ddl.to_owned())
                                .parquet(uri)
                                .with_column("event_date", expr(&format!("DATE'{date}'")))
                        })
                    })
                    .collect();
                super::union::union_all(frames)
            }
        }
    }
}
