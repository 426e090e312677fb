//! The inbox: [`list`] names every entry, closed inputs and ignored ones with the reason
//! (CONTRACT.md "input": temporary names, symbolic links never followed), oldest first.
//! [`watch`] and [`watch_with`] report file-system events, for the console and for
//! `wharf watch`.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::SystemTime;

use crate::error::{Error, Result};

/// One entry of the inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxEntry {
    pub path: PathBuf,
    pub name: String,
    pub size: u64,
    pub modified: SystemTime,
    /// `None` for a closed input; otherwise why it is ignored.
    pub ignored: Option<&'static str>,
}

/// Why a name is not a closed input, if it is not one.
pub fn temporary_name(name: &str) -> Option<&'static str> {
    if name.starts_with('.') {
        Some("hidden name (a producer's temporary file)")
    } else if [".tmp", ".part", ".partial"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        Some("temporary name (still being written)")
    } else {
        None
    }
}

/// Every entry of `inbox`, oldest first by modification time, then by name.
pub fn list(inbox: &Path) -> Result<Vec<InboxEntry>> {
    let entries = std::fs::read_dir(inbox).map_err(|e| {
        Error::io(
            inbox,
            "list the inbox",
            "create it or fix `inbox` in the config",
            e,
        )
    })?;
    let mut out = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let ignored = if meta.file_type().is_symlink() {
            Some("symbolic link (never followed)")
        } else if meta.is_dir() {
            Some("folder")
        } else if !meta.is_file() {
            Some("not a regular file")
        } else {
            temporary_name(&name)
        };
        out.push(InboxEntry {
            path: entry.path(),
            name,
            size: meta.len(),
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ignored,
        });
    }
    out.sort_by(|a, b| {
        a.modified
            .cmp(&b.modified)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

/// The closed inputs of `inbox`, oldest first.
pub fn closed(inbox: &Path) -> Result<Vec<InboxEntry>> {
    Ok(list(inbox)?
        .into_iter()
        .filter(|e| e.ignored.is_none())
        .collect())
}

/// Watches `inbox` (not recursively); each change sends `()` on `changes`. The watcher
/// stops when the returned value is dropped.
pub fn watch(inbox: &Path, changes: Sender<()>) -> Result<notify::RecommendedWatcher> {
    watch_with(inbox, move || {
        let _ = changes.send(());
    })
}

/// Watches `inbox` (not recursively), calling `on_change` on the watcher's thread for
/// each change, and for each error the watcher reports (events may have been lost, so
/// the listing is worth reading again). The watcher stops when the returned value is
/// dropped.
pub fn watch_with(
    inbox: &Path,
    on_change: impl Fn() + Send + 'static,
) -> Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut watcher =
        notify::recommended_watcher(move |_: notify::Result<notify::Event>| on_change()).map_err(
            |e| {
                Error::io(
                    inbox,
                    "watch the inbox",
                    "check inotify limits",
                    std::io::Error::other(e),
                )
            },
        )?;
    watcher
        .watch(inbox, notify::RecursiveMode::NonRecursive)
        .map_err(|e| {
            Error::io(
                inbox,
                "watch the inbox",
                "check that it exists",
                std::io::Error::other(e),
            )
        })?;
    Ok(watcher)
}
