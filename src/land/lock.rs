//! One run per product at a time (CONTRACT.md §5.2): an OS file lock on
//! `<state_root>/.lock`, released by the kernel when the process ends, even by SIGKILL.
//!
//! With the state root on S3 (§13.4) there is no run lock file: machines share no file
//! system, and the Delta commit (a put-if-absent of the next log version) decides
//! between two landings; the loser is busy and writes nothing. A watch's lock, one per
//! product on a machine, is then in the machine's scratch folder.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::{atomic, state_store};

/// An OS lock held while a run may write (or, on `.watch.lock`, while a watch runs);
/// dropping it releases the lock.
#[derive(Debug)]
pub struct ProductLock {
    _file: Option<File>,
}

/// The run lock's file name under the state root.
pub const RUN: &str = ".lock";
/// The watch lock's file name under the state root (one `wharf watch` per product).
pub const WATCH: &str = ".watch.lock";

/// Takes the product's lock without waiting, or returns [`Error::Busy`].
pub fn acquire(config: &Config) -> Result<ProductLock> {
    acquire_named(config, RUN)
}

/// Takes the OS lock on `<state_root>/<name>` without waiting, or returns
/// [`Error::Busy`]: the product's run lock, and any other one-per-product lock.
pub fn acquire_named(config: &Config, name: &str) -> Result<ProductLock> {
    let folder = state_store::scratch(config);
    if name == RUN && state_store::is_s3(&config.state_root) {
        // The landing stages in the scratch folder: made private before anything is there.
        atomic::create_private_dir_all(&folder)?;
        return Ok(ProductLock { _file: None });
    }
    atomic::create_private_dir_all(&folder)?;
    let path = folder.join(name);
    let file = OpenOptions::new()
        .mode(0o600)
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            Error::io(
                &path,
                "open the lock file",
                "check that the state root is writable",
                e,
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(ProductLock { _file: Some(file) }),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Busy { path }),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(
            &path,
            "lock",
            "check that the state root supports file locks",
            e,
        )),
    }
}

/// Whether another holder has the lock on `<state_root>/<name>`, without creating
/// anything and without taking it: the kernel's table of locks (`/proc/locks`) is read
/// for the file's device and inode, so a run starting that instant is never made busy
/// by a probe. Where that table cannot be read, a *shared* lock is taken and dropped at
/// once (a run trying the exclusive lock in those microseconds would then be busy).
pub fn held(config: &Config, name: &str) -> Result<bool> {
    let path = state_store::scratch(config).join(name);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(Error::io(
                &path,
                "open the lock file",
                "check the state root's permissions",
                e,
            ));
        }
    };
    if let (Ok(meta), Ok(table)) = (file.metadata(), std::fs::read_to_string("/proc/locks")) {
        use std::os::unix::fs::MetadataExt;
        return Ok(listed(&table, meta.dev(), meta.ino()));
    }
    match file.try_lock_shared() {
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(
            &path,
            "probe the lock",
            "check that the state root supports file locks",
            e,
        )),
    }
}

/// Whether `/proc/locks`' `table` lists a lock on the file `(dev, ino)`: a line's sixth
/// field is `MAJOR:MINOR:INODE`, the device numbers in hex.
fn listed(table: &str, dev: u64, ino: u64) -> bool {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    table.lines().any(|line| {
        // A lock someone waits for is listed again after `->`; it is no holder.
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") {
            return false;
        }
        let mut id = fields.get(5).map(|f| f.split(':')).into_iter().flatten();
        let parse = |hex: Option<&str>| hex.and_then(|h| u64::from_str_radix(h, 16).ok());
        let (m, n) = (parse(id.next()), parse(id.next()));
        let inode = id.next().and_then(|i| i.parse::<u64>().ok());
        m == Some(major) && n == Some(minor) && inode == Some(ino)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock this process holds is seen in the kernel's table, and gone once dropped;
    /// the probe itself takes nothing, so the exclusive lock is still free after it.
    #[test]
    fn a_held_lock_is_seen_without_taking_it() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let mut config = crate::config::fixtures::orders();
        config.state_root = dir.path().to_owned();
        assert!(!held(&config, RUN).expect("probe"), "no file, no holder");
        let lock = acquire(&config).expect("the lock");
        assert!(held(&config, RUN).expect("probe"));
        drop(lock);
        assert!(!held(&config, RUN).expect("probe"));
        let again = acquire(&config).expect("free after the probes");
        drop(again);
    }

    #[test]
    fn the_table_names_a_file_by_device_and_inode() {
        let table = "1: FLOCK  ADVISORY  WRITE 18839 fe:00:5816930 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 18840 fe:00:77 0 EOF\n";
        let dev = 0xfe << 8;
        assert!(listed(table, dev, 5816930));
        assert!(!listed(table, dev, 77), "a waiter holds nothing");
        assert!(!listed(table, dev + 1, 5816930));
    }
}
