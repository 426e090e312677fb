//! The published files a merge batch reads on Spark (CONTRACT.md §10.4–5): exactly those
//! [`engine::touched`](crate::engine::touched) chose by their footers and bloom filters,
//! the same as the local engine reads, each given to Spark by its explicit, glob-escaped
//! URI: a file of a hive root's `event_date=D` folder, or a file of the Delta version the
//! landing found. No folder is listed or discovered: a table's folders also hold removed
//! generations (kept for restore) and other writers' uncommitted files.

use std::collections::BTreeMap;

use spark_connect::functions::expr;
use spark_connect::row::Value as SparkValue;
use spark_connect::{DataFrame, SparkSession};

use super::events::ident;
use super::session::Session;
use super::uri;
use crate::config::Config;
use crate::contract::{Date, Schema, Value};
use crate::engine::touched::{self, DateFiles};
use crate::error::{Error, Result};
use crate::store::dataset::Dataset;

/// The batch's keys as the driver collected them from its winners.
#[derive(Clone, Debug, Default)]
pub struct BatchKeys {
    /// Every winner's key, sorted, distinct.
    pub keys: Vec<Value>,
    /// Each date's winners' keys, sorted.
    pub own: BTreeMap<Date, Vec<Value>>,
}

impl BatchKeys {
    /// The keys of `winners` (one row per key, its `event_date` beside it), collected on
    /// the driver: the batch's, bounded by it, never the table's.
    pub fn collect(session: &Session, schema: &Schema, winners: &DataFrame) -> Result<BatchKeys> {
        let key = ident(&schema.fields[schema.key].name);
        let rows = winners
            .select_expr(vec![&key, "event_date"])
            .collect()
            .map_err(|e| session.error("cannot collect the batch's keys", &e))?;
        let mut batch = BatchKeys::default();
        for row in &rows {
            let key = match row.get(0) {
                Some(SparkValue::Long(n)) => Value::Int(*n),
                Some(SparkValue::String(s)) => Value::Str(s.as_str().into()),
                _ => return Err(Error::internal("Spark gave a key that is neither int nor string")),
            };
            if let Some(SparkValue::Date(days)) = row.get(1) {
                batch.own.entry(Date(*days)).or_default().push(key.clone());
            }
            batch.keys.push(key);
        }
        batch.keys.sort_unstable();
        batch.keys.dedup();
        for keys in batch.own.values_mut() {
            keys.sort_unstable();
        }
        Ok(batch)
    }
}

/// Every published date's files, marked read or not, and the URIs of those read.
#[derive(Clone, Debug, Default)]
pub struct Published {
    pub dates: BTreeMap<Date, DateFiles>,
    /// Per date, the URI of each file the batch reads, by its index in the date.
    uris: BTreeMap<Date, Vec<(usize, String)>>,
    /// Each date's winners' keys, sorted.
    own: BTreeMap<Date, Vec<Value>>,
}

impl Published {
    /// The files of `dataset` (published under `config`'s root) a batch of `batch`'s keys
    /// reads, by [`touched::touched`].
    pub fn of(config: &Config, dataset: &dyn Dataset, batch: BatchKeys) -> Result<Published> {
        let own: BTreeMap<Date, Vec<&Value>> = batch
            .own
            .iter()
            .map(|(date, keys)| (*date, keys.iter().collect()))
            .collect();
        // Spark reads the files itself: their types are checked by Wharf's rules first.
        let check = |footer: &crate::store::key_files::Footer| {
            crate::store::conform::check_for_spark(
                std::path::Path::new(&footer.path),
                footer.metadata(),
                &config.schema.fields,
            )
        };
        let dates = touched::touched(config, dataset, &batch.keys, &own, &check)?;
        // A Delta version names its files; a hive root's are its folders' files.
        let in_table = dataset.files_by_date().is_some();
        let mut uris = BTreeMap::new();
        for (date, files) in &dates {
            let mut read = Vec::new();
            for (at, file) in files.files.iter().enumerate() {
                if !files.read[at] {
                    continue;
                }
                let uri = match in_table {
                    true => uri::table_read_uri(config, &file.path)?,
                    false => uri::read_uri(&config.lake.publish_root().join(&file.path), "the publish root")?,
                };
                read.push((at, uri));
            }
            uris.insert(*date, read);
        }
        Ok(Published {
            dates,
            uris,
            own: batch.own,
        })
    }

    /// Each date's winners' keys, sorted.
    pub fn own(&self) -> &BTreeMap<Date, Vec<Value>> {
        &self.own
    }

    /// The rows of every file the batch reads: the columns of `ddl` (the published files'
    /// fields, as `name TYPE, …`), `event_date`, and `_published_file` (the file's index
    /// among its date's, in key order). `None` when it reads none.
    pub fn read(&self, spark: &SparkSession, ddl: &str) -> Option<DataFrame> {
        let frames: Vec<DataFrame> = self
            .uris
            .iter()
            .flat_map(|(date, uris)| {
                uris.iter().map(move |(at, uri)| {
                    spark
                        .read()
                        .schema(ddl.to_owned())
                        .parquet(uri)
                        .with_column("event_date", expr(&format!("DATE'{date}'")))
                        .with_column("_published_file", expr(&format!("{at}")))
                })
            })
            .collect();
        super::union::union_all(frames)
    }
}
