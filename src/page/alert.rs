//! The alert document: one JSON object per event (`refused`, `error`, `busy`, `stale`,
//! `fresh`), the same for the `[alerts]` command's stdin and the webhook's body. It
//! names the product, the input, its hash, the run id, a reason code, the counts and the
//! commands that open the landing; never a row value (docs/operations.md, "Paging").

use std::path::Path;
use std::time::Duration;

use serde_json::{Value as Json, json};

use crate::cli::report::inert;
use crate::config::Config;
use crate::land::{RunOutcome, RunStatus};

/// What an alert is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Refused,
    Error,
    Busy,
    Stale,
    Fresh,
}

impl Event {
    pub fn code(self) -> &'static str {
        match self {
            Event::Refused => "refused",
            Event::Error => "error",
            Event::Busy => "busy",
            Event::Stale => "stale",
            Event::Fresh => "fresh",
        }
    }
}

/// The fields every event has, the rest null.
fn base(config: &Config, event: Event, now: &str) -> Json {
    json!({
        "event": event.code(),
        "time": now,
        "product": config.product,
        "input": null,
        "sha256": null,
        "run_id": null,
        "reason": null,
        "counts": null,
        "detail": null,
        "console": format!("wharf --config {} console", quoted(&config.path)),
        "history": null,
    })
}

/// A refused landing: its input, hash, run id, reason code and counts by reason.
pub fn refused(config: &Config, outcome: &RunOutcome, now: &str) -> Option<Json> {
    if outcome.status != RunStatus::Refused {
        return None;
    }
    let plan = &outcome.plan;
    let mut alert = base(config, Event::Refused, now);
    alert["input"] = json!(inert(&plan.input_name));
    alert["sha256"] = json!(plan.input_sha256);
    alert["run_id"] = json!(plan.run_id);
    alert["reason"] = json!(plan.reason());
    alert["counts"] = json!(plan.counts);
    alert["history"] = json!(history(config, &plan.run_id));
    Some(alert)
}

/// A landing that failed with an error (no run log line, so the run id is the alert's).
pub fn error(config: &Config, input: &Path, detail: &str, run_id: &str, now: &str) -> Json {
    let mut alert = base(config, Event::Error, now);
    alert["input"] = json!(input_name(input));
    alert["run_id"] = json!(run_id);
    alert["reason"] = json!("error");
    alert["detail"] = json!(inert(detail));
    alert
}

/// The watch has found the product busy (its lock held, or the table's next version
/// taken) for `spell`.
pub fn busy(config: &Config, input: &Path, spell: Duration, now: &str) -> Json {
    let mut alert = base(config, Event::Busy, now);
    alert["input"] = json!(input_name(input));
    alert["reason"] = json!("busy");
    alert["detail"] = json!(format!(
        "busy for {} s: another run holds the product's lock or commits the table",
        spell.as_secs()
    ));
    alert
}

/// No publish for `silence` (`stale`, more than max_silence), or a publish after one
/// (`fresh`).
pub fn freshness(
    config: &Config,
    event: Event,
    silence: Duration,
    last_publish: Option<&str>,
    now: &str,
) -> Json {
    let mut alert = base(config, event, now);
    alert["reason"] = json!("max_silence");
    alert["silence_seconds"] = json!(silence.as_secs());
    alert["last_publish"] = json!(last_publish);
    alert["detail"] = json!(match event {
        Event::Stale => format!(
            "no publish for {} (max_silence {})",
            humantime::format_duration(Duration::from_secs(silence.as_secs())),
            humantime::format_duration(config.paging.max_silence.unwrap_or_default())
        ),
        _ => "published again".to_owned(),
    });
    alert
}

fn history(config: &Config, run_id: &str) -> String {
    format!("wharf --config {} history {run_id}", quoted(&config.path))
}

/// The input's file name, as the run log names it.
pub fn input_name(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    inert(&name)
}

/// A path as one shell word.
fn quoted(path: &Path) -> String {
    let text = inert(&path.display().to_string());
    format!("'{}'", text.replace('\'', "'\\''"))
}
