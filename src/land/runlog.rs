//! The run log (CONTRACT.md §6.5): `<state_root>/runs.jsonl`, one line per run with
//! time, product, input, hash, action, reason, dates, counts, duration, tool version and
//! the engine (with its session settings).
//! No row data.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::plan::Counts;
use crate::store::atomic;

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub time: String,
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub action: String,
    pub reason: Option<String>,
    pub dates: Vec<String>,
    pub counts: Counts,
    /// The engine refused before the row work: `retries`, `keys`, `ties_by_arrival` and
    /// the dates were never counted (their zeros are not counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unranked: bool,
    pub duration_ms: u64,
    pub tool_version: String,
    /// How dates were swapped in: `rename`, `exchange`, `two_renames` or `unchanged`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub swaps: Vec<String>,
    /// The engine that did the row work, as it describes itself (`local`,
    /// `spark sc://host:15002`); a record written before engines existed reads `local`.
    #[serde(default = "local_engine")]
    pub engine: String,
    /// The engine's resolved session settings (the Spark engine's), when it has any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_settings: BTreeMap<String, String>,
    /// The Delta table version the landing committed (§12.4); absent for hive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_version: Option<u64>,
}

fn local_engine() -> String {
    "local".to_owned()
}

fn path(config: &Config) -> PathBuf {
    config.state_root.join("runs.jsonl")
}

/// Appends `record` and fsyncs the log.
pub fn append(config: &Config, record: &RunRecord) -> Result<()> {
    let path = path(config);
    atomic::create_dir_all(&config.state_root)?;
    let mut line = serde_json::to_vec(record)
        .map_err(|e| Error::internal(format!("cannot encode the run log record: {e}")))?;
    line.push(b'\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| {
            atomic::write_all(&mut file, &line)?;
            atomic::sync_file(&file)
        })
        .map_err(|e| {
            Error::io(
                &path,
                "append to the run log",
                "check free space and the disk; everything else of this run was written",
                e,
            )
        })
}

/// Every run, oldest first. A torn last line (a crash mid-append) is skipped.
pub fn read(config: &Config) -> Result<Vec<RunRecord>> {
    let path = path(config);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, "read the run log", "check permissions", e)),
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut records = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(record) => records.push(record),
            Err(_) if index + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(Error::CorruptState {
                    path,
                    detail: format!("line {}: {e}", index + 1),
                });
            }
        }
    }
    Ok(records)
}
