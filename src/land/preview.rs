//! What a landing would change, before it runs: [`preview`] plans the input, has the
//! engine stage the rows of every date the plan publishes into a temporary folder outside
//! the publish root (the dataset, its staging area and the state are not touched), and
//! [`Preview::diff`] merge-joins each date with the partition published now (a hive
//! folder, or the files of the Delta version the plan was decided against).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::root::PublishRoot;
use super::{Progress, announced, columns, plan_with_manifest};
use crate::config::Config;
use crate::contract::Date;
use crate::diff::{self, Change, DateDiff};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::plan::{Action, DecideOptions, Plan};
use crate::store::rows::{Rows, Source};
use crate::store::state;

/// A plan, and for a publish the rows it would write, staged where no reader looks.
pub struct Preview {
    pub plan: Plan,
    /// The staged dates, removed when the preview is dropped; `None` unless a publish.
    staged: Option<tempfile::TempDir>,
    /// The root the plan was decided against: a Delta table's version is what the diff
    /// reads.
    root: PublishRoot,
    /// Merge mode: each date's files the landing would carry over unchanged (§10.4),
    /// left out of both sides of its diff.
    carried: BTreeMap<Date, BTreeSet<String>>,
}

/// Plans `path` with `engine` (which must be able to stage, e.g. `LocalEngine::new`) and,
/// when the plan publishes, stages its dates into a temporary folder.
pub fn preview(
    config: &Config,
    engine: &mut dyn Engine,
    path: &Path,
    options: DecideOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Preview> {
    let config = &config.at_start(std::time::SystemTime::now()); // §1.2's `now`
    // §1.1: the columns the lake and this input add, as `plan` and `run` declare them.
    let (config, added) = &columns::evolve(config, columns::history(config)?, path)?;
    let (mut plan, _, root, _) =
        plan_with_manifest(config, engine, path, options, false, progress)?;
    plan.added_columns = announced(&plan, added);
    if plan.action != Action::Publish {
        return Ok(Preview {
            plan,
            staged: None,
            root,
            carried: BTreeMap::new(),
        });
    }
    let temp = std::env::temp_dir();
    let staged = tempfile::Builder::new()
        .prefix("wharf-diff-")
        .tempdir_in(&temp)
        .map_err(|e| {
            Error::io(
                &temp,
                "make a folder for the diff",
                "check TMPDIR has room",
                e,
            )
        })?;
    let carried = engine
        .stage(config, &plan, staged.path(), progress)?
        .carried;
    let carried = carried
        .into_iter()
        .map(|(date, files)| (date, files.into_iter().map(|(path, _)| path).collect()))
        .collect();
    Ok(Preview {
        plan,
        staged: Some(staged),
        root,
        carried,
    })
}

impl Preview {
    /// The dates the plan writes (all of them, or only `only`).
    pub fn dates(&self, only: Option<Date>) -> Vec<Date> {
        self.plan
            .dates
            .iter()
            .map(|d| d.event_date)
            .filter(|d| only.is_none_or(|o| o == *d))
            .collect()
    }

    /// Diffs `date`: its published partition against the staged rows (none: a merge that
    /// empties it), each changed key to `sink`.
    pub fn diff(
        &self,
        config: &Config,
        date: Date,
        sink: &mut dyn FnMut(Change) -> bool,
    ) -> Result<DateDiff> {
        let schema = &config.schema;
        let empty = BTreeSet::new();
        let kept = self.carried.get(&date).unwrap_or(&empty);
        let before = Rows::of(self.root.sources_except(config, date, kept)?, schema);
        let after = match &self.staged {
            Some(staged) => Rows::open(&state::partition_dir(staged.path(), date), schema)?,
            None => Rows::open(Path::new(""), schema)?,
        };
        let mut diffed = diff::diff_date(date, schema, before, after, sink)?;
        if !kept.is_empty() {
            // The carried files' rows are unchanged, unread: the date's rows after, less
            // those the diff met on the rewritten side.
            let rows = self.plan.dates.iter().find(|d| d.event_date == date);
            let after = rows.map_or(0, |d| d.rows);
            diffed.unchanged = after.saturating_sub(diffed.inserted + diffed.updated);
        }
        Ok(diffed)
    }
}

/// The published files of a partition folder (a trash generation, the live one), in
/// name order, as [`diff_sources`] reads them.
pub fn folder_sources(folder: &Path) -> Result<Vec<Source>> {
    let paths = crate::store::parquet_files::parquet_paths(folder)?;
    Ok(paths.into_iter().map(Source::Path).collect())
}

/// The diff between two generations of `date` given as their files (a Delta table's
/// versions, fetched): `before` none for a date that did not exist.
pub fn diff_sources(
    config: &Config,
    date: Date,
    before: Vec<Source>,
    after: Vec<Source>,
    sink: &mut dyn FnMut(Change) -> bool,
) -> Result<DateDiff> {
    let schema = &config.schema;
    diff::diff_date(
        date,
        schema,
        Rows::of(before, schema),
        Rows::of(after, schema),
        sink,
    )
}
