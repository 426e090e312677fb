//! The inbox: [`list`] names every entry, closed inputs and ignored ones with the reason
//! (CONTRACT.md "input": temporary names, symbolic links never followed), oldest first.
//! A folder is a set (§11): open, and ignored, until its marker exists.
//! [`watch`] and [`watch_with`] report file-system events, for the console and for
//! `wharf watch`.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::SystemTime;

use crate::error::{Error, Result};
use crate::input;

/// One entry of the inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxEntry {
    pub path: PathBuf,
    pub name: String,
    /// Bytes stored; a set's over its parts.
    pub size: u64,
    /// A file's modification time; a closed set's marker's (when it closed), an open
    /// set's folder's.
    pub modified: SystemTime,
    /// `None` for a closed input; otherwise why it is ignored.
    pub ignored: Option<&'static str>,
    /// `Some` for a folder: a set.
    pub set: Option<SetEntry>,
    /// On an S3 inbox, the object's ETag (a closed set's, over its parts'): what its
    /// checkpoint records when it lands (§13.3).
    pub etag: Option<String>,
}

/// What the inbox shows of a set (§11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetEntry {
    /// Parts listed (0 while open: an open set is not read).
    pub parts: usize,
    pub open: bool,
    /// A closed set whose layout is invalid (§11.2): the error its landing reports.
    pub invalid: Option<String>,
}

/// Why an open set is not landed.
pub const OPEN_SET: &str = "open set: its marker is missing (still being written)";

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

/// Every entry of `inbox`, oldest first by modification time, then by name; a folder is
/// a set closed by `marker`.
pub fn list(inbox: &Path, marker: &str) -> Result<Vec<InboxEntry>> {
    if crate::s3_inbox::is_url(inbox) {
        let mut out = crate::s3_inbox::list::list(inbox, marker)?;
        out.sort_by(|a, b| {
            a.modified
                .cmp(&b.modified)
                .then_with(|| a.name.cmp(&b.name))
        });
        return Ok(out);
    }
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
        let name = crate::input::name_of(&entry.file_name());
        let Some(listed) = describe(&entry.path(), name, marker) else {
            continue;
        };
        out.push(listed);
    }
    out.sort_by(|a, b| {
        a.modified
            .cmp(&b.modified)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

/// The entry `path` of the inbox as [`list`] shows it; `None` when it is gone.
pub fn describe(path: &Path, name: String, marker: &str) -> Option<InboxEntry> {
    if crate::s3_inbox::is_url(path) {
        return crate::s3_inbox::list::describe(path, marker);
    }
    let meta = path.symlink_metadata().ok()?;
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let mut listed = InboxEntry {
        path: path.to_owned(),
        size: meta.len(),
        modified,
        ignored: None,
        set: None,
        name,
        etag: None,
    };
    listed.ignored = if meta.file_type().is_symlink() {
        Some("symbolic link (never followed)")
    } else if !meta.is_file() && !meta.is_dir() {
        Some("not a regular file")
    } else {
        temporary_name(&listed.name)
    };
    if meta.is_dir() && !meta.file_type().is_symlink() {
        listed.size = 0;
        let set = match input::survey(path, marker) {
            Ok(survey) => {
                listed.size = survey.parts.iter().map(|(_, _, size)| size).sum();
                listed.modified = survey.closed.unwrap_or(modified);
                SetEntry {
                    parts: survey.parts.len(),
                    open: survey.closed.is_none(),
                    invalid: None,
                }
            }
            Err(e) => SetEntry {
                parts: 0,
                open: false,
                invalid: Some(e.to_string()),
            },
        };
        if set.open {
            listed.ignored = listed.ignored.or(Some(OPEN_SET));
        }
        listed.set = Some(set);
    }
    Some(listed)
}

/// The closed inputs of `inbox`, files and sets, oldest first.
pub fn closed(inbox: &Path, marker: &str) -> Result<Vec<InboxEntry>> {
    Ok(list(inbox, marker)?
        .into_iter()
        .filter(|e| e.ignored.is_none())
        .collect())
}

/// What watches an inbox until it is dropped: the file system's events for a folder, a
/// thread listing new keys for an S3 inbox.
pub enum Watcher {
    Events(notify::RecommendedWatcher),
    Listing(crate::s3_inbox::discover::Poller),
}

/// Watches `inbox` and the sets in it; each change sends `()` on `changes`. The watcher
/// stops when the returned value is dropped.
pub fn watch(inbox: &Path, changes: Sender<()>) -> Result<Watcher> {
    watch_with(inbox, move || {
        let _ = changes.send(());
    })
}

/// Watches `inbox` and its folders (a set closes when its marker appears inside it),
/// calling `on_change` on the watcher's thread for each change (not for a read: every
/// listing and hash opens the inbox, so a reader woken by opens would wake itself
/// forever), and for each error the watcher reports (events may have been lost, so
/// the listing is worth reading again). The watcher stops when the returned value is
/// dropped.
pub fn watch_with(inbox: &Path, on_change: impl Fn() + Send + 'static) -> Result<Watcher> {
    if crate::s3_inbox::is_url(inbox) {
        let poller = crate::s3_inbox::discover::Poller::start(inbox, Box::new(on_change))?;
        return Ok(Watcher::Listing(poller));
    }
    use notify::Watcher as _;
    // A link in the inbox is never followed, nor watched through.
    let settings = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = notify::RecommendedWatcher::new(
        move |event: notify::Result<notify::Event>| {
            if event.as_ref().is_ok_and(|e| is_a_read(&e.kind)) {
                return;
            }
            on_change()
        },
        settings,
    )
    .map_err(|e| {
        Error::io(
            inbox,
            "watch the inbox",
            "check inotify limits",
            std::io::Error::other(e),
        )
    })?;
    watcher
        .watch(inbox, notify::RecursiveMode::Recursive)
        .map_err(|e| {
            Error::io(
                inbox,
                "watch the inbox",
                "check that it exists",
                std::io::Error::other(e),
            )
        })?;
    Ok(Watcher::Events(watcher))
}

/// An open, a read or a close without writing: something looked, nothing changed.
fn is_a_read(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind};
    matches!(
        kind,
        EventKind::Access(
            AccessKind::Open(_) | AccessKind::Read | AccessKind::Close(AccessMode::Read)
        )
    )
}
