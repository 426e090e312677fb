//! `wharf run [INPUT]`: land one input, or every closed inbox input oldest first
//! (carrying on past a refusal; exit 3 at the end if any was refused).

use std::path::Path;

use super::{emit, report};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::exit;
use crate::inbox;
use crate::land::{self, RunStatus};
use crate::plan::DecideOptions;

pub fn run(config: &Config, input: Option<&Path>, allow_shrink: bool, json: bool) -> Result<u8> {
    let options = DecideOptions { allow_shrink };
    let paths = match input {
        Some(path) => vec![path.to_owned()],
        None => inbox::closed(&config.inbox)?
            .into_iter()
            .map(|e| e.path)
            .collect(),
    };
    if paths.is_empty() && !json {
        emit(&format!("no closed input in {}", config.inbox.display()))?;
    }
    let mut worst = exit::SUCCESS;
    for path in &paths {
        let code = match land::run(config, path, options, &mut |_| true) {
            Ok(outcome) => {
                if json {
                    emit(&report::outcome_json(&outcome).to_string())?;
                } else {
                    emit(&report::plan_text(&outcome.plan, outcome.status.code()))?;
                }
                if outcome.status == RunStatus::Refused {
                    exit::REFUSED
                } else {
                    exit::SUCCESS
                }
            }
            Err(e @ Error::Busy { .. }) => {
                if json {
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    let object = serde_json::json!({
                        "action": "busy", "reason": null, "input_name": name,
                        "input_sha256": null, "detail": e.to_string(),
                    });
                    emit(&object.to_string())?;
                }
                eprintln!("wharf: {e}");
                return Ok(exit::BUSY);
            }
            Err(e) if input.is_none() => {
                eprintln!("wharf: {e}");
                exit::ERROR
            }
            Err(e) => return Err(e),
        };
        worst = more_severe(worst, code);
    }
    Ok(worst)
}

/// Error outranks refusal outranks success.
fn more_severe(a: u8, b: u8) -> u8 {
    let rank = |code| match code {
        exit::ERROR => 2,
        exit::REFUSED => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}
