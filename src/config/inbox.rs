//! The inbox's place: a local folder, or `s3://bucket/prefix/` (CONTRACT.md §13), and how
//! `watch` lists an S3 inbox: the keys after the last one seen every `poll`, all of them
//! every `rescan` (the reconcile, which finds a key that sorts before the last one seen).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How an S3 inbox is listed; a local inbox wakes on file-system events instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The keys after the last one seen are listed this often (one request when none
    /// are new).
    pub poll: Duration,
    /// Every key is listed this often: a key that sorts before the last one seen is
    /// found within one period.
    pub rescan: Duration,
}

impl Default for Listing {
    fn default() -> Listing {
        Listing {
            poll: Duration::from_secs(2),
            rescan: Duration::from_secs(10 * 60),
        }
    }
}

/// `poll` and `rescan` from the config, each a positive span (`"2s"`, `"10m"`).
pub fn listing(poll: Option<&str>, rescan: Option<&str>) -> Result<Listing, String> {
    let defaults = Listing::default();
    let span = |key: &str, value: Option<&str>, default: Duration| match value {
        None => Ok(default),
        Some(v) => match humantime::parse_duration(v) {
            Ok(span) if !span.is_zero() => Ok(span),
            _ => Err(format!(
                "{key} = {v:?} is not a positive duration; write e.g. \"2s\" or \"10m\""
            )),
        },
    };
    Ok(Listing {
        poll: span("poll", poll, defaults.poll)?,
        rescan: span("rescan", rescan, defaults.rescan)?,
    })
}

/// The inbox's location: `s3://bucket/prefix/` kept as its URL, else a path resolved
/// against the config's folder by `resolve`.
pub fn location(
    value: Option<String>,
    resolve: impl Fn(&str) -> PathBuf,
) -> Result<PathBuf, String> {
    let value = value.unwrap_or_else(|| "inbox".into());
    let Some(rest) = value.strip_prefix("s3://") else {
        if value.contains("://") {
            return Err(format!(
                "inbox = {value:?} is a URL Wharf does not read; use a local folder or \
                 s3://bucket/prefix/"
            ));
        }
        return Ok(resolve(&value));
    };
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_matches('/');
    if bucket.is_empty() {
        return Err(format!(
            "inbox = {value:?} names no bucket; write s3://bucket/prefix/"
        ));
    }
    Ok(match prefix {
        "" => PathBuf::from(format!("s3://{bucket}/")),
        _ => PathBuf::from(format!("s3://{bucket}/{prefix}/")),
    })
}

/// Whether `inbox` is on S3.
pub fn on_s3(inbox: &Path) -> bool {
    crate::s3_inbox::is_url(inbox)
}
