//! What a merge (CONTRACT.md §10) reads of the published dataset, for either kind of
//! publish root: which dates it holds, the rows of one date, each file's footer and bloom
//! filters (where its keys lie, §10.5) and rows, and whether the manifest's record of a
//! date still describes it. [`HiveFolders`] is the
//! `event_date=D` folders of a local root; the Delta table's version is
//! `crate::land::delta::read::TableVersion`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::contract::{Date, Record, Schema, Value};
use crate::error::{Error, Result};
use crate::plan::PartitionEntry;
use crate::store::key_files::{self, Footer};
use crate::store::{parquet_files, state};

/// The published dataset, read only.
pub trait Dataset {
    /// The dates it holds now, ascending.
    fn dates(&self) -> Result<Vec<Date>>;
    /// Every row `date` holds now, as records of `schema`; none for a date it lacks.
    fn rows(&self, date: Date, schema: &Schema) -> Result<Vec<Record>>;
    /// Whether `entry`, the manifest's record of `date`, is still what the dataset holds
    /// there: a Delta table another writer or a restore changed is not.
    fn holds_as_recorded(&self, date: Date, entry: &PartitionEntry) -> bool;
    /// The rows `date` holds now by UTC hour of their `partition_by_date_of` instant
    /// (all zero for a date it lacks), reading that column alone.
    fn rows_by_hour(&self, date: Date, schema: &Schema) -> Result<[u64; 24]>;
    /// For an engine that reads the files itself (the Spark engine): each date's data
    /// files, relative to the root, when only those may be read (a Delta version, whose
    /// folders also hold removed and uncommitted files); `None` when every Parquet file
    /// of a date's folder is the date's (hive folders).
    fn files_by_date(&self) -> Option<BTreeMap<Date, Vec<String>>> {
        None
    }
    /// `date`'s files with their footers (merge mode's index, CONTRACT.md §10.5), in key
    /// order: by smallest key, a file without statistics first.
    fn footers(&self, date: Date, schema: &Schema) -> Result<Vec<Footer>>;
    /// Whether `footer`'s file may hold one of `keys` (sorted): its bloom filters.
    fn may_hold(&self, footer: &Footer, keys: &[Value]) -> Result<bool>;
    /// The file `path` (relative to the root) to read: a local file, or its bytes fetched.
    fn file_source(&self, path: &str) -> Result<super::rows::Source>;
    /// Every row of the file `path` (relative to the root), as records of `schema`.
    fn file_rows(&self, path: &str, schema: &Schema) -> Result<Vec<Record>> {
        // Columns at a time, as the diff reads.
        super::rows::Rows::of(vec![self.file_source(path)?], schema).collect()
    }
    /// The rows of the file `path` by UTC hour, as [`Dataset::rows_by_hour`] counts them.
    fn file_hours(&self, path: &str, schema: &Schema) -> Result<[u64; 24]>;
}

/// `footers` in key order.
pub fn in_key_order(mut footers: Vec<Footer>) -> Vec<Footer> {
    footers.sort_by(|a, b| (a.min(), &a.path).cmp(&(b.min(), &b.path)));
    footers
}

/// Hours summed over a date's files.
pub fn add_hours(sum: &mut [u64; 24], hours: [u64; 24]) {
    for (total, n) in sum.iter_mut().zip(hours) {
        *total += n;
    }
}

/// The `event_date=D` folders under a local publish root: a date's folder is whatever
/// the last swap put there, so the manifest's record of it stands.
pub struct HiveFolders<'a>(pub &'a Path);

impl Dataset for HiveFolders<'_> {
    fn dates(&self) -> Result<Vec<Date>> {
        Ok(state::list_partitions(self.0)?
            .into_iter()
            .map(|(date, _)| date)
            .collect())
    }

    fn rows(&self, date: Date, schema: &Schema) -> Result<Vec<Record>> {
        let folder = state::partition_dir(self.0, date);
        if !folder.is_dir() {
            return Ok(Vec::new());
        }
        parquet_files::read_partition(&folder, schema)
    }

    fn holds_as_recorded(&self, _date: Date, _entry: &PartitionEntry) -> bool {
        true
    }

    fn rows_by_hour(&self, date: Date, schema: &Schema) -> Result<[u64; 24]> {
        let folder = state::partition_dir(self.0, date);
        let mut hours = [0; 24];
        if !folder.is_dir() {
            return Ok(hours);
        }
        for path in parquet_files::parquet_paths(&folder)? {
            add_hours(
                &mut hours,
                super::rows::hours(super::rows::Source::Path(path), schema)?,
            );
        }
        Ok(hours)
    }

    fn footers(&self, date: Date, schema: &Schema) -> Result<Vec<Footer>> {
        let folder = state::partition_dir(self.0, date);
        if !folder.is_dir() {
            return Ok(Vec::new());
        }
        let mut footers = Vec::new();
        for path in parquet_files::parquet_paths(&folder)? {
            let len = std::fs::metadata(&path)
                .map_err(|e| Error::io(&path, "read a file's size", "check the publish root", e))?
                .len();
            let relative = relative(date, &path);
            footers.push(Footer::read(
                &relative,
                len,
                schema,
                &mut key_files::fetch_local(&path),
            )?);
        }
        Ok(in_key_order(footers))
    }

    fn may_hold(&self, footer: &Footer, keys: &[Value]) -> Result<bool> {
        let path = self.0.join(&footer.path);
        footer.may_hold(keys, &mut key_files::fetch_local(&path))
    }

    fn file_source(&self, path: &str) -> Result<super::rows::Source> {
        Ok(super::rows::Source::Path(self.0.join(path)))
    }

    fn file_hours(&self, path: &str, schema: &Schema) -> Result<[u64; 24]> {
        super::rows::hours(self.file_source(path)?, schema)
    }
}

/// `path`, a file of `date`'s folder, relative to the publish root.
fn relative(date: Date, path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    format!("event_date={date}/{name}")
}
