//! `wharf quarantine [HASH]`: the quarantined inputs, or one input's rejects.

use super::{emit, report::inert};
use crate::config::Config;
use crate::error::Result;
use crate::exit;
use crate::land::quarantine as store;

pub fn quarantine(config: &Config, hash: Option<&str>, json: bool) -> Result<u8> {
    let Some(hash) = hash else {
        let entries = store::list(config)?;
        if json {
            emit(&serde_json::json!({ "entries": entries }).to_string())?;
        } else if entries.is_empty() {
            emit("quarantine is empty")?;
        }
        for entry in entries.iter().filter(|_| !json) {
            let reasons: Vec<String> = entry
                .by_reason
                .iter()
                .map(|(r, n)| format!("{r} {n}"))
                .collect();
            emit(&format!(
                "{}  {:<9} {:<16} {}  {}",
                &entry.input_sha256[..entry.input_sha256.len().min(12)],
                entry.action,
                entry.reason.as_deref().unwrap_or("-"),
                inert(&entry.input_name),
                reasons.join(" · ")
            ))?;
        }
        return Ok(exit::SUCCESS);
    };
    let (summary, rejects) = store::rejects(config, hash)?;
    if json {
        emit(&serde_json::json!({ "summary": summary, "rejects": rejects }).to_string())?;
        return Ok(exit::SUCCESS);
    }
    emit(&format!(
        "{}  {}  {} rejected or breaching lines",
        inert(&summary.input_name),
        summary.action,
        rejects.len()
    ))?;
    for reject in &rejects {
        emit(&format!(
            "  line {:>8}  {:<24} {:<16} {}",
            reject.line,
            reject.reason,
            inert(reject.field.as_deref().unwrap_or("")),
            inert(reject.event_id.as_deref().unwrap_or(""))
        ))?;
    }
    Ok(exit::SUCCESS)
}
