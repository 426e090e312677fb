//! File fixtures shared by the test kit, the console's snapshot tests
//! (`src/console/snapshots.rs`) and the screenshot example: a copy of the shipped samples
//! in a folder of the caller's choosing, with fixed modification times so the inbox order
//! and every screen are the same on every run, and [`tree`], a folder's files byte for
//! byte. Only `std` here, so the file compiles both inside the crate and outside it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The repository's `samples/` folder.
pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// 2024-03-01T00:00:00Z plus `hours`: a fixed, distinct modification time.
pub fn fixed_time(hours: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_251_200 + hours * 3600)
}

/// Copies the sample config and inbox into `dir` (nothing landed yet) and returns the
/// config's path. Inputs get modification times an hour apart, in name order.
pub fn copy_samples(dir: &Path) -> PathBuf {
    let inbox = dir.join("inbox");
    std::fs::create_dir_all(&inbox).expect("create the inbox");
    let config = dir.join("wharf.toml");
    std::fs::copy(samples_dir().join("wharf.toml"), &config).expect("copy the config");
    let mut names: Vec<_> = std::fs::read_dir(samples_dir().join("inbox"))
        .expect("list the samples")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    for (hour, name) in names.iter().enumerate() {
        let bytes = std::fs::read(samples_dir().join("inbox").join(name)).expect("read a sample");
        write_input(dir, &name.to_string_lossy(), &bytes, hour as u64);
    }
    config
}

/// Writes `bytes` as inbox file `name` with modification time `fixed_time(hour)`.
pub fn write_input(dir: &Path, name: &str, bytes: &[u8], hour: u64) -> PathBuf {
    let path = dir.join("inbox").join(name);
    std::fs::write(&path, bytes).expect("write an input");
    set_time(&path, hour);
    path
}

/// Sets `path`'s modification time to `fixed_time(hour)`.
pub fn set_time(path: &Path, hour: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(fixed_time(hour)))
        .expect("set the modification time");
}

/// Every file under `root` (relative path) with its bytes; a symbolic link is an entry
/// holding its target's path, never followed. Empty when `root` does not exist.
pub fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("entry").path();
            let kind = std::fs::symlink_metadata(&path)
                .expect("stat a file")
                .file_type();
            let bytes = if kind.is_dir() {
                stack.push(path);
                continue;
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("read a link");
                target.as_os_str().as_bytes().to_vec()
            } else {
                std::fs::read(&path).expect("read a file")
            };
            let relative = path.strip_prefix(root).expect("under root").to_path_buf();
            out.insert(relative, bytes);
        }
    }
    out
}

/// One late correction of 2024-03-01: after the first sample lands (3 rows), it would
/// leave one row, a shrink of 67 %.
pub const LATE_FIX: &str = "{\"event_id\":\"f1\",\"order_id\":101,\"status\":\"REFUNDED\",\"updated_at\":\"2024-03-01T18:00:00Z\"}\n";
