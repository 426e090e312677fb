//! EFFECTS. Which product owns a publish root: `.<root>.wharf-owner.json` beside the root
//! (in its parent folder) names the product, the state root that first published there
//! and a token that state root keeps (`owner-token`), so a second product configured
//! with the same root is refused instead of publishing over the first.
//!
//! The token, not the path, is the owner: a state root copied or restored elsewhere
//! with the lake keeps it. A state root without a token (new, or lost) of the product
//! the marker names adopts the marker's token, as §12.5 lets a new machine take over;
//! another product, or a state root holding another token, is refused.
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
    token: String,
}

/// The state root's own token file.
fn token_path(config: &Config) -> PathBuf {
    config.state_root.join("owner-token")
}

fn read_token(config: &Config) -> Result<Option<String>> {
    let path = token_path(config);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path, "read the owner token", HINT, e)),
    }
}

fn write_token(config: &Config, token: &str) -> Result<()> {
    crate::store::atomic::write_atomic(&token_path(config), format!("{token}\n").as_bytes(), 0o600)
}

/// A token no other state root holds: the hash of this one's path, the time and the pid.
fn new_token(config: &Config) -> String {
    use sha2::Digest;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{}\0{now}\0{}",
        config.state_root.display(),
        std::process::id()
    );
    let digest = sha2::Sha256::digest(seed.as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// The marker of `config`'s publish root, `None` for a root that is not a local path.
fn marker(config: &Config) -> Option<PathBuf> {
    let root = config.lake.local_folder()?;
    let name = root.file_name()?.to_string_lossy();
    Some(root.with_file_name(marker_name(&name)))
}

fn me(config: &Config, token: String) -> Owner {
    Owner {
        product: config.product.clone(),
        state_root: std::fs::canonicalize(&config.state_root)
            .unwrap_or_else(|_| config.state_root.clone()),
        token,
    }
}

/// Fails when another state root owns the publish root; a root without a marker is free.
pub fn check(config: &Config) -> Result<()> {
    let Some(path) = marker(config) else {
        return Ok(());
    };
    match read(&path)? {
        Some(owner) => compare(config, &path, &owner).map(|_| ()),
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
        if compare(config, &path, &owner)? == Standing::Adopts {
            write_token(config, &owner.token)?;
        }
        return Ok(());
    }
    let token = match read_token(config)? {
        Some(token) => token,
        None => {
            let token = new_token(config);
            write_token(config, &token)?;
            token
        }
    };
    let folder = path.parent().unwrap_or(Path::new("/")).to_owned();
    crate::store::atomic::create_dir_all(&folder)?;
    let fail = |e| Error::io(&path, "mark the publish root's owner", HINT, e);
    let bytes = serde_json::to_vec_pretty(&me(config, token))
        .map_err(|e| Error::internal(e.to_string()))?;
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
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => claim(config),
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

/// How this config's state root stands to the marker's owner.
#[derive(Debug, PartialEq, Eq)]
enum Standing {
    Owns,
    /// The product the marker names, from a state root without a token: it takes over.
    Adopts,
}

fn compare(config: &Config, path: &Path, owner: &Owner) -> Result<Standing> {
    match read_token(config)? {
        Some(token) if token == owner.token => return Ok(Standing::Owns),
        None if owner.product == config.product => return Ok(Standing::Adopts),
        _ => {}
    }
    Err(Error::Config {
        path: config.path.clone(),
        message: format!(
            "publish_root {} belongs to product {:?} with state root {} ({}); give this \
             product its own publish_root (if that product moved its state root here, \
             delete {} and rerun)",
            config.lake.publish_root().display(),
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

    fn config(dir: &Path, product: &str, state: &str) -> Config {
        let mut config = crate::config::fixtures::orders();
        config.product = product.to_owned();
        config.lake = crate::config::Lake::Hive(dir.join("lake"));
        config.state_root = dir.join(state);
        config
    }

    #[test]
    fn the_first_product_owns_the_root_and_another_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = config(dir.path(), "orders", "state/a");
        let other = config(dir.path(), "refunds", "state/b");
        check(&other).unwrap();
        claim(&first).unwrap();
        claim(&first).unwrap();
        check(&first).unwrap();
        let path = dir.path().join(".lake.wharf-owner.json");
        let marker = std::fs::read(&path).unwrap();
        for refused in [check(&other), claim(&other)] {
            let text = refused.unwrap_err().to_string();
            assert!(
                text.contains("state/a") && text.contains("wharf-owner"),
                "{text}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), marker);
        assert!(!other.state_root.join("owner-token").exists());
    }

    #[test]
    fn a_moved_or_new_state_root_of_the_product_takes_over_and_another_state_root_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let first = config(dir.path(), "orders", "state/a");
        claim(&first).unwrap();
        // The same product from an empty state root (a new machine): it adopts the token.
        let moved = config(dir.path(), "orders", "state/moved");
        check(&moved).unwrap();
        claim(&moved).unwrap();
        assert_eq!(read_token(&moved).unwrap(), read_token(&first).unwrap());
        // A state root that holds a token of its own is another owner.
        let rival = config(dir.path(), "orders", "state/rival");
        write_token(&rival, "not-the-owner").unwrap();
        assert!(check(&rival).is_err() && claim(&rival).is_err());
    }
}
