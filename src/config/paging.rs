//! What pages the on-call for a product: `max_silence` (freshness), `lineage` (where
//! OpenLineage events go), `lineage_namespace` (their job's namespace) and the
//! `[alerts]` section (a command and a webhook fed one JSON document per event).
//! [`Paging`] is the validated form; `crate::page` acts on it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The validated paging settings of one product.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// No publish for this long while watched is a freshness breach.
    pub max_silence: Option<Duration>,
    pub lineage: Option<LineageTarget>,
    /// The OpenLineage job namespace; `None`: [`DEFAULT_JOB_NAMESPACE`].
    pub lineage_namespace: Option<String>,
    pub alerts: Alerts,
}

/// The job namespace of a product's lineage events unless `lineage_namespace` says.
pub const DEFAULT_JOB_NAMESPACE: &str = "wharf";

impl Paging {
    /// The namespace of the lineage events' job (the product is its name).
    pub fn job_namespace(&self) -> &str {
        self.lineage_namespace
            .as_deref()
            .unwrap_or(DEFAULT_JOB_NAMESPACE)
    }
}

/// Where a product's OpenLineage run events go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineageTarget {
    /// One event per line, appended.
    File(PathBuf),
    /// POSTed to an OpenLineage endpoint (`http://host:port/api/v1/lineage`).
    Http(String),
}

/// The `[alerts]` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alerts {
    /// Run once per event with the event's JSON on stdin; empty: no command.
    pub command: Vec<String>,
    /// POSTed the same JSON.
    pub webhook: Option<String>,
    /// A hook still running after this long is killed (and logged).
    pub timeout: Duration,
    /// A watch busy for longer than this raises a `busy` alert.
    pub busy_alert_after: Duration,
}

impl Default for Alerts {
    fn default() -> Self {
        Alerts {
            command: Vec::new(),
            webhook: None,
            timeout: Duration::from_secs(10),
            busy_alert_after: Duration::from_secs(15 * 60),
        }
    }
}

impl Alerts {
    /// Whether any hook is configured.
    pub fn any(&self) -> bool {
        !self.command.is_empty() || self.webhook.is_some()
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAlerts {
    #[serde(default)]
    command: Vec<String>,
    webhook: Option<String>,
    timeout: Option<String>,
    busy_alert_after: Option<String>,
}

/// Validates the paging keys; a relative `file:` lineage path resolves against `folder`.
pub(super) fn validate(
    max_silence: Option<&str>,
    lineage: Option<&str>,
    lineage_namespace: Option<&str>,
    alerts: Option<RawAlerts>,
    folder: &Path,
) -> Result<Paging, String> {
    let max_silence = max_silence
        .map(|v| duration("max_silence", v))
        .transpose()?;
    let lineage = lineage.map(|v| lineage_target(v, folder)).transpose()?;
    let lineage_namespace = lineage_namespace.map(job_namespace).transpose()?;
    let raw = alerts.unwrap_or_default();
    let defaults = Alerts::default();
    if raw.command.first().is_some_and(|c| c.trim().is_empty()) {
        return Err("[alerts] command = [...] must start with a program name".to_owned());
    }
    if let Some(hook) = raw.webhook.as_deref()
        && !(hook.starts_with("https://") || hook.starts_with("http://"))
    {
        return Err("[alerts] webhook must be an http:// or https:// URL".to_owned());
    }
    let or = |key: &str, value: Option<String>, default: Duration| {
        value.map_or(Ok(default), |v| duration(key, &v))
    };
    Ok(Paging {
        max_silence,
        lineage,
        lineage_namespace,
        alerts: Alerts {
            command: raw.command,
            webhook: raw.webhook,
            timeout: or("[alerts] timeout", raw.timeout, defaults.timeout)?,
            busy_alert_after: or(
                "[alerts] busy_alert_after",
                raw.busy_alert_after,
                defaults.busy_alert_after,
            )?,
        },
    })
}

/// `"2h"`, `"90s"`, `"1h 30m"`: a positive span.
fn duration(key: &str, value: &str) -> Result<Duration, String> {
    match humantime::parse_duration(value) {
        Ok(span) if !span.is_zero() => Ok(span),
        _ => Err(format!(
            "{key} = {value:?} is not a positive duration; write e.g. \"2h\", \"30m\" or \"90s\""
        )),
    }
}

fn lineage_target(value: &str, folder: &Path) -> Result<LineageTarget, String> {
    if let Some(path) = value.strip_prefix("file:") {
        if path.is_empty() {
            return Err("lineage = \"file:\" names no file; write \"file:lineage.ndjson\"".into());
        }
        return Ok(LineageTarget::File(folder.join(path)));
    }
    if value.starts_with("http://") || value.starts_with("https://") {
        return Ok(LineageTarget::Http(value.to_owned()));
    }
    // Not quoted: a mistyped endpoint may carry a token in its path or query.
    Err(
        "lineage is neither \"file:PATH\" nor an http(s):// OpenLineage endpoint \
         (http://host:port/api/v1/lineage)"
            .to_owned(),
    )
}

/// `lineage_namespace = "…"`: one line of printable text, as a lineage tool shows it.
fn job_namespace(value: &str) -> Result<String, String> {
    if value.trim().is_empty() || value.trim() != value || value.chars().any(char::is_control) {
        return Err(format!(
            "lineage_namespace = {value:?} must be a name without surrounding spaces or \
             control characters, e.g. \"wharf\" or \"prod-lake\""
        ));
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_targets() {
        let folder = Path::new("/p");
        let paging = validate(Some("2h"), Some("file:l.ndjson"), None, None, folder).unwrap();
        assert_eq!(paging.max_silence, Some(Duration::from_secs(7200)));
        assert_eq!(
            paging.lineage,
            Some(LineageTarget::File(PathBuf::from("/p/l.ndjson")))
        );
        assert!(!paging.alerts.any());
        assert_eq!(paging.job_namespace(), "wharf");
        assert!(validate(Some("0s"), None, None, None, folder).is_err());
        assert!(validate(Some("soon"), None, None, None, folder).is_err());
        assert!(validate(None, Some("ftp://x"), None, None, folder).is_err());
    }

    #[test]
    fn a_job_namespace_is_one_printable_name() {
        let folder = Path::new("/p");
        let named = validate(None, None, Some("prod-lake"), None, folder).unwrap();
        assert_eq!(named.job_namespace(), "prod-lake");
        for bad in ["", " ", " lake", "a\nb"] {
            assert!(
                validate(None, None, Some(bad), None, folder).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_bad_lineage_target_is_not_quoted() {
        let secret = "https:/hooks.example/T0/B0/tok3n?token=s3cr3t";
        let error = validate(None, Some(secret), None, None, Path::new("/p")).unwrap_err();
        assert!(
            !error.contains("tok3n") && !error.contains("s3cr3t"),
            "{error}"
        );
    }
}
