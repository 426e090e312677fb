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

/// Takes the product's lock without waiting, or returns [`Error::Busy`].
pub fn acquire(config: &Config) -> Result<ProductLock> {
    acquire_named(config, ".lock")
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
