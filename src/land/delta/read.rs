//! EFFECTS, reads only. A Delta table's version as merge mode reads it (a
//! [`Dataset`]): its dates and their files are the version the landing found, never the
//! folders under the root (those also hold the trash's removed files and other writers'
//! uncommitted ones); a date's rows are its files fetched through the table's store.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::contract::{Date, Record, Schema, Value};
use crate::error::Result;
use crate::land::delta;
use crate::land::delta::commit::Found;
use crate::plan::PartitionEntry;
use crate::store::dataset::{self, Dataset};
use crate::store::key_files::Footer;

/// The version `found` read.
pub struct TableVersion<'a>(pub &'a Found);

impl TableVersion<'_> {
    /// The paths of `date`'s files in this version, in byte order.
    fn files_of(&self, date: Date) -> Vec<String> {
        let files = self.0.files.iter().filter(|f| f.date == date);
        let mut paths: Vec<String> = files.map(|f| f.path.clone()).collect();
        paths.sort();
        paths
    }

    /// `date`'s files as the diff reads them, fetched; `None` when one of them is no
    /// longer stored (a removed generation the vacuum let go).
    pub fn sources(&self, date: Date) -> Result<Option<Vec<crate::store::rows::Source>>> {
        self.sources_except(date, &std::collections::BTreeSet::new())
    }

    /// [`TableVersion::sources`] without the files `kept` names (a merge's carried files).
    pub fn sources_except(
        &self,
        date: Date,
        kept: &std::collections::BTreeSet<String>,
    ) -> Result<Option<Vec<crate::store::rows::Source>>> {
        let mut sources = Vec::new();
        for path in self
            .files_of(date)
            .into_iter()
            .filter(|p| !kept.contains(p))
        {
            let Some(bytes) = self.0.table.fetch_if_stored(&path)? else {
                return Ok(None);
            };
            sources.push(crate::store::rows::Source::Fetched(
                self.named(&path),
                bytes,
            ));
        }
        Ok(Some(sources))
    }

    /// The data file `path` as errors name it: under the table's URL.
    fn named(&self, path: &str) -> PathBuf {
        Path::new(self.0.table.url()).join(path)
    }
}

impl Dataset for TableVersion<'_> {
    fn dates(&self) -> Result<Vec<Date>> {
        Ok(delta::by_date(&self.0.files).into_keys().collect())
    }

    fn rows(&self, date: Date, schema: &Schema) -> Result<Vec<Record>> {
        let mut sources = Vec::new();
        for path in self.files_of(date) {
            sources.push(self.file_source(&path)?);
        }
        crate::store::rows::Rows::of(sources, schema).collect()
    }

    fn rows_by_hour(&self, date: Date, schema: &Schema) -> Result<[u64; 24]> {
        let mut hours = [0; 24];
        for path in self.files_of(date) {
            let source = self.file_source(&path)?;
            dataset::add_hours(&mut hours, crate::store::rows::hours(source, schema)?);
        }
        Ok(hours)
    }

    fn files_by_date(&self) -> Option<BTreeMap<Date, Vec<String>>> {
        let mut by_date: BTreeMap<Date, Vec<String>> = BTreeMap::new();
        for file in &self.0.files {
            by_date
                .entry(file.date)
                .or_default()
                .push(file.path.clone());
        }
        by_date.values_mut().for_each(|paths| paths.sort());
        Some(by_date)
    }

    fn footers(&self, date: Date, schema: &Schema) -> Result<Vec<Footer>> {
        let mut footers = Vec::new();
        for file in self.0.files.iter().filter(|f| f.date == date) {
            let table = &self.0.table;
            let mut fetch = |start, len| table.fetch_range(&file.path, start, len);
            footers.push(Footer::read(&file.path, file.size, schema, &mut fetch)?);
        }
        Ok(dataset::in_key_order(footers))
    }

    fn may_hold(&self, footer: &Footer, keys: &[Value]) -> Result<bool> {
        let table = &self.0.table;
        footer.may_hold(keys, &mut |start, len| {
            table.fetch_range(&footer.path, start, len)
        })
    }

    fn file_source(&self, path: &str) -> Result<crate::store::rows::Source> {
        let bytes = self.0.table.fetch(path)?;
        Ok(crate::store::rows::Source::Fetched(self.named(path), bytes))
    }

    fn file_hours(&self, path: &str, schema: &Schema) -> Result<[u64; 24]> {
        crate::store::rows::hours(self.file_source(path)?, schema)
    }

    fn holds_as_recorded(&self, date: Date, entry: &PartitionEntry) -> bool {
        let mut recorded = entry.table_files.clone();
        recorded.sort();
        recorded == self.files_of(date)
    }
}
