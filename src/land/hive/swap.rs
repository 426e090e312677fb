//! Staging and swapping partitions (CONTRACT.md §6.2–6.3).
//!
//! New partitions are written under [`staging_root`]: a hidden folder *beside* the publish
//! root (same file system, so renames stay atomic), because not every hive reader skips
//! hidden folders inside the root (polars' Rust scan does not). They are fsynced, then
//! each date is swapped in ([`swap_in`]):
//!
//! - a new date: one rename;
//! - a published date: its generation first enters the trash ([`trash::keep`]: hard
//!   links, or a copy on another file system) while it is still published, then the
//!   folders are exchanged with `renameat2(RENAME_EXCHANGE)`, so a reader sees the old
//!   partition or the new one;
//! - where the kernel or file system has no exchange (some network mounts, macOS; forced
//!   in tests with `WHARF_SWAP=two_renames`, see [`failpoint`]), two renames: the old
//!   folder aside, the new one in. A reader sees the old partition, then for one rename
//!   none, then the new one; a crash between the two leaves the date absent until the
//!   rerun swaps the new one in (the old one is in the trash already).
//!
//! Because the trash step comes first, a failure or a crash at any point of a swap leaves
//! the replaced generation published or in the trash, so `restore` can bring it back.
//! The trash keeps the last `keep_generations` of each date.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::hive::folder;
use crate::land::hive::trash::{self, Generation};
use crate::plan::Owner;
use crate::store::failpoint::{self, Op};
use crate::store::{atomic, state};

/// `<parent of publish_root>/.<publish_root name>.wharf-staging`: on the publish root's
/// file system, never inside it, hidden by name.
pub fn staging_root(config: &Config) -> PathBuf {
    state::beside_publish_root(config, "wharf-staging")
}

/// A publish root that is its own mount (a dedicated volume, a bind mount) leaves no
/// place on its file system outside it to stage in: a rename from beside it fails with
/// EXDEV, and staging inside it would be read by DuckDB and polars after a crash. Refused
/// before anything under the publish root is touched.
fn refuse_mount_point(config: &Config) -> Result<()> {
    let root = config.lake.publish_root();
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

/// The staging folder of run `run_id`, emptied of anything a crashed run left.
pub fn fresh_staging(config: &Config, run_id: &str) -> Result<PathBuf> {
    refuse_mount_point(config)?;
    let root = staging_root(config);
    folder::remove_dir_all(&root)?;
    let dir = root.join(run_id);
    atomic::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes the staging folder (after a run, or what a crash left).
pub fn clean_staging(config: &Config) -> Result<()> {
    folder::remove_dir_all(&staging_root(config))
}

/// Takes `date`'s partition out of the dataset with one rename (a merge moved its last key
/// away); the generation enters the trash first, like a replaced one, so `restore` brings
/// it back.
pub fn retire(
    config: &Config,
    date: Date,
    generation_id: &str,
    owner: Option<Owner>,
    rows: u64,
) -> Result<()> {
    let live = state::partition_dir(config.lake.publish_root(), date);
    if !live.exists() {
        return Ok(());
    }
    let record = replaced(date, owner, rows, generation_id);
    let kept = trash::keep(config, &live, date, generation_id, &record)?;
    // Left in staging for [`clean_staging`]: the trash holds the generation now.
    let aside = staging_root(config).join(format!("retired-{date}"));
    atomic::create_dir_all(&staging_root(config))?;
    if let Err(e) = atomic::rename(&live, &aside) {
        kept.iter().for_each(|k| trash::take_back(k));
        return Err(Error::io(
            &live,
            "take the emptied partition out",
            "check the publish root, then rerun",
            e,
        ));
    }
    atomic::sync_dir(config.lake.publish_root())?;
    trash::prune(config, date)
}

fn replaced(date: Date, owner: Option<Owner>, rows: u64, generation_id: &str) -> Generation {
    Generation {
        event_date: date.to_string(),
        owner,
        rows,
        replaced_at: generation_id.to_owned(),
    }
}

/// Swaps the staged folder `staged` in as `date`'s partition. The generation it replaces
/// enters the trash first, recorded with `before`'s owner and rows (`None`: a folder no
/// plan knew of, not kept); its folder, left at `staged` or beside it, goes with the
/// staging area.
pub fn swap_in(
    config: &Config,
    staged: &Path,
    date: Date,
    generation_id: &str,
    before: Option<(Option<Owner>, u64)>,
) -> Result<SwapMethod> {
    atomic::create_dir_all(config.lake.publish_root())?;
    let live = state::partition_dir(config.lake.publish_root(), date);
    let io = |action, e| Error::io(&live, action, "check the publish root, then rerun", e);
    if live.exists() && folder::same_files(staged, &live)? {
        // Swapping would trash a copy of these rows as the previous owner's generation
        // (the manifest still names it), and `restore` would bring back the wrong rows.
        folder::remove_dir_all(staged)?;
        return Ok(SwapMethod::Unchanged);
    }
    if !live.exists() {
        atomic::rename(staged, &live)
            .map_err(|e| io("rename the staged partition into place", e))?;
        atomic::sync_dir(config.lake.publish_root())?;
        return Ok(SwapMethod::Rename);
    }
    let kept = match before {
        Some((owner, rows)) => {
            let record = replaced(date, owner, rows, generation_id);
            trash::keep(config, &live, date, generation_id, &record)?
        }
        None => None,
    };
    let method = match exchange(staged, &live) {
        Ok(method) => method,
        Err(failed) => {
            if failed.live_untouched {
                kept.iter().for_each(|k| trash::take_back(k));
            }
            return Err(io(failed.action, failed.error));
        }
    };
    atomic::sync_dir(config.lake.publish_root())?;
    trash::prune(config, date)?;
    Ok(method)
}

/// A swap that did not happen, or happened halfway.
struct Failed {
    action: &'static str,
    error: std::io::Error,
    /// `live` still holds the old generation (else the date is absent).
    live_untouched: bool,
}

/// Exchanges `staged` and `live`, both existing, with `renameat2(RENAME_EXCHANGE)`. Where
/// the kernel or file system has no exchange (or `WHARF_SWAP=two_renames` says to act so),
/// renames `live` aside to `staged.old`, then `staged` in: the date is absent between the
/// two renames.
fn exchange(staged: &Path, live: &Path) -> Result<SwapMethod, Failed> {
    let failed = |action, error, live_untouched| Failed {
        action,
        error,
        live_untouched,
    };
    if !failpoint::exchange_disabled() {
        failpoint::fault(Op::Rename).map_err(|e| failed("exchange the partitions", e, true))?;
        let exchanged = rustix::fs::renameat_with(
            rustix::fs::CWD,
            staged,
            rustix::fs::CWD,
            live,
            rustix::fs::RenameFlags::EXCHANGE,
        );
        match exchanged {
            Ok(()) => return Ok(SwapMethod::Exchange),
            Err(
                rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP,
            ) => {}
            Err(e) => return Err(failed("exchange the partitions", e.into(), true)),
        }
    }
    let aside = staged.with_extension("old");
    atomic::rename(live, &aside).map_err(|e| failed("rename the old partition aside", e, true))?;
    failpoint::hit("between_renames");
    if let Err(e) = atomic::rename(staged, live) {
        // Put the old generation back, so the date stays published.
        let restored = fs::rename(&aside, live).is_ok();
        return Err(failed(
            "rename the staged partition into place",
            e,
            restored,
        ));
    }
    Ok(SwapMethod::TwoRenames)
}
