//! The two generations of each date a past landing swapped (the History view's diff):
//! [`sides`] finds the one it replaced, kept in the trash under the landing's own
//! generation id (`trash/event_date=D/<time>-<sha256[..12]>/`, [`super::swap`]), and the
//! one it published: still live while the manifest names its input as the date's owner,
//! else in the trash under the id of the next landing or restore that replaced it.
//!
//! Reads only; a hive publish root (a Delta table keeps its generations as files of the
//! table, not folders).

use std::path::PathBuf;

use crate::config::{Config, WriteMode};
use crate::contract::Date;
use crate::error::Result;
use crate::land::runlog::RunRecord;
use crate::land::trash;
use crate::store::state;

/// The generation a landing replaced on one date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replaced {
    /// Its folder in the trash.
    Kept(PathBuf),
    /// The date was new: the landing replaced nothing.
    NewDate,
    /// It replaced one the trash no longer holds (`keep_generations` let it go).
    NotKept,
}

/// One date of a landing: what it replaced, and the folder of what it published (`None`:
/// neither live nor in the trash any more).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sides {
    pub date: Date,
    pub replaced: Replaced,
    pub published: Option<PathBuf>,
}

/// The generation id a landing at `time` of the input `sha256` swapped its dates in under.
pub(crate) fn generation_of(time: &str, sha256: &str) -> String {
    let short = sha256.get(..12).unwrap_or(sha256);
    format!("{}-{short}", time.replace([':', '-'], ""))
}

/// Every date `run` (a landing that published) wrote, with both of its generations.
pub fn sides(config: &Config, run: &RunRecord) -> Result<Vec<Sides>> {
    let id = generation_of(&run.time, &run.input_sha256);
    let manifest = state::read_manifest(config)?;
    let mut out = Vec::with_capacity(run.dates.len());
    for (index, text) in run.dates.iter().enumerate() {
        let Some(date) = Date::parse(text) else {
            continue;
        };
        let kept = trash::generations(config, date)?;
        let name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned());
        let replaced = match kept
            .iter()
            .find(|p| name(p).as_deref() == Some(id.as_str()))
        {
            Some(folder) => Replaced::Kept(folder.clone()),
            // A date swapped in with one rename was new (§6.3).
            None if swap_of(config, run, index) == Some("rename") => Replaced::NewDate,
            None => Replaced::NotKept,
        };
        // The generation kept next after this landing's id is the one it published, when
        // its record names this input; else it is live, when the manifest does.
        let ours = |owner: Option<&crate::plan::Owner>| {
            owner.is_some_and(|o| o.input_sha256 == run.input_sha256)
        };
        let later = kept
            .iter()
            .find(|p| name(p).is_some_and(|n| n > id))
            .filter(|p| trash::read_generation(p).is_ok_and(|g| ours(g.owner.as_ref())));
        let live = state::partition_dir(&config.publish_root, date);
        let published = match later {
            Some(folder) => Some(folder.clone()),
            None if live.is_dir() && ours(manifest.dates.get(text).map(|e| &e.owner)) => Some(live),
            None => None,
        };
        out.push(Sides {
            date,
            replaced,
            published,
        });
    }
    Ok(out)
}

/// How `run` swapped its `index`th date in, where its record says: the swaps follow the
/// dates (in merge mode newest first, so reversed), one each unless a merge retired one.
fn swap_of<'r>(config: &Config, run: &'r RunRecord, index: usize) -> Option<&'r str> {
    if run.swaps.len() != run.dates.len() {
        return None;
    }
    let at = match config.write_mode {
        WriteMode::Replace => index,
        WriteMode::Merge => run.dates.len() - 1 - index,
    };
    run.swaps.get(at).map(String::as_str)
}
