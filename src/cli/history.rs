//! `wharf history`: the run log, headed for a Delta root by the table's URL, format and
//! the last version a logged run committed.

use super::emit;
use super::report::{self, inert};
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
    if let (Some(url), false) = (&config.table_url, json) {
        // From the log alone, so history reads no storage: the version the last logged
        // landing or restore committed, which another writer may since have followed.
        let last = records.iter().rev().find_map(|r| r.table_version);
        let version = last.map_or("no commit logged yet".to_owned(), |v| {
            format!("last logged table version {v}")
        });
        emit(&report::table_line(&config.product, url, &version))?;
    }
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
