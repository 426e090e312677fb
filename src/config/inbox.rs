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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    const SCHEMA: &str = r#"
[schema]
key = "order_id"
order_by = "updated_at"
event_id = "event_id"
partition_by_date_of = "updated_at"

[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "int",       required = true }
updated_at = { type = "timestamp", required = true }
"#;

    fn parse(head: &str) -> Result<Config, String> {
        let text = format!("product = \"o\"\n{head}\n{SCHEMA}");
        Config::parse(&text, Path::new("/cfg/w.toml"), Path::new("/cfg")).map_err(|e| e.to_string())
    }

    #[test]
    fn an_s3_inbox_is_kept_as_its_url_with_its_listing() {
        let config = parse("inbox = \"s3://drops/orders\"").unwrap();
        assert_eq!(config.inbox, Path::new("s3://drops/orders/"));
        assert_eq!(config.listing, super::Listing::default());
        let config = parse("inbox = \"s3://drops/\"\npoll = \"500ms\"\nrescan = \"1m\"").unwrap();
        assert_eq!(config.inbox, Path::new("s3://drops/"));
        assert_eq!(config.listing.poll, std::time::Duration::from_millis(500));
        assert_eq!(config.listing.rescan, std::time::Duration::from_secs(60));
        assert_eq!(parse("").unwrap().inbox, Path::new("/cfg/inbox"));
    }

    #[test]
    fn a_bad_s3_inbox_or_listing_is_refused_naming_it() {
        for (head, want) in [
            ("inbox = \"s3://\"", "names no bucket"),
            ("inbox = \"ftp://host/x\"", "inbox = \"ftp://host/x\""),
            ("poll = \"0s\"", "poll = \"0s\""),
            ("rescan = \"soon\"", "rescan = \"soon\""),
            (
                "inbox = \"s3://b/lake/o/in\"\npublish_root = \"s3://b/lake/o\"\ntable_format = \"delta\"",
                "overlap",
            ),
        ] {
            let text = parse(head).expect_err(head);
            assert!(text.contains(want), "{head}: {text}");
        }
        let text = parse("inbox = \"s3://AKIAX:s3cr3t@b/x\"").expect_err("credentials");
        assert!(!text.contains("s3cr3t"), "{text}");
    }
}
