//! Staging and swapping partitions (CONTRACT.md §6.2–6.3).
//!
//! New partitions are written under [`staging_root`]: a hidden folder *beside* the publish
//! root (same file system, so renames stay atomic), because not every hive reader skips
//! hidden folders inside the root (polars' Rust scan does not). They are fsynced, then each date is swapped in with
//! `renameat2(RENAME_EXCHANGE)` where the kernel has it, so a reader sees the old
//! partition or the new one. The replaced generation moves to
//! `<state_root>/trash/event_date=D/<generation>/` with a `generation.json`, keeping the
//! last `keep_generations`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::failpoint::{self, Op};
use crate::land::{atomic, state};
use crate::plan::Owner;

/// `<parent of publish_root>/.<publish_root name>.wharf-staging`: on the publish root's
/// file system, never inside it, hidden by name.
pub fn staging_root(config: &Config) -> PathBuf {
    let root = &config.publish_root;
    match (root.parent(), root.file_name()) {
        (Some(parent), Some(name)) => {
            parent.join(format!(".{}.wharf-staging", name.to_string_lossy()))
        }
        _ => root.join(".wharf-staging"),
    }
}

/// A publish root that is its own mount (a dedicated volume, a bind mount) leaves no
/// place on its file system outside it to stage in: a rename from beside it fails with
/// EXDEV, and staging inside it would be read by DuckDB and polars after a crash. Refused
/// before anything under the publish root is touched.
fn refuse_mount_point(config: &Config) -> Result<()> {
    let root = &config.publish_root;
    match root.parent() {
        Some(parent) if is_mount_point(root, parent) => Err(Error::Config {
            path: config.path.clone(),
            message: format!(
                "publish_root {} is a mount point, so partitions cannot be staged on its \
                 file system outside it; set publish_root to a folder inside the mount \
                 (e.g. {}/{}). Nothing was published",
                root.display(),
                root.display(),
                config.product
            ),
        }),
        _ => Ok(()),
    }
}

/// Whether `root` exists on another mount than `parent` (renames between them fail).
fn is_mount_point(root: &Path, parent: &Path) -> bool {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    let mount = |path: &Path| {
        statx(CWD, path, AtFlags::empty(), StatxFlags::MNT_ID)
            .ok()
            .map(|s| (s.stx_mnt_id, s.stx_dev_major, s.stx_dev_minor))
    };
    matches!((mount(root), mount(parent)), (Some(a), Some(b)) if a != b)
}

/// How a date was swapped in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapMethod {
    /// The date was new: one rename.
    Rename,
    /// An atomic exchange of the old and new folders.
    Exchange,
    /// The kernel has no exchange: old folder renamed aside, new one renamed in.
    TwoRenames,
    /// The live partition already held these exact files (a rerun after a crash
    /// between the swaps and the manifest): nothing was swapped or trashed.
    Unchanged,
}

impl SwapMethod {
    pub fn code(self) -> &'static str {
        match self {
            SwapMethod::Rename => "rename",
            SwapMethod::Exchange => "exchange",
            SwapMethod::TwoRenames => "two_renames",
            SwapMethod::Unchanged => "unchanged",
        }
    }
}

/// A replaced generation's record in the trash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    pub event_date: String,
    pub owner: Option<Owner>,
    pub rows: u64,
    pub replaced_at: String,
}

/// The staging folder of run `run_id`, emptied of anything a crashed run left.
pub fn fresh_staging(config: &Config, run_id: &str) -> Result<PathBuf> {
    refuse_mount_point(config)?;
    let root = staging_root(config);
    remove_dir_all(&root)?;
    let dir = root.join(run_id);
    atomic::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes the staging folder (after a run, or what a crash left).
pub fn clean_staging(config: &Config) -> Result<()> {
    remove_dir_all(&staging_root(config))
}

fn remove_dir_all(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(
            path,
            "remove the folder",
            "check permissions, then rerun",
            e,
        )),
        _ => Ok(()),
    }
}

/// Takes `date`'s partition out of the dataset with one rename (a merge moved its last key
/// away); the generation goes to the trash like a replaced one, so `restore` brings it back.
pub fn retire(
    config: &Config,
    date: Date,
    generation_id: &str,
    owner: Option<Owner>,
    rows: u64,
) -> Result<()> {
    let live = state::partition_dir(&config.publish_root, date);
    if !live.exists() {
        return Ok(());
    }
    let aside = staging_root(config).join(format!("retired-{date}"));
    atomic::create_dir_all(&staging_root(config))?;
    atomic::rename(&live, &aside).map_err(|e| {
        Error::io(
            &live,
            "take the emptied partition out",
            "check the publish root, then rerun",
            e,
        )
    })?;
    atomic::sync_dir(&config.publish_root)?;
    let record = Generation {
        event_date: date.to_string(),
        owner,
        rows,
        replaced_at: generation_id.to_owned(),
    };
    to_trash(config, &aside, date, generation_id, &record)
}

/// Swaps the staged folder `staged` in as `date`'s partition. The generation it replaces
/// (if any) moves to the trash, recorded with `owner_before` and `rows_before`.
pub fn swap_in(
    config: &Config,
    staged: &Path,
    date: Date,
    generation_id: &str,
    before: Option<(Option<Owner>, u64)>,
) -> Result<SwapMethod> {
    atomic::create_dir_all(&config.publish_root)?;
    let live = state::partition_dir(&config.publish_root, date);
    let io = |action, e| Error::io(&live, action, "check the publish root, then rerun", e);
    if live.exists() && same_files(staged, &live)? {
        // Swapping would trash a copy of these rows as the previous owner's generation
        // (the manifest still names it), and `restore` would bring back the wrong rows.
        remove_dir_all(staged)?;
        return Ok(SwapMethod::Unchanged);
    }
    let method = if !live.exists() {
        atomic::rename(staged, &live)
            .map_err(|e| io("rename the staged partition into place", e))?;
        SwapMethod::Rename
    } else {
        if let Err(e) = failpoint::fault(Op::Rename) {
            return Err(io("exchange the partitions", e));
        }
        let exchanged = rustix::fs::renameat_with(
            rustix::fs::CWD,
            staged,
            rustix::fs::CWD,
            &live,
            rustix::fs::RenameFlags::EXCHANGE,
        );
        match exchanged {
            Ok(()) => SwapMethod::Exchange,
            Err(
                rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP,
            ) => {
                let aside = staged.with_extension("old");
                atomic::rename(&live, &aside)
                    .map_err(|e| io("rename the old partition aside", e))?;
                atomic::rename(staged, &live)
                    .map_err(|e| io("rename the staged partition into place", e))?;
                atomic::rename(&aside, staged)
                    .map_err(|e| io("rename the old partition back to staging", e))?;
                SwapMethod::TwoRenames
            }
            Err(e) => return Err(io("exchange the partitions", e.into())),
        }
    };
    atomic::sync_dir(&config.publish_root)?;
    if let Some((owner, rows)) = before {
        // After an exchange (or the fallback), `staged` holds the replaced generation.
        let record = Generation {
            event_date: date.to_string(),
            owner,
            rows,
            replaced_at: generation_id.to_owned(),
        };
        to_trash(config, staged, date, generation_id, &record)?;
    }
    Ok(method)
}

/// Whether folders `a` and `b` hold the same file names with the same bytes.
fn same_files(a: &Path, b: &Path) -> Result<bool> {
    use std::io::Read;
    let names = |dir: &Path| -> Result<Vec<(std::ffi::OsString, u64)>> {
        let entries = fs::read_dir(dir)
            .map_err(|e| Error::io(dir, "list the partition", "check permissions", e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir, "list the partition", "check", e))?;
            let len = entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
            out.push((entry.file_name(), len));
        }
        out.sort();
        Ok(out)
    };
    let listing = names(a)?;
    if listing != names(b)? {
        return Ok(false);
    }
    let (mut left, mut right) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    for (name, _) in &listing {
        let open = |dir: &Path| {
            fs::File::open(dir.join(name))
                .map_err(|e| Error::io(&dir.join(name), "read", "check permissions", e))
        };
        let (mut x, mut y) = (open(a)?, open(b)?);
        loop {
            let n = x
                .read(&mut left)
                .map_err(|e| Error::io(a, "read", "check the disk", e))?;
            if n == 0 {
                break;
            }
            y.read_exact(&mut right[..n])
                .map_err(|e| Error::io(b, "read", "check the disk", e))?;
            if left[..n] != right[..n] {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The trash folder of `date`.
pub fn trash_dir(config: &Config, date: Date) -> PathBuf {
    config
        .state_root
        .join("trash")
        .join(format!("event_date={date}"))
}

/// Moves the replaced generation at `from` into the trash and prunes old generations.
/// Its record goes into `from` first, so a generation shows in the trash whole (files and
/// `generation.json`) or not at all.
fn to_trash(config: &Config, from: &Path, date: Date, id: &str, record: &Generation) -> Result<()> {
    let folder = trash_dir(config, date);
    atomic::create_dir_all(&folder)?;
    atomic::write_atomic(&from.join("generation.json"), &state::pretty(record, "generation record")?, 0o644)?;
    move_dir(from, &folder.join(id))?;
    atomic::sync_dir(&folder)?;
    let mut generations = generations(config, date)?;
    while generations.len() > config.keep_generations {
        let oldest = generations.remove(0);
        remove_dir_all(&oldest)?;
    }
    for stale in hidden_entries(&folder) {
        let _ = fs::remove_dir_all(&stale); // best effort: a copy a crashed run left
    }
    Ok(())
}

/// The trash generations of `date`, oldest first (hidden names are copies in progress).
pub fn generations(config: &Config, date: Date) -> Result<Vec<PathBuf>> {
    let folder = trash_dir(config, date);
    let entries = match fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&folder, "list the trash", "check permissions", e)),
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

/// The entries of `folder` whose names start with `.`.
fn hidden_entries(folder: &Path) -> Vec<PathBuf> {
    fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect()
}

/// Reads a generation's record.
pub fn read_generation(folder: &Path) -> Result<Generation> {
    let path = folder.join("generation.json");
    let text = fs::read(&path)
        .map_err(|e| Error::io(&path, "read the generation record", "check the trash", e))?;
    serde_json::from_slice(&text).map_err(|e| Error::CorruptState {
        path,
        detail: e.to_string(),
    })
}

/// Renames `from` to `to`, copying across file systems when a rename cannot. A copy is
/// made under a hidden temporary name and renamed to `to` only once complete and
/// fsynced, so a full disk or a crash never leaves a half-copied folder under `to`'s name.
pub fn move_dir(from: &Path, to: &Path) -> Result<()> {
    match atomic::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) => {
            let name = to.file_name().unwrap_or_default().to_string_lossy();
            let temp = to.with_file_name(format!(".{name}.partial"));
            remove_dir_all(&temp)?;
            let copied = copy_dir(from, &temp).and_then(|()| {
                atomic::rename(&temp, to).map_err(|e| {
                    Error::io(
                        to,
                        "rename the copied folder into place",
                        "check the disk",
                        e,
                    )
                })
            });
            if copied.is_err() {
                let _ = fs::remove_dir_all(&temp); // the copy's error is the one to report
            }
            copied?;
            atomic::sync_dir(to.parent().unwrap_or(Path::new(".")))?;
            remove_dir_all(from)
        }
        Err(e) => Err(Error::io(
            from,
            "move the folder",
            "check permissions, then rerun",
            e,
        )),
    }
}

/// Copies the files of `from` (one level, as partitions are) into a new folder `to`,
/// fsyncing each file and the folder.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    atomic::create_dir_all(to)?;
    let entries = fs::read_dir(from)
        .map_err(|e| Error::io(from, "list the folder", "check permissions", e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(from, "list the folder", "check the disk", e))?;
        let target = to.join(entry.file_name());
        failpoint::fault(Op::Write)
            .and_then(|()| fs::copy(entry.path(), &target))
            .and_then(|_| atomic::sync_file(&fs::File::open(&target)?))
            .map_err(|e| {
                Error::io(
                    &target,
                    "copy the file",
                    "check free space and the disk, then rerun",
                    e,
                )
            })?;
    }
    atomic::sync_dir(to)
}
