//! Whole-folder steps of the swap and the trash: [`same_files`] (do two partitions hold
//! the same files?), [`link_or_copy`] (a partition's files into a new folder, without
//! copying bytes where the file system allows) and [`remove_dir_all`].

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};
use crate::store::atomic;
use crate::store::failpoint::{self, Op};

/// A trash generation's record, beside its Parquet files (not one of the partition's).
pub const RECORD: &str = "generation.json";

/// Removes `path` and everything in it; absent is fine.
pub fn remove_dir_all(path: &Path) -> Result<()> {
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

/// The partition files of `dir` (a trash record aside), sorted, with their lengths.
fn listing(dir: &Path) -> Result<Vec<(std::ffi::OsString, u64)>> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::io(dir, "list the partition", "check permissions", e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, "list the partition", "check the disk", e))?;
        if entry.file_name() == RECORD {
            continue;
        }
        let len = entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        out.push((entry.file_name(), len));
    }
    out.sort();
    Ok(out)
}

/// Whether folders `a` and `b` hold the same partition files (names and bytes; a trash
/// generation's record is not compared). Hard links of one file are equal unread.
pub fn same_files(a: &Path, b: &Path) -> Result<bool> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let listing_a = listing(a)?;
    if listing_a != listing(b)? {
        return Ok(false);
    }
    let (mut left, mut right) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    for (name, _) in &listing_a {
        let open = |dir: &Path| {
            fs::File::open(dir.join(name))
                .map_err(|e| Error::io(&dir.join(name), "read", "check permissions", e))
        };
        let (mut x, mut y) = (open(a)?, open(b)?);
        let inode = |f: &fs::File| f.metadata().ok().map(|m| (m.dev(), m.ino()));
        if inode(&x).is_some() && inode(&x) == inode(&y) {
            continue;
        }
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

/// The OS errors with which a file system refuses a hard link it does not support (or one
/// to another file system): the file is copied instead.
fn link_unsupported(e: &std::io::Error) -> bool {
    use rustix::io::Errno;
    let refused = [
        Errno::XDEV,
        Errno::PERM,
        Errno::OPNOTSUPP,
        Errno::MLINK,
        Errno::NOSYS,
    ];
    e.raw_os_error()
        .is_some_and(|code| refused.iter().any(|r| r.raw_os_error() == code))
}

/// Puts every file of `from` (one level, as partitions are) into the new folder `to`:
/// a hard link where `to` shares `from`'s file system (Wharf never rewrites a published
/// file, so a link is as good as a copy), else a copy, fsynced (each by [`link_file`]). The folder itself is not
/// fsynced: the caller does, once it is complete. `to` (the trash, in the state root) and
/// the folders above it that it creates are 0700.
pub fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
    atomic::create_private_dir_all(to)?;
    let entries = fs::read_dir(from)
        .map_err(|e| Error::io(from, "list the folder", "check permissions", e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(from, "list the folder", "check the disk", e))?;
        link_file(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

/// Links the file `from` as `target` (hard link; a copy, fsynced, where the file system
/// has none): a published file carried into a new generation, or into the trash.
pub fn link_file(from: &Path, target: &Path) -> Result<()> {
    failpoint::fault(Op::Write)
        .and_then(|()| match fs::hard_link(from, target) {
            Err(e) if link_unsupported(&e) => {
                fs::copy(from, target).and_then(|_| atomic::sync_file(&fs::File::open(target)?))
            }
            linked => linked,
        })
        .map_err(|e| {
            Error::io(
                target,
                "copy the file",
                "check free space and the disk, then rerun",
                e,
            )
        })
}
