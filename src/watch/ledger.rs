//! [`Ledger`]: the inbox files `wharf watch` has landed (published or skipped), each by
//! its [`Fingerprint`] and the SHA-256 it landed with, kept in
//! `<state_root>/watch.json` so that neither a rescan nor a restart reads an unchanged,
//! landed file again.
//!
//! A file counts as landed without being read only when its fingerprint (device, inode,
//! size, modification and change time) is the one recorded *and* its checkpoint still
//! holds the recorded SHA-256. A producer that replaces or rewrites the file changes its
//! inode or its change time (which no user call can set back), so a changed file with
//! the same name lands again; moving its checkpoint aside does too. The ledger is a
//! cache: losing it, or a corrupt one, costs one read of each file, never a wrong skip.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::{atomic, state};

/// What identifies one version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl Fingerprint {
    /// The fingerprint of `path` itself (a symbolic link is not followed), `None` when
    /// it cannot be read.
    pub fn of(path: &Path) -> Option<Fingerprint> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let mut print = Fingerprint {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        };
        if meta.is_dir() {
            // A set (§11): the folder and every entry in it. A part rewritten in place
            // moves its own times, not the folder's, so the newest time of any entry
            // stands for the set, and the size is their sum.
            print.size = 0;
            for entry in std::fs::read_dir(path).ok()? {
                let meta = entry.ok()?.path().symlink_metadata().ok()?;
                print.size += meta.size();
                print.mtime = print.mtime.max((meta.mtime(), meta.mtime_nsec()));
                print.ctime = print.ctime.max((meta.ctime(), meta.ctime_nsec()));
            }
        }
        Some(print)
    }
}

/// One landed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    fingerprint: Fingerprint,
    input_sha256: String,
}

/// The document on disk.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Document {
    product: String,
    inputs: BTreeMap<String, Entry>,
}

/// The landed inbox files, by name.
#[derive(Debug, Default)]
pub struct Ledger {
    path: PathBuf,
    inputs: BTreeMap<String, Entry>,
}

impl Ledger {
    /// Where the ledger of `config`'s product lives.
    pub fn path(config: &Config) -> PathBuf {
        config.state_root.join("watch.json")
    }

    /// The ledger on disk; an empty one when there is none. `Err` when it cannot be read
    /// or parsed: the caller starts from [`Ledger::empty`] and says so.
    pub fn load(config: &Config) -> Result<Ledger> {
        let path = Ledger::path(config);
        let inputs = match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice::<Document>(&bytes)
                    .map_err(|e| Error::CorruptState {
                        path: path.clone(),
                        detail: format!("{e}; every inbox file is read once to rebuild it"),
                    })?
                    .inputs
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                return Err(Error::io(
                    &path,
                    "read the watch ledger",
                    "check its permissions; every inbox file is read once meanwhile",
                    e,
                ));
            }
        };
        Ok(Ledger { path, inputs })
    }

    /// A ledger that knows no file, written to `config`'s place.
    pub fn empty(config: &Config) -> Ledger {
        Ledger {
            path: Ledger::path(config),
            inputs: BTreeMap::new(),
        }
    }

    /// Whether input `name`, as `fingerprint` shows it now, is the version recorded as
    /// landed and its checkpoint still holds that version's SHA-256.
    pub fn landed(&self, config: &Config, name: &str, fingerprint: &Fingerprint) -> bool {
        let Some(entry) = self.inputs.get(name) else {
            return false;
        };
        entry.fingerprint == *fingerprint
            && state::read_checkpoint(config, name)
                .ok()
                .flatten()
                .is_some_and(|c| c.input_sha256 == entry.input_sha256)
    }

    /// Records that `name` landed as `fingerprint`, with bytes hashing to `sha256`.
    pub fn record(&mut self, name: &str, fingerprint: Fingerprint, sha256: &str) {
        let entry = Entry {
            fingerprint,
            input_sha256: sha256.to_owned(),
        };
        self.inputs.insert(name.to_owned(), entry);
    }

    /// Writes the ledger atomically, keeping only the names in `present` (files gone
    /// from the inbox are forgotten).
    pub fn save(&mut self, config: &Config, present: &[&str]) -> Result<()> {
        self.inputs
            .retain(|name, _| present.contains(&name.as_str()));
        let document = Document {
            product: config.product.clone(),
            inputs: self.inputs.clone(),
        };
        atomic::write_atomic(
            &self.path,
            &state::pretty(&document, "watch ledger")?,
            0o600,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_or_a_replacement_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let first = Fingerprint::of(&path).unwrap();
        assert_eq!(Fingerprint::of(&path), Some(first));
        // Same size, mtime set back: the change time still moves.
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"two\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let rewritten = Fingerprint::of(&path).unwrap();
        assert_eq!((rewritten.size, rewritten.mtime), (first.size, first.mtime));
        assert_ne!(rewritten, first);
        let other = dir.path().join(".b.tmp");
        std::fs::write(&other, b"two\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_ne!(Fingerprint::of(&path).unwrap().ino, first.ino);
        assert_eq!(Fingerprint::of(&dir.path().join("gone")), None);
    }
}
