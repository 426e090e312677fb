//! EFFECTS, reads only. Before a restore commits (CONTRACT.md §12.6), every file it
//! re-adds must still be stored: another writer's VACUUM may have deleted a removed
//! generation's files, and a version naming a missing file breaks every reader. A missing
//! file is [`Error::Vacuumed`], naming it, the version whose `remove` took it out of the
//! table and, when the log records one since, the VACUUM that deleted it.

use object_store::ObjectStoreExt;

use super::Table;
use crate::contract::Date;
use crate::error::{Error, Result};

impl Table {
    /// Whether the object `path` (relative to the root) is stored: one `HEAD`.
    pub fn is_stored(&self, path: &str) -> Result<bool> {
        let target = self.store_path(path)?;
        let head = self
            .objects
            .runtime
            .block_on(self.objects.store.head(&target));
        match head {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error("check a restored file is stored", e)),
        }
    }

    /// Refuses a restore of `date` at `version` when one of `paths` is no longer stored,
    /// naming the first missing one and what the log says removed it.
    pub fn check_stored(&self, date: Date, version: u64, paths: &[String]) -> Result<()> {
        for path in paths {
            if self.is_stored(path)? {
                continue;
            }
            return Err(Error::Vacuumed {
                url: self.url().to_owned(),
                date: date.to_string(),
                path: path.clone(),
                removed_by: self.removed_by(version, path)?,
                version,
            });
        }
        Ok(())
    }

    /// What the log says of `path`'s removal, reading commits from `version` back: the
    /// version whose `remove` names it, and the newest VACUUM after that.
    fn removed_by(&self, version: u64, path: &str) -> Result<String> {
        let mut vacuum: Option<(u64, String)> = None;
        for v in (0..=version).rev() {
            let Some(commit) = self.fetch_if_stored(&format!("_delta_log/{v:020}.json"))? else {
                break; // older commits are in a checkpoint: no `remove` is listed there
            };
            let text = String::from_utf8_lossy(&commit);
            let actions = text.lines().filter_map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .filter(serde_json::Value::is_object)
            });
            for action in actions {
                let operation = action["commitInfo"]["operation"].as_str();
                if let Some(op) = operation.filter(|op| op.starts_with("VACUUM")) {
                    vacuum = vacuum.or(Some((v, op.to_owned())));
                }
                if removes(&action, path) {
                    let deleted = vacuum.map_or(
                        "deleted since by another writer (a VACUUM)".to_owned(),
                        |(at, op)| {
                            format!("deleted since by another writer's {op} at version {at}")
                        },
                    );
                    return Ok(format!("removed from the table by version {v}, {deleted}"));
                }
            }
        }
        Ok("deleted by another writer (a VACUUM); the log kept no `remove` of it".into())
    }
}

/// Whether the log `action` is a `remove` of `path` (the log may percent-encode it).
fn removes(action: &serde_json::Value, path: &str) -> bool {
    action["remove"]["path"].as_str().is_some_and(|p| {
        p == path || percent_encoding::percent_decode_str(p).decode_utf8_lossy() == path
    })
}

impl crate::land::delta::commit::Found {
    /// Whether `kept` may come back to `date` in one commit over this version: no file of
    /// the version carries a deletion vector, the table is not append-only where the date
    /// has files, and every file of `kept` is still stored. Wharf never removes a file
    /// that carries a deletion vector, so a kept generation has none to re-add.
    pub fn check_restorable(
        &self,
        date: Date,
        kept: &crate::land::delta::trash::Kept,
    ) -> Result<()> {
        let url = self.table.url();
        super::protocol::vectors(url, &self.files)?;
        let Some(snapshot) = &self.snapshot else {
            return Ok(());
        };
        if let Some(refusal) = super::protocol::append_only(snapshot, &self.files, [date]) {
            return Err(Error::TableFeature {
                url: url.to_owned(),
                refusal,
            });
        }
        let paths: Vec<String> = kept.files.iter().map(|f| f.path.clone()).collect();
        self.table.check_stored(date, snapshot.version(), &paths)
    }
}
