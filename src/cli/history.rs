//! `wharf history`: the run log, headed for a Delta root by the table's URL, format and
//! the last version a logged run committed.

use super::emit;
use super::report::{self, inert};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::exit;
use crate::land::root::PublishRoot;
use crate::land::runlog;

pub fn history(
    config: &Config,
    run_id: Option<&str>,
    limit: Option<usize>,
    json: bool,
) -> Result<u8> {
    // With a limit only the log's end is read, newest first, then shown oldest first.
    let records = match (run_id, limit) {
        (Some(id), _) => find_run(config, id)?,
        (None, Some(n)) => {
            let mut newest = runlog::newest(config, n)?;
            newest.reverse();
            newest
        }
        (None, None) => runlog::read(config)?,
    };
    let table = match json {
        true => None,
        false => PublishRoot::logged_table(config)?,
    };
    if let Some((url, memory)) = table {
        // From the log alone, so history reads no storage: the version the last logged
        // landing or restore committed, which another writer may since have followed.
        let last = records.iter().rev().find_map(|r| r.table_version);
        let version = last.map_or("no commit logged yet".to_owned(), |v| {
            format!("last logged table version {v}")
        });
        emit(&report::table_line(&config.product, &url, &version))?;
        if let Some(memory) = memory {
            emit(&memory)?; // §12.5: where the state root's memory came from
        }
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
            let run = match record.run_id.as_str() {
                "" => String::new(),
                id => format!("  run {}", inert(id)),
            };
            let memory = record
                .memory
                .as_deref()
                .map_or(String::new(), |m| format!("  memory from the {m}"));
            emit(&format!(
                "{}  {:<9} {:<16} {}  dates [{}]  keys {keys}  rejected {}  {} ms{run}{version}{memory}",
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

/// The landing whose run id is `id` or starts with it; none is a usage error (exit 2)
/// naming what to do, as a prefix shared by two runs is.
fn find_run(config: &Config, id: &str) -> Result<Vec<runlog::RunRecord>> {
    let id = id.trim().to_ascii_lowercase();
    let found: Vec<_> = runlog::read(config)?
        .into_iter()
        .filter(|r| !id.is_empty() && r.run_id.starts_with(&id))
        .collect();
    match found.len() {
        1 => Ok(found),
        0 => Err(Error::Usage(format!(
            "no run of {} has run id {}; `wharf history` lists every run with its id",
            inert(&config.product),
            inert(&id)
        ))),
        n => Err(Error::Usage(format!(
            "{n} runs have a run id starting {}; give more of it",
            inert(&id)
        ))),
    }
}
