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
use crate::land::hive::trash;
use crate::land::runlog::RunRecord;
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
        let live = state::partition_dir(config.lake.publish_root(), date);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::land::hive::trash::Generation;
    use crate::plan::{Manifest, Owner, PartitionEntry};
    use std::fs;

    const D: &str = "2024-03-01";

    fn owner(sha: &str) -> Owner {
        Owner {
            input_name: format!("{sha}.jsonl"),
            input_sha256: sha.repeat(12),
        }
    }

    fn run(time: &str, sha: &str, swaps: &[&str]) -> RunRecord {
        let line = serde_json::json!({
            "time": time, "product": "orders", "input_name": format!("{sha}.jsonl"),
            "input_sha256": sha.repeat(12), "action": "published", "reason": null,
            "dates": [D], "counts": {}, "duration_ms": 1, "tool_version": "t",
            "swaps": swaps,
        });
        serde_json::from_value(line).unwrap()
    }

    /// A trash generation of `D` under `id`, recorded as `who`'s.
    fn kept(config: &Config, id: &str, who: &str) -> PathBuf {
        let folder = trash::trash_dir(config, Date::parse(D).unwrap()).join(id);
        fs::create_dir_all(&folder).unwrap();
        let record = Generation {
            event_date: D.into(),
            owner: Some(owner(who)),
            rows: 1,
            replaced_at: id.into(),
        };
        fs::write(
            folder.join("generation.json"),
            serde_json::to_vec(&record).unwrap(),
        )
        .unwrap();
        folder
    }

    fn setup(live_owner: &str) -> (tempfile::TempDir, Config, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::config::fixtures::orders();
        config.state_root = dir.path().join("state");
        config.lake = crate::config::Lake::Hive(dir.path().join("lake"));
        let live = state::partition_dir(config.lake.publish_root(), Date::parse(D).unwrap());
        fs::create_dir_all(&live).unwrap();
        let entry = PartitionEntry {
            owner: owner(live_owner),
            rows: 1,
            files: 1,
            published_at: "t".into(),
            table_files: Vec::new(),
            run_id: None,
        };
        let manifest = Manifest {
            product: "orders".into(),
            dates: [(D.to_owned(), entry)].into(),
        };
        state::write_manifest(&config, &manifest).unwrap();
        (dir, config, live)
    }

    /// a created the date, b replaced it, c replaced b's: each landing's replaced
    /// generation is the one kept under its id, its published one the next kept after it
    /// (or the live one for the newest).
    #[test]
    fn each_landing_replaced_the_generation_under_its_id_and_published_the_next() {
        let (_dir, config, live) = setup("c");
        let (a, b, c) = (
            run("2024-03-01T10:00:00.000000Z", "a", &["rename"]),
            run("2024-03-02T10:00:00.000000Z", "b", &["exchange"]),
            run("2024-03-03T10:00:00.000000Z", "c", &["exchange"]),
        );
        let id = |r: &RunRecord| generation_of(&r.time, &r.input_sha256);
        let a_published = kept(&config, &id(&b), "a");
        let b_published = kept(&config, &id(&c), "b");
        let sides = |r: &RunRecord| sides(&config, r).unwrap().remove(0);
        assert_eq!(sides(&a).replaced, Replaced::NewDate);
        assert_eq!(sides(&a).published, Some(a_published.clone()));
        assert_eq!(sides(&b).replaced, Replaced::Kept(a_published.clone()));
        assert_eq!(sides(&b).published, Some(b_published.clone()));
        assert_eq!(sides(&c).replaced, Replaced::Kept(b_published));
        assert_eq!(sides(&c).published, Some(live));
        // keep_generations let a's go: b replaced one no longer kept, a published it.
        fs::remove_dir_all(&a_published).unwrap();
        assert_eq!(sides(&b).replaced, Replaced::NotKept);
        assert_eq!(sides(&a).published, None, "b's generation is not a's");
    }

    /// Merge mode swaps newest first: a record's swaps are its dates' in reverse.
    #[test]
    fn a_merge_landings_swaps_are_read_newest_first() {
        let (_dir, mut config, _live) = setup("a");
        config.write_mode = WriteMode::Merge;
        let mut r = run("2024-03-01T10:00:00.000000Z", "a", &["exchange", "rename"]);
        r.dates = vec!["2024-03-01".into(), "2024-03-02".into()];
        assert_eq!(swap_of(&config, &r, 0), Some("rename"));
        assert_eq!(swap_of(&config, &r, 1), Some("exchange"));
        config.write_mode = WriteMode::Replace;
        assert_eq!(swap_of(&config, &r, 0), Some("exchange"));
        r.swaps.pop();
        assert_eq!(swap_of(&config, &r, 0), None, "a retired date: unknown");
    }
}
