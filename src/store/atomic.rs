//! Durable file-system steps: [`write_atomic`] (temp file, fsync, rename, fsync folder)
//! and [`sync_dir`]; [`write_all`], [`sync_file`] and [`rename`] are the plain calls with
//! the test-only fault hook ([`failpoint::fault`]) in front. Every published or state
//! file goes through these.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::store::failpoint::{self, Op};

/// Writes `bytes` to `path` so a reader or a crash sees the old file or the new one,
/// never a part. The file is created with mode `mode`.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    write_atomic_with(path, mode, |file| write_all(file, bytes))
}

/// [`write_atomic`] of what `fill` writes into the file (through [`write_all`]), for a
/// file too large to hold whole.
pub fn write_atomic_with(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    // A file only its owner reads goes in folders only its owner opens.
    if mode & 0o077 == 0 {
        create_private_dir_all(folder)?;
    } else {
        create_dir_all(folder)?;
    }
    // A short temporary name: one derived from the file's name (an input's name, for a
    // checkpoint) could exceed NAME_MAX and fail after the partitions were swapped.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = folder.join(format!(".wharf-{}-{n}.tmp", std::process::id()));
    let io = |action, e| {
        Error::io(
            &temp,
            action,
            "check the disk and permissions, then rerun",
            e,
        )
    };
    let mut file = create(&temp, mode).map_err(|e| io("create a temporary file", e))?;
    let written = fill(&mut file)
        .map_err(|e| io("write", e))
        .and_then(|()| sync_file(&file).map_err(|e| io("fsync", e)));
    drop(file);
    let renamed = written.and_then(|()| {
        rename(&temp, path).map_err(|e| {
            Error::io(
                path,
                "rename a temporary file into place",
                "check the disk and permissions, then rerun",
                e,
            )
        })
    });
    if renamed.is_err() {
        let _ = fs::remove_file(&temp); // the error is the one to report
    }
    renamed?;
    sync_dir(folder)
}

/// `file.write_all(bytes)`, behind the fault hook.
pub fn write_all(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    failpoint::fault(Op::Write)?;
    file.write_all(bytes)
}

/// `file.sync_all()`, behind the fault hook.
pub fn sync_file(file: &File) -> std::io::Result<()> {
    failpoint::fault(Op::Fsync)?;
    file.sync_all()
}

/// `fs::rename(from, to)`, behind the fault hook.
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    failpoint::fault(Op::Rename)?;
    fs::rename(from, to)
}

/// Creates (truncating) `path` with permission bits exactly `mode`, whatever the umask:
/// a lake's files stay readable by its readers, state files by their owner alone.
pub fn create(path: &Path, mode: u32) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode & 0o700)
        .open(path)?;
    file.set_permissions(fs::Permissions::from_mode(mode))?;
    Ok(file)
}

/// fsyncs a folder so renames and creations inside it are durable.
pub fn sync_dir(folder: &Path) -> Result<()> {
    File::open(folder)
        .and_then(|dir| sync_file(&dir))
        .map_err(|e| Error::io(folder, "fsync the folder", "check the disk, then rerun", e))
}

/// [`create_dir_all`] for the state root, quarantine and temporaries: the folders it
/// creates are 0700 whatever the umask (which can only take bits away).
pub fn create_private_dir_all(folder: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(|e| {
            Error::io(
                folder,
                "create the folder",
                "check that the parent exists and is writable",
                e,
            )
        })
}

/// `fs::create_dir_all` with a message naming the folder; the folders it creates are
/// 0755 at most whatever the umask (the lake's readers are often other users; nobody but
/// the owner writes).
pub fn create_dir_all(folder: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true).mode(0o755);
    builder.create(folder).map_err(|e| {
        Error::io(
            folder,
            "create the folder",
            "check that the parent exists and is writable",
            e,
        )
    })
}
