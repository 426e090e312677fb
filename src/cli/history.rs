//! `wharf history`: the run log.

use super::{emit, report::inert};
use crate::config::Config;
use crate::error::Result;
use crate::exit;
use crate::land::runlog;

pub fn history(config: &Config, limit: Option<usize>, json: bool) -> Result<u8> {
    // With a limit only the log's end is read, newest first, then shown oldest first.
    let records = match limit {
        Some(n) => {
            let mut newest = runlog::newest(config, n)?;
            newest.reverse();
            newest
        }
        None => runlog::read(config)?,
    };
    for record in &records {
        if json {
            emit(&serde_json::to_string(record).unwrap_or_default())?;
        } else {
            let keys = if record.unranked {
                "-".to_owned()
            } else {
                record.counts.keys.to_string()
            };
            // A Delta landing names the table version it committed.
            let version = record
                .table_version
                .map_or(String::new(), |v| format!("  table version {v}"));
            emit(&format!(
                "{}  {:<9} {:<16} {}  dates [{}]  keys {keys}  rejected {}  {} ms{version}",
                record.time,
                record.action,
                record.reason.as_deref().unwrap_or("-"),
                inert(&record.input_name),
                record.dates.join(", "),
                record.counts.rejected,
                record.duration_ms
            ))?;
        }
    }
    if records.is_empty() && !json {
        emit("no runs yet")?;
    }
    Ok(exit::SUCCESS)
}
