//! Quarantine (CONTRACT.md §6.1): `<quarantine_root>/<sha256>/rejects.jsonl`, one object
//! per rejected or breaching line (`line`, `reason`, `field`, `event_id`, and for a set
//! the part's name as `file`, §11.4), and
//! `summary.json`. Written on refusal too, replacing an earlier one for the same hash;
//! files are created 0600. Never a raw line, never a field's value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::plan::{Counts, LineFinding, Plan};
use crate::store::state_store::StateStore;
use crate::store::{atomic, state};

/// One line of `rejects.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectRecord {
    /// A set's part holding the line (§11.4); absent for a single file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line within its file (or part).
    pub line: u64,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// The value rule the line broke (`one_of`, `range`, §1.2), never the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl RejectRecord {
    /// The record of `finding`, its line located in its part when `plan` is a set's.
    pub fn of(plan: &Plan, finding: &LineFinding) -> RejectRecord {
        let (file, line) = crate::input::locate(&plan.parts, finding.line);
        RejectRecord {
            file: file.map(str::to_owned),
            line,
            reason: finding.issue.reason.code().to_owned(),
            field: finding.issue.field.clone(),
            event_id: finding.issue.event_id.clone(),
            rule: crate::contract::rules::Rule::of_reason(finding.issue.reason)
                .map(|r| r.name().to_owned()),
        }
    }
}

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuarantineSummary {
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub action: String,
    pub reason: Option<String>,
    pub lines: u64,
    pub accepted: u64,
    pub rejected: u64,
    pub by_reason: BTreeMap<String, u64>,
    /// Lines by broken value rule, `field.rule` (§1.2).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_rule: BTreeMap<String, u64>,
    pub written_at: String,
    pub tool_version: String,
    /// The run that wrote it (absent from a summary written before run ids).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
}

/// Bytes of quarantine records gathered before each write.
const WRITE_BUFFER: usize = 1 << 20;

/// The quarantine folder of input hash `sha256`.
pub fn folder(config: &Config, sha256: &str) -> PathBuf {
    config.quarantine_root.join(sha256)
}

/// Writes the quarantine of `plan`, the action it will report being `action`. On S3
/// (§13.4) the rejects are gathered in a scratch file and put, then the summary, each
/// replacing the entry's earlier object on the condition that nobody changes it meanwhile.
pub fn write(config: &Config, plan: &Plan, action: &str, now: &str) -> Result<()> {
    let store = StateStore::quarantine(config)?;
    let summary = state::pretty(&summary(config, plan, action, now), "quarantine summary")?;
    if store.on_s3() {
        let scratch = crate::store::state_store::scratch(config);
        atomic::create_private_dir_all(&scratch)?;
        let io = |e| {
            Error::io(
                &scratch,
                "write the rejects",
                "check free space, then rerun",
                e,
            )
        };
        let mut temp = tempfile::Builder::new()
            .prefix(".rejects-")
            .tempfile_in(&scratch)
            .map_err(io)?;
        fill_rejects(plan, temp.as_file_mut()).map_err(io)?;
        store.put_file(&format!("{}/rejects.jsonl", plan.input_sha256), temp.path())?;
        return store.replace(&format!("{}/summary.json", plan.input_sha256), &summary);
    }
    let folder = folder(config, &plan.input_sha256);
    atomic::create_private_dir_all(&folder)?;
    atomic::write_atomic_with(&folder.join("rejects.jsonl"), 0o600, |file| {
        fill_rejects(plan, file)
    })?;
    atomic::write_atomic(&folder.join("summary.json"), &summary, 0o600)
}

/// Writes `plan`'s reject records into `file`, a buffer at a time: a refused file's
/// findings may be millions (spilled).
fn fill_rejects(plan: &Plan, file: &mut std::fs::File) -> std::io::Result<()> {
    {
        let mut rejects = Vec::with_capacity(WRITE_BUFFER + 4096);
        let mut record = |finding: &LineFinding| -> std::io::Result<()> {
            serde_json::to_writer(&mut rejects, &RejectRecord::of(plan, finding))?;
            rejects.push(b'\n');
            if rejects.len() >= WRITE_BUFFER {
                atomic::write_all(file, &rejects)?;
                rejects.clear();
            }
            Ok(())
        };
        for finding in &plan.findings {
            record(finding)?;
        }
        if let Some(spilled) = &plan.spilled {
            crate::store::findings::each(spilled, |finding| {
                record(&finding).map_err(|e| {
                    Error::io(
                        &spilled.path,
                        "copy spilled findings",
                        "check free space, then rerun",
                        e,
                    )
                })
            })
            .map_err(std::io::Error::other)?;
        }
        atomic::write_all(file, &rejects)
    }
}

fn summary(config: &Config, plan: &Plan, action: &str, now: &str) -> QuarantineSummary {
    QuarantineSummary {
        product: config.product.clone(),
        input_name: plan.input_name.clone(),
        input_sha256: plan.input_sha256.clone(),
        action: action.to_owned(),
        reason: plan.reason().map(str::to_owned),
        lines: plan.counts.lines,
        accepted: plan.counts.accepted,
        rejected: plan.counts.rejected,
        by_reason: by_reason(&plan.counts),
        by_rule: plan.counts.by_rule.clone(),
        written_at: now.to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        run_id: plan.run_id.clone(),
    }
}

/// Counts by reason code.
pub fn by_reason(counts: &Counts) -> BTreeMap<String, u64> {
    counts
        .by_reason
        .iter()
        .map(|(r, n)| (r.code().to_owned(), *n))
        .collect()
}

/// Every quarantine summary, newest first.
pub fn list(config: &Config) -> Result<Vec<QuarantineSummary>> {
    let store = StateStore::quarantine(config)?;
    let mut out = Vec::new();
    for entry in store.list("", "list the quarantine")? {
        let relative = format!("{entry}/summary.json");
        // An entry without a summary (one being written, or a stray file) is not listed.
        if let Ok(Some(text)) = store.read(&relative, "read", "check permissions") {
            let summary: QuarantineSummary =
                serde_json::from_slice(&text).map_err(|e| Error::CorruptState {
                    path: store.shown(&relative),
                    detail: e.to_string(),
                })?;
            out.push(summary);
        }
    }
    out.sort_by(|a, b| b.written_at.cmp(&a.written_at));
    Ok(out)
}

/// The rejects of the input with hash `sha256` (a unique prefix is enough).
pub fn rejects(config: &Config, sha256: &str) -> Result<(QuarantineSummary, Vec<RejectRecord>)> {
    let matches: Vec<QuarantineSummary> = list(config)?
        .into_iter()
        .filter(|s| s.input_sha256.starts_with(sha256))
        .collect();
    let summary = match matches.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(Error::Usage(format!(
                "no quarantine entry has a hash starting {sha256:?}; run `wharf quarantine` to list them"
            )));
        }
        _ => {
            return Err(Error::Usage(format!(
                "{} quarantine entries start with {sha256:?}; give more of the hash",
                matches.len()
            )));
        }
    };
    let store = StateStore::quarantine(config)?;
    let relative = format!("{}/rejects.jsonl", summary.input_sha256);
    let path = store.shown(&relative);
    let bytes = store
        .read(&relative, "read the rejects", "check permissions")?
        .ok_or_else(|| {
            let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
            Error::io(&path, "read the rejects", "check permissions", gone)
        })?;
    let text = String::from_utf8_lossy(&bytes);
    let records = text
        .lines()
        .map(serde_json::from_str)
        .collect::<std::result::Result<Vec<RejectRecord>, _>>()
        .map_err(|e| Error::CorruptState {
            path,
            detail: e.to_string(),
        })?;
    Ok((summary, records))
}
