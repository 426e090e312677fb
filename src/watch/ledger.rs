//! [`Ledger`]: the inbox files `wharf watch` has landed (published or skipped), each by
//! its [`Fingerprint`] and the SHA-256 it landed with, kept in
//! `<state_root>/watch.jsonl` so that neither a rescan nor a restart reads an unchanged,
//! landed file again. Each landing appends one line (constant work, however many files
//! the inbox holds); a start reads the lines, the last per name winning, and compacts
//! the file to the names still in the inbox.
//!
//! A file counts as landed without being read only when its fingerprint (device, inode,
//! size, modification and change time) is the one recorded *and* its checkpoint still
//! holds the recorded SHA-256. A producer that replaces or rewrites the file changes its
//! inode or its change time (which no user call can set back), so a changed file with
//! the same name lands again; moving its checkpoint aside does too. The ledger is a
//! cache: losing it, a torn last line or a corrupt one costs one read of each file
//! (whose checkpoint still makes it a skip, §5.4), never a wrong skip.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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

/// One line of the ledger: `name` landed as `entry`.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    name: String,
    #[serde(flatten)]
    entry: Entry,
}

/// The document of earlier versions, `watch.json`: read once, then replaced by the log.
#[derive(Debug, Default, Deserialize)]
struct Document {
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
        crate::store::state_store::scratch(config).join("watch.jsonl")
    }

    fn legacy_path(config: &Config) -> PathBuf {
        crate::store::state_store::scratch(config).join("watch.json")
    }

    /// The ledger on disk, compacted to the inbox names in `present`; an empty one when
    /// there is none. `Err` when it cannot be read or rewritten: the caller starts from
    /// [`Ledger::empty`] and says so.
    pub fn load(config: &Config, present: &[&str]) -> Result<Ledger> {
        let path = Ledger::path(config);
        let mut inputs = read_legacy(&Ledger::legacy_path(config))?;
        match std::fs::read(&path) {
            // A line that does not parse (torn by a crash) is dropped: a cache entry lost.
            Ok(bytes) => {
                for line in bytes.split(|b| *b == b'\n') {
                    if let Ok(line) = serde_json::from_slice::<Line>(line) {
                        inputs.insert(line.name, line.entry);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(unreadable(&path, e)),
        }
        inputs.retain(|name, _| present.contains(&name.as_str()));
        let ledger = Ledger { path, inputs };
        ledger.compact()?;
        let _ = std::fs::remove_file(Ledger::legacy_path(config));
        Ok(ledger)
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

    /// Records that `name` landed as `fingerprint`, with bytes hashing to `sha256`: one
    /// line appended.
    pub fn record(&mut self, name: &str, fingerprint: Fingerprint, sha256: &str) -> Result<()> {
        let entry = Entry {
            fingerprint,
            input_sha256: sha256.to_owned(),
        };
        let mut text = line_of(name, &entry)?;
        self.inputs.insert(name.to_owned(), entry);
        text.push(b'\n');
        let append = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .and_then(|mut file| file.write_all(&text));
        append.map_err(|e| {
            Error::io(
                &self.path,
                "append to the watch ledger",
                "check the disk; the file is read again after a restart",
                e,
            )
        })
    }

    /// Rewrites the file atomically with one line per known input.
    fn compact(&self) -> Result<()> {
        let mut text = Vec::new();
        for (name, entry) in &self.inputs {
            text.extend(line_of(name, entry)?);
            text.push(b'\n');
        }
        atomic::write_atomic(&self.path, &text, 0o600)
    }
}

fn line_of(name: &str, entry: &Entry) -> Result<Vec<u8>> {
    let line = Line {
        name: name.to_owned(),
        entry: entry.clone(),
    };
    serde_json::to_vec(&line)
        .map_err(|e| Error::internal(format!("cannot encode the watch ledger: {e}")))
}

/// The entries of an earlier version's `watch.json`, none when it is absent or corrupt.
fn read_legacy(path: &Path) -> Result<BTreeMap<String, Entry>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(serde_json::from_slice::<Document>(&bytes)
            .map(|d| d.inputs)
            .unwrap_or_default()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(unreadable(path, e)),
    }
}

fn unreadable(path: &Path, e: std::io::Error) -> Error {
    Error::io(
        path,
        "read the watch ledger",
        "check its permissions; every inbox file is read once meanwhile",
        e,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_landing_appends_one_line_and_a_start_compacts_to_the_inbox() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::config::fixtures::orders();
        config.state_root = dir.path().to_owned();
        let file = dir.path().join("a.jsonl");
        std::fs::write(&file, b"one\n").unwrap();
        let print = Fingerprint::of(&file).unwrap();
        let mut ledger = Ledger::load(&config, &[]).unwrap();
        ledger.record("a.jsonl", print, "aa").unwrap();
        ledger.record("b.jsonl", print, "bb").unwrap();
        let before = std::fs::read(Ledger::path(&config)).unwrap();
        ledger.record("a.jsonl", print, "cc").unwrap();
        let after = std::fs::read(Ledger::path(&config)).unwrap();
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "earlier lines are not rewritten"
        );
        assert_eq!(
            after[before.len()..]
                .iter()
                .filter(|b| **b == b'\n')
                .count(),
            1
        );
        // A torn last line (a crash mid-append) is dropped; b.jsonl left the inbox.
        let mut torn = after.clone();
        torn.extend_from_slice(b"{\"name\":\"a.js");
        std::fs::write(Ledger::path(&config), torn).unwrap();
        let reloaded = Ledger::load(&config, &["a.jsonl"]).unwrap();
        assert_eq!(reloaded.inputs.len(), 1);
        assert_eq!(reloaded.inputs["a.jsonl"].input_sha256, "cc");
        let compacted = std::fs::read_to_string(Ledger::path(&config)).unwrap();
        assert_eq!(compacted.lines().count(), 1, "{compacted}");
    }

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
