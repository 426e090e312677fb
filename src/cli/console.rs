//! `wharf console`: one `--config` (or none: `wharf.toml`) opens that product's console
//! as it always has; several, or `--configs DIR`, open the Products screen, where a
//! config that does not load is a row with its reason, not a failure.

use std::path::{Path, PathBuf};

use super::{DEFAULT_CONFIG, EngineArgs};
use crate::config::Config;
use crate::console::open;
use crate::error::{Error, Result};

pub fn console(
    configs: &[PathBuf],
    dir: Option<&Path>,
    theme: Option<&str>,
    engine: &EngineArgs,
) -> Result<u8> {
    let mut files = configs.to_vec();
    if let Some(dir) = dir {
        files.extend(open::configs_in(dir)?);
        if files.is_empty() {
            return Err(Error::Usage(format!(
                "{} holds no *.toml config; pass --configs with a folder of product configs",
                dir.display()
            )));
        }
    }
    match files.as_slice() {
        [] => one(Path::new(DEFAULT_CONFIG), theme, engine),
        [file] if dir.is_none() => one(file, theme, engine),
        files => {
            let entries = open::entries(files, &|config| engine.apply(config));
            crate::console::run_products(entries, theme)
        }
    }
}

fn one(file: &Path, theme: Option<&str>, engine: &EngineArgs) -> Result<u8> {
    crate::console::run(&engine.apply(Config::load(file)?)?, theme)
}
