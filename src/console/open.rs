//! Which products the console opens: [`configs_in`] lists a `--configs` folder's
//! `*.toml` files by name, and [`entries`] loads each config given, keeping a config that
//! fails to load as its file and the reason (the Products screen shows it as a row).
//! This runs once, before the terminal is taken over, as a single `--config` is loaded.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::products::ProductEntry;
use crate::config::Config;
use crate::error::{Error, Result};

/// Every `*.toml` file in `dir`, sorted by name.
pub fn configs_in(dir: &Path) -> Result<Vec<PathBuf>> {
    // A folder that cannot be listed is a command line to fix, as a missing input is.
    let io = |e: std::io::Error| {
        Error::Usage(format!(
            "--configs {}: cannot list it ({e}); pass a folder of product TOML files",
            dir.display()
        ))
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// Each of `files` loaded and passed through `adjust` (the command line's engine
/// flags), or the reason it could not be.
pub fn entries(files: &[PathBuf], adjust: &dyn Fn(Config) -> Result<Config>) -> Vec<ProductEntry> {
    files
        .iter()
        .map(|file| ProductEntry {
            file: file.clone(),
            config: Config::load(file)
                .and_then(adjust)
                .map(Arc::new)
                .map_err(|e| e.to_string()),
        })
        .collect()
}
