//! EFFECTS. The lake's memory (CONTRACT.md §12.5): on a Delta lake the table's log, not
//! the state root alone, says what landed. [`recall`] brings the state root up to the
//! table's current version before a decision: the commits it has not taken in yet (all of
//! them on a new machine's empty state root, else only those since its last landing) are
//! read back ([`Table::landings`](crate::land::delta::Table::landings)), and each landing
//! of this product becomes the checkpoint of its input and the manifest's owner of the
//! dates it still holds. Deciding then reads the checkpoint as always (§5.4).
//!
//! `<state_root>/table-memory.json` ([`TableMemory`]) records the version taken in and
//! where the memory came from, so a landing on a machine that is up to date reads no
//! commit at all. A hive lake has no log: its state root stays its only memory.
//!
//! A landing of another product in the log refuses the table (§12.5's ownership, for a
//! table on S3 that has no owner marker); a landing the log no longer holds (another
//! writer's log clean-up) is counted as unknown, and an input with no checkpoint is then
//! never taken for new: the operator decides (`--reland`).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use super::commit::Found;
use super::identity::TableLanding;
use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::root::PublishRoot;
use crate::plan::{Checkpoint, Manifest, Owner, PartitionEntry};
use crate::store::state;
use crate::store::state_store::StateStore;

/// `<state_root>/table-memory.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMemory {
    pub table_url: String,
    /// The last table version whose commits this state root has taken in.
    pub version: u64,
    /// The last landing sequence (`txn.version`) of the product taken in.
    pub sequence: u64,
    /// `state_root` (it landed, or was already up to date) or `table` (checkpoints were
    /// rebuilt from the table's log).
    pub source: String,
    /// When checkpoints were last rebuilt from the table, and how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuilt_at: Option<String>,
    #[serde(default)]
    pub rebuilt: u64,
    /// Landings of the product whose commits the log no longer holds.
    #[serde(default)]
    pub unknown_landings: u64,
}

impl TableMemory {
    /// One line for `history` and `status`.
    pub fn describe(&self) -> String {
        let mut line = match (self.source.as_str(), &self.rebuilt_at) {
            ("table", Some(at)) => format!(
                "memory: rebuilt from the table's log ({}, {}), up to version {}",
                checkpoints_text(self.rebuilt as usize),
                crate::plan::landed::short_time(at),
                self.version
            ),
            _ => format!("memory: state root, up to table version {}", self.version),
        };
        if self.unknown_landings > 0 {
            line.push_str(&format!(
                "; {} landings are no longer in the log",
                self.unknown_landings
            ));
        }
        line
    }
}

fn checkpoints_text(n: usize) -> String {
    match n {
        1 => "1 checkpoint".to_owned(),
        n => format!("{n} checkpoints"),
    }
}

const FILE: &str = "table-memory.json";

/// The state root's record of what it took in of the table, `None` before its first.
pub fn read(config: &Config) -> Result<Option<TableMemory>> {
    let store = StateStore::state(config)?;
    match store.read(FILE, "read", "check its permissions")? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::CorruptState {
                path: store.shown(FILE),
                detail: e.to_string(),
            }),
        None => Ok(None),
    }
}

fn write(config: &Config, memory: &TableMemory) -> Result<()> {
    StateStore::state(config)?.write(FILE, &state::pretty(memory, "table memory")?)
}

/// What a decision reads: the manifest, and the checkpoints the table's log gave back.
pub struct Recalled {
    pub manifest: Manifest,
    rebuilt: BTreeMap<String, Checkpoint>,
    unknown: u64,
    /// What was taken from the table, for the run log; `None` when nothing was.
    pub note: Option<String>,
}

impl Recalled {
    /// The checkpoint of input `name` (§5.3): the state root's, or the table's landing.
    /// With no checkpoint while landings are unknown, nobody can tell whether `name`
    /// landed: an error, unless the operator relands it.
    pub fn checkpoint(
        &self,
        config: &Config,
        name: &str,
        reland: bool,
    ) -> Result<Option<Checkpoint>> {
        if let Some(checkpoint) = self.rebuilt.get(name) {
            return Ok(Some(checkpoint.clone()));
        }
        let local = state::read_checkpoint(config, name)?;
        if local.is_none() && self.unknown > 0 && !reland {
            return Err(Error::Table {
                url: config.lake.table_url().unwrap_or_default().to_owned(),
                action: "tell whether the input landed",
                detail: format!(
                    "the table's log no longer holds {} landings of {} (another writer's log \
                     clean-up), and the state root has no checkpoint of {name:?}",
                    self.unknown,
                    crate::cli::report::inert(&config.product)
                ),
                hint: format!(
                    "nothing was published. Restore the state root from a backup, or if \
                     {name:?} never landed, land it with `wharf run INPUT --reland`"
                ),
            });
        }
        Ok(local)
    }

    /// Every landed input's checkpoint: the state root's, and those the log gave back.
    pub fn checkpoints(&self, config: &Config) -> Result<Vec<Checkpoint>> {
        let mut all: BTreeMap<String, Checkpoint> = state::list_checkpoints(config)?
            .into_iter()
            .map(|c| (c.input_name.clone(), c))
            .collect();
        all.extend(self.rebuilt.clone());
        Ok(all.into_values().collect())
    }

    /// Where the memory of what landed comes from, for `status` and `history`: the table's
    /// log, read now, or the state root's record.
    pub fn describe(&self, config: &Config) -> Result<Option<String>> {
        if !self.rebuilt.is_empty() {
            return Ok(Some(format!(
                "memory: the table's log ({} landed inputs the state root does not hold; \
                 the next run writes their checkpoints)",
                self.rebuilt.len()
            )));
        }
        Ok(read(config)?.map(|m| m.describe()))
    }
}

/// Brings the state root's memory up to `root`'s version (writing it when `persist`;
/// a plan only reads). A hive root, or a table with no commit, is the state root's alone.
pub fn recall(config: &Config, root: &PublishRoot, persist: bool) -> Result<Recalled> {
    let manifest = state::read_manifest(config)?;
    let found = match root.found() {
        Some(found) if found.snapshot.is_some() => found,
        _ => return Ok(unchanged(manifest, 0)),
    };
    let snapshot = found.snapshot.as_ref().map(|s| s.version()).unwrap_or(0);
    let url = found.table.url().to_owned();
    let known = read(config)?.filter(|m| m.table_url == url);
    if known.as_ref().is_some_and(|m| m.version >= snapshot) {
        let unknown = known.map_or(0, |m| m.unknown_landings);
        return Ok(unchanged(manifest, unknown));
    }
    let from = known.as_ref().map_or(0, |m| m.version + 1);
    let read = found.table.landings(from, snapshot)?;
    refuse_foreign(config, found, &read.commits)?;
    let last = found
        .table
        .last_sequence(
            found.snapshot.as_ref().ok_or_else(no_snapshot)?,
            &config.product,
        )?
        .unwrap_or(0);
    // An existing state root that predates this record is trusted for what it holds.
    let empty = known.is_none() && state::list_checkpoints(config)?.is_empty();
    let mut memory = known.clone().unwrap_or_else(|| TableMemory {
        table_url: url,
        source: "state_root".to_owned(),
        ..TableMemory::default()
    });
    let ours: Vec<&TableLanding> = read
        .commits
        .iter()
        .filter(|c| c.is_landing && c.product == config.product)
        .collect();
    let seen: BTreeSet<u64> = ours.iter().filter_map(|c| c.sequence).collect();
    if known.is_some() || empty {
        let expected = last.saturating_sub(memory.sequence);
        memory.unknown_landings += expected.saturating_sub(seen.len() as u64);
    }
    let rebuilt = checkpoints(config, found, &ours)?;
    let manifest = owners(config, found, &read.commits, manifest);
    memory.version = snapshot;
    memory.sequence = memory.sequence.max(last);
    let note = (!rebuilt.is_empty()).then(|| {
        format!(
            "table: {} rebuilt from versions {from}–{snapshot} of the log",
            checkpoints_text(rebuilt.len())
        )
    });
    if note.is_some() {
        memory.source = "table".to_owned();
        memory.rebuilt = rebuilt.len() as u64;
        memory.rebuilt_at = Some(crate::land::timestamp_now());
    }
    if persist {
        for checkpoint in rebuilt.values() {
            state::write_checkpoint(config, checkpoint)?;
        }
        state::write_manifest(config, &manifest)?;
        write(config, &memory)?;
    }
    Ok(Recalled {
        manifest,
        rebuilt,
        unknown: memory.unknown_landings,
        note,
    })
}

fn unchanged(manifest: Manifest, unknown: u64) -> Recalled {
    Recalled {
        manifest,
        rebuilt: BTreeMap::new(),
        unknown,
        note: None,
    }
}

fn no_snapshot() -> Error {
    Error::internal("the table's memory was read without a version")
}

/// After this state root's own landing committed `version`: its memory now reaches that
/// version and the landing's sequence, when it reached the version before.
pub fn advance(config: &Config, url: &str, version: u64) -> Result<()> {
    let mut memory = match read(config)? {
        Some(m) if m.table_url == url && m.version + 1 == version => m,
        Some(_) => return Ok(()), // the next recall reads what came between
        None if version == 0 => TableMemory {
            table_url: url.to_owned(),
            source: "state_root".to_owned(),
            ..TableMemory::default()
        },
        None => return Ok(()),
    };
    memory.version = version;
    memory.sequence += 1;
    write(config, &memory)
}

/// A landing of another product in the log: this table is not this product's.
fn refuse_foreign(config: &Config, found: &Found, commits: &[TableLanding]) -> Result<()> {
    let Some(other) = commits
        .iter()
        .find(|c| c.is_landing && !c.product.is_empty() && c.product != config.product)
    else {
        return Ok(());
    };
    Err(Error::Table {
        url: found.table.url().to_owned(),
        action: "use the table",
        detail: format!(
            "version {} is a landing of product {:?} ({:?}); this table is that product's",
            other.version, other.product, other.input_name
        ),
        hint: "nothing was written. Give this product its own publish_root".to_owned(),
    })
}

/// The checkpoint of each input the log's landings name, where the state root has none
/// or an older one; the latest landing of a name wins.
fn checkpoints(
    config: &Config,
    found: &Found,
    ours: &[&TableLanding],
) -> Result<BTreeMap<String, Checkpoint>> {
    let mut out = BTreeMap::new();
    for landing in ours {
        if !plain_name(&landing.input_name) {
            continue; // not a name Wharf gives an input: never a path under the state root
        }
        let local = state::read_checkpoint(config, &landing.input_name)?;
        if local.is_some_and(|c| c.table_version.is_some_and(|v| v >= landing.version)) {
            continue;
        }
        out.insert(
            landing.input_name.clone(),
            checkpoint_of(config, found, landing),
        );
    }
    Ok(out)
}

fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\0'])
}

fn checkpoint_of(config: &Config, found: &Found, landing: &TableLanding) -> Checkpoint {
    let dates: BTreeSet<String> = landing.adds.iter().map(|a| a.1.to_string()).collect();
    let [accepted_rows, rejected_rows, retries, keys] = landing.counts;
    Checkpoint {
        product: config.product.clone(),
        input_name: landing.input_name.clone(),
        input_sha256: landing.input_sha256.clone(),
        accepted_rows,
        rejected_rows,
        retries,
        keys,
        event_dates: dates.into_iter().collect(),
        publish_root: found.table.url().to_owned(),
        published_at: time_of(landing.timestamp_ms),
        tool_version: landing.tool_version.clone(),
        table_version: Some(landing.version),
        parts: landing.parts.clone(),
        object: None, // the log records no ETag: `watch` confirms such an object by its bytes
    }
}

fn time_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
        .unwrap_or_default()
}

/// The manifest's owner of each date a commit of the range touched: the last commit to
/// touch it, when that is this product's and the date still holds every file it added;
/// otherwise the date has no owner Wharf knows (another writer's).
fn owners(
    config: &Config,
    found: &Found,
    commits: &[TableLanding],
    mut manifest: Manifest,
) -> Manifest {
    let mut last: BTreeMap<Date, &TableLanding> = BTreeMap::new();
    for commit in commits {
        for date in commit
            .adds
            .iter()
            .map(|a| a.1)
            .chain(commit.removed_dates.iter().copied())
        {
            last.insert(date, commit);
        }
    }
    let now = super::by_date(&found.files);
    for (date, commit) in last {
        let key = date.to_string();
        let added: Vec<&str> = commit
            .adds
            .iter()
            .filter(|a| a.1 == date)
            .map(|a| a.0.as_str())
            .collect();
        let held = now.get(&date);
        let holds =
            held.is_some_and(|(_, files)| added.iter().all(|a| files.iter().any(|f| f == a)));
        let ours = commit.product == config.product && !added.is_empty() && holds;
        let Some((rows, files)) = held.filter(|_| ours) else {
            manifest.dates.remove(&key);
            continue;
        };
        if manifest
            .dates
            .get(&key)
            .is_some_and(|e| &e.table_files == files)
        {
            continue; // the state root already says so
        }
        let entry = PartitionEntry {
            owner: Owner {
                input_name: commit.input_name.clone(),
                input_sha256: commit.input_sha256.clone(),
            },
            rows: *rows,
            files: files.len() as u64,
            published_at: time_of(commit.timestamp_ms),
            table_files: files.clone(),
            run_id: (commit.is_landing && !commit.run_id.is_empty()).then(|| commit.run_id.clone()),
        };
        manifest.dates.insert(key, entry);
    }
    manifest.product = config.product.clone();
    manifest
}
