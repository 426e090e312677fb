//! EFFECTS. Which product owns a publish root: `.<root>.wharf-owner.json` beside the root
//! (in its parent folder) names the product and the state root that first published
//! there, so a second product configured with the same root is refused instead of
//! publishing over the first.
//!
//! Beside, not inside: readers scan the root whole (polars refuses a folder holding a
//! file that is not Parquet), and a Delta table's folder holds only what its log and
//! `VACUUM` expect. A table on S3 is not marked: its log's `commitInfo` names the product
//! of every landing (docs/operations.md, "Hostile input").

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};

/// The marker's file name beside a publish root named `root`.
pub fn marker_name(root: &str) -> String {
    format!(".{root}.wharf-owner.json")
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Owner {
    product: String,
    state_root: PathBuf,
}

/// The marker of `config`'s publish root, `None` for a root that is not a local path.
fn marker(config: &Config) -> Option<PathBuf> {
    let remote = config
        .table_url
        .as_deref()
        .is_some_and(|u| !u.starts_with("file://"));
    let name = config.publish_root.file_name()?.to_string_lossy();
    (!remote).then(|| config.publish_root.with_file_name(marker_name(&name)))
}

fn me(config: &Config) -> Owner {
    Owner {
        product: config.product.clone(),
        state_root: std::fs::canonicalize(&config.state_root)
            .unwrap_or_else(|_| config.state_root.clone()),
    }
}

/// Fails when another state root owns the publish root; a root without a marker is free.
pub fn check(config: &Config) -> Result<()> {
    let Some(path) = marker(config) else {
        return Ok(());
    };
    match read(&path)? {
        Some(owner) => compare(config, &path, &owner),
        None => Ok(()),
    }
}

/// [`check`], then marks an unmarked publish root as this product's (before its first
/// publish). Two products racing to mark it: one creates the file, the other reads it.
pub fn claim(config: &Config) -> Result<()> {
    let Some(path) = marker(config) else {
        return Ok(());
    };
    if let Some(owner) = read(&path)? {
        return compare(config, &path, &owner);
    }
    let folder = path.parent().unwrap_or(Path::new("/")).to_owned();
    crate::store::atomic::create_dir_all(&folder)?;
    let fail = |e| Error::io(&path, "mark the publish root's owner", HINT, e);
    let bytes =
        serde_json::to_vec_pretty(&me(config)).map_err(|e| Error::internal(e.to_string()))?;
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match created {
        Ok(mut file) => {
            // Readable by the lake's readers, as its data files are.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o644))
                .and_then(|()| file.write_all(&bytes))
                .and_then(|()| file.sync_all())
                .map_err(fail)?;
            crate::store::atomic::sync_dir(&folder)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => check(config),
        Err(e) => Err(fail(e)),
    }
}

const HINT: &str = "check the publish root's permissions, then rerun";

fn read(path: &Path) -> Result<Option<Owner>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::CorruptState {
                path: path.to_owned(),
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, "read the publish root's owner", HINT, e)),
    }
}

fn compare(config: &Config, path: &Path, owner: &Owner) -> Result<()> {
    if owner.state_root == me(config).state_root {
        return Ok(());
    }
    Err(Error::Config {
        path: config.path.clone(),
        message: format!(
            "publish_root {} belongs to product {:?} with state root {} ({}); give this \
             product its own publish_root (if that product moved its state root here, \
             delete {} and rerun)",
            config.publish_root.display(),
            owner.product,
            owner.state_root.display(),
            path.display(),
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &Path, state: &str) -> Config {
        let mut config = crate::config::fixtures::orders();
        config.publish_root = dir.join("lake");
        config.state_root = dir.join(state);
        config
    }

    #[test]
    fn the_first_product_owns_the_root_and_a_second_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = config(dir.path(), "state/a");
        let second = config(dir.path(), "state/b");
        check(&second).unwrap();
        claim(&first).unwrap();
        claim(&first).unwrap();
        check(&first).unwrap();
        let path = dir.path().join(".lake.wharf-owner.json");
        let marker = std::fs::read(&path).unwrap();
        for refused in [check(&second), claim(&second)] {
            let text = refused.unwrap_err().to_string();
            assert!(
                text.contains("state/a") && text.contains("wharf-owner"),
                "{text}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), marker);
    }
}
