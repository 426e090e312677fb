//! What a merge (CONTRACT.md §10) and its key index read of the published dataset, for
//! either kind of publish root: which dates it holds, the rows of one date, and whether
//! the manifest's record of a date still describes it. [`HiveFolders`] is the
//! `event_date=D` folders of a local root; the Delta table's version is
//! `crate::land::delta_read::TableVersion`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::contract::{Date, Record, Schema};
use crate::error::Result;
use crate::plan::PartitionEntry;
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
            let reader = parquet_files::open_reader(&path)?;
            add_hours(&mut hours, parquet_files::hours_of(reader, &path, schema)?);
        }
        Ok(hours)
    }
}
