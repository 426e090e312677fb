//! The operator console (ratatui + crossterm).

use crate::config::Config;
use crate::error::{Error, Result};

/// Runs the console until the operator quits.
pub fn run(_config: &Config, _theme: Option<&str>) -> Result<u8> {
    Err(Error::Usage("the console is not built yet".into()))
}
