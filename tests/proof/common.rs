//! The proof tests' own helpers over the shared kit (re-exported here): what must hold
//! after a crash ([`check_invariants`]), after a rerun ([`assert_converged`]), who holds
//! the OS lock ([`lock_holder`]), and [`TwoVersions`] of one pair of dates.

use std::fs;
use std::path::{Path, PathBuf};

pub use crate::kit::{
    CONFIG, Dataset, Product, Rng, generate, parquet_rows, read_json, text, tree,
};

/// After a crash: every partition is readable and holds exactly `old`'s rows or exactly
/// `new`'s for its date (no date missing, none extra), the manifest and every checkpoint
/// parse, and the run log's complete lines parse. Returns, per date, whether it is new.
pub fn check_invariants(product: &Product, old: &Dataset, new: &Dataset) -> Vec<bool> {
    let now = product.snapshot();
    assert_eq!(
        now.rows.keys().collect::<Vec<_>>(),
        old.rows.keys().collect::<Vec<_>>(),
        "a date went missing or appeared"
    );
    let mut state = Vec::new();
    for (date, rows) in &now.rows {
        let is_old = rows == &old.rows[date];
        let is_new = rows == &new.rows[date];
        assert!(
            is_old || is_new,
            "{date} holds neither the old rows nor the new ones ({} rows)",
            rows.len()
        );
        state.push(is_new && !is_old);
    }
    product.manifest();
    if let Ok(entries) = fs::read_dir(product.state.join("checkpoints")) {
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with('.') {
                read_json(&path);
            }
        }
    }
    if let Ok(log) = fs::read_to_string(product.state.join("runs.jsonl")) {
        for line in log.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            serde_json::from_str::<serde_json::Value>(line).expect("run log line parses");
        }
    }
    state
}

/// The dataset after a rerun equals the reference: same rows, same Parquet bytes, no
/// staging left, every date owned by `owner` in the manifest, and its checkpoint there.
pub fn assert_converged(product: &Product, reference: &Dataset, owner: &str) {
    let now = product.snapshot();
    assert_eq!(
        now.rows, reference.rows,
        "rows differ from the uninterrupted run"
    );
    assert!(
        now.files == reference.files,
        "Parquet bytes differ from the uninterrupted run"
    );
    assert!(!product.staging().exists(), "staging left behind");
    let owners = product.owners();
    assert_eq!(owners.len(), reference.rows.len());
    assert!(owners.values().all(|o| o == owner), "owners {owners:?}");
    let checkpoint = product.checkpoint(owner).expect("checkpoint written");
    assert_eq!(checkpoint["input_name"], owner);
}

/// The pid holding an OS lock (flock) on `path`, from /proc/locks, without touching
/// the lock ourselves.
pub fn lock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let inode = fs::metadata(path).ok()?.ino();
    let locks = fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let parts: Vec<&str> = line.split_whitespace().collect();
        // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:56789 0 EOF" (blocked waiters carry "->")
        let parts: Vec<&str> = parts.into_iter().filter(|p| *p != "->").collect();
        let ino = parts.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
        (parts.get(1) == Some(&"FLOCK") && ino == inode)
            .then(|| parts.get(4)?.parse().ok())
            .flatten()
    })
}

/// Two generated inputs over the same two dates, and what each publishes when landed in
/// that order on a reference product.
pub struct TwoVersions {
    _dir: tempfile::TempDir,
    pub old: PathBuf,
    pub new: PathBuf,
    pub old_data: Dataset,
    pub new_data: Dataset,
}

impl TwoVersions {
    /// `events` events each, generated with seeds `seeds`.
    pub fn generate(events: u64, seeds: (u64, u64)) -> TwoVersions {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let new = dir.path().join("new.jsonl");
        generate(&old, events, 2, seeds.0);
        generate(&new, events, 2, seeds.1);
        let reference = Product::new();
        reference.land(&old);
        let old_data = reference.snapshot();
        reference.land(&new);
        let new_data = reference.snapshot();
        TwoVersions {
            _dir: dir,
            old,
            new,
            old_data,
            new_data,
        }
    }
}
