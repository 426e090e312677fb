//! Where each key lives, for merge mode (CONTRACT.md §10.5): `<state_root>/keys.json`
//! holds, per published date, the manifest's `published_at` it was taken at and the keys
//! on that date. A date whose entry is missing or stale (replaced, restored, written by
//! hand, or on a Delta table another writer changed) is rebuilt from its published
//! files, so the index can always be rebuilt.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::contract::{Date, Value};
use crate::error::{Error, Result};
use crate::plan::Manifest;
use crate::store::atomic;
use crate::store::dataset::Dataset;

/// A key as stored in the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
enum StoredKey {
    Int(i64),
    Str(String),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct IndexedDate {
    published_at: String,
    keys: Vec<StoredKey>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct KeyIndex {
    dates: BTreeMap<String, IndexedDate>,
}

fn path(config: &Config) -> PathBuf {
    config.state_root.join("keys.json")
}

fn read(config: &Config) -> Result<KeyIndex> {
    let path = path(config);
    match std::fs::read(&path) {
        Ok(text) => serde_json::from_slice(&text).map_err(|e| Error::CorruptState {
            path,
            detail: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KeyIndex::default()),
        Err(e) => Err(Error::io(
            &path,
            "read the key index",
            "check its permissions",
            e,
        )),
    }
}

/// The entries of the index that still describe their date: taken at the manifest's
/// record of it, while `dataset` still holds what that record says.
fn valid_entries(
    config: &Config,
    manifest: &Manifest,
    dataset: &dyn Dataset,
) -> Result<BTreeMap<String, IndexedDate>> {
    let mut index = read(config)?;
    index.dates.retain(|date, entry| {
        let recorded = manifest.dates.get(date);
        let holds = |m: &crate::plan::PartitionEntry| {
            Date::parse(date).is_some_and(|d| dataset.holds_as_recorded(d, m))
        };
        recorded.is_some_and(|m| m.published_at == entry.published_at && holds(m))
    });
    Ok(index.dates)
}

/// Every published key and the dates it lives on (two only after a crash mid-merge).
pub fn load(
    config: &Config,
    manifest: &Manifest,
    dataset: &dyn Dataset,
) -> Result<HashMap<Value, Vec<Date>>> {
    let valid = valid_entries(config, manifest, dataset)?;
    let mut out = HashMap::new();
    for date in dataset.dates()? {
        match valid.get(&date.to_string()) {
            Some(entry) => {
                for key in &entry.keys {
                    out.entry(to_value(key)).or_insert_with(Vec::new).push(date);
                }
            }
            None => {
                for row in dataset.rows(date, &config.schema)? {
                    out.entry(row[config.schema.key].clone())
                        .or_insert_with(Vec::new)
                        .push(date);
                }
            }
        }
    }
    Ok(out)
}

/// Writes the index after a merge rewrote `written` (each date's keys, sorted) at `now`.
pub fn write(
    config: &Config,
    manifest_before: &Manifest,
    dataset_before: &dyn Dataset,
    written: &BTreeMap<Date, Vec<Value>>,
    now: &str,
) -> Result<()> {
    let mut dates = valid_entries(config, manifest_before, dataset_before)?;
    for (date, keys) in written {
        let keys = keys.iter().filter_map(to_stored).collect();
        dates.insert(
            date.to_string(),
            IndexedDate {
                published_at: now.to_owned(),
                keys,
            },
        );
    }
    let bytes = serde_json::to_vec(&KeyIndex { dates })
        .map_err(|e| Error::internal(format!("cannot encode the key index: {e}")))?;
    atomic::write_atomic(&path(config), &bytes, 0o600)
}

fn to_value(key: &StoredKey) -> Value {
    match key {
        StoredKey::Int(n) => Value::Int(*n),
        StoredKey::Str(s) => Value::Str(s.as_str().into()),
    }
}

fn to_stored(key: &Value) -> Option<StoredKey> {
    match key {
        Value::Int(n) => Some(StoredKey::Int(*n)),
        Value::Str(s) => Some(StoredKey::Str(s.to_string())),
        _ => None,
    }
}
