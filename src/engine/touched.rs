//! Which published files a merge batch reads (CONTRACT.md §10.5), for every engine: each
//! date's files by their footers, and of those, the ones that may hold one of the batch's
//! keys (key range, then bloom filter) or whose key range a new key of that date joins.
//! The local engine reads the chosen files on this machine; the Spark engine has its
//! executors read exactly them, by URI. One rule, so both rewrite the same files.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::contract::{Date, Value};
use crate::error::Result;
use crate::plan::{self, PublishedFile};
use crate::store::dataset::Dataset;
use crate::store::key_files::Footer;

/// One published date as a batch meets it.
#[derive(Clone, Debug, Default)]
pub struct DateFiles {
    /// Its files in key order, as their footers describe them (no rows).
    pub files: Vec<PublishedFile>,
    /// Whether the batch reads each file.
    pub read: Vec<bool>,
}

impl DateFiles {
    /// The bucket a new `key` of this date joins ([`plan::merge::bucket`]).
    pub fn bucket(&self, key: &Value, target_file_rows: u64) -> usize {
        plan::merge::bucket(&self.files, key, target_file_rows, |i| self.read[i])
    }
}

/// Every published date's files, each marked read or not, for a batch whose winners have
/// `keys` (sorted, distinct) and, by date, `own` (each winner's key on its own date).
/// `check` sees the footer of each file the batch reads, before any row is (an engine
/// whose reader is not Wharf's checks the file's types there).
pub fn touched(
    config: &Config,
    dataset: &dyn Dataset,
    keys: &[Value],
    own: &BTreeMap<Date, Vec<&Value>>,
    check: &dyn Fn(&Footer) -> Result<()>,
) -> Result<BTreeMap<Date, DateFiles>> {
    let schema = &config.schema;
    let mut dates = BTreeMap::new();
    for date in dataset.dates()? {
        let footers = dataset.footers(date, schema)?;
        let files: Vec<PublishedFile> = footers
            .iter()
            .map(|f| PublishedFile {
                path: f.path.clone(),
                rows: f.rows,
                min: f.min().cloned(),
                max: f.max().cloned(),
                read: None,
            })
            .collect();
        // A new key of the date rewrites the file its range falls in: read it too.
        let mut read = vec![false; files.len()];
        for key in own.get(&date).into_iter().flatten() {
            if let Some(at) = plan::merge::file_for(&files, key, config.target_file_rows) {
                read[at] = true;
            }
        }
        for (at, footer) in footers.iter().enumerate() {
            if !read[at] && dataset.may_hold(footer, keys)? {
                read[at] = true;
            }
            if read[at] {
                check(footer)?;
            }
        }
        dates.insert(date, DateFiles { files, read });
    }
    Ok(dates)
}
