//! One run per product at a time (CONTRACT.md §5.2): an OS file lock on
//! `<state_root>/.lock`, released by the kernel when the process ends, even by SIGKILL.

use std::fs::{File, OpenOptions};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::atomic;

/// An OS lock held while a run may write (or, on `.watch.lock`, while a watch runs);
/// dropping it releases the lock.
#[derive(Debug)]
pub struct ProductLock {
    _file: File,
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
    atomic::create_dir_all(&config.state_root)?;
    let path = config.state_root.join(name);
    let file = OpenOptions::new()
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
        Ok(()) => Ok(ProductLock { _file: file }),
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
/// anything. The OS has no way to ask without locking, so this takes a *shared* lock and
/// drops it at once: two probes do not see each other, but a run that tries the
/// exclusive lock in those microseconds gets [`Error::Busy`], as it would against any
/// other holder (`watch` tries again a second later).
pub fn held(config: &Config, name: &str) -> Result<bool> {
    let path = config.state_root.join(name);
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
