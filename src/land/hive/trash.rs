//! The trash (CONTRACT.md §6.3): the generations a swap, a merge's retirement or a
//! restore replaced, at `<state_root>/trash/event_date=D/<generation>/`, each its Parquet
//! files and its [`Generation`] record (`generation.json`); the newest `keep_generations`
//! of each date are kept for `wharf restore`.
//!
//! A generation enters the trash *before* it leaves the dataset ([`keep`]), so at every
//! step of a swap, and after a failure or a crash at any of them, the replaced generation
//! is published, in the trash, or both: never only in the staging area a later run
//! empties. Its files are hard links where the trash shares the publish root's file
//! system (no bytes copied) and copies where it does not, gathered under a hidden name
//! and renamed into place with the record, so a generation shows whole or not at all.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::hive::folder::{self, RECORD};
use crate::plan::Owner;
use crate::store::{atomic, state};

/// A replaced generation's record in the trash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    pub event_date: String,
    pub owner: Option<Owner>,
    pub rows: u64,
    pub replaced_at: String,
}

/// The trash folder of `date`.
pub fn trash_dir(config: &Config, date: Date) -> PathBuf {
    config
        .state_root
        .join("trash")
        .join(format!("event_date={date}"))
}

/// The trash generations of `date`, oldest first (hidden names are copies in progress).
pub fn generations(config: &Config, date: Date) -> Result<Vec<PathBuf>> {
    let folder = trash_dir(config, date);
    let entries = match fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&folder, "list the trash", "check permissions", e)),
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

/// Reads a generation's record.
pub fn read_generation(folder: &Path) -> Result<Generation> {
    let path = folder.join(RECORD);
    let text = fs::read(&path)
        .map_err(|e| Error::io(&path, "read the generation record", "check the trash", e))?;
    serde_json::from_slice(&text).map_err(|e| Error::CorruptState {
        path,
        detail: e.to_string(),
    })
}

/// Puts the generation published at `live` into the trash as `<id>`, recorded as
/// `record`, while it is still published; returns the folder made. `None` when the
/// newest generation already is this one (same record, same files): a run failed or
/// crashed between this step and its swap, and the rerun keeps it once, not twice.
pub fn keep(
    config: &Config,
    live: &Path,
    date: Date,
    id: &str,
    record: &Generation,
) -> Result<Option<PathBuf>> {
    if let Some(newest) = generations(config, date)?.last()
        && is_kept(newest, live, record)?
    {
        return Ok(None);
    }
    let folder = trash_dir(config, date);
    let target = folder.join(id);
    let temp = folder.join(format!(".{id}.partial"));
    folder::remove_dir_all(&temp)?;
    let made = folder::link_or_copy(live, &temp)
        .and_then(|()| {
            // Its fsync of `temp` also makes the links above durable.
            let bytes = state::pretty(record, "generation record")?;
            atomic::write_atomic(&temp.join(RECORD), &bytes, 0o600)
        })
        .and_then(|()| {
            atomic::rename(&temp, &target).map_err(|e| {
                Error::io(
                    &target,
                    "rename the generation into the trash",
                    "check the disk, then rerun",
                    e,
                )
            })
        })
        .and_then(|()| atomic::sync_dir(&folder));
    if made.is_err() {
        // The generation is still published: a failed step leaves no trace here.
        let _ = fs::remove_dir_all(&temp); // the first error is the one to report
        let _ = fs::remove_dir_all(&target);
    }
    made.map(|()| Some(target))
}

/// Whether the trash generation `kept` is the generation at `live` recorded as `record`.
fn is_kept(kept: &Path, live: &Path, record: &Generation) -> Result<bool> {
    let Ok(existing) = read_generation(kept) else {
        return Ok(false);
    };
    let same = (&existing.event_date, &existing.owner, existing.rows)
        == (&record.event_date, &record.owner, record.rows);
    Ok(same && folder::same_files(kept, live)?)
}

/// Takes back a generation [`keep`] made whose swap then failed with the live partition
/// untouched (it would be a second copy of what is published). Best effort: a copy left
/// is whole, and the next [`keep`] of that date recognises it.
pub fn take_back(kept: &Path) {
    let _ = fs::remove_dir_all(kept);
}

/// Removes `date`'s oldest generations beyond `keep_generations`, and what a crashed
/// [`keep`] left under a hidden name.
pub fn prune(config: &Config, date: Date) -> Result<()> {
    let mut generations = generations(config, date)?;
    while generations.len() > config.keep_generations {
        let oldest = generations.remove(0);
        folder::remove_dir_all(&oldest)?;
    }
    let hidden = fs::read_dir(trash_dir(config, date))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'));
    for stale in hidden {
        let _ = fs::remove_dir_all(stale.path()); // best effort: a copy a crashed run left
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Config, PathBuf, Date) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::config::fixtures::orders();
        config.state_root = dir.path().join("state");
        config.keep_generations = 2;
        let live = dir.path().join("lake/event_date=2024-03-01");
        fs::create_dir_all(&live).unwrap();
        fs::write(live.join("part-00000.parquet"), b"old rows").unwrap();
        (dir, config, live, Date::parse("2024-03-01").unwrap())
    }

    fn record(rows: u64) -> Generation {
        Generation {
            event_date: "2024-03-01".into(),
            owner: None,
            rows,
            replaced_at: "g".into(),
        }
    }

    #[test]
    fn a_kept_generation_is_linked_whole_and_kept_once() {
        use std::os::unix::fs::MetadataExt;
        let (_dir, config, live, date) = setup();
        let kept = keep(&config, &live, date, "g1", &record(7))
            .unwrap()
            .unwrap();
        let inode = |p: &Path| fs::metadata(p).unwrap().ino();
        let part = "part-00000.parquet";
        assert_eq!(
            inode(&kept.join(part)),
            inode(&live.join(part)),
            "a hard link"
        );
        assert_eq!(read_generation(&kept).unwrap(), record(7));
        // A rerun after a failure before the swap: the same generation, not a second copy.
        assert_eq!(keep(&config, &live, date, "g2", &record(7)).unwrap(), None);
        assert_eq!(generations(&config, date).unwrap(), vec![kept.clone()]);
        take_back(&kept);
        assert!(generations(&config, date).unwrap().is_empty());
    }

    #[test]
    fn prune_keeps_the_newest_generations_and_drops_leftovers() {
        let (_dir, config, live, date) = setup();
        for (n, id) in ["g1", "g2", "g3"].into_iter().enumerate() {
            // A new file, as every swap brings (a published file is never rewritten).
            fs::remove_file(live.join("part-00000.parquet")).unwrap();
            fs::write(live.join("part-00000.parquet"), id).unwrap();
            keep(&config, &live, date, id, &record(n as u64))
                .unwrap()
                .unwrap();
        }
        fs::create_dir_all(trash_dir(&config, date).join(".g4.partial")).unwrap();
        prune(&config, date).unwrap();
        let names: Vec<String> = fs::read_dir(trash_dir(&config, date))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(names, ["g2", "g3"]);
        let kept =
            |id: &str| fs::read(trash_dir(&config, date).join(id).join("part-00000.parquet"));
        assert_eq!(
            (kept("g2").unwrap(), kept("g3").unwrap()),
            (b"g2".to_vec(), b"g3".to_vec())
        );
    }
}
