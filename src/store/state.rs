//! Reading and writing the state a decision looks at: checkpoints (§7), the partition
//! manifest (§6.4) and [`published`], the dates that exist under the publish root now.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::input::PartDigest;
use crate::plan::{Checkpoint, Manifest, Owner, Published, PublishedDate};
use crate::store::parquet_files;
use crate::store::state_store::StateStore;

/// `<parent of publish_root>/.<publish_root name>.<what>`: a folder of Wharf's on the
/// publish root's file system, never inside the root, hidden by name from every reader.
pub fn beside_publish_root(config: &Config, what: &str) -> PathBuf {
    let root = config.lake.publish_root();
    match (root.parent(), root.file_name()) {
        (Some(parent), Some(name)) => parent.join(format!(".{}.{what}", name.to_string_lossy())),
        _ => root.join(format!(".{what}")),
    }
}

/// The folder of `date` under `root`: `event_date=YYYY-MM-DD`.
pub fn partition_dir(root: &Path, date: Date) -> PathBuf {
    root.join(format!("event_date={date}"))
}

/// The checkpoint of input `name`, `None` when there is none; an unparsable one is
/// [`Error::CorruptCheckpoint`] (§5.3: it must page a human, never look like a skip).
pub fn read_checkpoint(config: &Config, name: &str) -> Result<Option<Checkpoint>> {
    let store = StateStore::state(config)?;
    let relative = checkpoint_name(name);
    let Some(text) = store.read(&relative, "read the checkpoint", "check its permissions")? else {
        return Ok(None);
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|e| Error::CorruptCheckpoint {
            path: store.shown(&relative),
            detail: e.to_string(),
        })
}

/// `checkpoints/<input name>.json`, under the state root (CONTRACT.md §7).
fn checkpoint_name(name: &str) -> String {
    format!("checkpoints/{name}.json")
}

/// Every checkpoint of the product, by input name; an unparsable one is
/// [`Error::CorruptCheckpoint`] (§5.3).
pub fn list_checkpoints(config: &Config) -> Result<Vec<Checkpoint>> {
    let files = StateStore::state(config)?.list("checkpoints", "list the checkpoints")?;
    // Wharf's own temporary files start with a dot; the store leaves them out.
    let names: Vec<&str> = files
        .iter()
        .filter_map(|file| file.strip_suffix(".json"))
        .collect();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        out.extend(read_checkpoint(config, name)?);
    }
    Ok(out)
}

/// The parts of the set that published as `owner` (§11.3), from its checkpoint while that
/// still records this landing (same identity); empty for a single file, and when the
/// checkpoint is missing, of a later landing, or unreadable (the next landing reports
/// that; a listing still shows its dates).
pub fn owner_parts(config: &Config, owner: &Owner) -> Vec<PartDigest> {
    read_checkpoint(config, &owner.input_name)
        .ok()
        .flatten()
        .filter(|c| c.input_sha256 == owner.input_sha256)
        .map(|c| c.parts)
        .unwrap_or_default()
}

/// Writes the checkpoint atomically.
pub fn write_checkpoint(config: &Config, checkpoint: &Checkpoint) -> Result<()> {
    StateStore::state(config)?.write(
        &checkpoint_name(&checkpoint.input_name),
        &pretty(checkpoint, "checkpoint")?,
    )
}

const MANIFEST: &str = "partitions.json";

/// The manifest, empty when none was written yet.
pub fn read_manifest(config: &Config) -> Result<Manifest> {
    let store = StateStore::state(config)?;
    match store.read(MANIFEST, "read the manifest", "check its permissions")? {
        Some(text) => serde_json::from_slice(&text).map_err(|e| Error::CorruptState {
            path: store.shown(MANIFEST),
            detail: e.to_string(),
        }),
        None => Ok(Manifest {
            product: config.product.clone(),
            dates: BTreeMap::new(),
        }),
    }
}

/// Writes the manifest atomically (on S3, only over the one this process read).
pub fn write_manifest(config: &Config, manifest: &Manifest) -> Result<()> {
    StateStore::state(config)?.write(MANIFEST, &pretty(manifest, "manifest")?)
}

/// Pretty JSON with a final newline; `what` names the document for the error (Wharf's own
/// records always encode, so a failure is [`Error::Internal`], never an empty file).
pub fn pretty(value: &impl serde::Serialize, what: &str) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::internal(format!("cannot encode the {what}: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every date under the publish root, with its rows and owner (from the manifest, or
/// counted from the Parquet footers when the manifest does not know the date).
pub fn published(
    config: &Config,
    checkpoint: Option<Checkpoint>,
    manifest: &Manifest,
) -> Result<Published> {
    let mut dates = BTreeMap::new();
    for (date, folder) in list_partitions(config.lake.publish_root())? {
        let known = manifest.dates.get(&date.to_string());
        let published = match known {
            Some(entry) => PublishedDate {
                rows: entry.rows,
                owner: Some(entry.owner.clone()),
                published_at: Some(entry.published_at.clone()),
            },
            None => PublishedDate {
                rows: parquet_files::count_rows(&folder)?,
                owner: None,
                published_at: None,
            },
        };
        dates.insert(date, published);
    }
    Ok(Published { checkpoint, dates })
}

/// The `event_date=YYYY-MM-DD` folders directly under `root` (none when it is absent).
pub fn list_partitions(root: &Path) -> Result<Vec<(Date, PathBuf)>> {
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::io(
                root,
                "list the publish root",
                "check that it is a readable folder",
                e,
            ));
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(root, "list the publish root", "check the disk", e))?;
        let name = entry.file_name();
        let date = name
            .to_str()
            .and_then(|n| n.strip_prefix("event_date="))
            .and_then(Date::parse);
        if let (Some(date), true) = (date, entry.path().is_dir()) {
            out.push((date, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}
