//! EFFECTS. §6.2–6.4 for a Delta publish root (CONTRACT.md §12): the new files are put
//! under names no version references (`event_date=D/part-<generation>-<n>.parquet`), then
//! one commit removes every file of the replaced dates and adds the new ones (in merge
//! mode, only the files of each date the merge rewrote: a date it emptied gets no new
//! file); the manifest and the checkpoint follow, naming the version.
//!
//! The files get there one of two ways: the local engine stages them in a folder of the
//! state root and each is uploaded; the Spark engine's executors write them into the
//! table's own `_wharf-staging/<generation>/` folder and each is moved into place, its
//! rows read from its footer.
//!
//! What is about to be written is recorded first ([`delta_pending`]): a
//! crash or a conflict leaves files no version references, and the next landing deletes
//! exactly those it finds there that neither the current version nor the trash holds
//! (never another writer's files, never a file a kept version references), and the
//! staging folder it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use delta_kernel::SnapshotRef;

use crate::config::Config;
use crate::engine::{Engine, Progress, Staged, WrittenFile};
use crate::error::{Error, Result};
use crate::land::delta::folder::{InTable, staging_folder};
use crate::land::delta::pending as delta_pending;
use crate::land::delta::trash as delta_trash;
use crate::land::delta::{self, AddFile, CommitNote, NewFile, Table, TableFile};
use crate::land::hive::folder;
use crate::plan::{Manifest, Owner, PartitionEntry, Plan, Published, PublishedDate};
use crate::store::{atomic, failpoint, state};

/// The table as a landing found it: what planning decided against and publishing
/// commits over (the version the commit must follow).
pub struct Found {
    pub table: Table,
    pub snapshot: Option<SnapshotRef>,
    pub files: Vec<TableFile>,
}

/// Opens the table at `url` and reads its version `version` (a past landing's).
pub fn find_at(config: &Config, url: &str, version: u64) -> Result<Found> {
    let table = Table::open(url)?;
    let snapshot = table.snapshot_at(version)?;
    let files = table.files(config, &snapshot)?;
    Ok(Found {
        table,
        snapshot: Some(snapshot),
        files,
    })
}

/// Opens the table at `url` and reads its current version.
pub fn find(config: &Config, url: &str) -> Result<Found> {
    let table = Table::open(url)?;
    let snapshot = table.snapshot()?;
    let files = match &snapshot {
        Some(s) => table.files(config, s)?,
        None => Vec::new(),
    };
    Ok(Found {
        table,
        snapshot,
        files,
    })
}

/// The dates of the table's current version. A date's owner is the manifest's only while
/// the version still holds exactly the files that owner committed (§12.5): otherwise
/// another writer, or a restore, changed it.
pub fn published(
    found: &Found,
    checkpoint: Option<crate::plan::Checkpoint>,
    manifest: &Manifest,
) -> Published {
    let dates = delta::by_date(&found.files)
        .into_iter()
        .map(|(date, (rows, files))| {
            let owner = owner_of(manifest, date, &files);
            let published_at = owner
                .as_ref()
                .and_then(|_| manifest.dates.get(&date.to_string()))
                .map(|e| e.published_at.clone());
            let published = PublishedDate {
                rows,
                owner,
                published_at,
            };
            (date, published)
        })
        .collect();
    Published { checkpoint, dates }
}

/// The manifest's owner of `date`, while the table holds exactly the `files` it committed.
pub fn owner_of(
    manifest: &Manifest,
    date: crate::contract::Date,
    files: &[String],
) -> Option<Owner> {
    manifest
        .dates
        .get(&date.to_string())
        .filter(|e| e.table_files == files)
        .map(|e| e.owner.clone())
}

fn staging_dir(config: &Config) -> PathBuf {
    let scratch = crate::store::state_store::scratch(config);
    if crate::store::state_store::is_s3(&config.state_root) {
        // Two processes of one machine share the scratch folder: each stages apart.
        return scratch.join(format!(".delta-staging-{}", std::process::id()));
    }
    scratch.join(".delta-staging")
}

/// Deletes the uploads a crashed or conflicted landing recorded that neither the current
/// version nor a kept generation of the trash holds.
fn clean_pending(config: &Config, found: &Found) -> Result<()> {
    let pending = delta_pending::read(config)?;
    if pending.is_empty() {
        return Ok(());
    }
    // A crash after the commit leaves its files in the record and in a version; a
    // restore may since have moved them to the trash, which keeps them for the next one.
    let trash = delta_trash::read(config, found)?;
    let held: BTreeSet<&str> = found
        .files
        .iter()
        .map(|f| f.path.as_str())
        .chain(
            trash
                .dates
                .values()
                .flatten()
                .flat_map(|g| g.files.iter().map(|f| f.path.as_str())),
        )
        .collect();
    let (folders, files): (Vec<String>, Vec<String>) =
        pending.into_iter().partition(|p| p.ends_with('/'));
    for folder in &folders {
        found.table.delete_under(folder)?;
    }
    let stale: Vec<String> = files
        .into_iter()
        .filter(|p| !held.contains(p.as_str()))
        .collect();
    found.table.delete(&stale)?;
    delta_pending::clear(config)
}

/// The table's name for the `n`th new file of `date`.
fn table_name(generation: &str, date: crate::contract::Date, n: u64) -> String {
    format!("event_date={date}/part-{generation}-{n:05}.parquet")
}

/// The files to add, and merge mode's files that carry over (§10.4, [`Staged::carried`]).
type Uploaded = (
    Vec<AddFile>,
    BTreeMap<crate::contract::Date, Vec<(String, u64)>>,
);

/// The local engine's way: the engine stages on Wharf's disk, each file is uploaded
/// under the table's name.
fn upload_staged(
    config: &Config,
    engine: &mut dyn Engine,
    plan: &Plan,
    found: &Found,
    generation: &str,
    staging: &std::path::Path,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Uploaded> {
    folder::remove_dir_all(staging)?;
    atomic::create_dir_all(staging)?;
    let Staged { carried, .. } = engine.stage(config, plan, staging, progress)?;
    failpoint::hit("after_stage");
    let mut new_files: Vec<NewFile> = Vec::new();
    let staged: Vec<(crate::contract::Date, PathBuf)> = state::list_partitions(staging)?;
    let mut locals = Vec::new();
    for (date, dir) in &staged {
        let parts = crate::store::parquet_files::parquet_paths(dir)?;
        for (n, part) in parts.into_iter().enumerate() {
            use parquet::file::reader::FileReader;
            let reader = crate::store::parquet_files::open_reader(&part)?;
            let rows = reader.metadata().file_metadata().num_rows() as u64;
            locals.push((*date, part, n as u64, rows));
        }
    }
    for (date, part, n, rows) in &locals {
        new_files.push(NewFile {
            local: part,
            path: table_name(generation, *date, *n),
            date: *date,
            rows: *rows,
        });
    }
    let paths: Vec<String> = new_files.iter().map(|f| f.path.clone()).collect();
    delta_pending::record(config, &paths)?;
    let mut uploaded = Vec::with_capacity(new_files.len());
    for file in new_files {
        progress(Progress::Swapping { date: file.date });
        let size = found.table.upload(&file)?;
        uploaded.push(AddFile {
            path: file.path,
            date: file.date,
            rows: file.rows,
            size,
        });
    }
    Ok((uploaded, carried))
}

/// The cluster's way (CONTRACT.md §12.1): the engine's executors write into a staging
/// folder of the table itself, each file is moved to the table's name and its rows read
/// from its footer; a date whose files hold other than the plan's rows is an error, and
/// nothing is committed. `None` for an engine that stages on Wharf's disk.
fn write_in_table(
    config: &Config,
    engine: &mut dyn Engine,
    plan: &Plan,
    found: &Found,
    generation: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Option<Result<Uploaded>> {
    let folder = InTable {
        table: &found.table,
        relative: staging_folder(generation),
    };
    // Named before anything is written there, so a crash leaves it to the next landing.
    if let Err(e) = delta_pending::record(config, std::slice::from_ref(&folder.relative)) {
        return Some(Err(e));
    }
    let written = engine.stage_in_table(config, plan, &folder, progress)?;
    Some(written.and_then(|(written, carried)| {
        // A merged date's carried files hold the rest of its rows (§10.4).
        let held = carried_rows(found, &carried);
        let added = place(config, plan, &folder, generation, &written, held, progress)?;
        Ok((added, carried))
    }))
}

/// The rows of the `carried` files per date, as the version the landing found holds them.
fn carried_rows(
    found: &Found,
    carried: &crate::engine::Carried,
) -> BTreeMap<crate::contract::Date, u64> {
    let kept: BTreeSet<&str> = carried
        .values()
        .flatten()
        .map(|(p, _)| p.as_str())
        .collect();
    let mut rows = BTreeMap::new();
    for file in found
        .files
        .iter()
        .filter(|f| kept.contains(f.path.as_str()))
    {
        *rows.entry(file.date).or_default() += file.rows;
    }
    rows
}

fn place(
    config: &Config,
    plan: &Plan,
    folder: &InTable,
    generation: &str,
    written: &[WrittenFile],
    mut rows_by_date: BTreeMap<crate::contract::Date, u64>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<AddFile>> {
    failpoint::hit("after_stage");
    let table = folder.table;
    let named: Vec<String> = written
        .iter()
        .map(|file| table_name(generation, file.date, file.n))
        .collect();
    let pending: Vec<String> = std::iter::once(folder.relative.clone())
        .chain(named.iter().cloned())
        .collect();
    delta_pending::record(config, &pending)?;
    let mut added = Vec::with_capacity(written.len());
    for (file, path) in written.iter().zip(named) {
        progress(Progress::Swapping { date: file.date });
        table.move_file(&format!("{}{}", folder.relative, file.path), &path)?;
        let (rows, size) = table.rows_and_size(&path)?;
        *rows_by_date.entry(file.date).or_default() += rows;
        added.push(AddFile {
            path,
            date: file.date,
            rows,
            size,
        });
    }
    for date in &plan.dates {
        let held = rows_by_date.get(&date.event_date).copied().unwrap_or(0);
        if held != date.rows {
            return Err(Error::internal(format!(
                "the engine wrote {held} rows for {}, the plan has {}; nothing was committed",
                date.event_date, date.rows
            )));
        }
    }
    // What the cluster's writer leaves beside the data (`_SUCCESS`, checksums).
    table.delete_under(&folder.relative)?;
    Ok(added)
}

/// Stages, uploads and commits `plan`; then the manifest and the checkpoint. Returns the
/// committed version.
// One call of land::run's publish step: each argument is a piece of that run's state.
#[allow(clippy::too_many_arguments)]
pub fn publish(
    config: &Config,
    engine: &mut dyn Engine,
    plan: &Plan,
    mut manifest: Manifest,
    found: &Found,
    now: &str,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<u64> {
    let generation = crate::land::generation_id(now, plan);
    clean_pending(config, found)?;
    let staging = staging_dir(config);
    let (uploaded, carried) =
        match write_in_table(config, engine, plan, found, &generation, progress) {
            Some(written) => written?,
            None => upload_staged(config, engine, plan, found, &generation, &staging, progress)?,
        };
    let paths: Vec<String> = uploaded.iter().map(|f| f.path.clone()).collect();
    failpoint::hit("after_upload");

    let touched: BTreeSet<crate::contract::Date> =
        plan.dates.iter().map(|d| d.event_date).collect();
    // A merged date keeps the files its batch did not rewrite (§10.4).
    let kept: BTreeSet<&str> = carried
        .values()
        .flatten()
        .map(|(path, _)| path.as_str())
        .collect();
    let remove: BTreeSet<String> = found
        .files
        .iter()
        .filter(|f| touched.contains(&f.date) && !kept.contains(f.path.as_str()))
        .map(|f| f.path.clone())
        .collect();
    let note = CommitNote {
        product: &config.product,
        input_name: &plan.input_name,
        input_sha256: &plan.input_sha256,
        run_id: &plan.run_id,
        landing: Some(delta::identity::Mark {
            sequence: next_sequence(config, found)?,
            parts: &plan.parts,
            reland: plan.reland,
        }),
        metrics: vec![
            ("acceptedRows", plan.counts.accepted),
            ("rejectedRows", plan.counts.rejected),
            ("retries", plan.counts.retries),
            ("keys", plan.counts.keys),
            ("numAddedFiles", uploaded.len() as u64),
            ("numRemovedFiles", remove.len() as u64),
        ],
    };
    // §12.6: the replaced generations enter the trash before the commit removes them.
    let mut trash = delta_trash::read(config, found)?;
    delta_trash::keep(&mut trash, found, &manifest, touched.iter().copied(), now);
    // A trash record another machine changed meanwhile (state on S3) fails like a lost
    // commit: the uploads are taken back.
    let committed = delta_trash::write(config, &trash).and_then(|()| {
        failpoint::hit("after_trash");
        found
            .table
            .commit(config, found.snapshot.as_ref(), &remove, &uploaded, &note)
    });
    let version = match committed {
        Ok(version) => version,
        Err(e) => {
            // Nothing references these: take them back now (the pending record does it
            // later if this fails too).
            if found.table.delete(&paths).is_ok() {
                let _ = delta_pending::clear(config);
            }
            let _ = folder::remove_dir_all(&staging);
            return Err(e);
        }
    };
    failpoint::hit("after_commit");
    delta_pending::clear(config)?;
    folder::remove_dir_all(&staging)?;
    // A checkpoint is an optimisation of reading: its failure is not the landing's.
    let _ = found.table.checkpoint_if_due(config, version);

    let mut by_date: BTreeMap<crate::contract::Date, Vec<String>> = BTreeMap::new();
    for (date, files) in &carried {
        let paths = files.iter().map(|(path, _)| path.clone());
        by_date.entry(*date).or_default().extend(paths);
    }
    for file in &uploaded {
        by_date
            .entry(file.date)
            .or_default()
            .push(file.path.clone());
    }
    for date_plan in &plan.dates {
        let key = date_plan.event_date.to_string();
        let mut files = by_date.remove(&date_plan.event_date).unwrap_or_default();
        files.sort(); // as the version lists them (§12.5's owner compares the two)
        if files.is_empty() {
            manifest.dates.remove(&key);
            continue;
        }
        manifest.dates.insert(
            key,
            PartitionEntry {
                owner: Owner {
                    input_name: plan.input_name.clone(),
                    input_sha256: plan.input_sha256.clone(),
                },
                rows: date_plan.rows,
                files: files.len() as u64,
                published_at: now.to_owned(),
                table_files: files,
                run_id: Some(plan.run_id.clone()),
            },
        );
    }
    state::write_manifest(config, &manifest)?;
    failpoint::hit("after_manifest");
    // The vacuum is housekeeping, like the checkpoint: the commit stands whatever it does,
    // and a failure leaves unreferenced files, never a record naming deleted ones.
    let _ = delta_trash::settle(config, found, &mut trash, (&remove, &uploaded));
    Ok(version)
}

/// The landing's sequence (§12.2): one past the last the table's `txn` records for the
/// product, 1 for its first landing. A state root that took in the version found knows
/// it without reading the log again.
fn next_sequence(config: &Config, found: &Found) -> Result<u64> {
    let Some(snapshot) = &found.snapshot else {
        return Ok(1);
    };
    let memory = crate::land::delta::memory::read(config)?;
    let current =
        memory.filter(|m| m.table_url == found.table.url() && m.version == snapshot.version());
    let last = match current {
        Some(memory) => memory.sequence,
        None => found
            .table
            .last_sequence(snapshot, &config.product)?
            .unwrap_or(0),
    };
    Ok(last + 1)
}
