//! A product's freshness as of now, from its run log: when it last published and
//! whether that is longer ago than its `max_silence` (`wharf status`, the console).

use std::time::Duration;

use crate::config::Config;
use crate::land::runlog;

/// Run log records looked back through for the last publish.
pub const LOOK_BACK: usize = 10_000;

/// How fresh a product is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Freshness {
    /// The last publish's time as the run log has it; `None` if none is logged.
    pub last_publish: Option<String>,
    /// How long ago that was.
    pub age: Option<Duration>,
    pub max_silence: Option<Duration>,
}

impl Freshness {
    /// Whether the product has been silent for longer than its `max_silence`.
    pub fn breached(&self) -> bool {
        matches!((self.age, self.max_silence), (Some(age), Some(max)) if age > max)
    }

    /// "last publish 3h 2m ago (max_silence 2h)", for a screen or a status line.
    pub fn describe(&self) -> String {
        let age = match self.age {
            Some(age) => format!("last publish {} ago", span(age)),
            None => "no publish logged".to_owned(),
        };
        match self.max_silence {
            Some(max) => format!("{age} (max_silence {})", span(max)),
            None => age,
        }
    }
}

/// A span to the second, as `2h 5m 3s`.
pub fn span(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

/// The newest published run among the log's last [`LOOK_BACK`]: its time as logged and
/// as Unix seconds.
pub fn last_publish(config: &Config) -> Option<(String, f64)> {
    let records = runlog::newest(config, LOOK_BACK).ok()?;
    let record = records.into_iter().find(|r| r.action == "published")?;
    let at = chrono::DateTime::parse_from_rfc3339(&record.time).ok()?;
    Some((record.time, at.timestamp_micros() as f64 / 1e6))
}

/// How long `runs` (newest first, as the console holds them) have gone without a
/// publish as of `now`, when that is longer than `max_silence`; `None` when fresh, or when
/// none of them published (the console then cannot tell).
pub fn stale_for(
    runs: &[crate::land::runlog::RunRecord],
    max_silence: Duration,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let last = runs.iter().find(|r| r.action == "published")?;
    let at = chrono::DateTime::parse_from_rfc3339(&last.time).ok()?;
    let age = (now - at.to_utc()).to_std().ok()?;
    (age > max_silence).then_some(age)
}

/// `config`'s product's freshness now.
pub fn of(config: &Config) -> Freshness {
    let last = last_publish(config);
    let now = chrono::Utc::now().timestamp_micros() as f64 / 1e6;
    Freshness {
        age: last
            .as_ref()
            .map(|(_, at)| Duration::from_secs_f64((now - at).max(0.0))),
        last_publish: last.map(|(time, _)| time),
        max_silence: config.paging.max_silence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(action: &str, time: &str) -> runlog::RunRecord {
        let line = serde_json::json!({
            "time": time, "product": "orders", "input_name": "a.jsonl", "input_sha256": "ab",
            "action": action, "reason": null, "dates": [], "counts": {}, "duration_ms": 1,
            "tool_version": "t",
        });
        serde_json::from_value(line).unwrap()
    }

    #[test]
    fn stale_counts_from_the_newest_publish() {
        let now = chrono::DateTime::parse_from_rfc3339("2024-03-01T12:00:00Z")
            .unwrap()
            .to_utc();
        let runs = [
            run("refused", "2024-03-01T11:59:00Z"),
            run("published", "2024-03-01T09:00:00Z"),
            run("published", "2024-03-01T01:00:00Z"),
        ];
        let hour = Duration::from_secs(3600);
        assert_eq!(stale_for(&runs, hour, now), Some(3 * hour));
        assert_eq!(stale_for(&runs, 4 * hour, now), None);
        assert_eq!(stale_for(&runs[..1], hour, now), None);
    }
}
