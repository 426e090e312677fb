//! EFFECTS, reads only. What status and the console show of a Delta table: its current
//! version's dates with their trash ([`partitions`]), a past landing's two versions of a
//! date ([`landed_sides`]: its files at the version before the landing's commit and at
//! its commit) and a date's current files ([`sources_except`]).

use std::collections::BTreeSet;

use super::commit::{self, Found};
use super::read::TableVersion;
use super::trash as delta_trash;
use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::hive::trash::Generation;
use crate::land::lake::{DatePartition, LandedSides, PastLanding};
use crate::land::runlog::RunRecord;
use crate::store::rows::Source;
use crate::store::state;

/// The current version's dates, each with its owner and its trash.
pub fn partitions(config: &Config, found: &Found) -> Result<Vec<DatePartition>> {
    let manifest = state::read_manifest(config)?;
    let published = commit::published(found, None, &manifest);
    let trash = delta_trash::read(config, found)?;
    let mut rows = Vec::with_capacity(published.dates.len());
    for (date, now) in published.dates {
        let key = date.to_string();
        let entry = manifest.dates.get(&key);
        let kept = trash.dates.get(&key).map(Vec::as_slice).unwrap_or_default();
        rows.push(DatePartition {
            date,
            rows: now.rows,
            owner: now.owner,
            published_at: entry.map(|e| e.published_at.clone()),
            previous: kept.last().map(|g| Generation {
                event_date: key.clone(),
                owner: g.owner.clone(),
                rows: g.rows,
                replaced_at: g.replaced_at.clone(),
            }),
            generations: kept.len(),
        });
    }
    Ok(rows)
}

/// The versions of the table at `url` before and at the commit of the landing `run`.
pub fn past_landing(config: &Config, url: &str, run: &RunRecord) -> Result<PastLanding> {
    let Some(version) = run.table_version else {
        return Ok(PastLanding::Unavailable(
            "the run log names no table version for this landing, so its two versions \
             cannot be found",
        ));
    };
    let after = Box::new(commit::find_at(config, url, version)?);
    let before = match version.checked_sub(1) {
        Some(previous) => Some(Box::new(commit::find_at(config, url, previous)?)),
        None => None,
    };
    let dates = run.dates.iter().filter_map(|d| Date::parse(d)).collect();
    Ok(PastLanding::Delta {
        dates,
        before,
        after,
    })
}

/// `date`'s files at the version `before` the landing (none: it was the first commit)
/// and at its own, fetched through the table's store. A file the vacuum let go is a
/// generation no longer kept.
pub fn landed_sides(date: Date, before: Option<&Found>, after: &Found) -> Result<LandedSides> {
    let replaced = match before {
        Some(found) => TableVersion(found).sources(date)?,
        None => Some(Vec::new()),
    };
    Ok(LandedSides {
        date,
        new_date: replaced.as_ref().is_some_and(Vec::is_empty),
        replaced,
        published: TableVersion(after).sources(date)?,
    })
}

/// `date`'s files in the version `found` but those `kept` names, fetched; each must
/// still be stored.
pub fn sources_except(
    config: &Config,
    found: &Found,
    date: Date,
    kept: &BTreeSet<String>,
) -> Result<Vec<Source>> {
    let gone = || Error::CorruptState {
        path: state::partition_dir(config.lake.publish_root(), date),
        detail: "a file of the table's current version is not stored".to_owned(),
    };
    TableVersion(found)
        .sources_except(date, kept)?
        .ok_or_else(gone)
}
