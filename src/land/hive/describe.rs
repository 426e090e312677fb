//! EFFECTS, reads only. What status and the console show of hive folders: each date
//! under the publish root with its newest trash generation ([`partitions`]), a past
//! landing's two folders of a date ([`landed_sides`]) and a date's live files
//! ([`sources_except`]).

use std::collections::BTreeSet;
use std::path::Path;

use super::generations::{Replaced, Sides};
use super::trash;
use crate::config::Config;
use crate::contract::Date;
use crate::error::Result;
use crate::land::lake::{DatePartition, LandedSides};
use crate::land::preview::folder_sources;
use crate::store::parquet_files::parquet_paths;
use crate::store::rows::Source;
use crate::store::state;

/// Every published date with its owner and its newest trash generation.
pub fn partitions(config: &Config) -> Result<Vec<DatePartition>> {
    let manifest = state::read_manifest(config)?;
    let published = state::published(config, None, &manifest)?;
    let mut rows = Vec::with_capacity(published.dates.len());
    for (date, now) in published.dates {
        let entry = manifest.dates.get(&date.to_string());
        let generations = trash::generations(config, date)?;
        let previous = match generations.last() {
            Some(folder) => Some(trash::read_generation(folder)?),
            None => None,
        };
        rows.push(DatePartition {
            date,
            rows: now.rows,
            owner: now.owner,
            published_at: entry.map(|e| e.published_at.clone()),
            previous,
            generations: generations.len(),
        });
    }
    Ok(rows)
}

/// One date of a past landing: the folder it replaced (kept in the trash) and the one it
/// published (live, or in the trash once replaced in turn).
pub fn landed_sides(side: &Sides) -> Result<LandedSides> {
    let replaced = match &side.replaced {
        Replaced::Kept(folder) => Some(folder_sources(folder)?),
        Replaced::NewDate => Some(Vec::new()),
        Replaced::NotKept => None,
    };
    let published = side.published.as_deref().map(folder_sources);
    Ok(LandedSides {
        date: side.date,
        replaced,
        new_date: side.replaced == Replaced::NewDate,
        published: published.transpose()?,
    })
}

/// `date`'s live files but those `kept` names (`event_date=D/<name>`); none when the date
/// is not published.
pub fn sources_except(config: &Config, date: Date, kept: &BTreeSet<String>) -> Result<Vec<Source>> {
    let folder = state::partition_dir(config.lake.publish_root(), date);
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let carried =
        |p: &Path| name(p).is_some_and(|n| kept.contains(&format!("event_date={date}/{n}")));
    let paths = parquet_paths(&folder)?;
    Ok(paths
        .into_iter()
        .filter(|p| !carried(p))
        .map(Source::Path)
        .collect())
}
