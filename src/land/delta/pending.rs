//! EFFECTS. `<state_root>/delta-pending.json`: the objects under a Delta table that a step
//! is about to write (a landing's uploads, a cluster's staging folder, named ending in
//! `/`) or to delete (the vacuum's pruned generations), recorded before the step, so a
//! crash in it leaves them named here. The next landing deletes those that neither the
//! current version nor the trash holds ([`commit`](super::commit)'s clean-up): a crash
//! leaves unreferenced files only for as long as no landing follows (CONTRACT.md §12.4).
//!
//! With the state root on S3, shared by machines, each landing's record is an object of
//! its own, `delta-pending/<seconds>-<pid>-<n>.json`, and another's is taken for a
//! crash's only once it is [`GRACE`] old: a landing in flight on another machine keeps
//! its uploads.

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::state;
use crate::store::state_store::StateStore;

const FILE: &str = "delta-pending.json";
const FOLDER: &str = "delta-pending";

/// How old another landing's record on S3 must be before its files are taken for a
/// crash's leftovers: longer than any landing's uploads and commit take.
pub const GRACE_SECONDS: u64 = 24 * 60 * 60;

/// This process's record on S3 (`None` until a step records), and the other landings'
/// stale records [`read`] took in, which [`clear`] removes with it.
static OWN: Mutex<Option<String>> = Mutex::new(None);
static STALE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn own(create: bool) -> Option<String> {
    let mut own = OWN.lock().unwrap_or_else(|e| e.into_inner());
    if own.is_none() && create {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        *own = Some(format!("{FOLDER}/{:012}-{pid}-{n}.json", now_seconds()));
    }
    own.clone()
}

fn parse(store: &StateStore, relative: &str) -> Result<Vec<String>> {
    match store.read(relative, "read", "check the state root")? {
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::CorruptState {
            path: store.shown(relative),
            detail: e.to_string(),
        }),
        None => Ok(Vec::new()),
    }
}

/// The recorded paths, none when there is no record (on S3: this process's record and
/// every other landing's older than [`GRACE_SECONDS`]).
pub fn read(config: &Config) -> Result<Vec<String>> {
    let store = StateStore::state(config)?;
    if !store.on_s3() {
        return parse(&store, FILE);
    }
    let mut paths = read_own(config)?;
    let mut stale = Vec::new();
    for name in store.list(FOLDER, "list the pending records")? {
        let relative = format!("{FOLDER}/{name}");
        let written = name.split('-').next().and_then(|s| s.parse::<u64>().ok());
        let old = written.is_some_and(|s| now_seconds().saturating_sub(s) >= GRACE_SECONDS);
        if old && Some(&relative) != own(false).as_ref() {
            paths.extend(parse(&store, &relative)?);
            stale.push(relative);
        }
    }
    *STALE.lock().unwrap_or_else(|e| e.into_inner()) = stale;
    Ok(paths)
}

/// This process's own record (the local record when the state root is local).
fn read_own(config: &Config) -> Result<Vec<String>> {
    let store = StateStore::state(config)?;
    match (store.on_s3(), own(false)) {
        (false, _) => parse(&store, FILE),
        (true, Some(relative)) => parse(&store, &relative),
        (true, None) => Ok(Vec::new()),
    }
}

/// Replaces the record with `paths`.
pub fn record(config: &Config, paths: &[String]) -> Result<()> {
    let store = StateStore::state(config)?;
    let relative = match store.on_s3() {
        true => own(true).unwrap_or_default(),
        false => FILE.to_owned(),
    };
    store.write(&relative, &state::pretty(&paths, "pending uploads")?)
}

/// Adds `paths` to the record, keeping what it already names (a crashed landing's).
pub fn add(config: &Config, paths: &[String]) -> Result<()> {
    let mut all = read_own(config)?;
    let known: BTreeSet<String> = all.iter().cloned().collect();
    all.extend(paths.iter().filter(|p| !known.contains(*p)).cloned());
    record(config, &all)
}

/// Takes `paths` out of the record; an emptied record is removed.
pub fn forget(config: &Config, paths: &[String]) -> Result<()> {
    let gone: BTreeSet<&String> = paths.iter().collect();
    let left: Vec<String> = read_own(config)?
        .into_iter()
        .filter(|p| !gone.contains(p))
        .collect();
    if left.is_empty() {
        clear(config)
    } else {
        record(config, &left)
    }
}

/// Removes the record (on S3, with the stale ones [`read`] took in).
pub fn clear(config: &Config) -> Result<()> {
    let store = StateStore::state(config)?;
    if !store.on_s3() {
        return store.remove(FILE, "check the state root");
    }
    let stale = std::mem::take(&mut *STALE.lock().unwrap_or_else(|e| e.into_inner()));
    let own = OWN.lock().unwrap_or_else(|e| e.into_inner()).take();
    for relative in stale.iter().chain(own.iter()) {
        store.remove(relative, "check the state root")?;
    }
    Ok(())
}
